"""Arguments a demanding user passes, without a GPU: the ops refuse what they cannot take with a LayoutError naming
the argument, and what they take, they launch right (``benchmarks/harness/fakes.py``: the device calls recorded)."""

from __future__ import annotations

import decimal
import fractions
import math

import numpy as np
import pytest

from linear_layouts import ops
from linear_layouts.core.errors import LayoutError
from linear_layouts.ops import api, launch
from linear_layouts.ops.driver import ArgumentPacking
from linear_layouts.ops.plan import normalize_dims

from harness.fakes import FakeCuda, FakeTorchTensor, install

from .test_arguments import FakeArray


def _cast_launch(monkeypatch, scale):
    """The arguments the cast-transpose of a 64 x 64 fp32 CuPy stand-in launches with ``scale``, as packed."""
    cuda = FakeCuda()
    loaded = install(monkeypatch, cuda)
    launch._prepared.cache_clear()  # prepared by another test's install: prepare them here again
    monkeypatch.setattr(api, "stream", lambda t: 0x5000)
    x = FakeArray((64, 64), np.float32, 1 << 40)
    ops.cast_transpose(x, "e4m3", scale, out=FakeArray((64, 64), np.uint8, 2 << 40),
                       out_t=FakeArray((64, 64), np.uint8, 3 << 40), amax=FakeArray((1,), np.float32, 4 << 40))
    (call,) = cuda.launches
    kernel = loaded[call["function"]]
    return dict(zip((p for _, p in kernel.params), FakeCuda.unpack(call, ArgumentPacking.of(kernel.params))))


@pytest.mark.parametrize("scale, value", [(1e39, math.inf), (-1e39, -math.inf), (10**400, math.inf),
                                          (np.float64(2.5), 2.5), (np.array(0.5), 0.5), (3, 3.0),
                                          (fractions.Fraction(1, 4), 0.25), (decimal.Decimal("0.375"), 0.375),
                                          (fractions.Fraction(1, 3), float(np.float32(1 / 3)))])
def test_scale_beyond_float32_is_an_infinity(monkeypatch, scale, value):
    """A number scale rounds to float32, the kernels' type (beyond its range: an infinity), instead of failing to
    pack at the launch."""
    assert _cast_launch(monkeypatch, scale)["scale_value"] == value


@pytest.mark.parametrize("scale", [np.str_("2"), np.array("2"), np.complex128(1 + 2j), np.True_, np.array(True)])
def test_scale_numpy_values_that_are_not_real_numbers(scale):
    with pytest.raises(LayoutError, match="scale: must be a number"):
        ops.cast_transpose(FakeArray((4, 8)), "e4m3", scale)


@pytest.mark.parametrize("dims", [(np.array(1.5), 0), (np.array(1.0), 0)])
def test_dims_whose_index_raises(dims):
    with pytest.raises(LayoutError, match="dims: must hold ints"):
        normalize_dims(dims, 2)


@pytest.mark.parametrize("dims", [(1.0, 0.0), (True, False)])
def test_fast_path_does_not_take_dims_equal_to_kept_ones(monkeypatch, dims):
    """The plans are kept by dims: ``(1.0, 0.0)`` and ``(True, False)`` equal ``(1, 0)`` there, and were taken once
    ``(1, 0)`` had been."""
    install(monkeypatch, FakeCuda())
    x = FakeTorchTensor((40, 60), 2)
    ops.permute(x, (1, 0))
    with pytest.raises(LayoutError, match="dims: must hold ints"):
        ops.permute(x, dims)


def test_fast_path_numpy_dims(monkeypatch):
    cuda = FakeCuda()
    install(monkeypatch, cuda)
    assert ops.permute(FakeTorchTensor((40, 60), 2), np.array([1, 0])).shape == (60, 40) and len(cuda.launches) == 1


@pytest.mark.parametrize("itemsize, offset", [(16, 0), (2, 2)])
def test_iterator_dims_read_once(monkeypatch, itemsize, offset):
    """An iterator of dims the fast path reads and then hands to the general path (16-byte elements; an ``out`` it
    does not take, 16 bytes not aligning it) is still the permutation."""
    cuda = FakeCuda()
    install(monkeypatch, cuda)
    out = FakeTorchTensor((5, 3), itemsize, pointer=(1 << 42) + offset)
    assert ops.permute(FakeTorchTensor((3, 5), itemsize), iter((1, 0)), out=out) is out
    assert len(cuda.launches) == 1


