"""Decode attention (one new token per sequence) over a sliding window of the last 1024 positions of an fp8
(e4m3) KV cache with per-tensor scales, grouped-query: the 8 query heads sharing a KV head form the rows of
a [16, 128] bf16 query tile (rows 8-15 masked), K and V [64, 128] blocks are dequantized to bf16 and fed to
``tl.dot`` (q k^T, then p v) with an online softmax."""
import triton
import triton.language as tl


@triton.jit
def swa_decode_fp8_kernel(q_ptr, k_ptr, v_ptr, len_ptr, o_ptr, k_scale, v_scale, sm_scale, S_MAX,
                          HKV: tl.constexpr, GROUP: tl.constexpr, BH: tl.constexpr, D: tl.constexpr,
                          BS: tl.constexpr, WINDOW: tl.constexpr):
    b = tl.program_id(1)
    kvh = tl.program_id(0)
    seq_len = tl.load(len_ptr + b)
    start = tl.maximum(seq_len - WINDOW, 0)
    rh = tl.arange(0, BH)
    rd = tl.arange(0, D)
    h_ok = rh < GROUP
    q_offs = ((b * HKV + kvh) * GROUP + rh)[:, None] * D + rd[None, :]
    q = tl.load(q_ptr + q_offs, mask=h_ok[:, None], other=0.0)
    kv_base = (b * HKV + kvh).to(tl.int64) * S_MAX * D
    m_i = tl.full([BH], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BH], dtype=tl.float32)
    acc = tl.zeros([BH, D], dtype=tl.float32)
    qk_scale = sm_scale * k_scale * 1.4426950408889634
    for s0 in range(start, seq_len, BS):
        rs = s0 + tl.arange(0, BS)
        s_ok = rs < seq_len
        kv_offs = kv_base + rs[:, None] * D + rd[None, :]
        k = tl.load(k_ptr + kv_offs, mask=s_ok[:, None], other=0.0).to(tl.bfloat16)
        s = tl.dot(q, tl.trans(k)) * qk_scale
        s = tl.where(s_ok[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + kv_offs, mask=s_ok[:, None], other=0.0).to(tl.bfloat16)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.bfloat16), v)
        m_i = m_new
    out = acc * v_scale / l_i[:, None]
    tl.store(o_ptr + q_offs, out.to(tl.bfloat16), mask=h_ok[:, None])


B_, HKV_, GROUP_, D_, S_MAX_ = 32, 8, 8, 128, 4096
KERNEL = swa_decode_fp8_kernel
SIGNATURE = {"q_ptr": "*bf16", "k_ptr": "*fp8e4nv", "v_ptr": "*fp8e4nv", "len_ptr": "*i32", "o_ptr": "*bf16",
             "k_scale": "fp32", "v_scale": "fp32", "sm_scale": "fp32", "S_MAX": "i32"}
CONSTEXPRS = {"HKV": HKV_, "GROUP": GROUP_, "BH": 16, "D": D_, "BS": 64, "WINDOW": 1024}
SCALARS = {"k_scale": 0.05, "v_scale": 0.05, "sm_scale": D_ ** -0.5, "S_MAX": S_MAX_}
TENSORS = {"q_ptr": [B_, HKV_ * GROUP_, D_], "k_ptr": [B_, HKV_, S_MAX_, D_], "v_ptr": [B_, HKV_, S_MAX_, D_],
           "len_ptr": ([B_], ("randint", 1, S_MAX_ + 1)), "o_ptr": [B_, HKV_ * GROUP_, D_]}
GRID = (HKV_, B_)
OPTIONS = {"num_warps": 4, "num_stages": 2}
