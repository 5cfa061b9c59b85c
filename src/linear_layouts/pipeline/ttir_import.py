"""A kernel's TTIR (layout-free, the output of Triton's TTIR passes) imported into the layout engine's
tile IR (``engine.ir``), so our engine can choose every layout of the same kernel and be compared with
Triton's choice.

What maps to what:

==================================================  ===================================================
TTIR                                                engine op
==================================================  ===================================================
``tt.load`` / ``tt.store`` / tensor atomics         ``load`` / ``store`` through a ``pointer`` whose
(``splat`` of an argument + ``addptr`` offsets)     strides are the offsets' affine coefficients
integer index math (make_range, splat, arith on     folded into the pointers; where used as data, a
it, masks)                                          free ``full`` (recomputable in any layout)
``arith`` / ``math`` on data, ``select``            ``elementwise`` (add, mul, ...; others ``map1``..``map3``)
``tt.dot`` (2-D)                                    ``dot`` (wgmma on sm_90+ when M >= 64, else mma.sync)
``tt.dot_scaled`` (2-D)                             ``dot`` of the operands cast to bf16 (scales: Triton's)
``tt.reduce`` (each operand)                        ``reduce`` (add / max / min by the combiner); the
                                                    operands after the first tied to its layout by an
                                                    ``elementwise`` op (Triton's takes them in one)
``tt.trans``, ``reshape``, ``join``, ``split``,     the same shape ops
``expand_dims``, ``broadcast``, ``tt.gather``
``scf.for`` / ``scf.if``                            one iteration / the ``then`` branch, inlined
==================================================  ===================================================

A gather's offsets (index math on loaded data) keep their affine coefficients along the dims the data
is the same along (broadcast) and get ``UNKNOWN_STRIDE`` where it varies: no layout can promise those
addresses coalesced. ``tt.scan`` becomes an elementwise ``scan`` (it keeps its operand's layout). Everything else
(``tt.histogram``, 3-D dots, descriptor loads, ...)
is listed in ``ImportedProgram.unmodeled``; its results enter the program as free placeholders, so
the engine may lay them out at no cost (stated, never silent).

>>> from linear_layouts.triton_model.ir_text import parse_module
>>> m = parse_module('''module {
...   tt.func public @k(%x: !tt.ptr<f32>, %y: !tt.ptr<f32>) {
...     %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
...     %p = tt.splat %x : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
...     %q = tt.addptr %p, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
...     %v = tt.load %q : tensor<64x!tt.ptr<f32>>
...     %e = math.exp %v : tensor<64xf32>
...     %s = tt.splat %y : !tt.ptr<f32> -> tensor<64x!tt.ptr<f32>>
...     %t = tt.addptr %s, %r : tensor<64x!tt.ptr<f32>>, tensor<64xi32>
...     tt.store %t, %e : tensor<64x!tt.ptr<f32>>
...     tt.return
...   }
... }''')
>>> imported = import_ttir(m)
>>> [op.kind for op in imported.program.ops], imported.unmodeled
(['pointer', 'load', 'elementwise', 'pointer', 'store'], ())
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from linear_layouts.core.arguments import checked
from linear_layouts.engine.ir import Builder, Program
from linear_layouts.core.errors import LayoutError
from linear_layouts.triton_model.ir_text import Module, Op, Region, check_well_formed, iter_args, loop_bounds
from linear_layouts.triton_model.ir_types import TensorType, parse_type
from linear_layouts.core.limits import parse_int
from linear_layouts.core.mlir_text import DIGITS, I32_ARRAY, INTEGER_TYPE, VALUE_USE, pointee, read_ints
from linear_layouts.target import WGMMA, Target, named_target, target_for_module

__all__ = ["ImportedProgram", "import_ttir", "UNKNOWN_STRIDE"]

#: stride given to a dim whose stride is a run-time value (not 1, which Triton specializes to a constant)
UNKNOWN_STRIDE = 1 << 20
#: divisibility of zero (divisible by any power of two)
_BIG = 1 << 30


def _pow2(value: int) -> int:
    """The largest power of two dividing ``value`` (``_BIG`` for 0)."""
    value = abs(int(value))
    return _BIG if value == 0 else min(value & -value, _BIG)

_BINARY_FN = {
    "arith.addf": "add", "arith.addi": "add", "arith.subf": "sub", "arith.subi": "sub",
    "arith.mulf": "mul", "arith.muli": "mul", "arith.divf": "div", "arith.divsi": "div", "arith.divui": "div",
    "arith.maxnumf": "max", "arith.maximumf": "max", "arith.maxsi": "max", "arith.maxui": "max",
    "arith.minnumf": "min", "arith.minimumf": "min", "arith.minsi": "min", "arith.minui": "min",
    "arith.andi": "and", "arith.shrsi": "shr", "arith.shrui": "shr",
}
_UNARY_FN = {"math.exp2": "exp2", "arith.negf": "neg", "math.absf": "abs", "math.absi": "abs"}
_CASTS = ("arith.extf", "arith.truncf", "arith.sitofp", "arith.uitofp", "arith.fptosi", "arith.fptoui",
          "arith.extsi", "arith.extui", "arith.trunci", "tt.bitcast", "tt.fp_to_fp", "arith.bitcast",
          "tt.int_to_ptr", "tt.ptr_to_int")
#: Triton ops that act element by element
_ELEMENTWISE_TT = ("tt.mulhiui", "tt.precise_sqrt", "tt.precise_divf", "tt.clampf", "tt.extern_elementwise",
                   "tt.elementwise_inline_asm", "tt.fp_to_fp")
_SHAPE = ("tt.trans", "tt.reshape", "tt.join", "tt.split", "tt.expand_dims", "tt.broadcast")
_IGNORED = ("tt.return", "scf.yield", "tt.assert", "tt.print", "gpu.barrier", "tt.reduce.return", "tt.scan.return",
            "scf.condition")


@dataclass(frozen=True)
class _Affine:
    """An integer index tensor as an affine function of the element indices: ``coeffs[d]`` is the step
    per unit of dim ``d`` (an int, or None for a run-time value); ``data``: it depends on loaded data;
    ``div``: a power of two dividing its constant term, ``cdivs[d]`` one dividing ``coeffs[d]`` (known
    where the value is not: a ``tt.divisibility = 16`` stride), as Triton's AxisInfo tracks them."""

    shape: tuple[int, ...]
    coeffs: tuple[int | None, ...]
    data: bool = False
    div: int = _BIG
    cdivs: tuple[int, ...] | None = None

    def coeff_divs(self) -> tuple[int, ...]:
        if self.cdivs is not None and len(self.cdivs) == len(self.coeffs):
            return self.cdivs
        return tuple(1 if c is None else _pow2(c) for c in self.coeffs)

    def expanded(self, axis: int) -> "_Affine":
        """The form after ``tt.expand_dims`` at ``axis``: a new dim of size 1 and coefficient 0."""
        coeffs, cdivs, shape = list(self.coeffs), list(self.coeff_divs()), list(self.shape)
        coeffs.insert(axis, 0)
        cdivs.insert(axis, _BIG)
        shape.insert(axis, 1)
        return _Affine(tuple(shape), tuple(coeffs), self.data, self.div, tuple(cdivs))

    def alignment(self) -> int:
        """Elements every contiguous run (along the dim of coefficient 1) starts at a multiple of."""
        divs = self.coeff_divs()
        return min([self.div] + [d for c, d in zip(self.coeffs, divs) if c != 1])


