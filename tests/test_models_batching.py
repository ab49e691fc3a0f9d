"""Length-sorted padded batches, shared by the classifier, its training cache, dense retrieval and the benchmark."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")


def test_length_sorted_batches_pad_and_keep_positions() -> None:
    from compliance.runtime import length_sorted_batches

    seqs = [[5, 6, 7], [1], [2, 3], [4, 4, 4, 4]]
    batches = list(length_sorted_batches(seqs, batch_size=2, pad_id=0))
    assert [idx for idx, _, _ in batches] == [[1, 2], [0, 3]]
    _, ids, mask = batches[1]
    assert ids.tolist() == [[5, 6, 7, 0], [4, 4, 4, 4]]
    assert mask.tolist() == [[1, 1, 1, 0], [1, 1, 1, 1]]
    assert list(length_sorted_batches([], batch_size=2, pad_id=0)) == []
