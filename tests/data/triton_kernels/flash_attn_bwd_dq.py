"""Flash attention backward, dQ (after Triton tutorial 06's ``_attn_bwd_dq``, causal): a program owns
128 queries of one head and walks over the keys in blocks of 32 -- unmasked below the diagonal, then
the diagonal block with the causal mask; per block P = exp2(Q K^T * scale - lse),
dS = P * (dO V^T - delta), dQ += dS K, with K and V read transposed through their strides."""
import triton
import triton.language as tl


@triton.jit
def _dq_block(dq, q, do, lse, delta, K, V, off, start_n, offs_m, stride_tok, stride_d, qk_scale,
              HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr, MASKED: tl.constexpr):
    offs_n = start_n + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    kT = tl.load(K + off + offs_n[None, :] * stride_tok + offs_d[:, None] * stride_d)
    vT = tl.load(V + off + offs_n[None, :] * stride_tok + offs_d[:, None] * stride_d)
    qk = tl.dot(q, kT)
    p = tl.math.exp2(qk * qk_scale - lse[:, None])
    if MASKED:
        p = tl.where(offs_m[:, None] >= offs_n[None, :], p, 0.0)
    dp = tl.dot(do, vT).to(tl.float32)
    ds = p * (dp - delta[:, None])
    return tl.dot(ds.to(tl.float16), tl.trans(kT), dq)


@triton.jit
def flash_attn_bwd_dq_kernel(Q, K, V, DO, DQ, LSE, Delta, sm_scale,
                             stride_z, stride_h, stride_tok, stride_d, H, N_CTX,
                             HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1)
    off = (bh // H).to(tl.int64) * stride_z + (bh % H).to(tl.int64) * stride_h
    row = bh.to(tl.int64) * N_CTX
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    ptrs = off + offs_m[:, None] * stride_tok + offs_d[None, :] * stride_d
    q = tl.load(Q + ptrs)
    do = tl.load(DO + ptrs)
    lse = tl.load(LSE + row + offs_m)
    delta = tl.load(Delta + row + offs_m)
    qk_scale = sm_scale * 1.4426950408889634
    dq = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for start_n in range(0, start_m, BLOCK_N):  # keys below the diagonal block: no mask
        dq = _dq_block(dq, q, do, lse, delta, K, V, off, start_n, offs_m, stride_tok, stride_d, qk_scale,
                       HEAD_DIM, BLOCK_N, False)
    for start_n in range(start_m, start_m + BLOCK_M, BLOCK_N):  # the diagonal block: causal mask
        dq = _dq_block(dq, q, do, lse, delta, K, V, off, start_n, offs_m, stride_tok, stride_d, qk_scale,
                       HEAD_DIM, BLOCK_N, True)
    tl.store(DQ + ptrs, (dq * sm_scale).to(tl.float16))


BATCH, HEADS, SEQ, DIM = 4, 16, 4096, 64
SHAPE = [BATCH, HEADS, SEQ, DIM]
KERNEL = flash_attn_bwd_dq_kernel
SIGNATURE = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "DO": "*fp16", "DQ": "*fp16", "LSE": "*fp32",
             "Delta": "*fp32", "sm_scale": "fp32", "stride_z": "i32", "stride_h": "i32", "stride_tok": "i32",
             "stride_d": "i32", "H": "i32", "N_CTX": "i32"}
CONSTEXPRS = {"HEAD_DIM": DIM, "BLOCK_M": 128, "BLOCK_N": 32}
SCALARS = {"sm_scale": 0.125, "stride_z": HEADS * SEQ * DIM, "stride_h": SEQ * DIM, "stride_tok": DIM,
           "stride_d": 1, "H": HEADS, "N_CTX": SEQ}
TENSORS = {"Q": SHAPE, "K": SHAPE, "V": SHAPE, "DO": SHAPE, "DQ": SHAPE,
           "LSE": [BATCH * HEADS, SEQ], "Delta": [BATCH * HEADS, SEQ]}
GRID = (SEQ // 128, BATCH * HEADS)
OPTIONS = {"num_warps": 4, "num_stages": 5}
