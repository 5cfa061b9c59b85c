"""Views with gaps or repeats (a column slice ``y[:, a:b]``, attention's ``q`` of a fused ``qkv``, a transposed slice,
``expand``): ``permute`` and ``transpose`` read them at their strides (``plan.strided_order``,
``plan.reduce_permutation``'s ``strides``, ``launches.permute_launches``' ``strides``), checked element for element
by the emulator against NumPy's own views (rows of one element where no dim has stride 1: ``y[:, ::2]``), on the
fake device as launched; negative strides refused with the rule."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linear_layouts import ops
from linear_layouts.codegen.emulate import find_cxx
from linear_layouts.core.errors import LayoutError
from linear_layouts.ops.driver import ArgumentPacking
from linear_layouts.ops.launches import Launch, permute_launches, strided_alignment, view_launches
from linear_layouts.ops.plan import PermuteKind, dense_order, plan_permutation, reduce_permutation, strided_order
from linear_layouts.ops.tensors import Tensor, same_memory

from harness.fakes import FakeCuda, FakeTorchTensor, install

from ._emulated import emulated_view_permute

_RNG = np.random.default_rng(11)
_EMULATOR = pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")


def _base(shape, dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    return _RNG.integers(0, 256, size=tuple(shape) + (dtype.itemsize,), dtype=np.uint8).view(dtype)[..., 0].copy()


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and np.array_equal(np.ascontiguousarray(a).view(np.uint8),
                                                 np.ascontiguousarray(b).view(np.uint8))


def test_strided_order_puts_the_stride_1_dim_last():
    assert strided_order((4, 6), (24, 1)) == (0, 1) and strided_order((4, 6), (1, 8)) == (1, 0)
    assert strided_order((3, 4, 6), (0, 24, 1)) == (0, 1, 2)  # a broadcast dim goes first
    assert strided_order((4, 3, 6), (24, 0, 1)) == (1, 0, 2)
    assert strided_order((4, 6), (12, 2)) == (0, 1) and strided_order((4, 6), (-6, 1)) is None
    assert strided_order((4, 1, 6), (1, 99, 4)) == (2, 1, 0)  # size-1 dims stand where they are
    for shape, strides in (((4, 6), (1, 4)), ((2, 3, 5, 7), (105, 1, 21, 3)), ((5,), (1,))):
        assert strided_order(shape, strides) == dense_order(shape, strides)


def test_dims_merge_only_where_memory_joins_them():
    # x[:, :, :5] of a (2, 3, 10): the last dim has gaps after it, the first two still join
    assert reduce_permutation((2, 3, 5), (0, 1, 2), (30, 10, 1)) == reduce_permutation((6, 5), (0, 1), (10, 1))
    assert reduce_permutation((6, 5), (0, 1), (10, 1)).strides == (10, 1)
    # row-major strides reduce as no strides
    assert reduce_permutation((2, 3, 5), (2, 0, 1), (15, 5, 1)) == reduce_permutation((2, 3, 5), (2, 0, 1))


def test_a_gapped_identity_is_a_row_move_and_a_gapped_transpose_keeps_its_strides():
    p = plan_permutation((4, 100), (0, 1), 2, strides=(300, 1))
    assert (p.kind, p.rows, p.cols, p.lda, p.ldb, p.batch) == (PermuteKind.ROWS, 4, 100, 300, 100, ())
    p = plan_permutation((8, 2048, 8, 128), (0, 2, 1, 3), 2, strides=(2048 * 3072, 3072, 128, 1))  # q of qkv
    assert p.kind is PermuteKind.ROWS and (p.rows, p.cols, p.lda) == (2048, 128, 3072)
    p = plan_permutation((64, 100), (1, 0), 4, strides=(128, 1))
    assert (p.kind, p.rows, p.cols, p.lda, p.ldb) == (PermuteKind.TRANSPOSE, 64, 100, 128, 64)
    # words of 2 fp16: (4, 3, 2) of a (4, 4, 2) moved as a (4, 3) transpose of 4-byte words at stride 4
    p = plan_permutation((4, 3, 2), (1, 0, 2), 2, strides=(8, 2, 1))
    assert (p.element_bytes, p.kind, p.rows, p.cols, p.lda) == (4, PermuteKind.TRANSPOSE, 4, 3, 4)
    p = plan_permutation((4, 6), (1, 0), 2, strides=(12, 2))  # y[:, ::2]: rows of one element at stride 12
    assert (p.kind, p.rows, p.cols, p.lda, p.ldb, p.batch) == (PermuteKind.ROWS, 4, 1, 12, 1, ((6, 2, 4),))


def test_vectors_follow_every_row_start():
    p = plan_permutation((4, 100), (1, 0), 2, strides=(300, 1))
    assert strided_alignment(0, p) == 8 and strided_alignment(4, p) == 4
    assert strided_alignment(0, plan_permutation((4, 100), (1, 0), 2, strides=(256, 1))) == 0
    launch = permute_launches((4, 100), (1, 0), 2, 1 << 40, 2 << 40, 132, strides=(300, 1))[0]
    assert launch.kernel.src_vector == 4  # 8 bytes: rows of 600 bytes


def test_memory_ranges_count_the_gaps():
    x = Tensor("cupy", None, (4, 6), (10, 1), 4, None, 0, 1000)
    assert x.memory_range == (1000, 1000 + 4 * 36)
    after_last_row = Tensor("cupy", None, (4,), (1,), 4, None, 0, 1000 + 4 * 36)
    inside_a_gap = Tensor("cupy", None, (4,), (1,), 4, None, 0, 1000 + 4 * 6)
    assert not same_memory(x, after_last_row) and same_memory(x, inside_a_gap)


_CASES = [
    # (base shape, dtype, view, dims)
    ((4, 300), np.uint16, lambda y: y[:, 7:107], (1, 0)),           # a column slice at a 14-byte offset
    ((4, 300), np.uint16, lambda y: y[:, 8:108], (0, 1)),           # the same, copied: rows at stride 300
    ((70, 96), np.float32, lambda y: y[:, :64].T, (1, 0)),          # a transposed slice back to rows
    ((70, 96), np.float32, lambda y: y[3:, :64].T, (0, 1)),         # ... and its transpose
    ((2, 5, 96), np.float16, lambda y: y.reshape(2, 5, 3, 4, 8)[:, :, 1], (0, 2, 1, 3)),  # k of qkv -> BHSD
    ((2, 5, 96), np.float16, lambda y: y.reshape(2, 5, 3, 4, 8)[:, :, 2], (0, 2, 3, 1)),  # v of qkv -> BHDS
    ((1, 8, 16), np.uint8, lambda y: np.broadcast_to(y, (3, 8, 16)), (0, 2, 1)),  # expand: stride 0
    ((4, 4, 2), np.uint16, lambda y: y[:, :3], (1, 0, 2)),          # words of two elements, rows at stride 4 words
    ((9, 13), np.complex128, lambda y: y[1:, 2:11], (1, 0)),        # 16-byte elements: pairs of halves
    ((3, 4, 5, 6, 7), np.uint8, lambda y: y[:, 1:, :, ::2, 2:5].transpose(4, 1, 0, 2, 3), (3, 0, 4, 2, 1)),
    ((2, 3, 2, 3, 2, 3, 8), np.uint8, lambda y: y[..., :5], (6, 5, 4, 3, 2, 1, 0)),  # 6 batch dims: 2 launches
    ((40, 36), np.uint16, lambda y: y[:, ::2], (1, 0)),             # no dim of stride 1, short: the framework's copy
    ((40, 36), np.float32, lambda y: y[1::3, ::4], (0, 1)),
    ((3, 2100), np.uint16, lambda y: y[:, ::2], (1, 0)),             # output rows of 3: the framework's copy
    ((1025, 2100), np.uint16, lambda y: y[:, ::2], (1, 0)),          # long both ways: ours (``_forms``: gathered)
    ((3, 2100), np.uint16, lambda y: y[:, 1::2], (0, 1)),            # one pass of one-element rows
    ((3, 2100), np.complex128, lambda y: y[:, ::2], (1, 0)),         # 16-byte elements: pairs of 8-byte halves
    ((5, 3, 1100), np.uint32, lambda y: y[:, :, ::2].transpose(2, 0, 1), (1, 2, 0)),
    ((1, 1), np.uint32, lambda y: np.broadcast_to(y, (5, 7)), (1, 0)),  # every element the same one
]


@pytest.fixture(params=["rule", "gathered"])
def _forms(request, monkeypatch):
    """Views as ``launches.gathers`` and ``framework_gathers`` decide (small ones move in one pass or by the
    framework's copy) and with every view that may be gathered gathered first by ours (``GATHER_MIN_WORK`` and
    ``FRAMEWORK_GATHER_BYTES`` 0): both forms of each case."""
    from linear_layouts.ops import launches

    if request.param == "gathered":
        monkeypatch.setattr(launches, "GATHER_MIN_WORK", 0)
        monkeypatch.setattr(launches, "FRAMEWORK_GATHER_BYTES", 0)
    return request.param


@_EMULATOR
@pytest.mark.parametrize("case", range(len(_CASES)))
def test_views_with_gaps_every_element(case, _forms):
    shape, dtype, make, dims = _CASES[case]
    base = _base(shape, dtype)
    view = make(base)
    assert _same(emulated_view_permute(base, view, dims), np.transpose(view, dims))


@st.composite
def _gapped_views(draw):
    rank = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(1, 9), min_size=rank, max_size=rank)))
    index = []
    for k, size in enumerate(shape):
        start = draw(st.integers(0, size - 1))
        stop = draw(st.integers(start + 1, size))
        step = draw(st.integers(1, 3))
        index.append(slice(start, stop, step))
    order = tuple(draw(st.permutations(range(rank))))
    dims = tuple(draw(st.permutations(range(rank))))
    dtype = draw(st.sampled_from([np.uint8, np.uint16, np.uint32, np.uint64]))
    return shape, tuple(index), order, dims, dtype


@_EMULATOR
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_gapped_views())
def test_random_views_with_gaps_every_element(case):
    shape, index, order, dims, dtype = case
    base = _base(shape, dtype)
    view = base[index].transpose(order)
    assert _same(emulated_view_permute(base, view, dims), np.transpose(view, dims))


def test_a_view_with_gaps_launches_the_tiled_kernel_at_its_strides(monkeypatch):
    cuda = FakeCuda()
    loaded = install(monkeypatch, cuda)
    q = FakeTorchTensor((8, 256, 8, 64), 2, strides=(256 * 1536, 1536, 64, 1))  # q of a fused qkv
    y = ops.permute(q, (0, 2, 1, 3), out=FakeTorchTensor((8, 8, 256, 64), 2, pointer=q.data_ptr() + (1 << 30)))
    assert y.shape == (8, 8, 256, 64) and not cuda.copies
    expected = [item for item in permute_launches(q.shape, (0, 2, 1, 3), 2, q.data_ptr(), y.data_ptr(), 132,
                                                  strides=(256 * 1536, 1536, 64, 1)) if isinstance(item, Launch)]
    assert len(cuda.launches) == len(expected) == 1
    got, want = cuda.launches[0], expected[0]
    assert loaded[got["function"]] is want.kernel
    assert FakeCuda.unpack(got, ArgumentPacking.of(want.kernel.params)) == want.values
    w = FakeTorchTensor((64, 128), 4, strides=(1, 100))  # y[:, :64].t() of a (128, 100) y
    ops.transpose(w, out=FakeTorchTensor((128, 64), 4, pointer=w.data_ptr() + (1 << 30)))  # y[:, :64]: a row move
    assert len(cuda.launches) == 2 and not cuda.copies
    want = permute_launches((128, 64), (0, 1), 4, w.data_ptr(), w.data_ptr() + (1 << 30), 132, strides=(100, 1))
    assert FakeCuda.unpack(cuda.launches[1], ArgumentPacking.of(want[0].kernel.params)) == want[0].values

def test_negative_strides_and_overlapping_outputs_are_refused(monkeypatch):
    install(monkeypatch, FakeCuda())
    with pytest.raises(LayoutError, match="x: a view with negative strides"):
        ops.permute(FakeTorchTensor((64, 48), 2, strides=(-48, 1)), (1, 0))
    with pytest.raises(LayoutError, match="out: overlaps the memory of x"):
        x = FakeTorchTensor((4, 48), 2, strides=(96, 1))
        ops.permute(x, (0, 1), out=FakeTorchTensor((4, 48), 2, pointer=x.data_ptr() + 96 * 2))


def test_views_without_a_stride_1_dim_gather_first_where_rows_of_one_element_would_scatter(monkeypatch):
    from linear_layouts.ops import launches
    from linear_layouts.ops.launches import view_launches
    from linear_layouts.ops.plan import gathers_first

    assert gathers_first((4096, 4096), (1, 0), (8192, 2)) and not gathers_first((4096, 4096), (0, 1), (8192, 2))
    assert not gathers_first((64, 100), (1, 0), (128, 1)) and not gathers_first((64, 100), (1, 0), None)
    assert len(view_launches((40, 45), (1, 0), 2, 1 << 40, 2 << 40, 132, (90, 2))) == 1  # small: one pass
    monkeypatch.setattr(launches, "GATHER_MIN_WORK", 0)
    two = view_launches((40, 45), (1, 0), 2, 1 << 40, 2 << 40, 132, (90, 2), scratch=3 << 40)
    assert len(two) == 2 and two[0].values[1] == 3 << 40 and two[1].values[0] == 3 << 40
    with pytest.raises(LayoutError, match="scratch: this view is gathered"):
        view_launches((40, 45), (1, 0), 2, 1 << 40, 2 << 40, 132, (90, 2))


@pytest.mark.parametrize("shape, strides, dims", [
    ((8, 256, 8, 64), (256 * 1536, 1536, 64, 1), (0, 2, 1, 3)),  # q of a fused qkv
    ((64, 128), (1, 100), (1, 0)),                               # a transposed slice
    ((300, 200), (1, 300), (1, 0)),                              # w.t(): a dense view, a copy
    ((4, 5, 6), (0, 6, 1), (2, 0, 1)),                           # expand
])
def test_the_fast_path_takes_views_and_launches_what_the_general_path_plans(monkeypatch, shape, strides, dims):
    from linear_layouts.ops import dispatch
    from linear_layouts.ops.plan import memory_permutation

    cuda = FakeCuda()
    loaded = install(monkeypatch, cuda)
    dispatch.call_plan.cache_clear()
    x = FakeTorchTensor(shape, 2, strides=strides)
    y = ops.permute(x, dims)  # no out=: only the fast path allocates (new_empty) without importing torch
    assert y.shape == tuple(shape[d] for d in dims) and dispatch.call_plan.cache_info().currsize == 1
    memory_shape, memory_strides, composed = memory_permutation(shape, strides, dims)
    expected = [item for item in permute_launches(memory_shape, composed, 2, x.data_ptr(), y.data_ptr(), 132,
                                                  strides=memory_strides) if isinstance(item, Launch)]
    assert len(cuda.launches) == len(expected)
    for got, want in zip(cuda.launches, expected):
        assert loaded[got["function"]] is want.kernel
        assert FakeCuda.unpack(got, ArgumentPacking.of(want.kernel.params)) == want.values


def test_the_fast_path_gathers_first_and_leaves_short_views_to_the_framework(monkeypatch):
    from linear_layouts.ops import dispatch, launches

    monkeypatch.setattr(launches, "GATHER_MIN_WORK", 0)  # every view that may be gathered: gathered by ours
    monkeypatch.setattr(launches, "FRAMEWORK_GATHER_BYTES", 0)
    cuda = FakeCuda()
    loaded = install(monkeypatch, cuda)
    assert dispatch.call_plan((40, 45), 2, (1, 0), 0, 0, (90, 2)).framework  # short: the framework's copy
    assert dispatch.call_plan((4, 1050), 2, (0, 1), 0, 0, (1, -1)) is None  # negative: the general path
    FakeTorchTensor.copied.clear()
    x = FakeTorchTensor((1100, 1050), 2, strides=(2100, 2))  # w[:, ::2] of 1050-long rows
    y = ops.permute(x, (1, 0))  # gathered into a new tensor by ours, then transposed
    want = view_launches((1100, 1050), (1, 0), 2, x.data_ptr(), y.data_ptr(), 132, (2100, 2), scratch=1 << 44)
    assert len(cuda.launches) == len(want) == 2 and not FakeTorchTensor.copied
    scratch = FakeCuda.unpack(cuda.launches[0], ArgumentPacking.of(want[0].kernel.params))[1]
    for got, item in zip(cuda.launches, want):
        values = tuple(scratch if v == 1 << 44 else v for v in item.values)
        assert loaded[got["function"]] is item.kernel
        assert FakeCuda.unpack(got, ArgumentPacking.of(item.kernel.params)) == values
    short = FakeTorchTensor((40, 45), 2, strides=(90, 2))
    ops.permute(short, (1, 0))
    assert FakeTorchTensor.copied[-1][1:] == (short.data_ptr(), (45, 40), (2, 90)) and len(cuda.launches) == 2
    x = FakeTorchTensor((4, 48), 2, strides=(96, 1))
    with pytest.raises(LayoutError, match="out: overlaps the memory of x"):  # inside x's span, past its numel
        ops.permute(x, (0, 1), out=FakeTorchTensor((4, 48), 2, pointer=x.data_ptr() + 96 * 2))


def test_one_pass_below_the_work_of_the_two_passes_floor():
    """``launches.gathers``: the one pass's elements plus ``ONE_PASS_CTA_ELEMENTS`` a CTA against
    ``GATHER_MIN_WORK``: a small view moves in one pass; a view as small whose output's last dim is short (so its
    one-element rows fill few of a tile's 1024 rows: a CTA for each of its other elements) is gathered; a large one
    is gathered."""
    from linear_layouts.ops.launches import GATHER_MIN_WORK, ONE_PASS_CTA_ELEMENTS, gathers

    assert not gathers((58, 4096), (1, 0), 2, (12288, 3))  # 464 KiB: 4096 CTAs of 58 rows, one pass
    assert gathers((6, 36, 4096), (2, 1, 0), 1, (442368, 12288, 3))  # 864 KiB, 147456 CTAs of 6 rows
    assert 6 * 36 * 4096 + ONE_PASS_CTA_ELEMENTS * 36 * 4096 >= GATHER_MIN_WORK
    assert gathers((3543, 3000), (1, 0), 1, (12000, 4)) and not gathers((3543, 3000), (0, 1), 1, (12000, 4))
    assert not gathers((64, 100), (1, 0), 2, (128, 1))  # a stride-1 dim: never
    assert gathers((4096, 4096), (1, 0), 16, (8192, 2)) and not gathers((40, 1050), (1, 0), 16, (2100, 2))  # complex128


def test_small_views_ours_would_gather_are_left_to_the_framework_copy():
    from linear_layouts.ops.launches import FRAMEWORK_GATHER_BYTES, framework_gathers

    assert framework_gathers((6, 36, 4096), (2, 1, 0), 1, (442368, 12288, 3))  # output rows of 6
    assert framework_gathers((1025, 3500), (1, 0), 1, (7000, 2))  # 3.4 MiB that ours would gather: one launch
    assert not framework_gathers((4, 1050), (1, 0), 2, (2100, 2))  # output rows of 4, but a cheap one pass: ours
    assert not framework_gathers((3543, 3000), (1, 0), 1, (12000, 4))  # 10 MiB: ours, gathered first
    assert not framework_gathers((58, 4096), (1, 0), 2, (12288, 3))  # one pass of ours
    assert 6 * 36 * 4096 < FRAMEWORK_GATHER_BYTES <= 3543 * 3000


def test_short_views_without_a_stride_1_dim_are_left_to_the_framework_copy(monkeypatch):
    """Rows of one element fill ``rows_tile``'s 512-1024-row tiles only along a long innermost dim; a shorter view is
    moved by the framework's own strided copy (``launches.framework_gathers``): ``out.copy_(x.permute(dims))``."""
    from linear_layouts.ops.launches import framework_gathers

    assert framework_gathers((27, 28, 34, 25), (2, 3, 0, 1), 8, (110160, 3060, 90, 3))
    assert not framework_gathers((4096, 4096), (1, 0), 2, (8192, 2))  # 4096-long columns: ours
    assert not framework_gathers((64, 100), (1, 0), 2, (128, 1)) and not framework_gathers((4, 5), (1, 0), 16, (9, 3))
    cuda = FakeCuda()
    install(monkeypatch, cuda)
    FakeTorchTensor.copied.clear()
    x = FakeTorchTensor((40, 45), 4, strides=(100, 2))
    out = FakeTorchTensor((40, 45), 4, pointer=x.data_ptr() + (1 << 30))
    ops.permute(x, (0, 1), out=out)
    assert FakeTorchTensor.copied == [(out.data_ptr(), x.data_ptr(), (40, 45), (100, 2))] and not cuda.launches
    out_t = FakeTorchTensor((45, 40), 4, pointer=x.data_ptr() + (3 << 30))
    ops.permute(x, (1, 0), out=out_t)
    assert FakeTorchTensor.copied[-1] == (out_t.data_ptr(), x.data_ptr(), (45, 40), (2, 100)) and not cuda.launches


