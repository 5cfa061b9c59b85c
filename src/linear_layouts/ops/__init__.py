"""Layout ops for PyTorch and CuPy tensors, generated from our planner: transpose, permute, fp8 cast-transpose.

- ``transpose(x, out=None)``: the last two dims swapped (batched over the others), materialized;
- ``permute(x, dims, out=None)``: ``x.permute(dims).contiguous()`` for any rank and permutation;
- ``cast_transpose(x, dtype, scale, out=None, out_t=None, amax=None)``: ``fp8(scale x)``, its transpose and
  ``max |x|`` in one pass (Transformer Engine's ``cast_transpose``);
- ``explain(shape, dims, dtype, device=None)``: what ``permute`` launches for that shape, told on the CPU (the
  reduced problem, each launch's kernel, tile, warps and CTAs; ``ops.explain``);
- ``tune.AUTOTUNE = True`` (or ``LINEAR_LAYOUTS_AUTOTUNE=1``): the ops time the planner's tile against the
  problem's other tiles (or kernels) at each large signature's first call and keep the fastest (``ops.tune``).

Inputs are CUDA tensors of PyTorch, CuPy, or anything CuPy reads through DLPack or ``__cuda_array_interface__``
(returned as CuPy arrays): contiguous, or for ``permute`` / ``transpose`` any view of non-negative strides (a
transposed weight, a slice, ``q`` of a fused ``qkv``: read at its strides). Outputs are new tensors of the same
framework or the ``out=`` tensors given (``permute`` and ``transpose`` return the permuted view itself where it is
contiguous already, as ``.contiguous()`` does; ``copy=True``: a new tensor always); kernels run on the framework's
current stream. Bad arguments raise
``LayoutError`` naming the argument. Neither PyTorch nor CuPy is imported until a call needs it; launching needs
neither (the CUDA driver, through ``ctypes``): PyTorch alone is enough.

How: a permutation is reduced (``ops.plan``: size-1 dims dropped, adjacent dims merged) to a copy, a move
of whole rows, or a batched tiled transpose; each tile is a conversion between two blocked layouts planned
by ``analysis.conversion`` (shared memory, optimal swizzle, 16-byte vectors where sizes and addresses allow)
and emitted by ``codegen.permute`` with masked edge tiles (``ops.kernels``, ``ops.launches``); kernels are
compiled at first use for the device's architecture (NVRTC in-process, else nvcc, into the private kernel
cache) and kept (``ops.launch``).

``register_torch_ops()`` makes them PyTorch custom operators (``torch.ops.linear_layouts.permute``, ...) that
``torch.compile`` keeps in its graph (``ops.torch_ops``).

Example (on a GPU)::

    import torch
    from linear_layouts import ops
    w = torch.randn(4096, 11008, device="cuda", dtype=torch.bfloat16)
    wt = ops.transpose(w)                                  # == w.t().contiguous()
    q = ops.permute(torch.randn(8, 1024, 32, 128, device="cuda"), (0, 2, 1, 3))
    c, ct, amax = ops.cast_transpose(w, torch.float8_e4m3fn, 448 / w.abs().max().float())
"""

from linear_layouts.ops import tune
from linear_layouts.ops.api import cast_transpose, permute, transpose
from linear_layouts.ops.explain import explain
from linear_layouts.ops.torch_ops import register as register_torch_ops

__all__ = ["transpose", "permute", "cast_transpose", "explain", "register_torch_ops", "tune"]
