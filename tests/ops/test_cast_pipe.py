"""The persistent fp8 cast-transpose (``codegen.cast_pipe``) without a GPU: the emitted kernel, run by the emulator
(whose asynchronous copies land only at the wait that needs them) on buffers with guard bytes around each output,
writes every byte of ``C`` and ``T`` exactly as ml_dtypes' fp8 of ``scale X`` and nothing outside them, and the
exact amax, on tiny, single-row, single-column, prime and odd shapes at misaligned bases, whole and edge tiles,
each input format and fp8 format, with as many CTAs as tiles and with fewer (each CTA looping over several tiles);
``ops.cast_launches`` launches it on a persistent grid when asked; with nvcc, each tile compiles for sm_90 within
64 registers, without spills."""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

from linear_layouts.codegen.cast_pipe import (
    PIPE_COPY_FUNCTIONS, PIPE_REGISTERS, chunks_per_row, emit_pipe_cast_transpose_kernel, pipe_shared_bytes,
    transposed_pitch,
)
from linear_layouts.codegen.emulate import emulate_launch, find_cxx
from linear_layouts.codegen.intrinsics import DEVICE_PRELUDE
from linear_layouts.codegen.permute import PermuteKernel
from linear_layouts.codegen.ptx import find_nvcc
from linear_layouts.core.errors import LayoutError
from linear_layouts.ops import launches
from linear_layouts.ops.kernels import pipe_cast_kernel, scalar_cast_kernel

from .test_cast_scalar import _input, _reference

ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes gives the reference fp8 rounding")

_GUARD = 40
_UNWRITTEN = 0xAB

pytestmark = pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")


def _run(kernel, input_format, fp8, shape, offsets, ctas=0, scale=0.37, infinite=False):
    """The kernel on ``shape`` with X, C and T at ``offsets`` bytes past aligned buffers, on ``ctas`` CTAs (0: as
    ``PermuteKernel.ctas`` picks on 132 SMs): C, T, the amax exact, nothing written around C and T. X ends its
    buffer, so a copy past its end would read outside it."""
    m, n = shape
    x = _input(input_format, shape, infinite)
    xo, co, to = offsets
    xbuf = np.zeros(xo + x.nbytes, np.uint8)
    xbuf[xo:] = x.view(np.uint8).reshape(-1)
    cbuf = np.full(co + m * n + _GUARD, _UNWRITTEN, np.uint8)
    tbuf = np.full(to + m * n + _GUARD, _UNWRITTEN, np.uint8)
    amax = np.array([2.0], np.float32)
    tm, tn = kernel.tile_counts(m, n)
    ctas = ctas or kernel.ctas(tm * tn, 132)
    _, c_out, t_out, _, _, a_out, *_ = emulate_launch(kernel, ctas, [
        (xbuf, xo), (cbuf, co), (tbuf, to), None, scale, amax, m, n, tn, tm])
    expected = _reference(x, fp8, scale)
    assert np.array_equal(c_out[co:co + m * n].reshape(m, n), expected)
    assert np.array_equal(t_out[to:to + m * n].reshape(n, m), expected.T)
    for out, offset in ((c_out, co), (t_out, to)):
        assert (out[:offset] == _UNWRITTEN).all() and (out[offset + m * n:] == _UNWRITTEN).all()
    assert a_out[0] == max(2.0, float(np.abs(x.astype(np.float32)).max()))


