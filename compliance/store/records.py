"""Plain data returned and accepted by :class:`compliance.store.Store`.

Nothing here is an ORM object: records are frozen dataclasses that stay valid after the session that read them
is closed, and serialise with :meth:`to_dict` (``datetime``/``date`` as ISO 8601 strings).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import PurePath
from typing import Any

#: the JSON scalars' exact types (subclasses such as enums and numpy floats take the general path)
_PLAIN: frozenset[type] = frozenset({str, int, float, bool, type(None)})


def to_jsonable(value: Any) -> Any:
    """Turn configs and stats into JSON-compatible data for the JSON columns.

    Accepts dataclasses, pydantic models (``model_dump``), mappings, sequences, sets, paths, enums, dates and
    the JSON scalars. Used for run configs, model identities, evidence and audit details.

    Raises:
        TypeError: for values with no sensible JSON form.
    """
    kind = type(value)  # exact types first: evidence dicts of plain values are most of what an audit stores
    if kind in _PLAIN:
        return value
    if kind is dict:
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [to_jsonable(v) for v in value]
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if isinstance(value, PurePath):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return to_jsonable(dump(mode="json"))
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted(to_jsonable(v) for v in value)
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item):
        return to_jsonable(item())
    raise TypeError(f"cannot store a {type(value).__name__} as JSON: {value!r}")


class _Record:
    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-compatible data (dates as ISO strings, nested records as dicts)."""
        return {f.name: to_jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)}  # type: ignore[arg-type]


# -- laws --------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SavedLaw(_Record):
    """Result of :meth:`Store.save_law`: ``created`` is False when the same text was already stored."""

    id: int
    identifier: str
    short_name: str
    version: int
    created: bool
    provision_count: int


@dataclass(frozen=True, slots=True)
class LawRecord(_Record):
    """A stored law version with its provision counts (by kind), without the provisions."""

    id: int
    identifier: str
    short_name: str
    title: str
    jurisdiction: str
    law_type: str
    version: int
    checksum: str
    source: str
    source_format: str
    date_adopted: date | None
    date_in_force: date | None
    version_date: date | None
    installed_at: datetime
    metadata: dict[str, Any]
    counts: dict[str, int]
    is_latest: bool


@dataclass(frozen=True, slots=True)
class StoredProvision(_Record):
    """A stored provision with its database id (``parent_key`` as in :class:`compliance.rules.corpus.Provision`)."""

    id: int
    law_id: int
    key: str
    kind: str
    number: str | None
    title: str | None
    text: str
    parent_key: str | None
    ordinal: int
    position: int


# -- documents ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SavedDocument(_Record):
    """Result of :meth:`Store.save_document`.

    ``created`` is True when something was stored (a new document or a new version); ``new_document`` tells
    the two apart. For unchanged content the existing latest version is reported.
    """

    document_id: int
    version_id: int
    version: int
    created: bool
    new_document: bool
    paragraph_count: int
    source: str


@dataclass(frozen=True, slots=True)
class DocumentVersionRecord(_Record):
    id: int
    version: int
    checksum: str
    title: str
    media_type: str
    size_bytes: int
    pages: int | None
    paragraph_count: int
    ingested_at: datetime
    parser_metadata: dict[str, Any]


@dataclass(frozen=True, slots=True)
class DocumentRecord(_Record):
    """A stored document; ``versions`` oldest first, the last one is the latest."""

    id: int
    source: str
    title: str
    media_type: str
    latest_version: int
    created_at: datetime
    updated_at: datetime
    versions: tuple[DocumentVersionRecord, ...]

    @property
    def latest(self) -> DocumentVersionRecord:
        return self.versions[-1]


@dataclass(frozen=True, slots=True)
class StoredParagraph(_Record):
    """A stored paragraph with its provenance: the document, the version and the place in it."""

    id: int
    document_id: int
    version_id: int
    version: int
    source: str
    ordinal: int
    text: str
    heading_path: tuple[str, ...]
    page: int | None
    kind: str
    char_start: int
    char_end: int
    role: str | None = None  #: the paragraph role (None: stored before roles existed)


# -- runs --------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class RunRecord(_Record):
    """A run. ``number`` counts the runs of its kind (``label``: ``"audit 3"``); ``id`` is unique overall."""

    id: int
    kind: str
    status: str
    config: dict[str, Any]
    model: dict[str, Any] | None
    started_at: datetime
    finished_at: datetime | None
    duration_s: float | None
    error: str | None
    stats: dict[str, Any]
    number: int | None = None
    owner: str | None = None

    @property
    def label(self) -> str:
        """How people see the run: ``"audit 3"`` (its kind and its number among runs of that kind)."""
        return f"{self.kind} {self.number if self.number is not None else '#' + str(self.id)}"


@dataclass(slots=True)
class ActiveRun:
    """Handed out by :meth:`Store.run`: fill ``stats`` inside the block; they are stored when it ends."""

    id: int
    kind: str
    stats: dict[str, Any] = field(default_factory=dict)
    number: int | None = None

    @property
    def label(self) -> str:
        """``"audit 3"``: the kind and the run's number among runs of that kind."""
        return f"{self.kind} {self.number if self.number is not None else '#' + str(self.id)}"


# -- links and reviews -------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class NewLink:
    """A link to store with :meth:`Store.add_links`. ``status`` is the status it is proposed with.

    ``model_version`` identifies the model that proposed it (default: ``evidence["model"]``, else ``""``); a link
    is stored once per (paragraph, provision, method, model version).
    """

    paragraph_id: int
    provision_id: int
    method: str
    score: float
    rank: int | None = None
    evidence: Mapping[str, Any] = field(default_factory=dict)
    status: str = "proposed"
    model_version: str | None = None

    def resolved_model_version(self) -> str:
        """``model_version``, else the evidence's ``model``, else ``""``."""
        if self.model_version is not None:
            return self.model_version
        model = self.evidence.get("model")
        return str(model) if model is not None else ""


