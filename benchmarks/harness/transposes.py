"""The GPU suite's 8192^2 transposes: their tile layouts (16-byte vectors along the rows of A and of B,
4-row blocks, cp.async rows, register-only), the variant tables (one tile per CTA, persistent, cp.async,
at the peers' tile shapes) and every kernel (``transpose_kernels``), plus our own same-size copy, their
ceiling (``same_size_copy_kernel``).
"""

from __future__ import annotations

from linear_layouts.codegen.plan import conversion_step, kernel_name


def transpose_layouts(element_bytes: int, warps: int = 4, tile: int = 64):
    """Tile layouts of the transpose benchmark: 16-byte vectors along the rows of A (src) and along
    the rows of B = A^T, i.e. the columns of the tile (dst)."""
    from harness.cases import _strip
    from linear_layouts.layouts.blocked import BlockedLayout

    v = 16 // element_bytes
    t1 = min(32, tile // v)
    t0 = 32 // t1
    src = BlockedLayout([1, v], [t0, t1], [warps, 1], [1, 0]).to_linear([tile, tile])
    dst = BlockedLayout([v, 1], [t1, t0], [1, warps], [0, 1]).to_linear([tile, tile])
    return _strip(src), _strip(dst)


def transpose_register_layouts(element_bytes: int, warps: int = 4, tile: int = 64):
    """Tile layouts of a transpose that needs no shared memory: each thread holds a block of
    ``4 / w`` rows x ``16 / w`` columns (16-byte vectors along the rows of A, 4-byte words along the
    rows of B); lanes 0, 1 walk columns (64 bytes of a row of A), lanes 2..4 rows (32 bytes of a row
    of B).  ``dst`` is ``src`` with its register bits rows first: the plan is a register permutation
    (a byte transpose inside each thread: ``prmt``)."""
    from harness.cases import _strip
    from linear_layouts import LinearLayout
    from linear_layouts.layouts.blocked import BlockedLayout

    r, c = max(1, 4 // element_bytes), 16 // element_bytes
    rows = max(tile, 8 * r * warps)
    src = _strip(BlockedLayout([r, c], [8, 4], [warps, 1], [1, 0]).to_linear([rows, tile]))
    regs = src.bases["register"]
    order = [b for b in regs if b[0]] + [b for b in regs if not b[0]]
    dst = LinearLayout({"register": order, "lane": src.bases["lane"], "warp": src.bases["warp"]},
                       dict(src.out_dims))
    return src, dst


def transpose_block_layouts(element_bytes: int, warps: int = 4):
    """Tile layouts (128 x 64) where each thread holds a 4-row block on both sides: ``src`` 4 rows x 16
    bytes of A (16-byte loads, lanes 0, 1 along the rows of A), ``dst`` 16 bytes along the columns
    of A x 4 columns (16-byte stores of B, lanes 0, 1 along the columns).  Both hold 2 x 2 rows x
    columns in registers, so shared memory moves 16-byte vectors on both sides (a 4x4 byte block
    for 8-bit elements, transposed in registers by prmt)."""
    from harness.cases import _strip
    from linear_layouts.layouts.blocked import BlockedLayout

    c = 16 // element_bytes
    src = _strip(BlockedLayout([4, c], [8, 4], [warps, 1], [1, 0]).to_linear([128, 64]))
    dst = _strip(BlockedLayout([c, 4], [4, 8], [2, warps // 2], [0, 1]).to_linear([128, 64]))
    return src, dst


def transpose_long_block_layouts(element_bytes: int, warps: int = 4):
    """Like ``transpose_block_layouts`` (4-row blocks, 16-byte shared vectors on both sides) with 8
    lanes along a row on each global side: 128-byte segments of the rows of A and of B per warp
    instruction (tiles 128x128 for 8-bit, 64x64 for 16-bit)."""
    from harness.cases import _strip
    from linear_layouts.layouts.blocked import BlockedLayout

    c = 16 // element_bytes
    rows = cols = max(16 * warps, 8 * c)
    src = _strip(BlockedLayout([4, c], [4, 8], [warps, 1], [1, 0]).to_linear([rows, cols]))
    dst = _strip(BlockedLayout([c, 4], [8, 4], [1, warps], [0, 1]).to_linear([rows, cols]))
    return src, dst


def transpose_wide_block_layouts(element_bytes: int, warps: int = 8, rows: int = 256, cols: int = 256):
    """4-row blocks (16-byte shared vectors on both sides, 4x4 byte transposes by prmt for 8-bit
    elements) with ``cols * w / 16`` lanes along a row of A and ``rows * w / 16`` along a row of B
    (at most 16 each): 256-byte segments of the rows of A and B per warp instruction on a
    ``rows x cols`` tile (8-bit: 256 x 256, 64 KiB of shared memory)."""
    from harness.cases import _strip
    from linear_layouts.layouts.blocked import BlockedLayout

    c = 16 // element_bytes
    ta, tb = min(16, cols // c), min(16, rows // c)
    src = _strip(BlockedLayout([4, c], [32 // ta, ta], [warps, 1], [1, 0]).to_linear([rows, cols]))
    dst = _strip(BlockedLayout([c, 4], [tb, 32 // tb], [1, warps], [0, 1]).to_linear([rows, cols]))
    return src, dst


#: Persistent, software-pipelined transposes (``emit_persistent_transpose_kernel``): element bytes ->
#: (tag, wide-block layout arguments, CTAs per SM, options).  8-bit: 256x256 tiles with 16 warps
#: (102 registers: 1 CTA per SM) or 32 warps (55 registers), 128x128 with 8 warps (4 CTAs per SM),
#: 128x256 with 16 warps (2 per SM); ``h``: ld.global.nc.L1::no_allocate loads and st.global.cs
#: stores; ``gK``: tiles in groups of K tile rows, so the ~132 (528) tiles in flight span 4 KiB of each
#: row of A and 2 KiB of B (g8, g16 for 128x128) or 2 and 4 KiB (g16, g32), against 8 and 1 KiB in
#: row-major order; ``d``: tiles drawn from a counter after the first two (``dynamic``); ``_l2p256``:
#: 16-byte loads ``ld.global.nc.L2::256B`` (``l2_prefetch_bytes=256``: L2 fetches the aligned 256 bytes
#: around each load's sector, SASS ``LDG.E.LTC256B.128.CONSTANT``).
_WIDE, _SMALL = dict(warps=32), dict(warps=8, rows=128, cols=128)
PERSISTENT_TRANSPOSES = {
    1: (("persist256x16w", dict(warps=16), 1, {}), ("persist256x16wh", dict(warps=16), 1, dict(cache_hints=True)),
        ("persist256x16w_l2p256", dict(warps=16), 1, dict(l2_prefetch_bytes=256)),
        ("persist256x32w", _WIDE, 1, {}), ("persist256x32wh", _WIDE, 1, dict(cache_hints=True)),
        ("persist256x32w_l2p256", _WIDE, 1, dict(l2_prefetch_bytes=256)),
        ("persist256x32wg8", _WIDE, 1, dict(group_rows=8)), ("persist256x32wg16", _WIDE, 1, dict(group_rows=16)),
        ("persist256x32wd", _WIDE, 1, dict(dynamic=True)),
        ("persist128x8w", _SMALL, 4, {}), ("persist128x8wh", _SMALL, 4, dict(cache_hints=True)),
        ("persist128x8wg16", _SMALL, 4, dict(group_rows=16)), ("persist128x8wg32", _SMALL, 4, dict(group_rows=32)),
        ("persist128x8wd", _SMALL, 4, dict(dynamic=True)),
        # 128 rows x 256 columns of A, 16 warps: 56 registers, 2 CTAs (32 warps) per SM
        ("persist128x256x16w", dict(warps=16, rows=128), 2, {})),
    2: (("persist128x16w", dict(warps=16, rows=128, cols=128), 2, {}),),
    # 64 x 64 tiles of 4-row blocks, 8 warps (16-byte shared accesses both ways), 4 CTAs per SM: no local memory
    4: (("persist64x8w", dict(warps=8, rows=64, cols=64), 4, {}),),
}


#: Persistent transposes through ``transpose_layouts`` (the layouts Triton's ``tl.trans`` picks itself at 64 x 64
#: for 32-bit elements: 16-byte global vectors both ways, 4-byte shared accesses), so that every CTA takes the
#: same number of tiles and the next tile's loads are in flight (no last partial wave of one-tile CTAs):
#: element bytes -> (tag, ``transpose_layouts`` arguments, CTAs per SM: the most that keep every register).
PERSISTENT_SHARED_TRANSPOSES = {
    2: (("persist64x4w_shared", dict(warps=4), 6),),
    4: (("persist64x4w_shared", dict(warps=4), 6), ("persist64x8w_shared", dict(warps=8), 4)),
}


def transpose_async_layouts(element_bytes: int, warps: int = 8, rows: int = 256, cols: int = 256):
    """Tile layouts for ``emit_async_transpose_kernel`` (cp.async): ``src`` one row x 16 bytes of A per
    vector (``cols * w / 16`` lanes, at most 16, along a row: 256-byte segments), stored to shared
    memory as loaded; ``dst`` 16 bytes of B x 16/w columns per thread (8-bit: a 16 x 16 byte block,
    16 shared ``ld.shared.v4`` and 16 4x4 byte transposes by prmt after the shared load), ``rows * w /
    16`` lanes (at most 16) along a row of B."""
    from harness.cases import _strip
    from linear_layouts.layouts.blocked import BlockedLayout

    c = 16 // element_bytes
    ta, tb = min(16, cols // c), min(16, rows // c)
    src = _strip(BlockedLayout([1, c], [32 // ta, ta], [warps, 1], [1, 0]).to_linear([rows, cols]))
    dst = _strip(BlockedLayout([c, c], [tb, 32 // tb], [1, warps], [0, 1]).to_linear([rows, cols]))
    return src, dst


#: cp.async transposes (``emit_async_transpose_kernel``, ``transpose_async_layouts``): element bytes ->
#: (tag, layout arguments, CTAs per SM, options).  8-bit 256x256 tiles, 8 warps (150 registers), 3
#: buffers of 64 KiB (1 CTA per SM), also with ``cp.async...L2::256B`` (``_l2p256``); 128x256 tiles, 4
#: warps, 3 buffers of 32 KiB (2 CTAs per SM).
ASYNC_TRANSPOSES = {
    1: (("async256x8w_s3", dict(warps=8), 1, dict(stages=3)),
        ("async256x8w_s3_l2p256", dict(warps=8), 1, dict(stages=3, l2_prefetch_bytes=256)),
        ("async128x256x4w_s3", dict(warps=4, rows=128), 2, dict(stages=3))),
    # the 8-bit winner's pipeline on the wider elements (issue 29): 16-bit 128x128 tiles of 8 warps, 3 buffers of
    # 32 KiB (2 CTAs per SM); 32-bit 64x64 of 8 warps, 3 of 16 KiB (4 per SM); 8x8 / 4x4 element blocks on the
    # dst side
    2: (("async128x8w_s3", dict(warps=8, rows=128, cols=128), 2, dict(stages=3)),),
    4: (("async64x8w_s3", dict(warps=8, rows=64, cols=64), 4, dict(stages=3)),),
}


#: The control of ``ASYNC_TRANSPOSES``: their layouts through ``emit_persistent_transpose_kernel`` (16-byte
#: loads into registers, stored to shared memory as loaded; 8-bit 256x256, 8 warps, 214 registers, no
#: local memory), so a cp.async difference is not the layouts'.  (tag, layout arguments, CTAs per SM).
ROW_VECTOR_TRANSPOSES = {1: (("persist256x8w_rows", dict(warps=8), 1),)}


#: One-tile-per-CTA 8-bit variants of blocks256x16w: hinted, and CTA (x, y) taking tile y T_x + x in
#: groups of 16 or 32 tile rows (the 264 resident CTAs span 4 KiB of each row of A and of B, or 2 and
#: 8 KiB, against 8 and 2 KiB in the grid's order).
ONE_TILE_OPTIONS = {"blocks256x16wh": dict(cache_hints=True), "blocks256x16wg16": dict(group_rows=16),
                    "blocks256x16wg32": dict(group_rows=32)}


#: ``group_rows`` of a whole column of tiles (``transpose_kernels`` caps it at the tile rows): the CTAs take tiles
#: down the columns of tiles of A, the raster order "m" of ``linear_layouts.ops`` (tags ending in ``m``).
_RASTER_M = 1 << 20


#: One-tile-per-CTA transposes at the tile shapes that won Triton's tile sweep on the H200 (8-bit 64x128 / 4 warps
#: and 128x128 / 8 warps, 16-bit 128x128 / 8 warps and 64x64 / 4 warps), with 4-row blocks (16-byte shared
#: accesses where Triton's are byte-wide), and the best 32-bit kernel (``shared64x8w``) with streaming cache hints
#: or tiles in groups of 8 tile rows; and each of them in raster order "m" (``_RASTER_M``): element bytes -> (tag,
#: wide-block layout arguments, or None for ``transpose_layouts(w, warps=8)``, options).
PEER_TILE_TRANSPOSES = {
    1: (("blocks64x128x4w", dict(warps=4, rows=64, cols=128), {}),
        ("blocks128x8w", dict(warps=8, rows=128, cols=128), {}),
        ("blocks64x128x4wm", dict(warps=4, rows=64, cols=128), dict(group_rows=_RASTER_M)),
        ("blocks128x8wm", dict(warps=8, rows=128, cols=128), dict(group_rows=_RASTER_M))),
    2: (("blocks128x8w", dict(warps=8, rows=128, cols=128), {}),
        ("blocks64x4w", dict(warps=4, rows=64, cols=64), {}),
        ("blocks128x8wm", dict(warps=8, rows=128, cols=128), dict(group_rows=_RASTER_M)),
        ("blocks64x4wm", dict(warps=4, rows=64, cols=64), dict(group_rows=_RASTER_M))),
    4: (("shared64x8wh", None, dict(cache_hints=True)), ("shared64x8wg8", None, dict(group_rows=8)),
        ("shared64x8wm", None, dict(group_rows=_RASTER_M)),
        ("shared64x8whm", None, dict(cache_hints=True, group_rows=_RASTER_M))),
}


def transpose_kernels(n: int):
    """(element bytes, tile layouts, step, kernel) of the 8192^2 transposes: through shared memory
    (16-byte vectors on both global sides), within each thread (``transpose_register_layouts``) and
    persistent (``PERSISTENT_TRANSPOSES``) and persistent with cp.async (``ASYNC_TRANSPOSES``); every one
    emitted with ``pdl=True`` (launched plainly it runs as without; ``transposes`` times both launches)."""
    from linear_layouts.codegen.transpose import (
        emit_async_transpose_kernel, emit_persistent_transpose_kernel, emit_transpose_kernel,
    )

    out = []
    for w in (1, 2, 4):
        variants = [("shared", transpose_layouts), ("blocks", transpose_block_layouts),
                    ("registers", transpose_register_layouts)]
        if w < 4:  # longer rows of B per tile: 128 bytes (8-bit) or 256 bytes (16-bit) per segment
            variants += [("shared128", lambda eb: transpose_layouts(eb, tile=128)),
                         ("blocks128", transpose_long_block_layouts)]
        if w == 1:  # 256-byte segments of the rows of A and of B (8-bit: 128-byte rows reached 87%)
            variants += [("blocks256", transpose_wide_block_layouts),
                         ("blocks256x4w", lambda eb: transpose_wide_block_layouts(eb, warps=4)),
                         ("blocks128x256", lambda eb: transpose_wide_block_layouts(eb, warps=4, rows=128)),
                         ("blocks256x128", lambda eb: transpose_wide_block_layouts(eb, warps=4, cols=128)),
                         ("shared256", lambda eb: transpose_layouts(eb, warps=8, tile=256)),
                         # more warps on the same tile (84.0% at 4 warps, 89.9% at 8): 16 warps (54 registers,
                         # 2 CTAs and 32 warps per SM) and 32 warps (32 registers: 2 CTAs, 64 warps per SM, the
                         # most an H100 SM holds); both issue all their 16-byte loads before the shared stores
                         ("blocks256x16w", lambda eb: transpose_wide_block_layouts(eb, warps=16)),
                         ("blocks256x32w", lambda eb: transpose_wide_block_layouts(eb, warps=32))]
        if w == 2:  # 256-byte segments on both global sides, 128 x 128 tiles (32 KiB)
            variants += [("blocks256", lambda eb: transpose_wide_block_layouts(eb, warps=4, rows=128, cols=128)),
                         ("blocks256x16w", lambda eb: transpose_wide_block_layouts(eb, warps=16, rows=128, cols=128))]
        if w == 1:  # the best 8-bit variant so far with streaming cache hints (`h`) or grouped tile orders
            variants += [(tag, lambda eb: transpose_wide_block_layouts(eb, warps=16)) for tag in ONE_TILE_OPTIONS]
        if w == 4:  # 4-row blocks (16-byte shared accesses) at 64 x 64 / 4 warps and 128 x 128 / 16 warps; 8 warps
            variants += [("blocks64x4w", lambda eb: transpose_wide_block_layouts(eb, warps=4, rows=64, cols=64)),
                         ("blocks128x16w", lambda eb: transpose_wide_block_layouts(eb, warps=16, rows=128, cols=128)),
                         ("shared64x8w", lambda eb: transpose_layouts(eb, warps=8))]
        for tag, layouts in variants:
            src, dst = layouts(w)
            step = conversion_step(src, dst, 8 * w)
            name = kernel_name("ll_transpose", w, n, tag)
            opts = dict(ONE_TILE_OPTIONS.get(tag, {}))
            opts["group_rows"] = min(opts.get("group_rows", 1), n // src.out_dim_size(src.out_dim_names[0]))
            out.append((w, tag, step, emit_transpose_kernel(name, src, dst, w, step, n, n, pdl=True, **opts)))
        for tag, kw, opts in PEER_TILE_TRANSPOSES.get(w, ()):
            src, dst = transpose_wide_block_layouts(w, **kw) if kw else transpose_layouts(w, warps=8)
            step = conversion_step(src, dst, 8 * w)
            opts = dict(opts, group_rows=min(opts.get("group_rows", 1), n // src.out_dim_size(src.out_dim_names[0])))
            out.append((w, tag, step, emit_transpose_kernel(kernel_name("ll_transpose", w, n, tag), src, dst, w, step,
                                                            n, n, pdl=True, **opts)))
        for tag, kw, ctas, opts in PERSISTENT_TRANSPOSES.get(w, ()):
            src, dst = transpose_wide_block_layouts(w, **kw)
            step = conversion_step(src, dst, 8 * w)
            name = kernel_name("ll_transpose", w, n, tag)
            opts = dict(opts, group_rows=min(opts.get("group_rows", 1), n // src.out_dim_size(src.out_dim_names[0])))
            out.append((w, tag, step, emit_persistent_transpose_kernel(name, src, dst, w, step, n, n,
                                                                       ctas_per_sm=ctas, pdl=True, **opts)))
        for tag, kw, ctas in PERSISTENT_SHARED_TRANSPOSES.get(w, ()):
            src, dst = transpose_layouts(w, **kw)
            step = conversion_step(src, dst, 8 * w)
            out.append((w, tag, step, emit_persistent_transpose_kernel(kernel_name("ll_transpose", w, n, tag), src, dst,
                                                                       w, step, n, n, ctas_per_sm=ctas, pdl=True)))
        for tag, kw, ctas in ROW_VECTOR_TRANSPOSES.get(w, ()):
            src, dst = transpose_async_layouts(w, **kw)
            step = conversion_step(src, dst, 8 * w)
            out.append((w, tag, step, emit_persistent_transpose_kernel(kernel_name("ll_transpose", w, n, tag), src, dst,
                                                                       w, step, n, n, ctas_per_sm=ctas, pdl=True)))
        for tag, kw, ctas, opts in ASYNC_TRANSPOSES.get(w, ()):
            src, dst = transpose_async_layouts(w, **kw)
            step = conversion_step(src, dst, 8 * w)
            out.append((w, tag, step, emit_async_transpose_kernel(kernel_name("ll_transpose", w, n, tag), src, dst, w,
                                                                  step, n, n, ctas_per_sm=ctas, pdl=True, **opts)))
    return out


#: Our own same-size copy, the transposes' ceiling at their size: a persistent grid-stride copy of
#: 16-byte vectors (``SAME_SIZE_COPY_CTAS_PER_SM`` CTAs of ``SAME_SIZE_COPY_THREADS`` per SM), each
#: thread loading four vectors before storing them.  Hand-written: a peer, not generated code.
SAME_SIZE_COPY_THREADS, SAME_SIZE_COPY_CTAS_PER_SM = 512, 4
SAME_SIZE_COPY_SOURCE = r"""
extern "C" __global__ void __launch_bounds__(512, 4) ll_same_size_copy(
    const uint4* __restrict__ src, uint4* __restrict__ dst, unsigned long long vectors) {
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + 3ull * stride < vectors; i += 4ull * stride) {
    const uint4 x0 = src[i], x1 = src[i + stride], x2 = src[i + 2ull * stride], x3 = src[i + 3ull * stride];
    dst[i] = x0; dst[i + stride] = x1; dst[i + 2ull * stride] = x2; dst[i + 3ull * stride] = x3;
  }
  for (; i < vectors; i += stride) dst[i] = src[i];
}
"""


def same_size_copy_kernel():
    """``SAME_SIZE_COPY_SOURCE`` as a ``KernelSource`` (for ``runtime.compile_kernel``)."""
    from linear_layouts.codegen.kernel import KernelSource

    return KernelSource("ll_same_size_copy", SAME_SIZE_COPY_SOURCE, SAME_SIZE_COPY_THREADS, 0, 1, 1)