@dataclass(frozen=True)
class ImportedProgram:
    """The engine program of a TTIR function, and what it left out: ``unmodeled`` (op, location,
    reason) for ops replaced by free placeholders or dropped, ``notes`` for approximations."""

    program: Program
    unmodeled: tuple[tuple[str, str, str], ...]
    notes: tuple[str, ...]
    loops: int
    #: TTIR SSA name -> the engine value holding it (data values; index math is folded into pointers)
    names: Mapping[str, int] = field(default_factory=dict)
    #: the TTIR ops behind the engine program's ``store`` ops, in the same order (atomics included)
    stores: tuple[Op, ...] = ()
    #: TTIR values whose layout Triton's own lowering fixes (a ``tt.dot_scaled`` operand, which Triton
    #: upcasts with its scales in layouts of its choice): a rewrite keeps Triton's layouts for them
    keep: tuple[str, ...] = ()


def _elem(t: TensorType) -> str:
    return t.element_type if _pointee(t.element_type) is None else "ptr"


@functools.lru_cache(maxsize=1024)
def _pointee(text: str) -> str | None:
    """``mlir_text.pointee``, cached (the importer asks it of every value's element type)."""
    return pointee(text)


class _Importer:
    def __init__(self, module: Module, target: Target, scalars: dict[str, int], num_warps: int | None = None):
        self.module = module
        self.target = target
        self.scalars = scalars
        self.num_warps = num_warps or module.num_warps
        self.splat_values: dict[str, int] = {}  # integer constants and splats of known scalars (import_ttir)
        self.b = Builder(num_warps=self.num_warps, threads_per_warp=module.threads_per_warp, num_ctas=module.num_ctas)
        self.values: dict[str, int] = {}        # TTIR name -> engine value id
        self.affine: dict[str, _Affine] = {}    # integer index tensors
        self.gathered: dict[str, _Affine] = {}  # integer data tensors: where the data varies (None coefficients)
        self.pointers: dict[str, tuple[str, str, _Affine | None]] = {}  # ptr tensor -> (arg, element, offsets)
        self.scalar_ptr: dict[str, tuple[str, str]] = {}  # scalar pointer -> (arg, element)
        self.sdiv: dict[str, int] = {}          # integer scalar -> a power of two dividing it
        self.palign: dict[str, int] = {}        # pointer (scalar or tensor) -> bytes its base is aligned to
        self.types: dict[str, TensorType] = {}
        self.unmodeled: list[tuple[str, str, str]] = []
        self.stores: list[Op] = []
        self.keep: set[str] = set()
        self.notes: set[str] = set()
        self.loops = 0
        self._parsed: dict[str, TensorType] = {}  # typ's answers

    # -- helpers ---------------------------------------------------------------------------------
    def typ(self, text: str) -> TensorType:
        """``parse_type`` of ``text`` in this module, once per spelling (a kernel repeats a few types)."""
        found = self._parsed.get(text)
        if found is None:
            found = self._parsed[text] = parse_type(text, self.module)
        return found

    def missing(self, op: Op, reason: str) -> None:
        self.unmodeled.append((op.name, str(op.loc), reason))
        for r, text in zip(op.results, op.result_types or ()):
            t = self.typ(text)
            if t.kind == "tensor" and t.shape and _pointee(t.element_type) is None:
                self.values[r] = self.b.full(list(t.shape), 0, _elem(t))

    def data(self, name: str, like: TensorType | None = None) -> int:
        """The engine value of a TTIR tensor (index math becomes a free ``full``)."""
        if name in self.values:
            return self.values[name]
        if name in self.affine:
            a = self.affine[name]
            t = self.types.get(name)
            dtype = _elem(t) if t is not None else "i32"
            vid = self.b.full(list(a.shape), 0, dtype)
            self.values[name] = vid
            return vid
        if like is not None and like.kind == "tensor":
            vid = self.b.full(list(like.shape), 0, _elem(like))
            self.values[name] = vid
            return vid
        raise LayoutError(f"ttir import: no value for {name}")

    def is_data(self, name: str) -> bool:
        return name in self.values or (name in self.affine and self.affine[name].data)

    def scalar(self, name: str) -> int | None:
        return self.scalars.get(name)

    # -- walking ---------------------------------------------------------------------------------
    def region(self, region: Region, bindings: dict[str, str] | None = None) -> list[str]:
        yielded: list[str] = []
        for op in region.ops:
            if op.name == "scf.yield":
                yielded = list(op.operands)
                continue
            self.op(op)
        return yielded

    def op(self, op: Op) -> None:
        name = op.name
        for r, text in zip(op.results, op.result_types):
            self.types[r] = self.typ(text)
        if name in ("arith.cmpi", "arith.cmpf") and op.results:  # the printed type is the operands'
            t = self.types[op.results[0]]
            self.types[op.results[0]] = dataclasses.replace(t, element_type="i1")
        elif name == "arith.select" and op.results and op.operand_types:
            self.types[op.results[0]] = self.typ(op.operand_types[-1])
        tensor_result = bool(op.results) and bool(op.result_types) and self.types[op.results[0]].kind == "tensor"
        if name in _IGNORED:
            return
        if name == "scf.for":
            self.loop(op)
            return
        if name == "scf.if":
            self.branch(op)
            return
        if name == "scf.while":
            self.unmodeled.append((name, str(op.loc), "scf.while: its body is not imported"))
            return
        if not tensor_result and name not in ("tt.store", "tt.atomic_rmw", "tt.atomic_cas", "tt.load"):
            if name == "tt.splat" or name == "tt.addptr":
                self.scalar_pointer(op)
            self.scalar_divisibility(op)
            return  # scalar code: no layouts
        handler = getattr(self, "op_" + name.replace(".", "_"), None)
        if handler is not None:
            handler(op)
        elif name in _CASTS:
            self.cast(op)
        elif name in _SHAPE:
            self.shape_op(op)
        elif name in _BINARY_FN or name in _UNARY_FN or name in ("arith.cmpi", "arith.cmpf", "arith.select") \
                or name.startswith(("math.", "arith.")) or name in _ELEMENTWISE_TT:
            self.elementwise(op)
        else:
            self.missing(op, "not modeled by the engine")

    def loop(self, op: Op) -> None:
        """One iteration: iter_args bound to their initial values; the loop's results are the yields."""
        self.loops += 1
        bounds = loop_bounds(op.text)  # the induction variable: lower + i * step (Triton's AxisInfo: gcd of the two)
        self.sdiv[bounds.induction] = min(self.div_of(bounds.lower), self.div_of(bounds.step))
        for arg, init in iter_args(op.text):
            self.alias(arg, init)
        yielded = self.region(op.regions[0])
        for result, y in zip(op.results, yielded):
            self.alias(result, y)

    def branch(self, op: Op) -> None:
        if len(op.regions) > 1 and op.results:
            self.notes.add("scf.if with results: the then-branch is imported")
        yielded = self.region(op.regions[0]) if op.regions else []
        for result, y in zip(op.results, yielded):
            self.alias(result, y)

    def alias(self, new: str, old: str) -> None:
        for table in (self.values, self.affine, self.pointers, self.scalar_ptr, self.types, self.sdiv, self.palign):
            if old in table:
                table[new] = table[old]  # type: ignore[index]

    # -- scalar pointers ---------------------------------------------------------------------------
    def scalar_pointer(self, op: Op) -> None:
        if op.name == "tt.addptr" and op.operands[0] in self.scalar_ptr:
            self.scalar_ptr[op.results[0]] = self.scalar_ptr[op.operands[0]]
            element = self.scalar_ptr[op.operands[0]][1]
            self.palign[op.results[0]] = min(self.palign.get(op.operands[0], 1),
                                             self.div_of(op.operands[1]) * _element_bytes(element))

    def div_of(self, name: str) -> int:
        """A power of two dividing the integer scalar ``name`` (1 when nothing is known)."""
        if name in self.sdiv:
            return self.sdiv[name]
        value = self.constant_of(name)
        return _pow2(value) if value is not None else 1

    def scalar_divisibility(self, op: Op) -> None:
        """Triton's AxisInfo divisibility of integer scalar results (index arithmetic on arguments)."""
        if not op.results:
            return
        divs = [self.div_of(o) for o in op.operands]
        name, out = op.name, None
        if name == "arith.constant":
            out = self.div_of(op.results[0])
        elif name == "arith.muli" and len(divs) == 2:
            out = min(divs[0] * divs[1], _BIG)
        elif name in ("arith.addi", "arith.subi", "arith.remsi", "arith.remui") and len(divs) == 2:
            out = min(divs)
        elif name in ("arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast") and divs:
            out = divs[0]
        elif name == "arith.shli" and len(op.operands) == 2:
            shift = self.constant_of(op.operands[1])
            out = min(divs[0] << shift, _BIG) if shift is not None and 0 <= shift < 30 else divs[0]
        if out is not None:
            self.sdiv[op.results[0]] = out

    def arg_pointer(self, name: str) -> tuple[str, str] | None:
        if name in self.scalar_ptr:
            return self.scalar_ptr[name]
        return None

    # -- index math --------------------------------------------------------------------------------
    def op_tt_make_range(self, op: Op) -> None:
        t = self.types[op.results[0]]
        self.affine[op.results[0]] = _Affine(t.shape, (1,), div=_pow2(op.attr_int("start") or 0))

    def op_tt_splat(self, op: Op) -> None:
        t = self.types[op.results[0]]
        src = op.operands[0]
        if _pointee(t.element_type) is not None:
            base = self.arg_pointer(src)
            if base is not None:
                self.pointers[op.results[0]] = (base[0], base[1], _Affine(t.shape, (0,) * len(t.shape)))
                self.palign[op.results[0]] = self.palign.get(src, _element_bytes(base[1]))
            else:
                self.pointers[op.results[0]] = ("", _pointee(t.element_type), None)
            return
        if src in self.values and self.is_data(src):
            self.values[op.results[0]] = self.b.full(list(t.shape), 0, _elem(t))
            if _is_index(t.element_type):
                self.gathered[op.results[0]] = _Affine(t.shape, (0,) * len(t.shape), True, 1)
            return
        self.affine[op.results[0]] = _Affine(t.shape, (0,) * len(t.shape), div=self.div_of(src))

    def op_arith_constant(self, op: Op) -> None:
        t = self.types[op.results[0]]
        if t.element_type.startswith(("i", "index")) and not t.element_type.startswith("i1"):
            self.affine[op.results[0]] = _Affine(t.shape, (0,) * len(t.shape), div=self.div_of(op.results[0]))
        else:
            self.values[op.results[0]] = self.b.full(list(t.shape), 0, _elem(t))

    def op_tt_addptr(self, op: Op) -> None:
        ptr, off = op.operands[:2]
        base = self.pointers.get(ptr)
        if base is None:
            self.missing(op, "pointer tensor of unknown origin")
            return
        arg, element, a = base
        b = self.affine.get(off) or self.gathered.get(off)
        if b is None and off in self.values:  # offsets computed from data by ops the import does not follow
            shape = tuple(self.typ(op.operand_types[1]).shape)
            b = _Affine(shape, tuple(None if n > 1 else 0 for n in shape), True, 1)
        if a is None or b is None:
            offsets = None
        else:
            offsets = _combine(a, b, "add")
        self.pointers[op.results[0]] = (arg, element, offsets)
        self.palign[op.results[0]] = self.palign.get(ptr, _element_bytes(element))

    def affine_binary(self, op: Op) -> bool:
        """Index math on integer tensors: keep the affine form; True if handled."""
        if len(op.operands) != 2:
            return False
        a, b = (self.affine.get(o) for o in op.operands)
        if a is None or b is None:
            return False
        kind = {"arith.addi": "add", "arith.subi": "add", "arith.muli": "mul", "arith.remsi": "keep",
                "arith.remui": "keep", "arith.divsi": "unknown", "arith.divui": "unknown",
                "arith.andi": "keep", "arith.ori": "add", "arith.xori": "add", "arith.shli": "mul",
                "arith.maxsi": "keep", "arith.minsi": "keep"}.get(op.name)
        if kind is None:
            return False
        scale = None
        if kind == "mul":  # index * scalar: the scalar is a splat (coefficients all 0)
            const = (self.constant_of(op.operands[1]) if all(c == 0 for c in b.coeffs)
                     else self.constant_of(op.operands[0]))
            scale = const
            if op.name == "arith.shli" and const is not None:
                scale = 1 << const
        if kind == "mul" and op.name == "arith.shli":
            b = _Affine(b.shape, b.coeffs, b.data, _BIG if scale is None else _pow2(scale), b.cdivs)
        self.affine[op.results[0]] = _combine(a, b, kind, scale)
        return True

    def gather_offsets(self, op: Op, t) -> None:
        """Index math on loaded data (a gather's offsets): the affine form where the data is the same along a
        dim (broadcast), ``None`` coefficients where it varies; nothing when an operand is neither."""
        if not _is_index(t.element_type) or op.name == "arith.cmpi" or len(op.operands) not in (1, 2):
            return
        parts = [self.gathered.get(o) or self.affine.get(o) for o in op.operands]
        if any(p is None for p in parts) or not any(o in self.gathered for o in op.operands):
            return
        if len(parts) == 1:
            self.gathered[op.results[0]] = parts[0]
            return
        a, b = parts
        kind = {"arith.addi": "add", "arith.subi": "add", "arith.muli": "mul", "arith.shli": "mul"}.get(op.name,
                                                                                                      "unknown")
        scale = None
        if kind == "mul":  # data times a splat: its value where known, else its divisibility (``_combine``)
            splats = [k for k, p in enumerate(parts) if not p.data and all(c == 0 for c in p.coeffs)]
            if not splats:
                kind = "unknown"
            else:
                const = self.constant_of(op.operands[splats[-1]])
                scale = (1 << const) if op.name == "arith.shli" and const is not None else const
        g = _combine(a, b, kind, scale)
        self.gathered[op.results[0]] = _Affine(g.shape, g.coeffs, True, g.div, g.cdivs)

    def constant_of(self, name: str) -> int | None:
        """The value of a splat scalar when known (constants and specialized arguments)."""
        return self.splat_values.get(name)

    def op_tt_expand_dims(self, op: Op) -> None:
        src = op.operands[0]
        axis = op.attr_int("axis") or 0
        if src in self.affine and src not in self.values:
            self.affine[op.results[0]] = self.affine[src].expanded(axis)
            return
        if src in self.pointers:
            arg, element, a = self.pointers[src]
            self.pointers[op.results[0]] = (arg, element, None if a is None else a.expanded(axis))
            self.palign[op.results[0]] = self.palign.get(src, _element_bytes(element))
            return
        self.values[op.results[0]] = self.b.expand_dims(self.data(src), axis)
        if src in self.gathered:
            self.gathered[op.results[0]] = self.gathered[src].expanded(axis)

    def op_tt_broadcast(self, op: Op) -> None:
        src = op.operands[0]
        t = self.types[op.results[0]]
        if src in self.affine and src not in self.values:
            a = self.affine[src]
            self.affine[op.results[0]] = _Affine(t.shape, a.coeffs, a.data, a.div, a.cdivs)
            return
        if src in self.pointers:
            arg, element, a = self.pointers[src]
            self.pointers[op.results[0]] = (arg, element, _Affine(t.shape, a.coeffs, a.data, a.div, a.cdivs)
                                            if a else None)
            self.palign[op.results[0]] = self.palign.get(src, _element_bytes(element))
            return
        self.values[op.results[0]] = self.b.broadcast(self.data(src), list(t.shape))
        g = self.gathered.get(src)
        if g is not None:
            self.gathered[op.results[0]] = _Affine(t.shape, g.coeffs, True, g.div, g.cdivs)

    # -- memory -------------------------------------------------------------------------------------
    def pointer(self, name: str, op: Op) -> int | None:
        base = self.pointers.get(name)
        t = self.types.get(name) or self.typ(op.operand_types[0])
        if base is None or not base[0]:
            return None
        arg, element, offsets = base
        shape = list(t.shape)
        size = _element_bytes(element)
        if offsets is None or len(offsets.coeffs) != len(shape):
            strides = _row_major(shape)
            self.notes.add("pointers whose offsets are not affine (gathers) get row-major strides")
            align = min(self.palign.get(name, size), 16)  # (indices times a divisible stride: as aligned)
        else:
            strides = [UNKNOWN_STRIDE if c is None else abs(c) for c in offsets.coeffs]
            align = min(self.palign.get(name, size), offsets.alignment() * size, 16)
        ident = re.sub(r"\W", "_", arg.lstrip("%")) or "arg"
        return self.b.pointer(ident, shape, element, strides, align=max(1, align))

    def op_tt_load(self, op: Op) -> None:
        t = self.types[op.results[0]] if op.results else None
        if t is None or t.kind != "tensor":
            return
        ptr = self.pointer(op.operands[0], op)
        if ptr is None:
            self.missing(op, "load through a pointer tensor of unknown origin")
            return
        self.values[op.results[0]] = self.b.load(ptr)
        if _is_index(_pointee(t.element_type) or t.element_type):  # loaded indices: unknown wherever the tensor
            # has more than one element (the op's type is its pointer's)
            self.gathered[op.results[0]] = _Affine(t.shape, tuple(None if n > 1 else 0 for n in t.shape), True, 1)

    def op_tt_store(self, op: Op) -> None:
        t = self.typ(op.operand_types[0]) if op.operand_types else None
        if t is None or t.kind != "tensor":
            return
        ptr = self.pointer(op.operands[0], op)
        if ptr is None:
            self.unmodeled.append((op.name, str(op.loc), "store through a pointer tensor of unknown origin"))
            return
        value = self.data(op.operands[1], self.typ(op.operand_types[0]))
        vt = self.b._values[value]
        if vt.dtype != self.b._element(ptr):
            value = self.b.cast(value, self.b._element(ptr))
        self.b.store(ptr, value)
        self.stores.append(op)

    def op_tt_atomic_rmw(self, op: Op) -> None:
        t = self.types.get(op.results[0]) if op.results else None
        if t is None or t.kind != "tensor":
            return
        self.notes.add("tensor atomics are imported as a store (their pointer layout) and a load")
        ptr = self.pointer(op.operands[0], op)
        if ptr is None:
            self.missing(op, "atomic through a pointer tensor of unknown origin")
            return
        value = self.data(op.operands[1], t)
        if self.b._values[value].dtype != self.b._element(ptr):
            value = self.b.cast(value, self.b._element(ptr))
        self.b.store(ptr, value)
        self.stores.append(op)
        self.values[op.results[0]] = self.b.load(ptr)

    op_tt_atomic_cas = op_tt_atomic_rmw

    # -- compute ------------------------------------------------------------------------------------
    def elementwise(self, op: Op) -> None:
        t = self.types[op.results[0]]
        operands = op.operands
        if t.element_type.startswith(("i", "index")) and all(o in self.affine and not self.is_data(o) for o in operands):
            if op.name in ("arith.cmpi",):
                self.affine[op.results[0]] = _Affine(t.shape, (None,) * len(t.shape), div=1)
                return
            if self.affine_binary(op):
                return
            self.affine[op.results[0]] = _Affine(t.shape, (None,) * len(t.shape), div=1)
            return
        if op.name in ("arith.cmpi", "arith.cmpf") or (t.element_type == "i1" and not any(self.is_data(o) for o in operands)):
            if not any(self.is_data(o) for o in operands):  # masks: index math
                self.affine[op.results[0]] = _Affine(t.shape, (None,) * len(t.shape), div=1)
                return
        ins = [self.data(o, t) for o in operands]
        fn = _BINARY_FN.get(op.name) or _UNARY_FN.get(op.name)
        if op.name == "arith.select":
            fn = "where"
        if fn is None or len(ins) != {"where": 3}.get(fn, 2 if op.name in _BINARY_FN else 1):
            fn = {1: "map1", 2: "map2", 3: "map3"}.get(len(ins))
        if fn is None:
            self.missing(op, f"elementwise op with {len(ins)} operands")
            return
        shapes = {self.b._values[i].shape for i in ins}
        if len(shapes) != 1:
            self.missing(op, "operands of different shapes")
            return
        self.values[op.results[0]] = self.b.elementwise(fn, *ins, dtype=_elem(t))
        self.gather_offsets(op, t)

    def cast(self, op: Op) -> None:
        t = self.types[op.results[0]]
        src = op.operands[0]
        if src in self.affine and not self.is_data(src):
            self.affine[op.results[0]] = self.affine[src]
            return
        if src in self.pointers:
            self.pointers[op.results[0]] = self.pointers[src]
            return
        self.values[op.results[0]] = self.b.cast(self.data(src), _elem(t))
        if src in self.gathered and _is_index(t.element_type):
            self.gathered[op.results[0]] = self.gathered[src]

    def shape_op(self, op: Op) -> None:
        name = op.name
        src = op.operands[0]
        t = self.types[op.results[0]]
        if src in self.affine and not self.is_data(src):  # index math stays free: only its shape changes
            self.affine[op.results[0]] = _Affine(t.shape, (None,) * len(t.shape), div=1)
            if name == "tt.split":
                self.affine[op.results[1]] = _Affine(t.shape, (None,) * len(t.shape), div=1)
            return
        if src in self.pointers:
            self.missing(op, "shape op on a pointer tensor")
            return
        x = self.data(src)
        if name == "tt.trans":
            m = re.search(rf"order = {I32_ARRAY}", op.text)
            perm = list(read_ints(m.group(1), f"ir text: {name}'s order")) if m else list(reversed(range(len(t.shape))))
            self.values[op.results[0]] = self.b.trans(x, perm)
        elif name == "tt.reshape":
            self.values[op.results[0]] = self.b.reshape(x, list(t.shape))
        elif name == "tt.join":
            self.values[op.results[0]] = self.b.join(x, self.data(op.operands[1]))
        elif name == "tt.split":
            lo, hi = self.b.split(x)
            self.values[op.results[0]], self.values[op.results[1]] = lo, hi

    def op_tt_dot(self, op: Op) -> None:
        a, b, c = op.operands[:3]
        ta = self.typ(op.operand_types[0])
        t = self.types[op.results[0]]
        if len(t.shape) != 2:
            self.missing(op, f"{len(t.shape)}-D dot (the engine's dot is 2-D)")
            return
        version = 3 if self.target.has(WGMMA) and t.shape[0] >= 64 and self.num_warps % 4 == 0 else 2
        acc = self.data(c, t)
        if self.b._values[acc].dtype != _elem(t):
            acc = self.b.cast(acc, _elem(t))
        va, vb = self.data(a, ta), self.data(b, self.typ(op.operand_types[1]))
        self.values[op.results[0]] = self.b.dot(va, vb, acc, out_dtype=_elem(t), mma_version=version)

    def op_tt_dot_scaled(self, op: Op) -> None:
        """``tt.dot_scaled`` (mxfp8 / mxfp4): a ``dot`` of the operands upcast to bf16, as Triton lowers it
        for sm_80 / sm_90 (upcast, times the broadcast scales, then mma / wgmma): the accumulator and the
        dot-operand anchors are the engine's (with wgmma and an fp4 B, of the transposed product, as Triton
        swaps the operands). A packed fp4 operand (two e2m1 per byte) enters as a free
        bf16 placeholder of the unpacked shape, and the scales are not imported: the upcast Triton adds
        and the scales keep Triton's layouts in a rewrite (the layouts Triton's upcast requires)."""
        m = re.search(rf"tt\.dot_scaled\s+({VALUE_USE})(?:\s+scale\s+{VALUE_USE})?\s*,\s*({VALUE_USE})"
                      rf"(?:\s+scale\s+{VALUE_USE})?\s*,\s*({VALUE_USE})\s+lhs\s*=\s*(\w+)\s+rhs\s*=\s*(\w+)", op.text)
        t = self.types[op.results[0]]
        if m is None or len(t.shape) != 2:
            self.missing(op, "tt.dot_scaled not read (or not 2-D)")
            return
        a, b, c, lhs, rhs = m.groups()
        self.keep.update((a, b))
        types = {name: self.typ(ty) for name, ty in zip(op.operands, op.operand_types)}
        ta, tb = types.get(a), types.get(b)
        if ta is None or tb is None or len(ta.shape) != 2 or len(tb.shape) != 2:
            self.missing(op, "tt.dot_scaled operands not read")
            return
        k = ta.shape[1] * (2 if lhs == "e2m1" else 1)
        n = t.shape[1]
        operands = []
        for name, info, fmt, shape in ((a, ta, lhs, (t.shape[0], k)), (b, tb, rhs, (k, n))):
            if tuple(info.shape) != shape:  # packed fp4: the unpacked operand is Triton's upcast
                operands.append(self.b.full(list(shape), 0, "bf16"))
                self.notes.add("tt.dot_scaled: a packed fp4 operand enters as a free placeholder (its upcast "
                               "keeps Triton's layouts)")
                continue
            value = self.data(name, info)
            if self.b._values[value].dtype != "bf16":
                value = self.b.cast(value, "bf16")
            operands.append(value)
        version = 3 if self.target.has(WGMMA) and t.shape[0] >= 64 and self.num_warps % 4 == 0 else 2
        acc = self.data(c, t)
        if self.b._values[acc].dtype != _elem(t):
            acc = self.b.cast(acc, _elem(t))
        if version == 3 and rhs == "e2m1" and lhs != "e2m1":
            # wgmma takes the upcast fp4 operand as A: Triton computes (b^T @ a^T)^T, its accumulator the
            # transposed wgmma layout
            out = self.b.dot(self.b.trans(operands[1], [1, 0]), self.b.trans(operands[0], [1, 0]),
                             self.b.trans(acc, [1, 0]), out_dtype=_elem(t), mma_version=3)
            self.values[op.results[0]] = self.b.trans(out, [1, 0])
        else:
            self.values[op.results[0]] = self.b.dot(operands[0], operands[1], acc, out_dtype=_elem(t),
                                                    mma_version=version)
        self.notes.add("tt.dot_scaled: imported as a dot of bf16 operands (the scales keep Triton's layouts)")

    def op_tt_reduce(self, op: Op) -> None:
        axis = op.attr_int("axis") or 0
        combine = "add"
        body = op.regions[0].ops if op.regions else ()
        names = [o.name for o in body]
        if any("max" in n for n in names):
            combine = "max"
        elif any("min" in n for n in names):
            combine = "min"
        if len(op.operands) > 1:
            self.notes.add("reductions of several operands (argmax, ...) are imported as one reduction per operand, "
                           "each operand in the first one's layout")
        first = None
        for k, src in enumerate(op.operands):
            t = self.types[op.results[k]] if k < len(op.results) else None
            x = self.data(src, self.typ(op.operand_types[k]))
            if first is None:
                first = x
            else:  # Triton's tt.reduce takes its operands in one layout: an elementwise op ties them
                x = self.b.elementwise("map2", first, x, dtype=self.b._values[x].dtype)
            if self.b._values[x].rank < 2:
                # a full reduction of a 1-D tensor: expand to [n, 1] so the engine's reduce (rank >= 2) applies
                x = self.b.expand_dims(x, 1)
                out = self.b.reduce(x, 0, combine)
            else:
                out = self.b.reduce(x, axis, combine)
            if t is not None and t.kind == "tensor":
                self.values[op.results[k]] = out

    def op_tt_scan(self, op: Op) -> None:
        """A scan keeps its operands' layout (its data movement is internal to Triton's lowering)."""
        for k, src in enumerate(op.operands):
            t = self.types[op.results[k]] if k < len(op.results) else None
            if t is None or t.kind != "tensor":
                continue
            self.values[op.results[k]] = self.b.elementwise("scan", self.data(src, self.typ(op.operand_types[k])),
                                                            dtype=_elem(t))

    def op_tt_gather(self, op: Op) -> None:
        axis = op.attr_int("axis") or 0
        src, idx = op.operands[:2]
        x = self.data(src, self.typ(op.operand_types[0]))
        i = self.data(idx, self.typ(op.operand_types[1]))
        if self.b._values[i].dtype != "i32":
            i = self.b.cast(i, "i32")
        self.values[op.results[0]] = self.b.gather(x, i, axis)


