"""Distillation loss KL(teacher || student) per row straight from bf16 logits over a 128256 vocabulary: one
``tl.range(..., num_stages=2)`` pass over 4096-wide chunks keeps per-lane running maxima and rescaled sums of
both softmaxes and of p_teacher * (t - s), merged once at the end; 16 warps."""
import triton
import triton.language as tl


@triton.jit
def kl_div_logits_kernel(s_ptr, t_ptr, out_ptr, V, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    m_s = tl.full([BLOCK], float("-inf"), tl.float32)
    m_t = tl.full([BLOCK], float("-inf"), tl.float32)
    z_s = tl.zeros([BLOCK], tl.float32)
    z_t = tl.zeros([BLOCK], tl.float32)
    a = tl.zeros([BLOCK], tl.float32)
    for off in tl.range(0, V, BLOCK, num_stages=2):
        ok = off + cols < V
        s = tl.load(s_ptr + row * V + off + cols, mask=ok, other=0.0).to(tl.float32)
        t = tl.load(t_ptr + row * V + off + cols, mask=ok, other=0.0).to(tl.float32)
        ns = tl.where(ok, tl.maximum(m_s, s), m_s)
        nt = tl.where(ok, tl.maximum(m_t, t), m_t)
        es = tl.where(ok, tl.exp(s - ns), 0.0)
        et = tl.where(ok, tl.exp(t - nt), 0.0)
        rt = tl.exp(m_t - nt)
        z_s = z_s * tl.exp(m_s - ns) + es
        z_t = z_t * rt + et
        a = a * rt + et * (t - s)
        m_s = ns
        m_t = nt
    gm_s = tl.max(m_s, axis=0)
    gm_t = tl.max(m_t, axis=0)
    w_t = tl.exp(m_t - gm_t)
    zs = tl.sum(z_s * tl.exp(m_s - gm_s), axis=0)
    zt = tl.sum(z_t * w_t, axis=0)
    kl = tl.sum(a * w_t, axis=0) / zt - (gm_t + tl.log(zt)) + (gm_s + tl.log(zs))
    tl.store(out_ptr + row, kl)


R_, V_ = 512, 128256
KERNEL = kl_div_logits_kernel
SIGNATURE = {"s_ptr": "*bf16", "t_ptr": "*bf16", "out_ptr": "*fp32", "V": "i32"}
CONSTEXPRS = {"BLOCK": 4096}
SCALARS = {"V": V_}
TENSORS = {"s_ptr": [R_, V_], "t_ptr": [R_, V_], "out_ptr": [R_]}
GRID = (R_,)
OPTIONS = {"num_warps": 16}
