"""The fp8 cast-transpose of rows that 16 bytes do not align, by aligned chunks of the FLAT address space.

``C = fp8(scale X)`` has ``X``'s flat layout (``m x n``, element ``(r, c)`` at position ``p = r n + c``) and
``T = C^T`` position ``q = c m + r``; alignment is a property of flat positions, not of ``(row, col)``. With
``G`` elements a chunk (8 for 2-byte inputs: 16-byte loads of ``X``, 8-byte stores of ``C`` and ``T``; 4 for
fp32: 16-byte loads, 4-byte stores) and ``floorG(p) = p - p mod G``, the ``R x N`` tile ``(r0, c0)`` owns

- of ``C``'s row ``r`` (``r0 <= r < r0 + R``): ``[floorG(r n + c0), floorG(r n + c0 + N))``, the start ``r n``
  when ``c0 = 0`` and the end ``(r + 1) n`` in the last tile column;
- of ``T``'s row ``c`` (``c0 <= c < c0 + N``): ``[floorG(c m + r0), floorG(c m + r0 + R))``, the start ``c m``
  when ``r0 = 0`` and the end ``(c + 1) m`` in the last tile row,

each position of ``C`` and ``T`` exactly once over the grid. Each whole chunk of an owned range is one vector
store; a row's first or last chunk, partly another row's, is stored byte by byte (its owned bytes only).

=====================  =====================================================================================
step                   a CTA of ``W`` warps
=====================  =====================================================================================
1. load ``X``          rows ``r0 - (G - 1) .. r0 + R - 1`` (the ``G - 1`` rows above only when ``r0 > 0``:
                       ``T``'s ranges reach that far up), each as the ``N / G + 1`` aligned chunks from
                       ``floorG(r n + c0)``: item ``(row, chunk)`` ``threadIdx.x + 32 W i``, every load of a
                       thread issued before the first is used; a chunk across the end of ``X`` element by element
2. convert, store ``C``  ``fp8(scale x)`` two elements per ``cvt``; the chunks ``C`` owns stored from registers;
                       every chunk to shared memory as one aligned vector: element ``(r, c)`` at byte
                       ``o(r - r0 + G - 1) + c - c0 + (r n mod G)``, ``o(s) = s P + G (floor(s / G) mod S)``
3. store ``T``         after one barrier, a ``T`` chunk (``G`` rows of one column) from ``G`` shared bytes:
                       ``A = min(8, R / G)`` lanes along a row of ``T``, ``32 / A`` rows of ``T`` a warp
=====================  =====================================================================================

The pitch ``P`` (``N + G`` bytes and 88 more for ``G = 8``) and the row-group rotation ``S`` (8 for ``G = 8``,
none for ``G = 4``) spread step 3's byte reads over the banks. The amax is over every element loaded (all of
``X``'s, some twice); the reduction, the scale and the launch (``tiles_n * tiles_m`` CTAs, tile
``(t / tiles_n, t mod tiles_n)``) are those of ``permute.emit_cast_transpose_kernel``, whose parameters the kernel
takes. Requires: ``X``'s address a multiple of 16, ``C``'s and ``T``'s of ``G``.

Example: ``emit_chunked_cast_transpose_kernel("k", "bf16", "e4m3")``: 64 x 64 tiles of 8 warps; a tile loads
71 rows of 9 chunks (3 a thread); of a ``4095 x 11007`` matrix, tile ``(64, 64)``'s row 64 owns ``C``'s positions
``[704512, 704576)`` (``64 x 11007 + 64 = 704512``, a multiple of 8) and the ``64 x 172`` CTAs cover ``C`` and ``T``.
"""

from __future__ import annotations

from linear_layouts.codegen.intrinsics import DEVICE_PRELUDE, KERNEL_PROLOGUE
from linear_layouts.codegen.permute import (
    CAST_FUNCTIONS, CAST_INPUTS, PermuteKernel, amax_epilogue, cast_params, check_cast_arguments, fitting_ctas,
    to_float,
)
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote
from linear_layouts.target import Target

__all__ = ["emit_chunked_cast_transpose_kernel", "chunk_elements", "chunked_pitch", "chunked_shared_bytes",
           "thread_registers", "owned_range", "CHUNK_LOAD_BYTES", "MAX_CHUNKS"]

