"""LinearLayout: a linear map between labeled F2 vector spaces, with Triton's C++ semantics.

A layout maps *input* dims (hardware: ``register``, ``lane``, ``warp``, ``block``; or ``offset``) to
*output* dims (logical: ``dim0``, ``dim1``, ...). Every dim has a power-of-two size. The layout is
given by its bases: ``bases[in_dim][i]`` is the image of the input ``in_dim = 2**i`` (all other
inputs zero), one coordinate per out dim, and ``L(x) = XOR of the bases of the set bits of x``.

Every public operation follows Triton's ``include/triton/Tools/LinearLayout.h`` bit for bit (names
in snake_case): the same dim orders, out-dim sizes, and — where several answers exist
(``invert_and_compose``, ``pseudoinvert``) — the same choice.

Internally each basis vector is kept *flattened*: the out coordinates packed into one int with the
first out dim in the least significant bits (Triton's flattening order). Linear algebra on those
ints lives in :mod:`linear_layouts.core.f2`.

Example (the paper's §4.1 example, on the 16x16 Layout A):
    >>> A = LinearLayout({"register": [[0, 1], [1, 0]],
    ...                   "lane": [[0, 2], [0, 4], [0, 8], [2, 0], [4, 0]],
    ...                   "warp": [[8, 0]]}, ["dim0", "dim1"])
    >>> A.apply({"register": 1, "lane": 9, "warp": 0})
    {'dim0': 2, 'dim1': 3}
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from linear_layouts.core import _ccore, f2
from linear_layouts.core.errors import LayoutError, not_a_layout
from linear_layouts.core.limits import (
    MAX_DIM_LOG2, MAX_ELEMENTS, check_count, check_log2_count, check_text, excerpt, quote as _q, unique_keys,
)

__all__ = [
    "LinearLayout",
    "ColumnAction",
    "divide_left",
    "divide_right",
    "supremum",
    "invert_and_compose_block_local",
]

#: The compiled core (linear_layouts.core._ccore._ext), or None: pure Python. Each operation below that has a C
#: version calls it first; the C function returns None when it does not handle the input (too wide for
#: 64-bit words, an unusual form, or invalid), and the Python code that follows is then the answer.
_C = _ccore.ext

BasesArg = Mapping[str, Sequence[Sequence[int]]] | Sequence[tuple[str, Sequence[Sequence[int]]]]
OutDimsArg = Sequence[str] | Mapping[str, int] | Sequence[tuple[str, int]]


# ----------------------------------------------------------------------------------------------
# argument checking helpers


_INT_ONLY = frozenset((int,))


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _log2_exact(size: Any, what: str) -> int:
    """log2(size) for a positive power of two, else a LayoutError naming ``what``."""
    if not _is_int(size) or size < 1 or (int(size) & (int(size) - 1)):
        raise LayoutError(f"{what} must be a positive power of two, got {_q(size)}")
    return _check_dim_log2(int(size).bit_length() - 1, what)


def _check_dim_log2(log2: int, what: str) -> int:
    """``log2`` if a dim of ``2**log2`` fits Triton's int32 sizes (``limits.MAX_DIM_LOG2``), else LayoutError."""
    if log2 > MAX_DIM_LOG2:
        raise LayoutError(f"{what}: 2**{log2} is above 2**{MAX_DIM_LOG2}, the largest dim size "
                          "(Triton stores dim sizes and coordinates as int32)")
    return log2


def _dump(layout: "LinearLayout", limit: int = 1200) -> str:
    """``layout.to_string()`` for an error message, cut after ``limit`` characters."""
    text = layout.to_string()
    return text if len(text) <= limit else text[:limit] + f"\n... ({len(text) - limit} more characters)"


def _check_layout(value: Any, what: str) -> "LinearLayout":
    """``value`` if it is a LinearLayout, else a LayoutError naming ``what``."""
    if not isinstance(value, LinearLayout):
        raise not_a_layout(value, what)
    return value


#: Iterables that are not an ordered list of values (a mapping would give its keys, a set no order).
_NOT_SEQUENCES = (str, bytes, Mapping, set, frozenset)


def _checked_vectors(name: str, vecs: Any, n_out: int, out_names: Sequence[str]) -> list[Sequence[int]]:
    """The basis vectors of in dim ``name``: each a sequence of ``n_out`` non-negative Python ints."""
    if type(vecs) is not list and type(vecs) is not tuple:
        if isinstance(vecs, _NOT_SEQUENCES) or not isinstance(vecs, Iterable):
            raise LayoutError(f"bases[{_q(name)}] must be a list of basis vectors, got {_q(vecs)}")
        vecs = list(vecs)
    if len(vecs) > MAX_DIM_LOG2:
        _check_dim_log2(len(vecs), f"in dim {_q(name)} ({len(vecs)} basis vectors)")
    out = []
    for i, vec in enumerate(vecs):
        if type(vec) is not list and type(vec) is not tuple:
            if isinstance(vec, _NOT_SEQUENCES) or not isinstance(vec, Iterable):
                raise LayoutError(f"bases[{_q(name)}][{i}] must be a list of {n_out} ints, got {_q(vec)}")
            vec = tuple(vec)
        if len(vec) != n_out:
            raise LayoutError(
                f"bases[{_q(name)}][{i}] has {len(vec)} coordinates but there are {n_out} out dims "
                f"{_q(list(out_names))}: each basis vector needs one coordinate per out dim"
            )
        for c in vec:
            if type(c) is not int or c < 0:
                vec = _checked_coords(vec, f"bases[{_q(name)}][{i}]")
                break
        out.append(vec)
    return out


def _packed_dim(name: str, vecs: Any, shifts: list[int], limits: list[int], out_names: Sequence[str]) -> tuple[int, ...]:
    """Validate the basis vectors of in dim ``name`` and pack each into one int (first out dim lowest)."""
    if (type(vecs) is list or type(vecs) is tuple) and len(vecs) > MAX_DIM_LOG2:
        _check_dim_log2(len(vecs), f"in dim {_q(name)} ({len(vecs)} basis vectors)")
    out = []
    if len(limits) == 2 and (type(vecs) is list or type(vecs) is tuple):  # the common 2-D case, fast
        l0, l1 = limits
        s1 = shifts[1]
        for vec in vecs:
            if (type(vec) is list or type(vec) is tuple) and len(vec) == 2:
                c0, c1 = vec
                if type(c0) is int and type(c1) is int and 0 <= c0 < l0 and 0 <= c1 < l1:
                    out.append(c0 | c1 << s1)
                    continue
            break  # something unusual: validate everything the slow way
        else:
            return tuple(out)
    checked = _checked_vectors(name, vecs, len(limits), out_names)
    out = []
    for vec in checked:
        v = 0
        for c, sh, lim in zip(vec, shifts, limits):
            if c >= lim:
                _raise_out_of_range(name, checked, out_names, limits)
            v |= c << sh
        out.append(v)
    return tuple(out)


def _raise_out_of_range(name: str, vecs: Sequence[Sequence[int]], out_names: Sequence[str], limits: Sequence[int]) -> None:
    for i, vec in enumerate(vecs):
        for k, (c, lim) in enumerate(zip(vec, limits)):
            if c >= lim:
                raise LayoutError(
                    f"bases[{_q(name)}][{i}][{k}] = {_q(c)} is out of range for out dim "
                    f"{_q(out_names[k])} of size {lim}: coordinates must be < the size"
                )


def _checked_coords(vec: Sequence[Any], what: str) -> tuple[int, ...]:
    """The coordinates as Python ints, or a LayoutError naming the first bad one."""
    out = []
    for k, c in enumerate(vec):
        if not _is_int(c) or c < 0:
            raise LayoutError(f"{what}[{k}] must be a non-negative int, got {_q(c)}")
        out.append(int(c))
    return tuple(out)


def _check_name(name: Any, what: str) -> str:
    """``name`` as a dim name: a non-empty plain ``str`` of valid Unicode, else LayoutError.

    A ``str`` subclass is copied to a plain ``str`` (its value), so comparing and hashing dim names never
    runs user code (the compiled core compares names while it holds the layout's fields).

    >>> type(_check_name(type("Sub", (str,), {})("lane"), "in-dim name")) is str
    True
    """
    if type(name) is str and name and name.isascii():
        return name
    if not isinstance(name, str) or not name:
        raise LayoutError(f"{what} must be a non-empty string, got {_q(name)}")
    name = str.__str__(name)  # a plain copy of a subclass's value (str(name) would call its __str__)
    try:
        name.encode("utf-8")
    except UnicodeEncodeError as error:
        raise LayoutError(f"{what} must be valid Unicode text, got {_q(name)} (a lone surrogate at character "
                          f"{error.start + 1})") from None
    return name


def _pairs(arg: Any, what: str) -> list[tuple[Any, Any]]:
    """Accept a mapping or a sequence of (key, value) pairs; keep the order (a set has none: refused)."""
    if type(arg) is dict or isinstance(arg, Mapping):
        return list(arg.items())
    if type(arg) is list and all(type(item) is tuple and len(item) == 2 for item in arg):
        return arg
    if isinstance(arg, (set, frozenset)):
        raise LayoutError(f"{what} must be ordered (a mapping or a list of (name, value) pairs), got a "
                          f"{type(arg).__name__}, whose order changes from run to run")
    if isinstance(arg, (str, bytes)) or not isinstance(arg, Iterable):
        raise LayoutError(f"{what} must be a mapping or a list of (name, value) pairs, got {_q(arg)}")
    out = []
    for item in arg:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise LayoutError(f"{what} must be a mapping or a list of (name, value) pairs, got item {_q(item)}")
        out.append((item[0], item[1]))
    return out


def _unique(names: Sequence[str], what: str) -> None:
    seen = set()
    for n in names:
        if n in seen:
            raise LayoutError(f"{what}: duplicate dim name {_q(n)}")
        seen.add(n)


