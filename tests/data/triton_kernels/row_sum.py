"""Row sums of an fp16 matrix: a [16, 256] fp32 accumulator swept along the row, reduced along axis 1."""
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        acc += tl.load(x_ptr + rows[:, None] * stride_m + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + rows, tl.sum(acc, axis=1), mask=rows < M)


KERNEL = row_sum_kernel
SIGNATURE = {"x_ptr": "*fp16", "out_ptr": "*fp32", "M": "i32", "N": "i32", "stride_m": "i32"}
CONSTEXPRS = {"BLOCK_M": 16, "BLOCK_N": 256}
SCALARS = {"M": 8192, "N": 8192, "stride_m": 8192}
TENSORS = {"x_ptr": [8192, 8192], "out_ptr": [8192]}
GRID = (512,)
OPTIONS = {"num_warps": 4, "num_stages": 3}
