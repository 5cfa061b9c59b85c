"""The shared memory a TTGIR needs per CTA, as Triton's ``AllocateSharedMemory`` pass counts its buffers.

Triton allocates two kinds of buffers (``Allocation.cpp``):

* *explicit* ones, each ``ttg.local_alloc`` of a shared encoding: ``elements x bits / 8`` bytes, live
  from the alloc to the last use of it or of a view of it (``memdesc_index`` / ``_subslice`` / ``_trans``
  / ..., and ``local_dealloc``) or of an ``scf.for`` iter_arg / result it is the init of; a use inside a
  loop the alloc is not in keeps it live to the loop's end;
* *scratch* ones, live during their op only: a ``convert_layout`` through shared memory, a ``tt.reduce``
  or ``tt.scan`` across warps, what the report's lowering says (``SharedLowering.scratch_bytes``: one
  round of a conversion's swizzled scratch, ``tensor elements / reps``, with the reps Triton's
  ``optimalSwizzling`` gives, an ldmatrix / stmatrix pair keeping two of them; a Triton 3.6 reduction's
  source with its axis resized to the warps along it); a scalar atomic whose result is used one element;
  ``tt.histogram`` ``max(bins, 32)`` elements; ``ttng.tensormap_create`` 128 bytes; a ``tt.gather`` that
  is not warp-local its whole source.

``shared_memory_need`` is the most bytes live at once, op by op in program order: equal to Triton 3.9's
``ttg.shared`` on every corpus TTGIR (sm_80, sm_90) and every ``rewrite_kernel`` candidate of them, and to
Triton 3.6's on its corpus TTGIRs; in general a lower bound of what Triton allocates (its offsets may leave
gaps; a buffer reaches a loop's iter_arg only as its init, not through a yield or an ``scf.if`` / ``scf.while``;
``ttg.warp_specialize``'s captures are not counted).
So a TTGIR whose need is above the device's ``cost_model.CTA_SHARED_BYTES`` cannot launch.

>>> from linear_layouts.kernels.ir_text import parse_module
>>> text = '''#s = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
... #smem = #ttg.shared_memory
... module attributes {"ttg.num-warps" = 4 : i32} {
...   tt.func public @k() {
...     %a = ttg.local_alloc : () -> !ttg.memdesc<3x128x64xf16, #s, #smem, mutable>
...     ttg.local_dealloc %a : !ttg.memdesc<3x128x64xf16, #s, #smem, mutable>
...     tt.return
...   }
... }'''
>>> shared_memory_need(parse_module(text))
SharedMemoryNeed(bytes=49152, at=0, op='ttg.local_alloc')
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from linear_layouts.analysis.broadcast import zero_bases_mask
from linear_layouts.arguments import checked
from linear_layouts.errors import LayoutError
from linear_layouts.kernels.ir_text import Module, Op, iter_args
from linear_layouts.analysis.gather import is_warp_local
from linear_layouts.element_type import ir_element_bits
from linear_layouts.kernels.layouts import Layouts, is_shared_encoding, parse_type
from linear_layouts.kernels.report import KernelReport
from linear_layouts.kernels.triton_lowering import SHARED
from linear_layouts.limits import quote

__all__ = ["SharedMemoryNeed", "shared_memory_need", "TENSORMAP_BYTES"]

#: bytes of one TMA descriptor built in shared memory (``ttng.tensormap_create``'s scratch)
TENSORMAP_BYTES = 128
#: ops whose result is a view of their memdesc operand (same buffer)
_VIEWS = ("ttg.memdesc_index", "ttg.memdesc_subslice", "ttg.memdesc_subview", "ttg.memdesc_trans",
          "ttg.memdesc_reshape", "ttg.memdesc_reinterpret")
_LOOPS = ("scf.for", "scf.while")


@dataclass(frozen=True)
class SharedMemoryNeed:
    """``bytes`` of shared memory live at once at the op of walk index ``at`` (named ``op``), the most
    over the function (0 at index 0 when nothing uses shared memory)."""

    bytes: int
    at: int
    op: str


def _bits(element: str, op: Op) -> int:
    """Bits of one ``element`` (``op``'s type, for the error: an element of no known width)."""
    bits = ir_element_bits(element)
    if bits is None:
        raise LayoutError(f"module: {op.name} at {op.loc}: the element type {quote(element)} has no known width "
                          "(shared memory holds numbers or pointers: f16, i32, f8E4M3FN, !tt.ptr<...>)")
    return bits


def _bytes(element: str, elements: int, op: Op) -> int:
    """Bytes of ``elements`` of ``element`` (``op``'s type, for the error: an element of no known width)."""
    return elements * _bits(element, op) // 8


def _walk(ops: tuple[Op, ...], loops: tuple[int, ...], out: list[tuple[Op, tuple[int, ...]]]) -> None:
    """Appends (op, walk indices of the loops around it) for ``ops`` and their nested ops to ``out``, in
    ``Function.walk``'s pre-order (so an op's position in ``out`` is its walk index)."""
    for op in ops:
        index = len(out)
        out.append((op, loops))
        inner = loops + (index,) if op.name in _LOOPS else loops
        for region in op.regions:
            _walk(region.ops, inner, out)


def _scratch(op: Op, module: Module, layouts: Layouts, lowered: dict[int, int], index: int,
             used: set[str]) -> int:
    """The scratch bytes Triton gives ``op`` (module doc), ``lowered``'s for the ops the report lowers."""
    name = op.name
    if name in ("ttg.convert_layout", "tt.reduce", "tt.scan"):
        return lowered.get(index, 0)
    if name in ("tt.atomic_rmw", "tt.atomic_cas") and op.results and op.results[0] in used:
        result = parse_type(op.result_types[0], module)
        if result.kind != "tensor":
            return max(1, _bytes(result.element, 1, op))
        layout = layouts.linear(result)
        if any(zero_bases_mask(layout, d) for d in layout.in_dim_names):  # broadcast: a copy per CTA
            return _bytes(result.element, result.numel, op)
        return 0
    if name == "tt.histogram":
        out = parse_type(op.result_types[0], module)
        return _bytes(out.element, max(out.numel, 32), op)
    if name == "ttng.tensormap_create":
        return TENSORMAP_BYTES
    if name == "tt.gather" and len(op.operand_types) == 2:
        src, index = (parse_type(t, module) for t in op.operand_types)
        if src.kind != "tensor" or is_warp_local(layouts.linear(src), layouts.linear(index),
                                                         op.attr_int("axis") or 0):
            return 0
        return src.numel * -(-_bits(src.element, op) // 8)  # the whole source, whole bytes an element
    return 0


def _lowered_scratch(report: KernelReport) -> dict[int, int]:
    """Walk index of each conversion, reduction and scan the report lowers -> its scratch bytes
    (``triton_lowering.SharedLowering.scratch_bytes``)."""
    return {op.index: op.triton.scratch_bytes for op in report.ops
            if op.kind in ("convert_layout", "reduce", "scan") and op.triton.kind == SHARED}


@checked
def shared_memory_need(module: Module, report: KernelReport | None = None) -> SharedMemoryNeed:
    """The most shared memory ``module``'s first function holds at once (module doc); ``report``: its
    ``analyze_module`` report, for the scratch of conversions, reductions and scans (without it they
    count none)."""
    if not module.functions:
        raise LayoutError("module: has no function (tt.func)")
    fn = module.functions[0]
    layouts = Layouts(module)
    ops: list[tuple[Op, tuple[int, ...]]] = []
    _walk(fn.body.ops, (), ops)
    end_of: dict[int, int] = {}  # a loop's walk index -> the index of its last nested op
    for k, (_, loops) in enumerate(ops):
        for loop in loops:
            end_of[loop] = k
    used = {o for op, _ in ops for o in op.operands}
    buffer_of: dict[str, int] = {}  # value -> walk index of the local_alloc it is (a view of)
    live_until: dict[int, int] = {}
    size: dict[int, int] = {}
    for k, (op, loops) in enumerate(ops):
        for o in op.operands:
            if o in buffer_of:
                alloc = buffer_of[o]
                end = k
                for loop in loops:  # a loop around this use but not around the alloc: live to its end
                    if loop not in ops[alloc][1] and loop > alloc:
                        end = max(end, end_of[loop])
                live_until[alloc] = max(live_until[alloc], end)
                if op.name in _VIEWS and op.results:
                    buffer_of[op.results[0]] = alloc
        if op.name == "scf.for":  # a memdesc carried by the loop: its iter_arg and result are the init's buffer
            for (arg, init), result in zip(iter_args(op.text), op.results):
                if init in buffer_of:
                    buffer_of[arg] = buffer_of[result] = buffer_of[init]
        if op.name == "ttg.local_alloc" and op.results:
            t = parse_type(op.result_types[0], module)
            if t.kind == "memdesc" and is_shared_encoding(t.encoding):
                buffer_of[op.results[0]] = k
                live_until[k] = k
                shape = t.alloc_shape or t.shape
                if not shape or 0 in shape:
                    raise LayoutError(f"module: {op.name} at {op.loc}: the buffer {quote(t.text)} has no static "
                                      "shape of sizes >= 1 (SIZExSIZEx...xELEMENT)")
                size[k] = _bytes(t.element, math.prod(shape), op)
    best = SharedMemoryNeed(0, 0, ops[0][0].name if ops else "")
    lowered = _lowered_scratch(report) if report is not None else {}
    for k, (op, _) in enumerate(ops):
        live = sum(b for alloc, b in size.items() if alloc <= k <= live_until[alloc])
        total = live + _scratch(op, module, layouts, lowered, k, used)
        if total > best.bytes:
            best = SharedMemoryNeed(total, k, op.name)
    return best
