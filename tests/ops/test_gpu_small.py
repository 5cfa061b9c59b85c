"""Batches of small blocks (``codegen.permute_small``) on the device against PyTorch, bit for bit:
``ops.permute`` of 2x2 .. 8x8 matrices, tiny heads and small images of every element size, at fresh and offset
addresses, and with ``launches.SMALL_BATCHES`` off (the kernels they took before). Skipped without PyTorch, CuPy
and an NVIDIA GPU."""

from __future__ import annotations

import pytest

from harness.ops_cases import GPU_SMALL, GPU_SMALL_DTYPES, bit_equal, random_tensor, runner
from linear_layouts import ops
from linear_layouts.ops import launch as ops_launch
from linear_layouts.ops import launches

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

SMALL_CASES = GPU_SMALL
DTYPES = tuple(GPU_SMALL_DTYPES)


_random, _same = random_tensor, bit_equal


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, dims", SMALL_CASES, ids=str)
def test_small_batches_match_torch(cuda_gpu, shape, dims, dtype):
    x = _random(shape, dtype)
    assert _same(ops.permute(x, dims), x.permute(dims).contiguous())


@pytest.mark.parametrize("offset", [1, 3, 5])
@pytest.mark.parametrize("shape, dims, dtype", [((100000, 3, 5), (0, 2, 1), "float16"),
                                                ((30000, 7, 7, 3), (0, 3, 1, 2), "float32"),
                                                ((1000000, 2, 2), (0, 2, 1), "uint8")], ids=str)
def test_offset_inputs_and_outputs(cuda_gpu, shape, dims, dtype, offset):
    """A source and an ``out=`` at element offsets into larger buffers (the kernel's slots are absolute)."""
    numel = 1
    for size in shape:
        numel *= size
    base = _random((numel + 2 * offset,), dtype)
    x = base[offset:offset + numel].view(shape)
    holder = torch.zeros(numel + 2 * offset, dtype=x.dtype, device="cuda")
    out = holder[2 * offset - 1:2 * offset - 1 + numel].view(tuple(shape[d] for d in dims))
    ops.permute(x, dims, out=out)
    assert _same(out, x.permute(dims).contiguous())
    assert not holder[:2 * offset - 1].view(torch.uint8).any() and not holder[2 * offset - 1 + numel:].view(torch.uint8).any()


def test_off_switch_matches_too(cuda_gpu, monkeypatch):
    """With ``SMALL_BATCHES`` off the same calls take the kernels they took before (a new process's plans: the
    dispatch LRU holds the ones made with it on), and agree."""
    monkeypatch.setattr(launches, "SMALL_BATCHES", False)
    for shape, dims in SMALL_CASES[:4]:
        x = _random(shape, "float32")
        out = torch.empty(tuple(shape[d] for d in dims), dtype=x.dtype, device="cuda")
        items = launches.permute_launches(shape, dims, 4, x.data_ptr(), out.data_ptr(), ops_launch.grid_shape(0))
        assert all("small" not in item.kernel.name for item in items)
        runner(items)()
        torch.cuda.synchronize()
        assert _same(out, x.permute(dims).contiguous())
