"""Row-wise inclusive prefix sum with ``tl.cumsum`` along axis 1 of a [16, 256] fp32 tile."""
import triton
import triton.language as tl


@triton.jit
def cumsum_kernel(x_ptr, out_ptr, BLOCK_M: tl.constexpr, N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs = rows[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(out_ptr + offs, tl.cumsum(tl.load(x_ptr + offs), axis=1))


KERNEL = cumsum_kernel
SIGNATURE = {"x_ptr": "*fp32", "out_ptr": "*fp32"}
CONSTEXPRS = {"BLOCK_M": 16, "N": 256}
SCALARS = {}
TENSORS = {"x_ptr": [16384, 256], "out_ptr": [16384, 256]}
GRID = (1024,)
OPTIONS = {"num_warps": 4, "num_stages": 3}
