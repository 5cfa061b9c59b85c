"""The ops' tiles and kernels without a GPU: every tile's layouts hold each element of the tile once with
the vectors configured; our planner moves the transposes through shared memory in 16-byte vectors on both
sides where the tile allows it and leaves row moves with an empty plan; the emitted source predicates
exactly the accesses of the masked branch; nvcc compiles the fast kernels to 16-byte global accesses in
both branches without local memory, and the cast-transpose to ``cvt.rn.satfinite`` pairs and one atomic."""

from __future__ import annotations

import dataclasses
import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from linear_layouts.codegen.conversion import RegisterCopy, SharedConversion
from linear_layouts.codegen.permute import fast_divider
from linear_layouts.codegen.plan import conversion_step
from linear_layouts.codegen.ptx import compile_cubin, compile_ptx, count_ptx, count_sass, find_cuobjdump, find_nvcc
from linear_layouts.core.errors import LayoutError
from linear_layouts.ops.launches import tile_for
from linear_layouts.ops.plan import plan_permutation, vector_elements
from linear_layouts.ops import kernels
from linear_layouts.ops.kernels import (
    MAX_NARROW_STORES, MAX_NARROW_WORDS, ROWS_THREAD_ACCESSES, ROWS_THREAD_BYTES, SKINNY_CTAS_PER_SM, SKINNY_DRAM_WARPS, SKINNY_TILE_BYTES,
    SKINNY_MISALIGNED_RUN_BYTES, GridShape, TileConfig, _narrow_fits, cast_kernel, cast_tiles,
    choose_narrow_tile, choose_tile, min_ctas, permute_kernel, resident_ctas, rows_tile, shared_sector_tile,
    skinny_tile, tile_layouts, transpose_tiles,
)
from linear_layouts.target import resolve

needs_nvcc = pytest.mark.skipif(find_nvcc() is None, reason="nvcc is not installed")

