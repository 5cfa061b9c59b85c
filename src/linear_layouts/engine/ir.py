"""A small SSA tile IR: a program is a list of ops over immutable tensor values (paper §4.4).

Every value is a tile of a power-of-two ``shape`` and a ``dtype``; pointer tensors have dtype
``"ptr"`` and remember the kernel argument, element dtype and strides they address. Ops follow
Triton's ``tt`` dialect (load, store, make_range, splat, dot, reduce, trans, reshape, join, split,
expand_dims, broadcast, gather, convert_layout) plus ``elementwise`` (unary, binary, cast).

>>> b = Builder(num_warps=4)
>>> p = b.pointer("x", [16, 32], "fp16")
>>> y = b.load(p)
>>> b.store(b.pointer("y", [32, 16], "fp16"), b.trans(y, [1, 0]))
>>> print(b.build().to_text().splitlines()[2])
  %1 = load %0 : tensor<16x32xfp16>
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from linear_layouts.core.element_type import bitwidth
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote
from linear_layouts.core.layout import LinearLayout

__all__ = ["Value", "Op", "Program", "Builder", "ELEMENTWISE_FUNCTIONS", "SHAPE_OPS", "element_bits"]

#: Unary / binary elementwise functions the builder knows (their NumPy meaning is in ``engine.gluon``).
#: ``map1`` .. ``map3`` and ``scan`` stand for the functions of an imported kernel (``kernels.ttir_import``:
#: exp, sqrt, a prefix scan along an axis, ...): they keep their operand's layout, and the engine lays
#: them out like any elementwise op but does not evaluate or emit them.
ELEMENTWISE_FUNCTIONS = {
    "neg": 1, "exp2": 1, "abs": 1, "fp4_to_fp": 1, "e8m0_to_fp": 1,
    "add": 2, "sub": 2, "mul": 2, "div": 2, "max": 2, "min": 2, "and": 2, "shr": 2, "where": 3,
    "map1": 1, "map2": 2, "map3": 3, "scan": 1,
}
#: Ops that only rename the logical tensor: no-ops under the transfer functions (Thm 9.3).
SHAPE_OPS = ("trans", "reshape", "join", "split", "expand_dims", "broadcast")


def element_bits(dtype: str) -> int:
    """Bits a register element of ``dtype`` occupies: pointers (``"ptr"``) as 64, others as
    :func:`linear_layouts.core.element_type.bitwidth` (``i1`` is stored in 8 bits)."""
    if dtype == "ptr":
        return 64
    return bitwidth(dtype)


def _is_pow2(n: int) -> bool:
    return isinstance(n, int) and not isinstance(n, bool) and n > 0 and n & (n - 1) == 0


def _check_shape(shape: Any, name: str = "shape") -> tuple[int, ...]:
    if isinstance(shape, (str, bytes)) or not isinstance(shape, Sequence) or not shape:
        raise LayoutError(f"{name} must be a non-empty list of powers of two, got {quote(shape)}")
    if not all(_is_pow2(s) for s in shape):
        raise LayoutError(f"{name} must be a list of powers of two, got {list(shape)}")
    return tuple(int(s) for s in shape)


@dataclass(frozen=True)
class Value:
    """An SSA value ``%id``: a tile of ``shape`` and ``dtype`` (``"ptr"`` for pointer tensors)."""

    id: int
    shape: tuple[int, ...]
    dtype: str

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        """Elements of the tile: the product of ``shape``."""
        return math.prod(self.shape)

    def type_str(self) -> str:
        return f"tensor<{'x'.join(map(str, self.shape))}x{self.dtype}>"


@dataclass(frozen=True)
class Op:
    """One operation: ``kind``, operand and result value ids, and attributes (a sorted tuple of pairs)."""

    kind: str
    operands: tuple[int, ...]
    results: tuple[int, ...]
    attrs: tuple[tuple[str, Any], ...] = ()

    def attr(self, name: str, default: Any = None) -> Any:
        for key, value in self.attrs:
            if key == name:
                return value
        return default


@dataclass(frozen=True)
class Program:
    """A tile program: ``ops`` in order over ``values`` (id -> Value), for one CTA of ``num_warps`` warps
    of ``threads_per_warp`` lanes (``num_ctas`` CTAs per cluster); ``args``: the kernel's pointer
    arguments as (name, element dtype)."""

    ops: tuple[Op, ...]
    values: Mapping[int, Value]
    num_warps: int = 4
    threads_per_warp: int = 32
    num_ctas: int = 1
    args: tuple[tuple[str, str], ...] = ()

    def value(self, vid: int) -> Value:
        return self.values[vid]

    def users(self, vid: int) -> list[tuple[int, int]]:
        """(op index, operand position) of every use of ``%vid``."""
        return [(i, k) for i, op in enumerate(self.ops) for k, o in enumerate(op.operands) if o == vid]

    def definer(self, vid: int) -> int | None:
        """Index of the op that defines ``%vid``."""
        for i, op in enumerate(self.ops):
            if vid in op.results:
                return i
        return None

    def to_text(self, layouts: Mapping[int, LinearLayout] | None = None,
                describe: Callable[[LinearLayout], str] | None = None) -> str:
        """The program as text, one op a line; with ``layouts``, each result's layout after ``#``."""
        lines = [f"program(num_warps={self.num_warps}, threads_per_warp={self.threads_per_warp}, "
                 f"num_ctas={self.num_ctas}) {{"]
        for op in self.ops:
            lhs = ", ".join(f"%{r}" for r in op.results)
            rhs = op.kind + (" " + ", ".join(f"%{o}" for o in op.operands) if op.operands else "")
            attrs = {k: v for k, v in op.attrs if k != "target" and not (k == "layout" and layouts is not None)}
            if attrs:
                rhs += " {" + ", ".join(f"{k}={_fmt(v)}" for k, v in attrs.items()) + "}"
            types = ", ".join(self.values[r].type_str() for r in op.results)
            line = f"  {lhs} = {rhs} : {types}" if op.results else f"  {rhs}"
            if layouts is not None and op.results:
                lay = [layouts.get(r) for r in op.results]
                line += "  # " + "; ".join((describe(x) if describe else _short(x)) if x else "?" for x in lay)
            lines.append(line)
        lines.append("}")
        return "\n".join(lines)


