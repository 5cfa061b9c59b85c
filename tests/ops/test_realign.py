"""The realigned fp8 cast-transpose (``codegen.realign``) without a GPU: the chunk ownership its stores follow
partitions every output row into whole 16-byte chunks within the window's margin (hypothesis); the emitted
kernel, run by the emulator on buffers with guard bytes on both sides of each output, writes every byte of
``C`` and ``T`` exactly as ml_dtypes' fp8 of ``scale X`` and nothing outside them, and the exact amax, on
shapes that cut the ownership's edge cases (rows shorter than a chunk, a last tile of one row or column,
rows whose first boundary lies past the tile) and on other tiles."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linear_layouts.codegen.emulate import emulate_launch, find_cxx
from linear_layouts.codegen.realign import (
    emit_realigned_cast_transpose_kernel, owned_positions, realigned_shared_bytes,
)
from linear_layouts.core.errors import LayoutError

ml_dtypes = pytest.importorskip("ml_dtypes")

_GUARD = 40
_UNWRITTEN = 0xAB


@settings(max_examples=300, deadline=None)
@given(address=st.integers(0, 2**20), length=st.integers(1, 700), tile=st.sampled_from([64, 128, 256]))
def test_owned_positions_partition_rows_into_whole_chunks(address, length, tile):
    """Consecutive tiles' ranges are contiguous and cover the row; each starts and ends on a 16-byte boundary
    but at the row's start and end; none reaches more than 15 positions past its tile."""
    at = 0
    for p0 in range(0, length, tile):
        p1 = min(p0 + tile, length)
        lo, hi = owned_positions(address, length, p0, p1)
        assert lo == at and p0 <= lo <= hi <= min(length, p1 + 15)
        assert lo in (0, length) or (address + lo) % 16 == 0
        assert hi == length or (address + hi) % 16 == 0
        at = hi
    assert at == length


def _reference(x: np.ndarray, fp8: str, scale: float) -> np.ndarray:
    f8, top = (ml_dtypes.float8_e4m3fn, 448.0) if fp8 == "e4m3" else (ml_dtypes.float8_e5m2, 57344.0)
    return np.clip(x.astype(np.float32) * np.float32(scale), -top, top).astype(f8).view(np.uint8)


@pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
@pytest.mark.parametrize("input_format, fp8, shape, offsets, tile", [
    ("bf16", "e4m3", (129, 131), (6, 5, 11), (128, 128, 8)),   # last tiles of one row and three columns
    ("fp16", "e5m2", (70, 7), (2, 13, 3), (128, 128, 8)),      # rows shorter than a chunk: starts and ends only
    ("bf16", "e4m3", (200, 147), (14, 1, 15), (64, 128, 4)),   # a 64-row tile; a last tile of 19 columns
    ("fp32", "e5m2", (67, 150), (12, 9, 2), (64, 64, 4)),      # fp32, 64 x 64 tiles: 2 x 3
])
def test_emulated_kernel_writes_every_byte_once(input_format, fp8, shape, offsets, tile):
    rows, cols, warps = tile
    kernel = emit_realigned_cast_transpose_kernel("k", input_format, fp8, rows, cols, warps)
    rng = np.random.default_rng(sum(shape))
    m, n = shape
    values = (rng.standard_normal(shape) * 400).astype(np.float32)
    values[m // 2, n - 1] = 6e4  # the amax in the last column of a middle row (saturates in e4m3)
    x = values.astype({"bf16": ml_dtypes.bfloat16, "fp16": np.float16, "fp32": np.float32}[input_format])
    xo, co, to = offsets
    xbuf = np.zeros(xo + x.nbytes, np.uint8)
    xbuf[xo:] = x.view(np.uint8).reshape(-1)
    cbuf = np.full(co + m * n + _GUARD, _UNWRITTEN, np.uint8)
    tbuf = np.full(to + m * n + _GUARD, _UNWRITTEN, np.uint8)
    amax = np.array([2.0], np.float32)
    scale = np.array([0.37], np.float32)
    tm, tn = kernel.tile_counts(m, n)
    _, c_out, t_out, _, _, a_out, *_ = emulate_launch(kernel, tm * tn, [
        (xbuf, xo), (cbuf, co), (tbuf, to), scale, 0.0, amax, m, n, tn, tm])
    expected = _reference(x, fp8, 0.37)
    assert np.array_equal(c_out[co:co + m * n].reshape(m, n), expected)
    assert np.array_equal(t_out[to:to + m * n].reshape(n, m), expected.T)
    for out, offset in ((c_out, co), (t_out, to)):  # nothing before or after the outputs
        assert (out[:offset] == _UNWRITTEN).all() and (out[offset + m * n:] == _UNWRITTEN).all()
    assert a_out[0] == max(2.0, float(np.abs(x.astype(np.float32)).max()))


def test_shared_bytes_and_bad_arguments():
    kernel = emit_realigned_cast_transpose_kernel("k", "bf16", "e4m3")
    assert kernel.shared_bytes == realigned_shared_bytes(128, 128, 2) == 144 * 304 + 16 + 2 * 128 * 176 + 128
    assert "__launch_bounds__(256, 2)" in kernel.source
    with pytest.raises(LayoutError, match="rows: must be a power of two from 64"):
        emit_realigned_cast_transpose_kernel("k", "bf16", "e4m3", rows=32)
    with pytest.raises(LayoutError, match="ctas_per_sm"):
        emit_realigned_cast_transpose_kernel("k", "bf16", "e4m3", ctas_per_sm=-1)
    with pytest.raises(LayoutError, match="input_format"):
        emit_realigned_cast_transpose_kernel("k", "int8", "e4m3")
