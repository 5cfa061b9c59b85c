"""Sizes beyond one launch and permutations of many batch dims (``ops.launches.launch_pieces``,
``MAX_BATCH_LAUNCHES``): planned for shapes of more than ``2**32`` elements without allocating them, and run
through the emulator against NumPy with the launch limits lowered (``MAX_LAUNCH_EXTENT``, ``MAX_LAUNCH_CTAS``),
so small tensors take the same cuts."""

from __future__ import annotations

import math

import numpy as np
import pytest

from linear_layouts.codegen.emulate import find_cxx
from linear_layouts.codegen.permute import MAX_BATCH_DIMS, MAX_KERNEL_BATCH_DIMS, fast_divider
from linear_layouts.core.errors import LayoutError
from linear_layouts.ops import launches
from linear_layouts.ops.kernels import interleave_kernel, permute_kernel, transpose_tiles
from linear_layouts.ops.launches import launch_pieces, permute_launches
from linear_layouts.ops.plan import plan_permutation

from ._emulated import DST, SRC, emulated_permute

needs_cxx = pytest.mark.skipif(find_cxx() is None, reason="no C++ compiler for the emulator")


def _within(items, max_extent: int = 2**32 - 1, max_ctas: int = 2**31 - 1) -> None:
    """Every launch's ``rows`` / ``cols`` (its third and fourth arguments) and grid within the limits."""
    for item in items:
        assert 0 < item.ctas <= max_ctas
        if item.kernel.name.startswith("ll_copy"):
            continue
        rows, cols = item.values[2:4]
        assert rows <= max_extent and cols <= max_extent


def test_a_batch_of_more_tiles_than_a_grid_takes_two_launches(monkeypatch):
    """The docstring's example: ``2**31`` ``2 x 2`` transposes, one tile each, refused before (with
    ``SMALL_BATCHES`` off; on, one launch of the small-block kernel's grid-stride loop)."""
    small = permute_launches((2**31, 2, 2), (0, 2, 1), 1, SRC, DST, 132)
    assert len(small) == 1 and "small" in small[0].kernel.name and small[0].values[2:] == (2**31,)
    monkeypatch.setattr(launches, "SMALL_BATCHES", False)
    items = permute_launches((2**31, 2, 2), (0, 2, 1), 1, SRC, DST, 132)
    assert [item.ctas for item in items] == [2**31 - 8, 8]
    _within(items)
    assert items[0].values[:2] == (SRC, DST) and items[1].values[:2] == (SRC + 4 * (2**31 - 8), DST + 4 * (2**31 - 8))
    assert items[0].kernel is items[1].kernel  # offsets of whole sectors: one kernel for both


def test_a_side_of_more_than_2_32_elements_is_cut():
    rows = 2**32 + 2**20 + 3
    items = permute_launches((rows, 2), (1, 0), 1, SRC, DST, 132)  # [N, 2] -> [2, N]: N rows of the tile problem
    _within(items)
    assert [item.values[2] for item in items] == [2**31, 2**31, 2**20 + 3]
    assert [(item.values[0] - SRC, item.values[1] - DST) for item in items] == [
        (0, 0), (2 * 2**31, 2**31), (2 * 2**32, 2**32)]  # source rows of 2 bytes, output columns of 1
    assert len({item.kernel for item in items}) == 1


def test_launches_within_the_limits_are_unchanged():
    """Under the limits nothing is cut: one launch, the arguments of the whole problem."""
    (item,) = permute_launches((46341, 46341), (1, 0), 1, SRC, DST, 132)
    assert item.values[2:4] == (46341, 46341) and item.ctas == item.kernel.tiles(46341, 46341)


def test_pieces_cover_the_problem_once():
    """``launch_pieces`` of a batched transpose at small limits: every (batch index, row, column) in exactly one
    piece, at the offsets its strides give."""
    problem = plan_permutation((5, 7, 100, 70), (1, 0, 3, 2), 2)  # batch (7, 5), 100 x 70 transposes
    pieces = launch_pieces(problem, 0, 32, 32, max_extent=64, max_ctas=5)
    covered = set()
    for p in pieces:
        tiles = math.ceil(p.rows / 32) * math.ceil(p.cols / 32) * math.prod(s for s, _, _ in p.batch)
        assert p.rows <= 64 and p.cols <= 64 and tiles <= 5
        sizes = [s for s, _, _ in p.batch]
        for b0 in range(sizes[0]):
            for b1 in range(sizes[1]):
                base = p.src + b0 * p.batch[0][1] + b1 * p.batch[1][1]
                for r in range(p.rows):
                    for c in range(p.cols):
                        covered.add(base + r * problem.lda + c)
    assert len(covered) == 5 * 7 * 100 * 70 and covered == set(range(5 * 7 * 100 * 70))