def _fmt(v: Any) -> str:
    if isinstance(v, tuple):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    return repr(v) if isinstance(v, str) else str(v)


def _short(layout: LinearLayout) -> str:
    return " ".join(f"{d}={layout.bases[d]}" for d in layout.in_dim_names if layout.bases[d])


@dataclass
class Builder:
    """Builds a :class:`Program` op by op; every method returns the new value id(s).

    Shapes must be powers of two; operand shapes and dtypes are checked as Triton's verifiers do.
    """

    num_warps: int = 4
    threads_per_warp: int = 32
    num_ctas: int = 1
    _ops: list[Op] = field(default_factory=list)
    _values: dict[int, Value] = field(default_factory=dict)
    _args: dict[str, str] = field(default_factory=dict)
    _pointer_ops: dict[int, Op] = field(default_factory=dict)  # each pointer tensor's op (``_element``)

    def __post_init__(self) -> None:
        for name in ("num_warps", "threads_per_warp", "num_ctas"):
            if not _is_pow2(getattr(self, name)):
                raise LayoutError(f"{name} must be a power of two, got {quote(getattr(self, name))}")

    # -- plumbing -----------------------------------------------------------------------------
    def _new(self, shape: Sequence[int], dtype: str) -> int:
        vid = len(self._values)
        self._values[vid] = Value(vid, tuple(shape), dtype)
        return vid

    def _get(self, vid: Any, name: str) -> Value:
        if not isinstance(vid, int) or vid not in self._values:
            raise LayoutError(f"{name} must be a value id of this program, got {quote(vid)}")
        return self._values[vid]

    def _emit(self, kind: str, operands: Sequence[int], results: Sequence[int], **attrs: Any) -> None:
        self._ops.append(Op(kind, tuple(operands), tuple(results), tuple(sorted(attrs.items()))))

    def _one(self, kind: str, operands: Sequence[int], shape: Sequence[int], dtype: str, **attrs: Any) -> int:
        r = self._new(shape, dtype)
        self._emit(kind, operands, [r], **attrs)
        return r

    def build(self) -> Program:
        return Program(tuple(self._ops), dict(self._values), self.num_warps, self.threads_per_warp,
                       self.num_ctas, tuple(self._args.items()))

    # -- memory -------------------------------------------------------------------------------
    def pointer(self, arg: str, shape: Sequence[int], dtype: str, strides: Sequence[int] | None = None, *,
                align: int | None = None) -> int:
        """``arg + offsets``: a pointer tensor over a ``shape`` tile of ``dtype`` (row-major by default);
        ``align``: the bytes (a power of two) every contiguous run of addresses starts at a multiple of
        (Triton's pointer divisibility; default 16, as Triton specializes arguments)."""
        shape = _check_shape(shape)
        element_bits(dtype)
        if not isinstance(arg, str) or not arg.isidentifier():
            raise LayoutError(f"arg must be an identifier, got {quote(arg)}")
        if self._args.get(arg, dtype) != dtype:
            raise LayoutError(f"arg {quote(arg)} is already a pointer to {self._args[arg]}, got {dtype}")
        if strides is None:
            strides = [1] * len(shape)
            for d in range(len(shape) - 2, -1, -1):
                strides[d] = strides[d + 1] * shape[d + 1]
        strides = tuple(int(s) for s in strides)
        if len(strides) != len(shape) or any(s < 0 for s in strides):
            raise LayoutError(f"strides must be {len(shape)} non-negative ints, got {list(strides)}")
        self._args[arg] = dtype
        if align is None:
            vid = self._one("pointer", [], shape, "ptr", arg=arg, element=dtype, strides=strides)
        else:
            if not _is_pow2(align):
                raise LayoutError(f"align must be a power of two (bytes), got {quote(align)}")
            vid = self._one("pointer", [], shape, "ptr", arg=arg, element=dtype, strides=strides, align=int(align))
        self._pointer_ops[vid] = self._ops[-1]
        return vid

    def load(self, ptr: int, mask: int | None = None) -> int:
        """``tt.load``: the tile the pointer tensor addresses (masked lanes read 0)."""
        p = self._get(ptr, "ptr")
        if p.dtype != "ptr":
            raise LayoutError(f"ptr must be a pointer tensor, got {p.type_str()}")
        ops = [ptr]
        if mask is not None:
            m = self._get(mask, "mask")
            if m.shape != p.shape or m.dtype != "i1":
                raise LayoutError(f"mask must be tensor<{'x'.join(map(str, p.shape))}xi1>, got {m.type_str()}")
            ops.append(mask)
        return self._one("load", ops, p.shape, self._element(ptr))

    def store(self, ptr: int, value: int, mask: int | None = None) -> None:
        """``tt.store``: write ``value`` where the pointer tensor points."""
        p, v = self._get(ptr, "ptr"), self._get(value, "value")
        if p.dtype != "ptr" or p.shape != v.shape:
            raise LayoutError(f"ptr must be a pointer tensor of shape {list(v.shape)}, got {p.type_str()}")
        if self._element(ptr) != v.dtype:
            raise LayoutError(f"value dtype must be the pointer's element dtype {self._element(ptr)}, got {v.dtype}")
        ops = [ptr, value]
        if mask is not None:
            m = self._get(mask, "mask")
            if m.shape != p.shape or m.dtype != "i1":
                raise LayoutError(f"mask must be an i1 tensor of shape {list(p.shape)}, got {m.type_str()}")
            ops.append(mask)
        self._emit("store", ops, [])

    def _element(self, ptr: int) -> str:
        op = self._pointer_ops.get(ptr)
        if op is None:
            op = next(o for o in self._ops if ptr in o.results)
        return op.attr("element")

    # -- creation -----------------------------------------------------------------------------
    def arange(self, n: int) -> int:
        """``tt.make_range``: ``[0, n)`` as a 1-D i32 tile."""
        _check_shape([n], "n")
        return self._one("arange", [], [n], "i32", n=n)

    def full(self, shape: Sequence[int], value: float, dtype: str) -> int:
        """``tt.splat`` of a constant."""
        shape = _check_shape(shape)
        element_bits(dtype)
        return self._one("full", [], shape, dtype, value=value)

    # -- elementwise ---------------------------------------------------------------------------
    def elementwise(self, fn: str, *operands: int, dtype: str | None = None) -> int:
        """``fn`` applied element by element; all operands share one shape (broadcast first)."""
        if fn not in ELEMENTWISE_FUNCTIONS or ELEMENTWISE_FUNCTIONS[fn] != len(operands):
            raise LayoutError(f"fn must be one of {sorted(ELEMENTWISE_FUNCTIONS)} with its arity, got {quote(fn)}"
                              f" with {len(operands)} operands")
        vals = [self._get(o, f"operand {i}") for i, o in enumerate(operands)]
        if any(v.shape != vals[0].shape for v in vals):
            raise LayoutError(f"operands of {fn} must have one shape, got {[list(v.shape) for v in vals]}")
        out = dtype or vals[-1].dtype
        return self._one("elementwise", operands, vals[0].shape, out, fn=fn)

    def cast(self, x: int, dtype: str) -> int:
        """Convert each element to ``dtype`` (mixed precision: the layout stays, the bitwidth changes)."""
        v = self._get(x, "x")
        element_bits(dtype)
        return self._one("cast", [x], v.shape, dtype, src_dtype=v.dtype)

    def compare(self, fn: str, a: int, b: int) -> int:
        """``a < b`` / ``a == b`` ...: an i1 tile (``fn`` in lt, le, eq)."""
        if fn not in ("lt", "le", "eq"):
            raise LayoutError(f"fn must be lt, le or eq, got {quote(fn)}")
        va, vb = self._get(a, "a"), self._get(b, "b")
        if va.shape != vb.shape:
            raise LayoutError(f"a and b must have one shape, got {list(va.shape)} and {list(vb.shape)}")
        return self._one("elementwise", [a, b], va.shape, "i1", fn=fn)

    # -- compute ------------------------------------------------------------------------------
    def dot(self, a: int, b: int, acc: int | None = None, *, out_dtype: str = "fp32", mma_version: int = 2) -> int:
        """``tt.dot``: ``a [M, K] @ b [K, N] (+ acc)``; ``mma_version`` 2 (mma.sync) or 3 (wgmma)."""
        va, vb = self._get(a, "a"), self._get(b, "b")
        if va.rank != 2 or vb.rank != 2 or va.shape[1] != vb.shape[0]:
            raise LayoutError(f"a and b must be [M, K] and [K, N], got {list(va.shape)} and {list(vb.shape)}")
        if mma_version not in (2, 3):
            raise LayoutError(f"mma_version must be 2 or 3, got {quote(mma_version)}")
        shape = (va.shape[0], vb.shape[1])
        if shape[0] < 16 or shape[1] < 8 or va.shape[1] < 16:
            raise LayoutError(f"a, b: dot needs M >= 16, N >= 8, K >= 16, got M, N, K = {shape[0]}, {shape[1]}, {va.shape[1]}")
        ops = [a, b]
        if acc is not None:
            vc = self._get(acc, "acc")
            if vc.shape != shape or vc.dtype != out_dtype:
                raise LayoutError(f"acc must be tensor<{shape[0]}x{shape[1]}x{out_dtype}>, got {vc.type_str()}")
            ops.append(acc)
        return self._one("dot", ops, shape, out_dtype, mma_version=mma_version)

    def reduce(self, x: int, axis: int, combine: str = "add") -> int:
        """``tt.reduce`` along ``axis`` with ``combine`` (add, max, min)."""
        v = self._get(x, "x")
        if combine not in ("add", "max", "min"):
            raise LayoutError(f"combine must be add, max or min, got {quote(combine)}")
        if not isinstance(axis, int) or not 0 <= axis < v.rank or v.rank < 2:
            raise LayoutError(f"axis must be in [0, {v.rank}) and the rank >= 2, got {quote(axis)}")
        return self._one("reduce", [x], v.shape[:axis] + v.shape[axis + 1:], v.dtype, axis=axis, combine=combine)

    def gather(self, src: int, index: int, axis: int) -> int:
        """``tt.gather``: ``out[i] = src[i with i[axis] = index[i]]``."""
        vs, vi = self._get(src, "src"), self._get(index, "index")
        if vs.rank != vi.rank or not 0 <= axis < vs.rank or vi.dtype != "i32":
            raise LayoutError(f"index must be an i32 tile of src's rank and axis in range, got {vi.type_str()}, axis={axis}")
        if any(vs.shape[d] != vi.shape[d] for d in range(vs.rank) if d != axis):
            raise LayoutError(f"src and index must agree off axis {axis}, got {list(vs.shape)} and {list(vi.shape)}")
        return self._one("gather", [src, index], vi.shape, vs.dtype, axis=axis)

    # -- shape ops ----------------------------------------------------------------------------
    def trans(self, x: int, perm: Sequence[int]) -> int:
        """``tt.trans``: ``out[i_perm[0], ..] = x[i_0, ..]``, i.e. out dim ``k`` is x dim ``perm[k]``."""
        v = self._get(x, "x")
        perm = tuple(perm)
        if sorted(perm) != list(range(v.rank)):
            raise LayoutError(f"perm must be a permutation of range({v.rank}), got {list(perm)}")
        return self._one("trans", [x], [v.shape[p] for p in perm], v.dtype, perm=perm)

    def reshape(self, x: int, shape: Sequence[int]) -> int:
        """``tt.reshape`` (row-major element order kept)."""
        v = self._get(x, "x")
        shape = _check_shape(shape)
        if math.prod(shape) != v.numel:
            raise LayoutError(f"shape must have {v.numel} elements like x, got {list(shape)}")
        return self._one("reshape", [x], shape, v.dtype)

    def join(self, a: int, b: int) -> int:
        """``tt.join``: stack along a new minor dim of size 2."""
        va, vb = self._get(a, "a"), self._get(b, "b")
        if va.shape != vb.shape or va.dtype != vb.dtype:
            raise LayoutError(f"a and b must have one type, got {va.type_str()} and {vb.type_str()}")
        return self._one("join", [a, b], va.shape + (2,), va.dtype)

    def split(self, x: int) -> tuple[int, int]:
        """``tt.split``: the two halves of the minor dim (which must be 2)."""
        v = self._get(x, "x")
        if v.shape[-1] != 2:
            raise LayoutError(f"x's last dim must be 2, got {list(v.shape)}")
        r0, r1 = self._new(v.shape[:-1], v.dtype), self._new(v.shape[:-1], v.dtype)
        self._emit("split", [x], [r0, r1])
        return r0, r1

    def expand_dims(self, x: int, axis: int) -> int:
        """``tt.expand_dims``: insert a dim of size 1 at ``axis``."""
        v = self._get(x, "x")
        if not isinstance(axis, int) or not 0 <= axis <= v.rank:
            raise LayoutError(f"axis must be in [0, {v.rank}], got {quote(axis)}")
        return self._one("expand_dims", [x], v.shape[:axis] + (1,) + v.shape[axis:], v.dtype, axis=axis)

    def broadcast(self, x: int, shape: Sequence[int]) -> int:
        """``tt.broadcast``: dims of size 1 grow to ``shape``."""
        v = self._get(x, "x")
        shape = _check_shape(shape)
        if len(shape) != v.rank or any(a != b and a != 1 for a, b in zip(v.shape, shape)):
            raise LayoutError(f"shape must grow only dims of size 1 of {list(v.shape)}, got {list(shape)}")
        return self._one("broadcast", [x], shape, v.dtype)

    def convert_layout(self, x: int, layout: Any) -> int:
        """``ttg.convert_layout`` to a catalog descriptor (or a LinearLayout) chosen by the user."""
        v = self._get(x, "x")
        if not isinstance(layout, LinearLayout) and not hasattr(layout, "to_linear"):
            raise LayoutError(f"layout must be a catalog distributed layout or a LinearLayout, got {type(layout).__name__}")
        ll = layout if isinstance(layout, LinearLayout) else layout.to_linear(list(v.shape))
        return self._one("convert_layout", [x], v.shape, v.dtype, layout=layout, target=ll)
