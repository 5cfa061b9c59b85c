"""Registers a TTGIR keeps live per thread, estimated from its layouts, and what that does to occupancy.

A tensor value in a distributed layout holds ``2^k`` distinct registers per thread (``distinct_registers``:
``k`` counts its nonzero register bases, less those along which ``axis_info`` finds the value constant or
contiguous -- LLVM keeps one register and adds immediates; copies along zero bases are one value), each
``bits / 32`` 32-bit registers (16-bit values travel in pairs, 8-bit in fours, an ``i1`` mask one bit; a
pointer or an ``i64`` two); a constant tensor takes none (immediates). A value is live from its definition to its last use
(``liveness.value_live_ranges``: MLIR's liveness after ``scf-to-cf``, so a value defined before a loop
and used in it is live through the loop), its registers free for the result of the op that uses it last
(an accumulator updated in place is one set of registers); the estimate is the largest sum over the ops of the function
of the values live there, plus the scalars (each one or two registers). ptxas then allocates what it
needs, at most ``MAX_REGISTERS``; above that it spills to local memory.

Occupancy (``occupancy``): CTAs one SM keeps resident on a ``target``, the least of what its registers
(``Target.sm_registers``, allocated per warp in units of ``REGISTER_UNIT``, at most
``Target.thread_registers`` a thread), its threads (``Target.sm_threads``), its shared memory
(``Target.sm_shared_bytes``, each CTA taking ``Target.cta_reserved_shared_bytes`` more) and ``SM_CTAS``
allow (NVIDIA's CUDA occupancy rules for sm_80 / sm_90 / sm_100).

>>> occupancy(registers=128, threads=256, shared_bytes=0)
2
>>> occupancy(registers=32, threads=128, shared_bytes=64 * 1024)
3
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from linear_layouts.core.arguments import checked
from linear_layouts.core.errors import LayoutError
from linear_layouts.triton_model.axis_info import AxisInfo, axis_info
from linear_layouts.triton_model.encodings import Layouts, parse_type
from linear_layouts.triton_model.ir_text import Module, iter_args
from linear_layouts.triton_model.liveness import lower_function, value_live_ranges
from linear_layouts.target import DEFAULT_TARGET, Target, resolve

__all__ = ["RegisterEstimate", "register_estimate", "distinct_registers", "occupancy", "MAX_REGISTERS", "SM_REGISTERS", "SM_CTAS",
           "REGISTER_UNIT"]

#: the most 32-bit registers ptxas gives one thread, and an SM's register file: the default target's
#: (``Target.thread_registers``, ``Target.sm_registers``; 255 and 64 K on sm_80 .. sm_100)
MAX_REGISTERS = DEFAULT_TARGET.thread_registers
SM_REGISTERS = DEFAULT_TARGET.sm_registers
#: CTAs one SM keeps resident at most (sm_90: 32)
SM_CTAS = 32
#: registers are allocated to a warp in units of this many per thread (256 per warp)
REGISTER_UNIT = 8


@dataclass(frozen=True)
class RegisterEstimate:
    """``per_thread``: the estimated peak of 32-bit registers live per thread; ``at``: the walk index of the
    op where it peaks (-1 for an op the lowering adds); ``values``: the tensor values live there with their
    registers, largest first."""

    per_thread: int
    at: int
    values: tuple[tuple[str, float], ...] = ()

    @property
    def spills(self) -> bool:
        """More live than ptxas may give a thread: it spills."""
        return self.per_thread > MAX_REGISTERS


def _bits(element: str) -> float:
    t = parse_type(element)
    if element.startswith("!tt.ptr") or t.kind == "ptr":
        return 64.0
    if element == "i1":
        return 1.0
    return float(t.bitwidth or 32)


def _types(module: Module) -> dict[str, str]:
    """Every value name of the first function -> its type text (op results, block and loop arguments)."""
    fn = module.functions[0]
    types = dict(fn.args)
    for op in fn.walk():
        results = op.result_types
        if op.name == "tt.load":  # the text spells only the pointer type: the result holds its pointee
            results = tuple(re.sub(r"!tt\.ptr<([^<>]+)>", r"\1", t) for t in results)
        types.update(zip(op.results, results))
        if op.name == "scf.for":
            types.update(zip((arg for arg, _ in iter_args(op.text)), op.result_types))
        for region in op.regions:
            types.update(region.args)
    return types


@checked
def register_estimate(module: Module) -> RegisterEstimate:
    """The registers ``module``'s first function keeps live per thread at its peak (module doc)."""
    fn = module.functions[0]
    layouts = Layouts(module)
    types = _types(module)
    info = axis_info(fn)
    constants = {op.results[0] for op in fn.walk() if op.name == "arith.constant" and op.results}
    lowered = lower_function(fn)
    names = {v for op in lowered.ops for v in op.uses + op.results} | {a for b in lowered.blocks for a in b.args}
    sizes: dict[str, float] = {}
    for name in names:
        ty = types.get(name) or types.get(name.split("#")[0])
        if ty is None:
            continue
        t = parse_type(ty, module)
        if t.kind == "tensor":
            try:
                layout = layouts.linear(t)
            except LayoutError:
                continue
            if name in constants:
                continue  # a constant tensor is immediates (or one register)
            regs = distinct_registers(layout, info.get(name))
            sizes[name] = regs * _bits(t.element) / 32
        elif t.kind in ("scalar", "ptr"):
            sizes[name] = 2.0 if _bits(t.element) > 32 else 1.0
    ranges = value_live_ranges(lowered, set(sizes))
    events: dict[int, float] = {}
    for name, (low, high) in ranges.items():  # [definition, last use): a dying operand's registers are its result's
        if high > low:
            events[low] = events.get(low, 0.0) + sizes[name]
            events[high] = events.get(high, 0.0) - sizes[name]
    live, peak, at = 0.0, 0.0, 0
    for point in sorted(events):
        live += events[point]
        if live > peak + 1e-9:
            peak, at = live, point
    there = sorted(((n, s) for n, s in sizes.items() if n in ranges and ranges[n][0] <= at < ranges[n][1]
                    and s >= 1), key=lambda item: -item[1])
    op_at = lowered.ops[at].index if at < len(lowered.ops) else -1
    return RegisterEstimate(int(round(peak)), op_at, tuple((n, round(s, 2)) for n, s in there[:8]))


