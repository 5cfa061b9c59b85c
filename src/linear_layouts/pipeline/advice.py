"""What to change in a kernel: for each op the report flags, the concrete edit in source terms and its
predicted saving, from the same models the report prices Triton's lowering with.

=======================================  =================================================================
flagged op                               the edit
=======================================  =================================================================
register -> shared store (``local_alloc  a wgmma operand of 8/32-bit elements held the other way round
%x``, ``local_store``) or ``cp.async``   (wgmma reads them K-major only): load the tile K-major
with bank conflicts                      (``analysis.shared_advice.k_major_store_layout``), or convert to
                                         that layout before the store; else the cheapest shared layout
                                         its consumer accepts (``suggest_shared_layout``)
``convert_layout`` with a cheaper plan   our plan (``plan_conversion``): through shared memory laid out
or bank conflicts                        as the plan says (a Gluon shared layout), or warp shuffles
anything else flagged                    one line: no cheaper edit is known
=======================================  =================================================================

Times are SM-nanoseconds per CTA for one execution of the op (``analysis.cost_model``), as the report's
``ns`` column; with execution counts, the saving per launch too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from linear_layouts.core.arguments import checked
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.pipeline.report import KernelReport, SharedOp
from linear_layouts.triton_model.lowering import SHARED
from linear_layouts.target import Target, target_for_module

__all__ = ["Edit", "suggest_edits"]

#: the ops that write shared memory from registers or global memory
_STORES = ("local_alloc", "local_store", "async_copy")


@dataclass(frozen=True)
class Edit:
    """The change proposed for one flagged op of a report: its ``row`` (the op's number in the report's
    table), what it is (``subject``), the edit in source terms (``change``; ``also``: a second way), and
    the predicted wavefronts and SM-ns per CTA before and after (``after_*`` None: nothing cheaper known)."""

    row: int
    subject: str
    change: str
    before_wavefronts: int
    after_wavefronts: int | None = None
    before_ns: float | None = None
    after_ns: float | None = None
    runs: int | None = None
    also: str = ""

    @property
    def saving_ns(self) -> float | None:
        """SM-ns per CTA saved by one execution (None when unknown)."""
        if self.before_ns is None or self.after_ns is None:
            return None
        return self.before_ns - self.after_ns


def _staging_time(op: SharedOp, wavefronts: int, target: Target) -> float:
    """A register -> shared store of ``wavefronts`` in the report's units (``SharedOp.triton_time``)."""
    from linear_layouts.analysis.cost_model import OpCounts, conversion_time_ns

    return conversion_time_ns(OpCounts(wavefronts=wavefronts), op.warps, target=target)


def _wgmma_operand(report: KernelReport, encoding: str) -> int | None:
    """The wgmma operand (0: A, 1: B) read from shared memory of ``encoding``, if a ``warp_group_dot`` reads one."""
    for ir in report.module.functions[0].walk():
        if ir.name == "ttng.warp_group_dot":
            for k, text in enumerate(ir.operand_types[:2]):
                if f", {encoding}," in text or f", {encoding}>" in text:
                    return k
    return None


def _gluon(layout: Any) -> str:
    from linear_layouts.layouts.gluon_text import gluon_expression

    return gluon_expression(layout)


