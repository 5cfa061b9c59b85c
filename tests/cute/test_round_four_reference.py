"""Round four against pycute (NVIDIA's Python CuTe): layouts without leaves, slicing a ComposedLayout, and the
Swizzle's arguments. Each test failed before its fix; pycute is the reference where it computes, CuTe 4.2's C++
(``layout_composed.hpp``) where pycute raises."""

from __future__ import annotations

import random

import numpy as np
import pytest

from linear_layouts.core.errors import LayoutError
from linear_layouts.cute import algebra as A
from linear_layouts.cute.layout import ComposedLayout, Layout, Swizzle

try:
    from . import random_cute as R
except ImportError:  # run as a script
    import random_cute as R  # type: ignore[no-redef]

P = pytest.importorskip("pycute")

#: Layouts with no leaf mode: each is the function ``0 -> 0`` on a domain of size 1.
EMPTY = [((), ()), (((),), ((),)), (((), ((),)), ((), ((),)))]


def ref(L: Layout):
    return P.Layout(L.shape, L.stride)


def same(o: Layout, p) -> bool:
    return o.shape == p.shape and o.stride == p.stride


@pytest.mark.parametrize("shape, stride", EMPTY)
def test_a_layout_without_leaves_is_one_to_zero(shape, stride):
    """``coalesce``, ``filter``, ``complement`` and both inverses of ``():()`` as pycute's (they raised
    IndexError: the flat modes were indexed at ``[-1]``)."""
    L = Layout(shape, stride)
    p = ref(L)
    assert (L.size, L.rank, L(0)) == (P.size(p), len(p), 0)
    assert same(A.coalesce(L), P.coalesce(p)) and str(A.coalesce(L)) == "1:0"
    assert same(A.filter(L), P.filter(p))
    assert same(A.right_inverse(L), P.right_inverse(p))
    assert same(A.left_inverse(L), P.left_inverse(p))
    for cotarget in (1, 8, 24):
        assert same(A.complement(L, cotarget), P.complement(p, cotarget))


@pytest.mark.parametrize("shape, stride", EMPTY)
def test_operations_on_a_layout_without_leaves_compute(shape, stride):
    """The divides, products and compositions of ``():()`` are the functions CuTe's definitions give (pycute's
    where it computes); they raised IndexError or an unrelated make_layout error."""
    E, B = Layout(shape, stride), Layout((2, 3), (1, 2))
    assert A.composition(B, E) == E  # B's modes distribute over E's: none
    assert A.make_layout() == Layout((), ())
    r = A.composition(E, B)  # E extends its last (size-1) mode with stride 0: every offset is 0
    assert r.shape == B.shape and all(r(i) == 0 for i in range(B.size))
    divided = A.logical_divide(E, Layout(4, 1))
    assert divided.size == P.size(P.logical_divide(ref(E), P.Layout(4, 1))) and all(
        divided(i) == 0 for i in range(divided.size))
    for name in ("zipped_divide", "tiled_divide", "flat_divide"):
        assert getattr(A, name)(E, Layout(4, 1)).size == 4
    product = A.logical_product(E, Layout(4, 1))
    assert [product(i) for i in range(4)] == [0, 1, 2, 3]
    assert A.logical_product(Layout(4, 1), E).size == 4
    for name in ("zipped_product", "tiled_product", "flat_product"):
        assert getattr(A, name)(E, Layout(4, 1)).size == 4
    for name in ("blocked_product", "raked_product"):  # rank 1 as a 1-tuple: CuTe's zip needs like ranks
        assert getattr(A, name)(E, Layout((4,), (1,))).size == 4


def random_empty_tree(rng: random.Random, depth: int = 0):
    """A tuple nested up to three levels with no int in it: ``()``, ``((),)``, ``((), ((),))``..."""
    return tuple(random_empty_tree(rng, depth + 1) for _ in range(rng.randint(0, 2) if depth < 3 else 0))


