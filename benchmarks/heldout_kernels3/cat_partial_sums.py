"""Squared L2 norm of rows stored as two halves in separate fp32 buffers: the halves' squares joined with
``tl.cat`` (can_reorder) into one [2 BLOCK] vector and reduced once; 1-D, one warp."""
import triton
import triton.language as tl


@triton.jit
def cat_partial_sums_kernel(a_ptr, b_ptr, out_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + row * BLOCK + offs)
    b = tl.load(b_ptr + row * BLOCK + offs)
    both = tl.cat(a * a, b * b, can_reorder=True)
    tl.store(out_ptr + row, tl.sum(both, axis=0))


ROWS, HALF = 131072, 512
KERNEL = cat_partial_sums_kernel
SIGNATURE = {"a_ptr": "*fp32", "b_ptr": "*fp32", "out_ptr": "*fp32"}
CONSTEXPRS = {"BLOCK": HALF}
SCALARS = {}
TENSORS = {"a_ptr": [ROWS, HALF], "b_ptr": [ROWS, HALF], "out_ptr": [ROWS]}
GRID = (ROWS,)
OPTIONS = {"num_warps": 1}