def _reshape_dims(new_dims: Any, side: str, total_log2: int) -> list[tuple[str, int]]:
    """The ``new_{side}_dims`` argument of ``reshape_{side}s`` as ``[(name, log2 size)]``: valid, distinct names,
    power-of-two sizes of product ``2**total_log2`` (the layout's total ``side`` size); else LayoutError.

    >>> _reshape_dims({"a": 4, "b": 8}, "in", 5)
    [('a', 2), ('b', 3)]
    """
    pairs = [(_check_name(n, f"{side}-dim name"), _log2_exact(s, f"size of {side} dim {_q(n)}"))
             for n, s in _pairs(new_dims, f"new_{side}_dims")]
    _unique([n for n, _ in pairs], f"reshape_{side}s")
    if sum(k for _, k in pairs) != total_log2:
        raise LayoutError(
            f"reshape_{side}s: total size {1 << sum(k for _, k in pairs)} of {_q(dict(pairs))} must equal the total "
            f"{side} size {1 << total_log2}"
        )
    return pairs


def supremum(x: Sequence[str], y: Sequence[str], *, strict: bool = True) -> list[str]:
    """The shortest list containing x and y as subsequences, preferring x's elements first.

    This is Triton's ``supremum`` (LayoutUtils), used by ``*`` to merge dim orders:
    ``supremum(["a", "b"], ["a", "c"]) == ["a", "b", "c"]``; ``["a", "b"]`` and ``["b", "a"]``
    have none (LayoutError). With ``strict=False`` (what ``*`` uses, like Triton's release build and
    the layout constructions that rely on it) common dims in different orders are merged anyway,
    x's order first: ``supremum(["a", "b"], ["b", "a"], strict=False) == ["a", "b"]``.
    """
    common_x = [e for e in x if e in set(y)]
    common_y = [e for e in y if e in set(x)]
    if common_x != common_y and strict:
        raise LayoutError(
            f"dims {_q(list(x))} and {_q(list(y))} appear in different relative orders; "
            "common dims must keep the same order (no supremum exists)"
        )
    if tuple(x) == tuple(y) or not y:
        return list(x)
    if not x:
        return list(y)
    if not set(x) & set(y):
        return list(x) + list(y)
    pos_x = {e: i for i, e in enumerate(x)}
    pos_y = {e: i for i, e in enumerate(y)}
    result: list[str] = []
    taken: set[str] = set()
    i = j = 0
    inf = math.inf

    def fail() -> None:
        if not strict:
            return
        raise LayoutError(
            f"dims {_q(list(x))} and {_q(list(y))} appear in different relative orders; "
            "common dims must keep the same order (no supremum exists)"
        )

    while i < len(x) or j < len(y):
        while i < len(x) and x[i] in taken:
            i += 1
        while j < len(y) and y[j] in taken:
            j += 1
        if i >= len(x) and j >= len(y):
            break
        if i < len(x) and j < len(y) and x[i] == y[j]:
            if pos_y[x[i]] < j:
                fail()
            result.append(x[i])
            taken.add(x[i])
            i += 1
            j += 1
            continue
        cand_x = pos_y[x[i]] if i < len(x) and x[i] in pos_y and pos_y[x[i]] >= j else inf
        cand_y = pos_x[y[j]] if j < len(y) and y[j] in pos_x and pos_x[y[j]] >= i else inf
        if i < len(x) and cand_x == inf:
            if x[i] in pos_y:  # it is in y, but already passed: inconsistent order
                fail()
            result.append(x[i])
            taken.add(x[i])
            i += 1
            continue
        if j < len(y) and cand_y == inf:
            if y[j] in pos_x:
                fail()
            result.append(y[j])
            taken.add(y[j])
            j += 1
            continue
        if cand_x <= cand_y:
            result.append(x[i])
            taken.add(x[i])
            i += 1
        else:
            result.append(y[j])
            taken.add(y[j])
            j += 1
    return result


# ----------------------------------------------------------------------------------------------
# LinearLayout


