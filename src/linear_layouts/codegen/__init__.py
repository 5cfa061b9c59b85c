"""Code generation: conversion plans become CUDA C++ with inline PTX (paper §5), and a CuPy runtime.

Modules, one job each:

- ``index``: any LinearLayout (or its inverse) as XORs of masked input bits (``emit_index``).
- ``elements``: the C++ storage type of an element; sub-word packing into 32-bit words (``prmt``).
- ``packing``: packed registers (sub-word elements in 32-bit words end to end): ``Packing``, byte
  permutes between packings (staged exchanges), lane-dependent register translations.
- ``intrinsics``: the memory instructions kernels call, for the GPU (inline PTX) and the CPU.
- ``hardware_map``: where each register/lane/warp bit lands in global or shared memory.
- ``global_memory``: vectorized global loads/stores.
- ``shared``: ``st/ld.shared`` v1/v2/v4 and ``stmatrix/ldmatrix`` (``.trans``) through a shared layout.
- ``shuffle``: warp-shuffle rounds (``shfl.sync``) of an ``analysis.shuffles.ShufflePlan``.
- ``gather``: warp-local gather by shuffles (``analysis.gather`` plans) and the shared-memory gather.
- ``conversion``: conversion steps (register copy, shared memory, padded baseline).
- ``kernel``: whole conversion kernels (a tile converted, with round trips); the packings.
- ``transpose``: tiled matrix transposes of power-of-two matrices (one tile per CTA, persistent and
  software-pipelined, cp.async).
- ``permute``: transposes, permutations and fp8 cast-transposes of tensors of any shape (masked edge
  tiles, batches, runtime strides): the kernels of ``linear_layouts.ops``.
- ``cost``: what a step costs as emitted (``analysis.cost_model``'s device tables).
- ``plan``: ``analysis.conversion`` plans -> steps -> kernels (``conversion_kernel``).
- ``model``: bank model of the instructions emitted (what ncu should count).
- ``ptx``: nvcc compilation and PTX/SASS instruction counts.
- ``runtime``: compile/cache/launch/check/time with CuPy (lazy import).
- ``verify``: ``verify_conversion`` (plan, generate, run and check in one call).
- ``emulate``: generated kernels run on the CPU (C++20 threads), every element checked.
"""

from linear_layouts.codegen.index import emit_index, emit_inverse_index, index_expression, inverse_index_expression
from linear_layouts.codegen.kernel import KernelSource, emit_conversion_kernel
from linear_layouts.codegen.transpose import emit_transpose_kernel
from linear_layouts.codegen.plan import conversion_kernel, conversion_step, step_from_plan
from linear_layouts.codegen.verify import verify_conversion

__all__ = [
    "emit_index",
    "emit_inverse_index",
    "index_expression",
    "inverse_index_expression",
    "KernelSource",
    "emit_conversion_kernel",
    "emit_transpose_kernel",
    "conversion_kernel",
    "conversion_step",
    "step_from_plan",
    "verify_conversion",
]
