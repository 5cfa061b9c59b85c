"""The fp8 cast-transpose of rows that 16 bytes do not align: aligned 16-byte loads realigned in registers.

When a row length or a base address leaves the rows of ``X`` (``rows x cols``, 2- or 4-byte elements), of
``C = fp8(scale X)`` or of ``T = C^T`` at any offset, a CTA still reads ``X`` as the aligned 16-byte chunks
that cover its tile, each chunk once, and writes ``C`` and ``T`` as aligned chunks that fill whole 32-byte
sectors per warp instruction (a row's first and last chunk, where the row starts or ends inside it, in
naturally aligned pieces). A tile is ``R`` rows by ``N = 32 V`` columns, ``V = 16 / w`` elements of ``w``
bytes per lane (``N = 256`` for bf16 / fp16, 128 for fp32):

1. a warp takes rows ``r = warp + W i`` of the tile; lane ``l`` loads chunk ``l`` of the row (the chunk
   holding the row's first element is chunk 0) and lane 31 also chunk 32, every load of the warp issued
   before the first is used (``R / W`` rows of 16 or 32 bytes a lane in flight); a chunk across an end of
   ``X`` is read element by element, one past the row's end not at all;
2. the row's offset ``d = a mod 16`` is the same for the whole warp: lane ``l`` takes the next lane's chunk
   by 4 ``shfl``, the 5 words from word ``d / 4`` by a warp-uniform branch, and its ``V`` elements (bytes
   ``d + 16 l ...``) by one ``prmt`` a word (``d mod 4`` is 0 or 2);
3. amax, ``fp8(scale x)`` two elements per ``cvt``: ``V / 4`` words of ``C``'s row, realigned to the row's
   address mod 4 with the previous lane's last word (one ``shfl``, a ``prmt`` a word); a whole tile stores
   them as 8-byte chunks (2-byte inputs: the lane's two words or, at an address 4 mod 8, the previous lane's
   second and its first; fp32: one word a lane), an edge tile as words; the words also go to shared memory
   (``R x N`` bytes, 8-byte units XOR-swizzled by the row so that step 4's reads hit 32 banks);
4. after one barrier, a thread takes 4 columns ``4 cw ..`` by 16 rows ``16 u ..``: 16 shared reads, four
   4 x 4 byte transposes (8 ``prmt`` each), then for each of the 4 rows of ``T`` its 16 bytes realigned to
   the row's address mod 4 with the previous thread's last word (threads ``u`` of a column are adjacent
   lanes) and, in a whole tile, the 16-byte chunk at ``16 u`` past the row's aligned start: its words from
   this thread's and the previous one's (3 more ``shfl``, 9 selects on the row's address mod 16); an edge
   tile stores words;
5. a whole tile's rows' first and last chunks hold bytes of the next tile or row: steps 3 and 4 leave their
   words in shared memory and, after a barrier, one thread a row stores the row's bytes of them in
   naturally aligned 1-, 2-, 4- and 8-byte pieces; an edge tile stores its partial words byte by byte.

Bytes in flight (Little's law): an SM needs bandwidth x latency / SMs of loads in flight (4 TB/s x 1 µs / 132:
some 30 KB). A CTA issues all its ``R x 528`` bytes of chunks at once (33.8 KiB for 64 rows), and the launch
bounds let 2 to 7 CTAs share an SM (``thread_registers``).

The amax is over every element the warps convert: ``X``'s own (the tile's, and past a row's end the next
row's) or zeros; the reduction, the scale and the launch (``tiles_n * tiles_m`` CTAs, tile
``(t / tiles_n, t mod tiles_n)``) are those of ``permute.emit_cast_transpose_kernel`` in raster order ``"n"``, whose
parameters the kernel takes. Requires: ``X``'s address a multiple of ``w``.

Example: ``emit_realigned_cast_transpose_kernel("k", "bf16", "e4m3")``: 64 x 256 tiles of 8 warps, 8 rows
(8 chunks) a warp in flight, 19 KiB of shared memory, 2 CTAs an SM; a ``4095 x 11007`` matrix takes
``64 x 43`` CTAs.
"""

from __future__ import annotations

from linear_layouts.target import Target
from linear_layouts.codegen.intrinsics import OP_PRELUDE, OP_PROLOGUE
from linear_layouts.codegen.permute import (
    CAST_FUNCTIONS, CAST_INPUTS, PermuteKernel, amax_epilogue, cast_params, check_cast_arguments, fitting_ctas,
    to_float,
)
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote

__all__ = ["emit_realigned_cast_transpose_kernel", "realigned_shared_bytes", "tile_columns", "swizzle",
           "word_selector", "thread_registers", "MAX_ROWS_PER_WARP"]

#: Bytes of one aligned chunk (the widest global load).
_CHUNK = 16
#: Rows a warp holds in flight at most (each 16 bytes a lane, and lane 31 one chunk more).
MAX_ROWS_PER_WARP = 8


def tile_columns(input_bytes: int) -> int:
    """``N``: columns of a tile, one 16-byte chunk of elements per lane: 256 for 2-byte, 128 for 4-byte inputs."""
    return 32 * _CHUNK // input_bytes


def swizzle(row: int, rows: int) -> int:
    """The XOR (in 32-bit words) of row ``row``'s word positions in step 3's shared tile of ``rows`` rows:
    ``((row / 16) mod U) * 32 / U`` with ``U = rows / 16`` (lanes of one column in step 4): the 32 lanes of a
    step-4 read (``32 / U`` columns by ``U`` rows ``16 u + t``) then read 32 distinct banks.

    >>> [swizzle(r, 64) for r in (0, 15, 16, 40, 63)]
    [0, 0, 8, 16, 24]
    """
    u = max(1, rows // 16)
    return ((row // 16) % u) * (32 // u)


def word_selector(offset: int) -> int:
    """``prmt`` selector of the aligned word that starts ``offset`` (0-3) bytes before a stream word ``s[j]``:
    bytes ``4 - offset .. 7 - offset`` of ``(s[j - 1], s[j])``, i.e. ``0x7654 - 0x1111 offset``.

    >>> hex(word_selector(0)), hex(word_selector(3))
    ('0x7654', '0x4321')
    """
    return 0x7654 - 0x1111 * offset


def thread_registers(rows_per_warp: int) -> int:
    """Registers a thread is budgeted when the launch bounds' CTAs per SM are chosen: the chunks in flight (8
    words a row, lane 31's extra chunk included) and 40 for the rest, in steps of 8 (ptxas allocates in 8s;
    it may then use up to what the chosen CTAs leave): 104 for 8 rows.

    >>> thread_registers(8), thread_registers(4), thread_registers(1)
    (104, 72, 48)
    """
    return -(-(40 + 8 * rows_per_warp) // 8) * 8


def realigned_shared_bytes(rows: int, input_bytes: int) -> int:
    """Dynamic shared memory of the kernel of ``rows``-row tiles: the fp8 tile (``rows x N`` bytes), one float
    per warp for the amax (at most 32 warps) and, for each row of ``C`` and of ``T`` in a whole tile, the words
    of its first and its last chunk (16 bytes each)."""
    return rows * tile_columns(input_bytes) + 4 * 32 + 32 * (rows + tile_columns(input_bytes))


def _load_function(itype: str, wi: int) -> list[str]:
    """``ll_realign_chunk``: the aligned 16-byte chunk at byte address ``g`` of ``X`` (``[lo, hi)``), zeros
    where it is not ``needed``, element by element where it crosses an end of ``X``."""
    return [
        "LL_DEV uint4 ll_realign_chunk(const unsigned char* __restrict__ x, size_t g, bool needed, size_t lo, size_t hi) {",
        "  uint4 v; v.x = v.y = v.z = v.w = 0u;",
        "  if (!needed) return v;",
        "  if (g >= lo && g + 16u <= hi) return *reinterpret_cast<const uint4*>(x + (g - lo));",
        "  unsigned w[4] = {0u, 0u, 0u, 0u};",
        "  #pragma unroll",
        f"  for (unsigned b = 0u; b < 16u; b += {wi}u)",
        "    if (g + b >= lo && g + b < hi)",
        f"      w[b / 4u] |= (unsigned)*reinterpret_cast<const {itype}*>(x + (g + b - lo)) << (8u * (b & 3u));",
        "  v.x = w[0]; v.y = w[1]; v.z = w[2]; v.w = w[3];",
        "  return v;",
        "}",
        "// prmt with a selector known to have no sign-mode bits (__byte_perm would mask them off first)",
        "#ifdef LL_HOST",
        "LL_DEV unsigned ll_prmt(unsigned a, unsigned b, unsigned s) { return __byte_perm(a, b, s); }",
        "#else",
        'LL_DEV unsigned ll_prmt(unsigned a, unsigned b, unsigned s) { unsigned r; asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(s)); return r; }',
        "#endif",
        "// a row of L bytes at `row` stored in CH-byte chunks: its first chunk's bytes h .. CH - 1 and its last",
        "// (at row - h + L) bytes 0 .. h - 1 (h = row mod CH), in naturally aligned pieces; `slot` holds the stream",
        "// words of the first chunk (from the word at row - h mod 4) and, 16 bytes on, those ending with the last's",
        "template <unsigned CH> LL_DEV void ll_realign_edges(unsigned char* row, unsigned L, unsigned slot) {",
        "  const unsigned h = (unsigned)reinterpret_cast<size_t>(row) & (CH - 1u), back = h & ~3u;",
        "  if (h == 0u) return;",
        "  unsigned char* const p = row - h;",
        "  const unsigned f = slot - back;  // the first chunk's byte b at f + b",
        "  unsigned o = h;",
        "  if (o & 1u) { ll_stg8(p + o, ll_lds8(f + o)); o += 1u; }",
        "  if ((o & 2u) && o < CH) { ll_stg16(p + o, ll_lds16(f + o)); o += 2u; }",
        "  if ((o & 4u) && o < CH) { ll_stg32(p + o, ll_lds32(f + o)); o += 4u; }",
        "  if (CH == 16u && (o & 8u)) ll_stg64(p + o, ll_lds32(f + o), ll_lds32(f + o + 4u));",
        "  unsigned char* const t = p + L;",
        "  const unsigned g = slot + 16u + (CH - 4u) - back;  // the last chunk's byte b at g + b",
        "  if (CH == 16u && (h & 8u)) ll_stg64(t, ll_lds32(g), ll_lds32(g + 4u));",
        "  if (CH >= 8u && (h & 4u)) ll_stg32(t + (h & 8u), ll_lds32(g + (h & 8u)));",
        "  if (h & 2u) ll_stg16(t + (h & 12u), ll_lds16(g + (h & 12u)));",
        "  if (h & 1u) ll_stg8(t + (h & 14u), ll_lds8(g + (h & 14u)));",
        "}",
        "// the bytes of word w (at p, covering positions lo .. lo + 3 of a row of n bytes) that lie in the row",
        "LL_DEV void ll_realign_partial(unsigned char* p, unsigned w, int lo, int n) {",
        "  #pragma unroll",
        "  for (int b = 0; b < 4; ++b)",
        "    if (lo + b >= 0 && lo + b < n) ll_stg8(p + b, w >> (8 * b));",
        "}",
    ]


def _convert_lines(fmt: str, fp8: str, wi: int) -> list[str]:
    """Lines of step 3 from the realigned words ``e0 .. e3``: the amax and the fp8 words ``c0 ..``."""
    cvt = f"ll_cvt_{fp8}x2"
    if wi == 2:
        lines = []
        for k in range(4):
            lines.append(f"      const float f{2 * k} = {to_float(fmt, f'e{k}')}, "
                         f"f{2 * k + 1} = {to_float(fmt, f'e{k} >> 16')};")
        values = 8
    else:
        lines = [f"      const float f{k} = {to_float(fmt, f'e{k}')};" for k in range(4)]
        values = 4
    level = [f"fabsf(f{k})" for k in range(values)]
    while len(level) > 1:  # a tree: a short dependency chain
        level = [f"fmaxf({level[i]}, {level[i + 1]})" for i in range(0, len(level), 2)]
    lines.append(f"      amax = fmaxf(amax, {level[0]});")
    for w in range(values // 4):
        a, b, c, d = (4 * w + i for i in range(4))
        lines.append(f"      const unsigned c{w} = {cvt}(f{a} * scale, f{b} * scale) | "
                     f"({cvt}(f{c} * scale, f{d} * scale) << 16);")
    return lines


def emit_realigned_cast_transpose_kernel(name: str, input_format: str, fp8: str, rows: int = 64, warps: int = 8,
                                         target: Target | None = None, ctas_per_sm: int = 0,
                                         wide: bool = True) -> PermuteKernel:
    """CUDA C++ of the module doc's kernel: ``C = fp8(scale X)``, ``T = C^T`` and ``amax = max(amax, max |X|)``
    for ``X`` of ``input_format`` (``permute.CAST_INPUTS``) at any element-aligned address and row length,
    by ``rows x tile_columns(w)`` tiles of ``warps`` warps (powers of two: ``rows`` 16 to 256, 128 for 2-byte
    inputs, ``warps`` 1 to 32, at most ``MAX_ROWS_PER_WARP`` rows a warp); the launch bounds name the CTAs
    an SM of ``target`` (default: the default target) holds by threads and shared memory, at most
    ``ctas_per_sm`` (0: as many as that). ``wide``: a whole tile stores ``C`` in 8-byte chunks (2-byte inputs)
    and ``T`` in 16-byte chunks, each a warp instruction's full 32-byte sectors; else both as 32-bit words.

    Example: the defaults make 64 x 256 tiles of bf16, 256 threads, ``realigned_shared_bytes(64, 2)`` bytes."""
    check_cast_arguments(name, input_format, fp8)
    wi = CAST_INPUTS[input_format]
    most_rows = 128 if wi == 2 else 256
    for label, value, least, most in (("rows", rows, 16, most_rows), ("warps", warps, 1, 32)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least or value & (value - 1) or value > most:
            raise LayoutError(f"{label}: must be a power of two from {least} to {most}, got {quote(value)}")
    if rows < warps or rows > MAX_ROWS_PER_WARP * warps:
        raise LayoutError(f"rows: {rows} rows of {warps} warps must be 1 to {MAX_ROWS_PER_WARP} rows a warp")
    if isinstance(ctas_per_sm, bool) or not isinstance(ctas_per_sm, int) or not 0 <= ctas_per_sm <= 32:
        raise LayoutError(f"ctas_per_sm: must be 0 (as many as fit) to 32, got {quote(ctas_per_sm)}")
    itype = {2: "unsigned short", 4: "unsigned"}[wi]
    n = tile_columns(wi)
    v = _CHUNK // wi  # elements a lane converts per row
    k = v // 4  # fp8 words a lane holds per row
    threads = 32 * warps
    rw = rows // warps
    u_lanes = rows // 16  # lanes of one column in step 4
    items = (n // 4) * u_lanes  # (column word, 16-row group) items of step 4
    slot = rows * n
    slot_c = slot + 4 * 32  # a whole tile's rows' first and last chunks (stream words, 16 bytes each): C's, T's
    slot_t = slot_c + 32 * rows
    chunk_c = 4 * k if wide else 4  # C's stores: 8 bytes a lane (2-byte inputs), 4 (fp32 or not wide)
    chunk_t = 16 if wide else 4  # T's
    shared = realigned_shared_bytes(rows, wi)
    ctas_per_sm = fitting_ctas(threads, shared, thread_registers(rw), target, ctas_per_sm)
    params = cast_params(itype)
    sigma = f"((((r) >> 4) % {u_lanes}u) * {32 // u_lanes}u)" if u_lanes > 1 else "0u"
    stream = ["prev"] + [f"c{i}" for i in range(k)]

    def c_store(full: bool) -> list[str]:
        """Lines storing C's row ``r`` from ``c0 ..``: a whole tile's rows are whole (only lane 0's first word and
        the word after lane 31's may be partial: they go to shared memory for step 5); an edge tile's rows end
        anywhere (those words byte by byte here)."""
        lines = [
            "      // C's row: words realigned to its address mod 4 (the previous lane's last word first); a word",
            "      // the row covers whole is stored whole (lo + 4 <= end: lo < end - 3, negative lo wrapping past it)",
            "      const unsigned ce = (unsigned)reinterpret_cast<size_t>(crow) & 3u, csel = 0x7654u - 0x1111u * ce;",
            f"      const unsigned prev = __shfl_sync(0xffffffffu, c{k - 1}, (lane + 31u) & 31u);",
            # the word stores' offset and base (a whole tile's 8-byte chunks are stored from crow)
            *([f"      const int clo = (int)({4 * k}u * lane) - (int)ce;", "      unsigned char* const cp = crow + clo;"]
              if not full or chunk_c == 4 else []),
            f"      const unsigned cw[{k + 1}] = {{{', '.join(f'll_prmt({stream[i]}, {stream[i + 1]}, csel)' for i in range(k))}, "
            f"ll_prmt(c{k - 1}, 0u, csel)}};",
        ]
        if full:
            if chunk_c == 4:
                stores = ["      if (clo >= 0) ll_stg32<0u>(cp, cw[0]);  // lane 0's word starts before the row unless ce = 0",
                          *(f"      ll_stg32<{4 * m}u>(cp, cw[{m}]);" for m in range(1, k))]
            else:  # 8-byte chunks: the lane's, or the previous lane's second word and its first (uniform)
                stores = [
                    "      const unsigned e8 = (unsigned)reinterpret_cast<size_t>(crow) & 7u;",
                    "      const unsigned pw1 = __shfl_sync(0xffffffffu, cw[1], (lane + 31u) & 31u);",
                    "      const unsigned lo8 = (e8 & 4u) ? pw1 : cw[0], hi8 = (e8 & 4u) ? cw[0] : cw[1];",
                    "      if (lane > 0u || e8 == 0u) ll_stg64(crow - e8 + 8u * lane, lo8, hi8);",
                ]
            words = chunk_c // 4  # of a chunk
            first = ", ".join(f"cw[{m}]" for m in range(words))
            tail = ", ".join(f"cw[{m}]" for m in range(k + 1 - words, k + 1))
            return lines + stores + [
                f"      if (lane == 0u) ll_sts{chunk_c * 8}(smem + {slot_c}u + 32u * r, {first});  // step 5's: the first chunk",
                f"      if (lane == 31u) ll_sts{chunk_c * 8}(smem + {slot_c + 16}u + 32u * r, {tail});  // and the last",
            ]
        return lines + [
            "      const int cend = r < rows_left ? (int)cols_left : 0;",
            "      const unsigned cbound = cend >= 4 ? (unsigned)(cend - 3) : 0u;",
            f"      const bool {', '.join(f'whole{m} = (unsigned)(clo + {4 * m}) < cbound' for m in range(k))};",
            *(f"      if (whole{m}) ll_stg32<{4 * m}u>(cp, cw[{m}]);" for m in range(k)),
            f"      if (!({' && '.join(f'whole{m}' for m in range(k))}) || (lane == 31u && clo + {4 * k} < cend)) {{",
            "        #pragma unroll",
            f"        for (int m = 0; m < {k + 1}; ++m)  // a row's first or last word, byte by byte",
            f"          if (m < {k} ? (unsigned)(clo + 4 * m) >= cbound : lane == 31u)",
            "            ll_realign_partial(cp + 4 * m, cw[m], clo + 4 * m, cend);",
            "      }",
        ]

    cs_store = (f"      ll_sts64(smem + r * {n}u + 4u * (({k}u * lane) ^ {sigma}), c0, c1);" if k == 2 else
                f"      ll_sts32(smem + r * {n}u + 4u * (lane ^ {sigma}), c0);")
    taken = 5 if wi == 2 else 4  # the words the element conversion reads (one more to realign 2-byte ones)
    funnel = [f"      unsigned {', '.join(f't{j}' for j in range(taken))};  // words d / 4 .. d / 4 + {taken - 1} of "
              "(chunk l, chunk l + 1)",
              "      switch (d >> 2) {  // warp-uniform"]
    words = ["a[i].x", "a[i].y", "a[i].z", "a[i].w", "b.x", "b.y", "b.z", "b.w"]
    for q in range(4):
        picks = "; ".join(f"t{j} = {words[q + j]}" for j in range(taken))
        funnel.append(f"        {'default' if q == 3 else f'case {q}u'}: {picks}; break;")
    funnel.append("      }")
    if wi == 2:
        funnel += ["      const unsigned sel = 0x3210u + 0x1111u * (d & 2u);",
                   "      const unsigned e0 = ll_prmt(t0, t1, sel), e1 = ll_prmt(t1, t2, sel);",
                   "      const unsigned e2 = ll_prmt(t2, t3, sel), e3 = ll_prmt(t3, t4, sel);"]
    else:
        funnel += ["      const unsigned e0 = t0, e1 = t1, e2 = t2, e3 = t3;"]

    def row_loop(full: bool) -> list[str]:
        return [
            "  {",
            "  unsigned x_low = (unsigned)x_row;  // the row's address mod 2**32",
            "  unsigned char* crow = cast_all + ((size_t)(row0 + warp) * cols + col0);",
            "  #pragma unroll",
            f"  for (unsigned i = 0u; i < {rw}u; ++i) {{",
            f"    const unsigned r = warp + {warps}u * i;",
            "    {",
            "      const unsigned d = x_low & 15u;",
            "      const unsigned src = (lane + 1u) & 31u;",
            "      uint4 b;",
            "      b.x = __shfl_sync(0xffffffffu, a[i].x, src); b.y = __shfl_sync(0xffffffffu, a[i].y, src);",
            "      b.z = __shfl_sync(0xffffffffu, a[i].z, src); b.w = __shfl_sync(0xffffffffu, a[i].w, src);",
            "      if (lane == 31u) b = nx[i];",
            *funnel,
            *_convert_lines(input_format, fp8, wi),
            *c_store(full),
            cs_store,
            "    }",
            f"    x_low += {warps}u * cols * {wi}u;",
            f"    crow += (size_t){warps}u * cols;",
            "  }",
            "  }",
        ]

    def t_loop(full: bool) -> list[str]:
        """Step 4's loop: a whole tile's rows of T are whole (the first and last word go to step 5)."""
        if full and not wide:
            stores = [
                "      if (lo >= 0) ll_stg32<0u>(p, w[0]);  // thread 0's first word starts before the row unless te = 0",
                *(f"      ll_stg32<{4 * m}u>(p, w[{m}]);" for m in range(1, 4)),
                f"      if (u == 0u) ll_sts32(smem + {slot_t}u + 32u * (4u * cw + j), w[0]);  // step 5's",
                f"      if (u == {u_lanes - 1}u) ll_sts32(smem + {slot_t + 16}u + 32u * (4u * cw + j), w[4]);",
            ]
        elif full:
            stores = [
                "      // 16-byte chunks: words w[-3 ..] of the stream (the previous thread's), from h / 4 words back",
                "      const unsigned pw1 = __shfl_sync(0xffffffffu, w[1], left), pw2 = __shfl_sync(0xffffffffu, w[2], left);",
                "      const unsigned pw3 = __shfl_sync(0xffffffffu, w[3], left);",
                "      const unsigned h = (unsigned)reinterpret_cast<size_t>(trow) & 15u, sh = 3u - (h >> 2);",
                "      const unsigned e[7] = {pw1, pw2, pw3, w[0], w[1], w[2], w[3]};",
                "      unsigned f[5], o[4];",
                "      #pragma unroll",
                "      for (int i = 0; i < 5; ++i) f[i] = (sh & 2u) ? e[i + 2] : e[i];",
                "      #pragma unroll",
                "      for (int i = 0; i < 4; ++i) o[i] = (sh & 1u) ? f[i + 1] : f[i];",
                "      if (u > 0u || h == 0u) ll_stg128(trow - h + 16u * u, o[0], o[1], o[2], o[3]);",
                f"      if (u == 0u) ll_sts128(smem + {slot_t}u + 32u * (4u * cw + j), w[0], w[1], w[2], w[3]);  // step 5's",
                f"      if (u == {u_lanes - 1}u) ll_sts128(smem + {slot_t + 16}u + 32u * (4u * cw + j), w[1], w[2], w[3], w[4]);",
            ]
        else:
            stores = [
                "      const bool in = 4u * cw + j < cols_left;",
                "      const unsigned bound = in ? rbound : 0u;",
                f"      const bool {', '.join(f'whole{m} = (unsigned)(lo + {4 * m}) < bound' for m in range(4))};",
                *(f"      if (whole{m}) ll_stg32<{4 * m}u>(p, w[{m}]);" for m in range(4)),
                f"      if (in && (!(whole0 && whole1 && whole2 && whole3) || (u == {u_lanes - 1}u && lo + 16 < rend))) {{",
                "        #pragma unroll",
                "        for (int m = 0; m < 5; ++m)  // a row's first or last word, byte by byte",
                f"          if (m < 4 ? (unsigned)(lo + 4 * m) >= bound : u == {u_lanes - 1}u)",
                "            ll_realign_partial(p + 4 * m, w[m], lo + 4 * m, rend);",
                "      }",
            ]
        return [
            f"  for (unsigned item = threadIdx.x; item < {items}u; item += {threads}u) {{  // whole warps",
            f"    const unsigned u = item % {u_lanes}u, cw = item / {u_lanes}u;",
            f"    const unsigned tbase = smem + 16u * u * {n}u + 4u * (cw ^ (u * {32 // u_lanes}u));  // swizzle(16 u)",
            "    unsigned tw[4][4];  // [4-row block][column j]: rows 16 u + 4 block .. + 3 of column 4 cw + j",
            "    #pragma unroll",
            "    for (unsigned b4 = 0u; b4 < 4u; ++b4) {",
            "      unsigned c[4];",
            "      #pragma unroll",
            f"      for (unsigned s = 0u; s < 4u; ++s) c[s] = ll_lds32(tbase + (4u * b4 + s) * {n}u);",
            "      const unsigned lo01 = __byte_perm(c[0], c[1], 0x5140u), hi01 = __byte_perm(c[0], c[1], 0x7362u);",
            "      const unsigned lo23 = __byte_perm(c[2], c[3], 0x5140u), hi23 = __byte_perm(c[2], c[3], 0x7362u);",
            "      tw[b4][0] = __byte_perm(lo01, lo23, 0x5410u); tw[b4][1] = __byte_perm(lo01, lo23, 0x7632u);",
            "      tw[b4][2] = __byte_perm(hi01, hi23, 0x5410u); tw[b4][3] = __byte_perm(hi01, hi23, 0x7632u);",
            "    }",
            "    unsigned char* trow = trans_all + ((size_t)(col0 + 4u * cw) * rows + row0);  // T's row 4 cw",
            "    #pragma unroll",
            "    for (unsigned j = 0u; j < 4u; ++j) {",
            "      const unsigned prev = __shfl_sync(0xffffffffu, tw[3][j], left);",
            "      const unsigned te = (unsigned)reinterpret_cast<size_t>(trow) & 3u, tsel = 0x7654u - 0x1111u * te;",
            "      const unsigned w[5] = {ll_prmt(prev, tw[0][j], tsel), ll_prmt(tw[0][j], tw[1][j], tsel),",
            "                             ll_prmt(tw[1][j], tw[2][j], tsel), ll_prmt(tw[2][j], tw[3][j], tsel),",
            "                             ll_prmt(tw[3][j], 0u, tsel)};",
            # the word stores' offset and base (a whole tile's 16-byte chunks are stored from trow)
            *(["      const int lo = (int)(16u * u) - (int)te;", "      unsigned char* const p = trow + lo;"]
              if not (full and wide) else []),
            *stores,
            "      trow += rows;",
            "    }",
            "  }",
        ]

    body = [
        f"// {name}: C = fp8 {fp8}(scale X), T = C^T, amax = max(amax, max |X|); X rows x cols {input_format} at any",
        f"//   element-aligned address and row length, by {rows}x{n} tiles; X read as aligned 16-byte chunks, C and T",
        "//   written as aligned words (a row's first and last in 8- and 16-bit pieces). launch: a 1-D grid of",
        f"//   tiles_n * tiles_m CTAs, block = {threads}, dynamic shared = {shared} bytes ({ctas_per_sm} CTAs per SM).",
        f'extern "C" __global__ void __launch_bounds__({threads}, {ctas_per_sm}) {name}(',
        f"    {', '.join(f'{ty} {p}' for ty, p in params)}) {{",
        *OP_PROLOGUE,
        "  const unsigned tile_col = blockIdx.x % tiles_n, tile_row = blockIdx.x / tiles_n;",
        f"  const unsigned row0 = tile_row * {rows}u, col0 = tile_col * {n}u;",
        f"  const unsigned rows_left = rows - row0 < {rows}u ? rows - row0 : {rows}u;",
        f"  const unsigned cols_left = cols - col0 < {n}u ? cols - col0 : {n}u;",
        "  const float scale = scale_ptr != nullptr ? *scale_ptr : scale_value;",
        "  const unsigned char* __restrict__ x_bytes = reinterpret_cast<const unsigned char*>(src_all);",
        "  const size_t x_begin = reinterpret_cast<size_t>(src_all);",
        f"  const size_t x_end = x_begin + (size_t)rows * cols * {wi}u;",
        f"  const size_t x_step = (size_t){warps}u * cols * {wi}u;  // bytes from a warp's row to its next",
        f"  const size_t x_row = x_begin + ((size_t)(row0 + warp) * cols + col0) * {wi}u;  // the warp's first row",
        "  float amax = 0.0f;",
        f"  const bool full = rows_left == {rows}u && cols_left == {n}u;  // a whole tile",
        f"  // 1. every chunk of the warp's {rw} rows in flight: chunk l of row r by lane l, chunk 32 by lane 31",
        f"  uint4 a[{rw}], nx[{rw}];",
        f"  const size_t first = (x_begin + ((size_t)row0 * cols + col0) * {wi}u) & ~(size_t)15;",
        f"  const size_t last = (x_begin + ((size_t)(row0 + {rows - 1}u) * cols + col0) * {wi}u) & ~(size_t)15;",
        f"  if (full && first >= x_begin && last + {33 * _CHUNK}u <= x_end) {{",
        "    // a whole tile inside X: every chunk of a row, and chunk 32 where the row is not 16-byte aligned",
        "    const unsigned char* g = x_bytes + ((x_row & ~(size_t)15) - x_begin) + 16u * lane;",
        "    size_t ra = x_row;",
        "    #pragma unroll",
        f"    for (unsigned i = 0u; i < {rw}u; ++i) {{",
        "      a[i] = *reinterpret_cast<const uint4*>(g);",
        "      nx[i].x = nx[i].y = nx[i].z = nx[i].w = 0u;",
        "      if (lane == 31u && (ra & 15u)) nx[i] = *reinterpret_cast<const uint4*>(g + 16u);",
        "      const size_t next = ra + x_step;",
        "      g += (next & ~(size_t)15) - (ra & ~(size_t)15);",
        "      ra = next;",
        "    }",
        "  } else {  // an edge tile: only the chunks a row needs, and those across an end of X element by element",
        f"    const unsigned need_bytes = cols_left * {wi}u;  // of a row's segment",
        "    size_t ra = x_row;",
        "    #pragma unroll",
        f"    for (unsigned i = 0u; i < {rw}u; ++i) {{",
        "      const size_t base = ra & ~(size_t)15;",
        f"      const unsigned need = warp + {warps}u * i < rows_left ? ((unsigned)ra & 15u) + need_bytes : 0u;",
        "      a[i] = ll_realign_chunk(x_bytes, base + 16u * lane, 16u * lane < need, x_begin, x_end);",
        "      nx[i] = ll_realign_chunk(x_bytes, base + 512u, lane == 31u && 512u < need, x_begin, x_end);",
        "      ra += x_step;",
        "    }",
        "  }",
        "  // 2-3. per row: realign, convert, store C's row, keep it in shared memory for T (rows past the matrix",
        "  //   are zeros, stored nowhere)",
        "  if (full) {",
        *row_loop(True),
        "  } else {",
        *row_loop(False),
        "  }",
        "  ll_bar_cta();",
        "  // 4. T: a thread takes 4 columns (word cw) by 16 rows (group u, lanes of a column adjacent)",
        f"  const unsigned left = (lane & ~{u_lanes - 1}u) | ((lane - 1u) & {u_lanes - 1}u);  // thread u - 1",
        "  const int rend = (int)rows_left;",
        "  const unsigned rbound = rend >= 4 ? (unsigned)(rend - 3) : 0u;",
        "  if (full) {",
        *t_loop(True),
        "  } else {",
        *t_loop(False),
        "  }",
        "  if (full) {  // 5. a whole tile's rows' first and last chunks (where a row's address is not aligned)",
        "    ll_bar_cta();",
        f"    for (unsigned q = threadIdx.x; q < {rows}u; q += {threads}u)  // C's rows",
        f"      ll_realign_edges<{chunk_c}u>(cast_all + ((size_t)(row0 + q) * cols + col0), {n}u, smem + {slot_c}u + 32u * q);",
        f"    for (unsigned q = threadIdx.x; q < {n}u; q += {threads}u)  // T's rows",
        f"      ll_realign_edges<{chunk_t}u>(trans_all + ((size_t)(col0 + q) * rows + row0), {rows}u, smem + {slot_t}u + 32u * q);",
        "  }",
        *amax_epilogue(slot, warps),
        "}",
    ]
    source = OP_PRELUDE + CAST_FUNCTIONS + "\n".join(_load_function(itype, wi) + body) + "\n"
    return PermuteKernel(name, source, threads, shared, wi, rows, n, 1, 1, True, 0, tuple(params))
