"""The small-block kernel (``codegen.permute_small``) without a GPU: the emitted kernel run by the emulator on
batches of small blocks against ``np.transpose`` (odd sizes, 1- to 8-byte elements, a last run shorter than the
others, fewer CTAs than runs, misaligned bases, every shared layout and gather order), bytes around the output
unwritten; the block map and the bank analysis that picks the shared layout; which batches ``ops`` gives it; nvcc
compiles a few emitted sources."""

from __future__ import annotations

import numpy as np
import pytest

from linear_layouts.codegen.emulate import emulate_launch, find_cxx
from linear_layouts.codegen.permute_small import (
    SHARED_LAYOUTS, block_map, check_block, choose_shared_layout, emit_small_kernel, read_wavefronts, shared_address,
)
from linear_layouts.core.errors import LayoutError
from linear_layouts.ops import launches
from linear_layouts.ops.kernels import GridShape, MIN_TILE_BYTES
from linear_layouts.ops.launches import Launch, permute_launches, pointer_alignment, small_blocks
from linear_layouts.ops.plan import plan_permutation

from ._emulated import UNWRITTEN, emulated_permute

_DTYPES = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_H200 = GridShape(132)
needs_cxx = pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")


def _random(shape, w: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 2 ** (8 * w) - 1, size=shape, dtype=np.uint64).astype(_DTYPES[w])


def _transpose_block(rows: int, cols: int) -> tuple[tuple[int, int, int], ...]:
    """The block of a ``rows x cols`` transpose: output ``(c, r)`` at ``c rows + r`` reads ``r cols + c``."""
    return ((rows, cols, 1), (cols, 1, rows))


# ------------------------------------------------------------------------------------------------ the block
def test_block_map_reads_the_permutation():
    """``f(o)``: output element ``o`` of a block reads input element ``f(o)``; a 3-D block against NumPy."""
    assert block_map(_transpose_block(2, 3)) == [0, 3, 1, 4, 2, 5]
    # a (2, 3, 4) block permuted (2, 1, 0): input strides (12, 4, 1), output shape (4, 3, 2) strides (6, 2, 1)
    block = ((2, 12, 1), (3, 4, 2), (4, 1, 6))
    expected = np.arange(24).reshape(2, 3, 4).transpose(2, 1, 0).reshape(-1)
    assert block_map(block) == list(expected)


def test_check_block_refuses_what_is_not_a_dense_block():
    assert check_block(4, _transpose_block(3, 5)) == 15
    with pytest.raises(LayoutError, match="block: the src strides"):
        check_block(4, ((3, 6, 1), (5, 1, 3)))  # padded input rows
    with pytest.raises(LayoutError, match="block: every size"):
        check_block(4, ((1, 5, 1), (5, 1, 1)))
    with pytest.raises(LayoutError, match="block: must be"):
        check_block(4, [(3, 5, 1)])
    with pytest.raises(LayoutError, match="element"):
        check_block(3, _transpose_block(3, 5))


def test_bad_arguments():
    with pytest.raises(LayoutError, match="name"):
        emit_small_kernel("not a name", 4, _transpose_block(3, 5), 8)
    with pytest.raises(LayoutError, match="run: "):
        emit_small_kernel("k", 4, _transpose_block(3, 5), 0)
    with pytest.raises(LayoutError, match="run: "):
        emit_small_kernel("k", 4, _transpose_block(3, 5), 1 << 12)  # 240 KiB a run
    with pytest.raises(LayoutError, match="warps"):
        emit_small_kernel("k", 4, _transpose_block(3, 5), 8, warps=0)
    with pytest.raises(LayoutError, match="layout"):
        emit_small_kernel("k", 4, _transpose_block(3, 5), 8, layout="diagonal")
    with pytest.raises(LayoutError, match="rotated"):
        emit_small_kernel("k", 4, _transpose_block(3, 5), 8, rotated=1)


# ------------------------------------------------------------------------------------------------ bank conflicts
def test_shared_layouts_keep_slots_whole():
    """Each layout moves whole 16-byte slots (a slot's bytes stay together, in order, at a 16-byte address), so
    the loads' 16-byte shared stores stay aligned; and it is one-to-one."""
    for layout in SHARED_LAYOUTS:
        addresses = [shared_address(layout, x) for x in range(4096)]
        assert len(set(addresses)) == 4096
        for slot in range(256):
            first = addresses[16 * slot]
            assert first % 16 == 0 and addresses[16 * slot:16 * slot + 16] == list(range(first, first + 16))


