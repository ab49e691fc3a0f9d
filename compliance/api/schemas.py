"""Request and response bodies of the HTTP API (pydantic): what the OpenAPI document promises.

Kept apart from the ORM models and from the use cases' dataclasses; a route turns a use case's result into one of
these. Objects that carry free-form evidence keep it as an open ``dict``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

_OPEN = ConfigDict(extra="allow")

LinkStatus = Literal["proposed", "accepted", "rejected", "needs-review"]


class Health(BaseModel):
    ok: bool
    version: str
    jobs: Literal["celery", "in-process"]


class Me(BaseModel):
    name: str
    role: Literal["viewer", "reviewer", "admin"]
    token_id: int | None


# -- tokens ------------------------------------------------------------------------------------------------------
class TokenCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=255, pattern=r"\S")
    role: Literal["viewer", "reviewer", "admin"]


class Token(BaseModel):
    id: int
    name: str
    role: str
    prefix: str
    created_by: str
    created_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None
    active: bool


class NewToken(Token):
    token: str = Field(description="The secret: shown once, never stored.")


# -- jobs --------------------------------------------------------------------------------------------------------
class JobCounts(BaseModel):
    queued: int
    running: int
    done: int
    failed: int
    total: int


class Job(BaseModel):
    id: int
    kind: str
    status: Literal["queued", "running", "succeeded", "partial", "failed"]
    params: dict[str, Any]
    created_by: str
    created_at: datetime
    finished_at: datetime | None
    notification: dict[str, Any] | None
    counts: JobCounts


class JobItem(BaseModel):
    id: int
    position: int
    source: str
    media_type: str
    size_bytes: int
    status: Literal["queued", "running", "done", "failed"]
    attempts: int
    worker: str | None
    document_id: int | None
    run_id: int | None
    links: int | None
    error: str | None


class JobDetail(Job):
    progress: float = Field(ge=0, le=1)
    links: int
    items: list[JobItem]


# -- documents, paragraphs, links -------------------------------------------------------------------------------
class DocumentSummary(BaseModel):
    model_config = _OPEN

    id: int
    source: str
    title: str
    media_type: str
    version: int
    versions: int
    paragraphs: int
    pages: int | None
    size_bytes: int
    checksum: str
    ingested_at: str
    created_at: str


class ReviewProgress(BaseModel):
    links: int
    reviewed: int
    accepted: int
    rejected: int
    open: int
    progress: float = Field(ge=0, le=1)


class DocumentListItem(DocumentSummary):
    review: ReviewProgress


class Link(BaseModel):
    """A current link: the paragraph and its document, the provision and its law, the suggestion and the current
    decision (``id`` repeats ``link_id``)."""

    model_config = _OPEN

    id: int
    link_id: int
    run_id: int
    run_kind: str
    method: str
    model: str | None
    document_id: int
    document_source: str
    document_version: int
    latest_version: int
    paragraph_id: int
    paragraph_ordinal: int
    paragraph_page: int | None
    heading_path: list[str]
    paragraph_text: str
    text_sha256: str
    law_id: int
    law_short_name: str
    law_identifier: str
    law_version: int
    provision_id: int
    provision_key: str
    provision_kind: str
    provision_number: str | None
    provision_title: str | None
    score: float
    rank: int | None
    proposed_status: LinkStatus
    status: LinkStatus
    reviewer: str | None
    review_comment: str | None
    reviewed_at: str | None
    created_at: str
    evidence: dict[str, Any]
    article: int | None


class LinkReviewEntry(BaseModel):
    review_id: int
    decision: LinkStatus
    reviewer: str
    comment: str | None
    decided_at: str
    source: str
    suggested_by: dict[str, Any]


class LinkDetail(Link):
    """A link with every decision on it (oldest first) and its audit-log entries."""

    current: bool
    reviews: list[LinkReviewEntry]
    audit: list[dict[str, Any]]


class ParagraphWithLinks(BaseModel):
    model_config = _OPEN

    id: int
    ordinal: int
    text: str
    kind: str
    page: int | None
    heading_path: list[str]
    links: list[Link]


class DocumentLinks(DocumentSummary):
    review: ReviewProgress
    paragraphs_with_links: list[ParagraphWithLinks]


class DocumentDetail(BaseModel):
    """A document's summary (as in the list, but ``paragraphs`` holds the paragraphs), ``history``."""

    model_config = _OPEN

    id: int
    source: str
    title: str
    media_type: str
    version: int
    versions: int
    history: list[dict[str, Any]]
    paragraphs: list[dict[str, Any]]


LinkId = Annotated[int, Field(ge=1, le=2**31 - 1)]


class LinkDecision(BaseModel):
    model_config = ConfigDict(extra="forbid")

    decision: Literal["accept", "reject", "needs-review", "reopen"] = Field(
        description="accept, reject, needs-review, or reopen (back to proposed)."
    )
    comment: str | None = Field(default=None, max_length=10_000)


class LinkComment(BaseModel):
    model_config = ConfigDict(extra="forbid")

    decision: Literal["comment"] = Field(description="A comment that keeps the link's status.")
    comment: str = Field(min_length=1, max_length=10_000, pattern=r"\S")


class LinkIds(BaseModel):
    link_ids: list[LinkId] = Field(min_length=1, max_length=1000, description="Every link gets the decision.")


