"""The fp8 cast-transpose of rows that 16 bytes do not align, with 16-byte global accesses on every side.

When a row length or a base address leaves the rows of ``X`` (``rows x cols``), of ``C = fp8(scale X)`` or of
``T = C^T`` at any byte offset, the vectors of ``codegen.permute``'s tiles would have to shrink to single
elements for the whole matrix. Here a tile's row segment ``[a, a + L)`` of any of the three moves instead
as the aligned 16-byte chunks that cover it:

- ``X``: each chunk is loaded whole into shared memory, at the segment's own offset ``a mod 16`` in its row
  of the buffer (a chunk that would cross either end of ``X`` is read element by element inside it);
- the tile's elements are read back one per thread at ``(i, j)``, cast, and written as bytes into a ``C``
  buffer (row ``i``, at ``C``'s own offset mod 16) and a ``T`` buffer (row ``j``, likewise);
- ``C``, ``T``: a chunk inside the segment is stored whole (16 bytes); the two chunks at its ends byte by
  byte, only the segment's bytes (the neighbouring tiles own the rest).

A warp reads and writes shared memory as 8 rows by 4 columns of the tile (each buffer's row pitch is 4 words
past a multiple of 32 banks): the rows fall in distinct banks, the columns in one word. The amax, the scale
and the launch (``tiles_n * tiles_m`` CTAs, tile ``(t / tiles_n, t mod tiles_n)``) are those of
``permute.emit_cast_transpose_kernel``, whose parameters the kernel takes.

Example: ``emit_realigned_cast_transpose_kernel("k", "bf16", "e4m3")``: 128 x 128 tiles of 8 warps; a
``4095 x 11007`` matrix takes ``32 x 86`` CTAs, each row of ``X`` in 17 chunks.
"""

from __future__ import annotations

from linear_layouts.target import Target, resolve
from linear_layouts.codegen.intrinsics import DEVICE_PRELUDE, KERNEL_PROLOGUE
from linear_layouts.codegen.permute import CAST_FUNCTIONS, CAST_INPUTS, FP8_FORMATS, PermuteKernel
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote

__all__ = ["emit_realigned_cast_transpose_kernel", "realigned_shared_bytes"]

#: Bytes of one aligned chunk (the widest global access).
_CHUNK = 16
#: CTAs per SM the kernel is compiled for at most (``__launch_bounds__``: 85 registers a thread at 8 warps).
_MAX_CTAS_PER_SM = 3


