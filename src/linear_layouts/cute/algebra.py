"""CuTe's layout algebra on ``shape:stride`` layouts of any integers, with CuTe's names and CuTe's results:
the semantics of CUTLASS 4.2's C++ (``include/cute/layout.hpp``, ``layout_composed.hpp``,
``swizzle_layout.hpp``), which NVIDIA's Python ``pycute`` follows in most places.

A mode may have size 0 (``(4,0):(1,4)``, as pycute and CuTe take it): every operation then gives pycute's
answer -- where CuTe's C++ differs for size 0 (``cosize``, the inverses, ``coalesce_x``), pycute's -- and
where pycute divides by the 0 (splitting an index by a size-0 mode before the last, composing through one,
the complement of one with a stride) a LayoutError names the argument and that rule.

Every integer is *static*, as CuTe's ``_N``: a mode of size 1 is dropped where CuTe drops ``_1``, and
where CuTe's C++ stops with a ``static_assert`` (a divisibility condition, overlapping modes) this module
raises a LayoutError quoting CuTe's rule. Twice it is stricter than CuTe, where CuTe 4.2 compiles and
returns a layout that is not the operation's function, each checked on the case: a composition through a
stride below a mode's size that does not divide it, or a negative one that is no multiple of it (refused
where CuTe's answer differs from ``k -> A(k * d)``), and the left inverse of overlapping modes (refused where CuTe's answer breaks its own
postcondition ``L(R(L(i))) == L(i)``).

=====================================  ===========================================================
operation                              CuTe's definition (one line)
=====================================  ===========================================================
``make_layout(L0, L1, ...)``           concatenation: ``(L0, L1, ...)``, each argument one mode
``coalesce(L[, profile])``             the same function of the 1-D index with the fewest modes
``filter(L[, profile])``               ``coalesce`` after dropping the stride-0 modes
``composition(A, B)``                  ``R(c) = A(B(c))`` on B's coordinates, one Layout where CuTe
                                       makes one; a tuple B (a *tiler*) composes mode by mode
``complement(A, M)``                   the ordered layout of the offsets below ``M`` that A misses
``logical_divide(A, B)``               ``A ∘ (B, complement(B, shape A))``: (tile, rest)
``zipped/tiled/flat_divide``           the same modes, regrouped: ``((T..),(R..))``, ``((T..),R..)``...
``logical_product(A, B)``              ``(A, complement(A, size A * cosize B) ∘ B)``
``zipped/tiled/flat_product``          the same modes, regrouped
``blocked_product / raked_product``    the product with like modes of A and B zipped together
``tile_to_shape(A, shape[, order])``   ``A`` repeated (``blocked_product``) to fill ``shape``
``right_inverse / left_inverse``       ``A(R(i)) == i`` on R's domain / ``L(A(i)) == i`` on A's
``slice_and_offset(crd, A)``           ``A(None, j)`` (CuTe ``A(_, j)``): the sub-layout and its offset
``upcast / downcast / recast_layout``  the layout in units of ``n`` elements / of ``1/n`` of one
``max_common_vector / _layout``        how many leading elements two layouts place identically
``cosize(A)``                          ``max offset + 1``; of a ComposedLayout, its inner layout's
=====================================  ===========================================================

>>> A = Layout((6, 2), (8, 2))
>>> print(composition(A, Layout((4, 3), (3, 1))))         # CuTe's layout-algebra doc, composition
((2,2),3):((24,2),8)
>>> print(complement(Layout((2, 2), (1, 6)), 24))
(3,2):(2,12)
>>> print(logical_divide(Layout((4, 2, 3), (2, 1, 8)), Layout(4, 2)))
((2,2),(2,3)):((4,1),(2,8))
>>> print(right_inverse(Layout((4, 8), (8, 1))))
(8,4):(4,1)
"""

from __future__ import annotations

import numbers
from fractions import Fraction
from typing import Any, Callable, Union

import numpy as np

from linear_layouts.cute.int_tuple import (
    IntTuple,
    check_int_tuple,
    compact_col_major,
    flatten,
    format_int_tuple,
    is_tuple,
    none_as_zero,
    prefix_product,
    product,
    product_each,
    slice_modes,
    zero_before_last,
)
from linear_layouts.cute.layout import ComposedLayout, CuteFunction, Layout, Swizzle, _merge_swizzles, _slice_and_offset
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import MAX_ELEMENTS, check_count, quote, shorten

__all__ = [
    "Tiler",
    "make_layout",
    "cosize",
    "coalesce",
    "filter",
    "composition",
    "complement",
    "right_inverse",
    "left_inverse",
    "logical_divide",
    "zipped_divide",
    "tiled_divide",
    "flat_divide",
    "logical_product",
    "zipped_product",
    "tiled_product",
    "flat_product",
    "blocked_product",
    "raked_product",
    "tile_to_shape",
    "make_ordered_layout",
    "slice",
    "slice_and_offset",
    "upcast",
    "downcast",
    "recast_layout",
    "max_common_vector",
    "max_common_layout",
]

#: What CuTe composes and divides by: a Layout, an int ``n`` (the layout ``n:1``), None (CuTe's ``_``: this
#: mode unchanged), or a tuple of these, one per mode (a tuple of ints is a Shape: stride-1 tiles).
Tiler = Union[Layout, int, None, tuple]


# -- small helpers -------------------------------------------------------------------------------------


def _check_layout(x: Any, what: str) -> Layout:
    if not isinstance(x, Layout):
        raise LayoutError(f"{what} must be a CuTe Layout, got {type(x).__name__}")
    return x


def _check_positive(n: Any, what: str) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise LayoutError(f"{what} must be an int >= 1, got {quote(n)}")
    return int(n)


def _check_tiler(t: Any, what: str, depth: int = 0) -> Tiler:
    """A tiler (``Tiler``) with lists as tuples; an int entry ``n >= 0`` (``0`` is the size-0 tile ``0:1``,
    as pycute's ``Layout(0)``)."""
    if t is None or isinstance(t, Layout):
        return t
    if isinstance(t, (tuple, list)):
        if depth > 16:
            raise LayoutError(f"{what}: nested deeper than 16 levels")
        return tuple(_check_tiler(e, what, depth + 1) for e in t)
    if isinstance(t, bool) or not isinstance(t, numbers.Integral) or t < 0:
        raise LayoutError(f"{what} must be an int >= 0, a Layout, None or a tuple of these, got {quote(t)}")
    return int(t)


def _flat(layout: Layout) -> tuple[list[int], list[int]]:
    """The leaf shapes and strides; a layout without leaves (``():()``, the function ``0 -> 0``) as ``1:0``.

    >>> _flat(Layout((2, (3, 4)), (1, (2, 6)))), _flat(Layout((), ()))
    (([2, 3, 4], [1, 2, 6]), ([1], [0]))
    """
    shapes, strides = list(flatten(layout.shape)), list(flatten(layout.stride))  # type: ignore[arg-type]
    return (shapes, strides) if shapes else ([1], [0])


def _has_size_zero(layout: Layout) -> bool:
    """Whether ``layout`` has a size-0 leaf, so size 0 (found without multiplying the sizes)."""
    return 0 in flatten(layout.shape)  # type: ignore[arg-type]


def _layout(shapes: list[int], strides: list[int]) -> Layout:
    """A flat layout from its modes; one mode is an int layout, as CuTe unwraps it."""
    if len(shapes) == 1:
        return Layout(shapes[0], strides[0])
    return Layout(tuple(shapes), tuple(strides))


def _modes(layout: Layout) -> list[Layout]:
    """The top-level modes (CuTe ``layout<i>``); an int layout is its own only mode."""
    return [layout.mode(i) for i in range(layout.rank)]


def _sign(x: int) -> int:
    return (x > 0) - (x < 0)


