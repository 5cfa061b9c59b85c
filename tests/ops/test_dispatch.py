"""The fast path of the ops without a GPU (``benchmarks/harness/fakes.py``: a PyTorch-like tensor, a recording
``libcuda``): it launches exactly what the general planner plans, packed at the kernel's C offsets, plans once
per call signature, makes the kernel's context current when another one is, and hands every call it does not
take to the general path, which refuses bad ones with the reason. Every test runs twice: launching through
``ctypes``, and through the C extension ``ops._claunch`` (where it is built) calling the fake driver's C entry."""

from __future__ import annotations

import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linear_layouts import ops
from linear_layouts.core.errors import LayoutError
from linear_layouts.ops import dispatch, launch
from linear_layouts.ops.driver import ArgumentPacking, native_module
from linear_layouts.ops.launches import Copy, Launch, permute_launches
from linear_layouts.ops.plan import memory_permutation, row_major_strides
from linear_layouts.ops.tensors import Tensor, is_contiguous

from harness.fakes import FakeCuda, FakeTorchTensor, install


@pytest.fixture(params=["ctypes", "C"], autouse=True)
def launch_path(request, monkeypatch):
    """The driver's launch path under test: ``ctypes``, or the C extension (skipped where it is not built)."""
    if request.param == "C":
        if native_module() is None:
            pytest.skip("the C launch extension linear_layouts.ops._claunch is not built")
        monkeypatch.setattr(FakeCuda, "NATIVE", True)
    return request.param


def test_argument_packing_follows_c_offsets():
    params = (("const unsigned short* __restrict__", "src"), ("unsigned", "rows"), ("unsigned long long", "lda"),
              ("float", "scale"), ("unsigned", "n"))
    packing = ArgumentPacking.of(params)
    assert packing.format == "<QIxxxxQfI" and packing.size == 32 and packing.offsets == (0, 8, 16, 24, 28)
    assert struct.calcsize(packing.format) == packing.size
    with pytest.raises(LayoutError, match="params: v has C type 'double'"):
        ArgumentPacking.of((("double", "v"),))


@pytest.mark.parametrize("shape, dims, itemsize", [
    ((4096, 11008), (1, 0), 2), ((8, 2048, 8, 128), (0, 2, 1, 3), 2), ((32, 64, 56, 56), (0, 2, 3, 1), 4),
    ((37, 50), (1, 0), 1), ((2, 3, 2, 3, 2, 3, 4), (6, 5, 4, 3, 2, 1, 0), 1), ((5, 7), (1, 0), 8),
])
def test_fast_path_launches_what_the_planner_plans(monkeypatch, shape, dims, itemsize):
    cuda = FakeCuda()
    loaded = install(monkeypatch, cuda)
    x = FakeTorchTensor(shape, itemsize)
    y = ops.permute(x, dims)
    assert y.shape == tuple(shape[d] for d in dims) and y.data_ptr() % 16 == 0
    expected = [item for item in permute_launches(shape, dims, itemsize, x.data_ptr(), y.data_ptr(), 132)
                if isinstance(item, Launch)]
    assert len(cuda.launches) == len(expected) > 0
    for got, want in zip(cuda.launches, expected):
        kernel = loaded[got["function"]]
        assert kernel is want.kernel and got["grid"] == (want.ctas, 1, 1) and got["block"] == (kernel.threads, 1, 1)
        assert got["shared"] == kernel.shared_bytes and got["stream"] == 0x5000
        assert FakeCuda.unpack(got, ArgumentPacking.of(kernel.params)) == want.values


def test_one_plan_per_call_signature(monkeypatch):
    cuda = FakeCuda()
    install(monkeypatch, cuda)
    x = FakeTorchTensor((300, 200), 2)
    out = FakeTorchTensor((200, 300), 2)
    for _ in range(3):
        assert ops.transpose(x, out=out) is out
    ops.permute(FakeTorchTensor((300, 200), 2), [1, 0])  # same signature: a list of dims, another tensor
    info = dispatch.call_plan.cache_info()
    assert (info.misses, info.hits, len(cuda.launches)) == (1, 3, 4)
    ops.permute(FakeTorchTensor((300, 200), 2, pointer=(1 << 41) + 2), (1, 0))  # misaligned: another plan
    assert dispatch.call_plan.cache_info().misses == 2


