"""Engine, sessions, schema and audit log: the part of :class:`~compliance.store.Store` every other part uses."""

from __future__ import annotations

import getpass
import hashlib
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Self, TypeVar

from compliance.errors import StoreError
from compliance.store.records import AuditEntry, to_jsonable

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine
    from sqlalchemy.orm import Session, sessionmaker


logger = logging.getLogger(__name__)
T = TypeVar("T")

_CHUNK = 500  # ids per IN (...) clause


def _default_actor() -> str:
    try:
        return getpass.getuser()
    except Exception:  # pragma: no cover - no user name in some containers
        return "unknown"


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _chunks(ids: Sequence[int], size: int = _CHUNK) -> Iterator[Sequence[int]]:
    for start in range(0, len(ids), size):
        yield ids[start : start + size]


def latest_review_subquery() -> Any:
    """``(link_id, review_id)`` of every reviewed link's latest review (the highest review id), as a subquery:
    the join every view of a link's current decision builds on."""
    from sqlalchemy import func, select

    from compliance.store.orm import ReviewRow

    return (
        select(ReviewRow.link_id, func.max(ReviewRow.id).label("review_id"))
        .group_by(ReviewRow.link_id)
        .subquery()
    )


class StoreBase:
    """The core every part of :class:`~compliance.store.Store` builds on: engine, sessions, schema, audit log.

    Args:
        url: SQLAlchemy URL. Default: ``get_settings().resolved_database_url`` (SQLite under the data home;
            its folder is created on first connection).
        actor: name written to the audit log when a method is not given ``actor=``. Default: the OS user.
        echo: log every SQL statement.

    Creating a ``Store`` does not connect; the engine is created on first use.
    """

    def __init__(self, url: str | None = None, *, actor: str | None = None, echo: bool = False) -> None:
        if url is None:
            from compliance.settings import get_settings

            url = get_settings().resolved_database_url
        self.url = url
        self.actor = actor or _default_actor()
        self._echo = echo
        self._engine: Engine | None = None
        self._sessionmaker: sessionmaker[Session] | None = None

    def __repr__(self) -> str:
        from sqlalchemy.engine import make_url

        try:
            shown = make_url(self.url).render_as_string(hide_password=True)
        except Exception:
            shown = "<invalid url>"
        return f"Store({shown!r})"

    def as_actor(self, actor: str) -> Self:
        """The same store (one engine and connection pool) writing ``actor`` into the audit log: a server
        makes one per request for the caller's token name."""
        import copy

        self.engine  # create it first, so that the copy shares it  # noqa: B018
        clone = copy.copy(self)
        clone.actor = actor
        return clone

    # -- engine, sessions, schema ----------------------------------------------------------------------------
    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine (created on first access)."""
        if self._engine is None:
            from compliance.store.schema import create_engine_for

            self._engine = create_engine_for(self.url, echo=self._echo)
        return self._engine

    @property
    def dialect(self) -> str:
        """``"sqlite"``, ``"postgresql"`` …"""
        return self.engine.dialect.name

    def dispose(self) -> None:
        """Close every pooled connection (the store can still be used afterwards)."""
        if self._engine is not None:
            self._engine.dispose()
        self._engine = None
        self._sessionmaker = None

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session in a transaction: committed when the block ends, rolled back when it raises.

        Database errors are re-raised as :class:`~compliance.errors.StoreError` (chained).
        """
        from sqlalchemy.exc import SQLAlchemyError
        from sqlalchemy.orm import sessionmaker

        if self._sessionmaker is None:
            self._sessionmaker = sessionmaker(self.engine, expire_on_commit=False)
        session = self._sessionmaker()
        try:
            yield session
            session.commit()
        except SQLAlchemyError as e:
            session.rollback()
            raise StoreError(self._explain(e)) from e
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()

    def _retry_on_conflict(self, work: Callable[[], T], *, attempts: int = 5) -> T:
        """Run ``work`` (one transaction) again when it lost a race on a unique constraint.

        Two processes that both find no row and both insert it: the second one's transaction fails on the
        constraint (PostgreSQL's READ COMMITTED; on SQLite ``BEGIN IMMEDIATE`` serialises writers instead). Run
        again, it sees the committed row and does what it would have done had it come second. Used by the
        idempotent writes: saving a document version, installing a law, numbering a run.
        """
        from sqlalchemy.exc import IntegrityError

        for attempt in range(1, attempts + 1):
            try:
                return work()
            except StoreError as e:
                if not isinstance(e.__cause__, IntegrityError) or attempt == attempts:
                    raise
                logger.info("write conflict (attempt %d of %d), retrying: %s", attempt, attempts, e)
        raise AssertionError("unreachable")  # pragma: no cover

    def _explain(self, error: Exception) -> str:
        text = str(getattr(error, "orig", None) or error).strip().splitlines()[0]
        if "no such table" in text or ("relation" in text and "does not exist" in text):
            return f"database error: {text} — the database is not initialised: run `compliance db upgrade`"
        return f"database error: {text}"

    def upgrade(self, revision: str = "head") -> None:
        """Apply the Alembic migrations up to ``revision`` (in one transaction)."""
        from compliance.store import schema

        with schema.migration_connection(self.engine) as connection:
            schema.upgrade(connection, revision)
        logger.info("database %r upgraded to %s", self, revision)

    def downgrade(self, revision: str) -> None:
        """Revert the migrations down to ``revision`` (``"base"`` drops every table: data is lost)."""
        from compliance.store import schema

        with schema.migration_connection(self.engine) as connection:
            schema.downgrade(connection, revision)

    def current_revision(self) -> str | None:
        """The Alembic revision the database is at (``None``: never migrated)."""
        from compliance.store import schema

        with self.engine.connect() as connection:
            return schema.current_revision(connection)

    @staticmethod
    def head_revision() -> str:
        """The newest revision shipped with the package."""
        from compliance.store import schema

        return schema.head_revision()

    def is_empty(self) -> bool:
        """True when none of the store's tables exist (an empty ``alembic_version`` table may)."""
        from sqlalchemy import inspect

        from compliance.store.orm import Base

        with self.engine.connect() as connection:
            names = set(inspect(connection).get_table_names())
        return not (names & set(Base.metadata.tables))

    def ensure_schema(self, *, auto_upgrade: bool = True) -> None:
        """Make sure the database is at head.

        An empty database is upgraded when ``auto_upgrade`` is true. A database behind head is never migrated
        implicitly.

        Raises:
            StoreError: the database is empty and ``auto_upgrade`` is false, or it is at an older (or unknown)
                revision: the message says to run ``compliance db upgrade``.
        """
        from sqlalchemy.exc import SQLAlchemyError

        try:
            current = self.current_revision()
            head = self.head_revision()
            if current == head:
                return
            if current is None and self.is_empty():
                if auto_upgrade:
                    try:
                        self.upgrade()
                    except (SQLAlchemyError, StoreError):
                        # two first commands at once: the other one created the schema meanwhile
                        if self.current_revision() != head:
                            raise
                    return
                raise StoreError(f"{self!r} is empty: run `compliance db upgrade` first")
        except SQLAlchemyError as e:
            raise StoreError(f"cannot open {self!r}: {self._explain(e)}") from e
        raise StoreError(
            f"{self!r} is at schema revision {current or 'none'}, this version needs {head}: "
            "run `compliance db upgrade`"
        )

    def schema_diff(self) -> list[Any]:
        """Differences between the ORM models and the database, as ``alembic check`` sees them."""
        from compliance.store import schema

        with self.engine.connect() as connection:
            return schema.schema_diff(connection)

    def counts(self) -> dict[str, int]:
        """Rows per table (``{"documents": 7, "paragraphs": 233, ...}``), for status pages and checks."""
        from sqlalchemy import func, select

        from compliance.store.orm import Base

        with self.session() as s:
            return {
                name: int(s.scalar(select(func.count()).select_from(table)) or 0)
                for name, table in sorted(Base.metadata.tables.items())
            }

    # -- audit log -------------------------------------------------------------------------------------------
    def _log(
        self,
        session: Session,
        action: str,
        *,
        actor: str | None = None,
        target_type: str | None = None,
        target_id: Any = None,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        from compliance.store.orm import AuditLogRow

        session.add(
            AuditLogRow(
                actor=actor or self.actor,
                action=action,
                target_type=target_type,
                target_id=None if target_id is None else str(target_id),
                details=to_jsonable(dict(details or {})),
            )
        )

    def log(
        self,
        action: str,
        actor: str | None = None,
        target_type: str | None = None,
        target_id: Any = None,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        """Write one audit-log entry (the mutating methods do this themselves)."""
        with self.session() as s:
            self._log(s, action, actor=actor, target_type=target_type, target_id=target_id, details=details)

    def list_audit(
        self,
        *,
        action: str | None = None,
        target_type: str | None = None,
        target_id: Any = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[AuditEntry]:
        """Audit-log entries, newest first, optionally filtered."""
        from sqlalchemy import select

        from compliance.store.orm import AuditLogRow

        stmt = select(AuditLogRow).order_by(AuditLogRow.id.desc())
        if action is not None:
            stmt = stmt.where(AuditLogRow.action == action)
        if target_type is not None:
            stmt = stmt.where(AuditLogRow.target_type == target_type)
        if target_id is not None:
            stmt = stmt.where(AuditLogRow.target_id == str(target_id))
        if offset:
            stmt = stmt.offset(offset)
        if limit is not None:
            stmt = stmt.limit(limit)
        with self.session() as s:
            return [
                AuditEntry(r.id, r.at, r.actor, r.action, r.target_type, r.target_id, dict(r.details or {}))
                for r in s.scalars(stmt)
            ]

    def _existing_ids(self, s: Session, what: str, ids: Iterable[int]) -> set[int]:
        """Which of ``ids`` are stored rows of ``what`` (paragraph, provision, law, link), read in chunks."""
        from sqlalchemy import select

        from compliance.store.orm import LawRow, LinkRow, ParagraphRow, ProvisionRow

        model: Any = {"paragraph": ParagraphRow, "provision": ProvisionRow, "law": LawRow, "link": LinkRow}[
            what
        ]
        found: set[int] = set()
        for chunk in _chunks(sorted(set(ids))):
            found.update(s.scalars(select(model.id).where(model.id.in_(chunk))))
        return found

    def _check_ids(self, s: Session, what: str, ids: set[int]) -> None:
        found = self._existing_ids(s, what, ids)
        missing = [i for i in sorted(ids) if i not in found]
        if missing:
            raise StoreError(f"unknown {what} ids {missing[:10]}")
