"""The layout ops as PyTorch custom operators, for ``torch.compile`` graphs: ``register()`` (``ops.register_torch_ops``;
it imports PyTorch, once) registers ``torch.ops.linear_layouts.permute(x, dims)``, ``transpose(x)`` and
``cast_transpose(x, dtype, scale, amax)``.

``torch.compile`` (Dynamo and Inductor) keeps a registered op in its graph as one opaque node: a shape function
(``register_fake``) tells it the outputs, our kernels run it, and ``fullgraph=True`` holds. Calling ``ops.permute``
itself inside a compiled function works too, but Dynamo cannot trace through our launch (``ctypes``): it breaks
the graph there. ``permute`` and ``transpose`` are differentiable (backward: the inverse permutation, itself an
op); ``cast_transpose`` writes its fp8 outputs and max-accumulates ``max |x|`` into ``amax`` (a one-element
float32 tensor it mutates), and carries no gradient, as ``ops.cast_transpose``.

Example::

    import torch
    from linear_layouts import ops
    ops.register_torch_ops()
    f = torch.compile(lambda w: torch.ops.linear_layouts.transpose(w) * 2, fullgraph=True)
"""

# no ``from __future__ import annotations``: torch.library reads the ops' schemas from their annotations
import functools
from typing import Any

from linear_layouts.ops import api
from linear_layouts.ops.autograd import inverse

__all__ = ["register"]


@functools.lru_cache(maxsize=1)
def register() -> Any:
    """Register the ops with PyTorch (once; later calls return at once): ``torch.ops.linear_layouts``.
    ImportError naming ``register_torch_ops`` where PyTorch is not installed."""
    try:
        import torch  # noqa: PLC0415 - the point of this module
    except ImportError as error:
        raise ImportError("register_torch_ops: needs PyTorch, which is not installed (pip install torch); "
                          "the ops themselves take CuPy arrays without it", name="torch") from error

    fp8 = (torch.float8_e4m3fn, torch.float8_e5m2)

    @torch.library.custom_op("linear_layouts::permute", mutates_args=(), device_types="cuda")
    def permute(x: torch.Tensor, dims: list[int]) -> torch.Tensor:
        return api.permute(x.detach().contiguous(), tuple(dims), copy=True)  # an op's output is new

    @permute.register_fake
    def _(x: torch.Tensor, dims: list[int]) -> torch.Tensor:
        return x.new_empty([x.shape[d] for d in dims])

    def permute_context(ctx, inputs, output) -> None:
        rank = inputs[0].dim()
        ctx.dims = tuple(d % rank for d in inputs[1]) if rank else ()

    def permute_backward(ctx, grad):
        return permute(grad, list(inverse(ctx.dims))), None

    permute.register_autograd(permute_backward, setup_context=permute_context)

    @torch.library.custom_op("linear_layouts::transpose", mutates_args=(), device_types="cuda")
    def transpose(x: torch.Tensor) -> torch.Tensor:
        return api.transpose(x.detach().contiguous(), copy=True)

    @transpose.register_fake
    def _(x: torch.Tensor) -> torch.Tensor:
        torch._check(x.dim() >= 2, lambda: f"x: transpose swaps the last two dims; x has {x.dim()}")
        return x.new_empty(list(x.shape[:-2]) + [x.shape[-1], x.shape[-2]])

    def transpose_backward(ctx, grad):
        return transpose(grad)

    transpose.register_autograd(transpose_backward)

    @torch.library.custom_op("linear_layouts::cast_transpose", mutates_args=("amax",), device_types="cuda")
    def cast_transpose(x: torch.Tensor, dtype: torch.dtype, scale: torch.Tensor,
                       amax: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out, out_t, _ = api.cast_transpose(x.detach().contiguous(), dtype, scale, amax=amax)
        return out, out_t

    @cast_transpose.register_fake
    def _(x: torch.Tensor, dtype: torch.dtype, scale: torch.Tensor,
          amax: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        torch._check(dtype in fp8, lambda: f"dtype: must be float8_e4m3fn or float8_e5m2, got {dtype}")
        torch._check(x.dim() >= 1, lambda: "x: cast_transpose needs at least one dim")
        m = 1
        for size in x.shape[:-1]:
            m = m * size
        return x.new_empty(x.shape, dtype=dtype), x.new_empty((x.shape[-1], m), dtype=dtype)

    return torch.ops.linear_layouts
