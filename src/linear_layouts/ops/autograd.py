"""``permute`` and ``transpose`` inside PyTorch's autograd: the gradient of a permutation is the inverse one.

With ``y = permute(x, dims)``, ``y[i_{dims[0]}, ..., i_{dims[r-1]}] = x[i_0, ..., i_{r-1}]``, so
``dL/dx = permute(dL/dy, inverse(dims))`` with ``inverse(dims)[dims[k]] = k``: our kernels run both ways.
A PyTorch tensor that requires grad, with grad mode on, goes through ``Permute`` (a ``torch.autograd.Function``,
made at first use); everything else never imports this module's PyTorch part.

Example: ``inverse((0, 2, 3, 1))`` is ``(0, 3, 1, 2)`` (NCHW -> NHWC undone by NHWC -> NCHW).
"""

from __future__ import annotations

import functools
from typing import Any

from linear_layouts.core.errors import LayoutError

__all__ = ["inverse", "tracks", "permute"]


def inverse(dims: tuple[int, ...]) -> tuple[int, ...]:
    """The permutation undoing ``dims``: ``inverse(dims)[dims[k]] == k``."""
    out = [0] * len(dims)
    for k, d in enumerate(dims):
        out[d] = k
    return tuple(out)


def tracks(x: Any) -> bool:
    """True for a PyTorch tensor autograd records an op on: it requires grad and grad mode is on."""
    if type(x).__module__ != "torch" or not getattr(x, "requires_grad", False):
        return False
    try:
        import torch  # noqa: PLC0415 - x is a PyTorch tensor
    except ImportError:
        return False
    return torch.is_grad_enabled()


@functools.lru_cache(maxsize=1)
def _function() -> Any:
    import torch  # noqa: PLC0415

    from linear_layouts.ops import api

    class Permute(torch.autograd.Function):
        """``api.permute`` forward, the inverse permutation backward (itself differentiable)."""

        @staticmethod
        def forward(ctx: Any, x: Any, dims: tuple[int, ...], copy: bool) -> Any:
            ctx.dims = dims
            return api.permute(x.detach(), dims, copy=copy)  # grad mode is off here: the plain call

        @staticmethod
        def backward(ctx: Any, grad: Any) -> tuple[Any, None, None]:
            return api.permute(grad, inverse(ctx.dims)), None, None  # any strides: read where they are

    return Permute


def permute(x: Any, dims: tuple[int, ...], out: Any, copy: bool = False) -> Any:
    """``api.permute(x, dims, copy=copy)`` recorded by autograd (``dims`` normalized); ``out=`` is refused as PyTorch
    refuses it for an input that requires grad."""
    if out is not None:
        raise LayoutError("out: an op with out= is outside autograd, and x requires grad (PyTorch refuses the same); "
                          "call without out=, or under torch.no_grad()")
    return _function().apply(x, dims, copy)