def test_the_analysis_picks_conflict_free_reads():
    """THE bank rule over a chunk's gather reads: the plain order of uint8 ``2 x 2`` transposes reads 16 bytes apart
    (4 lanes a bank: 4 wavefronts an instruction), the rotated one none twice; fp32 ``4 x 4``'s lanes 16 bytes
    apart too, which the padded layout spreads; the choice is the cheapest option."""
    run, threads = 2048, 256
    block = _transpose_block(2, 2)
    instructions = run * 4 // 32  # one 1-byte read per element, 32 lanes an instruction
    assert read_wavefronts(1, block, run, threads, "linear") == 4 * instructions
    assert read_wavefronts(1, block, run, threads, "linear", rotated=True) == instructions
    assert choose_shared_layout(1, block, run, threads) == ("linear", True)
    fp32 = _transpose_block(4, 4)
    assert read_wavefronts(4, fp32, 128, threads, "linear") == 4 * read_wavefronts(4, fp32, 128, threads, "padded")
    assert choose_shared_layout(4, fp32, 128, threads) == ("padded", False)
    for w, block, run in ((2, _transpose_block(8, 8), 64), (4, _transpose_block(3, 5), 136),
                          (8, _transpose_block(4, 4), 64)):
        layout, rotated = choose_shared_layout(w, block, run, threads)
        best = min(read_wavefronts(w, block, run, threads, x, r) for x in SHARED_LAYOUTS for r in (False, True))
        assert read_wavefronts(w, block, run, threads, layout, rotated) == best


# ------------------------------------------------------------------------------------------------ emulated kernel
def _run(kernel, a: np.ndarray, dims, ctas: int, so: int = 0, do: int = 0) -> np.ndarray:
    """The output bytes of ``kernel`` on ``a`` (its first dim the blocks) at byte offsets ``so`` / ``do``; nothing
    around the output written."""
    count = a.shape[0]
    src = np.zeros(so + a.nbytes, np.uint8)
    src[so:] = a.view(np.uint8).reshape(-1)
    dst = np.full(do + a.nbytes + 48, UNWRITTEN, np.uint8)
    out = emulate_launch(kernel, ctas, [(src, so), (dst, do), count])[1]
    assert (out[:do] == UNWRITTEN).all() and (out[do + a.nbytes:] == UNWRITTEN).all()
    return out[do:do + a.nbytes].tobytes()


@needs_cxx
@pytest.mark.parametrize("w, shape, dims, run, offsets", [
    (1, (1001, 2, 2), (0, 2, 1), 64, (0, 0)), (1, (333, 3, 7), (0, 2, 1), 50, (1, 3)),
    (2, (77, 8, 8), (0, 2, 1), 16, (2, 6)), (2, (130, 5, 3), (0, 2, 1), 33, (0, 14)),
    (4, (37, 3, 5), (0, 2, 1), 8, (0, 0)), (4, (100, 4, 4), (0, 2, 1), 32, (4, 12)),
    (4, (29, 7, 7, 3), (0, 3, 1, 2), 5, (8, 4)), (8, (40, 3, 3), (0, 2, 1), 5, (8, 0)),
    (8, (23, 2, 5, 3), (0, 3, 2, 1), 4, (0, 8)), (1, (64, 2, 3, 4), (0, 2, 3, 1), 17, (5, 11)),
    (2, (31, 4, 6, 2), (0, 2, 1, 3), 9, (6, 2)),
])
def test_emulated_against_numpy(w, shape, dims, run, offsets):
    """The kernel at its chosen layout, every batch a whole number of runs or not, against ``np.transpose``; the
    block from the reduced problem (``small_blocks`` with a tile no block fills)."""
    a = _random(shape, w, seed=len(shape) + w)
    problem = plan_permutation(shape, dims, w, pointer_alignment(*offsets))  # words of rows only where aligned
    block, count = small_blocks(problem, 0, 0, _Huge())
    assert count == shape[0]
    kernel = emit_small_kernel("k", problem.element_bytes, block, run)  # rows of 2 fp16: 4-byte words
    got = _run(kernel, a, dims, kernel.runs(count), *offsets)
    assert got == np.ascontiguousarray(np.transpose(a, dims)).tobytes()


class _Huge:
    """A stand-in for the kernel a problem took before: a tile no small block fills."""

    tile_rows = tile_cols = 1 << 12


