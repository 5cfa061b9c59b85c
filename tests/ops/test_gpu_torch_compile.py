"""The ops inside ``torch.compile`` on the device: called as they are (Dynamo breaks its graph at our launch) and
as registered custom operators (``ops.register_torch_ops``: one graph, ``fullgraph=True``), results bit for bit
against PyTorch's; the registered ``permute`` differentiable, the registered ``cast_transpose`` writing ``amax``.
Skipped without PyTorch, CuPy and an NVIDIA GPU."""

from __future__ import annotations

import pytest

from linear_layouts import ops

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")


def test_the_ops_as_they_are_in_a_compiled_function(cuda_gpu):
    x = torch.randn(300, 200, device="cuda")
    compiled = torch.compile(lambda t: ops.transpose(t) * 2)
    assert torch.equal(compiled(x), x.t().contiguous() * 2)


def test_the_registered_ops_stay_in_one_graph(cuda_gpu):
    lib = ops.register_torch_ops()
    assert ops.register_torch_ops() is lib  # once
    q = torch.randn(2, 64, 8, 32, device="cuda", dtype=torch.bfloat16)
    f = torch.compile(lambda t: lib.permute(t, [0, 2, 1, 3]) + 1, fullgraph=True)
    assert torch.equal(f(q), q.permute(0, 2, 1, 3).contiguous() + 1)
    w = torch.randn(96, 80, device="cuda")
    g = torch.compile(lambda t: lib.transpose(t.t()), fullgraph=True)  # a strided input: made contiguous first
    assert torch.equal(g(w), w)

    x = torch.randn(5, 6, 7, device="cuda", requires_grad=True)
    y = torch.compile(lambda t: lib.permute(t, [2, 0, 1]).sin(), fullgraph=True)(x)
    grad = torch.randn_like(y)
    y.backward(grad)
    assert torch.allclose(x.grad, (grad * x.detach().permute(2, 0, 1).cos()).permute(1, 2, 0))

    a = torch.randn(64, 48, device="cuda", dtype=torch.bfloat16)
    amax = torch.zeros(1, device="cuda")
    scale = torch.tensor([0.5], device="cuda")
    c, ct = torch.compile(lambda t, s, m: lib.cast_transpose(t, torch.float8_e4m3fn, s, m), fullgraph=True)(
        a, scale, amax)
    want = (a.float() * 0.5).to(torch.float8_e4m3fn)
    assert torch.equal(c.view(torch.uint8), want.view(torch.uint8))
    assert torch.equal(ct.view(torch.uint8), want.t().contiguous().view(torch.uint8))
    assert float(amax) == float(a.float().abs().max())
