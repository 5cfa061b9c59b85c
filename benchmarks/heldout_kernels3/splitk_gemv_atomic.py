"""Split-K matrix-vector product y = W x for a bf16 [N, K] weight: each program reduces a [64, 512] slab
with ``tl.sum`` along axis 1 (no ``tl.dot``) and adds its partial into fp32 y with ``tl.atomic_add``."""
import triton
import triton.language as tl


@triton.jit
def splitk_gemv_kernel(w_ptr, x_ptr, y_ptr, N, K, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    n = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    k = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
    w = tl.load(w_ptr + n[:, None].to(tl.int64) * K + k[None, :], mask=(n[:, None] < N) & (k[None, :] < K), other=0.0)
    x = tl.load(x_ptr + k, mask=k < K, other=0.0)
    part = tl.sum(w.to(tl.float32) * x.to(tl.float32)[None, :], axis=1)
    tl.atomic_add(y_ptr + n, part, mask=n < N)


N_, K_ = 28672, 8192
KERNEL = splitk_gemv_kernel
SIGNATURE = {"w_ptr": "*bf16", "x_ptr": "*bf16", "y_ptr": "*fp32", "N": "i32", "K": "i32"}
CONSTEXPRS = {"BLOCK_N": 64, "BLOCK_K": 512}
SCALARS = {"N": N_, "K": K_}
TENSORS = {"w_ptr": [N_, K_], "x_ptr": [K_], "y_ptr": ([N_], "zeros")}
GRID = (N_ // 64, K_ // 512)
OPTIONS = {"num_warps": 4}
