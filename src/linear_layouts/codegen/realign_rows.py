"""A move of rows whose length or addresses 16 bytes do not align: output-driven 16-byte chunks, realigned in registers.

A rows problem (``ops.plan.PermuteKind.ROWS``) moves rows of ``L`` bytes: row ``q`` of the output, ``q = (b_0, ...,
b_{K-1}, r)`` in mixed radix (``r < rows`` fastest, then the batch dims innermost first), is the input's row at byte
offset ``s(q) = r lda + sum_k b_k S_k``. Where ``L`` or a row start is not a multiple of 16, the tiled kernel's
vectors narrow to what every row allows (single bytes for odd ``L``). This kernel instead owns the output's aligned
16-byte chunks: the output is dense (row ``q`` at ``q L``), so chunk ``c``, bytes ``[16 c - m, 16 c - m + 16)`` past
``dst`` (``m = dst mod 16``), holds the end of one row ``q = o / L`` and, where that row ends inside it, the start of
row ``q + 1`` (``L >= 16``: never more). For each of the two, a thread loads the aligned 16-byte chunks of the
input that hold the bytes it needs (at most two; those across an end of the input's extent byte by byte), shifts
them into place (5 of the 8 words by 11 selects, one ``prmt`` a word), merges the two rows' bytes by a
mask a word, and stores the chunk whole (the first and last chunks of the output: byte by byte). Every output
byte is written once; every input byte read is one the output needs or shares an aligned 16-byte chunk with one.

Chunk ``i`` of CTA ``b``'s thread ``t`` is ``b U T + u T + t`` (``u < U``): a warp stores 32 adjacent chunks, each
thread's loads for its ``U`` chunks issued before its first store. The span kernel (``emit_realigned_span_kernel``,
rows of ``16 V`` bytes or more) gives a thread ``V`` adjacent chunks instead, one row's offset and shift for them all.
The divisions by ``L``, ``rows`` and the batch sizes are by ``permute.fast_divider`` parameters; offsets within the
output below ``2**31`` (``MAX_BYTES``).

Example: ``emit_realigned_rows_kernel("k", 1)``: ``k(src, dst, nbytes, row_bytes, rows, lda, size0, src_stride0,
src_end, row_bytes_div, rows_div)``; ``[231, 312, 361]`` bytes permuted by ``(1, 0, 2)`` (rows of 361 bytes, ``lda``
112632, one batch dim of 312 at stride 361; 26,017,992 bytes) is 1,626,125 chunks of a 16-byte aligned output, on
12,705 CTAs of 128 threads and a chunk each.
"""

from __future__ import annotations

from linear_layouts.codegen.intrinsics import DEPENDENT_LAUNCH_PROLOGUE, OP_PRELUDE
from linear_layouts.codegen.global_memory import fast_quotient
from linear_layouts.codegen.permute import PermuteKernel
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote

__all__ = ["emit_realigned_rows_kernel", "emit_realigned_span_kernel", "realigned_rows_arguments", "MAX_BYTES",
           "MIN_ROW_BYTES", "MAX_BATCH_DIMS", "CHUNK_BYTES"]

#: Bytes of an output chunk (the widest global access).
CHUNK_BYTES = 16
#: Output bytes a launch takes at most (its offsets and quotients are 32-bit).
MAX_BYTES = 2**31 - 2 * CHUNK_BYTES
#: The shortest row the kernel takes: a chunk then holds bytes of two rows at most.
MIN_ROW_BYTES = CHUNK_BYTES
#: Batch dims a kernel takes at most.
MAX_BATCH_DIMS = 3

