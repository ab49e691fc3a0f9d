"""Benchmarks: ``python -m bench`` runs every ``bench/<name>.py`` module that defines ``run() -> dict``.

Numbers are printed as JSON (one object per benchmark); nothing here is asserted in tests.
"""
