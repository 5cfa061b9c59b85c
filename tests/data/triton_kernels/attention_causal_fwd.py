"""Causal flash attention forward, head dim 128 (Triton tutorial 06's two-stage loop): for 128 queries,
the key blocks strictly below the diagonal without a mask, then the diagonal blocks with the causal mask;
online softmax in base 2, Q K^T and P V per 64-key block, the log-sum-exp stored for the backward pass."""
import triton
import triton.language as tl


@triton.jit
def _causal_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, offs_m, lo, hi, stride_tok, qk_scale,
                  BLOCK_N: tl.constexpr, MASKED: tl.constexpr):
    offs_n = tl.arange(0, BLOCK_N)
    for start_n in range(lo, hi, BLOCK_N):
        k = tl.load(k_ptrs + start_n * stride_tok)
        qk = tl.dot(q, k) * qk_scale
        if MASKED:
            qk = tl.where(offs_m[:, None] >= (start_n + offs_n)[None, :], qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptrs + start_n * stride_tok)
        acc = tl.dot(p.to(tl.float16), v, acc * alpha[:, None])
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def attention_causal_fwd_kernel(Q, K, V, Out, LSE, sm_scale, stride_z, stride_h, stride_tok, H, N_CTX,
                                HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1)
    off = (bh // H).to(tl.int64) * stride_z + (bh % H).to(tl.int64) * stride_h
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + off + offs_m[:, None] * stride_tok + offs_d[None, :])
    k_ptrs = K + off + offs_n[None, :] * stride_tok + offs_d[:, None]
    v_ptrs = V + off + offs_n[:, None] * stride_tok + offs_d[None, :]
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.full([BLOCK_M], 1.0, dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634
    acc, l_i, m_i = _causal_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, offs_m, 0, start_m, stride_tok, qk_scale,
                                  BLOCK_N, False)
    acc, l_i, m_i = _causal_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, offs_m, start_m, start_m + BLOCK_M,
                                  stride_tok, qk_scale, BLOCK_N, True)
    tl.store(LSE + bh.to(tl.int64) * N_CTX + offs_m, m_i + tl.math.log2(l_i))
    tl.store(Out + off + offs_m[:, None] * stride_tok + offs_d[None, :], (acc / l_i[:, None]).to(tl.float16))


BATCH, HEADS, SEQ, DIM = 2, 32, 4096, 128
SHAPE = [BATCH, HEADS, SEQ, DIM]
KERNEL = attention_causal_fwd_kernel
SIGNATURE = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp16", "LSE": "*fp32", "sm_scale": "fp32",
             "stride_z": "i32", "stride_h": "i32", "stride_tok": "i32", "H": "i32", "N_CTX": "i32"}
CONSTEXPRS = {"HEAD_DIM": DIM, "BLOCK_M": 128, "BLOCK_N": 64}
SCALARS = {"sm_scale": DIM ** -0.5, "stride_z": HEADS * SEQ * DIM, "stride_h": SEQ * DIM, "stride_tok": DIM,
           "H": HEADS, "N_CTX": SEQ}
TENSORS = {"Q": SHAPE, "K": SHAPE, "V": SHAPE, "Out": SHAPE, "LSE": [BATCH * HEADS, SEQ]}
GRID = (SEQ // 128, BATCH * HEADS)
OPTIONS = {"num_warps": 8, "num_stages": 3}
