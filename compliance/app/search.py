"""Search use cases in both directions: a control text or document → laws and provisions; a law or one of its
provisions → the stored controls it concerns."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from compliance.app.ingest import Upload, parse_source
from compliance.errors import ConfigurationError

if TYPE_CHECKING:  # pragma: no cover
    from compliance.connectors import ParsedDocument
    from compliance.search import ControlHit, LawSearch, LawSearchResult
    from compliance.store import Store

__all__ = ["document_query", "law_search", "search_controls", "search_laws"]


def law_search(store: Store, *, dense: bool = True) -> LawSearch:
    """The search service over ``store``'s laws and controls (hybrid BM25 + dense, or BM25 alone)."""
    from compliance.search import LawSearch

    return LawSearch(store, dense=dense)


def document_query(document: ParsedDocument) -> str:
    """A whole document as one query: its paragraphs without the headings."""
    return "\n\n".join(p.text for p in document.paragraphs if p.kind != "heading") or document.text


def search_laws(
    store: Store,
    *,
    text: str | None = None,
    document: Path | Upload | None = None,
    k: int = 10,
    in_law: str | None = None,
    dense: bool = True,
    search: LawSearch | None = None,
) -> LawSearchResult:
    """Laws and provisions ranked for a control text or a whole document (exactly one of the two).

    Args:
        store: the database (its stored laws are the corpus).
        text: a control text.
        document: a file or upload, parsed and used whole as the query.
        k: laws and provisions returned.
        in_law: search only this law's provisions (short name).
        dense: with the dense encoder (default) or BM25 alone.
        search: an already built search service (kept warm by a server or worker).

    Raises:
        ConfigurationError: neither or both of ``text`` and ``document``.
        DocumentError: the document cannot be read.
    """
    if document is not None and text is None:
        query = document_query(parse_source(document))
    elif text is not None and document is None:
        query = text
    else:
        raise ConfigurationError("give exactly one of a text or a document")
    service = search or law_search(store, dense=dense)
    result = service.laws_for_text(query, k=k, provisions_k=max(k, 50), law=in_law)
    return type(result)(result.laws, result.provisions[:k])


def search_controls(
    store: Store,
    law: str,
    *,
    provision: str | None = None,
    k: int = 10,
    dense: bool = True,
    search: LawSearch | None = None,
) -> list[ControlHit]:
    """Stored control paragraphs ranked for a stored law (all its articles) or one of its provisions.

    Raises:
        LawNotFoundError: unknown law or provision key.
    """
    service = search or law_search(store, dense=dense)
    return service.controls_for_law(law, provision=provision, k=k)
