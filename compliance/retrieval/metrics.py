"""Ranking metrics of the seeds, as pure functions over one ranking and one gold set.

* ``recall@k`` = |relevant ∩ top-k| / |relevant| (seed 001 R@100, seed 003 Recall@100/1000)
* ``ndcg@k`` with binary gains, DCG = Σ_{i≤k} rel_i / log2(i + 1), IDCG over min(|relevant|, k) (seed 001/003)
* ``r_precision`` = precision at R = |relevant| (seed 001 RP)
* ``mrr@k`` = 1 / rank of the first relevant document within the top k, else 0 (seed 003 MRR@10)

Queries with no relevant documents are skipped by :func:`evaluate_rankings` (and counted in ``skipped``).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

__all__ = ["evaluate_rankings", "macro_recall_at_k", "mrr_at_k", "ndcg_at_k", "r_precision", "recall_at_k"]


def recall_at_k(ranking: Sequence[str], relevant: Collection[str], k: int) -> float:
    if not relevant:
        return 0.0
    return len(set(ranking[:k]) & set(relevant)) / len(relevant)


def ndcg_at_k(ranking: Sequence[str], relevant: Collection[str], k: int) -> float:
    rel = set(relevant)
    if not rel:
        return 0.0
    dcg = sum(1.0 / math.log2(i + 2) for i, d in enumerate(ranking[:k]) if d in rel)
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(len(rel), k)))
    return dcg / idcg


def r_precision(ranking: Sequence[str], relevant: Collection[str]) -> float:
    r = len(set(relevant))
    if r == 0:
        return 0.0
    return len(set(ranking[:r]) & set(relevant)) / r


def mrr_at_k(ranking: Sequence[str], relevant: Collection[str], k: int) -> float:
    rel = set(relevant)
    for i, d in enumerate(ranking[:k]):
        if d in rel:
            return 1.0 / (i + 1)
    return 0.0


def evaluate_rankings(
    rankings: Mapping[str, Sequence[str]],
    gold: Mapping[str, Collection[str]],
    recall_ks: Sequence[int] = (1, 5, 10, 20, 100),
    ndcg_k: int = 20,
    mrr_k: int = 10,
) -> dict[str, float]:
    """Mean metrics over the queries that have gold documents.

    Args:
        rankings: query id → ranked document ids (best first).
        gold: query id → relevant document ids.

    Returns:
        flat dict: ``recall@k`` for each k, ``ndcg@{ndcg_k}``, ``r_precision``, ``mrr@{mrr_k}``, ``queries``,
        ``skipped`` (queries without gold or without a ranking).
    """
    qids = [q for q, rel in gold.items() if rel]
    skipped = len(gold) - len(qids)
    totals: dict[str, float] = {f"recall@{k}": 0.0 for k in recall_ks}
    totals[f"ndcg@{ndcg_k}"] = 0.0
    totals["r_precision"] = 0.0
    totals[f"mrr@{mrr_k}"] = 0.0
    for q in qids:
        ranking = list(rankings.get(q, ()))
        rel = gold[q]
        for k in recall_ks:
            totals[f"recall@{k}"] += recall_at_k(ranking, rel, k)
        totals[f"ndcg@{ndcg_k}"] += ndcg_at_k(ranking, rel, ndcg_k)
        totals["r_precision"] += r_precision(ranking, rel)
        totals[f"mrr@{mrr_k}"] += mrr_at_k(ranking, rel, mrr_k)
    n = max(1, len(qids))
    out = {name: value / n for name, value in totals.items()}
    out["queries"] = float(len(qids))
    out["skipped"] = float(skipped)
    return out


def macro_recall_at_k(
    rankings: Mapping[str, Sequence[str]], gold: Mapping[str, Collection[str]], k: int
) -> float:
    """Per-document (e.g. per-article) recall@k averaged over documents: for each gold document, the share of
    the queries it is relevant to that rank it in their top k. Frequent articles cannot dominate it."""
    hit: dict[str, int] = {}
    total: dict[str, int] = {}
    for q, rel in gold.items():
        top = set(list(rankings.get(q, ()))[:k])
        for d in set(rel):
            total[d] = total.get(d, 0) + 1
            hit[d] = hit.get(d, 0) + (d in top)
    if not total:
        return 0.0
    return sum(hit[d] / total[d] for d in total) / len(total)
