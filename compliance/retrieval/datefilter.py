"""The date filter of seed 001 §5: keep candidates within a distance in years of the query's date."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

import numpy as np

__all__ = ["date_mask", "year_distance"]

_DAYS_PER_YEAR = 365.2425


def year_distance(a: date, b: date) -> float:
    """Absolute distance between two dates in (Gregorian mean) years."""
    return abs((a - b).days) / _DAYS_PER_YEAR


def date_mask(
    query_date: date | None, dates: Sequence[date | None], max_years: float, keep_undated: bool = True
) -> np.ndarray:
    """Boolean mask of candidates whose date is within ``max_years`` of ``query_date``.

    An undated query keeps everything when ``keep_undated`` (nothing otherwise); an undated candidate is kept
    when ``keep_undated``.
    """
    if query_date is None:
        return np.full(len(dates), keep_undated, dtype=bool)
    return np.array(
        [keep_undated if d is None else year_distance(query_date, d) <= max_years for d in dates], dtype=bool
    )