def _is_index(element: str) -> bool:
    """An integer element type that can index memory (not ``i1``)."""
    return element.startswith(("i", "index")) and not element.startswith("i1")


def _row_major(shape: list[int]) -> list[int]:
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    return strides


def _combine(a: _Affine, b: _Affine, kind: str, scale: int | None = None) -> _Affine:
    shape = a.shape if len(a.shape) >= len(b.shape) else b.shape
    ca = list(a.coeffs) + [0] * (len(shape) - len(a.coeffs))
    cb = list(b.coeffs) + [0] * (len(shape) - len(b.coeffs))
    da = list(a.coeff_divs()) + [_BIG] * (len(shape) - len(a.coeffs))
    db = list(b.coeff_divs()) + [_BIG] * (len(shape) - len(b.coeffs))
    div = min(a.div, b.div)
    if kind == "add":
        coeffs = [None if x is None or y is None else x + y for x, y in zip(ca, cb)]
        cdivs = [min(x, y) for x, y in zip(da, db)]
    elif kind == "mul":  # (affine) * (splat): divisibilities multiply
        varying, factor = (a, b) if any(x != 0 for x in ca) else (b, a)
        base = ca if varying is a else cb
        coeffs = [0 if x == 0 else (None if x is None or scale is None else x * scale) for x in base]
        fdiv = _pow2(scale) if scale is not None else factor.div
        cdivs = [min(d * fdiv, _BIG) for d in (da if varying is a else db)]
        div = min(varying.div * fdiv, _BIG)
    elif kind == "keep":
        coeffs = [x if y == 0 else None for x, y in zip(ca, cb)]
        cdivs = [min(x, y) for x, y in zip(da, db)]
    else:
        coeffs = [0 if x == 0 and y == 0 else None for x, y in zip(ca, cb)]
        cdivs = [_BIG if c == 0 else 1 for c in coeffs]
        div = 1
    cdivs = [1 if c is None and d == _BIG else d for c, d in zip(coeffs, cdivs)]
    return _Affine(tuple(shape), tuple(coeffs), a.data or b.data, div, tuple(cdivs))


