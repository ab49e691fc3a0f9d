"""Temperature scaling recovers a known temperature; ECE falls after calibration."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from compliance.models.calibration import expected_calibration_error, fit_temperature, gold_set_nll, softmax


def _synthetic(
    true_t: float, n: int = 4000, k: int = 10, seed: int = 0
) -> tuple[np.ndarray, list[list[int]]]:
    """Labels drawn from softmax(z / true_t); the model reports z (over-confident when true_t > 1)."""
    rng = np.random.default_rng(seed)
    z = rng.normal(scale=3.0, size=(n, k))
    p = softmax(z, true_t)
    y = [[int(rng.choice(k, p=row))] for row in p]
    return z, y


@pytest.mark.parametrize("true_t", [0.5, 1.0, 2.5])
def test_fit_temperature_recovers_known_t(true_t: float) -> None:
    z, y = _synthetic(true_t)
    t = fit_temperature(z, y)
    assert t == pytest.approx(true_t, rel=0.1)
    assert gold_set_nll(z, y, t) <= gold_set_nll(z, y, 1.0) + 1e-9


def test_ece_drops_after_scaling() -> None:
    z, y = _synthetic(2.5, seed=1)
    t = fit_temperature(z, y)
    before = expected_calibration_error(softmax(z, 1.0), y)
    after = expected_calibration_error(softmax(z, t), y)
    assert after < before / 2
    assert after < 0.05


def test_ece_by_hand() -> None:
    probs = np.array([[0.9, 0.1], [0.9, 0.1], [0.6, 0.4], [0.6, 0.4]])
    gold = [[0], [1], [0], [0]]
    # bin (0.8, 0.9]: conf 0.9, acc 0.5 → 0.4 × 2/4; bin (0.5, 0.6]: conf 0.6, acc 1.0 → 0.4 × 2/4
    assert expected_calibration_error(probs, gold) == pytest.approx(0.4)


def test_gold_set_likelihood_uses_the_set() -> None:
    z = np.log(np.array([[0.5, 0.3, 0.2]]))
    assert gold_set_nll(z, [[0, 1]]) == pytest.approx(-np.log(0.8))


def test_label_prior_reweights_scores() -> None:
    from compliance.models.classifier import ArticleClassifier, ClassifierConfig

    logits = np.array([[2.0, 1.9, 0.0]])
    plain = ArticleClassifier(None, None, [5, 6, 32], {}, ClassifierConfig(temperature=1.0))  # type: ignore[arg-type]
    assert plain.calibrate(logits).argmax() == 0
    cfg = ClassifierConfig(temperature=1.0, label_prior=(0.02, 0.97, 0.01), prior_weight=1.0)
    withprior = ArticleClassifier(None, None, [5, 6, 32], {}, cfg)  # type: ignore[arg-type]
    probs = withprior.calibrate(logits)
    assert probs.argmax() == 1  # the frequent article wins a near tie
    np.testing.assert_allclose(probs.sum(), 1.0)
    expected = softmax(np.log(softmax(logits)) + np.log(np.array([[0.02, 0.97, 0.01]])))
    np.testing.assert_allclose(probs, expected)
    np.testing.assert_allclose(withprior.calibrate(logits, prior=False), plain.calibrate(logits))
    # the lexical expert multiplies in with its weight
    lexical = np.log(np.array([[0.1, 0.1, 0.8]]))
    both = ArticleClassifier(None, None, [5, 6, 32], {}, replace(cfg, lexical_weight=0.5))  # type: ignore[arg-type]
    expected = softmax(np.log(softmax(logits)) + np.log(np.array([[0.02, 0.97, 0.01]])) + 0.5 * lexical)
    np.testing.assert_allclose(both.calibrate(logits, lexical_log_probs=lexical), expected)
