"""Arguments of the ops' Python API, without a GPU (``benchmarks/harness/fakes.py``): dims the call plans would
take for others, dims and sizes in no order, iterators that do not end, ``copy=True`` of a tensor that requires
grad, a cast-transpose too large for its kernels, a signaling NaN scale, and ``explain``'s NumPy sizes and dtype
errors."""

from __future__ import annotations

import decimal
import itertools
import sys
import types

import numpy as np
import pytest

from linear_layouts import ops
from linear_layouts.core.errors import LayoutError
from linear_layouts.ops import api, autograd, dispatch

from harness.fakes import FakeCuda, FakeTorchTensor, install

from .test_arguments import FakeArray


@pytest.mark.parametrize("dims", [(True, False), (1.0, 0.0)])
def test_view_check_does_not_take_dims_equal_to_kept_ones(monkeypatch, dims):
    """``torch_view`` keeps its answers by dims, where ``(True, False)`` and ``(1.0, 0.0)`` equal ``(1, 0)``: once
    ``(1, 0)`` had been asked of a ``(1, 5)`` tensor they were taken too."""
    install(monkeypatch, FakeCuda())
    x = FakeTorchTensor((1, 5), 2)
    assert ops.permute(x, (1, 0)).shape == (5, 1)
    with pytest.raises(LayoutError, match="dims: must hold ints"):
        ops.permute(x, dims)


def _cupy_x():
    return FakeArray((4, 6), pointer=1 << 40)


@pytest.mark.parametrize("dims", [{1, 0}, frozenset((2, 0, 1)), {1: "a", 0: "b"}])
@pytest.mark.parametrize("framework", ["torch", "cupy"])
def test_unordered_dims_are_refused(monkeypatch, dims, framework):
    """A set iterates in its own order (``{2, 0, 1}`` as ``0, 1, 2``): it was taken as that permutation, silently."""
    cuda = FakeCuda()
    install(monkeypatch, cuda)
    x = FakeTorchTensor((4, 6), 2) if framework == "torch" else _cupy_x()
    with pytest.raises(LayoutError, match="dims: must be ints in order"):
        ops.permute(x, dims)
    assert not cuda.launches


@pytest.mark.parametrize("shape, dims, argument", [({64, 96}, (1, 0), "shape"), ((64, 96), {1, 0}, "dims"),
                                                   ({64: 0, 96: 1}, (1, 0), "shape")])
def test_explain_refuses_unordered_shape_and_dims(shape, dims, argument):
    with pytest.raises(LayoutError, match=f"{argument}: must be ints in order"):
        ops.explain(shape, dims, "bf16")


def _long_iterator(first: tuple[int, ...]):
    """``first``, then ints on and on: it stands in for an endless iterator, failing where it is read to its end."""
    yield from first
    yield from itertools.islice(itertools.count(len(first)), 1 << 20)
    raise AssertionError("the iterator was read to its end")


@pytest.mark.parametrize("call", [
    lambda: ops.permute(_cupy_x(), _long_iterator((1, 0))),
    lambda: ops.permute(FakeTorchTensor((4, 6), 2), _long_iterator((1, 0))),
    lambda: ops.explain(_long_iterator((4, 6)), (1, 0), "u8"),
    lambda: ops.explain((4, 6), _long_iterator((1, 0)), "u8"),
])
def test_an_endless_iterator_is_refused(monkeypatch, call):
    """``tuple(dims)`` of an endless iterator never returned; the ops read more items than any tensor has dims."""
    install(monkeypatch, FakeCuda())
    with pytest.raises(LayoutError, match="(dims|shape): "):
        call()


def test_explain_takes_numpy_sizes_and_offsets():
    """``explain(np.array(shape), ...)`` and NumPy offsets, as ``permute`` takes NumPy dims."""
    want = ops.explain((64, 96), (1, 0), "bf16", src_offset=2, dst_offset=4)
    assert ops.explain(np.array([64, 96]), (1, 0), "bf16", src_offset=np.int64(2), dst_offset=np.uint8(4)) == want
    assert ops.explain((np.int32(64), 96), (1, 0), "bf16", src_offset=2, dst_offset=4) == want
    for shape in ((64, np.True_), (64, np.float64(96.0))):
        with pytest.raises(LayoutError, match="shape: sizes must be ints >= 0"):
            ops.explain(shape, (1, 0), "bf16")


@pytest.mark.parametrize("dtype", ["complex32x", "object", "fp61", None, 3])
def test_explain_dtype_errors_name_the_argument(dtype):
    with pytest.raises(LayoutError, match="^dtype: "):
        ops.explain((4, 8), (1, 0), dtype)


