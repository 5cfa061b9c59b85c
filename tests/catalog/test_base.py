"""Tests of catalog/base.py: Triton's layout-building helpers and the CGA parameter conversions."""

from __future__ import annotations

import random

import pytest

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.layouts import remove_broadcast_registers
from linear_layouts.layouts.base import (
    cga_layout_from_split_params,
    check_cga_layout,
    check_order,
    check_shape,
    combine_cta_cga_with_shape,
    ensure_layout_not_larger_than,
    ensure_layout_not_smaller_than,
    get_matrix_order,
    get_order_for_dot_operand,
    identity_standard_nd,
    make_cga_layout,
    split_params_from_cga_layout,
)

from .oracle import unittests_dir


def test_identity_standard_nd_fills_order_minor_first():
    layout = identity_standard_nd("lane", [4, 8], [1, 0])
    assert layout.out_dim_names == ("dim1", "dim0")  # out dims in order order, as Triton
    assert layout.transpose_outs(["dim0", "dim1"]).bases["lane"] == [[0, 1], [0, 2], [0, 4], [1, 0], [2, 0]]
    column_major = identity_standard_nd("lane", [4, 8], [0, 1])
    assert column_major.bases["lane"] == [[1, 0], [2, 0], [0, 1], [0, 2], [0, 4]]


def test_matrix_orders():
    assert get_matrix_order(2, True) == (1, 0)
    assert get_matrix_order(3, False) == (1, 2, 0)
    assert get_order_for_dot_operand(0, 3, True) == (2, 1, 0)
    assert get_order_for_dot_operand(1, 2, True) == (0, 1)
    assert get_order_for_dot_operand(0, 2, False) == (0, 1)


def test_ensure_layout_not_smaller_than_adds_register_repeats():
    layout = LinearLayout({"register": [[1, 0]], "lane": [[0, 1]]}, {"dim0": 2, "dim1": 2})
    grown = ensure_layout_not_smaller_than(layout, [8, 4])
    assert grown.bases["register"] == [[1, 0], [2, 0], [4, 0], [0, 2]]
    assert grown.out_dims == {"dim0": 8, "dim1": 4}


def test_ensure_layout_not_larger_than_zeroes_largest_bases_first():
    layout = LinearLayout({"register": [[1], [8]], "lane": [[2], [4]]}, {"dim0": 16})
    shrunk = ensure_layout_not_larger_than(layout, [4])
    assert shrunk.bases == {"register": [[1], [0]], "lane": [[2], [0]]}
    dropped = ensure_layout_not_larger_than(layout, [4], broadcast_registers=False)
    assert dropped.bases == {"register": [[1]], "lane": [[2], [0]]}
    assert ensure_layout_not_larger_than(layout, [16]) == layout


def test_remove_broadcast_registers_keeps_out_sizes():
    layout = LinearLayout({"register": [[0, 1], [0, 0], [1, 0]], "lane": [[0, 0]]}, {"dim0": 2, "dim1": 2})
    result = remove_broadcast_registers(layout)
    assert result.bases["register"] == [[0, 1], [1, 0]]
    assert result.bases["lane"] == [[0, 0]]
    assert result.out_dims == layout.out_dims
    assert remove_broadcast_registers(result) == result
    with pytest.raises(LayoutError, match=r"remove_broadcast_registers: layout must be a LinearLayout"):
        remove_broadcast_registers("not a layout")


def test_blog_001_cga_example():
    """Blog 001: CTAsPerCGA=[2,4], CTASplitNum=[2,4], CTAOrder=[1,0]; CTA (1, 1) is block b0b1 = 0b101."""
    cga = make_cga_layout(cga_layout_from_split_params([2, 4], [2, 4], [1, 0]), 2)
    assert cga.apply({"block": 0b101}) == {"dim0": 1, "dim1": 1}
    for block in range(8):
        assert cga.apply({"block": block}) == {"dim0": block >> 2, "dim1": block & 3}
    # CTAsPerCGA[0] = 8, CTASplitNum[0] = 2: the CTAs map to the tensor's blocks 0,1,0,1,0,1,0,1.
    repeated = make_cga_layout(cga_layout_from_split_params([8], [2], [0]), 1)
    assert [repeated.apply({"block": b})["dim0"] for b in range(8)] == [0, 1, 0, 1, 0, 1, 0, 1]


