"""The transpose into rows that 16 bytes do not align, by aligned chunks of both matrices' absolute positions.

``B = A^T`` (``codegen.permute``'s tiled problem: ``A`` ``rows x cols`` at row stride ``lda``, ``B``'s row ``c``
at ``ldb c``, batch dims) where ``A``'s rows allow 16-byte loads (``cols`` a multiple of ``G = 16 / w``
elements of ``w`` bytes, ``A`` 16-byte aligned) and ``B``'s rows start anywhere. As in ``codegen.cast_chunks``,
alignment is a property of ABSOLUTE element positions: ``B``'s row ``c`` starts at position ``start_c =
address / w`` and, with a granule of ``Q`` elements (``G``, or ``2G``: 32-byte sectors) and ``floorQ(p) = p -
p mod Q``, the ``R x N`` tile ``(r0, c0)`` owns of that row the positions ``[floorQ(start_c + r0),
floorQ(start_c + r0 + R))`` (``cast_chunks.owned_range``), from ``start_c`` itself when ``r0 = 0`` and to
``start_c + rows`` in the last tile row: every position of ``B`` once over the grid, and every chunk a middle
tile owns whole.

==================  =====================================================================================
step                a CTA of ``W`` warps
==================  =====================================================================================
1. load ``A``       rows ``r0 - (Q - 1) .. r0 + R - 1`` (those ``>= 0``; ``B``'s ranges reach ``Q - 1``
                    rows up), each as ``K = N / G`` 16-byte chunks: item ``threadIdx.x + 32 W i`` is chunk
                    ``j = item mod K`` of loaded row ``rr = item / K`` (lanes along a row; a thread keeps its
                    ``j``); all of a thread's loads are issued before its first shared store
2. shared tile      element ``(r, c)`` to column ``k = c - c0`` at index ``r - r0 + s_c + Q`` with ``s_c =
                    (start_c + r0) mod Q``: the index of a position is its residue mod ``G``, so ``B``'s
                    chunks are aligned 16-byte reads; column ``k`` at byte ``k P w + 16 floor(k / G)``,
                    ``P = R + 2Q`` elements (the 16 bytes every ``G`` columns put a warp's ``K <= 8`` chunks
                    of a row in distinct 16-byte bank groups: its element stores are conflict-free)
3. store ``B``      after one barrier, chunk ``q`` of column ``k`` (``B``'s positions ``floorQ(start_c + r0) +
                    G q ..``; lanes along a column) as one 16-byte load from shared memory and one 16-byte
                    store when the tile owns it whole, its owned elements one by one when it owns part
                    (a row's first or last chunk); ``R / G`` chunks a column, ``Q / G`` more in the last
                    tile row
==================  =====================================================================================

A tile with a tile row above and below and all its columns in the matrix (an interior tile) stores every chunk
whole without tests.

Rows of ``A`` at any element offset (``source_aligned=False``; ``A`` ``w``-aligned), as ``codegen.cast_chunks``
loads ``X``: loaded row ``r``'s segment, from element ``(r, c0)`` at ``d = (its position) mod G``, is read as the
``K + 1`` aligned chunks from ``d`` elements before it (items: chunks ``0 .. K - 1`` of every loaded row, then
chunk ``K`` of every row, needed where ``d > 0``), element ``e`` of chunk ``j`` to column ``G j + e - d`` where
that lies in ``[0, N)`` (the other bytes are neighbouring tiles' and not placed); steps 2 and 3 are unchanged. An
interior tile's chunks lie within ``A`` (rows ``1 .. rows - 2``, ``lda >= N >= G``); elsewhere a chunk across an
end of ``A`` (``total = (rows - 1) lda + cols + sum (size - 1) src_stride`` elements from its first) is read
element by element, those within it only.

The launch, the grid (``tiles_n * tiles_m * batch`` CTAs, tile column fastest) and the parameters are
``codegen.permute``'s tiled kernel's (``fast_divider`` arguments last).

Example: 16-bit ``6415 x 12552`` (``B``'s rows 6415 elements), ``B`` at ``0x...0006`` (position residue 3
mod 8): the 128 x 64 tile ``(128, 0)`` owns of ``B``'s row 1 (``start = 3 + 6415 = 6418``, a multiple of 8
plus 2) the positions ``[6544, 6672)``: 16 whole chunks, rows ``126 .. 253`` of ``A``'s column 1.
"""