def distinct_registers(layout, info: AxisInfo | None) -> int:
    """Registers of one thread that hold values LLVM cannot derive from another register of the thread by
    a constant: ``2^k`` for the ``k`` nonzero register bases that are not free, a basis ``2^j`` along a dim
    being free where the value is constant there (``AxisInfo.constancy`` > ``2^j``: the same value) or
    contiguous (``contiguity`` > ``2^j``: the value plus an immediate).

    >>> from linear_layouts.layouts import BlockedLayout
    >>> L = BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0]).to_linear([32, 16])
    >>> distinct_registers(L, None), distinct_registers(L, AxisInfo((1, 16), (1, 16), (1, 1)))
    (4, 1)
    """
    count = 0
    for basis in layout.bases.get("register", []):
        dims = [(d, v) for d, v in enumerate(basis) if v]
        if not dims:
            continue
        if info is not None and len(dims) == 1:
            d, v = dims[0]
            if d < info.rank and (info.constancy[d] > v or info.contiguity[d] > v):
                continue
        count += 1
    return 1 << count


@checked
def occupancy(*, registers: int, threads: int, shared_bytes: int, target: Target | None = None) -> int:
    """CTAs one SM of ``target`` (default: the default target) keeps resident with ``registers`` per thread,
    ``threads`` per CTA and ``shared_bytes`` of shared memory per CTA (module doc); at least 1 (a CTA that
    fits nowhere does not launch at all)."""
    if threads < 1:
        raise LayoutError(f"threads must be a positive number of threads per CTA, got {threads}")
    t = resolve(target)
    lanes = t.lanes
    warps = -(-threads // lanes)
    per_warp = -(-min(max(registers, 1), t.thread_registers) // REGISTER_UNIT) * REGISTER_UNIT * lanes
    by_registers = t.sm_registers // (per_warp * warps)
    by_threads = t.sm_threads // (warps * lanes)
    reserved = t.cta_reserved_shared_bytes
    by_shared = t.sm_shared_bytes // (shared_bytes + reserved) if shared_bytes else SM_CTAS
    return max(1, min(by_registers, by_threads, by_shared, SM_CTAS))