def test_layouts_without_leaves_against_pycute():
    """Seeded: random leafless layouts, and B composed with them, as pycute's; also A ∘ E for random A."""
    rng = random.Random("round-four-empty")
    for _ in range(300):
        t = random_empty_tree(rng)
        E = Layout(t, t)
        p = ref(E)
        for name in ("coalesce", "filter", "right_inverse", "left_inverse"):
            assert same(getattr(A, name)(E), getattr(P, name)(p)), (name, str(E))
        cotarget = rng.choice([1, 2, 8, 24, 100])
        assert same(A.complement(E, cotarget), P.complement(p, cotarget)), str(E)
        B = R.random_int_layout(rng, max_size=256)
        r, q = A.composition(E, B), P.composition(p, ref(B))
        assert r.size == P.size(q) and all(r(i) == q(i) == 0 for i in range(B.size)), (str(E), str(B))


def random_coordinate(rng: random.Random, shape):
    if isinstance(shape, tuple):
        return tuple(random_coordinate(rng, s) for s in shape)
    return None if rng.random() < 0.4 else rng.randrange(shape)


def zeroed(crd):
    """The coordinate with every None as 0: where CuTe's slice starts."""
    return tuple(zeroed(c) for c in crd) if isinstance(crd, tuple) else (0 if crd is None else crd)


def full_coordinate(sliced, fill: list):
    """``sliced`` with its None leaves (whole modes) replaced, in order, by the coordinates in ``fill``."""
    if isinstance(sliced, tuple):
        return tuple(full_coordinate(c, fill) for c in sliced)
    return fill.pop(0) if sliced is None else sliced


def test_composed_layout_slices_as_cute():
    """``(Sw o k o L)(_, j)`` is CuTe's ``slice``: ``Sw o (k + L(0, j)) o L(_, j)`` (``layout_composed.hpp``); it
    raised TypeError (pycute's ComposedLayout raises the same). Each element of the slice is pycute's composed
    layout at the full coordinate."""
    rng = random.Random("round-four-composed-slice")
    checked = 0
    for _ in range(800):
        L = R.random_int_layout(rng)
        if not isinstance(L.shape, tuple):
            continue
        sw = R.random_swizzle(rng, 10, within=False)
        offset = rng.choice([0, 0, 3, 16])
        C = ComposedLayout(sw, offset, L)
        pc = P.ComposedLayout(P.Swizzle(sw.bits, sw.base, sw.shift), offset, ref(L))
        crd = random_coordinate(rng, L.shape)
        if None not in [c for c in R._flatten(crd)]:
            continue
        sub = C(*crd) if len(crd) > 1 else C(crd)
        inner = L(*crd) if len(crd) > 1 else L(crd)
        assert sub == ComposedLayout(sw, offset + L(zeroed(crd)), inner) == A.slice(crd, C)
        whole = [m for c, m in zip(R._flatten(crd), R._flatten(L.shape)) if c is None]
        for i in range(min(sub.size, 64)):
            inner = P.idx2crd(i, tuple(whole))
            fill = list(inner) if isinstance(inner, tuple) else [inner]
            assert sub(i) == pc(full_coordinate(crd, fill)), (str(C), crd, i)
        checked += 1
    assert checked > 150


def test_composed_layout_slices_nested_composition():
    """A slice through two compositions moves the offset into the innermost one, as CuTe's ``slice_and_offset``."""
    L = Layout((4, 8), (8, 1))
    C = ComposedLayout(Swizzle(1, 0, 2), 0, ComposedLayout(Swizzle(2, 1, 3), 5, L))
    sub = C(None, 3)
    assert sub == ComposedLayout(Swizzle(1, 0, 2), 0, ComposedLayout(Swizzle(2, 1, 3), 5 + 3, L(None, 3)))
    assert [sub(i) for i in range(4)] == [C(i, 3) for i in range(4)]


def test_coordinates_for_a_swizzle_raise_layout_error():
    """A ComposedLayout whose inner function is a Swizzle takes an offset, not coordinates: LayoutError (it
    raised TypeError); and it has no modes to slice."""
    C = ComposedLayout(Layout(8, 1), 0, Swizzle(1, 0, 1))
    assert [C(i) for i in range(4)] == [0, 1, 3, 2]
    with pytest.raises(LayoutError, match="takes one offset"):
        C(1, 2)
    with pytest.raises(LayoutError, match="takes one offset"):
        Swizzle(1, 0, 1)(1, 2)
    with pytest.raises(LayoutError, match="no modes to slice"):
        C(None)


