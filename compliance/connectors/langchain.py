"""LangChain integration: :class:`ComplianceBlobParser`, a ``BaseBlobParser`` over the compliance connectors.

Each paragraph becomes one ``Document`` whose metadata carries its provenance::

    from langchain_core.document_loaders import Blob
    from compliance.connectors.langchain import ComplianceBlobParser

    for doc in ComplianceBlobParser().lazy_parse(Blob.from_path("policy.docx")):
        print(doc.metadata["ordinal"], doc.metadata["heading"], doc.page_content)

This is the only module of the package that imports ``langchain_core`` (install the ``langchain`` extra).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from compliance.connectors.config import SplitConfig
from compliance.connectors.document import ParsedDocument
from compliance.errors import MissingDependencyError

try:
    from langchain_core.document_loaders import BaseBlobParser, Blob
    from langchain_core.documents import Document
except ImportError as e:  # pragma: no cover - exercised by a subprocess test
    raise MissingDependencyError.for_extra("langchain", "langchain-core") from e

__all__ = ["ComplianceBlobParser", "paragraph_documents"]


def paragraph_documents(parsed: ParsedDocument) -> Iterator[Document]:
    """One LangChain ``Document`` per paragraph of an already parsed document.

    Metadata keys: ``source``, ``title``, ``checksum`` (sha256 of the file), ``media_type``, ``ordinal``,
    ``page`` (PDF only, else absent), ``heading_path`` (list of headings, outermost first), ``heading`` (the same
    joined with ``" > "``), ``char_start``/``char_end`` (offsets into the parsed document text) and ``kind``.
    """
    for p in parsed.paragraphs:
        meta: dict[str, Any] = {
            "source": parsed.source,
            "title": parsed.title,
            "checksum": parsed.checksum,
            "media_type": parsed.media_type,
            "ordinal": p.ordinal,
            "heading_path": list(p.heading_path),
            "heading": " > ".join(p.heading_path),
            "char_start": p.char_start,
            "char_end": p.char_end,
            "kind": p.kind,
        }
        if p.page is not None:
            meta["page"] = p.page
        yield Document(page_content=p.text, metadata=meta)


class ComplianceBlobParser(BaseBlobParser):
    """Parse a blob (.docx, .pdf, .txt, .md, .html) into one ``Document`` per paragraph.

    The connector is chosen from the blob's file name (``blob.source``/``blob.path``), else from its
    ``mimetype``. Errors are the package's :class:`~compliance.errors.DocumentError` subclasses. Blobs are read
    under the per-file time and memory budgets (:func:`compliance.connectors.sandbox.parse_file`).

    Args:
        config: Splitting choices and limits (default ``SplitConfig()``).
    """

    def __init__(self, config: SplitConfig | None = None) -> None:
        self.config = config or SplitConfig()

    def lazy_parse(self, blob: Blob) -> Iterator[Document]:
        """Yield the paragraphs of ``blob`` as documents (see :func:`paragraph_documents` for the metadata)."""
        from compliance.connectors.sandbox import parse_file

        name = str(blob.source or blob.path or "blob")
        parsed = parse_file(blob.as_bytes(), name, config=self.config, media_type=blob.mimetype)
        yield from paragraph_documents(parsed)
