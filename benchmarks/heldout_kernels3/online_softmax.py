"""Single-pass (online) softmax statistics over long fp16 rows: per-lane running max ``m`` and rescaled sum
``l`` carried through the loop as [BLOCK] vectors, merged once at the end; a second loop writes the
probabilities (vocabulary 50257, masked tail)."""
import triton
import triton.language as tl


@triton.jit
def online_softmax_kernel(x_ptr, y_ptr, N, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    l = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        ok = start + cols < N
        x = tl.load(x_ptr + row * stride_row + start + cols, mask=ok, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        scale = tl.where(m_new == float("-inf"), 0.0, tl.exp(m - m_new))
        l = l * scale + tl.where(ok, tl.exp(x - m_new), 0.0)
        m = m_new
    m_row = tl.max(m, axis=0)
    l_row = tl.sum(tl.where(m == float("-inf"), 0.0, l * tl.exp(m - m_row)), axis=0)
    inv = 1.0 / l_row
    for start in range(0, N, BLOCK):
        ok = start + cols < N
        x = tl.load(x_ptr + row * stride_row + start + cols, mask=ok, other=float("-inf")).to(tl.float32)
        tl.store(y_ptr + row * stride_row + start + cols, (tl.exp(x - m_row) * inv).to(tl.float16), mask=ok)


ROWS, VOCAB = 4096, 50257
KERNEL = online_softmax_kernel
SIGNATURE = {"x_ptr": "*fp16", "y_ptr": "*fp16", "N": "i32", "stride_row": "i32"}
CONSTEXPRS = {"BLOCK": 2048}
SCALARS = {"N": VOCAB, "stride_row": VOCAB}
TENSORS = {"x_ptr": [ROWS, VOCAB], "y_ptr": [ROWS, VOCAB]}
GRID = (ROWS,)
OPTIONS = {"num_warps": 4}