def _pitch(row_bytes: int) -> int:
    """Shared bytes per buffer row: the row's chunks (one more for its offset), rounded so that the pitch is 4
    words past a multiple of 32 banks (8 consecutive rows in distinct banks).

    >>> _pitch(256), _pitch(128), _pitch(64)
    (272, 144, 80)
    """
    pitch = (row_bytes // _CHUNK + 1) * _CHUNK
    while (pitch // 4) % 8 != 4:
        pitch += _CHUNK
    return pitch


def realigned_shared_bytes(rows: int, cols: int, input_bytes: int) -> int:
    """Dynamic shared memory of the kernel of ``rows x cols`` tiles of ``input_bytes``-byte inputs: the ``X``,
    ``C`` and ``T`` buffers and one float per warp for the amax (at most 32 warps)."""
    return rows * (_pitch(cols * input_bytes) + _pitch(cols)) + cols * _pitch(rows) + 4 * 32


def _to_float(fmt: str, raw: str) -> str:
    if fmt == "bf16":
        return f"__uint_as_float(({raw}) << 16)"
    if fmt == "fp16":
        return f"ll_f16_to_f32({raw})"
    return f"__uint_as_float({raw})"


def emit_realigned_cast_transpose_kernel(name: str, input_format: str, fp8: str, rows: int = 128, cols: int = 128,
                                         warps: int = 8, target: Target | None = None) -> PermuteKernel:
    """CUDA C++ of the module doc's kernel: ``C = fp8(scale X)``, ``T = C^T`` and ``amax = max(amax, max |X|)``
    for ``X`` of ``input_format`` (``permute.CAST_INPUTS``) at any address and row length, by ``rows x cols``
    tiles (powers of two, ``rows`` a multiple of 8, ``cols`` of 4) of ``warps`` warps; ``target`` (default: the
    default target) bounds the CTAs an SM holds, which the launch bounds name.

    Example: the defaults make 128 x 128 tiles, 256 threads, ``realigned_shared_bytes(128, 128, 2)`` bytes."""
    if input_format not in CAST_INPUTS:
        raise LayoutError(f"input_format: must be one of {tuple(CAST_INPUTS)}, got {quote(input_format)}")
    if fp8 not in FP8_FORMATS:
        raise LayoutError(f"fp8: must be one of {FP8_FORMATS}, got {quote(fp8)}")
    if not name.isidentifier():
        raise LayoutError(f"name: {quote(name)} is not a C identifier")
    for label, value, least in (("rows", rows, 8), ("cols", cols, 4), ("warps", warps, 1)):
        if value < least or value & (value - 1) or value > 1024:
            raise LayoutError(f"{label}: must be a power of two from {least} to 1024, got {quote(value)}")
    if warps > 32:
        raise LayoutError(f"warps: a CTA holds at most 32 warps, got {warps}")
    wi = CAST_INPUTS[input_format]
    itype = {2: "unsigned short", 4: "unsigned"}[wi]
    threads = 32 * warps
    px, pc, pt = _pitch(cols * wi), _pitch(cols), _pitch(rows)
    c_off, t_off = rows * px, rows * px + rows * pc
    slot = t_off + cols * pt
    kx, kc, kt = cols * wi // _CHUNK + 1, cols // _CHUNK + 1, rows // _CHUNK + 1  # chunks per segment, at most
    loads = -(-rows * kx // threads)
    blocks = (rows // 8) * (cols // 4)
    lds = {2: "ll_lds16", 4: "ll_lds32"}[wi]
    shared = slot + 4 * 32
    t = resolve(target)
    ctas_per_sm = max(1, min(t.sm_threads // threads, t.sm_shared_bytes // (shared + t.cta_reserved_shared_bytes),
                             _MAX_CTAS_PER_SM))
    sts = {2: "ll_sts16", 4: "ll_sts32"}[wi]
    params = [(f"const {itype}* __restrict__", "src_all"), ("unsigned char* __restrict__", "cast_all"),
              ("unsigned char* __restrict__", "trans_all"), ("const float* __restrict__", "scale_ptr"),
              ("float", "scale_value"), ("float* __restrict__", "amax_ptr"), ("unsigned", "rows"),
              ("unsigned", "cols"), ("unsigned", "tiles_n"), ("unsigned", "tiles_m")]

    def stores(buffer: str, offset: int, pitch: int, chunks: int, count: str, length: str, start: str) -> list[str]:
        """Lines storing ``count`` segments (``length`` bytes from address ``start(r)``) from their buffer."""
        return [
            f"  for (unsigned q = threadIdx.x; q < {count} * {chunks}u; q += {threads}u) {{",
            f"    const unsigned r = q / {chunks}u, k = q - r * {chunks}u;",
            f"    const size_t a = {start}, g = (a & ~(size_t)15) + 16u * k;",
            f"    if (g >= a + {length}) continue;",
            f"    const unsigned s = smem + {offset}u + r * {pitch}u + 16u * k;",
            f"    if (g >= a && g + 16u <= a + {length}) {{  // a whole chunk of the {buffer} segment",
            "      unsigned x, y, z, w;",
            "      ll_lds128(s, x, y, z, w);",
            "      ll_stg128(reinterpret_cast<void*>(g), x, y, z, w);",
            "    } else {  // an end of the segment: its bytes only",
            "      for (unsigned b = 0u; b < 16u; ++b)",
            f"        if (g + b >= a && g + b < a + {length}) ll_stg8(reinterpret_cast<void*>(g + b), ll_lds8(s + b));",
            "    }",
            "  }",
        ]

    body = [
        f"// {name}: C = fp8 {fp8}(scale X), T = C^T, amax = max(amax, max |X|); X rows x cols {input_format} at any",
        f"//   address and row length, by {rows}x{cols} tiles moved as aligned 16-byte chunks (ends of segments byte by",
        f"//   byte). launch: a 1-D grid of tiles_n * tiles_m CTAs, block = {threads}, dynamic shared = {shared} bytes",
        f"//   ({ctas_per_sm} CTAs per SM).",
        f'extern "C" __global__ void __launch_bounds__({threads}, {ctas_per_sm}) {name}(',
        f"    {', '.join(f'{t} {p}' for t, p in params)}) {{",
        *KERNEL_PROLOGUE,
        "  const unsigned tile_col = blockIdx.x % tiles_n, tile_row = blockIdx.x / tiles_n;",
        f"  const unsigned row0 = tile_row * {rows}u, col0 = tile_col * {cols}u;",
        f"  const unsigned rows_left = rows - row0 < {rows}u ? rows - row0 : {rows}u;",
        f"  const unsigned cols_left = cols - col0 < {cols}u ? cols - col0 : {cols}u;",
        "  const float scale = scale_ptr != nullptr ? *scale_ptr : scale_value;",
        "  const unsigned char* __restrict__ x_bytes = reinterpret_cast<const unsigned char*>(src_all);",
        "  const size_t x_begin = reinterpret_cast<size_t>(src_all);",
        f"  const size_t x_end = x_begin + (size_t)rows * cols * {wi}u;",
        "  const size_t c_base = reinterpret_cast<size_t>(cast_all), t_base = reinterpret_cast<size_t>(trans_all);",
        "  // 1. the chunks of X's row segments, loaded first, then put at their offsets",
        f"  uint4 v[{loads}];",
        "  #pragma unroll",
        f"  for (unsigned u = 0u; u < {loads}u; ++u) {{",
        f"    const unsigned q = threadIdx.x + u * {threads}u, r = q / {kx}u, k = q - r * {kx}u;",
        f"    const size_t a = x_begin + ((size_t)(row0 + r) * cols + col0) * {wi}u, g = (a & ~(size_t)15) + 16u * k;",
        f"    if (r < rows_left && g < a + cols_left * {wi}u && g >= x_begin && g + 16u <= x_end)",
        "      v[u] = *reinterpret_cast<const uint4*>(x_bytes + (g - x_begin));",
        "  }",
        "  #pragma unroll",
        f"  for (unsigned u = 0u; u < {loads}u; ++u) {{",
        f"    const unsigned q = threadIdx.x + u * {threads}u, r = q / {kx}u, k = q - r * {kx}u;",
        f"    const size_t a = x_begin + ((size_t)(row0 + r) * cols + col0) * {wi}u, g = (a & ~(size_t)15) + 16u * k;",
        f"    if (r >= rows_left || g >= a + cols_left * {wi}u) continue;",
        f"    const unsigned s = smem + r * {px}u + 16u * k;",
        "    if (g >= x_begin && g + 16u <= x_end) {",
        "      ll_sts128(s, v[u].x, v[u].y, v[u].z, v[u].w);",
        "    } else {  // a chunk across an end of X: its elements inside X",
        f"      for (unsigned e = 0u; e < 16u; e += {wi}u)",
        f"        if (g + e >= x_begin && g + e < x_end) {sts}(s + e, *reinterpret_cast<const {itype}*>(x_bytes + (g + e - x_begin)));",
        "    }",
        "  }",
        "  ll_bar_cta();",
        "  // 2. element (i, j): cast, amax, its byte into the C and T buffers (a warp: 8 rows x 4 columns)",
        "  float amax = 0.0f;",
        "  const unsigned x_low = (unsigned)x_begin, c_low = (unsigned)c_base, t_low = (unsigned)t_base;",
        "  #pragma unroll 4",
        f"  for (unsigned blk = warp; blk < {blocks}u; blk += {warps}u) {{",
        f"    const unsigned i = (blk % {rows // 8}u) * 8u + (lane >> 2), j = (blk / {rows // 8}u) * 4u + (lane & 3u);",
        "    if (i >= rows_left || j >= cols_left) continue;",
        "    // offsets mod 16 in 32-bit arithmetic (wrapping keeps the low bits)",
        f"    const unsigned xs = (x_low + ((row0 + i) * cols + col0) * {wi}u) & 15u;",
        f"    const float f = {_to_float(input_format, f'{lds}(smem + i * {px}u + xs + {wi}u * j)')};",
        "    amax = fmaxf(amax, fabsf(f));",
        f"    const unsigned byte = ll_cvt_{fp8}x2(f * scale, 0.0f) & 0xffu;",
        "    const unsigned cs = (c_low + (row0 + i) * cols + col0) & 15u;",
        "    const unsigned ts = (t_low + (col0 + j) * rows + row0) & 15u;",
        f"    ll_sts8(smem + {c_off}u + i * {pc}u + cs + j, byte);",
        f"    ll_sts8(smem + {t_off}u + j * {pt}u + ts + i, byte);",
        "  }",
        "  ll_bar_cta();",
        "  // 3. the segments of C (rows of the tile) and of T (its columns)",
        *stores("C", c_off, pc, kc, "rows_left", "cols_left", "c_base + (size_t)(row0 + r) * cols + col0"),
        *stores("T", t_off, pt, kt, "cols_left", "rows_left", "t_base + (size_t)(col0 + r) * rows + row0"),
        "  // the CTA's amax: a warp maximum, one slot per warp, one atomic (amax >= 0: its bits order as ints)",
        "  #pragma unroll",
        "  for (unsigned s = 16u; s; s >>= 1) amax = fmaxf(amax, __uint_as_float(__shfl_xor_sync(0xffffffffu, "
        "__float_as_uint(amax), s)));",
        f"  if (lane == 0u) ll_sts32(smem + {slot}u + 4u * warp, __float_as_uint(amax));",
        "  ll_bar_cta();",
        "  if (threadIdx.x == 0u) {",
        f"    for (unsigned k = 1u; k < {warps}u; ++k) amax = fmaxf(amax, __uint_as_float(ll_lds32(smem + {slot}u + 4u * k)));",
        "    if (amax_ptr != nullptr) ll_atomic_max_amax(amax_ptr, amax);",
        "  }",
        "}",
    ]
    source = DEVICE_PRELUDE + CAST_FUNCTIONS + "\n".join(body) + "\n"
    return PermuteKernel(name, source, threads, shared, wi, rows, cols, 1, 1, True, 0, tuple(params))
