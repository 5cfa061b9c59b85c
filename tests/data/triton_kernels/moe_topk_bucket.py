"""MoE routing with top-k and a scatter of token indices (64 experts, top 6, fp32 router logits): per
token, a softmax over the experts and the k best by repeated argmax (weights renormalized); then the
tokens of a 128-token block are bucketed by expert: a token's slot in expert e's bucket is the count of
earlier tokens of the block that chose e (an exclusive cumulative sum down the one-hot [tokens,
experts] tile), and ``token * k + j`` is scattered there. Each block writes its own buckets and
counts, so the result is deterministic; a second pass concatenates them."""
import triton
import triton.language as tl


@triton.jit
def moe_topk_bucket_kernel(logits_ptr, topk_ids_ptr, topk_w_ptr, buckets_ptr, counts_ptr, T,
                           NUM_EXPERTS: tl.constexpr, TOP_K: tl.constexpr, BLOCK_T: tl.constexpr):
    block = tl.program_id(0)
    rt = block * BLOCK_T + tl.arange(0, BLOCK_T)
    re = tl.arange(0, NUM_EXPERTS)
    valid = rt < T
    logits = tl.load(logits_ptr + rt[:, None] * NUM_EXPERTS + re[None, :], mask=valid[:, None], other=0.0)
    probs = tl.exp(logits - tl.max(logits, 1)[:, None])
    probs = probs / tl.sum(probs, 1)[:, None]
    chosen = tl.zeros([BLOCK_T, NUM_EXPERTS], dtype=tl.int32)
    total = tl.zeros([BLOCK_T], dtype=tl.float32)
    remaining = probs
    for _ in tl.static_range(TOP_K):
        best = tl.argmax(remaining, 1)
        hit = re[None, :] == best[:, None]
        total += tl.max(remaining, 1)
        chosen = tl.where(hit & valid[:, None], 1, chosen)
        remaining = tl.where(hit, -1.0, remaining)
    rank = tl.cumsum(chosen, 0) - chosen  # earlier tokens of the block with the same expert
    bucket_base = buckets_ptr + block * NUM_EXPERTS * BLOCK_T
    remaining = probs
    for j in tl.static_range(TOP_K):
        best = tl.argmax(remaining, 1)
        hit = re[None, :] == best[:, None]
        weight = tl.max(remaining, 1) / total
        slot = tl.sum(tl.where(hit, rank, 0), 1)
        tl.store(topk_ids_ptr + rt * TOP_K + j, best, mask=valid)
        tl.store(topk_w_ptr + rt * TOP_K + j, weight, mask=valid)
        tl.store(bucket_base + best * BLOCK_T + slot, rt * TOP_K + j, mask=valid)
        remaining = tl.where(hit, -1.0, remaining)
    tl.store(counts_ptr + block * NUM_EXPERTS + re, tl.sum(chosen, 0))

TOKENS, EXPERTS, K_, BLOCK = 16384, 64, 6, 128
KERNEL = moe_topk_bucket_kernel
SIGNATURE = {"logits_ptr": "*fp32", "topk_ids_ptr": "*i32", "topk_w_ptr": "*fp32", "buckets_ptr": "*i32",
             "counts_ptr": "*i32", "T": "i32"}
CONSTEXPRS = {"NUM_EXPERTS": EXPERTS, "TOP_K": K_, "BLOCK_T": BLOCK}
SCALARS = {"T": TOKENS}
TENSORS = {"logits_ptr": [TOKENS, EXPERTS], "topk_ids_ptr": [TOKENS, K_], "topk_w_ptr": [TOKENS, K_],
           "buckets_ptr": ([TOKENS // BLOCK, EXPERTS, BLOCK], "zeros"),
           "counts_ptr": [TOKENS // BLOCK, EXPERTS]}
GRID = (TOKENS // BLOCK,)
OPTIONS = {"num_warps": 4}