_HELPERS = r"""
#ifndef LL_RR_LOADS
#define LL_RR_LOADS
// The kernel's global reads (a test defines checked ones first): an aligned 16-byte chunk, a byte.
LL_DEV uint4 ll_rr_load16(unsigned long long x) { return *reinterpret_cast<const uint4*>((size_t)x); }
LL_DEV unsigned ll_rr_load8(unsigned long long x) { return *reinterpret_cast<const unsigned char*>((size_t)x); }
#endif
#ifndef LL_REALIGN_ROWS
#define LL_REALIGN_ROWS
// The aligned 16-byte chunk at address x (bytes outside [lo, hi) read as 0, one by one where x crosses lo or hi).
LL_DEV uint4 ll_rr_chunk(unsigned long long x, unsigned long long lo, unsigned long long hi) {
  if (x >= lo && x + 16ull <= hi) return ll_rr_load16(x);
  unsigned w0 = 0u, w1 = 0u, w2 = 0u, w3 = 0u;
#pragma unroll
  for (unsigned i = 0; i < 16u; ++i) {
    const unsigned b = x + i >= lo && x + i < hi ? ll_rr_load8(x + i) : 0u;
    const unsigned v = b << (8u * (i & 3u));
    if (i < 4u) w0 |= v; else if (i < 8u) w1 |= v; else if (i < 12u) w2 |= v; else w3 |= v;
  }
  return uint4{w0, w1, w2, w3};
}
// Bytes [first, end) of the chunk v (byte i at d + i), one by one.
LL_DEV void ll_rr_store_bytes(unsigned char* d, uint4 v, int first, int end) {
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    const unsigned w = i < 4 ? v.x : i < 8 ? v.y : i < 12 ? v.z : v.w;
    if (i >= first && i < end) d[i] = (unsigned char)(w >> (8 * (i & 3)));
  }
}
// Bytes [p, p + 16) from the chunks at p & ~15 and the next: words (p & 15) / 4 ... by two rounds of selects (by 2
// words, then by 1), bytes by one prmt a word.
LL_DEV uint4 ll_rr_shift(uint4 a, uint4 b, unsigned p) {
  const bool two = (p & 8u) != 0u, one = (p & 4u) != 0u;
  const unsigned sel = 0x3210u + 0x1111u * (p & 3u);
  const unsigned u0 = two ? a.z : a.x, u1 = two ? a.w : a.y, u2 = two ? b.x : a.z, u3 = two ? b.y : a.w;
  const unsigned u4 = two ? b.z : b.x, u5 = two ? b.w : b.y;
  const unsigned w0 = one ? u1 : u0, w1 = one ? u2 : u1, w2 = one ? u3 : u2, w3 = one ? u4 : u3, w4 = one ? u5 : u4;
  return uint4{__byte_perm(w0, w1, sel), __byte_perm(w1, w2, sel), __byte_perm(w2, w3, sel), __byte_perm(w3, w4, sel)};
}
// Bytes i < n of x, the others of y.
LL_DEV unsigned ll_rr_merge_word(unsigned x, unsigned y, int n) {
  const unsigned low = n <= 0 ? 0u : n >= 4 ? 0xffffffffu : (1u << (8 * n)) - 1u;
  return (x & low) | (y & ~low);
}
LL_DEV uint4 ll_rr_merge(uint4 x, uint4 y, int n) {
  return uint4{ll_rr_merge_word(x.x, y.x, n), ll_rr_merge_word(x.y, y.y, n - 4), ll_rr_merge_word(x.z, y.z, n - 8),
               ll_rr_merge_word(x.w, y.w, n - 12)};
}
#endif
"""


def _source_offset(q: str, out: str, batch_dims: int) -> list[str]:
    """Lines setting ``out`` to the input byte offset of output row ``q`` (module doc: ``s(q)``)."""
    lines = [f"    unsigned long long {out};",
             "    {",
             f"      unsigned t = {q};",
             f"      unsigned n = {fast_quotient('t', 'rows_div')};",
             f"      {out} = (unsigned long long)(t - n * rows) * lda;"]
    for k in reversed(range(batch_dims)):
        if k:
            lines += ["      t = n;", f"      n = {fast_quotient('t', f'size{k}_div')};",
                      f"      {out} += (unsigned long long)(t - n * size{k}) * src_stride{k};"]
        else:
            lines.append(f"      {out} += (unsigned long long)n * src_stride0;")
    return lines + ["    }"]