class LinearLayout:
    """A linear map F2^(in bits) -> F2^(out bits) with labeled, power-of-two sized dims.

    ``LinearLayout(bases, out_dims, *, require_surjective=True)``:

    * ``bases`` maps each in-dim name (in order) to its list of basis vectors; a basis vector has
      one int per out dim, in out-dim order. An in dim with ``k`` bases has size ``2**k``.
    * ``out_dims`` is a list of names (sizes inferred as the next power of two above the largest
      coordinate; the layout must then be surjective, as in Triton) or an ordered mapping (or
      list of pairs) name -> size. With explicit sizes, ``require_surjective=False`` allows a
      non-surjective layout.

    >>> LinearLayout({"in": [[1], [2], [4]]}, ["out"]).out_dims
    {'out': 8}
    """

    __slots__ = ("_in_names", "_in_bases", "_out_names", "_out_log2", "_out_shifts", "_in_bits", "_out_bits",
                 "_rank", "_hash", "_tables")

    _in_names: tuple[str, ...]
    _in_bases: tuple[tuple[int, ...], ...]
    _out_names: tuple[str, ...]
    _out_log2: tuple[int, ...]
    _out_shifts: tuple[int, ...]
    _rank: int | None  # computed on first use

    # ------------------------------------------------------------------ construction

    def __init__(self, bases: BasesArg, out_dims: OutDimsArg, *, require_surjective: bool = True) -> None:
        if _C is not None and _C.build_into(self, bases, out_dims, require_surjective):
            return
        if _constructed(self):
            raise AttributeError("LinearLayout is immutable: __init__ cannot run again on a constructed layout")
        if not isinstance(require_surjective, (bool, np.bool_)):
            raise LayoutError(f"require_surjective must be True or False, got {_q(require_surjective)}")
        in_pairs = _pairs(bases, "bases")
        in_names = [_check_name(n, "in-dim name") for n, _ in in_pairs]
        _unique(in_names, "bases")

        if isinstance(out_dims, (str, bytes)) or not isinstance(out_dims, Iterable):
            raise LayoutError(f"out_dims must be a list of names or a mapping name -> size, got {_q(out_dims)}")
        if isinstance(out_dims, (set, frozenset)):
            raise LayoutError(f"out_dims must be ordered (a list of names or a mapping name -> size), got a "
                              f"{type(out_dims).__name__}, whose order changes from run to run")
        if not isinstance(out_dims, Mapping):
            out_dims = list(out_dims)
        out_is_names = not isinstance(out_dims, Mapping) and all(isinstance(o, str) for o in out_dims)
        if out_is_names:
            out_names = [_check_name(n, "out-dim name") for n in out_dims]  # type: ignore[union-attr]
            sizes: list[int | None] = [None] * len(out_names)
        else:
            out_pairs = _pairs(out_dims, "out_dims")
            out_names = [_check_name(n, "out-dim name") for n, _ in out_pairs]
            sizes = [s for _, s in out_pairs]
        _unique(out_names, "out_dims")
        n_out = len(out_names)

        if out_is_names:
            raw = [_checked_vectors(name, vecs, n_out, out_names) for name, vecs in in_pairs]
            ors = [0] * n_out
            for dim_vecs in raw:
                for vec in dim_vecs:
                    for k, c in enumerate(vec):
                        ors[k] |= c
            log2s = [o.bit_length() for o in ors]  # the next power of two above the largest coordinate
            for name, k in zip(out_names, log2s):
                _check_dim_log2(k, f"out dim {_q(name)} (inferred from the largest coordinate)")
            require_surjective = True
            in_pairs = list(zip(in_names, raw))
        else:
            log2s = [_log2_exact(s, f"size of out dim {_q(out_names[k])}") for k, s in enumerate(sizes)]
        shifts = _shifts(log2s)
        limits = [1 << k for k in log2s]
        flat = tuple(_packed_dim(name, vecs, shifts, limits, out_names) for name, vecs in in_pairs)
        self._init(tuple(in_names), flat, tuple(out_names), tuple(log2s))
        if require_surjective and not self.is_surjective():
            raise LayoutError(
                "layout is not surjective (some output is reached by no input) but "
                "require_surjective=True; pass explicit out-dim sizes and require_surjective=False to allow it:"
                + _dump(self)
            )

    def _init(self, in_names: tuple[str, ...], in_bases: tuple[tuple[int, ...], ...],
              out_names: tuple[str, ...], out_log2: tuple[int, ...]) -> None:
        _set = object.__setattr__
        _set(self, "_in_names", in_names)
        _set(self, "_in_bases", in_bases)
        _set(self, "_out_names", out_names)
        _set(self, "_out_log2", out_log2)
        _set(self, "_out_shifts", tuple(_shifts(out_log2)))
        _set(self, "_in_bits", sum(map(len, in_bases)))
        _set(self, "_out_bits", sum(out_log2))
        _SET_RANK(self, None)
        _SET_HASH(self, None)
        _SET_TABLES(self, None)

    @classmethod
    def _make(cls, in_names: Sequence[str], in_bases: Sequence[Sequence[int]], out_names: Sequence[str],
              out_log2: Sequence[int]) -> "LinearLayout":
        """Build from flattened bases without validation (internal; inputs must be well formed)."""
        if _C is not None and cls is LinearLayout:
            made = _C.make(in_names, in_bases, out_names, out_log2)
            if made is not None:
                return made
        obj = object.__new__(cls)
        obj._init(tuple(in_names), tuple(tuple(d) for d in in_bases), tuple(out_names), tuple(out_log2))
        return obj

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("LinearLayout is immutable")

    def __reduce__(self) -> tuple:
        return (_rebuild, (self._in_names, self._in_bases, self._out_names, self._out_log2))

    def __copy__(self) -> "LinearLayout":
        return self  # immutable

    def __deepcopy__(self, memo: dict) -> "LinearLayout":
        return self

    @staticmethod
    def empty() -> "LinearLayout":
        """The layout with no in dims and no out dims (the identity of ``*``)."""
        return LinearLayout._make((), (), (), ())

    @staticmethod
    def strided_1d(size: int, stride: int, in_dim: str, out_dim: str) -> "LinearLayout":
        """L(x) = stride * x for x in [0, size); out size ``size * stride``. size 0 gives ``empty()``.

        >>> LinearLayout.strided_1d(4, 2, "a", "b").bases
        {'a': [[2], [4]]}
        """
        in_dim = _check_name(in_dim, "in_dim")
        out_dim = _check_name(out_dim, "out_dim")
        if _is_int(size) and size == 0:
            return LinearLayout.empty()
        k = _log2_exact(size, "size")
        s = _log2_exact(stride, "stride")
        _check_dim_log2(k + s, f"out dim {_q(out_dim)} (size * stride)")
        return LinearLayout._make((in_dim,), ((tuple(1 << (s + i) for i in range(k))),), (out_dim,), (k + s,))

    @staticmethod
    def identity_1d(size: int, in_dim: str, out_dim: str) -> "LinearLayout":
        """L(x) = x for x in [0, size). size 0 gives ``empty()``."""
        return LinearLayout.strided_1d(size, 1, in_dim, out_dim)

    @staticmethod
    def zeros_1d(size: int, in_dim: str, out_dim: str, out_dim_size: int = 1) -> "LinearLayout":
        """L(x) = 0 for x in [0, size), into an out dim of ``out_dim_size`` (default 1)."""
        in_dim = _check_name(in_dim, "in_dim")
        out_dim = _check_name(out_dim, "out_dim")
        if _is_int(size) and size == 0:
            return LinearLayout.empty()
        k = _log2_exact(size, "size")
        o = _log2_exact(out_dim_size, "out_dim_size")
        return LinearLayout._make((in_dim,), ((0,) * k,), (out_dim,), (o,))

    @staticmethod
    def from_matrix(matrix: Any, in_dims: OutDimsArg, out_dims: OutDimsArg) -> "LinearLayout":
        """Inverse of ``to_matrix``: rows are out bits, columns in bits (dims in order, LSB first).

        ``in_dims`` / ``out_dims`` are ordered mappings (or pairs) name -> size.
        """
        ins = [(_check_name(n, "in-dim name"), _log2_exact(s, f"size of in dim {_q(n)}")) for n, s in _pairs(in_dims, "in_dims")]
        outs = [(_check_name(n, "out-dim name"), _log2_exact(s, f"size of out dim {_q(n)}")) for n, s in _pairs(out_dims, "out_dims")]
        _unique([n for n, _ in ins], "in_dims")
        _unique([n for n, _ in outs], "out_dims")
        try:
            m = np.asarray(matrix)
        except Exception as e:  # pragma: no cover - numpy raises many types
            raise LayoutError(f"matrix must be a 2-D 0/1 array: {e}") from None
        n_rows = sum(k for _, k in outs)
        n_cols = sum(k for _, k in ins)
        if m.ndim != 2 or m.shape != (n_rows, n_cols):
            raise LayoutError(f"matrix must have shape ({n_rows}, {n_cols}) for these dims, got {m.shape}")
        if not np.isin(m, (0, 1)).all():
            raise LayoutError("matrix entries must be 0 or 1")
        cols = [sum(int(m[r, c]) << r for r in range(n_rows)) for c in range(n_cols)]
        in_bases, c = [], 0
        for _, k in ins:
            in_bases.append(cols[c:c + k])
            c += k
        return LinearLayout._make([n for n, _ in ins], in_bases, [n for n, _ in outs], [k for _, k in outs])

    # ------------------------------------------------------------------ dims and bases

    @property
    def in_dims(self) -> dict[str, int]:
        """Ordered in-dim name -> size."""
        return {n: 1 << len(b) for n, b in zip(self._in_names, self._in_bases)}

    @property
    def out_dims(self) -> dict[str, int]:
        """Ordered out-dim name -> size."""
        return {n: 1 << k for n, k in zip(self._out_names, self._out_log2)}

    @property
    def in_dim_names(self) -> tuple[str, ...]:
        return self._in_names

    @property
    def out_dim_names(self) -> tuple[str, ...]:
        return self._out_names

    @property
    def num_in_dims(self) -> int:
        return len(self._in_names)

    @property
    def num_out_dims(self) -> int:
        return len(self._out_names)

    def has_in_dim(self, dim: str) -> bool:
        return isinstance(dim, str) and dim in self._in_names

    def has_out_dim(self, dim: str) -> bool:
        return isinstance(dim, str) and dim in self._out_names

    def _in_index(self, dim: str, what: str = "in_dim") -> int:
        try:
            return self._in_names.index(dim)
        except ValueError:
            raise LayoutError(f"{what} {_q(dim)} is not an in dim of this layout (in dims: {_q(list(self._in_names))})") from None

    def _out_index(self, dim: str, what: str = "out_dim") -> int:
        try:
            return self._out_names.index(dim)
        except ValueError:
            raise LayoutError(f"{what} {_q(dim)} is not an out dim of this layout (out dims: {_q(list(self._out_names))})") from None

    def in_dim_size_log2(self, dim: str, *, missing_ok: bool = False) -> int:
        """log2 of ``dim``'s size; with ``missing_ok`` an in dim the layout lacks counts as size 1 (log2 0).

        >>> LinearLayout.identity_1d(8, "register", "dim0").in_dim_size_log2("warp", missing_ok=True)
        0
        """
        if missing_ok and not self.has_in_dim(dim):
            return 0
        return len(self._in_bases[self._in_index(dim)])

    def in_dim_size(self, dim: str, *, missing_ok: bool = False) -> int:
        """``dim``'s size; with ``missing_ok`` an in dim the layout lacks counts as size 1."""
        return 1 << self.in_dim_size_log2(dim, missing_ok=missing_ok)

    def out_dim_size_log2(self, dim: str) -> int:
        return self._out_log2[self._out_index(dim)]

    def out_dim_size(self, dim: str) -> int:
        return 1 << self.out_dim_size_log2(dim)

    @property
    def total_in_dim_size_log2(self) -> int:
        return sum(len(b) for b in self._in_bases)

    @property
    def total_out_dim_size_log2(self) -> int:
        return sum(self._out_log2)

    @property
    def total_in_dim_size(self) -> int:
        return 1 << self.total_in_dim_size_log2

    @property
    def total_out_dim_size(self) -> int:
        return 1 << self.total_out_dim_size_log2

    @property
    def bases(self) -> dict[str, list[list[int]]]:
        """Ordered in-dim name -> list of basis vectors (one int per out dim): the constructor's form."""
        shifts, log2s = _shifts(self._out_log2), self._out_log2
        return {n: [_unpack(b, shifts, log2s) for b in dim] for n, dim in zip(self._in_names, self._in_bases)}

    def flat_bases(self, in_dim: str | None = None, *, missing_ok: bool = False) -> tuple[int, ...]:
        """Bases as flattened ints (first out dim least significant); all in dims if ``in_dim`` is None;
        with ``missing_ok`` an in dim the layout lacks has none (``()``)."""
        if in_dim is None:
            return tuple(b for dim in self._in_bases for b in dim)
        if missing_ok and not self.has_in_dim(in_dim):
            return ()
        return self._in_bases[self._in_index(in_dim)]

    def get_basis(self, in_dim: str, pos: int, out_dim: str | None = None) -> int | tuple[int, ...]:
        """L(in_dim = 2**pos): the whole vector, or its ``out_dim`` coordinate."""
        dim = self._in_bases[self._in_index(in_dim)]
        if not _is_int(pos) or not 0 <= pos < len(dim):
            raise LayoutError(f"pos must be in [0, {len(dim)}) for in dim {_q(in_dim)}, got {_q(pos)}")
        vec = _unpack(dim[pos], _shifts(self._out_log2), self._out_log2)
        if out_dim is None:
            return tuple(vec)
        return vec[self._out_index(out_dim)]

    # ------------------------------------------------------------------ predicates

    def is_surjective(self) -> bool:
        """Every output is reached: rank == total out bits."""
        r = self._rank
        return (self.rank if r is None else r) == self._out_bits

    def is_injective(self) -> bool:
        """No two inputs share an output: rank == total in bits."""
        r = self._rank
        return (self.rank if r is None else r) == self._in_bits

    def is_invertible(self) -> bool:
        """Surjective and square (total in size == total out size)."""
        return self._in_bits == self._out_bits and self.is_surjective()

    @property
    def rank(self) -> int:
        """dim of the image (computed once)."""
        r = self._rank
        if r is None:
            r = f2.rank(b for dim in self._in_bases for b in dim)
            _SET_RANK(self, r)
        return r

    # ------------------------------------------------------------------ evaluation

    def apply(self, ins: Mapping[str, int]) -> dict[str, int]:
        """L(ins) as out-dim name -> coordinate. In dims missing from ``ins`` are taken as 0.

        >>> LinearLayout.identity_1d(8, "i", "o").apply({"i": 5})
        {'o': 5}
        """
        if _C is not None:
            out = _C.apply(self, ins)
            if out is not None:
                return out
        if not isinstance(ins, Mapping):
            raise LayoutError(f"apply takes a mapping in-dim name -> int, got {_q(ins)}")
        flat = 0
        names = self._in_names
        tables = self._tables
        if tables is None:
            tables = self._byte_tables()
        for name, val in ins.items():
            d = names.index(name) if name in names else self._in_index(name, "apply: input dim")
            size = 1 << len(self._in_bases[d])
            if type(val) is not int and not _is_int(val) or not 0 <= val < size:
                raise LayoutError(f"apply: value of {_q(name)} must be an int in [0, {size}), got {_q(val)}")
            val = int(val)
            for table in tables[d]:
                flat ^= table[val & 255]
                val >>= 8
        return {n: (flat >> s) & ((1 << k) - 1) for n, s, k in zip(self._out_names, self._out_shifts, self._out_log2)}

    def _byte_tables(self) -> tuple[tuple[tuple[int, ...], ...], ...]:
        """Per in dim, per byte of its value, the 256 XOR combinations of those 8 bases (cached)."""
        tables = tuple(
            tuple(tuple(f2.span_elements(dim[lo:lo + 8])) for lo in range(0, len(dim), 8))
            for dim in self._in_bases
        )
        _SET_TABLES(self, tables)
        return tables

    def apply_flat(self, x: int) -> int:
        """The flattened output for a flattened input (in dims packed, first in dim least significant)."""
        cols = self.flat_bases()
        if not _is_int(x) or not 0 <= x < (1 << len(cols)):
            raise LayoutError(f"apply_flat: x must be an int in [0, {1 << len(cols)}), got {_q(x)}")
        return _map_flat(int(x), cols)

    def apply_all(self, *, max_elements: int = MAX_ELEMENTS) -> np.ndarray:
        """Flattened output of every flattened input, as an int64 array of length total_in_dim_size.

        Built by doubling (out[x + 2**i] = out[x] ^ basis_i), so it costs O(total_in_dim_size).
        Requires: total_in_dim_size <= ``max_elements`` (``limits.MAX_ELEMENTS``), out bits <= 63.
        """
        check_log2_count(self._in_bits, max_elements, "apply_all")
        self._check_int64("apply_all")
        if _C is not None:
            out = np.empty(1 << self._in_bits, dtype=np.int64)
            if _C.apply_all_into(self, out):
                return out
        out = np.zeros(1, dtype=np.int64)
        for b in self.flat_bases():
            out = np.concatenate((out, out ^ np.int64(b)))
        return out

    def _check_int64(self, what: str) -> None:
        if self._out_bits > 63:
            raise LayoutError(f"{what}: the {self._out_bits} out bits do not fit an int64 (at most 63)")

    def apply_array(self, ins: Mapping[str, Any], *, max_elements: int = MAX_ELEMENTS) -> dict[str, np.ndarray]:
        """Vectorized ``apply``: NumPy integer arrays (broadcast together) in, arrays out.

        Requires: out bits <= 63 and at most ``max_elements`` (``limits.MAX_ELEMENTS``) results.

        >>> L = LinearLayout.identity_1d(8, "i", "o")
        >>> L.apply_array({"i": np.arange(3)})["o"].tolist()
        [0, 1, 2]
        """
        if _C is not None:
            out = self._apply_array_c(ins, max_elements)
            if out is not None:
                return out
        if not isinstance(ins, Mapping):
            raise LayoutError(f"apply_array takes a mapping in-dim name -> array, got {_q(ins)}")
        self._check_int64("apply_array")
        arrays = {}
        for name, val in ins.items():
            d = self._in_index(name, "apply_array: input dim")
            try:
                a = np.asarray(val)
            except (TypeError, ValueError, OverflowError) as e:
                raise LayoutError(f"apply_array: values of {_q(name)} must be an integer array: {_q(str(e))}") from None
            if a.dtype.kind not in "iu":
                raise LayoutError(f"apply_array: values of {_q(name)} must be integers, got dtype {a.dtype}")
            size = 1 << len(self._in_bases[d])
            if a.size and (a.min() < 0 or a.max() >= size):
                raise LayoutError(f"apply_array: values of {_q(name)} must be in [0, {size})")
            arrays[d] = a.astype(np.int64, copy=False)
        try:
            shape = np.broadcast_shapes(*(a.shape for a in arrays.values())) if arrays else ()
        except ValueError as e:
            raise LayoutError(f"apply_array: input arrays do not broadcast together: {e}") from None
        check_count(math.prod(shape), max_elements, "apply_array")
        flat = np.zeros(shape, dtype=np.int64)
        for d, a in arrays.items():
            bases = self._in_bases[d]
            for lo in range(0, len(bases), 8):  # one table lookup per byte of input
                chunk = bases[lo:lo + 8]
                table = np.zeros(1, dtype=np.int64)
                for b in chunk:
                    table = np.concatenate((table, table ^ np.int64(b)))
                flat = flat ^ table[(a >> lo) & (len(table) - 1)]
        out = {}
        for name, shift, k in zip(self._out_names, _shifts(self._out_log2), self._out_log2):
            out[name] = (flat >> shift) & ((1 << k) - 1)
        return out

    def _apply_array_c(self, ins: Any, max_elements: int) -> dict[str, np.ndarray] | None:
        """``apply_array`` by the compiled core, or None when anything is unusual (the Python code then runs)."""
        if not isinstance(ins, Mapping) or self._out_bits > 63:
            return None
        dims, arrays = [], []
        for name, val in ins.items():
            if name not in self._in_names:
                return None
            try:
                a = np.asarray(val)
            except (TypeError, ValueError, OverflowError):
                return None
            if a.dtype.kind not in "iu":
                return None
            dims.append(self._in_names.index(name))
            arrays.append(a)
        try:
            shape = np.broadcast_shapes(*(a.shape for a in arrays)) if arrays else ()
        except ValueError:
            return None
        if not shape or type(max_elements) is not int or math.prod(shape) > max_elements:
            return None  # 0-d results are NumPy scalars in the Python code; limits are checked there
        arrays = [a if a.shape == shape and a.dtype == np.int64 and a.flags.c_contiguous
                  else np.ascontiguousarray(np.broadcast_to(a.astype(np.int64, copy=False), shape)) for a in arrays]
        block = np.empty((len(self._out_names),) + shape, dtype=np.int64)  # one allocation for all outputs
        outs = tuple(block)
        if not _C.apply_arrays_into(self, tuple(dims), tuple(arrays), outs):
            return None
        return dict(zip(self._out_names, outs))

    # ------------------------------------------------------------------ algebra

    def __mul__(self, outer: "LinearLayout") -> "LinearLayout":
        """Product (direct sum): ``self`` is the minor factor.

        In dims and out dims are merged by ``supremum`` (self's order preferred). For an in dim of
        both, self's bases come first; for an out dim of both, outer's coordinates are shifted above
        self's and the sizes multiply.
        ``identity_1d(4, "i", "o") * identity_1d(2, "i", "o") == identity_1d(8, "i", "o")``.
        """
        if not isinstance(outer, LinearLayout):
            return NotImplemented
        if _C is not None:
            made = _C.product(self, outer)
            if made is not None:
                return made
        inner = self
        in_names = supremum(inner._in_names, outer._in_names, strict=False)
        out_names = supremum(inner._out_names, outer._out_names, strict=False)
        inner_out = dict(zip(inner._out_names, inner._out_log2))
        outer_out = dict(zip(outer._out_names, outer._out_log2))
        out_log2 = [_check_dim_log2(inner_out.get(n, 0) + outer_out.get(n, 0), f"product: out dim {_q(n)}")
                    for n in out_names]
        new_shift = dict(zip(out_names, _shifts(out_log2)))
        inner_segs = _segments(inner, new_shift)
        outer_segs = _segments(outer, {n: new_shift[n] + inner_out.get(n, 0) for n in outer._out_names})
        inner_ins = dict(zip(inner._in_names, inner._in_bases))
        outer_ins = dict(zip(outer._in_names, outer._in_bases))
        new_bases = []
        for n in in_names:
            dim_bases = [_move(b, inner_segs) for b in inner_ins.get(n, ())]
            dim_bases += [_move(b, outer_segs) for b in outer_ins.get(n, ())]
            _check_dim_log2(len(dim_bases), f"product: in dim {_q(n)}")
            new_bases.append(dim_bases)
        return LinearLayout._make(in_names, new_bases, out_names, out_log2)

    def compose(self, outer: "LinearLayout") -> "LinearLayout":
        """outer ∘ self: apply self, then outer. Keeps self's in dims and outer's out dims.

        Requires self's out dims == outer's in dims (any order), each no larger than outer's.
        """
        if _C is not None:
            made = _C.compose(self, outer)
            if made is not None:
                return made
        if not isinstance(outer, LinearLayout):
            raise not_a_layout(outer, "compose: outer")
        if set(self._out_names) != set(outer._in_names):
            raise LayoutError(
                f"compose: the out dims of self {_q(list(self._out_names))} must equal the in dims of outer "
                f"{_q(list(outer._in_names))} (order may differ)"
            )
        col_images: list[int] = []
        outer_names = outer._in_names
        for n, k in zip(self._out_names, self._out_log2):
            ob = outer._in_bases[outer_names.index(n)]
            if k > len(ob):
                raise LayoutError(
                    f"compose: out dim {_q(n)} of self has size {1 << k} but outer's in dim {_q(n)} has size "
                    f"{1 << len(ob)}; it must be at least as large"
                )
            col_images.extend(ob[:k])
        new_bases = [[_map_flat(b, col_images) for b in dim] for dim in self._in_bases]
        return LinearLayout._make(self._in_names, new_bases, outer._out_names, outer._out_log2)

    def invert_and_compose(self, outer: "LinearLayout") -> "LinearLayout":
        """C with outer(C(x)) == self(x) for every x: Triton's ``invertAndCompose``, same choice.

        When every out dim has the same size in both, in dims that self and outer share with
        identical bases map as the identity (data that needs no movement). The rest is Triton's
        least-squares solve: free variables (bases of outer in the span of earlier ones) are zero.
        Requires the same out dims (any order), each at least as large in outer, and
        image(self) inside image(outer). Result: self's in dims -> outer's in dims.
        """
        if _C is not None:
            made = _C.invert_and_compose(self, outer)
            if made is not None:
                return made
        if not isinstance(outer, LinearLayout):
            raise not_a_layout(outer, "invert_and_compose: outer")
        B = self
        if sorted(B._out_names) != sorted(outer._out_names):
            raise LayoutError(
                f"invert_and_compose: self and outer must have the same out dims, got {_q(list(B._out_names))} "
                f"and {_q(list(outer._out_names))}"
            )
        A = outer.transpose_outs(B._out_names)
        for n, ka, kb in zip(B._out_names, A._out_log2, B._out_log2):
            if ka < kb:
                raise LayoutError(
                    f"invert_and_compose: out dim {_q(n)} has size {1 << kb} in self but only {1 << ka} in outer; "
                    "outer's out dims must be at least as large"
                )
        identity_dims = _identity_dims(A, B)
        # B's flattened bases re-packed with A's out sizes, so both live in the same space
        if A._out_log2 == B._out_log2:
            b_cols = [b for dim in B._in_bases for b in dim]
        else:
            segs = _segments(B, dict(zip(A._out_names, A._out_shifts)))
            b_cols = [_move(b, segs) for dim in B._in_bases for b in dim]
        # the result's out space is A's flattened in space; a_pos[n] = first bit of in dim n there
        a_pos, pos = {}, 0
        for n, dim in zip(A._in_names, A._in_bases):
            a_pos[n] = pos
            pos += len(dim)

        def solve(identity: set[str]) -> list[int] | None:
            cols, col_bit = [], []
            for n, dim in zip(A._in_names, A._in_bases):
                if n not in identity:
                    cols.extend(dim)
                    col_bit.extend(range(a_pos[n], a_pos[n] + len(dim)))
            elim = f2.EliminationBasis.build(cols)
            out, i = [], 0
            for n, dim in zip(B._in_names, B._in_bases):
                if n in identity:
                    out.extend(1 << (a_pos[n] + t) for t in range(len(dim)))
                else:
                    for b in b_cols[i:i + len(dim)]:
                        x = elim.express(b)
                        if x is None:
                            return None
                        out.append(_move_bits(x, col_bit))
                i += len(dim)
            return out

        flat = solve(identity_dims)
        if flat is None and identity_dims:
            # Triton's identity heuristic leaves an unsolvable system here; solve the full one instead.
            flat = solve(set())
        if flat is None:
            raise LayoutError(
                "invert_and_compose: some output of self is not an output of outer (image(self) must lie "
                "inside image(outer)):" + _dump(B) + "\nouter:" + _dump(outer)
            )
        bases, i = [], 0
        for dim in B._in_bases:
            bases.append(flat[i:i + len(dim)])
            i += len(dim)
        return LinearLayout._make(B._in_names, bases, A._in_names, [len(d) for d in A._in_bases])

    def pseudoinvert(self) -> "LinearLayout":
        """A right inverse P (self(P(y)) == y) of a surjective layout; invert() when invertible."""
        if _C is not None:
            made = _C.pseudoinvert(self)
            if made is not None:
                return made
        if not self.is_surjective():
            raise LayoutError("pseudoinvert: the layout must be surjective" + _dump(self))
        identity = LinearLayout._make(
            self._out_names,
            [[1 << (s + i) for i in range(k)] for s, k in zip(self._out_shifts, self._out_log2)],
            self._out_names,
            self._out_log2,
        )
        return identity.invert_and_compose(self)

    def invert(self) -> "LinearLayout":
        """L^-1 (out dims -> in dims) of an invertible layout."""
        if _C is not None:
            made = _C.invert(self)
            if made is not None:
                return made
        if not self.is_invertible():
            raise LayoutError(
                "invert: the layout must be invertible (surjective and total in size == total out size)"
                + _dump(self)
            )
        return self.pseudoinvert()

    # ------------------------------------------------------------------ sublayouts and quotients

    def sublayout(self, in_dims: Iterable[str], out_dims: Iterable[str]) -> "LinearLayout":
        """Keep only these in and out dims, in self's order; out sizes unchanged; not required surjective."""
        in_set, out_set = _name_set(in_dims, "in_dims"), _name_set(out_dims, "out_dims")
        for n in in_set:
            self._in_index(n, "sublayout: in dim")
        for n in out_set:
            self._out_index(n, "sublayout: out dim")
        shifts = _shifts(self._out_log2)
        mask = 0
        keep_names, keep_log2, bit_map = [], [], []
        for n, s, k in zip(self._out_names, shifts, self._out_log2):
            if n in out_set:
                keep_names.append(n)
                keep_log2.append(k)
                mask |= ((1 << k) - 1) << s
        new_shifts = _shifts(keep_log2)
        pos = {n: ns for n, ns in zip(keep_names, new_shifts)}
        for n, s, k in zip(self._out_names, shifts, self._out_log2):
            bit_map.extend((pos[n] + t) if n in out_set else -1 for t in range(k))
        names, bases = [], []
        for n, dim in zip(self._in_names, self._in_bases):
            if n in in_set:
                names.append(n)
                bases.append(dim)
        moved = _C.move_bits(tuple(bases), bit_map) if _C is not None else None
        if moved is None:
            moved = [[_move_bits(b & mask, bit_map) for b in dim] for dim in bases]
        return LinearLayout._make(names, moved, keep_names, keep_log2)

    def sublayout_is_zero(self, in_dims: Iterable[str], out_dims: Iterable[str]) -> bool:
        """Whether every basis of ``sublayout(in_dims, out_dims)`` is zero."""
        sub = self.sublayout(in_dims, out_dims)
        return not any(b for dim in sub._in_bases for b in dim)

    def square_sublayout_is_identity(self, dims: Iterable[str]) -> bool:
        """Whether the sublayout dims -> dims, flattened, is the identity (True for no dims)."""
        dims = _name_list(dims, "dims")
        if not dims:
            return True
        for d in dims:
            if d not in self._in_names or d not in self._out_names or self.in_dim_size(d) != self.out_dim_size(d):
                return False
        sub = self.sublayout(dims, dims)
        return all(b == 1 << i for i, b in enumerate(sub.flat_bases()))

    def is_trivial_over(self, dims: Iterable[str]) -> bool:
        """Whether self acts as the identity on ``dims`` and does not mix them with the other dims."""
        dims = _name_list(dims, "dims")
        for d in dims:
            if d not in self._in_names and d not in self._out_names:
                return False
        if not self.square_sublayout_is_identity(dims):
            return False
        rest_in = [n for n in self._in_names if n not in dims]
        rest_out = [n for n in self._out_names if n not in dims]
        return self.sublayout_is_zero(rest_in, dims) and self.sublayout_is_zero(dims, rest_out)

    def quotient(self, dims: Iterable[str]) -> "LinearLayout | None":
        """The layout on the remaining dims if self is trivial over ``dims``, else None."""
        dims = _name_list(dims, "dims")
        if not self.is_trivial_over(dims):
            return None
        return self.sublayout([n for n in self._in_names if n not in dims], [n for n in self._out_names if n not in dims])

    def divide_left(self, divisor: "LinearLayout") -> "LinearLayout | None":
        """C with ``divisor * C == self``, or None (paper Def. 4.4). See :func:`divide_left`."""
        return divide_left(self, divisor)

    def divide_right(self, divisor: "LinearLayout") -> "LinearLayout | None":
        """C with ``C * divisor == self``, or None. See :func:`divide_right`."""
        return divide_right(self, divisor)

    # ------------------------------------------------------------------ reshaping

    def transpose_ins(self, order: Iterable[str]) -> "LinearLayout":
        """Reorder the in dims (bases follow their dims)."""
        order = _name_list(order, "transpose_ins: order", ordered=True)
        if sorted(order) != sorted(self._in_names):
            raise LayoutError(f"transpose_ins: {_q(order)} must be a permutation of the in dims {_q(list(self._in_names))}")
        idx = [self._in_names.index(n) for n in order]
        return LinearLayout._make([self._in_names[i] for i in idx], [self._in_bases[i] for i in idx],
                                  self._out_names, self._out_log2)

    def transpose_outs(self, order: Iterable[str]) -> "LinearLayout":
        """Reorder the out dims (coordinates of every basis follow)."""
        order = _name_list(order, "transpose_outs: order", ordered=True)
        if sorted(order) != sorted(self._out_names):
            raise LayoutError(f"transpose_outs: {_q(order)} must be a permutation of the out dims {_q(list(self._out_names))}")
        if tuple(order) == self._out_names:
            return self
        order = [self._out_names[self._out_names.index(n)] for n in order]  # the layout's own name objects
        shifts = dict(zip(self._out_names, _shifts(self._out_log2)))
        log2 = dict(zip(self._out_names, self._out_log2))
        new_log2 = [log2[n] for n in order]
        new_shifts = dict(zip(order, _shifts(new_log2)))
        bit_map = []
        for n in self._out_names:
            bit_map.extend(new_shifts[n] + t for t in range(log2[n]))
        del shifts
        moved = _C.move_bits(self._in_bases, bit_map) if _C is not None else None
        if moved is None:
            moved = [[_move_bits(b, bit_map) for b in d] for d in self._in_bases]
        return LinearLayout._make(self._in_names, moved, order, new_log2)

    def reshape_ins(self, new_in_dims: OutDimsArg) -> "LinearLayout":
        """Flatten the in dims (first is least significant), then split into ``[(name, size), ...]``."""
        pairs = _reshape_dims(new_in_dims, "in", self.total_in_dim_size_log2)
        flat = self.flat_bases()
        out, i = [], 0
        for _, k in pairs:
            out.append(flat[i:i + k])
            i += k
        return LinearLayout._make([n for n, _ in pairs], out, self._out_names, self._out_log2)

    def reshape_outs(self, new_out_dims: OutDimsArg) -> "LinearLayout":
        """Flatten the out dims (first is least significant), then split into ``[(name, size), ...]``."""
        pairs = _reshape_dims(new_out_dims, "out", self.total_out_dim_size_log2)
        return LinearLayout._make(self._in_names, self._in_bases, [n for n, _ in pairs], [k for _, k in pairs])

    def flatten_ins(self) -> "LinearLayout":
        """One in dim, named like the first, of the total in size."""
        if not self._in_names:
            return self.reshape_ins([])
        return self.reshape_ins([(self._in_names[0], self.total_in_dim_size)])

    def flatten_outs(self) -> "LinearLayout":
        """One out dim, named like the first, of the total out size."""
        if not self._out_names:
            return self.reshape_outs([])
        return self.reshape_outs([(self._out_names[0], self.total_out_dim_size)])

    def concat_ins(self, other: "LinearLayout") -> "LinearLayout":
        """self's in dims followed by other's (disjoint), over the same out dims and sizes."""
        _check_layout(other, "concat_ins: other")
        if self._out_names != other._out_names or self._out_log2 != other._out_log2:
            raise LayoutError("concat_ins: both layouts must have the same out dims and sizes, in the same order")
        _unique(list(self._in_names) + list(other._in_names), "concat_ins: in dims")
        return LinearLayout._make(self._in_names + other._in_names, self._in_bases + other._in_bases, self._out_names, self._out_log2)

    def concat_outs(self, other: "LinearLayout") -> "LinearLayout":
        """self's out dims followed by other's (disjoint), over the same in dims and sizes."""
        _check_layout(other, "concat_outs: other")
        if self._in_names != other._in_names or [len(b) for b in self._in_bases] != [len(b) for b in other._in_bases]:
            raise LayoutError("concat_outs: both layouts must have the same in dims and sizes, in the same order")
        _unique(list(self._out_names) + list(other._out_names), "concat_outs: out dims")
        shift = self.total_out_dim_size_log2
        bases = [[a | (b << shift) for a, b in zip(da, db)] for da, db in zip(self._in_bases, other._in_bases)]
        return LinearLayout._make(self._in_names, bases, self._out_names + other._out_names, self._out_log2 + other._out_log2)

    def resize_in_dim(self, dim: str, new_size: int) -> "LinearLayout":
        """Keep the first log2(new_size) bases of ``dim``; a larger size appends zero (broadcast) bases."""
        d = self._in_index(dim)
        k = _log2_exact(new_size, "new_size")
        bases = list(self._in_bases)
        old = bases[d]
        bases[d] = old[:k] + (0,) * max(0, k - len(old))
        return LinearLayout._make(self._in_names, bases, self._out_names, self._out_log2)

    def resize_out_dim(self, dim: str, new_size: int) -> "LinearLayout":
        """Change the size of out dim ``dim``. Shrinking zeroes every coordinate >= new_size (as Triton)."""
        o = self._out_index(dim)
        k = _log2_exact(new_size, "new_size")
        vecs = self.bases
        for name in vecs:
            for v in vecs[name]:
                if v[o] >= new_size:
                    v[o] = 0
        sizes = dict(self.out_dims)
        sizes[dim] = 1 << k
        return LinearLayout(vecs, sizes, require_surjective=False)

    def rename_in_dim(self, old: str, new: str) -> "LinearLayout":
        """The same layout with in dim ``old`` called ``new``."""
        d = self._in_index(old, "rename_in_dim: old")
        new = _check_name(new, "rename_in_dim: new")
        if new != old and new in self._in_names:
            raise LayoutError(f"rename_in_dim: {_q(new)} is already an in dim")
        names = list(self._in_names)
        names[d] = new
        return LinearLayout._make(names, self._in_bases, self._out_names, self._out_log2)

    def rename_out_dim(self, old: str, new: str) -> "LinearLayout":
        """The same layout with out dim ``old`` called ``new``."""
        o = self._out_index(old, "rename_out_dim: old")
        new = _check_name(new, "rename_out_dim: new")
        if new != old and new in self._out_names:
            raise LayoutError(f"rename_out_dim: {_q(new)} is already an out dim")
        names = list(self._out_names)
        names[o] = new
        return LinearLayout._make(self._in_names, self._in_bases, names, self._out_log2)

    def unsqueeze_in(self, dim: str) -> "LinearLayout":
        """Remove the size-1 in dim ``dim`` (Triton's ``unsqueezeIn``: drop a trivial dimension)."""
        d = self._in_index(dim)
        if self._in_bases[d]:
            raise LayoutError(f"unsqueeze_in: in dim {_q(dim)} has size {1 << len(self._in_bases[d])}; only size-1 dims can be removed")
        keep = [i for i in range(len(self._in_names)) if i != d]
        return LinearLayout._make([self._in_names[i] for i in keep], [self._in_bases[i] for i in keep], self._out_names, self._out_log2)

    def unsqueeze_out(self, dim: str) -> "LinearLayout":
        """Remove the size-1 out dim ``dim`` (Triton's ``unsqueezeOut``)."""
        o = self._out_index(dim)
        if self._out_log2[o]:
            raise LayoutError(f"unsqueeze_out: out dim {_q(dim)} has size {1 << self._out_log2[o]}; only size-1 dims can be removed")
        names = [n for i, n in enumerate(self._out_names) if i != o]
        log2 = [k for i, k in enumerate(self._out_log2) if i != o]
        return LinearLayout._make(self._in_names, self._in_bases, names, log2)

    def remove_zero_bases_along_dim(self, dim: str) -> "LinearLayout":
        """Drop the zero (broadcast) bases of in dim ``dim``."""
        d = self._in_index(dim)
        bases = list(self._in_bases)
        bases[d] = tuple(b for b in bases[d] if b)
        return LinearLayout._make(self._in_names, bases, self._out_names, self._out_log2)

    # ------------------------------------------------------------------ structure

    def free_variable_masks(self) -> dict[str, int]:
        """Per in dim, the bits whose basis lies in the span of the bases before it (Triton's order)."""
        pivots = set(f2.pivot_columns(self.flat_bases()))
        out, c = {}, 0
        for n, dim in zip(self._in_names, self._in_bases):
            mask = 0
            for i in range(len(dim)):
                if c not in pivots:
                    mask |= 1 << i
                c += 1
            out[n] = mask
        return out

    def num_consecutive_in_out(self) -> int:
        """Largest V with L(a*V + v, ...) = L(a*V, ...) + (v, 0, ...) for v < V (first in, first out dim)."""
        if not self._in_names or not self._out_names:
            return 1
        first = self._in_bases[0]
        k0 = self._out_log2[0]
        mask0 = (1 << k0) - 1
        consec = 0
        while consec < len(first) and first[consec] == (1 << consec) and consec < k0:
            consec += 1
        other = 0
        for d, dim in enumerate(self._in_bases):
            for i, b in enumerate(dim):
                if d != 0 or i >= consec:
                    other |= b & mask0
        tz = (other & -other).bit_length() - 1 if other else 31
        return 1 << min(consec, tz)

    def equal_ignoring_out_dim_sizes(self, other: "LinearLayout") -> bool:
        """Same in dims, bases and out-dim names (out sizes may differ)."""
        _check_layout(other, "equal_ignoring_out_dim_sizes: other")
        if self._out_names != other._out_names or self._in_names != other._in_names:
            return False
        return self.bases == other.bases

    def to_matrix(self, *, max_elements: int = MAX_ELEMENTS) -> np.ndarray:
        """The F2 matrix (uint8): rows are out bits, columns in bits; dims in order, LSB first.

        Requires: out bits * in bits <= ``max_elements`` (``limits.MAX_ELEMENTS``).
        """
        n = self._out_bits * self._in_bits
        if _C is not None and n and type(max_elements) is int and n <= max_elements:  # within a valid limit
            data = _C.to_matrix_bytes(self)
            if data is not None:
                return np.ndarray((self._out_bits, self._in_bits), np.uint8, data)
        check_count(n, max_elements, "to_matrix")
        dtype = np.uint64 if self._out_bits <= 64 else object
        cols = np.array(self.flat_bases(), dtype=dtype)
        rows = np.arange(self._out_bits, dtype=dtype)[:, None]
        return ((cols[None, :] >> rows) & dtype(1) if dtype is np.uint64 else (cols[None, :] >> rows) & 1).astype(np.uint8)

    # ------------------------------------------------------------------ equality, printing

    def _key(self) -> tuple:
        return (self._in_names, self._in_bases, self._out_names, self._out_log2)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, LinearLayout):
            return NotImplemented
        return (
            self._out_log2 == other._out_log2
            and self._in_bases == other._in_bases
            and self._in_names == other._in_names
            and self._out_names == other._out_names
        )

    def __hash__(self) -> int:
        h = self._hash
        if type(h) is not int or h == -1 or h.bit_length() > 63:  # not computed yet (None), or not a hash
            h = hash(self._key())
            _SET_HASH(self, h)
        return h

    def to_string(self) -> str:
        """Triton's ``toString`` (starts with a newline)."""
        if _C is not None:
            text = _C.to_string(self)
            if text is not None:
                return text
        return self._format()

    def _format(self) -> str:
        outs = "[" + ", ".join(f"{n} (size {1 << k})" for n, k in zip(self._out_names, self._out_log2)) + "]"
        if not self._in_names:
            return "\n(empty layout)" if not self._out_names else f"\n(empty layout with out-dims {outs})"
        fields = [(s, (1 << k) - 1) for s, k in zip(self._out_shifts, self._out_log2)]
        parts = ["\n"]
        for n, dim in zip(self._in_names, self._in_bases):
            if not dim:
                parts.append(f" - {n} is a size 1 dimension\n")
                continue
            lines = [
                f"{n}={1 << i} -> (" + ", ".join([str((b >> s) & m) for s, m in fields]) + ")"
                for i, b in enumerate(dim)
            ]
            parts.append(" - " + "\n   ".join(lines) + "\n")
        parts.append("where out dims are: " + outs)
        return "".join(parts)

    def to_json(self) -> str:
        """This layout as JSON: ``{"bases": {in_dim: [basis, ...]}, "out_dims": {out_dim: size}}``, dims in
        order, plus ``"require_surjective": false`` when some output is reached by no input. The format the
        CLI's layout arguments and :meth:`from_json` read; ``from_json(L.to_json()) == L``.

        >>> LinearLayout({"lane": [[1], [2]], "warp": [[0]]}, ["dim0"]).to_json()
        '{"bases": {"lane": [[1], [2]], "warp": [[0]]}, "out_dims": {"dim0": 4}}'
        """
        data: dict[str, Any] = {"bases": self.bases, "out_dims": self.out_dims}
        if not self.is_surjective():
            data["require_surjective"] = False
        return json.dumps(data)

    @classmethod
    def from_json(cls, data: str | Mapping[str, Any]) -> "LinearLayout":
        """The layout a JSON text (or its decoded object) describes: :meth:`to_json`'s format, where also
        ``bases`` / ``out_dims`` may be ordered lists of ``[name, value]`` pairs (Triton's unit-test JSON)
        and ``out_dims`` a list of names (sizes inferred; the layout must then be surjective).

        Requires: an object with keys ``bases`` and ``out_dims`` (and optionally ``require_surjective``,
        alias ``surjective``), no key twice in one object (JSON would keep the last silently). Raises
        LayoutError naming the rule otherwise.

        >>> LinearLayout.from_json('{"bases": [["offset", [[1], [2]]]], "out_dims": ["dim0"]}').out_dims
        {'dim0': 4}
        """
        if isinstance(data, (bytes, bytearray)):
            try:
                data = bytes(data).decode("utf-8")
            except UnicodeDecodeError as error:
                raise LayoutError(f"json: byte {error.start + 1} is not UTF-8") from None
        if isinstance(data, str):
            text = check_text(data, "json")  # length, nesting depth, integer digits: json.loads stays bounded
            try:
                data = json.loads(text, object_pairs_hook=unique_keys)
            except json.JSONDecodeError as error:
                raise LayoutError(f"json: invalid JSON at line {error.lineno} column {error.colno}: "
                                  f"{error.msg}\n{excerpt(text, error.pos)}") from None
        if not isinstance(data, Mapping):
            raise LayoutError("json: a layout is a JSON object with 'bases' and 'out_dims', "
                              f"got {type(data).__name__}")
        unknown = set(data) - {"bases", "out_dims", "require_surjective", "surjective"}
        if unknown:
            raise LayoutError(f"json: unknown JSON keys {_q(sorted(map(str, unknown)))}; expected 'bases' and "
                              "'out_dims' (and 'require_surjective')")
        if "bases" not in data or "out_dims" not in data:
            raise LayoutError("json: a layout needs both 'bases' and 'out_dims'")
        if "require_surjective" in data and "surjective" in data:
            raise LayoutError("json: give 'require_surjective' or its alias 'surjective', not both")
        surjective = data.get("require_surjective", data.get("surjective", True))
        if not isinstance(surjective, bool):
            raise LayoutError(f"json: 'require_surjective' must be true or false, got {_q(surjective)}")
        bases, out_dims = data["bases"], data["out_dims"]
        if not isinstance(bases, (Mapping, list)):
            raise LayoutError("json: 'bases' must be an object or a list of [name, bases] pairs")
        if not isinstance(out_dims, (Mapping, list)):
            raise LayoutError("json: 'out_dims' must be an object, a list of [name, size] pairs or of names")
        return cls(bases, out_dims, require_surjective=surjective)

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        return (
            f"LinearLayout({self.bases!r}, {self.out_dims!r}"
            + ("" if self.is_surjective() else ", require_surjective=False")
            + ")"
        )


