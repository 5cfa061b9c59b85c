"""CLIP contrastive logits: exp(logit_scale) * cos(image_i, text_j) for bf16 embeddings [8192, 512] x
[8192, 512]: a 128x128 tile accumulates ``tl.dot(a, tl.trans(b))`` over 64-wide K steps together with the
squared row norms of both tiles (reductions along axis 1), the text norms broadcast along axis 0 of the
accumulator; fp16 out."""
import triton
import triton.language as tl


@triton.jit
def clip_logits_kernel(img_ptr, txt_ptr, scale_ptr, out_ptr, M, N, D,
                       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    na = tl.zeros([BM], dtype=tl.float32)
    nb = tl.zeros([BN], dtype=tl.float32)
    for k0 in range(0, D, BK):
        a = tl.load(img_ptr + rm[:, None] * D + k0 + rk[None, :])
        b = tl.load(txt_ptr + rn[:, None] * D + k0 + rk[None, :])
        acc = tl.dot(a, tl.trans(b), acc)
        af = a.to(tl.float32)
        bf = b.to(tl.float32)
        na += tl.sum(af * af, axis=1)
        nb += tl.sum(bf * bf, axis=1)
    s = tl.exp(tl.load(scale_ptr))
    out = acc * (s * tl.rsqrt(na + 1e-12))[:, None] * tl.rsqrt(nb + 1e-12)[None, :]
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], out.to(tl.float16))


M_, N_, D_ = 8192, 8192, 512
KERNEL = clip_logits_kernel
SIGNATURE = {"img_ptr": "*bf16", "txt_ptr": "*bf16", "scale_ptr": "*fp32", "out_ptr": "*fp16", "M": "i32",
             "N": "i32", "D": "i32"}
CONSTEXPRS = {"BM": 128, "BN": 128, "BK": 64}
SCALARS = {"M": M_, "N": N_, "D": D_}
TENSORS = {"img_ptr": [M_, D_], "txt_ptr": [N_, D_], "scale_ptr": [1], "out_ptr": [M_, N_]}
GRID = (M_ // 128, N_ // 128)
OPTIONS = {"num_warps": 8, "num_stages": 3}
