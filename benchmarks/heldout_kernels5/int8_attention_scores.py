"""SageAttention-style int8 attention scores: per-token-quantized int8 Q and K [B * H, S, 128], one int8
``tl.dot`` of a [128, 128] Q tile with the ``tl.trans``-ed K tile (int32 accumulation), dequantized with the
row scale of Q and the column scale of K, causal mask, fp16 scores out."""
import triton
import triton.language as tl


@triton.jit
def int8_attention_scores_kernel(q_ptr, k_ptr, qs_ptr, ks_ptr, out_ptr, S, sm_scale,
                                 BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    bh = tl.program_id(2).to(tl.int64)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + bh * S * D + rm[:, None] * D + rd[None, :])
    k = tl.load(k_ptr + bh * S * D + rn[:, None] * D + rd[None, :])
    s = tl.dot(q, tl.trans(k), out_dtype=tl.int32)
    qs = tl.load(qs_ptr + bh * S + rm)
    ks = tl.load(ks_ptr + bh * S + rn)
    p = s.to(tl.float32) * (qs * sm_scale)[:, None] * ks[None, :]
    p = tl.where(rn[None, :] <= rm[:, None], p, float("-inf"))
    tl.store(out_ptr + bh * S * S + rm[:, None] * S + rn[None, :], p.to(tl.float16))


BH_, S_, D_ = 64, 1024, 128
KERNEL = int8_attention_scores_kernel
SIGNATURE = {"q_ptr": "*i8", "k_ptr": "*i8", "qs_ptr": "*fp32", "ks_ptr": "*fp32", "out_ptr": "*fp16", "S": "i32",
             "sm_scale": "fp32"}
CONSTEXPRS = {"BM": 128, "BN": 128, "D": D_}
SCALARS = {"S": S_, "sm_scale": 0.088388}
TENSORS = {"q_ptr": ([BH_, S_, D_], ("randint", -127, 128)), "k_ptr": ([BH_, S_, D_], ("randint", -127, 128)),
           "qs_ptr": [BH_, S_], "ks_ptr": [BH_, S_], "out_ptr": [BH_, S_, S_]}
GRID = (S_ // 128, S_ // 128, BH_)
OPTIONS = {"num_warps": 8}
