"""CuTe's layout algebra against NVIDIA's Python reference implementation: pycute, as the ``nvidia-cutlass``
wheel ships it (``pip install --no-deps nvidia-cutlass``; tools/install-test-deps.sh installs it). Every test
skips without it. (``test_algebra_cpp.py`` checks against CuTe's C++ itself, whose 4.2 semantics the module
follows; pycute lags it in places, and the outcomes below name where.)

``CASES`` seeded cases per operation; each ends in one outcome, and our result always meets the operation's
postcondition where one is checked:

* ``equal``: the same layout, shape and stride; ``equal but size-1 strides``: CuTe writes ``_1:_0`` where
  pycute keeps a stride on a size-1 mode; ``same function per mode``: every top-level mode the same
  function of its index, in another form (pycute unwraps a rank-1 mode CuTe keeps as a 1-tuple, ...);
* ``both refuse``; ``CuTe's C++ refuses, pycute computes``: our LayoutError quotes CuTe's static_assert;
  ``refused where CuTe's C++ returns another function``: our two deliberate refusals (algebra module doc);
  ``pycute refuses, CuTe's C++ computes``: CuTe 4.2's weaker divisibility conditions;
* ``pycute's answer breaks the postcondition``: mostly a B reaching past A's size, where CuTe's
  ``coalesce_x`` extends A's last mode with its stride and pycute's ``coalesce`` drops a size-1 one;
* named differences: ``CuTe drops the modes past the tiler`` (composition by a short tuple), ``pycute's is
  smaller`` (its right_inverse stops at a stride-0 or negative mode), ``another left inverse`` (CuTe 4.2's
  quasi-inverse against pycute's ``right_inverse((L, complement(L)))``), ``pycute divides for an int tiler``
  (its logical_product calls logical_divide), ``the same tile, the rest within shape(coalesce(A))``.

Operations pycute lacks are checked against CuTe's C++ definition written with pycute's operations
(``flat_*``, ``blocked_product``, ``raked_product``, ``tile_to_shape``, ``max_common_vector``), tensor-layouts
(``upcast``, ``downcast``) and their postconditions. ``python3 tests/cute/test_algebra_reference.py`` prints
the table of outcomes.
"""

from __future__ import annotations

import random
from collections import Counter
from functools import partial
from typing import Any, Callable

import pytest

from linear_layouts.cute import algebra as A
from linear_layouts.cute.int_tuple import has_none, idx2crd
from linear_layouts.cute.layout import ComposedLayout, Layout, Swizzle
from linear_layouts.core.errors import LayoutError

try:
    from . import cute_cpp as C
    from . import random_cute as R
except ImportError:  # run as a script
    import cute_cpp as C  # type: ignore[no-redef]
    import random_cute as R  # type: ignore[no-redef]

P = pytest.importorskip("pycute")

