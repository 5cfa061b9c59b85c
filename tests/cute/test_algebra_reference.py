"""CuTe's layout algebra against NVIDIA's reference implementation: pycute, as the ``nvidia-cutlass`` wheel
ships it (``pip install --no-deps nvidia-cutlass``; tools/install-test-deps.sh installs it). Every test skips
without it.

``CASES`` seeded cases per operation. Each case ends in one outcome, and every outcome that is not plain
agreement is a documented difference between pycute and CuTe's C++, which ``linear_layouts.cute.algebra``
follows (every integer static), checked here case by case:

* ``equal``: the same layout, shape and stride;
* ``equal but size-1 strides``: CuTe writes ``_1:_0`` where pycute keeps a stride on a size-1 mode;
* ``both refuse``: pycute's assertion fails and ours raises a LayoutError;
* ``C++ static_assert, pycute wrong``: CuTe's C++ does not compile it (a divisibility or overlap rule),
  and what pycute returns breaks the operation's own postcondition (a size-0 mode, a wrong size, values);
* ``C++ static_assert, pycute right``: the same refusal where pycute's answer holds (CuTe's static rule
  is stricter than needed there);
* ``pycute wrong past A's size``: composition whose B reaches past A's size: CuTe extends A's last mode
  (``coalesce_x``), pycute's ``coalesce`` first drops a trailing size-1 mode's stride;
* ``pycute smaller inverse``: pycute's ``right_inverse`` stops at a negative or zero stride, CuTe's
  continues (absolute strides); both are right inverses;
* ``C++ drops modes past the tiler``: composition by a tuple shorter than A's rank, which CuTe's C++
  drops ("Drop any modes of lhs that aren't hit by rhs") and pycute keeps.

Operations pycute lacks (``flat_divide``, ``flat_product``, ``blocked_product``, ``raked_product``,
``tile_to_shape``, ``max_common_vector``, ``max_common_layout``) are checked against CuTe's C++ definition
written with pycute's own operations, ``upcast`` / ``downcast`` / ``recast_layout`` against tensor-layouts
(an independent Python CuTe), and all of them against their postconditions.

``python3 tests/cute/test_algebra_reference.py`` prints the table of outcomes per operation.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any, Callable

import pytest

from linear_layouts.cute import algebra as A
from linear_layouts.cute.int_tuple import has_none
from linear_layouts.cute.layout import ComposedLayout, Layout, Swizzle
from linear_layouts.core.errors import LayoutError

try:
    from . import random_cute as R
except ImportError:  # run as a script
    import random_cute as R  # type: ignore[no-redef]

P = pytest.importorskip("pycute")

CASES = 1000
RESULTS: dict[str, Counter] = {}


# -- conversions and checks ----------------------------------------------------------------------------


def ref(L: Layout) -> Any:
    return P.Layout(L.shape, L.stride)


def ours(p: Any) -> Layout | None:
    """pycute's layout as ours; None when it is no layout (a size-0 mode)."""
    try:
        return Layout(p.shape, p.stride)
    except LayoutError:
        return None


def same(o: Layout, p: Any) -> bool:
    return o.shape == p.shape and o.stride == p.stride


def unit_strides_zeroed(L: Layout) -> tuple:
    def walk(s: Any, d: Any) -> Any:
        if isinstance(s, tuple):
            return tuple(walk(x, y) for x, y in zip(s, d))
        return 0 if s == 1 else d
    return L.shape, walk(L.shape, L.stride)


def same_modulo_unit_strides(o: Layout, p: Any) -> bool:
    q = ours(p)
    return q is not None and unit_strides_zeroed(o) == unit_strides_zeroed(q)


