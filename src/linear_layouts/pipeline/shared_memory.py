"""The shared memory a TTGIR needs per CTA, as Triton's ``AllocateSharedMemory`` pass counts its buffers.

Triton allocates three kinds of buffers (``Allocation.cpp``):

* *explicit* ones, each ``ttg.local_alloc`` of a shared encoding: ``elements x bits / 8`` bytes, live
  where Triton's liveness says (``liveness``: on the function after ``scf-to-cf``, over every value that
  may be the buffer: its views, an ``arith.select`` of it, the iter_args / results of the ``scf.for`` /
  ``scf.while`` it is yielded to or started with, the results of the ``scf.if`` that yields it);
* *scratch* ones, live during their op only: a ``convert_layout`` through shared memory, a ``tt.reduce``
  or ``tt.scan`` across warps, what the report's lowering says (``SharedLowering.scratch_bytes``: one
  round of a conversion's swizzled scratch, ``tensor elements / reps``, with the reps Triton's
  ``optimalSwizzling`` gives, an ldmatrix / stmatrix pair keeping two of them; a Triton 3.6 reduction's
  source with its axis resized to the warps along it); a scalar atomic whose result is used one element;
  ``tt.histogram`` ``max(bins, 32)`` elements; ``ttng.tensormap_create`` 128 bytes; a ``tt.gather`` that
  is not warp-local its whole source; a ``ttg.warp_specialize`` its captures (``_capture_bytes``);
* the function's own, live throughout: a byte per warp of its partitions (the most over its
  ``ttg.warp_specialize`` ops, padded to whole warp groups of 4, as ``allocate-warp-groups`` pads them).

The regions of a ``ttg.warp_specialize`` (default and partitions) run at once, so Triton never lets
their buffers share bytes: at an op in one of them, each other region adds the most it holds.

``shared_memory_need`` gives the bytes Triton's placement of these buffers asks for (``allocation``:
its first fit and colouring, alignment gaps and fragmentation included), at least the most live at once,
and the op where that most is live: equal to Triton 3.9's ``ttg.shared`` on every corpus TTGIR (sm_80,
sm_90), every ``rewrite_kernel`` candidate of them, the Gluon kernels of
``tests/kernels/test_shared_memory_flow.py`` (buffers through loops, ifs, while loops, warp
specialization) and the random TTGIRs of ``tests/kernels/test_allocation.py``, and to Triton 3.6's on its
corpus TTGIRs. Not modelled: calls (``tt.call``'s callee scratch), padded and partitioned shared
encodings' sizes, a ``ttg.warp_specialize`` returning a buffer and scf ops other than ``scf.for`` /
``scf.if`` / ``scf.while`` (each refused with a ``LayoutError`` where it carries a buffer).
So a TTGIR whose need is above the device's ``cost_model.CTA_SHARED_BYTES`` cannot launch.

>>> from linear_layouts.triton_model.ir_text import parse_module
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

import dataclasses
import math
import re
from dataclasses import dataclass

from linear_layouts.analysis.broadcast import zero_bases_mask
from linear_layouts.core.arguments import checked
from linear_layouts.core.errors import LayoutError
from linear_layouts.triton_model.ir_text import Module, Op
from linear_layouts.triton_model.allocation import FOREVER, Buffer, allocate
from linear_layouts.triton_model.liveness import LoweredOp, buffer_live_ranges, lower_function
from linear_layouts.analysis.gather import is_warp_local
from linear_layouts.core.element_type import ir_element_bits
from linear_layouts.triton_model.encodings import Layouts, is_shared_encoding, parse_type
from linear_layouts.pipeline.report import KernelReport
from linear_layouts.triton_model.lowering import SHARED
from linear_layouts.core.limits import parse_int, quote
from linear_layouts.core.mlir_text import DIGITS

__all__ = ["SharedMemoryNeed", "shared_memory_need", "TENSORMAP_BYTES"]

#: bytes of one TMA descriptor built in shared memory (``ttng.tensormap_create``'s scratch)
TENSORMAP_BYTES = 128
#: alignment of an op's scratch buffer (``getScratchValueSize``'s ``scratchAlignment``)
SCRATCH_ALIGNMENT = 128


@dataclass(frozen=True)
class SharedMemoryNeed:
    """``bytes`` of shared memory Triton's allocation gives the function; ``at``: the walk index of the op
    where the most is live at once (named ``op``; 0 when nothing uses shared memory). ``bytes`` is at
    least that most, more where Triton's placement leaves gaps."""

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


