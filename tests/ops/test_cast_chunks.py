"""The chunked fp8 cast-transpose (``codegen.cast_chunks``) without a GPU: the emitted kernel, run by the emulator on
buffers with guard bytes on both sides of each output, writes every byte of ``C`` and ``T`` exactly as ml_dtypes'
fp8 of ``scale X`` and nothing outside them, and the exact amax, on shapes that put every ownership edge (a row's
first and last chunk, rows and columns fewer than a chunk, one tile or several both ways) at every offset the
kernel accepts, for each input and fp8 format; a hypothesis property over random small shapes; the ownership
ranges partition ``C``'s and ``T``'s positions; ``ops.cast_launches`` takes it when asked and the pointers allow;
with nvcc, the tiles compile for sm_90 without spills within the registers their launch bounds budget."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from linear_layouts.codegen.cast_chunks import (
    MAX_CHUNKS, chunk_elements, chunked_pitch, chunked_shared_bytes, emit_chunked_cast_transpose_kernel, owned_range,
    thread_registers,
)
from linear_layouts.codegen.emulate import find_cxx
from linear_layouts.codegen.ptx import find_nvcc
from linear_layouts.core.errors import LayoutError
from linear_layouts.ops import launches
from linear_layouts.ops.kernels import chunked_cast_kernel, scalar_cast_kernel

from ._emulated import check_cast_kernel, compiles_without_spills

ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes gives the reference fp8 rounding")

_EDGES = np.array([0.0, -0.0, 1.0, 1.0625, 1.1875, 1.125, -1.1875, 0.001953125, 0.0029296875, 0.013671875, 448.0,
                   464.0, 480.0, 1e6, -1e6, 57344.0, 61440.0, 1e-9, 3.0e-5, -240.0, 2.0 ** -10, 2.0 ** -17, 15.5],
                  np.float32)
_NUMPY = {"bf16": ml_dtypes.bfloat16, "fp16": np.float16, "fp32": np.float32}


def _input(input_format: str, shape: tuple[int, int], seed: int = 0) -> np.ndarray:
    """Random values with the rounding's edges first and the largest ``|x|`` at an odd position near the end (the
    amax of an element every conversion pair holds second)."""
    m, n = shape
    rng = np.random.default_rng(7 * m + n + seed)
    values = (rng.standard_normal(shape) * 400).astype(np.float32)
    flat = values.reshape(-1)
    flat[:min(flat.size, len(_EDGES))] = _EDGES[:flat.size]
    if flat.size > len(_EDGES) + 1:
        flat[flat.size - 1 - flat.size % 2] = 4e6 * (1 + seed % 3)  # an odd position, above the edges
    with np.errstate(over="ignore"):
        return values.astype(_NUMPY[input_format])


pytestmark = pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")

#: A small tile of each chunk size (several tiles both ways on small shapes).
_SMALL = {2: (16, 16, 1), 4: (16, 16, 2)}


@pytest.mark.parametrize("input_format, fp8, shape, offsets", [
    ("bf16", "e4m3", (1, 1), (0, 0, 0)),            # one element: a partial chunk of C and of T
    ("fp16", "e5m2", (1, 131), (16, 8, 24)),         # one row over 9 tile columns
    ("fp32", "e4m3", (131, 1), (32, 4, 12)),         # one column over 9 tile rows
    ("bf16", "e5m2", (3, 2), (0, 8, 8)),             # fewer rows and columns than a chunk
    ("fp16", "e4m3", (7, 9), (16, 0, 8)),            # G - 1 rows, G + 1 columns
    ("bf16", "e4m3", (9, 7), (0, 16, 0)),            # G + 1 rows, G - 1 columns
    ("fp32", "e5m2", (3, 5), (0, 4, 0)),             # G - 1 rows, G + 1 columns of fp32
    ("bf16", "e4m3", (31, 33), (0, 0, 0)),
    ("fp16", "e5m2", (33, 63), (48, 8, 16)),
    ("fp32", "e4m3", (63, 65), (16, 12, 4)),
    ("bf16", "e5m2", (65, 127), (0, 8, 0)),
    ("fp32", "e5m2", (127, 129), (0, 0, 8)),
    ("fp16", "e4m3", (129, 200), (16, 0, 0)),
    ("bf16", "e4m3", (97, 131), (0, 24, 8)),         # primes
    ("fp32", "e4m3", (200, 2), (0, 0, 0)),
    ("bf16", "e5m2", (2, 200), (0, 0, 0)),
    ("fp16", "e4m3", (64, 48), (0, 0, 0)),           # whole tiles: every row aligned
])
def test_every_byte_once(input_format, fp8, shape, offsets):
    wi = 4 if input_format == "fp32" else 2
    kernel = emit_chunked_cast_transpose_kernel("k", input_format, fp8, *_SMALL[wi])
    check_cast_kernel(kernel, _input(input_format, shape), fp8, offsets)


@pytest.mark.parametrize("input_format, tile, shape", [
    ("bf16", (64, 64, 8), (97, 131)), ("fp32", (64, 64, 16), (70, 129)), ("fp16", (32, 64, 4), (65, 67)),
    ("bf16", (128, 64, 16), (131, 70)), ("fp32", (16, 32, 2), (33, 65)),
    ("bf16", (64, 64, 8), (200, 203)), ("fp32", (64, 64, 16), (197, 201)),  # 2 x 2 interior tiles each
])
def test_every_tile_is_exact(input_format, tile, shape):
    """The tiles ops and the benchmark take, with edge tiles both ways and the scale read from memory."""
    kernel = emit_chunked_cast_transpose_kernel("k", input_format, "e4m3", *tile)
    check_cast_kernel(kernel, _input(input_format, shape), "e4m3", (16, 8, 8), scale=2.5, scale_in_memory=True)


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(["bf16", "fp16", "fp32"]), st.sampled_from(["e4m3", "e5m2"]), st.integers(1, 70),
       st.integers(1, 70), st.integers(0, 3), st.integers(0, 3), st.integers(0, 3), st.integers(0, 2))
def test_random_shapes_and_offsets(input_format, fp8, m, n, xo, co, to, seed):
    g = chunk_elements(4 if input_format == "fp32" else 2)
    kernel = emit_chunked_cast_transpose_kernel("k", input_format, fp8, *_SMALL[16 // g])
    check_cast_kernel(kernel, _input(input_format, (m, n), seed), fp8, (16 * xo, g * co, g * to))


@pytest.mark.parametrize("m, n, rows, cols, g", [(4095, 11007, 64, 64, 8), (7, 3, 16, 16, 8), (97, 131, 16, 32, 4),
                                                 (33, 200, 32, 16, 8)])
def test_ownership_partitions_c_and_t(m, n, rows, cols, g):
    """The tiles' ranges of each row of C (and of T, the roles of rows and columns swapped) are disjoint and cover
    it: consecutive tiles share their boundary; every range of a middle tile is ``N`` (``R``) whole chunks."""
    for length, other, tile, count in ((n, m, cols, -(-n // cols)), (m, n, rows, -(-m // rows))):
        for row in sorted({0, 1, other // 2, other - 1}):
            ranges = [owned_range(row * length, k * tile, tile, length, g) for k in range(count)]
            assert ranges[0][0] == row * length and ranges[-1][1] == (row + 1) * length
            assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
            for lo, hi in ranges[1:-1]:
                assert lo % g == 0 and hi - lo == tile


def test_cast_launches_takes_it_when_asked_and_the_pointers_allow(monkeypatch):
    args = ("bf16", "e4m3", 4095, 11007, 1 << 40, 2 << 40, 3 << 40, None, 1.0, 4 << 40, 132)
    (chunked,) = launches.cast_launches(*args, misaligned="chunked")
    assert chunked.kernel == chunked_cast_kernel("bf16", "e4m3") and chunked.ctas == 32 * 172  # 128 x 64 tiles
    assert chunked.values == (1 << 40, 2 << 40, 3 << 40, None, 1.0, 4 << 40, 4095, 11007, 172, 32)
    assert launches.cast_launches(*args)[0].kernel.name.startswith("ll_cast_flat")  # auto: the flat cast here
    (scalar,) = launches.cast_launches(*args, misaligned="scalar")
    assert scalar.kernel == scalar_cast_kernel("bf16", "e4m3")
    monkeypatch.setattr(launches, "MISALIGNED_CAST", "scalar")
    assert launches.cast_launches(*args) == [scalar]
    monkeypatch.setattr(launches, "MISALIGNED_CAST", "chunked")
    assert launches.cast_launches(*args) == [chunked]
    for x, c, t in ((2, 0, 0), (0, 4, 0), (0, 0, 12)):  # X off 16 bytes, C or T off 8: the scalar kernel
        (other,) = launches.cast_launches("bf16", "e4m3", 4095, 11007, (1 << 40) + x, (2 << 40) + c, (3 << 40) + t,
                                          None, 1.0, 4 << 40, 132, "chunked")
        assert other.kernel == scalar_cast_kernel("bf16", "e4m3")
    (fp32,) = launches.cast_launches("fp32", "e5m2", 100, 30, 1 << 40, (2 << 40) + 4, (3 << 40) + 12, None, 1.0,
                                     4 << 40, 132)
    assert fp32.kernel == chunked_cast_kernel("fp32", "e5m2")  # fp32: C and T at multiples of 4
    assert launches.chunked_fits(2, 16, 8, 8) and not launches.chunked_fits(2, 16, 8, 4)


def test_shared_bytes_launch_bounds_and_bad_arguments():
    kernel = emit_chunked_cast_transpose_kernel("k", "bf16", "e4m3")
    assert (kernel.tile_rows, kernel.tile_cols, kernel.threads) == (64, 64, 256)
    assert kernel.shared_bytes == chunked_shared_bytes(64, 64, 8) == 79 * 86 + 2 + 128  # 79 columns of 86 bytes
    assert chunked_pitch(64, 8) == 86 and chunked_pitch(64, 4) == 78 and chunked_pitch(128, 8) == 150
    assert "__launch_bounds__(256, 5)" in kernel.source  # 48 registers for 3 chunks a thread
    assert "__launch_bounds__(256, 2)" in emit_chunked_cast_transpose_kernel("k", "bf16", "e4m3", ctas_per_sm=2).source
    for kwargs, message in (({"rows": 8}, "rows: must be a power of two from 16 to 256"),
                            ({"cols": 96}, "cols: must be a power of two"),
                            ({"rows": 128, "cols": 128, "warps": 8}, "warps: 8 warps cannot take 128 x 128"),
                            ({"warps": 3}, "warps: must be a power of two"),
                            ({"ctas_per_sm": 33}, "ctas_per_sm"), ({"input_format": "int8"}, "input_format"),
                            ({"fp8": "e3m4"}, "fp8"), ({"name": "1k"}, "name"), ({"rows": True}, "rows")):
        args = {"name": "k", "input_format": "bf16", "fp8": "e4m3", **kwargs}
        with pytest.raises(LayoutError, match=message):
            emit_chunked_cast_transpose_kernel(**args)


@pytest.mark.skipif(find_nvcc() is None, reason="needs nvcc")
@pytest.mark.parametrize("input_format, rows, cols, warps", [("bf16", 64, 64, 8), ("fp32", 64, 64, 16),
                                                             ("fp16", 128, 64, 16), ("bf16", 64, 128, 16)])
def test_compiles_for_sm_90_without_spills(input_format, rows, cols, warps, tmp_path):
    """ptxas's report under the launch bounds that ``thread_registers`` chose: no stack frame, no spills."""
    kernel = emit_chunked_cast_transpose_kernel("k", input_format, "e5m2", rows, cols, warps)
    g = chunk_elements(4 if input_format == "fp32" else 2)
    chunks = -(-(rows + g - 1) * (cols // g + 1) // kernel.threads)
    assert chunks <= MAX_CHUNKS
    compiles_without_spills(kernel, thread_registers(chunks), tmp_path)
