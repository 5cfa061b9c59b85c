"""The scalar fp8 cast-transpose (``codegen.cast_scalar``) without a GPU: the emitted kernel, run by the emulator
on buffers with guard bytes on both sides of each output, writes every byte of ``C`` and ``T`` exactly as
ml_dtypes' fp8 of ``scale X`` (rounding edges, saturation, infinities included) and nothing outside them, and
the exact amax, on tiny, single-row, single-column, prime and odd shapes at misaligned bases, whole and edge
tiles, each input format and fp8 format and each tile; ``ops.cast_launches`` takes it when asked; its step-3
shared stores hit 32 banks; with nvcc, every tile compiles for sm_90 without spills within the registers its
launch bounds budget."""

from __future__ import annotations

import numpy as np
import pytest

from linear_layouts.codegen.cast_scalar import (
    emit_scalar_cast_transpose_kernel, row_pitch, scalar_shared_bytes, thread_registers,
)
from linear_layouts.codegen.emulate import find_cxx
from linear_layouts.codegen.ptx import find_nvcc
from linear_layouts.core.errors import LayoutError
from linear_layouts.ops import launches
from linear_layouts.ops.kernels import realigned_cast_kernel, scalar_cast_kernel

from ._emulated import check_cast_kernel, compiles_without_spills, fp8_reference

ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes gives the reference fp8 rounding")

#: Values at the rounding's edges: ties, fp8 subnormals, the largest finite values and beyond, signed zeros.
_EDGES = np.array([0.0, -0.0, 1.0, 1.0625, 1.1875, 1.125, -1.1875, 0.001953125, 0.0029296875, 0.013671875, 448.0,
                   464.0, 480.0, 1e6, -1e6, 57344.0, 61440.0, 1e-9, 3.0e-5, -240.0, 2.0 ** -10, 2.0 ** -17, 15.5],
                  np.float32)
_NUMPY = {"bf16": ml_dtypes.bfloat16, "fp16": np.float16, "fp32": np.float32}


