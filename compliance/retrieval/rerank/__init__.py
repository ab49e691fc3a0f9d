"""Optional re-ranking stages: a cross-encoder over (query passage, candidate passage) pairs (seed 003 §4.3)
and a paragraph-level interaction aggregator (seed 004, BERT-PLI: paragraph-pair relevance matrix, max-pool per
query paragraph, attention-RNN).

A re-ranker has ``score(query: str, candidates: Sequence[Document]) -> numpy array`` (higher is better).
"""

from __future__ import annotations

from typing import Any

from compliance.retrieval.config import RerankConfig

__all__ = ["load_reranker"]


def load_reranker(config: RerankConfig) -> Any:
    """Load the re-ranker a :class:`RerankConfig` names (heavy imports happen here)."""
    if config.kind == "cross-encoder":
        from compliance.retrieval.rerank.cross_encoder import CrossEncoderReranker

        return CrossEncoderReranker.load(
            config.model, query_passages=config.query_passages, doc_passages=config.doc_passages
        )
    from compliance.retrieval.rerank.pli import PLIReranker

    return PLIReranker.load(
        config.model, query_passages=config.query_passages, doc_passages=config.doc_passages
    )