def _chunk_addresses(k: int, threads: int, batch_dims: int) -> list[str]:
    """Phase 1 of the thread's chunk ``k``: the chunk's first byte ``o{k}`` from ``dst`` and its valid end ``e{k}``
    (``e{k} <= 0``: no chunk), the bytes ``n{k}`` it takes from row ``q``, the address ``a{k}`` of its byte 0 in
    that row and, where row ``q + 1`` starts inside it (``two{k}``), ``b{k}`` in that one; the aligned 16-byte
    input chunks each needs (``want{k}``: bits 0-1 for ``a{k}``'s two, 2-3 for ``b{k}``'s)."""
    lines = [f"  const int o{k} = (int)((first + {k * threads}u) << 4) - head;  // the chunk's first byte from dst",
             f"  int e{k} = 0, n{k} = 16;",
             f"  unsigned long long a{k} = lo, b{k} = lo;",
             f"  unsigned want{k} = 0u;",
             f"  bool two{k} = false;",
             f"  if (first + {k * threads}u < chunks) {{",
             f"    const int o = o{k};",
             "    const unsigned begin = o < 0 ? 0u : (unsigned)o;",
             "    const unsigned end = (unsigned)(o + 16) < nbytes ? (unsigned)(o + 16) : nbytes;",
             f"    const unsigned q = {fast_quotient('begin', 'row_bytes_div')};",
             "    const unsigned row_end = (q + 1u) * row_bytes;  // where row q ends",
             *_source_offset("q", "s", batch_dims),
             "    // byte i of the chunk: input byte a + i while o + i < row_end",
             "    const unsigned long long a = lo + s - (unsigned long long)q * row_bytes + (unsigned long long)(long long)o;",
             "    const unsigned long long need = a + (begin - o), need_end = a + ((row_end < end ? row_end : end) - o);",
             f"    a{k} = a; e{k} = (int)(end - o); n{k} = (int)(row_end - o);",
             f"    want{k} = ((a & ~15ull) + 16ull > need ? 1u : 0u) | ((a & ~15ull) + 16ull < need_end ? 2u : 0u);",
             f"    if (row_end < end) {{  // row q + 1 starts inside the chunk, at byte row_end - o",
             *["  " + line for line in _source_offset("q + 1u", "s1", batch_dims)],
             "      const unsigned long long b = lo + s1 - (unsigned long long)(row_end - o);",
             f"      b{k} = b; two{k} = true;",
             f"      want{k} |= ((b & ~15ull) + 16ull > lo + s1 ? 4u : 0u) | ((b & ~15ull) + 16ull < b + (end - o) ? 8u : 0u);",
             "    }",
             "  }"]
    return lines


def _chunk_loads(k: int) -> list[str]:
    """Phase 2: the input chunks chunk ``k`` wants that lie inside ``[lo, hi)``, as 16-byte loads (``v{k}_0..3``)."""
    lines = []
    for j, (base, extra) in enumerate((("a", "0ull"), ("a", "16ull"), ("b", "0ull"), ("b", "16ull"))):
        lines += [f"  const unsigned long long x{k}_{j} = ({base}{k} & ~15ull) + {extra};",
                  f"  uint4 v{k}_{j} = uint4{{0u, 0u, 0u, 0u}};",
                  f"  if ((want{k} >> {j}u & 1u) && x{k}_{j} >= lo && x{k}_{j} + 16ull <= hi) "
                  f"v{k}_{j} = ll_rr_load16(x{k}_{j});"]
    return lines


def _chunk_store(k: int) -> list[str]:
    """Phases 3 and 4 of chunk ``k``: a wanted input chunk across an end of ``[lo, hi)`` read byte by byte, the
    bytes shifted into place and merged, the chunk stored whole where it is, else its bytes in the output."""
    lines = [f"  if (e{k} > 0) {{"]
    for j in range(4):
        lines.append(f"    if ((want{k} >> {j}u & 1u) && !(x{k}_{j} >= lo && x{k}_{j} + 16ull <= hi)) "
                     f"v{k}_{j} = ll_rr_chunk(x{k}_{j}, lo, hi);")
    lines += [f"    uint4 v = ll_rr_shift(v{k}_0, v{k}_1, (unsigned)(a{k} & 15ull));",
              f"    if (two{k}) v = ll_rr_merge(v, ll_rr_shift(v{k}_2, v{k}_3, (unsigned)(b{k} & 15ull)), n{k});",
              f"    if (o{k} >= 0 && e{k} == 16) ll_stg128(dst + o{k}, v.x, v.y, v.z, v.w);",
              f"    else ll_rr_store_bytes(dst + o{k}, v, o{k} < 0 ? -o{k} : 0, e{k});  // the output's first or last chunk",
              "  }"]
    return lines