def test_bad_limits_and_unreachable_grids_are_refused():
    problem = plan_permutation((1000, 1000), (1, 0), 1)
    with pytest.raises(LayoutError, match="max_extent, max_ctas: a launch must take 32 or more rows"):
        launch_pieces(problem, 0, 64, 64, max_extent=16)
    with pytest.raises(LayoutError, match="x: a 1000 x 1000 matrix of 16 x 16 tiles has more tiles than the 1 CTAs"):
        launch_pieces(problem, 0, 16, 16, max_ctas=1)


def test_many_batch_dims_are_one_launch():
    """A rank-24 tensor of size-2 dims reversed: 22 batch dims, ``2**18`` launches before, one kernel now."""
    shape, dims = (2,) * 24, tuple(reversed(range(24)))
    (item,) = permute_launches(shape, dims, 2, SRC, DST, 132)
    assert item.kernel.batch_dims == 22 and item.ctas == item.kernel.tiles(2, 2, 2**22)
    few = (3, 2, 2, 2, 2, 3, 5)  # 5 batch dims, the outer of size 3: 3 launches (at most MAX_BATCH_LAUNCHES): as before
    items = permute_launches(few, (6, 5, 4, 3, 2, 1, 0), 1, SRC, DST, 132)
    assert len(items) == 3 and {i.kernel.batch_dims for i in items} == {MAX_BATCH_DIMS}


@pytest.fixture
def limits(monkeypatch):
    def set_limits(extent: int = 2**32 - 1, ctas: int = 2**31 - 1, batch_launches: int = launches.MAX_BATCH_LAUNCHES):
        monkeypatch.setattr(launches, "MAX_LAUNCH_EXTENT", extent)
        monkeypatch.setattr(launches, "MAX_LAUNCH_CTAS", ctas)
        monkeypatch.setattr(launches, "MAX_BATCH_LAUNCHES", batch_launches)
    return set_limits


def _random(shape, dtype, seed=0):
    return np.random.default_rng(seed).integers(0, np.iinfo(dtype).max, size=shape, dtype=dtype, endpoint=True)


@needs_cxx
@pytest.mark.parametrize("shape, dims, dtype, extent, ctas, offsets", [
    ((40, 2, 2), (0, 2, 1), np.uint8, 2**32 - 1, 7, (0, 0)),          # a batch of interleaves cut into runs
    ((3, 100, 70), (0, 2, 1), np.uint16, 64, 2**31 - 1, (0, 0)),      # both sides cut
    ((3, 100, 70), (0, 2, 1), np.uint16, 64, 3, (2, 6)),              # and the batch; misaligned
    ((300, 5), (1, 0), np.uint8, 64, 2**31 - 1, (0, 0)),              # the long side of an interleave
    ((5, 300), (1, 0), np.uint32, 64, 2, (4, 0)),
    ((2049, 40), (1, 0), np.uint16, 1024, 2**31 - 1, (0, 0)),         # the chunked transpose, rows cut
    ((5, 7, 9, 11), (2, 0, 3, 1), np.uint16, 2**32 - 1, 3, (0, 0)),
    ((6, 33, 4, 65), (2, 1, 0, 3), np.uint8, 32, 4, (0, 0)),          # rows moved whole, cut
    ((7, 9, 3, 5, 4, 6), (5, 4, 3, 2, 1, 0), np.uint64, 2**32 - 1, 5, (8, 0)),
])
def test_cut_launches_every_element(limits, shape, dims, dtype, extent, ctas, offsets, monkeypatch):
    limits(extent, ctas)
    monkeypatch.setattr(launches, "SMALL_BATCHES", False)  # the cut kernels (a small-block launch is never cut)
    monkeypatch.setattr(launches, "FOLD_BATCH", False)  # nor a folded one (test_fold)
    a = _random(shape, dtype)
    w = a.itemsize
    items = permute_launches(shape, dims, w, SRC + offsets[0], DST + offsets[1], 132)
    assert len(items) > 1
    _within(items, extent, ctas)
    np.testing.assert_array_equal(emulated_permute(a, dims, *offsets), np.transpose(a, dims))


@needs_cxx
@pytest.mark.parametrize("offsets, name", [((0, 0), "ll_copy_128b"), ((5, 5), "ll_copy_128b"), ((2, 0), "ll_copy_16b")])
def test_cut_copy_every_element(limits, offsets, name):
    """An identity in memory from 2 MiB (the copy kernel) cut into runs of a power of two of whole CTAs."""
    limits(ctas=100)
    a = _random((2 << 20) + 48, np.uint8)
    items = permute_launches(a.shape, (0,), 1, SRC + offsets[0], DST + offsets[1], 132)
    assert len(items) > 1 and {i.kernel.name for i in items} == {name}
    _within(items, max_ctas=100)
    np.testing.assert_array_equal(emulated_permute(a, (0,), *offsets), a)