# ----------------------------------------------------------------------------------------------
# division


def divide_left(a: LinearLayout, b: LinearLayout) -> LinearLayout | None:
    """C with ``b * C == a`` (C has a's dims), or None: a must be block-diagonal [[b, 0], [0, C]].

    >>> A = LinearLayout.identity_1d(8, "i", "o")
    >>> divide_left(A, LinearLayout.identity_1d(2, "i", "o")) == LinearLayout.identity_1d(4, "i", "o")
    True
    """
    return _divide(a, b, left=True)


def divide_right(a: LinearLayout, b: LinearLayout) -> LinearLayout | None:
    """C with ``C * b == a`` (C has a's dims), or None."""
    return _divide(a, b, left=False)


def _divide(a: LinearLayout, b: LinearLayout, *, left: bool) -> LinearLayout | None:
    if not isinstance(a, LinearLayout) or not isinstance(b, LinearLayout):
        raise LayoutError("divide: both arguments must be LinearLayouts")
    if any(n not in a._in_names for n in b._in_names) or any(n not in a._out_names for n in b._out_names):
        return None
    b_out = dict(zip(b._out_names, b._out_log2))
    c_log2 = []
    for n, k in zip(a._out_names, a._out_log2):
        kb = b_out.get(n, 0)
        if kb > k:
            return None
        c_log2.append(k - kb)
    a_vecs, b_vecs = a.bases, b.bases
    c_bases: list[list[list[int]]] = []
    for n in a._in_names:
        av = a_vecs[n]
        bv = b_vecs.get(n, [])
        kc = len(av) - len(bv)
        if kc < 0:
            return None
        if left:
            b_part, c_part = av[:len(bv)], av[len(bv):]
            low = {o: b_out.get(o, 0) for o in a._out_names}
        else:
            c_part, b_part = av[:kc], av[kc:]
            low = {o: (k - b_out.get(o, 0)) if o in b_out else 0 for o, k in zip(a._out_names, a._out_log2)}
        # the b part must equal b (shifted above C's bits for a right division), zero elsewhere
        for vec, bvec in zip(b_part, bv):
            for o, x in zip(a._out_names, vec):
                expect = bvec[b._out_names.index(o)] if o in b_out else 0
                if not left:
                    expect <<= low[o]
                if x != expect:
                    return None
        cvecs = []
        for vec in c_part:
            cv = []
            for o, x in zip(a._out_names, vec):
                if left:
                    if x & ((1 << low[o]) - 1):
                        return None
                    cv.append(x >> low[o])
                else:
                    kcd = c_log2[a._out_names.index(o)]
                    if x >> kcd:
                        return None
                    cv.append(x)
            cvecs.append(cv)
        c_bases.append(cvecs)
    c = LinearLayout(list(zip(a._in_names, c_bases)), list(zip(a._out_names, [1 << k for k in c_log2])), require_surjective=False)
    try:
        ok = (b * c if left else c * b) == a
    except LayoutError:
        ok = False
    return c if ok else None


