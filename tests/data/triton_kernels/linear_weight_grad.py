"""The weight gradient of a linear layer, dW = dY^T X (dY: [tokens, out], X: [tokens, in], fp16;
dW: [out, in], fp32), both operands read through their strides: the A tile is dY^T, whose
contiguous dimension is the tile's first (M) one, and the reduction runs over the tokens."""
import triton
import triton.language as tl


@triton.jit
def linear_weight_grad_kernel(dy_ptr, x_ptr, dw_ptr, T, N, K, stride_dyt, stride_dyn, stride_xt, stride_xk,
                              stride_wn, stride_wk, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                              BLOCK_T: tl.constexpr, GROUP_N: tl.constexpr):
    pid = tl.program_id(0)
    grid_n = tl.cdiv(N, BLOCK_N)
    grid_k = tl.cdiv(K, BLOCK_K)
    per_group = GROUP_N * grid_k
    first_n = pid // per_group * GROUP_N
    group_size = min(grid_n - first_n, GROUP_N)
    pid_n = first_n + (pid % per_group) % group_size
    pid_k = (pid % per_group) // group_size
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    rt = tl.arange(0, BLOCK_T)
    a_ptrs = dy_ptr + rn[:, None] * stride_dyn + rt[None, :] * stride_dyt  # dY^T: [BLOCK_N, BLOCK_T]
    b_ptrs = x_ptr + rt[:, None] * stride_xt + rk[None, :] * stride_xk     # X:    [BLOCK_T, BLOCK_K]
    acc = tl.zeros((BLOCK_N, BLOCK_K), dtype=tl.float32)
    for _ in range(0, T, BLOCK_T):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BLOCK_T * stride_dyt
        b_ptrs += BLOCK_T * stride_xt
    tl.store(dw_ptr + rn[:, None] * stride_wn + rk[None, :] * stride_wk, acc)


TOKENS, OUT, IN = 8192, 4096, 4096
KERNEL = linear_weight_grad_kernel
SIGNATURE = {"dy_ptr": "*fp16", "x_ptr": "*fp16", "dw_ptr": "*fp32", "T": "i32", "N": "i32", "K": "i32",
             "stride_dyt": "i32", "stride_dyn": "i32", "stride_xt": "i32", "stride_xk": "i32",
             "stride_wn": "i32", "stride_wk": "i32"}
CONSTEXPRS = {"BLOCK_N": 128, "BLOCK_K": 128, "BLOCK_T": 32, "GROUP_N": 8}
SCALARS = {"T": TOKENS, "N": OUT, "K": IN, "stride_dyt": OUT, "stride_dyn": 1, "stride_xt": IN, "stride_xk": 1,
           "stride_wn": IN, "stride_wk": 1}
TENSORS = {"dy_ptr": [TOKENS, OUT], "x_ptr": [TOKENS, IN], "dw_ptr": [OUT, IN]}
GRID = ((OUT // 128) * (IN // 128),)
OPTIONS = {"num_warps": 8, "num_stages": 4}
