"""Frozen, validated configuration of every retrieval stage; serialised into each index directory.

Defaults are the textbook values (BM25 k1=1.2, b=0.75, α=0.5); the tuned configuration of the product's indexes
(``docs/retrieval.md``) is :func:`compliance.retrieval.indexes.index_configs`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "BM25Config",
    "DateFilterConfig",
    "DenseConfig",
    "FusionConfig",
    "RerankConfig",
    "RetrievalConfig",
    "TokenizerConfig",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class TokenizerConfig(_Frozen):
    """Word tokenisation and the denoising of seed 001 §4.2.

    Attributes:
        lowercase: lower-case before anything else.
        stopwords: drop English stop words (bm25s' list).
        punctuation: drop tokens without any letter or digit (the regex already splits on punctuation).
        digits: drop tokens containing digits (article numbers, dates, amounts).
        idf_denoise: drop words whose idf in the fitted corpus is below the average idf of the stop words.
        stem: Snowball stemming (PyStemmer) of the remaining words.
        min_length: drop shorter tokens.
    """

    lowercase: bool = True
    stopwords: bool = True
    punctuation: bool = True
    digits: bool = True
    idf_denoise: bool = True
    stem: bool = True
    min_length: int = Field(default=2, ge=1)


class BM25Config(_Frozen):
    """Okapi BM25 (bm25s) parameters and the indexing unit.

    Attributes:
        k1: term-frequency saturation.
        b: document-length normalisation.
        method: bm25s term-frequency/idf variant (``atire`` with ``idf_method="robertson"`` is rank_bm25's
            BM25Okapi; ``lucene`` is Lucene's).
        idf_method: idf variant; None means the same as ``method``.
        mode: ``document`` indexes each document whole; ``passage`` indexes passages and max-pools their scores
            to documents (seed 003 §5.2).
        passage_words: passage size in words (passage mode).
        passage_overlap: words shared by consecutive windows when a paragraph is split.
    """

    k1: float = Field(default=1.2, ge=0.0)
    b: float = Field(default=0.75, ge=0.0, le=1.0)
    method: Literal["robertson", "lucene", "atire"] = "lucene"
    idf_method: Literal["robertson", "lucene", "atire"] | None = None
    mode: Literal["document", "passage"] = "document"
    passage_words: int = Field(default=200, ge=8)
    passage_overlap: int = Field(default=50, ge=0)


class DenseConfig(_Frozen):
    """The dense encoder and how texts become vectors.

    Attributes:
        model: HF hub id or local directory; None means the fine-tuned GDPR classifier encoder under
            ``<model_dir>/gdpr-classifier`` when it exists, else the packaged all-MiniLM-L6-v2.
        pooling: ``mean`` (attention-masked mean of token vectors) or ``cls`` (the first token's vector).
        layer: which hidden layer to pool (-1 = last, 0 = embeddings).
        max_length: tokens per chunk (long texts are chunked, never silently truncated).
        stride: tokens shared by consecutive chunks.
        max_chunks: upper bound on chunks per text (None = all).
        query_aggregation: a multi-chunk query is one mean vector (``mean``), or each chunk scores on its own
            and the best counts (``max``).
        batch_size: texts per forward pass.
        abbreviations: texts are embedded with the known abbreviations written out after their first use
            (:attr:`compliance.runtime.EmbeddingSpace.abbreviations`); on for the controls index, whose vectors the
            audit's classifier forward gives.
    """

    model: str | None = None
    pooling: Literal["mean", "cls"] = "mean"
    layer: int = -1
    max_length: int = Field(default=256, ge=8)
    stride: int = Field(default=32, ge=0)
    max_chunks: int | None = Field(default=None, ge=1)
    query_aggregation: Literal["mean", "max"] = "mean"
    batch_size: int = Field(default=32, ge=1)
    abbreviations: bool = False


class FusionConfig(_Frozen):
    """How BM25 and dense scores are combined.

    Attributes:
        method: ``linear`` — α·minmax(dense) + (1−α)·minmax(BM25) (seed 001 eq. 4); ``rrf`` — reciprocal rank
            fusion Σ 1/(rrf_k + rank); ``bm25`` / ``dense`` — one stage only.
        alpha: weight of the dense score in ``linear``.
        rrf_k: the RRF constant.
        prefetch_k: candidates taken from each stage before fusion / re-ranking.
    """

    method: Literal["linear", "rrf", "bm25", "dense"] = "bm25"
    alpha: float = Field(default=0.5, ge=0.0, le=1.0)
    rrf_k: int = Field(default=60, ge=1)
    prefetch_k: int = Field(default=100, ge=1)


class DateFilterConfig(_Frozen):
    """Seed 001 §5: keep only candidates within ``max_years`` of the query's date.

    Attributes:
        mode: ``off``; ``pre`` filters candidates before re-ranking; ``post`` filters the final ranking.
        max_years: largest allowed distance in years.
        keep_undated: keep candidates (or all, for an undated query) when a date is unknown.
    """

    mode: Literal["off", "pre", "post"] = "off"
    max_years: float = Field(default=5.0, ge=0.0)
    keep_undated: bool = True


class RerankConfig(_Frozen):
    """An optional re-ranking stage over the top ``top_n`` candidates.

    Attributes:
        kind: ``cross-encoder`` (query passage, candidate passage) or ``pli`` (seed 004 paragraph-level
            interaction aggregator).
        model: directory of the trained re-ranker.
        top_n: candidates re-ranked.
        query_passages: at most this many query passages are paired with candidate passages.
        doc_passages: at most this many passages per candidate.
        weight: final score = weight·minmax(rerank) + (1−weight)·minmax(previous stage) (1.0 = re-ranker only).
    """

    kind: Literal["cross-encoder", "pli"] = "cross-encoder"
    model: str
    top_n: int = Field(default=20, ge=1)
    query_passages: int = Field(default=4, ge=1)
    doc_passages: int = Field(default=4, ge=1)
    weight: float = Field(default=1.0, ge=0.0, le=1.0)


class RetrievalConfig(_Frozen):
    """Everything that decides a ranking; stored in the index directory and in run records."""

    tokenizer: TokenizerConfig = TokenizerConfig()
    bm25: BM25Config = BM25Config()
    dense: DenseConfig | None = None
    fusion: FusionConfig = FusionConfig()
    date_filter: DateFilterConfig = DateFilterConfig()
    reranker: RerankConfig | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RetrievalConfig:
        return cls.model_validate(data)
