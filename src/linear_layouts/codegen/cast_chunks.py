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
                       ``floorG(r n + c0)``: items ``threadIdx.x + 32 W i``, chunks ``0 .. N / G - 1`` of every
                       row first (lanes along a row), then chunk ``N / G`` of every row; every load of a thread
                       issued before the first is used; a chunk across the end of ``X`` element by element
2. convert, store ``C``  ``fp8(scale x)`` two elements per ``cvt``; the chunks ``C`` owns stored from registers;
                       every chunk's bytes into shared memory column-major, one byte store each: element
                       ``(r, c)`` at byte ``(c - c0 + G - 1) P + r - r0 + G - 1``
3. store ``T``         after one barrier, a ``T`` chunk (``G`` rows of one column from ``r0 + G q - s``,
                       ``s = (c m + r0) mod G``) from the ``G / 4 + 1`` aligned words around its bytes, one
                       ``prmt`` a word; lanes along a row of ``T``, each lane its chunks ``q = ql + A z``
=====================  =====================================================================================

An interior tile (a tile row and column on each side) takes a branch without ownership tests and with 32-bit
offsets from its corner (``|offset| <= (R + G) n + N + 2G < 2^31``, else the general branch's 64-bit ones):
a thread's main items then share their chunk ``j`` and shift ``d = (r n + c0) mod G`` (``32 W / (N / G)`` rows
apart, a multiple of ``G``), so its later items are constants away from its first. The pitch ``P`` (the least
``P >= R + 2G + 3`` with ``P = 2 mod 4``) spreads the byte stores of a warp, whose columns are ``G`` apart, over
the banks. The amax is over every element loaded (all of ``X``'s, some twice): of 2-byte inputs on packed
halves (``max.xorsign.abs``, exact), then the reduction (one ``redux.sync`` a warp; below sm_86 / sm_80
the same results by integer compares and a ``shfl.xor`` tree), the scale and the launch
(``tiles_n * tiles_m`` CTAs, tile ``(t / tiles_n, t mod tiles_n)``) as in ``permute.emit_cast_transpose_kernel``
in raster order ``"n"``, whose parameters the kernel takes. Requires: ``X``'s address a multiple of 16, ``C``'s and ``T``'s of ``G``.

Example: ``emit_chunked_cast_transpose_kernel("k", "bf16", "e4m3")``: 64 x 64 tiles of 8 warps; a tile loads
71 rows of 9 chunks (3 a thread); of a ``4095 x 11007`` matrix, tile ``(64, 64)``'s row 64 owns ``C``'s positions
``[704512, 704576)`` (``64 x 11007 + 64 = 704512``, a multiple of 8) and the ``64 x 172`` CTAs cover ``C`` and ``T``.
"""

from __future__ import annotations

import re

from linear_layouts.codegen.elements import check_element_bytes
from linear_layouts.codegen.intrinsics import OP_PRELUDE, OP_PROLOGUE
from linear_layouts.codegen.permute import (
    CAST_FUNCTIONS, CAST_INPUTS, PermuteKernel, amax_epilogue, cast_params, check_cast_arguments, fitting_ctas,
    to_float,
)
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote
from linear_layouts.target import Target

__all__ = ["emit_chunked_cast_transpose_kernel", "chunk_elements", "chunked_pitch", "chunked_shared_bytes",
           "thread_registers", "owned_range", "CHUNK_LOAD_BYTES", "MAX_CHUNKS", "OPAQUE_FUNCTIONS", "WARP_MAX",
           "convert_lines", "cvt4_function", "load_function", "maxabs_function"]

#: Bytes of one aligned load of ``X``.
CHUNK_LOAD_BYTES = 16
#: Chunks a thread holds in flight at most (more spill within ``thread_registers``).
MAX_CHUNKS = 4


def chunk_elements(element_bytes: int) -> int:
    """``G``: elements of a 16-byte chunk: 16 of 1 byte, 8 of 2, 4 of 4, 2 of 8 (LayoutError for other sizes)."""
    return CHUNK_LOAD_BYTES // check_element_bytes(element_bytes)


def chunked_pitch(rows: int, g: int) -> int:
    """``P``: bytes between step 2's shared columns: the smallest ``P >= R + 2G + 3`` with ``P = 2 mod 4``, so that
    a warp's byte stores (lanes along the chunks of rows: columns ``G`` apart) spread over the banks (module doc).

    >>> chunked_pitch(64, 8), chunked_pitch(64, 4)
    (86, 78)
    """
    least = rows + 2 * g + 3
    return least + (2 - least) % 4


def chunked_shared_bytes(rows: int, cols: int, g: int) -> int:
    """Dynamic shared memory of an ``R x N`` tile: its ``N + 2G - 1`` shared columns of ``P`` bytes (rounded up to
    4 bytes) and one float per warp (at most 32) for the amax.

    >>> chunked_shared_bytes(64, 64, 8)
    6924
    """
    return -(-(cols + 2 * g - 1) * chunked_pitch(rows, g) // 4) * 4 + 4 * 32


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


def load_function(itype: str, wi: int, g: int) -> list[str]:
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


def maxabs_function(fmt: str) -> list[str]:
    """``ll_maxabs2(m, w)``: per 16-bit half, the larger magnitude of ``m`` and ``w`` (2-byte formats; a NaN loses,
    as in ``fmaxf``), ``max.xorsign.abs`` from sm_86 (its sign bits are xor junk: the caller clears them); below,
    on the host and under ``LL_PORTABLE`` the magnitudes compared as unsigned ints (for IEEE halves that are not
    NaN, above ``0x7f80`` in bf16 or ``0x7c00`` in fp16, the order of magnitudes is the order of their bits),
    the same magnitude with clear sign bits."""
    ptx = {"bf16": "bf16x2", "fp16": "f16x2"}[fmt]
    infinity = {"bf16": "0x7f80u", "fp16": "0x7c00u"}[fmt]
    return [
        f"#ifndef LL_MAXABS_{fmt.upper()}",
        f"#define LL_MAXABS_{fmt.upper()}",
        "#if LL_CUDA_ARCH >= 860",
        f"LL_DEV unsigned ll_maxabs2_{fmt}(unsigned m, unsigned w) {{ unsigned d; "
        f'asm("max.xorsign.abs.{ptx} %0, %1, %2;" : "=r"(d) : "r"(m), "r"(w)); return d; }}',
        "#else",
        f"LL_DEV unsigned ll_maxabs2_{fmt}(unsigned m, unsigned w) {{",
        "  unsigned out = 0u;",
        "  for (unsigned h = 0u; h < 32u; h += 16u) {",
        "    const unsigned x = (m >> h) & 0x7fffu, y = (w >> h) & 0x7fffu;",
        f"    out |= (x > {infinity} ? y : y > {infinity} ? x : y > x ? y : x) << h;",
        "  }",
        "  return out;",
        "}",
        "#endif",
        "#endif",
    ]


#: ``ll_opaque(p)``: ``p``, computed where it stands (the compiler does not fold it into later offsets), and
#: ``ll_ldg128_nc(p)``: 16 bytes at global ``p`` through the read-only path.
OPAQUE_FUNCTIONS = [
    "#ifndef LL_OPAQUE",
    "#define LL_OPAQUE",
    "#ifdef LL_HOST",
    "template <class T> LL_DEV T* ll_opaque(T* p) { return p; }",
    "#else",
    'template <class T> LL_DEV T* ll_opaque(T* p) { asm("" : "+l"(p)); return p; }',
    "#endif",
    "#endif",
    "#ifndef LL_LDG128_NC",
    "#define LL_LDG128_NC",
    "#ifdef LL_HOST",
    "LL_DEV uint4 ll_ldg128_nc(const void* p) { uint4 v; std::memcpy(&v, p, 16); return v; }",
    "#else",
    "LL_DEV uint4 ll_ldg128_nc(const void* p) {",
    "  uint4 v;",
    '  asm("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));',
    "  return v;",
    "}",
    "#endif",
    "#endif",
]


#: ``ll_warp_max(v)``: the largest ``v`` of the warp's 32 lanes, one ``redux.sync`` from sm_80 (a ``shfl.xor`` tree
#: below, on the host and under ``LL_PORTABLE``).
WARP_MAX = [
    "#ifndef LL_WARP_MAX",
    "#define LL_WARP_MAX",
    "#if LL_CUDA_ARCH >= 800",
    "LL_DEV unsigned ll_warp_max(unsigned v) { return __reduce_max_sync(0xffffffffu, v); }",
    "#else",
    "LL_DEV unsigned ll_warp_max(unsigned v) {",
    "  for (unsigned s = 16u; s; s >>= 1) { const unsigned o = __shfl_xor_sync(0xffffffffu, v, s); v = o > v ? o : v; }",
    "  return v;",
    "}",
    "#endif",
    "#endif",
]


def cvt4_function(fp8: str) -> list[str]:
    """``ll_cvt4_<fp8>(a, b, c, d)``: the fp8 bytes of four floats in one word (``a`` lowest), two ``cvt``s whose
    results share the word (no zero extension between them); below sm_89, on the host and under ``LL_PORTABLE``
    two ``ll_cvt_<fp8>x2`` (``permute.CAST_FUNCTIONS``)."""
    return [
        f"#ifndef LL_CVT4_{fp8.upper()}",
        f"#define LL_CVT4_{fp8.upper()}",
        "#if LL_CUDA_ARCH >= 890",
        f"LL_DEV unsigned ll_cvt4_{fp8}(float a, float b, float c, float d) {{",
        "  unsigned w;",
        f'  asm("{{ .reg .b16 lo, hi; cvt.rn.satfinite.{fp8}x2.f32 lo, %2, %1; cvt.rn.satfinite.{fp8}x2.f32 hi, %4, %3; '
        'mov.b32 %0, {lo, hi}; }" : "=r"(w) : "f"(a), "f"(b), "f"(c), "f"(d));',
        "  return w;",
        "}",
        "#else",
        f"LL_DEV unsigned ll_cvt4_{fp8}(float a, float b, float c, float d) {{ "
        f"return ll_cvt_{fp8}x2(a, b) | (ll_cvt_{fp8}x2(c, d) << 16); }}",
        "#endif",
        "#endif",
    ]


def convert_lines(fmt: str, fp8: str, wi: int, chunk: str) -> list[str]:
    """Lines turning ``chunk`` (a ``uint4``) into the fp8 halves ``h0 ..`` and words ``c0`` (``c1``) and folding
    its ``|x|`` into ``amax`` (fp32) or the packed ``amax2`` (2-byte formats: ``ll_maxabs2``, exact)."""
    words = tuple(f"{chunk}.{w}" for w in "xyzw")
    if wi == 2:
        lines = [f"      amax2 = ll_maxabs2_{fmt}(ll_maxabs2_{fmt}(amax2, {words[0]}), ll_maxabs2_{fmt}({words[1]}, "
                 f"ll_maxabs2_{fmt}({words[2]}, {words[3]})));"]
        lines += [f"      const float f{2 * k} = {to_float(fmt, words[k])}, f{2 * k + 1} = {to_float(fmt, f'{words[k]} >> 16')};"
                  for k in range(4)]
        values = 8
    else:
        lines = [f"      const float f{k} = {to_float(fmt, words[k])};" for k in range(4)]
        lines.append("      amax = fmaxf(amax, fmaxf(fmaxf(fabsf(f0), fabsf(f1)), fmaxf(fabsf(f2), fabsf(f3))));")
        values = 4
    for w in range(values // 4):
        args = ", ".join(f"f{4 * w + k} * scale" for k in range(4))
        lines.append(f"      const unsigned c{w} = ll_cvt4_{fp8}({args});")
    return lines


def _store_shared_lines(g: int, pitch: int, sts: str) -> list[str]:
    """Lines storing chunk ``c0`` (``c1``) of loaded row ``rr``, chunk ``j`` (first column ``G j - d`` of the tile)
    into its shared columns: byte ``e`` at ``smem + (G j - d + e + G - 1) P + rr``, one byte store each."""
    return [f"      {sts}(a + {e * pitch}u, c{e // 4}{f' >> {8 * (e % 4)}' if e % 4 else ''});  // keeps the low byte"
            for e in range(g)]


#: A line of declarations: its head (indent and type), its trailing comment, and its declarators, each
#: (name, initializer, the names the initializer reads).
Declarations = tuple[str, str, list[tuple[str, str, tuple[str, ...]]]]


def _declared_lines(lines: list[Declarations], uses: list[str]) -> list[str]:
    """``lines`` as C++ with only the declarators ``uses`` (code lines; comments aside) reads, directly or
    through a kept initializer (a line left without declarators is dropped); declarators come in dependency order.

    Example: ``[("const unsigned ", "", [("rr", "x", ()), ("d", "y", ())])]`` for ``uses = ["f(rr)"]`` is
    ``["const unsigned rr = x;"]``."""
    text = "\n".join(line.split("//")[0] for line in uses)
    needed = {name for _, _, declarators in lines for name, _, _ in declarators if re.search(rf"\b{name}\b", text)}
    for _, _, declarators in reversed(lines):
        for name, _, reads in reversed(declarators):
            if name in needed:
                needed.update(reads)
    out = []
    for head, comment, declarators in lines:
        kept = [f"{name} = {value}" for name, value, _ in declarators if name in needed]
        if kept:
            out.append(f"{head}{', '.join(kept)};{comment}")
    return out


def _item_lines(i: int, threads: int, k_chunks: int, main: int, items: int) -> list[str]:
    """Lines naming item ``threadIdx.x + threads i``: ``rr`` (loaded row) and ``j`` (chunk); items below ``main``
    are chunks ``0 .. N / G - 1`` of row ``item / (N / G)``, the rest chunk ``N / G`` of row ``item - main``."""
    lo, hi = threads * i, threads * (i + 1)
    item = f"const unsigned item = threadIdx.x + {lo}u;"
    shift = k_chunks.bit_length() - 1
    if hi <= main:
        return [item, f"const unsigned rr = item >> {shift}u, j = item & {k_chunks - 1}u;"]
    if lo >= main:
        return [item, f"const unsigned rr = item - {main}u, j = {k_chunks}u;"]
    return [item, f"const bool tail = item >= {main}u;",
            f"const unsigned rr = tail ? item - {main}u : item >> {shift}u, j = tail ? {k_chunks}u : item & {k_chunks - 1}u;"]


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
    k_chunks = cols // g  # whole chunks a tile row of C; a loaded row has one more
    loaded = rows + g - 1  # rows loaded: G - 1 above the tile
    main = loaded * k_chunks
    items = main + loaded
    per_thread = -(-items // threads)
    if per_thread > MAX_CHUNKS:
        raise LayoutError(f"warps: {warps} warps cannot take {rows} x {cols} tiles ({per_thread} chunks a thread "
                          f"in flight, at most {MAX_CHUNKS})")
    q_chunks = rows // g  # T chunks of a tile's T row (one more in the last tile row)
    lanes = min(q_chunks, max(1, threads // cols))  # lanes along a T row: chunks q = ql + lanes z
    q_per_lane = q_chunks // lanes
    t_items = cols * lanes
    t_per_thread = -(-t_items // threads)
    tail_per_thread = -(-cols // threads)
    itype = {2: "unsigned short", 4: "unsigned"}[wi]
    pitch = chunked_pitch(rows, g)
    shared = chunked_shared_bytes(rows, cols, g)
    slot = shared - 4 * 32
    ctas_per_sm = fitting_ctas(threads, shared, thread_registers(per_thread), target, ctas_per_sm)
    params = cast_params(itype)
    stg = "ll_stg64" if g == 8 else "ll_stg32"
    chunk_words = "c0, c1" if g == 8 else "c0"
    bytes_of = "(e < 4u ? c0 >> (8u * e) : c1 >> (8u * (e - 4u)))" if g == 8 else "(c0 >> (8u * e))"
    # 32-bit offsets from the tile's corner: |offset| <= (R + G) n + N + 2G (module doc) below 2^31
    fits32 = (2 ** 31 - cols - 2 * g - 1) // (rows + g)

    step_rows = threads // k_chunks if threads % k_chunks == 0 else 0  # rows between a thread's main items

    def interior_item(i: int, kind: str, uses: list[str]) -> list[str]:
        """Lines naming what ``uses`` reads of item ``i`` of an interior tile (``kind``: a ``main`` item, chunk
        ``j < N / G``, or a ``tail`` one, chunk ``N / G``): row ``rr``, shift ``d`` = ``(r n + c0) mod G``, the
        chunk's 32-bit offset ``f`` from the tile's corner, its first byte's shared address ``a`` and the pointers
        ``xp`` (X) and ``cp`` (C); a main item ``step_rows i`` rows below the thread's first one (same ``j`` and
        ``d``) by constants from it."""
        if kind == "main" and step_rows and (step_rows * i) % g == 0:
            at = f" + {step_rows * i} * (int)cols" if i else ""
            return _declared_lines([
                ("      const unsigned ", "", [("rr", f"rr0 + {step_rows * i}u", ()), ("d", "d0", ()),
                                              ("a", f"a0 + {step_rows * i}u", ())]),
                (f"      const {itype}* __restrict__ ", "", [("xp", f"x_thread{at}", ())]),
                ("      unsigned char* __restrict__ ", "", [("cp", f"c_thread{at}", ())])], uses)
        item = f"threadIdx.x + {threads * i}u"
        rr, j = ((f"({item}) / {k_chunks}u", f"({item}) % {k_chunks}u") if kind == "main" else
                 (f"{item} - {main}u", f"{k_chunks}u"))
        return _declared_lines([
            ("      const unsigned ", "", [("rr", rr, ()), ("j", j, ())]),
            ("      const int ", "  // row rr - (G - 1) from the corner",
             [("o", f"((int)rr - {g - 1}) * (int)cols", ("rr",))]),
            ("      const unsigned ", "", [("d", f"(corner + (unsigned)o) & {g - 1}u", ("o",))]),
            ("      const int ", "", [("f", f"o + (int)({g}u * j - d)", ("o", "j", "d"))]),
            (f"      const {itype}* __restrict__ ", "", [("xp", "x_tile + f", ("f",))]),
            ("      unsigned char* __restrict__ ", "", [("cp", "c_tile + f", ("f",))]),
            ("      const unsigned ", "", [("a", f"smem + {pitch * (g - 1)}u + rr + (({g}u * j - d) * {pitch}u)",
                                           ("rr", "j", "d"))])], uses)

    def interior_kinds(i: int) -> list[tuple[str, str]]:
        """(kind, condition) of the items ``threadIdx.x + threads i``: main below ``main``, tail below ``items``."""
        lo, hi, item = threads * i, threads * (i + 1), f"threadIdx.x + {threads * i}u"
        out = []
        if lo < main:
            out.append(("main", "" if hi <= main else f"{item} < {main}u"))
        if hi > main:  # after the main items' condition, if any
            out.append(("tail", "" if hi <= items else f"{item} < {items}u"))
        return out

    def branches(parts: list[tuple[str, list[str]]]) -> list[str]:
        """``parts`` (condition, lines) as one block or an if / else-if chain."""
        if len(parts) == 1 and not parts[0][0]:
            return ["    {", *parts[0][1], "    }"]
        out = []
        for k, (cond, lines) in enumerate(parts):
            out += [f"    {'' if k == 0 else '} else '}{f'if ({cond}) ' if cond else ''}{{", *lines]
        return out + ["    }"]

    def step12_interior() -> list[str]:
        """Steps 1 and 2 of an interior tile: every chunk in ``X``, every chunk of ``C`` it owns whole."""
        out = [f"    // 1. every chunk of the thread in flight: item (row rr, chunk j) of {loaded} x {k_chunks + 1}",
               f"    uint4 v[{per_thread}];"]
        if step_rows:
            out += [f"    const unsigned rr0 = threadIdx.x / {k_chunks}u, j0 = threadIdx.x % {k_chunks}u;  // main items",
                    f"    const int o0 = ((int)rr0 - {g - 1}) * (int)cols;",
                    f"    const unsigned d0 = (corner + (unsigned)o0) & {g - 1}u;",
                    f"    const int f0 = o0 + (int)({g}u * j0 - d0);",
                    f"    const unsigned a0 = smem + {pitch * (g - 1)}u + rr0 + (({g}u * j0 - d0) * {pitch}u);",
                    f"    const {itype}* __restrict__ x_thread = ll_opaque(x_tile + f0);  // one 64-bit add an item",
                    "    unsigned char* __restrict__ c_thread = ll_opaque(c_tile + f0);"]
        for i in range(per_thread):
            load = [f"      v[{i}] = ll_ldg128_nc(xp);"]
            parts = [(cond, [*interior_item(i, kind, load), *load]) for kind, cond in interior_kinds(i)]
            out += branches(parts)
        out += ["    // 2. amax, fp8 two elements per cvt, C's chunks, every chunk's bytes into its shared columns"]
        for i in range(per_thread):
            parts = []
            for kind, cond in interior_kinds(i):
                lines = [*convert_lines(input_format, fp8, wi, f"v[{i}]"), *_store_shared_lines(g, pitch, "ll_sts8")]
                if kind == "main":
                    own = "" if step_rows and step_rows * i >= g - 1 and (step_rows * i) % g == 0 else f"if (rr >= {g - 1}u) "
                    lines.append(f"      {own}{stg}(cp, {chunk_words});  // a whole chunk of C")
                parts.append((cond, [*interior_item(i, kind, lines), *lines]))
            out += branches(parts)
        return out

    def step12(interior: bool) -> list[str]:
        """Steps 1 and 2 of any tile: loads within ``X``, ``C``'s owned bytes."""
        if interior:
            return step12_interior()
        out = [f"    // 1. every chunk of the thread in flight: item (row rr, chunk j) of {loaded} x {k_chunks + 1}",
               f"    uint4 v[{per_thread}];"]
        for i in range(per_thread):
            out += ["    {", *["      " + x for x in _item_lines(i, threads, k_chunks, main, items)],
                    f"      const unsigned r = row0 + rr - {g - 1}u;  // wraps above row 0",
                    "      const size_t rs = (size_t)r * cols;",
                    f"      const size_t f = ((rs + col0) & ~(size_t){g - 1}u) + {g}u * j;",
                    f"      const bool needed = item < {items}u && row0 + rr >= {g - 1}u && r < rows && f < rs + col_end;",
                    f"      v[{i}] = ll_chunk_load(src_all, f, needed, total);",
                    "    }"]
        out += ["    // 2. amax, fp8 two elements per cvt, C's owned chunks, every chunk's bytes into its shared columns"]
        for i in range(per_thread):
            guard = threads * (i + 1) > items
            head = ["      " + x for x in _item_lines(i, threads, k_chunks, main, items)]
            body = [*convert_lines(input_format, fp8, wi, f"v[{i}]"),
                    f"      const unsigned r = row0 + rr - {g - 1}u;",
                    "      const size_t rs = (size_t)r * cols;",
                    f"      const size_t base = (rs + col0) & ~(size_t){g - 1}u, f = base + {g}u * j;",
                    "      const unsigned d = (unsigned)(rs + col0 - base);",
                    f"      const unsigned a = smem + {pitch * (g - 1)}u + rr + (({g}u * j - d) * {pitch}u);",
                    *_store_shared_lines(g, pitch, "ll_sts8"),
                    f"      if (rr >= {g - 1}u && r < rows) {{  // a row of C the tile owns chunks of",
                    "        const size_t lo = first_col ? rs : base;",
                    f"        const size_t hi = last_col ? rs + cols : base + {cols}u;",
                    f"        if (f >= lo && f + {g}u <= hi) {stg}(cast_all + f, {chunk_words});",
                    f"        else if (f < hi && f + {g}u > lo) {{  // a row's first or last chunk: its owned bytes",
                    "          #pragma unroll",
                    f"          for (unsigned e = 0u; e < {g}u; ++e)",
                    f"            if (f + e >= lo && f + e < hi) ll_stg8(cast_all + f + e, {bytes_of});",
                    "        }",
                    "      }"]
            if guard:
                out += ["    {", *head, f"      if (item < {items}u) {{", *["  " + x for x in body], "      }", "    }"]
            else:
                out += ["    {", *head, *body, "    }"]
        return out

    def t_words(z: str) -> list[str]:
        """Lines reading T chunk ``q = ql + lanes z`` of the thread's column into ``lo`` (``hi``): the aligned words
        around its ``G`` bytes, shifted by the start's byte offset ``sel`` (one ``prmt`` a word)."""
        n_words = g // 4 + 1
        reads = ", ".join(f"w{k} = ll_lds32(at + {4 * k}u)" for k in range(n_words))
        lines = [f"        const unsigned at = start + {g * lanes}u * {z};", f"        const unsigned {reads};",
                 "        const unsigned lo = __byte_perm(w0, w1, sel);"]
        if g == 8:
            lines.append("        const unsigned hi = __byte_perm(w1, w2, sel);")
        return lines

    def column_lines(q: str) -> list[str]:
        """Lines of the thread's T column ``c`` (``cb`` in the tile) and first chunk ``q``: the first byte's shared
        address ``start`` (aligned down to 4) and ``sel``, and ``T``'s position ``t0`` of the chunk."""
        return [f"      const unsigned s = (c * rows + row0) & {g - 1}u;  // (c m + r0) mod G",
                f"      const unsigned first = smem + (cb + {g - 1}u) * {pitch}u + {g - 1}u - s + {g}u * {q};",
                "      const unsigned start = first & ~3u, sel = 0x3210u + 0x1111u * (first & 3u);",
                f"      const size_t t0 = (size_t)c * rows + row0 - s + {g}u * {q};"]

    def step3(interior: bool) -> list[str]:
        out = [f"    // 3. T: chunks q = ql + {lanes} z (rows G q - s .. of the tile, s = (c m + r0) mod G) of column c"]
        for k in range(t_per_thread):
            cond = "" if (k + 1) * threads <= t_items else f"u < {t_items}u && "
            out += ["    {", f"      const unsigned u = threadIdx.x + {threads * k}u, cb = u / {lanes}u, ql = u % {lanes}u;",
                    "      const unsigned c = col0 + cb;",
                    f"      if ({cond}{'true' if interior else 'c < cols'}) {{",
                    *["  " + x for x in column_lines("ql")]]
            if not interior:
                out += ["        const size_t cm = (size_t)c * rows;",
                        f"        const size_t tlo = first_row ? cm : t0 - {g}u * ql;  // the row's first aligned chunk",
                        f"        const size_t thi = last_row ? cm + rows : t0 - {g}u * ql + {rows}u;"]
            out += ["        #pragma unroll", f"        for (unsigned z = 0u; z < {q_per_lane}u; ++z) {{",
                    *["  " + x for x in t_words("z")],
                    f"          const size_t tz = t0 + {g * lanes}u * z;"]
            if interior:
                out.append(f"          {stg}(trans_all + tz, lo{', hi' if g == 8 else ''});")
            else:
                out += [f"          if (tz >= tlo && tz + {g}u <= thi) {stg}(trans_all + tz, lo{', hi' if g == 8 else ''});",
                        f"          else if (tz < thi && tz + {g}u > tlo) {{  // a T row's first or last chunk",
                        "            #pragma unroll",
                        f"            for (unsigned e = 0u; e < {g}u; ++e)",
                        f"              if (tz + e >= tlo && tz + e < thi) ll_stg8(trans_all + tz + e, "
                        f"{'(e < 4u ? lo >> (8u * e) : hi >> (8u * (e - 4u)))' if g == 8 else '(lo >> (8u * e))'});",
                        "          }"]
            out += ["        }", "      }", "    }"]
        if not interior:
            out += [f"    if (last_row) {{  // the last tile row: T's rows end in chunk {q_chunks}, never whole",
                    "      #pragma unroll",
                    f"      for (unsigned k = 0u; k < {tail_per_thread}u; ++k) {{",
                    f"        const unsigned cb = threadIdx.x + {threads}u * k, c = col0 + cb;",
                    f"        if (cb < {cols}u && c < cols) {{",
                    *["    " + x for x in column_lines(f"{q_chunks}u")],
                    "          const size_t cm = (size_t)c * rows;",
                    f"          const size_t tlo = first_row ? cm : t0 - {g * q_chunks}u, thi = cm + rows;",
                    *["    " + x for x in t_words("0u")],
                    "          #pragma unroll",
                    f"          for (unsigned e = 0u; e < {g}u; ++e)",
                    f"            if (t0 + e >= tlo && t0 + e < thi) ll_stg8(trans_all + t0 + e, "
                    f"{'(e < 4u ? lo >> (8u * e) : hi >> (8u * (e - 4u)))' if g == 8 else '(lo >> (8u * e))'});",
                    "        }", "      }", "    }"]
        return out

    body = [
        f"// {name}: C = fp8 {fp8}(scale X), T = C^T, amax = max(amax, max |X|); X rows x cols {input_format} at a",
        f"//   16-byte aligned address, C and T at multiples of {g}; by {rows}x{cols} tiles owning aligned {g}-element",
        f"//   chunks of C's and T's flat positions. launch: a 1-D grid of tiles_n * tiles_m CTAs, block = {threads},",
        f"//   dynamic shared = {shared} bytes ({ctas_per_sm} CTAs per SM).",
        f'extern "C" __global__ void __launch_bounds__({threads}, {ctas_per_sm}) {name}(',
        f"    {', '.join(f'{ty} {p}' for ty, p in params)}) {{",
        *OP_PROLOGUE,
        "  const unsigned tile_col = blockIdx.x % tiles_n, tile_row = blockIdx.x / tiles_n;",
        f"  const unsigned row0 = tile_row * {rows}u, col0 = tile_col * {cols}u;",
        f"  const bool first_col = col0 == 0u, last_col = cols - col0 <= {cols}u;",
        f"  const bool first_row = row0 == 0u, last_row = rows - row0 <= {rows}u;",
        "  const float scale = scale_ptr != nullptr ? *scale_ptr : scale_value;",
        "  float amax = 0.0f;",
        *(["  unsigned amax2 = 0u;  // the largest |x| of each half, packed (sign bits junk)"] if wi == 2 else []),
        f"  if (!first_row && !last_row && !first_col && !last_col && cols <= {fits32}u) {{",
        "    // an interior tile: every chunk loaded lies in X, every chunk of C and T it owns is whole; offsets",
        "    // from the tile's corner (r0, c0) fit 32 bits (cols bounded above)",
        "    const size_t corner_at = (size_t)row0 * cols + col0;",
        "    const unsigned corner = (unsigned)corner_at;",
        f"    const {itype}* __restrict__ x_tile = src_all + corner_at;",
        "    unsigned char* __restrict__ c_tile = cast_all + corner_at;",
        *step12(True),
        "    ll_bar_cta();",
        *step3(True),
        "  } else {",
        f"    const unsigned col_end = cols - col0 < {cols}u ? cols : col0 + {cols}u;  // the tile's columns end",
        "    const size_t total = (size_t)rows * cols;",
        *step12(False),
        "    ll_bar_cta();",
        *step3(False),
        "  }",
        *([f"  amax = fmaxf({to_float(input_format, 'amax2 & 0x7fffu')}, {to_float(input_format, '(amax2 >> 16) & 0x7fffu')});"]
          if wi == 2 else []),
        *amax_epilogue(slot, warps, redux=True),
        "}",
    ]
    helpers = load_function(itype, wi, g) + OPAQUE_FUNCTIONS + WARP_MAX + cvt4_function(fp8) + (maxabs_function(input_format) if wi == 2 else [])
    source = OP_PRELUDE + CAST_FUNCTIONS + "\n".join(helpers + body) + "\n"
    return PermuteKernel(name, source, threads, shared, wi, rows, cols, g, g, True, 0, tuple(params))
