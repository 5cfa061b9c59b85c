"""Arguments a demanding user passes, without a GPU: the ops refuse what they cannot take with a LayoutError naming
the argument, and what they take, they launch right (``benchmarks/harness/fakes.py``: the device calls recorded)."""

from __future__ import annotations

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
                                          (np.float64(2.5), 2.5), (np.array(0.5), 0.5), (3, 3.0)])
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
