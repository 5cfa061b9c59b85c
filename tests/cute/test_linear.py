"""CuTe layouts as LinearLayouts: the 1000-case differential against tensor-layouts' F2 matrices,
exhaustive checks against CuTe's own function, and the refusals of non-linear layouts."""

from __future__ import annotations

import random

import numpy as np
import pytest

from linear_layouts.core import f2
from linear_layouts.cute.algebra import composition
from linear_layouts.cute.layout import ComposedLayout, Layout, Swizzle, TVLayout, row_major
from linear_layouts.cute.linear import coordinate_to_offset, forward_columns, to_linear
from linear_layouts.core.errors import LayoutError

from . import random_cute as R

tl = pytest.importorskip("tensor_layouts")
from tensor_layouts.analysis import to_F2_matrix  # noqa: E402


def _tl(x):
    if isinstance(x, Layout):
        return tl.Layout(x.shape, x.stride)
    if isinstance(x, Swizzle):
        return tl.Swizzle(x.bits, x.base, x.shift)
    return tl.compose(_tl(x.outer), _tl(x.inner))


def _padded(m: np.ndarray, rows: int) -> np.ndarray:
    out = np.zeros((rows, m.shape[1]), dtype=int)
    out[: m.shape[0]] = m
    return out


def _coordinates(layout: Layout):
    """Every coordinate of the layout's domain as (1-D index, per-dim indices)."""
    sizes = [Layout(m).size for m in (layout.shape if isinstance(layout.shape, tuple) else (layout.shape,))]
    for i in range(layout.size):
        dims, rest = [], i
        for s in sizes:
            dims.append(rest % s)
            rest //= s
        yield i, dims


def test_differential_1000_random_swizzled_layouts_same_f2_matrix():
    """tensor-layouts' ``to_F2_matrix`` (coordinate bits colexicographic -> offset bits) equals ours on
    1000 random layouts with 1-2 swizzles (at least one of B >= 1) whose bits lie on the offsets."""
    rng = random.Random(2026)
    cases = 0
    while cases < 1000:
        ours = R.random_swizzled_layout(rng, 11, min_swizzles=1)
        if ours.outer.is_identity and not (isinstance(ours.inner, ComposedLayout) and not ours.inner.outer.is_identity):
            continue
        cases += 1
        theirs = np.array(to_F2_matrix(_tl(ours)), dtype=int)
        mine = coordinate_to_offset(ours).to_matrix().astype(int)
        rows = max(theirs.shape[0], mine.shape[0])
        assert theirs.shape[1] == mine.shape[1]
        assert (_padded(theirs, rows) == _padded(mine, rows)).all(), str(ours)


def test_matrix_is_cute_function_exhaustively():
    """apply(coordinate_to_offset(L)) == L(i) on every coordinate, swizzles anywhere (also past the
    layout's offsets and with negative shifts), and to_linear is its inverse when it is a bijection."""
    rng = random.Random(7)
    bijections = 0
    for _ in range(300):
        layout = R.random_swizzled_layout(rng, 8, within=rng.random() < 0.5)
        forward = coordinate_to_offset(layout)
        base = layout
        while isinstance(base, ComposedLayout):
            base = base.inner
        names = list(forward.in_dim_names)
        for i, dims in _coordinates(base):
            assert forward.apply(dict(zip(names, dims)))["offset"] == layout(i)
        try:
            shared = to_linear(layout)
        except LayoutError:
            continue
        bijections += 1
        for i, dims in _coordinates(base):
            assert list(shared.apply({"offset": layout(i)}).values()) == dims
    assert bijections >= 100


def test_tensor_layouts_drops_bits_that_a_negative_shift_pushes_past_the_cosize():
    """Pinned disagreement: for Sw<1,1,-4> o 4:1 tensor-layouts' own function sends 2 -> 34, ours too,
    but its ``to_F2_matrix`` keeps only the 2 rows of the inner cosize and loses bit 5."""
    layout = composition(Swizzle(1, 1, -4), Layout(4, 1))
    theirs = _tl(layout)
    assert theirs(2) == 34 == layout(2)
    assert to_F2_matrix(theirs) == [[1, 0], [0, 1]]
    assert coordinate_to_offset(layout).bases["dim0"] == [[1], [34]]


