"""FP8 GEMM with block-wise scales (DeepSeek-V3's recipe): A e4m3 [M, K] with one fp32 scale per token
per 128 columns, B e4m3 [N, K] (K-major) with one scale per 128x128 block; each 128-wide K step's
product is scaled before it is accumulated: acc += dot(a, b) * s_a[:, None] * s_b. bf16 out."""
import triton
import triton.language as tl


@triton.jit
def fp8_blockwise_matmul_kernel(a_ptr, b_ptr, a_scale_ptr, b_scale_ptr, c_ptr, M, N, K, stride_am, stride_bn,
                                stride_asm, stride_bsn, stride_cm, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                                BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
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
    b_ptrs = b_ptr + rn[None, :] * stride_bn + rk[:, None]
    a_scale_ptrs = a_scale_ptr + rm * stride_asm
    b_scale_ptr += pid_n * BLOCK_N // 128 * stride_bsn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        a_scale = tl.load(a_scale_ptrs + k)
        b_scale = tl.load(b_scale_ptr + k)
        acc += tl.dot(a, b) * a_scale[:, None] * b_scale
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(tl.bfloat16))


M_, N_, K_ = 4096, 7168, 2048
KERNEL = fp8_blockwise_matmul_kernel
SIGNATURE = {"a_ptr": "*fp8e4nv", "b_ptr": "*fp8e4nv", "a_scale_ptr": "*fp32", "b_scale_ptr": "*fp32",
             "c_ptr": "*bf16", "M": "i32", "N": "i32", "K": "i32", "stride_am": "i32", "stride_bn": "i32",
             "stride_asm": "i32", "stride_bsn": "i32", "stride_cm": "i32"}
CONSTEXPRS = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 128, "GROUP_M": 8}
SCALARS = {"M": M_, "N": N_, "K": K_, "stride_am": K_, "stride_bn": K_, "stride_asm": K_ // 128,
           "stride_bsn": K_ // 128, "stride_cm": N_}
TENSORS = {"a_ptr": [M_, K_], "b_ptr": [N_, K_], "a_scale_ptr": [M_, K_ // 128],
           "b_scale_ptr": [N_ // 128, K_ // 128], "c_ptr": [M_, N_]}
GRID = ((M_ // 128) * (N_ // 128),)
OPTIONS = {"num_warps": 4, "num_stages": 3}
