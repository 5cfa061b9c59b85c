"""Tests of catalog/tensor_memory.py: TensorMemoryLayout and TensorMemoryScalesLayout.

- every ``tensor_memory`` case and the ``TensorMemory_CTASplit`` property of conversions.json;
- differential against triton 3.9 (its result has no ``block`` in-dim: we compare ``row, col``).
"""

from __future__ import annotations

import random

import pytest

from linear_layouts import LayoutError
from linear_layouts.layouts import TensorMemoryLayout, TensorMemoryScalesLayout

from . import random_layouts as R
from .oracle import build_gluon, build_ours, cga_of_json, conversion_cases, layout_of_json, load_conversions, oracle_linear

TMEM_CASES = conversion_cases("tensor_memory")


def _of_json(params: dict) -> TensorMemoryLayout:
    return TensorMemoryLayout((params["blockM"], params["blockN"]), params["colStride"], cga_of_json(params),
                              params["twoCTAs"], params["fp4Padded"])


@pytest.mark.parametrize("case", TMEM_CASES, ids=lambda c: c["name"])
def test_triton_unittest_case(case):
    assert _of_json(case["params"]).to_linear(case["shape"]) == layout_of_json(case["expected"])


def test_cta_split_property():
    data = load_conversions()
    (prop,) = [p for p in data["properties"] if p["name"] == "TensorMemory_CTASplit"]
    lhs = _of_json(prop["lhs"]["params"]).to_linear(prop["lhs"]["shape"])
    inner, outer = prop["rhs_product"]
    assert lhs == _of_json(inner["params"]).to_linear(inner["shape"]) * layout_of_json(outer)
    assert len(TMEM_CASES) == 8


def test_scales_tile():
    layout = TensorMemoryScalesLayout().to_linear([128, 8])
    assert layout.bases["row"] == [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 0], [0, 0]]
    assert layout.bases["col"] == [[0, 1], [0, 2], [32, 0], [64, 0], [0, 4]]
    assert layout.in_dim_names == ("row", "col", "block")


def test_two_cta_m64_is_the_transpose_of_m128():
    layout = TensorMemoryLayout((64, 64), 1, [[1, 0]], two_ctas=True).to_linear([128, 64])
    assert layout.bases["row"][-1] == [0, 32]
    assert layout.bases["block"] == [[64, 0]]


def test_differential_against_triton():
    pytest.importorskip("triton")
    rng = random.Random(99)
    for _ in range(300):
        params, shape = R.random_tensor_memory(rng)
        ours = build_ours(params).to_linear(shape)
        theirs = oracle_linear(build_gluon(params), shape)
        assert ours.sublayout(["row", "col"], ["dim0", "dim1"]) == theirs, (params, shape)
        assert ours.out_dims == {"dim0": shape[0], "dim1": shape[1]}


#: Tensor-memory layouts whose CGA splits dim1 over 2 CTAs, asked for one column: Triton's result is 2 columns.
NARROWER_THAN_THE_SPLIT = [
    (dict(block=(64, 8), col_stride=1, cga_layout=[[0, 1]], two_ctas=False, fp4_padded=False), [64, 1]),
    (dict(block=(64, 1), col_stride=2, cga_layout=[[0, 1]], two_ctas=False, fp4_padded=False), [256, 1]),
    (dict(block=(64, 1), col_stride=2, cga_layout=[[1, 0], [0, 1]], two_ctas=True, fp4_padded=False), [128, 1]),
]


@pytest.mark.parametrize("params, shape", NARROWER_THAN_THE_SPLIT)
def test_the_oracle_reads_triton_s_own_shape(params, shape):
    """The oracle took a tensor-memory result's out sizes from the shape asked for ([.., 1]); Triton's result
    has its own ([.., 2]), which is ours too: the oracle now reads it from Triton's object and agrees."""
    from .oracle import oracle_raw

    gluon = build_gluon(("TensorMemoryLayout", params))
    raw = oracle_raw(gluon, shape)
    assert list(raw.shape) == [shape[0], 2]
    theirs = oracle_linear(gluon, shape)
    assert theirs.out_dims == {"dim0": shape[0], "dim1": 2}
    ours = build_ours(("TensorMemoryLayout", params)).to_linear(shape)
    assert ours.out_dims == theirs.out_dims
    assert ours.sublayout(["row", "col"], ["dim0", "dim1"]) == theirs


@pytest.mark.parametrize(
    "make, rule",
    [
        (lambda: TensorMemoryLayout((32, 64), 1), r"block\[0\] \(blockM\) must be 64 or 128"),
        (lambda: TensorMemoryLayout((128, 1024), 1), r"block\[1\] \(blockN\) must be a power of two <= 512"),
        (lambda: TensorMemoryLayout((128, 48), 1), r"block\[1\] \(blockN\) must be a power of two <= 512"),
        (lambda: TensorMemoryLayout((128, 64), 8), r"col_stride must be 1, 2 or 4"),
        (lambda: TensorMemoryLayout((128, 64), 2, fp4_padded=True),
         r"col_stride must be 1 for an fp4_padded layout"),
        (lambda: TensorMemoryLayout((128, 64), 1, two_ctas=True),
         r"cga_layout: a two_ctas layout requires the first CGA block"),
        (lambda: TensorMemoryLayout((128, 64), 1, [[0, 1]], two_ctas=True),
         r"cga_layout: a two_ctas layout requires the first CGA block"),
        (lambda: TensorMemoryLayout((64, 1), 1, [[1, 0]], two_ctas=True),
         r"block: a two_ctas layout with blockM = 64 needs blockN \* col_stride >= 2"),
        (lambda: TensorMemoryLayout((128,), 1), r"block must have 2 entries \(the rank\)"),
        (lambda: TensorMemoryLayout((128, 64), 1, two_ctas="yes"), r"two_ctas must be a bool"),
        (lambda: TensorMemoryLayout((128, 64), 1).to_linear([64, 32]), r"shape: the rows per CTA"),
        (lambda: TensorMemoryLayout((128, 64), 1, [[1, 0]]).to_linear([128, 64]), r"shape: the rows per CTA"),
        (lambda: TensorMemoryLayout((128, 64), 1).to_linear([128]), r"shape must have rank 2 \(the layout's rank\)"),
        (lambda: TensorMemoryLayout((64, 64), 1, [[1, 0]], two_ctas=True).to_linear([128, 1]),
         r"shape: a two_ctas layout with blockM = 64 needs at least 2"),
        (lambda: TensorMemoryScalesLayout([[3, 0]]), r"cga_layout\[0\] must be 0 or have a single non-zero entry"),
        (lambda: TensorMemoryScalesLayout().to_linear([128, 8, 2]), r"shape must have rank 2 \(the layout's rank\)"),
    ],
)
def test_invalid_raise(make, rule):
    with pytest.raises(LayoutError, match=rule):
        make()
