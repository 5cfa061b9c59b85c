"""Our layout engine on a real kernel, against Triton's own choice: the kernel's TTIR (from the same
compile as its TTGIR) imported into the engine's tile IR (``ttir_import``), propagated, and compared
with the TTGIR's conversions.

Counted on each side, per CTA for one execution of every op (the engine's program has its loops
inlined once):

* Triton: ``convert_layout`` ops that move data between threads (shared memory or warp shuffles;
  register permutations are free), and register -> shared staging of values (``local_alloc %x`` /
  ``local_store``) with the ``local_load`` that reads them back, with their predicted wavefronts;
* ours: the engine's ``convert_layout`` ops with their plans' wavefronts.

Triton's pipelined ``cp.async`` / TMA copies move data global -> shared without registers; the engine
has no asynchronous copy, so a dot operand it reaches from a load counts as a conversion there.

>>> from linear_layouts.triton_model.ir_text import parse_module
>>> EngineComparison.__name__
'EngineComparison'
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from linear_layouts.core.arguments import checked
from linear_layouts.core.errors import LayoutError
from linear_layouts.triton_model.ir_text import Module, check_same_kernel, check_well_formed, op_key
from linear_layouts.pipeline.report import KernelReport
from linear_layouts.triton_model.lowering import NO_OP, REGISTERS, SHARED
from linear_layouts.engine import ir as tile_ir
from linear_layouts.pipeline.ttir_import import ImportedProgram, import_ttir
from linear_layouts.target import Target

__all__ = ["EngineComparison", "compare_with_engine", "MAX_ENGINE_OPS", "KernelCosts", "kernel_costs", "global_pointers",
           "ttgir_costs", "cost_report",
           "comparison_target"]

#: the most ops of an imported TTIR the engine propagates here: a larger program is not propagated in a
#: report (``compare_with_engine``'s ``error`` says so) and ``rewrite.rewrite_kernel`` refuses it with a
#: LayoutError (its ``max_ops`` raises the limit for one call). A rewrite's time grows about as the square
#: of the ops (benchmarks/results/engine.md).
MAX_ENGINE_OPS = 2000


@dataclass(frozen=True)
class EngineComparison:
    """Triton's conversions and shared traffic vs. our engine's on the same kernel (module doc)."""

    triton_conversions: int
    triton_stagings: int
    triton_wavefronts: int
    ours_conversions: int = 0
    ours_wavefronts: int = 0
    ours_kinds: tuple[str, ...] = ()
    unmodeled: tuple[tuple[str, str, str], ...] = ()
    notes: tuple[str, ...] = ()
    seconds: float = 0.0
    program_text: str = field(default="", repr=False)
    error: str = ""
    #: predicted SM-ns per CTA of the conversions and stagings counted on each side (``analysis.cost_model``)
    triton_ns: float | None = None
    ours_ns: float | None = None

    @property
    def ran(self) -> bool:
        return not self.error

    def faster(self, min_gain: float) -> bool:
        """The engine's layouts are predicted faster than Triton's by more than ``min_gain`` (a fraction:
        the report passes ``rewrite.MIN_GAIN``, the gain a rewrite needs)."""
        return (self.ran and self.triton_ns is not None and self.ours_ns is not None
                and self.ours_ns < (1 - min_gain) * self.triton_ns)


def _counted(op) -> bool:
    """A report op that moves data through shared memory or between threads: a ``convert_layout``
    that is not a register permutation, or a register <-> shared staging."""
    return (op.kind == "convert_layout" and op.triton.kind not in (NO_OP, REGISTERS)) or (
        op.kind in ("local_alloc", "local_store", "local_load") and op.triton.kind == SHARED)


def triton_side(report: KernelReport) -> tuple[int, int, int]:
    """Triton's (conversions, stagings, shared wavefronts per CTA) in ``report``: its ops that move data."""
    conversions = stagings = wavefronts = 0
    for op in filter(_counted, report.ops):
        conversions += op.kind == "convert_layout"
        stagings += op.kind in ("local_alloc", "local_store")
        wavefronts += op.triton.wavefronts
    return conversions, stagings, wavefronts


def plan_time_ns(plan, warps: int, target: Target | None = None) -> float:
    """A ``ConversionPlan`` in SM-ns per CTA on ``target``'s cost table (default: the default target's), as
    the report prices our plans (``SharedOp.ours_time``): its wavefronts over ``warps`` warps through shared
    memory, its shuffles, or 0 for a register permutation.

    >>> from types import SimpleNamespace
    >>> plan_time_ns(SimpleNamespace(kind="registers", shuffle=None), 4)
    0.0
    """
    from linear_layouts.analysis.cost_model import shared_time_ns, shuffle_time_ns

    if plan.kind == SHARED:
        return shared_time_ns(plan.wavefronts, False, warps, target=target)
    if plan.shuffle is not None:
        return shuffle_time_ns(plan.shuffle, target=target)
    return 0.0


