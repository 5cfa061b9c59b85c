"""CuTe's integer tuples: nested tuples of ints, and the colexicographic coordinate order.

An *IntTuple* is an ``int`` or a tuple of IntTuples (``(8, (2, 4))``). CuTe reads a shape's
coordinates *colexicographically*: the first mode varies fastest, so the 1-D index of the
coordinate ``(c0, c1)`` in the shape ``(s0, s1)`` is ``c0 + s0 * c1`` (pycute ``idx2crd`` /
``crd2idx``, CUTLASS ``include/cute/int_tuple.hpp`` and ``layout.hpp``).

>>> idx2crd(13, (4, (2, 4)))
(1, (1, 1))
>>> crd2idx((1, (1, 1)), (4, (2, 4)), (1, (4, 8)))
13
"""

from __future__ import annotations

import numbers
from typing import Any, Union

from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote, shorten

__all__ = [
    "IntTuple",
    "is_tuple",
    "check_int_tuple",
    "congruent",
    "flatten",
    "product",
    "prefix_product",
    "product_each",
    "compact_col_major",
    "compact_row_major",
    "idx2crd",
    "crd2idx",
    "leaf_paths",
    "zero_before_last",
    "has_none",
    "none_as_zero",
    "slice_modes",
    "format_int_tuple",
    "format_int",
]

IntTuple = Union[int, tuple["IntTuple", ...]]

MAX_DEPTH = 16  #: nesting deeper than this is refused (CuTe layouts in practice nest 2-3 levels)


def is_tuple(x: Any) -> bool:
    """Whether ``x`` is a (possibly nested) tuple rather than a leaf."""
    return isinstance(x, tuple)


def check_int_tuple(x: Any, what: str, *, minimum: int | None = None, depth: int = 0) -> IntTuple:
    """``x`` as an IntTuple (lists become tuples), every leaf an int ``>= minimum``; else LayoutError.

    >>> check_int_tuple([8, [2, 4]], "shape", minimum=1)
    (8, (2, 4))
    """
    if depth > MAX_DEPTH:
        raise LayoutError(f"{what}: nested deeper than {MAX_DEPTH} levels")
    if isinstance(x, (list, tuple)):
        return tuple(check_int_tuple(e, what, minimum=minimum, depth=depth + 1) for e in x)
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise LayoutError(f"{what}: leaves must be ints, got {quote(x)}")
    x = int(x)
    if minimum is not None and x < minimum:
        raise LayoutError(f"{what}: leaves must be >= {minimum}, got {quote(x)}")
    return x


def congruent(a: IntTuple, b: IntTuple) -> bool:
    """Whether ``a`` and ``b`` have the same nesting (CuTe ``congruent``): ``((2,3),4)`` vs ``((1,2),8)``."""
    if is_tuple(a) and is_tuple(b):
        return len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b))
    return not is_tuple(a) and not is_tuple(b)


def flatten(t: IntTuple) -> tuple[int, ...]:
    """The leaves of ``t`` in order: ``flatten((8, (2, 4))) == (8, 2, 4)``."""
    if is_tuple(t):
        return tuple(leaf for e in t for leaf in flatten(e))
    return (t,)


def product(t: IntTuple) -> int:
    """The product of the leaves (the size of a shape): ``product((8, (2, 4))) == 64``."""
    out = 1
    for leaf in flatten(t):
        out *= leaf
    return out


def prefix_product(t: IntTuple, init: int = 1) -> IntTuple:
    """Colexicographic (column-major) compact strides of the shape ``t``: ``((2, 3), 4) -> ((1, 2), 6)``."""
    if is_tuple(t):
        out = []
        for e in t:
            out.append(prefix_product(e, init))
            init *= product(e)
        return tuple(out)
    return init


def product_each(t: IntTuple) -> IntTuple:
    """The size of each top-level mode (CuTe ``product_each``): ``((2, 3), 4) -> (6, 4)``; an int stays."""
    return tuple(product(e) for e in t) if is_tuple(t) else t


def compact_col_major(shape: IntTuple, current: int = 1) -> IntTuple:
    """CuTe's compact column-major strides (``compact_major<LayoutLeft>``): the first mode fastest, and
    stride 0 for a mode of size 1 (CuTe gives static ``_1`` modes stride ``_0``).

    >>> compact_col_major((2, (1, 3), 4))
    (1, (0, 2), 6)
    """
    if is_tuple(shape):
        out = []
        for e in shape:
            out.append(compact_col_major(e, current))
            current *= product(e)
        return tuple(out)
    return 0 if shape == 1 else current


def compact_row_major(shape: IntTuple, current: int = 1) -> IntTuple:
    """CuTe's compact row-major strides (``compact_major<LayoutRight>``): the last mode fastest.

    >>> compact_row_major((2, 3, 4))
    (12, 4, 1)
    """
    if is_tuple(shape):
        out = []
        for e in reversed(shape):
            out.append(compact_row_major(e, current))
            current *= product(e)
        return tuple(reversed(out))
    return 0 if shape == 1 else current


