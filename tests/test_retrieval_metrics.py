"""Ranking metrics against hand computations."""

from __future__ import annotations

import math

import pytest

from compliance.retrieval.metrics import evaluate_rankings, mrr_at_k, ndcg_at_k, r_precision, recall_at_k

RANKING = ["d3", "d1", "d7", "d2", "d9"]
GOLD = {"d1", "d2", "d8"}


def test_recall() -> None:
    assert recall_at_k(RANKING, GOLD, 1) == 0.0
    assert recall_at_k(RANKING, GOLD, 2) == pytest.approx(1 / 3)
    assert recall_at_k(RANKING, GOLD, 5) == pytest.approx(2 / 3)
    assert recall_at_k(RANKING, set(), 5) == 0.0


def test_ndcg() -> None:
    dcg = 1 / math.log2(3) + 1 / math.log2(5)  # hits at ranks 2 and 4
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_at_k(RANKING, GOLD, 20) == pytest.approx(dcg / idcg)
    assert ndcg_at_k(RANKING, GOLD, 1) == 0.0
    assert ndcg_at_k(["d1", "d2", "d8"], GOLD, 20) == pytest.approx(1.0)
    # with k smaller than |gold| the ideal is cut at k
    assert ndcg_at_k(["d1", "x"], GOLD, 2) == pytest.approx(1 / (1 + 1 / math.log2(3)))


def test_r_precision_and_mrr() -> None:
    assert r_precision(RANKING, GOLD) == pytest.approx(1 / 3)  # R = 3: top-3 holds d1 only
    assert mrr_at_k(RANKING, GOLD, 10) == 0.5
    assert mrr_at_k(RANKING, GOLD, 1) == 0.0
    assert mrr_at_k(RANKING, {"d9"}, 10) == 0.2


def test_evaluate_rankings_averages_and_skips_empty_gold() -> None:
    rankings = {"q1": RANKING, "q2": ["d8"], "q3": ["x"]}
    gold = {"q1": GOLD, "q2": {"d8"}, "q3": set()}
    out = evaluate_rankings(rankings, gold, recall_ks=(1, 5))
    assert out["queries"] == 2 and out["skipped"] == 1
    assert out["recall@1"] == pytest.approx((0 + 1) / 2)
    assert out["recall@5"] == pytest.approx((2 / 3 + 1) / 2)
    assert out["mrr@10"] == pytest.approx((0.5 + 1) / 2)
    assert out["r_precision"] == pytest.approx((1 / 3 + 1) / 2)
    missing = evaluate_rankings({}, {"q": {"a"}})
    assert missing["recall@100"] == 0.0 and missing["queries"] == 1


def test_macro_recall() -> None:
    from compliance.retrieval.metrics import macro_recall_at_k

    rankings = {"q1": ["a", "b"], "q2": ["b", "a"], "q3": ["c"]}
    gold = {"q1": {"a"}, "q2": {"a"}, "q3": {"c", "d"}}
    # a: found at k=1 by q1 only (1/2); c: 1/1; d: 0/1  -> (0.5 + 1 + 0) / 3
    assert macro_recall_at_k(rankings, gold, 1) == pytest.approx(0.5)
    assert macro_recall_at_k(rankings, gold, 2) == pytest.approx((1 + 1 + 0) / 3)
    assert macro_recall_at_k({}, {}, 5) == 0.0
