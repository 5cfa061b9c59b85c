"""Layouts with a size-0 mode (``0:1``, ``(4,0):(1,4)``, ``((2,0),3)``) against pycute (NVIDIA's Python CuTe),
which takes them: every operation computes what pycute computes, and where pycute raises (mostly a division by
the 0) ours raises a LayoutError that names the argument and the rule. Every test here failed before, when a
Layout refused a size-0 leaf.

The exact comparisons draw shapes of powers of two (and 0) and strides of powers of two (and 0), and a layout to
be complemented without overlapping modes: there the module's CuTe 4.2 rules and pycute agree on layouts without
a 0 (divisibility conditions, overlapping modes, trailing size-1 modes), so every difference would be one of size
0. The wider draw (sizes 1-12) tells the two apart only by those rules; with negative strides (where pycute's floor
divisions differ from C++'s) it checks that nothing but a LayoutError escapes.
"""

from __future__ import annotations

import random
import traceback
from typing import Any, Callable

import pytest

from linear_layouts.core.errors import LayoutError
from linear_layouts.cute import algebra as A
from linear_layouts.cute.int_tuple import idx2crd
from linear_layouts.cute.layout import ComposedLayout, Layout, Swizzle, TVLayout, row_major
from linear_layouts.cute.linear import coordinate_to_offset, to_linear
from linear_layouts.cute.parse import parse_cute
from linear_layouts.cute.source import to_cpp, to_cute_dsl, to_pycute, to_text

P = pytest.importorskip("pycute")

CASES = 400  #: seeded draws per test


# -- seeded draws ----------------------------------------------------------------------------------------


def random_shape(rng: random.Random, sizes: tuple[int, ...], depth: int = 0) -> Any:
    """1-3 modes nested up to two levels (35% a tuple at each level), leaves from ``sizes``."""
    if depth < 2 and rng.random() < 0.35:
        return tuple(random_shape(rng, sizes, depth + 1) for _ in range(rng.randint(1, 3)))
    return rng.choice(sizes)


def leaves(t: Any) -> list[int]:
    return [x for e in t for x in leaves(e)] if isinstance(t, tuple) else [t]


def like(t: Any, values: list[int]) -> Any:
    """``values`` in order at the leaves of ``t``."""
    it = iter(values)

    def walk(x: Any) -> Any:
        return tuple(walk(e) for e in x) if isinstance(x, tuple) else next(it)
    return walk(t)


def random_layout(rng: random.Random, *, zeros: int = 1, exact: bool = True, injective: bool = False) -> Layout:
    """A layout with ``zeros`` (at most; at least one when ``zeros``) size-0 leaves.

    ``exact``: sizes 2, 4, 8 and strides 0 or powers of two; else sizes 1-12 and strides -4..24 (unless
    ``injective``).
    ``injective``: compact strides in a random order with gaps, no two modes overlapping; a size-0 leaf gets
    stride 0 half the time (then pycute's complement takes it)."""
    shape = random_shape(rng, (2, 4, 8) if exact else (1, 2, 3, 4, 5, 6, 8, 12))
    sizes = leaves(shape)
    if zeros:
        for i in rng.sample(range(len(sizes)), rng.randint(1, min(zeros, len(sizes)))):
            sizes[i] = 0
    strides = [0] * len(sizes)
    if injective:
        current = 1
        for i in rng.sample(range(len(sizes)), len(sizes)):
            if sizes[i] == 0 and rng.random() < 0.5:
                continue
            current *= rng.choice([1, 1, 2])
            strides[i] = current
            current *= max(sizes[i], 1)
    elif exact:
        strides = [rng.choice([0, 1, 2, 4, 8, 16, 32, 64]) for _ in sizes]
    else:
        strides = [rng.choice([-4, -1, 0, 0, 1, 2, 3, 4, 6, 8, 12, 16, 24]) for _ in sizes]
    return Layout(like(shape, sizes), like(shape, strides))


def random_tiler(rng: random.Random, layout: Layout, *, ints: bool = True, nones: bool = True) -> Any:
    """A tuple tiler, one entry per mode of ``layout``: an injective layout (a size-0 one a third of the time),
    an int (0 included) or None."""
    out: list[Any] = []
    for _ in range(layout.rank):
        k = rng.random()
        if nones and k < 0.1:
            out.append(None)
        elif ints and k < 0.35:
            out.append(rng.choice([0, 2, 4, 8]))
        else:
            out.append(random_layout(rng, zeros=1 if rng.random() < 0.35 else 0, injective=True))
    return tuple(out)


