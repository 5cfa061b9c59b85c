"""Sliding-window causal attention forward with ALiBi and grouped-query heads (bf16, head dim 64):
query i sees keys j with i - WINDOW < j <= i, scored q.k * scale + slope_h * (j - i) (ALiBi's linear
bias, one slope per head); 8 query heads share a K/V head. The key loop runs over the window only."""
import triton
import triton.language as tl


@triton.jit
def attention_window_alibi_fwd_kernel(Q, K, V, Out, Slopes, sm_scale, stride_qz, stride_qh, stride_kz,
                                      stride_kh, stride_tok, H, N_CTX, WINDOW,
                                      GROUP: tl.constexpr, HEAD_DIM: tl.constexpr,
                                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1)
    z = bh // H
    h = bh % H
    q_off = z.to(tl.int64) * stride_qz + h.to(tl.int64) * stride_qh
    kv_off = z.to(tl.int64) * stride_kz + (h // GROUP).to(tl.int64) * stride_kh
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + q_off + offs_m[:, None] * stride_tok + offs_d[None, :])
    slope = tl.load(Slopes + h) * 1.4426950408889634
    qk_scale = sm_scale * 1.4426950408889634
    # a finite start: a row whose keys in the first block all lie outside its window gets p = 0, not NaN
    m_i = tl.full([BLOCK_M], -1.0e30, dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    lo = tl.maximum(start_m - WINDOW + 1, 0) // BLOCK_N * BLOCK_N
    for start_n in range(lo, start_m + BLOCK_M, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(K + kv_off + cols[None, :] * stride_tok + offs_d[:, None])
        dist = cols[None, :] - offs_m[:, None]
        qk = tl.dot(q, k) * qk_scale + slope * dist.to(tl.float32)
        qk = tl.where((dist <= 0) & (dist > -WINDOW), qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + kv_off + cols[:, None] * stride_tok + offs_d[None, :])
        acc = tl.dot(p.to(tl.bfloat16), v, acc * alpha[:, None])
        m_i = m_ij
    out = acc / l_i[:, None]
    tl.store(Out + q_off + offs_m[:, None] * stride_tok + offs_d[None, :], out.to(tl.bfloat16))


BATCH, HEADS, KV_HEADS, SEQ, DIM = 4, 32, 4, 8192, 64
KERNEL = attention_window_alibi_fwd_kernel
SIGNATURE = {"Q": "*bf16", "K": "*bf16", "V": "*bf16", "Out": "*bf16", "Slopes": "*fp32", "sm_scale": "fp32",
             "stride_qz": "i32", "stride_qh": "i32", "stride_kz": "i32", "stride_kh": "i32", "stride_tok": "i32",
             "H": "i32", "N_CTX": "i32", "WINDOW": "i32"}
CONSTEXPRS = {"GROUP": HEADS // KV_HEADS, "HEAD_DIM": DIM, "BLOCK_M": 128, "BLOCK_N": 64}
SCALARS = {"sm_scale": DIM ** -0.5, "stride_qz": HEADS * SEQ * DIM, "stride_qh": SEQ * DIM,
           "stride_kz": KV_HEADS * SEQ * DIM, "stride_kh": SEQ * DIM, "stride_tok": DIM, "H": HEADS,
           "N_CTX": SEQ, "WINDOW": 1024}
TENSORS = {"Q": [BATCH, HEADS, SEQ, DIM], "K": [BATCH, KV_HEADS, SEQ, DIM], "V": [BATCH, KV_HEADS, SEQ, DIM],
           "Out": [BATCH, HEADS, SEQ, DIM], "Slopes": [HEADS]}
GRID = (SEQ // 128, BATCH * HEADS)
OPTIONS = {"num_warps": 4, "num_stages": 3}
