"""Column-wise argmin of an fp32 [M, N] matrix: a [BLOCK_M, BLOCK_N] tile per step, ``tl.min(...,
return_indices=True)`` along axis 0 (the strided axis), a running (value, row) pair per column, int32 out;
two warps per program."""
import triton
import triton.language as tl


@triton.jit
def colwise_argmin_kernel(x_ptr, idx_ptr, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    rows = tl.arange(0, BLOCK_M)
    best = tl.full([BLOCK_N], float("inf"), tl.float32)
    best_idx = tl.zeros([BLOCK_N], dtype=tl.int32)
    for start in range(0, M, BLOCK_M):
        r = start + rows
        x = tl.load(x_ptr + r[:, None] * stride_m + cols[None, :], mask=(r[:, None] < M) & (cols[None, :] < N),
                    other=float("inf"))
        v, i = tl.min(x, axis=0, return_indices=True)
        better = v < best
        best_idx = tl.where(better, i + start, best_idx)
        best = tl.where(better, v, best)
    tl.store(idx_ptr + cols, best_idx, mask=cols < N)


M_, N_ = 8192, 4000
KERNEL = colwise_argmin_kernel
SIGNATURE = {"x_ptr": "*fp32", "idx_ptr": "*i32", "M": "i32", "N": "i32", "stride_m": "i32"}
CONSTEXPRS = {"BLOCK_M": 32, "BLOCK_N": 64}
SCALARS = {"M": M_, "N": N_, "stride_m": N_}
TENSORS = {"x_ptr": [M_, N_], "idx_ptr": [N_]}
GRID = ((N_ + 63) // 64,)
OPTIONS = {"num_warps": 2}