CASES = 1000  #: per operation; tests/cute/reference_run.py sends every non-``equal`` one through CuTe's C++
RESULTS: dict[str, Counter] = {}
#: Where set (the benchmark): ``(operation, outcome, C++ expression, our result or LayoutError, our call)`` of every case
#: whose outcome is not ``equal``, for CuTe's C++ to referee.
RECORD: list[tuple[str, str, str, Any, Any]] | None = None


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
    """Every index of a small domain, else 64 spread over it (both ends included)."""
    return range(n) if n <= 128 else sorted({0, n - 1, *range(0, n, max(1, n // 64))})


def is_composition(r: Layout | None, a: Layout, b: Layout) -> bool:
    """CuTe's composition: ``r`` has b's size and ``r(i) == sum_k a(c_k * d_k)`` over b's leaf modes ``c_k:d_k``
    at i's coordinate (a's last mode extends past its size). CuTe distributes a over b's modes, so this is
    ``a(b(i))`` wherever a adds those offsets without carrying -- for an injective b in particular."""
    if r is None or r.size != b.size:
        return False
    strides = list(R._flatten(b.stride))
    return all(r(i) == sum(a(c * d) for c, d in zip(R._flatten(idx2crd(i, b.shape)), strides))
               for i in indices(b.size))


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


def tally(name: str, outcome: str, cpp: Callable[[], str] | None = None, result: Any = None,
          call: Callable[[], Any] | None = None) -> None:
    """Count one case's outcome; with ``RECORD`` set, keep a differing case: its C++ (``cpp()``), ours, and our
    call (``functools.partial``: its arguments let the benchmark check CuTe's answer to a deliberate refusal)."""
    RESULTS.setdefault(name, Counter())[outcome] += 1
    if RECORD is not None and cpp is not None and outcome != "equal":
        RECORD.append((name, outcome, cpp(), result, call))


def mine(o: Any, oe: Exception | None) -> Any:
    return o if oe is None else oe


#: The words of CuTe's static_asserts (and preconditions) that our LayoutErrors quote.
CUTE_RULES = ("Divisibility Condition", "Divisibility condition", "divisibility condition", "Non-injective Layout",
              "Mismatched Ranks", "Mismatched ranks", "Downcast requires adjacent elements", "does not divide the target",
              "negative stride", "returns another function; refused here", "refused here")


def same_modes(o: Layout, q: Layout) -> bool:
    """The same top-level modes as functions of their 1-D index (the forms may differ)."""
    return o.rank == q.rank and all(
        m.size == n.size and all(m(i) == n(i) for i in indices(m.size))
        for m, n in zip(A._modes(o), A._modes(q)))


def outcome(o: Any, oe: Any, t: Any, te: Any, check: Callable[[Layout], bool] | None = None,
            quirk: Callable[[], str | None] | None = None, reference: str = "pycute") -> str:
    """One case's outcome (module doc). ``check``: the operation's postcondition, which our result must meet
    and which tells whether pycute's differing answer is wrong; ``quirk``: a known pycute difference."""
    if oe is None and check is not None:
        assert check(o), str(o)
    if oe is None and te is None:
        if same(o, t):
            return "equal"
        if same_modulo_unit_strides(o, t):
            return "equal but size-1 strides"
        q = ours(t)
        if q is not None and same_modes(o, q):
            return "same function per mode"
        label = quirk() if quirk else None
        if label:
            return label
        assert check is not None, (str(o), str(t))
        return "another answer that meets it" if q is not None and check(q) else "pycute's answer breaks the postcondition"
    if oe is not None and te is not None:
        return "both refuse"
    if oe is not None:
        assert any(rule in str(oe) for rule in CUTE_RULES), str(oe)
        if "refused here" in str(oe):
            return "refused where CuTe's C++ returns another function"
        return f"CuTe's C++ refuses, {reference} computes"
    label = quirk() if quirk else None
    return label or "pycute refuses, CuTe's C++ computes"


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
        tally(name, outcome(o, oe, t, te), lambda: f"{name}({C.to_cpp(L)}" + (
            "" if profile is None else f", {C.cpp_tuple(profile, 'make_tuple')}") + ")", mine(o, oe))
        if name == "coalesce" and profile is None:
            assert o.size == L.size and all(o(i) == L(i) for i in indices(L.size))
    assert set(RESULTS[name]) == {"equal"}


def test_make_layout_concatenates():
    rng = rng_for("make_layout")
    for _ in range(CASES):
        parts = [R.random_int_layout(rng, max_size=64) for _ in range(rng.randint(1, 4))]
        result = A.make_layout(*parts)
        tally("make_layout", outcome(result, None, P.make_layout(*[ref(p) for p in parts]), None),
              lambda: "make_layout(" + ", ".join(map(C.to_cpp, parts)) + ")", result)
    assert set(RESULTS["make_layout"]) == {"equal"}


def test_cosize():
    """Of a Layout, pycute's cosize (with ``|stride|``: CuTe's coshape takes it, pycute's ``L(size - 1) + 1``
    does not); of ``Sw o 0 o L``, CuTe's C++ takes the inner layout's cosize (``layout_composed.hpp``),
    pycute's ``ComposedLayout.cosize`` the outer swizzle's size."""
    rng = rng_for("cosize")
    for _ in range(CASES):
        L = R.random_int_layout(rng, negative=True)
        inner = P.cosize(ref(Layout(L.shape, _abs(L.stride))))
        if rng.random() < 0.5:
            label = "equal" if A.cosize(L) == P.cosize(ref(L)) else "equal with |stride| (C++)"
            assert A.cosize(L) == inner
            tally("cosize", label, lambda: f"cosize({C.to_cpp(L)})", A.cosize(L))
        else:
            sw = R.random_swizzle(rng, 10, within=False)
            assert P.cosize(P.ComposedLayout(P.Swizzle(sw.bits, sw.base, sw.shift), 0, ref(L))) == sw.size
            assert A.cosize(ComposedLayout(sw, 0, L)) == inner
            tally("cosize", "equal to the inner cosize (C++)", lambda: f"cosize({C.to_cpp(ComposedLayout(sw, 0, L))})",
                  A.cosize(ComposedLayout(sw, 0, L)))


# -- composition ---------------------------------------------------------------------------------------


def tiler_layout(t: Any) -> Layout:
    """A tiler entry as the layout it composes with: an int ``n`` is ``n:1`` (CuTe's integral tiler)."""
    return Layout(t, 1) if isinstance(t, int) else t


def composes(a: Layout, b: Any) -> Callable[[Layout], bool]:
    """The postcondition of ``a ∘ b``: mode by mode for a tuple tiler (CuTe drops a's modes past it)."""
    if isinstance(b, tuple):
        return lambda r: r.rank == len(b) and all(
            e is None or is_composition(r.mode(i), a.mode(i), tiler_layout(e)) for i, e in enumerate(b))
    return lambda r: is_composition(r, a, b)


def test_composition():
    """Outcomes besides ``equal``: CuTe 4.2's weaker divisibility conditions compose what pycute's asserts
    refuse (our result checked against the postcondition); pycute reads A's trailing size-1 mode as stride 0
    where CuTe's ``coalesce_x`` extends A with its stride, so past A's size pycute's answer is wrong; a tuple
    tiler shorter than A's rank: CuTe drops the modes past it ("Drop any modes of lhs that aren't hit by
    rhs"), pycute keeps them."""
    rng = rng_for("composition")
    for k in range(CASES):
        a = R.random_int_layout(rng, pow2=k % 2 == 0)
        b = tiler(rng, a) if rng.random() < 0.2 else R.random_int_layout(rng, pow2=k % 2 == 0)
        (o, oe), (t, te) = run(A.composition, a, b), run_ref(P.composition, ref(a), ref_tiler(b))

        def dropped() -> str | None:
            if isinstance(b, tuple) and len(b) < a.rank and te is None and len(ours(t).shape) == a.rank:
                return "CuTe drops the modes past the tiler"
            return None

        tally("composition", outcome(o, oe, t, te, check=composes(a, b), quirk=dropped),
              lambda: f"composition({C.to_cpp(a)}, {C.cpp_tiler(b)})", mine(o, oe), partial(A.composition, a, b))


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
    with pytest.raises(LayoutError, match=r"Stride Divisibility Condition.* stride 6 .* mode size 4"):
        A.composition(Layout((4, 8), (1, 5)), Layout(2, 6))
    with pytest.raises(LayoutError, match=r"Shape Divisibility Condition.* needs 6 elements"):
        A.composition(Layout((4, 8), (1, 5)), Layout(6, 1))


# -- complement and inverses ---------------------------------------------------------------------------


def complement_postconditions(L: Layout) -> Callable[[Layout], bool]:
    """CuTe's: ordered (its offsets increase) and disjoint from L's codomain but 0; no size-0 mode."""
    image = {L(i) for i in range(L.size)}

    def check(r: Layout) -> bool:
        values = [r(i) for i in range(r.size)]
        return all(x < y for x, y in zip(values, values[1:])) and not (set(values[1:]) & image)
    return check


def test_complement():
    """Besides ``equal``: CuTe refuses overlapping modes ("Non-injective Layout detected in complement")
    where pycute returns a layout with a size-0 mode; pycute's default cotarget is 1, CuTe's
    ``cosize(filter(L))`` (both give the same complement)."""
    rng = rng_for("complement")
    for _ in range(CASES):
        L = R.random_int_layout(rng, max_size=512)
        m = rng.choice([None, 1, 8, 24, 64, 96, 128, 1000])
        (o, oe), (t, te) = run(A.complement, L, m), run_ref(P.complement, ref(L), 1 if m is None else m)
        tally("complement", outcome(o, oe, t, te, check=complement_postconditions(L)),
              lambda: f"complement({C.to_cpp(L)}" + ("" if m is None else f", Int<{m}>{{}}") + ")", mine(o, oe))
    assert "pycute's answer breaks the postcondition" not in RESULTS["complement"]


def test_complement_examples_of_the_cute_docs():
    for layout, text in [(Layout(4, 1), "6:4"), (Layout(6, 4), "4:1"), (Layout((4, 6), (1, 4)), "1:0"),
                         (Layout(4, 2), "(2,3):(1,8)"), (Layout((2, 4), (1, 6)), "3:2"),
                         (Layout((2, 2), (1, 6)), "(3,2):(2,12)")]:
        assert str(A.complement(layout, 24)) == text
    assert str(A.complement(Layout(2, 1), (3, 8))) == "16:2"  # a shape cotarget divides mode by mode: (2, 8)
    with pytest.raises(LayoutError, match="Non-injective Layout detected in complement"):
        A.complement(Layout((2, 2), (1, 1)), 8)
    with pytest.raises(LayoutError, match="negative stride"):
        A.complement(Layout(4, -1), 8)


def test_right_inverse():
    """CuTe 4.2 sorts the strides and skips a stride-0 or negative mode; pycute stops at it: a smaller right
    inverse, which the postcondition check accepts."""
    rng = rng_for("right_inverse")
    for _ in range(CASES):
        L = R.random_int_layout(rng, negative=True)
        flat = A.coalesce(L)
        check = lambda r: all(flat(r(i)) == i for i in indices(r.size))  # noqa: E731

        def smaller() -> str | None:
            q = ours(t)
            return "pycute's is smaller" if q.size < o.size and check(q) else None

        (o, oe), (t, te) = run(A.right_inverse, L), run_ref(P.right_inverse, ref(L))
        tally("right_inverse", outcome(o, oe, t, te, check=check, quirk=smaller),
              lambda: f"right_inverse({C.to_cpp(L)})", mine(o, oe))


def test_left_inverse():
    """CuTe 4.2's left_inverse is a quasi-inverse read off the sorted strides; pycute's is
    ``right_inverse((L, complement(L)))``. Where L is injective both must invert it."""
    rng = rng_for("left_inverse")
    for _ in range(CASES):
        L = R.random_int_layout(rng, max_size=512)
        injective = len({L(i) for i in range(L.size)}) == L.size
        check = lambda r: all(L(r(L(i))) == L(i) for i in range(L.size))  # noqa: E731 - the quasi-inverse
        (o, oe), (t, te) = run(A.left_inverse, L), run_ref(P.left_inverse, ref(L))

        def another() -> str | None:
            q = None if t is None else ours(t)
            if q is not None and injective and all(q(L(i)) == i for i in range(L.size)):
                return "another left inverse"
            return None

        tally("left_inverse", outcome(o, oe, t, te, check=check, quirk=another),
              lambda: f"left_inverse({C.to_cpp(L)})", mine(o, oe), partial(A.left_inverse, L))
        if oe is None and injective:
            assert all(o(L(i)) == i for i in range(L.size))


# -- divides and products ------------------------------------------------------------------------------


def spread(p: Any, first: bool) -> Any:
    """CuTe's ``result(repeat<R0>(_), repeat<R1>(_))`` with pycute's own slicing: None is pycute's ``_``; a
    rank-1 mode gets a single None, as ``repeat<1>(_)`` is ``_``."""
    def nones(mode: Any) -> Any:
        return tuple([None] * len(mode.shape)) if isinstance(mode.shape, tuple) and len(mode.shape) > 1 else None
    return p(nones(p[0]) if first else None, nones(p[1]))


def _int_in(t: Any) -> bool:
    return isinstance(t, int) or (isinstance(t, tuple) and any(_int_in(e) for e in t))


def logical_check(kind: str, a: Layout, b: Any) -> Callable[[Layout], bool]:
    """The postcondition of ``logical_divide`` (``a ∘ (b, b*)``, ``b*`` the complement within
    ``shape(coalesce(a))``) or ``logical_product`` (``(a, a* ∘ b)``, ``a*`` within ``size(a) * cosize(b)``),
    through the composition's; mode by mode for a tuple tiler."""
    if isinstance(b, tuple):
        checks = [(i, logical_check(kind, a.mode(i), e)) for i, e in enumerate(b) if e is not None]
        return lambda r: r.rank == a.rank and all(c(r.mode(i)) for i, c in checks)
    b = Layout(b) if isinstance(b, int) else b
    try:
        if kind == "divide":
            whole = A.make_layout(b, A.complement(b, A.coalesce(a).shape))
            return lambda r: is_composition(r, a, whole)
        rest = A.complement(a, a.size * b.cosize)
        return lambda r: r.rank == 2 and r.mode(0) == a and is_composition(r.mode(1), rest, b)
    except LayoutError:
        return lambda r: False


@pytest.mark.parametrize("name", ["logical_divide", "zipped_divide", "tiled_divide", "flat_divide",
                                  "logical_product", "zipped_product", "tiled_product", "flat_product"])
def test_divides_and_products(name):
    """flat_divide / flat_product: pycute's zipped one, spread with pycute's slicing as CuTe's C++ does.
    The regrouped ones are checked through their logical one. Besides the composition's outcomes: pycute's
    logical_product calls logical_divide for an int tiler; CuTe 4.2's logical_divide takes the complement
    within ``shape(coalesce(A))`` (divided mode by mode), pycute within ``size(A)``."""
    rng = rng_for(name)
    kind = "divide" if "divide" in name else "product"
    ours_f, logical_ref = getattr(A, name), getattr(P, f"logical_{kind}")
    if name.startswith("flat"):
        base = getattr(P, name.replace("flat", "zipped"))
        ref_f = lambda x, y: spread(base(x, y), first=True)  # noqa: E731
    else:
        ref_f = getattr(P, name)
    for _ in range(CASES):
        a = R.random_int_layout(rng, max_size=1024)
        zipped = not name.startswith("logical")
        b = tiler(rng, a, nones=not zipped, full=zipped) if rng.random() < 0.3 else R.random_int_layout(rng, max_size=64)
        (o, oe), (t, te) = run(ours_f, a, b), run_ref(ref_f, ref(a), ref_tiler(b))
        logical = logical_check(kind, a, b)
        if oe is None:
            assert logical(getattr(A, f"logical_{kind}")(a, b)), (name, a, b)

        def quirk() -> str | None:
            if kind == "product" and _int_in(b):  # pycute's logical_product calls logical_divide for an int
                divide = getattr(P, name.replace("product", "divide").replace("flat", "zipped"))
                divided, error = run_ref(divide, ref(a), ref_tiler(b))
                if name.startswith("flat") and error is None:
                    divided = spread(divided, first=True)
                if (te is not None and error is not None) or (te is None and error is None and divided.shape == t.shape
                                                               and divided.stride == t.stride):
                    return "pycute divides for an int tiler"
            if kind == "divide" and te is None and same_modes(A._modes(o)[0], A._modes(ours(t))[0]):
                return "the same tile, the rest within shape(coalesce(A)) (C++ 4.2)"
            if te is None:
                theirs = run_ref(logical_ref, ref(a), ref_tiler(b))[0]
                if theirs is None or ours(theirs) is None or not logical(ours(theirs)):
                    return "pycute's answer breaks the postcondition"
            return None

        tally(name, outcome(o, oe, t, te, quirk=quirk), lambda: f"{name}({C.to_cpp(a)}, {C.cpp_tiler(b)})", mine(o, oe),
              partial(ours_f, a, b))


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
    """CuTe's C++ ``blocked_product`` / ``raked_product`` with pycute's operations: pad both to one rank
    with ``1:0`` modes, ``logical_product``, zip like modes."""
    rank = max(len(block), len(tiler_))

    def pad(p: Any) -> Any:
        return p if len(p) == rank else P.make_layout([p[i] for i in range(len(p))] + [P.Layout(1, 0)] * (rank - len(p)))

    result = P.logical_product(pad(block), pad(tiler_))
    first, second = (result[1], result[0]) if raked else (result[0], result[1])
    if not isinstance(first.shape, tuple):
        return P.Layout(((first.shape, second.shape),), ((first.stride, second.stride),))
    return P.Layout(tuple(zip(first.shape, second.shape)), tuple(zip(first.stride, second.stride)))


@pytest.mark.parametrize("name", ["blocked_product", "raked_product"])
def test_blocked_and_raked_products(name):
    """Against CuTe's C++ definition written with pycute's operations."""
    rng = rng_for(name)
    raked = name == "raked_product"
    for _ in range(CASES):
        block = R.random_int_layout(rng, max_size=256)
        til = R.random_int_layout(rng, max_size=64)
        (o, oe), (t, te) = run(getattr(A, name), block, til), run_ref(ref_rank_sensitive, ref(block), ref(til), raked)
        check = lambda r: r.size == block.size * til.size and r.rank == max(block.rank, til.rank)  # noqa: E731
        tally(name, outcome(o, oe, t, te, check=check), lambda: f"{name}({C.to_cpp(block)}, {C.to_cpp(til)})",
              mine(o, oe))


def ref_tile_to_shape(block: Layout, shape: tuple, order: Any) -> Any:
    """CuTe's C++ ``tile_to_shape`` with pycute's operations: ``blocked_product`` of the padded block with
    the repeat counts, ordered as CuTe's ``compact_order``."""
    rank = len(shape)
    padded = block if block.rank == rank else A.make_layout(*[block.mode(i) for i in range(block.rank)],
                                                            *[Layout(1, 0)] * (rank - block.rank))
    counts = tuple(t // padded.mode(i).size for i, t in enumerate(shape))
    order = tuple(range(rank)) if order is None else order
    strides = [int(P.product(tuple(c for c, k in zip(counts, order) if k < o))) for o in order]
    strides = [0 if c == 1 else d for c, d in zip(counts, strides)]  # CuTe's compact strides: _1 gets _0
    return ref_rank_sensitive(ref(padded), P.Layout(counts, tuple(strides)), raked=False)


def test_tile_to_shape():
    rng = rng_for("tile_to_shape")
    for _ in range(CASES):
        block = R.random_int_layout(rng, max_size=64)
        rank = max(block.rank, rng.randint(1, 3))
        padded_sizes = [block.mode(i).size for i in range(block.rank)] + [1] * (rank - block.rank)
        shape = tuple(s * rng.choice([1, 2, 3, 4]) for s in padded_sizes)
        if rng.random() < 0.1:
            shape = tuple(s + 1 for s in shape)  # usually not divisible
        order = None if rng.random() < 0.5 else tuple(rng.sample(range(rank), rank))
        (o, oe) = run(A.tile_to_shape, block, shape, order)
        (t, te) = run_ref(ref_tile_to_shape, block, shape, order)
        check = lambda r: tuple(r.mode(i).size for i in range(len(shape))) == shape  # noqa: E731
        if oe is not None and "does not divide the target shape" in str(oe):
            assert any(t_ % s for s, t_ in zip(padded_sizes, shape))
        tally("tile_to_shape", outcome(o, oe, t, te, check=check), lambda: f"tile_to_shape({C.to_cpp(block)}, "
              f"{C.cpp_tuple(shape)}" + ("" if order is None else f", {C.cpp_tuple(order, 'make_step')}") + ")",
              mine(o, oe))


# -- slicing -------------------------------------------------------------------------------------------


def random_coordinate(rng: random.Random, shape: Any) -> Any:
    if isinstance(shape, tuple):
        return tuple(random_coordinate(rng, s) for s in shape)
    return None if rng.random() < 0.4 else rng.randrange(shape)


def test_slice_and_offset():
    """``slice_and_offset`` and ``L(None, j)`` as pycute's; a bare None is CuTe's ``slice(_, L) == L``
    (pycute wraps it in a 1-tuple), so the coordinates here are tuples."""
    rng = rng_for("slice_and_offset")
    for _ in range(CASES):
        L = R.random_int_layout(rng, negative=True)
        if not isinstance(L.shape, tuple):
            L = Layout((L.shape,), (L.stride,))
        crd = random_coordinate(rng, L.shape)
        (sub, offset), (tsub, toffset) = A.slice_and_offset(crd, L), P.slice_and_offset(crd, ref(L))
        assert offset == toffset
        if has_none(crd):
            assert L(*crd) == sub if len(crd) > 1 else L(crd) == sub
        tally("slice_and_offset", outcome(sub, None, tsub, None),
              lambda: f"slice_and_offset({C.cpp_tuple(crd, 'make_coord')}, {C.to_cpp(L)})", (sub, offset))
    assert set(RESULTS["slice_and_offset"]) == {"equal"}
    assert A.slice(None, Layout((4, 8))) == Layout((4, 8))


# -- element size and common vectors -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["upcast", "downcast"])
def test_upcast_downcast_against_tensor_layouts(name):
    """pycute has neither: tensor-layouts (an independent Python CuTe) where CuTe computes; downcast then
    upcast is the identity."""
    tl = pytest.importorskip("tensor_layouts")
    rng = rng_for(name)
    for _ in range(CASES):
        L = R.random_int_layout(rng, negative=True)
        n = rng.choice([1, 2, 4, 8, 3, 16])
        o, oe = run(getattr(A, name), L, n)
        t, te = run_ref(getattr(tl, name), tl.Layout(L.shape, L.stride), n)
        tally(name, outcome(o, oe, None if te else P.Layout(t.shape, t.stride), te, reference="tensor-layouts"),
              lambda: f"{name}<{n}>({C.to_cpp(L)})", mine(o, oe))
        if name == "downcast" and oe is None:
            assert A.upcast(o, n) == L, (L, n, str(o))
    assert {"equal", "CuTe's C++ refuses, tensor-layouts computes"} >= set(RESULTS[name])


def test_recast_layout():
    rng = rng_for("recast_layout")
    bits = {"int8": 8, "fp16": 16, "fp32": 32, "fp64": 64}
    for _ in range(CASES):
        L = R.random_int_layout(rng)
        old, new = rng.choice(list(bits)), rng.choice(list(bits))
        o, oe = run(A.recast_layout, L, old, new)
        want = (run(A.upcast, L, bits[new] // bits[old]) if bits[new] >= bits[old]
                else run(A.downcast, L, bits[old] // bits[new]))
        assert (str(o), str(oe)) == (str(want[0]), str(want[1]))
        tally("recast_layout", "equal to upcast / downcast" if oe is None else "CuTe's C++ refuses",
              lambda: f"recast_layout<{C.TYPES[bits[old]]}, {C.TYPES[bits[new]]}>({C.to_cpp(L)})", mine(o, oe))
    assert str(A.recast_layout(Layout((8, 64), (64, 1)), "fp16", "fp32")) == "(8,32):(32,1)"
    assert A.recast_layout(Swizzle(3, 4, 3), 8, 16) == Swizzle(3, 3, 3)


def test_max_common_vector_and_layout():
    """pycute has neither: CuTe's C++ definition with pycute's operations, tensor-layouts, and the
    postcondition ``a(R(i)) == b(R(i)) == i``."""
    tl = pytest.importorskip("tensor_layouts")
    rng = rng_for("max_common")
    for _ in range(CASES):
        shape = R.random_int_layout(rng, max_size=1024).shape
        a = Layout(shape, _random_compact_strides(rng, shape))  # two layouts of one shape, compact in random
        b = Layout(shape, _random_compact_strides(rng, shape))  # orders, sometimes with holes
        (v, ve), (cl, _) = run(A.max_common_vector, a, b), run(A.max_common_layout, a, b)
        common, ce = run_ref(lambda: P.coalesce(P.composition(ref(a), P.right_inverse(ref(b)))))
        if ve is None and ce is None:
            first_shape = common.shape[0] if isinstance(common.shape, tuple) else common.shape
            first_stride = common.stride[0] if isinstance(common.stride, tuple) else common.stride
            label = "equal" if v == (first_shape if first_stride == 1 else 1) else "differ"
            assert cl.size == v and all(a(cl(i)) == i and b(cl(i)) == i for i in range(v)), (a, b, str(cl))
            assert tl.max_common_vector(tl.Layout(a.shape, a.stride), tl.Layout(b.shape, b.stride)) == v
        else:
            label = "both refuse" if ce is not None and ve is not None else (
                "pycute refuses, CuTe's C++ computes" if ve is None else "CuTe's C++ refuses, pycute computes")
        tally("max_common_vector", label, lambda: f"max_common_vector({C.to_cpp(a)}, {C.to_cpp(b)})",
              mine(v, ve))
    assert "differ" not in RESULTS["max_common_vector"]


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
