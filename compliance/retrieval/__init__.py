"""Document-to-document retrieval: BM25, dense, fusion, date filter, re-ranking and evaluation.

The public API (stable; other modules such as :mod:`compliance.alerts` and :mod:`compliance.linking` build on
it). Everything is re-exported lazily, so ``import compliance.retrieval`` loads neither numpy-heavy code nor
torch.

Data in and out::

    Document(id: str, text: str, metadata: Mapping[str, Any] = {}, date: datetime.date | None = None)
    Hit(id: str, score: float, evidence: Mapping[str, Any])   # evidence: per-stage scores, ranks,
                                                               # best passage, shared salient terms
    Retriever                                                  # protocol: search(query, k) / search_many(...)

Configuration (frozen pydantic models, serialised into every index directory's ``config.json``)::

    RetrievalConfig(bm25=BM25Config(k1, b, method, mode="document"|"passage", passage_words, ...),
                    tokenizer=TokenizerConfig(stopwords, punctuation, digits, idf_denoise, stem),
                    dense=DenseConfig(model, pooling="mean"|"cls", layer, max_length, stride, ...) | None,
                    fusion=FusionConfig(method="linear"|"rrf", alpha, rrf_k, prefetch_k),
                    date_filter=DateFilterConfig(mode="off"|"pre"|"post", max_years, ...),
                    reranker=RerankConfig(...) | None)

The composed retriever (what the alerts and linking code should use)::

    r = HybridRetriever.build(docs, RetrievalConfig(...))       # docs: Sequence[Document]
    hits = r.search("text or a whole document", k=10, query_date=date(2002, 7, 31))
    hits_per_query = r.search_many(["q1", "q2"], k=10)
    r.add([Document(...)]); r.remove(["id"])                    # incremental; dense vectors kept
    r.save(path); r = HybridRetriever.load(path)                 # directory: config.json, docs.jsonl,
                                                                  # bm25/, dense/, MODEL_CARD.md
    r.salient_terms(query, doc_id, n=8) -> list[tuple[str, float]]   # shared terms by BM25 contribution

The product's two indexes (``compliance.retrieval.indexes``; :class:`compliance.search.LawSearch` keeps them in
sync with the store)::

    index_configs(dense=True) -> IndexConfigs          # the tuned configuration of both: .provisions, .controls
    index_config("provisions" | "controls", dense=True) -> RetrievalConfig
    build_law_index(laws, config=None, level="article") -> HybridRetriever      # saved to <index dir>/provisions
    build_control_index(rows, config=None) -> HybridRetriever                    # rows: (id, text, metadata)
    open_index("provisions" | "controls" | path) -> HybridRetriever

Adapters from the law corpus (``compliance.rules.corpus.Law``)::

    law_documents(law, level="article"|"paragraph"|"law", include_recitals=False) -> list[Document]
        ids "<short_name>/<provision key>" (e.g. "eprivacy/art:5"), metadata law/key/kind/title, date from
        the law's date_in_force or date_adopted.

Lower-level parts: :class:`Analyzer` (tokenizer + seed-001 denoising), :class:`BM25Index`,
:class:`DenseIndex`, :class:`TextEncoder`, :func:`minmax`, :func:`linear_fusion`, :func:`rrf_fusion`,
:func:`date_mask`, metrics in :mod:`compliance.retrieval.metrics` and the evaluator contract in
:class:`RetrievalEvaluator` (queries/corpus/gold dicts keyed by id → flat metrics dict with a primary metric).
"""

from __future__ import annotations

from compliance._lazy import lazy_exports

__all__ = [
    "Analyzer",
    "BM25Config",
    "BM25Index",
    "DateFilterConfig",
    "DenseConfig",
    "DenseIndex",
    "Document",
    "FusionConfig",
    "Hit",
    "HybridRetriever",
    "IndexConfigs",
    "RerankConfig",
    "RetrievalConfig",
    "RetrievalEvaluator",
    "Retriever",
    "TextEncoder",
    "TokenizerConfig",
    "build_control_index",
    "build_law_index",
    "date_mask",
    "index_config",
    "index_configs",
    "law_documents",
    "linear_fusion",
    "minmax",
    "open_index",
    "rrf_fusion",
    "salient_terms",
]

_LAZY: dict[str, str] = {
    "Document": "compliance.retrieval.types",
    "Hit": "compliance.retrieval.types",
    "Retriever": "compliance.retrieval.types",
    "BM25Config": "compliance.retrieval.config",
    "DateFilterConfig": "compliance.retrieval.config",
    "DenseConfig": "compliance.retrieval.config",
    "FusionConfig": "compliance.retrieval.config",
    "RerankConfig": "compliance.retrieval.config",
    "RetrievalConfig": "compliance.retrieval.config",
    "TokenizerConfig": "compliance.retrieval.config",
    "Analyzer": "compliance.retrieval.analysis",
    "BM25Index": "compliance.retrieval.bm25",
    "DenseIndex": "compliance.retrieval.dense",
    "TextEncoder": "compliance.retrieval.encoding",
    "minmax": "compliance.retrieval.fusion",
    "linear_fusion": "compliance.retrieval.fusion",
    "rrf_fusion": "compliance.retrieval.fusion",
    "date_mask": "compliance.retrieval.datefilter",
    "HybridRetriever": "compliance.retrieval.hybrid",
    "law_documents": "compliance.retrieval.adapters",
    "RetrievalEvaluator": "compliance.retrieval.evaluation",
    "IndexConfigs": "compliance.retrieval.indexes",
    "build_control_index": "compliance.retrieval.indexes",
    "build_law_index": "compliance.retrieval.indexes",
    "index_config": "compliance.retrieval.indexes",
    "index_configs": "compliance.retrieval.indexes",
    "open_index": "compliance.retrieval.indexes",
    "salient_terms": "compliance.retrieval.evidence",
}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
