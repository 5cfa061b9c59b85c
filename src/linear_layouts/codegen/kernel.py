"""Whole conversion kernels: global load (``src``) -> conversion -> global store (``dst``).

One CTA handles one tile (the layouts' tensor) at ``blockIdx.x * tile_elements`` in a row-major
array.  With ``iterations > 0`` the kernel also runs ``iterations`` round trips
``dst -> src -> dst`` (XOR-ing every register with 1 after each conversion, so no compiler, ours or
Triton's, can fold two conversions into one; LLVM still moves the XOR through a butterfly exchange's
selects and cancels the second exchange's send selects, which NVVM does not); the XORs cancel, so the output always equals the input: a conversion kernel is an
identity on the array, and every element is checked.

Matrix transposes ``B = A^T`` by tiles of these conversions live in ``codegen.transpose``; tensors of any
shape (masked edge tiles, batches, strides) in ``codegen.permute``.

Every emitter takes the ``target`` the kernel is for (default: the default target, sm_90): CUDA only (an AMD
target is a LayoutError), its lanes per warp, its ISA (a step using ``stmatrix`` on sm_80 is refused;
``cuda_target``) and its shared memory (a kernel needing more than ``Target.cta_shared_bytes`` is refused).

Example: ``emit_conversion_kernel("seed", src, dst, 4, SharedConversion(...))`` gives CUDA C++
defining ``extern "C" __global__ void seed(const unsigned* src, unsigned* dst, int iterations)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from linear_layouts.core.arguments import checked
from linear_layouts.codegen.conversion import (
    RegisterCopy, SharedConversion, canonical_vector_order, register_bits,
)
from linear_layouts.codegen.elements import check_element_bytes, cpp_storage_type
from linear_layouts.codegen.global_memory import emit_global_load_words, emit_global_store_words
from linear_layouts.codegen.hardware_map import global_map
from linear_layouts.codegen.intrinsics import DEVICE_PRELUDE, KERNEL_PROLOGUE
from linear_layouts.codegen.packing import Emission, Packing
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import MAX_ELEMENTS, check_layout_size, quote
from linear_layouts.target import DEFAULT_TARGET, LDMATRIX, STMATRIX, Target, resolve

__all__ = ["ConversionStep", "KernelSource", "emit_conversion_kernel", "choose_packings", "STATIC_SHARED_LIMIT",
           "SM_SHARED_BYTES", "UNPACKED_REGISTER_LIMIT", "XOR_ONE"]


class ConversionStep(Protocol):
    """What a kernel needs from a conversion step (see ``codegen.conversion``)."""

    shared_bytes: int
    barrier_scope: str | None  # None (no shared memory), "warp" or "cta"

    def packings(self) -> tuple[list[Packing], list[Packing]]: ...

    def emit_words(self, a: str, b: str, pin: Packing, pout: Packing, em: Emission, smem: str = "smem",
                   trailing_barrier: bool = True) -> list[str]: ...

    def instruction_counts(self) -> dict[str, int]: ...


@dataclass(frozen=True)
class KernelSource:
    """A generated kernel: CUDA C++ ``source`` defining ``extern "C"`` function ``name``, launched with
    ``threads`` threads and ``shared_bytes`` dynamic shared memory per tile of ``tile_elements``."""

    name: str
    source: str
    threads: int
    shared_bytes: int
    tile_elements: int
    element_bytes: int


#: Shared memory a CTA may use without opting in (cudaFuncSetAttribute): the double buffer's bound.
STATIC_SHARED_LIMIT = 48 * 1024

#: ``x ^ 1`` on every element of a packed word, by element width in bytes (first word of an 8-byte one).
XOR_ONE = {1: 0x01010101, 2: 0x00010001, 4: 1, 8: 1}


#: Registers per thread up to which a register-only conversion may keep its sub-word elements one per word
#: (``Packing.unpacked``, as Triton holds them): 64 words, where a packed 8-bit file of that size needs 16.
UNPACKED_REGISTER_LIMIT = 64


#: The default target's shared memory per SM (``Target.sm_shared_bytes``; kept for callers of the old name).
SM_SHARED_BYTES = DEFAULT_TARGET.sm_shared_bytes


def cuda_target(target: Target | None, *steps: object, pdl: bool = False) -> Target:
    """``target`` (default: the default target), an NVIDIA one whose ISA has what ``steps`` emit
    (``ldmatrix``, ``stmatrix``) and, with ``pdl``, programmatic dependent launch (sm_90); else a LayoutError."""
    target = resolve(target)
    if target.backend != "cuda":
        raise LayoutError(f"target: codegen emits CUDA; {target.arch} is an AMD target")
    for step in steps:
        counts = step.instruction_counts() if step is not None and hasattr(step, "instruction_counts") else {}
        for opcode in counts:
            for feature in (LDMATRIX, STMATRIX):
                if opcode.startswith(feature) and not target.has(feature):
                    raise LayoutError(f"target: the step emits {opcode}, which {target.arch} does not have")
    if pdl and (target.capability or 0) < 90:
        raise LayoutError(f"pdl: programmatic dependent launch (griddepcontrol) needs sm_90, not {target.arch}")
    return target


def _align(n: int, a: int = 16) -> int:
    return (n + a - 1) // a * a


def _buffers(forward: ConversionStep, backward: ConversionStep | None) -> tuple[int, int, bool, bool, int]:
    """(forward buffer offset, backward buffer offset, forward trailing barrier, backward trailing
    barrier, shared bytes).  Two shared steps in a loop get two buffers when they fit in
    ``STATIC_SHARED_LIMIT``: then each step's barrier between store and load also orders the other
    step's load before the next store to its buffer, and no barrier follows a load (the scope of the
    barrier that does the ordering must cover the step's own)."""
    f_bytes = forward.shared_bytes
    if backward is None:
        return 0, 0, False, False, f_bytes
    b_bytes = backward.shared_bytes
    if f_bytes and b_bytes and _align(f_bytes) + b_bytes <= STATIC_SHARED_LIMIT:
        covers = {("warp", "warp"), ("cta", "cta"), ("warp", "cta")}  # (own scope, other's scope)
        f_trail = (forward.barrier_scope, backward.barrier_scope) not in covers
        b_trail = (backward.barrier_scope, forward.barrier_scope) not in covers
        return 0, _align(f_bytes), f_trail, b_trail, _align(f_bytes) + b_bytes
    return 0, 0, bool(f_bytes), bool(b_bytes), max(f_bytes, b_bytes)


