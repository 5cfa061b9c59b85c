"""``permute`` and ``transpose`` return the permuted view itself exactly where PyTorch's ``.contiguous()`` (and
CuPy's ``ascontiguousarray``) does: seeded shapes with size-1 dims, permuted and empty views, against PyTorch's own
answer; ``copy=True``, ``out=``, autograd and the registered ``torch.ops`` always give new memory. Skipped without
PyTorch, CuPy and an NVIDIA GPU."""

from __future__ import annotations

import random

import pytest

from linear_layouts import ops

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")


def _draws(seed: int, count: int):
    """``(shape, dims, view)``: random shapes of rank 1-5 with size-1 dims half the time, a random permutation,
    the input contiguous or a permuted view of a contiguous tensor (``view``: the permutation applied first)."""
    rng = random.Random(seed)
    for _ in range(count):
        rank = rng.randint(1, 5)
        shape = tuple(1 if rng.random() < 0.5 else rng.randint(0 if rng.random() < 0.05 else 2, 9)
                      for _ in range(rank))
        yield shape, tuple(rng.sample(range(rank), rank)), tuple(rng.sample(range(rank), rank))


@pytest.mark.parametrize("dtype", [torch.float16, torch.float64])
def test_a_view_exactly_where_contiguous_returns_one(cuda_gpu, dtype):
    views = 0
    for shape, dims, first in _draws(7, 300):
        x = torch.randn(shape, device="cuda").to(dtype).permute(first)
        expected = x.permute(dims).contiguous()
        y = ops.permute(x, dims)
        aliases = expected.data_ptr() == x.data_ptr() and expected.numel() > 0
        views += aliases
        assert torch.equal(y, expected) and y.shape == expected.shape and y.is_contiguous()
        if expected.numel():
            assert (y.data_ptr() == x.data_ptr()) == aliases, (shape, first, dims)
        z = ops.permute(x, dims, copy=True)
        assert torch.equal(z, expected) and (z.numel() == 0 or z.data_ptr() != x.data_ptr())
    assert 30 < views < 270  # both kinds drawn


def test_transpose_views_copies_out_and_autograd(cuda_gpu):
    big = torch.randn(1, 1183824, device="cuda", dtype=torch.float16)  # 2.3 MiB: a copy would be our kernel
    assert ops.transpose(big).data_ptr() == big.data_ptr()
    assert ops.permute(big.view(1, 1, 1183824), (1, 2, 0)).data_ptr() == big.data_ptr()
    row = torch.randn(1, 4096, device="cuda")
    t = ops.transpose(row)
    assert t.shape == (4096, 1) and t.data_ptr() == row.data_ptr()
    w = torch.randn(300, 200, device="cuda")
    assert ops.transpose(w.t()).data_ptr() == w.data_ptr()  # w.t() transposed back is w
    assert ops.transpose(w.t(), copy=True).data_ptr() != w.data_ptr()
    out = torch.empty(1, 8, 4, 6, device="cuda")
    x = torch.randn(8, 1, 4, 6, device="cuda")
    assert ops.permute(x, (1, 0, 2, 3), out=out) is out and torch.equal(out, x.permute(1, 0, 2, 3))
    k = torch.randn(2, 64, 1, 32, device="cuda", requires_grad=True)  # multi-query attention's one head
    y = ops.permute(k, (0, 2, 1, 3))
    assert y.data_ptr() == k.data_ptr()
    (y * torch.arange(32, device="cuda")).sum().backward()
    assert torch.equal(k.grad, torch.arange(32, device="cuda", dtype=k.dtype).expand(2, 64, 1, 32))


def test_registered_ops_return_new_tensors(cuda_gpu):
    ops.register_torch_ops()
    x = torch.randn(8, 1, 4, 6, device="cuda")
    y = torch.ops.linear_layouts.permute(x, [1, 0, 2, 3])
    assert torch.equal(y, x.permute(1, 0, 2, 3)) and y.data_ptr() != x.data_ptr()
    row = torch.randn(1, 300, device="cuda")
    assert torch.ops.linear_layouts.transpose(row).data_ptr() != row.data_ptr()


def test_cupy_views(cuda_gpu):
    cupy = pytest.importorskip("cupy")
    x = cupy.arange(8 * 4 * 6, dtype=cupy.float32).reshape(8, 1, 4, 6)
    y = ops.permute(x, (1, 0, 2, 3))
    assert y.data.ptr == x.data.ptr and y.flags.c_contiguous and y.shape == (1, 8, 4, 6)
    z = ops.permute(x, (1, 0, 2, 3), copy=True)
    assert z.data.ptr != x.data.ptr and bool((z == x.transpose(1, 0, 2, 3)).all())
    m = cupy.arange(12, dtype=cupy.float32).reshape(3, 4)
    assert ops.transpose(m).data.ptr != m.data.ptr and bool((ops.transpose(m) == m.T).all())