def test_split_params_round_trip_seeded():
    rng = random.Random(7)
    kinds = set()
    for _ in range(300):
        rank = rng.randint(1, 3)
        ctas = [2 ** rng.randint(0, 2) for _ in range(rank)]
        split = [c // 2 ** rng.randint(0, c.bit_length() - 1) for c in ctas]
        order = list(range(rank))
        rng.shuffle(order)
        bases = cga_layout_from_split_params(ctas, split, order)
        params = split_params_from_cga_layout(bases, rank)
        assert cga_layout_from_split_params(*params) == bases
        assert make_cga_layout(cga_layout_from_split_params(*params), rank) == make_cga_layout(bases, rank)
        kinds.add((rank, split != ctas))
    assert kinds == {(rank, partial) for rank in (1, 2, 3) for partial in (False, True)}  # whole and partial splits
    with pytest.raises(LayoutError, match=r"cga_layout: the split bases of a dim must be contiguous"):
        split_params_from_cga_layout([[0, 1], [1, 0], [0, 2]], 2)  # dim 1 split is not contiguous


def test_combine_cta_cga_with_shape_broadcasts_and_repeats():
    cta = LinearLayout.identity_1d(4, "register", "dim0")
    small = combine_cta_cga_with_shape(cta, [[1]], [4])
    assert small.bases == {"register": [[1], [0]], "block": [[2]]}
    large = combine_cta_cga_with_shape(cta, [[1]], [32])
    assert large.bases == {"register": [[1], [2], [4], [8]], "block": [[16]]}
    tiny = combine_cta_cga_with_shape(cta, [[1]], [1])
    assert tiny.bases == {"register": [[0], [0]], "block": [[0]]}


def test_shape_per_cta_json_cases():
    """DialectTest's getShapePerCTA cases (CTASplitNum aligned to the last dims), through cga_layout bases."""
    folder = unittests_dir()
    import json

    from linear_layouts.layouts.shared import shape_per_cta

    cases = json.loads((folder / "dialect_misc.json").read_text())["shape_per_cta"]
    assert len(cases) == 3
    for case in cases:
        shape, split = case["args"]["shape"], case["args"]["CTASplitNum"]
        split = ([1] * len(shape) + list(split))[-len(shape):]
        bases = cga_layout_from_split_params(split, split, list(reversed(range(len(shape)))))
        assert list(shape_per_cta(bases, shape)) == case["expected"], case["name"]


@pytest.mark.parametrize(
    "call, rule",
    [
        (lambda: check_order("order", [0, 0], 2), r"order must be a permutation of 0\.\.1"),
        (lambda: check_order("order", [0, 2], 2), r"order must be a permutation of 0\.\.1"),
        (lambda: check_order("order", [0], 2), r"order must have 2 entries \(the rank\)"),
        (lambda: check_shape([16, 24], 2), r"shape\[1\] must be a power of two"),
        (lambda: check_shape([16], 2), r"shape must have rank 2 \(the layout's rank\)"),
        (lambda: check_shape([0, 4]), r"shape\[0\] must be a power of two"),
        (lambda: check_shape([]), r"shape must have at least one dimension"),
        (lambda: check_shape("16x16"), r"shape must be a list of integers"),
        (lambda: check_shape([4.0, 4]), r"shape\[0\] must be an integer"),
        (lambda: check_cga_layout("cga_layout", [[3, 0]], 2),
         r"cga_layout\[0\] must be 0 or have a single non-zero entry"),
        (lambda: check_cga_layout("cga_layout", [[1, 1]], 2),
         r"cga_layout\[0\] must be 0 or have a single non-zero entry"),
        (lambda: check_cga_layout("cga_layout", [[1, 0], [1, 0]], 2),
         r"cga_layout\[1\] = \[1, 0\] repeats a basis of cga_layout"),
        (lambda: check_cga_layout("cga_layout", [[2, 0]], 2),
         r"cga_layout: the bases along dim 0 must be 1, 2, 4, \.\.\."),
        (lambda: check_cga_layout("cga_layout", [[1, 0, 0]], 2),
         r"cga_layout\[0\] must have one entry per tensor dimension \(2\)"),
        (lambda: check_cga_layout("cga_layout", [[-1, 0]], 2), r"cga_layout\[0\]\[0\] must be >= 0"),
        (lambda: cga_layout_from_split_params([2, 2], [4, 1], [1, 0]),
         r"cta_split_num\[0\] must divide ctas_per_cga\[0\]"),
        (lambda: cga_layout_from_split_params([3, 2], [1, 1], [1, 0]), r"ctas_per_cga\[0\] must be a power of two"),
    ],
)
def test_invalid_helper_arguments_raise_layout_error(call, rule):
    with pytest.raises(LayoutError, match=rule):
        call()
