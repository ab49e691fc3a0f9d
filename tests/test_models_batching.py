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


def test_batches_are_cut_where_padding_costs_more_than_another_call() -> None:
    """The batches' padded tokens plus a call's cost are the least any cut of the sorted rows gives (checked
    against every cut of small inputs); a large call cost keeps the fewest batches."""
    import itertools
    import random

    from compliance.runtime import batch_bounds

    def cost(lengths: list[int], ends: list[int], per_call: int) -> int:
        total, start = 0, 0
        for end in ends:
            total += (end - start) * lengths[end - 1] + per_call
            start = end
        return total

    rng = random.Random(7)
    for _ in range(200):
        n = rng.randint(1, 9)
        lengths = sorted(rng.randint(1, 300) for _ in range(n))
        size, per_call = rng.randint(1, 4), rng.choice([0, 16, 64, 1000])
        ends = batch_bounds(lengths, size, per_call)
        assert ends[-1] == n and all(0 < b - a <= size for a, b in zip([0, *ends], ends, strict=False))
        best = min(
            cost(lengths, [*cut, n], per_call)
            for k in range(n)
            for cut in itertools.combinations(range(1, n), k)
            if all(0 < b - a <= size for a, b in zip([0, *cut], [*cut, n], strict=True))
        )
        assert cost(lengths, ends, per_call) == best
    # the long tail of an audit's windows: 30 short rows and one long one are two calls, not one
    assert batch_bounds([40] * 30 + [225], 32, 64) == [30, 31]
    assert len(batch_bounds([5] * 70, 32, 1 << 40)) == 3  # as few batches as slicing gives
    assert batch_bounds([], 32, 64) == []


def test_every_row_keeps_its_tokens_and_mask_however_the_batches_are_cut() -> None:
    """A call cost of 0 cuts every row into a batch of its own, a huge one keeps one batch: each row's tokens and
    mask are the same either way (padding is masked, so a row's result does not depend on the cut)."""
    from compliance.runtime import length_sorted_batches

    seqs = [[1, 2], [3, 4, 5, 6, 7, 8], [9], [10, 11, 12]]
    one = list(length_sorted_batches(seqs, batch_size=4, pad_id=0, batch_cost=1 << 40))
    many = list(length_sorted_batches(seqs, batch_size=4, pad_id=0, batch_cost=0))
    assert [idx for idx, _, _ in one] == [[2, 0, 3, 1]]
    assert [idx for idx, _, _ in many] == [[2], [0], [3], [1]]
    rows = {i: ids[r][mask[r].bool()].tolist() for idx, ids, mask in many for r, i in enumerate(idx)}
    assert rows == {i: s for i, s in enumerate(seqs)}
