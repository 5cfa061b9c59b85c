"""Many tiny per-head projections: a [16, 32] x [32, 16] fp16 product per program on one warp, the fp32
result transposed with ``tl.trans`` and stored as C^T (output column-major per head) with a bias."""
import triton
import triton.language as tl


@triton.jit
def tiny_gemm_t_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    g = tl.program_id(0).to(tl.int64)
    m = tl.arange(0, BM)
    n = tl.arange(0, BN)
    k = tl.arange(0, BK)
    a = tl.load(a_ptr + g * BM * BK + m[:, None] * BK + k[None, :])
    b = tl.load(b_ptr + g * BK * BN + k[:, None] * BN + n[None, :])
    acc = tl.dot(a, b)
    acc += tl.load(bias_ptr + g * BN + n)[None, :].to(tl.float32)
    ct = tl.trans(acc)
    tl.store(c_ptr + g * BN * BM + n[:, None] * BM + m[None, :], ct.to(tl.float16))


GROUPS = 262144
KERNEL = tiny_gemm_t_kernel
SIGNATURE = {"a_ptr": "*fp16", "b_ptr": "*fp16", "bias_ptr": "*fp16", "c_ptr": "*fp16"}
CONSTEXPRS = {"BM": 16, "BN": 16, "BK": 32}
SCALARS = {}
TENSORS = {"a_ptr": [GROUPS, 16, 32], "b_ptr": [GROUPS, 32, 16], "bias_ptr": [GROUPS, 16], "c_ptr": [GROUPS, 16, 16]}
GRID = (GROUPS,)
OPTIONS = {"num_warps": 1}
