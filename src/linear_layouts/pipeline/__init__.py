"""Our pipeline on real Triton kernels, one way through: ``ttir_import`` (a kernel's TTIR into the
engine's tile IR) -> ``report`` (its TTGIR analyzed op by op: Triton's lowering beside our plan) ->
``shared_memory`` (Triton's shared-memory allocation of it) -> ``engine_compare`` (our engine against
Triton on the same compile, and the costs of a TTGIR) -> ``rewrite`` (our layouts written into the TTGIR)
-> ``from_file`` (all of it on a kernel file or an IR file).

A kernel file (a ``@triton.jit`` function with its signature and constexprs, ``triton_model.kernel_file``)
is compiled on the CPU by the installed Triton (``triton_model.compile``); only that needs Triton.
"""

from linear_layouts.triton_model.kernel_file import KernelSpec, load_kernel_file, parse_target

__all__ = ["KernelSpec", "load_kernel_file", "parse_target"]