def invert_and_compose_block_local(mem: LinearLayout, reg: LinearLayout) -> LinearLayout:
    """``reg.invert_and_compose(mem)``, except that block bits on which ``mem`` is broadcast (zero
    ``block`` bases) map block -> block as the identity, so each CTA keeps using its own copy.

    This is Triton's ``invertAndComposeBlockLocal`` (LayoutUtils): the conversion from registers
    to a shared layout that every CTA of a cluster holds in full.
    """
    _check_layout(mem, "invert_and_compose_block_local: mem")
    _check_layout(reg, "invert_and_compose_block_local: reg")
    cvt = reg.invert_and_compose(mem)
    if not (mem.has_in_dim("block") and reg.has_in_dim("block")):
        return cvt
    mem_block = mem.flat_bases("block")
    o = cvt._out_names.index("block")
    shift = cvt._out_shifts[o]
    d = cvt._in_names.index("block")
    block = list(cvt._in_bases[d])
    for i in range(min(len(block), len(mem_block))):
        if mem_block[i] == 0:
            block[i] |= 1 << (shift + i)
    bases = list(cvt._in_bases)
    bases[d] = tuple(block)
    return LinearLayout._make(cvt._in_names, bases, cvt._out_names, cvt._out_log2)


# ----------------------------------------------------------------------------------------------
# ColumnAction


