"""SQLAlchemy 2.0 ORM models: documents, laws, runs, links, reviews, alerts and the audit log.

Portable types only (``JSON``, ``DateTime(timezone=True)``, ``Text`` …) so that one schema serves SQLite and
PostgreSQL. Constraint names follow :data:`NAMING_CONVENTION`, which Alembic needs to alter SQLite tables in
batch mode and to compare the models with the migrations.

Design in short:

* ``documents`` holds one row per source (file name or URI); ``document_versions`` one row per distinct content
  (sha256) of that source; ``paragraphs`` belong to a version. Re-ingesting unchanged bytes adds nothing; changed
  bytes add a version and keep the old one.
* ``laws`` holds one row per (identifier, checksum): a new text of the same law is a new ``version``;
  ``provisions`` form a tree through ``parent_id`` and keep document order in ``position``.
* ``runs`` records every pipeline execution (config, model identity, stats, status), numbered per kind, with the
  process that runs it (a reaper marks runs whose process is gone failed).
* ``links`` (paragraph ↔ provision) and ``reviews`` are append-only history; a link's current status is its
  latest review's decision, else the status it was proposed with. A link is unique per (paragraph, provision,
  method, model version).
* ``alerts`` are raised by runs when a new law arrives; ``alert_acknowledgements`` keep who acknowledged what.
* ``audit_log`` records every mutation made through the repository.
* ``api_tokens`` (hashed secrets with a role), ``jobs`` and ``job_items`` (one task per document, claimed under a
  lease so that a killed worker's document is taken over, never done twice) serve the HTTP API and the workers.

Do not change a model without adding an Alembic revision under ``compliance/migrations/versions``; the test
suite compares the two.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

NAMING_CONVENTION: dict[str, str] = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

#: Allowed values of the status-like columns (validated by the repository, stored as short strings).
RUN_STATUSES = ("running", "succeeded", "failed")
LINK_STATUSES = ("proposed", "accepted", "rejected", "needs-review")
REVIEW_SOURCES = ("cli", "api", "import", "manual", "rescore", "law-change", "carry-over")
ALERT_STATUSES = ("open", "acknowledged", "dismissed", "resolved")
TOKEN_ROLES = ("viewer", "reviewer", "admin")
JOB_STATUSES = ("queued", "running", "succeeded", "partial", "failed")
JOB_ITEM_STATUSES = ("queued", "running", "done", "failed")


def utcnow() -> datetime:
    """The current time, timezone-aware, in UTC."""
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """``DateTime(timezone=True)`` that always hands back aware UTC datetimes.

    SQLite keeps no zone: values are converted to UTC before storing and marked UTC when read back.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r}: store timezone-aware datetimes only")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


