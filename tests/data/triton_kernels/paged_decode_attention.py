"""Paged-KV decode attention with grouped-query heads (vLLM-style cache
``[num_blocks, PAGE, kv_heads, head_dim]``, bf16): one program per (sequence, KV head) takes the 8 query
heads that share it (padded to 16 rows for ``tl.dot``) and walks over the sequence's pages through its
block table, one 16-token page per step, with an online softmax over the valid tokens."""
import triton
import triton.language as tl


@triton.jit
def paged_decode_attention_kernel(Q, KCache, VCache, BlockTables, SeqLens, Out, sm_scale,
                                  stride_qb, stride_qh, stride_cb, stride_ct, stride_ch, stride_bt,
                                  GROUP: tl.constexpr, GROUP_PAD: tl.constexpr, HEAD_DIM: tl.constexpr,
                                  PAGE: tl.constexpr):
    seq = tl.program_id(0)
    kvh = tl.program_id(1)
    offs_g = tl.arange(0, GROUP_PAD)
    offs_t = tl.arange(0, PAGE)
    offs_d = tl.arange(0, HEAD_DIM)
    heads = kvh * GROUP + offs_g
    q_ptrs = Q + seq * stride_qb + heads[:, None] * stride_qh + offs_d[None, :]
    q = tl.load(q_ptrs, mask=offs_g[:, None] < GROUP, other=0.0)
    seq_len = tl.load(SeqLens + seq)
    qk_scale = sm_scale * 1.4426950408889634
    m_i = tl.full([GROUP_PAD], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([GROUP_PAD], dtype=tl.float32)
    acc = tl.zeros([GROUP_PAD, HEAD_DIM], dtype=tl.float32)
    for page in range(0, tl.cdiv(seq_len, PAGE)):
        block = tl.load(BlockTables + seq * stride_bt + page).to(tl.int64)
        base = block * stride_cb + kvh * stride_ch
        k = tl.load(KCache + base + offs_t[None, :] * stride_ct + offs_d[:, None])
        v = tl.load(VCache + base + offs_t[:, None] * stride_ct + offs_d[None, :])
        qk = tl.dot(q, k) * qk_scale
        qk = tl.where((page * PAGE + offs_t)[None, :] < seq_len, qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = tl.dot(p.to(tl.bfloat16), v, acc * alpha[:, None])
        m_i = m_ij
    out = acc / l_i[:, None]
    tl.store(Out + seq * stride_qb + heads[:, None] * stride_qh + offs_d[None, :], out.to(tl.bfloat16),
             mask=offs_g[:, None] < GROUP)


SEQS, HEADS, KV_HEADS, DIM, PAGE_TOKENS, MAX_PAGES = 64, 32, 4, 128, 16, 256
BLOCKS = SEQS * MAX_PAGES
KERNEL = paged_decode_attention_kernel
SIGNATURE = {"Q": "*bf16", "KCache": "*bf16", "VCache": "*bf16", "BlockTables": "*i32", "SeqLens": "*i32",
             "Out": "*bf16", "sm_scale": "fp32", "stride_qb": "i32", "stride_qh": "i32", "stride_cb": "i32",
             "stride_ct": "i32", "stride_ch": "i32", "stride_bt": "i32"}
CONSTEXPRS = {"GROUP": HEADS // KV_HEADS, "GROUP_PAD": 16, "HEAD_DIM": DIM, "PAGE": PAGE_TOKENS}
SCALARS = {"sm_scale": DIM ** -0.5, "stride_qb": HEADS * DIM, "stride_qh": DIM,
           "stride_cb": PAGE_TOKENS * KV_HEADS * DIM, "stride_ct": KV_HEADS * DIM, "stride_ch": DIM,
           "stride_bt": MAX_PAGES}
TENSORS = {"Q": [SEQS, HEADS, DIM], "KCache": [BLOCKS, PAGE_TOKENS, KV_HEADS, DIM],
           "VCache": [BLOCKS, PAGE_TOKENS, KV_HEADS, DIM],
           "BlockTables": ([SEQS, MAX_PAGES], ("randint", 0, BLOCKS)),
           "SeqLens": ([SEQS], ("randint", 1, PAGE_TOKENS * MAX_PAGES + 1)), "Out": [SEQS, HEADS, DIM]}
GRID = (SEQS, KV_HEADS)
OPTIONS = {"num_warps": 4, "num_stages": 3}