class ColumnAction:
    """A permutation (or selection) of the bases of one in dim: new basis i = old basis action[i].

    Applied to values (e.g. registers), it reorders a list of ``2**in_size_log2`` values the same way.
    >>> ColumnAction([2, 0, 1], "register", 3).apply_values(list(range(8)))
    [0, 4, 1, 5, 2, 6, 3, 7]
    """

    __slots__ = ("action", "in_dim", "in_size_log2")

    action: tuple[int, ...]
    in_dim: str
    in_size_log2: int

    def __init__(self, action: Sequence[int], in_dim: str, in_size_log2: int) -> None:
        in_dim = _check_name(in_dim, "in_dim")
        if not _is_int(in_size_log2) or in_size_log2 < 0:
            raise LayoutError(f"in_size_log2 must be a non-negative int, got {_q(in_size_log2)}")
        if isinstance(action, _NOT_SEQUENCES) or not isinstance(action, Iterable):
            raise LayoutError(f"action must be a list of basis indices, got {_q(action)}")
        if in_size_log2 > MAX_DIM_LOG2:
            _check_dim_log2(in_size_log2, "in_size_log2")
        act = tuple(action)
        exact = _INT_ONLY.issuperset(map(type, act))  # plain ints (the usual case): range-checked at once
        if not exact or (act and not (0 <= min(act) and max(act) < in_size_log2)):
            for a in act:
                if not _is_int(a) or not 0 <= a < in_size_log2:
                    raise LayoutError(f"action entries must be basis indices in [0, {in_size_log2}), got {_q(a)}")
        if len(set(act)) != len(act):
            raise LayoutError(f"action must not repeat a basis index, got {_q(list(act))}")
        object.__setattr__(self, "action", act if exact else tuple(int(a) for a in act))
        object.__setattr__(self, "in_dim", in_dim)
        object.__setattr__(self, "in_size_log2", int(in_size_log2))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("ColumnAction is immutable")

    @staticmethod
    def identity(in_dim: str, in_size_log2: int) -> "ColumnAction":
        if not isinstance(in_size_log2, int) or isinstance(in_size_log2, bool) or in_size_log2 < 0:
            raise LayoutError(f"ColumnAction.identity: in_size_log2 must be an int >= 0, got {_q(in_size_log2)}")
        return ColumnAction(range(in_size_log2), in_dim, in_size_log2)

    @property
    def is_identity(self) -> bool:
        return self.action == tuple(range(self.in_size_log2))

    @property
    def is_permutation(self) -> bool:
        return len(self.action) == self.in_size_log2

    def apply(self, layout: LinearLayout) -> LinearLayout:
        """The layout whose bases of ``in_dim`` are ``[old[a] for a in action]``."""
        _check_layout(layout, "ColumnAction.apply: layout")
        d = layout._in_index(self.in_dim, "ColumnAction.apply: in_dim")
        old = layout._in_bases[d]
        if len(old) != self.in_size_log2:
            raise LayoutError(
                f"ColumnAction.apply: in dim {_q(self.in_dim)} has {len(old)} bases, the action expects {self.in_size_log2}"
            )
        bases = list(layout._in_bases)
        bases[d] = tuple(old[a] for a in self.action)
        return LinearLayout._make(layout._in_names, bases, layout._out_names, layout._out_log2)

    def apply_values(self, values: Sequence[Any]) -> list[Any]:
        """``[values[P(i)] for i in range(2**len(action))]`` with P(i) = XOR of 2**action[k] over bits k of i."""
        if isinstance(values, _NOT_SEQUENCES) or not hasattr(values, "__len__") or not hasattr(values, "__getitem__"):
            raise LayoutError(f"ColumnAction.apply_values: values must be a list, got {type(values).__name__}")
        if len(values) != 1 << self.in_size_log2:
            raise LayoutError(f"ColumnAction.apply_values: expected {1 << self.in_size_log2} values, got {len(values)}")
        idx = [0]
        for a in self.action:
            idx += [x | (1 << a) for x in idx]
        return [values[i] for i in idx]

    def inverse(self) -> "ColumnAction":
        """The action undoing a permutation."""
        if not self.is_permutation:
            raise LayoutError("ColumnAction.inverse: only a permutation (no dropped bases) is invertible")
        inv = [0] * self.in_size_log2
        for i, a in enumerate(self.action):
            inv[a] = i
        return ColumnAction(inv, self.in_dim, self.in_size_log2)

    def compose(self, then: "ColumnAction") -> "ColumnAction":
        """The action equal to applying ``self`` and then ``then`` (Triton's ``leftCompose``)."""
        if not isinstance(then, ColumnAction):
            raise LayoutError(f"ColumnAction.compose: then must be a ColumnAction, got {type(then).__name__}")
        if then.in_dim != self.in_dim or then.in_size_log2 != len(self.action):
            raise LayoutError("ColumnAction.compose: `then` must act on the result of self (same dim, matching size)")
        return ColumnAction([self.action[a] for a in then.action], self.in_dim, self.in_size_log2)

    def _key(self) -> tuple:
        return (self.action, self.in_dim, self.in_size_log2)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ColumnAction) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"ColumnAction({list(self.action)!r}, {self.in_dim!r}, {self.in_size_log2})"


