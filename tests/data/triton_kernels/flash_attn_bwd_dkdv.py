"""Flash attention backward, dK and dV (after Triton tutorial 06's ``_attn_bwd_dkdv``, non-causal):
a program owns 128 keys of one head and walks over the queries in blocks of 32; per block it recomputes
P^T = exp2(K Q^T * scale - lse) from the forward's log-sum-exp, then dV += P^T dO and
dK += (P^T * (V dO^T - delta)) Q, with Q and dO read transposed through their strides."""
import triton
import triton.language as tl


@triton.jit
def flash_attn_bwd_dkdv_kernel(Q, K, V, DO, DK, DV, LSE, Delta, sm_scale,
                               stride_z, stride_h, stride_tok, stride_d, H, N_CTX,
                               HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_n = tl.program_id(0) * BLOCK_N
    bh = tl.program_id(1)
    off = (bh // H).to(tl.int64) * stride_z + (bh % H).to(tl.int64) * stride_h
    row = bh.to(tl.int64) * N_CTX  # LSE and Delta are [Z * H, N_CTX]
    offs_n = start_n + tl.arange(0, BLOCK_N)
    offs_m = tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    k = tl.load(K + off + offs_n[:, None] * stride_tok + offs_d[None, :] * stride_d)
    v = tl.load(V + off + offs_n[:, None] * stride_tok + offs_d[None, :] * stride_d)
    dk = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    dv = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.4426950408889634  # exp(x) = exp2(x * log2(e)); LSE is in log2 units
    qT_ptrs = Q + off + offs_m[None, :] * stride_tok + offs_d[:, None] * stride_d
    do_ptrs = DO + off + offs_m[:, None] * stride_tok + offs_d[None, :] * stride_d
    for start_m in range(0, N_CTX, BLOCK_M):
        qT = tl.load(qT_ptrs)
        lse = tl.load(LSE + row + start_m + offs_m)
        qkT = tl.dot(k, qT)
        pT = tl.math.exp2(qkT * qk_scale - lse[None, :])
        do = tl.load(do_ptrs)
        dv = tl.dot(pT.to(tl.float16), do, dv)
        delta = tl.load(Delta + row + start_m + offs_m)
        dpT = tl.dot(v, tl.trans(do)).to(tl.float32)
        dsT = pT * (dpT - delta[None, :])
        dk = tl.dot(dsT.to(tl.float16), tl.trans(qT), dk)
        qT_ptrs += BLOCK_M * stride_tok
        do_ptrs += BLOCK_M * stride_tok
    out = off + offs_n[:, None] * stride_tok + offs_d[None, :] * stride_d
    tl.store(DV + out, dv.to(tl.float16))
    tl.store(DK + out, (dk * sm_scale).to(tl.float16))


BATCH, HEADS, SEQ, DIM = 4, 16, 4096, 64
SHAPE = [BATCH, HEADS, SEQ, DIM]
KERNEL = flash_attn_bwd_dkdv_kernel
SIGNATURE = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "DO": "*fp16", "DK": "*fp16", "DV": "*fp16",
             "LSE": "*fp32", "Delta": "*fp32", "sm_scale": "fp32", "stride_z": "i32", "stride_h": "i32",
             "stride_tok": "i32", "stride_d": "i32", "H": "i32", "N_CTX": "i32"}
CONSTEXPRS = {"HEAD_DIM": DIM, "BLOCK_M": 32, "BLOCK_N": 128}
SCALARS = {"sm_scale": 0.125, "stride_z": HEADS * SEQ * DIM, "stride_h": SEQ * DIM, "stride_tok": DIM,
           "stride_d": 1, "H": HEADS, "N_CTX": SEQ}
TENSORS = {"Q": SHAPE, "K": SHAPE, "V": SHAPE, "DO": SHAPE, "DK": SHAPE, "DV": SHAPE,
           "LSE": [BATCH * HEADS, SEQ], "Delta": [BATCH * HEADS, SEQ]}
GRID = (SEQ // 128, BATCH * HEADS)
OPTIONS = {"num_warps": 4, "num_stages": 5}
