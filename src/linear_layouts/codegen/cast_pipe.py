"""The fp8 cast-transpose of any row length and address by persistent CTAs that keep the next tile's loads in flight.

A CTA of ``W`` warps (``32 W >= R``, ``32 W >= N w / 16``) loops over ``R x N`` tiles ``t = b, b + G, ...`` of ``X`` (``rows x cols``,
``w``-byte elements at any element-aligned address); while it converts and stores tile ``t``, tile ``t + G`` is
being copied into the other of two shared stages, so an SM always has its CTAs' next tiles in flight:

=======================  ============================================  =============================================
step                     thread ``i`` (``g = N w / 16``)               memory
=======================  ============================================  =============================================
1. copy (next tile)      chunk ``i mod g`` of tile rows ``i / g + 32   ``cp.async.cg`` of the aligned 16-byte chunks
                         W p / g`` (and chunk ``g``, the row's last,   covering the row, ``g`` lanes a row's 16 g
                         where ``i mod g = 0``)                        bytes; past ``X``'s end: zeros, never read
2. convert, store ``C``  words ``k`` and ``k + N / 8`` of a tile row   4-byte stores of ``C``'s aligned words; word
                         (``k = i mod N / 8``; not word 0); then word  0 (the row's head and its last, partial
                         0 of tile row ``i``                           word): byte stores
3. shared                each word's 4 bytes at (column) ``P`` + 4 +   ``P = R + 12``: ``T``'s rows in a padded
                         row                                           shared tile
4. store ``T``           words ``k`` and ``k + R / 8`` of a row of     two 4-byte shared loads, a ``prmt``, a 4-byte
                         the tile's ``T``; then word 0 of its row      store (word 0: byte stores)
                         ``i``
=======================  ============================================  =============================================

(Row ``r``'s chunks run from the one holding its first element to the one holding its last, at most ``K = N w /
16 + 1``; its column ``j`` is at stage byte ``16 K r + (a mod 16) + j w`` for ``a`` the row's address. Word ``k``
of a row of ``C`` at address ``c`` is the aligned word ``c - (c mod 4) + 4 k``.) Step 2 follows the copy's
``wait_group`` and a barrier, step 4 a second barrier; an edge tile predicates each element and store on its
lying in the matrix (its missing elements count as 0 for the amax). The amax, the scale and the conversion are
those of ``permute.emit_cast_transpose_kernel``, whose parameters the kernel takes; the grid is at most
``ctas_per_sm`` CTAs an SM (``PermuteKernel.ctas``).

Example: ``emit_pipe_cast_transpose_kernel("k", "bf16", "e4m3", 128, 64, 4)``: 128 x 64 tiles of 4 warps, stages
of ``128 x 9`` chunks (18 KiB), ``2 x 18432 + 64 x 140 + 128`` bytes of shared memory, 4 CTAs an SM (72 KiB of
loads in flight an SM); a ``4095 x 11007`` matrix, ``32 x 172`` tiles, runs on 501 CTAs of 11 tiles each.
"""

from __future__ import annotations

from linear_layouts.codegen.intrinsics import DEVICE_PRELUDE, KERNEL_PROLOGUE
from linear_layouts.codegen.permute import (
    CAST_FUNCTIONS, CAST_INPUTS, PermuteKernel, amax_epilogue, cast_params, check_cast_arguments, fitting_ctas, to_float,
)
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote
from linear_layouts.target import Target, resolve

__all__ = ["emit_pipe_cast_transpose_kernel", "PIPE_COPY_FUNCTIONS", "pipe_shared_bytes", "chunks_per_row",
           "transposed_pitch", "PIPE_REGISTERS"]

#: Registers a thread is budgeted (the launch bounds' CTAs an SM follow from it).
PIPE_REGISTERS = 64

