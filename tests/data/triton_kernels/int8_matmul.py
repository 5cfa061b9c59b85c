"""int8 x int8 -> int32 matrix multiplication (quantized GEMM), 128x128x64 tiles, per-row and
per-column fp32 dequantization scales applied in the epilogue, fp16 out."""
import triton
import triton.language as tl


@triton.jit
def int8_matmul_kernel(a_ptr, b_ptr, sa_ptr, sb_ptr, c_ptr, M, N, K,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for _ in range(0, K, BLOCK_K):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc, out_dtype=tl.int32)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    scale = tl.load(sa_ptr + rm)[:, None] * tl.load(sb_ptr + rn)[None, :]
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], (acc.to(tl.float32) * scale).to(tl.float16))


KERNEL = int8_matmul_kernel
SIGNATURE = {"a_ptr": "*i8", "b_ptr": "*i8", "sa_ptr": "*fp32", "sb_ptr": "*fp32", "c_ptr": "*fp16",
             "M": "i32", "N": "i32", "K": "i32"}
CONSTEXPRS = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}
SCALARS = {"M": 4096, "N": 4096, "K": 4096}
TENSORS = {"a_ptr": ([4096, 4096], ("randint", -8, 8)), "b_ptr": ([4096, 4096], ("randint", -8, 8)),
           "sa_ptr": [4096], "sb_ptr": [4096], "c_ptr": [4096, 4096]}
GRID = (32, 32)
OPTIONS = {"num_warps": 4, "num_stages": 4}
