"""CuTe's values with CuTe's semantics: differential against tensor-layouts (the oracle) and CuTe's rules."""

from __future__ import annotations

import random

import pytest

from linear_layouts.cute import int_tuple
from linear_layouts.cute.algebra import composition
from linear_layouts.cute.layout import ComposedLayout, Layout, Swizzle, TVLayout, column_major, row_major
from linear_layouts.core.errors import LayoutError

from . import random_cute as R

tl = pytest.importorskip("tensor_layouts")

def _random_any_layout(rng):
    """Shapes and strides of any size (not only powers of two), nested, any sign of stride."""
    def tup(depth):
        if depth > 2 or rng.random() < 0.5:
            return rng.randint(1, 6), rng.randint(-3, 40)
        n = rng.randint(1, 3)
        pairs = [tup(depth + 1) for _ in range(n)]
        return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
    shape, stride = tup(0)
    return shape, stride


def test_layout_call_matches_tensor_layouts_on_any_layout():
    rng = random.Random(16)
    for _ in range(300):
        shape, stride = _random_any_layout(rng)
        ours, theirs = Layout(shape, stride), tl.Layout(shape, stride)
        assert ours.size == tl.size(theirs)
        for i in rng.sample(range(ours.size), min(ours.size, 64)):
            assert ours(i) == theirs(i)
        assert str(ours).replace(" ", "") == str(theirs).replace(" ", "")


def test_coordinates_are_colexicographic():
    L = Layout((4, (2, 4)))
    assert L.stride == (1, (4, 8))
    assert int_tuple.idx2crd(13, (4, (2, 4))) == (1, (1, 1))
    assert [L(i) for i in range(L.size)] == list(range(32))
    assert L(1, (1, 1)) == 13 and L((1, 5)) == 21  # an int for a tuple mode is split colexicographically
    assert row_major((2, 3, 4)).stride == (12, 4, 1) and column_major((2, 3, 4)).stride == (1, 2, 6)
    assert Layout((4, 8), (1, 4))(4 * 8 + 1) == 33  # past the end, the last mode takes the rest (CuTe)


def test_swizzle_matches_tensor_layouts_and_cute_rules():
    for b in range(0, 4):
        for m in range(0, 4):
            for s in [x for x in range(-6, 7) if abs(x) >= b]:
                ours, theirs = Swizzle(b, m, s), tl.Swizzle(b, m, s)
                assert (ours.yyy_mask, ours.zzz_mask) == (theirs.yyy_msk, theirs.zzz_msk)
                assert all(ours(x) == theirs(x) for x in range(1 << 10))
                assert all(ours(ours(x)) == x for x in range(1 << 10))  # an involution
    assert str(Swizzle(3, 4, 3)) == "Sw<3,4,3>"
    with pytest.raises(LayoutError, match=r"\|S\| must be >= B"):
        Swizzle(3, 4, 2)
    with pytest.raises(LayoutError, match="B and M must be >= 0"):
        Swizzle(1, -1, 2)
    with pytest.raises(LayoutError, match="must be an int"):
        Swizzle(1.0, 0, 2)


def test_composition_merges_like_cute_and_nests_otherwise():
    assert composition(Swizzle(1, 0, 2), Swizzle(1, 1, 2)) == Swizzle(2, 0, 2)
    # different shifts: CuTe cannot merge; the composition nests and stays the function a(b(x))
    a, b = Swizzle(1, 0, 3), Swizzle(2, 1, 4)
    c = composition(a, b)
    assert isinstance(c, ComposedLayout) and all(c(x) == a(b(x)) for x in range(256))
    # chained bits (Sw<1,0,1> after Sw<1,1,1>): merging would be Sw<2,0,1>, which CuTe refuses
    c = composition(Swizzle(1, 0, 1), Swizzle(1, 1, 1))
    assert isinstance(c, ComposedLayout) and [c(x) for x in range(8)] == [Swizzle(1, 0, 1)(Swizzle(1, 1, 1)(x)) for x in range(8)]
    # a swizzle that undoes the outer swizzle of a composed layout leaves the layout
    L = Layout((8, 8), (8, 1))
    assert composition(Swizzle(3, 0, 3), composition(Swizzle(3, 0, 3), L)) == L
    rng = random.Random(3)
    for _ in range(500):  # every merge is the function composition
        x, y = R.random_swizzle(rng, 10, within=False), R.random_swizzle(rng, 10, within=False)
        z = composition(x, y)
        assert all(z(v) == x(y(v)) for v in rng.sample(range(1 << 16), 64))
    with pytest.raises(LayoutError, match="composition: a must be"):
        composition(3, L)


def test_composed_layout_evaluates_like_tensor_layouts():
    rng = random.Random(5)
    for _ in range(200):
        ours = R.random_swizzled_layout(rng, 8, within=False)
        theirs = _to_tensor_layouts(ours)
        inner = ours
        while isinstance(inner, ComposedLayout):
            inner = inner.inner
        for i in rng.sample(range(inner.size), min(inner.size, 64)):
            assert ours(i) == theirs(i)


def _to_tensor_layouts(x):
    if isinstance(x, Layout):
        return tl.Layout(x.shape, x.stride)
    if isinstance(x, Swizzle):
        return tl.Swizzle(x.bits, x.base, x.shift)
    return tl.compose(_to_tensor_layouts(x.outer), _to_tensor_layouts(x.inner))


def test_values_are_immutable_and_checked():
    L = Layout([8, [2, 4]], [8, [1, 2]])
    assert L.shape == (8, (2, 4)) and hash(L) == hash(Layout((8, (2, 4)), (8, (1, 2))))
    with pytest.raises(AttributeError, match=r"cannot assign to field 'shape'"):
        L.shape = 4  # type: ignore[misc]
    with pytest.raises(LayoutError, match="not congruent"):
        Layout((8, 4), (1,))
    with pytest.raises(LayoutError, match="leaves must be >= 0"):
        Layout((8, -1))
    assert Layout((8, 0)).size == 0  # a size-0 mode, as pycute and CuTe take it
    with pytest.raises(LayoutError, match="leaves must be ints"):
        Layout((8, "4"))
    with pytest.raises(LayoutError, match="nested deeper"):
        deep = 1
        for _ in range(20):
            deep = (deep,)
        Layout(deep)
    with pytest.raises(LayoutError, match="rank 2"):
        TVLayout(Layout(32), (32,))
    with pytest.raises(LayoutError, match="must be a Layout, Swizzle or ComposedLayout"):
        ComposedLayout(Swizzle(1, 0, 1), 0, "8:1")
