"""Permuted views of contiguous tensors (a transposed weight ``w.t()``, a channels-last image): ``permute`` and
``transpose`` read them as the row-major tensor their memory holds, with the permutations composed
(``plan.dense_order``, ``api._memory``); checked against NumPy's own views, and on the fake device."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from linear_layouts import ops
from linear_layouts.ops import api
from linear_layouts.ops.plan import dense_order
from linear_layouts.ops.tensors import Tensor, is_contiguous

from harness.fakes import FakeCuda, FakeTorchTensor, install


@st.composite
def _views(draw):
    rank = draw(st.integers(1, 5))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    p = tuple(draw(st.permutations(range(rank))))
    dims = tuple(draw(st.permutations(range(rank))))
    return shape, p, dims


@given(_views())
def test_a_permuted_view_is_its_memory_permuted_by_the_composed_dims(view):
    """``x = M.transpose(p)`` for a row-major ``M``: ``_memory`` finds a row-major tensor of ``x``'s memory and
    dims whose permutation of it equals ``x.transpose(dims)`` element for element."""
    shape, p, dims = view
    memory = np.arange(int(np.prod(shape))).reshape(shape)
    x = memory.transpose(p)
    strides = tuple(s // x.itemsize for s in x.strides)
    t = Tensor("cupy", None, x.shape, strides, x.itemsize, None, 0, 0)
    m, composed = api._memory(t, dims)
    assert is_contiguous(m)
    flat = memory.reshape(-1)  # the memory, read as the row-major M
    assert np.array_equal(flat.reshape(m.shape).transpose(composed), x.transpose(dims))


def test_views_with_gaps_overlaps_or_negative_strides_are_not_dense():
    assert dense_order((4, 6), (12, 2)) is None and dense_order((4, 6), (0, 1)) is None
    assert dense_order((4, 6), (-6, 1)) is None and dense_order((4, 6), (1, 4)) == (1, 0)


def test_a_transposed_view_is_a_copy_on_the_device(monkeypatch):
    """``transpose(w.t())`` is ``w``'s memory copied; a channels-last image to NHWC is a copy too."""
    cuda = FakeCuda()
    install(monkeypatch, cuda)
    w = FakeTorchTensor((64, 48), 4, strides=(1, 64))  # the .t() of a contiguous 48 x 64
    y = ops.transpose(w, out=FakeTorchTensor((48, 64), 4))
    assert cuda.copies == [(y.data_ptr(), w.data_ptr(), 64 * 48 * 4, 0x5000)]
    image = FakeTorchTensor((2, 3, 5, 7), 2, strides=(105, 1, 21, 3))  # channels last: NHWC memory
    nhwc = ops.permute(image, (0, 2, 3, 1), out=FakeTorchTensor((2, 5, 7, 3), 2))
    assert cuda.copies[-1] == (nhwc.data_ptr(), image.data_ptr(), 210 * 2, 0x5000)
    assert not cuda.launches
