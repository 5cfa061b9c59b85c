"""Complex multiply-accumulate of interleaved (re, im) fp32 pairs: loads of the real and imaginary planes,
products joined with ``tl.interleave`` into the interleaved output, and the magnitude summed through a
``tl.reshape(..., can_reorder=True)`` of the [BLOCK, 2] pairs."""
import triton
import triton.language as tl


@triton.jit
def complex_interleave_kernel(ar_ptr, ai_ptr, br_ptr, bi_ptr, out_ptr, norm_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    ar = tl.load(ar_ptr + offs, mask=ok, other=0.0)
    ai = tl.load(ai_ptr + offs, mask=ok, other=0.0)
    br = tl.load(br_ptr + offs, mask=ok, other=0.0)
    bi = tl.load(bi_ptr + offs, mask=ok, other=0.0)
    re = ar * br - ai * bi
    im = ar * bi + ai * br
    pairs = tl.interleave(re, im)
    o2 = tl.program_id(0) * (2 * BLOCK) + tl.arange(0, 2 * BLOCK)
    tl.store(out_ptr + o2, pairs, mask=o2 < 2 * n)
    sq = tl.reshape(pairs * pairs, [2 * BLOCK], can_reorder=True)
    tl.atomic_add(norm_ptr, tl.sum(sq, axis=0))


N_ = 32_000_000
KERNEL = complex_interleave_kernel
SIGNATURE = {"ar_ptr": "*fp32", "ai_ptr": "*fp32", "br_ptr": "*fp32", "bi_ptr": "*fp32", "out_ptr": "*fp32",
             "norm_ptr": "*fp32", "n": "i32"}
CONSTEXPRS = {"BLOCK": 1024}
SCALARS = {"n": N_}
TENSORS = {"ar_ptr": [N_], "ai_ptr": [N_], "br_ptr": [N_], "bi_ptr": [N_], "out_ptr": [2 * N_],
           "norm_ptr": ([1], "zeros")}
GRID = ((N_ + 1023) // 1024,)
OPTIONS = {"num_warps": 4}
