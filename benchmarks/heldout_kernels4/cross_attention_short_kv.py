"""Cross-attention of long queries over a short context (image tokens attending to 77 text tokens, as in
a diffusion UNet): the whole K/V of one (batch, head) fits one [128, 64] fp16 block (keys 77..127
masked), so a program does one ``tl.dot`` q k^T on a [128, 64] query block, a plain softmax along axis 1
and one ``tl.dot`` p v, no loop; 8 warps."""
import triton
import triton.language as tl


@triton.jit
def cross_attn_kernel(q_ptr, k_ptr, v_ptr, o_ptr, LQ, LKV, sm_scale, D: tl.constexpr,
                      BM: tl.constexpr, BKV: tl.constexpr):
    bh = tl.program_id(1).to(tl.int64)
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rj = tl.arange(0, BKV)
    rd = tl.arange(0, D)
    m_ok = rm[:, None] < LQ
    q = tl.load(q_ptr + bh * LQ * D + rm[:, None] * D + rd[None, :], mask=m_ok, other=0.0)
    kv_ok = rj[:, None] < LKV
    k = tl.load(k_ptr + bh * LKV * D + rj[:, None] * D + rd[None, :], mask=kv_ok, other=0.0)
    v = tl.load(v_ptr + bh * LKV * D + rj[:, None] * D + rd[None, :], mask=kv_ok, other=0.0)
    s = tl.dot(q, tl.trans(k)) * (sm_scale * 1.4426950408889634)
    s = tl.where(rj[None, :] < LKV, s, float("-inf"))
    p = tl.exp2(s - tl.max(s, axis=1)[:, None])
    p = p / tl.sum(p, axis=1)[:, None]
    o = tl.dot(p.to(tl.float16), v)
    tl.store(o_ptr + bh * LQ * D + rm[:, None] * D + rd[None, :], o.to(tl.float16), mask=m_ok)


B_, H_, LQ_, LKV_, D_ = 16, 10, 4096, 77, 64
KERNEL = cross_attn_kernel
SIGNATURE = {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16", "LQ": "i32", "LKV": "i32",
             "sm_scale": "fp32"}
CONSTEXPRS = {"D": D_, "BM": 128, "BKV": 128}
SCALARS = {"LQ": LQ_, "LKV": LKV_, "sm_scale": D_ ** -0.5}
TENSORS = {"q_ptr": [B_, H_, LQ_, D_], "k_ptr": [B_, H_, LKV_, D_], "v_ptr": [B_, H_, LKV_, D_],
           "o_ptr": [B_, H_, LQ_, D_]}
GRID = (LQ_ // 128, B_ * H_)
OPTIONS = {"num_warps": 8}
