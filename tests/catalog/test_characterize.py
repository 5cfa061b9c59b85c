"""Tests of catalog/characterize.py: Def. 4.10 / 4.14 characterizations and the mma swizzle of
Def. 4.11 with Prop. 4.12's matrix structure."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.layouts.characterize import (
    is_distributed_layout,
    is_memory_layout,
    mma_swizzle_layout,
    mma_swizzle_offset,
    mma_swizzle_rows,
)

from . import random_layouts as R
from .oracle import build_ours

SWIZZLES = [
    (rows, cols, vec, per_phase, max_phase)
    for rows, cols in [(8, 8), (16, 32), (32, 64), (4, 128), (64, 16)]
    for vec, per_phase, max_phase in [(1, 1, 8), (2, 2, 4), (4, 1, 8), (8, 4, 2), (8, 1, 16), (2, 1, 1)]
]


@pytest.mark.parametrize("rows,cols,vec,per_phase,max_phase", SWIZZLES)
def test_prop_4_12_matrix_structure(rows, cols, vec, per_phase, max_phase):
    """[[I_n, C], [0, I_m]] with C's column i = c_i = vec * (2^i / per_phase mod max_phase) mod 2^n."""
    layout = mma_swizzle_layout(rows, cols, vec=vec, per_phase=per_phase, max_phase=max_phase)
    n, m = cols.bit_length() - 1, rows.bit_length() - 1
    matrix = layout.transpose_outs(["dim1", "dim0"]).to_matrix()  # out bits: j first, then i
    assert matrix.shape == (n + m, n + m)
    assert np.array_equal(matrix[:n, :n], np.eye(n, dtype=np.uint8))
    assert np.array_equal(matrix[n:, :n], np.zeros((m, n), dtype=np.uint8))
    assert np.array_equal(matrix[n:, n:], np.eye(m, dtype=np.uint8))
    rows_c = mma_swizzle_rows(rows, cols, vec=vec, per_phase=per_phase, max_phase=max_phase)
    for i, c in enumerate(rows_c):
        assert c == (vec * ((2**i // per_phase) % max_phase)) % 2**n
        assert [int(b) for b in matrix[:n, n + i]] == [(c >> k) & 1 for k in range(n)]
    assert is_memory_layout(layout)
    assert is_distributed_layout(layout) == (not any(rows_c))


@pytest.mark.parametrize("rows,cols,vec,per_phase,max_phase", SWIZZLES[::3])
def test_mma_swizzle_layout_inverts_def_4_11(rows, cols, vec, per_phase, max_phase):
    layout = mma_swizzle_layout(rows, cols, vec=vec, per_phase=per_phase, max_phase=max_phase)
    offsets = set()
    for i, j in itertools.product(range(rows), range(cols)):
        offset = mma_swizzle_offset(i, j, cols=cols, vec=vec, per_phase=per_phase, max_phase=max_phase)
        offsets.add(offset)
        assert layout.apply({"offset": offset}) == {"dim0": i, "dim1": j}
    assert offsets == set(range(rows * cols))  # a bijection onto the tile's offsets


def test_catalog_distributed_layouts_are_distributed():
    rng = random.Random(3)
    generators = [R.random_blocked, R.random_nvmma, R.random_dot_operand, R.random_slice, R.random_distributed_linear]
    for k in range(200):
        params = generators[k % len(generators)](rng)
        layout = build_ours(params).to_linear(R.random_shape(rng, R.rank_of(params)))
        assert is_distributed_layout(layout), params
        assert not is_memory_layout(layout) or layout.is_invertible()


def test_counterexamples():
    two_bits = LinearLayout({"register": [[1, 1]], "lane": [[1, 0]]}, {"dim0": 2, "dim1": 2})
    assert not is_distributed_layout(two_bits)
    assert is_memory_layout(two_bits)
    repeated = LinearLayout({"register": [[1]], "lane": [[1], [2]]}, {"dim0": 4})
    assert not is_distributed_layout(repeated)
    assert not is_memory_layout(repeated)  # not injective
    not_onto = LinearLayout({"register": [[1]]}, {"dim0": 4}, require_surjective=False)
    assert not is_distributed_layout(not_onto)
    three_bits = LinearLayout({"offset": [[1, 0, 0], [1, 1, 1], [0, 0, 1]]}, {"dim0": 2, "dim1": 2, "dim2": 2})
    assert three_bits.is_invertible() and not is_memory_layout(three_bits)
    with pytest.raises(LayoutError, match=r"is_distributed_layout: layout must be a LinearLayout"):
        is_distributed_layout([[1, 0]])
    for bad in [dict(vec=3, per_phase=1, max_phase=4), dict(vec=2, per_phase=0, max_phase=4),
                dict(vec=2, per_phase=1, max_phase=0)]:
        wrong = next(name for name, value in bad.items() if value & (value - 1) or value == 0)
        with pytest.raises(LayoutError, match=rf"^{wrong} must be a power of two"):
            mma_swizzle_layout(8, 8, **bad)
    with pytest.raises(LayoutError, match=r"j must be < cols \(8\)"):
        mma_swizzle_offset(0, 8, cols=8, vec=2, per_phase=1, max_phase=4)


def test_property_blocked_layouts_are_distributed_and_fit_the_shape():
    """Prop. 4.6 + Def. 4.10 (hypothesis): every blocked layout, on every shape, is a distributed layout
    whose out sizes are the shape and which holds every element (surjective)."""
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies

    @hypothesis.settings(max_examples=150, deadline=None, derandomize=True)
    @hypothesis.given(st.integers(0, 2**32 - 1))
    def check(seed):
        rng = random.Random(seed)
        params = R.random_blocked(rng)
        shape = R.random_shape(rng, R.rank_of(params))
        layout = build_ours(params).to_linear(shape)
        assert list(layout.out_dims.values()) == shape
        assert is_distributed_layout(layout)
        assert layout.in_dim_names == ("register", "lane", "warp", "block")

    check()