@needs_cxx
@pytest.mark.parametrize("w", [1, 2, 4, 8])
@pytest.mark.parametrize("layout, rotated", [(x, r) for x in SHARED_LAYOUTS for r in (False, True)])
def test_every_layout_and_order(w, layout, rotated):
    """Each shared layout and gather order moves the same bytes; 3 CTAs loop over 10 runs (a grid-stride loop),
    the last one short, both bases misaligned."""
    a = _random((200, 3, 4), w, seed=w)
    kernel = emit_small_kernel("k", w, _transpose_block(3, 4), 21, warps=2, layout=layout, rotated=rotated)
    assert (kernel.layout, kernel.rotated) == (layout, rotated)
    assert _run(kernel, a, (0, 2, 1), 3, 3 * w, w) == np.ascontiguousarray(np.transpose(a, (0, 2, 1))).tobytes()


@needs_cxx
@pytest.mark.parametrize("shape, dims, w, offsets", [
    ((1000, 2, 2), (0, 2, 1), 1, (0, 0)), ((1000, 2, 2), (0, 2, 1), 1, (3, 1)), ((1000, 3, 5), (0, 2, 1), 4, (4, 8)),
    ((300, 8, 8), (0, 2, 1), 2, (2, 0)), ((600, 7, 7, 3), (0, 3, 1, 2), 4, (0, 12)), ((50, 5, 3), (0, 2, 1), 8, (8, 8)),
    ((40, 3, 4, 4), (0, 2, 3, 1), 2, (0, 0)), ((700, 3, 3), (0, 2, 1), 16, (0, 0)), ((500, 2, 3, 4), (0, 3, 2, 1), 2, (2, 4)),
])
def test_ops_takes_it(shape, dims, w, offsets):
    """``ops.permute``'s launches (one small-block launch) run emulated equal ``np.transpose``, at element offsets
    the plan sees (``pointer_alignment``) and the kernel computes with."""
    launches_ = permute_launches(shape, dims, w, (1 << 40) + offsets[0], (2 << 40) + offsets[1], _H200)
    assert [type(x) for x in launches_] == [Launch] and "small" in launches_[0].kernel.name
    if w == 16:  # 16-byte elements move as pairs of 8-byte halves
        a = _random(shape + (2,), 8, seed=5).view(np.dtype((np.void, 16))).reshape(shape)
    else:
        a = _random(shape, w, seed=5)
    expected = np.ascontiguousarray(np.transpose(a, dims))
    assert emulated_permute(a, dims, *offsets).tobytes() == expected.tobytes()


@needs_cxx
def test_a_launch_cut_to_fewer_ctas(monkeypatch):
    """With ``MAX_LAUNCH_CTAS`` lowered, one launch of fewer CTAs than runs still moves every run."""
    monkeypatch.setattr(launches, "MAX_LAUNCH_CTAS", 2)
    a = _random((9000, 2, 2), 1, seed=9)
    items = permute_launches(a.shape, (0, 2, 1), 1, 1 << 40, 2 << 40, _H200)
    assert len(items) == 1 and items[0].ctas == 2 and items[0].kernel.runs(9000) == 5
    assert np.array_equal(emulated_permute(a, (0, 2, 1)), np.transpose(a, (0, 2, 1)))


# ------------------------------------------------------------------------------------------------ planning
def _kernel(shape, dims, w, src=0, dst=0):
    return permute_launches(shape, dims, w, (1 << 40) + src, (2 << 40) + dst, _H200)[0].kernel


def test_which_batches_take_it():
    """``small_blocks``: dense blocks of at most ``MIN_TILE_BYTES`` filling less than ``MIN_TILE_USE`` of the tile
    they took, the outermost dim staying outermost."""
    assert _kernel((1000000, 2, 2), (0, 2, 1), 1).name == "ll_permute_small_8b_2x2_p10"
    assert _kernel((100000, 3, 5), (0, 2, 1), 4).name == "ll_permute_small_32b_3x5_p10"
    assert _kernel((100000, 8, 8), (0, 2, 1), 2).name == "ll_permute_small_16b_8x8_p10"
    assert _kernel((10000, 7, 7, 3), (0, 3, 1, 2), 4).name == "ll_permute_small_32b_49x3_p10"
    assert _kernel((5000, 4, 4, 16), (0, 2, 1, 3), 4).name == "ll_permute_small_32b_4x4x16_p102"  # rows of a block
    assert _kernel((5000, 2, 3, 4), (0, 3, 2, 1), 2).name == "ll_permute_small_16b_2x3x4_p210"    # a 3-D block
    assert "small" in _kernel((1000000, 2, 2), (0, 2, 1), 1, 1, 3).name                         # any element offset
    # a 100000 x 3 x 5 batch is 736 runs of 136 blocks (8160 bytes), one CTA each
    item = permute_launches((100000, 3, 5), (0, 2, 1), 4, 0, 0, _H200)[0]
    assert item.ctas == 736 and item.values[2:] == (100000,) and item.kernel.run == MIN_TILE_BYTES // 60
    # kept: a block that fills its tile, a block over 8 KiB, the batch dim moving, a transpose with no batch
    assert "small" not in _kernel((1000, 32, 32), (0, 2, 1), 4).name   # fills the 32 x 32 tile
    assert "small" not in _kernel((1000, 40, 40), (0, 2, 1), 4).name   # 1600 elements of 32 x 32 tiles
    assert "small" not in _kernel((100, 48, 48), (0, 2, 1), 4).name    # 9 KiB blocks
    assert "small" not in _kernel((3, 5, 100000), (2, 1, 0), 4).name   # the outer dim moves
    assert "small" not in _kernel((2, 4096), (1, 0), 2).name
    assert "small" not in _kernel((64, 224, 224, 3), (0, 3, 1, 2), 1).name  # 147 KiB images: the interleave kernel


