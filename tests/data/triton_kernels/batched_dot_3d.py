"""Batched small GEMMs with a 3-D ``tl.dot``: [4, 64, 32] x [4, 32, 64] per program (per-head score
blocks), fp16 in, fp32 out."""
import triton
import triton.language as tl


@triton.jit
def batched_dot_kernel(a_ptr, b_ptr, c_ptr, BATCH: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rb = tl.program_id(0) * BATCH + tl.arange(0, BATCH)
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rb[:, None, None] * (M * K) + rm[None, :, None] * K + rk[None, None, :])
    b = tl.load(b_ptr + rb[:, None, None] * (K * N) + rk[None, :, None] * N + rn[None, None, :])
    c = tl.dot(a, b)
    tl.store(c_ptr + rb[:, None, None] * (M * N) + rm[None, :, None] * N + rn[None, None, :], c)


KERNEL = batched_dot_kernel
SIGNATURE = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32"}
CONSTEXPRS = {"BATCH": 4, "M": 64, "N": 64, "K": 32}
SCALARS = {}
TENSORS = {"a_ptr": [4096, 64, 32], "b_ptr": [4096, 32, 64], "c_ptr": [4096, 64, 64]}
GRID = (1024,)
OPTIONS = {"num_warps": 4, "num_stages": 3}