def emit_realigned_rows_kernel(name: str, batch_dims: int, chunks_per_thread: int = 1, warps: int = 4) -> PermuteKernel:
    """CUDA C++ of the module doc's kernel ``name`` for ``batch_dims`` (0 to ``MAX_BATCH_DIMS``) batch dims,
    ``chunks_per_thread`` ``U`` (1 to 8) and ``warps`` (1 to 32) a CTA; its ``tile_cols`` are the output bytes a CTA
    owns (``tiles(1, nbytes + 15)`` CTAs cover any alignment; ``realigned_rows_arguments`` gives the arguments).
    Requires: rows of at least ``MIN_ROW_BYTES``, a dense output of at most ``MAX_BYTES``.

    Example: ``emit_realigned_rows_kernel("k", 1).tiles(1, 16 + 15)`` is 1."""
    for label, value, least, most in (("batch_dims", batch_dims, 0, MAX_BATCH_DIMS),
                                      ("chunks_per_thread", chunks_per_thread, 1, 8), ("warps", warps, 1, 32)):
        if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most:
            raise LayoutError(f"{label}: must be an int from {least} to {most}, got {quote(value)}")
    u, threads = chunks_per_thread, 32 * warps
    batch_params = []
    for k in range(batch_dims):
        batch_params += [("unsigned", f"size{k}"), ("unsigned long long", f"src_stride{k}")]
    params = (("const unsigned char*", "src"), ("unsigned char*", "dst"), ("unsigned", "nbytes"),
              ("unsigned", "row_bytes"), ("unsigned", "rows"), ("unsigned long long", "lda"), *batch_params,
              ("unsigned long long", "src_end"), ("unsigned long long", "row_bytes_div"),
              ("unsigned long long", "rows_div"),
              *(("unsigned long long", f"size{k}_div") for k in range(1, batch_dims)))
    signature = ", ".join(f"{t} {n}" for t, n in params)
    lines = [
        OP_PRELUDE + _HELPERS,
        f"// {name}: rows of row_bytes bytes (>= {MIN_ROW_BYTES}) moved to a dense output, {batch_dims} batch dims, "
        f"{u} output chunks of 16 bytes a thread;",
        f"//   launch: a 1-D grid of ceil((nbytes + dst mod 16) / {16 * u * threads}) CTAs, block = {threads}.",
        f'extern "C" __global__ void __launch_bounds__({threads}) {name}({signature}) {{',
        *DEPENDENT_LAUNCH_PROLOGUE,
        "  const unsigned long long lo = (unsigned long long)(size_t)src, hi = lo + src_end;",
        "  const unsigned long long out = (unsigned long long)(size_t)dst;",
        "  const int head = (int)(out & 15ull);",
        "  const unsigned chunks = (unsigned)((nbytes + (unsigned)head + 15u) >> 4);",
        f"  const unsigned first = blockIdx.x * {u * threads}u + threadIdx.x;",
        *[line for k in range(u) for line in _chunk_addresses(k, threads, batch_dims)],
        *[line for k in range(u) for line in _chunk_loads(k)],  # every load of the thread's chunks before any store
        *[line for k in range(u) for line in _chunk_store(k)],
        "}",
        "",
    ]
    return PermuteKernel(name, "\n".join(lines), threads, 0, 1, 1, 16 * u * threads, 16, 16, False, batch_dims,
                         params)


def _span_window(tag: str, base: str, need_lo: str, need_hi: str, chunks: int) -> list[str]:
    """Lines loading the ``chunks + 1`` aligned input chunks from ``{base} & ~15`` that hold span bytes
    ``[need_lo, need_hi)`` (byte ``i`` of the span at ``{base} + i``) into words ``{tag}0 ...``: inside ``[lo, hi)``
    by 16-byte loads, a chunk across an end byte by byte; a chunk holding no needed byte reads as zeros."""
    words = 4 * (chunks + 1)
    lines = [f"  const unsigned long long {tag}x = {base} & ~15ull;",
             f"  const unsigned {tag}lo = {need_lo} + (unsigned)({base} & 15ull), "
             f"{tag}hi = {need_hi} + (unsigned)({base} & 15ull);  // needed bytes from {tag}x",
             f"  const bool {tag}in = {tag}x >= lo && {tag}x + {16 * (chunks + 1)}ull <= hi;",
             "  unsigned " + ", ".join(f"{tag}{i} = 0u" for i in range(words)) + ";"]
    for j in range(chunks + 1):
        lines += [f"  if ({16 * j}u < {tag}hi && {16 * j + 16}u > {tag}lo) {{",
                  f"    const uint4 v = {tag}in ? ll_rr_load16({tag}x + {16 * j}ull) : "
                  f"ll_rr_chunk({tag}x + {16 * j}ull, lo, hi);",
                  f"    {tag}{4 * j} = v.x; {tag}{4 * j + 1} = v.y; {tag}{4 * j + 2} = v.z; {tag}{4 * j + 3} = v.w;",
                  "  }"]
    return lines


