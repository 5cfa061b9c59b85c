"""Gather of a paged KV cache (``[num_blocks, 16, Hkv, D]`` bf16) into a contiguous per-sequence buffer
``[B, max_len, Hkv, D]`` through the block table, e.g. before a prefill with cached prefixes: one program
per (page, sequence) copies a [16 tokens, Hkv * D] tile, and the tokens past the sequence's length are
written as zeros."""
import triton
import triton.language as tl


@triton.jit
def paged_kv_gather_kernel(Cache, BlockTables, SeqLens, Out, stride_cb, stride_bt, stride_ob,
                           PAGE: tl.constexpr, ROW: tl.constexpr):
    page = tl.program_id(0)
    seq = tl.program_id(1)
    offs_t = tl.arange(0, PAGE)
    offs_e = tl.arange(0, ROW)
    seq_len = tl.load(SeqLens + seq)
    tok = page * PAGE + offs_t
    valid = tok < seq_len
    block = tl.load(BlockTables + seq * stride_bt + page, mask=page * PAGE < seq_len, other=0).to(tl.int64)
    src = Cache + block * stride_cb + offs_t[:, None] * ROW + offs_e[None, :]
    vals = tl.load(src, mask=valid[:, None], other=0.0)
    dst = Out + seq.to(tl.int64) * stride_ob + tok[:, None].to(tl.int64) * ROW + offs_e[None, :]
    tl.store(dst, vals)


SEQS, PAGE_TOKENS, KV_HEADS, DIM, MAX_PAGES = 32, 16, 8, 128, 256
BLOCKS = SEQS * MAX_PAGES
KERNEL = paged_kv_gather_kernel
SIGNATURE = {"Cache": "*bf16", "BlockTables": "*i32", "SeqLens": "*i32", "Out": "*bf16", "stride_cb": "i32",
             "stride_bt": "i32", "stride_ob": "i32"}
CONSTEXPRS = {"PAGE": PAGE_TOKENS, "ROW": KV_HEADS * DIM}
SCALARS = {"stride_cb": PAGE_TOKENS * KV_HEADS * DIM, "stride_bt": MAX_PAGES,
           "stride_ob": MAX_PAGES * PAGE_TOKENS * KV_HEADS * DIM}
TENSORS = {"Cache": [BLOCKS, PAGE_TOKENS, KV_HEADS, DIM], "BlockTables": ([SEQS, MAX_PAGES], ("randint", 0, BLOCKS)),
           "SeqLens": ([SEQS], ("randint", 1, PAGE_TOKENS * MAX_PAGES + 1)),
           "Out": [SEQS, MAX_PAGES * PAGE_TOKENS, KV_HEADS, DIM]}
GRID = (MAX_PAGES, SEQS)
OPTIONS = {"num_warps": 4, "num_stages": 2}
