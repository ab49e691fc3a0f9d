"""The repository: :class:`Store`, the one way the rest of the package reads and writes the database.

Methods take and return plain dataclasses (:mod:`compliance.store.records`, :mod:`compliance.rules.model`,
:mod:`compliance.connectors.model`). Each public method runs in its own transaction: it stores everything or
nothing, and every mutation writes its ``audit_log`` row inside that same transaction.
"""

from __future__ import annotations

import getpass
import hashlib
import logging
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from compliance.errors import LawNotFoundError, NotFoundError, StoreError
from compliance.store.records import (
    AcknowledgementRecord,
    ActiveRun,
    AlertRecord,
    AuditEntry,
    DocumentRecord,
    DocumentVersionRecord,
    LawRecord,
    LinkRecord,
    NewAlert,
    NewLink,
    ReviewRecord,
    RunRecord,
    SavedDocument,
    SavedLaw,
    StoredParagraph,
    StoredProvision,
    to_jsonable,
)

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine
    from sqlalchemy.orm import Session, sessionmaker

    from compliance.connectors.model import ParsedDocument
    from compliance.rules.model import Law
    from compliance.store.models import (
        Document,
        DocumentVersion,
        LawRow,
        LinkRow,
        ParagraphRow,
        RunRow,
    )

logger = logging.getLogger(__name__)

RUN_KINDS_HINT = ("ingest", "law-install", "audit", "map", "alert", "train")
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