#: Bytes of one aligned load of ``X``.
CHUNK_LOAD_BYTES = 16
#: Chunks a thread holds in flight at most (more spill within ``thread_registers``).
MAX_CHUNKS = 4


def chunk_elements(input_bytes: int) -> int:
    """``G``: elements of a 16-byte chunk of ``X``: 8 of 2 bytes, 4 of 4 bytes."""
    return CHUNK_LOAD_BYTES // input_bytes


def _rotation(g: int) -> int:
    """``S``: row groups the shared rows rotate over (module doc): 8 for ``G = 8``, 1 (none) for ``G = 4``."""
    return 8 if g == 8 else 1


def chunked_pitch(cols: int, g: int) -> int:
    """``P``: bytes between step 2's shared rows: the ``N / G + 1`` chunks of a row, and 88 more for ``G = 8``.

    >>> chunked_pitch(64, 8), chunked_pitch(64, 4)
    (160, 68)
    """
    return cols + g + (88 if g == 8 else 0)


def chunked_shared_bytes(rows: int, cols: int, g: int) -> int:
    """Dynamic shared memory of an ``R x N`` tile: its ``R + G - 1`` rows of fp8 chunks (the last row's end, the
    rotation included, rounded up to 4 bytes) and one float per warp (at most 32) for the amax."""
    end = (rows + g - 2) * chunked_pitch(cols, g) + g * (_rotation(g) - 1) + cols + g
    return -(-end // 4) * 4 + 4 * 32


def thread_registers(chunks: int) -> int:
    """Registers a thread is budgeted when the launch bounds' CTAs per SM are chosen: 8 per 16-byte chunk in
    flight (its 4 words, its addresses and bounds) and 24 for the rest, in steps of 8: 48 for 3 chunks.

    >>> thread_registers(3), thread_registers(5)
    (48, 64)
    """
    return -(-(24 + 8 * chunks) // 8) * 8


def owned_range(start: int, offset: int, tile: int, length: int, g: int) -> tuple[int, int]:
    """``[lo, hi)``: the flat positions of a row starting at ``start`` (``length`` elements) that the tile at
    ``offset`` along it (``tile`` elements, ``offset`` a multiple of ``tile``) owns (module doc).

    >>> owned_range(3 * 11007, 0, 64, 11007, 8), owned_range(3 * 11007, 64, 64, 11007, 8)
    ((33021, 33080), (33080, 33144))
    """
    lo = start if offset == 0 else (start + offset) // g * g
    hi = start + length if offset + tile >= length else (start + offset + tile) // g * g
    return lo, hi


def _load_function(itype: str, wi: int, g: int) -> list[str]:
    """``ll_chunk_load(x, f, needed, total)``: the 16-byte chunk of ``X`` from element ``f`` (a multiple of
    ``G``), zeros where not ``needed``, element by element (zeros past it) where it crosses ``total``."""
    return [
        "#ifndef LL_CHUNK_LOAD",
        "#define LL_CHUNK_LOAD",
        f"LL_DEV uint4 ll_chunk_load(const {itype}* __restrict__ x, size_t f, bool needed, size_t total) {{",
        "  uint4 v; v.x = v.y = v.z = v.w = 0u;",
        "  if (!needed) return v;",
        f"  if (f + {g}u <= total) return *reinterpret_cast<const uint4*>(x + f);",
        "  unsigned w[4] = {0u, 0u, 0u, 0u};",
        "  #pragma unroll",
        f"  for (unsigned e = 0u; e < {g}u; ++e)",
        f"    if (f + e < total) w[e * {wi}u / 4u] |= (unsigned)x[f + e] << (8u * ((e * {wi}u) & 3u));",
        "  v.x = w[0]; v.y = w[1]; v.z = w[2]; v.w = w[3];",
        "  return v;",
        "}",
        "#endif",
    ]


def _convert_lines(fmt: str, fp8: str, wi: int) -> list[str]:
    """Lines turning chunk ``v[i]`` into the fp8 words ``c0`` (``c1``) and folding its ``|x|`` into ``amax``."""
    cvt = f"ll_cvt_{fp8}x2"
    words = ("v[i].x", "v[i].y", "v[i].z", "v[i].w")
    if wi == 2:
        lines = [f"      const float f{2 * k} = {to_float(fmt, words[k])}, f{2 * k + 1} = {to_float(fmt, f'{words[k]} >> 16')};"
                 for k in range(4)]
        values = 8
    else:
        lines = [f"      const float f{k} = {to_float(fmt, words[k])};" for k in range(4)]
        values = 4
    level = [f"fabsf(f{k})" for k in range(values)]
    while len(level) > 1:
        level = [f"fmaxf({level[i]}, {level[i + 1]})" for i in range(0, len(level), 2)]
    lines.append(f"      amax = fmaxf(amax, {level[0]});")
    for w in range(values // 4):
        a, b, c, d = (4 * w + k for k in range(4))
        lines.append(f"      const unsigned c{w} = {cvt}(f{a} * scale, f{b} * scale) | ({cvt}(f{c} * scale, f{d} * scale) << 16);")
    return lines


def emit_chunked_cast_transpose_kernel(name: str, input_format: str, fp8: str, rows: int = 64, cols: int = 64,
                                       warps: int = 8, target: Target | None = None,
                                       ctas_per_sm: int = 0) -> PermuteKernel:
    """CUDA C++ of the module doc's kernel: ``C = fp8(scale X)``, ``T = C^T`` and ``amax = max(amax, max |X|)``
    for ``X`` of ``input_format`` (``permute.CAST_INPUTS``) at a 16-byte aligned address, ``C`` and ``T`` at
    multiples of ``G`` (``chunk_elements``), any row length, by ``rows x cols`` tiles of ``warps`` warps (powers
    of two: ``rows`` 16 to 256, ``cols`` 16 to 256, ``warps`` 1 to 32, at most ``MAX_CHUNKS`` chunks a thread in
    flight: ``(R + G - 1)(N / G + 1) <= 32 W MAX_CHUNKS``);
    the launch bounds name the CTAs an SM of ``target`` (default: the default target) holds by threads, shared
    memory and ``thread_registers``, at most ``ctas_per_sm`` (0: as many as that).

    Example: the defaults make 64 x 64 tiles, 256 threads, 3 chunks a thread in flight."""
    check_cast_arguments(name, input_format, fp8)
    for label, value, least, most in (("rows", rows, 16, 256), ("cols", cols, 16, 256), ("warps", warps, 1, 32)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least or value & (value - 1) or value > most:
            raise LayoutError(f"{label}: must be a power of two from {least} to {most}, got {quote(value)}")
    if isinstance(ctas_per_sm, bool) or not isinstance(ctas_per_sm, int) or not 0 <= ctas_per_sm <= 32:
        raise LayoutError(f"ctas_per_sm: must be 0 (as many as fit) to 32, got {quote(ctas_per_sm)}")
    wi = CAST_INPUTS[input_format]
    g = chunk_elements(wi)
    threads = 32 * warps
    k_chunks = cols // g + 1  # chunks a loaded row
    loaded = rows + g - 1  # rows loaded: G - 1 above the tile
    items = loaded * k_chunks
    per_thread = -(-items // threads)
    if per_thread > MAX_CHUNKS:
        raise LayoutError(f"warps: {warps} warps cannot take {rows} x {cols} tiles ({per_thread} chunks a thread "
                          f"in flight, at most {MAX_CHUNKS})")
    q_chunks = rows // g  # T chunks of a tile's T row (one more in the last tile row)
    a_lanes = min(8, q_chunks)
    t_items = cols * q_chunks
    t_per_thread = -(-t_items // threads)
    tail_per_thread = -(-cols // threads)
    itype = {2: "unsigned short", 4: "unsigned"}[wi]
    pitch = chunked_pitch(cols, g)
    rotation = _rotation(g)
    shared = chunked_shared_bytes(rows, cols, g)
    slot = shared - 4 * 32
    ctas_per_sm = fitting_ctas(threads, shared, thread_registers(per_thread), target, ctas_per_sm)
    params = cast_params(itype)
    stg = "ll_stg64" if g == 8 else "ll_stg32"
    chunk_words = "c0, c1" if g == 8 else "c0"
    sts = "ll_sts64" if g == 8 else "ll_sts32"
    bytes_of = "(e < 4u ? c0 >> (8u * e) : c1 >> (8u * (e - 4u)))" if g == 8 else "(c0 >> (8u * e))"
    guard = "" if per_thread * threads == items else f"if (item >= {items}u) continue;"

    def soff(s: str) -> str:
        """Shared address of row ``s`` (``X``'s row ``r0 + s - (G - 1)``): ``o(s) = s P + G (floor(s / G) mod S)``."""
        rotate = f" + {g}u * ((({s}) / {g}u) % {rotation}u)" if rotation > 1 else ""
        return f"(smem + ({s}) * {pitch}u{rotate})"

    def byte_at(e: str) -> str:
        """Shared address of byte ``e`` of the T chunk: row ``rrb + e``, column ``cb``, the row's shift."""
        return f"{soff(f'rrb + {e}')} + cb + ((tr0 + ({e}) * cols) & {g - 1}u)"

    def t_chunk(q: str) -> list[str]:
        """Lines storing T chunk ``q`` of column ``c`` (``cb`` in the tile)."""
        pack = (["        unsigned lo = 0u, hi = 0u;",
                 "        #pragma unroll",
                 f"        for (unsigned e = 0u; e < {g}u; ++e) {{",
                 f"          const unsigned b = ll_lds8({byte_at('e')});",
                 "          if (e < 4u) lo |= b << (8u * e); else hi |= b << (8u * (e - 4u));",
                 "        }",
                 "        ll_stg64(trans_all + t0, lo, hi);"] if g == 8 else
                ["        unsigned lo = 0u;",
                 "        #pragma unroll",
                 f"        for (unsigned e = 0u; e < {g}u; ++e) lo |= ll_lds8({byte_at('e')}) << (8u * e);",
                 "        ll_stg32(trans_all + t0, lo);"])
        return [
            "      const size_t cm = (size_t)c * rows;",
            f"      const size_t tb = (cm + row0) & ~(size_t){g - 1}u;",
            f"      const unsigned rrb = {g - 1}u - (unsigned)(cm + row0 - tb) + {g}u * {q};  // shared row of byte 0",
            f"      const size_t t0 = tb + {g}u * {q};",
            "      const size_t tlo = first_row ? cm : tb;",
            f"      const size_t thi = last_row ? cm + rows : tb + {rows}u;",
            f"      const unsigned tr0 = (row0 + rrb - {g - 1}u) * cols;  // (r n) mod G of byte 0's row r: its low bits",
            f"      if (t0 >= tlo && t0 + {g}u <= thi) {{",
            *pack,
            f"      }} else if (t0 < thi && t0 + {g}u > tlo) {{  // a T row's first or last chunk: its owned bytes",
            "        #pragma unroll",
            f"        for (unsigned e = 0u; e < {g}u; ++e)",
            f"          if (t0 + e >= tlo && t0 + e < thi) ll_stg8(trans_all + t0 + e, ll_lds8({byte_at('e')}));",
            "      }",
        ]

    body = [
        f"// {name}: C = fp8 {fp8}(scale X), T = C^T, amax = max(amax, max |X|); X rows x cols {input_format} at a",
        f"//   16-byte aligned address, C and T at multiples of {g}; by {rows}x{cols} tiles owning aligned {g}-element",
        f"//   chunks of C's and T's flat positions. launch: a 1-D grid of tiles_n * tiles_m CTAs, block = {threads},",
        f"//   dynamic shared = {shared} bytes ({ctas_per_sm} CTAs per SM).",
        f'extern "C" __global__ void __launch_bounds__({threads}, {ctas_per_sm}) {name}(',
        f"    {', '.join(f'{ty} {p}' for ty, p in params)}) {{",
        *KERNEL_PROLOGUE,
        "  const unsigned tile_col = blockIdx.x % tiles_n, tile_row = blockIdx.x / tiles_n;",
        f"  const unsigned row0 = tile_row * {rows}u, col0 = tile_col * {cols}u;",
        f"  const unsigned col_end = cols - col0 < {cols}u ? cols : col0 + {cols}u;  // the tile's columns end",
        f"  const bool first_col = col0 == 0u, last_col = cols - col0 <= {cols}u;",
        f"  const bool first_row = row0 == 0u, last_row = rows - row0 <= {rows}u;",
        "  const float scale = scale_ptr != nullptr ? *scale_ptr : scale_value;",
        "  const size_t total = (size_t)rows * cols;",
        "  float amax = 0.0f;",
        f"  // 1. every chunk of the thread in flight: item (row rr, chunk j) of {loaded} x {k_chunks}",
        f"  uint4 v[{per_thread}];",
        "  #pragma unroll",
        f"  for (unsigned i = 0u; i < {per_thread}u; ++i) {{",
        f"    const unsigned item = threadIdx.x + {threads}u * i, rr = item / {k_chunks}u, j = item - rr * {k_chunks}u;",
        f"    const unsigned r = row0 + rr - {g - 1}u;  // wraps above row 0",
        "    const size_t rs = (size_t)r * cols;",
        f"    const size_t f = ((rs + col0) & ~(size_t){g - 1}u) + {g}u * j;",
        f"    const bool needed = item < {items}u && row0 + rr >= {g - 1}u && r < rows && f < rs + col_end;",
        "    v[i] = ll_chunk_load(src_all, f, needed, total);",
        "  }",
        "  // 2. amax, fp8 two elements per cvt, C's owned chunks, every chunk into shared memory",
        "  #pragma unroll",
        f"  for (unsigned i = 0u; i < {per_thread}u; ++i) {{",
        f"    const unsigned item = threadIdx.x + {threads}u * i, rr = item / {k_chunks}u, j = item - rr * {k_chunks}u;",
        f"    {guard}",
        f"    const unsigned r = row0 + rr - {g - 1}u;",
        "    const size_t rs = (size_t)r * cols;",
        f"    const size_t base = (rs + col0) & ~(size_t){g - 1}u, f = base + {g}u * j;",
        "    {",
        *_convert_lines(input_format, fp8, wi),
        f"      {sts}({soff('rr')} + {g}u * j, {chunk_words});",
        f"      if (rr >= {g - 1}u && r < rows) {{  // a row of C the tile owns chunks of",
        "        const size_t lo = first_col ? rs : base;",
        f"        const size_t hi = last_col ? rs + cols : base + {cols}u;",
        f"        if (f >= lo && f + {g}u <= hi) {stg}(cast_all + f, {chunk_words});",
        f"        else if (f < hi && f + {g}u > lo) {{  // a row's first or last chunk: its owned bytes",
        "          #pragma unroll",
        f"          for (unsigned e = 0u; e < {g}u; ++e)",
        f"            if (f + e >= lo && f + e < hi) ll_stg8(cast_all + f + e, {bytes_of});",
        "        }",
        "      }",
        "    }",
        "  }",
        "  ll_bar_cta();",
        f"  // 3. T: chunk q (rows G q - s .. of the tile, s = (c m + r0) mod G) of column c; {a_lanes} lanes along q",
        "  #pragma unroll",
        f"  for (unsigned k = 0u; k < {t_per_thread}u; ++k) {{",
        f"    const unsigned u = threadIdx.x + {threads}u * k;",
        f"    const unsigned rest = u / {a_lanes}u, cb = rest % {cols}u, q = u % {a_lanes}u + {a_lanes}u * (rest / {cols}u);",
        "    const unsigned c = col0 + cb;",
        f"    if ({'true' if t_per_thread * threads == t_items else f'u < {t_items}u'} && c < cols) {{",
        *t_chunk("q"),
        "    }",
        "  }",
        f"  if (last_row) {{  // the last tile row: T's rows end in chunk {q_chunks}, never whole",
        "    #pragma unroll",
        f"    for (unsigned k = 0u; k < {tail_per_thread}u; ++k) {{",
        f"      const unsigned cb = threadIdx.x + {threads}u * k, c = col0 + cb;",
        f"      if (cb < {cols}u && c < cols) {{",
        *["  " + x for x in t_chunk(f"{q_chunks}u")],
        "      }",
        "    }",
        "  }",
        *amax_epilogue(slot, warps),
        "}",
    ]
    source = DEVICE_PRELUDE + CAST_FUNCTIONS + "\n".join(_load_function(itype, wi, g) + body) + "\n"
    return PermuteKernel(name, source, threads, shared, wi, rows, cols, g, g, True, 0, tuple(params))
