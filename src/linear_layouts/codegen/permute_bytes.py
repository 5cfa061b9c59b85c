"""The transpose of bytes at any alignment: aligned 16-byte chunks, 4 x 4 byte transposes in registers.

``B = A^T`` (``codegen.permute``'s tiled problem: ``A`` ``rows x cols`` bytes at row stride ``lda``, ``B``'s row
``c`` at ``ldb c``, batch dims) where neither ``A``'s rows nor ``B``'s need be 16-byte aligned. A byte a thread
access costs an instruction, and the tiled kernel's single-byte accesses stall on the memory pipe's queues; here
every global access is an aligned 16-byte chunk and every shared one a 32-bit word, each byte's realignment done
by a ``prmt``. As in ``codegen.permute_chunks``, the ``R x N`` tile ``(r0, c0)`` owns of ``B``'s row ``c``
(starting at absolute position ``start_c``) the positions ``[floor16(start_c + r0), floor16(start_c + r0 + R))``,
from ``start_c`` in the first tile row and to ``start_c + rows`` in the last (``cast_chunks.owned_range``).

==================  =====================================================================================
step                a CTA of ``W`` warps
==================  =====================================================================================
1. load ``A``       rows ``r0 - 16 .. r0 + R - 1`` in groups of 4 (``B``'s ranges reach 15 rows up): item
                    ``(g, j)`` (``j`` fastest, ``K = N / 16`` lanes along a row) loads chunk ``j`` of rows
                    ``4g .. 4g + 3`` from each row's aligned chunk of element ``(r, c0)``, ``d_r`` bytes before
                    it; the next chunk comes from the next lane (one ``shfl`` a word), the row's last lane loads it
2. realign          each row's 16 bytes of columns ``c0 + 16j ..``: 11 selects and 4 ``prmt`` on ``d_r``
3. transpose        four 4 x 4 byte transposes (8 ``prmt`` each): a word of 4 rows for each of 16 columns, stored
                    in shared column ``k`` at byte ``k P + (128 / K) floor(k / 16) + 4g`` (``P = R + 40``,
                    ``P / 4`` even: a warp's stores fall in 32 distinct banks)
4. store ``B``      after one barrier, chunk ``q`` of column ``k`` (lanes along a column) from the 5 words around
                    its 16 bytes (``s = (start_c + r0) mod 16``: bytes ``16 - s + 16q ..``), 4 ``prmt``, one
                    16-byte store when the tile owns it whole, its owned bytes one by one when it owns part
==================  =====================================================================================

An interior tile (a tile row above and below, all its columns in the matrix) loads and stores without tests.
The launch, the grid (``tiles_n * tiles_m * batch`` CTAs, tile column fastest) and the parameters are
``codegen.permute``'s tiled kernel's (``fast_divider`` arguments last).

Example: ``emit_byte_transpose_kernel("k")``: 128 x 128 tiles of 9 warps (144 rows of 8 chunks: one item a
thread), 21632 bytes of shared memory; an ``11335 x 12184`` transpose takes ``89 x 96`` CTAs.
"""

from __future__ import annotations

from linear_layouts.codegen.cast_chunks import OPAQUE_FUNCTIONS
from linear_layouts.codegen.intrinsics import OP_PRELUDE, OP_PROLOGUE
from linear_layouts.codegen.permute import (
    MAX_KERNEL_BATCH_DIMS, RASTERS, PermuteKernel, fitting_ctas, tile_divisors, tile_index_lines, tiled_params,
)
from linear_layouts.codegen.permute_chunks import ALIGNED_FUNCTIONS, chunk_functions, within_functions
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote
from linear_layouts.target import Target

__all__ = ["emit_byte_transpose_kernel", "column_pitch", "column_start", "shared_bytes", "items",
           "thread_registers", "MAX_ROUNDS", "GRANULE_BYTES"]

#: Bytes of the ownership granule ``Q``: 16 (one chunk), 32 (one sector) or 64: no granule of ``B`` two tiles share.
GRANULE_BYTES = (16, 32, 64)
#: Items (4 rows x 2 chunks: 32 registers) a thread takes at most.
MAX_ROUNDS = 2
#: ``prmt`` with a selector known to have no sign-mode bits (``__byte_perm`` on the host).
_PRMT = [
    "#ifndef LL_PRMT",
    "#define LL_PRMT",
    "#ifdef LL_HOST",
    "LL_DEV unsigned ll_prmt(unsigned a, unsigned b, unsigned s) { return __byte_perm(a, b, s); }",
    "#else",
    'LL_DEV unsigned ll_prmt(unsigned a, unsigned b, unsigned s) { unsigned r; asm("prmt.b32 %0, %1, %2, %3;" '
    ': "=r"(r) : "r"(a), "r"(b), "r"(s)); return r; }',
    "#endif",
    "#endif",
]
_FIELDS = ("x", "y", "z", "w")


