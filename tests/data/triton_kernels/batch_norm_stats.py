"""Batch-norm statistics of channels-last activations ([N * H * W, C] bf16): per channel, the sum and the
sum of squares over all rows -- a reduction over the non-contiguous axis. A program owns 64 channels
and a slice of the rows, accumulates [64 rows, 64 channels] tiles, reduces over the rows and adds
its partial sums into the fp32 outputs with ``tl.atomic_add``."""
import triton
import triton.language as tl


@triton.jit
def batch_norm_stats_kernel(x_ptr, sum_ptr, sumsq_ptr, R, C, stride_r, ROWS_PER_PROGRAM: tl.constexpr,
                            BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    rc = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    first = tl.program_id(1) * ROWS_PER_PROGRAM
    rr = tl.arange(0, BLOCK_R)
    acc = tl.zeros([BLOCK_R, BLOCK_C], dtype=tl.float32)
    acc2 = tl.zeros([BLOCK_R, BLOCK_C], dtype=tl.float32)
    for start in range(first, first + ROWS_PER_PROGRAM, BLOCK_R):
        rows = start + rr
        mask = (rows[:, None] < R) & (rc[None, :] < C)
        x = tl.load(x_ptr + rows[:, None].to(tl.int64) * stride_r + rc[None, :], mask=mask, other=0.0)
        x = x.to(tl.float32)
        acc += x
        acc2 += x * x
    tl.atomic_add(sum_ptr + rc, tl.sum(acc, 0), mask=rc < C)
    tl.atomic_add(sumsq_ptr + rc, tl.sum(acc2, 0), mask=rc < C)


ROWS, CHANNELS, ROWS_PER = 32 * 56 * 56, 256, 1024
KERNEL = batch_norm_stats_kernel
SIGNATURE = {"x_ptr": "*bf16", "sum_ptr": "*fp32", "sumsq_ptr": "*fp32", "R": "i32", "C": "i32", "stride_r": "i32"}
CONSTEXPRS = {"ROWS_PER_PROGRAM": ROWS_PER, "BLOCK_R": 64, "BLOCK_C": 64}
SCALARS = {"R": ROWS, "C": CHANNELS, "stride_r": CHANNELS}
TENSORS = {"x_ptr": [ROWS, CHANNELS], "sum_ptr": ([CHANNELS], "zeros"), "sumsq_ptr": ([CHANNELS], "zeros")}
GRID = (CHANNELS // 64, ROWS // ROWS_PER)
OPTIONS = {"num_warps": 4}
