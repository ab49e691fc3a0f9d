"""Alembic revision scripts (one per schema change; never edit a released one)."""