_CONFIGS = ([c for w in (1, 2, 4, 8) for c in transpose_tiles(w, 16 // w, 16 // w)]
            + [transpose_tiles(w, 1, 1)[0] for w in (1, 2, 4, 8)] + [transpose_tiles(1, 16, 4)[0]]
            + transpose_tiles(1, 16, 8)[:2] + transpose_tiles(2, 8, 2)[:1] + transpose_tiles(4, 1, 4)[:1]
            + [rows_tile(w, v, cols) for w, v, cols in ((2, 8, 128), (4, 4, 100), (4, 1, 3), (1, 16, 4096))]
            + cast_tiles(16, 16) + cast_tiles(8, 2))


@pytest.mark.parametrize("config", _CONFIGS, ids=str)
def test_tile_layouts_hold_each_element_once(config):
    src, dst = tile_layouts(config)
    for layout in (src, dst):
        assert layout.is_injective() and layout.is_surjective()  # no duplicated element, none missing
        assert dict(layout.out_dims) == {"dim0": config.rows, "dim1": config.cols}
        assert layout.in_dim_size("warp") == config.warps
    if not config.transposed:
        assert src == dst
    kernel = (cast_kernel(config, "bf16", "e4m3") if config in cast_tiles(16, 16) + cast_tiles(8, 2)
              else permute_kernel(config, 0))
    assert (kernel.src_vector, kernel.dst_vector) == (config.src_vector, config.dst_vector)


def test_bad_tiles():
    with pytest.raises(LayoutError, match="rows: must be a power of two"):
        TileConfig(1, 96, 64, 4, 16, 16)
    with pytest.raises(LayoutError, match="covers more than its tile"):
        tile_layouts(TileConfig(1, 16, 16, 16, 16, 16, 4))


@pytest.mark.parametrize("element_bytes", [1, 2, 4, 8])
def test_fast_transposes_move_16_byte_vectors_through_shared_memory(element_bytes):
    config = transpose_tiles(element_bytes, 16 // element_bytes, 16 // element_bytes)[0]
    src, dst = tile_layouts(config)
    step = conversion_step(src, dst, 8 * element_bytes, ldmatrix_trans=False)  # as permute_kernel plans the tiles
    assert isinstance(step, SharedConversion)
    counts = step.instruction_counts()
    if element_bytes == 1:
        assert set(counts) == {"st.shared.v4.b32", "ld.shared.v4.b32"}
    if element_bytes == 2:  # unblocked 16-bit tiles (faster from DRAM in ops_tile_scan): words in, elements out
        assert counts == {"st.shared.b32": 32, "ld.shared.u16": 64}
    rows = rows_tile(element_bytes, 16 // element_bytes, 4096 // element_bytes)
    assert isinstance(conversion_step(*tile_layouts(rows), 8 * element_bytes), RegisterCopy)


def test_tile_choice_rules():
    """The module doc's rules on an H100 / H200 (132 SMs, 50 MiB of L2), on shapes of the ops' sweep."""
    h200 = GridShape(132)
    fp8, bf16, fp32 = transpose_tiles(1, 16, 16), transpose_tiles(2, 8, 8), transpose_tiles(4, 4, 4)
    assert [resident_ctas(c) for c in fp8] == [2, 8, 16, 16] and [resident_ctas(c) for c in bf16] == [4, 16, 8]
    assert choose_tile(fp8, 8192, 28672, 1, h200) == fp8[0]      # 3584 tiles of 256 x 256: 9 waves of 396
    assert choose_tile(fp8, 8192, 8192, 1, h200) == fp8[1]       # 2.6 waves from DRAM: 128 x 128, 8 CTAs an SM
    assert choose_tile(fp8, 8192, 4096, 1, h200) == fp8[1]       # 64 MiB > L2: 16 KiB tiles in flight as 8 KiB
    assert choose_tile(fp8, 4096, 4096, 1, h200) == fp8[1]       # 32 MiB in L2: 128 x 128, 1024 tiles
    assert choose_tile(fp8, 1024, 1024, 1, h200) == fp8[3]       # in L2, fewer than 264 tiles of 8 KiB: 4 KiB
    assert choose_tile(bf16, 8192, 8192, 1, h200) == bf16[0]     # 4096 tiles, 7.8 waves of 528
    assert choose_tile(bf16, 8192, 1024, 1, h200) == bf16[2]     # in L2: tiles of at most 16 KiB, more warps
    assert choose_tile(bf16, 4096, 4096, 1, h200) == bf16[1]     # 64 MiB from DRAM: 16 CTAs of 4 warps an SM
    assert choose_tile(fp32, 1536, 1536, 1, h200) == fp32[0]     # in L2: 64 x 64 unblocked (4 warps) over blocked
    assert choose_tile(bf16, 64, 12544, 32, h200) == bf16[1]     # 128 rows on 64: half the tile empty
    assert choose_tile(fp32, 4096, 4096, 1, h200) == fp32[0]     # 32 x 32 (4 KiB) is too small a grain
    assert choose_tile(fp32, 64, 64, 1, h200) == fp32[2]         # one 64 x 64 tile: four of 32 x 32
    assert choose_tile(bf16, 8192, 8192, 1, GridShape(16)) == bf16[0]  # fewer SMs, more waves


def test_masked_branch_predicates_every_access():
    """The full branch's loads and stores are plain; the masked branch's are the same accesses, each behind
    the bounds of the tile's valid part."""
    kernel = permute_kernel(transpose_tiles(2, 8, 8)[0], 1)
    body = kernel.source[kernel.source.index('extern "C"'):]
    vectors = 128 * 128 * 2 // 16 // kernel.threads  # 16-byte accesses per thread and side: 4
    load = r"\*reinterpret_cast<const uint4\*>\(src_thread[^;]*;"
    guard = r"\(?thread_row[^&?]*< (rows|cols)_left && \(?thread_col[^?)]*< (cols|rows)_left"
    loads = re.findall(r"= (\(" + guard + r"\) \? )?" + load, body)
    assert len(loads) == 2 * vectors and sum(bool(x[0]) for x in loads) == vectors  # half of them guarded
    assert len(re.findall(r"(?<!\) )ll_stg128\(dst_thread", body)) == vectors  # the full branch's: plain
    column = body.index("if (thread_col < rows_left) {")  # the masked branch's: its column tested once
    stores = re.findall(r"if \(\(?thread_row[^&?;]*< cols_left\) ll_stg128\(dst_row", body[column:])
    assert len(stores) == vectors and body.index("} else {") < column
    masked = body[body.index("} else {"):]
    assert "(thread_row + 0x" in masked and "< rows_left" in masked and "< cols_left" in masked
    assert [p for _, p in kernel.params] == ["src_all", "dst_all", "rows", "cols", "tiles_n", "tiles_m", "lda", "ldb",
                                             "size0", "src_stride0", "dst_stride0", "tiles_n_div", "tiles_m_div"]


def test_raster_orders():
    """Large transposes take tiles down the columns of tiles (raster "m": the tile row varies fastest), those that
    stay in L2 and row moves along the rows; cast-transposes only where T's stores are narrow; an unknown order is
    refused by name."""
    from linear_layouts.codegen.permute import tile_divisors, tile_index_lines
    from linear_layouts.ops.kernels import RASTER_M_L2S, raster_order
    from linear_layouts.ops.launches import cast_launches, permute_launches

    h100 = GridShape(132)
    tile = transpose_tiles(2, 8, 8)[0]
    edge = int(RASTER_M_L2S * h100.l2_bytes)
    assert [raster_order(tile, b, h100) for b in (edge, edge + 1)] == ["n", "m"]
    assert raster_order(TileConfig(2, 8, 128, 4, 8, 8, transposed=False), 1 << 40, h100) == "n"
    (large,) = permute_launches((8192, 8192), (1, 0), 2, 1 << 40, 2 << 40, h100)  # 256 MiB moved
    (small,) = permute_launches((2048, 2048), (1, 0), 2, 1 << 40, 2 << 40, h100)  # 16 MiB
    body = large.kernel.source[large.kernel.source.index('extern "C"'):]
    assert body.index("const unsigned tile_row = t - q * tiles_m;") < body.index("const unsigned tile_col = t;")
    assert "const unsigned tile_col = t - q * tiles_n;" in small.kernel.source
    assert large.kernel.name != permute_kernel(tile, 0).name  # the order is part of the kernel's name
    rows = permute_kernel(TileConfig(2, 8, 128, 4, 8, 8, transposed=False), 1)
    assert "const unsigned tile_col = t - q * tiles_n;" in rows.source and [p for _, p in rows.params][-2:] == [
        "tiles_n_div", "tiles_m_div"]
    assert tile_divisors(2, "m") == ["tiles_m", "tiles_n", "size1"] and tile_divisors(0) == ["tiles_n"]
    assert tile_index_lines(64, 64, 0) == tile_index_lines(64, 64, 0, raster="n")  # the default

    def cast_source(m):
        (launch,) = cast_launches("bf16", "e4m3", m, 8192, 1 << 40, 2 << 40, 3 << 40, None, 1.0, 4 << 40, h100)
        return launch.kernel.dst_vector, launch.kernel.source
    narrow, aligned = cast_source(8193), cast_source(8192)  # T's rows: 1-byte stores, 16-byte stores (256 MiB)
    assert narrow[0] == 1 and "  const unsigned tile_row = t - q * tiles_m;" in narrow[1]
    assert aligned[0] == 16 and "  const unsigned tile_col = t - q * tiles_n;" in aligned[1]
    assert "  const unsigned tile_col = t - q * tiles_n;" in cast_source(1025)[1]  # 24 MiB: in L2
    for bad in ("k", "M", None):
        with pytest.raises(LayoutError, match="raster"):
            tile_index_lines(64, 64, 0, raster=bad)


@needs_nvcc
@pytest.mark.parametrize("element_bytes", [1, 2, 4])
def test_fast_kernels_compile_to_16_byte_accesses(element_bytes):
    kernel = permute_kernel(transpose_tiles(element_bytes, 16 // element_bytes, 16 // element_bytes)[0], 1)
    ptx = count_ptx(compile_ptx(kernel.source))
    vectors = kernel.tile_rows * kernel.tile_cols * element_bytes // 16 // kernel.threads  # per thread per side
    loads = 2  # both branches
    assert ptx["ld.global.nc.v4.u32"] == loads * vectors and ptx["st.global.v4.b32"] == 2 * vectors
    if find_cuobjdump() is not None:
        sass = count_sass(compile_cubin(kernel.source), ("LDG", "STG", "LDL", "STL"))
        assert not any(op.startswith(("LDL", "STL")) for op in sass)  # no spills to local memory
        assert sass["LDG.E.128.CONSTANT"] == loads * vectors and sass["STG.E.128"] == 2 * vectors


def _divided(t: int, divider: int) -> int:
    """The kernels' ``t / d``: ``(t * magic) >> shift`` (in 64 bits: ``t < 2**31``, ``magic <= 2**32``)."""
    product = t * (divider & 0x1FFFFFFFF)
    assert product < 2**64
    return product >> (divider >> 56)


@given(st.integers(1, 2**31 - 1), st.integers(0, 2**31 - 1))
def test_fast_divider_divides_every_tile_index(d, t):
    assert _divided(t, fast_divider(d)) == t // d
    for edge in (0, d - 1, d, 2**31 - 1, (2**31 - 1) // d * d, (2**31 - 1) // d * d - 1):
        if edge >= 0:
            assert _divided(edge, fast_divider(d)) == edge // d


def test_fast_divider_small_divisors_exhaustively_and_bad_ones():
    for d in range(1, 70):
        assert all(_divided(t, fast_divider(d)) == t // d for t in range(0, 4 * d + 3))
    for d in (2**30, 2**30 + 1, 2**31 - 1):  # the largest divisors, around their multiples
        assert all(_divided(t, fast_divider(d)) == t // d for t in (0, d - 1, d, d + 1, 2**31 - 1))
    assert fast_divider(3) == 0xAAAAAAAB | 33 << 56 and fast_divider(1) == 2**31 | 31 << 56
    for bad in (0, 2**31, -1, True, 2.0):
        with pytest.raises(LayoutError, match="d: a divider"):
            fast_divider(bad)


def test_kernels_are_bounded_to_the_occupancy_their_space_allows():
    """A tile whose registers (2 per word a thread holds) fit the CTAs that threads and shared memory allow is
    compiled for them (``__launch_bounds__(threads, min)``); one whose registers would not is left unbounded."""
    fp8, bf16, fp32 = transpose_tiles(1, 16, 16), transpose_tiles(2, 8, 8), transpose_tiles(4, 4, 4)
    assert [min_ctas(c) for c in fp8] == [0, 0, 16, 16] and [min_ctas(c) for c in bf16] == [0, 16, 8]
    assert [min_ctas(c) for c in fp32] == [0, 8, 16] and min_ctas(transpose_tiles(1, 1, 1)[0]) == 0  # 32 bytes a thread
    assert min_ctas(rows_tile(2, 8, 128)) == 16
    for config in fp8 + bf16 + fp32:
        kernel = permute_kernel(config, 1)
        bound = f"__launch_bounds__({kernel.threads}, {min_ctas(config)})" if min_ctas(config) else \
            f"__launch_bounds__({kernel.threads})"
        assert bound + " " in kernel.source


def test_masked_stores_test_their_column_once_and_advance_a_row_pointer():
    kernel = permute_kernel(transpose_tiles(1, 16, 16)[2], 0)
    masked = kernel.source[kernel.source.rindex("} else {"):]
    lines = [x.strip() for x in masked.splitlines()]
    start = lines.index("if (thread_col < rows_left) {")
    assert lines[start + 1] == "auto* dst_row = dst_thread;"
    stores = [x for x in lines[start:] if "ll_stg128" in x]
    assert stores[1] == "if ((thread_row + 0x1u) < cols_left) ll_stg128(dst_row, b[4], b[5], b[6], b[7]);"
    assert len(stores) == 4 and lines[start:].count("dst_row += 0x1ull * ldb;") == 3
    assert "thread_col < rows_left" not in " ".join(stores)


def test_narrow_tiles_are_tall_and_fit_their_registers():
    # vectors a row length allows: tall tiles first (long runs of B's rows), the 64 x 64 tile of 8 warps last
    assert [(c.rows, c.cols, c.warps) for c in transpose_tiles(1, 16, 8)] == [(256, 256, 8), (256, 128, 8),
                                                                             (128, 128, 8), (64, 64, 8)]
    assert [(c.rows, c.cols) for c in transpose_tiles(2, 8, 4)] == [(256, 128), (128, 64), (64, 64)]
    assert [(c.rows, c.cols) for c in transpose_tiles(8, 1, 2)] == [(64, 64)]
    # single-byte loads fill a register each: the 256-row tiles would need 128 or 256 words a thread
    assert [(c.rows, c.cols) for c in transpose_tiles(1, 1, 1)] == [(128, 128), (64, 64)]
    # 16-byte loads, single-byte stores: 256 x 256 would store 256 times a thread
    assert [(c.rows, c.cols) for c in transpose_tiles(1, 16, 1)] == [(256, 128), (128, 128), (64, 64)]
    # 2-byte stores: the 16-byte loads fill 64 words, 128 stores a thread
    assert [(c.rows, c.cols) for c in transpose_tiles(2, 8, 1)] == [(256, 128), (128, 64), (64, 64)]
    assert not _narrow_fits(TileConfig(1, 256, 256, 8, 16, 1)) and _narrow_fits(TileConfig(1, 256, 256, 8, 16, 8))
    for w in (1, 2, 4, 8):
        for vin in (1, 2, 16 // w):
            for c in transpose_tiles(w, vin, 1)[:-1]:
                elements = c.rows * c.cols // c.threads
                assert elements * w // min(4, vin * w) <= MAX_NARROW_WORDS and elements <= MAX_NARROW_STORES


def test_narrow_tile_choice():
    device = GridShape(132)  # 50 MiB of L2
    tall, wide, mid, small = tiles = transpose_tiles(1, 16, 8)
    assert choose_narrow_tile(tiles, 4104, 8192, 1, device) == tall  # from DRAM: 544 tiles of 256 x 256
    assert choose_narrow_tile(tiles, 4104, 4096, 1, device) == wide  # in L2: 4 tiles an SM, 272 of 256 x 256 too few
    assert choose_narrow_tile(tiles, 2052, 4096, 1, device) == mid  # in L2: 544 of 128 x 128
    assert choose_narrow_tile(tiles, 2052, 2048, 4, device) == wide  # the batch makes the tiles
    assert choose_narrow_tile(tiles, 300, 300, 1, device) == small  # 9 tiles of 128 x 128 leave SMs idle
    # an edge tile up to half empty is still taken (NARROW_TILE_USE): 289 of 512 rows in 256-row tiles
    tall16 = transpose_tiles(2, 8, 1)[0]
    assert choose_narrow_tile(transpose_tiles(2, 8, 1), 289, 1280, 128, device) == tall16
    assert choose_narrow_tile(transpose_tiles(2, 8, 1), 100, 1280, 128, device) != tall16  # 39% used
    assert choose_narrow_tile(tiles, 40, 40, 1, device) == small  # none fills the SMs: most tiles
    assert tile_for(plan_permutation((4100, 8192), (1, 0), 2), 0, 0, device) == transpose_tiles(2, 8, 4)[0]
    # 16-byte vectors, but every other row of B starts inside a sector (4112 bytes): tall tiles of 4 x 4-byte blocks
    sector = tile_for(plan_permutation((4112, 8192), (1, 0), 1), 0, 0, device)
    assert (sector.rows, sector.cols, sector.warps, sector.block) == (256, 256, 8, 4)
    assert tile_for(plan_permutation((4096, 8192), (1, 0), 1), 0, 0, device) == transpose_tiles(1, 16, 16)[1]
    assert tile_for(plan_permutation((4096, 8192), (1, 0), 1), 0, 16, device).rows == 256  # B's base off a sector
    # rows of A alone narrow: no tall tiles (a sector A's rows share is read twice, written by no one)
    assert [(c.rows, c.cols, c.warps) for c in transpose_tiles(1, 8, 16)] == [(128, 128, 8), (64, 64, 8)]


def test_transposes_in_l2_with_rows_inside_sectors_take_taller_tiles():
    """``SHARED_SECTOR_TILES``: output rows 16-byte aligned that start inside 32-byte sectors: 16-bit 128 x 64 tiles
    of 8 warps up to 1.25 L2s moved, 8-bit 256 x 128 of 8 within the L2 (fewer sectors two CTAs write in halves), where
    the grid and the edges allow; rows on sectors, other element sizes and problems from DRAM plan as before."""
    device = GridShape(132, 60 << 20)

    def tile(shape, w, dst=0):
        c = tile_for(plan_permutation(shape, (0, 2, 1), w), 0, dst, device)
        return c.rows, c.cols, c.warps

    assert tile((39, 2712, 104), 2) == (128, 64, 8)     # output rows 5424 bytes: 16 mod 32
    assert tile((39, 2720, 104), 2) == (64, 64, 8)      # 5440 bytes: on sectors
    assert tile((39, 2720, 104), 2, dst=16) == (128, 64, 8)  # on sectors, from a base inside one
    assert tile((39, 2712, 104), 4)[:2] != (128, 64)     # 32-bit: unchanged
    assert tile((2, 344, 40), 2) != (128, 64, 8)         # 6 tiles of 128 x 64: too few for the SMs
    assert tile((60, 2712, 104), 2) == (128, 64, 8)      # 64.5 MiB moved: over the L2, under 1.25 of it
    assert tile((120, 2712, 104), 2)[:2] == (256, 128)   # 129 MiB moved, from DRAM: the tall narrow tiles
    assert tile((1, 7632, 3552), 1) == (256, 128, 8)     # 8-bit, rows of 7632 bytes: 840 tiles, 3 an SM or more
    assert tile((1, 1328, 5120), 1) != (256, 128, 8)     # 240 tiles: under 3 an SM
    assert tile((1, 7648, 3552), 1) != (256, 128, 8)     # 7648 bytes: on sectors
    assert tile((4, 7632, 3552), 1)[:2] == (256, 256)    # 207 MiB moved, from DRAM: the tall narrow tiles
    assert tile((1, 8176, 3968), 1)[:2] == (256, 256)    # 62 MiB moved, just over the L2: 8-bit keeps them
    assert tile((64, 112, 4096), 1) != (256, 128, 8)     # 112 of 256 rows: edge tiles over half empty
    assert shared_sector_tile(4, 2712, 104, 39, device) is None
    assert shared_sector_tile(1, 7632, 3552, 1, device) == TileConfig(1, 256, 128, 8, 16, 16, 4)


@pytest.mark.parametrize("w, vin, vout, rows, cols", [(2, 8, 1, 3, 65536), (1, 16, 1, 31, 10**6), (4, 1, 4, 50176, 6),
                                                    (1, 2, 8, 10**6, 2), (8, 1, 1, 5, 7), (2, 1, 1, 17, 3)])
def test_skinny_tiles_hold_the_short_side(w, vin, vout, rows, cols):
    """``skinny_tile``: the short side rounded up to a power of two, ``SKINNY_TILE_BYTES`` or the other side's
    length (rounded up) along the other, each element once."""
    config = skinny_tile(w, vin, vout, rows, cols)
    short, other = (config.rows, config.cols) if rows <= cols else (config.cols, config.rows)
    assert short == 1 << (min(rows, cols) - 1).bit_length()
    assert other >= 32 and (other * short * w <= SKINNY_TILE_BYTES or other == 32 or config.warps < 4)
    assert (config.src_vector, config.dst_vector) == (vin, vout)
    tile_layouts(config)
    assert skinny_tile(w, vin, vout, 32, 32) is None and skinny_tile(w, vin, vout, 40, 10**6) is None
    device = GridShape(132)
    problem = plan_permutation((rows, cols), (1, 0), w)
    vectors = (vector_elements(w, problem.cols, 0), vector_elements(w, problem.rows, 0))
    assert tile_for(problem, 0, 0, device) == skinny_tile(w, *vectors, problem.rows, problem.cols, 1, device)


@pytest.mark.parametrize("w, rows, cols, batch", [(4, 2074915, 9, 1), (4, 89408, 26, 8), (2, 3397296, 10, 1),
                                                  (1, 3539744, 5, 1), (4, 472608, 10, 1), (4, 3, 4000000, 1)])
def test_skinny_tiles_of_4_byte_elements_from_dram_take_8_warps(w, rows, cols, batch):
    """``tile_for``: a skinny problem of 4-byte elements that moves more than the L2 holds takes the skinny tile of
    ``SKINNY_DRAM_WARPS`` warps where its layout fits them (a 4-row side spreads 4 warps), its shape unchanged;
    every other skinny problem the 4-warp tile (none of these has the misaligned output rows of
    ``SKINNY_MISALIGNED_RUN_BYTES``' rule)."""
    device = GridShape(132)
    problem = plan_permutation((batch, rows, cols), (0, 2, 1), w)
    vectors = (vector_elements(w, problem.cols, 0), vector_elements(w, problem.rows, 0))
    config = tile_for(problem, 0, 0, device)
    plain = skinny_tile(w, *vectors, problem.rows, problem.cols, batch, device)
    dram = 2 * w * rows * cols * batch > device.l2_bytes
    assert (config.rows, config.cols) == (plain.rows, plain.cols) and plain.warps == 4
    expected = SKINNY_DRAM_WARPS if dram and w == 4 and min(rows, cols) > 4 else 4
    assert config.warps == expected
    tile_layouts(config)


@pytest.mark.parametrize("w, rows, cols, batch, longer", [
    (2, 1074727, 24, 1, True), (4, 89401, 26, 8, True), (8, 826851, 24, 1, True), (2, 36269, 20, 60, True),
    (2, 1164912, 19, 1, False),   # B's rows of 2329824 bytes: 16-byte stores, no partial chunks
    (1, 1778135, 30, 1, False),   # single bytes: the rule leaves them
    (2, 100001, 24, 1, False),    # 9.2 MiB moved: in L2
    (2, 1000001, 12, 1, False),   # 12 columns: 512-byte runs already
    (2, 24, 1000001, 1, False),   # the short side along A's rows: B's rows are the short side
])
def test_skinny_tiles_of_misaligned_rows_from_dram_run_1_kib(monkeypatch, w, rows, cols, batch, longer):
    """``tile_for``: a skinny tile along ``B``'s rows that allow only stores narrower than 16 bytes, of 2-byte
    elements or wider, from DRAM, whose ``SKINNY_TILE_BYTES`` runs would be under ``SKINNY_SHORT_RUN_BYTES``, runs
    ``SKINNY_MISALIGNED_RUN_BYTES`` along them on ``SKINNY_DRAM_WARPS`` warps; every other problem plans as it did
    without the rule."""
    device = GridShape(132, 60 * 2**20)
    problem = plan_permutation((batch, rows, cols), (0, 2, 1), w)
    config = tile_for(problem, 0, 0, device)
    monkeypatch.setattr(kernels, "SKINNY_SHORT_RUN_BYTES", 0)
    before = tile_for(problem, 0, 0, device)
    if longer:
        assert (config.rows * w, config.cols, config.warps) == (SKINNY_MISALIGNED_RUN_BYTES, 32, SKINNY_DRAM_WARPS)
        assert before.rows * w == 256 and config.dst_vector * w < 16
    else:
        assert config == before
    tile_layouts(config)


@pytest.mark.parametrize("shape, w, tiny", [
    ((47, 67, 115), 8, True),      # 188 tiles of 64 x 64 (under 4 an SM), in L2: 32 x 32 of 4 warps
    ((47, 67, 114), 8, True),      # one side's rows aligned, the other's not: still narrow
    ((47, 67, 115), 4, False),     # 4-byte elements keep the list's tile
    ((2000, 67, 115), 8, False),   # 117 MiB moved: from DRAM
    ((470, 67, 115), 8, False),    # 1880 tiles: enough of the list's own
])
def test_narrow_8_byte_problems_in_l2_take_the_tiny_tile(monkeypatch, shape, w, tiny):
    """``choose_narrow_tile``: a transpose of vectors under 16 bytes of an element size in ``L2_TINY_ELEMENT_BYTES``,
    within the L2, whose narrow list gives fewer than ``L2_NARROW_CTAS`` tiles an SM, takes ``TINY_TILE``; the others
    the list's tile, which is what every problem takes without the rule."""
    device = GridShape(132, 60 * 2**20)
    problem = plan_permutation(shape, (0, 2, 1), w)
    config = tile_for(problem, 0, 0, device)
    monkeypatch.setattr(kernels, "L2_TINY_ELEMENT_BYTES", ())
    before = tile_for(problem, 0, 0, device)
    assert (before.rows, before.cols, before.warps) == (64, 64, 8)
    assert ((config.rows, config.cols, config.warps) == (32, 32, 4)) == tiny
    assert config == before or tiny
    assert (config.src_vector, config.dst_vector) == (before.src_vector, before.dst_vector)


@settings(max_examples=60, deadline=None)
@given(w=st.sampled_from([1, 2, 4, 8]), short=st.integers(1, 31), other=st.integers(32, 1 << 22),
       batch=st.integers(1, 64), sms=st.sampled_from([16, 132]))
def test_skinny_tiles_fill_the_device(w, short, other, batch, sms):
    """On a device, a skinny tile is the longest of the halvings of the 8 KiB one (down to 32) whose grid holds
    ``SKINNY_CTAS_PER_SM`` tiles an SM, or the shortest: a small problem gets more, shorter tiles; a large one the
    8 KiB tile."""
    device = GridShape(sms)
    base = skinny_tile(w, 1, 1, short, other)
    config = skinny_tile(w, 1, 1, short, other, batch, device)
    assume(base is not None)
    length, base_length = config.cols, base.cols
    assert config.rows == base.rows and length <= base_length and length >= 32
    least = SKINNY_CTAS_PER_SM * sms
    if base.tiles(short, other) * batch >= least:
        assert config == base
    elif config.tiles(short, other) * batch < least:
        assert length == 32
    else:
        longer = dataclasses.replace(config, cols=2 * length)
        assert longer.tiles(short, other) * batch < least


@needs_nvcc
@pytest.mark.skipif(find_cuobjdump() is None, reason="cuobjdump is not installed")
@pytest.mark.parametrize("config, batch_dims", [(transpose_tiles(1, 16, 16)[2], 0), (transpose_tiles(2, 8, 8)[1], 1),
                                                (transpose_tiles(2, 8, 8)[0], 0), (transpose_tiles(1, 16, 8)[0], 0),
                                                (transpose_tiles(2, 4, 4)[0], 1), (transpose_tiles(8, 1, 1)[0], 0)],
                         ids=str)
def test_bounded_kernels_fit_their_registers_without_spilling(config, batch_dims):
    import subprocess

    cubin = compile_cubin(permute_kernel(config, batch_dims).source)
    usage = subprocess.run([find_cuobjdump(), "-res-usage", str(cubin)], capture_output=True, text=True).stdout
    registers, stack = map(int, re.search(r"REG:(\d+) STACK:(\d+)", usage).groups())
    assert stack == 0 and registers * 32 * config.warps * min_ctas(config) <= resolve(None).sm_registers


@needs_nvcc
@pytest.mark.parametrize("fp8", ["e4m3", "e5m2"])
def test_cast_kernel_converts_pairs_and_reduces_once(fp8):
    kernel = cast_kernel(cast_tiles(16, 16)[0], "bf16", fp8)
    ptx = compile_ptx(kernel.source)
    per_thread = kernel.tile_rows * kernel.tile_cols // kernel.threads
    assert len(re.findall(rf"cvt\.rn\.satfinite\.{fp8}x2\.f32", ptx)) == per_thread // 2
    assert len(re.findall(r"atom\.global\.max\.s32", ptx)) == 1
    counts = count_ptx(ptx)
    assert counts["st.global.v4.b32"] == 2 * (per_thread // 16) * 2  # out and out_t, both branches


def test_unaligned_casts_take_the_misaligned_row_kernels():
    """Rows of 11007 elements (every row of X, C and T at its own byte offset): the chunked kernel
    (128 x 64 tiles of 2-byte inputs, 64 x 64 of fp32), the scalar one's 128 x 64 tiles of single-element
    accesses, the realigned one's 64 x 256 tiles read as 16-byte chunks, by default (``auto``) the flat cast and a
    byte transpose of ``C``; aligned rows keep the planned tiles;
    an input that its elements do not align is refused."""
    from linear_layouts.ops.launches import cast_launches

    (launch,) = cast_launches("bf16", "e4m3", 4095, 11007, 1 << 40, 2 << 40, 3 << 40, None, 1.0, 4 << 40, 132,
                              misaligned="scalar")
    assert launch.kernel.name.startswith("ll_cast_transpose_scalar") and launch.ctas == 32 * 172
    assert launch.values[6:] == (4095, 11007, 172, 32)
    (launch,) = cast_launches("bf16", "e4m3", 4095, 11007, 1 << 40, 2 << 40, 3 << 40, None, 1.0, 4 << 40, 132,
                              misaligned="chunked")
    assert launch.kernel.name.startswith("ll_cast_transpose_chunked") and launch.ctas == 32 * 172
    (launch,) = cast_launches("fp32", "e4m3", 4095, 11007, 1 << 40, 2 << 40, 3 << 40, None, 1.0, 4 << 40, 132,
                              misaligned="chunked")
    assert launch.kernel.name.startswith("ll_cast_transpose_chunked") and launch.ctas == 64 * 172
    flat, transpose = cast_launches("bf16", "e4m3", 4095, 11007, 1 << 40, 2 << 40, 3 << 40, None, 1.0, 4 << 40, 132)
    assert flat.kernel.name.startswith("ll_cast_flat") and flat.ctas == -(-4095 * 11007 // 8192)  # by default
    assert transpose.kernel.name.startswith("ll_permute_bytes") and transpose.values[:2] == (2 << 40, 3 << 40)
    (launch,) = cast_launches("bf16", "e4m3", 4095, 11007, 1 << 40, 2 << 40, 3 << 40, None, 1.0, 4 << 40, 132,
                              misaligned="realigned")
    assert launch.kernel.name.startswith("ll_cast_transpose_realigned") and launch.ctas == 64 * 43
    (launch,) = cast_launches("bf16", "e4m3", 4096, 11008, 1 << 40, 2 << 40, 3 << 40, None, 1.0, 4 << 40, 132)
    assert not launch.kernel.name.startswith(("ll_cast_transpose_realigned", "ll_cast_transpose_scalar"))
    with pytest.raises(LayoutError, match="x: the address .* is not a multiple of its 4-byte elements"):
        cast_launches("fp32", "e4m3", 5, 7, (1 << 40) + 2, 2 << 40, 3 << 40, None, 1.0, 4 << 40, 132)


@needs_nvcc
@pytest.mark.parametrize("input_format", ["bf16", "fp32"])
def test_realigned_kernel_moves_16_byte_chunks(input_format):
    """Per row a warp holds one 16-byte load a lane and lane 31's chunk 32. A whole tile stores C's rows as
    8-byte chunks (2-byte inputs; fp32: words, 128 contiguous bytes a warp instruction) and T's as 16-byte
    chunks, a row's first and last chunk after the tile in naturally aligned pieces; an edge tile stores
    32-bit words. No local memory: the chunks in flight stay in registers."""
    from linear_layouts.ops.kernels import realigned_cast_kernel

    kernel = realigned_cast_kernel(input_format, "e4m3")
    ptx = count_ptx(compile_ptx(kernel.source))
    rw = kernel.tile_rows // (kernel.threads // 32)  # rows a warp
    k = 16 // kernel.element_bytes // 4  # C's words a lane
    assert ptx["ld.global.v4.u32"] == 2 * 2 * rw  # whole tile / edge tile: lanes' chunks, lane 31's chunk 32
    # next lane's chunk and the previous word (whole tile: also the previous lane's second word); T: the
    # previous thread's words (whole tile: 4, edge tile: 1), for each of 4 rows
    assert ptx["shfl.sync.idx.b32"] == (5 + (k == 2)) * rw + 4 * 4 + 5 * rw + 4
    assert ptx["st.global.v4.b32"] == 4  # T's 16-byte chunks: 4 rows of T a thread
    assert ptx["st.global.v2.b32"] == (rw if k == 2 else 0) + 2  # C's 8-byte chunks; T's first and last 8 bytes
    assert ptx["st.global.b32"] == k * rw + 4 * 4 + (0 if k == 2 else rw) + 2 + (2 if k == 2 else 0)
    assert not any(op.startswith(("ld.local", "st.local")) for op in ptx)  # the loaded chunks stay in registers


def test_casts_with_narrow_rows_of_t_keep_16_byte_loads():
    """Rows of X and C that 16 bytes align keep the vectorized kernel whatever T's rows: narrower T stores at
    256 x 64 tiles (T's runs 256 bytes long), the tall tile also where T's rows start 16 bytes into a sector from
    DRAM; rows of X that 16 bytes do not align take the misaligned-row kernels."""
    from linear_layouts.ops.launches import cast_launches

    def kernel(m, n, fmt="bf16", out_t=3 << 40):
        (launch,) = cast_launches(fmt, "e4m3", m, n, 1 << 40, 2 << 40, out_t, None, 1.0, 4 << 40, GridShape(132))
        k = launch.kernel
        return k.name.split("_")[3] if k.name.count("_") > 3 else "vector", k.tile_rows, k.tile_cols, k.dst_vector

    assert kernel(4104, 8192) == ("vector", 256, 64, 8) and kernel(4097, 8192, "fp32") == ("vector", 256, 64, 1)
    assert kernel(4112, 8192) == ("vector", 256, 64, 16)  # 64 MiB from DRAM: rows of T 16 bytes into a sector
    assert kernel(4096, 8192) == ("vector", 64, 128, 16)  # from DRAM: the smaller of equals (CAST_SMALLER_OF_EQUALS)
    assert kernel(8192, 28672) == ("vector", 128, 128, 16)  # 13.6 waves of 128 x 128: the largest (rule 2)
    assert kernel(4096, 8192, out_t=(3 << 40) + 16) == ("vector", 256, 64, 16)
    assert kernel(1040, 1024) == ("vector", 64, 128, 16)  # in L2 (sectors cost no DRAM access): the fast list
    assert kernel(4095, 8192)[0] == "vector" and kernel(4096, 8191)[0] == "chunked"


@pytest.mark.parametrize("w, vector, cols, rows", [
    (2, 1, 145, 8),   # 2-byte accesses: 16 bytes a thread in 8 of them (was 4: a 1 KiB tile)
    (1, 1, 401, 4),   # 1-byte accesses: 8 a thread already (16 bytes would take 16)
    (1, 1, 21, 32),   # rows of 21 bytes: 8 one-byte accesses a thread
    (1, 2, 111, 16),  # 2-byte accesses of bytes: 8 of them
    (4, 1, 373, 8),   # 4-byte accesses: 4 of them make 16 bytes
    (2, 8, 128, 32),  # 16-byte vectors: 8 KiB tiles, as before
    (2, 2, 66, 8),
])
def test_rows_tiles_keep_enough_in_flight(w, vector, cols, rows):
    """``rows_tile``: rows enough for ``ROWS_THREAD_BYTES`` a thread in at most ``ROWS_THREAD_ACCESSES`` accesses
    (and 4 accesses at least), each element once."""
    config = rows_tile(w, vector, cols)
    assert config.rows == rows and not config.transposed
    per_thread = config.rows * config.cols // config.threads  # elements a thread moves
    assert per_thread // vector >= 4
    assert per_thread * w >= ROWS_THREAD_BYTES or per_thread // vector >= ROWS_THREAD_ACCESSES
    tile_layouts(config)


def test_the_cast_takes_the_smaller_of_equal_tiles_from_dram():
    """Rule 4's tie (as many bytes in flight: 8 CTAs of 16 KiB, 16 of 8 KiB): the transposes take the larger tile,
    the cast-transpose the smaller (``CAST_SMALLER_OF_EQUALS``); rule 2 (many waves) and L2 are left as they were."""
    from linear_layouts.ops.kernels import CAST_SMALLER_OF_EQUALS, cast_tiles

    tiles = cast_tiles(16, 16)
    h200 = GridShape(132, 60 << 20)
    big, small = tiles
    assert resident_ctas(big) * big.tile_bytes == resident_ctas(small) * small.tile_bytes
    assert choose_tile(tiles, 4096, 4096, 1, h200, 4) == big
    assert CAST_SMALLER_OF_EQUALS and choose_tile(tiles, 4096, 4096, 1, h200, 4, True) == small
    assert choose_tile(tiles, 8192, 28672, 1, h200, 4, True) == big      # rule 2: 13.6 waves
    assert choose_tile(tiles, 2048, 2048, 1, h200, 4, True) == small     # in L2: rule 3's choice, unchanged
    assert choose_tile(tiles, 2048, 2048, 1, h200, 4, False) == small


def test_row_moves_from_dram_take_eight_warps_of_sixteen_byte_accesses():
    """``rows_tile(..., dram=True)`` (a problem that moves more than the L2): 8 warps on the same tile where its
    accesses are 16 bytes and its rows hold a row of lanes per warp; 4 otherwise, and always within the L2."""
    from linear_layouts.ops.kernels import ROWS_DRAM_WARPS

    device = GridShape(132, 60 * 2**20)
    big = plan_permutation((8, 2048, 8, 128), (0, 2, 1, 3), 2)       # 32 MiB: 64 MiB moved
    small = plan_permutation((2, 431, 52, 32), (0, 2, 1, 3), 2)      # 2.7 MiB
    narrow = plan_permutation((8, 2048, 8, 127), (0, 2, 1, 3), 2)    # rows of 254 bytes: 2-byte accesses
    for problem, warps in ((big, ROWS_DRAM_WARPS), (small, 4), (narrow, 4)):
        config = tile_for(problem, 0, 0, device)
        assert config.warps == warps, problem
        assert (config.rows, config.cols) == (rows_tile(2, config.src_vector, problem.cols).rows,
                                              rows_tile(2, config.src_vector, problem.cols).cols)
    assert tile_for(big, 0, 0, GridShape(132, 128 * 2**20)).warps == 4  # an L2 that holds it


def test_the_ops_tiles_keep_the_conversion_they_were_calibrated_on():
    """The planner weighs ldmatrix.trans for a 16-bit transpose (its plan for these tile layouts), but the ops'
    tiles keep the optimal swizzle's words-in, elements-out conversion; ``TileConfig.ldmatrix`` asks for the other."""
    from linear_layouts.analysis import plan_conversion
    from linear_layouts.ops.kernels import permute_kernel

    config = transpose_tiles(2, 8, 8)[0]
    assert any(getattr(step, "trans", False) for step in plan_conversion(*tile_layouts(config), 16).steps)
    calls = "ll_ldsm_x4_t("  # the prelude defines it once; every further occurrence is a call
    assert permute_kernel(config, 1).source.count(calls) == 1
    ldmatrix = dataclasses.replace(config, ldmatrix=True, row_lanes=0)
    assert permute_kernel(ldmatrix, 1).source.count(calls) > 1
