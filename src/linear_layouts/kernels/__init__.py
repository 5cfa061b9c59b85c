"""Real Triton kernels: load a kernel file (a ``@triton.jit`` function with its signature and
constexprs), compile it on the CPU to TTIR / TTGIR for a target, and (see the report modules)
read every layout and conversion out of the result.

Only :mod:`.compile` and :func:`.spec.load_kernel_file` need Triton; they import it lazily.
"""

from linear_layouts.triton_model.kernel_file import KernelSpec, load_kernel_file, parse_target

__all__ = ["KernelSpec", "load_kernel_file", "parse_target"]