def comparison_target(report: KernelReport, cc: int | None = None, target: Target | None = None) -> Target:
    """The one target a comparison lays out and prices for: ``target``, else the one compute capability
    ``cc`` names (``sm_{cc}``), else the one ``report``'s TTGIR names (``target_for_module``): the op rows
    of the report and both sides of the comparison read one cost table.

    >>> from types import SimpleNamespace
    >>> from linear_layouts.target import named_target
    >>> comparison_target(SimpleNamespace(target="cuda:90"), target=named_target("sm_90", "H200")).device
    'H200'
    >>> comparison_target(SimpleNamespace(target="cuda:80")).arch
    'sm_80'
    """
    from linear_layouts.target import named_target, target_for_module

    if target is not None:
        return target
    return named_target(f"sm_{cc}") if cc is not None else target_for_module(report.target)


@checked
def compare_with_engine(report: KernelReport, ttir: Module, *, scalars: dict[str, int] | None = None,
                        cc: int | None = None, max_ops: int = MAX_ENGINE_OPS,
                        target: Target | None = None) -> EngineComparison:
    """Import ``ttir`` (the same compile as ``report``'s TTGIR), propagate it with our engine and compare
    (module doc) on one target, ``comparison_target(report, cc, target)``: the engine lays out and both
    sides are priced on its cost table. Programs above ``max_ops`` ops are imported but not propagated
    (``error`` says so)."""
    from linear_layouts.engine import propagate

    t_conv, t_stage, t_wave = triton_side(report)
    target = comparison_target(report, cc, target)
    try:
        check_same_kernel(ttir, report.module)
    except LayoutError as error:
        return EngineComparison(t_conv, t_stage, t_wave, error=str(error))
    imported = import_ttir(ttir, cc=cc, scalars=scalars, num_warps=report.num_warps, target=target)
    base = dict(triton_conversions=t_conv, triton_stagings=t_stage, triton_wavefronts=t_wave,
                unmodeled=imported.unmodeled, notes=imported.notes)
    n = len(imported.program.ops)
    if n > max_ops:
        return EngineComparison(**base, error=f"{n} ops: above the {max_ops}-op limit for a report's engine run")
    start = time.time()
    try:
        result = propagate(imported.program, target=target)
    except LayoutError as error:
        return EngineComparison(**base, error=f"the engine could not lay out the imported program: {error}")
    kinds = tuple(c.plan.kind if c.plan is not None else "?" for c in result.conversions)
    wavefronts = sum(c.plan.wavefronts for c in result.conversions if c.plan is not None)
    seconds = round(time.time() - start, 2)
    triton_ns = sum(op.triton_time(target) or 0.0 for op in filter(_counted, report.ops))
    ours_ns = None if any(c.plan is None for c in result.conversions) else \
        sum(plan_time_ns(c.plan, report.num_warps, target) for c in result.conversions)
    return EngineComparison(**base, ours_conversions=len(result.conversions), ours_wavefronts=wavefronts,
                            ours_kinds=kinds, seconds=seconds, program_text=result.to_text(),
                            triton_ns=triton_ns, ours_ns=ours_ns)


@dataclass(frozen=True)
class KernelCosts:
    """A TTGIR's predicted cost per CTA, each op once: ``conversions`` that move data, register -> shared
    ``stagings``, their shared ``wavefronts`` and time (``shared_ns``, the report's ``triton_time(target)``),
    and the global loads / stores' time (``global_ns``, ``engine.anchors.global_cost`` at the strides,
    element type and alignment the kernel's TTIR gives each pointer): the same units as the engine's;
    ``shared_bytes``: the shared memory Triton's allocation gives it (``shared_memory.shared_memory_need``)."""

    conversions: int
    stagings: int
    wavefronts: int
    shared_ns: float
    global_ns: float
    shared_bytes: int = 0

    @property
    def total_ns(self) -> float:
        return self.shared_ns + self.global_ns


#: TTGIR ops that access global memory through a pointer tensor (operand 0)
_GLOBAL_OPS = ("tt.load", "tt.store", "tt.atomic_rmw", "tt.atomic_cas", "ttg.async_copy_global_to_local")


@checked
def kernel_costs(ttir: str, ttgir: str, *, num_warps: int | None = None,
                 scalars: dict[str, int] | None = None, target: Target | None = None) -> KernelCosts:
    """The predicted costs of the TTGIR text ``ttgir`` (Triton's, or a rewrite of it) whose TTIR text is
    ``ttir`` (same compile); global accesses are tied to the TTIR's by (op, source location) as ``kernels.rewrite``
    ties values, a pipelined ``cp.async`` standing for its load.

    >>> KernelCosts(1, 0, 128, 97.0, 490.0).total_ns
    587.0
    """
    from linear_layouts.triton_model.ir_text import parse_module

    ttir_module, ttgir_module = parse_module(ttir), parse_module(ttgir)
    check_same_kernel(ttir_module, ttgir_module)
    imported = import_ttir(ttir_module, num_warps=num_warps or ttgir_module.num_warps, scalars=dict(scalars or {}),
                           target=target)
    return ttgir_costs(global_pointers(ttir_module, imported), ttgir, ttgir_module, target=target)