def _element_bytes(element: str) -> int:
    """Bytes of one element of a pointer's element type (1 for sub-byte and unknown types)."""
    from linear_layouts.core.element_type import ir_element_bits

    bits = ir_element_bits(element)
    return max(1, (bits or 8) // 8)


@checked
def import_ttir(module: Module, *, cc: int | None = None, scalars: dict[str, int] | None = None,
                num_warps: int | None = None, target: Target | None = None) -> ImportedProgram:
    """Import the first function of a TTIR module (module doc). ``target``: the target the dots are for
    (wgmma where it has them; default: the module's ``ttg.target``, else the default target; ``cc``: a
    compute capability instead); ``scalars``: known integer arguments (``%n`` -> value);
    ``num_warps``: the launch's (TTIR modules do not carry it; default the module's attribute, else 4)."""
    check_well_formed(module, "ttir")
    if target is None:
        target = named_target(f"sm_{cc}") if cc is not None else target_for_module(module.target)
    imp = _Importer(module, target, dict(scalars or {}), num_warps)
    fn = module.functions[0]
    splat_values = imp.splat_values
    attrs = dict(fn.arg_attrs)
    for arg, ty in fn.args:
        m = re.search(rf"tt\.divisibility = ({DIGITS})", attrs.get(arg, ""))
        divisibility = parse_int(m.group(1), f"ir text: {arg}'s tt.divisibility") if m else None
        element = pointee(ty) if imp.typ(ty).kind == "ptr" else None  # a scalar pointer
        if element is not None:
            imp.scalar_ptr[arg] = (arg, element)
            imp.palign[arg] = divisibility if divisibility is not None else _element_bytes(element)
        elif arg in (scalars or {}):
            imp.sdiv[arg] = _pow2((scalars or {})[arg])
        elif divisibility is not None:
            imp.sdiv[arg] = divisibility
    # constants (scalars and splats of scalars) for the strides of index math
    scalar_values: dict[str, int] = dict(scalars or {})
    for op in fn.walk():
        if op.name == "arith.constant" and op.results:
            m2 = re.search(rf"arith\.constant (?:dense<)?(-?{DIGITS})>? : (?:tensor<[^>]*>|{INTEGER_TYPE})", op.text)
            if m2:
                value = parse_int(m2.group(1), f"ir text: {op.results[0]}'s arith.constant", signed=True)
                scalar_values[op.results[0]] = splat_values[op.results[0]] = value
        elif op.name == "tt.splat" and op.operands and op.operands[0] in scalar_values:
            splat_values[op.results[0]] = scalar_values[op.operands[0]]
    imp.region(fn.body)
    return ImportedProgram(imp.b.build(), tuple(imp.unmodeled), tuple(sorted(imp.notes)), imp.loops,
                           dict(imp.values), tuple(imp.stores), tuple(sorted(imp.keep)))