# ----------------------------------------------------------------------------------------------
# bit helpers


def _shifts(log2s: Sequence[int]) -> list[int]:
    out, s = [], 0
    for k in log2s:
        out.append(s)
        s += k
    return out


def _pack(vec: Sequence[int], shifts: Sequence[int]) -> int:
    v = 0
    for c, s in zip(vec, shifts):
        v |= c << s
    return v


def _unpack(v: int, shifts: Sequence[int], log2s: Sequence[int]) -> list[int]:
    return [(v >> s) & ((1 << k) - 1) for s, k in zip(shifts, log2s)]


def _identity_dims(A: "LinearLayout", B: "LinearLayout") -> set[str]:
    """In dims that ``invert_and_compose`` maps as the identity (A = outer, B = self, same out order).

    Triton 3.9's rule: dim d has the same bases (coordinates; out sizes may differ) in both, and no
    basis of another in dim, of either layout, shares a set bit with d's bases in any out coordinate.
    """
    a_index = {n: i for i, n in enumerate(A._in_names)}
    # B's flats re-packed like A's (every out dim of A is at least as large, so nothing overflows; the
    # other way round a coordinate of A beyond B's size would land in B's next out dim)
    b_segs = _segments(B, dict(zip(A._out_names, A._out_shifts)))
    out = set()
    for d, b_dim in zip(B._in_names, B._in_bases):
        i = a_index.get(d)
        if i is None or len(A._in_bases[i]) != len(b_dim):
            continue
        a_dim = A._in_bases[i]
        if any(a != _move(b, b_segs) for a, b in zip(a_dim, b_dim)):
            continue
        b_mask = a_mask = 0
        for b in b_dim:
            b_mask |= b
        for a in a_dim:
            a_mask |= a
        if any(x & b_mask for n, dim in zip(B._in_names, B._in_bases) if n != d for x in dim):
            continue
        if any(x & a_mask for n, dim in zip(A._in_names, A._in_bases) if n != d for x in dim):
            continue
        out.add(d)
    return out


