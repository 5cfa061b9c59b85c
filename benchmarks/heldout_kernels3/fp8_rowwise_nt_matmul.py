"""FP8 (e4m3) GEMM with per-row scales of A and per-column scales of B, B stored [N, K] (K-major) and
transposed in registers with ``tl.trans``; bf16 out, 8 warps, 4 stages, 128 x 128 x 128 tiles."""
import triton
import triton.language as tl


@triton.jit
def fp8_rowwise_nt_kernel(a_ptr, b_ptr, sa_ptr, sb_ptr, c_ptr, M, N, K, stride_am, stride_bn, stride_cm,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rn[:, None] * stride_bn + rk[None, :]
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=rm[:, None] < M, other=0.0)
        b = tl.load(b_ptrs, mask=rn[:, None] < N, other=0.0)
        acc = tl.dot(a, tl.trans(b), acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    sa = tl.load(sa_ptr + rm, mask=rm < M, other=0.0)
    sb = tl.load(sb_ptr + rn, mask=rn < N, other=0.0)
    c = acc * sa[:, None] * sb[None, :]
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], c.to(tl.bfloat16), mask=(rm[:, None] < M) & (rn[None, :] < N))


M_, N_, K_ = 8000, 8192, 4096
KERNEL = fp8_rowwise_nt_kernel
SIGNATURE = {"a_ptr": "*fp8e4nv", "b_ptr": "*fp8e4nv", "sa_ptr": "*fp32", "sb_ptr": "*fp32", "c_ptr": "*bf16",
             "M": "i32", "N": "i32", "K": "i32", "stride_am": "i32", "stride_bn": "i32", "stride_cm": "i32"}
CONSTEXPRS = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 128}
SCALARS = {"M": M_, "N": N_, "K": K_, "stride_am": K_, "stride_bn": K_, "stride_cm": N_}
TENSORS = {"a_ptr": [M_, K_], "b_ptr": [N_, K_], "sa_ptr": [M_], "sb_ptr": [N_], "c_ptr": [M_, N_]}
GRID = ((M_ + 127) // 128, N_ // 128)
OPTIONS = {"num_warps": 8, "num_stages": 4}