def column_pitch(rows: int, granule: int = 16) -> int:
    """``P``: bytes of a shared column, ``R + 2Q + 8`` (step 4 reads up to byte ``R + 2Q + 3`` of the last tile row's
    extra chunks; ``P / 4`` even for ``R`` and ``Q`` multiples of 16): ``column_pitch(128) == 168``."""
    return rows + 2 * granule + 8


def column_start(k: int, rows: int, cols: int, granule: int = 16) -> int:
    """Byte offset of shared column ``k``: ``k P + (128 / K) floor(k / 16)`` (module doc).

    >>> column_start(17, 128, 128)
    2872
    """
    return k * column_pitch(rows, granule) + (128 // (cols // 16)) * (k // 16)


def shared_bytes(rows: int, cols: int, granule: int = 16) -> int:
    """Dynamic shared memory of an ``R x N`` tile: ``column_start(N)``. ``shared_bytes(128, 128) == 21632``."""
    return column_start(cols, rows, cols, granule)


def items(rows: int, cols: int, granule: int = 16) -> int:
    """Step 1's items of an ``R x N`` tile: ``(R + Q) / 4`` row groups of ``N / 16`` chunks (288 for 128 x 128)."""
    return (rows + granule) // 4 * (cols // 16)


def thread_registers(rounds: int) -> int:
    """Registers a thread is budgeted by its items: 64 for one, 96 for two."""
    return 32 + 32 * rounds


def emit_byte_transpose_kernel(name: str, tile_rows: int = 128, tile_cols: int = 128, warps: int = 9,
                               batch_dims: int = 0, granule_bytes: int = 16, target: Target | None = None,
                               raster: str = "n") -> PermuteKernel:
    """CUDA C++ of the module doc's kernel: ``tile_rows x tile_cols`` tiles (powers of two; rows 32 to 512, columns
    16 to 512) of ``warps`` warps (1 to 32, at most ``MAX_ROUNDS`` items a thread), ``batch_dims`` batch dims (0 to
    ``permute.MAX_KERNEL_BATCH_DIMS``), ownership granules of ``granule_bytes`` (``GRANULE_BYTES``), tiles taken in
    ``raster`` order (``permute.tile_index_lines``). ``A``, ``B``, their row strides and the batch strides are free;
    the launch bounds name the CTAs an SM of ``target`` holds.

    Example: ``emit_byte_transpose_kernel("k", 64, 128, 5)``: 80 rows of 8 chunks, one item for each of 160
    threads."""
    if not isinstance(name, str) or not name.isidentifier():
        raise LayoutError(f"name: {quote(name)} is not a C identifier")
    for label, value, least, most in (("warps", warps, 1, 32), ("tile_rows", tile_rows, 32, 512),
                                      ("tile_cols", tile_cols, 16, 512)):
        if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most or (
                label != "warps" and value & (value - 1)):
            kind = "an int" if label == "warps" else "a power of two"
            raise LayoutError(f"{label}: must be {kind} from {least} to {most}, got {quote(value)}")
    if isinstance(batch_dims, bool) or not isinstance(batch_dims, int) or not 0 <= batch_dims <= MAX_KERNEL_BATCH_DIMS:
        raise LayoutError(f"batch_dims: must be an int in [0, {MAX_KERNEL_BATCH_DIMS}], got {quote(batch_dims)}")
    if raster not in RASTERS:
        raise LayoutError(f"raster: must be one of {RASTERS}, got {quote(raster)}")
    if isinstance(granule_bytes, bool) or granule_bytes not in GRANULE_BYTES:
        raise LayoutError(f"granule_bytes: must be one of {GRANULE_BYTES}, got {quote(granule_bytes)}")
    q = granule_bytes
    if isinstance(tile_rows, int) and not isinstance(tile_rows, bool) and tile_rows < 2 * q:
        raise LayoutError(f"tile_rows: must be at least twice granule_bytes ({2 * q}), got {tile_rows}")
    rows, cols, threads = tile_rows, tile_cols, 32 * warps
    k_chunks = cols // 16  # K: lanes along a loaded row
    n_items = items(rows, cols, q)
    rounds = -(-n_items // threads)
    if rounds > MAX_ROUNDS:
        raise LayoutError(f"warps: {warps} warps cannot take {rows} x {cols} tiles ({rounds} items a thread, at most "
                          f"{MAX_ROUNDS})")
    groups = threads // k_chunks  # row groups a round
    pitch = column_pitch(rows, q)
    skew = 128 // k_chunks
    shared = shared_bytes(rows, cols, q)
    q_chunks = rows // 16
    out_items = cols * q_chunks
    ctas_per_sm = fitting_ctas(threads, shared, thread_registers(rounds), target)
    params = tiled_params("unsigned char", batch_dims) + [("unsigned long long", f"{d}_div")
                                                          for d in tile_divisors(batch_dims, raster)]

    def load_lines(interior: bool) -> list[str]:
        """Steps 1-3 of each round: the loads, the next chunks, realignment, transposes, shared stores."""
        out = []
        for i in range(rounds):
            live = f"threadIdx.x + {threads * i}u < {n_items}u"
            always = threads * (i + 1) <= n_items
            out += ["    {", f"      const unsigned g = threadIdx.x / {k_chunks}u + {groups * i}u;"]
            if interior:  # 32-bit offsets from the row group's first row
                out += [f"      const unsigned long long rg = row0 - {q}u + 4u * g;",
                        "      const unsigned char* __restrict__ a_g = src_all + (a_row0 + rg * lda);",
                        "      const unsigned p_g = a_pos + (unsigned)a_row0 + (unsigned)rg * (unsigned)lda;"]
            for e in range(4):
                guard = [] if always else [live]
                if interior:
                    next_guard = guard + [f"j == {k_chunks - 1}u", f"d{e} != 0u"]
                    out += [
                        f"      const unsigned d{e} = (p_g + {e}u * (unsigned)lda) & 15u;",
                        f"      const unsigned char* const c{e} = a_g + {e}ull * lda + (long long)(16 * (int)j - (int)d{e});",
                        f"      uint4 v{e}, n{e}; v{e}.x = v{e}.y = v{e}.z = v{e}.w = 0u; n{e} = v{e};",
                        f"      {_if(guard)}v{e} = ll_load_chunk(c{e});",
                        f"      {_if(next_guard)}n{e} = ll_load_chunk(c{e} + 16);"]
                    continue
                guard += [f"r{e} >= 0ll", f"r{e} < (long long)rows", f"16u * j < cols_left + d{e}"]
                next_guard = guard[:-1] + [f"j == {k_chunks - 1}u", f"d{e} != 0u", f"{16 * k_chunks}u < cols_left + d{e}"]
                out += [
                    f"      const long long r{e} = (long long)row0 - {q}ll + 4ll * g + {e}ll;",
                    f"      const unsigned d{e} = (a_pos + (unsigned)a_row0 + (unsigned)r{e} * (unsigned)lda) & 15u;",
                    f"      const long long f{e} = (long long)a_row0 + r{e} * (long long)lda - (long long)d{e} "
                    "+ 16ll * j;",
                    f"      uint4 v{e}, n{e}; v{e}.x = v{e}.y = v{e}.z = v{e}.w = 0u; n{e} = v{e};",
                    f"      {_if(guard)}v{e} = ll_load_within(src_all, f{e}, total);",
                    f"      {_if(next_guard)}n{e} = ll_load_within(src_all, f{e} + 16ll, total);"]
            for e in range(4):  # the next chunk of each row from the next lane (every lane of the warp takes part)
                for field in _FIELDS:
                    out.append(f"      {{ const unsigned y = __shfl_sync(0xffffffffu, v{e}.{field}, (lane + 1u) & 31u); "
                               f"if (j != {k_chunks - 1}u) n{e}.{field} = y; }}")
            for e in range(4):  # row e's bytes of columns c0 + 16 j ..: the 16 from byte d of (v, n)
                words = [f"v{e}.{f}" for f in _FIELDS] + [f"n{e}.{f}" for f in _FIELDS]
                out += [f"      const bool h8{e} = (d{e} & 8u) != 0u, h4{e} = (d{e} & 4u) != 0u;",
                        *[f"      const unsigned x{e}{m} = h8{e} ? {words[m + 2]} : {words[m]};" for m in range(6)],
                        *[f"      const unsigned y{e}{m} = h4{e} ? x{e}{m + 1} : x{e}{m};" for m in range(5)],
                        f"      const unsigned sel{e} = 0x3210u + 0x1111u * (d{e} & 3u);",
                        *[f"      const unsigned w{e}{m} = ll_prmt(y{e}{m}, y{e}{m + 1}, sel{e});" for m in range(4)]]
            guard = "" if always else f"if ({live}) "
            out.append(f"      {guard}{{")
            for m in range(4):  # columns 16 j + 4 m + 0..3: a 4 x 4 byte transpose of the rows' word m
                out += ["        {",
                        f"        const unsigned lo01 = ll_prmt(w0{m}, w1{m}, 0x5140u), hi01 = ll_prmt(w0{m}, w1{m}, "
                        "0x7362u);",
                        f"        const unsigned lo23 = ll_prmt(w2{m}, w3{m}, 0x5140u), hi23 = ll_prmt(w2{m}, w3{m}, "
                        "0x7362u);",
                        f"        ll_sts32(a_col + {(4 * m) * pitch}u + 4u * g, ll_prmt(lo01, lo23, 0x5410u));",
                        f"        ll_sts32(a_col + {(4 * m + 1) * pitch}u + 4u * g, ll_prmt(lo01, lo23, 0x7632u));",
                        f"        ll_sts32(a_col + {(4 * m + 2) * pitch}u + 4u * g, ll_prmt(hi01, hi23, 0x5410u));",
                        f"        ll_sts32(a_col + {(4 * m + 3) * pitch}u + 4u * g, ll_prmt(hi01, hi23, 0x7632u));",
                        "        }"]
            out += ["      }", "    }"]
        return out

    def chunk_body() -> list[str]:
        """Chunk ``qc`` of tile column ``cb`` (shift ``s``) from its 5 shared words: ``x``."""
        return [f"      const unsigned o = {q}u - s + 16u * qc;  // the chunk's first byte in the column",
                f"      const unsigned a = smem + cb * {pitch}u + (cb >> 4) * {skew}u + (o & ~3u);",
                "      const unsigned sel = 0x3210u + 0x1111u * (o & 3u);",
                "      const unsigned t0 = ll_lds32(a), t1 = ll_lds32(a + 4u), t2 = ll_lds32(a + 8u), "
                "t3 = ll_lds32(a + 12u), t4 = ll_lds32(a + 16u);",
                "      uint4 x; x.x = ll_prmt(t0, t1, sel); x.y = ll_prmt(t1, t2, sel); x.z = ll_prmt(t2, t3, sel); "
                "x.w = ll_prmt(t3, t4, sel);"]

    def chunk_lines(interior: bool) -> list[str]:
        """Step 4 for chunk ``qc`` of tile column ``cb``: whole, or its owned bytes."""
        out = [f"        const unsigned s = (sig + cb * lam) & {q - 1}u;  // (start_c + r0) mod Q",
               *["  " + line for line in chunk_body()],
               "        unsigned char* __restrict__ row = b_batch + (size_t)(col0 + cb) * ldb;"]
        if interior:
            return out + ["        ll_store_chunk(row + ((size_t)row0 - s + 16u * qc), x);"]
        stores = [f"            if (f + {e}ll >= lo && f + {e}ll < hi) ll_stg8(row + f + {e}, "
                  f"x.{_FIELDS[e // 4]}{f' >> {8 * (e % 4)}u' if e % 4 else ''});" for e in range(16)]
        return out + [
            "        const long long f = (long long)row0 - (long long)s + 16ll * qc;",
            "        const long long lo = first_row ? 0ll : (long long)row0 - (long long)s;",
            f"        const long long hi = last_row ? (long long)rows : (long long)row0 - (long long)s + {rows}ll;",
            "        if (f < hi && f + 16ll > lo) {",
            "          if (f >= lo && f + 16ll <= hi) ll_store_chunk(row + f, x);",
            "          else {  // a row's first or last chunk: its owned bytes",
            *stores,
            "          }",
            "        }"]

    def store_lines(interior: bool) -> list[str]:
        if interior and threads % q_chunks == 0:  # a thread keeps its chunk qc, its columns threads / Qc apart
            step = threads // q_chunks
            return [
                f"    const unsigned qc = threadIdx.x % {q_chunks}u;",
                f"    unsigned cb = threadIdx.x / {q_chunks}u, sk = sig + cb * lam;",
                "    unsigned char* __restrict__ row = b_batch + (size_t)(col0 + cb) * ldb;",
                f"    const size_t row_step = {step}ull * ldb;",
                f"    #pragma unroll {-(-cols // step)}",
                f"    for (; cb < {cols}u; cb += {step}u, sk += {step}u * lam, row += row_step) {{",
                f"      const unsigned s = sk & {q - 1}u;  // (start_c + r0) mod Q",
                *chunk_body(),
                "      ll_store_chunk(row + ((size_t)row0 - s + 16u * qc), x);",
                "    }"]
        if interior:
            count, bound = f"{out_items}u", ""
        else:  # the last tile row: one chunk more of each column
            count, bound = f"(last_row ? {out_items + cols * (q // 16)}u : {out_items}u)", " && col0 + cb < cols"
        return [f"    #pragma unroll {-(-out_items // threads)}",
                f"    for (unsigned u = threadIdx.x; u < {count}; u += {threads}u) {{",
                f"      const unsigned cb = u < {out_items}u ? u / {q_chunks}u : (u - {out_items}u) % {cols}u, "
                f"qc = u < {out_items}u ? u % {q_chunks}u : {q_chunks}u + (u - {out_items}u) / {cols}u;",
                f"      if (true{bound}) {{", *chunk_lines(interior), "      }", "    }"]

    extent = " + ".join(["(rows - 1ull) * lda + cols"] + [f"(size{k} - 1ull) * src_stride{k}" for k in range(batch_dims)])
    body = [
        f"// {name}: B = A^T, {rows}x{cols} tiles of bytes, {batch_dims} batch dims; A's rows in aligned 16-byte chunks",
        "//   from any offset, 4 x 4 byte transposes in registers, B's rows at any offset: each tile owns aligned",
        "//   16-byte granules of B's absolute positions. launch: a 1-D grid of tiles_n * tiles_m * (batch sizes) "
        f"CTAs, block = {threads}, dynamic shared = {shared} bytes.",
        f'extern "C" __global__ void __launch_bounds__({threads}, {ctas_per_sm}) {name}(',
        f"    {', '.join(f'{ty} {p}' for ty, p in params)}) {{",
        *OP_PROLOGUE,
        *tile_index_lines(rows, cols, batch_dims, fast=True, raster=raster),
        "  (void)full;",
        f"  const bool first_row = row0 == 0u, last_row = rows_left <= {rows}u;",
        "  unsigned char* __restrict__ b_batch = dst_all + dst_base;",
        f"  const unsigned lam = (unsigned)ldb & {q - 1}u;  // start_c = start_c0 + (c - c0) ldb",
        "  const unsigned sig = (unsigned)(unsigned long long)(b_batch + (size_t)col0 * ldb) + row0;",
        "  const unsigned long long a_row0 = src_base + col0;  // element (0, c0) of this batch's A",
        "  const unsigned a_pos = (unsigned)(unsigned long long)src_all;  // A's absolute position",
        f"  const long long total = (long long)({extent});  // A's elements",
        f"  const unsigned j = threadIdx.x % {k_chunks}u;  // the chunk of a loaded row this thread loads",
        f"  const unsigned a_col = smem + {16 * pitch}u * j + {skew}u * j;  // shared column 16 j",
        f"  if (!first_row && rows_left > {rows}u && cols_left >= {cols}u) {{  // an interior tile",
        *load_lines(True),
        "    ll_bar_cta();",
        *store_lines(True),
        "  } else {",
        *load_lines(False),
        "    ll_bar_cta();",
        *store_lines(False),
        "  }",
        "}",
    ]
    helpers = OPAQUE_FUNCTIONS + ALIGNED_FUNCTIONS + chunk_functions() + within_functions("unsigned char", 1) + _PRMT
    source = OP_PRELUDE + "\n".join(helpers + body) + "\n"
    return PermuteKernel(name, source, threads, shared, 1, rows, cols, 16, 1, True, batch_dims, tuple(params))


def _if(conditions: list[str]) -> str:
    return f"if ({' && '.join(conditions)}) " if conditions else ""