class Base(DeclarativeBase):
    """Declarative base with the project's constraint naming convention."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        datetime: UTCDateTime(),
        dict[str, Any]: JSON(),
        list[Any]: JSON(),
    }


# -- documents ---------------------------------------------------------------------------------------------------
class Document(Base):
    """A source document (one row per source name); its contents live in :class:`DocumentVersion`."""

    __tablename__ = "documents"

    id: Mapped[int] = mapped_column(primary_key=True)
    source: Mapped[str] = mapped_column(String(1024), unique=True)
    title: Mapped[str] = mapped_column(String(1024), default="")
    media_type: Mapped[str] = mapped_column(String(255), default="")
    latest_version: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class DocumentVersion(Base):
    """One distinct content (sha256 of the bytes) of a document, with the full extracted text."""

    __tablename__ = "document_versions"
    __table_args__ = (UniqueConstraint("document_id", "version"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    document_id: Mapped[int] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"), index=True)
    version: Mapped[int] = mapped_column(Integer)
    checksum: Mapped[str] = mapped_column(String(64), index=True)
    title: Mapped[str] = mapped_column(String(1024), default="")
    media_type: Mapped[str] = mapped_column(String(255), default="")
    size_bytes: Mapped[int] = mapped_column(Integer, default=0)
    pages: Mapped[int | None] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text, default="")
    paragraph_count: Mapped[int] = mapped_column(Integer, default=0)
    parser_metadata: Mapped[dict[str, Any]] = mapped_column(default=dict)
    ingested_at: Mapped[datetime] = mapped_column(default=utcnow)


class ParagraphRow(Base):
    """One paragraph of a document version, with provenance (page, headings, character offsets)."""

    __tablename__ = "paragraphs"
    __table_args__ = (UniqueConstraint("version_id", "ordinal"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    version_id: Mapped[int] = mapped_column(
        ForeignKey("document_versions.id", ondelete="CASCADE"), index=True
    )
    ordinal: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(String(32), default="paragraph")
    #: what the paragraph does (statement, definition, description, heading, metadata, form, furniture, reference);
    #: None for paragraphs stored before roles existed (migration 0003)
    role: Mapped[str | None] = mapped_column(String(16), index=True)
    page: Mapped[int | None] = mapped_column(Integer)
    heading_path: Mapped[list[Any]] = mapped_column(default=list)
    char_start: Mapped[int] = mapped_column(Integer, default=0)
    char_end: Mapped[int] = mapped_column(Integer, default=0)
    text_sha256: Mapped[str] = mapped_column(String(64), index=True)


class ParagraphVectorRow(Base):
    """A paragraph's encoder vectors in one embedding space (migration 0006): the L2-normalised chunk vectors the
    controls index would compute for it, kept so that no later process embeds the paragraph again.

    ``space`` identifies the embedding space (encoder weights, pooling, layer, chunking:
    :func:`compliance.runtime.embedding_space_id`); ``vectors`` holds ``chunks × dim`` little-endian float32."""

    __tablename__ = "paragraph_vectors"

    paragraph_id: Mapped[int] = mapped_column(
        ForeignKey("paragraphs.id", ondelete="CASCADE"), primary_key=True
    )
    space: Mapped[str] = mapped_column(String(64), primary_key=True, index=True)
    chunks: Mapped[int] = mapped_column(Integer)
    dim: Mapped[int] = mapped_column(Integer)
    vectors: Mapped[bytes] = mapped_column(LargeBinary)


# -- laws --------------------------------------------------------------------------------------------------------
class LawRow(Base):
    """One version of a law: unique per (identifier, checksum of the source bytes)."""

    __tablename__ = "laws"
    __table_args__ = (
        UniqueConstraint("identifier", "checksum"),
        UniqueConstraint("identifier", "version"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    identifier: Mapped[str] = mapped_column(String(255), index=True)
    short_name: Mapped[str] = mapped_column(String(64), index=True)
    title: Mapped[str] = mapped_column(Text, default="")
    jurisdiction: Mapped[str] = mapped_column(String(16))
    law_type: Mapped[str] = mapped_column(String(64), default="")
    date_adopted: Mapped[date | None] = mapped_column(Date)
    date_in_force: Mapped[date | None] = mapped_column(Date)
    version_date: Mapped[date | None] = mapped_column(Date)
    source: Mapped[str] = mapped_column(Text, default="")
    source_format: Mapped[str] = mapped_column(String(32), default="")
    checksum: Mapped[str] = mapped_column(String(64))
    version: Mapped[int] = mapped_column(Integer)
    law_metadata: Mapped[dict[str, Any]] = mapped_column("metadata", default=dict)
    installed_at: Mapped[datetime] = mapped_column(default=utcnow)


class ProvisionRow(Base):
    """One provision of a law version (chapter, section, article, paragraph, point, recital, annex)."""

    __tablename__ = "provisions"
    __table_args__ = (UniqueConstraint("law_id", "key"), Index("ix_provisions_law_id_kind", "law_id", "kind"))

    id: Mapped[int] = mapped_column(primary_key=True)
    law_id: Mapped[int] = mapped_column(ForeignKey("laws.id", ondelete="CASCADE"), index=True)
    key: Mapped[str] = mapped_column(String(255))
    kind: Mapped[str] = mapped_column(String(32))
    number: Mapped[str | None] = mapped_column(String(64))
    title: Mapped[str | None] = mapped_column(Text)
    text: Mapped[str] = mapped_column(Text, default="")
    parent_id: Mapped[int | None] = mapped_column(ForeignKey("provisions.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    ordinal: Mapped[int] = mapped_column(Integer, default=0)


# -- runs, links, reviews ----------------------------------------------------------------------------------------
class RunRow(Base):
    """One execution of a pipeline step (ingest, law-install, audit, map, alert, train …)."""

    __tablename__ = "runs"
    __table_args__ = (
        Index("ix_runs_kind_started_at", "kind", "started_at"),
        UniqueConstraint("kind", "number"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))
    #: the run's number among the runs of its kind (1, 2, …): what people see ("audit 3"); ``id`` stays unique
    number: Mapped[int] = mapped_column(Integer)
    #: the process that runs it, ``host:pid:start-token``: lets a reaper mark runs whose process is gone failed
    owner: Mapped[str | None] = mapped_column(String(255))
    config: Mapped[dict[str, Any]] = mapped_column(default=dict)
    model: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column()
    duration_s: Mapped[float | None] = mapped_column(Float)
    status: Mapped[str] = mapped_column(String(16), default="running", index=True)
    error: Mapped[str | None] = mapped_column(Text)
    stats: Mapped[dict[str, Any]] = mapped_column(default=dict)


class LinkRow(Base):
    """A scored paragraph ↔ provision link proposed by a run. Never updated: reviews add rows."""

    __tablename__ = "links"
    __table_args__ = (
        Index("ix_links_run_id_paragraph_id", "run_id", "paragraph_id"),
        # one link per paragraph, provision, method and model version: concurrent or repeated runs cannot
        # store a link twice (the insert skips rows that conflict)
        UniqueConstraint("paragraph_id", "provision_id", "method", "model_version"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    paragraph_id: Mapped[int] = mapped_column(ForeignKey("paragraphs.id", ondelete="CASCADE"), index=True)
    provision_id: Mapped[int] = mapped_column(ForeignKey("provisions.id", ondelete="CASCADE"), index=True)
    method: Mapped[str] = mapped_column(String(64))
    #: the identity of the model that proposed the link (``""`` for methods without one)
    model_version: Mapped[str] = mapped_column(String(255), default="")
    score: Mapped[float] = mapped_column(Float)
    rank: Mapped[int | None] = mapped_column(Integer)
    evidence: Mapped[dict[str, Any]] = mapped_column(default=dict)
    status: Mapped[str] = mapped_column(String(16), default="proposed")
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ReviewRow(Base):
    """A reviewer's decision on a link. Append-only: the latest row is the link's current status."""

    __tablename__ = "reviews"

    id: Mapped[int] = mapped_column(primary_key=True)
    link_id: Mapped[int] = mapped_column(ForeignKey("links.id", ondelete="CASCADE"), index=True)
    decision: Mapped[str] = mapped_column(String(16))
    reviewer: Mapped[str] = mapped_column(String(255))
    comment: Mapped[str | None] = mapped_column(Text)
    decided_at: Mapped[datetime] = mapped_column(default=utcnow)
    #: the run and the model whose suggestion was decided (copied from the link when the review is recorded)
    suggested_run_id: Mapped[int | None] = mapped_column(
        ForeignKey("runs.id", ondelete="SET NULL"), index=True
    )
    suggested_model: Mapped[str | None] = mapped_column(String(255))
    #: how the decision came in: ``cli``, ``api``, ``import`` (a filled-in spreadsheet), ``manual`` (a link a
    #: reviewer added), ``rescore`` / ``law-change`` (re-opened by the system, with the reason as comment)
    source: Mapped[str | None] = mapped_column(String(32))


# -- alerts ------------------------------------------------------------------------------------------------------
class AlertRow(Base):
    """A control (paragraph) that a newly arrived law (or one of its provisions) probably concerns."""

    __tablename__ = "alerts"

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    law_id: Mapped[int] = mapped_column(ForeignKey("laws.id", ondelete="CASCADE"), index=True)
    provision_id: Mapped[int | None] = mapped_column(
        ForeignKey("provisions.id", ondelete="CASCADE"), index=True
    )
    paragraph_id: Mapped[int] = mapped_column(ForeignKey("paragraphs.id", ondelete="CASCADE"), index=True)
    score: Mapped[float] = mapped_column(Float)
    rank: Mapped[int | None] = mapped_column(Integer)
    evidence: Mapped[dict[str, Any]] = mapped_column(default=dict)
    status: Mapped[str] = mapped_column(String(16), default="open", index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class AlertAcknowledgementRow(Base):
    """Who changed an alert's status (acknowledged, dismissed as a false positive, resolved), when, and why.
    Append-only: the alert's status is the latest row's."""

    __tablename__ = "alert_acknowledgements"

    id: Mapped[int] = mapped_column(primary_key=True)
    alert_id: Mapped[int] = mapped_column(ForeignKey("alerts.id", ondelete="CASCADE"), index=True)
    status: Mapped[str] = mapped_column(String(16), default="acknowledged", server_default="acknowledged")
    by: Mapped[str] = mapped_column(String(255))
    comment: Mapped[str | None] = mapped_column(Text)
    at: Mapped[datetime] = mapped_column(default=utcnow)


# -- audit log ---------------------------------------------------------------------------------------------------
class AuditLogRow(Base):
    """One mutation made through the repository: who did what to which object."""

    __tablename__ = "audit_log"
    __table_args__ = (Index("ix_audit_log_target_type_target_id", "target_type", "target_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    actor: Mapped[str] = mapped_column(String(255))
    action: Mapped[str] = mapped_column(String(64), index=True)
    target_type: Mapped[str | None] = mapped_column(String(64))
    target_id: Mapped[str | None] = mapped_column(String(255))
    details: Mapped[dict[str, Any]] = mapped_column(default=dict)


# -- service: API tokens and jobs ----------------------------------------------------------------------------
class ApiTokenRow(Base):
    """An HTTP API token: only its SHA-256 is stored; the secret is shown once, when it is created."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(255), unique=True)
    role: Mapped[str] = mapped_column(String(16))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))
    created_by: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column()
    last_used_at: Mapped[datetime | None] = mapped_column()


