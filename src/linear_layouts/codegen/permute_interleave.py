"""The transpose of a matrix with a side of a few elements, by registers alone: interleave and deinterleave.

``B = A^T`` (``codegen.permute``'s tiled problem: ``A`` ``rows x cols`` at row stride ``lda``, ``B``'s row ``c``
at ``ldb c``, batch dims) where one side is ``n <= MAX_NARROW`` elements: NHWC -> NCHW of ``n`` channels
(*deinterleave*: ``A``'s rows are the ``n``-element pixels, ``cols = n``) or NCHW -> NHWC (*interleave*:
``rows = n`` planes). With ``V`` elements of ``w`` bytes in a vector of ``VB`` bytes (16, or 8 for ``n > 8``),
thread ``i`` of tile ``t`` takes the ``V`` long-side indices ``p = p0 + V i .. p + V - 1``:

===============  ==========================================  ==========================================
form             loads (``n`` vectors)                       stores (``n`` vectors)
===============  ==========================================  ==========================================
deinterleave     ``A[p .. p + V - 1, 0 .. n - 1]``: ``n V``  ``B[k, p .. p + V - 1]`` for each ``k < n``
                 contiguous elements (``lda = n``)
interleave       ``A[k, p .. p + V - 1]`` for each ``k < n``  ``B[p .. p + V - 1, 0 .. n - 1]``: ``n V``
                                                             contiguous elements (``ldb = n``)
===============  ==========================================  ==========================================

In between, each output word is gathered from the loaded words by ``prmt`` (``__byte_perm``): element ``(i, k)``
is element ``i n + k`` of the contiguous side and element ``i`` of vector ``k`` of the strided one; an output
word of 4 one-byte elements takes bytes of up to 4 loaded words (3 ``prmt``), of 2-byte ones 1 ``prmt``, of
4- and 8-byte ones none. Every global access is a whole aligned vector. A deinterleave needs no shared memory:
its lanes' loads of a contiguous run (``n VB`` bytes apart) merge in L1, and each store instruction writes ``32 VB``
contiguous bytes of one row of ``B``. An interleave's lanes write their ``n`` output vectors into a per-warp
shared stage (``staged_pitch`` bytes apart) and, after a ``__syncwarp``, store the warp's ``32 n`` vectors so that
each store instruction writes ``32 VB`` contiguous bytes (stores do not merge: written straight from the lanes,
each instruction would touch 32 pieces ``n VB`` apart).

The launch, the grid (tiles of ``32 W V`` long-side indices, ``tiles_n * tiles_m * batch`` CTAs, tile column
fastest) and the parameters are ``codegen.permute``'s tiled kernel's (``fast_divider`` arguments last); a tile
past the long side's end leaves its last threads idle. Requires (the caller's): the narrow side exactly ``n``,
the long side, ``lda`` (interleave) or ``ldb`` (deinterleave) and every batch stride multiples of ``V``, ``lda
= n`` (deinterleave) or ``ldb = n`` (interleave), both bases ``VB``-aligned.

Example: ``emit_interleave_kernel("k", 1, 3, deinterleave=True)`` moves 16 pixels of 3 bytes a thread (three
16-byte loads, 24 ``prmt``, a 16-byte store into each of the 3 planes), 2048 pixels a CTA of 4 warps.

**Any element offset** (``aligned=False``): the long side, ``ldb`` (deinterleave) or ``lda`` (interleave), the
batch strides and both bases free (``w``-aligned); alignment is a property of ABSOLUTE element positions, as in
``codegen.cast_chunks``. The contiguous side of a batch (``A`` when deinterleaving, at position ``c``; ``B``
when interleaving) is cut into *groups* of ``V`` long-side indices from ``e``, the ``e in (-V, 0]`` with ``c + n
e = 0 mod V`` (``group_origin``; it exists where ``gcd(n, V)`` divides ``c``): group ``g``, indices ``p = e + g V
.. p + V - 1``, is ``n`` aligned vectors of the contiguous side. Row ``k`` of the strided side starts at its own
residue ``m_k`` mod ``V``: its *slots*, the aligned vectors of its absolute positions, straddle two groups, and
lane ``i`` takes the rest of its vector from lane ``i + 1`` (``shfl``; a realignment by ``m_k w`` bytes: two
levels of selects, a ``prmt`` a word below 4-byte elements):

===============  ==============================================  ============================================
form             lane ``i`` of warp ``u`` (of the batch)         stores
===============  ==============================================  ============================================
deinterleave     group ``g = 31 u - 1 + i``: loads, ``prmt``;    lanes 0-30: slot ``p + sh_k .. + V - 1`` of
                 row ``k``'s slot from its ``V`` indices from    row ``k`` (``sh_k = -(start_k + e) mod V``)
                 ``sh_k`` and lane ``i + 1``'s first ``sh_k``
interleave       slot ``p - m_k ..`` of each row ``k``           lanes 0-30's groups through the warp's
                 (``m_k = (start_k + e) mod V``), the group's    stage: its ``31 n`` vectors of ``B``
                 ``V`` from ``m_k`` and lane ``i + 1``'s slot
===============  ==============================================  ============================================

Lane 31 only feeds lane 30, so a warp advances 31 groups (its 32 loads overlap the next warp's by one: ``1/32``
more of the loads, through L2). Slots and groups partition the rows, and each output position lies in one
slot (one vector of a group) a lane stores: whole vectors inside a row (the bulk) are single aligned accesses;
those across a row's (a batch's) start or end move element by element, their positions inside only, as do the
loads across an end. ``UnalignedInterleaveKernel.tile_counts``: ``ceil((floor((L + V - 2) / V) + 2) / 31 W)``
tiles along the long side ``L``, enough for every ``e`` and ``m_k``.

Example: ``emit_interleave_kernel("k", 1, 3, True, aligned=False)`` with ``A`` at absolute position 5: ``e =
-7`` (``5 + 3 (-7) = -16``); group 1, pixels 9 .. 24, is ``A``'s 48 bytes from position 32.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from linear_layouts.codegen.cast_chunks import OPAQUE_FUNCTIONS
from linear_layouts.codegen.elements import check_element_bytes, cpp_storage_type
from linear_layouts.codegen.intrinsics import OP_PRELUDE, OP_PROLOGUE
from linear_layouts.codegen.permute import MAX_KERNEL_BATCH_DIMS, PermuteKernel, tile_divisors, tile_index_lines, tiled_params
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote

__all__ = ["emit_interleave_kernel", "word_sources", "vector_bytes_for", "staged_pitch", "group_origin",
           "UnalignedInterleaveKernel", "MAX_NARROW", "VECTOR_BYTES", "LANES_STORING"]

#: The narrow side's largest extent (16-byte vectors up to 8, 8-byte ones up to 16, 4-byte ones above: at most 64
#: words in, as many out).
MAX_NARROW = 32
#: The vector sizes a thread moves (bytes).
VECTOR_BYTES = (4, 8, 16)
#: Per vector size: its C type, its global load (read-only path) and its shared load into ``{v}`` from ``q``.
_VECTORS = {16: ("uint4", "ll_ldg128_nc", "ll_lds128(q, {v}.x, {v}.y, {v}.z, {v}.w)"),
            8: ("uint2", "ll_ldg64_nc", "ll_lds64(q, {v}.x, {v}.y)"), 4: ("uint1", "ll_ldg32_nc", "{v}.x = ll_lds32(q)")}
#: Fields of the loaded vectors' words.
_FIELDS = ("x", "y", "z", "w")
#: Lanes of a warp whose group (slot) the unaligned form stores: lane 31 only feeds lane 30.
LANES_STORING = 31

#: ``ll_ldg64_nc(p)``: 8 bytes of global ``p`` by the read-only path (``ld.global.nc.v2``); memcpy on the host.
_LDG64 = [
    "#ifndef LL_LDG64_NC",
    "#define LL_LDG64_NC",
    "#ifdef LL_HOST",
    "LL_DEV uint2 ll_ldg64_nc(const void* p) { uint2 v; std::memcpy(&v, p, 8); return v; }",
    "#else",
    "LL_DEV uint2 ll_ldg64_nc(const void* p) {",
    "  uint2 v;",
    '  asm("ld.global.nc.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p));',
    "  return v;",
    "}",
    "#endif",
    "#endif",
]
#: ``ll_ldg32_nc(p)``: 4 bytes of global ``p`` by the read-only path (``ld.global.nc``); memcpy on the host.
_LDG32 = [
    "#ifndef LL_LDG32_NC",
    "#define LL_LDG32_NC",
    "#ifdef LL_HOST",
    "LL_DEV uint1 ll_ldg32_nc(const void* p) { uint1 v; std::memcpy(&v, p, 4); return v; }",
    "#else",
    "LL_DEV uint1 ll_ldg32_nc(const void* p) {",
    "  uint1 v;",
    '  asm("ld.global.nc.u32 %0, [%1];" : "=r"(v.x) : "l"(p));',
    "  return v;",
    "}",
    "#endif",
    "#endif",
]


def vector_bytes_for(narrow: int) -> int:
    """``VB``: 16 for a narrow side of up to 8 elements, 8 up to 16, 4 up to ``MAX_NARROW`` (at most 64 loaded
    words)."""
    return 16 if narrow <= 8 else 8 if narrow <= 16 else 4


def word_sources(element_bytes: int, narrow: int, vector_bytes: int, deinterleave: bool) -> list[list[tuple[int, int]]]:
    """For output word ``o`` (vector ``o // (VB / 4)``, word ``o mod (VB / 4)``), its bytes' sources ``(loaded word,
    byte)``, loaded words numbered vector by vector: ``n VB / 4`` words either way (module doc).

    >>> word_sources(1, 3, 16, True)[0]   # plane 0, pixels 0-3: bytes 0, 3, 6, 9 of the loaded 48
    [(0, 0), (0, 3), (1, 2), (2, 1)]
    """
    w, n, vb = element_bytes, narrow, vector_bytes
    total = n * vb  # bytes in, bytes out
    out = []
    for o in range(total // 4):
        word = []
        for q in range(4):
            byte = 4 * o + q
            if deinterleave:  # output vector k = byte // vb holds element i of plane k: loaded element i n + k
                k, rest = divmod(byte, vb)
                i, b = divmod(rest, w)
                source = (i * n + k) * w + b
            else:  # output byte of element (i, k) = flat element i n + k: loaded vector k, element i
                e, b = divmod(byte, w)
                i, k = divmod(e, n)
                source = k * vb + i * w + b
            word.append(divmod(source, 4))
        out.append(word)
    return out


def staged_pitch(narrow: int, vector_bytes: int) -> int:
    """Bytes between two lanes' ``n`` vectors in an interleave's warp stage: ``n VB``, one vector more for an even
    ``n`` (so that a quarter warp's 16-byte stores, ``n VB`` apart, fall in distinct banks): 48 for 3 x 16, 80 for 4."""
    return (narrow + (narrow % 2 == 0)) * vector_bytes


def group_origin(position: int, narrow: int, vector: int) -> int | None:
    """``e``: the ``e in (-V, 0]`` with ``position + n e = 0 mod V`` (the contiguous side's first group, module doc),
    ``V = vector`` elements a vector; None where ``gcd(n, V)`` does not divide ``position``.

    >>> group_origin(5, 3, 16), group_origin(8, 4, 16), group_origin(6, 4, 16)
    (-7, -2, None)
    """
    d = math.gcd(narrow, vector)
    if position % d:
        return None
    modulus = vector // d
    return -(position // d * pow(narrow // d, -1, modulus) % modulus) if modulus > 1 else 0


@dataclass(frozen=True)
class UnalignedInterleaveKernel(PermuteKernel):
    """The unaligned form (module doc): a CTA advances ``LANES_STORING W`` groups of ``V`` along the long side
    (``tile_rows`` when ``deinterleave``, else ``tile_cols``), which takes ``ceil((floor((L + V - 2) / V) + 2) /
    (LANES_STORING W))`` tiles: ``tile_counts(89401, 3) == (46, 1)`` for a deinterleave of 16 one-byte pixels a
    thread, 4 warps."""

    deinterleave: bool = True

    def long_tiles(self, extent: int) -> int:
        """Tiles along a long side of ``extent`` indices: room for slots ``-1 .. floor((L + V - 2) / V)``."""
        v, per = self.src_vector, LANES_STORING * self.threads // 32
        return -(-((extent + v - 2) // v + 2) // per)

    def tile_counts(self, rows: int, cols: int) -> tuple[int, int]:
        if self.deinterleave:
            return self.long_tiles(rows), -(-cols // self.tile_cols)
        return -(-rows // self.tile_rows), self.long_tiles(cols)


def _shift_lines(vector: str, words: int, bits: int, up: bool) -> list[str]:
    """C lines moving the ``words``-word ``vector`` by one element of ``bits``: toward its top (``up``, the low
    element then free) or its bottom."""
    f = _FIELDS[:words]
    if bits >= 32:
        k = bits // 32
        order = reversed(range(k, words)) if up else range(words - k)
        return [f"    {vector}.{f[j]} = {vector}.{f[j - k] if up else f[j + k]};" for j in order]
    if up:
        return [f"    {vector}.{f[j]} = ({vector}.{f[j]} << {bits}u) | ({vector}.{f[j - 1]} >> {32 - bits}u);"
                for j in reversed(range(1, words))] + [f"    {vector}.x <<= {bits}u;"]
    return [f"    {vector}.{f[j]} = ({vector}.{f[j]} >> {bits}u) | ({vector}.{f[j + 1]} << {32 - bits}u);"
            for j in range(words - 1)] + [f"    {vector}.{f[words - 1]} >>= {bits}u;"]


def _edge_functions(t: str, w: int, vb: int) -> list[str]:
    """``ll_load_part(a, x, total)``: the vector of ``a[x .. x + V - 1]``, zeros outside ``[0, total)``;
    ``ll_store_part(b, x, total, v)``: element ``i`` of ``v`` to ``b[x + i]`` where ``0 <= x + i < total``. One
    element an access (the loads all issued before the first is used), only where a vector crosses an end."""
    v, words = vb // w, vb // 4
    vector = _VECTORS[vb][0]
    zero = " ".join(f"r.{_FIELDS[j]} = 0u;" for j in range(words))
    low = "(unsigned long long)r.x | (unsigned long long)r.y << 32" if w == 8 else "r.x"
    put = {8: "r.x = (unsigned)y; r.y = (unsigned)(y >> 32);", 4: "r.x = y;"}.get(w, "r.x |= (unsigned)y;")
    guard = f"  if (x + {v}ll <= 0ll || x >= total) return"
    return [
        f"#ifndef LL_INTERLEAVE_EDGES_{8 * w}_{8 * vb}",
        f"#define LL_INTERLEAVE_EDGES_{8 * w}_{8 * vb}",
        f"LL_DEV {vector} ll_load_part(const {t}* a, long long x, long long total) {{",
        f"  {vector} r; {zero}",
        f"{guard} r;",
        f"  {t} ys[{v}];",
        "  #pragma unroll",  # every element's load issued before the first is used: one latency, not V
        f"  for (int j = 0; j < {v}; ++j) ys[j] = x + j >= 0ll && x + j < total ? a[x + j] : ({t})0;",
        "  #pragma unroll",
        f"  for (int j = {v - 1}; j >= 0; --j) {{",
        *(_shift_lines("r", words, 8 * w, True) if v > 1 else []),
        f"    const {t} y = ys[j];",
        f"    {put}",
        "  }",
        "  return r;",
        "}",
        f"LL_DEV void ll_store_part({t}* b, long long x, long long total, {vector} r) {{",
        f"{guard};",
        "  #pragma unroll",
        f"  for (long long i = x; i < x + {v}ll; ++i) {{",
        f"    if (i >= 0ll && i < total) b[i] = ({t})({low});",
        *(_shift_lines("r", words, 8 * w, False) if v > 1 else []),
        "  }",
        "}",
        "#endif",
    ]


def _realign(own: list[str], out: list[str], w: int, vb: int, shift: str) -> list[str]:
    """C lines setting ``out`` (``VB / 4`` words) to bytes ``[d, d + VB)`` of this lane's words ``own`` followed
    by lane ``i + 1``'s (a ``shfl`` each), ``d = {shift} w`` (``{shift} < V``): selects by the bits of ``d / 4``,
    then a ``prmt`` a word by ``d mod 4`` (below 4-byte elements)."""
    words = vb // 4
    # d / 4's bits that can be set: 2 for 16-byte vectors, 1 below 8-byte elements; each select stage keeps
    # only the words the next one (or ``out``: one more for the prmt) reads
    bits = [bit for bit in (2, 1) if bit < words and 4 * bit >= w]
    kept = [words + (1 if w < 4 else 0)]
    for bit in reversed(bits):
        kept.insert(0, kept[0] + bit)
    lines = [f"    const unsigned d = {shift} * {w}u;"]
    names = list(own) + [f"n{j}" for j in range(words)]
    lines += [f"    const unsigned n{j} = __shfl_sync(0xffffffffu, {own[j]}, lane + 1u);" for j in range(words)
              if words + j < kept[0]]
    for bit, count in zip(bits, kept[1:]):
        lines += [f"    const unsigned q{bit}_{i} = (d & {4 * bit}u) ? {names[i + bit]} : {names[i]};"
                  for i in range(count)]
        names = [f"q{bit}_{i}" for i in range(count)]
    if w < 4:
        lines.append("    const unsigned r = 0x3210u + 0x1111u * (d & 3u);")
        lines += [f"    const unsigned {out[j]} = __byte_perm({names[j]}, {names[j + 1]}, r);" for j in range(words)]
    else:
        lines += [f"    const unsigned {out[j]} = {names[j]};" for j in range(words)]
    return lines


def _emit_unaligned(name: str, w: int, n: int, deinterleave: bool, warps: int, batch_dims: int,
                    vb: int) -> UnalignedInterleaveKernel:
    """The module doc's unaligned form (``emit_interleave_kernel``'s arguments, checked)."""
    threads, v, words = 32 * warps, vb // w, vb // 4
    long_tile, short_tile = LANES_STORING * warps * v, 1 << (n - 1).bit_length()
    rows, cols = (long_tile, short_tile) if deinterleave else (short_tile, long_tile)
    t = cpp_storage_type(w)
    vector, load, _ = _VECTORS[vb]
    store = f"ll_stg{8 * vb}"
    params = tiled_params(t, batch_dims) + [("unsigned long long", f"{d}_div") for d in tile_divisors(batch_dims)]
    d = math.gcd(n, v)
    modulus = v // d
    inverse = pow(n // d, -1, modulus) if modulus > 1 else 0
    contiguous = "a_pos" if deinterleave else "b_pos"
    place = [
        f"  const long long L = (long long){'rows' if deinterleave else 'cols'};  // the long side",
        f"  const unsigned long long a_pos = (unsigned long long)src_all / {w}ull + src_base;  // absolute positions",
        f"  const unsigned long long b_pos = (unsigned long long)dst_all / {w}ull + dst_base;",
        f"  const long long e = -(long long)((({contiguous} >> {d.bit_length() - 1}u) * {inverse}ull) & "
        f"{modulus - 1}ull);  // {contiguous} + {n} e = 0 mod {v}",
        f"  const long long g = {LANES_STORING}ll * (long long)(tile_{'row' if deinterleave else 'col'} * {warps}u + "
        f"warp){' - 1ll' if deinterleave else ''} + (long long)lane;  // this lane's group",
        f"  const long long p = e + g * {v}ll;  // its first long-side index",
        f"  const {t}* __restrict__ a = src_all + src_base;",
        f"  {t}* __restrict__ b = dst_all + dst_base;",
    ]
    fields = _FIELDS[:words]
    body, shared = [], 0
    if deinterleave:  # the group's n vectors of A, whole or across an end
        body += [f"  {vector} {', '.join(f'v{k}' for k in range(n))};",
                 f"  if (p >= 0ll && p + {v}ll <= L) {{",
                 f"    const {t}* __restrict__ ap = a + p * {n}ll;",
                 *[f"    v{k} = {load}(ap + {k * v}u);" for k in range(n)],
                 "  } else {",
                 *[f"    v{k} = ll_load_part(a, p * {n}ll + {k * v}ll, L * {n}ll);" for k in range(n)],
                 "  }"]
    else:  # row k's slot from p - m_k: whole where every row's is
        body += [f"  const unsigned m{k} = (unsigned)(a_pos + {k}ull * lda + (unsigned long long)e) & {v - 1}u;"
                 for k in range(n)]
        body += [f"  {vector} v{k};" for k in range(n)]
        body += [f"  if (p >= {v - 1}ll && p + {v}ll <= L) {{",
                 *[f"    v{k} = {load}(a + (size_t){k}u * lda + (p - (long long)m{k}));" for k in range(n)],
                 "  } else {",
                 *[f"    v{k} = ll_load_part(a + (size_t){k}u * lda, p - (long long)m{k}, L);" for k in range(n)],
                 "  }"]
        body.append(f"  unsigned {', '.join(f's{i}' for i in range(n * words))};")
        for k in range(n):  # the group's V indices of row k: bytes [m_k w, m_k w + VB) of this slot and the next
            body += ["  {", *_realign([f"v{k}.{f}" for f in fields], [f"x{j}" for j in range(words)], w, vb, f"m{k}"),
                     *[f"    s{k * words + j} = x{j};" for j in range(words)], "  }"]
    if deinterleave:
        body += [f"  const unsigned s{k * words + j} = v{k}.{_FIELDS[j]};" for k in range(n) for j in range(words)]
    gathers = []
    for o, sources in enumerate(word_sources(w, n, vb, deinterleave)):
        gathers += _gather(sources, f"o{o}")
    if deinterleave:  # row k: the slot from p + sh_k, lanes 0-30
        stores = []
        for k in range(n):
            out = [f"y{j}" for j in range(words)]
            stores += [
                "  {",
                f"    const unsigned sh = (unsigned)(0ull - (b_pos + {k}ull * ldb + (unsigned long long)e)) & {v - 1}u;",
                *_realign([f"o{k * words + j}" for j in range(words)], out, w, vb, "sh"),
                "    const long long x = p + (long long)sh;  // the slot's first index in the row",
                f"    {t}* __restrict__ bk = b + (size_t){k}u * ldb;",
                f"    if (lane < {LANES_STORING}u) {{",
                f"      if (x >= 0ll && x + {v}ll <= L) {store}(bk + x, {', '.join(out)});",
                f"      else {{ {vector} y; {' '.join(f'y.{fields[j]} = {out[j]};' for j in range(words))} "
                f"ll_store_part(bk, x, L, y); }}",
                "    }",
                "  }"]
    else:  # the warp's 31 n vectors of B through its stage, from flat index n (p - V lane)
        pitch = staged_pitch(n, vb)
        shared = warps * 32 * pitch
        read = _VECTORS[vb][2].format(v="y")
        stores = [f"  const unsigned stage = smem + warp * {32 * pitch}u;",
                  *[f"  ll_sts{8 * vb}(stage + lane * {pitch}u + {k * vb}u, "
                    f"{', '.join(f'o{k * words + j}' for j in range(words))});" for k in range(n)],
                  "  ll_bar_warp();",
                  f"  const long long f0 = (p - (long long)lane * {v}ll) * {n}ll, total = L * {n}ll;  "
                  "// the warp's first flat index of B"]
        for k in range(n):
            stores += [f"  {{ const unsigned j = {32 * k}u + lane;",
                       f"    if (j < {LANES_STORING * n}u) {{",
                       f"      {vector} y; const unsigned q = stage + (j / {n}u) * {pitch}u + (j % {n}u) * {vb}u; "
                       f"{read};",
                       f"      const long long x = f0 + (long long)j * {v}ll;",
                       f"      if (x >= 0ll && x + {v}ll <= total) {store}(b + x, "
                       f"{', '.join(f'y.{fields[j]}' for j in range(words))});",
                       "      else ll_store_part(b, x, total, y);",
                       "    } }"]
    unused = "(void)full; (void)rows_left; (void)cols_left; (void)row0; (void)col0; " + (
        "(void)lda;" if deinterleave else "(void)ldb;")
    kernel_body = _kernel_lines(
        f"// {name}: B = A^T of a {'deinterleave' if deinterleave else 'interleave'} at any element offset: {n} "
        f"{8 * w}-bit elements a narrow side, groups of {v} long-side indices ({n} vectors of {vb} bytes) from e, "
        f"{LANES_STORING} a warp;", name, threads, shared, params, rows, cols, batch_dims, unused, place + body,
        gathers + stores)
    helpers = OPAQUE_FUNCTIONS + {8: _LDG64, 4: _LDG32}.get(vb, []) + _edge_functions(t, w, vb)
    source = OP_PRELUDE + "\n".join(helpers + kernel_body) + "\n"
    return UnalignedInterleaveKernel(name, source, threads, shared, w, rows, cols, v, v, True, batch_dims,
                                     tuple(params), deinterleave=deinterleave)


def _kernel_lines(head: str, name: str, threads: int, shared: int, params, rows: int, cols: int, batch_dims: int,
                  unused: str, lines: list[str], block: list[str]) -> list[str]:
    """The kernel of either form around its ``lines`` (placement, loads) and ``block`` (gathers, stores, in a scope
    of their own): the comment ``head`` and the launch, the signature, the prologue and ``codegen.permute``'s tile
    index lines of ``rows x cols`` tiles."""
    return [head,
            f"//   launch: a 1-D grid of tiles_n * tiles_m * (batch sizes) CTAs ({rows}x{cols} tiles), block = "
            f"{threads}, dynamic shared = {shared} bytes.",
            f'extern "C" __global__ void __launch_bounds__({threads}) {name}(',
            f"    {', '.join(f'{ty} {p}' for ty, p in params)}) {{",
            *OP_PROLOGUE,
            *tile_index_lines(rows, cols, batch_dims, fast=True),
            f"  {unused}",
            *lines,
            "  {",
            *block,
            "  }",
            "}"]


def _gather(sources: list[tuple[int, int]], name: str) -> list[str]:
    """C lines setting ``unsigned {name}`` to the word of ``sources`` (``(loaded word, byte)`` per byte): the
    loaded word itself, or a chain of ``__byte_perm`` folding in one more loaded word each."""
    words = list(dict.fromkeys(word for word, _ in sources))
    if sources == [(words[0], q) for q in range(4)]:
        return [f"    const unsigned {name} = s{words[0]};"]
    first, second = words[0], words[1] if len(words) > 1 else words[0]
    selector = 0
    for q, (word, byte) in enumerate(sources):
        nibble = byte if word == first else 4 + byte if word == second else 0
        selector |= nibble << (4 * q)
    lines = [f"    unsigned {name} = __byte_perm(s{first}, s{second}, 0x{selector:04x}u);"]
    done = {first, second}
    for extra in words[2:]:
        selector = 0
        for q, (word, byte) in enumerate(sources):
            nibble = 4 + byte if word == extra else q if word in done else 0
            selector |= nibble << (4 * q)
        lines.append(f"    {name} = __byte_perm({name}, s{extra}, 0x{selector:04x}u);")
        done.add(extra)
    return lines


def emit_interleave_kernel(name: str, element_bytes: int, narrow: int, deinterleave: bool, warps: int = 4,
                           batch_dims: int = 0, vector_bytes: int = 0, aligned: bool = True) -> PermuteKernel:
    """CUDA C++ of the module doc's kernel: ``element_bytes``-byte elements, a narrow side of ``narrow`` elements
    (2 to ``MAX_NARROW``; ``A``'s columns when ``deinterleave``, else its rows), ``warps`` warps (1 to 32),
    ``batch_dims`` batch dims (0 to ``permute.MAX_KERNEL_BATCH_DIMS``), vectors of ``vector_bytes`` (``VECTOR_BYTES``,
    at least the element; 0: ``vector_bytes_for(narrow)``). Its tile is ``32 W V`` long-side indices by the narrow
    side rounded up to a power of two; the parameters are ``permute.emit_tiled_permute_kernel``'s. ``aligned=False``:
    the module doc's form at any element offset (an ``UnalignedInterleaveKernel``, tiles of ``31 W V``).

    Example: ``emit_interleave_kernel("k", 2, 3, False)``: NCHW -> NHWC of 3 fp16 planes, a tile of ``4 x 1024``."""
    w = check_element_bytes(element_bytes)
    if not isinstance(name, str) or not name.isidentifier():
        raise LayoutError(f"name: {quote(name)} is not a C identifier")
    if isinstance(narrow, bool) or not isinstance(narrow, int) or not 2 <= narrow <= MAX_NARROW:
        raise LayoutError(f"narrow: must be an int from 2 to {MAX_NARROW}, got {quote(narrow)}")
    if not isinstance(deinterleave, bool):
        raise LayoutError(f"deinterleave: must be a bool, got {quote(deinterleave)}")
    if isinstance(warps, bool) or not isinstance(warps, int) or not 1 <= warps <= 32:
        raise LayoutError(f"warps: must be an int from 1 to 32, got {quote(warps)}")
    if isinstance(batch_dims, bool) or not isinstance(batch_dims, int) or not 0 <= batch_dims <= MAX_KERNEL_BATCH_DIMS:
        raise LayoutError(f"batch_dims: must be an int in [0, {MAX_KERNEL_BATCH_DIMS}], got {quote(batch_dims)}")
    vb = vector_bytes or vector_bytes_for(narrow)
    if vb not in VECTOR_BYTES or vb < w:
        raise LayoutError(f"vector_bytes: must be one of {VECTOR_BYTES} and at least the element's {w} bytes, got "
                          f"{quote(vector_bytes)}")
    if not isinstance(aligned, bool):
        raise LayoutError(f"aligned: must be a bool, got {quote(aligned)}")
    if not aligned:
        return _emit_unaligned(name, w, narrow, deinterleave, warps, batch_dims, vb)
    n, threads, v, words = narrow, 32 * warps, vb // w, vb // 4
    long_tile = threads * v
    short_tile = 1 << (n - 1).bit_length()
    rows, cols = (long_tile, short_tile) if deinterleave else (short_tile, long_tile)
    t = cpp_storage_type(w)
    vector, load, _ = _VECTORS[vb]
    params = tiled_params(t, batch_dims) + [("unsigned long long", f"{d}_div") for d in tile_divisors(batch_dims)]
    shared = 0
    if deinterleave:  # A's rows p .. p + V - 1, whole; B's rows 0 .. n - 1 from column p
        place = [f"  const unsigned p = row0 + {v}u * threadIdx.x;",
                 "  if (p >= rows) return;",
                 f"  const {t}* __restrict__ a = src_all + src_base + (size_t)p * {n}u;",
                 f"  {t}* __restrict__ b = dst_all + dst_base + p;"]
        loads = [f"  const {vector} v{k} = {load}(a + {k * v}u);" for k in range(n)]
        target = [f"b + (size_t){k}u * ldb" for k in range(n)]
    else:  # A's rows 0 .. n - 1 from column p; B's rows p .. p + V - 1 through the warp's stage
        pitch = staged_pitch(n, vb)
        shared = warps * 32 * pitch
        place = [f"  const unsigned p = col0 + {v}u * threadIdx.x;",
                 "  const bool active = p < cols;  // no early exit: the warp meets at its stage",
                 f"  const {t}* __restrict__ a = src_all + src_base + p;"]
        loads = [f"  {vector} v{k} = {{}}; if (active) v{k} = {load}(a + (size_t){k}u * lda);" for k in range(n)]
        target = [f"stage + lane * {pitch}u + {k * vb}u" for k in range(n)]
    named = [f"  const unsigned s{k * words + j} = v{k}.{_FIELDS[j]};" for k in range(n) for j in range(words)]
    gathers, stores = [], []
    for o, sources in enumerate(word_sources(w, n, vb, deinterleave)):
        gathers += _gather(sources, f"o{o}")
    space = "g" if deinterleave else "s"
    for k in range(n):
        stores.append(f"  ll_st{space}{8 * vb}({target[k]}, {', '.join(f'o{k * words + j}' for j in range(words))});")
    if not deinterleave:  # the stage's vectors j = 32 k + lane: B's 32 n vectors of the warp, one store each
        fields = ", ".join(f"x.{_FIELDS[j]}" for j in range(words))
        read = _VECTORS[vb][2].format(v="x")
        stores = ["  const unsigned stage = smem + warp * " f"{32 * pitch}u;", *stores, "  ll_bar_warp();",
                  f"  const unsigned pw = col0 + {32 * v}u * warp;  // the warp's first column",
                  f"  const unsigned left = cols > pw ? (cols - pw) / {v}u : 0u, lanes = left < 32u ? left : 32u;  // active lanes",
                  f"  {t}* __restrict__ bw = dst_all + dst_base + (size_t)pw * {n}u;"]
        for k in range(n):
            stores += [f"  {{ const unsigned j = {32 * k}u + lane;",
                       f"    if (j < lanes * {n}u) {{ {vector} x; const unsigned q = stage + (j / {n}u) * {pitch}u + "
                       f"(j % {n}u) * {vb}u; {read}; ll_stg{8 * vb}(bw + (size_t)j * {v}u, {fields}); }} }}"]
    unused = "(void)full; (void)rows_left; (void)cols_left; " + ("(void)lda;" if deinterleave else "(void)ldb;")
    body = _kernel_lines(
        f"// {name}: B = A^T of a {'deinterleave' if deinterleave else 'interleave'}: {n} {8 * w}-bit elements "
        f"a narrow side, {v} long-side indices a thread ({n} loads and {n} stores of {vb} bytes);", name, threads,
        shared, params, rows, cols, batch_dims, unused, place + loads + named, gathers + stores)
    helpers = OPAQUE_FUNCTIONS + {8: _LDG64, 4: _LDG32}.get(vb, [])
    source = OP_PRELUDE + "\n".join(helpers + body) + "\n"
    return PermuteKernel(name, source, threads, shared, w, rows, cols, v, v, True, batch_dims,
                         tuple(params))
