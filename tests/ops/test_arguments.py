"""Bad arguments of ``linear_layouts.ops`` raise a LayoutError naming the argument and the rule, before
anything is allocated or launched. The tensors are stand-ins with CuPy's attributes (no GPU needed)."""

from __future__ import annotations

import numpy as np
import pytest

from linear_layouts import ops
from linear_layouts.core.errors import LayoutError


class _Device:
    def __init__(self, index: int):
        self.id = index


class _Data:
    def __init__(self, pointer: int):
        self.ptr = pointer


class FakeArray:
    """What ``ops.tensors.describe`` reads of a CuPy array: shape, byte strides, itemsize, dtype, device, pointer."""

    def __init__(self, shape, dtype=np.float32, pointer=1 << 40, device=0, strides=None):
        self.dtype = np.dtype(dtype)
        self.shape = tuple(shape)
        self.itemsize = self.dtype.itemsize
        if strides is None:
            strides, stride = [], self.itemsize
            for size in reversed(self.shape):
                strides.append(stride)
                stride *= size
            strides = tuple(reversed(strides))
        self.strides = tuple(strides)
        self.device = _Device(device)
        self.data = _Data(pointer)


FakeArray.__module__ = "cupy._stand_in"  # ops.tensors tells frameworks apart by the module of the type

X = 1 << 40
OUT = 2 << 40


@pytest.mark.parametrize("call, message", [
    (lambda: ops.permute(np.zeros((2, 3)), (1, 0)), "x: a ndarray in host memory"),
    (lambda: ops.permute([[1, 2]], (1, 0)), "x: expected a CUDA tensor"),
    (lambda: ops.permute(FakeArray((4, 6), strides=(-24, 4)), (1, 0)), "x: a view with negative strides"),
    (lambda: ops.permute(FakeArray((4, 6), dtype=np.dtype("V3")), (1, 0)), "x: elements of 3 bytes"),
    (lambda: ops.permute(FakeArray((4, 6)), (0, 0)), "dims: .* is not a permutation"),
    (lambda: ops.permute(FakeArray((4, 6)), (0, 2)), "dims: dim 2 is out of range"),
    (lambda: ops.permute(FakeArray((4, 6)), (1, 0), out=FakeArray((4, 6), pointer=OUT)), r"out: shape \(4, 6\), expected \(6, 4\)"),
    (lambda: ops.permute(FakeArray((4, 6)), (1, 0), out=FakeArray((6, 4), np.float16, OUT)), "out: dtype float16, expected float32"),
    (lambda: ops.permute(FakeArray((4, 6)), (1, 0), out=FakeArray((6, 4), pointer=OUT, device=1)), "out: on device 1"),
    (lambda: ops.permute(FakeArray((4, 6)), (1, 0), out=FakeArray((6, 4), pointer=X + 8)), "out: overlaps the memory of x"),
    (lambda: ops.permute(FakeArray((4, 6)), (1, 0), out=FakeArray((6, 4), pointer=OUT, strides=(4, 4))),
     "out: a view whose elements may share memory"),
    (lambda: ops.permute(FakeArray((4, 6)), (1, 0), out=FakeArray((6, 4), pointer=OUT, strides=(0, 4))),
     "out: a view whose elements may share memory"),
    (lambda: ops.cast_transpose(FakeArray((4, 8)), "e4m3", 1.0, out=FakeArray((4, 8), np.uint8, OUT, strides=(16, 1))),
     "out: must be contiguous"),
    (lambda: ops.permute(FakeArray((4, 6)), (1, 0), out=np.zeros((6, 4), np.float32)), "out: a ndarray in host memory"),
    (lambda: ops.transpose(FakeArray((5,))), "x: transpose swaps the last two dims; x has 1"),
    (lambda: ops.cast_transpose(FakeArray((4, 8), np.int32), "e4m3", 1.0), "x: cast_transpose reads bf16, fp16 or fp32"),
    (lambda: ops.cast_transpose(FakeArray((4, 8), strides=(-32, 4)), "e4m3", 1.0), "x: a view with negative strides"),
    (lambda: ops.cast_transpose(FakeArray((), np.float32), "e4m3", 1.0), "x: cast_transpose needs at least one dim"),
    (lambda: ops.cast_transpose(FakeArray((4, 8)), "fp16", 1.0), "dtype: must be an fp8 type"),
    (lambda: ops.cast_transpose(FakeArray((4, 8)), "nonsense", 1.0), "dtype: dtype 'nonsense' is not a known element type"),
    (lambda: ops.cast_transpose(FakeArray((4, 8)), "f2", 1.0), "dtype: dtype 'f2' is ambiguous"),
    (lambda: ops.cast_transpose(FakeArray((4, 8)), "e4m3", None), "scale: must be a number"),
    (lambda: ops.cast_transpose(FakeArray((4, 8)), "e4m3", True), "scale: must be a number"),
    (lambda: ops.cast_transpose(FakeArray((4, 8)), "e4m3", "2"), "scale: expected a CUDA tensor"),
    (lambda: ops.cast_transpose(FakeArray((4, 8)), "e4m3", FakeArray((2,), pointer=3 << 40)), "scale: a tensor scale must hold one float32"),
    (lambda: ops.cast_transpose(FakeArray((4, 8)), "e4m3", FakeArray((1,), pointer=3 << 40, device=2)), "scale: must be a cupy tensor on x's device 0"),
    (lambda: ops.cast_transpose(FakeArray((4, 8)), "e4m3", 1.0, out=FakeArray((4, 8), np.float32, OUT)), "out: dtype float32, expected e4m3"),
    (lambda: ops.cast_transpose(FakeArray((4, 8)), "e4m3", 1.0, out=FakeArray((4, 8), np.uint8, OUT),
                                out_t=FakeArray((4, 8), np.uint8, 3 << 40)), r"out_t: shape \(4, 8\), expected \(8, 4\)"),
    (lambda: ops.cast_transpose(FakeArray((4, 8)), "e4m3", 1.0, out=FakeArray((4, 8), np.uint8, OUT),
                                out_t=FakeArray((8, 4), np.uint8, OUT + 16)), "out_t: overlaps the memory of out"),
    (lambda: ops.cast_transpose(FakeArray((4, 8)), "e4m3", 1.0, out=FakeArray((4, 8), np.uint8, OUT),
                                out_t=FakeArray((8, 4), np.uint8, 3 << 40), amax=FakeArray((1,), np.float16, 4 << 40)),
     "amax: must be a one-element float32 tensor"),
])
def test_bad_arguments_name_the_argument(call, message):
    with pytest.raises(LayoutError, match=message):
        call()


def test_ops_import_no_framework():
    """Importing the ops (and failing on bad input) imports neither PyTorch nor CuPy."""
    import subprocess
    import sys

    code = ("import sys, linear_layouts.ops as o\n"
            "try:\n    o.permute([1], (0,))\nexcept ValueError:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'cupy')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_register_torch_ops_without_pytorch_says_what_it_needs(monkeypatch):
    """Without PyTorch: an ImportError (a missing dependency) naming the entry and PyTorch, not Python's bare
    ``No module named 'torch'``."""
    import sys

    monkeypatch.setitem(sys.modules, "torch", None)  # ``import torch`` fails as where it is not installed
    registered = ops.register_torch_ops.cache_info().currsize  # a real registration of this process is kept
    entry = ops.register_torch_ops.__wrapped__ if registered else ops.register_torch_ops
    for _ in range(2):  # a failure is not remembered
        with pytest.raises(ImportError, match=r"register_torch_ops: needs PyTorch") as caught:
            entry()
        assert caught.value.name == "torch"
