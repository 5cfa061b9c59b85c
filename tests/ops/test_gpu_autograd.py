"""``permute`` / ``transpose`` in PyTorch's autograd on the device: the gradient of ``x`` is the output's gradient
permuted back, bit for bit as PyTorch's own ``permute(...).contiguous()`` gives it, also through a second
backward; under ``torch.no_grad`` nothing is recorded; ``out=`` is refused for an input that requires grad; the
cast-transpose's outputs carry no gradient. Skipped without PyTorch, CuPy and an NVIDIA GPU."""

from __future__ import annotations

import pytest

from linear_layouts import ops
from linear_layouts.core.errors import LayoutError

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

CASES = (((300, 200), (1, 0)), ((4, 3, 2, 5), (0, 2, 3, 1)), ((2, 64, 8, 32), (0, 2, 1, 3)),
         ((3, 1000, 999), (0, 2, 1)), ((5, 7, 11), (2, 0, 1)), ((6, 1, 9), (1, 2, 0)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("shape, dims", CASES, ids=str)
def test_the_gradient_is_the_inverse_permutation(cuda_gpu, shape, dims, dtype):
    x = torch.randn(shape, device="cuda", dtype=dtype, requires_grad=True)
    y = ops.permute(x, dims)
    assert y.requires_grad and "Permute" in type(y.grad_fn).__name__
    assert torch.equal(y.detach(), x.detach().permute(dims).contiguous())
    g = torch.randn_like(y)
    y.backward(g)
    want = x.detach().clone().requires_grad_()
    want.permute(dims).contiguous().backward(g)
    assert torch.equal(x.grad, want.grad)


def test_transpose_a_second_backward_and_no_grad(cuda_gpu):
    w = torch.randn(64, 48, device="cuda", requires_grad=True)
    y = ops.transpose(w)
    (grad,) = torch.autograd.grad((y * y).sum(), w, create_graph=True)  # d/dw sum(w^2) = 2w, through ours
    assert torch.allclose(grad, 2 * w) and grad.requires_grad
    (second,) = torch.autograd.grad(grad.sum(), w)
    assert torch.equal(second, torch.full_like(w, 2.0))
    with torch.no_grad():
        z = ops.transpose(w)
    assert not z.requires_grad and z.grad_fn is None and torch.equal(z, w.detach().t().contiguous())
    with pytest.raises(LayoutError, match="out: an op with out= is outside autograd, and x requires grad"):
        ops.transpose(w, out=torch.empty(48, 64, device="cuda"))
    with torch.no_grad():
        out = torch.empty(48, 64, device="cuda")
        assert ops.transpose(w, out=out) is out


def test_the_cast_transpose_outputs_carry_no_gradient(cuda_gpu):
    x = torch.randn(64, 32, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    c, t, amax = ops.cast_transpose(x, torch.float8_e4m3fn, 1.0)
    assert not (c.requires_grad or t.requires_grad or amax.requires_grad)


def test_a_gradient_that_is_a_view_goes_back_as_it_is(cuda_gpu):
    """``y.sum()``'s gradient is an expanded tensor of ones (stride 0), a sliced use's a view with gaps: the
    backward permutes them where they are (no ``.contiguous()`` first), bit for bit as PyTorch."""
    x = torch.randn(3, 40, 24, device="cuda", requires_grad=True)
    ops.permute(x, (2, 0, 1)).sum().backward()
    assert torch.equal(x.grad, torch.ones_like(x))
    x.grad = None
    y = ops.permute(x, (0, 2, 1))
    (y[:, :, 5:30] * 3).sum().backward()
    want = torch.zeros(3, 24, 40, device="cuda")
    want[:, :, 5:30] = 3
    assert torch.equal(x.grad, want.permute(0, 2, 1).contiguous())