def global_pointers(ttir: Module, imported: ImportedProgram) -> dict[tuple, list[tile_ir.Op]]:
    """The op of ``imported``'s program defining the pointer tensor (its strides, element and alignment) of
    each global load and store of ``ttir``, by ``kernels.rewrite``'s key (op, source location), in walk order: what
    ``ttgir_costs`` needs of the TTIR, found once for all the TTGIRs of one compile."""

    defs = {r: op for op in imported.program.ops for r in op.results}
    pointers: dict[tuple, list[tile_ir.Op]] = {}
    for op in ttir.functions[0].walk():
        if op.name == "tt.load" and op.results and op.results[0] in imported.names:
            load = defs.get(imported.names[op.results[0]])
            if load is not None and load.kind == "load":
                pointers.setdefault(op_key(op), []).append(defs[load.operands[0]])
    for top, store in zip(imported.stores, [op for op in imported.program.ops if op.kind == "store"]):
        pointers.setdefault(op_key(top), []).append(defs[store.operands[0]])
    return pointers


@functools.lru_cache(maxsize=32)
def cost_report(ttgir: str, target: Target | None = None) -> KernelReport:
    """``analyze_ttgir(ttgir, with_triton_estimate=False, with_recognition=False, target=target)``, the report
    costs are read from (no layout named by ``recognize``: a cost never reads the name), cached:
    ``kernels.rewrite`` asks for a candidate's twice (to lay out the ops the engine did not, then to judge
    it), and its runs often give the same text."""
    from linear_layouts.pipeline.report import analyze_ttgir

    return analyze_ttgir(ttgir, with_triton_estimate=False, with_recognition=False, target=target)


def ttgir_costs(pointers: Mapping[tuple, list[tile_ir.Op]], ttgir: str, module: Module | None = None, *,
                target: Target | None = None) -> KernelCosts:
    """``kernel_costs`` of the TTGIR text ``ttgir`` (``module``: its parse, if already made) with the
    TTIR's ``global_pointers``, on ``target`` (default: the one the TTGIR names)."""
    from linear_layouts.engine.anchors import global_cost
    from linear_layouts.triton_model.encodings import Layouts, parse_type
    from linear_layouts.pipeline.shared_memory import shared_memory_need

    report = cost_report(ttgir, target)
    module = report.module if module is None else module
    check_well_formed(module, "ttgir")
    conversions, stagings, wavefronts = triton_side(report)
    shared_ns = sum(op.triton_time(target) or 0.0 for op in filter(_counted, report.ops))
    layouts, seen, global_ns = Layouts(module), {}, 0.0
    for op in module.functions[0].walk():
        if op.name not in _GLOBAL_OPS:
            continue
        key = ("tt.load",) + op_key(op)[1:] if op.name == "ttg.async_copy_global_to_local" else op_key(op)
        options = pointers.get(key)
        if not options:
            continue  # an access the TTIR import does not model (descriptor loads, ...)
        k = seen.get(key, 0)
        seen[key] = k + 1
        ptr = options[min(k, len(options) - 1)]
        layout = layouts.linear(parse_type(op.operand_types[0], module))
        global_ns += global_cost(layout, ptr.attr("strides"), ptr.attr("element"),
                                 store=key[0] != "tt.load", align=ptr.attr("align", 16), target=target)
    need = shared_memory_need(module, report)
    return KernelCosts(conversions, stagings, wavefronts, shared_ns, global_ns, need.bytes)


def comparison_lines(c: EngineComparison, min_gain: float) -> list[str]:
    """The comparison as report lines: both sides when the engine's layouts are predicted faster by
    ``min_gain`` (``c.faster``), else one line saying Triton's choice is already the best we know (and why)."""
    if c.ran and not c.faster(min_gain):
        times = (f"{c.ours_ns:.0f} ns against Triton's {c.triton_ns:.0f} ns per CTA" if c.ours_ns is not None
                 and c.triton_ns is not None else "no cheaper")
        return [f"Triton's choice is already the best we know: our engine's layouts give {c.ours_conversions} "
                f"conversions, {c.ours_wavefronts} shared wavefronts against Triton's {c.triton_wavefronts} "
                f"({times})."]
    lines = [f"Triton (TTGIR): {c.triton_conversions} conversions that move data, {c.triton_stagings} register -> "
             f"shared stagings; {c.triton_wavefronts} shared wavefronts per CTA"
             + (f", {c.triton_ns:.0f} ns." if c.triton_ns is not None else ".")]
    if c.ran:
        kinds = ", ".join(c.ours_kinds) or "-"
        cost = f", {c.ours_ns:.0f} ns" if c.ours_ns is not None else ""
        lines.append(f"Our engine (on the kernel's TTIR): {c.ours_conversions} conversions ({kinds}); "
                     f"{c.ours_wavefronts} shared wavefronts per CTA{cost}, predicted faster; propagated in "
                     f"{c.seconds} s.")
    else:
        lines.append(f"Our engine: not run ({c.error}).")
    for op, loc, reason in c.unmodeled:
        lines.append(f"  not imported: {op} at {loc}: {reason}")
    for note in c.notes:
        lines.append(f"  note: {note}")
    return lines
