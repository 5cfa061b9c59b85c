"""The flat fp8 cast (``codegen.cast_flat``) and the cast-transpose ``ops`` builds of it (the cast, then ``C``'s
bytes transposed) without a GPU: emulated, ``C`` and ``T`` equal ml_dtypes' fp8 of ``scale X`` byte for byte and
nothing outside them is written, the amax is exact, on shapes whose element count ends inside a chunk, at every
offset the kernel takes, for each input and fp8 format; ``cast_launches`` takes it where ``auto`` says (the byte
transpose takes ``C``'s transpose) and when asked; with nvcc, it compiles for sm_90 without spills."""

from __future__ import annotations

import numpy as np
import pytest

from linear_layouts.codegen.cast_flat import MAX_CHUNKS, elements_per_cta, emit_flat_cast_kernel
from linear_layouts.codegen.emulate import find_cxx
from linear_layouts.codegen.ptx import find_nvcc
from linear_layouts.core.errors import LayoutError
from linear_layouts.ops import launches
from linear_layouts.ops.kernels import GridShape, flat_cast_kernel

from ._emulated import GUARD, UNWRITTEN, compiles_without_spills, emulated_cast_transpose, fp8_reference
from .test_cast_chunks import _input

_H200 = GridShape(132, 50 * 2**20)


def _bits(values: np.ndarray, input_format: str) -> np.ndarray:
    return values.view(np.uint32 if input_format == "fp32" else np.uint16)


@pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
@pytest.mark.parametrize("input_format, fp8, shape, offsets", [
    ("bf16", "e4m3", (1, 1), (0, 0, 0)),         # one element: the only chunk read element by element
    ("fp16", "e5m2", (1, 131), (16, 8, 3)),      # T's rows (one byte each) at an odd offset
    ("fp32", "e4m3", (131, 1), (32, 4, 13)),
    ("bf16", "e4m3", (97, 131), (0, 24, 7)),     # primes: the end inside a chunk
    ("fp32", "e5m2", (127, 129), (0, 0, 9)),
    ("fp16", "e4m3", (300, 301), (16, 8, 3)),    # several CTAs, the last partly empty
    ("bf16", "e5m2", (2, 200), (0, 0, 0)),
    ("fp32", "e4m3", (64, 48), (0, 4, 0)),       # a whole number of chunks
])
def test_every_byte_once(input_format, fp8, shape, offsets):
    x = _input(input_format, shape)
    c, t, amax = emulated_cast_transpose(_bits(x, input_format), input_format, fp8, 0.37, 2.0, offsets,
                                         misaligned="flat")
    expected = fp8_reference(x.astype(np.float32), fp8, 0.37)
    assert np.array_equal(c.reshape(shape), expected) and np.array_equal(t.reshape(shape[::-1]), expected.T)
    assert amax == max(2.0, float(np.abs(x.astype(np.float32)).max()))


@pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
def test_the_kernel_alone_writes_c_only():
    """The flat kernel writes ``C`` (every byte, nothing after it) and leaves ``T`` to the transpose."""
    from linear_layouts.codegen.emulate import emulate_launch

    m, n = 37, 29
    x = _input("bf16", (m, n))
    kernel = emit_flat_cast_kernel("k", "bf16", "e4m3", warps=1, chunks=2)
    c = np.full(m * n + GUARD, UNWRITTEN, np.uint8)
    t = np.full(m * n, UNWRITTEN, np.uint8)
    ctas = -(-m * n // elements_per_cta("bf16", 1, 2))
    _, c_out, t_out, _, _, a_out, *_ = emulate_launch(kernel, ctas, [
        _bits(x, "bf16").view(np.uint8).copy(), c, t, None, 0.5, np.zeros(1, np.float32), m, n, 1, 1])
    assert np.array_equal(c_out[:m * n].reshape(m, n), fp8_reference(x.astype(np.float32), "e4m3", 0.5))
    assert (c_out[m * n:] == UNWRITTEN).all() and (t_out == UNWRITTEN).all()
    assert a_out[0] == float(np.abs(x.astype(np.float32)).max())


def test_auto_takes_it_where_the_byte_transpose_takes_t():
    def kernels(m, n, fmt="bf16", misaligned=None, out_t=3 << 40):
        return [item.kernel.name.split("_")[1:3] for item in launches.cast_launches(
            fmt, "e4m3", m, n, 1 << 40, 2 << 40, out_t, None, 0.5, 4 << 40, _H200, misaligned)]

    assert kernels(4095, 11007) == [["cast", "flat"], ["permute", "bytes"]]       # 45 MB of C: T's rows odd
    assert kernels(8617, 2845) == [["cast", "transpose"]]                         # C within the L2: chunked
    assert kernels(11472, 5479) == [["cast", "transpose"]]                        # T's rows aligned: chunked
    assert kernels(4096, 11008)[0][:2] == ["cast", "transpose"]                   # aligned: the tiled kernel
    assert kernels(8617, 2845, misaligned="flat")[0] == ["cast", "flat"]          # asked for
    with pytest.raises(LayoutError, match="misaligned: must be one of"):
        kernels(4095, 11007, misaligned="fused")


def test_bad_arguments():
    kernel = flat_cast_kernel("fp32", "e5m2")
    assert (kernel.threads, kernel.tile_cols, kernel.shared_bytes) == (256, 4096, 128)
    assert elements_per_cta("bf16") == 8192 and elements_per_cta("fp32", 4, 2) == 1024
    for kwargs, message in (({"warps": 0}, "warps"), ({"chunks": MAX_CHUNKS + 1}, "chunks"), ({"chunks": True}, "chunks"),
                            ({"input_format": "fp8"}, "input_format"), ({"fp8": "e3m4"}, "fp8"), ({"name": "1k"}, "name")):
        with pytest.raises(LayoutError, match=message):
            emit_flat_cast_kernel(**{"name": "k", "input_format": "bf16", "fp8": "e4m3", **kwargs})


@pytest.mark.skipif(find_nvcc() is None, reason="needs nvcc")
@pytest.mark.parametrize("input_format", ["bf16", "fp32"])
def test_compiles_for_sm_90_without_spills(input_format, tmp_path):
    compiles_without_spills(flat_cast_kernel(input_format, "e4m3"), 24 + 8 * 4, tmp_path)