def _bw_coalesce(shapes: list[int], strides: list[int], last_shape: int, last_stride: int) -> Layout:
    """CuTe's ``detail::bw_coalesce``: walk the modes back to front onto ``last_shape:last_stride``,
    dropping size-1 modes, merging ``s:d`` into the front mode when ``s * d`` is its stride."""
    out_s, out_d = [last_shape], [last_stride]
    for s, d in zip(reversed(shapes), reversed(strides)):
        if s == 1:
            continue
        if len(out_s) == 1 and out_s[0] == 1:
            out_s[0], out_d[0] = s, d
        elif s * d == out_d[0]:
            out_s[0], out_d[0] = s * out_s[0], d
        else:
            out_s.insert(0, s)
            out_d.insert(0, d)
    if len(out_s) == 1 and out_s[0] == 1:
        return Layout(1, 0)
    return _layout(out_s, out_d)


def _by_mode(layout: Layout, profile: tuple, f: Callable[[Layout, Any], Layout], what: str) -> Layout:
    """CuTe's ``transform_layout(layout, profile, f)``: ``f`` on the first ``len(profile)`` modes, the
    other modes kept."""
    modes = _modes(layout)
    if len(profile) > len(modes):
        raise LayoutError(f"{what}: {len(profile)} modes in the tiler/profile but the layout {shorten(str(layout))} "
                          f"has rank {len(modes)}")
    return make_layout(*(f(m, p) for m, p in zip(modes, profile)), *modes[len(profile):])


def _map_leaves(layout: Layout, f: Callable[[int, int], tuple[int, int]]) -> Layout:
    """``f(s, d) -> (s', d')`` on every leaf mode, keeping the nesting (CuTe ``transform_layout`` on leaves)."""
    def walk(s: IntTuple, d: IntTuple) -> tuple[IntTuple, IntTuple]:
        if is_tuple(s):
            pairs = [walk(x, y) for x, y in zip(s, d)]  # type: ignore[arg-type]
            return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
        return f(s, d)  # type: ignore[arg-type]
    return Layout(*walk(layout.shape, layout.stride))


def _pad(layout: Layout, rank: int) -> Layout:
    """CuTe ``append<R>(layout)``: extra ``1:0`` modes up to ``rank`` (unchanged at that rank already)."""
    if layout.rank == rank:
        return layout
    return make_layout(*_modes(layout), *([Layout(1, 0)] * (rank - layout.rank)))


def _zip(a: Layout, b: Layout) -> Layout:
    """CuTe ``zip(a, b)``: ``((a0, b0), (a1, b1), ...)``; two rank-1 int layouts give ``((a, b))``."""
    if not is_tuple(a.shape):
        return Layout(((a.shape, b.shape),), ((a.stride, b.stride),))
    if not is_tuple(b.shape) or len(b.shape) != len(a.shape):
        raise LayoutError(f"zip: {shorten(str(a))} and {shorten(str(b))} have different modes (CuTe's zip: "
                          f"\"Mismatched Ranks\")")
    return Layout(tuple(zip(a.shape, b.shape)), tuple(zip(a.stride, b.stride)))  # type: ignore[arg-type]


def _zip2_by(t: IntTuple, guide: Any, what: str) -> IntTuple:
    """CuTe ``zip2_by``: the rank-2 modes at the guide's leaves, their firsts gathered into mode 0 and
    their seconds (then the unguided modes) into mode 1: ``((A,a),(B,b),c) -> ((A,B),(a,b,c))``."""
    if isinstance(guide, tuple):
        if not is_tuple(t) or len(t) < len(guide):
            raise LayoutError(f"{what}: the result {shorten(format_int_tuple(t))} has fewer modes than the tiler")
        split = [_zip2_by(t[i], guide[i], what) for i in range(len(guide))]  # type: ignore[index]
        return tuple(s[0] for s in split), tuple(s[1] for s in split) + tuple(t[len(guide):])  # type: ignore
    if not is_tuple(t) or len(t) != 2:
        raise LayoutError(f"{what}: a tiler mode of None keeps its layout mode {shorten(format_int_tuple(t))} whole; "
                          f"CuTe's zip2_by needs a (tile, rest) pair there (\"Mismatched ranks\")")
    return t


def _unzip(divided: Layout, tiler: Tiler, what: str) -> Layout:
    """CuTe ``tile_unzip``: the layout regrouped by ``_zip2_by`` on shapes and strides alike."""
    return Layout(_zip2_by(divided.shape, tiler, what), _zip2_by(divided.stride, tiler, what))


def _unpack(layout: Layout) -> list[Layout]:
    """The modes that CuTe's ``layout(_, repeat<R>(_))`` spreads out: a rank-1 mode stays whole."""
    return _modes(layout) if layout.rank > 1 else [layout]


def _on_inner(x: ComposedLayout, f: Callable[[Any], Any]) -> ComposedLayout:
    """CuTe applies the layout operations of a ComposedLayout to its inner layout (its domain)."""
    return ComposedLayout(x.outer, x.offset, f(x.inner))


# -- construction and simplification -------------------------------------------------------------------


def make_layout(*args: Any, stride: Any = None) -> Layout:
    """CuTe ``make_layout``: of Layouts, their concatenation ``(L0, L1, ...)`` (each one mode, also a
    single one; of none, the empty layout ``():()``); else ``make_layout(shape[, stride])``, compact
    column-major by default.

    >>> print(make_layout(Layout(4, 1), Layout((2, 3), (4, 8))))
    (4,(2,3)):(1,(4,8))
    >>> print(make_layout((4, (1, 8))))
    (4,(1,8)):(1,(0,4))
    """
    if all(isinstance(a, Layout) for a in args) and stride is None:
        return Layout(tuple(a.shape for a in args), tuple(a.stride for a in args))  # type: ignore[arg-type]
    if len(args) == 2 and stride is None and not isinstance(args[1], Layout):
        args, stride = args[:1], args[1]
    if len(args) != 1 or isinstance(args[0], (Layout, Swizzle, ComposedLayout)):
        raise LayoutError("make_layout takes Layouts (concatenated) or a shape and an optional stride, got "
                          f"{', '.join(type(a).__name__ for a in args) or 'nothing'}")
    return Layout(args[0], stride)


def cosize(x: Layout | ComposedLayout | Swizzle) -> int:
    """CuTe ``cosize``: ``layout(size - 1) + 1`` with the strides' absolute values, i.e.
    ``1 + sum((s - 1) * |d|)``; of a ComposedLayout the cosize of its inner layout (as CuTe's
    ``layout_composed.hpp``: the outer function is assumed to keep offsets below it); of a Swizzle its size.

    >>> cosize(Layout((4, 8), (8, 1))), cosize(composition(Swizzle(3, 3, 3), Layout((8, 64), (64, 1))))
    (32, 512)
    """
    if isinstance(x, Layout):
        return x.cosize
    if isinstance(x, ComposedLayout):
        return cosize(x.inner)
    if isinstance(x, Swizzle):
        return x.size
    raise LayoutError(f"cosize: expected a Layout, ComposedLayout or Swizzle, got {type(x).__name__}")


def coalesce(layout: Layout | ComposedLayout, profile: Any = None) -> Any:
    """The same function of the 1-D index with the fewest modes (CuTe ``coalesce``): flattened, size-1
    modes dropped, ``s0:d0, s1:s0*d0`` merged into ``s0*s1:d0``; ``1:0`` when no mode is left (also of
    ``():()``, as pycute). With a tuple ``profile`` (CuTe's
    by-mode coalesce), each of the first ``len(profile)`` modes is coalesced on its own (recursively
    for a nested profile) and the rest kept.

    >>> L = Layout((2, (1, 6)), (1, (6, 2)))
    >>> str(coalesce(L)), str(coalesce(L, (1, 1)))
    ('12:1', '(2,6):(1,2)')
    """
    if isinstance(layout, ComposedLayout):
        return _on_inner(layout, lambda inner: coalesce(inner, profile))
    layout = _check_layout(layout, "coalesce: layout")
    if isinstance(profile, (tuple, list)):
        return _by_mode(layout, tuple(profile), coalesce, "coalesce")
    shapes, strides = _flat(layout)
    return _bw_coalesce(shapes[:-1], strides[:-1], shapes[-1], strides[-1])