def choose_packings(src: LinearLayout, dst: LinearLayout, element_bytes: int, forward: ConversionStep,
                    backward: ConversionStep | None = None) -> tuple[Packing, Packing]:
    """The packings of the ``src`` and ``dst`` register files with the fewest byte permutes and selects
    for load, forward, backward (weighted as in a kernel with one round trip: forward twice), store:
    candidates are the natural order and each step's preferred packings, in pairs each step runs
    between (a renamed-words register permutation packs its destination as its source renamed,
    ``RegisterCopy.accepts``). Where every step is a ``RegisterCopy`` (no data leaves the thread), the
    unpacked files (one element per word, ``Packing.unpacked``; up to ``UNPACKED_REGISTER_LIMIT``
    registers) are candidates too: the copy is then a renaming whatever it does to the register bits,
    and single-element global accesses need no byte permute to pack or unpack a word (ties go to the
    packed files: fewer registers).

    Example: 8-bit registers whose global loads and stores are single bytes (no register bit at
    element offset 1): packed, 3 prmt per word to pack the loads and 3 to unpack the stores; unpacked
    none."""
    w = element_bytes
    ra, rb = register_bits(src), register_bits(dst)
    fin, fout = forward.packings()
    bin_, bout = backward.packings() if backward is not None else ([], [])
    cand_a = list(dict.fromkeys([Packing.natural(w, ra)] + fin + bout))
    cand_b = list(dict.fromkeys([Packing.natural(w, rb)] + fout + bin_))
    if w < 4 and all(isinstance(s, RegisterCopy) for s in (forward, backward) if s is not None):
        for cand, bits in ((cand_a, ra), (cand_b, rb)):
            if Packing.unpacked(w, bits).is_unpacked and 1 << bits <= UNPACKED_REGISTER_LIMIT:
                cand.append(Packing.unpacked(w, bits))

    def runs(pa: Packing, pb: Packing) -> bool:
        return ((not isinstance(forward, RegisterCopy) or forward.accepts(pa, pb))
                and (not isinstance(backward, RegisterCopy) or backward.accepts(pb, pa)))

    if w >= 4 or (len(cand_a) == 1 and len(cand_b) == 1 and runs(cand_a[0], cand_b[0])):
        return cand_a[0], cand_b[0]
    ga, gb = global_map(src), global_map(dst)
    memo: dict = {}

    def cost(step, pin, pout) -> int:
        key = (id(step), pin, pout)
        if key not in memo:
            em = Emission("c")
            step.emit_words("a", "b", pin, pout, em)
            memo[key] = em.alu
        return memo[key]

    def edge(fn, hmap, p) -> int:
        em = Emission("c")
        fn(hmap, w, p, "x", "p", em)
        return em.alu

    best = None
    for pa in cand_a:
        la = None
        for pb in cand_b:
            if not runs(pa, pb):
                continue
            la = edge(emit_global_load_words, ga, pa) if la is None else la
            total = la + edge(emit_global_store_words, gb, pb) + 2 * cost(forward, pa, pb)
            if backward is not None:
                total += cost(backward, pb, pa)
            if best is None or total < best[0]:
                best = (total, pa, pb)
    if best is None:
        raise LayoutError("forward/backward: no pair of register packings runs both steps as their plans say")
    return best[1], best[2]


