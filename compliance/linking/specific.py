"""Specific before general: a general article (the principles umbrella, Art. 5 GDPR, and other articles that
apply to almost any processing) must not crowd the specific article out of a paragraph's first places.

Two rules on a ranked list of ``(article, score)``, the scores left as they are (only the order changes):

1. **Specific first.** When the top article is general and its score is below ``strong``, the best specific
   article among the top ``window`` whose score is at least ``ratio`` × the general one's moves to the top (the
   text names a specific duty closely enough to be ranked for it).
2. **Cap per document.** Over the paragraphs of one document (of at least ``min_paragraphs``), a general article may be in the top ``top``
   of at most ``cap`` (a share) of them; beyond that, its weakest appearances below ``strong`` move down to
   rank ``top + 1`` (it stays in the list, after the specific articles).

The classifier's own ranking is the input; this is a re-ranking, with no training, so it can be switched off
(:class:`SpecificFirstConfig` ``enabled=False``) and measured beside it (``experiments/specific_first.py``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from compliance.errors import ConfigurationError

__all__ = ["SpecificFirstConfig", "specific_first_order", "specific_first_scores"]


@dataclass(frozen=True, slots=True)
class SpecificFirstConfig:
    """The re-ranking's settings.

    Attributes:
        general: the general articles (default Art. 5, the principles umbrella, and Art. 24, the controller's
            general responsibility).
        strong: a general article scoring at least this keeps its place (its own evidence is strong).
        ratio: a specific article is moved above a general top article when its score is at least this share
            of the general one's.
        window: how deep a specific article is looked for (ranks 2..window).
        cap: a general article may be in the top ``top`` of at most this share of a document's paragraphs
            (None: no cap).
        top: the places the cap protects.
        min_paragraphs: the cap applies to documents of at least this many ranked paragraphs (a share of a
            handful of paragraphs says nothing about crowding).
    """

    general: tuple[int, ...] = (5, 24)
    strong: float = 0.5
    ratio: float = 0.5
    window: int = 3
    cap: float | None = 0.25
    top: int = 3
    min_paragraphs: int = 8

    def __post_init__(self) -> None:
        if not 0.0 <= self.ratio <= 1.0 or self.window < 2 or self.top < 1:
            raise ConfigurationError("specific-first: ratio in [0, 1], window >= 2, top >= 1")
        if self.cap is not None and not 0.0 <= self.cap <= 1.0:
            raise ConfigurationError("specific-first: cap must be a share in [0, 1]")


def specific_first_order(
    rows: Sequence[Sequence[tuple[int, float]]], config: SpecificFirstConfig | None = None
) -> list[list[int]]:
    """For each ranked row of ``(article, score)`` (best first, one document's paragraphs), the new order as
    indices into the row."""
    cfg = config or SpecificFirstConfig()
    general: Collection[int] = set(cfg.general)
    orders: list[list[int]] = []
    for row in rows:
        order = list(range(len(row)))
        if row and row[0][0] in general and row[0][1] < cfg.strong:
            top_score = row[0][1]
            for pos in range(1, min(cfg.window, len(row))):
                article, score = row[pos]
                if article not in general and score >= cfg.ratio * top_score:
                    order.insert(0, order.pop(pos))
                    break
        orders.append(order)
    if cfg.cap is None or len(rows) < cfg.min_paragraphs:
        return orders
    allowed = int(np.floor(cfg.cap * len(rows)))
    for article in general:
        present = [
            (rows[i][order[p]][1], i, p)
            for i, order in enumerate(orders)
            for p in range(min(cfg.top, len(order)))
            if rows[i][order[p]][0] == article
        ]
        excess = len(present) - allowed
        if excess <= 0:
            continue
        for score, i, p in sorted(present)[:excess]:  # the weakest appearances first
            if score >= cfg.strong:
                break
            order = orders[i]
            item = order.pop(p)
            order.insert(min(cfg.top, len(order)), item)
    return orders


def specific_first_scores(
    scores: np.ndarray, labels: Sequence[int], config: SpecificFirstConfig | None = None, depth: int = 10
) -> np.ndarray:
    """``scores`` (texts × articles, one document) re-ranked: the top ``depth`` articles of each row get new,
    order-giving values above every other article's (the values are ranks, not probabilities)."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.size == 0:
        return scores.copy()
    labels = list(labels)
    depth = min(depth, scores.shape[1])
    tops = np.argsort(-scores, axis=1, kind="stable")[:, :depth]
    rows = [[(labels[j], float(scores[i, j])) for j in tops[i]] for i in range(len(scores))]
    orders = specific_first_order(rows, config)
    out = scores.copy()
    ceiling = float(np.max(scores)) + 1.0
    for i, order in enumerate(orders):
        for rank, idx in enumerate(order):
            out[i, tops[i][idx]] = ceiling + (depth - rank)
    return out
