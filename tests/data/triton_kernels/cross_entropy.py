"""Cross-entropy loss over a 32000-word vocabulary: per row, an online log-sum-exp over 4096-wide
chunks (1-D max and sum reductions across the CTA), minus the target logit."""
import triton
import triton.language as tl


@triton.jit
def cross_entropy_kernel(logits_ptr, target_ptr, loss_ptr, V, stride_row, BLOCK_V: tl.constexpr):
    row = tl.program_id(0)
    base = logits_ptr + row.to(tl.int64) * stride_row
    m = float("-inf")
    s = 0.0
    for v0 in range(0, V, BLOCK_V):
        cols = v0 + tl.arange(0, BLOCK_V)
        x = tl.load(base + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    target = tl.load(target_ptr + row)
    x_t = tl.load(base + target).to(tl.float32)
    tl.store(loss_ptr + row, tl.log(s) + m - x_t)


KERNEL = cross_entropy_kernel
SIGNATURE = {"logits_ptr": "*bf16", "target_ptr": "*i32", "loss_ptr": "*fp32", "V": "i32", "stride_row": "i32"}
CONSTEXPRS = {"BLOCK_V": 4096}
SCALARS = {"V": 32000, "stride_row": 32000}
TENSORS = {"logits_ptr": [4096, 32000], "target_ptr": ([4096], ("randint", 0, 32000)), "loss_ptr": [4096]}
GRID = (4096,)
OPTIONS = {"num_warps": 8, "num_stages": 3}