@dataclass(frozen=True, slots=True)
class ReviewRecord(_Record):
    """One decision on a link: who, what, when, through what (``source``: cli, api, import …) and on which run's
    and model's suggestion."""

    id: int
    link_id: int
    decision: str
    reviewer: str
    comment: str | None
    decided_at: datetime
    source: str | None = None
    suggested_run_id: int | None = None
    suggested_model: str | None = None

    @classmethod
    def of(cls, row: Any) -> ReviewRecord:
        """The record of a ``reviews`` row."""
        return cls(
            row.id,
            row.link_id,
            row.decision,
            row.reviewer,
            row.comment,
            row.decided_at,
            row.source,
            row.suggested_run_id,
            row.suggested_model,
        )


@dataclass(frozen=True, slots=True)
class LinkRecord(_Record):
    """A stored link. ``status`` is the current status (latest review, else ``proposed_status``)."""

    id: int
    run_id: int
    paragraph_id: int
    provision_id: int
    law_id: int
    law_short_name: str
    provision_key: str
    method: str
    score: float
    rank: int | None
    evidence: dict[str, Any]
    proposed_status: str
    status: str
    created_at: datetime
    model_version: str = ""


# -- alerts ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class NewAlert:
    """An alert to store with :meth:`Store.add_alerts`: paragraph ``paragraph_id`` is concerned by the law."""

    law_id: int
    paragraph_id: int
    score: float
    provision_id: int | None = None
    rank: int | None = None
    evidence: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AcknowledgementRecord(_Record):
    """One change of an alert's status (``acknowledged``, ``dismissed`` as a false positive, ``resolved``)."""

    id: int
    alert_id: int
    by: str
    comment: str | None
    at: datetime
    status: str = "acknowledged"


@dataclass(frozen=True, slots=True)
class AlertRecord(_Record):
    id: int
    run_id: int
    law_id: int
    law_short_name: str
    law_version: int
    provision_id: int | None
    provision_key: str | None
    paragraph_id: int
    document_id: int
    document_source: str
    paragraph_text: str
    score: float
    rank: int | None
    evidence: dict[str, Any]
    status: str
    created_at: datetime
    acknowledgements: tuple[AcknowledgementRecord, ...] = ()


@dataclass(frozen=True, slots=True)
class ParagraphVectors(_Record):
    """A paragraph's encoder vectors in one embedding space: ``chunks`` rows of ``dim`` float32 values
    (little-endian bytes in ``data``; ``numpy.frombuffer(data, "<f4").reshape(chunks, dim)``)."""

    paragraph_id: int
    chunks: int
    dim: int
    data: bytes

    def array(self) -> Any:
        """The vectors as a float32 ``numpy`` array of shape ``(chunks, dim)``."""
        import numpy as np

        return np.frombuffer(self.data, dtype="<f4").reshape(self.chunks, self.dim)


# -- service: API tokens and jobs -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class TokenRecord(_Record):
    """A stored API token (never its secret): name, role, the secret's first characters, times."""

    id: int
    name: str
    role: str
    prefix: str
    created_by: str
    created_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None

    @property
    def active(self) -> bool:
        """Not revoked."""
        return self.revoked_at is None


@dataclass(frozen=True, slots=True)
class NewJobItem:
    """One document of a job to store with :meth:`Store.create_job`: its source name, bytes and media type."""

    source: str
    content: bytes
    media_type: str = ""


@dataclass(frozen=True, slots=True)
class JobItemRecord(_Record):
    """One task of a job: ``queued``, ``running`` (by ``worker`` until ``lease_until``), ``done`` or ``failed``."""

    id: int
    job_id: int
    position: int
    source: str
    media_type: str
    size_bytes: int
    sha256: str
    status: str
    attempts: int
    worker: str | None
    lease_until: datetime | None
    started_at: datetime | None
    finished_at: datetime | None
    result: dict[str, Any]
    error: str | None


@dataclass(frozen=True, slots=True)
class JobRecord(_Record):
    """A job with its item counts (``queued``, ``running``, ``done``, ``failed``, ``total``)."""

    id: int
    kind: str
    status: str
    params: dict[str, Any]
    created_by: str
    created_at: datetime
    finished_at: datetime | None
    notification: dict[str, Any] | None
    counts: dict[str, int]


@dataclass(frozen=True, slots=True)
class JobClaim:
    """The answer of :meth:`Store.claim_job_item`.

    ``outcome`` is ``claimed`` (``claim`` is the lease's secret and ``content`` the item's bytes), ``finished``
    (done or failed already: nothing to do) or ``busy`` (another worker holds a live lease).
    """

    outcome: str
    item: JobItemRecord
    claim: str | None = None
    content: bytes | None = None


# -- audit log ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class AuditEntry(_Record):
    id: int
    at: datetime
    actor: str
    action: str
    target_type: str | None
    target_id: str | None
    details: dict[str, Any]


__all__ = [
    "AcknowledgementRecord",
    "ActiveRun",
    "AlertRecord",
    "AuditEntry",
    "DocumentRecord",
    "DocumentVersionRecord",
    "JobClaim",
    "JobItemRecord",
    "JobRecord",
    "LawRecord",
    "LinkRecord",
    "NewAlert",
    "NewJobItem",
    "NewLink",
    "ParagraphVectors",
    "ReviewRecord",
    "RunRecord",
    "SavedDocument",
    "SavedLaw",
    "StoredParagraph",
    "StoredProvision",
    "TokenRecord",
    "to_jsonable",
]