from __future__ import annotations

from linear_layouts.codegen.cast_chunks import OPAQUE_FUNCTIONS, chunk_elements, thread_registers
from linear_layouts.codegen.elements import check_element_bytes, cpp_storage_type
from linear_layouts.codegen.intrinsics import OP_PRELUDE, OP_PROLOGUE
from linear_layouts.codegen.permute import (
    MAX_KERNEL_BATCH_DIMS, PermuteKernel, tile_divisors, tile_index_lines, tiled_params, fitting_ctas,
)
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote
from linear_layouts.target import Target

__all__ = ["emit_chunked_transpose_kernel", "chunk_elements", "column_pitch", "column_start", "shared_bytes",
           "shared_element_address", "chunks_per_thread", "GRANULE_BYTES", "MAX_CHUNKS", "ALIGNED_FUNCTIONS",
           "chunk_functions", "within_functions"]

#: Bytes of the ownership granule ``Q w``: 16 (one chunk) or 32 (one sector: no sector of ``B`` two tiles share).
GRANULE_BYTES = (16, 32)
#: Chunks of ``A`` a thread holds in flight at most.
MAX_CHUNKS = 6
#: Words of a 16-byte chunk, as the fields of a ``uint4``.
_FIELDS = ("x", "y", "z", "w")

#: ``ll_aligned(a, n)``: nothing on the GPU (a misaligned vector access faults there); in the emulator, an abort
#: unless address ``a`` is a multiple of ``n`` (its ``memcpy`` accesses would hide a misaligned one).
ALIGNED_FUNCTIONS = [
    "#ifndef LL_ALIGNED",
    "#define LL_ALIGNED",
    "#ifdef LL_HOST",
    "LL_DEV void ll_aligned(unsigned long long a, unsigned n) { if (a % n) std::abort(); }",
    "#else",
    "LL_DEV void ll_aligned(unsigned long long, unsigned) {}",
    "#endif",
    "#endif",
]


def column_pitch(rows: int, granule: int) -> int:
    """``P``: elements a shared column holds, ``R + 2Q`` (indices ``Q - 1 + s .. R + 2Q - 2`` at most: loaded rows
    ``r0 - (Q - 1) ..`` at ``r - r0 + s + Q``, ``s < Q``): ``column_pitch(128, 8) == 144``."""
    return rows + 2 * granule