#: ``ll_pipe_copy16<OFFSET>(a, p, n)``: ``cp.async.cg.shared.global`` of the aligned 16 bytes at ``p + OFFSET`` to
#: shared ``a + OFFSET`` (``OFFSET`` the instruction's immediate),
#: of which only the first ``n`` (default 16) are read (the rest zero-filled); ``ll_pipe_commit()``, ``ll_pipe_wait<N>()``
#: (until at most ``N`` of the thread's committed groups are pending). The emulator's form (``LL_HOST``) defers
#: each copy until a wait needs it, so a kernel that reads a stage before its wait reads stale bytes.
PIPE_COPY_FUNCTIONS = "\n".join([
    "#ifndef LL_PIPE_COPY",
    "#define LL_PIPE_COPY",
    "#ifdef LL_HOST",
    "struct ll_pipe_chunk { unsigned a; const unsigned char* p; unsigned n; };",
    "static thread_local std::vector<ll_pipe_chunk> ll_pipe_pending;",
    "static thread_local std::vector<std::vector<ll_pipe_chunk>> ll_pipe_groups;",
    "template <unsigned OFFSET = 0u> LL_DEV void ll_pipe_copy16(unsigned a, const void* p, unsigned n) { "
    "ll_pipe_pending.push_back({a + OFFSET, static_cast<const unsigned char*>(p) + OFFSET, n}); }",
    "template <unsigned OFFSET = 0u> LL_DEV void ll_pipe_copy16(unsigned a, const void* p) { ll_pipe_copy16<OFFSET>(a, p, 16u); }",
    "LL_DEV void ll_pipe_commit() { ll_pipe_groups.push_back(ll_pipe_pending); ll_pipe_pending.clear(); }",
    "template <int N> LL_DEV void ll_pipe_wait() {",
    "  while ((int)ll_pipe_groups.size() > N) {",
    "    for (const ll_pipe_chunk& c : ll_pipe_groups.front()) {",
    "      std::memcpy(ll_shared + c.a, c.p, c.n); std::memset(ll_shared + c.a + c.n, 0, 16u - c.n); }",
    "    ll_pipe_groups.erase(ll_pipe_groups.begin());",
    "  }",
    "}",
    "#else",
    'template <unsigned OFFSET = 0u> LL_DEV void ll_pipe_copy16(unsigned a, const void* p, unsigned n) { asm volatile('
    '"cp.async.cg.shared.global [%0+%3], [%1+%3], 16, %2;" :: "r"(a), "l"(p), "r"(n), "n"(OFFSET) : "memory"); }',
    'template <unsigned OFFSET = 0u> LL_DEV void ll_pipe_copy16(unsigned a, const void* p) { asm volatile('
    '"cp.async.cg.shared.global [%0+%2], [%1+%2], 16;" :: "r"(a), "l"(p), "n"(OFFSET) : "memory"); }',
    'LL_DEV void ll_pipe_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }',
    'template <int N> LL_DEV void ll_pipe_wait() { asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory"); }',
    "#endif",
    "#endif",
    "",
])


def chunks_per_row(cols: int, element_bytes: int) -> int:
    """``K``: the aligned 16-byte chunks that cover ``cols`` elements of ``element_bytes`` at any element-aligned
    address, at most: ``cols w / 16 + 1``.

    >>> chunks_per_row(64, 2), chunks_per_row(64, 4)
    (9, 17)
    """
    return cols * element_bytes // 16 + 1


def transposed_pitch(rows: int) -> int:
    """``P``: bytes between the rows of the shared ``T`` tile: 4 bytes of padding on each side of its ``R`` bytes
    (step 4 reads the aligned words around a row of any alignment) and 4 more, so that ``P / 4`` is odd and step
    3's lanes of a row, ``4 P`` bytes apart, hit distinct banks.

    >>> transposed_pitch(128)
    140
    """
    return rows + 12


def pipe_shared_bytes(rows: int, cols: int, element_bytes: int) -> int:
    """Dynamic shared memory of an ``R x N`` tile: two stages of ``R K`` chunks, ``T``'s tile (``N`` rows of
    ``P`` bytes) and one float per warp (at most 32) for the amax.

    >>> pipe_shared_bytes(128, 64, 2)
    45952
    """
    return 2 * 16 * rows * chunks_per_row(cols, element_bytes) + cols * transposed_pitch(rows) + 4 * 32


