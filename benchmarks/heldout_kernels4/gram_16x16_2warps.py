"""Per-group Gram matrices (e.g. Shampoo / whitening statistics of 16-row blocks): G = X X^T for
X [16, 128] fp16, ``tl.dot(x, tl.trans(x))`` -- a [16, 128] x [128, 16] product on 2 warps -- scaled by
1 / 128, fp32 [16, 16] out, one group per program."""
import triton
import triton.language as tl


@triton.jit
def gram_kernel(x_ptr, g_ptr, inv_k, R: tl.constexpr, K: tl.constexpr):
    grp = tl.program_id(0).to(tl.int64)
    rr = tl.arange(0, R)
    rk = tl.arange(0, K)
    x = tl.load(x_ptr + grp * R * K + rr[:, None] * K + rk[None, :])
    g = tl.dot(x, tl.trans(x)) * inv_k
    tl.store(g_ptr + grp * R * R + rr[:, None] * R + rr[None, :], g)


G_ = 65536
KERNEL = gram_kernel
SIGNATURE = {"x_ptr": "*fp16", "g_ptr": "*fp32", "inv_k": "fp32"}
CONSTEXPRS = {"R": 16, "K": 128}
SCALARS = {"inv_k": 1.0 / 128}
TENSORS = {"x_ptr": [G_, 16, 128], "g_ptr": [G_, 16, 16]}
GRID = (G_,)
OPTIONS = {"num_warps": 2}
