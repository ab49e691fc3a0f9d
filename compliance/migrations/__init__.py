"""Alembic migrations of the store, shipped inside the package (see :mod:`compliance.store.schema`)."""
