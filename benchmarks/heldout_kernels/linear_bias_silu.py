"""A bf16 linear layer ``y = silu(x @ W^T + b)`` with the weight in PyTorch's [N, K] layout (read K-major and
transposed in registers): 128x128x64 tiles, grouped program order, fp32 accumulation, bias + SiLU epilogue
stored as bf16 with edge masks."""
import triton
import triton.language as tl


@triton.jit
def linear_bias_silu_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, stride_xm, stride_wn, stride_ym,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                            GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * grid_n
    first_m = (pid // per_group) * GROUP_M
    group_size = min(grid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_size
    pid_n = (pid % per_group) // group_size
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + (rm % M)[:, None] * stride_xm + rk[None, :]
    w_ptrs = w_ptr + (rn % N)[:, None] * stride_wn + rk[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = (k0 + rk) < K
        x = tl.load(x_ptrs, mask=k_ok[None, :], other=0.0)
        w = tl.load(w_ptrs, mask=k_ok[None, :], other=0.0)
        acc = tl.dot(x, tl.trans(w), acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
    acc += tl.load(b_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    y = acc * tl.sigmoid(acc)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(y_ptr + rm[:, None].to(tl.int64) * stride_ym + rn[None, :], y.to(tl.bfloat16), mask=mask)


M_, N_, K_ = 2048, 8192, 4096
KERNEL = linear_bias_silu_kernel
SIGNATURE = {"x_ptr": "*bf16", "w_ptr": "*bf16", "b_ptr": "*bf16", "y_ptr": "*bf16", "M": "i32", "N": "i32",
             "K": "i32", "stride_xm": "i32", "stride_wn": "i32", "stride_ym": "i32"}
CONSTEXPRS = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}
SCALARS = {"M": M_, "N": N_, "K": K_, "stride_xm": K_, "stride_wn": K_, "stride_ym": N_}
TENSORS = {"x_ptr": [M_, K_], "w_ptr": [N_, K_], "b_ptr": [N_], "y_ptr": [M_, N_]}
GRID = ((M_ // 128) * (N_ // 128),)
OPTIONS = {"num_warps": 8, "num_stages": 4}
