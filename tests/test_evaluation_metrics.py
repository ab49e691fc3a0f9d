"""Seed-000 metrics on hand-checked toy examples, cross-checked against scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest

from compliance.evaluation.evaluator import ArticleEvaluator, QuerySet
from compliance.evaluation.metrics import article_metrics, ranking_from_scores
from compliance.evaluation.rankers import FrequencyPrior


def test_single_label_by_hand() -> None:
    # q1 gold 5, ranked 5 first; q2 gold 6, ranked 5,6 (rank 2); q3 gold 32, ranked 6,5,32 (rank 3)
    rankings = {"q1": [5, 6, 32], "q2": [5, 6, 32], "q3": [6, 5, 32]}
    gold = {"q1": [5], "q2": [6], "q3": [32]}
    m = article_metrics(rankings, gold)
    # predictions (top-1): 5, 5, 6. Article 5: tp 1, gold 1, pred 2 → R 1, P 0.5, F 2/3.
    # Article 6: tp 0, gold 1, pred 1 → 0. Article 32: tp 0 → 0.
    assert m["rec"] == pytest.approx(1 / 3)
    assert m["prec"] == pytest.approx(0.5 / 3)
    assert m["f_mu"] == pytest.approx((2 / 3) / 3)
    p, r = 0.5 / 3, 1 / 3
    assert m["f_M"] == pytest.approx(2 * p * r / (p + r))
    assert m["mrr"] == pytest.approx((1 + 1 / 2 + 1 / 3) / 3)
    assert m["rec@3"] == pytest.approx(1.0)
    assert m["acc@1"] == pytest.approx(1 / 3)
    assert m["n_queries"] == 3 and m["n_articles"] == 3


def test_multi_label_predicts_top_g_and_caps_rec_at_3() -> None:
    rankings = {"q": [6, 1, 2, 5, 32]}
    gold = {"q": [5, 6, 32, 12]}  # 4 gold: top-4 predicted = 6,1,2,5 → tp 6 and 5
    m = article_metrics(rankings, gold)
    assert m["mrr"] == 1.0
    assert m["rec@3"] == pytest.approx(1 / 3)  # only 6 in the top 3, out of min(4, 3)
    # articles: gold {5,6,12,32} ∪ pred {1,2,5,6}; recalls: 5:1, 6:1, 12:0, 32:0, 1:0, 2:0
    assert m["rec"] == pytest.approx(2 / 6)


def test_hit_at_3_counts_queries_with_a_gold_article_in_the_top_3() -> None:
    rankings = {"a": [6, 1, 2], "b": [1, 2, 3, 32], "c": [9, 32, 1]}
    gold = {"a": [2, 40], "b": [32], "c": [32, 33, 34, 35]}
    m = article_metrics(rankings, gold)
    assert m["hit@3"] == pytest.approx(2 / 3)  # a (2 at rank 3) and c (32 at rank 2); b's 32 is at rank 4


def test_missing_queries_count_as_misses() -> None:
    m = article_metrics({}, {"q": [5]})
    assert m["mrr"] == 0.0 and m["rec@3"] == 0.0 and m["n_queries"] == 1


def test_against_sklearn_on_random_single_label_data() -> None:
    sk = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    labels = list(range(1, 21))
    scores = rng.normal(size=(200, 20))
    gold_idx = rng.integers(0, 20, size=200)
    scores[np.arange(200), gold_idx] += rng.normal(1.0, 1.0, size=200)  # some signal
    rankings = dict(enumerate(ranking_from_scores(scores, labels)))
    gold = {i: [labels[g]] for i, g in enumerate(gold_idx)}
    m = article_metrics({str(k): v for k, v in rankings.items()}, {str(k): v for k, v in gold.items()})
    y_true = [labels[g] for g in gold_idx]
    y_pred = [rankings[i][0] for i in range(200)]
    present = sorted(set(y_true) | set(y_pred))
    p, r, f, _ = sk.precision_recall_fscore_support(y_true, y_pred, labels=present, zero_division=0)
    assert m["prec"] == pytest.approx(p.mean())
    assert m["rec"] == pytest.approx(r.mean())
    assert m["f_mu"] == pytest.approx(f.mean())
    assert m["f_M"] == pytest.approx(2 * p.mean() * r.mean() / (p.mean() + r.mean()))
    # MRR against sklearn's label_ranking_average_precision (equal for one relevant label per query)
    y_bin = np.zeros_like(scores, dtype=int)
    y_bin[np.arange(200), gold_idx] = 1
    assert m["mrr"] == pytest.approx(sk.label_ranking_average_precision_score(y_bin, scores))
    assert m["rec@3"] == pytest.approx(sk.top_k_accuracy_score(gold_idx, scores, k=3, labels=list(range(20))))


def test_evaluator_contract_and_prior() -> None:
    qs = QuerySet("toy", {"a": "x", "b": "y"}, {"a": [5], "b": [6]})
    prior = FrequencyPrior({6: 10, 5: 3}, [1, 5, 6])
    ev = ArticleEvaluator.from_query_set(qs)
    out = ev(prior)
    assert ev.primary_metric == "toy_mrr"
    assert set(out) >= {"toy_rec", "toy_prec", "toy_f_mu", "toy_f_M", "toy_rec@3", "toy_mrr"}
    assert out["toy_mrr"] == pytest.approx((1 / 2 + 1) / 2)
    np.testing.assert_allclose(prior.distribution().sum(), 1.0)
    with pytest.raises(ValueError):
        QuerySet("bad", {}, {"q": [1]})
