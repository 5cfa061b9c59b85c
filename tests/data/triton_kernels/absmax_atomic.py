"""Absolute maximum of a tensor for fp8 quantization scales: each program reduces a block of 4096
elements to one scalar across the CTA, then ``tl.atomic_max`` into a global scalar."""
import triton
import triton.language as tl


@triton.jit
def absmax_kernel(x_ptr, amax_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offs, mask=offs < n_elements, other=0.0).to(tl.float32)
    tl.atomic_max(amax_ptr, tl.max(tl.abs(x), axis=0))


KERNEL = absmax_kernel
SIGNATURE = {"x_ptr": "*bf16", "amax_ptr": "*fp32", "n_elements": "i32"}
CONSTEXPRS = {"BLOCK_SIZE": 4096}
SCALARS = {"n_elements": 1 << 24}
TENSORS = {"x_ptr": [1 << 24], "amax_ptr": ([1], "zeros")}
GRID = (4096,)
OPTIONS = {"num_warps": 8, "num_stages": 3}
