"""Double-precision Gram matrix C = A^T A of a tall fp64 matrix (normal equations / covariance in scientific
code): each program owns a [32, 32] block of C and walks K in 32-row steps, ``tl.dot`` of the ``tl.trans``-ed
[32, 32] column slab of A with another slab, fp64 accumulation."""
import triton
import triton.language as tl


@triton.jit
def fp64_syrk_kernel(a_ptr, c_ptr, K, N, BN: tl.constexpr, BK: tl.constexpr):
    ri = tl.program_id(0) * BN + tl.arange(0, BN)
    rj = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BN, BN], dtype=tl.float64)
    for k0 in range(0, K, BK):
        rows = (k0 + rk)[:, None] * N
        ai = tl.load(a_ptr + rows + ri[None, :])
        aj = tl.load(a_ptr + rows + rj[None, :])
        acc = tl.dot(tl.trans(ai), aj, acc, out_dtype=tl.float64)
    tl.store(c_ptr + ri[:, None] * N + rj[None, :], acc)


K_, N_ = 8192, 512
KERNEL = fp64_syrk_kernel
SIGNATURE = {"a_ptr": "*fp64", "c_ptr": "*fp64", "K": "i32", "N": "i32"}
CONSTEXPRS = {"BN": 32, "BK": 32}
SCALARS = {"K": K_, "N": N_}
TENSORS = {"a_ptr": [K_, N_], "c_ptr": [N_, N_]}
GRID = (N_ // 32, N_ // 32)
OPTIONS = {"num_warps": 4, "num_stages": 3}
