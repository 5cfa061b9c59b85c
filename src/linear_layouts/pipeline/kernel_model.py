"""A whole-kernel time model of a TTGIR, for judging a rewrite of it against Triton's own: what the
layouts change -- the conversions and stagings through shared memory, the global loads, stores and
atomics as Triton lowers them (their vector widths, ``triton_model.global_access``), the shuffles and
combines of reductions and scans, the registers kept live and the occupancy they allow -- each op weighted
by how often it runs. What the layouts do not change
(the dots, the element-wise math) is left out: it adds to both sides alike.

Per CTA, in SM-nanoseconds (the time one SM is busy with it):

* ``shared_ns``: the report's time of every conversion and staging that moves data
  (``engine_compare``'s Triton side, ``SharedOp.triton_time``) and of the partials of every reduction
  and scan across warps, times its executions;
* ``warp_ns``: every ``tt.reduce`` / ``tt.scan``'s work inside the warps (``triton_model.warp_work``: its
  combines and ``shfl.sync``, as many as Triton 3.6's PTX has) at the device's measured cost of a shuffle
  and an ALU op, times its executions;
* ``global_ns``: each global instruction of each warp that issues it (a load: every warp, a copy's warp
  again at the L2 footprint; a store or atomic: the warps holding distinct data, Triton masks the others),
  at the measured cost of its op, element, bytes per lane and how its lanes fall into contiguous runs
  (``analysis.global_costs``: the device's microbenchmark table), times its executions (a gather's
  data-dependent dims have unknown strides, ``ttir_import``: no layout makes them coalesced). Without a table
  for the device, ``engine.anchors.global_cost`` (L1 wavefronts and L2 sectors; it does not see
  instruction counts) prices each op instead (and any op whose form the table lacks), and the gate refuses
  narrower accesses it cannot price; a TMA copy costs its tile's bytes as coalesced 16-byte requests;
* the executions: ``trips.op_counts`` for the first CTA with the kernel's integer arguments, where
  known; a loop whose trip count is not known runs once in ``cta_ns`` and "long" (its body dominates
  everything outside it) in ``cta_ns_long``.

Time per CTA: ``shared + global + warp``. A conversion's barriers stall the warps that would keep global
requests in flight, so the two do not hide each other. An atomic ordered ``acq_rel`` (or ``acquire`` /
``release``) carries a fence: each thread waits for it before its next one, so its op costs at least
``per thread x`` the table's latency of one (``small``: one warp per SM) divided by the CTAs an SM
overlaps (``concurrent``: the occupancy, no more than the CTAs per SM the grid gives, where the grid is
known). ``occupancy`` comes from the register estimate (``triton_model.registers``), the threads and the
shared memory (``shared_memory.shared_memory_need``).

``predicted_gain(triton, ours)``: ``1 - ours / triton`` of those times (the smaller of the two where a
trip count is unknown).

>>> from linear_layouts.pipeline.kernel_model import KernelTime
>>> triton, ours = KernelTime(shared_ns=100.0, global_ns=300.0), KernelTime(shared_ns=0.0, global_ns=310.0)
>>> triton.cta_ns, round(predicted_gain(triton, ours), 3)
(400.0, 0.225)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from linear_layouts.analysis.global_costs import GlobalCostTable, global_table, global_table_for, table_op
from linear_layouts.core.arguments import checked
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import parse_int
from linear_layouts.core.mlir_text import DIGITS
from linear_layouts.triton_model.global_access import GlobalAccess, global_accesses
from linear_layouts.triton_model.ir_text import Module, check_well_formed, op_key
from linear_layouts.target import Target, target_for_module

__all__ = ["KernelTime", "GlobalOpTime", "kernel_time", "predicted_gain", "LONG_LOOP", "narrowed_accesses"]

#: executions given to an op in a loop of unknown trip count in the "long" scenario (its body dominates)
LONG_LOOP = 1 << 20


@dataclass(frozen=True)
class GlobalOpTime:
    """One global op of a TTGIR as the model prices it: walk ``index``, the instruction (``key``) and its bytes
    per lane, per thread, the warps issuing it, the mean sectors of its requests, its executions per CTA
    (``None``: unknown), its SM-ns per execution and ``site`` (``ir_text.op_key``: the op of the kernel's
    source it is, the same in a rewrite of the TTGIR)."""

    index: int
    key: str
    per_thread: int
    warps: int
    sectors: float
    executions: int | None
    ns: float
    vector_bytes: int = 0
    site: tuple = ()


@dataclass(frozen=True)
class KernelTime:
    """A TTGIR's predicted time per CTA (module doc): ``shared_ns``, ``global_ns`` (unknown loops once) and
    their "long" versions, the register estimate, ``occupancy`` (CTAs per SM), ``concurrent`` (CTAs
    overlapping on an SM), the shared memory, ``unknown_trips`` (a loop of unknown trip count), the global
    ops and the table that priced them (``""``: the legacy sector model)."""

    shared_ns: float
    global_ns: float
    shared_ns_long: float = 0.0
    global_ns_long: float = 0.0
    registers: int = 0
    occupancy: int = 1
    concurrent: int = 1
    shared_bytes: int = 0
    unknown_trips: bool = False
    global_ops: tuple[GlobalOpTime, ...] = field(default=(), repr=False)
    table: str = ""
    warp_ns: float = 0.0
    warp_ns_long: float = 0.0

    @property
    def cta_ns(self) -> float:
        """SM-ns per CTA, loops of unknown trip count run once."""
        return self.shared_ns + self.global_ns + self.warp_ns

    @property
    def cta_ns_long(self) -> float:
        """SM-ns per CTA (in units of ``LONG_LOOP``) when loops of unknown trip count dominate."""
        return self.shared_ns_long + self.global_ns_long + self.warp_ns_long

    @property
    def spills(self) -> bool:
        from linear_layouts.triton_model.registers import MAX_REGISTERS

        return self.registers > MAX_REGISTERS


def _by_site(t: KernelTime) -> dict[tuple, list[GlobalOpTime]]:
    """The global ops of ``t`` by the op of the kernel's source they are (``GlobalOpTime.site``), in order."""
    out: dict[tuple, list[GlobalOpTime]] = {}
    for g in t.global_ops:
        out.setdefault(g.site, []).append(g)
    return out