def _segments(lay: "LinearLayout", dst_shift: Mapping[str, int]) -> tuple[tuple[int, int, int], ...]:
    """(src_shift, mask, dst_shift) per out dim of ``lay`` that has a destination in ``dst_shift``."""
    return tuple(
        (s, (1 << k) - 1, dst_shift[n])
        for n, s, k in zip(lay._out_names, lay._out_shifts, lay._out_log2)
        if k and n in dst_shift
    )


def _move(v: int, segments: Sequence[tuple[int, int, int]]) -> int:
    """Re-pack a flattened vector: each out-dim field moves from its source to its destination shift."""
    out = 0
    for src, mask, dst in segments:
        out |= ((v >> src) & mask) << dst
    return out


def _move_bits(v: int, bit_map: Sequence[int]) -> int:
    """Send bit i of v to bit bit_map[i] (bit_map[i] < 0 drops it)."""
    out = 0
    i = 0
    while v:
        if v & 1 and bit_map[i] >= 0:
            out |= 1 << bit_map[i]
        v >>= 1
        i += 1
    return out


def _map_flat(v: int, images: Sequence[int]) -> int:
    """XOR of images[i] over the set bits i of v."""
    out = 0
    while v:
        low = v & -v
        out ^= images[low.bit_length() - 1]
        v ^= low
    return out


def _name_list(names: Any, what: str, *, ordered: bool = False) -> list[str]:
    """A list of dim names as plain ``str`` (a single name is a list of one), else LayoutError; ``ordered``:
    a set is refused (its order changes from run to run)."""
    if isinstance(names, str):
        return [str.__str__(names)]
    if isinstance(names, (bytes, Mapping)) or not isinstance(names, Iterable):
        raise LayoutError(f"{what} must be a list of dim names, got {_q(names)}")
    if ordered and isinstance(names, (set, frozenset)):
        raise LayoutError(f"{what} must be ordered (a list of dim names), got a {type(names).__name__}")
    out = list(names)
    for i, n in enumerate(out):
        if type(n) is not str:
            if not isinstance(n, str):
                raise LayoutError(f"{what} must be a list of dim names, got element {_q(n)}")
            out[i] = str.__str__(n)
    return out


def _name_set(names: Any, what: str) -> set[str]:
    return set(_name_list(names, what))


def _rebuild(in_names: Any, in_bases: Any, out_names: Any, out_log2: Any) -> LinearLayout:
    """Unpickling: the layout of these flattened fields, validated as the constructor validates (a pickle is
    input like any other: names, sizes, basis ranges), else LayoutError.

    >>> import pickle
    >>> L = LinearLayout.identity_1d(8, "i", "o")
    >>> pickle.loads(pickle.dumps(L)) == L
    True
    """
    fields = (in_names, in_bases, out_names, out_log2)
    if not all(type(f) is tuple for f in fields) or len(in_names) != len(in_bases) or len(out_names) != len(out_log2):
        raise LayoutError("unpickling a LinearLayout: expected four tuples (in names, flattened bases, out names, "
                          "out sizes log2) of matching lengths")
    in_names = tuple(_check_name(n, "in-dim name") for n in in_names)
    out_names = tuple(_check_name(n, "out-dim name") for n in out_names)
    _unique(in_names, "in dims")
    _unique(out_names, "out dims")
    for name, k in zip(out_names, out_log2):
        if type(k) is not int or k < 0:
            raise LayoutError(f"unpickling a LinearLayout: size of out dim {_q(name)} must be a log2 (an int >= 0), "
                              f"got {_q(k)}")
        _check_dim_log2(k, f"out dim {_q(name)}")
    limit = 1 << sum(out_log2)
    for name, dim in zip(in_names, in_bases):
        if type(dim) is not tuple or len(dim) > MAX_DIM_LOG2:
            _check_dim_log2(len(dim) if type(dim) is tuple else MAX_DIM_LOG2 + 1, f"in dim {_q(name)}")
        for b in dim:
            if type(b) is not int or not 0 <= b < limit:
                raise LayoutError(f"unpickling a LinearLayout: a basis of in dim {_q(name)} is {_q(b)}, not an int "
                                  f"in [0, 2**{sum(out_log2)})")
    return LinearLayout._make(in_names, in_bases, out_names, out_log2)


def _constructed(layout: LinearLayout) -> bool:
    """Whether ``layout``'s fields are set (its ``__init__`` ran)."""
    try:
        layout._in_names  # noqa: B018 - a slot never set raises AttributeError
    except AttributeError:
        return False
    return True


def _read_only_caches(cls: type) -> dict[str, Any]:
    """Make the slots ``cls`` fills after construction (the caches of rank, hash and byte tables) read-only
    properties, so no ``object.__setattr__`` outside this module can write them; returns every slot's member
    descriptor by name (the only way left to write them, and what the compiled core reads its offsets from)."""
    members = {name: cls.__dict__[name] for name in cls.__slots__}
    for name in ("_rank", "_hash", "_tables"):
        setattr(cls, name, property(members[name].__get__, doc=f"(cache, read-only) {name[1:]}"))
    return members


#: LinearLayout's slots by name (member descriptors); the caches below are written through these only.
_SLOTS = _read_only_caches(LinearLayout)
_SET_RANK, _SET_HASH, _SET_TABLES = (_SLOTS[n].__set__ for n in ("_rank", "_hash", "_tables"))


def _use_backend(ext: Any) -> None:
    """Make ``ext`` (the compiled core, or None for pure Python) the backend of this module.

    The compiled core also takes over ``LinearLayout``'s ``==`` and ``hash`` (same results as
    ``__eq__`` / ``__hash__`` above, which stay the reference and come back with ``ext=None``).
    """
    global _C
    if _C is not None and _C is not ext:
        _C.unregister()
    if ext is not None:
        ext.register(LinearLayout, _SLOTS)
    _C = ext


_ccore.on_switch(_use_backend)
