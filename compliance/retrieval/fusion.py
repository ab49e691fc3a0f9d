"""Score fusion: min-max normalised linear combination (seed 001 eq. 4) and reciprocal-rank fusion."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["linear_fusion", "minmax", "rrf_fusion"]


def minmax(scores: np.ndarray) -> np.ndarray:
    """Scale to [0, 1]: ``(s − min) / (max − min)``; a constant (or empty) vector maps to zeros.

    Non-finite entries (−inf for filtered documents) are ignored for min/max and stay −inf.
    """
    s = np.asarray(scores, dtype=np.float64)
    finite = np.isfinite(s)
    out = np.full(s.shape, -np.inf)
    if not finite.any():
        return out
    lo, hi = float(s[finite].min()), float(s[finite].max())
    out[finite] = 0.0 if hi <= lo else (s[finite] - lo) / (hi - lo)
    return out


def linear_fusion(dense: np.ndarray, bm25: np.ndarray, alpha: float) -> np.ndarray:
    """Seed 001 eq. 4: ``ENS(q, d) = α·norm(dense(q, d)) + (1 − α)·norm(BM25(q, d))`` over aligned arrays."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    if dense.shape != bm25.shape:
        raise ValueError(f"score arrays differ in shape: {dense.shape} vs {bm25.shape}")
    return alpha * minmax(dense) + (1.0 - alpha) * minmax(bm25)


def rrf_fusion(
    rankings: Sequence[Sequence[str]], k: int = 60, weights: Sequence[float] | None = None
) -> dict[str, float]:
    """Reciprocal rank fusion (Cormack et al. 2009): ``RRF(d) = Σ_r w_r / (k + rank_r(d))`` with 1-based ranks;
    documents absent from a ranking get nothing from it.

    Returns:
        id → fused score, for every document in any ranking.
    """
    if k < 1:
        raise ValueError("rrf k must be ≥ 1")
    weights = list(weights) if weights is not None else [1.0] * len(rankings)
    out: dict[str, float] = {}
    for w, ranking in zip(weights, rankings, strict=True):
        for rank, doc in enumerate(ranking, start=1):
            out[doc] = out.get(doc, 0.0) + w / (k + rank)
    return out


def ranks_of(scores: Mapping[str, float] | np.ndarray) -> np.ndarray:
    """1-based dense ranks (best = 1) of a score array; ties broken by position."""
    s = np.asarray(scores, dtype=np.float64)
    order = np.lexsort((np.arange(s.size), -s))
    ranks = np.empty(s.size, dtype=np.int64)
    ranks[order] = np.arange(1, s.size + 1)
    return ranks