def _input(input_format: str, shape: tuple[int, int], infinite: bool) -> np.ndarray:
    m, n = shape
    rng = np.random.default_rng(7 * m + n)
    values = (rng.standard_normal(shape) * 400).astype(np.float32)
    flat = values.reshape(-1)
    edges = np.concatenate([[np.inf, -np.inf], _EDGES]) if infinite else _EDGES
    flat[:min(flat.size, len(edges))] = edges[:flat.size]
    if m * n > len(edges):
        values[m // 2, n - 1] = 6e4  # the amax in the last column of a middle row (saturates in e4m3)
    with np.errstate(over="ignore"):  # 1e6 is infinite in fp16 (the amax then too)
        return values.astype(_NUMPY[input_format])


def _run(kernel, input_format, fp8, shape, offsets, scale=0.37, infinite=False):
    """The kernel on ``shape`` with X, C and T at ``offsets`` bytes past aligned buffers: C, T, the amax exact,
    nothing written around C and T."""
    check_cast_kernel(kernel, _input(input_format, shape, infinite), fp8, offsets, scale)


pytestmark = pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")


@pytest.mark.parametrize("input_format, fp8, shape, offsets, infinite", [
    ("bf16", "e4m3", (1, 1), (2, 3, 1), False),        # one element
    ("fp16", "e5m2", (1, 131), (6, 1, 7), True),       # one row over 3 tile columns; infinities
    ("fp32", "e4m3", (131, 1), (4, 5, 3), False),      # one column over 3 tile rows
    ("bf16", "e5m2", (3, 2), (0, 1, 2), False),        # fewer rows and columns than a warp
    ("fp16", "e4m3", (67, 129), (2, 15, 14), True),    # primes-ish: whole and edge tiles, every output misaligned
    ("fp32", "e5m2", (128, 192), (12, 9, 2), False),   # whole tiles only, misaligned bases
    ("bf16", "e4m3", (130, 100), (0, 0, 0), False),    # aligned bases, rows of 100
])
def test_every_byte_once(input_format, fp8, shape, offsets, infinite):
    _run(scalar_cast_kernel(input_format, fp8), input_format, fp8, shape, offsets, infinite=infinite)


@pytest.mark.parametrize("input_format, rows, cols, warps", [
    ("bf16", 32, 64, 8), ("fp32", 64, 128, 8), ("fp16", 128, 64, 8), ("bf16", 32, 32, 1), ("fp32", 256, 32, 4),
])
def test_every_tile_is_exact(input_format, rows, cols, warps):
    """Whole and edge tiles of each tile shape (the last tile row and column hold 37 and 13 elements)."""
    kernel = emit_scalar_cast_transpose_kernel("k", input_format, "e4m3", rows, cols, warps)
    _run(kernel, input_format, "e4m3", (rows + 37, 2 * cols + 13), (2 if input_format != "fp32" else 4, 5, 3),
         scale=2.5)


def test_cast_launches_takes_it_when_asked(monkeypatch):
    """Misaligned rows take the scalar kernel when ``MISALIGNED_CAST`` (or ``misaligned=``) names it, the realigned
    one likewise; the arguments are the same; aligned rows keep the aligned kernel."""
    args = ("bf16", "e4m3", 4095, 11007, 1 << 40, 2 << 40, 3 << 40, None, 1.0, 4 << 40, 132)
    (scalar,) = launches.cast_launches(*args, misaligned="scalar")
    (fp32,) = launches.cast_launches("fp32", *args[1:], misaligned="scalar")
    assert fp32.kernel == scalar_cast_kernel("fp32", "e4m3")
    (realigned,) = launches.cast_launches(*args, misaligned="realigned")
    assert realigned.kernel == realigned_cast_kernel("bf16", "e4m3") and scalar.kernel == scalar_cast_kernel("bf16", "e4m3")
    assert scalar.ctas == 32 * 172 and scalar.values == (1 << 40, 2 << 40, 3 << 40, None, 1.0, 4 << 40, 4095, 11007,
                                                         172, 32)
    assert realigned.ctas == 64 * 43 and realigned.values[:8] == scalar.values[:8]
    monkeypatch.setattr(launches, "MISALIGNED_CAST", "realigned")
    assert launches.cast_launches(*args) == [realigned]
    (aligned,) = launches.cast_launches("bf16", "e4m3", 4096, 11008, 1 << 40, 2 << 40, 3 << 40, None, 1.0, 4 << 40, 132)
    assert not aligned.kernel.name.startswith(("ll_cast_transpose_scalar", "ll_cast_transpose_realigned"))
    with pytest.raises(LayoutError, match="misaligned: must be one of"):
        launches.cast_launches(*args, misaligned="vector")


def test_cast_transpose_through_the_launches(monkeypatch):
    """``ops``' own launch list with the scalar kernel forced, run by the emulator (misaligned bases)."""
    from ._emulated import emulated_cast_transpose

    monkeypatch.setattr(launches, "MISALIGNED_CAST", "scalar")
    x = _input("bf16", (70, 75), False)
    out, out_t, amax = emulated_cast_transpose(x.view(np.uint16), "bf16", "e5m2", 0.5, 3.0, (2, 3, 5))
    expected = fp8_reference(x, "e5m2", 0.5)
    assert np.array_equal(out, expected) and np.array_equal(out_t, expected.T)
    assert amax == max(3.0, float(np.abs(x.astype(np.float32)).max()))


def test_step_3_stores_hit_32_banks():
    """Lanes ``l`` store byte ``(l + 32 j) P + r`` of one tile row ``r``: 32 distinct banks for every row."""
    for rows in (32, 64, 128, 256):
        p = row_pitch(rows)
        for r in range(rows):
            for j in range(2):
                assert len({((lane + 32 * j) * p + r) // 4 % 32 for lane in range(32)}) == 32


def test_shared_bytes_launch_bounds_and_bad_arguments():
    kernel = emit_scalar_cast_transpose_kernel("k", "bf16", "e4m3")
    assert (kernel.tile_rows, kernel.tile_cols, kernel.threads) == (64, 64, 256)
    assert kernel.shared_bytes == scalar_shared_bytes(64, 64) == 64 * 68 + 128
    assert "__launch_bounds__(256, 6)" in kernel.source  # 40 registers for 16 elements a thread
    assert "__launch_bounds__(256, 8)" in emit_scalar_cast_transpose_kernel("k", "bf16", "e4m3", 32, 64).source
    assert "__launch_bounds__(256, 2)" in emit_scalar_cast_transpose_kernel("k", "bf16", "e4m3", ctas_per_sm=2).source
    for kwargs, message in (({"rows": 16}, "rows: must be a power of two from 32 to 256"),
                            ({"cols": 96}, "cols: must be a power of two"),
                            ({"rows": 256, "cols": 256, "warps": 8}, "warps: 8 warps cannot take 256 x 256"),
                            ({"ctas_per_sm": 33}, "ctas_per_sm"), ({"input_format": "int8"}, "input_format"),
                            ({"fp8": "e3m4"}, "fp8"), ({"name": "1k"}, "name")):
        args = {"name": "k", "input_format": "bf16", "fp8": "e4m3", **kwargs}
        with pytest.raises(LayoutError, match=message):
            emit_scalar_cast_transpose_kernel(**args)


@pytest.mark.skipif(find_nvcc() is None, reason="needs nvcc")
@pytest.mark.parametrize("input_format, rows, cols", [("bf16", 64, 64), ("fp32", 64, 64), ("fp16", 32, 64),
                                                      ("bf16", 64, 128), ("fp32", 128, 64)])
def test_compiles_for_sm_90_without_spills(input_format, rows, cols, tmp_path):
    """ptxas's report (``-Xptxas -v``) under the launch bounds that ``thread_registers`` chose: no stack frame,
    no spills, and the CTAs the bounds name fit an SM's 64K registers."""
    kernel = emit_scalar_cast_transpose_kernel("k", input_format, "e5m2", rows, cols, 8)
    compiles_without_spills(kernel, thread_registers(rows * cols // 256), tmp_path)
