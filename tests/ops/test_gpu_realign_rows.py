"""The realigned rows kernels (``codegen.realign_rows``: span and chunk) on the device against PyTorch, bit for bit:
``ops.permute`` of byte tensors whose rows 16 bytes do not align (odd lengths, buffers off 16 bytes, 1 to 3 batch
dims), into outputs at offsets, with the bytes around the output untouched; and tensors of wider elements, with the
thresholds raised so that every vector takes them. Skipped without PyTorch, CuPy and an NVIDIA GPU."""

from __future__ import annotations

import pytest

from linear_layouts import ops
from linear_layouts.ops import launch as ops_launch
from linear_layouts.ops import launches

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

#: (shape, dims, the kernel ``ops`` takes for them at every offset): rows of 32 bytes or more take the span kernel.
CASES = (((231, 312, 361), (1, 0, 2), "ll_rows_realigned_span_"), ((2, 1000, 16, 37), (0, 2, 1, 3), "ll_rows_realigned_span_"),
         ((3, 5, 7, 11, 29), (3, 1, 0, 2, 4), "ll_rows_realigned_3b"), ((4096, 3, 17), (1, 0, 2), "ll_rows_realigned_1b"),
         ((9, 7, 19), (1, 0, 2), "ll_rows_realigned_1b"))


def _bytes(t):
    return t.contiguous().reshape(-1).view(torch.uint8)


@pytest.fixture(autouse=True)
def no_cta_floor(monkeypatch):
    """``REALIGNED_MIN_CTAS_PER_SM`` 0 (the small cases here take the kernels too), the plans ``dispatch`` cached
    cleared around each test."""
    from linear_layouts.ops import dispatch

    dispatch.call_plan.cache_clear()
    monkeypatch.setattr(launches, "REALIGNED_MIN_CTAS_PER_SM", 0)
    yield
    dispatch.call_plan.cache_clear()


def test_a_large_case_takes_the_span_kernel_by_default(cuda_gpu, monkeypatch):
    monkeypatch.setattr(launches, "REALIGNED_MIN_CTAS_PER_SM", 4)
    x = torch.randint(0, 256, (231, 312, 361), dtype=torch.uint8, device="cuda")
    out = torch.empty((312, 231, 361), dtype=torch.uint8, device="cuda")
    planned = launches.permute_launches(x.shape, (1, 0, 2), 1, x.data_ptr(), out.data_ptr(), ops_launch.grid_shape(0))
    assert planned[0].kernel.name == "ll_rows_realigned_span_1b"
    assert torch.equal(ops.permute(x, (1, 0, 2), out=out), x.permute(1, 0, 2))


@pytest.mark.parametrize("src_offset, dst_offset", [(0, 0), (3, 0), (0, 13), (7, 9)])
@pytest.mark.parametrize("shape, dims, kernel", CASES, ids=str)
def test_ops_takes_the_realigned_kernel_and_matches_torch(cuda_gpu, shape, dims, kernel, src_offset, dst_offset):
    numel = 1
    for size in shape:
        numel *= size
    source = torch.randint(0, 256, (numel + 32,), dtype=torch.uint8, device="cuda")
    x = source[src_offset:src_offset + numel].view(shape)
    expected = x.permute(dims).contiguous()
    buffer = torch.full((numel + 64,), 0xAB, dtype=torch.uint8, device="cuda")
    out = buffer[dst_offset:dst_offset + numel].view(expected.shape)
    planned = launches.permute_launches(shape, dims, 1, x.data_ptr(), out.data_ptr(), ops_launch.grid_shape(0))
    assert len(planned) == 1 and planned[0].kernel.name.startswith(kernel)
    ops.permute(x, dims, out=out)
    assert torch.equal(_bytes(out), _bytes(expected))
    assert bool((buffer[:dst_offset] == 0xAB).all()) and bool((buffer[dst_offset + numel:] == 0xAB).all())


@pytest.fixture
def realign_any_vector(monkeypatch):
    """``REALIGNED_ROWS_BELOW`` and ``REALIGNED_CHUNKS_BELOW`` raised to 16 bytes for the test, the plans ``dispatch``
    cached cleared around it."""
    from linear_layouts.ops import dispatch

    dispatch.call_plan.cache_clear()
    monkeypatch.setattr(launches, "REALIGNED_ROWS_BELOW", 16)
    monkeypatch.setattr(launches, "REALIGNED_CHUNKS_BELOW", 16)
    yield
    dispatch.call_plan.cache_clear()


@pytest.mark.parametrize("dtype, shape", [(torch.float16, (521, 13, 145)), (torch.float32, (33, 17, 19)),
                                          (torch.float64, (9, 5, 7)), (torch.bfloat16, (13, 17, 11))], ids=str)
def test_wider_elements_where_the_threshold_lets_them(cuda_gpu, realign_any_vector, dtype, shape):
    numel = 1
    for size in shape:
        numel *= size
    source = torch.randn(numel + 2, device="cuda").to(dtype)
    x = source[1:1 + numel].view(shape)  # one element past an aligned start: rows off 16 bytes
    dims = tuple(range(len(shape) - 3)) + (len(shape) - 2, len(shape) - 3, len(shape) - 1)
    planned = launches.permute_launches(shape, dims, x.element_size(), x.data_ptr(), x.data_ptr() + (1 << 30),
                                        ops_launch.grid_shape(0))
    assert planned[0].kernel.name.startswith("ll_rows_realigned")
    assert torch.equal(_bytes(ops.permute(x, dims)), _bytes(x.permute(dims)))
