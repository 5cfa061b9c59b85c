"""First pass of a two-pass column sum (the bias gradient db = sum over tokens of dY, bf16 [M, N]):
program (j, i) sums rows [i * 512, (i + 1) * 512) of columns [j * 128, (j + 1) * 128) over [32, 128]
tiles and stores the fp32 partial in row i of a [M / 512, N] workspace (the second pass adds the rows)."""
import triton
import triton.language as tl


@triton.jit
def bias_grad_colsum_kernel(dy_ptr, partial_ptr, M, N, stride_m, ROWS_PER_PROGRAM: tl.constexpr,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    split = tl.program_id(1)
    rm = tl.arange(0, BLOCK_M)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start in range(split * ROWS_PER_PROGRAM, (split + 1) * ROWS_PER_PROGRAM, BLOCK_M):
        rows = start + rm
        dy = tl.load(dy_ptr + rows[:, None].to(tl.int64) * stride_m + rn[None, :],
                     mask=(rows[:, None] < M) & (rn[None, :] < N), other=0.0)
        acc += dy.to(tl.float32)
    tl.store(partial_ptr + split * N + rn, tl.sum(acc, 0), mask=rn < N)


M_, N_, ROWS_PER = 16384, 4096, 512
KERNEL = bias_grad_colsum_kernel
SIGNATURE = {"dy_ptr": "*bf16", "partial_ptr": "*fp32", "M": "i32", "N": "i32", "stride_m": "i32"}
CONSTEXPRS = {"ROWS_PER_PROGRAM": ROWS_PER, "BLOCK_M": 32, "BLOCK_N": 128}
SCALARS = {"M": M_, "N": N_, "stride_m": N_}
TENSORS = {"dy_ptr": [M_, N_], "partial_ptr": [M_ // ROWS_PER, N_]}
GRID = (N_ // 128, M_ // ROWS_PER)
OPTIONS = {"num_warps": 4}