def column_start(k: int, rows: int, element_bytes: int, granule: int) -> int:
    """Byte offset of shared column ``k``: ``k P w + 16 floor(k / G)`` (module doc).

    >>> column_start(9, 128, 2, 8)
    2608
    """
    return k * column_pitch(rows, granule) * element_bytes + 16 * (k // chunk_elements(element_bytes))


def shared_bytes(rows: int, cols: int, element_bytes: int, granule: int) -> int:
    """Dynamic shared memory of an ``R x N`` tile: ``column_start(N)``. ``shared_bytes(128, 64, 2, 8) == 18560``."""
    return column_start(cols, rows, element_bytes, granule)


def shared_element_address(rr: int, j: int, e: int, s: int, rows: int, element_bytes: int, granule: int) -> int:
    """Byte offset step 1 stores element ``e`` of chunk ``j`` of loaded row ``rr`` at (module doc), its column's
    ``s = (start_c + r0) mod Q``: column ``G j + e``, index ``rr + 1 + s`` (``rr = r - r0 + Q - 1``)."""
    g = chunk_elements(element_bytes)
    return column_start(g * j + e, rows, element_bytes, granule) + (rr + 1 + s) * element_bytes


def chunks_per_thread(rows: int, cols: int, warps: int, element_bytes: int, granule: int) -> int:
    """Chunks of ``A`` a thread loads: ``ceil((R + Q - 1) N / G / 32 W)``; 3 for 16-bit 128 x 64 tiles of 16 warps."""
    g = chunk_elements(element_bytes)
    return -(-(rows + granule - 1) * (cols // g) // (32 * warps))


def _element(v: str, e: int, w: int) -> list[str]:
    """The words of element ``e`` of the ``uint4`` ``v`` (the low bits of one word below 8 bytes)."""
    if w == 8:
        return [f"{v}.{_FIELDS[2 * e]}", f"{v}.{_FIELDS[2 * e + 1]}"]
    word, shift = divmod(e * w, 4)
    return [f"{v}.{_FIELDS[word]}" + (f" >> {8 * shift}u" if shift else "")]


def chunk_functions() -> list[str]:
    """``ll_load_chunk(p)`` (16 bytes of global ``p``, read-only path), ``ll_load_shared_chunk(a, x)`` and
    ``ll_store_chunk(p, x)``: the kernel's 16-byte accesses, each ``ll_aligned`` first."""
    return [
        "#ifndef LL_CHUNK_ACCESSES",
        "#define LL_CHUNK_ACCESSES",
        "LL_DEV uint4 ll_load_chunk(const void* p) { ll_aligned((unsigned long long)p, 16u); return ll_ldg128_nc(p); }",
        "LL_DEV void ll_load_shared_chunk(unsigned a, uint4& x) { ll_aligned(a, 16u); "
        "ll_lds128(a, x.x, x.y, x.z, x.w); }",
        "LL_DEV void ll_store_chunk(void* p, const uint4& x) { ll_aligned((unsigned long long)p, 16u); "
        "ll_stg128(p, x.x, x.y, x.z, x.w); }",
        "#endif",
    ]


def _store_function(w: int, space: str) -> str:
    return f"ll_st{space}{8 * w}"


def within_functions(t: str, w: int) -> list[str]:
    """``ll_load_at(a, f, total)``: the chunk of ``A`` at element ``f`` (an aligned one) that lies within
    ``A``'s ``total`` elements (the emulator aborts otherwise); ``ll_load_within(a, f, total)``: the same where
    it does, else its elements in ``[0, total)`` one by one (zeros elsewhere), shifted in from the last (a loop
    of few registers: it runs only where a chunk crosses an end of ``A``)."""
    g = chunk_elements(w)
    b = 8 * w
    if b == 64:
        shift = ["    v.w = v.y; v.z = v.x; v.y = (unsigned)(y >> 32); v.x = (unsigned)y;"]
    elif b == 32:
        shift = ["    v.w = v.z; v.z = v.y; v.y = v.x; v.x = y;"]
    else:
        shift = [f"    v.w = (v.w << {b}u) | (v.z >> {32 - b}u); v.z = (v.z << {b}u) | (v.y >> {32 - b}u);",
                 f"    v.y = (v.y << {b}u) | (v.x >> {32 - b}u); v.x = (v.x << {b}u) | (unsigned)y;"]
    return [
        f"#ifndef LL_LOAD_WITHIN{b}",
        f"#define LL_LOAD_WITHIN{b}",
        f"LL_DEV uint4 ll_load_at(const {t}* a, long long f, long long total) {{",
        "#ifdef LL_HOST",
        f"  if (f < 0ll || f + {g}ll > total) std::abort();",
        "#endif",
        "  (void)total;",
        "  return ll_load_chunk(a + f);",
        "}",
        f"LL_DEV uint4 ll_load_within(const {t}* a, long long f, long long total) {{",
        f"  if (f >= 0ll && f + {g}ll <= total) return ll_load_chunk(a + f);",
        "  uint4 v; v.x = v.y = v.z = v.w = 0u;",
        "  #pragma unroll 1",
        f"  for (long long p = f + {g - 1}ll; p >= f; --p) {{",
        f"    const {t} y = p >= 0ll && p < total ? a[p] : ({t})0;",
        *shift,
        "  }",
        "  return v;",
        "}",
        "#endif",
    ]


def emit_chunked_transpose_kernel(name: str, element_bytes: int, tile_rows: int = 128, tile_cols: int = 0,
                                  warps: int = 16, batch_dims: int = 0, granule_bytes: int = 16,
                                  target: Target | None = None, source_aligned: bool = True) -> PermuteKernel:
    """CUDA C++ of the module doc's kernel for ``element_bytes``-byte elements, ``tile_rows x tile_cols`` tiles
    (powers of two; ``tile_cols`` a multiple of ``G`` at most ``32 W G``, default ``8 G``; ``tile_rows`` from
    ``2Q`` to 512) of ``warps`` warps (1 to 32; at most ``MAX_CHUNKS`` chunks a thread), ``batch_dims`` batch
    dims (0 to ``permute.MAX_KERNEL_BATCH_DIMS``) and an ownership granule of ``granule_bytes`` (``GRANULE_BYTES``).
    The caller keeps ``cols`` a multiple of ``G``, ``A``, ``lda`` and the batch source strides 16-byte aligned
    (``source_aligned``; else ``A`` ``w``-aligned and ``cols``, ``lda``, the strides free: module doc) and ``B``
    ``w``-aligned; ``ldb`` and ``B``'s base are free. The launch bounds name the CTAs an SM of
    ``target`` holds by threads, shared memory and ``cast_chunks.thread_registers``.

    Example: ``emit_chunked_transpose_kernel("k", 2)``: 128 x 64 tiles of 16 warps, 3 chunks a thread, 18560
    bytes of shared memory, the parameters of ``permute.emit_tiled_permute_kernel(..., batch_dims=0)``."""
    w = check_element_bytes(element_bytes)
    if not isinstance(name, str) or not name.isidentifier():
        raise LayoutError(f"name: {quote(name)} is not a C identifier")
    g = chunk_elements(w)
    tile_cols = tile_cols or 8 * g
    if isinstance(granule_bytes, bool) or granule_bytes not in GRANULE_BYTES:
        raise LayoutError(f"granule_bytes: must be one of {GRANULE_BYTES}, got {quote(granule_bytes)}")
    q = granule_bytes // w  # Q: elements of the ownership granule
    for label, value, least, most in (("warps", warps, 1, 32), ("tile_rows", tile_rows, 2 * q, 512),
                                      ("tile_cols", tile_cols, g, 32 * g * warps if isinstance(warps, int) else 0)):
        if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most or value & (value - 1):
            raise LayoutError(f"{label}: must be a power of two from {least} to {most}, got {quote(value)}")
    if isinstance(batch_dims, bool) or not isinstance(batch_dims, int) or not 0 <= batch_dims <= MAX_KERNEL_BATCH_DIMS:
        raise LayoutError(f"batch_dims: must be an int in [0, {MAX_KERNEL_BATCH_DIMS}], got {quote(batch_dims)}")
    if not isinstance(source_aligned, bool):
        raise LayoutError(f"source_aligned: must be a bool, got {quote(source_aligned)}")
    rows, cols, threads = tile_rows, tile_cols, 32 * warps
    k_chunks = cols // g  # K: chunks of a loaded row
    loaded = rows + q - 1
    main = loaded * k_chunks  # chunks 0 .. K - 1 of every loaded row; a misaligned A's rows take one more each
    items = main if source_aligned else main + loaded
    per_thread = -(-items // threads)
    if per_thread > MAX_CHUNKS:
        raise LayoutError(f"warps: {warps} warps cannot take {rows} x {cols} tiles ({per_thread} chunks a thread "
                          f"in flight, at most {MAX_CHUNKS})")
    step_rows = threads // k_chunks  # loaded rows between a thread's items
    pitch_bytes = column_pitch(rows, q) * w
    group_bytes = g * pitch_bytes + 16  # bytes between columns G j and G (j + 1)
    shared = shared_bytes(rows, cols, w, q)
    q_chunks = rows // g  # chunks of a column a middle tile stores
    t_items = cols * q_chunks
    t_per_thread = -(-t_items // threads)
    extra = q // g  # chunks more of each column in the last tile row
    extra_per_thread = -(-cols * extra // threads)
    ctas_per_sm = fitting_ctas(threads, shared, thread_registers(per_thread), target)
    t = cpp_storage_type(w)
    params = tiled_params(t, batch_dims) + [("unsigned long long", f"{d}_div") for d in tile_divisors(batch_dims)]
    sts, stg = _store_function(w, "s"), _store_function(w, "g")

    def load_lines(interior: bool) -> list[str]:
        """Step 1: every chunk of the thread in flight, then its elements into the shared columns."""
        out = [f"    uint4 v[{per_thread}];"]
        for i in range(per_thread):
            guard = [] if threads * (i + 1) <= items else [f"threadIdx.x + {threads * i}u < {items}u"]
            if not interior:
                guard += [f"r0l + {step_rows * i}ll >= 0ll", f"r0l + {step_rows * i}ll < (long long)rows", "col_ok"]
            load = f"ll_load_chunk(a_thread + (r0l + {step_rows * i}ll) * (long long)lda)"
            if guard:
                out += [f"    v[{i}].x = v[{i}].y = v[{i}].z = v[{i}].w = 0u;",
                        f"    if ({' && '.join(guard)}) v[{i}] = {load};"]
            else:
                out.append(f"    v[{i}] = {load};")
        for i in range(per_thread):
            cond = f"if (threadIdx.x + {threads * i}u < {items}u) " if threads * (i + 1) > items else ""
            out.append(f"    {cond}{{")
            for e in range(g):
                value = ", ".join(_element(f"v[{i}]", e, w))
                out.append(f"      {sts}(a_elem{e} + {step_rows * i * w}u, {value});")
            out.append("    }")
        return out

    lg = g.bit_length() - 1
    const_d = [(step_rows * i) % g == 0 for i in range(per_thread)]  # main item i shares the thread's first d

    def place(value: str, e: int, rr: str, k: str) -> str:
        """The shared store of element ``e`` of chunk ``value`` of loaded row ``rr`` at column ``k``."""
        return (f"{sts}(smem + {k} * {pitch_bytes}u + ({k} >> {lg}u) * 16u + ({rr} + 1u + ((sig + {k} * lam) & "
                f"{q - 1}u)) * {w}u, {', '.join(_element(value, e, w))});")

    def kinds(i: int) -> list[tuple[str, str]]:
        """(kind, condition) of items ``threadIdx.x + threads i``: ``main`` below ``main``, ``tail`` below ``items``."""
        lo, hi, item = threads * i, threads * (i + 1), f"threadIdx.x + {threads * i}u"
        out = []
        if lo < main:
            out.append(("main", "" if hi <= main else f"{item} < {main}u"))
        if hi > main and lo < items:
            out.append(("tail", "" if hi <= items else f"{item} < {items}u"))
        return out

    def chain(parts: list[tuple[str, list[str]]]) -> list[str]:
        """``parts`` (condition, lines) as one block or an if / else-if chain."""
        out = []
        for n, (cond, lines) in enumerate(parts):
            head = ("" if n == 0 else "} else ") + (f"if ({cond}) " if cond else "")
            out += [f"    {head}{{", *lines]
        return out + ["    }"]

    def main_d(i: int) -> list[str]:
        """Row ``r`` and shift ``d`` (``(r lda + c0)``'s position mod ``G``) of main item ``i``."""
        lines = [f"      const long long r = r0l + {step_rows * i}ll;"]
        if const_d[i]:
            return lines + ["      const unsigned d = d0;"]
        return lines + [f"      const unsigned d = (d0 + (unsigned)lda * {step_rows * i}u) & {g - 1}u;"]

    def tail_d(i: int) -> list[str]:
        """Loaded row ``rr``, row ``r`` and shift ``d`` of tail item ``i`` (chunk ``K`` of row ``rr``)."""
        return [f"      const unsigned rr = threadIdx.x + {threads * i}u - {main}u;",
                f"      const long long r = (long long)row0 + rr - {q - 1}ll;",
                f"      const unsigned d = (a_pos + (unsigned)a_row0 + (unsigned)r * (unsigned)lda) & {g - 1}u;"]

    def misaligned_load_lines(interior: bool) -> list[str]:
        """Step 1 of a misaligned ``A``: the ``K + 1`` aligned chunks of each loaded row, then their elements
        into their columns (``G j + e - d``, those in ``[0, N)``)."""
        load = "ll_load_at" if interior else "ll_load_within"
        out = [f"    uint4 v[{per_thread}];"]
        for i in range(per_thread):
            out.append(f"    v[{i}].x = v[{i}].y = v[{i}].z = v[{i}].w = 0u;")
            parts = []
            for kind, cond in kinds(i):
                if kind == "main":
                    lines = main_d(i) + ["      const long long f = (long long)a_row0 + r * (long long)lda + "
                                         "(long long)jg - (long long)d;"]
                    ok = [] if interior else ["r >= 0ll", "r < (long long)rows", "(jg < d || jg - d < cols_left)"]
                else:
                    lines = tail_d(i) + [f"      const long long f = (long long)a_row0 + r * (long long)lda + "
                                         f"{cols}ll - (long long)d;"]
                    ok = ["d != 0u"] + ([] if interior else ["r >= 0ll", "r < (long long)rows",
                                                             f"{cols}u - d < cols_left"])
                guard = f"if ({' && '.join(ok)}) " if ok else ""
                lines.append(f"      {guard}v[{i}] = {load}(src_all, f, total);")
                parts.append((cond, lines))
            out += chain(parts)
        if any(const_d):
            out += [line for e in range(g) for line in (
                f"    const unsigned k{e} = jg + {e}u - d0;  // column of element {e} of the thread's main chunks",
                f"    const unsigned a_elem{e} = smem + k{e} * {pitch_bytes}u + (k{e} >> {lg}u) * 16u + (rr0 + 1u + "
                f"((sig + k{e} * lam) & {q - 1}u)) * {w}u;")]
        for i in range(per_thread):
            parts = []
            for kind, cond in kinds(i):
                if kind == "main" and const_d[i]:
                    lines = [f"      {'' if e == g - 1 else f'if (jg + {e}u >= d0) '}{sts}(a_elem{e} + "
                             f"{step_rows * i * w}u, {', '.join(_element(f'v[{i}]', e, w))});" for e in range(g)]
                elif kind == "main":
                    lines = main_d(i) + [f"      const unsigned rr = rr0 + {step_rows * i}u;"]
                    lines += [f"      {{ const unsigned k = jg + {e}u - d; if (k < {cols}u) "
                              f"{place(f'v[{i}]', e, 'rr', 'k')} }}" for e in range(g)]
                else:
                    lines = tail_d(i)
                    lines += [f"      if ({e}u < d) {{ const unsigned k = {cols + e}u - d; "
                              f"{place(f'v[{i}]', e, 'rr', 'k')} }}" for e in range(g - 1)]
                parts.append((cond, lines))
            out += chain(parts)
        return out

    def chunk_lines(interior: bool, chunk: str, cb: str) -> list[str]:
        """Step 3 for chunk ``chunk`` of tile column ``cb``: whole, or its owned elements."""
        out = [f"      const unsigned c = col0 + {cb};",
               f"      const unsigned s = (sig + {cb} * lam) & {q - 1}u;  // (start_c + r0) mod Q",
               f"      const unsigned a = smem + {cb} * {pitch_bytes}u + ({cb} / {g}u) * 16u + ({q}u + {g}u * {chunk}) "
               f"* {w}u;",
               f"      {t}* __restrict__ row = b_batch + (size_t)c * ldb;"]
        # the chunk's first position, relative to the row's start: r0 - s + G chunk
        if interior:
            return out + [f"      const size_t f = (size_t)row0 - s + {g}u * {chunk};",
                          "      uint4 x; ll_load_shared_chunk(a, x);",
                          "      ll_store_chunk(row + f, x);"]
        stores = [f"          if (f + {e}ll >= lo && f + {e}ll < hi) "
                  f"{stg}(row + f + {e}, {', '.join(_element('x', e, w))});"
                  for e in range(g)]
        return out + [
            f"      const long long f = (long long)row0 - (long long)s + {g}ll * {chunk};",
            "      const long long lo = first_row ? 0ll : (long long)row0 - (long long)s;",
            f"      const long long hi = last_row ? (long long)rows : (long long)row0 - (long long)s + {rows}ll;",
            f"      if (c < cols && f < hi && f + {g}ll > lo) {{",
            "        uint4 x; ll_load_shared_chunk(a, x);",
            f"        if (f >= lo && f + {g}ll <= hi) ll_store_chunk(row + f, x);",
            "        else {  // a row's first or last chunk: its owned elements",
            *stores,
            "        }",
            "      }"]

    def store_lines(interior: bool) -> list[str]:
        out = []
        for k in range(t_per_thread):
            cond = f"if (u < {t_items}u) " if threads * (k + 1) > t_items else ""
            out += ["    {", f"      const unsigned u = threadIdx.x + {threads * k}u, cb = u / {q_chunks}u, "
                             f"qc = u % {q_chunks}u;",
                    f"      {cond}{{", *["  " + x for x in chunk_lines(interior, "qc", "cb")], "      }", "    }"]
        if not interior and extra:
            out += ["    if (last_row) {  // the last tile row: Q / G chunks more of each column",
                    *[line for k in range(extra_per_thread) for line in (
                        "    {", f"      const unsigned u = threadIdx.x + {threads * k}u, cb = u % {cols}u, "
                                 f"qc = {q_chunks}u + u / {cols}u;",
                        f"      if (u < {cols * extra}u) {{", *["  " + x for x in chunk_lines(False, "qc", "cb")],
                        "      }", "    }")],
                    "    }"]
        return out

    aligned_lines = [
        f"  const bool first_row = row0 == 0u, last_row = rows_left <= {rows}u, col_ok = col0 + {g}u * (threadIdx.x % "
        f"{k_chunks}u) < cols;",
        f"  {t}* __restrict__ b_batch = dst_all + dst_base;",
        f"  const unsigned lam = (unsigned)ldb & {q - 1}u;  // start_c = start_c0 + (c - c0) ldb",
        f"  const unsigned sig = (unsigned)((unsigned long long)(b_batch + (size_t)col0 * ldb) / {w}ull) + row0;",
        f"  // 1. chunk j of loaded rows rr = threadIdx.x / K + {step_rows} i (A's row r0 - (Q - 1) + rr)",
        f"  const unsigned j = threadIdx.x % {k_chunks}u, rr0 = threadIdx.x / {k_chunks}u;",
        f"  const long long r0l = (long long)row0 + rr0 - {q - 1}ll;",
        f"  const {t}* __restrict__ a_thread = src_all + src_base + col0 + {g}u * j;",
        f"  const unsigned a_row = smem + j * {group_bytes}u + (rr0 + 1u) * {w}u;",
        f"  const unsigned sj = sig + {g}u * j * lam;",
        *[f"  const unsigned a_elem{e} = a_row + {e * pitch_bytes}u + ((sj + {e}u * lam) & {q - 1}u) * {w}u;"
          for e in range(g)],
    ]
    extent = " + ".join(["(rows - 1ull) * lda + cols"]
                        + [f"(size{k} - 1ull) * src_stride{k}" for k in range(batch_dims)])
    misaligned_lines = [
        f"  const bool first_row = row0 == 0u, last_row = rows_left <= {rows}u;",
        f"  {t}* __restrict__ b_batch = dst_all + dst_base;",
        f"  const unsigned lam = (unsigned)ldb & {q - 1}u;  // start_c = start_c0 + (c - c0) ldb",
        f"  const unsigned sig = (unsigned)((unsigned long long)(b_batch + (size_t)col0 * ldb) / {w}ull) + row0;",
        f"  // 1. chunks j of loaded rows rr = threadIdx.x / K + {step_rows} i (A's row r0 - (Q - 1) + rr) from the",
        "  //    aligned chunk of its element (r, c0) (d elements before it), then chunk K of every loaded row",
        f"  const unsigned j = threadIdx.x % {k_chunks}u, rr0 = threadIdx.x / {k_chunks}u, jg = {g}u * j;",
        f"  const long long r0l = (long long)row0 + rr0 - {q - 1}ll;",
        "  const unsigned long long a_row0 = src_base + col0;  // element (0, c0) of this batch's A",
        f"  const unsigned a_pos = (unsigned)((unsigned long long)src_all / {w}ull);  // A's absolute position",
        f"  const long long total = (long long)({extent});  // A's elements",
        f"  const unsigned d0 = (a_pos + (unsigned)a_row0 + (unsigned)r0l * (unsigned)lda) & {g - 1}u;",
    ]
    loads = load_lines if source_aligned else misaligned_load_lines
    body = [
        f"// {name}: B = A^T, {rows}x{cols} tiles of {8 * w}-bit elements, {batch_dims} batch dims; A's rows in",
        f"//   aligned 16-byte chunks{'' if source_aligned else ' from any element offset'}, B's rows at any element "
        f"offset: each tile owns aligned {q}-element granules",
        "//   of B's absolute positions. launch: a 1-D grid of tiles_n * tiles_m * (batch sizes) CTAs, block = "
        f"{threads}, dynamic shared = {shared} bytes.",
        f'extern "C" __global__ void __launch_bounds__({threads}, {ctas_per_sm}) {name}(',
        f"    {', '.join(f'{ty} {p}' for ty, p in params)}) {{",
        *OP_PROLOGUE,
        *tile_index_lines(rows, cols, batch_dims, fast=True),
        "  (void)full;",
        *(aligned_lines if source_aligned else misaligned_lines),
        f"  if (!first_row && !last_row && cols - col0 >= {cols}u) {{  // an interior tile: every chunk whole",
        *loads(True),
        "    ll_bar_cta();",
        *store_lines(True),
        "  } else {",
        *loads(False),
        "    ll_bar_cta();",
        *store_lines(False),
        "  }",
        "}",
    ]
    helpers = (OPAQUE_FUNCTIONS + ALIGNED_FUNCTIONS + chunk_functions()
               + ([] if source_aligned else within_functions(t, w)))
    source = OP_PRELUDE + "\n".join(helpers + body) + "\n"
    return PermuteKernel(name, source, threads, shared, w, rows, cols, g, 1, True, batch_dims, tuple(params))
