"""Views with gaps or repeats on the device against PyTorch, bit for bit: the fixed views of ``gaps_bench`` (a fused
``qkv``'s ``q``/``k``/``v``, weight and channel slices, ``expand``, every other column) at small sizes, every element
size, random slices of random tensors (some transposed, some with steps), a CuPy view, and the gradient through a
slice. Skipped without PyTorch, CuPy and an NVIDIA GPU."""

from __future__ import annotations

import random

import pytest

from harness.ops_cases import bit_equal as _same
from harness.ops_cases import random_tensor
from linear_layouts import ops

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")


def _views(dtype: str):
    x = random_tensor((2, 40, 3 * 4 * 24), dtype).view(2, 40, 3, 4, 24)
    w = random_tensor((96, 130), dtype)
    image = random_tensor((2, 9, 9, 40), dtype)
    return [
        (x[:, :, 0], (0, 2, 1, 3)), (x[:, :, 1], (0, 2, 3, 1)), (x[:, :, 2], (0, 1, 2, 3)),
        (w[:, 3:103], (1, 0)), (w[:, 3:103], (0, 1)), (w[5:, :64].t(), (1, 0)), (w[5:, :64].t(), (0, 1)),
        (w[:, ::2], (1, 0)), (w[1::3, ::5], (0, 1)), (w[:1].expand(50, 130), (1, 0)),
        (image[..., 7:31], (0, 3, 1, 2)), (image[:, 1:, :, :16].permute(0, 3, 1, 2), (0, 2, 3, 1)),
        (w[:, 64:65], (1, 0)), (w[0:0, 3:9], (1, 0)),
    ]


@pytest.mark.parametrize("dtype", ["uint8", "bfloat16", "float32", "float64", "complex128"])
def test_fixed_views_match_torch(cuda_gpu, dtype):
    for view, dims in _views(dtype):
        assert _same(ops.permute(view, dims), view.permute(dims).contiguous()), (view.shape, view.stride(), dims)
    w = random_tensor((3, 96, 130), dtype)[:, :, 1:127]
    assert _same(ops.transpose(w), w.transpose(-2, -1).contiguous())


def test_random_views_match_torch(cuda_gpu):
    rng = random.Random(5)
    for _ in range(150):
        rank = rng.randrange(1, 5)
        shape = [rng.randrange(1, 12) for _ in range(rank)]
        shape[-1] = rng.randrange(1, 300)
        dtype = rng.choice(["uint8", "float16", "float32", "float64"])
        base = random_tensor(tuple(shape), dtype)
        index = []
        for size in shape:
            start = rng.randrange(size)
            index.append(slice(start, rng.randrange(start + 1, size + 1), rng.choice((1, 1, 1, 2, 3))))
        view = base[tuple(index)]
        if rng.random() < 0.4:
            view = view.permute(*rng.sample(range(rank), rank))
        dims = tuple(rng.sample(range(rank), rank))
        assert _same(ops.permute(view, dims), view.permute(dims).contiguous()), (shape, index, view.stride(), dims)


def test_a_cupy_view(cuda_gpu):
    cupy = pytest.importorskip("cupy")
    x = cupy.arange(6 * 10, dtype=cupy.float32).reshape(6, 10)
    view = x[:, 2:9]
    assert bool((ops.transpose(view) == view.T).all()) and ops.transpose(view).flags.c_contiguous


def test_the_gradient_through_a_slice(cuda_gpu):
    x = torch.randn(4, 64, 3 * 8 * 16, device="cuda", requires_grad=True)
    q = x.view(4, 64, 3, 8, 16)[:, :, 0]
    y = ops.permute(q, (0, 2, 1, 3))
    g = torch.randn_like(y)
    y.backward(g)
    want = x.detach().clone().requires_grad_()
    want.view(4, 64, 3, 8, 16)[:, :, 0].permute(0, 2, 1, 3).contiguous().backward(g)
    assert torch.equal(x.grad, want.grad)


def test_outputs_with_gaps_match_torch_and_leave_the_rest(cuda_gpu):
    """``out=`` a view with gaps (a KV cache's window, a column block, random slices): the whole buffer equals
    PyTorch's ``window.copy_(x.permute(dims))``, bit for bit, gaps untouched."""
    rng = random.Random(9)
    k = random_tensor((2, 40, 4, 64), "bfloat16")
    cases = [(k, (0, 2, 1, 3), (2, 4, 100, 64), (slice(None), slice(None), slice(10, 50))),
             (random_tensor((64, 100), "float32"), (1, 0), (100, 512), (slice(None), slice(64, 128))),
             (random_tensor((37, 50), "uint8"), (1, 0), (50, 41), (slice(None), slice(3, 40)))]
    for _ in range(60):
        rank = rng.randrange(1, 5)
        shape = tuple(rng.randrange(1, 10) for _ in range(rank - 1)) + (rng.randrange(1, 300),)
        x = random_tensor(shape, rng.choice(["uint8", "float16", "float32", "float64"]))
        if rng.random() < 0.5:
            x = x[tuple(slice(rng.randrange(n), n) for n in shape)]
        dims = tuple(rng.sample(range(rank), rank))
        out_shape = tuple(x.shape[d] for d in dims)
        pad, step = rng.randrange(3), rng.randrange(1, 3)
        buffer = tuple(n * step + pad for n in out_shape)
        cases.append((x, dims, buffer, tuple(slice(pad, pad + n * step, step) for n in out_shape)))
    for x, dims, buffer, index in cases:
        ours = random_tensor(buffer, str(x.dtype).split(".")[1])
        want = ours.clone()
        ops.permute(x, dims, out=ours[index])
        want[index].copy_(x.permute(dims))
        assert _same(ours, want), (x.shape, x.stride(), dims, buffer, index)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
def test_the_cast_transpose_of_a_view_with_gaps(cuda_gpu, dtype):
    """A column slice, a sliced batch and a transposed slice: gathered by ``permute``'s kernels, then cast, bit for
    bit as the cast of their ``.contiguous()``, amax included."""
    w = torch.randn(300, 257, device="cuda", dtype=getattr(torch, dtype)) * 100
    for view in (w[:, 3:203], w.view(3, 100, 257)[:, 10:90, :200], w[7:, :128].t()):
        c, t, amax = ops.cast_transpose(view, torch.float8_e4m3fn, 0.37)
        want_c, want_t, want_amax = ops.cast_transpose(view.contiguous(), torch.float8_e4m3fn, 0.37)
        assert _same(c, want_c) and _same(t, want_t) and float(amax) == float(want_amax)
        assert _same(c, (view.float() * 0.37).clamp(-448, 448).to(torch.float8_e4m3fn))