# -- pycute as the reference -----------------------------------------------------------------------------


def ref(x: Any) -> Any:
    """Our value (a Layout, or a tiler of them) as pycute's."""
    if isinstance(x, tuple):
        return tuple(ref(e) for e in x)
    return P.Layout(x.shape, x.stride) if isinstance(x, Layout) else x


def ours(f: Callable, *args: Any) -> tuple[Any, LayoutError | None]:
    """``f(*args)``, or the LayoutError it raises; any other exception fails the test."""
    try:
        return f(*args), None
    except LayoutError as error:
        return None, error


def theirs(f: Callable, *args: Any) -> tuple[Any, Exception | None]:
    try:
        return f(*args), None
    except Exception as error:  # noqa: BLE001 - pycute asserts (AssertionError) and divides by zero
        return None, error


def assert_as_pycute(what: str, mine: tuple[Any, LayoutError | None],
                     reference: tuple[Any, Exception | None]) -> None:
    """The same value (a Layout: the same shape and stride), or both refusing: ours with a LayoutError."""
    (o, oe), (t, te) = mine, reference
    if te is not None:
        assert oe is not None, f"{what}: pycute raises {type(te).__name__}, ours returns {o}"
        return
    assert oe is None, f"{what}: pycute returns {t}, ours raises {oe}"
    if isinstance(o, Layout):
        assert (o.shape, o.stride) == (t.shape, t.stride), f"{what}: ours {o}, pycute {t}"
    else:
        assert o == t, f"{what}: ours {o}, pycute {t}"


def spread(p: Any, first: bool) -> Any:
    """CuTe's ``result(repeat<R0>(_), repeat<R1>(_))`` with pycute's slicing (``tiled_*``: mode 0 kept,
    ``flat_*``: both spread); a rank-1 mode stays whole, as ``repeat<1>(_)`` is ``_``."""
    def each(mode: Any) -> Any:
        return (None,) * len(mode) if len(mode) > 1 else None
    return p(each(p[0]) if first else None, each(p[1]))


def ref_rank_sensitive(block: Any, tiler: Any, raked: bool) -> Any:
    """CuTe's ``blocked_product`` / ``raked_product`` with pycute's operations: both padded with ``1:0`` modes to
    one rank, ``logical_product``, like modes zipped (the tiler's first when raked; modes of unlike ranks refused,
    as CuTe's ``zip``)."""
    rank = max(len(block), len(tiler))

    def pad(p: Any) -> Any:
        extra = [P.Layout(1, 0)] * (rank - len(p))
        return p if not extra else P.make_layout([p[i] for i in range(len(p))] + extra)

    product = P.logical_product(pad(block), pad(tiler))
    first, second = (product[1], product[0]) if raked else (product[0], product[1])
    if not isinstance(first.shape, tuple):
        return P.Layout(((first.shape, second.shape),), ((first.stride, second.stride),))
    assert len(first) == len(second), "CuTe's zip: Mismatched Ranks"  # Python's zip would drop modes
    return P.Layout(tuple(zip(first.shape, second.shape)), tuple(zip(first.stride, second.stride)))


# -- values: size, rank, cosize, indexing, slicing, text ----------------------------------------------------


def test_values_as_pycute():
    """size, rank, cosize (pycute's ``L(size - 1) + 1``), ``L(i)`` and ``L(crd)``, and the text both print and
    read; refused exactly where pycute divides by a size 0 that is not a last mode."""
    rng = random.Random("zero-size-values")
    for _ in range(CASES):
        L = random_layout(rng, zeros=2)
        p = ref(L)
        assert (L.size, L.rank) == (P.size(p), len(p)) and L.size == 0
        assert_as_pycute(f"cosize {L}", ours(A.cosize, L), theirs(P.cosize, p))
        assert_as_pycute(f"cosize {L}", ours(lambda: L.cosize), theirs(P.cosize, p))
        for i in (0, 1, 3, 7, 100):
            assert_as_pycute(f"{L}({i})", ours(L, i), theirs(p, i))
        crd = like(L.shape, [rng.randrange(max(s, 1)) for s in leaves(L.shape)])
        assert_as_pycute(f"{L}{crd}", ours(L, crd), theirs(p, crd))
        assert to_pycute(L) == str(p) and parse_cute(str(p)) == L
        for text in (str(L), to_text(L, static=True), to_cpp(L), to_cute_dsl(L), to_pycute(L)):
            assert parse_cute(text) == L, text


