"""Log-softmax backward over a vocabulary: with y = log_softmax(x) and upstream gradient dy (bf16 rows of
32000), dx = dy - exp(y) * sum(dy); a program owns a row and walks it twice in 4096-wide chunks."""
import triton
import triton.language as tl


@triton.jit
def log_softmax_bwd_kernel(y_ptr, dy_ptr, dx_ptr, V, stride_row, BLOCK_V: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * stride_row
    cols = tl.arange(0, BLOCK_V)
    acc = tl.zeros([BLOCK_V], dtype=tl.float32)
    for start in range(0, V, BLOCK_V):
        c = start + cols
        acc += tl.load(dy_ptr + base + c, mask=c < V, other=0.0).to(tl.float32)
    total = tl.sum(acc, axis=0)
    for start in range(0, V, BLOCK_V):
        c = start + cols
        mask = c < V
        y = tl.load(y_ptr + base + c, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + base + c, mask=mask, other=0.0).to(tl.float32)
        dx = dy - tl.exp(y) * total
        tl.store(dx_ptr + base + c, dx.to(tl.bfloat16), mask=mask)


ROWS, VOCAB = 2048, 32000
KERNEL = log_softmax_bwd_kernel
SIGNATURE = {"y_ptr": "*bf16", "dy_ptr": "*bf16", "dx_ptr": "*bf16", "V": "i32", "stride_row": "i32"}
CONSTEXPRS = {"BLOCK_V": 4096}
SCALARS = {"V": VOCAB, "stride_row": VOCAB}
TENSORS = {"y_ptr": [ROWS, VOCAB], "dy_ptr": [ROWS, VOCAB], "dx_ptr": [ROWS, VOCAB]}
GRID = (ROWS,)
OPTIONS = {"num_warps": 8}