def test_tiled_ctas_under_small_tiled_cta_bytes_give_way(monkeypatch):
    """A block that fills its tile stays with the tiled kernel only where a CTA of it moves ``SMALL_TILED_CTA_BYTES``
    or more: blocks of several small matrices (one matrix a CTA) and small matrices in small tiles go to the
    small-block kernel."""
    assert launches.SMALL_TILED_CTA_BYTES == 1024
    # blocks of three 2 x 63 matrices: the 2 x 64 tile is 98% full, but its CTA moves 126 bytes
    assert "small" in _kernel((167622, 2, 3, 63), (0, 3, 2, 1), 1).name
    # NCHW -> NHWC of 4 x 11 x 11 images: one 4 x 121 matrix (484 bytes) fills 95% of a 4 x 128 tile
    assert "small" in _kernel((6901, 4, 11, 11), (0, 2, 3, 1), 1).name
    # a CTA of 1 KiB or more keeps its tile: 8 x 64 fp16 matrices (1 KiB), 32 x 32 fp32 (4 KiB)
    assert "small" not in _kernel((5000, 8, 64), (0, 2, 1), 2).name
    assert "small" not in _kernel((1000, 32, 32), (0, 2, 1), 4).name
    monkeypatch.setattr(launches, "SMALL_TILED_CTA_BYTES", 0)  # the bar off: as before
    assert "small" not in _kernel((167622, 2, 3, 63), (0, 3, 2, 1), 1).name
    assert "small" not in _kernel((6901, 4, 11, 11), (0, 2, 3, 1), 1).name
    monkeypatch.setattr(launches, "SMALL_TILED_CTA_BYTES", -1)
    with pytest.raises(LayoutError, match="SMALL_TILED_CTA_BYTES: must be an int, 0 or more"):
        _kernel((167622, 2, 3, 63), (0, 3, 2, 1), 1)


def test_blocks_up_to_32_kib_from_tiled_ctas_under_the_bar(monkeypatch):
    """From a tiled kernel whose CTAs move under ``SMALL_TILED_CTA_BYTES``, blocks up to
    ``SMALL_TILED_CTA_BLOCK_BYTES`` (one block a run); from other kernels 8 KiB as before."""
    assert launches.SMALL_TILED_CTA_BLOCK_BYTES == 32 * 1024
    item = permute_launches((1023, 3, 63, 63), (0, 3, 2, 1), 2, 0, 0, _H200)[0]  # 23 KiB blocks of 3 x 63 matrices
    assert "small" in item.kernel.name and item.ctas == 1023 and item.kernel.run == 1
    assert "small" not in _kernel((30, 3, 90, 63), (0, 3, 2, 1), 2).name  # 33 KiB blocks
    assert "small" not in _kernel((100, 48, 48), (0, 2, 1), 4).name       # 9 KiB blocks of 4 KiB tiled CTAs
    assert "small" not in _kernel((131, 3, 63, 63), (0, 3, 2, 1), 2).name  # fewer blocks than the 132 SMs
    monkeypatch.setattr(launches, "SMALL_TILED_CTA_BLOCK_BYTES", 16 * 1024)
    assert "small" not in _kernel((1023, 3, 63, 63), (0, 3, 2, 1), 2).name


@needs_cxx
@pytest.mark.parametrize("shape, dims, w", [((3000, 2, 3, 63), (0, 3, 2, 1), 1), ((700, 4, 11, 11), (0, 2, 3, 1), 1),
                                            ((500, 3, 5, 9), (0, 3, 2, 1), 2), ((132, 3, 63, 63), (0, 3, 2, 1), 2),
                                            ((140, 2, 40, 31), (0, 3, 2, 1), 8)])