@pytest.mark.parametrize("call, message", [
    (lambda: ops.permute(FakeArray((4, 6), pointer=(1 << 40) + 2), (1, 0), out=FakeArray((6, 4), pointer=2 << 40)),
     "x: its address 0x10000000002 is not a multiple of 4 bytes"),
    (lambda: ops.permute(FakeArray((4, 6), np.uint16), (1, 0), out=FakeArray((6, 4), np.uint16, (2 << 40) + 1)),
     "out: its address 0x20000000001 is not a multiple of 2 bytes"),
    (lambda: ops.permute(FakeArray((4, 6), np.complex128), (1, 0),
                         out=FakeArray((6, 4), np.complex128, (2 << 40) + 4)), "out: .* not a multiple of 8 bytes"),
    (lambda: ops.permute(FakeArray((4, 6), strides=(26, 4)), (1, 0), out=FakeArray((6, 4), pointer=2 << 40)),
     r"x: byte strides \(26, 4\) are not multiples of its 4-byte elements"),
    (lambda: ops.cast_transpose(FakeArray((4, 8)), "e4m3", FakeArray((1,), pointer=(5 << 40) + 2),
                                out=FakeArray((4, 8), np.uint8, 2 << 40), out_t=FakeArray((8, 4), np.uint8, 3 << 40),
                                amax=FakeArray((1,), pointer=4 << 40)), "scale: its address .* not a multiple of 4"),
    (lambda: ops.cast_transpose(FakeArray((4, 8)), "e4m3", 1.0, out=FakeArray((4, 8), np.uint8, 2 << 40),
                                out_t=FakeArray((8, 4), np.uint8, 3 << 40), amax=FakeArray((1,), pointer=(4 << 40) + 1)),
     "amax: its address .* not a multiple of 4"),
])
def test_elements_the_kernels_cannot_access(call, message):
    """A CuPy view at an odd byte offset (its elements misaligned: the kernels would fault), or with byte strides
    that are not whole elements (read as if they were: ``(26, 4)`` as ``(6, 1)``, contiguous), is refused."""
    with pytest.raises(LayoutError, match=message):
        call()


_OUT, _OUT_T, _AMAX = 2 << 40, 3 << 40, 4 << 40


@pytest.mark.parametrize("scale, amax, message", [
    (1.0, FakeArray((1,), pointer=(1 << 40) + 64), "amax: overlaps the memory of x"),
    (1.0, FakeArray((1,), pointer=_OUT + 4), "amax: overlaps the memory of out"),
    (1.0, FakeArray((1,), pointer=_OUT_T + 28), "amax: overlaps the memory of out_t"),
    (FakeArray((1,), pointer=_OUT + 8), FakeArray((1,), pointer=_AMAX), "scale: overlaps the memory of out"),
    (FakeArray((1,), pointer=_OUT_T), FakeArray((1,), pointer=_AMAX), "scale: overlaps the memory of out_t"),
    (FakeArray((1,), pointer=_AMAX), FakeArray((1,), pointer=_AMAX), "scale: overlaps the memory of amax"),
])
def test_cast_transpose_scale_and_amax_apart_from_what_it_writes(scale, amax, message):
    """The kernels write ``out`` and ``out_t`` and accumulate into ``amax`` while every CTA reads ``x`` and ``scale``."""
    with pytest.raises(LayoutError, match=message):
        ops.cast_transpose(FakeArray((4, 8), pointer=1 << 40), "e4m3", scale, out=FakeArray((4, 8), np.uint8, _OUT),
                           out_t=FakeArray((8, 4), np.uint8, _OUT_T), amax=amax)


@pytest.mark.parametrize("x_bits, out_bits, message", [
    (dict(conj=True), {}, "x: a conjugate view"), (dict(neg=True), {}, "x: a negative view"),
    ({}, dict(conj=True), "out: a conjugate view"), ({}, dict(neg=True), "out: a negative view"),
])
def test_conjugate_and_negative_views_are_refused(monkeypatch, x_bits, out_bits, message):
    """PyTorch's ``z.conj()`` (and ``z.conj().imag``, a negative view) share ``z``'s memory, contiguous, with a bit
    that PyTorch applies when reading: moving the memory as it is would silently drop it."""
    cuda = FakeCuda()
    install(monkeypatch, cuda)
    x = FakeTorchTensor((40, 60), 8, **x_bits)
    with pytest.raises(LayoutError, match=message):
        ops.permute(x, (1, 0), out=FakeTorchTensor((60, 40), 8, **out_bits))
    assert not cuda.launches


