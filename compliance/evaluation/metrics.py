"""Article-retrieval metrics exactly as seed 000 (§4.4) defines them, extended to queries with several gold
articles.

For every article ``A_i``: ``Rec_i`` = queries where ``A_i`` was correctly predicted / queries pertinent to
``A_i``; ``Prec_i`` = queries where ``A_i`` was correctly predicted / queries for which ``A_i`` was predicted;
``F_i = 2 Prec_i Rec_i / (Prec_i + Rec_i)``. Averaged over the articles:

* ``rec``, ``prec``: the per-article averages of ``Rec_i`` and ``Prec_i``;
* ``f_mu`` (the seed's *F^μ*): the average of the ``F_i`` — what scikit-learn calls macro F1;
* ``f_M`` (the seed's *F^M*): the harmonic mean of ``prec`` and ``rec``.

*Predicted* means the top-1 article of a query with one gold article; for a query with ``g`` gold articles the
top ``g`` articles are predicted (so one-label queries reduce exactly to the seed). The articles averaged over
are those that occur in the gold or the predictions (an article predicted but never gold has ``Rec_i = 0`` by
convention, as ``zero_division=0`` in scikit-learn).

Ranking metrics: ``rec@3`` = share of a query's gold articles found in its top 3 (out of ``min(g, 3)``),
averaged over queries; ``mrr`` = reciprocal rank of the first gold article, averaged over queries. ``acc@1``
(top-1 in gold) is reported too. The primary metric is ``mrr``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["PRIMARY_METRIC", "article_metrics", "ranking_from_scores"]

PRIMARY_METRIC = "mrr"


def ranking_from_scores(scores: np.ndarray, labels: Sequence[int]) -> list[list[int]]:
    """Article numbers of every row of ``scores`` (columns in ``labels`` order), best first (stable ties)."""
    order = np.argsort(-np.asarray(scores), axis=1, kind="stable")
    lab = np.asarray(labels)
    return [list(map(int, lab[row])) for row in order]


def article_metrics(
    rankings: Mapping[str, Sequence[int]], gold: Mapping[str, Sequence[int]]
) -> dict[str, float]:
    """Seed-000 metrics of ranked article lists against gold articles.

    Args:
        rankings: query id → article numbers, best first (at least as long as the query's gold list; the full
            ranking of all articles for exact MRR).
        gold: query id → gold article numbers (non-empty). Queries missing from ``rankings`` count as misses.

    Returns:
        ``rec``, ``prec``, ``f_mu``, ``f_M``, ``rec@3``, ``mrr``, ``acc@1``, ``hit@3`` (share of queries with at
        least one gold article in the top 3: "the officer finds a right article in the top 3"), ``n_queries``,
        ``n_articles``.
    """
    tp: dict[int, int] = {}
    n_gold: dict[int, int] = {}
    n_pred: dict[int, int] = {}
    rr = r3 = a1 = h3 = 0.0
    n = 0
    for qid, g in gold.items():
        gset = {int(a) for a in g}
        if not gset:
            continue
        n += 1
        ranking = [int(a) for a in rankings.get(qid, [])]
        predicted = set(ranking[: len(gset)])
        for a in gset:
            n_gold[a] = n_gold.get(a, 0) + 1
        for a in predicted:
            n_pred[a] = n_pred.get(a, 0) + 1
            if a in gset:
                tp[a] = tp.get(a, 0) + 1
        first = next((r for r, a in enumerate(ranking) if a in gset), None)
        rr += 0.0 if first is None else 1.0 / (first + 1)
        a1 += float(first == 0)
        h3 += float(first is not None and first < 3)
        r3 += len(gset & set(ranking[:3])) / min(len(gset), 3)
    articles = sorted(set(n_gold) | set(n_pred))
    recs, precs, fs = [], [], []
    for a in articles:
        t = tp.get(a, 0)
        rec = t / n_gold[a] if n_gold.get(a) else 0.0
        prec = t / n_pred[a] if n_pred.get(a) else 0.0
        recs.append(rec)
        precs.append(prec)
        fs.append(2 * prec * rec / (prec + rec) if prec + rec > 0 else 0.0)
    rec_avg = float(np.mean(recs)) if recs else 0.0
    prec_avg = float(np.mean(precs)) if precs else 0.0
    return {
        "rec": rec_avg,
        "prec": prec_avg,
        "f_mu": float(np.mean(fs)) if fs else 0.0,
        "f_M": 2 * prec_avg * rec_avg / (prec_avg + rec_avg) if prec_avg + rec_avg > 0 else 0.0,
        "rec@3": r3 / n if n else 0.0,
        "mrr": rr / n if n else 0.0,
        "acc@1": a1 / n if n else 0.0,
        "hit@3": h3 / n if n else 0.0,
        "n_queries": float(n),
        "n_articles": float(len(articles)),
    }
