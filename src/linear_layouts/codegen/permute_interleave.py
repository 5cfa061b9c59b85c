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
4- and 8-byte ones none. No shared memory, no barrier: every access a whole aligned vector, the lanes of a warp
on ``32 VB`` contiguous bytes of the contiguous side and of each of the ``n`` rows of the strided one.

The launch, the grid (tiles of ``32 W V`` long-side indices, ``tiles_n * tiles_m * batch`` CTAs, tile column
fastest) and the parameters are ``codegen.permute``'s tiled kernel's (``fast_divider`` arguments last); a tile
past the long side's end leaves its last threads idle. Requires (the caller's): the narrow side exactly ``n``,
the long side, ``lda`` (interleave) or ``ldb`` (deinterleave) and every batch stride multiples of ``V``, ``lda
= n`` (deinterleave) or ``ldb = n`` (interleave), both bases ``VB``-aligned.

Example: ``emit_interleave_kernel("k", 1, 3, deinterleave=True)`` moves 16 pixels of 3 bytes a thread (three
16-byte loads, 24 ``prmt``, a 16-byte store into each of the 3 planes), 2048 pixels a CTA of 4 warps.
"""

from __future__ import annotations

from linear_layouts.codegen.cast_chunks import OPAQUE_FUNCTIONS
from linear_layouts.codegen.elements import check_element_bytes, cpp_storage_type
from linear_layouts.codegen.intrinsics import DEVICE_PRELUDE, KERNEL_PROLOGUE
from linear_layouts.codegen.permute import MAX_BATCH_DIMS, PermuteKernel, tile_divisors, tile_index_lines, tiled_params
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote

__all__ = ["emit_interleave_kernel", "word_sources", "vector_bytes_for", "staged_pitch", "MAX_NARROW", "VECTOR_BYTES"]

#: The narrow side's largest extent (16-byte vectors up to 8, 8-byte ones above: ``4 n`` words in, as many out).
MAX_NARROW = 16
#: The vector sizes a thread moves (bytes).
VECTOR_BYTES = (8, 16)
#: Fields of the loaded vectors' words.
_FIELDS = ("x", "y", "z", "w")

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


def vector_bytes_for(narrow: int) -> int:
    """``VB``: 16 for a narrow side of up to 8 elements, 8 up to ``MAX_NARROW`` (``4 n`` loaded words at most 64)."""
    return 16 if narrow <= 8 else 8


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
                           batch_dims: int = 0, vector_bytes: int = 0) -> PermuteKernel:
    """CUDA C++ of the module doc's kernel: ``element_bytes``-byte elements, a narrow side of ``narrow`` elements
    (2 to ``MAX_NARROW``; ``A``'s columns when ``deinterleave``, else its rows), ``warps`` warps (1 to 32),
    ``batch_dims`` batch dims (0 to ``permute.MAX_BATCH_DIMS``), vectors of ``vector_bytes`` (``VECTOR_BYTES``,
    at least the element; 0: ``vector_bytes_for(narrow)``). Its tile is ``32 W V`` long-side indices by the narrow
    side rounded up to a power of two; the parameters are ``permute.emit_tiled_permute_kernel``'s.

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
    if isinstance(batch_dims, bool) or not isinstance(batch_dims, int) or not 0 <= batch_dims <= MAX_BATCH_DIMS:
        raise LayoutError(f"batch_dims: must be an int in [0, {MAX_BATCH_DIMS}], got {quote(batch_dims)}")
    vb = vector_bytes or vector_bytes_for(narrow)
    if vb not in VECTOR_BYTES or vb < w:
        raise LayoutError(f"vector_bytes: must be one of {VECTOR_BYTES} and at least the element's {w} bytes, got "
                          f"{quote(vector_bytes)}")
    n, threads, v, words = narrow, 32 * warps, vb // w, vb // 4
    long_tile = threads * v
    short_tile = 1 << (n - 1).bit_length()
    rows, cols = (long_tile, short_tile) if deinterleave else (short_tile, long_tile)
    t = cpp_storage_type(w)
    vector = "uint4" if vb == 16 else "uint2"
    load = "ll_ldg128_nc" if vb == 16 else "ll_ldg64_nc"
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
        read = "ll_lds128(q, x.x, x.y, x.z, x.w)" if vb == 16 else "ll_lds64(q, x.x, x.y)"
        stores = ["  const unsigned stage = smem + warp * " f"{32 * pitch}u;", *stores, "  ll_bar_warp();",
                  f"  const unsigned pw = col0 + {32 * v}u * warp;  // the warp's first column",
                  f"  const unsigned left = cols > pw ? (cols - pw) / {v}u : 0u, lanes = left < 32u ? left : 32u;  // active lanes",
                  f"  {t}* __restrict__ bw = dst_all + dst_base + (size_t)pw * {n}u;"]
        for k in range(n):
            stores += [f"  {{ const unsigned j = {32 * k}u + lane;",
                       f"    if (j < lanes * {n}u) {{ {vector} x; const unsigned q = stage + (j / {n}u) * {pitch}u + "
                       f"(j % {n}u) * {vb}u; {read}; ll_stg{8 * vb}(bw + (size_t)j * {v}u, {fields}); }} }}"]
    unused = "(void)full; (void)rows_left; (void)cols_left; " + ("(void)lda;" if deinterleave else "(void)ldb;")
    body = [
        f"// {name}: B = A^T of a {'deinterleave' if deinterleave else 'interleave'}: {n} {8 * w}-bit elements "
        f"a narrow side, {v} long-side indices a thread ({n} loads and {n} stores of {vb} bytes);",
        f"//   launch: a 1-D grid of tiles_n * tiles_m * (batch sizes) CTAs ({rows}x{cols} tiles), block = {threads}, "
        f"dynamic shared = {shared} bytes.",
        f'extern "C" __global__ void __launch_bounds__({threads}) {name}(',
        f"    {', '.join(f'{ty} {p}' for ty, p in params)}) {{",
        *KERNEL_PROLOGUE,
        *tile_index_lines(rows, cols, batch_dims, fast=True),
        f"  {unused}",
        *place,
        *loads,
        *named,
        "  {",
        *gathers,
        *stores,
        "  }",
        "}",
    ]
    helpers = OPAQUE_FUNCTIONS + (_LDG64 if vb == 8 else [])
    source = DEVICE_PRELUDE + "\n".join(helpers + body) + "\n"
    return PermuteKernel(name, source, threads, shared, w, rows, cols, v, v, True, batch_dims,
                         tuple(params))
