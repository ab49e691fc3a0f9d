"""What connectors produce: a parsed document and its paragraphs, each with provenance."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

ParagraphKind = Literal["paragraph", "list", "table-row", "heading"]

#: What a paragraph does in its document (:mod:`compliance.connectors.roles`): an obligation or control statement,
#: a definition, descriptive text, a heading, document metadata (owner, version, approval, review dates,
#: classification), a form or template blank, page furniture (headers, footers, banners), or a pointer elsewhere.
ParagraphRole = Literal[
    "statement", "definition", "description", "heading", "metadata", "form", "furniture", "reference"
]
#: Every role, in a fixed order (the order of the role model's outputs).
PARAGRAPH_ROLES: tuple[ParagraphRole, ...] = (
    "statement",
    "definition",
    "description",
    "heading",
    "metadata",
    "form",
    "furniture",
    "reference",
)


@dataclass(frozen=True, slots=True)
class Paragraph:
    """One retrieval/classification unit of a document.

    ``char_start``/``char_end`` are offsets into :attr:`ParsedDocument.text` (``text[start:end] == para.text``
    for paragraphs that were not merged from non-contiguous pieces). ``page`` is 1-based (PDF only).
    ``heading_path`` holds the headings above the paragraph, outermost first. ``role`` says what the paragraph
    does (:data:`ParagraphRole`); connectors set it where the layout makes it certain (a page footer), and
    :func:`compliance.connectors.roles.assign_roles` sets every other one.
    """

    ordinal: int
    text: str
    char_start: int
    char_end: int
    heading_path: tuple[str, ...] = ()
    page: int | None = None
    kind: ParagraphKind = "paragraph"
    role: ParagraphRole | None = None


@dataclass(frozen=True, slots=True)
class ParsedDocument:
    """A document turned into text and paragraphs.

    ``checksum`` is the sha256 hex digest of the original bytes; ``document_id`` is derived from the source
    name (the store uses ``source`` + checksum to detect new versions).
    """

    source: str  # file name or URI as given
    media_type: str  # "application/pdf", "application/vnd.openxmlformats-officedocument...", "text/plain" ...
    checksum: str
    title: str
    text: str
    paragraphs: tuple[Paragraph, ...]
    size_bytes: int = 0
    pages: int | None = None
    metadata: dict[str, str] = field(default_factory=dict)