def _c_word(input_format: str, fp8: str, rows: int, cols: int) -> list[str]:
    """``ll_pipe_c<FULL, WRAP>``: steps 2-3 for one aligned word of ``C`` (module doc); ``WRAP``: word 0, which
    also takes the row's last, partial word."""
    wi = CAST_INPUTS[input_format]
    load = "ll_lds16" if wi == 2 else "ll_lds32"
    pitch = transposed_pitch(rows)
    cvt = f"ll_cvt_{fp8}x2"
    return [
        "// steps 2-3 for word k of tile row r: xs = shared byte of its element 0, d = its C row's address mod 4",
        "template <bool FULL, bool WRAP> LL_DEV void ll_pipe_c(unsigned xs, unsigned tt, unsigned char* crow, "
        "unsigned r, unsigned k, unsigned d, bool row_ok, unsigned cols_left, float scale, float& amax) {",
        "  unsigned c[4], x[4];",
        "  #pragma unroll",
        f"  for (unsigned b = 0; b < 4u; ++b) c[b] = !WRAP ? 4u * k - d + b : b >= d ? b - d : {cols}u - d + b;",
        "  #pragma unroll",
        f"  for (unsigned b = 0; b < 4u; ++b) x[b] = (FULL || (row_ok && c[b] < cols_left)) ? {load}(xs + c[b] * {wi}u) : 0u;",
        "  float f[4];",
        "  #pragma unroll",
        "  for (unsigned b = 0; b < 4u; ++b) {",
        f"    f[b] = {to_float(input_format, 'x[b]')};",
        "    amax = fmaxf(amax, fabsf(f[b]));",
        "  }",
        f"  const unsigned v = {cvt}(f[0] * scale, f[1] * scale) | ({cvt}(f[2] * scale, f[3] * scale) << 16);",
        "  if (!WRAP && (FULL || (row_ok && c[3] < cols_left))) {",
        "    ll_stg32(crow + c[0], v);",
        "  } else {",
        "    #pragma unroll",
        "    for (unsigned b = 0; b < 4u; ++b) if (FULL || (row_ok && c[b] < cols_left)) ll_stg8(crow + c[b], v >> (8u * b));",
        "  }",
        "  #pragma unroll",
        f"  for (unsigned b = 0; b < 4u; ++b) ll_sts8(tt + c[b] * {pitch}u + r, v >> (8u * b));",
        "}",
    ]


def _t_word(rows: int) -> list[str]:
    """``ll_pipe_t<FULL, WRAP>``: step 4 for one aligned word of a row of ``T`` (module doc); ``WRAP``: word 0,
    which also takes the row's last, partial word."""
    return [
        "// step 4 for word k of T's row: ts = shared byte of the row's padding (row byte r at ts + 4 + r); trow =",
        "//   its global row's address rounded down to 4 bytes, dt = the rounding",
        "template <bool FULL, bool WRAP> LL_DEV void ll_pipe_t(unsigned ts, unsigned char* trow, unsigned k, "
        "unsigned dt, bool col_ok, unsigned rows_left) {",
        "  const unsigned sel = 0x3210u + 0x1111u * (4u - dt);  // bytes 4 - dt .. 7 - dt of the two words",
        "  const unsigned v = __byte_perm(ll_lds32(ts + 4u * k), ll_lds32(ts + 4u * k + 4u), sel);",
        "  const unsigned r0 = 4u * k - dt;",
        "  if (!WRAP) {",
        "    if (FULL || (col_ok && r0 + 3u < rows_left)) {",
        "      ll_stg32(trow + 4u * k, v);",
        "    } else if (col_ok) {",
        "      #pragma unroll",
        "      for (unsigned b = 0; b < 4u; ++b) if (r0 + b < rows_left) ll_stg8(trow + 4u * k + b, v >> (8u * b));",
        "    }",
        "  } else {  // word 0 (rows b - dt) and the row's last, partial word (rows R - dt + b)",
        f"    const unsigned last = __byte_perm(ll_lds32(ts + {rows}u), ll_lds32(ts + {rows + 4}u), sel);",
        "    #pragma unroll",
        "    for (unsigned b = 0; b < 4u; ++b) {",
        f"      const unsigned r = b >= dt ? b - dt : {rows}u - dt + b;",
        f"      if (FULL || (col_ok && r < rows_left)) ll_stg8(trow + (b >= dt ? b : {rows}u + b), (b >= dt ? v : last) >> (8u * b));",
        "    }",
        "  }",
        "}",
    ]