def test_copies_and_empty_tensors(monkeypatch):
    """An identity in memory copies with ``copy=True`` or ``out=`` (the driver's copy under 2 MiB); an empty
    tensor launches nothing either way."""
    cuda = FakeCuda()
    install(monkeypatch, cuda)
    x = FakeTorchTensor((8, 1, 4, 6), 4)
    y = ops.permute(x, (1, 0, 2, 3), copy=True)
    assert y.shape == (1, 8, 4, 6) and y.data_ptr() != x.data_ptr()
    assert permute_launches(x.shape, (1, 0, 2, 3), 4, x.data_ptr(), y.data_ptr(), 132) == [
        Copy(y.data_ptr(), x.data_ptr(), 768)]
    assert cuda.copies == [(y.data_ptr(), x.data_ptr(), 768, 0x5000)] and not cuda.launches
    out = FakeTorchTensor((1, 8, 4, 6), 4)
    assert ops.permute(x, (1, 0, 2, 3), out=out) is out and cuda.copies[-1][:2] == (out.data_ptr(), x.data_ptr())
    assert ops.transpose(FakeTorchTensor((0, 5), 2), copy=True).shape == (5, 0) and len(cuda.copies) == 2
    assert not cuda.launches


@pytest.mark.parametrize("shape, strides, dims", [
    ((8, 1, 4, 6), None, (1, 0, 2, 3)),     # a size-1 dim moved: [B, S, 1, D] -> [B, 1, S, D]
    ((1, 300), None, (1, 0)),               # a row vector transposed
    ((6, 4), (1, 6), (1, 0)),               # w.t() transposed back: w itself
    ((2, 3, 5), (15, 1, 3), (0, 2, 1)),     # a permuted view put back in memory order
    ((0, 5), None, (1, 0)),                 # empty
    ((7, 1), (1, 9), (1, 0)),               # a size-1 dim of any stride
    ((1, 1183824), None, (1, 0)),           # from 2 MiB, where a copy would be our copy kernel
    ((3, 1, 1048583), None, (1, 0, 2)),
])
@pytest.mark.parametrize("itemsize", [2, 16])  # the fast path, the general one (16-byte elements)
def test_a_contiguous_permuted_view_is_returned_itself(monkeypatch, shape, strides, dims, itemsize):
    """Where ``x.permute(dims)`` is contiguous already, ``permute`` returns it, sharing ``x``'s memory, as PyTorch's
    ``.contiguous()`` does: no launch, no copy, nothing allocated; ``transpose`` alike."""
    cuda = FakeCuda()
    install(monkeypatch, cuda)
    x = FakeTorchTensor(shape, itemsize, strides=strides)
    for y in (ops.permute(x, dims), ops.permute(x, list(dims), copy=False)):
        assert y.shape == tuple(shape[d] for d in dims) and y.data_ptr() == x.data_ptr() and y.is_contiguous()
    if len(shape) == 2:
        assert ops.transpose(x).data_ptr() == x.data_ptr()
    assert not cuda.launches and not cuda.copies
    if 0 not in shape and itemsize != 16:  # (the general path allocates by PyTorch itself)
        assert ops.permute(x, dims, copy=True).data_ptr() != x.data_ptr()
        assert strides is not None or dispatch.in_memory_order(shape, dims)
        assert len(cuda.launches) + len(cuda.copies) == 1


