"""The F2 view of CuTe's algebra: on layouts of power-of-two modes whose offsets never carry (each
coordinate bit lands on its own offset bit), every operation is an F2-linear map, and CuTe's answer is
the F2 one computed with the package's own routines (``f2``, ``to_linear``, ``coordinate_to_offset``).
"""

from __future__ import annotations

import random

from linear_layouts.core import f2
from linear_layouts.cute import algebra as A
from linear_layouts.cute.layout import Layout
from linear_layouts.cute.linear import coordinate_to_offset, forward_columns, to_linear

from . import random_cute as R

CASES = 300


def columns(layout: Layout) -> list[int]:
    """The offset of each coordinate bit, coordinate bits in CuTe's 1-D (colexicographic) order."""
    return [c for mode in forward_columns(layout)[1] for c in mode]


def odd_unit_stride(layout: Layout) -> bool:
    """A size-1 mode whose stride is no power of two: CuTe's stride divisibility condition holds it to
    account even though it selects nothing, so such a B is refused."""
    return any(s == 1 and d & (d - 1) for s, d in zip(*A._flat(layout)))


def linear_layouts(seed: str, **kwargs):
    rng = random.Random(seed)
    for _ in range(CASES):
        yield R.random_linear_layout(rng, **kwargs)


def test_complement_is_the_unit_complement_of_the_image():
    """``complement(L, 2**n)``: the offset bits L's image misses, ascending -- ``f2.complement`` of L's
    columns in F2^n (unit vectors taken from bit 0 up)."""
    for L, n in linear_layouts("f2-complement"):
        assert columns(A.complement(L, 1 << n)) == f2.complement([c for c in columns(L) if c], n)


def test_right_inverse_of_a_bijection_is_its_linear_layout():
    """For L a bijection of ``[0, 2**n)``, ``right_inverse(L)`` sends offset ``2**j`` to the coordinate that
    ``to_linear(L)`` (offset -> coordinate, the F2 inverse) gives, packed colexicographically."""
    for L, n in linear_layouts("f2-right-inverse", broadcast=False, holes=False):
        inverse = A.right_inverse(L)
        assert [inverse(1 << j) for j in range(n)] == list(to_linear(L).flat_bases("offset"))
        assert columns(inverse) == f2.inverse(columns(L))


def test_left_inverse_undoes_each_column():
    """``left_inverse(L)`` sends each column of L back to its coordinate bit, and so (L being F2-linear)
    every offset of L back to its coordinate: on L's image it is the F2 inverse (with holes it is not linear
    off the image: a hole bit carries into the next coordinate)."""
    for L, n in linear_layouts("f2-left-inverse", broadcast=False):
        inverse = A.left_inverse(L)
        assert all(inverse(c) == 1 << j for j, c in enumerate(columns(L)))
        assert all(inverse(L(i)) == i for i in range(L.size))
        if L.cosize == L.size:  # no holes: the whole map is the F2 inverse
            assert columns(inverse) == f2.inverse(columns(L))


def test_composition_is_the_f2_composition():
    """``A ∘ B`` on B's coordinate bits: A's columns applied to B's (``f2.apply``), B inside A's size."""
    rng = random.Random("f2-composition")
    for _ in range(CASES):
        a, n = R.random_linear_layout(rng, broadcast=False, holes=False)
        b, m = R.random_linear_layout(rng, max_bits=n, broadcast=rng.random() < 0.5)
        if m > n or odd_unit_stride(b):
            continue
        assert columns(A.composition(a, b)) == [f2.apply(columns(a), c) for c in columns(b)]


def test_divide_and_product_are_f2_compositions():
    """``logical_divide(A, B) = A ∘ (B, B*)`` and ``logical_product(A, B) = (A, A* ∘ B)`` with the unit
    complements: their columns, and their LinearLayouts (``coordinate_to_offset``), are the F2 ones."""
    rng = random.Random("f2-divide")
    for _ in range(CASES):
        a, n = R.random_linear_layout(rng, broadcast=False, holes=False)
        b, m = R.random_linear_layout(rng, max_bits=n, broadcast=False)
        if m > n or odd_unit_stride(a) or odd_unit_stride(b):
            continue
        rest = [1 << i for i in range(n) if not (1 << i) & sum(columns(b))]
        assert columns(A.logical_divide(a, b)) == [f2.apply(columns(a), c) for c in columns(b) + rest]
        product, k = A.logical_product(b, a), len(columns(b))
        free = f2.complement(columns(b), k + n)  # b's missing offset bits below size(b) * cosize(a), ascending
        assert columns(product) == columns(b) + [f2.apply(free, c) for c in columns(a)]
        assert coordinate_to_offset(product).flat_bases("dim1") == tuple(f2.apply(free, c) for c in columns(a))
