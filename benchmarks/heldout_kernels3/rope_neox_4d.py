"""Rotary embedding (NeoX halves) on a [tokens, heads, head_dim] bf16 block: the [BT, H, D] tile is reshaped
to [BT, H, 2, D/2], permuted so the halves are last, split, rotated with per-token cos/sin, joined and
permuted back before one store."""
import triton
import triton.language as tl


@triton.jit
def rope_neox_kernel(q_ptr, cos_ptr, sin_ptr, out_ptr, T, BT: tl.constexpr, H: tl.constexpr, D: tl.constexpr):
    t = tl.program_id(0) * BT + tl.arange(0, BT)
    h = tl.arange(0, H)
    d = tl.arange(0, D)
    offs = t[:, None, None].to(tl.int64) * (H * D) + h[None, :, None] * D + d[None, None, :]
    ok = t[:, None, None] < T
    q = tl.load(q_ptr + offs, mask=ok, other=0.0).to(tl.float32)
    q4 = tl.permute(tl.reshape(q, [BT, H, 2, D // 2]), [0, 1, 3, 2])
    x1, x2 = tl.split(q4)
    half = tl.arange(0, D // 2)
    cs_offs = t[:, None] * (D // 2) + half[None, :]
    c = tl.load(cos_ptr + cs_offs, mask=t[:, None] < T, other=1.0)[:, None, :]
    s = tl.load(sin_ptr + cs_offs, mask=t[:, None] < T, other=0.0)[:, None, :]
    y = tl.join(x1 * c - x2 * s, x2 * c + x1 * s)
    y = tl.reshape(tl.permute(y, [0, 1, 3, 2]), [BT, H, D])
    tl.store(out_ptr + offs, y.to(tl.bfloat16), mask=ok)


TOKENS, HEADS, HEAD_DIM = 16384, 32, 128
KERNEL = rope_neox_kernel
SIGNATURE = {"q_ptr": "*bf16", "cos_ptr": "*fp32", "sin_ptr": "*fp32", "out_ptr": "*bf16", "T": "i32"}
CONSTEXPRS = {"BT": 4, "H": HEADS, "D": HEAD_DIM}
SCALARS = {"T": TOKENS}
TENSORS = {"q_ptr": [TOKENS, HEADS, HEAD_DIM], "cos_ptr": [TOKENS, HEAD_DIM // 2], "sin_ptr": [TOKENS, HEAD_DIM // 2],
           "out_ptr": [TOKENS, HEADS, HEAD_DIM]}
GRID = (TOKENS // 4,)
OPTIONS = {"num_warps": 8}
