"""Greedy decoding over a vocabulary of 128256 fp16 logits: one program per row walks the vocabulary in
4096-wide chunks, takes each chunk's maximum with its index (``tl.max(..., return_indices=True)``) and
keeps the first maximal token and its logit."""
import triton
import triton.language as tl


@triton.jit
def greedy_argmax_kernel(logits_ptr, token_ptr, value_ptr, V, stride_row, BLOCK_V: tl.constexpr):
    row = tl.program_id(0)
    base = logits_ptr + row.to(tl.int64) * stride_row
    cols = tl.arange(0, BLOCK_V)
    best_val = float("-inf")
    best_idx = 0
    for start in range(0, V, BLOCK_V):
        offs = start + cols
        x = tl.load(base + offs, mask=offs < V, other=float("-inf")).to(tl.float32)
        chunk_val, chunk_idx = tl.max(x, axis=0, return_indices=True, return_indices_tie_break_left=True)
        better = chunk_val > best_val
        best_idx = tl.where(better, start + chunk_idx, best_idx)
        best_val = tl.where(better, chunk_val, best_val)
    tl.store(token_ptr + row, best_idx)
    tl.store(value_ptr + row, best_val)


ROWS, VOCAB = 256, 128256
KERNEL = greedy_argmax_kernel
SIGNATURE = {"logits_ptr": "*fp16", "token_ptr": "*i32", "value_ptr": "*fp32", "V": "i32", "stride_row": "i32"}
CONSTEXPRS = {"BLOCK_V": 4096}
SCALARS = {"V": VOCAB, "stride_row": VOCAB}
TENSORS = {"logits_ptr": [ROWS, VOCAB], "token_ptr": [ROWS], "value_ptr": [ROWS]}
GRID = (ROWS,)
OPTIONS = {"num_warps": 8, "num_stages": 2}
