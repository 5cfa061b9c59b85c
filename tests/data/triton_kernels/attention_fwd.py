"""Fused attention forward (Triton tutorial 06, flash attention, non-causal): for a block of 128
queries, an online-softmax loop over 64-key blocks with two ``tl.dot`` per step (Q K^T, then P V)."""
import triton
import triton.language as tl


@triton.jit
def attention_fwd_kernel(Q, K, V, Out, sm_scale, stride_h, stride_m, N_CTX,
                         HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    base = tl.program_id(1).to(tl.int64) * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * stride_m + offs_d[None, :])
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, N_CTX, BLOCK_N):
        k = tl.load(K + base + (start_n + offs_n)[None, :] * stride_m + offs_d[:, None])
        qk = tl.dot(q, k)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        p = tl.math.exp2(qk * qk_scale - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(V + base + (start_n + offs_n)[:, None] * stride_m + offs_d[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(Out + base + offs_m[:, None] * stride_m + offs_d[None, :], acc.to(tl.float16))


KERNEL = attention_fwd_kernel
SIGNATURE = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp16", "sm_scale": "fp32",
             "stride_h": "i32", "stride_m": "i32", "N_CTX": "i32"}
CONSTEXPRS = {"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64}
SCALARS = {"sm_scale": 0.125, "stride_h": 4096 * 64, "stride_m": 64, "N_CTX": 4096}
TENSORS = {"Q": [4, 32, 4096, 64], "K": [4, 32, 4096, 64], "V": [4, 32, 4096, 64], "Out": [4, 32, 4096, 64]}
GRID = (32, 128)
OPTIONS = {"num_warps": 4, "num_stages": 3}
