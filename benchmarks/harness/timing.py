"""Summaries of measured times."""

from __future__ import annotations

import math


def geomean(values) -> float:
    """exp(mean(log v)) over the positive ``values`` (the others are not ratios: dropped); NaN if none.

    >>> geomean([1.0, 4.0]), geomean([2.0, 0.0, None])
    (2.0, 2.0)
    """
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")
