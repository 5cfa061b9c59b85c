"""Row lanes of the ops' transposes (``TileConfig.row_lanes``, ``kernels.dram_tile``) and the ``ldmatrix.trans``
tiles (``TileConfig.ldmatrix``): which problems the rule gives 4 row lanes, and every such tile emulated element
for element (masked edge tiles, batched) against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

from linear_layouts.codegen.emulate import find_cxx
from linear_layouts.ops.kernels import DRAM_ROW_LANES, DRAM_WARPS, GridShape, TileConfig, dram_tile
from linear_layouts.ops.launches import _plan, pointer_alignment, tile_for

from ._emulated import DST, SRC, emulated_permute

H200 = GridShape(132, 60 << 20)
_RNG = np.random.default_rng(11)


def _tile(shape, dims, itemsize, device=H200) -> TileConfig:
    """The tile ``ops`` takes for ``np.transpose(x, dims)`` of a ``shape`` array of ``itemsize``-byte elements."""
    return tile_for(_plan(tuple(shape), tuple(dims), itemsize, pointer_alignment(SRC, DST)), SRC, DST, device)


@pytest.mark.parametrize("shape, dims, itemsize, lanes", [
    ((32, 64, 112, 112), (0, 2, 3, 1), 2, DRAM_ROW_LANES),   # NCHW -> NHWC fp16, 49 MiB: from DRAM, 64 x 64 tiles
    ((32, 112, 112, 64), (0, 3, 1, 2), 2, DRAM_ROW_LANES),   # NHWC -> NCHW
    ((2048, 12288), (1, 0), 2, DRAM_ROW_LANES),              # 2-D, 48 MiB
    ((24, 80, 12552), (0, 2, 1), 2, DRAM_ROW_LANES),         # the GPU tests' case: edge tiles both ways
    ((32, 512, 28, 28), (0, 2, 3, 1), 2, 0),                 # 24 MiB: in L2 between launches (raster "n")
    ((8192, 8192), (1, 0), 2, 0),                            # 128 x 128 tiles
    ((32, 64, 112, 112), (0, 2, 3, 1), 4, 0),                # 32-bit
    ((6144, 6144), (1, 0), 1, 0),                            # 8-bit
])
def test_the_rule_takes_16_bit_64_row_tiles_from_dram(shape, dims, itemsize, lanes):
    tile = _tile(shape, dims, itemsize)
    assert tile.row_lanes == lanes
    assert not lanes or (tile.rows, tile.cols, tile.warps, itemsize) == (64, 64, DRAM_WARPS, 2)


def test_dram_tile_leaves_other_tiles_and_given_lanes_alone():
    moved = 200 << 20
    for warps in (4, 8):
        tile = dram_tile(TileConfig(2, 64, 64, warps, 8, 8), moved, H200)
        assert (tile.warps, tile.row_lanes) == (DRAM_WARPS, DRAM_ROW_LANES)
    sixteen = TileConfig(2, 64, 64, 4, 8, 8)
    assert dram_tile(sixteen, 40 << 20, H200) is sixteen                      # L2-resident
    for other in (TileConfig(2, 128, 128, 8, 8, 8), TileConfig(2, 128, 64, 8, 8, 1),  # 128 rows; narrow stores
                  TileConfig(4, 64, 64, 4, 4, 4), TileConfig(1, 64, 64, 4, 16, 16),   # 32-bit, 8-bit
                  TileConfig(2, 64, 64, 4, 8, 8, row_lanes=2), TileConfig(2, 64, 64, 4, 8, 8, ctas_per_sm=2)):
        assert dram_tile(other, moved, H200) is other


def test_repr_shows_row_lanes_and_ldmatrix_only_where_set():
    """Kernel names hash the tile's text: the tiles of before keep their names."""
    assert "row_lanes" not in repr(TileConfig(2, 64, 64, 4, 8, 8))
    assert repr(TileConfig(2, 64, 64, 4, 8, 8, row_lanes=4, ldmatrix=True)).endswith(
        "ctas_per_sm=0, row_lanes=4, ldmatrix=True)")


@pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
@pytest.mark.parametrize("rows, cols, warps, lanes, ldmatrix", [
    (64, 64, 4, 4, False), (64, 64, 8, 4, False), (64, 64, 4, 2, False), (128, 128, 8, 4, False),
    (128, 128, 8, 8, False), (64, 64, 4, 4, True), (64, 64, 8, 0, True), (128, 128, 16, 4, True),
    (32, 32, 4, 4, False),
])
def test_every_element_emulated(rows, cols, warps, lanes, ldmatrix):
    """Each variant on a batch of matrices that cut the edge tiles on both sides, and unbatched."""
    tile = TileConfig(2, rows, cols, warps, 8, 8, row_lanes=lanes, ldmatrix=ldmatrix)
    a = _RNG.integers(0, 1 << 16, size=(2, rows + 24, cols + 40), dtype=np.uint16)
    assert np.array_equal(emulated_permute(a, (0, 2, 1), tile=tile), np.transpose(a, (0, 2, 1)))
    assert np.array_equal(emulated_permute(a[1], (1, 0), tile=tile), a[1].T)


@pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
def test_the_rule_as_ops_launches_it_every_element():
    """A problem past the raster bound on a made-up device of a small L2, so that the emulated buffers stay small:
    the 4-row-lane tile is what ``permute_launches`` takes, and it transposes every element."""
    tiny = GridShape(4, 64 << 10)
    a = _RNG.integers(0, 1 << 16, size=(3, 192, 136), dtype=np.uint16)
    tile = _tile(a.shape, (0, 2, 1), 2, tiny)
    assert (tile.rows, tile.warps, tile.row_lanes) == (64, DRAM_WARPS, DRAM_ROW_LANES)
    assert np.array_equal(emulated_permute(a, (0, 2, 1), sms=tiny), np.transpose(a, (0, 2, 1)))


@pytest.mark.parametrize("shape, dims, itemsize, tiny", [
    ((4, 7, 7, 160), (0, 3, 1, 2), 4, True),     # 12 tiles of 64 x 64 on 132 SMs: 32 x 32 (40 tiles)
    ((100, 75), (1, 0), 4, True),
    ((64, 7, 7, 96), (0, 3, 1, 2), 4, True),     # 128 tiles < 132
    ((256, 7, 7, 96), (0, 3, 1, 2), 4, False),   # 512 tiles of 64 x 64
    ((1, 17, 17, 480), (0, 3, 1, 2), 1, False),  # 8-bit 16-byte loads: no 32 x 32 layout of them, 64 x 64 stays
])
def test_launch_bound_narrow_problems_take_the_tiny_tile(shape, dims, itemsize, tiny):
    from linear_layouts.ops.kernels import TINY_TILE

    tile = _tile(shape, dims, itemsize)
    assert ((tile.rows, tile.cols, tile.warps) == TINY_TILE) == tiny


@pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
@pytest.mark.parametrize("shape, dims, dtype", [
    ((4, 7, 7, 160), (0, 3, 1, 2), np.uint32), ((37, 50), (1, 0), np.uint16), ((131, 67), (1, 0), np.uint8),
    ((3, 33, 65), (0, 2, 1), np.uint64), ((2, 45, 45, 9), (0, 3, 1, 2), np.uint32),
])
def test_tiny_tiles_every_element(shape, dims, dtype):
    """The tiny tile as ``ops`` launches it, masked edges on both sides, every element size."""
    a = _RNG.integers(0, np.iinfo(dtype).max, size=shape, dtype=dtype, endpoint=True)
    assert np.array_equal(emulated_permute(a, dims), np.transpose(a, dims))