def test_swizzle_takes_numpy_integers_as_pycute():
    """A Swizzle's parameters and offset may be NumPy integers, as a Layout's shape (and as pycute takes them);
    they raised LayoutError "must be an int"."""
    rng = random.Random("round-four-numpy-swizzle")
    for _ in range(200):
        sw = R.random_swizzle(rng, 12, within=False)
        ours = Swizzle(np.int64(sw.bits), np.int32(sw.base), np.int64(sw.shift))
        theirs = P.Swizzle(sw.bits, sw.base, sw.shift)
        assert ours == sw and type(ours.bits) is int
        for x in rng.sample(range(1 << 14), 16):
            assert ours(np.int64(x)) == theirs(x) == ComposedLayout(ours, np.int64(0), Layout(1 << 14, 1))(x)


def test_wide_layouts_invert_and_complement_in_n_log_n():
    """20000 modes of distinct strides: right_inverse, left_inverse and complement as pycute's, in seconds (the
    exchange sort and the prefix products were quadratic: minutes; complement's message raised ValueError)."""
    import signal

    n = 20000
    L = Layout(tuple([2] * n), tuple(1 << i for i in reversed(range(n))))
    p = ref(L)

    def too_slow(*_):
        raise TimeoutError("quadratic in the number of modes")

    previous = signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(30)
    try:
        right = A.right_inverse(L)
        left = A.left_inverse(L)
        rest = A.complement(L, 1 << (n + 3))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert same(right, P.right_inverse(p))
    assert same(rest, P.complement(p, 1 << (n + 3))) and str(rest) == f"8:{hex(1 << n)}"
    for i in [0, 1, 5, (1 << n) - 1, 3 << (n - 2)]:
        assert L(right(i)) == i and left(L(i)) == i


def test_huge_integers_print_in_hex_and_refuse_with_layout_error():
    """Past Python's 4300 decimal digits ``str(int)`` raises ValueError: a Layout prints such an int in hex,
    and the LayoutErrors that quote it are raised (ValueError escaped before)."""
    big = 10 ** 5000
    assert str(Layout(2, big)) == f"2:{hex(big)}"
    with pytest.raises(LayoutError, match="leaves must be >= 0, got an int of"):
        Layout(-big)
    with pytest.raises(LayoutError, match="Non-injective Layout detected in complement"):
        A.complement(Layout((2, 2), (big, big)))
    with pytest.raises(LayoutError, match="refused here|Divisibility"):
        A.composition(Layout((3, 5), (big, 1)), Layout(4, 2))


def test_a_tied_sort_past_its_limit_is_refused_not_slow():
    tied = Layout((2,) * (A.MAX_TIED_SORT_MODES + 1), (1,) * (A.MAX_TIED_SORT_MODES + 1))
    for op, name in ((A.right_inverse, "right_inverse"), (A.left_inverse, "left_inverse")):
        with pytest.raises(LayoutError, match=f"{name}: layout: 1025 modes, some of equal strides"):
            op(tied)
    at_limit = Layout((2,) * 64, (1,) * 64)  # ties under the limit: CuTe's order, as pycute's
    assert str(A.right_inverse(at_limit)) == str(P.right_inverse(ref(at_limit)))


def test_the_check_of_a_suspect_composition_has_one_budget_for_all_of_b():
    a = Layout((8, 5, 3), (-8, -32, -38))  # B's mode n:-20 crosses A's modes out of step, yet CuTe's answer holds
    one = A.composition(a, Layout(600000, -20))
    k = np.arange(0, 600000, 997, dtype=object)
    assert [one(int(i)) for i in k] == [a(int(i) * -20) for i in k]
    with pytest.raises(LayoutError, match="do not divide one another"):  # 3 x 600000 elements: over MAX_ELEMENTS
        A.composition(a, Layout((600000, 600000, 600000), (-20, -20, -20)))