def test_output_strides_merge_only_where_the_output_joins_them_too():
    r = reduce_permutation((2, 3, 5), (0, 1, 2), out_strides=(60, 20, 1))  # into o[:, :, :5] of a (2, 3, 20) o
    assert (r.shape, r.dims, r.strides, r.out_strides) == ((6, 5), (0, 1), None, (20, 1))
    p = plan_permutation((64, 100), (1, 0), 2, out_strides=(512, 1))
    assert (p.kind, p.rows, p.cols, p.lda, p.ldb) == (PermuteKind.TRANSPOSE, 64, 100, 100, 512)
    p = plan_permutation((6, 5), (1, 0), 4, out_strides=(1, 8))  # the output's last dim at stride 8: one-element rows
    assert (p.kind, p.cols, p.ldb) == (PermuteKind.ROWS, 1, 8)
    assert plan_permutation((4, 6), (0, 1), 2, out_strides=(6, 1)).kind is PermuteKind.COPY


_OUT_CASES = [
    # (base shape, dtype, view, dims, output buffer shape, output view)
    ((2, 5, 4, 8), np.float16, lambda y: y, (0, 2, 1, 3), (2, 4, 9, 8), lambda o: o[:, :, 2:7]),  # into a KV cache
    ((64, 100), np.uint16, lambda y: y, (1, 0), (100, 512), lambda o: o[:, 64:128]),              # a column block
    ((37, 50), np.uint8, lambda y: y, (1, 0), (50, 41), lambda o: o[:, 3:40]),                      # odd, misaligned
    ((30, 20), np.float32, lambda y: y[:, 2:17], (1, 0), (15, 30), lambda o: o.T[:, :].T),          # dense after all
    ((6, 5), np.float32, lambda y: y, (1, 0), (6, 8), lambda o: o.T[:5]),                          # out's last at stride 8
    ((9, 13), np.complex128, lambda y: y, (1, 0), (13, 11), lambda o: o[:, 1:10]),
    ((1025, 2100), np.uint16, lambda y: y[:, ::2], (1, 0), (1050, 1030), lambda o: o[:, 2:1027]),  # gathered first
    ((40, 36), np.uint16, lambda y: y[:, ::2], (1, 0), (20, 50), lambda o: o[2:, 5:45]),          # the framework's
]


