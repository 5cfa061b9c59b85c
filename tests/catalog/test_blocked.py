"""Tests of catalog/blocked.py: BlockedLayout and its FMA dot operands.

- every ``blocked`` case of Triton's unit tests (conversions.json), and the blocked-parent dot operands;
- differential against triton 3.9's ``to_linear_layout`` on seeded random valid parameters
  (compared modulo zero register bases: 3.9 drops them for blocked layouts);
- the paper's Fig. 1 / Table 1 Layout A;
- fuzzed invalid parameter sets (each raises LayoutError).
"""

from __future__ import annotations

import random

import pytest

from linear_layouts import LayoutError
from linear_layouts.layouts import BlockedLayout, DotOperandLayout

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

BLOCKED_CASES = conversion_cases("blocked")
FMA_DOT_CASES = [c for c in conversion_cases("dot_operand") if json_parent_kinds(c["params"]) == {"blocked"}]


@pytest.mark.parametrize("case", BLOCKED_CASES + FMA_DOT_CASES, ids=lambda c: c["name"])
def test_triton_unittest_case(case):
    layout = catalog_of_json(case["layout_kind"], case["params"])
    assert layout.to_linear(case["shape"]) == layout_of_json(case["expected"])


def test_unittest_counts():
    assert len(BLOCKED_CASES) == 14
    assert len(FMA_DOT_CASES) == 4


def test_paper_figure_1_layout_a():
    """Fig. 1 / Table 1 Layout A: sizePerThread [2,2], threadsPerWarp [4,8], warpsPerCTA [2,1], order [1,0]
    on 16x16; register 1 of thread 9 of warp 0 holds element (2, 3)."""
    layout = BlockedLayout([2, 2], [4, 8], [2, 1], [1, 0]).to_linear([16, 16])
    assert layout.apply({"register": 1, "lane": 9, "warp": 0}) == {"dim0": 2, "dim1": 3}
    assert layout.bases["register"] == [[0, 1], [1, 0]]
    assert layout.bases["lane"] == [[0, 2], [0, 4], [0, 8], [2, 0], [4, 0]]
    assert layout.bases["warp"] == [[8, 0]]
    # Every element is held exactly once: the layout is a bijection of 4 x 32 x 2 = 256 slots.
    assert layout.is_invertible()
    # Table 1: location -> (register, thread, warp)
    table_1 = {(0, 0): (0, 0, 0), (0, 1): (1, 0, 0), (0, 2): (0, 1, 0), (0, 3): (1, 1, 0), (1, 0): (2, 0, 0),
               (1, 1): (3, 0, 0), (2, 2): (0, 9, 0), (2, 3): (1, 9, 0), (3, 2): (2, 9, 0), (3, 3): (3, 9, 0)}
    for (i, j), (r, t, w) in table_1.items():
        assert layout.apply({"register": r, "lane": t, "warp": w}) == {"dim0": i, "dim1": j}
    # loc(w0) xor loc(t9) xor loc(r1) = (0, 0) xor (2, 2) xor (0, 1) = (2, 3)
    assert layout.apply({"lane": 9}) == {"dim0": 2, "dim1": 2}
    assert layout.apply({"register": 1}) == {"dim0": 0, "dim1": 1}


def test_cga_broadcast_and_split():
    layout = BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0], [[1, 0], [0, 1]]).to_linear([4, 64])
    assert layout.bases["block"] == [[2, 0], [0, 32]]
    assert layout.bases["warp"] == [[0, 0], [0, 0]]  # 4 rows: warps broadcast
    assert BlockedLayout([1], [32], [1], [0], [[0], [1]]).to_linear([64]).bases["block"] == [[0], [32]]


def test_dot_operand_of_blocked_parent():
    parent = BlockedLayout([2, 4], [8, 4], [2, 4], [1, 0])
    lhs = DotOperandLayout(0, parent, 0).to_linear([32, 16])
    assert lhs.bases["register"] == [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0]]  # all of K in registers
    assert lhs.bases["lane"][:2] == [[0, 0], [0, 0]]  # lanes along K broadcast


def test_differential_against_triton():
    pytest.importorskip("triton")
    rng = random.Random(20261122)
    checked = 0
    smaller = larger = 0
    for _ in range(500):
        params = R.random_blocked(rng)
        shape = R.random_shape(rng, R.rank_of(params))
        ours = build_ours(params)
        layout = ours.to_linear(shape)
        theirs = oracle_linear(build_gluon(params), shape)
        assert same_modulo_broadcast_registers(layout, theirs), (params, shape)
        tile = [s * t * w for s, t, w in zip(ours.size_per_thread, ours.threads_per_warp, ours.warps_per_cta)]
        smaller += any(x < t for x, t in zip(shape, tile))
        larger += any(x > t for x, t in zip(shape, tile))
        checked += 1
    assert checked == 500 and smaller > 100 and larger > 100


