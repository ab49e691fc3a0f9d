"""Score calibration: temperature scaling (Guo et al., 2017) and expected calibration error.

Gold may hold several articles per query (a recital or a case applies more than one); the likelihood used for
fitting is then that of the gold *set*, ``log sum_{g in gold} softmax(z / T)_g``, which reduces to the usual
negative log-likelihood for one gold article.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["expected_calibration_error", "fit_temperature", "gold_set_nll", "softmax"]


def softmax(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """Row-wise softmax of ``logits / temperature`` (numerically stable)."""
    z = np.asarray(logits, dtype=np.float64) / float(temperature)
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def _gold_mask(n: int, k: int, gold: Sequence[Sequence[int]]) -> np.ndarray:
    mask = np.zeros((n, k), dtype=bool)
    for i, g in enumerate(gold):
        mask[i, list(g)] = True
    return mask


def gold_set_nll(logits: np.ndarray, gold: Sequence[Sequence[int]], temperature: float = 1.0) -> float:
    """Mean negative log-likelihood of the gold column sets (column indices) under ``softmax(logits / T)``."""
    p = softmax(logits, temperature)
    mask = _gold_mask(p.shape[0], p.shape[1], gold)
    mass = np.where(mask, p, 0.0).sum(axis=1)
    return float(-np.log(np.clip(mass, 1e-12, None)).mean())


def fit_temperature(
    logits: np.ndarray, gold: Sequence[Sequence[int]], *, bounds: tuple[float, float] = (0.05, 20.0)
) -> float:
    """The temperature minimising :func:`gold_set_nll` on held-out data (golden-section search on log T).

    The NLL is unimodal in log T for a fixed set of logits, so a bracketed golden-section search is exact
    enough (to ~1e-4 relative) and needs no gradient.
    """
    if len(gold) == 0:
        return 1.0
    lo, hi = np.log(bounds[0]), np.log(bounds[1])
    ratio = (np.sqrt(5.0) - 1.0) / 2.0
    a, b = lo, hi
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = gold_set_nll(logits, gold, np.exp(c)), gold_set_nll(logits, gold, np.exp(d))
    for _ in range(80):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = gold_set_nll(logits, gold, np.exp(c))
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = gold_set_nll(logits, gold, np.exp(d))
        if b - a < 1e-5:
            break
    return float(np.exp((a + b) / 2.0))


def expected_calibration_error(
    probs: np.ndarray, gold: Sequence[Sequence[int]], *, n_bins: int = 10
) -> float:
    """ECE of the top-1 prediction: sum over equal-width confidence bins of |accuracy - confidence| weighted
    by the bin's share of queries; a prediction is correct when its top article is in the gold set."""
    probs = np.asarray(probs, dtype=np.float64)
    if probs.shape[0] == 0:
        return 0.0
    top = probs.argmax(axis=1)
    conf = probs[np.arange(len(top)), top]
    correct = np.array([t in set(g) for t, g in zip(top, gold, strict=True)], dtype=np.float64)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    ece = 0.0
    for i in range(n_bins):
        lo, hi = edges[i], edges[i + 1]
        in_bin = (conf > lo) & (conf <= hi) if i > 0 else (conf >= lo) & (conf <= hi)
        if in_bin.any():
            ece += in_bin.mean() * abs(correct[in_bin].mean() - conf[in_bin].mean())
    return float(ece)


def review_band(
    conf: np.ndarray, correct: np.ndarray, target: float = 0.8, *, fallback: float = 0.6
) -> tuple[float, float]:
    """The review band ``(low, high)`` from top-1 scores ``conf`` and whether each top-1 was right: ``high`` the
    smallest threshold in 0.30, 0.35 … 0.90 above which at least 5 top-1 articles were right at least ``target`` of
    the time (``fallback`` when none is), ``low = high / 3``."""
    high = fallback
    for thr in np.arange(0.3, 0.91, 0.05):
        sel = conf >= thr
        if sel.sum() >= 5 and correct[sel].mean() >= target:
            high = float(round(thr, 2))
            break
    return (round(high / 3, 2), high)
