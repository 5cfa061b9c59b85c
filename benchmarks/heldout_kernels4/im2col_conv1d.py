"""im2col for a strided 1-D convolution (kernel 3, stride 2, padding 1) of fp16 [B, C, L]: rows of the
column matrix are output positions, columns (channel, tap); a [64 positions, 128 columns] tile is
gathered from the input (the tap index and channel split with // and %, padding masked) and stored
row-major [B * L_out, C * 3]."""
import triton
import triton.language as tl


@triton.jit
def im2col_conv1d_kernel(x_ptr, col_ptr, C, L, L_OUT, KS: tl.constexpr, STRIDE: tl.constexpr, PAD: tl.constexpr,
                         BL: tl.constexpr, BCK: tl.constexpr):
    b = tl.program_id(2).to(tl.int64)
    lo = tl.program_id(0) * BL + tl.arange(0, BL)
    ck = tl.program_id(1) * BCK + tl.arange(0, BCK)
    c = ck // KS
    k = ck % KS
    li = lo[:, None] * STRIDE - PAD + k[None, :]
    ok_in = (li >= 0) & (li < L) & (c[None, :] < C) & (lo[:, None] < L_OUT)
    v = tl.load(x_ptr + b * C * L + c[None, :] * L + li, mask=ok_in, other=0.0)
    ok_out = (lo[:, None] < L_OUT) & (ck[None, :] < C * KS)
    tl.store(col_ptr + (b * L_OUT + lo[:, None]) * (C * KS) + ck[None, :], v, mask=ok_out)


B_, C_, L_ = 16, 256, 8192
L_OUT_ = (L_ + 2 - 3) // 2 + 1
KERNEL = im2col_conv1d_kernel
SIGNATURE = {"x_ptr": "*fp16", "col_ptr": "*fp16", "C": "i32", "L": "i32", "L_OUT": "i32"}
CONSTEXPRS = {"KS": 3, "STRIDE": 2, "PAD": 1, "BL": 64, "BCK": 128}
SCALARS = {"C": C_, "L": L_, "L_OUT": L_OUT_}
TENSORS = {"x_ptr": [B_, C_, L_], "col_ptr": [B_ * L_OUT_, C_ * 3]}
GRID = ((L_OUT_ + 63) // 64, (C_ * 3) // 128, B_)
OPTIONS = {"num_warps": 4}
