"""Fusion maths, reciprocal rank fusion and the date filter, checked against hand computations."""

from __future__ import annotations

from datetime import date

import numpy as np
import pytest

from compliance.retrieval.datefilter import date_mask, year_distance
from compliance.retrieval.fusion import linear_fusion, minmax, rrf_fusion


def test_minmax() -> None:
    np.testing.assert_allclose(minmax(np.array([2.0, 4.0, 3.0])), [0.0, 1.0, 0.5])
    np.testing.assert_allclose(minmax(np.array([5.0, 5.0])), [0.0, 0.0])
    out = minmax(np.array([1.0, -np.inf, 3.0]))
    assert out[1] == -np.inf and out[0] == 0.0 and out[2] == 1.0


def test_linear_fusion_is_seed_001_eq_4() -> None:
    dense = np.array([0.2, 0.8, 0.5])  # normalised: 0, 1, 0.5
    bm25 = np.array([10.0, 0.0, 5.0])  # normalised: 1, 0, 0.5
    np.testing.assert_allclose(linear_fusion(dense, bm25, 0.3), [0.7, 0.3, 0.5])
    np.testing.assert_allclose(linear_fusion(dense, bm25, 1.0), [0.0, 1.0, 0.5])
    np.testing.assert_allclose(linear_fusion(dense, bm25, 0.0), [1.0, 0.0, 0.5])
    with pytest.raises(ValueError):
        linear_fusion(dense, bm25, 1.5)


def test_rrf() -> None:
    fused = rrf_fusion([["a", "b", "c"], ["b", "d"]], k=60)
    assert fused["a"] == pytest.approx(1 / 61)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["c"] == pytest.approx(1 / 63)
    assert fused["d"] == pytest.approx(1 / 62)
    assert max(fused, key=fused.__getitem__) == "b"
    weighted = rrf_fusion([["a"], ["b"]], k=1, weights=[2.0, 1.0])
    assert weighted == {"a": 1.0, "b": 0.5}


def test_date_filter() -> None:
    assert year_distance(date(2002, 7, 31), date(2016, 5, 4)) == pytest.approx(13.76, abs=0.01)
    dates = [date(2002, 7, 31), date(2016, 5, 4), None, date(1995, 10, 24)]
    q = date(2018, 5, 25)
    assert date_mask(q, dates, 5).tolist() == [False, True, True, False]
    assert date_mask(q, dates, 5, keep_undated=False).tolist() == [False, True, False, False]
    assert date_mask(q, dates, 25).tolist() == [True, True, True, True]
    assert date_mask(None, dates, 1).tolist() == [True] * 4
    assert date_mask(None, dates, 1, keep_undated=False).tolist() == [False] * 4