def filter(layout: Layout | ComposedLayout, profile: Any = None) -> Any:  # noqa: A001 - CuTe's name
    """``coalesce`` after replacing every stride-0 mode by size 1 (CuTe ``filter``): the layout of the
    distinct offsets; ``1:0`` when none is left. A tuple ``profile`` filters mode by mode.

    >>> print(filter(Layout((4, 2, 8), (1, 0, 4))))
    32:1
    """
    if isinstance(layout, ComposedLayout):
        return _on_inner(layout, lambda inner: filter(inner, profile))
    layout = _check_layout(layout, "filter: layout")
    if isinstance(profile, (tuple, list)):
        return _by_mode(layout, tuple(profile), filter, "filter")
    shapes, strides = _flat(layout)
    shapes = [1 if d == 0 else s for s, d in zip(shapes, strides)]
    return coalesce(_layout(shapes, strides))


# -- composition ---------------------------------------------------------------------------------------


def _coalesce_x(layout: Layout, size_zero: bool = False) -> tuple[list[int], list[int]]:
    """CuTe's ``detail::coalesce_x``: ``coalesce`` that also keeps the function past the domain's end
    (a trailing size-1 mode keeps its stride), as flat lists of shapes and strides. Where a size 0 takes
    part (``layout`` of size 0, or ``size_zero``: B of size 0), plain ``coalesce``, as pycute's composition:
    the kept size-1 mode would be one more mode for B to divide, and put a size-0 mode before the last.

    >>> _coalesce_x(Layout((4, 1), (1, 7))), _coalesce_x(Layout((4, 0, 1), (1, 4, 7)))
    (([4, 2], [1, 7]), ([0], [1]))
    """
    shapes, strides = _flat(layout)
    if size_zero or 0 in shapes:
        return _flat(coalesce(layout))
    seed = 2 if shapes[-1] == 1 else shapes[-1]
    flat = _bw_coalesce(shapes[:-1], strides[:-1], seed, strides[-1])
    return _flat(flat)


def _compose_mode(shapes: list[int], strides: list[int], s: int, d: int, what: str, strict: bool = True,
                  budget: list[int] | None = None) -> Layout:
    """CuTe's ``composition_impl`` of a flat, coalesced A with one integral mode ``s:d`` of B: walk A's
    modes but the last, dividing the stride ``d`` out of each (stride divisibility: ``d % shape == 0`` or
    ``d < shape``) and keeping as many of its elements as B still needs (shape divisibility: what B
    needs is a multiple of what the mode gives); the rest goes to A's last mode, which extends. A
    negative ``d`` walks with ``|d|`` and keeps its sign in every stride, as CuTe's ``abs`` and
    ``signum`` do: ``k -> A(k * d) == -A(k * |d|)``, A split truncating toward zero as C++ divides
    (``composition((4, 7):(14, 2), 12:-1) == (4, 3):(-14, -2)``).

    Stricter than CuTe in one case, where CuTe's answer is not ``A∘B``: a stride below a mode's size
    that does not divide it, while B needs more of the mode's elements than the stride reaches, or a
    negative stride beyond a mode's size and no multiple of it (which CuTe's condition lets through) --
    there CuTe's answer is compared with ``k -> A(k * d)`` on every ``k < s`` and refused where they differ
    (not checked with ``strict`` false: CuTe's own steps only), or where ``s`` is over what is left of
    ``budget`` (``[n]``, shared by the modes of one composition and spent here; default ``[MAX_ELEMENTS]``).

    Size 0 (pycute's rules): ``s:0`` is ``s:0`` and a one-mode A scales ``d`` (``0:d`` too); else a size-0
    mode of A before its last, or ``s == 0``, is refused, as pycute and CuTe divide by that 0."""
    _check_zero_sizes(shapes, s, d, what)
    result, suspect = _compose_mode_cute(shapes, strides, s, d, what, strict)
    if suspect is None:
        return result
    budget = [MAX_ELEMENTS] if budget is None else budget
    if s <= budget[0]:
        budget[0] -= s
        k = np.arange(s, dtype=object)
        if (_offsets(*_flat(result), k) == _offsets(shapes, strides, k * d)).all():
            return result
    raise LayoutError(suspect)


def _check_zero_sizes(shapes: list[int], s: int, d: int, what: str) -> None:
    """Refuse B's mode ``s:d`` on the flat, coalesced A ``shapes`` where composing it divides by a size 0:
    a size-0 mode of A before its last divides B's stride; ``s == 0`` is divided by what A's first mode
    gives (pycute's ``rest_shape // new_shape``). Nothing to refuse for ``d == 0`` or a one-mode A."""
    if d == 0 or len(shapes) == 1:
        return
    if 0 in shapes[:-1]:
        raise LayoutError(f"{what}: a: its mode {shapes.index(0)} of size 0 is not its last (after coalescing), "
                          f"and B's stride {d} is divided by every mode of A but the last (CuTe's and pycute's "
                          f"composition divide by zero there)")
    if s == 0:
        raise LayoutError(f"{what}: b: its mode 0:{d} has size 0 and a non-zero stride, and A has {len(shapes)} modes "
                          f"(after coalescing): A's first mode gives min(its elements, 0) = 0 of them, and B's size is "
                          f"divided by that 0 (pycute's composition divides by zero there)")