def test_slicing_as_pycute():
    """``slice`` and ``L(None, j)``: the sub-layout over the None modes; ``slice_and_offset``: also the offset of
    the rest, refused where pycute's offset splits an index by a size 0 before a last mode."""
    rng = random.Random("zero-size-slices")
    checked = 0
    for _ in range(CASES):
        L = random_layout(rng, zeros=2)
        if L.rank < 2:
            continue
        crd = tuple(None if rng.random() < 0.5 else (0 if isinstance(m, tuple) else rng.randrange(max(m, 1)))
                    for m in L.shape)  # type: ignore[union-attr]
        if None not in crd:
            crd = (None,) + crd[1:]
        sub, psub = A.slice(crd, L), ref(L)(*crd)  # the modes only: never refused
        assert (sub.shape, sub.stride) == (psub.shape, psub.stride) and L(*crd) == sub, (str(L), crd)
        (o, oe), (t, te) = ours(A.slice_and_offset, crd, L), theirs(P.slice_and_offset, crd, ref(L))
        assert (oe is None) == (te is None), (str(L), crd, oe, te)
        if oe is None:
            (sub, offset), (psub, poffset) = o, t
            assert (sub.shape, sub.stride, offset) == (psub.shape, psub.stride, poffset), (str(L), crd)
            assert L(*crd) == sub
            checked += 1
    assert checked > 40


def test_composed_layout_rank_is_its_inner_layouts():
    """CuTe's ``rank(ComposedLayout)`` is ``rank(layout_b())``; pycute's ``len`` is ``len(layoutA)``: the inner
    layout's, the one whose coordinates the composition takes. A composition of swizzles has none."""
    rng = random.Random("zero-size-composed-rank")
    for _ in range(CASES):
        L = random_layout(rng, zeros=rng.randint(0, 2))
        sw = Swizzle(rng.randint(0, 2), rng.randint(0, 3), rng.choice([2, 3, -3]))
        C = ComposedLayout(sw, rng.choice([0, 4]), L)
        pc = P.ComposedLayout(P.Swizzle(sw.bits, sw.base, sw.shift), C.offset, ref(L))
        assert C.rank == len(pc) == L.rank
        assert ComposedLayout(Layout(64, 1), 0, C).rank == L.rank
        sub, error = ours(A.slice, (None,) * L.rank if L.rank > 1 else None, C)
        assert error is not None or sub.rank == (L.rank if L.rank > 1 else 1)
    with pytest.raises(LayoutError, match="composition of swizzles has no modes"):
        ComposedLayout(Swizzle(1, 0, 2), 0, Swizzle(1, 1, 2)).rank  # noqa: B018


# -- coalesce, filter, composition, complement, inverses ---------------------------------------------------


def test_coalesce_and_filter_as_pycute():
    """Size-0 modes merge as any: ``s0:d0, 0:s0*d0`` is ``0:d0``; with a profile, mode by mode."""
    rng = random.Random("zero-size-coalesce")
    for _ in range(CASES):
        L = random_layout(rng, zeros=2, exact=rng.random() < 0.5)
        profile = None if rng.random() < 0.6 else (1,) * L.rank
        for name in ("coalesce", "filter"):
            mine, reference = ours(getattr(A, name), L, profile), theirs(getattr(P, name), ref(L), profile)
            assert_as_pycute(f"{name} {L}", mine, reference)


def test_composition_as_pycute():
    """``A ∘ B`` with a size 0 in A, in B or in both, B a Layout, an int (0 included) or a tuple tiler."""
    rng = random.Random("zero-size-composition")
    for _ in range(CASES):
        Z, Z2 = random_layout(rng, zeros=2), random_layout(rng, zeros=2)
        B = random_layout(rng, zeros=0)
        for a, b in ((Z, B), (B, Z), (Z, Z2), (Z, rng.choice([0, 1, 4, 8])), (B, 0), (Z, random_tiler(rng, Z)),
                     (B, random_tiler(rng, B))):
            mine, reference = ours(A.composition, a, b), theirs(P.composition, ref(a), ref(b))
            assert_as_pycute(f"composition({a}, {b})", mine, reference)