def test_blocks_taken_from_small_tiled_ctas_are_exact(shape, dims, w):
    assert "small" in _kernel(shape, dims, w).name
    a = _random(shape, w, seed=11)
    assert emulated_permute(a, dims).tobytes() == np.ascontiguousarray(np.transpose(a, dims)).tobytes()


def test_small_blocks_needs_element_aligned_addresses():
    problem = plan_permutation((1000, 3, 5), (0, 2, 1), 4)
    assert small_blocks(problem, 0, 0, _Huge()) == (((3, 5, 1), (5, 1, 3)), 1000)
    assert small_blocks(problem, 2, 0, _Huge()) is None and small_blocks(problem, 0, 6, _Huge()) is None
    assert pointer_alignment(4, 12) == 4  # the plan sees these; the kernel takes any element offset


def test_blocks_up_to_small_block_bytes(monkeypatch):
    """``ops.permute`` takes blocks up to ``SMALL_BLOCK_BYTES`` (read at each call) from the aligned interleave kernel,
    which keeps larger ones; from any other kernel (its ``_any`` form at other offsets, the tiled kernel) blocks up to
    ``MIN_TILE_BYTES``."""
    assert launches.SMALL_BLOCK_BYTES == 1024
    assert "small" in _kernel((20000, 3, 16, 16), (0, 2, 3, 1), 1).name        # 768 bytes from interleave_8b_n3
    assert _kernel((20000, 16, 16, 3), (0, 3, 1, 2), 2).name == "ll_permute_deinterleave_16b_n3_d1"  # 1536 bytes
    assert "small" in _kernel((20000, 16, 16, 3), (0, 3, 1, 2), 2, 2, 2).name  # the same at other offsets: _any
    assert "small" in _kernel((49457, 5, 13, 10), (0, 2, 3, 1), 2).name       # 1300 bytes from interleave_16b_n5_any
    assert "small" in _kernel((11978, 23, 9), (0, 2, 1), 8).name              # 1656 bytes from the tiled kernel
    monkeypatch.setattr(launches, "SMALL_BLOCK_BYTES", MIN_TILE_BYTES)
    assert "small" in _kernel((20000, 16, 16, 3), (0, 3, 1, 2), 2).name
    monkeypatch.setattr(launches, "SMALL_BLOCK_BYTES", 512)
    assert "interleave" in _kernel((20000, 3, 16, 16), (0, 2, 3, 1), 1).name


def test_off_switch(monkeypatch):
    """``SMALL_BATCHES = False`` gives every batch back to the kernel it took before, byte for byte (the tiled
    kernel unfolded: ``FOLD_BATCH`` came after)."""
    monkeypatch.setattr(launches, "SMALL_BATCHES", False)
    monkeypatch.setattr(launches, "FOLD_BATCH", False)
    assert _kernel((1100000, 2, 2), (0, 2, 1), 1).name == "ll_permute_deinterleave_8b_n2_d1_any"  # 4.2 MiB
    assert "interleave" in _kernel((100000, 3, 5), (0, 2, 1), 4).name
    item = permute_launches((100000, 8, 8), (0, 2, 1), 2, 0, 0, _H200)[0]
    assert "small" not in item.kernel.name and item.ctas == 100000


# ------------------------------------------------------------------------------------------------ nvcc
@pytest.mark.parametrize("shape, dims, w", [((1000000, 2, 2), (0, 2, 1), 1), ((100000, 3, 5), (0, 2, 1), 4),
                                            ((100000, 8, 8), (0, 2, 1), 2), ((10000, 7, 7, 3), (0, 3, 1, 2), 4),
                                            ((10000, 3, 3), (0, 2, 1), 8)])
def test_compiles_for_sm_90_without_spills(shape, dims, w, tmp_path):
    """nvcc (sm_90, ``-Xptxas -v``) compiles the kernel ``ops`` picks with no stack frame, no spills, at most 64
    registers (8 CTAs of 256 threads an SM)."""
    import re
    import subprocess

    from linear_layouts.codegen.ptx import find_nvcc
    if find_nvcc() is None:
        pytest.skip("no nvcc")
    kernel = _kernel(shape, dims, w)
    (tmp_path / "k.cu").write_text(kernel.source)
    report = subprocess.run([find_nvcc(), "-arch=sm_90", "-cubin", "-w", "-Xptxas", "-v", "-o",
                             str(tmp_path / "k.cubin"), str(tmp_path / "k.cu")],
                            capture_output=True, text=True, check=True).stderr
    assert re.search(r"0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads", report), report
    assert int(re.search(r"Used (\d+) registers", report).group(1)) <= 64