@checked
def emit_conversion_kernel(
    name: str,
    src: LinearLayout,
    dst: LinearLayout,
    element_bytes: int,
    forward: ConversionStep,
    backward: ConversionStep | None = None,
    *,
    max_elements: int = MAX_ELEMENTS,
    target: Target | None = None,
) -> KernelSource:
    """CUDA C++ of a kernel loading a tile in ``src``, converting with ``forward`` and storing in
    ``dst``; ``backward`` (``dst -> src``) enables the ``iterations`` round trips (else it is 0).
    Registers are packed words (``choose_packings``). Layouts above ``max_elements`` inputs or elements
    (``limits.MAX_ELEMENTS``) are refused; ``target``: module doc."""
    target = cuda_target(target, forward, backward)
    w = check_element_bytes(element_bytes)
    check_layout_size(src, max_elements, "emit_conversion_kernel: src")
    check_layout_size(dst, max_elements, "emit_conversion_kernel: dst")
    if not name.isidentifier():
        raise LayoutError(f"name: {quote(name)} is not a C identifier")
    if dict(src.out_dims) != dict(dst.out_dims):
        raise LayoutError(f"dst: out dims {dst.out_dims} differ from src's {src.out_dims}")
    warps = src.in_dim_size("warp", missing_ok=True)
    if dst.in_dim_size("warp", missing_ok=True) != warps:
        raise LayoutError(f"dst: {dst.in_dim_size('warp', missing_ok=True)} warps, src has {warps}")
    t = cpp_storage_type(w)
    threads = target.lanes * warps
    tile = src.total_out_dim_size
    forward, backward = _canonical(forward), _canonical(backward)
    pa, pb = choose_packings(src, dst, w, forward, backward)
    f_off, b_off, f_trail, b_trail, shared = _buffers(forward, backward)
    if shared > target.cta_shared_bytes:
        raise LayoutError(f"forward, backward: the kernel needs {shared} bytes of shared memory, more than a CTA "
                          f"of {target.arch} may use ({target.cta_shared_bytes}, Target.cta_shared_bytes)")
    em = Emission("t")
    rounds = (["//   iterations: 0 converts once; n > 0 adds n round trips dst -> src -> dst (a benchmark knob:",
               "//     each flips every value's low bit before each conversion; the flips cancel, so the",
               "//     output still equals the input, and no compiler can fold the conversions away)."]
              if backward is not None else
              ["//   iterations: unused here (no backward conversion was generated); pass 0."])
    body: list[str] = [
        f"// {name}: a {'x'.join(map(str, src.out_dims.values()))} tile of {8 * w}-bit elements, "
        "from layout src to layout dst.",
        "//   src_all, dst_all: whole tiles, each row-major; CTA blockIdx.x handles tile blockIdx.x, i.e.",
        f"//     elements blockIdx.x * {tile} ... + {tile - 1}: loads them in src's layout, converts, stores in dst's.",
        *rounds,
        f"//   launch: grid = number of tiles, block = {threads} threads, dynamic shared memory = {shared} bytes.",
        f'extern "C" __global__ void __launch_bounds__({threads}) {name}(',
        f"    const {t}* __restrict__ src_all, {t}* __restrict__ dst_all, int iterations) {{",
        *KERNEL_PROLOGUE,
        f"  const {t}* src = src_all + (size_t)blockIdx.x * {tile}u;",
        f"  {t}* dst = dst_all + (size_t)blockIdx.x * {tile}u;",
        f"  unsigned a[{pa.num_words}];",
        f"  unsigned b[{pb.num_words}];",
    ]

    def smem_at(offset: int) -> str:
        return f"(smem + {offset}u)" if offset else "smem"

    body += ["  " + x for x in emit_global_load_words(global_map(src), w, pa, "a", "src", em)]
    body += ["  " + x for x in _scoped(forward.emit_words("a", "b", pa, pb, em, smem_at(f_off),
                                                            f_trail if backward is not None else False))]
    if backward is not None:
        mask = XOR_ONE[w]
        step_a = 2 if w == 8 else 1
        body.append("  for (int it = 0; it < iterations; ++it) {")
        body.append(f"    #pragma unroll\n    for (int r = 0; r < {pb.num_words}; r += {step_a}) b[r] ^= {mask:#x}u;")
        body += ["    " + x for x in _scoped(backward.emit_words("b", "a", pb, pa, em, smem_at(b_off), b_trail))]
        body.append(f"    #pragma unroll\n    for (int r = 0; r < {pa.num_words}; r += {step_a}) a[r] ^= {mask:#x}u;")
        body += ["    " + x for x in _scoped(forward.emit_words("a", "b", pa, pb, em, smem_at(f_off), f_trail))]
        body.append("  }")
    body += ["  " + x for x in emit_global_store_words(global_map(dst), w, pb, "b", "dst", em)]
    body.append("}")
    return KernelSource(name, DEVICE_PRELUDE + "\n".join(body) + "\n", threads, shared, tile, w)


def _canonical(step):
    return canonical_vector_order(step) if isinstance(step, SharedConversion) else step


def _scoped(lines: list[str]) -> list[str]:
    return ["{"] + ["  " + x for x in lines] + ["}"]


