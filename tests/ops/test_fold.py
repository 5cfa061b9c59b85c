"""Folded transposes (``ops.launches.fold_side``, ``codegen.permute``'s ``fold``): a batch dim runs on along a side
whose tiles leave a partial edge in every matrix (NCHW <-> NHWC of 7 x 7, 14 x 14 and 28 x 28 planes), so tiles
cross from one matrix into the next. The rule picks the side and the dim; the folded kernels, run by the emulator,
are bit-exact against NumPy and against the same launches unfolded, nothing outside the output written; the source
addresses the split side through one quotient per column a thread touches; nvcc compiles it without spills."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linear_layouts.codegen.emulate import find_cxx
from linear_layouts.codegen.ptx import find_nvcc
from linear_layouts.core.errors import LayoutError
from linear_layouts.ops import launches
from linear_layouts.ops.kernels import GridShape, TileConfig, permute_kernel
from linear_layouts.ops.launches import FOLD_BATCH, Launch, fold_side, permute_launches, tiled_arguments
from linear_layouts.ops.plan import plan_permutation

from ._emulated import DST, SRC, emulated_permute, emulated_view_permute

needs_cxx = pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
H200 = GridShape(132, 60 * 2**20, "sm_90")
#: ``FOLD_MIN_SAVED`` folding every element size wherever a tile is saved.
EVERY_SIZE = {1: 0.0, 2: 0.0, 4: 0.0, 8: 0.0, 16: 0.0}


def _folds(shape, dims, itemsize, src=SRC, dst=DST):
    """The ``fold`` of each launch ``permute_launches`` makes."""
    return [x.kernel.fold for x in permute_launches(shape, dims, itemsize, src, dst, H200) if isinstance(x, Launch)]


def test_the_rule_folds_the_side_whose_edge_tiles_are_mostly_empty():
    tile = TileConfig(4, 64, 64, 4, 4, 4)
    assert fold_side(plan_permutation((32, 1024, 196), (0, 2, 1), 4), tile) == ("cols", 0)   # NCHW -> NHWC
    assert fold_side(plan_permutation((32, 196, 1024), (0, 2, 1), 4), tile) == ("rows", 0)   # NHWC -> NCHW
    # both sides ragged: 100 in 128 leaves 0.28 of its extent empty, 196 in 256 0.31: the side of 196
    assert fold_side(plan_permutation((8, 100, 196), (0, 2, 1), 4), tile) == ("cols", 0)
    assert fold_side(plan_permutation((8, 196, 100), (0, 2, 1), 4), tile) == ("rows", 0)
    # no partial edge, no batch, a persistent tile: nothing to fold
    assert fold_side(plan_permutation((32, 1024, 256), (0, 2, 1), 4), tile) is None
    assert fold_side(plan_permutation((1000, 196), (1, 0), 4), tile) is None
    assert fold_side(plan_permutation((32, 1024, 196), (0, 2, 1), 4), TileConfig(4, 64, 64, 4, 4, 4, ctas_per_sm=2)) \
        is None


def test_the_folded_dim_is_the_one_whose_matrices_follow_each_other():
    # x[b, c, h, w] -> y[c, b, w, h] of (4, 6, 7, 9): 7 x 9 transposes; c's matrices follow each other in x
    # (rows fold: 7 rows in 64 leave more empty than 9 columns), b's in y (columns fold)
    problem = plan_permutation((4, 6, 7, 9), (1, 0, 3, 2), 2)
    assert problem.batch == ((6, 63, 252), (4, 378, 63))
    assert fold_side(problem, TileConfig(2, 64, 64, 4, 1, 1)) == ("rows", 0)
    assert problem.batch[0][1] == problem.rows * problem.lda and problem.batch[1][2] == problem.cols * problem.ldb
    # an output window with a gap between its matrices: no dim continues the side
    gapped = plan_permutation((4, 64, 49), (0, 2, 1), 2, out_strides=(49 * 64 + 8, 64, 1))
    assert fold_side(gapped, TileConfig(2, 64, 64, 4, 8, 8)) is None


def test_nchw_to_nhwc_of_small_planes_takes_one_folded_launch():
    for shape, dims, itemsize, side in [((32, 1024, 14, 14), (0, 2, 3, 1), 1, "cols"),  # 23% fewer CTAs
                                        ((32, 2048, 7, 7), (0, 2, 3, 1), 1, "cols"),
                                        ((29, 1175, 6, 6), (0, 2, 3, 1), 2, "cols"),  # 2 bytes: 41% fewer
                                        ((32, 2048, 7, 7), (0, 2, 3, 1), 2, ""),  # 2 bytes: 22% (FOLD_MIN_SAVED)
                                        ((32, 2048, 7, 7), (0, 2, 3, 1), 4, ""),  # 4 bytes: no fold
                                        ((1346, 255, 187), (0, 2, 1), 1, "cols"),
                                        ((32, 7, 7, 2048), (0, 3, 1, 2), 1, ""),  # rows: FOLD_SIDES
                                        ((32, 512, 28, 28), (0, 2, 3, 1), 2, ""),  # 6% fewer CTAs: FOLD_MIN_SAVED
                                        ((39, 2378, 181), (0, 2, 1), 2, ""),
                                        ((32, 64, 112, 112), (0, 2, 3, 1), 2, "")]:  # 12544 = 196 x 64: whole tiles
        assert _folds(shape, dims, itemsize) == [side], shape
    # full tiles along 32 x 196 columns instead of 32 with the last holding 4 of 64 columns
    (launch,) = permute_launches((32, 1024, 14, 14), (0, 2, 3, 1), 1, SRC, DST, H200)
    n = launch.kernel.tile_cols
    assert launch.values[2:6] == (1024, 32 * 196, -(-32 * 196 // n), launch.ctas // -(-32 * 196 // n))


def test_the_switches_turn_folding_off_and_on(monkeypatch):
    assert FOLD_BATCH and launches.FOLD_SIDES == ("cols",) and dict(launches.FOLD_MIN_SAVED) == {1: 0.15, 2: 0.30}
    monkeypatch.setattr(launches, "FOLD_SIDES", ("cols", "rows"))
    assert _folds((32, 7, 7, 2048), (0, 3, 1, 2), 1) == ["rows"]
    monkeypatch.setattr(launches, "FOLD_MIN_SAVED", {2: 0.0})
    assert _folds((32, 512, 28, 28), (0, 2, 3, 1), 2) == ["cols"]
    assert _folds((32, 7, 7, 2048), (0, 3, 1, 2), 1) == [""]
    monkeypatch.setattr(launches, "FOLD_MIN_SAVED", {4: 0.15})
    assert _folds((32, 1024, 14, 14), (0, 2, 3, 1), 4) == ["cols"]
    monkeypatch.setattr(launches, "FOLD_BATCH", False)
    assert _folds((32, 1024, 14, 14), (0, 2, 3, 1), 4) == [""]


@pytest.fixture
def every_fold(monkeypatch):
    """Both sides fold wherever a tile is saved (the kernels' forms, whatever the rule takes)."""
    monkeypatch.setattr(launches, "FOLD_SIDES", ("cols", "rows"))
    monkeypatch.setattr(launches, "FOLD_MIN_SAVED", EVERY_SIZE)


def test_a_launch_that_would_be_cut_stays_unfolded(monkeypatch):
    assert _folds((32, 1024, 14, 14), (0, 2, 3, 1), 1) == ["cols"]
    monkeypatch.setattr(launches, "MAX_LAUNCH_EXTENT", 4096)
    # 32 x 196 = 6272 folded columns exceed the extent; unfolded, 196 does not
    assert _folds((32, 1024, 14, 14), (0, 2, 3, 1), 1) == [""]


def test_the_folded_source_divides_once_per_column_a_thread_touches():
    config = TileConfig(2, 64, 64, 4, 1, 8)  # 2-byte elements, rows of 49: single-element loads, 2 columns a thread
    kernel = permute_kernel(config, 0, "sm_90", "n", "cols")
    names = [p for _, p in kernel.params]
    assert kernel.fold == "cols" and names[-4:] == ["fold_extent", "fold_stride", "tiles_n_div", "fold_extent_div"]
    assert names.index("fold_extent") < names.index("tiles_n_div") < names.index("fold_extent_div")
    body = kernel.source[kernel.source.index(kernel.name):]
    assert "src_all + src_base + (size_t)row0 * lda;" in body  # the columns come from the quotient
    assert "dst_all + dst_base + (size_t)col0 * ldb + row0;" in body  # B is one matrix of the folded rows
    quotients = set(re.findall(r"const unsigned (fold_b[0-9a-f]+) =", body))
    assert len(quotients) == 2  # columns thread_col and thread_col + 32, in both branches
    unfolded = permute_kernel(config, 1, "sm_90", "n")
    assert "fold" not in unfolded.source and unfolded.fold == ""


def test_fold_is_refused_where_the_kernel_cannot_take_it():
    from linear_layouts.codegen.permute import emit_tiled_permute_kernel
    from linear_layouts.ops.kernels import tile_layouts
    from linear_layouts.codegen.plan import conversion_step

    config = TileConfig(2, 64, 64, 4, 8, 8)
    src, dst = tile_layouts(config)
    step = conversion_step(src, dst, 16)
    with pytest.raises(LayoutError, match="fold: must be one of"):
        emit_tiled_permute_kernel("k", src, dst, 2, step, fold="batch")
    with pytest.raises(LayoutError, match="only a transpose of one tile per CTA"):
        emit_tiled_permute_kernel("k", src, dst, 2, step, fold="cols", ctas_per_sm=2)
    with pytest.raises(LayoutError, match="fold"):
        tiled_arguments(permute_kernel(config, 0, "sm_90", "n", "cols"), 64, 640, 49, 64, ())


@needs_cxx
@pytest.mark.parametrize("shape, dims, dtype, offsets", [
    ((3, 16, 7, 7), (0, 2, 3, 1), np.float16, (0, 0)),     # NCHW -> NHWC, single-element loads
    ((3, 7, 7, 16), (0, 3, 1, 2), np.float16, (0, 0)),     # NHWC -> NCHW, single-element stores
    ((5, 40, 14, 14), (0, 2, 3, 1), np.float32, (0, 0)),   # 16-byte loads along folded columns
    ((5, 14, 14, 40), (0, 3, 1, 2), np.float32, (0, 0)),
    ((2, 3, 70, 6, 6), (0, 1, 3, 4, 2), np.uint8, (0, 0)),  # two batch dims, the inner one folded
    ((3, 40, 70), (0, 2, 1), np.uint64, (0, 0)),
    ((4, 33, 65), (0, 2, 1), np.uint16, (0, 0)),
    ((3, 64, 100), (0, 2, 1), np.uint16, (2, 6)),          # misaligned buffers: narrower vectors
    ((6, 130, 28), (0, 2, 1), np.complex64, (0, 0)),
])
def test_folded_kernels_are_exact(every_fold, shape, dims, dtype, offsets):
    rng = np.random.default_rng(sum(shape))
    a = rng.integers(0, 256, size=shape + (np.dtype(dtype).itemsize,), dtype=np.uint8).view(dtype)[..., 0]
    assert any(_folds(shape, dims, a.itemsize, SRC + offsets[0], DST + offsets[1])), "the case must fold"
    got = emulated_permute(a, dims, *offsets)
    assert np.array_equal(got.view(np.uint8), np.ascontiguousarray(np.transpose(a, dims)).view(np.uint8))


@needs_cxx
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 6), st.integers(1, 90), st.integers(1, 90), st.sampled_from([1, 2, 4, 8]),
       st.integers(0, 2**32 - 1))
