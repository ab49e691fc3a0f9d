"""LangChain retrievers over the law corpus and over the stored controls (extra ``langchain``).

Both are ``langchain_core`` :class:`~langchain_core.retrievers.BaseRetriever`\\ s with ``k`` as a field that a
call may override (``retriever.invoke(query, k=3)``); they return :class:`~langchain_core.documents.Document`\\ s
whose metadata carries ids, scores, ranks and keys::

    from compliance.integrations.langchain import ControlsRetriever, LawCorpusRetriever

    laws = LawCorpusRetriever.from_store(k=5)            # a control text -> law provisions
    docs = laws.invoke("We place analytics cookies only after consent.")
    docs[0].metadata  # {"id": "eprivacy/art:5", "law": "eprivacy", "key": "art:5", "score": ..., "rank": 1, ...}

    controls = ControlsRetriever.from_store(k=10)        # a law provision text -> stored control paragraphs
    controls.invoke("notify the personal data breach to the competent national authority", k=3)

Both search the product's indexes with their tuned configuration
(:func:`compliance.retrieval.indexes.index_configs`), the same as ``compliance search`` and the alert runs;
``from_store(dense=False)`` searches with BM25 alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self

from compliance.errors import MissingDependencyError

try:
    from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
    from langchain_core.documents import Document as LCDocument
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables.config import run_in_executor
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError.for_extra("langchain", "langchain-core") from exc

from pydantic import ConfigDict, Field

if TYPE_CHECKING:  # pragma: no cover
    from compliance.retrieval import RetrievalConfig
    from compliance.retrieval.indexes import IndexConfigs
    from compliance.search import LawSearch

__all__ = ["ControlsRetriever", "LawCorpusRetriever"]


def _search_from(
    database_url: str | None,
    config: IndexConfigs | RetrievalConfig | None,
    index_dir: str | None,
    dense: bool,
) -> LawSearch:
    from compliance.app import open_store
    from compliance.search import LawSearch

    return LawSearch(open_store(database_url), config, index_dir=index_dir, dense=dense)


class _PerCallK(BaseRetriever):
    """Shared by both retrievers: a :class:`~compliance.search.LawSearch` behind them, ``from_store``, and async
    calls that run the synchronous search in an executor, passing the per-call arguments (``k`` …) on."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    search: Any = Field(exclude=True)

    @classmethod
    def from_store(
        cls,
        database_url: str | None = None,
        *,
        config: IndexConfigs | RetrievalConfig | None = None,
        index_dir: str | None = None,
        dense: bool = True,
        **kwargs: Any,
    ) -> Self:
        """A retriever over the database at ``database_url`` (default: the configured one), searching the
        product's indexes with ``config`` (default: their tuned configuration; ``dense=False``: BM25 alone)."""
        return cls(search=_search_from(database_url, config, index_dir, dense), **kwargs)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[LCDocument]:
        return await run_in_executor(
            None, self._get_relevant_documents, query, run_manager=run_manager.get_sync(), **kwargs
        )


class LawCorpusRetriever(_PerCallK):
    """Law provisions (articles of every stored law) for a query text.

    Attributes:
        search: the :class:`~compliance.search.LawSearch` to query.
        k: number of documents returned (overridable per call: ``invoke(query, k=...)``).
        law: restrict to one law (short name); overridable per call.
    """

    k: int = Field(default=4, ge=1)
    law: str | None = None

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None,
        law: str | None = None,
        **kwargs: Any,
    ) -> list[LCDocument]:
        k = self.k if k is None else k
        law = self.law if law is None else law
        result = self.search.laws_for_text(query, k=k, provisions_k=k, law=law)
        index = self.search.provisions_index()
        docs: list[LCDocument] = []
        for hit in result.provisions[:k]:
            doc_id = f"{hit.law}/{hit.key}"
            docs.append(
                LCDocument(
                    id=doc_id,
                    page_content=index.documents[doc_id].text,
                    metadata={
                        "id": doc_id,
                        "law": hit.law,
                        "key": hit.key,
                        "title": hit.title,
                        "provision_id": hit.provision_id,
                        "score": hit.score,
                        "rank": hit.rank,
                        "scores": dict(hit.evidence),
                    },
                )
            )
        return docs


class ControlsRetriever(_PerCallK):
    """Stored control paragraphs (latest document versions) for a query text, e.g. a law provision.

    Attributes:
        search: the :class:`~compliance.search.LawSearch` to query.
        k: number of documents returned (overridable per call: ``invoke(query, k=...)``).
        terms: shared salient terms added to each document's metadata (0 = none).
    """

    k: int = Field(default=4, ge=1)
    terms: int = Field(default=6, ge=0)

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None,
        **kwargs: Any,
    ) -> list[LCDocument]:
        k = self.k if k is None else k
        hits = self.search.controls_for_query(query, k=k, terms=self.terms)
        return [
            LCDocument(
                id=str(h.paragraph_id),
                page_content=h.text,
                metadata={
                    "id": str(h.paragraph_id),
                    "paragraph_id": h.paragraph_id,
                    "document_id": h.document_id,
                    "source": h.source,
                    "heading_path": list(h.heading_path),
                    "score": h.score,
                    "rank": h.rank,
                    "shared_terms": list(h.evidence.get("shared_terms", [])),
                    "scores": {k2: v for k2, v in h.evidence.items() if k2 != "shared_terms"},
                },
            )
            for h in hits
        ]