def test_differential_fma_dot_operands():
    pytest.importorskip("triton")
    rng = random.Random(77)
    for _ in range(150):
        parent = R.random_blocked(rng, rng.randint(2, 3))
        params = ("DotOperandLayout", dict(operand_index=rng.randint(0, 1), parent=parent, k_width=0))
        shape = R.random_shape(rng, R.rank_of(params))
        assert same_modulo_broadcast_registers(
            build_ours(params).to_linear(shape), oracle_linear(build_gluon(params), shape)
        ), (params, shape)


INVALID = [
    (dict(size_per_thread=[3, 1], threads_per_warp=[4, 8], warps_per_cta=[1, 1], order=[1, 0]),
     r"size_per_thread\[0\] must be a power of two"),
    (dict(size_per_thread=[1, 1], threads_per_warp=[4, 8, 1], warps_per_cta=[1, 1], order=[1, 0]),
     r"threads_per_warp must have 2 entries \(the rank\)"),
    (dict(size_per_thread=[1, 1], threads_per_warp=[4, 8], warps_per_cta=[1], order=[1, 0]),
     r"warps_per_cta must have 2 entries \(the rank\)"),
    (dict(size_per_thread=[1, 1], threads_per_warp=[4, 8], warps_per_cta=[1, 1], order=[1, 1]),
     r"order must be a permutation of 0\.\.1"),
    (dict(size_per_thread=[1, 1], threads_per_warp=[4, 8], warps_per_cta=[1, 1], order=[0]),
     r"order must have 2 entries \(the rank\)"),
    (dict(size_per_thread=[1, 1], threads_per_warp=[4, 6], warps_per_cta=[1, 1], order=[1, 0]),
     r"threads_per_warp\[1\] must be a power of two"),
    (dict(size_per_thread=[1, 1], threads_per_warp=[4, 8], warps_per_cta=[0, 1], order=[1, 0]),
     r"warps_per_cta\[0\] must be a power of two"),
    (dict(size_per_thread=[], threads_per_warp=[], warps_per_cta=[], order=[]),
     r"size_per_thread must have at least one entry \(the rank\)"),
    (dict(size_per_thread=[1, 1], threads_per_warp=[4, 8], warps_per_cta=[1, 1], order=[1, 0], cga_layout=[[3, 0]]),
     r"cga_layout\[0\] must be 0 or have a single non-zero entry"),
    (dict(size_per_thread=[1, 1], threads_per_warp=[4, 8], warps_per_cta=[1, 1], order=[1, 0], cga_layout=[[1, 0], [1, 0]]),
     r"cga_layout\[1\] = \[1, 0\] repeats a basis of cga_layout"),
    (dict(size_per_thread=[1, 1], threads_per_warp=[4, 8], warps_per_cta=[1, 1], order=[1, 0], cga_layout=[[1]]),
     r"cga_layout\[0\] must have one entry per tensor dimension \(2\)"),
    (dict(size_per_thread="1,1", threads_per_warp=[4, 8], warps_per_cta=[1, 1], order=[1, 0]),
     r"size_per_thread must be a list of integers"),
    (dict(size_per_thread=[1.5, 1], threads_per_warp=[4, 8], warps_per_cta=[1, 1], order=[1, 0]),
     r"size_per_thread\[0\] must be an integer"),
    (dict(size_per_thread=[True, 1], threads_per_warp=[4, 8], warps_per_cta=[1, 1], order=[1, 0]),
     r"size_per_thread\[0\] must be an integer"),
]


@pytest.mark.parametrize("kwargs, rule", INVALID)
def test_invalid_parameters_raise(kwargs, rule):
    with pytest.raises(LayoutError, match=rule):
        BlockedLayout(**kwargs)


def test_fuzzed_invalid_parameters_raise_layout_error():
    """Seeded mutations of valid parameter sets: every one raises LayoutError (never another error)."""
    rng = random.Random(5)
    corrupted = set()
    for _ in range(60):
        _, kwargs = R.random_blocked(rng, rng.randint(2, 3))
        field = rng.choice(["size_per_thread", "threads_per_warp", "warps_per_cta", "order", "cga_layout", "shape"])
        shape = R.random_shape(rng, len(kwargs["order"]))
        if field == "order":
            kwargs["order"] = [0] * len(kwargs["order"])
        elif field == "cga_layout":
            kwargs["cga_layout"] = [[3] + [0] * (len(kwargs["order"]) - 1)]
        elif field == "shape":
            shape = shape + [4] if rng.random() < 0.5 else [s * 3 for s in shape]
        else:
            kwargs[field] = list(kwargs[field])
            kwargs[field][rng.randrange(len(kwargs[field]))] = rng.choice([0, 3, 6, -2])
        with pytest.raises(LayoutError, match=rf"^{field}\b"):
            BlockedLayout(**kwargs).to_linear(shape)
        corrupted.add(field)
    assert len(corrupted) == 6  # every argument (and the shape) was corrupted
    with pytest.raises(LayoutError, match=r"k_width must be 0 for a BlockedLayout parent \(FMA dot\)"):
        DotOperandLayout(0, BlockedLayout([1, 1], [4, 8], [1, 1], [1, 0]), 2).to_linear([32, 32])
