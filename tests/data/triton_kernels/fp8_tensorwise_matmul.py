"""FP8 GEMM with per-tensor scales and an fp8 output (a training recipe's forward): e4m3 A [M, K] and
B [K, N], fp32 accumulation, then y = acc * (s_a * s_b / s_y) saturated to e4m3's range (+-448) and
stored as e4m3; the absolute maximum of the unscaled output is folded into one float with an atomic
max, for the next step's s_y."""
import triton
import triton.language as tl


@triton.jit
def fp8_tensorwise_matmul_kernel(a_ptr, b_ptr, scales_ptr, y_ptr, amax_ptr, M, N, K, stride_am, stride_bk,
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
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, K, BLOCK_K):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    scale_a = tl.load(scales_ptr)
    scale_b = tl.load(scales_ptr + 1)
    scale_y = tl.load(scales_ptr + 2)
    y = acc * (scale_a * scale_b)
    tl.atomic_max(amax_ptr, tl.max(tl.max(tl.abs(y), 1), 0))
    y = tl.clamp(y / scale_y, -448.0, 448.0)
    tl.store(y_ptr + rm[:, None] * stride_ym + rn[None, :], y.to(tl.float8e4nv))


M_, N_, K_ = 4096, 4096, 8192
KERNEL = fp8_tensorwise_matmul_kernel
SIGNATURE = {"a_ptr": "*fp8e4nv", "b_ptr": "*fp8e4nv", "scales_ptr": "*fp32", "y_ptr": "*fp8e4nv",
             "amax_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32", "stride_am": "i32", "stride_bk": "i32",
             "stride_ym": "i32"}
CONSTEXPRS = {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 128, "GROUP_M": 8}
SCALARS = {"M": M_, "N": N_, "K": K_, "stride_am": K_, "stride_bk": N_, "stride_ym": N_}
TENSORS = {"a_ptr": [M_, K_], "b_ptr": [K_, N_], "scales_ptr": [3], "y_ptr": [M_, N_], "amax_ptr": ([1], "zeros")}
GRID = ((M_ // 128) * (N_ // 256),)
OPTIONS = {"num_warps": 8, "num_stages": 3}
