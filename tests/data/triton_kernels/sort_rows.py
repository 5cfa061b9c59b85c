"""Row-wise sort (``tl.sort``, a bitonic network of reshapes, reductions and selects) of [8, 256]
fp32 tiles, descending, e.g. for top-k selection."""
import triton
import triton.language as tl


@triton.jit
def sort_rows_kernel(x_ptr, out_ptr, BLOCK_M: tl.constexpr, N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs = rows[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(out_ptr + offs, tl.sort(tl.load(x_ptr + offs), dim=1, descending=True))


KERNEL = sort_rows_kernel
SIGNATURE = {"x_ptr": "*fp32", "out_ptr": "*fp32"}
CONSTEXPRS = {"BLOCK_M": 8, "N": 256}
SCALARS = {}
TENSORS = {"x_ptr": [8192, 256], "out_ptr": [8192, 256]}
GRID = (1024,)
OPTIONS = {"num_warps": 4, "num_stages": 3}
