"""The realigned rows kernels (``codegen.realign_rows``: the chunk and the span kernel) without a GPU: run by the
emulator with the input surrounded by bytes they must never read (a read of one aborts) and guard bytes around the
output, they write ``np.transpose`` bit for bit and nothing else, for random row moves of every element size at every
offset of both buffers, 0 to 3 batch dims, spans of 2 to 8 chunks; ``ops`` takes them exactly where
``launches.realigned_rows`` says; bad arguments raise a ``LayoutError`` naming them; with nvcc, the ops' kernels
compile for sm_90 without a stack frame."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from linear_layouts.codegen.emulate import emulate_launch, find_cxx
from linear_layouts.codegen.intrinsics import DEVICE_PRELUDE
from linear_layouts.codegen.ptx import find_nvcc
from linear_layouts.codegen.realign_rows import (
    CHUNK_BYTES, MAX_BATCH_DIMS, MAX_BYTES, MIN_ROW_BYTES, emit_realigned_rows_kernel, emit_realigned_span_kernel,
    realigned_rows_arguments,
)
from linear_layouts.core.errors import LayoutError
from linear_layouts.ops import launches
from linear_layouts.ops.kernels import GridShape, realigned_rows_kernel
from linear_layouts.ops.plan import PermuteKind, plan_permutation

from ._emulated import SRC, DST, emulated_permute

_CXX = pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
_GUARD = 48
_NEVER = 0xAB
_DTYPES = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
#: The kernel's reads, checked: a byte ``_NEVER`` (the input holds none; the bytes around it all are) aborts the run.
_CHECKED_READS = """
#define LL_RR_LOADS
LL_DEV uint4 ll_rr_load16(unsigned long long x) {
  const unsigned char* b = (const unsigned char*)(size_t)x;
  for (int i = 0; i < 16; ++i) if (b[i] == 0xABu) std::abort();
  uint4 v; std::memcpy(&v, b, 16); return v;
}
LL_DEV unsigned ll_rr_load8(unsigned long long x) {
  const unsigned char b = *(const unsigned char*)(size_t)x;
  if (b == 0xABu) std::abort();
  return b;
}
"""


def _random(shape, w: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, size=tuple(shape) + (w,), dtype=np.uint8)
    raw[raw == _NEVER] = 0  # the input holds no byte the checked reads abort on
    return raw.view(_DTYPES[w])[..., 0]


def _run(shape, dims, w: int, src_offset: int, dst_offset: int, seed: int = 0, chunks: int = 1, warps: int = 4,
         span: int = 0):
    """``np.transpose`` of a random array as the realigned kernel computes it (``span``: the span kernel of that many
    chunks), emulated with checked reads."""
    a = _random(shape, w, seed)
    problem = plan_permutation(tuple(shape), tuple(dims), w)
    assert problem.kind is PermuteKind.ROWS
    kernel = (emit_realigned_span_kernel("k", len(problem.batch), span, warps) if span else
              emit_realigned_rows_kernel("k", len(problem.batch), chunks, warps))
    kernel = dataclasses.replace(kernel, source=DEVICE_PRELUDE + _CHECKED_READS
                                 + kernel.source[len(DEVICE_PRELUDE):])
    nbytes = a.nbytes
    tail = realigned_rows_arguments(kernel, nbytes, problem.cols * w, problem.rows, problem.lda * w,
                                    tuple((size, stride * w) for size, stride, _ in problem.batch), nbytes)
    src = np.full(src_offset + nbytes + _GUARD, _NEVER, np.uint8)
    src[src_offset:src_offset + nbytes] = a.view(np.uint8).reshape(-1)
    dst = np.full(dst_offset + nbytes + _GUARD, _NEVER, np.uint8)
    out = emulate_launch(kernel, kernel.tiles(1, nbytes + 2 * CHUNK_BYTES),
                         [(src, src_offset), (dst, dst_offset), *tail])[1]
    assert (out[:dst_offset] == _NEVER).all() and (out[dst_offset + nbytes:] == _NEVER).all()
    expected = np.ascontiguousarray(np.transpose(a, dims))
    return out[dst_offset:dst_offset + nbytes].view(a.dtype).reshape(expected.shape), expected


@_CXX
@pytest.mark.parametrize("shape, dims, w, src_offset, dst_offset", [
    ((5, 7, 37), (1, 0, 2), 1, 0, 0),            # odd rows, aligned buffers
    ((5, 7, 37), (1, 0, 2), 1, 3, 13),           # and both buffers off 16 bytes
    ((3, 4, 5, 17), (2, 0, 1, 3), 1, 15, 1),     # two batch dims, rows of 17: every chunk holds two rows
    ((2, 3, 4, 5, 17), (3, 1, 0, 2, 4), 1, 9, 2),  # three batch dims
    ((9, 11, 16), (1, 0, 2), 1, 7, 0),           # rows of exactly 16 bytes
    ((6, 9, 11), (1, 0, 2), 2, 2, 6),            # 2-byte elements, rows of 22 bytes
    ((4, 3, 19), (1, 0, 2), 4, 4, 12),           # 4-byte elements
    ((3, 5, 7), (1, 0, 2), 8, 8, 8),             # 8-byte elements
    ((1, 300, 3, 37), (0, 2, 1, 3), 1, 0, 5),    # an attention head move of 37-byte heads: several CTAs
])
def test_realigned_rows_match_numpy(shape, dims, w, src_offset, dst_offset):
    got, expected = _run(shape, dims, w, src_offset, dst_offset)
    assert np.array_equal(got, expected)


@_CXX
@settings(max_examples=40, deadline=None)
@given(st.data())
def test_random_row_moves_match_numpy(data):
    """The chunk kernel (``span`` 0) and the span kernel of 2 to 8 chunks on random row moves."""
    w = data.draw(st.sampled_from([1, 2, 4, 8]), "w")
    span = data.draw(st.sampled_from([0, 2, 4, 8]), "span")
    rank = data.draw(st.integers(2, 2 + MAX_BATCH_DIMS), "rank")
    least = -(-max(MIN_ROW_BYTES, 16 * span) // w)
    last = data.draw(st.integers(least, least + 50), "last")
    outer = data.draw(st.lists(st.integers(1, 6), min_size=rank - 1, max_size=rank - 1), "outer")
    perm = data.draw(st.permutations(range(rank - 1)), "perm")
    src_offset = w * data.draw(st.integers(0, 16 // w - 1), "src_offset")
    dst_offset = w * data.draw(st.integers(0, 16 // w - 1), "dst_offset")
    shape, dims = tuple(outer) + (last,), tuple(perm) + (rank - 1,)
    if plan_permutation(shape, dims, w).kind is not PermuteKind.ROWS:  # a copy: the permutation moves no row
        return
    got, expected = _run(shape, dims, w, src_offset, dst_offset, seed=last, span=span)
    assert np.array_equal(got, expected)


@_CXX
@pytest.mark.parametrize("shape, dims, w, src_offset, dst_offset, span", [
    ((5, 7, 32), (1, 0, 2), 1, 0, 0, 2),          # rows of exactly a span
    ((5, 7, 67), (1, 0, 2), 1, 3, 13, 4),         # odd rows, both buffers off 16 bytes
    ((1, 300, 3, 37), (0, 2, 1, 3), 2, 0, 6, 2),  # several CTAs
    ((3, 4, 5, 65), (2, 0, 1, 3), 1, 15, 1, 4),   # two batch dims
])
def test_span_kernel_matches_numpy(shape, dims, w, src_offset, dst_offset, span):
    got, expected = _run(shape, dims, w, src_offset, dst_offset, span=span)
    assert np.array_equal(got, expected)


@_CXX
@pytest.mark.parametrize("chunks, warps", [(2, 8), (4, 1)])
def test_other_chunks_and_warps(chunks, warps):
    got, expected = _run((7, 9, 41), (1, 0, 2), 1, 5, 11, chunks=chunks, warps=warps)
    assert np.array_equal(got, expected)


@_CXX
@pytest.mark.parametrize("shape, dims, src_offset, dst_offset", [
    ((231, 12, 361), (1, 0, 2), 0, 0), ((2, 50, 6, 33), (0, 2, 1, 3), 5, 9)])
def test_ops_permute_takes_it_and_matches_numpy(shape, dims, src_offset, dst_offset):
    a = _random(shape, 1, 1)
    launched = launches.permute_launches(shape, dims, 1, SRC + src_offset, DST + dst_offset, 1)  # a 1-SM device
    assert [item.kernel.name for item in launched] == [f"ll_rows_realigned_span_{len(shape) - 2}b"]
    assert np.array_equal(emulated_permute(a, dims, src_offset, dst_offset, sms=1), np.transpose(a, dims))


def _kernel_name(shape, dims, w, src=0, dst=0, device=GridShape(1), **kwargs) -> str:
    """The first kernel ``permute`` launches, on a 1-SM device by default (whose grids the CTA floor never stops)."""
    return launches.permute_launches(shape, dims, w, SRC + src, DST + dst, device, **kwargs)[0].kernel.name


def test_ops_takes_the_span_kernel_below_8_byte_vectors_and_the_chunk_kernel_for_short_byte_rows():
    span, chunks = "ll_rows_realigned_span", "ll_rows_realigned_1b"
    assert _kernel_name((231, 312, 361), (1, 0, 2), 1).startswith(span)        # odd byte rows
    assert _kernel_name((64, 64, 256), (1, 0, 2), 1, src=3).startswith(span)   # a byte off 16
    assert _kernel_name((521, 113, 145), (1, 0, 2), 2).startswith(span)       # rows of 290 bytes: 2-byte vectors
    assert _kernel_name((64, 33, 37), (1, 0, 2), 4).startswith(span)          # 4-byte vectors
    assert _kernel_name((64, 33, 17), (1, 0, 2), 1) == chunks                  # a row shorter than a span
    assert not _kernel_name((64, 33, 9), (1, 0, 2), 2).startswith(span)       # ... of 2-byte vectors: tiled
    assert not _kernel_name((64, 33, 64), (1, 0, 2), 8, src=8).startswith("ll_rows")  # 8-byte vectors: tiled
    assert not _kernel_name((64, 64, 256), (1, 0, 2), 1).startswith("ll_rows")  # 16-byte vectors
    assert not _kernel_name((64, 64, 15), (1, 0, 2), 1).startswith("ll_rows")   # rows under 16 bytes
    assert not _kernel_name((64, 33, 64), (0, 2, 1), 1).startswith("ll_rows")   # a transpose


def test_a_grid_under_the_cta_floor_keeps_the_tiled_kernel(monkeypatch):
    h200 = GridShape(132, 60 << 20)
    assert not _kernel_name((64, 33, 63), (1, 0, 2), 4, device=h200).startswith("ll_rows")  # 520 KiB: 130 CTAs
    assert _kernel_name((231, 312, 361), (1, 0, 2), 1, device=h200).startswith("ll_rows")   # 25 MiB: 6353 CTAs
    monkeypatch.setattr(launches, "REALIGNED_MIN_CTAS_PER_SM", 0)
    assert _kernel_name((64, 33, 63), (1, 0, 2), 4, device=h200).startswith("ll_rows")


def test_a_mostly_empty_tile_takes_the_span_kernel_at_any_vector_and_grid(monkeypatch):
    h200 = GridShape(132, 60 << 20)
    problem = plan_permutation((4, 5000, 40), (1, 0, 2), 2)  # matrices of 4 rows of 80 bytes: 16-byte vectors
    config = launches.tile_for(problem, 0, 0, h200)
    assert launches.rows_tile_use(problem, config) == 4 / config.rows * 40 / config.cols < launches.REALIGNED_TILE_USE
    assert _kernel_name((4, 5000, 40), (1, 0, 2), 2, device=h200) == "ll_rows_realigned_span_1b"  # 0.8 MiB: no floor
    assert _kernel_name((64, 33, 37), (1, 0, 2), 8, device=h200) == "ll_rows_realigned_span_1b"  # 37 of 64 columns
    assert not _kernel_name((8, 2048, 8, 128), (0, 2, 1, 3), 2, device=h200).startswith("ll_rows")  # attention
    assert _kernel_name((5000, 4, 4, 16), (0, 2, 1, 3), 4, device=h200).startswith("ll_permute_small")  # kept
    monkeypatch.setattr(launches, "REALIGNED_TILE_USE", 0)
    assert not _kernel_name((4, 5000, 40), (1, 0, 2), 2, device=h200).startswith("ll_rows")
    monkeypatch.setattr(launches, "REALIGNED_TILE_USE", 1.5)
    with pytest.raises(LayoutError, match="REALIGNED_TILE_USE"):
        _kernel_name((4, 5000, 40), (1, 0, 2), 2)


def test_the_thresholds_are_read_at_each_call(monkeypatch):
    monkeypatch.setattr(launches, "REALIGNED_ROWS_BELOW", 0)
    monkeypatch.setattr(launches, "REALIGNED_TILE_USE", 0)
    assert not _kernel_name((231, 312, 361), (1, 0, 2), 1).startswith("ll_rows")
    assert not _kernel_name((64, 33, 17), (1, 0, 2), 1).startswith("ll_rows")
    monkeypatch.setattr(launches, "REALIGNED_ROWS_BELOW", 16)
    assert _kernel_name((64, 33, 64), (1, 0, 2), 8, src=8).startswith("ll_rows_realigned_span")
    monkeypatch.setattr(launches, "REALIGNED_CHUNKS_BELOW", 16)
    assert _kernel_name((64, 33, 9), (1, 0, 2), 2) == "ll_rows_realigned_1b"
    for name in ("REALIGNED_ROWS_BELOW", "REALIGNED_CHUNKS_BELOW", "REALIGNED_MIN_CTAS_PER_SM"):
        monkeypatch.setattr(launches, name, -1)
        with pytest.raises(LayoutError, match=name):
            _kernel_name((231, 312, 361), (1, 0, 2), 1)
        monkeypatch.setattr(launches, name, 2)


def test_realigned_rows_conditions():
    problem = plan_permutation((231, 312, 361), (1, 0, 2), 1)
    assert launches.realigned_rows(problem, 0, 0) == "span"
    assert launches.realigned_rows(problem, 0, 0, below=0) is None
    big = plan_permutation((3, 2**16, 2**14 + 1), (1, 0, 2), 1)  # over MAX_BYTES: the tiled kernel's pieces
    assert big.rows * big.cols * big.batch_count > MAX_BYTES and launches.realigned_rows(big, 0, 0) is None
    deep = plan_permutation((2, 3, 2, 3, 2, 17), (4, 3, 2, 1, 0, 5), 1)  # more batch dims than the kernel takes
    assert len(deep.batch) > MAX_BATCH_DIMS and launches.realigned_rows(deep, 0, 0) is None
    strided = launches.permute_launches((16, 8, 37), (1, 0, 2), 1, SRC, DST, 1, strides=(640, 40, 1))
    assert not strided[0].kernel.name.startswith("ll_rows")  # a view with gaps keeps the tiled kernel


def test_a_grid_over_the_launch_limit_takes_the_tiled_kernels_pieces(monkeypatch):
    monkeypatch.setattr(launches, "MAX_LAUNCH_CTAS", 3)
    monkeypatch.setattr(launches, "SMALL_BATCHES", False)
    items = launches.permute_launches((6, 33, 4, 65), (2, 1, 0, 3), 1, SRC, DST, 1)
    assert len(items) > 1 and not any(item.kernel.name.startswith("ll_rows") for item in items)


def test_factory_names_and_kinds():
    assert realigned_rows_kernel(2).name == "ll_rows_realigned_2b"
    assert realigned_rows_kernel(0, span=True).name == "ll_rows_realigned_span_0b"
    from linear_layouts.ops import explain
    summary = explain((231, 312, 361), (1, 0, 2), "uint8")
    assert [launch.kind for launch in summary.launches] == ["realigned rows"]
    assert "4096 bytes a CTA" in str(summary)


@pytest.mark.parametrize("kwargs, argument", [
    (dict(batch_dims=4), "batch_dims"), (dict(batch_dims=-1), "batch_dims"), (dict(chunks_per_thread=0), "chunks"),
    (dict(chunks_per_thread=9), "chunks"), (dict(warps=33), "warps"), (dict(warps=True), "warps")])
def test_emit_rejects_bad_arguments(kwargs, argument):
    with pytest.raises(LayoutError, match=argument):
        emit_realigned_rows_kernel("k", **{"batch_dims": 1, **kwargs})


@pytest.mark.parametrize("kwargs, argument", [
    (dict(batch_dims=4), "batch_dims"), (dict(span_chunks=1), "span_chunks"), (dict(span_chunks=9), "span_chunks"),
    (dict(warps=0), "warps")])
def test_emit_span_rejects_bad_arguments(kwargs, argument):
    with pytest.raises(LayoutError, match=argument):
        emit_realigned_span_kernel("k", **{"batch_dims": 1, **kwargs})


def test_arguments_reject_what_the_kernel_does_not_take():
    kernel = emit_realigned_rows_kernel("k", 1)
    good = realigned_rows_arguments(kernel, 37 * 5 * 7, 37, 5, 259, ((7, 37),), 37 * 35)
    assert good[:4] == (1295, 37, 5, 259) and len(good) == len(kernel.params) - 2
    with pytest.raises(LayoutError, match="batch"):
        realigned_rows_arguments(kernel, 1295, 37, 5, 259, (), 1295)
    with pytest.raises(LayoutError, match="row_bytes"):
        realigned_rows_arguments(kernel, 15 * 5 * 7, 15, 5, 105, ((7, 15),), 525)
    with pytest.raises(LayoutError, match="nbytes"):
        realigned_rows_arguments(kernel, 1296, 37, 5, 259, ((7, 37),), 1296)


@pytest.mark.skipif(find_nvcc() is None, reason="no nvcc")
@pytest.mark.parametrize("span", [False, True])
def test_compiles_without_a_stack_frame(tmp_path, span):
    import re
    import subprocess

    (tmp_path / "k.cu").write_text(realigned_rows_kernel(1, span).source)
    report = subprocess.run([find_nvcc(), "-arch=sm_90", "-cubin", "-w", "-Xptxas", "-v", "-o",
                             str(tmp_path / "k.cubin"), str(tmp_path / "k.cu")],
                            capture_output=True, text=True, check=True).stderr
    assert re.search(r"0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads", report), report
