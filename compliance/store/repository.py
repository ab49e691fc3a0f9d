"""The repository: :class:`Store`, the one way the rest of the package reads and writes the database.

Methods take and return plain dataclasses (:mod:`compliance.store.records`, :mod:`compliance.rules.corpus`,
:mod:`compliance.connectors.document`). Each public method runs in its own transaction: it stores everything or
nothing, and every mutation writes its ``audit_log`` row inside that same transaction.

``Store`` is assembled from one part per concept: :mod:`~compliance.store.base` (engine, sessions, schema,
audit log), :mod:`~compliance.store.laws`, :mod:`~compliance.store.documents`, :mod:`~compliance.store.runs`,
:mod:`~compliance.store.links`, :mod:`~compliance.store.link_history` (current links, review batches,
manual links), :mod:`~compliance.store.alerts`, :mod:`~compliance.store.tokens`, :mod:`~compliance.store.jobs` and :mod:`~compliance.store.vectors`.
"""

from __future__ import annotations

from compliance.store.alerts import AlertsMixin
from compliance.store.documents import DocumentsMixin
from compliance.store.jobs import JobsMixin
from compliance.store.laws import LawsMixin
from compliance.store.link_history import LinkHistoryMixin
from compliance.store.links import LinksMixin
from compliance.store.runs import RunsMixin
from compliance.store.tokens import TokensMixin
from compliance.store.vectors import VectorsMixin


class Store(
    LawsMixin,
    DocumentsMixin,
    RunsMixin,
    LinksMixin,
    LinkHistoryMixin,
    AlertsMixin,
    TokensMixin,
    JobsMixin,
    VectorsMixin,
):
    """Access to the compliance database.

    Args:
        url: SQLAlchemy URL. Default: ``get_settings().resolved_database_url`` (SQLite under the data home;
            its folder is created on first connection).
        actor: name written to the audit log when a method is not given ``actor=``. Default: the OS user.
        echo: log every SQL statement.

    Creating a ``Store`` does not connect; the engine is created on first use. See :mod:`compliance.store` for
    the whole API.
    """


__all__ = ["Store"]
