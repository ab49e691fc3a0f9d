"""One evaluator contract for every article ranker (classifier, baselines, retrievers).

Queries (id → text) and gold links (id → article numbers) in; a flat metrics dict out, keys prefixed with the
evaluator's name and a named primary metric (``<name>_mrr``), in the manner of sentence-transformers
evaluators. A ranker is anything with ``labels`` (article numbers) and ``scores(texts) -> (n, len(labels))``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from compliance.evaluation.metrics import PRIMARY_METRIC, article_metrics, ranking_from_scores

__all__ = ["ArticleEvaluator", "ArticleRanker", "QuerySet"]


@runtime_checkable
class ArticleRanker(Protocol):
    """Scores every article for every text; higher is better."""

    name: str

    @property
    def labels(self) -> list[int]: ...

    def scores(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class QuerySet:
    """A named set of queries with gold articles."""

    name: str
    queries: dict[str, str]
    gold: dict[str, list[int]]
    description: str = ""

    def __post_init__(self) -> None:
        missing = set(self.gold) - set(self.queries)
        if missing:
            raise ValueError(f"query set {self.name}: gold for unknown queries {sorted(missing)[:5]}")

    def __len__(self) -> int:
        return len(self.gold)


class ArticleEvaluator:
    """Evaluate an :class:`ArticleRanker` on one query set.

    Args:
        queries: query id → text.
        gold: query id → gold article numbers.
        name: prefix of the returned metric keys.
    """

    def __init__(self, queries: Mapping[str, str], gold: Mapping[str, Sequence[int]], name: str = "") -> None:
        self.ids = [q for q in gold if q in queries and gold[q]]
        self.queries = {q: queries[q] for q in self.ids}
        self.gold = {q: [int(a) for a in gold[q]] for q in self.ids}
        self.name = name
        self.primary_metric = self._key(PRIMARY_METRIC)

    @classmethod
    def from_query_set(cls, qs: QuerySet) -> ArticleEvaluator:
        return cls(qs.queries, qs.gold, qs.name)

    def _key(self, metric: str) -> str:
        return f"{self.name}_{metric}" if self.name else metric

    def rankings(self, ranker: ArticleRanker) -> dict[str, list[int]]:
        """Full article rankings of every query."""
        scores = ranker.scores([self.queries[q] for q in self.ids])
        return dict(zip(self.ids, ranking_from_scores(scores, ranker.labels), strict=True))

    def __call__(self, ranker: ArticleRanker) -> dict[str, float]:
        """Flat metrics dict (``<name>_mrr``, ``<name>_f_mu`` …) of ``ranker`` on this query set.

        A ranker whose scores are probabilities (``probabilistic = True``, e.g. the classifier) also gets ``ece``:
        the expected calibration error of its top score against "the top article is a gold article".
        """
        from compliance.models.calibration import expected_calibration_error

        scores = ranker.scores([self.queries[q] for q in self.ids])
        rankings = dict(zip(self.ids, ranking_from_scores(scores, ranker.labels), strict=True))
        metrics = article_metrics(rankings, self.gold)
        if getattr(ranker, "probabilistic", False) and self.ids:
            col = {a: j for j, a in enumerate(ranker.labels)}
            gold = [[col[a] for a in self.gold[q] if a in col] for q in self.ids]
            metrics["ece"] = expected_calibration_error(np.asarray(scores), gold)
        return {self._key(k): v for k, v in metrics.items()}
