"""Split-K GEMM for a skinny problem (64 tokens x 4096 x 8192, fp16 in, fp32 out): the K loop is cut
into 8 slices, one per program along the grid's second axis, and each slice's 64x128 partial product
is added into the zero-initialised output with ``tl.atomic_add``."""
import triton
import triton.language as tl


@triton.jit
def matmul_splitk_atomic_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                                SPLIT_K: tl.constexpr):
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    grid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // grid_n
    pid_n = pid % grid_n
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    k_per_split = K // SPLIT_K
    rk = pid_k * k_per_split + tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, k_per_split, BLOCK_K):
        a = tl.load(a_ptrs, mask=rm[:, None] < M, other=0.0)
        b = tl.load(b_ptrs, mask=rn[None, :] < N, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :]
    tl.atomic_add(c_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


M_, N_, K_, SPLIT = 64, 4096, 8192, 8
KERNEL = matmul_splitk_atomic_kernel
SIGNATURE = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32",
             "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32"}
CONSTEXPRS = {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64, "SPLIT_K": SPLIT}
SCALARS = {"M": M_, "N": N_, "K": K_, "stride_am": K_, "stride_bk": N_, "stride_cm": N_}
TENSORS = {"a_ptr": [M_, K_], "b_ptr": [K_, N_], "c_ptr": ([M_, N_], "zeros")}
GRID = ((M_ // 64) * (N_ // 128), SPLIT)
OPTIONS = {"num_warps": 4, "num_stages": 4}
