"""GEMM with a transposed epilogue: C^T = (A B + bias)^T with a fused GELU (tanh form), fp16, stored
column-major (the output's contiguous dimension is the tile's first, M), as when the next op wants the
transpose; 128x128x64 tiles, grouped program order."""
import triton
import triton.language as tl


@triton.jit
def matmul_store_transposed_kernel(a_ptr, b_ptr, bias_ptr, ct_ptr, M, N, K, stride_am, stride_bk, stride_ctn,
                                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                                   GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * grid_n
    first_m = pid // per_group * GROUP_M
    group_size = min(grid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_size
    pid_n = (pid % per_group) // group_size
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, K, BLOCK_K):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    x = acc + tl.load(bias_ptr + rn).to(tl.float32)[None, :]
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    y = 0.5 * x * (2.0 - 2.0 / (1.0 + tl.exp(2.0 * inner)))  # 1 + tanh(inner)
    tl.store(ct_ptr + rn[None, :] * stride_ctn + rm[:, None], y.to(tl.float16))


M_, N_, K_ = 4096, 4096, 4096
KERNEL = matmul_store_transposed_kernel
SIGNATURE = {"a_ptr": "*fp16", "b_ptr": "*fp16", "bias_ptr": "*fp16", "ct_ptr": "*fp16", "M": "i32", "N": "i32",
             "K": "i32", "stride_am": "i32", "stride_bk": "i32", "stride_ctn": "i32"}
CONSTEXPRS = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}
SCALARS = {"M": M_, "N": N_, "K": K_, "stride_am": K_, "stride_bk": N_, "stride_ctn": M_}
TENSORS = {"a_ptr": [M_, K_], "b_ptr": [K_, N_], "bias_ptr": [N_], "ct_ptr": [N_, M_]}
GRID = ((M_ // 128) * (N_ // 128),)
OPTIONS = {"num_warps": 8, "num_stages": 3}
