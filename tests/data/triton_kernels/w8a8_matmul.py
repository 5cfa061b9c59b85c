"""W8A8 linear layer: int8 activations with a per-token scale times int8 weights ([N, K], read K-major)
with a per-output-channel scale, int32 accumulation over 128-wide K steps, then
y = acc * s_token[:, None] * s_channel[None, :] + bias in bf16."""
import triton
import triton.language as tl


@triton.jit
def w8a8_matmul_kernel(a_ptr, w_ptr, a_scale_ptr, w_scale_ptr, bias_ptr, y_ptr, M, N, K, stride_am, stride_wn,
                       stride_ym, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
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
    w_ptrs = w_ptr + rn[None, :] * stride_wn + rk[:, None]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for _ in range(0, K, BLOCK_K):
        acc = tl.dot(tl.load(a_ptrs), tl.load(w_ptrs), acc, out_dtype=tl.int32)
        a_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
    a_scale = tl.load(a_scale_ptr + rm)
    w_scale = tl.load(w_scale_ptr + rn)
    bias = tl.load(bias_ptr + rn).to(tl.float32)
    y = acc.to(tl.float32) * a_scale[:, None] * w_scale[None, :] + bias[None, :]
    tl.store(y_ptr + rm[:, None] * stride_ym + rn[None, :], y.to(tl.bfloat16))


M_, N_, K_ = 2048, 8192, 4096
KERNEL = w8a8_matmul_kernel
SIGNATURE = {"a_ptr": "*i8", "w_ptr": "*i8", "a_scale_ptr": "*fp32", "w_scale_ptr": "*fp32", "bias_ptr": "*bf16",
             "y_ptr": "*bf16", "M": "i32", "N": "i32", "K": "i32", "stride_am": "i32", "stride_wn": "i32",
             "stride_ym": "i32"}
CONSTEXPRS = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 128, "GROUP_M": 8}
SCALARS = {"M": M_, "N": N_, "K": K_, "stride_am": K_, "stride_wn": K_, "stride_ym": N_}
TENSORS = {"a_ptr": ([M_, K_], ("randint", -127, 128)), "w_ptr": ([N_, K_], ("randint", -127, 128)),
           "a_scale_ptr": [M_], "w_scale_ptr": [N_], "bias_ptr": [N_], "y_ptr": [M_, N_]}
GRID = ((M_ // 128) * (N_ // 128),)
OPTIONS = {"num_warps": 4, "num_stages": 3}
