"""Permuted views of contiguous tensors on the device against PyTorch, bit for bit: transposed weights,
channels-last images to NHWC and back to NCHW, permuted 4-D views, every element size; a differentiable call on a
view; a view with gaps; the cast-transpose of a transposed weight. Skipped without PyTorch, CuPy and an
NVIDIA GPU."""

from __future__ import annotations

import pytest

from harness.ops_cases import bit_equal as _same
from harness.ops_cases import random_tensor
from linear_layouts import ops
from linear_layouts.core.errors import LayoutError

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", ["uint8", "bfloat16", "float32", "float64"])
def test_views_match_torch(cuda_gpu, dtype):
    w = random_tensor((300, 257), dtype)
    assert _same(ops.transpose(w.t()), w) and _same(ops.permute(w.t(), (0, 1)), w.t().contiguous())
    image = random_tensor((4, 24, 13, 17), dtype).contiguous(memory_format=torch.channels_last)
    assert _same(ops.permute(image, (0, 2, 3, 1)), image.permute(0, 2, 3, 1).contiguous())
    assert _same(ops.permute(image, (0, 1, 2, 3)), image.contiguous())  # channels last -> NCHW memory
    q = random_tensor((2, 64, 8, 40), dtype)
    view = q.permute(0, 2, 1, 3)
    for dims in ((0, 2, 1, 3), (3, 1, 0, 2), (0, 1, 2, 3)):
        assert _same(ops.permute(view, dims), view.permute(dims).contiguous())
    assert _same(ops.permute(w[:, ::2], (1, 0)), w[:, ::2].t().contiguous())  # gaps: ``test_gpu_gaps``


def test_a_view_in_autograd(cuda_gpu):
    x = torch.randn(48, 80, device="cuda", requires_grad=True)
    y = ops.transpose(x.t() * 1)  # a non-leaf contiguous tensor
    z = ops.permute(x.t(), (1, 0))  # a view of the leaf
    g = torch.randn(48, 80, device="cuda")
    (y * g).sum().backward()
    (z * g).sum().backward()
    assert torch.equal(x.grad, 2 * g)


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_the_cast_transpose_of_a_transposed_weight(cuda_gpu, dtype):
    """``cast_transpose(w.t())``: ``w`` cast, the outputs swapped (no copy), bit for bit as of
    ``w.t().contiguous()``."""
    w = torch.randn(300, 257, device="cuda", dtype=getattr(torch, dtype))
    c, t, amax = ops.cast_transpose(w.t(), torch.float8_e4m3fn, 0.37)
    want_c, want_t, want_amax = ops.cast_transpose(w.t().contiguous(), torch.float8_e4m3fn, 0.37)
    assert _same(c, want_c) and _same(t, want_t) and float(amax) == float(want_amax)
    assert _same(c, (w.t().float() * 0.37).to(torch.float8_e4m3fn))
