"""Rotary embedding with interleaved pairs (GPT-J style, as in flash-attn's Triton rotary kernel) on
[batch, seq, heads, 128] bf16, in place: element 2i pairs with 2i + 1; each lane loads its element and
its partner's (the swapped index), cos / sin ([seq, 64] fp32) are read with every index halved, and
x * cos -/+ partner * sin is chosen by the element's parity. A program owns 4 positions of one head."""
import triton
import triton.language as tl


@triton.jit
def rope_interleaved_kernel(x_ptr, cos_ptr, sin_ptr, seqlen, stride_b, stride_s, stride_h, stride_cos,
                            BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    head = tl.program_id(1)
    batch = tl.program_id(2)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rk = tl.arange(0, BLOCK_K)
    rk_swap = rk + ((rk + 1) % 2) * 2 - 1  # 0 1 2 3 -> 1 0 3 2
    rk_half = rk // 2
    base = x_ptr + batch.to(tl.int64) * stride_b + head * stride_h + rm[:, None] * stride_s
    mask = rm[:, None] < seqlen
    cos = tl.load(cos_ptr + rm[:, None] * stride_cos + rk_half[None, :], mask=mask, other=1.0)
    sin = tl.load(sin_ptr + rm[:, None] * stride_cos + rk_half[None, :], mask=mask, other=0.0)
    x0 = tl.load(base + rk[None, :], mask=mask, other=0.0).to(tl.float32)
    x1 = tl.load(base + rk_swap[None, :], mask=mask, other=0.0).to(tl.float32)
    out = tl.where(rk[None, :] % 2 == 0, x0 * cos - x1 * sin, x0 * cos + x1 * sin)
    tl.store(base + rk[None, :], out.to(tl.bfloat16), mask=mask)


BATCH, SEQ, HEADS, DIM = 8, 4096, 32, 128
KERNEL = rope_interleaved_kernel
SIGNATURE = {"x_ptr": "*bf16", "cos_ptr": "*fp32", "sin_ptr": "*fp32", "seqlen": "i32", "stride_b": "i32",
             "stride_s": "i32", "stride_h": "i32", "stride_cos": "i32"}
CONSTEXPRS = {"BLOCK_M": 4, "BLOCK_K": DIM}
SCALARS = {"seqlen": SEQ, "stride_b": SEQ * HEADS * DIM, "stride_s": HEADS * DIM, "stride_h": DIM,
           "stride_cos": DIM // 2}
TENSORS = {"x_ptr": [BATCH, SEQ, HEADS, DIM], "cos_ptr": [SEQ, DIM // 2], "sin_ptr": [SEQ, DIM // 2]}
GRID = (SEQ // 4, HEADS, BATCH)
OPTIONS = {"num_warps": 4}
