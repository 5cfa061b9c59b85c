"""The layouts and shared-memory traffic of one compiled kernel (a TTGIR module), op by op.

For every distinct layout: its attribute text (TTGIR name), the catalog descriptor (Gluon name) and
its LinearLayout on each shape it is used with. For every op that moves data through shared memory
or between threads — ``convert_layout``, ``local_alloc %x`` / ``local_store`` / ``local_load``,
``tt.reduce`` and ``tt.scan`` across warps, ``async_copy_global_to_local`` (cp.async) — Triton's own lowering with
its instructions and wavefronts (``triton_lowering``), our plan for conversions (``plan_conversion``)
with its wavefronts and model cost, and flags: bank conflicts, a cheaper plan. Ops that touch shared
or tensor memory outside the load/store unit, or that the model does not cover, are listed with the
reason (TMA copies, wgmma operand reads, TMEM, histograms' shared atomics,
mbarriers). With a launch (grid and scalar arguments) every op also gets its execution count. Each op kind
has one handler (``_HANDLERS``: convert_layout, local_alloc / local_store / local_load, reduce, histogram,
scan, async_copy, tensormap_create, scalar atomics, the unmodeled); Triton's side of each is
``triton_model.lowering``'s.

>>> from linear_layouts.layouts import BlockedLayout
>>> text = '''#a = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
... #b = #ttg.blocked<{sizePerThread = [8, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]}>
... module attributes {"ttg.num-warps" = 4 : i32, ttg.target = "cuda:90"} {
...   tt.func public @k(%x: tensor<64x64xf16, #a>) {
...     %y = ttg.convert_layout %x : tensor<64x64xf16, #a> -> tensor<64x64xf16, #b>
...     tt.return
...   }
... }'''
>>> r = analyze_ttgir(text, resolver=lambda s: BlockedLayout([1, 8], [8, 4], [4, 1], [1, 0]) if "[1, 8]" in s
...                   else BlockedLayout([8, 1], [4, 8], [1, 4], [0, 1]))
>>> [(op.kind, op.triton.store_wavefronts, op.triton.load_wavefronts) for op in r.ops]
[('convert_layout', 64, 64)]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from linear_layouts.core.arguments import checked
from linear_layouts.analysis.conversion import BARRIER_COST, ConversionPlan, plan_conversion
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import MAX_ELEMENTS, quote, shorten
from linear_layouts.triton_model.ir_text import Function, Location, Module, Op, parse_module
from linear_layouts.triton_model.encodings import Layouts, Resolver, check_layouts_fit, is_shared_encoding
from linear_layouts.triton_model.ir_types import TensorType, parse_type
from linear_layouts.triton_model.lowering import (  # noqa: F401  (TENSORMAP_RANK2_*: their old home)
    NO_OP,
    SHARED,
    TENSORMAP_RANK2_LDS,
    TENSORMAP_RANK2_STS,
    SharedLowering,
    async_copy_lowering,
    atomic_result_lowering,
    convert_lowering,
    histogram_lowering,
    local_lowering,
    reduce_lowering,
    reduce_lowering_smem,
    scan_lowering,
    tensormap_create_lowering,
)
from linear_layouts.core.layout import LinearLayout
from linear_layouts.layouts import PaddedSharedLayout
from linear_layouts.layouts.registry import Descriptor, kind_of
from linear_layouts.target import Target, named_target, target_for_module

__all__ = ["LayoutEntry", "SharedOp", "UnmodeledOp", "KernelReport", "analyze_ttgir", "analyze_module",
           "check_has_layouts"]

#: ops whose shared-memory traffic ncu's LSU counters (``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld``
#: / ``_op_st``) do not count, and why: the async proxy (TMA, wgmma / tcgen05 operand reads, TMEM) and mbarriers
#: (measured: benchmarks/results/gpu_kernels.md).
OUTSIDE_LSU_COUNTERS = MappingProxyType({
    "ttng.async_tma_copy_global_to_local": "TMA copy into shared memory (async proxy, not the LSU)",
    "ttng.async_tma_copy_local_to_global": "TMA copy out of shared memory (async proxy, not the LSU)",
    "ttng.async_tma_gather": "TMA gather (async proxy)",
    "ttng.async_tma_scatter": "TMA scatter (async proxy)",
    "ttng.warp_group_dot": "wgmma reads its shared-memory operands through the async proxy (not the LSU)",
    "ttng.tc_gen5_mma": "tcgen05.mma reads shared memory / TMEM through the async proxy",
    "ttng.tmem_load": "tensor memory (TMEM) load: no shared-memory wavefronts",
    "ttng.tmem_store": "tensor memory (TMEM) store: no shared-memory wavefronts",
    "ttng.tmem_copy": "shared memory -> tensor memory copy (tcgen05.cp)",
    "ttng.init_barrier": "mbarrier initialization (shared-memory store by one thread)",
    "ttng.barrier_expect": "mbarrier arrive.expect_tx",
    "ttng.wait_barrier": "mbarrier wait",
})

#: ops the report lists without a prediction, and why: those outside the LSU counters, and those whose
#: lowering the model does not cover yet
UNMODELED = MappingProxyType({
    **OUTSIDE_LSU_COUNTERS,
    "tt.gather": "gather: Triton's warp-local / shared-memory lowering is not modeled",
})


@dataclass(frozen=True)
class LayoutEntry:
    """One distinct encoding of the module: ``name`` (``#blocked1`` or the inline text), ``attribute``
    (TTGIR text, aliases expanded), ``descriptor`` (catalog object; its repr is the Gluon name),
    ``shared`` (a shared-memory layout), and its LinearLayout per shape it is used with."""

    name: str
    attribute: str
    descriptor: Descriptor | _Unread
    shared: bool
    linear: tuple[tuple[tuple[int, ...], LinearLayout], ...]
    #: for a layout given by its bases (a general kind: ``#ttg.linear`` / ``#ttg.shared_linear``): the
    #: simplest Gluon class producing the same layout (``catalog.recognize``), when it is another class
    recognized: Descriptor | None = None

    @property
    def gluon(self) -> str:
        return repr(self.descriptor)


@dataclass(frozen=True)
class SharedOp:
    """One op that moves data through shared memory (or between threads): what Triton does
    (``triton``), our plan for a conversion (``ours``), the layouts involved and the flags."""

    index: int
    op: str
    kind: str
    loc: Location
    shape: tuple[int, ...]
    element: str
    bits: int
    src: str
    dst: str
    triton: SharedLowering
    ours: ConversionPlan | None = None
    loop_depth: int = 0
    count: int | None = None
    triton_estimate: tuple[int | None, int | None] | None = None
    flags: tuple[str, ...] = ()
    src_layout: LinearLayout | None = field(default=None, repr=False, compare=False)
    dst_layout: LinearLayout | None = field(default=None, repr=False, compare=False)

    @property
    def warps(self) -> int:
        layout = self.src_layout if self.src_layout is not None and self.src_layout.has_in_dim("warp") else None
        return layout.in_dim_size("warp") if layout is not None else 1

    def triton_time(self, target: Target | None = None) -> float | None:
        """Triton's lowering in SM-nanoseconds per CTA by the calibrated cost model on ``target``'s table
        (``analysis.cost_model``: its wavefronts and a barrier after each store and between rounds); None
        where no table applies."""
        from linear_layouts.analysis.cost_model import OpCounts, conversion_time_ns

        if self.triton.kind != SHARED:
            return 0.0 if self.triton.kind in (NO_OP, "register permutation") else None
        barriers = 2 * self.triton.reps - 1 if self.kind in ("convert_layout", "reduce") else 0
        return conversion_time_ns(OpCounts(wavefronts=self.triton.wavefronts, barriers_cta=barriers), self.warps,
                                  target=target)

    def ours_time(self, target: Target | None = None) -> float | None:
        """Our plan in SM-nanoseconds per CTA by the same cost model (None without a plan)."""
        from linear_layouts.analysis.cost_model import shared_time_ns, shuffle_time_ns

        p = self.ours
        if p is None:
            return None
        if p.kind == SHARED:
            return shared_time_ns(p.wavefronts, False, self.warps, target=target)
        if p.shuffle is not None:
            return shuffle_time_ns(p.shuffle, target=target)
        return 0.0

    @property
    def triton_cost(self) -> float:
        """Triton's plan in the cost model's units (wavefronts per warp + a barrier per round)."""
        if self.triton.kind != SHARED:
            return 0.0
        warps = max(1, self.src_layout.in_dim_size("warp") if self.src_layout is not None
                    and self.src_layout.has_in_dim("warp") else 1)
        return self.triton.wavefronts / warps + BARRIER_COST * max(1, self.triton.reps)


@dataclass(frozen=True)
class UnmodeledOp:
    """An op touching shared or tensor memory that the prediction leaves out, and why."""

    index: int
    op: str
    loc: Location
    reason: str
    count: int | None = None


@dataclass(frozen=True)
class KernelReport:
    """Everything the report shows about one TTGIR module (module doc)."""

    name: str
    target: str
    num_warps: int
    threads_per_warp: int
    layouts: tuple[LayoutEntry, ...]
    ops: tuple[SharedOp, ...]
    unmodeled: tuple[UnmodeledOp, ...]
    module: Module = field(repr=False, compare=False)
    triton_version: str = ""
    counted: bool = False
    #: our engine on the kernel's TTIR (``engine_compare.EngineComparison``), when the TTIR is at hand
    engine: Any = None

    def total(self, attribute: str, *, dynamic: bool = False) -> int:
        """Sum of ``triton.<attribute>`` (store_wavefronts, load_wavefronts, ...) over the ops, once per
        op (static) or times each op's execution count (``dynamic``; unknown counts skipped)."""
        out = 0
        for op in self.ops:
            value = getattr(op.triton, attribute)
            if dynamic:
                if op.count is None:
                    continue
                value *= op.count
            out += value
        return out

    @property
    def conversions(self) -> tuple[SharedOp, ...]:
        return tuple(op for op in self.ops if op.kind == "convert_layout" and op.triton.kind != NO_OP)


# --------------------------------------------------------------------------------------------------
def _loop_depths(fn: Function) -> dict[int, int]:
    depths: dict[int, int] = {}

    def walk(ops: tuple[Op, ...], depth: int) -> None:
        for op in ops:
            depths[id(op)] = depth
            for region in op.regions:
                walk(region.ops, depth + (op.name in ("scf.for", "scf.while")))

    walk(fn.body.ops, 0)
    return depths


def _triton_estimate(shared: LinearLayout, distributed: LinearLayout, bits: int) -> int | None:
    """Triton's own bank-conflict estimate when Triton is installed (else None)."""
    try:
        from linear_layouts.triton_model.interop import triton_bank_conflicts

        return triton_bank_conflicts(shared, distributed, bits)
    except (LayoutError, ImportError, RuntimeError, TypeError, ValueError):
        return None


def _conflict_flags(lowering: SharedLowering) -> list[str]:
    flags = []
    for ins in lowering.stores + lowering.loads:
        if "matrix" in ins.instruction:
            ideal = ins.count * int(ins.instruction.split(".x")[1][0])
        else:
            ideal = ins.count * max(1, ins.bytes * 32 // 128)
        if ins.wavefronts > ideal:
            flags.append(f"bank conflicts: {ins.instruction} {ins.wavefronts} wavefronts, conflict-free {ideal}")
    return flags


def _cheaper_flag(op: SharedOp, target: Target) -> str | None:
    """"cheaper plan: ..." when our plan of a conversion Triton lowers through shared memory costs under 95%
    of Triton's by the cost model on ``target``'s table (None otherwise)."""
    ours, triton = op.ours, op.triton
    t_ns, o_ns = op.triton_time(target), op.ours_time(target)
    if ours is None or triton.kind != SHARED or t_ns is None or o_ns is None or o_ns >= 0.95 * t_ns:
        return None
    if ours.kind != SHARED:
        better = f"{ours.kind} instead of shared memory"
    elif ours.wavefronts < triton.wavefronts:
        better = f"{ours.wavefronts} wavefronts instead of {triton.wavefronts}"
    else:
        better = f"{ours.wavefronts} wavefronts in one round instead of {triton.reps} rounds"
    return f"cheaper plan: {better} ({o_ns:.0f} ns vs {t_ns:.0f} ns)"


def _before(version: str, limit: tuple[int, int]) -> bool:
    """``version`` (``"3.6.0"``) is a Triton older than ``limit``; an empty or unreadable one is not."""
    parts = version.split(".")[:2]
    if len(parts) < 2 or not all(p.isdigit() for p in parts):
        return False
    return (int(parts[0]), int(parts[1])) < limit


class _Analyzer:
    """What every op's handler reads: the module, its layouts (each LinearLayout computed once and noted
    as used), the target, the execution counts and the choices of the run."""

    def __init__(self, module: Module, layouts: Layouts, target: Target, counts: Mapping[int, int | None] | None,
                 with_triton_estimate: bool, triton_version: str = ""):
        self.module = module
        self.smem_reduce = _before(triton_version, (3, 7))  # Triton 3.6's reduce and scan lowerings
        self.layouts = layouts
        self.target = target
        self.counts = counts
        self.estimate = with_triton_estimate
        self.used: dict[str, dict[tuple[int, ...], LinearLayout]] = {}
        self.results_used = _results_used(module.functions[0])
        self.tail = _tail_conversion(module.functions[0])

    def typ(self, text: str) -> TensorType:
        return parse_type(text, self.module)

    def linear(self, t: TensorType) -> LinearLayout:
        ll = self.layouts.linear(t)
        self.used.setdefault(t.encoding, {})[self.layouts.layout_shape(t)] = ll
        return ll

    def name(self, t: TensorType) -> str:
        return self.layouts.name_of(t.encoding)

    def count(self, op: Op) -> int | None:
        return None if self.counts is None else self.counts.get(id(op))

    def shared_op(self, index: int, op: Op, depth: int) -> SharedOp | UnmodeledOp | None:
        """The op's entry by its handler (``_HANDLERS``; AMD's, ``_AMD_HANDLERS``, on a 64-lane or HIP
        module), or None for an op that moves no data through shared memory."""
        amd = self.target.backend != "cuda" or self.module.threads_per_warp != self.target.lanes \
            or self.module.backend == "hip"
        handler = (_AMD_HANDLERS if amd else _HANDLERS).get(op.name)
        return handler(self, _Site(index, op, depth, self.count(op))) if handler is not None else None

    def padded(self, t: TensorType) -> bool:
        """The type's layout inserts padding (``PaddedSharedLayout``), which the bank model leaves out."""
        return isinstance(self.layouts.descriptor(t.encoding), PaddedSharedLayout)


@dataclass(frozen=True)
class _Site:
    """Where a handler's op is: its ``index`` in the function's walk, the ``op``, its loop ``depth`` and
    execution ``count``."""

    index: int
    op: Op
    depth: int
    count: int | None

    def unmodeled(self, reason: str) -> UnmodeledOp:
        return UnmodeledOp(self.index, self.op.name, self.op.loc, reason, self.count)


# --------------------------------------------------------------------------------------------------
# one handler per op kind: Triton's lowering (triton_model.lowering), our plan, the flags
# --------------------------------------------------------------------------------------------------


def _bits(t: TensorType) -> int:
    """Bits of one element of ``t`` (``TensorType.bitwidth``); LayoutError for an element type of no known
    width (``i4``, ``q7``): its traffic is not guessed."""
    if t.bitwidth is None:
        raise LayoutError(f"ttgir: element type {quote(t.element_type)} has no known width in bits")
    return t.bitwidth


def _convert_layout(a: _Analyzer, at: _Site) -> SharedOp | UnmodeledOp | None:
    """``ttg.convert_layout`` between distributed layouts: Triton's lowering and our plan, flagged when ours
    is cheaper by the cost model."""
    op = at.op
    s, d = a.typ(op.operand_types[0]), a.typ(op.result_types[0])
    if s.kind != "tensor" or d.kind != "tensor":
        return at.unmodeled(f"operand or result of type {shorten(op.operand_types[0])} -> "
                            f"{shorten(op.result_types[0])}: not a tensor type")
    if not s.encoding or is_shared_encoding(s.encoding) or is_shared_encoding(d.encoding):
        return None
    src, dst = a.linear(s), a.linear(d)
    bits = _bits(s)
    triton = convert_lowering(src, dst, bits, a.target, tail=id(op) == a.tail)
    try:
        ours = plan_conversion(src, dst, max(bits, 8), target=a.target)
    except LayoutError:
        ours = None
    estimate = None
    if a.estimate and triton.kind == SHARED and triton.layout is not None:
        estimate = (_triton_estimate(triton.layout, _strip(src), max(bits, 8)),
                    _triton_estimate(triton.layout, _strip(dst), max(bits, 8)))
    entry = SharedOp(at.index, op.name, "convert_layout", op.loc, s.shape, s.element_type, bits, a.name(s), a.name(d),
                     triton, ours, at.depth, at.count, estimate, tuple(_conflict_flags(triton)), src, dst)
    cheaper = _cheaper_flag(entry, a.target)
    return entry if cheaper is None else dataclasses.replace(entry, flags=entry.flags + (cheaper,))


def _local_access(a: _Analyzer, at: _Site) -> SharedOp | UnmodeledOp | None:
    """``ttg.local_load``, ``ttg.local_store`` and ``ttg.local_alloc %x``: registers <-> a shared layout."""
    op, name = at.op, at.op.name
    if name == "ttg.local_load":
        mem, reg, direction = a.typ(op.operand_types[0]), a.typ(op.result_types[0]), "load"
    elif name == "ttg.local_store":
        mem_text = op.result_types[0] if op.result_types else op.operand_types[-1]
        reg, mem, direction = a.typ(op.operand_types[0]), a.typ(mem_text), "store"
    elif op.operand_types:
        reg, mem, direction = a.typ(op.operand_types[0]), a.typ(op.result_types[0]), "store"
    else:
        return None  # an allocation without a value: no traffic
    if not is_shared_encoding(mem.encoding):
        return at.unmodeled(f"memory encoding {a.name(mem)} is not a shared layout")
    shared, dist = a.linear(mem), a.linear(reg)
    bits = _bits(reg)
    if a.padded(mem):
        return at.unmodeled("padded shared layout: padding is not modeled")
    triton = local_lowering(dist, shared, bits, direction, a.target)
    estimate = None
    if a.estimate:
        value = _triton_estimate(shared, _strip(dist), max(bits, 8))
        estimate = (value, None) if direction == "store" else (None, value)
    src, dst = (a.name(reg), a.name(mem)) if direction == "store" else (a.name(mem), a.name(reg))
    return SharedOp(at.index, name, name.split(".")[-1], op.loc, reg.shape, reg.element_type, bits, src, dst, triton,
                    None, at.depth, at.count, estimate, tuple(_conflict_flags(triton)), dist, shared)


def _reduce(a: _Analyzer, at: _Site) -> SharedOp | None:
    """``tt.reduce`` across lanes or warps (Triton 3.6's lowering before 3.7)."""
    op = at.op
    ins = [a.typ(t) for t in op.operand_types]
    outs = [a.typ(t) for t in op.result_types]
    if not ins or not ins[0].encoding:
        return None
    src = a.linear(ins[0])
    result = a.linear(outs[0]) if outs and outs[0].kind == "tensor" and outs[0].encoding else None
    lowering = reduce_lowering_smem if a.smem_reduce else reduce_lowering
    triton = lowering(src, op.attr_int("axis") or 0, [_bits(t) for t in ins], result, a.target)
    if triton.kind == NO_OP:
        return None
    return SharedOp(at.index, op.name, "reduce", op.loc, ins[0].shape, ins[0].element_type, _bits(ins[0]),
                    a.name(ins[0]), a.name(outs[0]) if outs and outs[0].encoding else "scalar", triton,
                    None, at.depth, at.count, None, tuple(_conflict_flags(triton)), src, result)


def _histogram(a: _Analyzer, at: _Site) -> SharedOp | UnmodeledOp:
    """``tt.histogram``: its bins zeroed and read back through shared memory."""
    op = at.op
    out = a.typ(op.result_types[0])
    if not out.encoding or len(out.shape) != 1:
        return at.unmodeled("histogram with an unexpected result")
    bins = _strip(a.linear(out))
    bits = _bits(out)
    triton = histogram_lowering(bins, bits)
    return SharedOp(at.index, op.name, "histogram", op.loc, out.shape, out.element_type, bits, "bins", a.name(out),
                    triton, None, at.depth, at.count, None, tuple(_conflict_flags(triton)), bins, bins)


def _scan(a: _Analyzer, at: _Site) -> SharedOp | UnmodeledOp | None:
    """``tt.scan`` across warps."""
    op = at.op
    ins = [a.typ(t) for t in op.operand_types]
    if not ins or not ins[0].encoding:
        return None
    src = a.linear(ins[0])
    triton = scan_lowering(src, op.attr_int("axis") or 0, [_bits(t) for t in ins], a.target,
                           exact_tail=a.smem_reduce)
    if triton.kind == NO_OP:
        return None
    if triton.kind != SHARED:
        return at.unmodeled(triton.note)
    return SharedOp(at.index, op.name, "scan", op.loc, ins[0].shape, ins[0].element_type, _bits(ins[0]),
                    a.name(ins[0]), a.name(ins[0]), triton, None, at.depth, at.count, None,
                    tuple(_conflict_flags(triton)), src, src)


def _async_copy(a: _Analyzer, at: _Site) -> SharedOp | UnmodeledOp:
    """``ttg.async_copy_global_to_local`` (cp.async) into a shared layout."""
    op = at.op
    ptr, mem = a.typ(op.operand_types[0]), a.typ(op.result_types[0])
    if not is_shared_encoding(mem.encoding) or a.padded(mem):
        return at.unmodeled("cp.async into a padded or non-shared layout")
    bits = _bits(mem)
    shared, dist = a.linear(mem), a.linear(ptr)
    triton = async_copy_lowering(dist, shared, bits, op.attr_int("contiguity") or 1)
    return SharedOp(at.index, op.name, "async_copy", op.loc, mem.shape, mem.element_type, bits, a.name(ptr),
                    a.name(mem), triton, None, at.depth, at.count, None, tuple(_conflict_flags(triton)), dist, shared)


def _tensormap_create(a: _Analyzer, at: _Site) -> SharedOp | UnmodeledOp:
    """``ttng.tensormap_create``: the TMA descriptor written through shared memory by one thread."""
    op = at.op
    rank = (len(op.operand_types) - 1) // 4  # ptr, ptr, box[r], global_dim[r], stride[r-1], elem_stride[r]
    triton = tensormap_create_lowering(rank, a.module.num_warps)
    if triton.kind != SHARED:
        return at.unmodeled(triton.note)
    return SharedOp(at.index, op.name, "tensormap_create", op.loc, (128,), "i8", 8, "-", "descriptor", triton,
                    None, at.depth, at.count)


def _atomic_result(a: _Analyzer, at: _Site) -> SharedOp | None:
    """A scalar ``tt.atomic_rmw`` / ``tt.atomic_cas`` whose result is used later: broadcast through shared memory."""
    op = at.op
    if not op.result_types or op.result_types[0].startswith("tensor") or id(op) not in a.results_used:
        return None
    bits = _bits(parse_type(op.result_types[0]))
    triton = atomic_result_lowering(bits, a.module.num_warps)
    return SharedOp(at.index, op.name, "atomic_result", op.loc, (), op.result_types[0], bits, "thread 0", "all threads",
                    triton, None, at.depth, at.count)


def _unmodeled(a: _Analyzer, at: _Site) -> UnmodeledOp:
    """An op outside the prediction (``UNMODELED``), and why."""
    return at.unmodeled(UNMODELED[at.op.name])


#: op name -> its handler: the op's ``SharedOp`` (what Triton does, our plan, the flags), an ``UnmodeledOp``
#: (why it is left out), or None (no shared-memory traffic)
_HANDLERS: Mapping[str, Callable[[_Analyzer, _Site], SharedOp | UnmodeledOp | None]] = MappingProxyType({
    "ttg.convert_layout": _convert_layout,
    "ttg.local_load": _local_access,
    "ttg.local_store": _local_access,
    "ttg.local_alloc": _local_access,
    "tt.reduce": _reduce,
    "tt.histogram": _histogram,
    "tt.scan": _scan,
    "ttg.async_copy_global_to_local": _async_copy,
    "ttng.tensormap_create": _tensormap_create,
    "tt.atomic_rmw": _atomic_result,
    "tt.atomic_cas": _atomic_result,
    **dict.fromkeys(UNMODELED, _unmodeled),
})


# --------------------------------------------------------------------------------------------------
# AMD (64-lane wavefronts, LDS): the layouts are read and conversions classified, but Triton's AMD lowering
# (which ds_read / ds_write it emits) is not modelled, so no LDS wavefront is predicted (the LDS bank model
# itself is the target's: target.amd)
# --------------------------------------------------------------------------------------------------


def _amd_convert_layout(a: _Analyzer, at: _Site) -> UnmodeledOp | None:
    """A conversion across lanes or warps, listed as not modeled."""
    from linear_layouts.analysis.conversion import conversion_dims

    op = at.op
    s, d = a.typ(op.operand_types[0]), a.typ(op.result_types[0])
    if not s.encoding or is_shared_encoding(s.encoding) or is_shared_encoding(d.encoding):
        return None
    try:
        dims = conversion_dims(a.linear(s), a.linear(d))
    except LayoutError as error:
        return at.unmodeled(f"AMD: {error}")
    if not dims or dims == ("register",):
        return None
    what = "warp" if "warp" in dims else "lane"
    return at.unmodeled(f"AMD conversion across {what}s ({a.name(s)} -> {a.name(d)}): Triton's AMD lowering through "
                        "LDS is not modelled")


def _amd_lds_access(a: _Analyzer, at: _Site) -> UnmodeledOp | None:
    """An LDS access (its layouts read), listed as not modeled; a reduction only has its layouts read."""
    op = at.op
    if op.name == "ttg.local_alloc" and not op.operand_types:
        return None
    for t in op.operand_types + op.result_types:
        info = a.typ(t)
        if info.encoding:
            try:
                a.linear(info)
            except LayoutError:
                pass
    if op.name == "tt.reduce":
        return None
    return at.unmodeled("AMD LDS access: Triton's AMD lowering (its ds_read / ds_write) is not modelled")


_AMD_HANDLERS: Mapping[str, Callable[[_Analyzer, _Site], SharedOp | UnmodeledOp | None]] = MappingProxyType({
    "ttg.convert_layout": _amd_convert_layout,
    **dict.fromkeys(("ttg.local_load", "ttg.local_store", "ttg.local_alloc", "ttg.async_copy_global_to_local",
                     "amdg.buffer_load_to_local", "tt.reduce"), _amd_lds_access),
})


@dataclass(frozen=True)
class _Unread:
    """An encoding the attribute resolver could not read (its repr says why)."""

    error: str

    def __repr__(self) -> str:
        return f"(not read: {self.error})"


def _results_used(fn: Function) -> set[int]:
    """``id(op)`` of the ops whose first result is used later in its region (or in regions nested
    there): SSA names are scoped by region in Triton's printing, so a use is looked for in scope."""
    used: set[int] = set()

    def operands(op: Op) -> set[str]:
        out = {o.split("#")[0] for o in op.operands}
        for region in op.regions:
            for inner in region.ops:
                out |= operands(inner)
        return out

    def visit(ops: tuple[Op, ...]) -> None:
        later: set[str] = set()
        for op in reversed(ops):
            if op.results and op.results[0].split("#")[0] in later:
                used.add(id(op))
            later |= operands(op)
            for region in op.regions:
                visit(region.ops)

    visit(fn.body.ops)
    return used


#: ops that touch no memory and hold no barrier: ptxas may move a load past them
_PURE = ("arith.", "math.", "tt.splat", "tt.addptr", "tt.broadcast", "tt.expand_dims", "tt.make_range")


def _tail_conversion(fn: Function) -> int | None:
    """``id`` of the function's last ``convert_layout`` when nothing follows it at the top level but pure
    ops and global stores (``tt.store``) of values derived from it alone, up to the return: ptxas then
    sinks its ``ld.shared`` behind the stores' early exit (``triton_lowering.convert_lowering``'s ``tail``)."""
    derived: set[str] = set()
    trailing: list[Op] = []
    for op in reversed(fn.body.ops):
        if op.name == "ttg.convert_layout" and op.results:
            name = op.results[0]
            stores = [o for o in trailing if o.name == "tt.store"]
            ok = stores and all(len(o.operands) > 1 and _derives(o.operands[1], name, trailing) for o in stores)
            return id(op) if ok else None
        if op.regions or not (op.name in ("tt.return", "tt.store") or op.name.startswith(_PURE)):
            return None
        trailing.append(op)
    return None


def _derives(value: str, source: str, ops: list[Op]) -> bool:
    """``value`` is ``source`` or computed (by ``ops``) from it and from nothing else that is a tensor
    result of ``ops``' own (constants and earlier values are fine). Walked with a stack, each value once
    (a chain of element-wise ops as long as the kernel is no recursion, and no scan of ``ops`` per step)."""
    producers: dict[str, Op] = {}
    for o in ops:
        if o.results:
            producers.setdefault(o.results[0], o)
    stack, seen = [value], set()
    while stack:
        name = stack.pop().split("#")[0]
        if name == source:
            return True
        if name in seen:
            continue
        seen.add(name)
        producer = producers.get(name)
        if producer is not None:
            stack.extend(reversed(producer.operands))
    return False


def _strip(layout: LinearLayout) -> LinearLayout:
    """The (register, lane, warp) part of a distributed layout (one CTA)."""
    dims = [d for d in ("register", "lane", "warp") if layout.has_in_dim(d)]
    return layout.sublayout(dims, layout.out_dim_names)


@checked
def analyze_module(module: Module, *, resolver: Resolver | None = None, name: str | None = None,
                   counts: Mapping[int, int | None] | None = None, cc: int | None = None,
                   with_triton_estimate: bool = True, triton_version: str = "",
                   with_recognition: bool = True, target: Target | None = None) -> KernelReport:
    """The report of a parsed TTGIR module (module doc). ``counts`` (``id(op) -> executions``, from
    ``trips.grid_op_counts``) adds execution counts; ``target``: the target the kernel is analyzed for
    (default: the one its ``ttg.target`` names, ``target_for_module``; ``cc``: a compute capability
    instead); ``with_recognition``: name each ``#ttg.linear`` layout by the simplest Gluon class that
    produces it.

    Requires: the module's CTAs (``ttg.num-warps`` x ``ttg.threads-per-warp`` x ``ttg.num-ctas`` threads) at
    most ``limits.MAX_ELEMENTS`` threads, each count a power of two: the analysis simulates every warp; every
    distributed layout that reads of those threads (``encodings.check_layouts_fit``)."""
    check_cta_threads(module)
    _check_layouts_fit(module)
    layouts = Layouts(module, resolver)
    fn = module.functions[0]
    if target is None:
        target = named_target(f"sm_{cc}") if cc is not None else target_for_module(module.target)
    analyzer = _Analyzer(module, layouts, target, counts, with_triton_estimate, triton_version)
    depths = _loop_depths(fn)
    ops: list[SharedOp] = []
    unmodeled: list[UnmodeledOp] = []
    for index, op in enumerate(fn.walk()):
        try:
            item = analyzer.shared_op(index, op, depths.get(id(op), 0))
        except LayoutError as error:
            item = UnmodeledOp(index, op.name, op.loc, f"layout not understood: {error}", analyzer.count(op))
        except (IndexError, KeyError) as error:  # an op without its types, a layout without its dims
            item = UnmodeledOp(index, op.name, op.loc, f"malformed op ({type(error).__name__}: {shorten(str(error))})",
                               analyzer.count(op))
        if isinstance(item, SharedOp):
            ops.append(item)
        elif isinstance(item, UnmodeledOp):
            unmodeled.append(item)
    from linear_layouts.triton_model.encodings import module_types

    for t in module_types(module).values():
        try:
            analyzer.linear(t)
        except LayoutError:
            pass
    entries = []
    for encoding in dict.fromkeys(_encodings(module)):
        try:
            desc = layouts.descriptor(encoding)
        except LayoutError as error:
            desc = _Unread(str(error))
        shapes = analyzer.used.get(encoding, {})
        recognized = None
        kind = kind_of(desc)
        if with_recognition and shapes and kind is not None and kind.general:
            from linear_layouts.layouts.recognize import recognize

            try:
                found = recognize(next(iter(shapes.values())))
                recognized = found if type(found) is not type(desc) else None
            except LayoutError:
                recognized = None
        entries.append(LayoutEntry(layouts.name_of(encoding), encoding, desc, is_shared_encoding(encoding),
                                   tuple(shapes.items()), recognized))
    return KernelReport(name or fn.name, module.target, module.num_warps, module.threads_per_warp, tuple(entries),
                        tuple(ops), tuple(unmodeled), module, triton_version, counts is not None)


def check_cta_threads(module: Module) -> None:
    """LayoutError unless ``module``'s warps, lanes and CTAs are powers of two whose product (the threads the
    report simulates, warp by warp) is at most ``limits.MAX_ELEMENTS`` (a GPU runs at most 1024 per CTA).

    >>> from linear_layouts.triton_model.ir_text import parse_module
    >>> check_cta_threads(parse_module('module attributes {"ttg.num-warps" = 65536 : i32} {\\n'
    ...                                'tt.func @k() {\\n tt.return\\n }\\n}'))
    Traceback (most recent call last):
    ...
    linear_layouts.core.errors.LayoutError: ttgir: ttg.num-warps = 65536 x ttg.threads-per-warp = 32 x ttg.num-ctas = 1 is 2097152 threads, above the 1048576 the report simulates (linear_layouts.limits.MAX_ELEMENTS; a GPU runs at most 1024 threads per CTA)
    """
    counts = (("ttg.num-warps", module.num_warps), ("ttg.threads-per-warp", module.threads_per_warp),
              ("ttg.num-ctas", module.num_ctas))
    for key, value in counts:
        if value < 1 or value & (value - 1):
            raise LayoutError(f"ttgir: module attribute {key} = {value} must be a power of two (1, 2, 4, ...)")
    threads = counts[0][1] * counts[1][1] * counts[2][1]
    if threads > MAX_ELEMENTS:
        raise LayoutError(f"ttgir: {' x '.join(f'{k} = {v}' for k, v in counts)} is {threads} threads, above the "
                          f"{MAX_ELEMENTS} the report simulates (linear_layouts.limits.MAX_ELEMENTS; a GPU runs at "
                          "most 1024 threads per CTA)")


def check_has_layouts(module: Module, argument: str = "ttgir") -> None:
    """LayoutError naming ``argument`` when ``module`` is layout-free TTIR: no ``ttg.num-warps`` module
    attribute and no tensor with a layout encoding (``#ttg.blocked<...>`` or an alias of one). The report
    reads Triton's layouts, which only the TTGIR (after ``convert-triton-to-tritongpu``) carries; a TTIR
    read as one would be a 4-warp kernel with no layout and no op.

    >>> from linear_layouts.triton_model.ir_text import parse_module
    >>> check_has_layouts(parse_module('module {\\n tt.func @k(%x: tensor<64xf32>) {\\n tt.return\\n }\\n}'), "f.ttir")
    Traceback (most recent call last):
    ...
    linear_layouts.core.errors.LayoutError: f.ttir: layout-free TTIR (no ttg.num-warps, no #ttg. layout on its tensors): report needs the kernel's TTGIR (TRITON_KERNEL_DUMP's .ttgir file, or the compiled kernel's .asm["ttgir"]) or the kernel file (.py) itself
    """
    from linear_layouts.triton_model.encodings import module_types

    if "ttg.num-warps" in module.attributes or module_types(module):
        return
    raise LayoutError(f"{argument}: layout-free TTIR (no ttg.num-warps, no #ttg. layout on its tensors): report needs "
                      "the kernel's TTGIR (TRITON_KERNEL_DUMP's .ttgir file, or the compiled kernel's "
                      '.asm["ttgir"]) or the kernel file (.py) itself')


def _check_layouts_fit(module: Module) -> None:
    """``encodings.check_layouts_fit`` of the layouts that read (a missing ``ttg.num-warps`` read as 4 must
    not price an 8-warp layout), where every op runs on the module's warps: not in a ``ttg.warp_specialize``
    kernel, whose partitions run on warps of their own."""
    if not any(op.name == "ttg.warp_specialize" for fn in module.functions for op in fn.walk()):
        check_layouts_fit(module, "ttgir", unread_ok=True)


def _encodings(module: Module) -> list[str]:
    from linear_layouts.triton_model.encodings import module_types

    return [t.encoding for t in module_types(module).values()]


@checked
def analyze_ttgir(text: str, **kwargs: Any) -> KernelReport:
    """``analyze_module(parse_module(text), ...)``; an ``MLIR_ENABLE_DUMP`` log is cut to its last module."""
    from linear_layouts.triton_model.ir_text import last_module

    return analyze_module(parse_module(last_module(text)), **kwargs)