def idx2crd(idx: int, shape: IntTuple) -> IntTuple:
    """The coordinate of the 1-D index ``idx`` in ``shape``, colexicographic (first mode fastest).

    Every mode but the last is taken modulo its size; the last takes the rest, as CuTe's ``crd2idx``
    does with an index past the end (a size-0 last mode too; a size-0 mode before the last is refused,
    LayoutError, where pycute divides by zero). A negative index divides as C++ divides, truncating toward
    zero: its coordinate is the negated coordinate of ``-idx`` (``idx2crd(-5, (4, 3)) == (-1, -1)``).
    """
    if not is_tuple(shape):
        return idx
    if idx < 0:
        return _negated(idx2crd(-idx, shape))
    out = []
    for i, s in enumerate(shape):
        n = product(s)
        if i == len(shape) - 1:
            out.append(idx2crd(idx, s))
        elif n == 0:
            raise LayoutError(f"index {shorten(format_int(idx))}: mode {i} of the shape "
                              f"{shorten(format_int_tuple(shape))} has size 0 and is not the last, and an index is "
                              f"split by the size of every mode but the last (CuTe's and pycute's crd2idx divide by "
                              f"zero there)")
        else:
            out.append(idx2crd(idx % n, s))
            idx //= n
    return tuple(out)


def zero_before_last(t: IntTuple, prefix: tuple[int, ...] = ()) -> tuple[int, ...] | None:
    """The path of the first mode of size 0 that is not the last of its tuple, or None: the mode by which
    splitting a 1-D index (``idx2crd``, ``crd2idx``) divides by zero. A size-0 last mode takes the rest.

    >>> zero_before_last((4, (2, 0))), zero_before_last((4, (2, (0, 2))))
    (None, (1, 1, 0))
    """
    if not is_tuple(t):
        return None
    for i, e in enumerate(t):  # type: ignore[arg-type]
        if i < len(t) - 1 and product(e) == 0:  # type: ignore[arg-type]
            return prefix + (i,)
        if i == len(t) - 1:  # type: ignore[arg-type]
            return zero_before_last(e, prefix + (i,))
    return None


def _negated(t: IntTuple) -> IntTuple:
    return tuple(_negated(e) for e in t) if is_tuple(t) else -t  # type: ignore[union-attr, operator]


def crd2idx(crd: IntTuple, shape: IntTuple, stride: IntTuple) -> int:
    """The offset ``sum(c_i * d_i)`` of a coordinate (CuTe ``crd2idx``). An int coordinate for a tuple
    mode is first split colexicographically (``idx2crd``), the last mode taking the rest; a negative one
    as C++ splits it, truncating toward zero (CuTe's ``divmod``), so its offset is ``-crd2idx(-crd)``:
    ``(4, 3):(3, 1)`` maps -5, the coordinate ``(-1, -1)``, to -4 (Python's floor division: ``(3, -2)``, 7)."""
    if is_tuple(crd):
        if not is_tuple(shape) or len(crd) != len(shape):
            raise LayoutError(f"coordinate {shorten(format_int_tuple(crd))} does not match shape "
                              f"{shorten(format_int_tuple(shape))}")
        return sum(crd2idx(c, s, d) for c, s, d in zip(crd, shape, stride))
    if is_tuple(shape):
        return crd2idx(idx2crd(crd, shape), shape, stride)
    return crd * stride


def leaf_paths(t: IntTuple, prefix: tuple[int, ...] = ()) -> tuple[tuple[int, ...], ...]:
    """The path (mode indices from the top) of every leaf, in order: ``((0,), (1, 0), (1, 1))`` for ``(8, (2, 4))``."""
    if is_tuple(t):
        return tuple(p for i, e in enumerate(t) for p in leaf_paths(e, prefix + (i,)))
    return (prefix,)


def has_none(crd: Any) -> bool:
    """Whether a coordinate holds ``None`` (CuTe's ``_``, as pycute and the CuTe DSL write it) anywhere."""
    if isinstance(crd, (tuple, list)):
        return any(has_none(c) for c in crd)
    return crd is None


def none_as_zero(crd: Any) -> Any:
    """``crd`` with every ``None`` (CuTe's ``_``) replaced by 0, lists as tuples: the coordinate of the first
    element of the slice ``crd`` selects, ``none_as_zero((None, (2, None))) == (0, (2, 0))``."""
    if isinstance(crd, (tuple, list)):
        return tuple(none_as_zero(c) for c in crd)
    return 0 if crd is None else crd


def slice_modes(crd: Any, t: IntTuple) -> IntTuple:
    """The parts of ``t`` paired with ``None`` in ``crd`` (CuTe ``slice``): a tuple coordinate keeps, in
    order and flattened one level per nesting, the modes at its ``None`` leaves; ``None`` itself keeps ``t``.

    >>> slice_modes((None, 2), (4, 8)), slice_modes((None, (None, 0)), ((2, 3), (4, 5))), slice_modes(None, 8)
    ((4,), ((2, 3), 4), 8)
    """
    if crd is None:
        return t
    return _lift_slice(crd, t) if isinstance(crd, (tuple, list)) else ()


def _lift_slice(crd: Any, t: IntTuple) -> tuple:
    if isinstance(crd, (tuple, list)):
        if not is_tuple(t) or len(crd) != len(t):
            raise LayoutError(f"slice: coordinate {shorten(str(crd))} does not match the modes of "
                              f"{shorten(format_int_tuple(t))}")
        return tuple(x for c, e in zip(crd, t) for x in _lift_slice(c, e))
    return (t,) if crd is None else ()


def format_int_tuple(t: IntTuple) -> str:
    """CuTe's text for an IntTuple, without spaces: ``(8,(2,4))``; a 1-tuple prints as ``(8)``."""
    if is_tuple(t):
        return "(" + ",".join(format_int_tuple(e) for e in t) + ")"
    return format_int(t)  # type: ignore[arg-type]


def format_int(x: int) -> str:
    """``x`` in decimal, or in hexadecimal past Python's limit on decimal digits (``sys.int_info``: 4300 by
    default, where ``str`` raises ValueError): ``format_int(1 << 20000)[:6] == '0x1000'``."""
    try:
        return str(x)
    except ValueError:
        return hex(x)