def test_a_view_of_a_contiguous_tensor_is_found_before_any_plan(monkeypatch):
    """``torch_view`` answers a contiguous CUDA tensor's identity from its shape and dims alone (no call plan, no
    launch); anything else goes on to the fast path and the general one (which refuses a tensor not on a GPU)."""
    cuda = FakeCuda()
    install(monkeypatch, cuda)
    plans = dispatch.call_plan.cache_info()
    x = FakeTorchTensor((8, 1, 4, 6), 2)
    assert ops.permute(x, (1, 0, 2, 3)).data_ptr() == x.data_ptr()
    assert ops.permute(x, (-3, 0, 2, 3)).data_ptr() == x.data_ptr()  # negative dims
    assert ops.transpose(FakeTorchTensor((5, 1), 2)).shape == (1, 5)
    assert dispatch.call_plan.cache_info() == plans and not cuda.launches and not cuda.copies
    assert dispatch.torch_view(x, (0, 1, 3, 2)) is None and dispatch.torch_view(x, (0, 0, 1, 2)) is None
    host = FakeTorchTensor((8, 1, 4, 6), 2)
    host.is_cuda = False
    assert dispatch.torch_view(host, (1, 0, 2, 3)) is None
    with pytest.raises(LayoutError, match="dims: .* is not a permutation"):
        ops.permute(x, (0, 0, 1, 2))


def test_a_permuted_view_that_is_not_contiguous_is_moved(monkeypatch):
    """The view is returned only where it is contiguous: a transpose of a matrix of two or more rows and
    columns, or a view with gaps put back in order (its gaps squeezed out), is a new tensor."""
    install(monkeypatch, FakeCuda())
    for shape, strides, dims in (((2, 3), None, (1, 0)), ((4, 6), (12, 1), (0, 1)), ((3, 1, 2), None, (2, 1, 0))):
        x = FakeTorchTensor(shape, 4, strides=strides)
        plan = dispatch.call_plan(shape, 4, dims, 0, 0, None if x.is_contiguous() else strides)
        assert not plan.view and (plan.launches or plan.framework)


def test_copy_must_be_a_bool(monkeypatch):
    install(monkeypatch, FakeCuda())
    for bad in (1, None, "yes"):
        with pytest.raises(LayoutError, match="copy: must be True or False"):
            ops.permute(FakeTorchTensor((4, 6), 4), (1, 0), copy=bad)
    with pytest.raises(LayoutError, match="copy: must be True or False"):
        ops.transpose(FakeTorchTensor((4, 6), 4), copy=0)


def test_the_kernels_context_is_made_current(monkeypatch):
    """A launch the driver refuses for the thread's context (another device's with the legacy default stream, or
    none) is made again in the kernel's context, which is then popped; a launch it takes is made once."""
    for current in (99, 0):
        cuda = FakeCuda(current=current)
        install(monkeypatch, cuda, context=7)
        ops.transpose(FakeTorchTensor((64, 64), 4))
        assert [c["context"] for c in cuda.launches] == [7] and cuda.contexts == [current] and cuda.pushes == 1
    cuda = FakeCuda(current=7)
    install(monkeypatch, cuda, context=7)
    ops.transpose(FakeTorchTensor((64, 64), 4))
    assert len(cuda.launches) == 1 and cuda.pushes == 0


def test_a_launch_on_a_stream_of_the_kernels_context_asks_nothing_else(monkeypatch):
    """The driver takes a launch onto a stream of the kernel's own context whatever context is current (it
    resolves the launch by the stream's context): no context is pushed."""
    cuda = FakeCuda(current=99)
    install(monkeypatch, cuda, context=7, stream=0x6000)
    cuda.stream_contexts[0x6000] = 7
    ops.transpose(FakeTorchTensor((64, 64), 4))
    assert len(cuda.launches) == 1 and cuda.pushes == 0 and cuda.contexts == [99]


def test_a_launch_the_driver_refuses_in_the_right_context_raises(monkeypatch):
    for current in (7, 99):
        cuda = FakeCuda(current=current)
        install(monkeypatch, cuda, context=7)
        cuda.status = 1  # CUDA_ERROR_INVALID_VALUE
        with pytest.raises(RuntimeError, match="cuLaunchKernel failed"):
            ops.transpose(FakeTorchTensor((64, 64), 4))
        assert not cuda.launches and cuda.contexts == [current]


