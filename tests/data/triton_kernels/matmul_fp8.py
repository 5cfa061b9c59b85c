"""fp8 (e5m2) matrix multiplication, fp32 accumulate, fp16 out: the fp8 configuration of Triton
tutorial 03 (128x256x128 tiles, 8 warps, 3 stages), with B stored [N, K] (K-major, the "TN" GEMM
Hopper's fp8 wgmma wants), so B's tile is loaded with K as the contiguous dim."""
import triton
import triton.language as tl


@triton.jit
def matmul_fp8_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bn, stride_bk, stride_cm, stride_cn,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = (tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    rn = (tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    rcm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rcn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + rcm[:, None] * stride_cm + rcn[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.float16), mask=(rcm[:, None] < M) & (rcn[None, :] < N))


KERNEL = matmul_fp8_kernel
SIGNATURE = {"a_ptr": "*fp8e5", "b_ptr": "*fp8e5", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
             "stride_am": "i32", "stride_ak": "i32", "stride_bn": "i32", "stride_bk": "i32",
             "stride_cm": "i32", "stride_cn": "i32"}
CONSTEXPRS = {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 128}
SCALARS = {"M": 4096, "N": 4096, "K": 4096, "stride_am": 4096, "stride_ak": 1, "stride_bn": 4096,
           "stride_bk": 1, "stride_cm": 4096, "stride_cn": 1}
TENSORS = {"a_ptr": [4096, 4096], "b_ptr": [4096, 4096], "c_ptr": [4096, 4096]}
GRID = (32, 16)
OPTIONS = {"num_warps": 8, "num_stages": 3}