def _tile(rows: int, cols: int, warps: int, k_row: int, wi: int) -> list[str]:
    """``ll_pipe_tile<FULL>``: steps 2-4 of one tile, its copy in shared memory at ``st`` (module doc)."""
    threads = 32 * warps
    cw, tw = cols // 8, rows // 8  # threads a row of C, of T: words k and k + cw (k + tw) of the row each
    c_rows, t_rows = threads // cw, threads // tw  # tile rows of C, of T, a pass
    pitch = transposed_pitch(rows)
    return [
        "// steps 2-4 of the tile at (row0, col0) whose copy is at shared byte st; T's tile at tt",
        "template <bool FULL> LL_DEV void ll_pipe_tile(unsigned st, unsigned tt, const unsigned char* x_bytes, "
        "unsigned char* cast_all, unsigned char* trans_all, unsigned rows, unsigned cols, unsigned row0, "
        "unsigned col0, float scale, float& amax) {",
        "  const unsigned rows_left = rows - row0, cols_left = cols - col0;",
        "  const unsigned xb = (unsigned)(size_t)x_bytes, cb = (unsigned)(size_t)cast_all, tb = (unsigned)(size_t)trans_all;",
        f"  // 2-3: tile rows r = i / {cw} + {c_rows} p, words k = i mod {cw} (but 0) and k + {cw}; then word 0 of row i",
        "  {",
        f"    const unsigned k = threadIdx.x % {cw}u;",
        f"    unsigned r = threadIdx.x / {cw}u, e = (row0 + r) * cols + col0;  // e: the row's element 0",
        "    unsigned char* crow = cast_all + ((size_t)(row0 + r) * cols + col0);",
        f"    unsigned xr = st + {16 * k_row}u * r;",
        "    #pragma unroll 2",
        f"    for (unsigned p = 0; p < {max(1, rows // c_rows)}u; ++p, r += {c_rows}u) {{",
        *([f"      if (r >= {rows}u) break;"] if c_rows > rows else []),
        f"      const unsigned xs = xr + ((xb + e * {wi}u) & 15u), d = (cb + e) & 3u;",
        "      if (k) ll_pipe_c<FULL, false>(xs, tt + 4u, crow, r, k, d, FULL || r < rows_left, cols_left, scale, amax);",
        f"      ll_pipe_c<FULL, false>(xs, tt + 4u, crow, r, k + {cw}u, d, FULL || r < rows_left, cols_left, scale, amax);",
        f"      e += {c_rows}u * cols; crow += (size_t){c_rows}u * cols; xr += {16 * k_row * c_rows}u;",
        "    }",
        "  }",
        f"  if (threadIdx.x < {rows}u) {{",
        "    const unsigned r = threadIdx.x;",
        "    const unsigned e = (row0 + r) * cols + col0;",
        f"    const unsigned xs = st + {16 * k_row}u * r + ((xb + e * {wi}u) & 15u);",
        "    unsigned char* const crow = cast_all + ((size_t)(row0 + r) * cols + col0);",
        "    ll_pipe_c<FULL, true>(xs, tt + 4u, crow, r, 0u, (cb + e) & 3u, FULL || r < rows_left, cols_left, scale, amax);",
        "  }",
        "  ll_bar_cta();",
        f"  // 4: T's rows c = i / {tw} + {t_rows} p, words k = i mod {tw} (but 0) and k + {tw}; then word 0 of row i",
        "  {",
        f"    const unsigned k = threadIdx.x % {tw}u;",
        f"    unsigned c = threadIdx.x / {tw}u, e = (col0 + c) * rows + row0;",
        "    unsigned char* trow = trans_all + ((size_t)(col0 + c) * rows + row0);",
        "    #pragma unroll 2",
        f"    for (unsigned p = 0; p < {max(1, cols // t_rows)}u; ++p, c += {t_rows}u) {{",
        *([f"      if (c >= {cols}u) break;"] if t_rows > cols else []),
        "      const unsigned dt = (tb + e) & 3u;",
        f"      if (k) ll_pipe_t<FULL, false>(tt + {pitch}u * c, trow - dt, k, dt, FULL || c < cols_left, rows_left);",
        f"      ll_pipe_t<FULL, false>(tt + {pitch}u * c, trow - dt, k + {tw}u, dt, FULL || c < cols_left, rows_left);",
        f"      e += {t_rows}u * rows; trow += (size_t){t_rows}u * rows;",
        "    }",
        "  }",
        f"  for (unsigned c = threadIdx.x; c < {cols}u; c += {threads}u) {{  // (once or not at all below {threads} columns)",
        "    const unsigned e = (col0 + c) * rows + row0, dt = (tb + e) & 3u;",
        "    unsigned char* const trow = trans_all + ((size_t)(col0 + c) * rows + row0) - dt;",
        f"    ll_pipe_t<FULL, true>(tt + {pitch}u * c, trow, 0u, dt, FULL || c < cols_left, rows_left);",
        "  }",
        "}",
    ]


