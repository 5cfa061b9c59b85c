"""Nucleus (top-p) filtering after a top-k prefilter: 1024 candidate logits per row, softmax along axis 1 of a
[4, 1024] fp32 tile, ``tl.sort`` descending, ``tl.cumsum`` of the sorted probabilities, the smallest kept
probability broadcast back as the row's threshold, renormalized probabilities out (zeros for dropped ones)."""
import triton
import triton.language as tl


@triton.jit
def top_p_filter_kernel(logit_ptr, out_ptr, R, top_p, ROWS: tl.constexpr, N: tl.constexpr):
    rr = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    rn = tl.arange(0, N)
    ok = rr[:, None] < R
    x = tl.load(logit_ptr + rr[:, None] * N + rn[None, :], mask=ok, other=0.0)
    e = tl.exp(x - tl.max(x, axis=1)[:, None])
    p = e / tl.sum(e, axis=1)[:, None]
    ps = tl.sort(p, dim=1, descending=True)
    before = tl.cumsum(ps, axis=1) - ps
    thr = tl.min(tl.where(before < top_p, ps, float("inf")), axis=1)
    kept = tl.where(p >= thr[:, None], p, 0.0)
    kept = kept / tl.sum(kept, axis=1)[:, None]
    tl.store(out_ptr + rr[:, None] * N + rn[None, :], kept, mask=ok)


R_, N_ = 16383, 1024
KERNEL = top_p_filter_kernel
SIGNATURE = {"logit_ptr": "*fp32", "out_ptr": "*fp32", "R": "i32", "top_p": "fp32"}
CONSTEXPRS = {"ROWS": 4, "N": N_}
SCALARS = {"R": R_, "top_p": 0.9}
TENSORS = {"logit_ptr": [R_, N_], "out_ptr": [R_, N_]}
GRID = ((R_ + 3) // 4,)
OPTIONS = {"num_warps": 4}