@pytest.mark.parametrize("input_format, fp8, shape, offsets, ctas, infinite", [
    ("bf16", "e4m3", (1, 1), (2, 3, 1), 0, False),         # one element
    ("fp16", "e5m2", (1, 131), (6, 1, 7), 0, True),        # one row over 3 tile columns; infinities
    ("fp32", "e4m3", (131, 1), (4, 5, 3), 0, False),       # one column over 3 tile rows
    ("bf16", "e5m2", (3, 2), (0, 1, 2), 0, False),         # fewer rows and columns than a word
    ("fp16", "e4m3", (267, 129), (2, 15, 14), 2, True),    # 9 tiles, whole and edge, on 2 CTAs; all misaligned
    ("fp32", "e5m2", (128, 192), (12, 9, 2), 1, False),    # 6 whole tiles on one CTA, misaligned bases
    ("bf16", "e4m3", (130, 100), (0, 0, 0), 0, False),     # aligned bases, rows of 100
    ("bf16", "e5m2", (257, 131), (14, 3, 1), 4, False),    # 9 tiles on 4 CTAs (rounds of unequal length)
])
def test_every_byte_once(input_format, fp8, shape, offsets, ctas, infinite):
    _run(pipe_cast_kernel(input_format, fp8), input_format, fp8, shape, offsets, ctas, infinite=infinite)


@pytest.mark.parametrize("input_format, rows, cols, warps, ctas", [
    ("bf16", 32, 32, 1, 3), ("fp32", 32, 64, 2, 2), ("fp16", 64, 32, 2, 5), ("bf16", 64, 128, 4, 3),
])
def test_every_tile_is_exact(input_format, rows, cols, warps, ctas):
    """Whole and edge tiles of each tile shape (the last tile row and column hold 37 and 13 elements), fewer
    CTAs than tiles."""
    kernel = emit_pipe_cast_transpose_kernel("k", input_format, "e4m3", rows, cols, warps)
    _run(kernel, input_format, "e4m3", (rows + 37, 2 * cols + 13), (2 if input_format != "fp32" else 4, 5, 3),
         ctas, scale=2.5)


def test_cast_launches_takes_it_when_asked(monkeypatch):
    """``misaligned="pipe"`` (or ``MISALIGNED_CAST``) launches it on a persistent grid (at most 4 CTAs of each
    of 132 SMs for 32 x 172 tiles: 11 rounds of 501 CTAs) with the scalar kernel's arguments."""
    args = ("bf16", "e4m3", 4095, 11007, 1 << 40, 2 << 40, 3 << 40, None, 1.0, 4 << 40, 132)
    (scalar,) = launches.cast_launches(*args, misaligned="scalar")
    (pipe,) = launches.cast_launches(*args, misaligned="pipe")
    assert pipe.kernel == pipe_cast_kernel("bf16", "e4m3") and scalar.kernel == scalar_cast_kernel("bf16", "e4m3")
    assert pipe.kernel.ctas_per_sm == 4 and pipe.ctas == 501 and pipe.values == scalar.values
    monkeypatch.setattr(launches, "MISALIGNED_CAST", "pipe")
    assert launches.cast_launches(*args) == [pipe]
    (small,) = launches.cast_launches("fp32", "e5m2", 5, 7, 1 << 40, 2 << 40, 3 << 40, None, 1.0, 4 << 40, 132)
    assert small.ctas == 1 and small.kernel.tile_rows == 64


def test_cast_transpose_through_the_launches(monkeypatch):
    """``ops``' own launch list with the persistent kernel forced, run by the emulator (misaligned bases)."""
    from ._emulated import emulated_cast_transpose

    monkeypatch.setattr(launches, "MISALIGNED_CAST", "pipe")
    x = _input("fp16", (170, 75), False)
    out, out_t, amax = emulated_cast_transpose(x.view(np.uint16), "fp16", "e4m3", 0.5, 3.0, (2, 3, 5))
    expected = _reference(x, "e4m3", 0.5)
    assert np.array_equal(out, expected) and np.array_equal(out_t, expected.T)
    assert amax == max(3.0, float(np.abs(x.astype(np.float32)).max()))


