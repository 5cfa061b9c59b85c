"""Tests of catalog/linear.py: DistributedLinearLayout and SharedLinearLayout, against triton 3.9."""

from __future__ import annotations

import random

import pytest

from linear_layouts import LayoutError
from linear_layouts.layouts import BlockedLayout, DistributedLinearLayout, SharedLinearLayout

from . import random_layouts as R
from .oracle import build_gluon, build_ours, oracle_linear


def test_round_trip_of_a_blocked_layout():
    """The bases of a blocked layout, given back as a DistributedLinearLayout, give the same layout."""
    layout = BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0]).to_linear([32, 64])
    b = layout.bases
    linear = DistributedLinearLayout(b["register"], b["lane"], b["warp"], b["block"], [32, 64])
    assert linear.to_linear([32, 64]) == layout
    assert linear.order() == (1, 0)


def test_shape_change_follows_triton():
    linear = DistributedLinearLayout([[0, 1], [0, 2]], [[0, 4], [1, 0]], [[2, 0]], [], [4, 8])
    grown = linear.to_linear([8, 16])
    assert grown.bases["register"] == [[0, 1], [0, 2], [0, 8], [4, 0]]  # repeats in register order
    shrunk = linear.to_linear([2, 2])
    assert shrunk.bases == {"register": [[0, 1]], "lane": [[0, 0], [1, 0]], "warp": [[0, 0]], "block": []}


@pytest.mark.parametrize("kind", ["distributed", "shared"])
def test_differential_against_triton(kind):
    pytest.importorskip("triton")
    rng = random.Random(4242 if kind == "distributed" else 2424)
    for _ in range(250):
        if kind == "distributed":
            params = R.random_distributed_linear(rng)
            shape = R.random_shape(rng, R.rank_of(params))
        else:
            params, shape = R.random_shared_linear(rng)
        ours = build_ours(params).to_linear(shape)
        theirs = oracle_linear(build_gluon(params), shape)
        assert ours == theirs, (params, shape)


@pytest.mark.parametrize(
    "make, rule",
    [
        (lambda: DistributedLinearLayout([[0, 1]], [[1, 1]], [], [], [2, 2]),
         r"lane_bases\[0\] must move at most one dimension"),  # moves two dims
        (lambda: DistributedLinearLayout([[0, 3]], [[1, 0]], [], [], [2, 4]),
         r"reg_bases\[0\] must have a power-of-two entry"),
        (lambda: DistributedLinearLayout([[0, 1]], [[1, 0]], [], [], [4, 2]),
         r"the bases must be surjective onto shape \[4, 2\]"),  # not surjective
        (lambda: DistributedLinearLayout([[0, 1]], [[1, 0]], [], [], [2, 3]), r"shape\[1\] must be a power of two"),
        (lambda: DistributedLinearLayout([[0, 1, 0]], [[1, 0]], [], [], [2, 2]),
         r"reg_bases\[0\] must have one entry per tensor dimension \(2\)"),
        (lambda: DistributedLinearLayout([[0, 4]], [[1, 0]], [], [], [2, 2]),
         r"reg_bases\[0\] must lie inside shape \[2, 2\]"),  # outside the shape
        (lambda: DistributedLinearLayout([[0, 1]], [[1, 0]], [], [], [2, 2]).to_linear([2, 2, 2]),
         r"shape must have rank 2 \(the layout's rank\)"),
        (lambda: SharedLinearLayout([]), r"offset_bases must not be empty"),
        (lambda: SharedLinearLayout([[0, 1], [1, 0]], [[1, 0]]),
         r"offset_bases/block_bases: after removing the zero bases"),  # not bijective
        (lambda: SharedLinearLayout([[0, 1], [0, 1]]), r"offset_bases/block_bases: after removing the zero bases"),
        (lambda: SharedLinearLayout([[0, 1], [0, 4]]), r"offset_bases/block_bases must be surjective onto their"),
        (lambda: SharedLinearLayout([[0, 1], [1, 0]], alignment=12), r"alignment must be a power of two"),
        (lambda: SharedLinearLayout([[0, 1], [1, 0]]).to_linear([4, 1]),
         r"shape must equal the layout's tile \[2, 2\] for"),  # shape must be the tile
        (lambda: SharedLinearLayout([[0, 1], [1]]),
         r"offset_bases\[1\] must have one entry per tensor dimension \(2\)"),
    ],
)
def test_invalid_raise(make, rule):
    with pytest.raises(LayoutError, match=rule):
        make()
