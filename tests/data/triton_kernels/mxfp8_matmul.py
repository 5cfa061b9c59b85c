"""mxfp8 x mxfp8 matrix multiplication with ``tl.dot_scaled``: both operands e4m3 with e8m0 scales per
32 K-elements (A's scales [M, K/32], B's [N, K/32])."""
import triton
import triton.language as tl


@triton.jit
def mxfp8_matmul_kernel(a_ptr, a_scale_ptr, b_ptr, b_scale_ptr, c_ptr, M, N, K,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    rks = tl.arange(0, BLOCK_K // 32)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :])
        b = tl.load(b_ptr + (k0 + rk)[:, None] * N + rn[None, :])
        sa = tl.load(a_scale_ptr + rm[:, None] * (K // 32) + (k0 // 32 + rks)[None, :])
        sb = tl.load(b_scale_ptr + rn[:, None] * (K // 32) + (k0 // 32 + rks)[None, :])
        acc = tl.dot_scaled(a, sa, "e4m3", b, sb, "e4m3", acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.bfloat16))


KERNEL = mxfp8_matmul_kernel
SIGNATURE = {"a_ptr": "*fp8e4nv", "a_scale_ptr": "*u8", "b_ptr": "*fp8e4nv", "b_scale_ptr": "*u8", "c_ptr": "*bf16",
             "M": "i32", "N": "i32", "K": "i32"}
CONSTEXPRS = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 128}
SCALARS = {"M": 4096, "N": 4096, "K": 4096}
TENSORS = {"a_ptr": [4096, 4096], "a_scale_ptr": ([4096, 128], ("randint", 120, 130)), "b_ptr": [4096, 4096],
           "b_scale_ptr": ([4096, 128], ("randint", 120, 130)), "c_ptr": [4096, 4096]}
GRID = (32, 32)
OPTIONS = {"num_warps": 8, "num_stages": 3}