def test_complement_as_pycute():
    """Cotargets 0 (a last mode of size 0) and up; a size-0 mode of a non-zero stride is refused, as pycute's
    complement asserts."""
    rng = random.Random("zero-size-complement")
    for _ in range(CASES):
        L = random_layout(rng, zeros=2, injective=True)
        for m in (0, 1, 8, 24, 64):
            assert_as_pycute(f"complement({L}, {m})", ours(A.complement, L, m), theirs(P.complement, ref(L), m))
        (o, oe), (t, te) = ours(A.complement, L, -3), theirs(P.complement, ref(L), -3)
        if te is None and min(leaves(t.shape)) < 0:  # pycute's last mode ceil(-3 / reach) < 0: no layout
            assert oe is not None and "< 0" in str(oe)
        else:
            assert_as_pycute(f"complement({L}, -3)", (o, oe), (t, te))
        B = random_layout(rng, zeros=0, injective=True)
        assert_as_pycute(f"complement({B}, 0)", ours(A.complement, B, 0), theirs(P.complement, ref(B), 0))


def test_inverses_as_pycute():
    """Of a size-0 layout, pycute's right_inverse (the chain of strides from 1, stopping at the first that breaks
    it) and left_inverse (``1:0``, refused where its complement asserts)."""
    rng = random.Random("zero-size-inverses")
    for _ in range(CASES):
        L = random_layout(rng, zeros=2, exact=rng.random() < 0.7, injective=rng.random() < 0.5)
        for name in ("right_inverse", "left_inverse"):
            assert_as_pycute(f"{name}({L})", ours(getattr(A, name), L), theirs(getattr(P, name), ref(L)))
    assert_as_pycute("right_inverse(0)", ours(A.right_inverse, 0), theirs(P.right_inverse, 0))
    assert_as_pycute("left_inverse(0)", ours(A.left_inverse, 0), theirs(P.left_inverse, 0))


# -- divides and products ----------------------------------------------------------------------------------


DIVIDES = {
    "logical_divide": P.logical_divide,
    "zipped_divide": P.zipped_divide,
    "tiled_divide": lambda a, b: spread(P.zipped_divide(a, b), first=False),
    "flat_divide": lambda a, b: spread(P.zipped_divide(a, b), first=True),
}
PRODUCTS = {
    "logical_product": P.logical_product,
    "zipped_product": P.zipped_product,
    "tiled_product": lambda a, b: spread(P.zipped_product(a, b), first=False),
    "flat_product": lambda a, b: spread(P.zipped_product(a, b), first=True),
    "blocked_product": lambda a, b: ref_rank_sensitive(a, b, raked=False),
    "raked_product": lambda a, b: ref_rank_sensitive(a, b, raked=True),
}


@pytest.mark.parametrize("name", list(DIVIDES))
def test_divides_as_pycute(name):
    """A size-0 layout divided, or divided by a size-0 tile (its complement refused where pycute's asserts);
    ``tiled_`` / ``flat_`` are pycute's ``zipped_`` spread as CuTe's C++ spreads them."""
    rng = random.Random(f"zero-size-{name}")
    zipped = not name.startswith("logical")
    for _ in range(CASES):
        Z = random_layout(rng, zeros=2)
        B = random_layout(rng, zeros=0)
        T = random_layout(rng, zeros=2, injective=True)
        tile = random_layout(rng, zeros=0, injective=True)
        for a, b in ((Z, tile), (B, T), (Z, T), (Z, random_tiler(rng, Z, nones=not zipped)),
                     (B, random_tiler(rng, B, nones=not zipped))):
            mine, reference = ours(getattr(A, name), a, b), theirs(DIVIDES[name], ref(a), ref(b))
            assert_as_pycute(f"{name}({a}, {b})", mine, reference)


@pytest.mark.parametrize("name", list(PRODUCTS))
def test_products_as_pycute(name):
    """A size-0 block, or a size-0 tiler (whose cosize may be 0 or less: pycute's complement then ends in a mode of
    size <= 0, composed the same as a size 0); tuple tilers of layouts (pycute divides for an int)."""
    rng = random.Random(f"zero-size-{name}")
    by_mode = name in ("logical_product", "zipped_product", "tiled_product", "flat_product")
    for _ in range(CASES):
        Z = random_layout(rng, zeros=2, injective=True)
        B = random_layout(rng, zeros=0, injective=True)
        T, tile = random_layout(rng, zeros=2), random_layout(rng, zeros=0)
        pairs = [(Z, tile), (B, T), (Z, T)]
        if by_mode:
            pairs += [(x, random_tiler(rng, x, ints=False, nones=False)) for x in (Z, B)]
        for a, b in pairs:
            mine, reference = ours(getattr(A, name), a, b), theirs(PRODUCTS[name], ref(a), ref(b))
            assert_as_pycute(f"{name}({a}, {b})", mine, reference)