def _segment_only(triton: KernelTime, ours: KernelTime) -> tuple[float, float]:
    """What ``ours``' global time differs from ``triton``'s by ops that are the same instructions (key, count
    per thread, warps, executions) touching the same sectors per request at the same site (the k-th of a
    site matched to the k-th), priced apart only by how their lanes group into contiguous runs: (once, long)."""
    theirs, delta = _by_site(triton), [0.0, 0.0]
    for site, ops in _by_site(ours).items():
        for t, o in zip(theirs.get(site, []), ops):
            same = (t.key, t.per_thread, t.warps, t.executions) == (o.key, o.per_thread, o.warps, o.executions)
            if same and abs(t.sectors - o.sectors) <= 1e-9:
                delta[0] += (o.ns - t.ns) * _weight(o.executions, False)
                delta[1] += (o.ns - t.ns) * _weight(o.executions, True) / LONG_LOOP
    return delta[0], delta[1]


def predicted_gain(triton: KernelTime, ours: KernelTime) -> float:
    """``1 - ours / triton`` (module doc): the fraction of Triton's time the rewrite saves; where a trip
    count is unknown, the smaller over the two scenarios (a loop run once, a loop that dominates). A global
    op that stays the same instructions over the same sectors and differs only in how its lanes group into
    contiguous runs is priced as Triton's: the table measures that grouping on a streaming loop, and a
    kernel that also computes does not show it, so the model does not act on it."""
    once, long = _segment_only(triton, ours)
    gains = []
    for t, o in ((triton.cta_ns, ours.cta_ns - once), (triton.cta_ns_long, ours.cta_ns_long - long)):
        if t > 0:
            gains.append(1.0 - o / t)
    if not gains:
        return 0.0
    return min(gains) if (triton.unknown_trips or ours.unknown_trips) else gains[0]


def _executions(module: Module, scalars: Mapping[str, int] | None, grid: tuple[int, ...] | None) -> list[int | None]:
    """Executions of each op (walk order) in the first CTA (``trips.op_counts``), ``None`` where unknown."""
    from linear_layouts.triton_model.trips import op_counts

    fn = module.functions[0]
    walk = list(fn.walk())
    grid3 = tuple(grid or ()) + (1,) * (3 - len(grid or ()))
    try:
        counts = op_counts(fn, dict(scalars or {}), program_id=(0, 0, 0), num_programs=grid3)
    except LayoutError:
        return [None] * len(walk)
    return [counts.get(id(op)) for op in walk]