def test_folded_and_unfolded_launches_agree(batch, rows, cols, itemsize, seed):
    shape, dims = ((batch, rows, cols), (0, 2, 1))
    dtype = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[itemsize]
    a = np.random.default_rng(seed).integers(0, 2**8 * itemsize, size=shape).astype(dtype)
    expected = np.ascontiguousarray(np.transpose(a, dims))
    saved = launches.FOLD_SIDES, launches.FOLD_MIN_SAVED
    try:
        launches.FOLD_SIDES, launches.FOLD_MIN_SAVED = ("cols", "rows"), EVERY_SIZE
        assert np.array_equal(emulated_permute(a, dims), expected)
        launches.FOLD_BATCH = False
        assert np.array_equal(emulated_permute(a, dims), expected)
    finally:
        launches.FOLD_BATCH = True
        launches.FOLD_SIDES, launches.FOLD_MIN_SAVED = saved


@needs_cxx
def test_a_folded_view_reads_at_its_strides(every_fold):
    base = np.random.default_rng(3).integers(0, 2**16, size=(4, 48, 60), dtype=np.uint16)
    view = base[:, :40, :49]  # [B, C, P] with gaps after each row and matrix; NCHW -> NHWC of it
    planned = launches.view_launches(view.shape, (0, 2, 1), 2, SRC, DST, H200, (2880, 60, 1))
    assert [x.kernel.fold for x in planned] == ["cols"]
    got = emulated_view_permute(base, view, (0, 2, 1))
    assert np.array_equal(got, np.ascontiguousarray(np.transpose(view, (0, 2, 1))))


