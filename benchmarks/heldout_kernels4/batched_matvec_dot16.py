"""Batched matrix times a thin block of vectors (16 right-hand sides, e.g. speculative-decoding drafts):
per batch item A[b] [1024, 512] fp16 times X[b] [512, 16] with ``tl.dot`` on [64, 64] x [64, 16] tiles,
fp32 accumulation and output."""
import triton
import triton.language as tl


@triton.jit
def batched_matvec_kernel(a_ptr, x_ptr, y_ptr, M, K, BM: tl.constexpr, BK: tl.constexpr, NV: tl.constexpr):
    b = tl.program_id(1).to(tl.int64)
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rk = tl.arange(0, BK)
    rv = tl.arange(0, NV)
    a_ptrs = a_ptr + b * M * K + rm[:, None] * K + rk[None, :]
    x_ptrs = x_ptr + b * K * NV + rk[:, None] * NV + rv[None, :]
    acc = tl.zeros([BM, NV], dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptrs)
        x = tl.load(x_ptrs)
        acc = tl.dot(a, x, acc)
        a_ptrs += BK
        x_ptrs += BK * NV
    tl.store(y_ptr + b * M * NV + rm[:, None] * NV + rv[None, :], acc)


B_, M_, K_ = 256, 1024, 512
KERNEL = batched_matvec_kernel
SIGNATURE = {"a_ptr": "*fp16", "x_ptr": "*fp16", "y_ptr": "*fp32", "M": "i32", "K": "i32"}
CONSTEXPRS = {"BM": 64, "BK": 64, "NV": 16}
SCALARS = {"M": M_, "K": K_}
TENSORS = {"a_ptr": [B_, M_, K_], "x_ptr": [B_, K_, 16], "y_ptr": [B_, M_, 16]}
GRID = (M_ // 64, B_)
OPTIONS = {"num_warps": 4, "num_stages": 3}