# -- refusals: LayoutErrors that name the argument and the rule ----------------------------------------------


def test_refusals_name_the_argument_and_the_rule():
    """Where pycute divides by a size 0 (or asserts on it), ours raises a LayoutError saying which argument and why."""
    inner_zero, last_zero = Layout((0, 4), (1, 8)), Layout((4, 0), (1, 4))
    with pytest.raises(LayoutError, match=r"index 5: mode 0 of the shape \(0,4\) has size 0 and is not the last"):
        inner_zero(5)
    with pytest.raises(LayoutError, match=r"index 7: mode 0 of the shape \(0,4\) has size 0"):
        idx2crd(7, (0, 4))
    assert last_zero(5) == 5 and idx2crd(5, (4, 0)) == (1, 1)
    with pytest.raises(LayoutError, match=r"cosize: \(0,4\):\(1,8\) has size 0 and its mode .* is not the last"):
        A.cosize(inner_zero)
    assert A.cosize(last_zero) == P.cosize(ref(last_zero)) == 0
    with pytest.raises(LayoutError, match=r"composition\(\(0,4\):\(1,8\), 4:1\): a: its mode 0 of size 0 is not"):
        A.composition(inner_zero, Layout(4, 1))
    with pytest.raises(LayoutError, match=r"composition\(\(4,2\):\(1,8\), \(0,2\):\(2,1\)\): b: its mode 0:2 has size"):
        A.composition(Layout((4, 2), (1, 8)), Layout((0, 2), (2, 1)))
    with pytest.raises(LayoutError, match=r"complement: \(4,0\):\(1,4\) has a mode of size 0 and a non-zero stride"):
        A.complement(last_zero, 16)
    with pytest.raises(LayoutError, match=r"complement: cotarget -9 leaves a last mode of size ceil\(-9 / 4\) = -2"):
        A.complement(Layout(4, 1), -9)
    with pytest.raises(LayoutError, match=r"left_inverse: \(4,0\):\(1,4\) has size 0 .* refuses its mode 0:4"):
        A.left_inverse(last_zero)
    with pytest.raises(LayoutError, match=r"logical_divide|complement: \(4,0\):\(1,4\) has a mode of size 0"):
        A.logical_divide(Layout(16, 1), last_zero)
    with pytest.raises(LayoutError, match=r"logical_product: tiler: cosize: \(0,4\):\(1,8\) has size 0"):
        A.logical_product(Layout(2, 1), inner_zero)
    with pytest.raises(LayoutError, match=r"tile_to_shape: block: \(2,0\):\(1,2\) has a mode of size 0"):
        A.tile_to_shape(Layout((2, 0), (1, 2)), (4, 8))
    with pytest.raises(LayoutError, match=r"tile_to_shape: trg_shape \(0,4\) repeats the block \(0,2\) times"):
        A.tile_to_shape(Layout((2, 2)), (0, 4))
    for f in (to_linear, coordinate_to_offset):
        with pytest.raises(LayoutError, match=r"mode 1 = 0:4 of \(4,0\):\(1,4\): size 0: a layout without coordinates "
                                              r"has no F2 map"):
            f(last_zero)
    with pytest.raises(LayoutError, match=r"the outer layout 0:1 has size 0"):
        to_linear(ComposedLayout(Layout(0, 1), 0, Layout(4, 1)))
    with pytest.raises(LayoutError, match=r"TVLayout: mode 0 = 0:1 .* size 0"):
        to_linear(TVLayout(Layout((0, 2), (1, 0)), (4,)))
    with pytest.raises(LayoutError, match=r"shape: leaves must be >= 0, got -1"):
        Layout((4, -1))