def _weight(count: int | None, long: bool) -> float:
    if count is None:
        return float(LONG_LOOP) if long else 1.0
    return float(count)


def _requests(layout: LinearLayout, strides: tuple[int, ...], bits: int, vec: int) -> tuple[list[tuple[int, float]], int]:
    """Per instruction of warp 0 (registers ``i*vec ..`` of the distinct registers, Triton's order): the
    distinct 32-byte sectors its lanes touch at element ``strides`` and its lanes per contiguous run (the
    distinct lane addresses over the runs of consecutive vectors); and the warps with distinct data."""
    from linear_layouts.engine.transfer import standard_outs

    layout = standard_outs(layout).remove_zero_bases_along_dim("register")
    regs = layout.in_dim_size("register")
    starts = np.arange(0, regs, max(1, vec), dtype=np.int64)
    lanes = np.arange(layout.in_dim_size("lane"), dtype=np.int64)
    coords = layout.apply_array({"register": starts[:, None], "lane": lanes[None, :]})
    addr = sum(coords[f"dim{d}"].astype(np.int64) * s for d, s in enumerate(strides)) * bits // 8
    addr = np.broadcast_to(addr, (len(starts), len(lanes)))
    width = max(1, vec * bits // 8)
    out = []
    for row in addr:
        distinct = np.unique(row)
        runs = 1 + int(np.count_nonzero(np.diff(distinct) != width))
        sectors = len(np.unique(distinct // 32))
        out.append((sectors, len(distinct) / runs))
    warps = 1 << sum(1 for b in layout.flat_bases("warp", missing_ok=True) if b)
    return out, warps


#: atomics that carry a fence (``MEMBAR`` before the next memory access of the thread)
_FENCED = ("acq_rel", "acquire", "release")


def _global_op_time(access: GlobalAccess, pointer, table: GlobalCostTable | None, num_warps: int,
                    executions: int | None, concurrent: int = 1) -> GlobalOpTime:
    """One global op's SM-ns per execution (module doc)."""
    from linear_layouts.engine.anchors import global_cost

    instruction = access.instruction
    if access.layout is None:  # a scalar pointer: one thread's instruction per CTA (stores, atomics), or every warp's
        requests, distinct = [(1, 1.0)], 1
        warps = 1 if access.is_store else num_warps
    else:
        strides = tuple(int(s) for s in pointer.attr("strides"))
        requests, distinct = _requests(access.layout, strides, access.bits, access.vec)
        warps = distinct if access.is_store else 1 << len(access.layout.flat_bases("warp", missing_ok=True))
    mean = float(sum(s for s, _ in requests)) / max(1, len(requests))
    op = table_op(instruction.kind, access.semantics)
    element = "b" if op in ("ld", "st") else (instruction.element if instruction.element in ("f32", "f16", "bf16")
                                              else "f32")
    nbytes = instruction.vector_bytes
    if table is not None and not table.has(op, element, nbytes):
        table = None  # nothing measured for this form: the sector model prices this op
    if table is None:
        if access.layout is None:
            ns = 0.0
        else:
            ns = global_cost(access.layout, tuple(int(s) for s in pointer.attr("strides")), pointer.attr("element"),
                             store=access.is_store, align=pointer.attr("align", 16))
        return GlobalOpTime(access.index, instruction.key, access.per_thread, warps, mean, executions, ns,
                            instruction.vector_bytes, op_key(access.op))
    per_request = [table.instruction_ns(op, element, nbytes, lanes_per_segment=g) for _, g in requests]
    per_warp = sum(per_request) * access.per_thread / max(1, len(per_request))
    copies = 0
    if not access.is_store and access.layout is not None:  # warps loading another warp's data: L2 hits
        copies = warps - distinct
        warps = distinct
    ns = per_warp * warps
    if instruction.kind == "atom" and access.semantics in _FENCED and \
            table.has("atom.acq_rel", element, nbytes, footprint="l2", size="small"):
        latency = table.instruction_ns("atom.acq_rel", element, nbytes, lanes_per_segment=32, footprint="l2",
                                       size="small")
        ns = max(ns, access.per_thread * latency / max(1, concurrent))  # one fence after another
    if copies:
        l2 = [table.instruction_ns(op, element, nbytes, lanes_per_segment=g, footprint="l2")
              if table.has(op, element, nbytes, footprint="l2") else v for (_, g), v in zip(requests, per_request)]
        ns += sum(l2) * access.per_thread / max(1, len(l2)) * copies
    return GlobalOpTime(access.index, instruction.key, access.per_thread, warps + copies, mean, executions, ns,
                        instruction.vector_bytes, op_key(access.op))


#: TMA copies (``ttng``) of a tensor descriptor's tile: global -> shared (a load), shared -> global (a store)
_TMA = {"ttng.async_tma_copy_global_to_local": "ld", "ttng.async_tma_copy_local_to_global": "st"}


def _tma_ns(op, table: GlobalCostTable | None) -> float:
    """SM-ns of a TMA copy: its tile's bytes as coalesced 16-byte warp-requests (512 bytes, 16 sectors each)
    at the table's cost of one (the legacy model: its sectors at ``anchors.GLOBAL_SECTOR_NS``); 0 for any
    other op. The copy engine is not the LSU, but the bytes cross the same L2 and DRAM."""
    import re

    from linear_layouts.core.element_type import ir_element_bits
    from linear_layouts.engine.anchors import GLOBAL_SECTOR_NS

    kind = _TMA.get(op.name)
    if kind is None:
        return 0.0
    m = re.search(rf"!tt\.tensordesc<((?:{DIGITS}x)+)([\w]+)", op.text)
    if m is None:
        return 0.0
    sizes = m.group(1).rstrip("x").split("x")
    elements = math.prod(parse_int(d, f"ir text: {op.name}'s tensor descriptor: a size") for d in sizes)
    nbytes = elements * (ir_element_bits(m.group(2)) or 8) // 8
    requests = nbytes / 512
    if table is None:
        return requests * 16 * GLOBAL_SECTOR_NS
    if not table.has(kind, "b", 16):
        return 0.0
    return requests * table.instruction_ns(kind, "b", 16, lanes_per_segment=32)


def _tied_pointers(module: Module, accesses: tuple[GlobalAccess, ...], pointers: Mapping[tuple, list]) -> dict[int, object]:
    """Each access (walk index) -> the engine's pointer op of the TTIR tied to it by ``op_key`` (as
    ``engine_compare.ttgir_costs`` ties them; a ``cp.async`` stands for its load)."""
    seen: dict[tuple, int] = {}
    out: dict[int, object] = {}
    for access in accesses:
        op = access.op
        key = ("tt.load",) + op_key(op)[1:] if op.name == "ttg.async_copy_global_to_local" else op_key(op)
        options = pointers.get(key)
        if not options:
            continue
        k = seen.get(key, 0)
        seen[key] = k + 1
        out[access.index] = options[min(k, len(options) - 1)]
    return out


@checked
def kernel_time(ttgir: str, pointers: Mapping[tuple, list], *, scalars: Mapping[str, int] | None = None,
                grid: tuple[int, ...] | None = None, table: GlobalCostTable | None | str = "device",
                module: Module | None = None, target: Target | None = None) -> KernelTime:
    """The predicted time per CTA of the TTGIR text ``ttgir`` (module doc). ``pointers``: the TTIR's
    ``engine_compare.global_pointers`` (strides and alignment of each global access); ``scalars``: the
    kernel's integer arguments by name (``%K``), for loop trip counts; ``grid``: the launch grid, for the
    CTAs an SM overlaps (default: as many as fit); ``table``: the global cost table (default
    ``"device"``: the target's measured one of ``target/devices/global``, or the nearest, ``global_table_for``;
    ``None``: the legacy model); ``target``: the one the kernel runs on (default: the one its TTGIR names):
    its cost tables, SMs and occupancy."""
    from linear_layouts.pipeline.engine_compare import _counted, cost_report
    from linear_layouts.pipeline.shared_memory import shared_memory_need
    from linear_layouts.triton_model.registers import occupancy, register_estimate

    report = cost_report(ttgir, target)
    module = report.module if module is None else module
    if target is None:
        target = target_for_module(module.target)
    if isinstance(table, str):
        table = global_table_for(target) if table == "device" else global_table(table)
    check_well_formed(module, "ttgir")
    executions = _executions(module, scalars, grid)
    unknown = False
    shared = [0.0, 0.0]
    for op in report.ops:
        if not (_counted(op) or op.kind in ("reduce", "scan")):
            continue
        count = executions[op.index] if op.index < len(executions) else None
        unknown |= count is None
        ns = op.triton_time(target) or 0.0
        shared[0] += ns * _weight(count, False)
        shared[1] += ns * _weight(count, True) / LONG_LOOP
    registers = register_estimate(module).per_thread
    need = shared_memory_need(module, report).bytes
    threads = module.num_warps * module.threads_per_warp
    resident = occupancy(registers=min(registers, target.thread_registers), threads=threads, shared_bytes=need,
                         target=target)
    concurrent = resident
    if grid:
        ctas = math.prod(grid)
        concurrent = max(1, min(resident, -(-ctas // target.sms)))
    accesses = global_accesses(module)
    tied = _tied_pointers(module, accesses, pointers)
    times = []
    global_ = [0.0, 0.0]
    for access in accesses:
        pointer = tied.get(access.index)
        if pointer is None and access.layout is not None:
            continue  # an access the TTIR import does not model (descriptor loads, ...): the same in both
        count = executions[access.index] if access.index < len(executions) else None
        unknown |= count is None
        t = _global_op_time(access, pointer, table, module.num_warps, count, concurrent)
        times.append(t)
        global_[0] += t.ns * _weight(count, False)
        global_[1] += t.ns * _weight(count, True) / LONG_LOOP
    for index, op in enumerate(module.functions[0].walk()):  # TMA copies: the bytes of their tile
        ns = _tma_ns(op, table)
        if ns:
            count = executions[index] if index < len(executions) else None
            unknown |= count is None
            global_[0] += ns * _weight(count, False)
            global_[1] += ns * _weight(count, True) / LONG_LOOP
    warp = [0.0, 0.0]
    for index, ns in _warp_work(module, target):
        count = executions[index] if index < len(executions) else None
        unknown |= count is None
        warp[0] += ns * _weight(count, False)
        warp[1] += ns * _weight(count, True) / LONG_LOOP
    return KernelTime(shared[0], global_[0], shared[1], global_[1], registers, resident, concurrent, need, unknown,
                      tuple(times), table.name if table is not None else "", warp[0], warp[1])


def _warp_work(module: Module, target: Target) -> list[tuple[int, float]]:
    """(walk index, SM-ns) of each ``tt.reduce`` and ``tt.scan``'s work inside the warps: its combines and
    shuffles (``triton_model.warp_work``) at the target's measured cost of a ``shfl`` and an ALU op
    (``analysis.cost_model.conversion_time_ns``); its shared-memory part, across warps, is the report's."""
    from linear_layouts.analysis.cost_model import conversion_time_ns
    from linear_layouts.core.element_type import ir_element_bits
    from linear_layouts.triton_model.encodings import Layouts, parse_type
    from linear_layouts.triton_model.warp_work import combine_ops, reduce_warp_counts, scan_warp_counts

    layouts, out = None, []
    for index, op in enumerate(module.functions[0].walk()):
        if op.name not in ("tt.reduce", "tt.scan") or not op.operand_types:
            continue
        layouts = layouts or Layouts(module)
        try:
            info = parse_type(op.operand_types[0], module)
            if not info.encoding:
                continue
            layout = layouts.linear(info)
        except LayoutError:
            continue
        bits = [ir_element_bits(parse_type(t, module).element_type) or 32 for t in op.operand_types]
        counting = reduce_warp_counts if op.name == "tt.reduce" else scan_warp_counts
        counts = counting(layout, op.attr_int("axis") or 0, bits, combine_ops(op))
        out.append((index, conversion_time_ns(counts, module.num_warps, target=target)))
    return out


def narrowed_accesses(triton: KernelTime, ours: KernelTime) -> list[str]:
    """The global ops whose instructions move fewer bytes per lane in ``ours`` than in ``triton``
    (``"st.global.16B x16 -> st.global.8B x32"``, one line each): the same op of the kernel's source
    (``GlobalOpTime.site``, the k-th of a site matched to the k-th)."""
    lines = []
    mine = _by_site(ours)
    for site, ops in _by_site(triton).items():
        for a, b in zip(ops, mine.get(site, [])):
            if b.vector_bytes < a.vector_bytes:
                lines.append(f"{a.key} x{a.per_thread} -> {b.key} x{b.per_thread}")
    return lines
