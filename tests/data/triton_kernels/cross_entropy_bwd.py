"""Cross-entropy backward over a large vocabulary (bf16 logits [tokens, 128256], int64 labels, the
forward's fp32 log-sum-exp per token): dlogits = (softmax(x) - onehot(label)) * dloss / tokens, one row
per program in chunks of 4096 columns; rows whose label is ``ignore_index`` get zeros."""
import triton
import triton.language as tl


@triton.jit
def cross_entropy_bwd_kernel(logits_ptr, labels_ptr, lse_ptr, dloss_ptr, dlogits_ptr, V, stride_row, inv_tokens,
                             IGNORE_INDEX: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    label = tl.load(labels_ptr + row)
    lse = tl.load(lse_ptr + row)
    scale = tl.load(dloss_ptr) * inv_tokens
    scale = tl.where(label == IGNORE_INDEX, 0.0, scale)
    cols = tl.arange(0, BLOCK)
    for start in range(0, V, BLOCK):
        offs = start + cols
        mask = offs < V
        x = tl.load(logits_ptr + row * stride_row + offs, mask=mask, other=0.0).to(tl.float32)
        grad = tl.exp(x - lse) - tl.where(offs == label, 1.0, 0.0)
        tl.store(dlogits_ptr + row * stride_row + offs, (grad * scale).to(tl.bfloat16), mask=mask)


TOKENS, VOCAB = 4096, 128256
KERNEL = cross_entropy_bwd_kernel
SIGNATURE = {"logits_ptr": "*bf16", "labels_ptr": "*i64", "lse_ptr": "*fp32", "dloss_ptr": "*fp32",
             "dlogits_ptr": "*bf16", "V": "i32", "stride_row": "i32", "inv_tokens": "fp32"}
CONSTEXPRS = {"IGNORE_INDEX": -100, "BLOCK": 4096}
SCALARS = {"V": VOCAB, "stride_row": VOCAB, "inv_tokens": 1.0 / TOKENS}
TENSORS = {"logits_ptr": [TOKENS, VOCAB], "labels_ptr": ([TOKENS], ("randint", 0, VOCAB)), "lse_ptr": [TOKENS],
           "dloss_ptr": [1], "dlogits_ptr": [TOKENS, VOCAB]}
GRID = (TOKENS,)
OPTIONS = {"num_warps": 8}