def test_calls_it_does_not_take_go_to_the_general_path(monkeypatch):
    cuda = FakeCuda()
    install(monkeypatch, cuda)
    x = FakeTorchTensor((4, 6), 4)
    with pytest.raises(LayoutError, match="x: a view with negative strides"):
        ops.permute(FakeTorchTensor((4, 6), 4, strides=(-6, 1)), (1, 0))
    with pytest.raises(LayoutError, match="dims: .* is not a permutation"):
        ops.permute(x, (0, 0))
    with pytest.raises(LayoutError, match="dims: must be a sequence"):
        ops.permute(x, 3)
    with pytest.raises(LayoutError, match=r"out: shape \(4, 6\), expected \(6, 4\)"):
        ops.permute(x, (1, 0), out=FakeTorchTensor((4, 6), 4))
    with pytest.raises(LayoutError, match="out: overlaps the memory of x"):
        ops.permute(x, (1, 0), out=FakeTorchTensor((6, 4), 4, pointer=x.data_ptr()))
    with pytest.raises(LayoutError, match="x: transpose swaps the last two dims; x has 1"):
        ops.transpose(FakeTorchTensor((5,), 4))
    assert not cuda.launches
    plans = dispatch.call_plan.cache_info().currsize
    ops.permute(FakeTorchTensor((3, 5), 16), (1, 0), out=FakeTorchTensor((5, 3), 16))  # 16-byte elements
    assert len(cuda.launches) == 1 and dispatch.call_plan.cache_info().currsize == plans  # by the general path
    assert launch.multiprocessors(0) == 132


def test_threads_launch_their_own_arguments(monkeypatch):
    """Four threads calling one plan at once: each launch carries its own call's pointers (the packed buffer is
    shared by the plan, filled and launched under the driver's lock)."""
    import threading

    cuda = FakeCuda()
    install(monkeypatch, cuda)
    pairs = [(FakeTorchTensor((300, 200), 2), FakeTorchTensor((200, 300), 2)) for _ in range(4)]
    ops.transpose(*pairs[0][:1])  # the plan, built once

    def work(x, out):
        for _ in range(50):
            ops.transpose(x, out=out)

    threads = [threading.Thread(target=work, args=pair) for pair in pairs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    kernel_params = permute_launches((300, 200), (1, 0), 2, 0, 0, 132)[0].kernel.params
    seen = [FakeCuda.unpack(launch, ArgumentPacking.of(kernel_params))[:2] for launch in cuda.launches[1:]]
    assert sorted(set(seen)) == sorted((x.data_ptr(), out.data_ptr()) for x, out in pairs)
    assert all(seen.count(pair) == 50 for pair in set(seen))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([0, 1, 1, 2, 3, 5]), min_size=0, max_size=6).flatmap(
    lambda shape: st.tuples(st.just(tuple(shape)), st.permutations(range(len(shape))),
                            st.permutations(range(len(shape))))))
def test_the_two_homes_of_a_view_agree(case):
    """``dispatch.in_memory_order`` (the fast path's answer from a contiguous tensor's shape and dims) and
    ``tensors.is_contiguous`` of the permuted view (the general path's, at any strides) agree on every contiguous
    shape with size-1 and size-0 dims; and the call plan of a permuted view of a contiguous tensor (``first``
    applied, then ``dims``) is a view exactly where the composed view is contiguous."""
    shape, dims, first = case
    dims, first = tuple(dims), tuple(first)
    strides = row_major_strides(shape)
    view = Tensor("torch", None, tuple(shape[d] for d in dims), tuple(strides[d] for d in dims), 2, None, 0, 0)
    assert dispatch.in_memory_order(shape, dims) == is_contiguous(view)
    x_shape, x_strides = tuple(shape[d] for d in first), tuple(strides[d] for d in first)
    x = Tensor("torch", None, x_shape, x_strides, 2, None, 0, 0)
    composed = Tensor("torch", None, tuple(x_shape[d] for d in dims), tuple(x_strides[d] for d in dims), 2, None, 0, 0)
    if not is_contiguous(x) and math.prod(shape):  # a dense permuted view: the plan reads memory order
        m_shape, m_strides, m_dims = memory_permutation(x_shape, x_strides, dims)
        assert m_strides is None and dispatch.in_memory_order(m_shape, m_dims) == is_contiguous(composed)
