"""Tests of catalog/nvmma.py: NVMMADistributedLayout (Ampere v2, Hopper v3) and its dot operands.

- every ``nvidia_mma`` case and every NVMMA-parent ``dot_operand`` case of conversions.json;
- differential against triton 3.9's ``to_linear_layout`` on seeded random valid parameters;
- fuzzed invalid parameter sets.
"""

from __future__ import annotations

import random

import pytest

from linear_layouts import LayoutError
from linear_layouts.layouts import DotOperandLayout, NVMMADistributedLayout

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

MMA_CASES = conversion_cases("nvidia_mma")
MMA_DOT_CASES = [c for c in conversion_cases("dot_operand") if json_parent_kinds(c["params"]) == {"nvidia_mma"}]


@pytest.mark.parametrize("case", MMA_CASES + MMA_DOT_CASES, ids=lambda c: c["name"])
def test_triton_unittest_case(case):
    layout = catalog_of_json(case["layout_kind"], case["params"])
    assert layout.to_linear(case["shape"]) == layout_of_json(case["expected"])


def test_unittest_counts():
    assert (len(MMA_CASES), len(MMA_DOT_CASES)) == (19, 15)


def test_mma_v2_16x16_tile():
    layout = NVMMADistributedLayout([2, 0], [1, 1], [16, 8]).to_linear([16, 16])
    assert layout.bases["register"] == [[0, 1], [8, 0], [0, 8]]
    assert layout.bases["lane"] == [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]]
    # lane 4*r + c holds (r, 2c), (r, 2c+1), (r+8, ..): the mma.sync m16n8 accumulator fragment
    for lane in range(32):
        assert layout.apply({"lane": lane}) == {"dim0": lane // 4, "dim1": 2 * (lane % 4)}


def test_hopper_warps_are_column_major():
    layout = NVMMADistributedLayout([3, 0], [4, 2], [16, 64, 16]).to_linear([64, 128])
    assert layout.bases["warp"] == [[16, 0], [32, 0], [0, 64]]


@pytest.mark.parametrize("kind", ["mma", "dot"])
def test_differential_against_triton(kind):
    pytest.importorskip("triton")
    rng = random.Random(1000 + len(kind))
    generate = R.random_nvmma if kind == "mma" else R.random_dot_operand
    count = 300 if kind == "mma" else 350
    for _ in range(count):
        params = generate(rng)
        shape = R.random_shape(rng, R.rank_of(params))
        ours = build_ours(params).to_linear(shape)
        theirs = oracle_linear(build_gluon(params), shape)
        assert same_modulo_broadcast_registers(ours, theirs), (params, shape)
        if kind == "mma":
            assert ours == theirs  # non-blocked kinds keep their zero register bases in 3.9 as well


INVALID = [
    (dict(version=[1, 0], warps_per_cta=[4, 1], instr_shape=[16, 8]),
     r"version\[0\] must be 2 \(Ampere\) or 3 \(Hopper\); Volta"),
    (dict(version=[5, 0], warps_per_cta=[4, 1], instr_shape=[16, 8]),
     r"version\[0\] must be 2 \(Ampere\) or 3 \(Hopper\); Volta"),
    (dict(version=[2], warps_per_cta=[4, 1], instr_shape=[16, 8]), r"version must have 2 entries \(the rank\)"),
    (dict(version=[2, 0], warps_per_cta=[3, 1], instr_shape=[16, 8]), r"warps_per_cta\[0\] must be a power of two"),
    (dict(version=[2, 0], warps_per_cta=[4], instr_shape=[16]), r"warps_per_cta must have at least 2 entries"),
    (dict(version=[2, 0], warps_per_cta=[4, 1], instr_shape=[16, 8, 8]),
     r"instr_shape of an Ampere \(v2\) layout must have 2 entries"),
    (dict(version=[2, 0], warps_per_cta=[4, 1], instr_shape=[16, 4]),
     r"instr_shape: the per-warp tile \[m, n\] must be multiples of 8"),
    (dict(version=[2, 0], warps_per_cta=[4, 1], instr_shape=[4, 8]),
     r"instr_shape: the per-warp tile \[m, n\] must be multiples of 8"),
    (dict(version=[2, 0], warps_per_cta=[4, 1], instr_shape=[16, 24]), r"instr_shape\[1\] must be a power of two"),
    (dict(version=[3, 0], warps_per_cta=[4, 1, 1], instr_shape=[16, 64, 16]),
     r"warps_per_cta of a Hopper \(v3\) layout must have 2 entries"),
    (dict(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16]),
     r"instr_shape of a Hopper \(v3\) layout must be \[M, N, K\]"),
    (dict(version=[2, 0], warps_per_cta=[4, 1], instr_shape=[16, 8], cga_layout=[[1, 1]]),
     r"cga_layout\[0\] must be 0 or have a single non-zero entry"),
    (dict(version="2.0", warps_per_cta=[4, 1], instr_shape=[16, 8]), r"version must be a list of integers"),
]


@pytest.mark.parametrize("kwargs, rule", INVALID)
def test_invalid_parameters_raise(kwargs, rule):
    with pytest.raises(LayoutError, match=rule):
        NVMMADistributedLayout(**kwargs)


def test_invalid_dot_operands_and_shapes_raise():
    ampere = NVMMADistributedLayout([2, 0], [4, 1], [16, 8])
    hopper = NVMMADistributedLayout([3, 0], [4, 1], [16, 64, 16])
    bad = [
        (lambda: DotOperandLayout(1, hopper, 2).to_linear([64, 64]),
         r"operand_index: a Hopper \(v3\) MMA takes operand B"),  # Hopper B comes from shared memory
        (lambda: DotOperandLayout(0, ampere, 0).to_linear([64, 64]),
         r"k_width must be a power of two"),  # k_width is mandatory
        (lambda: DotOperandLayout(0, ampere, 3).to_linear([64, 64]), r"k_width must be a power of two"),
        (lambda: DotOperandLayout(2, ampere, 2), r"operand_index must be 0 \(A\) or 1 \(B\)"),
        (lambda: DotOperandLayout(0, "ampere", 2), r"parent must be a distributed layout"),
        (lambda: DotOperandLayout(0, ampere, -1), r"k_width must be >= 0"),
        (lambda: ampere.to_linear([64, 64, 2]), r"shape must have rank 2 \(the layout's rank\)"),
        (lambda: ampere.to_linear([64, 48]), r"shape\[1\] must be a power of two"),
        (lambda: ampere.to_linear([64]), r"shape must have rank 2 \(the layout's rank\)"),
    ]
    for call, rule in bad:
        with pytest.raises(LayoutError, match=rule):
            call()
