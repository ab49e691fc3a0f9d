"""Alembic migrations of the store, shipped inside the package (see :mod:`compliance.store.schema`)."""

from __future__ import annotations

__all__: list[str] = []  # Alembic scripts, run through compliance.store.schema
