"""Max-pooling passage scores back to their documents (seed 003 §5.2: "we map passages back to the documents
they originate from and perform max-pooling on the scores along documents"). Texts are split into passages by
:func:`compliance.text.split_passages`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["group_owner", "max_pool"]


def max_pool(scores: np.ndarray, owner: np.ndarray, n_docs: int, fill: float = -np.inf) -> np.ndarray:
    """Document scores as the maximum of their passages' scores.

    Args:
        scores: one score per passage (any float dtype); or a 2-D array (queries × passages).
        owner: for each passage, the index of its document (0 ≤ owner < n_docs).
        n_docs: number of documents.
        fill: score of a document without passages.

    Returns:
        float32 array (n_docs,) or (queries, n_docs).
    """
    owner = np.asarray(owner, dtype=np.int64)
    if scores.ndim == 1:
        out = np.full(n_docs, fill, dtype=np.float32)
        np.maximum.at(out, owner, scores.astype(np.float32, copy=False))
        return out
    out2 = np.full((scores.shape[0], n_docs), fill, dtype=np.float32)
    if owner.size == 0:
        return out2
    # passages of one document are contiguous in every index built here; reduceat is much faster than .at
    if np.all(np.diff(owner) >= 0):
        starts = np.flatnonzero(np.r_[True, np.diff(owner) > 0])
        reduced = np.maximum.reduceat(scores.astype(np.float32, copy=False), starts, axis=1)
        out2[:, owner[starts]] = reduced
        return out2
    for j in range(scores.shape[0]):
        np.maximum.at(out2[j], owner, scores[j].astype(np.float32, copy=False))
    return out2


def group_owner(counts: Sequence[int]) -> np.ndarray:
    """Owner array for documents that have ``counts[i]`` consecutive passages each."""
    return np.repeat(np.arange(len(counts), dtype=np.int64), np.asarray(counts, dtype=np.int64))
