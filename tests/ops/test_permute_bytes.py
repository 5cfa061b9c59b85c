"""The byte transpose (``codegen.permute_bytes``) without a GPU: the emitted kernel, run by the emulator with every
byte around ``A`` a read that aborts and guard bytes after the output, writes ``np.transpose`` bit for bit and
nothing outside it, on odd shapes at odd offsets of both matrices, batched problems (``ldb != rows``), tiny ones,
one and two items a thread, every granule and both raster orders; its shared stores hit 32 distinct banks; ``ops``
takes it where ``launches._bytes_by_default`` says and only there; with nvcc, the ops' tile compiles for sm_90
without spills."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from linear_layouts.analysis.bank_simulator import instruction_wavefronts
from linear_layouts.codegen.emulate import find_cxx
from linear_layouts.codegen.permute import MAX_KERNEL_BATCH_DIMS
from linear_layouts.codegen.permute_bytes import (
    column_pitch, column_start, emit_byte_transpose_kernel, items, shared_bytes, thread_registers,
)
from linear_layouts.codegen.ptx import find_nvcc
from linear_layouts.core.errors import LayoutError
from linear_layouts.ops import launches
from linear_layouts.ops.kernels import BYTE_TRANSPOSE_TILE, ByteTile, GridShape, byte_transpose_kernel
from linear_layouts.ops.plan import plan_permutation

from ._emulated import compiles_without_spills, emulated_permute
from .test_permute_chunks import _launch, _random

_CXX = pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
_H200 = GridShape(132, 50 * 2**20)


def _check(shape, dims, tile, src_offset=0, dst_offset=0, granule=16, raster="n") -> None:
    a = _random(shape, 1)
    problem = plan_permutation(shape, dims, 1)
    assert problem.kind.value == "transpose"
    kernel = emit_byte_transpose_kernel("k", *tile, batch_dims=len(problem.batch), granule_bytes=granule,
                                        raster=raster)
    got = _launch(kernel, problem, a, src_offset, dst_offset, a.nbytes)
    expected = np.ascontiguousarray(np.transpose(a, dims))
    assert np.array_equal(got.reshape(expected.shape), expected)


@_CXX
@pytest.mark.parametrize("shape, dims, tile, src_offset, dst_offset, granule", [
    ((45, 64), (1, 0), (32, 32, 2), 0, 3, 16),           # A aligned, B 3 bytes off
    ((131, 77), (1, 0), (32, 32, 1), 3, 7, 16),          # both rows odd, interior tiles, two items a thread
    ((300, 290), (1, 0), (128, 128, 9), 3, 5, 16),       # a tile of the default emitter, interior tiles
    ((3, 29, 19), (0, 2, 1), (32, 16, 1), 1, 2, 16),     # batched, one chunk a loaded row (K = 1)
    ((9, 5, 24), (2, 1, 0), (32, 16, 1), 7, 10, 16),     # (2, 1, 0): ldb = 45 != rows = 9
    ((3, 16), (1, 0), (32, 16, 1), 0, 7, 16),            # fewer rows than a granule
    ((396, 188), (1, 0), (128, 128, 10), 14, 37, 32),    # 32-byte granules: 31 rows above, 2 more chunks last
    ((2, 131, 97), (0, 2, 1), (64, 32, 2), 3, 17, 32),
    ((245, 166), (1, 0), (128, 64, 5), 15, 51, 64),      # 64-byte granules
    ((5, 9, 140), (2, 1, 0), (128, 32, 3), 0, 33, 64),
])
def test_every_byte_once(shape, dims, tile, src_offset, dst_offset, granule):
    _check(shape, dims, tile, src_offset, dst_offset, granule)


@_CXX
@settings(max_examples=12, deadline=None)
@given(m=st.integers(1, 140), n=st.integers(1, 90), batch=st.integers(1, 3), src_offset=st.integers(0, 15),
       dst_offset=st.integers(0, 70), granule=st.sampled_from((16, 32, 64)), raster=st.sampled_from(("n", "m")))
def test_random_problems(m, n, batch, src_offset, dst_offset, granule, raster):
    """Random sizes (transposes of ``m x n`` bytes, ``batch`` of them), offsets, granules and raster orders at a
    tile of one or two items a thread: ``np.transpose`` exactly, nothing around it written, nothing around ``A`` read."""
    shape, dims = ((m, n), (1, 0)) if batch == 1 else ((batch, m, n), (0, 2, 1))
    if plan_permutation(shape, dims, 1).kind.value != "transpose":
        return
    _check(shape, dims, (max(32, 2 * granule), 32, 2 if granule == 64 else 1), src_offset, dst_offset, granule, raster)


@_CXX
@pytest.mark.parametrize("shape, dims, tile, granule", [((300, 200), (1, 0), (64, 32, 2), 32),
                                                         ((3, 131, 97), (0, 2, 1), (64, 32, 2), 32),
                                                         ((9, 5, 140), (2, 1, 0), (64, 64, 3), 16)])
def test_raster_m(shape, dims, tile, granule):
    """Tiles taken down the columns of tiles (``permute.tile_index_lines``' order ``"m"``)."""
    _check(shape, dims, tile, 5, 3, granule, raster="m")


@_CXX
def test_ops_launches_it_at_a_tile():
    """``permute_launches`` at a ``ByteTile``: ``ops.permute``'s result, emulated, at odd offsets."""
    a = _random((3, 150, 70), 1)
    got = emulated_permute(a, (0, 2, 1), 5, 9, tile=ByteTile(64, 32, 3, 32))
    assert np.array_equal(got, np.transpose(a, (0, 2, 1)))


@_CXX
@pytest.mark.parametrize("extent, ctas", [(64, 2**31 - 1), (2**32 - 1, 5), (64, 3)])
def test_cut_into_launches(monkeypatch, extent, ctas):
    """Sides over ``MAX_LAUNCH_EXTENT`` and grids over ``MAX_LAUNCH_CTAS`` (lowered) cut into several launches
    (``launches.launch_pieces``), each owning its rows of the output from the cut: every byte once."""
    monkeypatch.setattr(launches, "MAX_LAUNCH_EXTENT", extent)
    monkeypatch.setattr(launches, "MAX_LAUNCH_CTAS", ctas)
    a = _random((3, 150, 130), 1)
    tile = ByteTile(64, 32, 2, 32)
    assert len(launches.permute_launches(a.shape, (0, 2, 1), 1, 3, 5, _H200, tile)) > 1
    assert np.array_equal(emulated_permute(a, (0, 2, 1), 3, 5, tile=tile), np.transpose(a, (0, 2, 1)))


def test_shared_layout_and_bank_spread():
    """Columns ``P = R + 2Q + 8`` bytes apart plus ``128 / K`` bytes every 16 columns; step 3's word stores of a warp
    (lanes: ``32 / K`` row groups by ``K`` chunks) take one wavefront for each of the 16 columns a lane stores."""
    assert column_pitch(128) == 168 and column_pitch(128, 32) == 200 and items(128, 64, 32) == 160
    assert shared_bytes(128, 128) == 128 * 168 + 8 * 16 and column_start(17, 128, 128) == 17 * 168 + 16
    for rows, cols, granule in ((128, 128, 16), (128, 64, 32), (64, 128, 32), (128, 32, 64)):
        k_chunks = cols // 16
        for column in range(16):  # column 16 j + c of lane (g, j): rows 4 g ..
            starts = [column_start(16 * (lane % k_chunks) + column, rows, cols, granule) + 4 * (lane // k_chunks)
                      for lane in range(32)]
            assert instruction_wavefronts(starts, 4, op="store") == 1, (rows, cols, granule, column)


def test_bad_arguments():
    kernel = emit_byte_transpose_kernel("k")
    assert (kernel.tile_rows, kernel.tile_cols, kernel.threads, kernel.shared_bytes) == (128, 128, 288, 21632)
    assert kernel.element_bytes == 1 and kernel.transposed and thread_registers(1) == 64
    for kwargs, message in (({"name": "1k"}, "name"), ({"tile_rows": 96}, "tile_rows: must be a power of two"),
                            ({"tile_cols": 8}, "tile_cols"), ({"warps": 0}, "warps"), ({"warps": True}, "warps"),
                            ({"granule_bytes": 8}, "granule_bytes"), ({"tile_rows": 64, "granule_bytes": 64},
                                                                      "tile_rows: must be at least twice"),
                            ({"batch_dims": MAX_KERNEL_BATCH_DIMS + 1}, "batch_dims"), ({"raster": "k"}, "raster"),
                            ({"tile_rows": 512, "warps": 4}, "warps: 4 warps cannot take 512 x 128")):
        with pytest.raises(LayoutError, match=message):
            emit_byte_transpose_kernel(**{"name": "k", **kwargs})
    with pytest.raises(LayoutError, match="tile: the byte transpose does not take"):
        launches.permute_launches((300, 200), (1, 0), 2, 0, 0, _H200, ByteTile(64, 32, 2))


def _kernel(shape, dims, dst_offset=0, device=_H200):
    return launches.permute_launches(shape, dims, 1, 1 << 40, (2 << 40) + dst_offset, device)[0].kernel


def test_ops_takes_it_where_the_rule_says(monkeypatch):
    """Output rows 16 bytes do not align, more than L2 moved, three or more tile rows loading at most 1.5 rows a
    row: the byte transpose, in raster order "m" for a problem of many L2s; else the kernels it took before."""
    takes = ["ll_permute_bytes" in _kernel(s, d, o).name for s, d, o in (
        ((6049, 8459), (1, 0), 0), ((11335, 12184), (1, 0), 0), ((6048, 8464), (1, 0), 3),  # odd, odd, offset
        ((9, 2829, 3087), (0, 2, 1), 0), ((547, 466, 561), (2, 1, 0), 0))]
    assert takes == [True] * 5
    leaves = ["ll_permute_bytes" in _kernel(s, d, o).name for s, d, o in (
        ((6048, 8464), (1, 0), 0),          # both rows aligned
        ((9648, 9480), (1, 0), 0),          # output rows aligned
        ((236, 168, 1795), (2, 1, 0), 0),   # two tile rows: edge tiles only
        ((261, 295, 467), (2, 1, 0), 0),    # 3 tile rows of 160 loaded rows for 261: 1.84 a row
        ((3, 1000, 999), (0, 2, 1), 0),     # within L2
        ((6049, 30), (1, 0), 0))]           # skinny
    assert leaves == [False] * 6
    big, mid = _kernel((6049, 8459), (1, 0)), _kernel((5000, 5999), (1, 0))
    assert big.params[-1][1] == "tiles_m_div" and mid.params[-1][1] == "tiles_n_div"  # 2 x 49 MiB > 1.25 L2s: "m"
    assert (big.tile_rows, big.tile_cols, big.threads) == (BYTE_TRANSPOSE_TILE.rows, BYTE_TRANSPOSE_TILE.cols, 160)
    monkeypatch.setattr(launches, "BYTE_TRANSPOSE", False)
    assert "ll_permute_bytes" not in _kernel((6049, 8459), (1, 0)).name


@pytest.mark.skipif(find_nvcc() is None, reason="needs nvcc")
@pytest.mark.parametrize("batch_dims, raster", [(0, "n"), (2, "m")])
def test_compiles_for_sm_90_without_spills(batch_dims, raster, tmp_path):
    tile = BYTE_TRANSPOSE_TILE
    kernel = byte_transpose_kernel(batch_dims, None, "sm_90", raster)
    rounds = -(-items(tile.rows, tile.cols, tile.granule_bytes) // kernel.threads)
    compiles_without_spills(kernel, thread_registers(rounds), tmp_path)
