"""Opening the store for a use case: the configured database, created on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from compliance.store import Store

__all__ = ["open_store"]


def open_store(database_url: str | None = None, *, auto_upgrade: bool = True) -> Store:
    """The store at ``database_url`` (default: ``COMPLIANCE_DATABASE_URL``, else SQLite in the data home).

    An empty database is created (migrated to head) on the spot, so that a first ingest just works; a database
    at an older schema revision is left alone and :class:`~compliance.errors.StoreError` says to run
    ``compliance db upgrade``.
    """
    from compliance.store import Store

    store = Store(database_url)
    store.ensure_schema(auto_upgrade=auto_upgrade)
    return store