def emit_pipe_cast_transpose_kernel(name: str, input_format: str, fp8: str, rows: int = 128, cols: int = 64,
                                    warps: int = 8, target: Target | None = None) -> PermuteKernel:
    """CUDA C++ of the module doc's kernel: ``C = fp8(scale X)``, ``T = C^T`` and ``amax = max(amax, max |X|)``
    for ``X`` of ``input_format`` (``permute.CAST_INPUTS``) at any element-aligned address and row length, by
    persistent CTAs of ``warps`` warps over ``rows x cols`` tiles (powers of two: ``rows`` 32 to 256, ``cols``
    32 to 256, ``warps`` 1 to 32, ``rows / 4`` and ``cols / 4`` at most the threads); the launch bounds name the
    CTAs an SM of ``target`` (default: the default target) holds by threads, shared memory and
    ``PIPE_REGISTERS``; the kernel's ``ctas_per_sm`` is that.

    Example: the defaults make 128 x 64 tiles, 256 threads, 4 CTAs an SM for a 2-byte input."""
    check_cast_arguments(name, input_format, fp8)
    for label, value, least, most in (("rows", rows, 32, 256), ("cols", cols, 32, 256), ("warps", warps, 1, 32)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least or value & (value - 1) or value > most:
            raise LayoutError(f"{label}: must be a power of two from {least} to {most}, got {quote(value)}")
    threads = 32 * warps
    if rows > threads or cols * CAST_INPUTS[input_format] > 16 * threads:
        raise LayoutError(f"warps: {warps} warps cannot take {rows} x {cols} tiles (at least a thread a row, a "
                          "thread a 16-byte chunk of a row)")
    wi = CAST_INPUTS[input_format]
    itype = {2: "unsigned short", 4: "unsigned"}[wi]
    k_row = chunks_per_row(cols, wi)
    stage = 16 * rows * k_row
    pitch = transposed_pitch(rows)
    slot = 2 * stage + cols * pitch
    shared = pipe_shared_bytes(rows, cols, wi)
    t = resolve(target)
    if shared + t.cta_reserved_shared_bytes > t.sm_shared_bytes:
        raise LayoutError(f"rows, cols: a {rows} x {cols} tile needs {shared} bytes of shared memory, more than an SM's")
    ctas_per_sm = fitting_ctas(threads, shared, PIPE_REGISTERS, t)
    params = cast_params(itype)
    g = k_row - 1  # threads a tile row's copy: chunks 0 .. g - 1 of the row, one each (16 g contiguous bytes)
    g_rows = threads // g  # tile rows a pass
    body = [
        f"// {name}: C = fp8 {fp8}(scale X), T = C^T, amax = max(amax, max |X|); X rows x cols {input_format} at any",
        f"//   element-aligned address and row length, by {rows}x{cols} tiles; persistent: CTA b of G takes tiles b,",
        "//   b + G, ..., the next one copied into the other shared stage meanwhile. launch: a 1-D grid of at most",
        f"//   {ctas_per_sm} x SMs CTAs, block = {threads}, dynamic shared = {shared} bytes.",
        *_c_word(input_format, fp8, rows, cols),
        *_t_word(rows),
        *_tile(rows, cols, warps, k_row, wi),
        f'extern "C" __global__ void __launch_bounds__({threads}, {ctas_per_sm}) {name}(',
        f"    {', '.join(f'{ty} {p}' for ty, p in params)}) {{",
        *KERNEL_PROLOGUE,
        "  const unsigned total = tiles_n * tiles_m;",
        "  const float scale = scale_ptr != nullptr ? *scale_ptr : scale_value;",
        "  const unsigned char* const x_bytes = reinterpret_cast<const unsigned char*>(src_all);",
        f"  const size_t x_end = (size_t)x_bytes + (size_t)rows * cols * {wi}u;",
        "  float amax = 0.0f;",
        f"  // step 1 for the tile at (row0, col0) into stage st: thread i copies chunk i mod {g} of tile rows i / {g} +",
        f"  //   {g_rows} p (and chunk {g}, the row's last, where i mod {g} = 0) to stage byte 16 (K r + chunk), K = {k_row}",
        "  auto copy = [&](bool any, unsigned row0, unsigned col0, unsigned st) {",
        f"    const unsigned k = threadIdx.x % {g}u, r0 = threadIdx.x / {g}u;",
        f"    const unsigned s = st + {16 * k_row}u * r0 + 16u * k;",
        f"    if (any && row0 + {rows}u < rows) {{  // X's last row is below the tile: every chunk lies in X",
        f"      const unsigned char* const row = x_bytes + ((size_t)(row0 + r0) * cols + col0) * {wi}u;",
        "      #pragma unroll",
        f"      for (unsigned p = 0; p < {max(1, rows // g_rows)}u; ++p) {{",
        *([f"        if (r0 + {g_rows}u * p >= {rows}u) break;"] if g_rows > rows else []),
        f"        const size_t a = (size_t)(row + (size_t)p * {g_rows * wi}u * cols) & ~(size_t)15u;",
        "        const unsigned char* const from = reinterpret_cast<const unsigned char*>(a) + 16u * k;",
        f"        ll_pipe_copy16(s + {16 * k_row * g_rows}u * p, from);",
        f"        if (k == 0u) ll_pipe_copy16<{16 * g}u>(s + {16 * k_row * g_rows}u * p, from);",
        "      }",
        "    } else if (any) {  // the tile holds X's last row: its chunks past X's end zero-filled, never read",
        "      #pragma unroll 1",
        f"      for (unsigned r = r0; r < {rows}u && r < rows - row0; r += {g_rows}u) {{",
        f"        const size_t a = ((size_t)x_bytes + ((size_t)(row0 + r) * cols + col0) * {wi}u) & ~(size_t)15u;",
        f"        const unsigned avail = x_end - a < {16 * k_row}u ? (unsigned)(x_end - a) : {16 * k_row}u;",
        "        const unsigned char* const from = reinterpret_cast<const unsigned char*>(a) + 16u * k;",
        f"        const unsigned t = s + {16 * k_row}u * (r - r0);",
        "        if (avail > 16u * k) ll_pipe_copy16(t, from, avail - 16u * k < 16u ? avail - 16u * k : 16u);",
        f"        if (k == 0u && avail > {16 * g}u) ll_pipe_copy16<{16 * g}u>(t, from, avail - {16 * g}u < 16u ? "
        f"avail - {16 * g}u : 16u);",
        "      }",
        "    }",
        "    ll_pipe_commit();",
        "  };",
        "  // tile at = (tile row, tile column) (ti, tj); the next, at + G, is (ti + gi, tj + gj) with a carry",
        "  unsigned at = blockIdx.x, ti = at / tiles_n, tj = at - ti * tiles_n;",
        "  const unsigned gi = gridDim.x / tiles_n, gj = gridDim.x - gi * tiles_n;",
        f"  unsigned row0 = ti * {rows}u, col0 = tj * {cols}u;",
        "  copy(at < total, row0, col0, smem);",
        f"  const unsigned tt = smem + {2 * stage}u;  // T's tile: row c (a column of the tile) at tt + c P",
        "  for (unsigned odd = 0u; at < total; odd ^= 1u) {  // odd: the stage of this tile",
        f"    const unsigned st = smem + {stage}u * odd;",
        "    const unsigned next = at + gridDim.x;",
        "    tj += gj; ti += gi;",
        "    if (tj >= tiles_n) { tj -= tiles_n; ++ti; }",
        f"    const unsigned n_row0 = ti * {rows}u, n_col0 = tj * {cols}u;",
        f"    copy(next < total, n_row0, n_col0, smem + {stage}u * (odd ^ 1u));",
        "    ll_pipe_wait<1>();",
        "    ll_bar_cta();",
        f"    const bool full = rows - row0 >= {rows}u && cols - col0 >= {cols}u;",
        "    if (full) ll_pipe_tile<true>(st, tt, x_bytes, cast_all, trans_all, rows, cols, row0, col0, scale, amax);",
        "    else ll_pipe_tile<false>(st, tt, x_bytes, cast_all, trans_all, rows, cols, row0, col0, scale, amax);",
        "    at = next; row0 = n_row0; col0 = n_col0;",
        "  }",
        "  ll_pipe_wait<0>();",
        *amax_epilogue(slot, warps),
        "}",
    ]
    source = DEVICE_PRELUDE + CAST_FUNCTIONS + PIPE_COPY_FUNCTIONS + "\n".join(body) + "\n"
    return PermuteKernel(name, source, threads, shared, wi, rows, cols, 1, 1, True, 0, tuple(params), ctas_per_sm)