class JobRow(Base):
    """A batch of work (an audit of many documents) fanned out as one task per item."""

    __tablename__ = "jobs"

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(16), default="queued", index=True)
    params: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_by: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column()
    notification: Mapped[dict[str, Any] | None] = mapped_column(JSON)


class JobItemRow(Base):
    """One task of a job (one document): its input, who runs it under which lease, and its result."""

    __tablename__ = "job_items"
    __table_args__ = (
        UniqueConstraint("job_id", "position"),
        Index("ix_job_items_status_lease_until", "status", "lease_until"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    source: Mapped[str] = mapped_column(String(1024))
    media_type: Mapped[str] = mapped_column(String(255), default="")
    size_bytes: Mapped[int] = mapped_column(Integer, default=0)
    sha256: Mapped[str] = mapped_column(String(64))
    content: Mapped[bytes | None] = mapped_column(LargeBinary)
    status: Mapped[str] = mapped_column(String(16), default="queued")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    claim: Mapped[str | None] = mapped_column(String(64))
    worker: Mapped[str | None] = mapped_column(String(255))
    lease_until: Mapped[datetime | None] = mapped_column()
    started_at: Mapped[datetime | None] = mapped_column()
    finished_at: Mapped[datetime | None] = mapped_column()
    result: Mapped[dict[str, Any]] = mapped_column(default=dict)
    error: Mapped[str | None] = mapped_column(Text)


__all__ = [
    "ALERT_STATUSES",
    "JOB_ITEM_STATUSES",
    "JOB_STATUSES",
    "LINK_STATUSES",
    "NAMING_CONVENTION",
    "REVIEW_SOURCES",
    "RUN_STATUSES",
    "TOKEN_ROLES",
    "AlertAcknowledgementRow",
    "AlertRow",
    "ApiTokenRow",
    "AuditLogRow",
    "Base",
    "Document",
    "DocumentVersion",
    "JobItemRow",
    "JobRow",
    "LawRow",
    "LinkRow",
    "ParagraphRow",
    "ProvisionRow",
    "ReviewRow",
    "RunRow",
]