def test_emulated_copies_land_at_their_wait():
    """The emulator's ``cp.async``: a group lands when a wait leaves fewer pending, not before; the bytes past the
    size given are zeros; a copy's immediate offset moves both addresses."""
    source = DEVICE_PRELUDE + PIPE_COPY_FUNCTIONS + r"""
extern "C" __global__ void k(const unsigned char* __restrict__ src, unsigned char* __restrict__ out) {
  const unsigned smem = ll_smem_base();
  if (threadIdx.x != 0u) return;
  ll_pipe_copy16(smem, src);            // group 1: bytes 0-15
  ll_pipe_commit();
  ll_pipe_copy16<16u>(smem, src, 5u);   // group 2: bytes 16-20, then 11 zeros
  ll_pipe_commit();
  out[0] = ll_lds8(smem); out[1] = ll_lds8(smem + 16u);      // nothing landed
  ll_pipe_wait<1>();
  out[2] = ll_lds8(smem + 15u); out[3] = ll_lds8(smem + 16u);  // group 1 only
  ll_pipe_wait<0>();
  out[4] = ll_lds8(smem + 20u); out[5] = ll_lds8(smem + 21u);  // both
}
"""
    params = (("const unsigned char* __restrict__", "src"), ("unsigned char* __restrict__", "out"))
    kernel = PermuteKernel("k", source, 32, 64, 1, 1, 1, 1, 1, False, 0, params)
    src = np.arange(1, 33, dtype=np.uint8)
    _, out = emulate_launch(kernel, 1, [src, np.zeros(6, np.uint8)])
    assert out.tolist() == [0xCD, 0xCD, 16, 0xCD, 21, 0]


def test_shapes_and_bad_arguments():
    assert chunks_per_row(64, 2) == 9 and transposed_pitch(128) // 4 % 2 == 1
    kernel = emit_pipe_cast_transpose_kernel("k", "bf16", "e4m3")
    assert (kernel.tile_rows, kernel.tile_cols, kernel.threads, kernel.ctas_per_sm) == (128, 64, 256, 4)
    assert kernel.shared_bytes == pipe_shared_bytes(128, 64, 2) == 2 * 128 * 9 * 16 + 64 * 140 + 128
    assert "__launch_bounds__(256, 4)" in kernel.source
    assert emit_pipe_cast_transpose_kernel("k", "fp32", "e4m3", 128, 64, 8).ctas_per_sm == 2  # by shared memory
    for kwargs, message in (({"rows": 16}, "rows: must be a power of two from 32 to 256"),
                            ({"cols": 96}, "cols: must be a power of two"),
                            ({"rows": 256, "warps": 4}, "warps: 4 warps cannot take 256 x 64"),
                            ({"input_format": "fp32", "rows": 32, "cols": 256, "warps": 1}, "a 16-byte chunk"),
                            ({"rows": 256, "cols": 256, "input_format": "fp32"}, "more than an SM's"),
                            ({"input_format": "int8"}, "input_format"), ({"fp8": "e3m4"}, "fp8"),
                            ({"name": "1k"}, "name")):
        args = {"name": "k", "input_format": "bf16", "fp8": "e4m3", **kwargs}
        with pytest.raises(LayoutError, match=message):
            emit_pipe_cast_transpose_kernel(**args)


@pytest.mark.skipif(find_nvcc() is None, reason="needs nvcc")
@pytest.mark.parametrize("input_format, tile", [("bf16", None), ("fp32", None), ("fp16", (128, 64, 8))])
def test_compiles_for_sm_90_without_spills(input_format, tile, tmp_path):
    """ptxas's report (``-Xptxas -v``) for ``ops``' tiles and the 8-warp one: no stack frame, no spills, and the
    CTAs the launch bounds name fit an SM's 64K registers (at most ``PIPE_REGISTERS`` a thread where they bind)."""
    kernel = pipe_cast_kernel(input_format, "e5m2", tile)
    (tmp_path / "k.cu").write_text(kernel.source)
    report = subprocess.run([find_nvcc(), "-arch=sm_90", "-cubin", "-w", "-Xptxas", "-v", "-o", str(tmp_path / "k.cubin"),
                             str(tmp_path / "k.cu")], capture_output=True, text=True, check=True).stderr
    registers = int(re.search(r"Used (\d+) registers", report).group(1))
    assert re.search(r"0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads", report), report
    assert -(-registers // 8) * 8 * kernel.threads * kernel.ctas_per_sm <= 65536
    assert kernel.threads * kernel.ctas_per_sm * PIPE_REGISTERS < 65536 or registers <= PIPE_REGISTERS
