"""The fp8 cast-transpose of rows that 16 bytes do not align, with 16-byte global accesses on every side.

When a row length or a base address leaves the rows of ``X`` (``rows x cols``), of ``C = fp8(scale X)`` or of
``T = C^T`` at any byte offset, the vectors of ``codegen.permute``'s tiles would have to shrink to single
elements for the whole matrix. Here every 16-byte chunk of ``C`` and ``T`` is written whole, once, by the
tile that holds the chunk's first byte: a tile's segment ``[p0, p1)`` of an output row at address ``A``
writes the positions ``[align16(A + p0) - A, align16(A + p1) - A)`` (from the row's start in the first
tile of a row, to its end in the last; only the chunks holding a row's start or end are written byte by
byte). That range reaches up to 15 positions into the next tile, so a CTA reads a window of ``X`` 16 rows
and 16 columns larger than its tile:

1. the window's rows of ``X`` are loaded as the aligned 16-byte chunks that cover them, into shared memory
   at their own offset ``a mod 16`` (zeros past ``X``'s end; a chunk across an end of ``X`` element by
   element);
2. each thread converts 4 x 4 blocks: three 32-bit reads and a ``prmt`` per row of 2-byte inputs, the
   amax, two ``cvt`` pairs per row, and a ``prmt`` transpose of the 4 x 4 bytes; it stores one 32-bit word
   per row into a ``C`` buffer and one per column into a ``T`` buffer, each output row shifted there by
   whole words so that its chunks start 0 to 3 bytes past a 16-byte boundary;
3. a thread moves 4 chunks of an output row: a 16-byte and a 32-bit shared read, four ``prmt`` byte
   shifts, one 16-byte global store.

The window's right strip feeds only ``C``, its bottom strip only ``T``; the amax is taken over the tile's
own block (whose elements past ``X``'s rows or columns are ``X``'s next ones, or zeros). The amax reduction, the scale and the launch
(``tiles_n * tiles_m`` CTAs, tile ``(t / tiles_n, t mod tiles_n)``) are those of
``permute.emit_cast_transpose_kernel``, whose parameters the kernel takes.

Example: ``emit_realigned_cast_transpose_kernel("k", "bf16", "e4m3")``: 128 x 128 tiles of 8 warps; a
``4095 x 11007`` matrix takes ``32 x 86`` CTAs, each reading a 144 x 144 window of ``X``.
"""

from __future__ import annotations

from linear_layouts.target import Target, resolve
from linear_layouts.codegen.intrinsics import DEVICE_PRELUDE, KERNEL_PROLOGUE
from linear_layouts.codegen.permute import (
    CAST_FUNCTIONS, CAST_INPUTS, FP8_FORMATS, PermuteKernel, amax_epilogue, to_float,
)
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote

__all__ = ["emit_realigned_cast_transpose_kernel", "realigned_shared_bytes", "window_pitch", "output_pitch",
           "owned_positions"]

#: Bytes of one aligned chunk (the widest global access); the window's margin in elements.
_CHUNK = 16
#: Output chunks a thread moves in step 3.
_CHUNKS_PER_THREAD = 4
#: CTAs per SM the kernel is compiled for at most (``__launch_bounds__``: 128 registers a thread at 8 warps,
#: the window's chunks held in registers between their loads and their stores).
_MAX_CTAS_PER_SM = 2


def owned_positions(address: int, length: int, p0: int, p1: int) -> tuple[int, int]:
    """``[lo, hi)``: the positions of an output row of ``length`` bytes at ``address`` that the tile holding
    its segment ``[p0, p1)`` writes (the module doc's ownership): from the first 16-byte boundary at or after
    ``p0`` (the row's start when ``p0 == 0``) to the first at or after ``p1`` (the row's end when
    ``p1 == length``), clipped to the row. Step 3 computes the same with ``s = lo - p0`` and ``end = hi - p0``.

    >>> owned_positions(3, 300, 128, 256), owned_positions(3, 300, 0, 128), owned_positions(3, 300, 256, 300)
    ((141, 269), (0, 141), (269, 300))
    """
    def boundary(p: int) -> int:
        return min(length, p + (-(address + p)) % _CHUNK)

    return (0 if p0 == 0 else boundary(p0)), (length if p1 == length else boundary(p1))


