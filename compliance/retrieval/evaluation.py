"""The evaluator contract (as sentence-transformers' ``InformationRetrievalEvaluator``): queries, corpus and
gold links as dicts keyed by id in; a flat metrics dict with a named primary metric out.

The retriever must already index the corpus; the evaluator only queries it. It passes query dates (for the
date filter) and can exclude each query's own id from its ranking (whole-document queries drawn from the
corpus).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from datetime import date
from typing import Any

from compliance.retrieval.metrics import evaluate_rankings
from compliance.retrieval.types import Hit

__all__ = ["FrequencyPrior", "RetrievalEvaluator"]


class RetrievalEvaluator:
    """Evaluate any retriever with ``search_many(queries, k, ...)`` on one task.

    Args:
        queries: query id → query text.
        gold: query id → relevant document ids.
        name: task name (recorded in the output under ``task``).
        k: ranking depth requested from the retriever (≥ the largest metric cut-off).
        query_dates: query id → date, for the date filter.
        exclude_self: drop the query's own id from its ranking.
        recall_ks: cut-offs of recall@k.
        primary_metric: the metric model selection uses.
    """

    def __init__(
        self,
        queries: Mapping[str, str],
        gold: Mapping[str, Collection[str]],
        name: str = "",
        k: int = 100,
        query_dates: Mapping[str, date | None] | None = None,
        exclude_self: bool = False,
        recall_ks: Sequence[int] = (1, 5, 10, 20, 100),
        primary_metric: str = "ndcg@20",
    ) -> None:
        self.queries = dict(queries)
        self.gold = {q: set(g) for q, g in gold.items() if q in self.queries}
        self.name = name
        self.k = k
        self.query_dates = dict(query_dates or {})
        self.exclude_self = exclude_self
        self.recall_ks = tuple(recall_ks)
        self.primary_metric = primary_metric

    def rankings(self, retriever: Any) -> dict[str, list[str]]:
        """query id → ranked document ids."""
        qids = list(self.queries)
        texts = [self.queries[q] for q in qids]
        kwargs: dict[str, Any] = {}
        if self.query_dates and _accepts(retriever, "query_dates"):
            kwargs["query_dates"] = [self.query_dates.get(q) for q in qids]
        if self.exclude_self and _accepts(retriever, "exclude"):
            kwargs["exclude"] = [[q] for q in qids]
        results: list[list[Hit]] = retriever.search_many(texts, k=self.k, **kwargs)
        out = {q: [h.id for h in hits] for q, hits in zip(qids, results, strict=True)}
        if self.exclude_self:
            out = {q: [d for d in ranking if d != q] for q, ranking in out.items()}
        return out

    def __call__(self, retriever: Any) -> dict[str, float]:
        """Metrics over the queries with gold documents, plus ``primary`` (the primary metric's value)."""
        metrics = evaluate_rankings(self.rankings(retriever), self.gold, recall_ks=self.recall_ks)
        metrics["primary"] = metrics[self.primary_metric]
        return metrics


class FrequencyPrior:
    """The baseline that ranks documents by how often they are relevant in training gold, whatever the query."""

    def __init__(self, train_gold: Mapping[str, Collection[str]], corpus_ids: Sequence[str] = ()) -> None:
        counts: Counter[str] = Counter(d for g in train_gold.values() for d in g)
        ranked = [d for d, _ in counts.most_common()]
        self.ranking = ranked + sorted(set(corpus_ids) - set(ranked))

    def search_many(self, queries: Sequence[str], k: int = 10, **_: Any) -> list[list[Hit]]:
        hits = [Hit(d, float(len(self.ranking) - i), {"prior": i}) for i, d in enumerate(self.ranking[:k])]
        return [list(hits) for _ in queries]

    def search(self, query: str, k: int = 10) -> list[Hit]:
        return self.search_many([query], k)[0]


def _accepts(obj: Any, param: str) -> bool:
    import inspect

    try:
        return param in inspect.signature(obj.search_many).parameters
    except (TypeError, ValueError):
        return False
