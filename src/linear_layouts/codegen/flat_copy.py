"""The copy of ``n`` contiguous bytes in aligned vectors: a permutation that is the identity in memory.

Source and destination share their residue modulo the vector ``V`` (``(src - dst) mod V == 0``), so both are
aligned after the same ``head = (-src) mod V`` bytes (at most ``n``). The ``(n - head) / V`` vectors after
that go ``U`` a thread, ``T`` threads a CTA: vector ``i`` of CTA ``b``'s thread ``t`` is ``b U T + u T + t``
(``u < U``: a warp's accesses are 32 adjacent vectors, each thread's ``U`` loads issued before its first
store), or, in a persistent grid, every ``gridDim.x``-th such block; CTA 0's first threads copy the head and the tail (fewer than ``V`` bytes each) byte by byte. Every
byte of ``[src, src + n)`` is read once and written once at the same offset of ``dst``.

Example: ``emit_copy_kernel("c", 16, 4, 8)``: 256 threads, 16 KiB a CTA; ``n = 46209004`` bytes at a 16-byte
aligned ``src`` are 2888062 vectors and 12 tail bytes on 2821 CTAs.
"""

from __future__ import annotations

from linear_layouts.codegen.elements import cpp_storage_type
from linear_layouts.codegen.intrinsics import DEPENDENT_LAUNCH_PROLOGUE, OP_PRELUDE, STREAMING_FUNCTIONS
from linear_layouts.codegen.permute import PermuteKernel
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote

__all__ = ["emit_copy_kernel", "COPY_VECTOR_BYTES", "copy_vector_bytes"]

#: The vector widths (bytes) a copy moves its bytes in: an element's storage type (``elements.cpp_storage_type``),
#: or ``uint4``.
COPY_VECTOR_BYTES = (1, 2, 4, 8, 16)


def copy_vector_bytes(src: int, dst: int) -> int:
    """The widest vector (at most 16 bytes) both addresses reach after the same head: the largest power of two
    dividing ``src - dst``. ``copy_vector_bytes(0x1003, 0x2007) == 4``."""
    v = 16
    while v > 1 and (src - dst) % v:
        v //= 2
    return v


def emit_copy_kernel(name: str, vector_bytes: int = 16, vectors_per_thread: int = 4, warps: int = 8,
                     streaming: bool = False, ctas_per_sm: int = 0) -> PermuteKernel:
    """CUDA C++ of the module doc's kernel ``name(const unsigned char* src, unsigned char* dst, unsigned long
    long nbytes)``: ``vector_bytes`` ``V`` (1 to 16, a power of two), ``vectors_per_thread`` ``U`` (1 to 16),
    ``warps`` (1 to 32) a CTA; ``streaming``: 16-byte vectors read with ``ld.global.nc.L1::no_allocate`` and
    written with ``st.global.cs``; ``ctas_per_sm`` (0 to 32): 0 for a CTA per ``U T`` vectors, else a grid of at
    most that many CTAs an SM, each looping over every ``gridDim.x``-th block of ``U T`` vectors
    (``PermuteKernel.ctas``). Its ``tile_cols`` are the bytes a block copies (``tiles(1, nbytes)`` blocks cover
    any head).

    Example: ``emit_copy_kernel("c").tiles(1, 1 << 20)`` is 64."""
    for label, value, most in (("vector_bytes", vector_bytes, 16), ("vectors_per_thread", vectors_per_thread, 16),
                               ("warps", warps, 32)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
            raise LayoutError(f"{label}: must be an int from 1 to {most}, got {quote(value)}")
    if isinstance(ctas_per_sm, bool) or not isinstance(ctas_per_sm, int) or not 0 <= ctas_per_sm <= 32:
        raise LayoutError(f"ctas_per_sm: must be an int from 0 to 32, got {quote(ctas_per_sm)}")
    if vector_bytes not in COPY_VECTOR_BYTES:
        raise LayoutError(f"vector_bytes: must be a power of two from 1 to 16, got {vector_bytes}")
    if streaming and vector_bytes != 16:
        raise LayoutError(f"streaming: the hinted accesses are 16-byte ones, got vector_bytes={vector_bytes}")
    v, u, threads = vector_bytes, vectors_per_thread, 32 * warps
    vt = "uint4" if v == 16 else cpp_storage_type(v)
    if streaming:
        load = "ll_ldg128_na(s + {i})"
        store = "{{ const uint4 w = {x}; ll_stg128_cs(d + {i}, w.x, w.y, w.z, w.w); }}"
    else:
        load = "s[{i}]"
        store = "d[{i}] = {x};"
    index = [f"first + {k * threads}ull" for k in range(u)]
    lines = [
        OP_PRELUDE + (STREAMING_FUNCTIONS if streaming else ""),
        f'extern "C" __global__ void __launch_bounds__({threads}) {name}(const unsigned char* __restrict__ src, '
        "unsigned char* __restrict__ dst, unsigned long long nbytes) {",
        *DEPENDENT_LAUNCH_PROLOGUE,
        f"  const unsigned long long misaligned = (unsigned long long)(size_t)src % {v}ull;",
        f"  unsigned long long head = misaligned ? {v}ull - misaligned : 0ull;",
        "  if (head > nbytes) head = nbytes;",
        f"  const unsigned long long vectors = (nbytes - head) / {v}ull;",
        f"  const {vt}* s = reinterpret_cast<const {vt}*>(src + head);",
        f"  {vt}* d = reinterpret_cast<{vt}*>(dst + head);",
    ]
    if ctas_per_sm:
        lines.append(f"  for (unsigned long long first = (unsigned long long)blockIdx.x * {u * threads}ull + threadIdx.x; "
                     f"first < vectors; first += (unsigned long long)gridDim.x * {u * threads}ull) {{")
    else:
        lines.append(f"  {{ const unsigned long long first = (unsigned long long)blockIdx.x * {u * threads}ull "
                     "+ threadIdx.x;")
    lines.append(f"  if ({index[-1]} < vectors) {{  // a whole block's vectors: every load before the first store")
    lines += [f"    const {vt} x{k} = {load.format(i=index[k])};" for k in range(u)]
    lines += ["    " + store.format(i=index[k], x=f"x{k}") for k in range(u)]
    lines.append("  } else {")
    lines += [f"    if ({index[k]} < vectors) " + store.format(i=index[k], x=load.format(i=index[k]))
              for k in range(u)]
    lines += [
        "  }",
        "  }",
        f"  if (blockIdx.x == 0 && threadIdx.x < {v}u) {{  // the head and the tail, byte by byte",
        f"    const unsigned long long tail = head + vectors * {v}ull;",
        "    if (threadIdx.x < head) dst[threadIdx.x] = src[threadIdx.x];",
        "    if (tail + threadIdx.x < nbytes) dst[tail + threadIdx.x] = src[tail + threadIdx.x];",
        "  }",
        "}",
        "",
    ]
    params = (("const unsigned char*", "src"), ("unsigned char*", "dst"), ("unsigned long long", "nbytes"))
    return PermuteKernel(name, "\n".join(lines), threads, 0, 1, 1, v * u * threads, v, v, False, 0, params,
                         ctas_per_sm)
