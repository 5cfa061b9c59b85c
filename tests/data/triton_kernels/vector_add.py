"""Vector addition (Triton tutorial 01): ``out = x + y`` over 1-D blocks of 1024 elements."""
import triton
import triton.language as tl


@triton.jit
def vector_add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


KERNEL = vector_add_kernel
SIGNATURE = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n_elements": "i32"}
CONSTEXPRS = {"BLOCK_SIZE": 1024}
SCALARS = {"n_elements": 98432}
TENSORS = {"x_ptr": [98432], "y_ptr": [98432], "out_ptr": [98432]}
GRID = (97,)
OPTIONS = {"num_warps": 4, "num_stages": 3}