class LinksDecision(LinkDecision, LinkIds):
    pass


class LinksComment(LinkComment, LinkIds):
    pass


#: a review of one link: a decision (with an optional comment), or a comment alone
LinkReview = Annotated[LinkDecision | LinkComment, Field(discriminator="decision")]
#: one review of several links
LinksReview = Annotated[LinksDecision | LinksComment, Field(discriminator="decision")]


class _LinkAddBase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    law: str = Field("gdpr", min_length=1, max_length=64, description="The law's short name.")
    provision: str = Field(
        min_length=1,
        max_length=255,
        pattern=r"\S",
        description="A provision key (art:30, art:30/par:1) or a number.",
    )
    comment: str | None = Field(default=None, max_length=10_000, description="Why the link holds.")


class LinkAddById(_LinkAddBase):
    paragraph_id: LinkId = Field(description="The paragraph's id.")


class LinkAddByOrdinal(_LinkAddBase):
    document: str = Field(min_length=1, max_length=1024, description="The document (id or source).")
    paragraph: int = Field(ge=0, le=2**31 - 1, description="The paragraph's number in the document (¶).")


#: a link the model missed: the paragraph by its id, or by its document and number
LinkAdd = LinkAddById | LinkAddByOrdinal


class LinkDiff(BaseModel):
    run_a: int
    run_b: int
    paragraphs_compared: int
    counts: dict[str, int]
    gained: list[dict[str, Any]]
    lost: list[dict[str, Any]]
    reranked: list[dict[str, Any]]
    weakened: list[dict[str, Any]]


class Review(BaseModel):
    """A recorded decision (one row of the append-only review history)."""

    id: int
    link_id: int
    decision: LinkStatus
    reviewer: str
    comment: str | None
    decided_at: datetime


class LinkReviewed(BaseModel):
    link: Link
    review: ReviewProgress
    document_id: int
    recorded: list[Review]


class ReviewsImported(BaseModel):
    path: str
    rows: int
    applied: int
    unchanged: int
    empty: int
    decisions: dict[str, int]
    review_ids: list[int]


# -- coverage report ---------------------------------------------------------------------------------------------
class CoverageSummary(BaseModel):
    articles: int
    covered: int
    suggested_only: int
    gaps: int
    coverage: float = Field(ge=0, le=1)
    reviewed_share: float = Field(ge=0, le=1)


class CoverageReport(BaseModel):
    """The coverage and gap report (``compliance report --format json``)."""

    model_config = _OPEN

    law: str
    law_title: str
    law_identifier: str
    law_version: int
    generated_at: str
    summary: CoverageSummary
    documents: list[dict[str, Any]]
    chapters: list[dict[str, Any]]
    articles: list[dict[str, Any]]
    gaps: list[str]
    suggested_only: list[str]
    progress: dict[str, int]
    other_laws: dict[str, int]


# -- alerts ------------------------------------------------------------------------------------------------------
class AlertChange(BaseModel):
    model_config = ConfigDict(extra="forbid")

    comment: str | None = Field(default=None, max_length=10_000)


class Alert(BaseModel):
    model_config = _OPEN

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
    status: Literal["open", "acknowledged", "dismissed", "resolved"]
    created_at: str
    acknowledgements: list[dict[str, Any]]
    decision: str


# -- laws --------------------------------------------------------------------------------------------------------
class LawSummary(BaseModel):
    model_config = _OPEN

    id: int
    identifier: str
    short_name: str
    title: str
    jurisdiction: str
    version: int
    counts: dict[str, int]


class LawDetail(LawSummary):
    articles: list[dict[str, Any]]
    recitals: list[dict[str, Any]]


class LawInstall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=64, description="A law pack: gdpr, eprivacy, nis2 …")


class LawStoredOut(BaseModel):
    model_config = _OPEN

    id: int
    identifier: str
    short_name: str
    version: int
    created: bool
    provision_count: int
    after_store: dict[str, Any] | None = None


# -- map and search ----------------------------------------------------------------------------------------------
class MapText(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str | int | None = None
    text: str = Field(max_length=100_000)


class MapRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    texts: list[MapText] = Field(min_length=1, max_length=1000)
    top_k: int = Field(10, ge=1, le=99)


class ArticleScore(BaseModel):
    article: int
    title: str
    score: float


class MapResult(BaseModel):
    id: str | int | None
    articles: list[ArticleScore]


class MapResponse(BaseModel):
    results: list[MapResult]


class LawSearchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=100_000, pattern=r"\S")
    k: int = Field(10, ge=1, le=100)
    law: str | None = Field(default=None, max_length=64, description="Only this law's provisions.")
    dense: bool = Field(False, description="Add the dense encoder to BM25 (loads a model).")


class ProvisionHit(BaseModel):
    model_config = _OPEN

    law: str
    key: str
    title: str
    score: float
    rank: int
    provision_id: int | None


class LawHit(BaseModel):
    law: str
    title: str
    score: float
    rank: int
    best_provision: str
    provisions: list[str]


class LawSearchResponse(BaseModel):
    laws: list[LawHit]
    provisions: list[ProvisionHit]


class ControlHit(BaseModel):
    model_config = _OPEN

    paragraph_id: int
    document_id: int
    source: str
    text: str
    score: float
    rank: int
    heading_path: list[str]