def window_pitch(cols: int, input_bytes: int) -> int:
    """Shared bytes per row of the ``X`` window of a tile of ``cols`` columns: the chunks covering
    ``cols + 16`` elements at any offset, back to back.

    >>> window_pitch(128, 2), window_pitch(64, 4)
    (304, 336)
    """
    return ((cols + _CHUNK) * input_bytes // _CHUNK + 1) * _CHUNK


def output_pitch(length: int) -> int:
    """Shared bytes per row of a ``C`` or ``T`` buffer of tile segments of ``length`` bytes: the segment,
    the 16-byte margin, up to 3 words of shift and one chunk read past, in an odd number of chunks (8
    consecutive rows' chunks then fall in distinct bank groups).

    >>> output_pitch(128), output_pitch(64)
    (176, 112)
    """
    chunks = length // _CHUNK + 2
    return _CHUNK * (chunks | 1)


def realigned_shared_bytes(rows: int, cols: int, input_bytes: int) -> int:
    """Dynamic shared memory of the kernel of ``rows x cols`` tiles of ``input_bytes``-byte inputs: the ``X``
    window (and one chunk of slack), the ``C`` and ``T`` buffers and one float per warp for the amax (at
    most 32 warps)."""
    return ((rows + _CHUNK) * window_pitch(cols, input_bytes) + _CHUNK + rows * output_pitch(cols)
            + cols * output_pitch(rows) + 4 * 32)


def _block_function(fmt: str, fp8: str, wi: int, px: int) -> list[str]:
    """``ll_realign_block``: the 4 x 4 block of the ``X`` window at rows ``r .. r+3`` (their offsets mod 16
    from ``xrow``, which steps by ``xstep``), columns ``4 bj .. 4 bj + 3``: amax, and its fp8 bytes as 4
    row words ``c[t]`` and 4 column words ``tw[t]``."""
    lines = [
        "template <bool OWN> LL_DEV void ll_realign_block(unsigned smem, unsigned r, unsigned bj, unsigned xrow,",
        "                                                unsigned xstep, float scale, float& amax, unsigned* c, unsigned* tw) {",
        "  #pragma unroll",
        "  for (unsigned t = 0u; t < 4u; ++t) {",
        f"    const unsigned o = smem + (r + t) * {px}u + ((xrow + t * xstep) & 15u) + {4 * wi}u * bj;",
    ]
    if wi == 2:
        lines += [
            "    const unsigned w = o & ~3u, sel = (o & 2u) ? 0x5432u : 0x3210u;",
            "    const unsigned w0 = ll_lds32(w), w1 = ll_lds32(w + 4u), w2 = ll_lds32(w + 8u);",
            "    const unsigned e01 = __byte_perm(w0, w1, sel), e23 = __byte_perm(w1, w2, sel);",
            f"    const float f0 = {to_float(fmt, 'e01')}, f1 = {to_float(fmt, 'e01 >> 16')};",
            f"    const float f2 = {to_float(fmt, 'e23')}, f3 = {to_float(fmt, 'e23 >> 16')};",
        ]
    else:
        lines += [
            "    const float f0 = __uint_as_float(ll_lds32(o)), f1 = __uint_as_float(ll_lds32(o + 4u));",
            "    const float f2 = __uint_as_float(ll_lds32(o + 8u)), f3 = __uint_as_float(ll_lds32(o + 12u));",
        ]
    lines += [
        "    if (OWN) amax = fmaxf(fmaxf(amax, fabsf(f0)), fmaxf(fabsf(f1), fmaxf(fabsf(f2), fabsf(f3))));",
        f"    c[t] = ll_cvt_{fp8}x2(f0 * scale, f1 * scale) | (ll_cvt_{fp8}x2(f2 * scale, f3 * scale) << 16);",
        "  }",
        "  // the 4 x 4 bytes transposed: tw[j] holds byte j of c[0], c[1], c[2], c[3]",
        "  const unsigned lo01 = __byte_perm(c[0], c[1], 0x5140u), hi01 = __byte_perm(c[0], c[1], 0x7362u);",
        "  const unsigned lo23 = __byte_perm(c[2], c[3], 0x5140u), hi23 = __byte_perm(c[2], c[3], 0x7362u);",
        "  tw[0] = __byte_perm(lo01, lo23, 0x5410u); tw[1] = __byte_perm(lo01, lo23, 0x7632u);",
        "  tw[2] = __byte_perm(hi01, hi23, 0x5410u); tw[3] = __byte_perm(hi01, hi23, 0x7632u);",
        "}",
    ]
    return lines


def _region(label: str, count: int, first: int, bi0: int, blocks_i: int, bj0: int, blocks_j: int, li: int,
            cast: bool, trans: bool, geometry: dict[str, int]) -> list[str]:
    """The lines of one region of the window in step 2's task loop: tasks ``[first, first + count)``, each
    ``li x 32 / li`` blocks (rows x columns of blocks) of the region's ``blocks_i x blocks_j`` blocks at
    block ``(bi0, bj0)``; ``cast`` / ``trans``: whether its blocks feed ``C`` / ``T``."""
    lj = 32 // li
    per_row = blocks_j // lj
    g = geometry
    lines = [
        f"    {'if' if first == 0 else 'else if'} (task < {first + count}u) {{  // {label}",
        f"      const unsigned u = task - {first}u;",
        f"      const unsigned bi = {bi0}u + (u / {per_row}u) * {li}u + lane / {lj}u;",
        f"      const unsigned bj = {bj0}u + (u % {per_row}u) * {lj}u + (lane % {lj}u);",
        "      const unsigned e = (row0 + 4u * bi) * cols + col0;  // element of the block's first row (mod 2**32)",
        f"      ll_realign_block<{'true' if cast and trans else 'false'}>(smem, 4u * bi, bj, x_low + e * {g['wi']}u, cols * {g['wi']}u, scale, amax, c, tw);",
    ]
    if cast:
        lines += [
            "      #pragma unroll",
            "      for (unsigned t = 0u; t < 4u; ++t)  // row 4 bi + t of C: its chunks 0-3 bytes past 16",
            f"        ll_sts32(smem + {g['c_off']}u + (4u * bi + t) * {g['pc']}u + (((c_low + e + t * cols) + 3u) & 12u)"
            " + 4u * bj, c[t]);",
        ]
    if trans:
        lines += [
            "      #pragma unroll",
            "      for (unsigned t = 0u; t < 4u; ++t) {  // row 4 bj + t of T",
            "        const unsigned j = 4u * bj + t;",
            f"        ll_sts32(smem + {g['t_off']}u + j * {g['pt']}u + (((t_low + (col0 + j) * rows + row0) + 3u) & 12u)"
            " + 4u * bi, tw[t]);",
            "      }",
        ]
    return lines + ["    }"]


def _stores(side: str, offset: int, pitch: int, length: int, threads: int) -> list[str]:
    """Step 3 for one output (``C`` or ``T``): its rows of the tile, ``_CHUNKS_PER_THREAD`` chunks a thread."""
    per_row = length // _CHUNK // _CHUNKS_PER_THREAD  # threads per output row
    if side == "C":
        count, base, at, seg, full, first = "rows_left", "c_low", "cast_all", "cols_left", "cols", "col0"
        element = "(size_t)(row0 + i) * cols + col0"
    else:
        count, base, at, seg, full, first = "cols_left", "t_low", "trans_all", "rows_left", "rows", "row0"
        element = "(size_t)(col0 + i) * rows + row0"
    return [
        f"  // {side}: the chunks of its rows' segments (row i: from its first 16-byte boundary to the one after",
        "  //   the segment's end; a row's start and end byte by byte)",
        f"  for (unsigned i = threadIdx.x / {per_row}u; i < {count}; i += {threads // per_row}u) {{",
        f"    const size_t e = {element};",
        f"    const unsigned d = ({base} + (unsigned)e) & 15u, s = (16u - d) & 15u;  // s: to the first boundary",
        f"    const unsigned room = {full} - {first};  // positions to the row's end",
        f"    const unsigned end = {first} + {seg} == {full} ? {seg}",
        f"        : (room < {seg} + ((0u - (d + {seg})) & 15u) ? room : {seg} + ((0u - (d + {seg})) & 15u));",
        f"    const unsigned row = smem + {offset}u + i * {pitch}u + (s >= 4u ? 16u : 0u);  // chunk 0's word",
        "    const unsigned sel = 0x3210u + 0x1111u * (s & 3u);",
        f"    unsigned char* const out = {at} + e + s;  // 16-byte aligned",
        "    #pragma unroll",
        f"    for (unsigned h = 0u; h < {_CHUNKS_PER_THREAD}u; ++h) {{",
        f"      const unsigned k = (threadIdx.x % {per_row}u) * {_CHUNKS_PER_THREAD}u + h, at = s + 16u * k;",
        "      if (at >= end) break;",
        "      if (at + 16u <= end) {",
        "        unsigned w0, w1, w2, w3;",
        "        ll_lds128(row + 16u * k, w0, w1, w2, w3);",
        "        const unsigned w4 = ll_lds32(row + 16u * k + 16u);",
        "        ll_stg128(out + 16u * k, __byte_perm(w0, w1, sel), __byte_perm(w1, w2, sel), __byte_perm(w2, w3, sel),"
        " __byte_perm(w3, w4, sel));",
        "      } else {  // the row's end",
        "        #pragma unroll 1",
        "        for (unsigned b = 0u; at + b < end; ++b)",
        "          ll_stg8(out + 16u * k + b, ll_lds8(row + 16u * k + (s & 3u) + b));",
        "      }",
        "    }",
        f"    if ({first} == 0u && threadIdx.x % {per_row}u == 0u) {{  // the row's start, before its first boundary",
        "      #pragma unroll 1",
        "      for (unsigned b = 0u; b < s && b < end; ++b)",
        f"        ll_stg8({at} + e + b, ll_lds8(smem + {offset}u + i * {pitch}u + b + ((d + 3u) & 12u)));",
        "    }",
        "  }",
    ]


def emit_realigned_cast_transpose_kernel(name: str, input_format: str, fp8: str, rows: int = 128, cols: int = 128,
                                         warps: int = 8, target: Target | None = None,
                                         ctas_per_sm: int = 0) -> PermuteKernel:
    """CUDA C++ of the module doc's kernel: ``C = fp8(scale X)``, ``T = C^T`` and ``amax = max(amax, max |X|)``
    for ``X`` of ``input_format`` (``permute.CAST_INPUTS``) at any address and row length, by ``rows x cols``
    tiles (powers of two from 64 to 256) of ``warps`` warps (1 to 32); ``target`` (default: the default
    target) bounds the CTAs an SM holds, which the launch bounds name: as many as its threads and shared
    memory allow, at most ``ctas_per_sm`` (0: ``_MAX_CTAS_PER_SM``).

    Example: the defaults make 128 x 128 tiles, 256 threads, ``realigned_shared_bytes(128, 128, 2)`` bytes."""
    if input_format not in CAST_INPUTS:
        raise LayoutError(f"input_format: must be one of {tuple(CAST_INPUTS)}, got {quote(input_format)}")
    if fp8 not in FP8_FORMATS:
        raise LayoutError(f"fp8: must be one of {FP8_FORMATS}, got {quote(fp8)}")
    if not name.isidentifier():
        raise LayoutError(f"name: {quote(name)} is not a C identifier")
    for label, value, least, most in (("rows", rows, 64, 256), ("cols", cols, 64, 256), ("warps", warps, 1, 32)):
        if value < least or value & (value - 1) or value > most:
            raise LayoutError(f"{label}: must be a power of two from {least} to {most}, got {quote(value)}")
    if not 0 <= ctas_per_sm <= 32:
        raise LayoutError(f"ctas_per_sm: must be 0 (the default) to 32, got {quote(ctas_per_sm)}")
    wi = CAST_INPUTS[input_format]
    itype = {2: "unsigned short", 4: "unsigned"}[wi]
    threads = 32 * warps
    window_rows, kx, px = rows + _CHUNK, window_pitch(cols, wi) // _CHUNK, window_pitch(cols, wi)
    pc, pt = output_pitch(cols), output_pitch(rows)
    c_off = window_rows * px + _CHUNK
    t_off = c_off + rows * pc
    slot = t_off + cols * pt
    shared = slot + 4 * 32
    loads = -(-window_rows * kx // threads)
    t = resolve(target)
    ctas_per_sm = max(1, min(t.sm_threads // threads, t.sm_shared_bytes // (shared + t.cta_reserved_shared_bytes),
                             ctas_per_sm or _MAX_CTAS_PER_SM))
    params = [(f"const {itype}* __restrict__", "src_all"), ("unsigned char* __restrict__", "cast_all"),
              ("unsigned char* __restrict__", "trans_all"), ("const float* __restrict__", "scale_ptr"),
              ("float", "scale_value"), ("float* __restrict__", "amax_ptr"), ("unsigned", "rows"),
              ("unsigned", "cols"), ("unsigned", "tiles_n"), ("unsigned", "tiles_m")]
    geometry = {"wi": wi, "c_off": c_off, "t_off": t_off, "pc": pc, "pt": pt}
    bi_main, bj_main, margin = rows // 4, cols // 4, _CHUNK // 4
    # (label, blocks_i rows x blocks_j columns at (bi0, bj0), block rows per task, C, T)
    regions = [("the tile", 0, bi_main, 0, bj_main, 8, True, True),
               ("the right strip: C only", 0, bi_main, bj_main, margin, 8, True, False),
               ("the bottom strip: T only", bi_main, margin, 0, bj_main, 4, False, True)]
    task_lines, first = [], 0
    for label, bi0, nbi, bj0, nbj, li, cast, trans in regions:
        count = (nbi // li) * (nbj // (32 // li))
        task_lines += _region(label, count, first, bi0, nbi, bj0, nbj, li, cast, trans, geometry)
        first += count
    tasks = first

    body = [
        f"// {name}: C = fp8 {fp8}(scale X), T = C^T, amax = max(amax, max |X|); X rows x cols {input_format} at any",
        f"//   address and row length, by {rows}x{cols} tiles read as {window_rows}x{cols + _CHUNK} windows; every chunk",
        "//   of C and T stored whole (16 bytes) but a row's first and last. launch: a 1-D grid of tiles_n * tiles_m",
        f"//   CTAs, block = {threads}, dynamic shared = {shared} bytes ({ctas_per_sm} CTAs per SM).",
        f'extern "C" __global__ void __launch_bounds__({threads}, {ctas_per_sm}) {name}(',
        f"    {', '.join(f'{ty} {p}' for ty, p in params)}) {{",
        *KERNEL_PROLOGUE,
        "  const unsigned tile_col = blockIdx.x % tiles_n, tile_row = blockIdx.x / tiles_n;",
        f"  const unsigned row0 = tile_row * {rows}u, col0 = tile_col * {cols}u;",
        f"  const unsigned rows_left = rows - row0 < {rows}u ? rows - row0 : {rows}u;",
        f"  const unsigned cols_left = cols - col0 < {cols}u ? cols - col0 : {cols}u;",
        "  const float scale = scale_ptr != nullptr ? *scale_ptr : scale_value;",
        "  const unsigned char* __restrict__ x_bytes = reinterpret_cast<const unsigned char*>(src_all);",
        "  const size_t x_begin = reinterpret_cast<size_t>(src_all);",
        f"  const size_t x_end = x_begin + (size_t)rows * cols * {wi}u;",
        "  // offsets mod 16 in 32-bit arithmetic (wrapping keeps the low bits)",
        "  const unsigned x_low = (unsigned)x_begin, c_low = (unsigned)reinterpret_cast<size_t>(cast_all);",
        "  const unsigned t_low = (unsigned)reinterpret_cast<size_t>(trans_all);",
        f"  // 1. the window: rows row0 .. row0 + {window_rows - 1}, each the {kx} chunks from the one holding (row, col0);",
        "  //    zeros past X's end, a chunk across an end of X element by element",
        f"  uint4 v[{loads}];",
        "  #pragma unroll",
        f"  for (unsigned u = 0u; u < {loads}u; ++u) {{",
        f"    const unsigned q = threadIdx.x + u * {threads}u, r = q / {kx}u, k = q - r * {kx}u;",
        f"    const size_t a = x_begin + ((size_t)(row0 + r) * cols + col0) * {wi}u, g = (a & ~(size_t)15) + 16u * k;",
        "    v[u].x = v[u].y = v[u].z = v[u].w = 0u;",
        f"    if (q < {window_rows * kx}u && g >= x_begin && g + 16u <= x_end)",
        "      v[u] = *reinterpret_cast<const uint4*>(x_bytes + (g - x_begin));",
        "  }",
        "  #pragma unroll",
        f"  for (unsigned u = 0u; u < {loads}u; ++u) {{",
        f"    const unsigned q = threadIdx.x + u * {threads}u, r = q / {kx}u, k = q - r * {kx}u;",
        f"    if (q >= {window_rows * kx}u) break;",
        f"    const size_t a = x_begin + ((size_t)(row0 + r) * cols + col0) * {wi}u, g = (a & ~(size_t)15) + 16u * k;",
        "    if ((g < x_end && g + 16u > x_end) || (g < x_begin && g + 16u > x_begin)) {  // across an end of X",
        "      unsigned w[4] = {0u, 0u, 0u, 0u};",
        "      #pragma unroll",
        f"      for (unsigned b = 0u; b < 16u; b += {wi}u)",
        "        if (g + b >= x_begin && g + b < x_end)",
        f"          w[b / 4u] |= (unsigned)*reinterpret_cast<const {itype}*>(x_bytes + (g + b - x_begin)) << (8u * (b & 3u));",
        "      v[u].x = w[0]; v[u].y = w[1]; v[u].z = w[2]; v[u].w = w[3];",
        "    }",
        "    ll_sts128(smem + 16u * q, v[u].x, v[u].y, v[u].z, v[u].w);",
        "  }",
        "  ll_bar_cta();",
        "  // 2. 4 x 4 blocks of the window: amax; fp8 words into the C buffer (rows) and the T buffer (columns)",
        "  float amax = 0.0f;",
        "  unsigned c[4], tw[4];",
        f"  for (unsigned task = warp; task < {tasks}u; task += {warps}u) {{",
        *task_lines,
        "  }",
        "  ll_bar_cta();",
        "  // 3. the output rows' chunks",
        *_stores("C", c_off, pc, cols, threads),
        *_stores("T", t_off, pt, rows, threads),
        *amax_epilogue(slot, warps),
        "}",
    ]
    block = _block_function(input_format, fp8, wi, px)
    source = DEVICE_PRELUDE + CAST_FUNCTIONS + "\n".join(block + body) + "\n"
    return PermuteKernel(name, source, threads, shared, wi, rows, cols, 1, 1, True, 0, tuple(params))