@_EMULATOR
@pytest.mark.parametrize("case", range(len(_OUT_CASES)))
def test_outputs_with_gaps_every_element_and_nothing_else(case, _forms):
    shape, dtype, make, dims, out_shape, out_view = _OUT_CASES[case]
    base = _base(shape, dtype)
    view = make(base)
    got = emulated_view_permute(base, view, dims, out_base_shape=out_shape, out_view=out_view)
    assert _same(got, np.transpose(view, dims))


@_EMULATOR
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_gapped_views(), st.integers(0, 3), st.integers(0, 2))
def test_random_views_into_random_output_slices(case, pad, step):
    shape, index, order, dims, dtype = case
    base = _base(shape, dtype)
    view = base[index].transpose(order)
    out_shape = tuple(view.shape[d] for d in dims)
    buffer = tuple(n * (1 + step) + pad for n in out_shape)
    got = emulated_view_permute(base, view, dims, out_base_shape=buffer,
                                out_view=lambda o: o[tuple(slice(pad, pad + n * (1 + step), 1 + step)
                                                           for n in out_shape)])
    assert _same(got, np.transpose(view, dims))


def test_an_output_with_gaps_is_written_at_its_strides_on_the_fake_device(monkeypatch):
    cuda = FakeCuda()
    loaded = install(monkeypatch, cuda)
    k = FakeTorchTensor((2, 16, 4, 64), 2)  # [B, S, H, D] of new keys
    cache = FakeTorchTensor((2, 4, 100, 64), 2, pointer=k.data_ptr() + (1 << 30))  # [B, H, S_max, D]
    window = FakeTorchTensor((2, 4, 16, 64), 2, pointer=cache.data_ptr() + 2 * 10 * 64,
                             strides=(4 * 100 * 64, 100 * 64, 64, 1))  # cache[:, :, 10:26]
    ops.permute(k, (0, 2, 1, 3), out=window)
    want = permute_launches((2, 16, 4, 64), (0, 2, 1, 3), 2, k.data_ptr(), window.data_ptr(), 132,
                            out_strides=(4 * 100 * 64, 100 * 64, 64, 1))
    assert len(cuda.launches) == len(want) == 1 and loaded[cuda.launches[0]["function"]] is want[0].kernel
    assert FakeCuda.unpack(cuda.launches[0], ArgumentPacking.of(want[0].kernel.params)) == want[0].values
    with pytest.raises(LayoutError, match="out: a view whose elements may share memory"):
        ops.permute(k, (0, 2, 1, 3), out=FakeTorchTensor((2, 4, 16, 64), 2, pointer=cache.data_ptr(),
                                                          strides=(0, 100 * 64, 64, 1)))


