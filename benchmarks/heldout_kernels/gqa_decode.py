"""Grouped-query attention decode for one new token per sequence (bf16, 32 query heads over 8 KV heads,
head dim 128): one program per (query head, sequence) streams the sequence's contiguous K / V
``[B, S, Hkv, D]`` in 64-token blocks, scores them with a broadcast multiply and row sums (no ``tl.dot``),
and keeps an online softmax over the valid tokens."""
import triton
import triton.language as tl


@triton.jit
def gqa_decode_kernel(Q, K, V, SeqLens, Out, sm_scale, stride_qb, stride_qh, stride_kb, stride_ks, stride_kh,
                      GROUP: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_S: tl.constexpr):
    head = tl.program_id(0)
    seq = tl.program_id(1)
    kvh = head // GROUP
    offs_d = tl.arange(0, HEAD_DIM)
    offs_s = tl.arange(0, BLOCK_S)
    q = tl.load(Q + seq * stride_qb + head * stride_qh + offs_d).to(tl.float32)
    q = q * (sm_scale * 1.4426950408889634)
    seq_len = tl.load(SeqLens + seq)
    kv_base = seq.to(tl.int64) * stride_kb + kvh * stride_kh
    m_i = float("-inf")
    l_i = 0.0
    acc = tl.zeros([HEAD_DIM], dtype=tl.float32)
    for start in range(0, seq_len, BLOCK_S):
        tok = start + offs_s
        valid = tok < seq_len
        offs = kv_base + tok[:, None].to(tl.int64) * stride_ks + offs_d[None, :]
        k = tl.load(K + offs, mask=valid[:, None], other=0.0).to(tl.float32)
        s = tl.sum(k * q[None, :], axis=1)
        s = tl.where(valid, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=0))
        p = tl.math.exp2(s - m_new)
        alpha = tl.math.exp2(m_i - m_new)
        v = tl.load(V + offs, mask=valid[:, None], other=0.0).to(tl.float32)
        acc = acc * alpha + tl.sum(p[:, None] * v, axis=0)
        l_i = l_i * alpha + tl.sum(p, axis=0)
        m_i = m_new
    out = acc / l_i
    tl.store(Out + seq * stride_qb + head * stride_qh + offs_d, out.to(tl.bfloat16))


BATCH, HEADS, KV_HEADS, DIM, MAX_SEQ = 32, 32, 8, 128, 2048
KERNEL = gqa_decode_kernel
SIGNATURE = {"Q": "*bf16", "K": "*bf16", "V": "*bf16", "SeqLens": "*i32", "Out": "*bf16", "sm_scale": "fp32",
             "stride_qb": "i32", "stride_qh": "i32", "stride_kb": "i32", "stride_ks": "i32", "stride_kh": "i32"}
CONSTEXPRS = {"GROUP": HEADS // KV_HEADS, "HEAD_DIM": DIM, "BLOCK_S": 64}
SCALARS = {"sm_scale": DIM ** -0.5, "stride_qb": HEADS * DIM, "stride_qh": DIM,
           "stride_kb": MAX_SEQ * KV_HEADS * DIM, "stride_ks": KV_HEADS * DIM, "stride_kh": DIM}
TENSORS = {"Q": [BATCH, HEADS, DIM], "K": [BATCH, MAX_SEQ, KV_HEADS, DIM], "V": [BATCH, MAX_SEQ, KV_HEADS, DIM],
           "SeqLens": ([BATCH], ("randint", 1, MAX_SEQ + 1)), "Out": [BATCH, HEADS, DIM]}
GRID = (HEADS, BATCH)
OPTIONS = {"num_warps": 4, "num_stages": 2}
