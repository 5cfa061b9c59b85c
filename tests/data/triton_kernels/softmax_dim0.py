"""Softmax over dim 0 (each column of a row-major [M, N] fp32 matrix is one softmax): a program owns 64
columns and walks down the rows twice -- an online max / sum over [32, 64] tiles reduced along the
rows, then exp(x - max) / sum stored."""
import triton
import triton.language as tl


@triton.jit
def softmax_dim0_kernel(x_ptr, y_ptr, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    rm = tl.arange(0, BLOCK_M)
    col_mask = rn[None, :] < N
    m = tl.full([BLOCK_N], float("-inf"), dtype=tl.float32)
    s = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, M, BLOCK_M):
        rows = start + rm
        x = tl.load(x_ptr + rows[:, None] * stride_m + rn[None, :], mask=(rows[:, None] < M) & col_mask,
                    other=float("-inf"))
        m_new = tl.maximum(m, tl.max(x, 0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new[None, :]), 0)
        m = m_new
    inv = 1.0 / s
    for start in range(0, M, BLOCK_M):
        rows = start + rm
        mask = (rows[:, None] < M) & col_mask
        offs = rows[:, None] * stride_m + rn[None, :]
        x = tl.load(x_ptr + offs, mask=mask, other=float("-inf"))
        tl.store(y_ptr + offs, tl.exp(x - m[None, :]) * inv[None, :], mask=mask)


M_, N_ = 4096, 8192
KERNEL = softmax_dim0_kernel
SIGNATURE = {"x_ptr": "*fp32", "y_ptr": "*fp32", "M": "i32", "N": "i32", "stride_m": "i32"}
CONSTEXPRS = {"BLOCK_M": 32, "BLOCK_N": 64}
SCALARS = {"M": M_, "N": N_, "stride_m": N_}
TENSORS = {"x_ptr": [M_, N_], "y_ptr": [M_, N_]}
GRID = (N_ // 64,)
OPTIONS = {"num_warps": 4}
