"""bf16 x mxfp4 matrix multiplication with ``tl.dot_scaled``: B packed two e2m1 values per byte along K,
one e8m0 scale per 32 K-elements of each column (the weight-only microscaling GEMM of MoE kernels)."""
import triton
import triton.language as tl


@triton.jit
def mxfp4_matmul_kernel(a_ptr, b_ptr, b_scale_ptr, c_ptr, M, N, K,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    rk_packed = tl.arange(0, BLOCK_K // 2)
    rk_scale = tl.arange(0, BLOCK_K // 32)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk_packed[:, None] * N + rn[None, :]
    s_ptrs = b_scale_ptr + rn[:, None] * (K // 32) + rk_scale[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        s = tl.load(s_ptrs)
        acc = tl.dot_scaled(a, None, "bf16", b, s, "e2m1", acc)
        a_ptrs += BLOCK_K
        b_ptrs += (BLOCK_K // 2) * N
        s_ptrs += BLOCK_K // 32
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.bfloat16))


KERNEL = mxfp4_matmul_kernel
SIGNATURE = {"a_ptr": "*bf16", "b_ptr": "*u8", "b_scale_ptr": "*u8", "c_ptr": "*bf16", "M": "i32", "N": "i32", "K": "i32"}
CONSTEXPRS = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 128}
SCALARS = {"M": 2048, "N": 4096, "K": 4096}
TENSORS = {"a_ptr": [2048, 4096], "b_ptr": [2048, 4096], "b_scale_ptr": ([4096, 128], ("randint", 120, 130)),
           "c_ptr": [2048, 4096]}
GRID = (16, 32)
OPTIONS = {"num_warps": 8, "num_stages": 3}