def test_cutlass_sm80_fp16_smem_atom():
    """CUTLASS's sgemm_sm80 smem atom: composition(Swizzle<3,3,3>, (8,(8,8)):(8,(1,64))) is a bijection
    of 512 halves; the 16-byte chunk of row r moves to chunk c ^ r."""
    layout = composition(Swizzle(3, 3, 3), Layout((8, (8, 8)), (8, (1, 64))))
    shared = to_linear(layout)
    assert shared.out_dims == {"dim0": 8, "dim1": 64}
    for r in range(8):
        for c in range(64):
            assert shared.apply({"offset": layout(r, c)}) == {"dim0": r, "dim1": c}


def test_forward_columns_layout_and_swizzle_chains():
    assert forward_columns(Layout((4, 8), (8, 1))) == ((4, 8), [[8, 16], [1, 2, 4]])
    assert forward_columns(Swizzle(1, 0, 2)) == ((8,), [[1, 2, 5]])
    chain = ComposedLayout(Swizzle(1, 0, 1), 0, Swizzle(1, 1, 1))
    assert forward_columns(chain) == ((8,), [[1, 3, 7]])
    outer = ComposedLayout(Layout((2, 4), (4, 1)), 0, Layout(8, 1))  # a layout applied to offsets
    assert forward_columns(outer) == ((8,), [[4, 1, 2]])


def test_thread_value_layout_is_distributed():
    tv = TVLayout(Layout(((4, 8), (2, 2)), ((32, 1), (16, 8))), (16, 8))
    L = to_linear(tv)
    assert list(L.in_dims) == ["register", "lane", "warp", "block"]
    for t in range(32):
        for v in range(4):
            assert tuple(L.apply({"register": v, "lane": t, "warp": 0, "block": 0}).values()) == tv.coordinate(t, v)
    warps = to_linear(TVLayout(Layout((128, 2), (2, 1)), (256,)))
    assert warps.in_dim_size("lane") == 32 and warps.bases["warp"] == [[64], [128]]
    broadcast = to_linear(TVLayout(Layout((64, 4), (0, 1)), (4,)))
    assert broadcast.bases["lane"] == [[0]] * 5 and broadcast.bases["warp"] == [[0]]


@pytest.mark.parametrize("layout, match", [
    (Layout((8, 6), (1, 8)), r"mode 1 = 6:8 .*: shape 6 is not a power of two"),
    (Layout((8, 8), (4, 1)), r"mode 1 = 8:1 .*overlap.*bit 2"),
    (Layout((8, (2, 4)), (8, (1, 1))), r"mode \(1,1\) = 4:1 .*overlap.*bit 0"),
    (Layout(4, 3), r"mode 0 = 4:3 .*overlap"),
    (Layout((8, 8), (-8, 1)), r"negative stride"),
    (ComposedLayout(Swizzle(1, 0, 1), 4, Layout(4, 1)), r"offset 4 is an affine shift"),
    (ComposedLayout(Layout(4, 1), 0, Layout(8, 1)), r"outer layout 4:1 \(size 4\).*up to 7"),
    (Layout((8, 8), (0, 1)), r"bit 0 of dim 0 maps to offset 0 \(stride 0"),
    (Layout((8, 8), (16, 1)), r"not a bijection of \[0, 64\) \(holes\)"),
])
def test_non_linear_layouts_are_refused_naming_the_mode(layout, match):
    with pytest.raises(LayoutError, match=match):
        to_linear(layout)


def test_linear_with_any_stride_when_columns_are_disjoint():
    """Strides need not be powers of two: (2,4):(3,4) never carries (3 = 0b11 beside 4, 8, ...)."""
    L = coordinate_to_offset(Layout((2, 4), (3, 4)))
    assert L.bases == {"dim0": [[3]], "dim1": [[4], [8]]}
    with pytest.raises(LayoutError, match="overlap"):
        coordinate_to_offset(Layout((2, 2), (3, 1)))


def test_row_major_is_triton_row_major_and_swizzles_are_invertible():
    from linear_layouts.layouts import row_major_shared

    L = to_linear(row_major((16, 32)))
    assert L.in_dims == {"offset": 512, "block": 1}
    assert L.sublayout(["offset"], ["dim0", "dim1"]) == row_major_shared([16, 32]).sublayout(["offset"], ["dim0", "dim1"])
    rng = random.Random(1)
    for _ in range(100):
        sw = R.random_swizzle(rng, 9)
        S = to_linear(composition(sw, row_major((16, 32))))
        assert f2.rank(S.flat_bases("offset")) == 9