@pytest.mark.skipif(find_nvcc() is None, reason="nvcc is not installed")
def test_folded_kernels_compile_without_spills(tmp_path):
    import subprocess

    for config, fold in [(TileConfig(4, 64, 64, 4, 4, 4), "cols"), (TileConfig(2, 64, 64, 8, 8, 8), "rows"),
                         (TileConfig(2, 64, 64, 8, 1, 8), "cols"), (TileConfig(1, 64, 64, 4, 16, 1), "rows")]:
        kernel = permute_kernel(config, 1, "sm_90", "n", fold)
        (tmp_path / "k.cu").write_text(kernel.source)
        report = subprocess.run([find_nvcc(), "-arch=sm_90", "-cubin", "-w", "-Xptxas", "-v", "-o",
                                 str(tmp_path / "k.cubin"), str(tmp_path / "k.cu")],
                                capture_output=True, text=True, check=True).stderr
        assert re.search(r"0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads", report), (config, report)


@needs_cxx
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(st.integers(2, 5), st.integers(3, 70), st.integers(3, 40), st.sampled_from([1, 2]), st.integers(0, 3),
       st.integers(0, 3), st.booleans(), st.integers(0, 2**32 - 1))
def test_folded_views_and_windows_are_exact(every_fold, batch, channels, plane, itemsize, row_gap, start, window,
                                            seed):
    """NCHW -> NHWC of a slice of a larger tensor (gaps after each row and matrix, any start), into a new tensor or
    into a window of a larger buffer: against NumPy, nothing outside the output written."""
    dtype = np.uint8 if itemsize == 1 else np.uint16
    base = np.random.default_rng(seed).integers(0, 256 ** itemsize, size=(batch, channels + row_gap, start + plane
                                                                          + row_gap), dtype=np.uint64).astype(dtype)
    view = base[:, :channels, start:start + plane]
    dims = (0, 2, 1)
    expected = np.ascontiguousarray(np.transpose(view, dims))
    if not window:
        assert np.array_equal(emulated_view_permute(base, view, dims), expected)
        return
    out_shape = (batch, plane, channels + 3)

    def out_view(o):
        return o[:, :, 1:1 + channels]
    got = emulated_view_permute(base, view, dims, out_base_shape=out_shape, out_view=out_view)
    assert np.array_equal(got, expected)


@pytest.mark.parametrize("name, value, rule", [("FOLD_SIDES", ("cols", "diagonal"), "FOLD_SIDES: must be"),
                                               ("FOLD_SIDES", "cols", "FOLD_SIDES: must be"),
                                               ("FOLD_MIN_SAVED", 0.15, "FOLD_MIN_SAVED: must map"),
                                               ("FOLD_MIN_SAVED", {2: 1.5}, "FOLD_MIN_SAVED: must map"),
                                               ("FOLD_MIN_SAVED", {"fp16": 0.3}, "FOLD_MIN_SAVED: must map")])
def test_bad_fold_switches_name_the_switch(monkeypatch, name, value, rule):
    monkeypatch.setattr(launches, name, value)
    with pytest.raises(LayoutError, match=rule):
        permute_launches((32, 1024, 14, 14), (0, 2, 3, 1), 1, SRC, DST, H200)