def indices(n: int) -> range | list[int]:
    """Every index of a small domain, else 128 spread over it (both ends included)."""
    return range(n) if n <= 512 else sorted({0, n - 1, *range(0, n, max(1, n // 128))})


def is_composition(r: Layout | None, a: Layout, b: Layout) -> bool:
    """CuTe's postcondition: size(r) == size(b) and r(i) == a(b(i)) (a's last mode extends past its size).

    It holds where b's modes do not overlap: CuTe distributes a over b's modes, ``(a∘b0, a∘b1, ...)``, which
    is ``a∘b`` only where ``a`` adds those offsets without carrying; for a ``b`` that is not injective
    (stride-0 modes aside) only the size is checked, and the layout is CuTe's (pycute's) own."""
    if r is None or r.size != b.size:
        return False
    return not injective_but_broadcast(b) or all(r(i) == a(b(i)) for i in indices(b.size))


def injective_but_broadcast(b: Layout) -> bool:
    kept = A.filter(b)
    return len({kept(i) for i in range(kept.size)}) == kept.size


def run(f: Callable, *args: Any) -> tuple[Any, Exception | None]:
    try:
        return f(*args), None
    except LayoutError as error:
        return None, error


def run_ref(f: Callable, *args: Any) -> tuple[Any, Exception | None]:
    try:
        return f(*args), None
    except Exception as error:  # noqa: BLE001 - pycute asserts its preconditions (AssertionError and others)
        return None, error


def tally(name: str, outcome: str, allowed: set[str]) -> None:
    assert outcome in allowed, f"{name}: unexpected outcome {outcome!r}"
    RESULTS.setdefault(name, Counter())[outcome] += 1


def plain(name: str, o: Any, oe: Any, t: Any, te: Any, args: tuple) -> str:
    """Outcome of an operation whose results must match exactly (or up to size-1 strides)."""
    if oe is None and te is None:
        if same(o, t):
            return "equal"
        assert same_modulo_unit_strides(o, t), (name, args, str(o), str(t))
        return "equal but size-1 strides"
    assert oe is not None and te is not None, (name, args, oe, te, str(o), str(t))
    return "both refuse"


def rng_for(name: str) -> random.Random:
    return random.Random(f"cute-algebra-{name}")


def tiler(rng: random.Random, layout: Layout, *, nones: bool = True, full: bool = False) -> Any:
    """A tuple tiler for ``layout``: one entry per mode (fewer unless ``full``), each a small layout, an int,
    or (with ``nones``) None."""
    count = layout.rank if full or rng.random() < 0.8 else rng.randint(1, layout.rank)
    out = []
    for _ in range(count):
        k = rng.random()
        if nones and k < 0.1:
            out.append(None)
        elif k < 0.4:
            out.append(rng.choice([1, 2, 3, 4, 6, 8]))
        else:
            out.append(R.random_int_layout(rng, max_size=64))
    return tuple(out)


def _abs(t: Any) -> Any:
    return tuple(_abs(e) for e in t) if isinstance(t, tuple) else abs(t)


def ref_tiler(t: Any) -> Any:
    if isinstance(t, tuple):
        return tuple(ref_tiler(e) for e in t)
    return ref(t) if isinstance(t, Layout) else t


# -- coalesce, filter, make_layout, cosize -------------------------------------------------------------


@pytest.mark.parametrize("name", ["coalesce", "filter"])
def test_coalesce_and_filter(name):
    rng = rng_for(name)
    ours_f, ref_f = getattr(A, name), getattr(P, name)
    for _ in range(CASES):
        L = R.random_int_layout(rng, negative=True)
        profile = None if rng.random() < 0.6 else (1,) * rng.randint(1, L.rank)
        (o, oe), (t, te) = run(ours_f, L, profile), run_ref(ref_f, ref(L), profile)
        tally(name, plain(name, o, oe, t, te, (L, profile)), {"equal"})
        assert o.size == L.size if name == "coalesce" else True
        if profile is None and name == "coalesce":
            assert all(o(i) == L(i) for i in indices(L.size))


def test_make_layout_concatenates():
    rng = rng_for("make_layout")
    for _ in range(CASES):
        parts = [R.random_int_layout(rng, max_size=64) for _ in range(rng.randint(1, 4))]
        o, t = A.make_layout(*parts), P.make_layout(*[ref(p) for p in parts])
        tally("make_layout", "equal" if same(o, t) else "differ", {"equal"})


def test_cosize():
    """Of a Layout, pycute's cosize; of ``Sw o 0 o L``, CuTe's C++ takes the inner layout's cosize
    (``layout_composed.hpp``) where pycute's ``ComposedLayout.cosize`` takes the outer's (the swizzle's
    size): compared with ``pycute.cosize(L)``."""
    rng = rng_for("cosize")
    for _ in range(CASES):
        L = R.random_int_layout(rng, negative=True)
        if rng.random() < 0.5:
            if A.cosize(L) == P.cosize(ref(L)):
                tally("cosize", "equal", {"equal"})
            else:  # CuTe's coshape takes |stride| ("Protect against negative strides"); pycute L(size - 1) + 1
                assert any(d < 0 for d in R._flatten(L.stride))
                assert A.cosize(L) == P.cosize(ref(Layout(L.shape, _abs(L.stride))))
                tally("cosize", "negative stride: C++ takes |d|", {"negative stride: C++ takes |d|"})
        else:
            sw = R.random_swizzle(rng, 10, within=False)
            C = ComposedLayout(sw, 0, L)
            assert P.cosize(P.ComposedLayout(P.Swizzle(sw.bits, sw.base, sw.shift), 0, ref(L))) == sw.size
            inner = P.cosize(ref(Layout(L.shape, _abs(L.stride))))
            tally("cosize", "equal (inner, as C++)" if A.cosize(C) == inner else "differ", {"equal (inner, as C++)"})


# -- composition ---------------------------------------------------------------------------------------


def tiler_layout(t: Any) -> Layout:
    """A tiler entry as the layout it composes with: an int ``n`` is ``n:1`` (CuTe's integral tiler)."""
    return Layout(t, 1) if isinstance(t, int) else t


def composition_outcome(a: Layout, b: Any, o: Any, oe: Any, t: Any, te: Any) -> str:
    if isinstance(b, tuple) and oe is None and te is None and not same(o, t):
        outcomes = {composition_outcome(a.mode(i), tiler_layout(e), o.mode(i), None, t[i], None)
                    for i, e in enumerate(b) if e is not None}
        outcomes.discard("equal")
        if len(b) < a.rank:  # CuTe drops the modes of a past the tiler; pycute keeps them
            assert len(ours(t).shape) == a.rank and o.rank == len(b), (a, b, str(o), str(t))
            return "C++ drops modes past the tiler"
        for worst in ("pycute wrong past A's size", "equal but size-1 strides"):
            if worst in outcomes:
                return worst
        raise AssertionError((a, b, outcomes))
    if isinstance(b, tuple):
        if oe is None and te is None:
            return "equal"
        if oe is not None and te is not None:
            return "both refuse"
        assert oe is not None and "Static shape_div failure" in str(oe), (a, b, oe, te)
        return "C++ static_assert"
    if oe is None:
        assert is_composition(o, a, b), (a, b, str(o))
    if oe is None and te is None:
        if same(o, t):
            return "equal"
        if same_modulo_unit_strides(o, t):
            return "equal but size-1 strides"
        assert any(b(i) >= a.size for i in indices(b.size)), (a, b, str(o), str(t))
        assert not injective_but_broadcast(b) or not is_composition(ours(t), a, b), (a, b, str(o), str(t))
        return "pycute wrong past A's size"
    if oe is not None and te is not None:
        return "both refuse"
    if oe is not None:
        assert "divisibility condition" in str(oe) and "Static shape_div failure" in str(oe), str(oe)
        return "C++ static_assert, pycute right" if is_composition(ours(t), a, b) else "C++ static_assert, pycute wrong"
    raise AssertionError(f"pycute composes what CuTe refuses: {a} o {b}: {te!r}")


def test_composition():
    rng = rng_for("composition")
    allowed = {"equal", "equal but size-1 strides", "both refuse", "C++ static_assert, pycute right",
               "C++ static_assert, pycute wrong", "pycute wrong past A's size", "C++ drops modes past the tiler",
               "C++ static_assert"}
    for k in range(CASES):
        a = R.random_int_layout(rng, pow2=k % 2 == 0)
        b = tiler(rng, a, nones=True) if rng.random() < 0.2 else R.random_int_layout(rng, pow2=k % 2 == 0)
        (o, oe), (t, te) = run(A.composition, a, b), run_ref(P.composition, ref(a), ref_tiler(b))
        tally("composition", composition_outcome(a, b, o, oe, t, te), allowed)


def test_composition_simplifies_to_one_layout_as_cute():
    """CuTe's documented results (``02_layout_algebra.md``), printed as CuTe prints static layouts."""
    cases = [
        (Layout((6, 2), (8, 2)), Layout((4, 3), (3, 1)), "((2,2),3):((24,2),8)"),
        (Layout(20, 2), Layout((5, 4), (4, 1)), "(5,4):(8,2)"),
        (Layout((10, 2), (16, 4)), Layout((5, 4), (1, 5)), "(5,(2,2)):(16,(80,4))"),
        (Layout((12, (4, 8)), (59, (13, 1))), (Layout(3, 4), Layout(8, 2)), "(3,(2,4)):(236,(26,1))"),
        (Layout((12, (4, 8)), (59, (13, 1))), (3, 8), "(3,(4,2)):(59,(13,1))"),
        (Layout((3, 6, 2, 8), (1, 100, 1000, 10000)), Layout(16, 9), "(2,2,4):(300,1000,10000)"),
    ]
    for a, b, text in cases:
        assert str(A.composition(a, b)) == text
    with pytest.raises(LayoutError, match=r"stride divisibility condition .* neither of 6 and 4 divides the other"):
        A.composition(Layout((6, 2), (1, 7)), Layout(2, 4))
    with pytest.raises(LayoutError, match=r"shape divisibility condition .* neither of 3 and 4 divides the other"):
        A.composition(Layout((4, 8), (1, 5)), Layout(3, 1))


# -- complement and inverses ---------------------------------------------------------------------------


def complement_postconditions(L: Layout, r: Layout) -> bool:
    """CuTe's: ordered (strides increasing, so its offsets increase) and disjoint from L's codomain but 0."""
    image = {L(i) for i in range(L.size)}
    values = [r(i) for i in range(r.size)]
    return all(x < y for x, y in zip(values, values[1:])) and not (set(values[1:]) & image)


def test_complement():
    rng = rng_for("complement")
    allowed = {"equal", "both refuse", "C++ static_assert, pycute wrong", "equal (default cotarget)"}
    for _ in range(CASES):
        L = R.random_int_layout(rng, max_size=512)
        m = rng.choice([None, 1, 8, 24, 64, 96, 128, 1000])
        (o, oe) = run(A.complement, L, m)
        (t, te) = run_ref(P.complement, ref(L), 1 if m is None else m)
        if oe is None and te is None:
            assert complement_postconditions(L, o), (L, m, str(o))
            outcome = "equal" if same(o, t) else None
            if outcome is None and m is None and same(o, run_ref(P.complement, ref(L), A.filter(L).cosize)[0]):
                outcome = "equal (default cotarget)"  # pycute's default cotarget is 1, CuTe's cosize(filter(L))
            tally("complement", outcome or "differ", allowed)
        elif oe is not None and te is None:
            assert "Non-injective Layout detected in complement" in str(oe)
            q = ours(t)
            assert q is None or not complement_postconditions(L, q), (L, m, str(t))
            tally("complement", "C++ static_assert, pycute wrong", allowed)
        else:
            tally("complement", plain("complement", o, oe, t, te, (L, m)), allowed)


def test_complement_examples_of_the_cute_docs():
    for layout, text in [(Layout(4, 1), "6:4"), (Layout(6, 4), "4:1"), (Layout((4, 6), (1, 4)), "1:0"),
                         (Layout(4, 2), "(2,3):(1,8)"), (Layout((2, 4), (1, 6)), "3:2"),
                         (Layout((2, 2), (1, 6)), "(3,2):(2,12)")]:
        assert str(A.complement(layout, 24)) == text
    with pytest.raises(LayoutError, match="Non-injective Layout detected in complement"):
        A.complement(Layout((2, 2), (1, 1)), 8)
    with pytest.raises(LayoutError, match="negative stride"):
        A.complement(Layout(4, -1), 8)


def test_right_inverse():
    rng = rng_for("right_inverse")
    allowed = {"equal", "pycute smaller inverse", "refused: negative stride among several modes"}
    for _ in range(CASES):
        L = R.random_int_layout(rng, negative=True)
        (o, oe), t = run(A.right_inverse, L), P.right_inverse(ref(L))
        if oe is not None:
            assert "negative stride among several modes" in str(oe)
            tally("right_inverse", "refused: negative stride among several modes", allowed)
            continue
        flat = A.coalesce(L)  # the same function; a negative index reaches a one-mode layout linearly
        assert all(flat(o(i)) == i for i in indices(o.size)), (L, str(o))
        if same(o, t):
            tally("right_inverse", "equal", allowed)
        else:  # pycute stops at a stride-0 or negative mode that sorts first; CuTe skips it
            q = ours(t)
            assert q.size < o.size and all(L(q(i)) == i for i in indices(q.size)), (L, str(o), str(t))
            assert any(d <= 0 for d in R._flatten(L.stride)), (L, str(o), str(t))
            tally("right_inverse", "pycute smaller inverse", allowed)


def test_left_inverse():
    rng = rng_for("left_inverse")
    allowed = {"equal", "both refuse", "C++ static_assert, pycute wrong", "not injective (CuTe's @pre)",
               "refused: C++ inverts a prefix only"}
    for _ in range(CASES):
        L = R.random_int_layout(rng, max_size=512)
        (o, oe), (t, te) = run(A.left_inverse, L), run_ref(P.left_inverse, ref(L))
        q = ours(t) if te is None else None
        pycute_right = q is not None and all(q(L(i)) == i for i in range(L.size))
        if oe is None:
            assert all(o(L(i)) == i for i in range(L.size)), (L, str(o))
            tally("left_inverse", plain("left_inverse", o, oe, t, te, (L,)), allowed)
        elif "is not injective" in str(oe):
            assert len({L(i) for i in range(L.size)}) < L.size and not pycute_right
            tally("left_inverse", "not injective (CuTe's @pre)", allowed)
        elif "inverts the offsets below" in str(oe):
            assert not pycute_right, (L, str(t))
            tally("left_inverse", "refused: C++ inverts a prefix only", allowed)
        elif te is None:
            assert "Non-injective Layout detected in complement" in str(oe) and not pycute_right, (L, str(t))
            tally("left_inverse", "C++ static_assert, pycute wrong", allowed)
        else:
            tally("left_inverse", "both refuse", allowed)


# -- divides and products ------------------------------------------------------------------------------


def spread(p: Any, first: bool) -> Any:
    """CuTe's ``result(repeat<R0>(_), repeat<R1>(_))`` (or ``result(_, repeat<R1>(_))``) with pycute's
    own slicing: None is pycute's ``_``; a rank-1 mode gets a single None, as ``repeat<1>(_)`` is ``_``."""
    def nones(mode: Any) -> Any:
        return tuple([None] * len(mode.shape)) if isinstance(mode.shape, tuple) and len(mode.shape) > 1 else None
    return p(nones(p[0]) if first else None, nones(p[1]))


def unwrap_rank1(L: Layout) -> Layout:
    """``L`` with its 1-tuple modes past mode 0 unwrapped, as pycute's ``result[1][i]`` spreading does."""
    modes = A._modes(L)
    return A.make_layout(modes[0], *[m.mode(0) if isinstance(m.shape, tuple) and len(m.shape) == 1 else m
                                     for m in modes[1:]])


def divide_outcome(name: str, a: Layout, b: Any, o: Any, oe: Any, t: Any, te: Any) -> str:
    if oe is None and te is None:
        if same(o, t):
            return "equal"
        if same_modulo_unit_strides(o, t):
            return "equal but size-1 strides"
        if name.startswith("tiled") and o.rank == ours(t).rank and same(unwrap_rank1(o), t):
            return "pycute unwraps a rank-1 mode"  # CuTe's repeat<1>(_) is _: the 1-tuple mode stays whole
        if "product" in name and _int_in(b) and same(o, t) is False and pycute_divides(name, a, b, t):
            return "pycute divides for an int tiler"  # its logical_product calls logical_divide
        # pycute's composition inside reads A's trailing size-1 mode as stride 0 (CuTe's coalesce_x keeps it)
        assert any(s == 1 for s in R._flatten(a.shape)) or any(s == 1 for s in R._flatten(b.shape if isinstance(b, Layout) else 1)), \
            (name, a, b, str(o), str(t))
        return "pycute wrong past A's size"
    if oe is not None and te is not None:
        return "both refuse"
    if oe is not None:
        message = str(oe).lower()
        assert "static shape_div failure" in message or "non-injective layout detected" in message \
            or "mismatched ranks" in message, message
        return "C++ static_assert"
    if "product" in name and _int_in(b) and pycute_divides(name, a, b, None):
        return "pycute divides for an int tiler"
    raise AssertionError(f"{name}: pycute refuses what CuTe computes: {a}, {b}: {te!r}")


def pycute_divides(name: str, a: Layout, b: Any, t: Any) -> bool:
    """Whether pycute's product result ``t`` (None: its refusal) is what its divide gives: pycute's
    ``logical_product`` calls ``logical_divide`` for an int tiler."""
    divide = {"logical_product": P.logical_divide, "zipped_product": P.zipped_divide,
              "tiled_product": P.tiled_divide,
              "flat_product": lambda x, y: spread(P.zipped_divide(x, y), first=True)}[name]
    divided, error = run_ref(divide, ref(a), ref_tiler(b))
    if t is None:
        return error is not None
    return divided is not None and divided.shape == t.shape and divided.stride == t.stride


def _int_in(t: Any) -> bool:
    return isinstance(t, int) or (isinstance(t, tuple) and any(_int_in(e) for e in t))


@pytest.mark.parametrize("name", ["logical_divide", "zipped_divide", "tiled_divide", "flat_divide",
                                  "logical_product", "zipped_product", "tiled_product", "flat_product"])
def test_divides_and_products(name):
    """flat_divide / flat_product: pycute's zipped one, spread with pycute's slicing as CuTe's C++ does."""
    rng = rng_for(name)
    zipped = name.startswith(("zipped", "tiled", "flat"))
    ours_f = getattr(A, name)
    if name.startswith("flat"):
        base = getattr(P, name.replace("flat", "zipped"))
        ref_f = lambda x, y: spread(base(x, y), first=True)  # noqa: E731
    else:
        ref_f = getattr(P, name)
    allowed = {"equal", "equal but size-1 strides", "both refuse", "C++ static_assert", "pycute wrong past A's size",
               "pycute unwraps a rank-1 mode", "pycute divides for an int tiler"}
    for _ in range(CASES):
        a = R.random_int_layout(rng, max_size=1024)
        if rng.random() < 0.3:
            b = tiler(rng, a, nones=not zipped, full=zipped)
        else:
            b = R.random_int_layout(rng, max_size=64)
        (o, oe), (t, te) = run(ours_f, a, b), run_ref(ref_f, ref(a), ref_tiler(b))
        tally(name, divide_outcome(name, a, b, o, oe, t, te), allowed)


def test_divide_and_product_examples_of_the_cute_docs():
    a = Layout((9, (4, 8)), (59, (13, 1)))
    tile = (Layout(3, 3), Layout((2, 4), (1, 8)))
    assert str(A.logical_divide(Layout((4, 2, 3), (2, 1, 8)), Layout(4, 2))) == "((2,2),(2,3)):((4,1),(2,8))"
    ld = A.logical_divide(a, tile)
    assert str(A.make_layout(ld.mode(0).mode(0), ld.mode(1).mode(0))) == "(3,(2,4)):(177,(13,2))"
    zd = A.zipped_divide(a, tile)
    assert zd.shape == ((3, (2, 4)), (3, (2, 2))) and zd.mode(0) == A.composition(a, tile)
    assert str(A.logical_product(Layout((2, 2), (4, 1)), Layout(6, 1))) == "((2,2),(2,3)):((4,1),(2,8))"
    assert A.tiled_divide(a, tile).shape == ((3, (2, 4)), 3, (2, 2))
    assert A.flat_divide(a, tile).shape == (3, (2, 4), 3, (2, 2))


def ref_rank_sensitive(block: Any, tiler_: Any, raked: bool) -> Any:
    """CuTe's C++ ``blocked_product`` / ``raked_product`` written with pycute's operations: pad both to one
    rank with ``1:0`` modes, ``logical_product``, zip like modes, coalesce each."""
    rank = max(len(block), len(tiler_))

    def pad(p: Any) -> Any:
        return p if len(p) == rank else P.make_layout([p[i] for i in range(len(p))] + [P.Layout(1, 0)] * (rank - len(p)))

    result = P.logical_product(pad(block), pad(tiler_))
    first, second = (result[1], result[0]) if raked else (result[0], result[1])
    if not isinstance(first.shape, tuple):
        zipped = P.Layout(((first.shape, second.shape),), ((first.stride, second.stride),))
    else:
        zipped = P.Layout(tuple(zip(first.shape, second.shape)), tuple(zip(first.stride, second.stride)))
    return P.coalesce(zipped, (1,) * rank)


@pytest.mark.parametrize("name", ["blocked_product", "raked_product"])
def test_blocked_and_raked_products(name):
    """Against CuTe's C++ definition with pycute's operations, and the postcondition: mode ``i`` holds the
    block's mode ``i`` and the tiler's, so the block's first element repeats at the tiler's offsets."""
    rng = rng_for(name)
    raked = name == "raked_product"
    allowed = {"equal", "equal but size-1 strides", "both refuse", "C++ static_assert", "pycute wrong past A's size"}
    for _ in range(CASES):
        block = R.random_int_layout(rng, max_size=256)
        til = R.random_int_layout(rng, max_size=64)
        (o, oe) = run(getattr(A, name), block, til)
        (t, te) = run_ref(ref_rank_sensitive, ref(block), ref(til), raked)
        tally(name, divide_outcome(name, block, til, o, oe, t, te), allowed)
        if oe is None:
            assert o.size == block.size * til.size and o.rank == max(block.rank, til.rank)


def ref_tile_to_shape(block: Layout, shape: tuple, order: Any) -> Any:
    """CuTe's C++ ``tile_to_shape`` with pycute's operations (the ordered layout of the repeat counts as
    CuTe's ``compact_order``)."""
    rank = len(shape)
    padded = block if block.rank == rank else A.make_layout(*[block.mode(i) for i in range(block.rank)],
                                                            *[Layout(1, 0)] * (rank - block.rank))
    counts = tuple(t // padded.mode(i).size for i, t in enumerate(shape))
    if order is None:
        strides, run_ = [], 1
        for c in counts:
            strides.append(run_)
            run_ *= c
    else:
        strides = [int(P.product(tuple(c for c, k in zip(counts, order) if k < o))) for o in order]
    ordered = P.Layout(counts, tuple(strides))
    return P.coalesce(ref_rank_sensitive(ref(padded), ordered, raked=False), counts)


def test_tile_to_shape():
    rng = rng_for("tile_to_shape")
    allowed = {"equal", "equal but size-1 strides", "both refuse", "C++ static_assert", "pycute wrong past A's size",
               "refused: block does not divide"}
    for _ in range(CASES):
        block = R.random_int_layout(rng, max_size=64)
        rank = max(block.rank, rng.randint(1, 3))
        padded_sizes = [block.mode(i).size for i in range(block.rank)] + [1] * (rank - block.rank)
        shape = tuple(s * rng.choice([1, 2, 3, 4]) for s in padded_sizes)
        if rng.random() < 0.1:
            shape = tuple(s + 1 for s in shape)  # usually not divisible
        order = None if rng.random() < 0.5 else tuple(rng.sample(range(rank), rank))
        (o, oe) = run(A.tile_to_shape, block, shape, order)
        if oe is not None and "does not divide the target shape" in str(oe):
            assert any(t % s for s, t in zip(padded_sizes, shape))
            tally("tile_to_shape", "refused: block does not divide", allowed)
            continue
        (t, te) = run_ref(ref_tile_to_shape, block, shape, order)
        if oe is None:
            assert tuple(o.mode(i).size for i in range(len(shape))) == shape
        tally("tile_to_shape", divide_outcome("tile_to_shape", block, shape, o, oe, t, te), allowed)


# -- slicing -------------------------------------------------------------------------------------------


def random_coordinate(rng: random.Random, shape: Any) -> Any:
    if isinstance(shape, tuple):
        return tuple(random_coordinate(rng, s) for s in shape)
    return None if rng.random() < 0.4 else rng.randrange(shape)


def test_slice_and_offset():
    """``slice_and_offset`` and ``L(None, j)`` as pycute's; a bare None is CuTe's ``slice(_, L) == L`` (pycute
    wraps it in a 1-tuple), so the coordinates here are tuples."""
    rng = rng_for("slice_and_offset")
    for _ in range(CASES):
        L = R.random_int_layout(rng, negative=True)
        crd = random_coordinate(rng, L.shape if isinstance(L.shape, tuple) else (L.shape,))
        if not isinstance(L.shape, tuple):
            L = Layout((L.shape,), (L.stride,))
        o, t = A.slice_and_offset(crd, L), P.slice_and_offset(crd, ref(L))
        has = has_none(crd)
        if has:
            assert L(*crd) == o[0] if len(crd) > 1 else L(crd) == o[0]
        assert o[1] == t[1]
        tally("slice_and_offset", "equal" if (not has or same(o[0], t[0])) else "differ", {"equal"})
    assert A.slice(None, Layout((4, 8))) == Layout((4, 8))


# -- element size and common vectors -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["upcast", "downcast"])
def test_upcast_downcast_against_tensor_layouts(name):
    """tensor-layouts rounds where CuTe's static shape_div refuses: compared where CuTe computes."""
    tl = pytest.importorskip("tensor_layouts")
    rng = rng_for(name)
    allowed = {"equal", "C++ static_assert", "C++ static_assert (no stride-1 mode)"}
    for _ in range(CASES):
        L = R.random_int_layout(rng, negative=True)
        n = rng.choice([1, 2, 4, 8, 3, 16])
        o, oe = run(getattr(A, name), L, n)
        if oe is not None:
            assert "Static shape_div failure" in str(oe) or "requires adjacent elements" in str(oe), str(oe)
            tally(name, "C++ static_assert (no stride-1 mode)" if "adjacent" in str(oe) else "C++ static_assert", allowed)
            continue
        t = getattr(tl, name)(tl.Layout(L.shape, L.stride), n)
        tally(name, "equal" if Layout(t.shape, t.stride) == o else "differ", allowed)
        if name == "downcast":  # upcast undoes downcast: each stride-1 mode shrinks back, other strides divide
            assert A.upcast(o, n) == L, (L, n, str(o))


def test_recast_layout():
    rng = rng_for("recast_layout")
    allowed = {"equal", "C++ static_assert"}
    types = ["int8", "fp16", "fp32", "fp64"]
    for _ in range(CASES):
        L = R.random_int_layout(rng)
        old, new = rng.choice(types), rng.choice(types)
        o, oe = run(A.recast_layout, L, old, new)
        bits = {"int8": 8, "fp16": 16, "fp32": 32, "fp64": 64}
        want = (run(A.upcast, L, bits[new] // bits[old]) if bits[new] >= bits[old]
                else run(A.downcast, L, bits[old] // bits[new]))
        assert (str(o), str(oe)) == (str(want[0]), str(want[1]))
        tally("recast_layout", "equal" if oe is None else "C++ static_assert", allowed)
    assert str(A.recast_layout(Layout((8, 64), (64, 1)), "fp16", "fp32")) == "(8,32):(32,1)"
    assert A.recast_layout(Swizzle(3, 4, 3), 8, 16) == Swizzle(3, 3, 3)


def test_max_common_vector_and_layout():
    """CuTe's C++ definition with pycute's operations, tensor-layouts, and the postcondition: the common
    layout R has a(R(i)) == b(R(i)) == i."""
    tl = pytest.importorskip("tensor_layouts")
    rng = rng_for("max_common")
    allowed = {"equal", "both refuse", "C++ static_assert"}
    for _ in range(CASES):
        shape = R.random_int_layout(rng, max_size=1024).shape
        # two layouts of one shape: compact in random orders, sometimes with holes
        a = Layout(shape, _random_compact_strides(rng, shape))
        b = Layout(shape, _random_compact_strides(rng, shape))
        (v, ve), (cl, cle) = run(A.max_common_vector, a, b), run(A.max_common_layout, a, b)
        inv, inve = run_ref(P.right_inverse, ref(b))
        common, ce = run_ref(lambda: P.coalesce(P.composition(ref(a), inv)))
        if ve is None:
            want = common.shape if not isinstance(common.shape, tuple) else common.shape[0]
            first_stride = common.stride if not isinstance(common.stride, tuple) else common.stride[0]
            assert v == (want if first_stride == 1 else 1), (a, b, v, str(common))
            assert cl.size == v and all(a(cl(i)) == i and b(cl(i)) == i for i in range(v)), (a, b, str(cl))
            other = tl.max_common_vector(tl.Layout(a.shape, a.stride), tl.Layout(b.shape, b.stride))
            assert other == v, (a, b, v, other)
            tally("max_common_vector", "equal", allowed)
        else:
            tally("max_common_vector", "both refuse" if ce is not None else "C++ static_assert", allowed)


def _random_compact_strides(rng: random.Random, shape: Any) -> Any:
    leaves = list(R._flatten(shape))
    order = list(range(len(leaves)))
    rng.shuffle(order)
    strides, current = [0] * len(leaves), 1
    for i in order:
        strides[i] = current
        current *= leaves[i] * (2 if rng.random() < 0.1 else 1)
    it = iter(strides)

    def like(t: Any) -> Any:
        return tuple(like(e) for e in t) if isinstance(t, tuple) else next(it)

    return like(shape)


if __name__ == "__main__":  # the table of outcomes
    import sys

    sys.setrecursionlimit(10000)
    for test in [v for k, v in dict(globals()).items() if k.startswith("test_")]:
        params = getattr(test, "pytestmark", [])
        names = [p.args[1] for p in params if p.name == "parametrize"]
        for args in (names[0] if names else [()]):
            test(*([args] if names else []))
    width = max(map(len, RESULTS))
    for name, counts in RESULTS.items():
        total = sum(counts.values())
        print(f"{name:{width}}  {total:5}  " + ", ".join(f"{k}: {v}" for k, v in counts.most_common()))
