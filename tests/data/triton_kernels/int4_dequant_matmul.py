"""w4a16 matrix multiplication (weight-only int4 quantization): B packed two signed int4 per byte along K,
unpacked with shifts, ``tl.join`` + ``tl.permute`` + ``tl.reshape`` to [K, N], scaled per column, then
``tl.dot`` with fp16 activations."""
import triton
import triton.language as tl


@triton.jit
def w4a16_matmul_kernel(a_ptr, b_ptr, scale_ptr, c_ptr, M, N, K,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    rkp = tl.arange(0, BLOCK_K // 2)
    scale = tl.load(scale_ptr + rn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :])
        packed = tl.load(b_ptr + (k0 // 2 + rkp)[:, None] * N + rn[None, :])
        lo = (packed << 4) >> 4
        hi = packed >> 4
        w = tl.reshape(tl.permute(tl.join(lo, hi), (0, 2, 1)), (BLOCK_K, BLOCK_N))
        w = w.to(tl.float16) * scale[None, :]
        acc = tl.dot(a, w, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


KERNEL = w4a16_matmul_kernel
SIGNATURE = {"a_ptr": "*fp16", "b_ptr": "*i8", "scale_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32",
             "K": "i32"}
CONSTEXPRS = {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 128}
SCALARS = {"M": 64, "N": 8192, "K": 4096}
TENSORS = {"a_ptr": [64, 4096], "b_ptr": ([2048, 8192], ("randint", -128, 128)), "scale_ptr": [8192],
           "c_ptr": [64, 8192]}
GRID = (1, 64)
OPTIONS = {"num_warps": 4, "num_stages": 3}