def test_permute_dims_none_is_refused(monkeypatch):
    """``dims=None`` is how ``transpose`` asks the fast path for its dims: ``permute(x, None)`` of a PyTorch tensor
    transposed it."""
    cuda = FakeCuda()
    install(monkeypatch, cuda)
    with pytest.raises(LayoutError, match="dims: must be a sequence of ints"):
        ops.permute(FakeTorchTensor((40, 60), 2), None, out=FakeTorchTensor((60, 40), 2))
    assert not cuda.launches


class _Subclass(FakeTorchTensor):
    """A subclass of a PyTorch tensor in the user's own module (its type's module is not ``torch``)."""


_Subclass.__module__ = "mylib.tensors"


class _SparseMatrix:
    """What a ``cupyx.scipy.sparse`` matrix looks like to the ops: a type of the ``cupyx`` package, no ``itemsize``."""

    shape = (4, 6)


_SparseMatrix.__module__ = "cupyx.scipy.sparse._csr"


def test_frameworks_by_package_and_base(monkeypatch):
    """A subclass of a PyTorch tensor is a PyTorch tensor, wherever it is defined; ``cupyx``'s objects are not CuPy
    arrays (read as one: an AttributeError)."""
    cuda = FakeCuda()
    install(monkeypatch, cuda)
    out = FakeTorchTensor((60, 40), 2)
    assert ops.permute(_Subclass((40, 60), 2), (1, 0), out=out) is out and len(cuda.launches) == 1
    with pytest.raises(LayoutError, match="x: expected a CUDA tensor .* got _SparseMatrix"):
        ops.permute(_SparseMatrix(), (1, 0))


def test_empty_tensors_at_any_strides(monkeypatch):
    """An empty tensor is contiguous at any strides (PyTorch, CuPy and NumPy say so of ``empty((0, 5)).T``): there is
    nothing to permute, and the output is returned."""
    cuda = FakeCuda()
    install(monkeypatch, cuda)
    out = FakeArray((0, 5), pointer=2 << 40)
    assert ops.transpose(FakeArray((5, 0), strides=(4, 20)), out=out) is out
    out = FakeArray((5, 0), np.uint8, 2 << 40)
    assert ops.cast_transpose(FakeArray((0, 5), strides=(4, 20)), "e4m3", 1.0, out=FakeArray((0, 5), np.uint8, 3 << 40),
                              out_t=out, amax=FakeArray((1,), pointer=4 << 40))[1] is out
    assert not cuda.launches and not cuda.copies


def test_a_sparse_tensor_is_refused(monkeypatch):
    """A sparse PyTorch tensor has no strides (``is_contiguous()`` raises a RuntimeError): refused, as ``x`` and as
    ``out``, before anything is launched."""
    cuda = FakeCuda()
    install(monkeypatch, cuda)
    with pytest.raises(LayoutError, match="x: a PyTorch tensor of layout torch.sparse_coo"):
        ops.permute(FakeTorchTensor((40, 60), 4, layout="torch.sparse_coo"), (1, 0))
    with pytest.raises(LayoutError, match="out: a PyTorch tensor of layout torch.sparse_csr"):
        ops.transpose(FakeTorchTensor((40, 60), 4), out=FakeTorchTensor((60, 40), 4, layout="torch.sparse_csr"))
    assert not cuda.launches


class _RocmArray:
    """A DLPack tensor in ROCm memory (``kDLROCM``, device type 10)."""

    def __dlpack_device__(self):
        return (10, 0)

    def __dlpack__(self, stream=None):
        raise AssertionError("not read: refused by its device type")


def test_a_dlpack_tensor_names_its_memory():
    with pytest.raises(LayoutError, match=r"x: a _RocmArray in ROCm \(HIP\) memory; the ops run on CUDA tensors"):
        ops.transpose(_RocmArray())