def _span_shift(tag: str, out: str, base: str, chunks: int) -> list[str]:
    """Lines setting ``{out}0 .. {out}{4 chunks - 1}`` to bytes ``[p, p + 16 chunks)`` of the words ``{tag}*``
    (``p = {base} mod 16``): two rounds of selects (by 2 words, then by 1), one ``prmt`` a word."""
    n = 4 * chunks
    lines = [f"  const unsigned {tag}p = (unsigned)({base} & 15ull), {tag}sel = 0x3210u + 0x1111u * ({tag}p & 3u);",
             f"  const bool {tag}two = ({tag}p & 8u) != 0u, {tag}one = ({tag}p & 4u) != 0u;"]
    lines.append("  const unsigned " + ", ".join(f"{tag}t{k} = {tag}two ? {tag}{k + 2} : {tag}{k}"
                                                 for k in range(n + 2)) + ";")
    lines.append("  const unsigned " + ", ".join(f"{tag}u{k} = {tag}one ? {tag}t{k + 1} : {tag}t{k}"
                                                 for k in range(n + 1)) + ";")
    lines.append(f"  unsigned " + ", ".join(f"{out}{i} = __byte_perm({tag}u{i}, {tag}u{i + 1}, {tag}sel)"
                                            for i in range(n)) + ";")
    return lines