class _GradTensor(FakeTorchTensor):
    """A PyTorch tensor that requires grad: its views too; ``detach`` shares its memory, ``clone`` does not."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.requires_grad = True

    def permute(self, *dims):
        view = super().permute(*dims)
        view.__class__ = _GradTensor
        view.requires_grad = True
        return view

    def detach(self):
        return FakeTorchTensor(self.shape, self._itemsize, self._pointer, self._device, self._strides)

    def clone(self):
        return _GradTensor(self.shape, self._itemsize, device=self._device)


_GradTensor.__module__ = "torch"


class _Function:
    """``torch.autograd.Function``'s ``apply``: the forward, nothing recorded."""

    @classmethod
    def apply(cls, *args):
        return cls.forward(types.SimpleNamespace(), *args)


@pytest.fixture
def fake_torch(monkeypatch):
    """A ``torch`` module with grad mode on and ``autograd.Function`` (PyTorch is not needed here)."""
    module = types.ModuleType("torch")
    module.is_grad_enabled = lambda: True
    module.autograd = types.SimpleNamespace(Function=_Function)
    monkeypatch.setitem(sys.modules, "torch", module)
    for cache in (dispatch._grad_enabled, autograd._function):
        cache.cache_clear()
    yield module
    for cache in (dispatch._grad_enabled, autograd._function):
        cache.cache_clear()


@pytest.mark.parametrize("call, shape", [(lambda x: ops.permute(x, (1, 0), copy=True), (1, 5)),
                                         (lambda x: ops.transpose(x, copy=True), (7, 1))])
def test_copy_of_a_tensor_that_requires_grad_is_new(monkeypatch, fake_torch, call, shape):
    """``copy=True`` where the permuted view is contiguous already: ``autograd.Permute``'s forward returned that view,
    sharing ``x``'s memory."""
    install(monkeypatch, FakeCuda())
    x = _GradTensor(shape, 2)
    y = call(x)
    assert y.shape == shape[::-1] and y.data_ptr() != x.data_ptr()


class _Allocated(FakeArray):
    """A new CuPy stand-in (``fill`` does nothing)."""

    def fill(self, value) -> None:
        pass


_Allocated.__module__ = FakeArray.__module__


def test_cast_transpose_too_large_is_refused_before_allocating(monkeypatch):
    """A 1 x 2**32 matrix (an 8 GiB fp16 vector) exceeds the cast kernels' sizes: refused after its two outputs (and a
    gathered copy of a view) had been allocated, or with the framework's out-of-memory error instead."""
    install(monkeypatch, FakeCuda())
    allocated, launched = [], []
    monkeypatch.setattr(api, "_run", lambda x, launches: launched.append(list(launches)))
    monkeypatch.setattr(api, "empty", lambda like, shape, dtype=None: allocated.append(shape) or _Allocated(
        shape, like.value.dtype if dtype is None else dtype, pointer=(3 + len(allocated)) << 44))
    for x in (FakeArray((2**32,), np.float16, 1 << 40), FakeArray((2**32,), np.float16, 1 << 40, strides=(4,)),
              FakeArray((2**32 + 1, 3), np.float32, 1 << 40)):
        with pytest.raises(LayoutError, match="x: a .* matrix exceeds 2\\*\\*32 - 1 rows or columns"):
            ops.cast_transpose(x, "e4m3", 1.0)
    assert allocated == [] and launched == []


def test_a_signaling_nan_scale_is_refused():
    """``float(Decimal("sNaN"))`` raises a ValueError of its own: the scale is refused by name instead."""
    with pytest.raises(LayoutError, match="scale: must be a number float"):
        ops.cast_transpose(FakeArray((4, 8)), "e4m3", decimal.Decimal("sNaN"))


@pytest.mark.parametrize("dtype, name, like", [("complex64", "complex64", "b64"), (np.complex128, "complex128", "b128"),
                                               (np.dtype("complex64"), "complex64", "b64")])
def test_explain_plans_complex_types_by_their_size(dtype, name, like):
    """``permute`` moves complex tensors by their size; ``explain`` refused them (not an element type)."""
    got, same = ops.explain((64, 96), (1, 0), dtype, "H200"), ops.explain((64, 96), (1, 0), like, "H200")
    assert got.dtype == name and got.launches == same.launches and got.nbytes == same.nbytes
    with pytest.raises(LayoutError, match="dtype: dtype 'object' is not a known element type"):
        ops.explain((64, 96), (1, 0), "object", "H200")
