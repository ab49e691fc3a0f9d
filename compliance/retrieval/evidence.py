"""Evidence for a (query, hit) pair: the salient terms both texts share.

With a BM25 index the weight of a term is its exact contribution to the BM25 score of the hit (so the terms
explain the score); the analyzer's stems are mapped back to the most frequent surface word in the query, so an
officer reads *cookies*, not *cooki*.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import TYPE_CHECKING

from compliance.retrieval.analysis import Analyzer

if TYPE_CHECKING:  # pragma: no cover
    from compliance.retrieval.bm25 import BM25Index

__all__ = ["salient_terms", "surface_forms"]


def surface_forms(text: str, analyzer: Analyzer) -> dict[str, str]:
    """Analyzer term → the most frequent word of ``text`` that produces it."""
    counts: dict[str, Counter[str]] = {}
    for word in analyzer.words(text):
        terms = analyzer.tokenize(word)
        if len(terms) == 1:
            counts.setdefault(terms[0], Counter())[word] += 1
    return {t: c.most_common(1)[0][0] for t, c in counts.items()}


def salient_terms(
    query: str, doc_text: str, bm25: BM25Index | None = None, doc_id: str | None = None, n: int = 8
) -> list[tuple[str, float]]:
    """Top ``n`` shared terms of ``query`` and a document, with weights.

    Args:
        query: query text.
        doc_text: the document's text.
        bm25: the BM25 index holding the document (exact score contributions); without it, terms are weighted
            by ``min(tf_q, tf_d) · log(1 + 1/df)`` where df counts the two texts (a crude, index-free fallback).
        doc_id: the document's id in ``bm25``.
        n: number of terms.

    Returns:
        ``[(word, weight), …]`` best first; words are surface forms from the query.
    """
    if bm25 is not None and doc_id is not None:
        contributions = bm25.term_contributions(query, doc_id, n)
        analyzer = bm25.analyzer
    else:
        analyzer = Analyzer()
        q = Counter(analyzer.tokenize(query))
        d = Counter(analyzer.tokenize(doc_text))
        shared = set(q) & set(d)
        contributions = sorted(
            ((t, min(q[t], d[t]) * math.log(2.0)) for t in shared), key=lambda x: (-x[1], x[0])
        )
        contributions = contributions[:n]
    forms = surface_forms(query, analyzer)
    return [(forms.get(t, t), round(w, 6)) for t, w in contributions]
