"""Tests of catalog/slice.py: SliceLayout (parents: blocked, NVMMA, dot operands, nested slices)."""

from __future__ import annotations

import random

import pytest

from linear_layouts import LayoutError
from linear_layouts.layouts import BlockedLayout, SliceLayout

from . import random_layouts as R
from .oracle import (
    build_gluon,
    build_ours,
    catalog_of_json,
    conversion_cases,
    json_parent_kinds,
    layout_of_json,
    oracle_linear,
    same_modulo_broadcast_registers,
)

SLICE_CASES = [c for c in conversion_cases("slice") if not json_parent_kinds(c["params"]) & {"amd_mfma", "amd_wmma"}]


@pytest.mark.parametrize("case", SLICE_CASES, ids=lambda c: c["name"])
def test_triton_unittest_case(case):
    layout = catalog_of_json(case["layout_kind"], case["params"])
    assert layout.to_linear(case["shape"]) == layout_of_json(case["expected"])


def test_unittest_count():
    assert len(SLICE_CASES) == 10


def test_slice_of_blocked_drops_the_dim_and_zero_registers():
    parent = BlockedLayout([2, 1], [4, 8], [1, 1], [1, 0])
    layout = SliceLayout(0, parent).to_linear([8])
    assert layout.bases["register"] == []  # the 2 registers along dim 0 are gone
    assert layout.bases["lane"] == [[1], [2], [4], [0], [0]]
    assert SliceLayout(0, parent).rank == 1
    nested = SliceLayout(0, SliceLayout(1, BlockedLayout([1, 1, 4], [2, 4, 4], [1, 1, 1], [2, 1, 0])))
    assert nested.to_linear([4]).bases["register"] == [[1], [2]]


def test_differential_against_triton():
    pytest.importorskip("triton")
    rng = random.Random(31337)
    for _ in range(300):
        params = R.random_slice(rng)
        shape = R.random_shape(rng, R.rank_of(params))
        ours = build_ours(params).to_linear(shape)
        theirs = oracle_linear(build_gluon(params), shape)
        assert same_modulo_broadcast_registers(ours, theirs), (params, shape)


@pytest.mark.parametrize(
    "make, rule",
    [
        (lambda: SliceLayout(2, BlockedLayout([1, 1], [4, 8], [1, 1], [1, 0])),
         r"dim must be in \[0, 2\) \(the parent's rank\)"),
        (lambda: SliceLayout(-1, BlockedLayout([1, 1], [4, 8], [1, 1], [1, 0])),
         r"dim must be in \[0, 2\) \(the parent's rank\)"),
        (lambda: SliceLayout(0, BlockedLayout([1], [32], [1], [0])),
         r"parent must have rank >= 2 \(a slice removes one dim\)"),
        (lambda: SliceLayout(0, "blocked"), r"parent must be a distributed layout"),
        (lambda: SliceLayout("0", BlockedLayout([1, 1], [4, 8], [1, 1], [1, 0])), r"dim must be an integer"),
        (lambda: SliceLayout(0, BlockedLayout([1, 1], [4, 8], [1, 1], [1, 0])).to_linear([4, 4]),
         r"shape must have rank 1 \(the layout's rank\)"),
        (lambda: SliceLayout(0, BlockedLayout([1, 1], [4, 8], [1, 1], [1, 0])).to_linear([6]),
         r"shape\[0\] must be a power of two"),
    ],
)
def test_invalid_raise(make, rule):
    with pytest.raises(LayoutError, match=rule):
        make()