@needs_cxx
@pytest.mark.parametrize("shape, dims, dtype, offsets", [
    ((2,) * 12, tuple(reversed(range(12))), np.uint8, (0, 0)),                 # 10 batch dims, 256 launches before
    ((2, 3, 2, 2, 3, 2, 2, 5, 2, 2), (9, 1, 7, 3, 5, 0, 8, 2, 6, 4), np.uint16, (2, 0)),
    ((3, 2, 5, 2, 2, 7, 2, 3, 2), (8, 6, 4, 2, 0, 7, 5, 3, 1), np.uint32, (0, 4)),
])
def test_many_batch_dims_every_element(limits, shape, dims, dtype, offsets, monkeypatch):
    monkeypatch.setattr(launches, "FOLD_BATCH", False)  # every batch dim a kernel batch dim (folded: test_fold)
    a = _random(shape, dtype, 1)
    problem = plan_permutation(shape, dims, a.itemsize)
    assert math.prod(s for s, _, _ in problem.batch[:len(problem.batch) - MAX_BATCH_DIMS]) > launches.MAX_BATCH_LAUNCHES
    (item,) = permute_launches(shape, dims, a.itemsize, SRC + offsets[0], DST + offsets[1], 132)
    assert item.kernel.batch_dims == len(problem.batch)
    np.testing.assert_array_equal(emulated_permute(a, dims, *offsets), np.transpose(a, dims))
    limits(ctas=7)  # and cut: the outer batch dims one index a launch, the next in runs
    items = permute_launches(shape, dims, a.itemsize, SRC + offsets[0], DST + offsets[1], 132)
    assert len(items) > 1 and {i.kernel for i in items} == {item.kernel}
    _within(items, max_ctas=7)
    np.testing.assert_array_equal(emulated_permute(a, dims, *offsets), np.transpose(a, dims))


@needs_cxx
def test_more_batch_launches_than_allowed_every_element(limits):
    """``MAX_BATCH_LAUNCHES`` 0: a 5-batch-dim permutation (2 launches by default) in one kernel."""
    shape, dims = (3, 2, 3, 2, 3, 4, 5), (6, 0, 4, 2, 1, 3, 5)
    a = _random(shape, np.uint8, 2)
    assert len(permute_launches(shape, dims, 1, SRC, DST, 132)) > 1
    limits(batch_launches=0)
    (item,) = permute_launches(shape, dims, 1, SRC, DST, 132)
    assert item.kernel.batch_dims > MAX_BATCH_DIMS
    np.testing.assert_array_equal(emulated_permute(a, dims), np.transpose(a, dims))


def test_kernels_of_many_batch_dims_compile(tmp_path):
    """nvcc compiles the tiled and interleave kernels at 22 batch dims and at ``MAX_KERNEL_BATCH_DIMS``; their
    ``fast_divider`` parameters follow the sizes."""
    from linear_layouts.codegen.ptx import compile_cubin, find_nvcc

    if find_nvcc() is None:
        pytest.skip("no nvcc")
    for batch_dims in (22, MAX_KERNEL_BATCH_DIMS):
        for kernel in (permute_kernel(transpose_tiles(2, 8, 8)[1], batch_dims),
                       interleave_kernel(1, 2, True, batch_dims)):
            assert sum(name.endswith("_div") for _, name in kernel.params) == batch_dims + 1
            assert compile_cubin(kernel.source).stat().st_size > 0
    item, = permute_launches((2,) * 24, tuple(reversed(range(24))), 2, SRC, DST, 132)
    assert item.values[-1] == fast_divider(2) and compile_cubin(item.kernel.source).stat().st_size > 0


@pytest.mark.parametrize("shape, dims, itemsize, ctas", [
    ((40, 2, 2), (0, 2, 1), 1, 7), ((3, 100, 70), (0, 2, 1), 2, 3),
    ((2,) * 12, tuple(reversed(range(12))), 2, 2**31 - 1),
])
def test_fast_path_launches_the_cut_plan(monkeypatch, limits, shape, dims, itemsize, ctas):
    """The PyTorch fast path (``ops.dispatch``, on ``harness.fakes``' recording driver) launches every piece the
    planner cuts, in order, each on its own grid."""
    from harness.fakes import FakeCuda, FakeTorchTensor, install
    from linear_layouts import ops
    from linear_layouts.ops.driver import ArgumentPacking

    limits(64, ctas)
    cuda = FakeCuda()
    loaded = install(monkeypatch, cuda)
    x = FakeTorchTensor(shape, itemsize)
    y = ops.permute(x, dims)
    expected = permute_launches(shape, dims, itemsize, x.data_ptr(), y.data_ptr(), 132)
    assert len(cuda.launches) == len(expected) > 0
    for got, want in zip(cuda.launches, expected):
        assert loaded[got["function"]] is want.kernel and got["grid"] == (want.ctas, 1, 1)
        assert FakeCuda.unpack(got, ArgumentPacking.of(want.kernel.params)) == want.values