def emit_realigned_span_kernel(name: str, batch_dims: int, span_chunks: int = 4, warps: int = 4) -> PermuteKernel:
    """The module doc's kernel for rows of at least ``16 span_chunks`` bytes, a thread owning ``span_chunks`` (2 to
    8) adjacent output chunks (a span): the span holds bytes of two rows at most, so a thread computes one row's
    offset and shift for them all (and the next row's, where it starts inside the span), loads the ``span_chunks +
    1`` aligned input chunks under each, shifts and merges the two, and stores the chunks whole (the output's first
    and last: byte by byte). Same parameters and arguments as ``emit_realigned_rows_kernel``; ``tile_cols``: the
    output bytes a CTA owns. Requires: ``row_bytes >= 16 span_chunks``.

    Example: ``emit_realigned_span_kernel("k", 1).tiles(1, 2**20 + 32)`` is 129 (8 KiB a CTA of 4 warps)."""
    for label, value, least, most in (("batch_dims", batch_dims, 0, MAX_BATCH_DIMS),
                                      ("span_chunks", span_chunks, 2, 8), ("warps", warps, 1, 32)):
        if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most:
            raise LayoutError(f"{label}: must be an int from {least} to {most}, got {quote(value)}")
    v, threads = span_chunks, 32 * warps
    base = emit_realigned_rows_kernel(name, batch_dims, 1, warps)
    signature = ", ".join(f"{t} {n}" for t, n in base.params)
    n = 4 * v
    lines = [
        OP_PRELUDE + _HELPERS,
        f"// {name}: rows of row_bytes bytes (>= {16 * v}) moved to a dense output, {batch_dims} batch dims, a span of "
        f"{v} output chunks of 16 bytes a thread;",
        f"//   launch: a 1-D grid of ceil((nbytes + dst mod 16) / {16 * v * threads}) CTAs, block = {threads}.",
        f'extern "C" __global__ void __launch_bounds__({threads}) {name}({signature}) {{',
        *DEPENDENT_LAUNCH_PROLOGUE,
        "  const unsigned long long lo = (unsigned long long)(size_t)src, hi = lo + src_end;",
        "  const int head = (int)((unsigned long long)(size_t)dst & 15ull);",
        f"  const long long o = (long long)(blockIdx.x * {threads}u + threadIdx.x) * {16 * v}ll - head;  "
        "// the span's first byte from dst",
        f"  const unsigned begin = o < 0 ? 0u : (unsigned)o, end = o + {16 * v}ll < (long long)nbytes ? "
        f"(unsigned)(o + {16 * v}) : nbytes;",
        "  if (o >= (long long)nbytes) return;",
        f"  const unsigned q = {fast_quotient('begin', 'row_bytes_div')};",
        "  const unsigned row_end = (q + 1u) * row_bytes;",
        "  const unsigned t = (row_end < end ? row_end : end) - (unsigned)o;  // span bytes [.., t) from row q",
        "  const unsigned u = end - (unsigned)o;  // the span's valid end",
        *[line[2:] for line in _source_offset("q", "s", batch_dims)],
        "  const unsigned long long a = lo + s - (unsigned long long)q * row_bytes + (unsigned long long)o;",
        "  const bool two = row_end < end;  // row q + 1 starts at span byte t",
        "  unsigned long long b = lo;",
        "  if (two) {",
        *_source_offset("q + 1u", "s1", batch_dims),
        "    b = lo + s1 - t;",
        "  }",
        *_span_window("x", "a", "(begin - (unsigned)o)", "t", v),
        *_span_window("y", "b", "t", "(two ? u : t)", v),
        *_span_shift("x", "r", "a", v),
        *_span_shift("y", "w", "b", v),
    ]
    for i in range(n):  # bytes of word i below t come from row q
        lines.append(f"  {{ const int k = (int)t - {4 * i}; const unsigned m = k <= 0 ? 0u : k >= 4 ? 0xffffffffu : "
                     f"(1u << (8 * k)) - 1u; r{i} = (r{i} & m) | (w{i} & ~m); }}")
    lines.append(f"  if (o >= 0 && u == {16 * v}u) {{  // a whole span: its chunks stored whole")
    lines += [f"    ll_stg128(dst + o + {16 * j}, r{4 * j}, r{4 * j + 1}, r{4 * j + 2}, r{4 * j + 3});"
              for j in range(v)]
    lines.append("  } else {  // the output's first or last span: its chunks' bytes in the output")
    for j in range(v):
        lines.append(f"    ll_rr_store_bytes(dst + o + {16 * j}, uint4{{r{4 * j}, r{4 * j + 1}, r{4 * j + 2}, "
                     f"r{4 * j + 3}}}, o + {16 * j} < 0 ? (int)(-o - {16 * j}) : 0, (int)u - {16 * j});")
    lines += ["  }", "}", ""]
    return PermuteKernel(name, "\n".join(lines), threads, 0, 1, 1, 16 * v * threads, 16, 16, False, batch_dims,
                         base.params)


def realigned_rows_arguments(kernel: PermuteKernel, nbytes: int, row_bytes: int, rows: int, lda: int,
                             batch: tuple[tuple[int, int], ...], src_end: int) -> tuple[int, ...]:
    """The arguments after ``src`` and ``dst`` of ``kernel`` (``emit_realigned_rows_kernel``) for ``nbytes`` output
    bytes of rows of ``row_bytes``, ``rows`` a matrix at input stride ``lda`` bytes, ``batch`` ``(size, input stride
    in bytes)`` outer first, the input's extent ``src_end`` bytes. LayoutError where the kernel does not take them."""
    from linear_layouts.codegen.permute import fast_divider

    if len(batch) != kernel.batch_dims:
        raise LayoutError(f"batch: the kernel takes {kernel.batch_dims} batch dims, got {len(batch)}")
    if not MIN_ROW_BYTES <= row_bytes < 2**31 or not 0 < nbytes <= MAX_BYTES or rows < 1:
        raise LayoutError(f"row_bytes / nbytes: rows of {MIN_ROW_BYTES} bytes or more, at most {MAX_BYTES} bytes in "
                          f"all, got rows of {row_bytes} and {nbytes} bytes")
    if nbytes != row_bytes * rows * _product(size for size, _ in batch):
        raise LayoutError(f"nbytes: {nbytes} is not the rows' bytes ({row_bytes} x {rows} x the batch)")
    values: list[int] = [nbytes, row_bytes, rows, lda]
    for size, stride in batch:
        values += [size, stride]
    values += [src_end, fast_divider(row_bytes), fast_divider(rows)]
    values += [fast_divider(size) for size, _ in batch[1:]]
    return tuple(values)


def _product(values) -> int:
    out = 1
    for v in values:
        out *= v
    return out