@_EMULATOR
@pytest.mark.parametrize("rows, window", [(300, lambda o: o[:, 3:603]), (301, lambda o: o[1:, 5:605])])
def test_a_byte_transpose_into_a_window_with_odd_rows(rows, window):
    """Bytes transposed into a window whose rows 16 bytes do not align take the byte transpose, as a dense output
    of odd rows does (``_bytes_by_default``; a 4 KiB L2 makes the small problem count as one out of L2), writing
    each output row's own granules only: every byte outside the window unwritten."""
    from linear_layouts.ops.kernels import GridShape

    from ._emulated import DST, SRC, _run

    x = _base((600, 300), np.uint8)
    buffer = np.full((rows, 610), 0xAB, np.uint8)
    view = window(buffer)
    offset = view.__array_interface__["data"][0] - buffer.__array_interface__["data"][0]
    out_strides = tuple(st for st in view.strides)
    launches = permute_launches((600, 300), (1, 0), 1, SRC, DST + offset, GridShape(132, 4096),
                                out_strides=out_strides)
    assert len(launches) == 1 and "ll_permute_bytes" in launches[0].kernel.name
    buffers = {SRC: x.reshape(-1).copy(), DST: buffer.reshape(-1).copy()}
    _run(launches, buffers)
    want = buffer.copy()
    window(want)[...] = x.T
    assert np.array_equal(buffers[DST].reshape(buffer.shape), want)
