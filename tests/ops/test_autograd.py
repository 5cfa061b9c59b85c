"""``permute`` / ``transpose`` under autograd without a GPU: the inverse permutation, which calls autograd
records, and ``out=`` refused for them (``ops.autograd``); the device test is ``test_gpu_autograd.py``."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from linear_layouts.core.errors import LayoutError
from linear_layouts.ops import autograd, dispatch

from harness.fakes import FakeCuda, FakeTorchTensor, install


@given(st.integers(1, 8).flatmap(lambda r: st.permutations(range(r))))
def test_the_inverse_undoes_the_permutation(dims):
    dims = tuple(dims)
    back = autograd.inverse(dims)
    assert tuple(dims[back[k]] for k in range(len(dims))) == tuple(range(len(dims)))
    assert autograd.inverse(back) == dims


def test_inverse_examples():
    assert autograd.inverse((0, 2, 3, 1)) == (0, 3, 1, 2) and autograd.inverse((1, 0)) == (1, 0)


def test_only_a_tensor_that_requires_grad_with_grad_mode_on_is_recorded(monkeypatch):
    x = FakeTorchTensor((4, 6), 4)
    assert not autograd.tracks(x) and not autograd.tracks(object())
    x.requires_grad = True
    monkeypatch.setitem(sys.modules, "torch", None)  # no PyTorch to ask: nothing to record
    assert not autograd.tracks(x)
    with pytest.raises(LayoutError, match="out: an op with out= is outside autograd, and x requires grad"):
        autograd.permute(x, (1, 0), FakeTorchTensor((6, 4), 4))


@pytest.mark.parametrize("grad_mode", [True, False])
def test_the_fast_path_leaves_a_recorded_call_to_autograd(monkeypatch, grad_mode):
    install(monkeypatch, FakeCuda())
    monkeypatch.setattr(dispatch, "_grad_enabled", lambda: (lambda: grad_mode))
    x = FakeTorchTensor((64, 48), 2)
    x.requires_grad = True
    taken = dispatch.torch_permute(x, (1, 0), None)
    assert (taken is None) == grad_mode and (grad_mode or taken.shape == (48, 64))