def _compose_mode_cute(shapes: list[int], strides: list[int], s: int, d: int, what: str,
                       strict: bool) -> tuple[Layout, str | None]:
    """``_compose_mode``'s CuTe steps: the result, and (``strict``) why it may not be ``A∘B``, or None."""
    suspect = None
    if d == 0:
        return Layout(s, 0), None
    if len(shapes) == 1:
        return Layout(s, d * strides[0]), None
    result_shape, result_stride, rest_shape, rest_stride = [], [], s, d
    for curr_shape, curr_stride in zip(shapes[:-1], strides[:-1]):
        if not (rest_stride % curr_shape == 0 or rest_stride < curr_shape):
            raise LayoutError(f"{what}: CuTe's \"Stride Divisibility Condition\": the stride {rest_stride} left of B's "
                              f"mode {s}:{d} is neither a multiple of A's mode size {curr_shape} nor below it")
        magnitude = abs(rest_stride)
        next_shape = -(-curr_shape // magnitude)
        next_stride = -(-magnitude // curr_shape) * _sign(rest_stride)
        if strict and suspect is None and rest_shape != 1 and curr_shape % magnitude and (
                (rest_shape > next_shape and next_shape != 1)
                or (rest_stride < 0 and magnitude > curr_shape and magnitude % curr_shape)):
            suspect = (f"{what}: the stride {rest_stride} left of B's mode {s}:{d} and A's mode size {curr_shape} "
                       f"do not divide one another, and B needs {rest_shape} elements from there: they cross A's "
                       f"modes out of step. CuTe's C++ lets this through its weak \"Stride Divisibility Condition\" "
                       f"(which any negative stride meets) and returns another function; refused here")
        if next_shape != 1 and rest_shape != 1:
            new_shape = min(next_shape, rest_shape)
            if rest_shape % new_shape:
                raise LayoutError(f"{what}: CuTe's \"Shape Divisibility Condition\": B's mode {s}:{d} still needs "
                                  f"{rest_shape} elements, not a multiple of the {new_shape} that A's mode "
                                  f"{curr_shape}:{curr_stride} gives")
            result_shape.append(new_shape)
            result_stride.append(rest_stride * curr_stride)
            rest_shape //= new_shape
        rest_stride = next_stride
    if not result_shape:
        return Layout(rest_shape, rest_stride * strides[-1]), suspect
    if rest_shape == 1:
        return _layout(result_shape, result_stride), suspect
    return Layout(tuple(result_shape + [rest_shape]), tuple(result_stride + [rest_stride * strides[-1]])), suspect


def _compose_layouts(a: Layout, b: Layout) -> Layout:
    """``a ∘ b`` for two Layouts: B's modes distribute (the result has B's profile), each composed with
    A flattened and coalesced."""
    shapes, strides = _coalesce_x(a, _has_size_zero(b))
    what = f"composition({shorten(str(a))}, {shorten(str(b))})"
    budget = [MAX_ELEMENTS]  # the elements the modes' checks may compare, together

    def walk(s: IntTuple, d: IntTuple, strict: bool) -> Layout:
        if is_tuple(s):
            return make_layout(*(walk(x, y, strict) for x, y in zip(s, d)))  # type: ignore[arg-type]
        return _compose_mode(shapes, strides, s, d, what, strict, budget)  # type: ignore[arg-type]

    try:
        return walk(b.shape, b.stride, True)
    except LayoutError as error:
        if not str(error).endswith("refused here"):
            raise
        walk(b.shape, b.stride, False)  # where CuTe's C++ refuses too, its rule is the message
        raise


def composition(a: CuteFunction, b: Any) -> Any:
    """``a ∘ b``: the function ``c -> a(b(c))`` on ``b``'s coordinates (CuTe ``composition``).

    * Layout ∘ Layout is one Layout compatible with ``b`` (CuTe's own result, simplified as CuTe
      simplifies it); past ``a``'s size its last mode extends, as in CuTe. Requires CuTe's stride and
      shape divisibility conditions (else LayoutError naming the one that fails). ``b``'s modes
      distribute, ``(a∘b0, a∘b1, ...)``, as in CuTe: that is ``a∘b`` where ``a`` adds their offsets
      without carrying, in particular for an injective ``b``;
    * ``b`` a tiler (a tuple, one entry per mode; an int ``n`` is ``n:1``; None keeps the mode): mode
      ``i`` of ``a`` composed with entry ``i``; modes of ``a`` past the tiler are dropped, as in CuTe;
    * ComposedLayout ∘ tiler composes its inner layout; Swizzle ∘ Layout is ``Sw o 0 o L``; two swizzles
      of one shift merge into one (``Sw<1,0,2> ∘ Sw<1,1,2> == Sw<2,0,2>``); anything else nests.

    >>> print(composition(Layout(20, 2), Layout((5, 4), (4, 1))))
    (5,4):(8,2)
    >>> print(composition(Layout((12, (4, 8)), (59, (13, 1))), (3, 8)))
    (3,(4,2)):(59,(13,1))
    """
    for name, x in (("a", a),):
        if not isinstance(x, (Layout, Swizzle, ComposedLayout)):
            raise LayoutError(f"composition: {name} must be a Layout, Swizzle or ComposedLayout, got {type(x).__name__}")
    if b is None:
        return a
    if isinstance(b, (Swizzle, ComposedLayout)):
        return _compose_functions(a, b)
    b = _check_tiler(b, "composition: b")
    if isinstance(a, ComposedLayout):
        return _on_inner(a, lambda inner: composition(inner, b))
    if isinstance(a, Swizzle):
        if not isinstance(b, Layout):
            raise LayoutError(f"composition: a Swizzle composes with a Layout, not with the tiler {quote(b)}")
        return b if a.is_identity else ComposedLayout(a, 0, b)
    if isinstance(b, tuple):
        modes = _modes(a)
        if len(b) > len(modes):
            raise LayoutError(f"composition: the tiler has {len(b)} modes but {shorten(str(a))} has rank {len(modes)}")
        return make_layout(*(composition(m, t) for m, t in zip(modes, b)))
    if isinstance(b, int):
        shapes, strides = _coalesce_x(a, b == 0)
        return _compose_mode(shapes, strides, b, 1, f"composition({shorten(str(a))}, {b})")
    return _compose_layouts(a, b)


def _compose_functions(a: CuteFunction, b: Swizzle | ComposedLayout) -> CuteFunction:
    """``a ∘ b`` with ``b`` a Swizzle or a ComposedLayout: swizzles of one shift merge, else nest."""
    if isinstance(a, Swizzle) and isinstance(b, Swizzle):
        merged = _merge_swizzles(a, b)
        if merged is not None:
            return merged
    if isinstance(a, Swizzle) and isinstance(b, ComposedLayout) and b.offset == 0 and isinstance(b.outer, Swizzle):
        merged = _merge_swizzles(a, b.outer)
        if merged is not None:
            return b.inner if merged.is_identity else ComposedLayout(merged, 0, b.inner)
    if isinstance(a, Swizzle) and a.is_identity:
        return b
    return ComposedLayout(a, 0, b)


# -- complement and inverses ---------------------------------------------------------------------------


def complement(layout: Layout | ComposedLayout, cotarget: Any = None) -> Layout:
    """The layout of the offsets in ``[0, cotarget)`` that ``layout`` misses, ordered (CuTe
    ``complement``): strides positive and increasing, codomain disjoint from ``layout``'s, repeating it
    up to ``cotarget``. ``cotarget`` an int, or a shape divided mode by mode as CuTe's ``ceil_div`` does;
    by default ``cosize(filter(layout))``. Of a ComposedLayout, its inner layout's complement (CuTe).

    Requires non-negative strides, and the modes (sorted by stride) not to overlap: each stride at
    least the previous mode's ``size * stride`` (CuTe's "Non-injective Layout detected in complement").
    Size 0, as pycute: a size-0 mode of stride 0 is dropped (as every stride-0 mode), one of another stride
    refused (its reach ``0 * stride`` is below the offsets before it); a cotarget of size 0 (or an int
    cotarget up to one reach below 0) gives a last mode of size 0, ``ceil(cotarget / reach)``.

    >>> str(complement(Layout(4, 2), 24)), str(complement(Layout((4, 6), (1, 4)), 24)), str(complement(Layout(4, 2), 0))
    ('(2,3):(1,8)', '1:0', '(2,0):(1,8)')
    """
    if isinstance(layout, ComposedLayout):
        inner = layout.layout
        if inner is None:
            raise LayoutError("complement: a composition of swizzles has no layout")
        return complement(inner, cosize(layout) if cotarget is None else cotarget)
    layout = _check_layout(layout, "complement: layout")
    kept = filter(layout)
    shapes, strides = _flat(kept)
    if any(d < 0 for d in strides):
        raise LayoutError(f"complement: {shorten(str(layout))} has a negative stride; CuTe's complement orders "
                          f"the modes by stride and needs them non-negative")
    if 0 in shapes:
        raise LayoutError(f"complement: {shorten(str(layout))} has a mode of size 0 and a non-zero stride: its reach, "
                          f"size * stride = 0, is below the offsets of the modes before it (pycute asserts it is not; "
                          f"CuTe's next stride divides by it)")
    if cotarget is None:
        target: IntTuple = kept.cosize
    elif isinstance(cotarget, numbers.Integral) and not isinstance(cotarget, bool):
        target = int(cotarget)
    else:
        target = check_int_tuple(cotarget, "complement: cotarget", minimum=0)
    rule = (f"complement: the modes of {shorten(str(layout))} overlap (sorted by stride, a stride is below the "
            f"previous mode's size * stride): CuTe's \"Non-injective Layout detected in complement\"")
    result_shape: list[int] = []
    result_stride = [1]
    for s, d in sorted(zip(shapes, strides), key=lambda mode: mode[1]):  # stable: CuTe's first smallest stride
        if d == 0:
            continue  # only the ``1:0`` of a layout without a non-zero stride is left after filter
        if d // result_stride[-1] == 0:
            raise LayoutError(rule)
        result_shape.append(d // result_stride[-1])
        result_stride.append(d * s)
    rest = 0 if product(target) == 0 else product(_ceil_div(target, result_stride[-1]))
    if rest < 0:
        raise LayoutError(f"complement: cotarget {quote(cotarget)} leaves a last mode of size ceil({target} / "
                          f"{result_stride[-1]}) = {rest} < 0 (pycute builds it; a layout has no negative size)")
    result_shape.append(rest)
    return coalesce(Layout(tuple(result_shape), tuple(result_stride)))


def _ceil_div(a: IntTuple, b: int) -> IntTuple:
    """CuTe's ``ceil_div`` of a shape by an int: mode by mode from the left, ``ceil(a_i / rest)`` with
    ``rest = ceil(rest / a_i)`` carried on (``(3, 8) / 2 -> (2, 8)``)."""
    if not is_tuple(a):
        return -(-a // b)  # type: ignore[operator]
    out = []
    for e in a:  # type: ignore[union-attr]
        out.append(_ceil_div(e, b))
        b = -(-b // product(e))
    return tuple(out)


def right_inverse(layout: Layout | int | None) -> Layout | None:
    """A layout ``R`` with ``layout(R(i)) == i`` for every ``i < size(R)`` (CuTe ``right_inverse``): the
    modes of the coalesced layout sorted by stride, each kept whose stride is the running product
    ``1, s0*d0, ...`` (others -- stride 0, negative, or past a gap -- skipped), with the strides of the
    coordinates they came from; ``1:0`` when no mode has stride 1. Of a layout of size 0, pycute's
    (``_right_inverse_of_size_zero``: the chain stops at the first mode that breaks it).

    >>> str(right_inverse(Layout((2, 4), (4, 1)))), str(right_inverse(Layout((2, 4), (0, 1))))
    ('(4,2):(2,1)', '4:2')
    """
    if layout is None:
        return None
    if isinstance(layout, numbers.Integral) and not isinstance(layout, bool):
        return Layout(int(layout))
    layout = _check_layout(layout, "right_inverse: layout")
    if _has_size_zero(layout):
        return _right_inverse_of_size_zero(layout)
    shapes, strides = _flat(coalesce(layout))
    prefix = prefix_product(tuple(shapes))
    result_shape, result_stride, current = [1], [0], 1
    for i in _cute_sort(strides, "right_inverse: layout"):
        if strides[i] == current:
            result_shape.append(shapes[i])
            result_stride.append(prefix[i])  # type: ignore[index]
            current = shapes[i] * strides[i]
    return coalesce(Layout(tuple(result_shape), tuple(result_stride)))


def _right_inverse_of_size_zero(layout: Layout) -> Layout:
    """pycute's ``right_inverse`` of a size-0 layout, where CuTe's differs by size 0 (its coordinate strides
    after a size-0 mode are 0): the leaf modes sorted by ``(stride, size, coordinate stride)``, size-1 ones
    passed over, taken while each stride is the running ``size * stride`` from 1 -- a stride-0 or negative
    mode, sorted first, stops it at once -- then coalesced; ``1:0`` when none is taken.

    >>> [str(_right_inverse_of_size_zero(Layout((4, 0), (1, d)))) for d in (4, 0)]
    ['0:1', '1:0']
    """
    shapes, strides = flatten(layout.shape), flatten(layout.stride)  # type: ignore[arg-type]
    result_shape, result_stride, current = [1], [0], 1
    for d, s, index_stride in sorted(zip(strides, shapes, flatten(prefix_product(shapes)))):
        if s == 1:
            continue
        if d != current:
            break
        result_shape.append(s)
        result_stride.append(index_stride)
        current = s * d
    return coalesce(Layout(tuple(result_shape), tuple(result_stride)))


def _left_inverse_of_size_zero(layout: Layout) -> Layout:
    """pycute's ``left_inverse`` of a size-0 layout, ``right_inverse((L, complement(L)))``: ``1:0`` (its
    right inverse stops at once at the size-0 mode, of stride 0 and sorted first). Refused where pycute's
    complement asserts: sorted by ``(stride, size)`` (stride-0 and size-1 modes passed over), a mode's
    reach ``size * stride`` below the previous one's (from 1) -- a size-0 mode of a non-zero stride reaches 0.

    >>> str(_left_inverse_of_size_zero(Layout((4, 0), (1, 0))))
    '1:0'
    """
    reach = 1
    for d, s in sorted(zip(flatten(layout.stride), flatten(layout.shape))):  # type: ignore[arg-type]
        if d == 0 or s == 1:
            continue
        if s * d < reach:
            raise LayoutError(f"left_inverse: {shorten(str(layout))} has size 0 (its left inverse is pycute's, "
                              f"right_inverse((L, complement(L)))), and pycute's complement refuses its mode {s}:{d}: "
                              f"sorted by stride, its reach size * stride = {s * d} is below {reach}, the previous "
                              f"mode's" + (" (a size-0 mode of a non-zero stride)" if s == 0 else ""))
        reach = s * d
    return Layout(1, 0)


#: The most modes ``_cute_sort`` orders when strides tie: CuTe's exchange sort takes ``n**2 / 2`` steps there.
MAX_TIED_SORT_MODES = 1024


def _cute_sort(keys: list[int], what: str = "sort") -> list[int]:
    """The indices of ``keys`` in the order CuTe's ``detail::SortByKey`` leaves them: its exchange sort,
    which is not stable (``[1, 1, 0]`` -> ``[2, 1, 0]``), so equal strides keep CuTe's order, not Python's;
    with ties, refused (LayoutError naming ``what``) past ``MAX_TIED_SORT_MODES`` keys.

    >>> _cute_sort([1, 1, 0]), _cute_sort([4, 1, 1, 0])
    ([2, 1, 0], [3, 2, 1, 0])
    """
    if len(set(keys)) == len(keys):  # no ties: every sort gives the one ascending order, in O(n log n)
        return sorted(range(len(keys)), key=keys.__getitem__)
    if len(keys) > MAX_TIED_SORT_MODES:
        raise LayoutError(f"{what}: {len(keys)} modes, some of equal strides: CuTe orders them by an exchange sort, "
                          f"quadratic in the modes, here refused past {MAX_TIED_SORT_MODES} modes")
    order = list(range(len(keys)))
    for i in range(len(order)):
        for j in range(i + 1, len(order)):
            if keys[order[j]] < keys[order[i]]:
                order[i], order[j] = order[j], order[i]
    return order


def _offsets(shapes: list[int], strides: list[int], index: Any) -> Any:
    """``L(index)`` of the flat layout ``shapes:strides`` on a NumPy array of indices, the last mode
    extended past the size and a negative index split truncating toward zero (``L(-i) == -L(i)``), as
    CuTe's ``crd2idx`` does (object arrays: exact Python ints)."""
    sign = np.where(index < 0, -1, 1)
    return sign * _offsets_of_magnitude(shapes, strides, index * sign)


def _offsets_of_magnitude(shapes: list[int], strides: list[int], index: Any) -> Any:
    out, rest = 0, index
    for s, d in zip(shapes[:-1], strides[:-1]):
        out = out + (rest % s) * d
        rest = rest // s
    return out + rest * strides[-1]


def left_inverse(layout: Layout | int | None, max_elements: int = MAX_ELEMENTS) -> Layout | None:
    """A layout ``L`` with ``layout(L(layout(i))) == layout(i)`` for ``i < size(layout)``, so
    ``L(layout(i)) == i`` when ``layout`` is injective (CuTe's ``left_inverse``, the quasi-inverse): the
    coalesced modes sorted by stride, the offsets between strides ``d_k`` and ``d_k+1`` read as mode
    ``k``'s coordinate. Requires each sorted non-zero stride to be a multiple of the ones below (CuTe's
    "Left inverse divisibility condition") and no negative stride. Where the modes overlap (a sorted
    stride below the previous mode's ``size * stride``) CuTe's answer is checked against that
    postcondition on every ``i`` (at most ``max_elements``) and refused where it fails: there CuTe's C++
    returns a layout that inverts nothing. Of a layout of size 0, which has no offset to invert, pycute's
    (``_left_inverse_of_size_zero``: ``1:0``, or refused where pycute's complement asserts).

    >>> L = Layout((4, 2), (2, 1))
    >>> str(left_inverse(L)), [left_inverse(L)(L(i)) for i in range(8)]
    ('(2,4):(4,1)', [0, 1, 2, 3, 4, 5, 6, 7])
    >>> str(left_inverse(Layout((8, 3), (3, 6))))  # overlapping, CuTe's postcondition holds
    '(3,2,3):(0,1,8)'
    """
    if layout is None:
        return None
    if isinstance(layout, numbers.Integral) and not isinstance(layout, bool):
        return Layout(int(layout))
    layout = _check_layout(layout, "left_inverse: layout")
    if _has_size_zero(layout):
        return _left_inverse_of_size_zero(layout)
    shapes, strides = _flat(coalesce(layout))
    if any(d < 0 for d in strides):
        raise LayoutError(f"left_inverse: {shorten(str(layout))} has a negative stride; CuTe's left_inverse sorts "
                          f"the strides and divides them, which needs them non-negative")
    prefix = prefix_product(tuple(shapes))
    order = _cute_sort(strides, "left_inverse: layout")
    result_shape: list[int] = []
    result_stride = [0]
    reach, overlap, below = 1, None, 1  # below: the offsets below the current stride, product(result_shape)
    for i in order:
        if strides[i] == 0:
            continue
        if strides[i] < reach and overlap is None:
            overlap = (f"the stride {strides[i]} is below {reach}, the previous mode's size * stride")
        reach = shapes[i] * strides[i]
        if strides[i] % below:
            raise LayoutError(f"left_inverse: CuTe's \"Left inverse divisibility condition\": the stride {strides[i]} "
                              f"of {shorten(str(layout))} is not a multiple of {below}, the offsets below it")
        result_shape.append(strides[i] // below)
        result_stride.append(prefix[i])  # type: ignore[index]
        below = strides[i]  # below * (strides[i] // below)
    result = coalesce(Layout(tuple(result_shape + [shapes[order[-1]]]), tuple(result_stride)))
    if overlap is not None:
        what = f"left_inverse: checking CuTe's answer on the overlapping modes of {shorten(str(layout))}"
        check_count(layout.size, max_elements, what)
        flat = _flat(layout)  # not coalesced: past its size a layout extends its own last mode
        image = _offsets(*flat, np.arange(layout.size, dtype=object))
        again = _offsets(*flat, _offsets(*_flat(result), image))
        if not (again == image).all():
            raise LayoutError(f"left_inverse: the modes of {shorten(str(layout))} overlap (sorted by stride, {overlap}), "
                              f"and CuTe's answer {shorten(str(result))} breaks its postcondition "
                              f"L(R(L(i))) == L(i); CuTe's C++ returns it anyway, refused here")
    return result


# -- divides -------------------------------------------------------------------------------------------


def logical_divide(layout: Layout | ComposedLayout, tiler: Any) -> Any:
    """``layout ∘ (tiler, complement(tiler, shape(coalesce(layout))))`` (CuTe ``logical_divide``): mode 0 the tile
    (the elements ``tiler`` selects), mode 1 the tiles. A tuple tiler divides mode by mode and keeps the
    modes past it; an int ``n`` is the tile ``n:1``; None keeps the mode.

    >>> print(logical_divide(Layout((9, (4, 8)), (59, (13, 1))), (Layout(3, 3), Layout((2, 4), (1, 8)))))
    ((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))
    """
    if isinstance(layout, ComposedLayout):
        return _on_inner(layout, lambda inner: logical_divide(inner, tiler))
    layout = _check_layout(layout, "logical_divide: layout")
    tiler = _check_tiler(tiler, "logical_divide: tiler")
    if tiler is None:
        return layout
    if isinstance(tiler, tuple):
        return _by_mode(layout, tiler, logical_divide, "logical_divide")
    if isinstance(tiler, int):
        tiler = Layout(tiler)
    return composition(layout, make_layout(tiler, complement(tiler, coalesce(layout).shape)))


def zipped_divide(layout: Layout | ComposedLayout, tiler: Any) -> Any:
    """``logical_divide`` with the tiles of every mode gathered into mode 0 and the rests (then the
    undivided modes) into mode 1 (CuTe ``zipped_divide``): ``((TileM,TileN),(RestM,RestN,L,...))``;
    ``zd(0, k)`` is the offset of tile ``k``.

    >>> print(zipped_divide(Layout((9, (4, 8)), (59, (13, 1))), (Layout(3, 3), Layout((2, 4), (1, 8)))))
    ((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))
    """
    if isinstance(layout, ComposedLayout):
        return _on_inner(layout, lambda inner: zipped_divide(inner, tiler))
    tiler = _check_tiler(tiler, "zipped_divide: tiler")
    return _unzip(logical_divide(layout, tiler), tiler, "zipped_divide")


def tiled_divide(layout: Layout | ComposedLayout, tiler: Any) -> Any:
    """``zipped_divide`` with mode 1 spread out (CuTe ``tiled_divide``): ``((TileM,TileN),RestM,RestN,L,...)``.

    >>> print(tiled_divide(Layout((8, 8)), (4, 2)))
    ((4,2),2,4):((1,8),4,16)
    """
    if isinstance(layout, ComposedLayout):
        return _on_inner(layout, lambda inner: tiled_divide(inner, tiler))
    zd = zipped_divide(layout, tiler)
    return make_layout(zd.mode(0), *_unpack(zd.mode(1)))


def flat_divide(layout: Layout | ComposedLayout, tiler: Any) -> Any:
    """``zipped_divide`` with both modes spread out (CuTe ``flat_divide``): ``(TileM,TileN,RestM,RestN,L,...)``.

    >>> print(flat_divide(Layout((8, 8)), (4, 2)))
    (4,2,2,4):(1,8,4,16)
    """
    if isinstance(layout, ComposedLayout):
        return _on_inner(layout, lambda inner: flat_divide(inner, tiler))
    zd = zipped_divide(layout, tiler)
    return make_layout(*_unpack(zd.mode(0)), *_unpack(zd.mode(1)))


# -- products ------------------------------------------------------------------------------------------


def logical_product(block: Layout | ComposedLayout, tiler: Any) -> Any:
    """``(block, complement(block, size(block) * cosize(tiler)) ∘ tiler)`` (CuTe ``logical_product``):
    mode 0 the block, mode 1 the layout of its copies, one per element of ``tiler``. A tuple tiler
    multiplies mode by mode; an int ``n`` is ``n:1``; None keeps the mode. A size-0 tiler (its cosize
    may be 0 or less) takes the complement within ``max(cotarget, 0)``: pycute's ends in a mode of size
    ``ceil(cotarget / reach) <= 0``, of which the composition with the tiler reads the stride only.

    >>> print(logical_product(Layout((2, 2), (4, 1)), Layout(6, 1)))
    ((2,2),(2,3)):((4,1),(2,8))
    >>> print(logical_product(Layout(4, 1), Layout(0, 8)))    # cosize(0:8) == -7
    (4,0):(1,32)
    """
    if isinstance(block, ComposedLayout):
        return _on_inner(block, lambda inner: logical_product(inner, tiler))
    block = _check_layout(block, "logical_product: block")
    tiler = _check_tiler(tiler, "logical_product: tiler")
    if tiler is None:
        return block
    if isinstance(tiler, tuple):
        return _by_mode(block, tiler, logical_product, "logical_product")
    if isinstance(tiler, int):
        tiler = Layout(tiler)
    try:
        cotarget = block.size * tiler.cosize
    except LayoutError as error:
        raise LayoutError(f"logical_product: tiler: {error}") from None
    if _has_size_zero(tiler):
        cotarget = max(cotarget, 0)
    return make_layout(block, composition(complement(block, cotarget), tiler))


def zipped_product(block: Layout | ComposedLayout, tiler: Any) -> Any:
    """``logical_product`` regrouped as ``zipped_divide`` regroups (CuTe ``zipped_product``):
    ``((M,N),(TileM,TileN,L,...))``."""
    if isinstance(block, ComposedLayout):
        return _on_inner(block, lambda inner: zipped_product(inner, tiler))
    tiler = _check_tiler(tiler, "zipped_product: tiler")
    return _unzip(logical_product(block, tiler), tiler, "zipped_product")


def tiled_product(block: Layout | ComposedLayout, tiler: Any) -> Any:
    """``zipped_product`` with mode 1 spread out (CuTe ``tiled_product``): ``((M,N),TileM,TileN,L,...)``.

    >>> print(tiled_product(Layout((2, 2), (1, 2)), (3, 4)))
    ((2,2),3,(2,2)):((1,2),2,(1,4))
    """
    if isinstance(block, ComposedLayout):
        return _on_inner(block, lambda inner: tiled_product(inner, tiler))
    zp = zipped_product(block, tiler)
    return make_layout(zp.mode(0), *_unpack(zp.mode(1)))


def flat_product(block: Layout | ComposedLayout, tiler: Any) -> Any:
    """``zipped_product`` with both modes spread out (CuTe ``flat_product``): ``(M,N,TileM,TileN,L,...)``."""
    if isinstance(block, ComposedLayout):
        return _on_inner(block, lambda inner: flat_product(inner, tiler))
    zp = zipped_product(block, tiler)
    return make_layout(*_unpack(zp.mode(0)), *_unpack(zp.mode(1)))


def _rank_sensitive_product(block: Any, tiler: Any, what: str, raked: bool) -> Any:
    if isinstance(block, ComposedLayout):
        return _on_inner(block, lambda inner: _rank_sensitive_product(inner, tiler, what, raked))
    block = _check_layout(block, f"{what}: block")
    tiler = _check_layout(tiler, f"{what}: tiler")
    rank = max(block.rank, tiler.rank)
    result = logical_product(_pad(block, rank), _pad(tiler, rank))
    first, second = result.mode(0), result.mode(1)
    return _zip(second, first) if raked else _zip(first, second)


def blocked_product(block: Layout | ComposedLayout, tiler: Layout) -> Any:
    """``block`` repeated as ``tiler`` lays out its copies, like modes together: mode ``i`` of the result
    is (mode ``i`` of the block, mode ``i`` of the tiler) (CuTe ``blocked_product``: ``zip`` of
    ``logical_product``'s two modes, both padded to rank ``max(rank block, rank tiler)``).

    >>> print(blocked_product(Layout((2, 5), (5, 1)), Layout((3, 4), (1, 3))))   # 2x5 row-major blocks, 3x4 of them
    ((2,3),(5,4)):((5,10),(1,30))
    """
    return _rank_sensitive_product(block, tiler, "blocked_product", raked=False)


def raked_product(block: Layout | ComposedLayout, tiler: Layout) -> Any:
    """``blocked_product`` with the tiler's mode first in each pair: the copies interleave, element by
    element (a cyclic distribution; CuTe ``raked_product``).

    >>> print(raked_product(Layout((2, 5), (5, 1)), Layout((3, 4), (1, 3))))
    ((3,2),(4,5)):((10,5),(30,1))
    """
    return _rank_sensitive_product(block, tiler, "raked_product", raked=True)


def make_ordered_layout(shape: Any, order: Any = None) -> Layout:
    """The compact layout of ``shape`` whose modes are laid out in increasing ``order`` (CuTe
    ``make_ordered_layout``; ties share a stride, as in CuTe): mode ``i``'s stride is the product of the
    sizes of the modes of smaller order. No order: column-major.

    >>> print(make_ordered_layout((2, 2, 2, 2), (0, 2, 3, 1)))
    (2,2,2,2):(1,4,8,2)
    """
    shape = check_int_tuple(shape, "make_ordered_layout: shape", minimum=0)
    if order is None:
        return Layout(shape)
    order = check_int_tuple(order, "make_ordered_layout: order")

    def like(s: IntTuple, o: IntTuple) -> IntTuple:
        if is_tuple(o):
            if not is_tuple(s) or len(s) != len(o):  # type: ignore[arg-type]
                raise LayoutError(f"make_ordered_layout: order {format_int_tuple(order)} does not match the modes "
                                  f"of shape {format_int_tuple(shape)}")
            return tuple(like(x, y) for x, y in zip(s, o))  # type: ignore[arg-type]
        return product(s)

    ref_shape, ref_order = flatten(like(shape, order)), flatten(order)

    def strides(s: IntTuple, o: IntTuple) -> IntTuple:
        if is_tuple(o):
            return tuple(strides(x, y) for x, y in zip(s, o))  # type: ignore[arg-type]
        init = product(tuple(r for r, k in zip(ref_shape, ref_order) if k < o))
        return compact_col_major(s, init)

    return Layout(shape, strides(shape, order))


def tile_to_shape(block: Layout | ComposedLayout, trg_shape: Any, ord_shape: Any = None) -> Any:
    """``block`` repeated to fill ``trg_shape`` (CuTe ``tile_to_shape``): ``blocked_product`` of the block
    with the ordered layout of ``trg_shape / block shape`` (column-major, or in ``ord_shape`` order).
    Requires rank(block) <= rank(trg_shape) and every block mode to divide the target's
    ("tile_to_shape: block shape does not divide the target shape").

    >>> print(tile_to_shape(Layout((8, 8), (8, 1)), (32, 16)))
    ((8,4),(8,2)):((8,64),(1,256))
    """
    if isinstance(block, ComposedLayout):
        return _on_inner(block, lambda inner: tile_to_shape(inner, trg_shape, ord_shape))
    block = _check_layout(block, "tile_to_shape: block")
    trg_shape = check_int_tuple(trg_shape, "tile_to_shape: trg_shape", minimum=0)
    rank = len(trg_shape) if is_tuple(trg_shape) else 1  # type: ignore[arg-type]
    if block.rank > rank:
        raise LayoutError(f"tile_to_shape: the block {shorten(str(block))} has rank {block.rank} > rank {rank} of "
                          f"the target shape {format_int_tuple(trg_shape)}")
    padded = _pad(block, rank)
    target = product_each(trg_shape)
    block_shape = tuple(m.size for m in _modes(padded)) if is_tuple(target) else padded.size
    pairs = list(zip(block_shape, target)) if is_tuple(target) else [(block_shape, target)]  # type: ignore[arg-type]
    if any(b == 0 for b, _ in pairs):
        raise LayoutError(f"tile_to_shape: block: {shorten(str(block))} has a mode of size 0, by which the target "
                          f"shape {format_int_tuple(target)} is divided (CuTe's ceil_div(target, block) divides by "
                          f"zero)")
    if any(t % b for b, t in pairs):  # type: ignore[operator]
        raise LayoutError(f"tile_to_shape: block shape {format_int_tuple(block_shape)} does not divide the target "
                          f"shape {format_int_tuple(target)}")
    product_shape = tuple(t // b for b, t in pairs) if is_tuple(target) else target // block_shape  # type: ignore
    if zero_before_last(product_shape) is not None:
        raise LayoutError(f"tile_to_shape: trg_shape {format_int_tuple(trg_shape)} repeats the block "
                          f"{format_int_tuple(product_shape)} times, a size 0 before the last mode: the product takes "
                          f"the cosize of that repeat layout, which splits the index -1 by the 0 (pycute's cosize "
                          f"divides by zero)")
    return blocked_product(padded, make_ordered_layout(product_shape, ord_shape))


# -- slicing -------------------------------------------------------------------------------------------


def slice_and_offset(crd: Any, layout: Layout | ComposedLayout) -> tuple[Any, int]:
    """``(layout(crd) with None kept, offset of crd with None as 0)`` (CuTe ``slice_and_offset``; None
    is CuTe's ``_``): the sub-layout over the ``None`` modes (``():()`` when there is none) and where it
    starts. Of a ComposedLayout, the offset moves into it (CuTe), and the returned offset is 0.

    >>> L = Layout((4, 8), (8, 1))
    >>> sub, offset = slice_and_offset((2, None), L)
    >>> str(sub), offset
    ('(8):(1)', 16)
    """
    if not isinstance(layout, ComposedLayout):
        layout = _check_layout(layout, "slice_and_offset: layout")
    return _slice_and_offset(crd, layout)


def slice(crd: Any, layout: Layout | ComposedLayout) -> Any:  # noqa: A001 - CuTe's name
    """The sub-layout ``layout(crd)`` over the modes where ``crd`` is None (CuTe ``slice``, ``L(_, j)``).

    Of a Layout only the modes are taken, as CuTe's ``slice`` and pycute's ``L(crd)``: no offset, so a size-0
    mode before the last does not stop it (it does ``slice_and_offset``, whose offset splits an index by it).

    >>> print(slice((None, 3), Layout((4, 8), (8, 1))))
    (4):(8)
    """
    if isinstance(layout, Layout):
        check_int_tuple(none_as_zero(crd), "coordinate")
        return Layout(slice_modes(crd, layout.shape), slice_modes(crd, layout.stride))
    return slice_and_offset(crd, layout)[0]


# -- changing the element size -------------------------------------------------------------------------


def _log2(n: int, what: str) -> int:
    if n & (n - 1):
        raise LayoutError(f"{what}: n must be a power of two for a swizzle, got {n}")
    return n.bit_length() - 1


def upcast(x: Layout | Swizzle | ComposedLayout, n: int) -> Any:
    """The layout in units of ``n`` elements (CuTe ``upcast<N>``): a stride-``d`` mode keeps
    ``ceil(s / ceil(n / |d|))`` of its elements and its stride becomes ``±ceil(|d| / n)``; stride 0
    stays. A swizzle on element offsets moves to offsets of ``n`` elements (``M - log2 n``); a
    ComposedLayout upcasts both (offset 0). Requires every stride and ``n`` to divide one another
    (CuTe's "Divisibility condition").

    >>> str(upcast(Layout((4, 8), (8, 1)), 2)), str(upcast(Swizzle(3, 4, 3), 8))
    ('(4,4):(4,1)', 'Sw<3,1,3>')
    """
    n = _check_positive(n, "upcast: n")
    if isinstance(x, Swizzle):
        m = x.base - _log2(n, "upcast")
        return Swizzle(x.bits, m, x.shift) if m >= 0 else Swizzle(max(x.bits + m, 0), 0, x.shift)
    if isinstance(x, ComposedLayout):
        if x.offset != 0:
            raise LayoutError(f"upcast: a ComposedLayout with offset {x.offset}; only offset 0 is supported")
        return ComposedLayout(upcast(x.outer, n), 0, upcast(x.inner, n))
    layout = _check_layout(x, "upcast: layout")
    rule = f"upcast({shorten(str(layout))}, {n})"

    def leaf(s: int, d: int) -> tuple[int, int]:
        if d == 0:
            return s, 0
        if d % n and n % d:
            raise LayoutError(f"{rule}: CuTe's \"Divisibility condition\": neither of the stride {d} and {n} "
                              f"divides the other")
        return -(-s // -(-n // abs(d))), _sign(d) * -(-abs(d) // n)

    return _map_leaves(layout, leaf)


def downcast(x: Layout | Swizzle | ComposedLayout, n: int) -> Any:
    """The layout in units of ``1/n`` element (CuTe ``downcast<N>``): a stride-``±1`` mode holds ``n``
    times the elements, every other stride is ``n`` times larger. Requires a stride-1 mode (CuTe:
    "Downcast requires adjacent elements"). A swizzle moves to ``M + log2 n``.

    >>> str(downcast(Layout((4, 4), (4, 1)), 2)), str(downcast(Swizzle(3, 3, 3), 2))
    ('(4,8):(8,1)', 'Sw<3,4,3>')
    """
    n = _check_positive(n, "downcast: n")
    if isinstance(x, Swizzle):
        return Swizzle(x.bits, x.base + _log2(n, "downcast"), x.shift)
    if isinstance(x, ComposedLayout):
        if x.offset != 0:
            raise LayoutError(f"downcast: a ComposedLayout with offset {x.offset}; only offset 0 is supported")
        return ComposedLayout(downcast(x.outer, n), 0, downcast(x.inner, n))
    layout = _check_layout(x, "downcast: layout")
    if 1 not in flatten(layout.stride):  # type: ignore[arg-type]
        raise LayoutError(f"downcast: {shorten(str(layout))} has no stride-1 mode (CuTe: \"Downcast requires "
                          f"adjacent elements\")")
    return _map_leaves(layout, lambda s, d: (s * n, d) if d in (1, -1) else (s, d * n))


def recast_layout(x: Layout | Swizzle | ComposedLayout, old_type: Any, new_type: Any) -> Any:
    """The layout of the same memory read as ``new_type`` elements instead of ``old_type`` (CuTe
    ``recast_layout<Old, New>``): ``upcast`` by ``new / old`` bits, or ``downcast`` by ``old / new``.
    Types are anything ``element_type`` reads (``"fp16"``, ``32``, an ElementType).

    >>> print(recast_layout(Layout((8, 64), (64, 1)), "fp16", "fp32"))
    (8,32):(32,1)
    """
    from linear_layouts.core.element_type import element_type

    ratio = Fraction(element_type(new_type).bits, element_type(old_type).bits)
    if ratio == 1:
        return x
    if ratio.numerator == 1:
        return downcast(x, ratio.denominator)
    if ratio.denominator == 1:
        return upcast(x, ratio.numerator)
    raise LayoutError(f"recast_layout: {ratio.numerator}/{ratio.denominator} of an element: CuTe's \"Recast not "
                      f"supported\" (one size must divide the other)")


# -- common vectors ------------------------------------------------------------------------------------


def _swizzle_base(x: Any) -> int | None:
    """``M`` of a ComposedLayout's outer swizzle, None for a Layout."""
    if isinstance(x, ComposedLayout) and isinstance(x.outer, Swizzle) and isinstance(x.inner, Layout):
        return x.outer.base
    if isinstance(x, Layout):
        return None
    raise LayoutError(f"expected a Layout or a Swizzle o Layout, got {shorten(str(x))}")


def max_common_layout(a: Layout | ComposedLayout, b: Layout | ComposedLayout) -> Layout:
    """The layout ``R`` of the most contiguous elements that ``a`` and ``b`` both place at offsets
    ``0, 1, ...``: ``a(R(i)) == b(R(i)) == i`` (CuTe ``max_common_layout``: ``right_inverse(b)``
    truncated to the stride-1 run of ``coalesce(a ∘ right_inverse(b))``); ``1:0`` when there is none.
    A swizzled side (``Sw<B,M,S> o L``) caps it at ``2**M`` elements, as CuTe does.

    >>> print(max_common_layout(Layout((4, 8), (8, 1)), Layout((4, 8), (8, 1))))
    (8,4):(4,1)
    """
    ma, mb = _swizzle_base(a), _swizzle_base(b)
    if mb is not None and ma is None:
        return max_common_layout(b, a)
    if ma is not None:
        common = max_common_layout(a.inner, b if mb is None else b.inner)  # type: ignore[union-attr]
        return composition(common, 1 << ma) if (1 << ma) < common.size else common
    inv_b = right_inverse(b)
    common = coalesce(composition(a, inv_b))
    if common.mode(0).stride == 1:
        return composition(inv_b, common.mode(0))
    return Layout(1, 0)


def max_common_vector(a: Layout | ComposedLayout, b: Layout | ComposedLayout) -> int:
    """How many leading elements ``a`` and ``b`` both place at offsets ``0, 1, ...`` (CuTe
    ``max_common_vector``: the size of the stride-1 first mode of ``coalesce(a ∘ right_inverse(b))``,
    else 1): the widest vector that copies between them. A swizzle ``Sw<B,M,S>`` caps it at ``2**M``
    unless both sides carry the same one.

    >>> max_common_vector(Layout((8, 64), (64, 1)), Layout((8, 64), (1, 8))), max_common_vector(Layout(16, 1), Layout((4, 4), (1, 4)))
    (1, 16)
    """
    ma, mb = _swizzle_base(a), _swizzle_base(b)
    if ma is not None or mb is not None:
        inner_a = a.inner if ma is not None else a  # type: ignore[union-attr]
        inner_b = b.inner if mb is not None else b  # type: ignore[union-attr]
        vec = max_common_vector(inner_a, inner_b)
        if ma is not None and mb is not None and a.outer == b.outer:  # type: ignore[union-attr]
            return vec
        return min([vec] + [1 << m for m in (ma, mb) if m is not None])
    common = coalesce(composition(a, right_inverse(b)))
    first = common.mode(0)
    return first.shape if first.stride == 1 else 1  # type: ignore[return-value]