class Store:
    """Access to the compliance database.

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

        from compliance.store.models import Base

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
                    self.upgrade()
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
        from compliance.store.models import AuditLogRow

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
    ) -> list[AuditEntry]:
        """Audit-log entries, newest first, optionally filtered."""
        from sqlalchemy import select

        from compliance.store.models import AuditLogRow

        stmt = select(AuditLogRow).order_by(AuditLogRow.id.desc())
        if action is not None:
            stmt = stmt.where(AuditLogRow.action == action)
        if target_type is not None:
            stmt = stmt.where(AuditLogRow.target_type == target_type)
        if target_id is not None:
            stmt = stmt.where(AuditLogRow.target_id == str(target_id))
        if limit is not None:
            stmt = stmt.limit(limit)
        with self.session() as s:
            return [
                AuditEntry(r.id, r.at, r.actor, r.action, r.target_type, r.target_id, dict(r.details or {}))
                for r in s.scalars(stmt)
            ]

    # -- laws ------------------------------------------------------------------------------------------------
    def save_law(self, law: Law, *, actor: str | None = None) -> SavedLaw:
        """Store a law with its provisions.

        The same identifier and checksum as a stored version: nothing is written (``created=False``). Same
        identifier, new checksum: a new version (``max + 1``) is added and the old ones are kept.

        Raises:
            StoreError: the short name already belongs to another law, or the law is malformed (empty
                identifier or checksum, duplicate provision keys, unknown parent keys).
        """
        from sqlalchemy import func, select, update

        from compliance.store.models import LawRow, ProvisionRow

        if not law.identifier or not law.short_name:
            raise StoreError("a law needs an identifier and a short name to be stored")
        checksum = law.checksum or _law_content_checksum(law)
        keys = [p.key for p in law.provisions]
        if len(set(keys)) != len(keys):
            dupes = sorted({k for k in keys if keys.count(k) > 1})[:5]
            raise StoreError(f"{law.short_name}: duplicate provision keys {dupes}")
        known = set(keys)
        orphans = [p.key for p in law.provisions if p.parent_key is not None and p.parent_key not in known]
        if orphans:
            raise StoreError(f"{law.short_name}: provisions with unknown parents {orphans[:5]}")
        short_name = law.short_name.lower()
        with self.session() as s:
            existing = s.scalars(
                select(LawRow).where(LawRow.identifier == law.identifier, LawRow.checksum == checksum)
            ).first()
            if existing is not None:
                count = s.scalar(select(func.count()).where(ProvisionRow.law_id == existing.id)) or 0
                return SavedLaw(
                    existing.id, existing.identifier, existing.short_name, existing.version, False, count
                )
            other = s.scalars(
                select(LawRow.identifier).where(
                    LawRow.short_name == short_name, LawRow.identifier != law.identifier
                )
            ).first()
            if other is not None:
                raise StoreError(
                    f"the short name {short_name!r} already belongs to {other}; choose another name for "
                    f"{law.identifier}"
                )
            version = (
                s.scalar(select(func.max(LawRow.version)).where(LawRow.identifier == law.identifier)) or 0
            ) + 1
            row = LawRow(
                identifier=law.identifier,
                short_name=short_name,
                title=law.title,
                jurisdiction=law.jurisdiction,
                law_type=law.law_type,
                date_adopted=law.date_adopted,
                date_in_force=law.date_in_force,
                version_date=law.version_date,
                source=law.source,
                source_format=law.source_format,
                checksum=checksum,
                version=version,
                law_metadata=to_jsonable(dict(law.metadata)),
            )
            s.add(row)
            s.flush()
            prov_rows = [
                ProvisionRow(
                    law_id=row.id,
                    key=p.key,
                    kind=p.kind,
                    number=p.number,
                    title=p.title,
                    text=p.text,
                    position=i,
                    ordinal=p.ordinal,
                )
                for i, p in enumerate(law.provisions)
            ]
            s.add_all(prov_rows)
            s.flush()
            id_of = {r.key: r.id for r in prov_rows}
            parents = [
                {"id": id_of[p.key], "parent_id": id_of[p.parent_key]}
                for p in law.provisions
                if p.parent_key is not None
            ]
            if parents:
                s.execute(update(ProvisionRow), parents)
            self._log(
                s,
                "law.save",
                actor=actor,
                target_type="law",
                target_id=row.id,
                details={
                    "identifier": law.identifier,
                    "short_name": short_name,
                    "version": version,
                    "checksum": checksum,
                    "provisions": len(prov_rows),
                    "source": law.source,
                },
            )
            return SavedLaw(row.id, row.identifier, row.short_name, version, True, len(prov_rows))

    def _find_law(self, s: Session, name_or_identifier: str | int, version: int | None) -> LawRow:
        from sqlalchemy import or_, select

        from compliance.store.models import LawRow

        if isinstance(name_or_identifier, int):
            row = s.get(LawRow, name_or_identifier)
            if row is None:
                raise LawNotFoundError(f"no stored law with id {name_or_identifier}")
            return row
        name = name_or_identifier.strip()
        stmt = select(LawRow).where(or_(LawRow.identifier == name, LawRow.short_name == name.lower()))
        if version is not None:
            stmt = stmt.where(LawRow.version == version)
        row = s.scalars(stmt.order_by(LawRow.version.desc(), LawRow.id.desc())).first()
        if row is None:
            which = f"{name!r}" + (f" version {version}" if version is not None else "")
            raise LawNotFoundError(f"no stored law {which}: install it with `compliance laws install {name}`")
        return row

    def get_law(self, name_or_identifier: str | int, version: int | None = None) -> Law:
        """The stored law as a :class:`~compliance.rules.model.Law` (latest version unless ``version``).

        ``name_or_identifier`` is a short name (``"gdpr"``), an identifier (``"32016R0679"``) or a law id.

        Raises:
            LawNotFoundError: nothing matches.
        """
        from compliance.rules.model import Law, Provision

        with self.session() as s:
            row = self._find_law(s, name_or_identifier, version)
            provisions = self._provisions(s, row.id)
            return Law(
                identifier=row.identifier,
                short_name=row.short_name,
                title=row.title,
                jurisdiction=row.jurisdiction,  # type: ignore[arg-type]
                law_type=row.law_type,
                provisions=tuple(
                    Provision(
                        kind=p.kind,  # type: ignore[arg-type]
                        key=p.key,
                        number=p.number,
                        text=p.text,
                        title=p.title,
                        parent_key=p.parent_key,
                        ordinal=p.ordinal,
                    )
                    for p in provisions
                ),
                date_adopted=row.date_adopted,
                date_in_force=row.date_in_force,
                version_date=row.version_date,
                source=row.source,
                source_format=row.source_format,
                checksum=row.checksum,
                metadata={str(k): str(v) for k, v in (row.law_metadata or {}).items()},
            )

    def law_record(self, name_or_identifier: str | int, version: int | None = None) -> LawRecord:
        """Metadata and provision counts of a stored law version (latest unless ``version``)."""
        with self.session() as s:
            row = self._find_law(s, name_or_identifier, version)
            return self._law_records(s, [row])[0]

    def list_laws(self, *, all_versions: bool = False) -> list[LawRecord]:
        """Stored laws by short name: the latest version of each, or every version."""
        from sqlalchemy import select

        from compliance.store.models import LawRow

        with self.session() as s:
            rows = list(s.scalars(select(LawRow).order_by(LawRow.short_name, LawRow.version)))
            records = self._law_records(s, rows)
        return records if all_versions else [r for r in records if r.is_latest]

    def _law_records(self, s: Session, rows: Sequence[LawRow]) -> list[LawRecord]:
        from sqlalchemy import func, select

        from compliance.store.models import LawRow, ProvisionRow

        if not rows:
            return []
        ids = [r.id for r in rows]
        counts: dict[int, dict[str, int]] = {i: {} for i in ids}
        for chunk in _chunks(ids):
            stmt = (
                select(ProvisionRow.law_id, ProvisionRow.kind, func.count())
                .where(ProvisionRow.law_id.in_(chunk))
                .group_by(ProvisionRow.law_id, ProvisionRow.kind)
            )
            for law_id, kind, n in s.execute(stmt):
                counts[law_id][kind] = n
        identifiers = sorted({r.identifier for r in rows})
        latest = dict(
            s.execute(
                select(LawRow.identifier, func.max(LawRow.version))
                .where(LawRow.identifier.in_(identifiers))
                .group_by(LawRow.identifier)
            ).all()
        )
        out = []
        for r in rows:
            c = dict(sorted(counts[r.id].items()))
            c["provisions"] = sum(counts[r.id].values())
            out.append(
                LawRecord(
                    id=r.id,
                    identifier=r.identifier,
                    short_name=r.short_name,
                    title=r.title,
                    jurisdiction=r.jurisdiction,
                    law_type=r.law_type,
                    version=r.version,
                    checksum=r.checksum,
                    source=r.source,
                    source_format=r.source_format,
                    date_adopted=r.date_adopted,
                    date_in_force=r.date_in_force,
                    version_date=r.version_date,
                    installed_at=r.installed_at,
                    metadata=dict(r.law_metadata or {}),
                    counts=c,
                    is_latest=latest.get(r.identifier) == r.version,
                )
            )
        return out

    def _provisions(
        self, s: Session, law_id: int, kinds: Iterable[str] | None = None, ids: Sequence[int] | None = None
    ) -> list[StoredProvision]:
        from sqlalchemy import select
        from sqlalchemy.orm import aliased

        from compliance.store.models import ProvisionRow

        parent = aliased(ProvisionRow)
        stmt = select(ProvisionRow, parent.key).outerjoin(parent, ProvisionRow.parent_id == parent.id)
        if law_id >= 0:
            stmt = stmt.where(ProvisionRow.law_id == law_id)
        if kinds is not None:
            stmt = stmt.where(ProvisionRow.kind.in_(list(kinds)))
        if ids is not None:
            stmt = stmt.where(ProvisionRow.id.in_(list(ids)))
        stmt = stmt.order_by(ProvisionRow.law_id, ProvisionRow.position)
        return [
            StoredProvision(
                id=p.id,
                law_id=p.law_id,
                key=p.key,
                kind=p.kind,
                number=p.number,
                title=p.title,
                text=p.text,
                parent_key=parent_key,
                ordinal=p.ordinal,
                position=p.position,
            )
            for p, parent_key in s.execute(stmt)
        ]

    def list_provisions(self, law_id: int, kinds: Iterable[str] | None = None) -> list[StoredProvision]:
        """Provisions of a stored law version in document order, optionally only some kinds."""
        with self.session() as s:
            return self._provisions(s, law_id, kinds)

    def get_provisions(self, ids: Iterable[int]) -> list[StoredProvision]:
        """Provisions by id, in the order asked.

        Raises:
            NotFoundError: one of the ids does not exist.
        """
        wanted = list(ids)
        found: dict[int, StoredProvision] = {}
        with self.session() as s:
            for chunk in _chunks(sorted(set(wanted))):
                found.update((p.id, p) for p in self._provisions(s, -1, ids=chunk))
        missing = [i for i in wanted if i not in found]
        if missing:
            raise NotFoundError(f"no provisions with ids {missing[:10]}")
        return [found[i] for i in wanted]

    def provision_id_map(self, law_id: int) -> dict[str, int]:
        """``{provision key: provision id}`` for one stored law version."""
        from sqlalchemy import select

        from compliance.store.models import ProvisionRow

        with self.session() as s:
            rows = s.execute(select(ProvisionRow.key, ProvisionRow.id).where(ProvisionRow.law_id == law_id))
            return {key: pid for key, pid in rows}

    # -- documents -------------------------------------------------------------------------------------------
    def save_document(self, doc: ParsedDocument, *, actor: str | None = None) -> SavedDocument:
        """Store a parsed document.

        Documents are identified by ``doc.source``. If the latest stored version has the same checksum nothing
        is written (``created=False``); otherwise a new version (1 for a new document) with its paragraphs.
        """
        from sqlalchemy import select

        from compliance.store.models import Document, DocumentVersion, ParagraphRow, utcnow

        if not doc.source:
            raise StoreError("a document needs a source name to be stored")
        checksum = doc.checksum or _sha256(doc.text)
        with self.session() as s:
            document = s.scalars(select(Document).where(Document.source == doc.source)).first()
            new_document = document is None
            if document is None:
                document = Document(
                    source=doc.source, title=doc.title, media_type=doc.media_type, latest_version=0
                )
                s.add(document)
                s.flush()
            else:
                latest = s.scalars(
                    select(DocumentVersion).where(
                        DocumentVersion.document_id == document.id,
                        DocumentVersion.version == document.latest_version,
                    )
                ).first()
                if latest is not None and latest.checksum == checksum:
                    return SavedDocument(
                        document.id,
                        latest.id,
                        latest.version,
                        False,
                        False,
                        latest.paragraph_count,
                        doc.source,
                    )
            version_no = document.latest_version + 1
            version = DocumentVersion(
                document_id=document.id,
                version=version_no,
                checksum=checksum,
                title=doc.title,
                media_type=doc.media_type,
                size_bytes=doc.size_bytes,
                pages=doc.pages,
                text=doc.text,
                paragraph_count=len(doc.paragraphs),
                parser_metadata=to_jsonable(dict(doc.metadata)),
            )
            s.add(version)
            s.flush()
            s.add_all(
                ParagraphRow(
                    version_id=version.id,
                    ordinal=p.ordinal,
                    text=p.text,
                    kind=p.kind,
                    page=p.page,
                    heading_path=list(p.heading_path),
                    char_start=p.char_start,
                    char_end=p.char_end,
                    text_sha256=_sha256(p.text),
                )
                for p in doc.paragraphs
            )
            document.latest_version = version_no
            document.title = doc.title
            document.media_type = doc.media_type
            document.updated_at = utcnow()
            s.flush()
            self._log(
                s,
                "document.save",
                actor=actor,
                target_type="document",
                target_id=document.id,
                details={
                    "source": doc.source,
                    "version": version_no,
                    "checksum": checksum,
                    "paragraphs": len(doc.paragraphs),
                },
            )
            return SavedDocument(
                document.id, version.id, version_no, True, new_document, len(doc.paragraphs), doc.source
            )

    def _document_records(self, s: Session, documents: Sequence[Document]) -> list[DocumentRecord]:
        from sqlalchemy import select

        from compliance.store.models import DocumentVersion

        versions: dict[int, list[DocumentVersionRecord]] = {d.id: [] for d in documents}
        for chunk in _chunks([d.id for d in documents]):
            stmt = (
                select(DocumentVersion)
                .where(DocumentVersion.document_id.in_(chunk))
                .order_by(DocumentVersion.document_id, DocumentVersion.version)
            )
            for v in s.scalars(stmt):
                versions[v.document_id].append(_version_record(v))
        return [
            DocumentRecord(
                id=d.id,
                source=d.source,
                title=d.title,
                media_type=d.media_type,
                latest_version=d.latest_version,
                created_at=d.created_at,
                updated_at=d.updated_at,
                versions=tuple(versions[d.id]),
            )
            for d in documents
        ]

    def list_documents(self) -> list[DocumentRecord]:
        """Every stored document (ordered by id) with its versions."""
        from sqlalchemy import select

        from compliance.store.models import Document

        with self.session() as s:
            return self._document_records(s, list(s.scalars(select(Document).order_by(Document.id))))

    def get_document(self, id_or_source: int | str) -> DocumentRecord:
        """A document by id (an int or a string of digits) or by its source name.

        Raises:
            NotFoundError: nothing matches.
        """
        from sqlalchemy import select

        from compliance.store.models import Document

        with self.session() as s:
            document: Document | None = None
            if isinstance(id_or_source, int) or id_or_source.isdigit():
                document = s.get(Document, int(id_or_source))
            if document is None and isinstance(id_or_source, str):
                document = s.scalars(select(Document).where(Document.source == id_or_source)).first()
            if document is None:
                raise NotFoundError(f"no stored document {id_or_source!r} (see `compliance documents list`)")
            return self._document_records(s, [document])[0]

    def _paragraph_query(self) -> Any:
        from sqlalchemy import select

        from compliance.store.models import Document, DocumentVersion, ParagraphRow

        return (
            select(ParagraphRow, DocumentVersion.document_id, DocumentVersion.version, Document.source)
            .join(DocumentVersion, ParagraphRow.version_id == DocumentVersion.id)
            .join(Document, DocumentVersion.document_id == Document.id)
        )

    def iter_paragraphs(
        self, *, latest_only: bool = True, document_ids: Iterable[int] | None = None
    ) -> Iterator[StoredParagraph]:
        """Stored paragraphs, document by document (by id), version by version, in order.

        Args:
            latest_only: only the latest version of each document (the default), else every version.
            document_ids: restrict to these documents.

        Reads one document version per short transaction, so it is safe to write while iterating.
        """
        from sqlalchemy import select

        from compliance.store.models import Document, DocumentVersion, ParagraphRow

        stmt = select(DocumentVersion.id).join(Document, DocumentVersion.document_id == Document.id)
        if latest_only:
            stmt = stmt.where(DocumentVersion.version == Document.latest_version)
        if document_ids is not None:
            wanted = sorted(set(document_ids))
            if not wanted:
                return
            stmt = stmt.where(DocumentVersion.document_id.in_(wanted))
        stmt = stmt.order_by(DocumentVersion.document_id, DocumentVersion.version)
        with self.session() as s:
            version_ids = list(s.scalars(stmt))
        for version_id in version_ids:
            with self.session() as s:
                rows = s.execute(
                    self._paragraph_query()
                    .where(ParagraphRow.version_id == version_id)
                    .order_by(ParagraphRow.ordinal)
                ).all()
                batch = [_stored_paragraph(*row) for row in rows]
            yield from batch

    def get_paragraphs(self, ids: Iterable[int]) -> list[StoredParagraph]:
        """Paragraphs by id, in the order asked.

        Raises:
            NotFoundError: one of the ids does not exist.
        """
        from compliance.store.models import ParagraphRow

        wanted = list(ids)
        found: dict[int, StoredParagraph] = {}
        with self.session() as s:
            for chunk in _chunks(sorted(set(wanted))):
                for row in s.execute(self._paragraph_query().where(ParagraphRow.id.in_(chunk))):
                    para = _stored_paragraph(*row)
                    found[para.id] = para
        missing = [i for i in wanted if i not in found]
        if missing:
            raise NotFoundError(f"no paragraphs with ids {missing[:10]}")
        return [found[i] for i in wanted]

    # -- runs ------------------------------------------------------------------------------------------------
    def start_run(self, kind: str, config: Any = None, model: Any = None, *, actor: str | None = None) -> int:
        """Record the start of a run and return its id.

        Args:
            kind: what runs: ``ingest``, ``law-install``, ``audit``, ``map``, ``alert``, ``train`` …
            config: the run's typed config (dataclass, pydantic model or mapping), stored as JSON.
            model: the model identity (name, revision, checksum …), stored as JSON.
        """
        from compliance.store.models import RunRow

        if not kind:
            raise StoreError("a run needs a kind")
        with self.session() as s:
            row = RunRow(
                kind=kind,
                config=to_jsonable(config) if config is not None else {},
                model=to_jsonable(model) if model is not None else None,
                status="running",
                stats={},
            )
            s.add(row)
            s.flush()
            self._log(
                s, "run.start", actor=actor, target_type="run", target_id=row.id, details={"kind": kind}
            )
            return row.id

    def finish_run(
        self,
        run_id: int,
        status: str = "succeeded",
        stats: Mapping[str, Any] | None = None,
        error: str | None = None,
        *,
        actor: str | None = None,
    ) -> RunRecord:
        """Mark a run finished (``succeeded`` or ``failed``) with its stats and error text."""
        from compliance.store.models import RunRow, utcnow

        if status not in ("succeeded", "failed"):
            raise StoreError(f"a run finishes as 'succeeded' or 'failed', not {status!r}")
        with self.session() as s:
            row = s.get(RunRow, run_id)
            if row is None:
                raise NotFoundError(f"no run {run_id}")
            if row.status != "running":
                raise StoreError(f"run {run_id} already finished ({row.status})")
            now = utcnow()
            row.status = status
            row.finished_at = now
            row.duration_s = (now - row.started_at).total_seconds()
            row.stats = to_jsonable(dict(stats or {}))
            row.error = error
            s.flush()
            self._log(
                s,
                "run.finish",
                actor=actor,
                target_type="run",
                target_id=run_id,
                details={"kind": row.kind, "status": status, "error": error},
            )
            return _run_record(row)

    @contextmanager
    def run(self, kind: str, config: Any = None, model: Any = None) -> Iterator[ActiveRun]:
        """Record a run around a block: ``succeeded`` when it ends, ``failed`` (with the error) when it raises.

        Work done inside the block through other ``Store`` methods is committed by those methods; the run row
        only records the outcome. Put counts in ``active.stats``.
        """
        run_id = self.start_run(kind, config, model)
        active = ActiveRun(id=run_id, kind=kind)
        started = time.perf_counter()
        try:
            yield active
        except BaseException as e:
            active.stats.setdefault("elapsed_s", round(time.perf_counter() - started, 3))
            try:
                self.finish_run(run_id, "failed", active.stats, error=f"{type(e).__name__}: {e}")
            except Exception:  # pragma: no cover - keep the original error
                logger.exception("could not mark run %s failed", run_id)
            raise
        self.finish_run(run_id, "succeeded", active.stats)

    def get_run(self, run_id: int) -> RunRecord:
        """A run by id. Raises :class:`~compliance.errors.NotFoundError`."""
        from compliance.store.models import RunRow

        with self.session() as s:
            row = s.get(RunRow, run_id)
            if row is None:
                raise NotFoundError(f"no run {run_id}")
            return _run_record(row)

    def list_runs(self, kind: str | None = None, limit: int | None = None) -> list[RunRecord]:
        """Runs, newest first."""
        from sqlalchemy import select

        from compliance.store.models import RunRow

        stmt = select(RunRow).order_by(RunRow.id.desc())
        if kind is not None:
            stmt = stmt.where(RunRow.kind == kind)
        if limit is not None:
            stmt = stmt.limit(limit)
        with self.session() as s:
            return [_run_record(r) for r in s.scalars(stmt)]

    # -- links and reviews -----------------------------------------------------------------------------------
    def add_links(self, run_id: int, links: Iterable[NewLink], *, actor: str | None = None) -> int:
        """Store links proposed by a run; returns how many. All or nothing.

        Raises:
            NotFoundError: the run does not exist.
            StoreError: an invalid status, or a paragraph/provision id that does not exist.
        """
        from sqlalchemy import insert

        from compliance.store.models import LINK_STATUSES, LinkRow, RunRow, utcnow

        now = utcnow()
        rows = []
        for link in links:
            if link.status not in LINK_STATUSES:
                raise StoreError(f"invalid link status {link.status!r}; expected one of {LINK_STATUSES}")
            rows.append(
                {
                    "run_id": run_id,
                    "paragraph_id": int(link.paragraph_id),
                    "provision_id": int(link.provision_id),
                    "method": link.method,
                    "score": float(link.score),
                    "rank": None if link.rank is None else int(link.rank),
                    "evidence": to_jsonable(dict(link.evidence)),
                    "status": link.status,
                    "created_at": now,
                }
            )
        with self.session() as s:
            if s.get(RunRow, run_id) is None:
                raise NotFoundError(f"no run {run_id}")
            if rows:
                self._check_ids(s, "paragraph", {r["paragraph_id"] for r in rows})
                self._check_ids(s, "provision", {r["provision_id"] for r in rows})
                s.execute(insert(LinkRow), rows)
            self._log(
                s, "links.add", actor=actor, target_type="run", target_id=run_id, details={"count": len(rows)}
            )
        return len(rows)

    def _check_ids(self, s: Session, what: str, ids: set[int]) -> None:
        from sqlalchemy import select

        from compliance.store.models import LawRow, ParagraphRow, ProvisionRow

        model: Any = {"paragraph": ParagraphRow, "provision": ProvisionRow, "law": LawRow}[what]
        found: set[int] = set()
        ordered = sorted(ids)
        for chunk in _chunks(ordered):
            found.update(s.scalars(select(model.id).where(model.id.in_(chunk))))
        missing = [i for i in ordered if i not in found]
        if missing:
            raise StoreError(f"unknown {what} ids {missing[:10]}")

    def _links_query(self) -> Any:
        from sqlalchemy import func, select

        from compliance.store.models import LawRow, LinkRow, ProvisionRow, ReviewRow

        latest = select(ReviewRow.link_id, func.max(ReviewRow.id).label("review_id")).group_by(
            ReviewRow.link_id
        )
        latest_sq = latest.subquery()
        current = func.coalesce(ReviewRow.decision, LinkRow.status).label("current_status")
        stmt = (
            select(LinkRow, ProvisionRow.key, ProvisionRow.law_id, LawRow.short_name, current)
            .join(ProvisionRow, LinkRow.provision_id == ProvisionRow.id)
            .join(LawRow, ProvisionRow.law_id == LawRow.id)
            .outerjoin(latest_sq, latest_sq.c.link_id == LinkRow.id)
            .outerjoin(ReviewRow, ReviewRow.id == latest_sq.c.review_id)
        )
        return stmt, current

    def list_links(
        self,
        *,
        run_id: int | None = None,
        paragraph_id: int | None = None,
        provision_id: int | None = None,
        law: str | int | None = None,
        document_id: int | None = None,
        status: str | None = None,
        limit: int | None = None,
    ) -> list[LinkRecord]:
        """Links (oldest first) with their current status, filtered by any combination of the arguments.

        ``law`` is a short name, identifier or law id (every stored version of it); ``status`` filters on the
        current (derived) status.
        """
        from sqlalchemy import or_, select

        from compliance.store.models import DocumentVersion, LawRow, LinkRow, ParagraphRow, ProvisionRow

        stmt, current = self._links_query()
        if run_id is not None:
            stmt = stmt.where(LinkRow.run_id == run_id)
        if paragraph_id is not None:
            stmt = stmt.where(LinkRow.paragraph_id == paragraph_id)
        if provision_id is not None:
            stmt = stmt.where(LinkRow.provision_id == provision_id)
        if law is not None:
            if isinstance(law, int):
                stmt = stmt.where(ProvisionRow.law_id == law)
            else:
                stmt = stmt.where(or_(LawRow.short_name == law.lower(), LawRow.identifier == law))
        if document_id is not None:
            para_ids = (
                select(ParagraphRow.id)
                .join(DocumentVersion, ParagraphRow.version_id == DocumentVersion.id)
                .where(DocumentVersion.document_id == document_id)
            )
            stmt = stmt.where(LinkRow.paragraph_id.in_(para_ids))
        if status is not None:
            stmt = stmt.where(current == status)
        stmt = stmt.order_by(LinkRow.id)
        if limit is not None:
            stmt = stmt.limit(limit)
        with self.session() as s:
            return [_link_record(*row) for row in s.execute(stmt)]

    def get_link(self, link_id: int) -> LinkRecord:
        """A link with its current status. Raises :class:`~compliance.errors.NotFoundError`."""
        from compliance.store.models import LinkRow

        stmt, _ = self._links_query()
        with self.session() as s:
            row = s.execute(stmt.where(LinkRow.id == link_id)).first()
            if row is None:
                raise NotFoundError(f"no link {link_id}")
            return _link_record(*row)

    def export_links(self, run_id: int | None = None) -> list[dict[str, Any]]:
        """Flat rows for reports (CSV/JSON), one per link of ``run_id`` (every run when ``None``).

        Columns: link_id, run_id, run_kind, model, document_id, document_source, document_version, paragraph_id,
        paragraph_ordinal, paragraph_page, heading_path, paragraph_text, law_short_name, law_identifier,
        law_version, provision_id, provision_key, provision_kind, provision_number, provision_title, method,
        score, rank, proposed_status, status, reviewer, review_comment, reviewed_at, evidence, created_at.
        """
        from sqlalchemy import func, select

        from compliance.store.models import (
            Document,
            DocumentVersion,
            LawRow,
            LinkRow,
            ParagraphRow,
            ProvisionRow,
            ReviewRow,
            RunRow,
        )

        latest = (
            select(ReviewRow.link_id, func.max(ReviewRow.id).label("review_id"))
            .group_by(ReviewRow.link_id)
            .subquery()
        )
        stmt = (
            select(
                LinkRow,
                RunRow,
                ParagraphRow,
                DocumentVersion.version,
                Document,
                ProvisionRow,
                LawRow,
                ReviewRow,
            )
            .join(RunRow, LinkRow.run_id == RunRow.id)
            .join(ParagraphRow, LinkRow.paragraph_id == ParagraphRow.id)
            .join(DocumentVersion, ParagraphRow.version_id == DocumentVersion.id)
            .join(Document, DocumentVersion.document_id == Document.id)
            .join(ProvisionRow, LinkRow.provision_id == ProvisionRow.id)
            .join(LawRow, ProvisionRow.law_id == LawRow.id)
            .outerjoin(latest, latest.c.link_id == LinkRow.id)
            .outerjoin(ReviewRow, ReviewRow.id == latest.c.review_id)
            .order_by(LinkRow.run_id, Document.id, ParagraphRow.ordinal, LinkRow.rank, LinkRow.id)
        )
        if run_id is not None:
            stmt = stmt.where(LinkRow.run_id == run_id)
        out: list[dict[str, Any]] = []
        with self.session() as s:
            for link, run, para, doc_version, doc, prov, law, review in s.execute(stmt):
                out.append(
                    {
                        "link_id": link.id,
                        "run_id": run.id,
                        "run_kind": run.kind,
                        "model": run.model,
                        "document_id": doc.id,
                        "document_source": doc.source,
                        "document_version": doc_version,
                        "paragraph_id": para.id,
                        "paragraph_ordinal": para.ordinal,
                        "paragraph_page": para.page,
                        "heading_path": list(para.heading_path or []),
                        "paragraph_text": para.text,
                        "law_short_name": law.short_name,
                        "law_identifier": law.identifier,
                        "law_version": law.version,
                        "provision_id": prov.id,
                        "provision_key": prov.key,
                        "provision_kind": prov.kind,
                        "provision_number": prov.number,
                        "provision_title": prov.title,
                        "method": link.method,
                        "score": link.score,
                        "rank": link.rank,
                        "proposed_status": link.status,
                        "status": review.decision if review is not None else link.status,
                        "reviewer": review.reviewer if review is not None else None,
                        "review_comment": review.comment if review is not None else None,
                        "reviewed_at": review.decided_at.isoformat() if review is not None else None,
                        "evidence": dict(link.evidence or {}),
                        "created_at": link.created_at.isoformat(),
                    }
                )
        return out

    def add_review(
        self, link_id: int, decision: str, reviewer: str, comment: str | None = None
    ) -> ReviewRecord:
        """Record a reviewer's decision on a link (a new row; earlier decisions are kept).

        Args:
            decision: ``accepted``, ``rejected``, ``needs-review`` or ``proposed`` (reopen).

        Raises:
            NotFoundError: no such link.
            StoreError: invalid decision or empty reviewer.
        """
        from compliance.store.models import LINK_STATUSES, LinkRow, ReviewRow

        if decision not in LINK_STATUSES:
            raise StoreError(f"invalid decision {decision!r}; expected one of {LINK_STATUSES}")
        if not reviewer or not reviewer.strip():
            raise StoreError("a review needs a reviewer name")
        with self.session() as s:
            if s.get(LinkRow, link_id) is None:
                raise NotFoundError(f"no link {link_id}")
            row = ReviewRow(link_id=link_id, decision=decision, reviewer=reviewer.strip(), comment=comment)
            s.add(row)
            s.flush()
            self._log(
                s,
                "link.review",
                actor=reviewer.strip(),
                target_type="link",
                target_id=link_id,
                details={"decision": decision, "comment": comment, "review_id": row.id},
            )
            return ReviewRecord(row.id, row.link_id, row.decision, row.reviewer, row.comment, row.decided_at)

    def list_reviews(self, link_id: int) -> list[ReviewRecord]:
        """Every decision on a link, oldest first."""
        from sqlalchemy import select

        from compliance.store.models import ReviewRow

        with self.session() as s:
            rows = s.scalars(select(ReviewRow).where(ReviewRow.link_id == link_id).order_by(ReviewRow.id))
            return [
                ReviewRecord(r.id, r.link_id, r.decision, r.reviewer, r.comment, r.decided_at) for r in rows
            ]

    # -- alerts ----------------------------------------------------------------------------------------------
    def add_alerts(self, run_id: int, alerts: Iterable[NewAlert], *, actor: str | None = None) -> int:
        """Store the alerts raised by a run (status ``open``); returns how many. All or nothing."""
        from sqlalchemy import insert

        from compliance.store.models import AlertRow, RunRow, utcnow

        now = utcnow()
        rows = [
            {
                "run_id": run_id,
                "law_id": int(a.law_id),
                "provision_id": None if a.provision_id is None else int(a.provision_id),
                "paragraph_id": int(a.paragraph_id),
                "score": float(a.score),
                "rank": None if a.rank is None else int(a.rank),
                "evidence": to_jsonable(dict(a.evidence)),
                "status": "open",
                "created_at": now,
            }
            for a in alerts
        ]
        with self.session() as s:
            if s.get(RunRow, run_id) is None:
                raise NotFoundError(f"no run {run_id}")
            if rows:
                self._check_ids(s, "law", {r["law_id"] for r in rows})
                self._check_ids(s, "paragraph", {r["paragraph_id"] for r in rows})
                provisions = {r["provision_id"] for r in rows if r["provision_id"] is not None}
                if provisions:
                    self._check_ids(s, "provision", provisions)
                s.execute(insert(AlertRow), rows)
            self._log(
                s,
                "alerts.add",
                actor=actor,
                target_type="run",
                target_id=run_id,
                details={"count": len(rows)},
            )
        return len(rows)

    def _alerts(self, s: Session, *conditions: Any) -> list[AlertRecord]:
        from sqlalchemy import select

        from compliance.store.models import (
            AlertAcknowledgementRow,
            AlertRow,
            Document,
            DocumentVersion,
            LawRow,
            ParagraphRow,
            ProvisionRow,
        )

        stmt = (
            select(
                AlertRow,
                LawRow.short_name,
                LawRow.version,
                ProvisionRow.key,
                Document.id,
                Document.source,
                ParagraphRow.text,
            )
            .join(LawRow, AlertRow.law_id == LawRow.id)
            .outerjoin(ProvisionRow, AlertRow.provision_id == ProvisionRow.id)
            .join(ParagraphRow, AlertRow.paragraph_id == ParagraphRow.id)
            .join(DocumentVersion, ParagraphRow.version_id == DocumentVersion.id)
            .join(Document, DocumentVersion.document_id == Document.id)
            .where(*conditions)
            .order_by(AlertRow.id)
        )
        rows = s.execute(stmt).all()
        acks: dict[int, list[AcknowledgementRecord]] = {r[0].id: [] for r in rows}
        for chunk in _chunks(list(acks)):
            ack_stmt = (
                select(AlertAcknowledgementRow)
                .where(AlertAcknowledgementRow.alert_id.in_(chunk))
                .order_by(AlertAcknowledgementRow.id)
            )
            for a in s.scalars(ack_stmt):
                acks[a.alert_id].append(AcknowledgementRecord(a.id, a.alert_id, a.by, a.comment, a.at))
        return [
            AlertRecord(
                id=a.id,
                run_id=a.run_id,
                law_id=a.law_id,
                law_short_name=short_name,
                law_version=law_version,
                provision_id=a.provision_id,
                provision_key=provision_key,
                paragraph_id=a.paragraph_id,
                document_id=document_id,
                document_source=source,
                paragraph_text=text,
                score=a.score,
                rank=a.rank,
                evidence=dict(a.evidence or {}),
                status=a.status,
                created_at=a.created_at,
                acknowledgements=tuple(acks[a.id]),
            )
            for a, short_name, law_version, provision_key, document_id, source, text in rows
        ]

    def list_alerts(
        self, status: str | None = None, law: str | int | None = None, run_id: int | None = None
    ) -> list[AlertRecord]:
        """Alerts, oldest first; ``status`` ``open``/``acknowledged``; ``law`` a short name, identifier or id."""
        from sqlalchemy import or_

        from compliance.store.models import ALERT_STATUSES, AlertRow, LawRow

        conditions: list[Any] = []
        if status is not None:
            if status not in ALERT_STATUSES:
                raise StoreError(f"invalid alert status {status!r}; expected one of {ALERT_STATUSES}")
            conditions.append(AlertRow.status == status)
        if law is not None:
            if isinstance(law, int):
                conditions.append(AlertRow.law_id == law)
            else:
                conditions.append(or_(LawRow.short_name == law.lower(), LawRow.identifier == law))
        if run_id is not None:
            conditions.append(AlertRow.run_id == run_id)
        with self.session() as s:
            return self._alerts(s, *conditions)

    def get_alert(self, alert_id: int) -> AlertRecord:
        """An alert with its acknowledgements. Raises :class:`~compliance.errors.NotFoundError`."""
        from compliance.store.models import AlertRow

        with self.session() as s:
            found = self._alerts(s, AlertRow.id == alert_id)
        if not found:
            raise NotFoundError(f"no alert {alert_id}")
        return found[0]

    def acknowledge_alert(self, alert_id: int, by: str, comment: str | None = None) -> AlertRecord:
        """Acknowledge an alert: appends an acknowledgement row and sets its status to ``acknowledged``.

        Acknowledging again adds another row (the history is kept); the status stays ``acknowledged``.
        """
        from compliance.store.models import AlertAcknowledgementRow, AlertRow

        if not by or not by.strip():
            raise StoreError("an acknowledgement needs a name (by=)")
        with self.session() as s:
            row = s.get(AlertRow, alert_id)
            if row is None:
                raise NotFoundError(f"no alert {alert_id}")
            s.add(AlertAcknowledgementRow(alert_id=alert_id, by=by.strip(), comment=comment))
            row.status = "acknowledged"
            s.flush()
            self._log(
                s,
                "alert.acknowledge",
                actor=by.strip(),
                target_type="alert",
                target_id=alert_id,
                details={"comment": comment},
            )
        return self.get_alert(alert_id)


# -- row → record helpers ----------------------------------------------------------------------------------------
def _law_content_checksum(law: Law) -> str:
    """A checksum for laws built in code without source bytes: sha256 over the provisions."""
    h = hashlib.sha256()
    for p in law.provisions:
        h.update(f"{p.kind}\x1f{p.key}\x1f{p.number}\x1f{p.title}\x1f{p.parent_key}\x1f{p.text}\x1e".encode())
    return h.hexdigest()


def _version_record(v: DocumentVersion) -> DocumentVersionRecord:
    return DocumentVersionRecord(
        id=v.id,
        version=v.version,
        checksum=v.checksum,
        title=v.title,
        media_type=v.media_type,
        size_bytes=v.size_bytes,
        pages=v.pages,
        paragraph_count=v.paragraph_count,
        ingested_at=v.ingested_at,
        parser_metadata=dict(v.parser_metadata or {}),
    )


def _stored_paragraph(p: ParagraphRow, document_id: int, version: int, source: str) -> StoredParagraph:
    return StoredParagraph(
        id=p.id,
        document_id=document_id,
        version_id=p.version_id,
        version=version,
        source=source,
        ordinal=p.ordinal,
        text=p.text,
        heading_path=tuple(p.heading_path or ()),
        page=p.page,
        kind=p.kind,
        char_start=p.char_start,
        char_end=p.char_end,
    )


def _run_record(r: RunRow) -> RunRecord:
    return RunRecord(
        id=r.id,
        kind=r.kind,
        status=r.status,
        config=dict(r.config or {}),
        model=dict(r.model) if r.model is not None else None,
        started_at=r.started_at,
        finished_at=r.finished_at,
        duration_s=r.duration_s,
        error=r.error,
        stats=dict(r.stats or {}),
    )


def _link_record(
    link: LinkRow, provision_key: str, law_id: int, law_short_name: str, current_status: str
) -> LinkRecord:
    return LinkRecord(
        id=link.id,
        run_id=link.run_id,
        paragraph_id=link.paragraph_id,
        provision_id=link.provision_id,
        law_id=law_id,
        law_short_name=law_short_name,
        provision_key=provision_key,
        method=link.method,
        score=link.score,
        rank=link.rank,
        evidence=dict(link.evidence or {}),
        proposed_status=link.status,
        status=current_status,
        created_at=link.created_at,
    )


__all__ = ["Store"]