def test_the_rest_of_the_module_takes_size_0():
    """The operations pycute lacks: tile_to_shape, make_ordered_layout, row_major, upcast / downcast, the common
    vectors; each computes CuTe's definition or raises a LayoutError."""
    assert str(A.tile_to_shape(Layout((2, 2)), (4, 0))) == "((2,2),(2,0)):((1,4),(2,8))"
    assert str(A.make_ordered_layout((2, 0, 4), (2, 0, 1))) == "(2,0,4):(0,1,0)"
    assert str(row_major((4, 0, 2))) == "(4,0,2):(0,2,1)"
    assert str(A.upcast(Layout((4, 0), (8, 1)), 2)) == "(4,0):(4,1)"
    assert str(A.downcast(Layout((4, 0), (8, 1)), 2)) == "(4,0):(16,1)"
    rng = random.Random("zero-size-rest")
    for _ in range(CASES):
        Z, B = random_layout(rng, zeros=2, exact=rng.random() < 0.5), random_layout(rng, zeros=0, exact=False)
        shape = tuple(rng.choice([0, 2, 4, 8]) for _ in range(rng.randint(1, 3)))
        for f, args in ((A.tile_to_shape, (Z, shape)), (A.tile_to_shape, (B, shape)), (A.upcast, (Z, 2)),
                        (A.downcast, (Z, 2)), (A.max_common_vector, (Z, B)), (A.max_common_vector, (B, Z)),
                        (A.max_common_layout, (Z, B)), (A.make_ordered_layout, (shape, tuple(range(len(shape)))))):
            ours(f, *args)


# -- the wider draw: CuTe 4.2's own rules apart, pycute's answers; nothing but LayoutError -------------------


#: Our refusals where pycute computes, by CuTe 4.2's rules that hold without a size 0 as well
#: (tests/cute/test_algebra_reference.py): overlapping modes in a complement (pycute makes a size-0 mode of them),
#: and B's size not a multiple of what A's mode gives (pycute's floor division drops elements).
CUTE_REFUSALS = ("Non-injective Layout detected in complement", "Shape Divisibility Condition")


def test_any_sizes_and_strides_as_pycute():
    """Sizes 1-12, strides 0-24: where both compute, pycute's answer; where pycute divides by zero, ours refuses;
    where only one refuses, by a rule of CuTe 4.2 that does not depend on the size 0 (ours: ``CUTE_REFUSALS``;
    pycute: its stride divisibility assert, stricter than CuTe 4.2's). With negative strides too (where pycute's
    floor divisions differ from C++'s), every operation returns or raises LayoutError."""
    rng = random.Random("zero-size-any")
    for _ in range(CASES):
        Z, B = random_layout(rng, zeros=2, exact=False), random_layout(rng, zeros=0, exact=False)
        negative = any(d < 0 for d in leaves(Z.stride) + leaves(B.stride))
        calls = [("cosize", A.cosize, P.cosize, (Z,)), ("call", Z, ref(Z), (rng.randrange(64),)),
                 ("coalesce", A.coalesce, P.coalesce, (Z,)), ("filter", A.filter, P.filter, (Z,)),
                 ("right_inverse", A.right_inverse, P.right_inverse, (Z,)),
                 ("left_inverse", A.left_inverse, P.left_inverse, (Z,)),
                 ("complement", A.complement, P.complement, (Z, rng.choice([0, 1, 24])))]
        for name in ("composition", "logical_divide", "zipped_divide", "logical_product", "zipped_product"):
            calls += [(name, getattr(A, name), getattr(P, name), args) for args in ((Z, B), (B, Z))]
        for name, f, g, args in calls:
            (o, oe), (t, te) = ours(f, *args), theirs(g, *(ref(x) for x in args))
            what = f"{name}{tuple(str(x) for x in args)}"
            if negative:
                continue
            if oe is None and te is None:
                assert_as_pycute(what, (o, oe), (t, te))
            elif oe is not None and te is None:
                assert any(rule in str(oe) for rule in CUTE_REFUSALS), f"{what}: pycute returns {t}, ours raises {oe}"
            elif oe is None:  # pycute's "assert curr_shape % rest_stride == 0 or rest_stride % curr_shape == 0"
                where = traceback.extract_tb(te.__traceback__)[-1].name
                assert isinstance(te, AssertionError) and where == "composition", \
                    f"{what}: pycute raises {te!r} in {where}, ours returns {o}"
        for name in ("tiled_divide", "flat_divide", "tiled_product", "flat_product", "blocked_product",
                     "raked_product"):
            ours(getattr(A, name), Z, B)
            ours(getattr(A, name), B, Z)