def _scratch(op: Op, module: Module, layouts: Layouts, lowered: dict[int, int], index: int,
             used: set[str]) -> int:
    """The scratch bytes Triton gives ``op`` (module doc), ``lowered``'s for the ops the report lowers."""
    name = op.name
    if name in ("ttg.convert_layout", "tt.reduce", "tt.scan"):
        return lowered.get(index, 0)
    if name in ("tt.atomic_rmw", "tt.atomic_cas") and op.results and op.results[0] in used:
        result = parse_type(op.result_types[0], module)
        if result.kind != "tensor":
            return max(1, _bytes(result.element_type, 1, op))
        layout = layouts.linear(result)
        if any(zero_bases_mask(layout, d) for d in layout.in_dim_names):  # broadcast: a copy per CTA
            return _bytes(result.element_type, result.numel, op)
        return 0
    if name == "tt.histogram":
        out = parse_type(op.result_types[0], module)
        return _bytes(out.element_type, max(out.numel, 32), op)
    if name == "ttng.tensormap_create":
        return TENSORMAP_BYTES
    if name == "tt.gather" and len(op.operand_types) == 2:
        src, index = (parse_type(t, module) for t in op.operand_types)
        if src.kind != "tensor" or is_warp_local(layouts.linear(src), layouts.linear(index),
                                                         op.attr_int("axis") or 0):
            return 0
        return src.numel * -(-_bits(src.element_type, op) // 8)  # the whole source, whole bytes an element
    return 0


def _lowered_scratch(report: KernelReport) -> dict[int, int]:
    """Walk index of each conversion, reduction and scan the report lowers -> its scratch bytes
    (``triton_lowering.SharedLowering.scratch_bytes``)."""
    return {op.index: op.triton.scratch_bytes for op in report.ops
            if op.kind in ("convert_layout", "reduce", "scan") and op.triton.kind == SHARED}


def _alloc_bytes(op: Op, module: Module) -> int | None:
    """Bytes of the buffer a ``ttg.local_alloc`` of shared memory makes (``None`` for another op)."""
    if op.name != "ttg.local_alloc" or not op.results:
        return None
    t = parse_type(op.result_types[0], module)
    if t.kind != "memdesc" or not is_shared_encoding(t.encoding):
        return None
    shape = t.alloc_shape or t.shape
    if not shape or 0 in shape:
        raise LayoutError(f"module: {op.name} at {op.loc}: the buffer {quote(t.text)} has no static "
                          "shape of sizes >= 1 (SIZExSIZEx...xELEMENT)")
    return _bytes(t.element_type, math.prod(shape), op)


@checked
def shared_memory_need(module: Module, report: KernelReport | None = None) -> SharedMemoryNeed:
    """The shared memory Triton's allocation gives ``module``'s first function, and where the most is
    live at once (module doc); ``report``: its ``analyze_module`` report, for the scratch of conversions,
    reductions and scans (without it they count none)."""
    if not module.functions:
        raise LayoutError("module: has no function (tt.func)")
    fn = module.functions[0]
    layouts = Layouts(module)
    walk = list(fn.walk())
    size = {k: b for k, op in enumerate(walk) if (b := _alloc_bytes(op, module)) is not None}
    lowered = lower_function(fn, lambda op: _alloc_bytes(op, module) is not None)
    ranges = buffer_live_ranges(lowered, size)
    used = {o for op in walk for o in op.operands}
    lowered_scratch = _lowered_scratch(report) if report is not None else {}
    owner = {op.index: op.ws_region for op in lowered.ops if op.index in size}
    scratch: dict[int, tuple[int, int]] = {}  # op id -> its scratch bytes and their alignment
    for op in lowered.ops:
        if op.index in lowered.warp_specialize:
            captures = sum(_capture_bytes(t, module, walk[op.index]) for t in lowered.warp_specialize[op.index][0])
            scratch[op.id] = (captures, 8)
        elif op.index >= 0:
            scratch[op.id] = (_scratch(walk[op.index], module, layouts, lowered_scratch, op.index, used),
                              SCRATCH_ALIGNMENT)

    def live(op: LoweredOp, region: tuple[int, int] | None = None) -> int:
        """Bytes live at ``op``: its scratch and the buffers live there (only those allocated in
        ``region``, if given; else not those of another region of the ``ttg.warp_specialize`` ``op`` is
        in, which that region's peak counts)."""
        def counted(alloc: int) -> bool:
            if region is not None:
                return owner[alloc] == region
            other = owner[alloc]
            return not (other is not None and op.ws_region is not None and other[0] == op.ws_region[0]
                        and other != op.ws_region)
        return scratch.get(op.id, (0, 0))[0] + sum(
            size[alloc] for alloc, (low, high) in ranges.items() if low <= op.id <= high and counted(alloc))

    # the regions of a ttg.warp_specialize run at once: each holds, besides what is live where it is,
    # the most each other region holds
    peak: dict[tuple[int, int], int] = {}
    for op in lowered.ops:
        if op.ws_region is not None:
            peak[op.ws_region] = max(peak.get(op.ws_region, 0), live(op, op.ws_region))
    warps = max((sum(w) for _, w in lowered.warp_specialize.values()), default=0)
    every = -(-warps // 4) * 4  # a byte per partition warp, warps padded to warp groups, live throughout
    most = SharedMemoryNeed(every, 0, walk[0].name if walk else "")
    for op in lowered.ops:
        total = live(op) + every
        if op.ws_region is not None:
            ws, k = op.ws_region
            total += sum(b for (w, j), b in peak.items() if w == ws and j != k)
        if total > most.bytes:
            at = op.index if op.index >= 0 else op.origin
            most = SharedMemoryNeed(total, at, walk[at].name)
    # Triton's order: explicit buffers in walk order, then the function's bytes, then each op's scratch
    buffers = [Buffer(size[alloc], _alignment(walk[alloc], module), low, high + 1, owner[alloc])
               for alloc, (low, high) in sorted(ranges.items())]
    if every:
        buffers.append(Buffer(every, 4, 0, FOREVER))
    for op in sorted(lowered.ops, key=lambda op: op.index):
        nbytes, alignment = scratch.get(op.id, (0, 0))
        if nbytes:
            group = None if op.index in lowered.warp_specialize else op.ws_region
            buffers.append(Buffer(nbytes, alignment, op.id, op.id + 1, group))
    return dataclasses.replace(most, bytes=allocate(buffers))


def _alignment(op: Op, module: Module) -> int:
    """A ``ttg.local_alloc``'s alignment (``LocalAllocOp::getAlignmentOrDefault``): its ``alignment``
    attribute, else its encoding's: an NVMMA one 128 bytes a swizzle phase (``swizzlingByteWidth / 16``
    phases, at least 1), another 16."""
    explicit = op.attr_int("alignment")
    if explicit:
        return explicit
    encoding = parse_type(op.result_types[0], module).encoding
    if "nvmma_shared" in encoding:
        m = re.search(rf"swizzlingByteWidth\s*=\s*({DIGITS})", encoding)
        width = parse_int(m.group(1), f"ir text: {op.name}'s swizzlingByteWidth") if m else 16
        return 128 * max(1, width // 16)
    return 16


def _capture_bytes(type_text: str, module: Module, op: Op) -> int:
    """Bytes one ``ttg.warp_specialize`` capture of type ``type_text`` takes in shared memory (Triton's
    ``getSharedMemorySize``): a number its bytes, a pointer or TMA descriptor 8, a shared-memory
    descriptor 8 and 4 a dimension, another memdesc (tensor memory) 8."""
    t = parse_type(type_text, module)
    if t.kind == "ptr" or type_text.startswith("!tt.tensordesc"):
        return 8
    if type_text.startswith("!ttg.memdesc"):
        return 8 + 4 * len(t.shape) if is_shared_encoding(t.encoding) else 8
    return -(-_bits(type_text, op) // 8)