def _store_edit(report: KernelReport, row: int, op: SharedOp, target: Target) -> Edit | None:
    """A store into shared memory read by wgmma: the K-major register layout, or a cheaper NVMMA layout."""
    from linear_layouts.analysis.shared_advice import Consumer, suggest_shared_layout
    from linear_layouts.layouts.recognize import recognize

    operand = _wgmma_operand(report, op.dst)
    if operand is None or op.src_layout is None or op.dst_layout is None or len(op.shape) != 2:
        return None
    store = _distributed(op.src_layout)
    try:
        advice = suggest_shared_layout(store, Consumer.wgmma(operand), max(op.bits, 8),
                                       given=recognize(op.dst_layout, dtype=max(op.bits, 8)), target=target)
    except LayoutError:
        return None
    given = next(c for c in advice.candidates if "given" in c.marks)
    before = op.triton.store_wavefronts
    name = "AB"[operand]
    subject = (f"{op.kind} at {op.loc}: the {_shape(op.shape)} {op.element} tile of wgmma operand {name}, stored from "
               f"{op.src} with {given.store_vector_bits}-bit stores")
    fix = advice.register_fix
    if fix is not None and fix.loaded_total < before:
        k = "dim 1" if operand == 0 else "dim 0"
        change = (f"load {name} K-major ({k} contiguous in each thread): in Gluon with {fix.gluon}; in Triton, "
                  f"keep {name} K-contiguous in global memory so that its load is; it then stores into "
                  f"{fix.shared.gluon}")
        also = (f"convert_layout to that layout after the load: {before} -> {fix.converted_total} wavefronts "
                f"(its {fix.conversion_kind} conversion included)")
        return Edit(row, subject, change, before, fix.loaded_total, op.triton_time(target),
                    _staging_time(op, fix.loaded_total, target), op.count, also)
    best = advice.best
    if best.store_wavefronts < before and "given" not in best.marks:
        change = f"in Gluon, allocate the buffer as {best.gluon}"
        return Edit(row, subject, change, before, best.store_wavefronts, op.triton_time(target),
                    _staging_time(op, best.store_wavefronts, target), op.count)
    return None


def _convert_edit(row: int, op: SharedOp, target: Target) -> Edit | None:
    """A conversion our plan does cheaper: its shared layout in Gluon, or its warp shuffles."""
    plan = op.ours
    ours, theirs = op.ours_time(target), op.triton_time(target)
    if plan is None or ours is None or theirs is None or ours >= theirs:
        return None
    subject = f"convert_layout at {op.loc}: {op.src} -> {op.dst}, {_shape(op.shape)} {op.element}"
    if plan.kind == SHARED and plan.shared_layout is not None:
        from linear_layouts.layouts.recognize import recognize

        layout = _gluon(recognize(plan.shared_layout, dtype=max(op.bits, 8)))
        change = (f"convert through shared memory laid out as {layout}: in Gluon, "
                  f"smem = gl.allocate_shared_memory(dtype, {list(op.shape)}, layout, value=x); y = smem.load(dst) "
                  "in place of gl.convert_layout(x, dst)")
    else:
        change = (f"convert with {plan.kind} (no shared memory); Gluon's convert_layout does not choose it, "
                  "linear_layouts.pipeline.rewrite.rewrite_kernel emits it")
    return Edit(row, subject, change, op.triton.wavefronts, plan.wavefronts, theirs, ours, op.count)


def _distributed(layout: LinearLayout) -> LinearLayout:
    dims = [d for d in ("register", "lane", "warp") if layout.has_in_dim(d)]
    return layout.sublayout(dims, layout.out_dim_names)


def _shape(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape)) if shape else "scalar"


@checked
def suggest_edits(report: KernelReport, *, target: Target | None = None) -> tuple[Edit, ...]:
    """One :class:`Edit` per flagged op of ``report`` (module doc), numbered as the report's table
    numbers its ops; an op with no cheaper edit gets an ``Edit`` whose ``after_wavefronts`` is None.
    ``target``: the one the report was made for (default: the one its kernel names), its table and ISA."""
    target = target if target is not None else target_for_module(report.target)
    edits: list[Edit] = []
    seen: dict[tuple, Edit] = {}
    for row, op in enumerate(report.ops, 1):
        if not op.flags:
            continue
        key = (op.kind, str(op.loc), op.src, op.dst, op.shape, op.flags)   # a pipelined copy: once
        if key in seen:
            continue
        edit = None
        if op.kind in _STORES:
            edit = _store_edit(report, row, op, target)
        elif op.kind == "convert_layout":
            edit = _convert_edit(row, op, target)
        if edit is None:
            edit = Edit(row, f"{op.kind} at {op.loc}: {op.src} -> {op.dst}, {_shape(op.shape)} {op.element}",
                        f"no cheaper edit known to us ({'; '.join(op.flags)}): Triton's choice is the best we know",
                        op.triton.wavefronts, None, op.triton_time(target), None, op.count)
        seen[key] = edit
        edits.append(edit)
    return tuple(edits)
