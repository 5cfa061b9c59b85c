"""CuTe's layout values with CuTe's semantics: ``Layout``, ``Swizzle``, ``ComposedLayout``, ``TVLayout``.

* ``Layout(shape, stride)`` maps a coordinate of ``shape`` to the offset ``sum(c_i * d_i)``; a 1-D
  index is first split colexicographically (the first mode fastest). The default stride is CuTe's
  compact column-major one (``LayoutLeft``). Printed as CuTe prints it: ``(8,64):(64,1)``.
* ``Swizzle(B, M, S)`` maps an offset ``x`` to ``x ^ ((x & Y) >> S)`` with ``Y`` the ``B`` bits from
  ``M + max(S, 0)`` (``S < 0`` shifts left): the ``B`` bits at ``M + max(0, -S)`` (ZZZ) are XORed
  with the ``B`` bits at ``M + max(S, 0)`` (YYY). CUTLASS ``include/cute/swizzle.hpp``.
* ``ComposedLayout(outer, offset, inner)`` is the function ``x -> outer(offset + inner(x))``
  (CuTe prints ``Sw<3,4,3> o 0 o (8,64):(64,1)``); ``algebra.composition`` builds one from two functions.
* ``TVLayout(layout, tile)``: a thread-value layout, ``(thread, value) -> index`` of an element of the
  tile ``tile`` (colexicographic: ``m + M * n`` for a tile ``(M, N)``), as CuTe's MMA and copy atoms.

>>> L = Layout((8, 64), (64, 1))
>>> L(2, 3), L(8 * 3 + 2)
(131, 131)
>>> Sw = Swizzle(3, 4, 3)
>>> Sw(131), ComposedLayout(Sw, 0, L)(2, 3)
(147, 147)
>>> print(ComposedLayout(Sw, 0, L))
Sw<3,4,3> o 0 o (8,64):(64,1)
>>> print(L(None, 3))            # CuTe's L(_, 3): column 3
(8):(64)
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Union

from linear_layouts.cute.int_tuple import (
    IntTuple,
    check_int_tuple,
    compact_col_major,
    compact_row_major,
    congruent,
    crd2idx,
    flatten,
    format_int_tuple,
    has_none,
    is_tuple,
    none_as_zero,
    product,
    slice_modes,
    zero_before_last,
)
from linear_layouts.core.element_type import DTypeLike, dtype_argument
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote, shorten

__all__ = [
    "Layout",
    "Swizzle",
    "ComposedLayout",
    "TVLayout",
    "CuteLayout",
    "CuteFunction",
    "row_major",
    "column_major",
    "element_swizzle",
]

MAX_SWIZZLE_BITS = 62  #: B + M + |S| above this is refused (offsets are machine words in CuTe)


@dataclass(frozen=True)
class Layout:
    """CuTe's ``Layout<Shape, Stride>``: coordinate -> ``sum(c_i * d_i)``, shapes and strides congruent.

    Requires: leaves of ``shape`` >= 0 (a size-0 mode makes a layout of size 0, as pycute and CuTe allow),
    strides ints (any sign, as CuTe allows; ``to_linear`` needs them non-negative). ``Layout((4, 8))`` has
    CuTe's default compact column-major strides ``(1, 4)`` (a mode of size 1 gets stride 0, as CuTe's
    ``make_layout`` gives a static ``_1``). A coordinate with ``None`` (CuTe's ``_``) slices: ``L(None, 2)``
    is the layout of column 2 (``slice``; the offset is dropped).

    >>> Layout((4, 8)).stride, Layout((4, 8))(1, 2), Layout((4, 8))(9)
    ((1, 4), 9, 9)
    """

    shape: IntTuple
    stride: IntTuple | None = None

    def __post_init__(self) -> None:
        shape = check_int_tuple(self.shape, "shape", minimum=0)
        stride = compact_col_major(shape) if self.stride is None else check_int_tuple(self.stride, "stride")
        if not congruent(shape, stride):
            raise LayoutError(f"stride: {shorten(format_int_tuple(stride))} is not congruent with shape "
                              f"{shorten(format_int_tuple(shape))}")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "stride", stride)

    @property
    def rank(self) -> int:
        """Number of top-level modes (1 for an int shape)."""
        return len(self.shape) if is_tuple(self.shape) else 1

    @property
    def size(self) -> int:
        """Number of coordinates: the product of the shape."""
        return product(self.shape)

    @property
    def cosize(self) -> int:
        """``max offset + 1`` over the domain: ``1 + sum((s - 1) * |d|)`` (strides assumed non-negative, as in
        CuTe's ``cosize``). Of a size-0 layout, pycute's ``layout(size - 1) + 1`` with ``|d|``: the same sum,
        the last leaf counting ``-|d|`` (``cosize((4, 0):(1, 8)) == 1 + 3 - 8 == -4``); refused (LayoutError)
        where a size-0 mode is not the last, as splitting the index -1 divides by zero there (pycute)."""
        shapes, strides = flatten(self.shape), flatten(self.stride)  # type: ignore[arg-type]
        if 0 in shapes:
            path = zero_before_last(self.shape)
            if path is not None:
                raise LayoutError(f"cosize: {shorten(str(self))} has size 0 and its mode {format_int_tuple(path)} of "
                                  f"size 0 is not the last: pycute's cosize, layout(size - 1) + 1, splits the index "
                                  f"-1 by that mode's size, dividing by zero")
        return 1 + sum((s - 1) * abs(d) for s, d in zip(shapes, strides))  # type: ignore[arg-type]

    def mode(self, i: int) -> "Layout":
        """The sub-layout of top-level mode ``i`` (CuTe ``layout<i>``)."""
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < self.rank:
            raise LayoutError(f"mode: i must be an int in [0, {self.rank}), got {quote(i)}")
        if not is_tuple(self.shape):
            if i != 0:
                raise LayoutError(f"mode: a rank-1 layout has only mode 0, got {i}")
            return self
        return Layout(self.shape[i], self.stride[i])  # type: ignore[index]

    def __call__(self, *coord: Any) -> Any:
        """The offset of a coordinate: ``L(i)`` (a 1-D index), ``L(i, j)`` or ``L((i, (j, k)))``; with
        ``None`` in it, the sub-layout it slices out (CuTe ``L(_, j)``)."""
        crd = coord[0] if len(coord) == 1 else tuple(coord)
        if has_none(crd):
            return Layout(slice_modes(crd, self.shape), slice_modes(crd, self.stride))
        crd = check_int_tuple(crd, "coordinate")
        return crd2idx(crd, self.shape, self.stride)  # type: ignore[arg-type]

    def __str__(self) -> str:
        return f"{format_int_tuple(self.shape)}:{format_int_tuple(self.stride)}"  # type: ignore[arg-type]


@dataclass(frozen=True)
class Swizzle:
    """CuTe's ``Swizzle<B, M, S>``: ``x -> x ^ ((x & YYY) >> S)``, YYY = ``B`` bits at ``M + max(S, 0)``.

    Requires ``B >= 0``, ``M >= 0``, ``|S| >= B`` (CuTe's static asserts: YYY and ZZZ do not overlap,
    so a swizzle is its own inverse). ``Swizzle(0, M, S)`` is the identity.

    >>> Swizzle(3, 4, 3).yyy_mask, Swizzle(3, 4, 3).zzz_mask, Swizzle(3, 4, 3)(0b1010000000)
    (896, 112, 720)
    """

    bits: int
    base: int
    shift: int

    def __post_init__(self) -> None:
        for name in ("bits", "base", "shift"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise LayoutError(f"Swizzle: {name} must be an int, got {quote(v)}")
            object.__setattr__(self, name, int(v))
        if self.bits < 0 or self.base < 0:
            raise LayoutError(f"Swizzle<{self.bits},{self.base},{self.shift}>: B and M must be >= 0")
        if abs(self.shift) < self.bits:
            raise LayoutError(f"Swizzle<{self.bits},{self.base},{self.shift}>: |S| must be >= B (CuTe's rule: "
                              f"the YYY and ZZZ bits must not overlap)")
        if self.bits + self.base + abs(self.shift) > MAX_SWIZZLE_BITS:
            raise LayoutError(f"Swizzle<{self.bits},{self.base},{self.shift}>: B + M + |S| must be <= {MAX_SWIZZLE_BITS}")

    @property
    def yyy_mask(self) -> int:
        """The source bits, read and shifted by S onto ZZZ."""
        return ((1 << self.bits) - 1) << (self.base + max(0, self.shift))

    @property
    def zzz_mask(self) -> int:
        """The destination bits, XORed with YYY."""
        return ((1 << self.bits) - 1) << (self.base - min(0, self.shift))

    @property
    def size(self) -> int:
        """``2 ** (B + M + |S|)``: the offsets the swizzle can change lie below this (pycute ``size``)."""
        return 1 << (self.bits + self.base + abs(self.shift))

    @property
    def is_identity(self) -> bool:
        return self.bits == 0

    def __call__(self, *args: Any) -> int:
        """The swizzled offset of one int ``offset`` (a swizzle has no coordinates to take)."""
        if len(args) != 1:
            raise LayoutError(f"{self}: takes one offset (an int), got {len(args)} arguments; a swizzle has no "
                              f"coordinates, compose it with a Layout for them")
        offset = args[0]
        if not isinstance(offset, numbers.Integral) or isinstance(offset, bool):
            raise LayoutError(f"{self}: offset must be an int, got {quote(offset)}")
        offset = int(offset)
        y = offset & self.yyy_mask
        return offset ^ (y >> self.shift if self.shift >= 0 else y << -self.shift)

    def __str__(self) -> str:
        return f"Sw<{self.bits},{self.base},{self.shift}>"


@dataclass(frozen=True)
class ComposedLayout:
    """CuTe's ``ComposedLayout<A, O, B>``: ``x -> outer(offset + inner(x))``.

    ``outer`` is a Swizzle, a Layout (applied to a 1-D index) or another ComposedLayout; ``inner`` a
    Layout, a Swizzle or a ComposedLayout. The coordinates are those of the innermost Layout.

    >>> C = ComposedLayout(Swizzle(1, 0, 1), 0, Layout(4, 1))
    >>> [C(i) for i in range(4)]
    [0, 1, 3, 2]
    """

    outer: "CuteFunction"
    offset: int
    inner: "CuteFunction"

    def __post_init__(self) -> None:
        for name in ("outer", "inner"):
            if not isinstance(getattr(self, name), (Layout, Swizzle, ComposedLayout)):
                raise LayoutError(f"ComposedLayout: {name} must be a Layout, Swizzle or ComposedLayout, "
                                  f"got {type(getattr(self, name)).__name__}")
        if isinstance(self.offset, bool) or not isinstance(self.offset, numbers.Integral):
            raise LayoutError(f"ComposedLayout: offset must be an int, got {quote(self.offset)}")
        object.__setattr__(self, "offset", int(self.offset))

    @property
    def layout(self) -> Layout | None:
        """The innermost Layout (whose shape gives the coordinates), or None for a chain of swizzles."""
        inner = self.inner
        while isinstance(inner, ComposedLayout):
            inner = inner.inner
        return inner if isinstance(inner, Layout) else None

    @property
    def shape(self) -> IntTuple:
        layout = self.layout
        if layout is None:
            raise LayoutError("ComposedLayout: a composition of swizzles has no shape")
        return layout.shape

    @property
    def size(self) -> int:
        layout = self.layout
        return layout.size if layout is not None else self.inner.size

    @property
    def rank(self) -> int:
        """The rank of the inner layout, whose coordinates the composition takes (CuTe's
        ``rank(ComposedLayout)`` is ``rank(layout_b())``; pycute's ``len`` is ``len(layoutA)``, the inner one).

        >>> ComposedLayout(Swizzle(3, 3, 3), 0, Layout((8, (2, 32)), (64, (32, 1)))).rank
        2
        """
        layout = self.layout
        if layout is None:
            raise LayoutError("ComposedLayout: a composition of swizzles has no modes, so no rank")
        return layout.rank

    def __call__(self, *coord: Any) -> Any:
        """``outer(offset + inner(coord))``; with ``None`` in the coordinate, the slice (CuTe ``C(_, j)``):
        ``outer o (offset + inner(j with None as 0)) o inner(_, j)``."""
        crd = coord[0] if len(coord) == 1 else tuple(coord)
        if has_none(crd):
            return _slice_and_offset(crd, self)[0]
        return self.outer(self.offset + self.inner(*coord))

    def __str__(self) -> str:
        return f"{self.outer} o {self.offset} o {self.inner}"


CuteFunction = Union[Layout, Swizzle, ComposedLayout]
CuteLayout = Union[Layout, ComposedLayout]


def _slice_and_offset(crd: Any, layout: CuteLayout) -> tuple[CuteLayout, int]:
    """CuTe ``slice_and_offset``: ``(layout over the None modes of crd, offset of crd with None as 0)``; of
    a ComposedLayout the offset moves into it and 0 is returned, as CuTe's ``layout_composed.hpp`` does.

    >>> sub, offset = _slice_and_offset((2, None), Layout((4, 8), (8, 1)))
    >>> str(sub), offset
    ('(8):(1)', 16)
    """
    if isinstance(layout, ComposedLayout):
        if not isinstance(layout.inner, (Layout, ComposedLayout)):
            raise LayoutError(f"slice: the inner function of {shorten(str(layout))} is a Swizzle, which has no "
                              f"modes to slice (CuTe slices the innermost Layout)")
        sub, offset = _slice_and_offset(crd, layout.inner)
        return ComposedLayout(layout.outer, layout.offset + offset, sub), 0
    sub = Layout(slice_modes(crd, layout.shape), slice_modes(crd, layout.stride))
    start = check_int_tuple(none_as_zero(crd), "coordinate")
    try:
        return sub, crd2idx(start, layout.shape, layout.stride)  # type: ignore[arg-type]
    except LayoutError as error:
        raise LayoutError(f"slice: the offset of {shorten(str(crd))} in {shorten(str(layout))} (None as 0): "
                          f"{error}") from None


@dataclass(frozen=True)
class TVLayout:
    """A thread-value layout: ``layout(thread, value)`` is the colexicographic index of an element of
    ``tile`` (``m + M * n`` for a tile ``(M, N)``), as in CuTe's MMA atoms (``ALayout``, ``CLayout``).

    Requires: ``layout`` of rank 2 (mode 0: threads, mode 1: values); ``tile`` a tuple of ints.

    >>> C = TVLayout(Layout(((4, 8), (2, 2)), ((32, 1), (16, 8))), (16, 8))   # SM80 16x8 accumulators
    >>> C.threads, C.values, C.coordinate(5, 1)
    (32, 4, (1, 3))
    """

    layout: Layout
    tile: tuple[int, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.layout, Layout):
            raise LayoutError(f"TVLayout: layout must be a Layout, got {type(self.layout).__name__}")
        if self.layout.rank != 2:
            raise LayoutError(f"TVLayout: layout must have rank 2 (thread, value), got {shorten(str(self.layout))}")
        tile = check_int_tuple(self.tile, "tile", minimum=1)
        if not is_tuple(tile):
            tile = (tile,)
        if any(is_tuple(t) for t in tile):
            raise LayoutError(f"tile: must be a flat tuple of ints, got {shorten(format_int_tuple(tile))}")
        object.__setattr__(self, "tile", tile)

    @property
    def threads(self) -> int:
        return self.layout.mode(0).size

    @property
    def values(self) -> int:
        return self.layout.mode(1).size

    def coordinate(self, thread: int, value: int) -> tuple[int, ...]:
        """The tile coordinate held by ``thread`` as its ``value``-th element."""
        idx = self.layout(thread, value)
        out = []
        for t in self.tile:
            out.append(idx % t)
            idx //= t
        return tuple(out)

    def __str__(self) -> str:
        return f"TV{format_int_tuple(self.tile)} {self.layout}"


def row_major(shape: Any) -> Layout:
    """Compact row-major layout (CuTe ``make_layout(shape, LayoutRight{})``): the last mode fastest.

    >>> print(row_major((8, 64)))
    (8,64):(64,1)
    """
    shape = check_int_tuple(shape, "shape", minimum=0)
    return Layout(shape, compact_row_major(shape))


def column_major(shape: Any) -> Layout:
    """Compact column-major layout (CuTe's default, ``LayoutLeft``): the first mode fastest."""
    return Layout(shape)


def element_swizzle(byte_swizzle: Swizzle, dtype: DTypeLike = None, *, bitwidth: int | None = None) -> Swizzle:
    """The swizzle of element offsets equal to ``byte_swizzle`` on byte addresses, for elements of ``dtype``
    (``bitwidth=``, the element's width in bits, is its old name).

    CuTe applies the swizzle of a ``smem_ptr_flag`` layout (the GMMA atoms ``Layout_K_SW128_Atom``...)
    to the *byte address* (``swizzle_ptr`` in ``pointer_swizzle.hpp``); on offsets of ``2**k``-byte
    elements the same permutation is ``Swizzle<B, M - k, S>``. Requires ``M >= k`` (the swizzle must
    not split an element).

    >>> print(element_swizzle(Swizzle(3, 4, 3), "fp16"))    # the 128-byte swizzle on fp16 elements
    Sw<3,3,3>
    """
    if not isinstance(byte_swizzle, Swizzle):
        raise LayoutError(f"byte_swizzle must be a Swizzle, got {type(byte_swizzle).__name__}")
    bitwidth = dtype_argument(dtype, bitwidth=bitwidth).bits
    k = (bitwidth // 8).bit_length() - 1
    if byte_swizzle.is_identity:
        return Swizzle(0, 0, 0)
    if byte_swizzle.base < k:
        raise LayoutError(f"{byte_swizzle} moves bytes inside a {bitwidth}-bit element (M = {byte_swizzle.base} < {k})")
    return Swizzle(byte_swizzle.bits, byte_swizzle.base - k, byte_swizzle.shift)


def _merge_swizzles(a: Swizzle, b: Swizzle) -> Swizzle | None:
    """CuTe's ``composition(Swizzle, Swizzle)``: same shift, YYY and ZZZ masks XORed, rebuilt with
    ``make_swizzle``; None where CuTe's static assert would fail (different shifts, masks that are not a
    swizzle) or where the merged swizzle is not the function ``a ∘ b`` (chained bits)."""
    if a.is_identity:
        return b
    if b.is_identity:
        return a
    if a.shift != b.shift:
        return None
    y, z = a.yyy_mask ^ b.yyy_mask, a.zzz_mask ^ b.zzz_mask
    bits = bin(y).count("1")
    if bits != bin(z).count("1"):
        return None
    if bits == 0:
        return Swizzle(0, 0, 0)
    ty, tz = (y & -y).bit_length() - 1, (z & -z).bit_length() - 1
    base, shift = min(ty, tz), ty - tz
    if abs(shift) < bits:
        return None
    merged = Swizzle(bits, base, shift)
    if merged.yyy_mask | merged.zzz_mask != y | z:
        return None
    # all three maps are F2-linear: the unit vectors below the largest size pin them down
    span = max(a.size, b.size, merged.size).bit_length() - 1
    if any(merged(1 << i) != a(b(1 << i)) for i in range(span)):
        return None
    return merged
