"""Pixel shuffle (depth to space, r = 2) of fp16 NCHW: the four sub-channel planes of one output channel,
a [2, 2, BH, BW] tile, permuted to [BH, 2, BW, 2] and reshaped to one [2 BH, 2 BW] output tile."""
import triton
import triton.language as tl


@triton.jit
def pixel_shuffle_kernel(x_ptr, y_ptr, H, W, BH: tl.constexpr, BW: tl.constexpr):
    bc = tl.program_id(0)
    h0 = tl.program_id(1) * BH
    w0 = tl.program_id(2) * BW
    r = tl.arange(0, 2)
    hh = h0 + tl.arange(0, BH)
    ww = w0 + tl.arange(0, BW)
    src = (bc.to(tl.int64) * 4 + r[:, None, None, None] * 2 + r[None, :, None, None]) * H * W \
        + hh[None, None, :, None] * W + ww[None, None, None, :]
    x = tl.load(x_ptr + src)
    y = tl.reshape(tl.permute(x, [2, 0, 3, 1]), [2 * BH, 2 * BW])
    oh = 2 * h0 + tl.arange(0, 2 * BH)
    ow = 2 * w0 + tl.arange(0, 2 * BW)
    tl.store(y_ptr + bc.to(tl.int64) * (4 * H * W) + oh[:, None] * (2 * W) + ow[None, :], y)


B, C, H_, W_ = 8, 64, 128, 128
KERNEL = pixel_shuffle_kernel
SIGNATURE = {"x_ptr": "*fp16", "y_ptr": "*fp16", "H": "i32", "W": "i32"}
CONSTEXPRS = {"BH": 16, "BW": 32}
SCALARS = {"H": H_, "W": W_}
TENSORS = {"x_ptr": [B, 4 * C, H_, W_], "y_ptr": [B, C, 2 * H_, 2 * W_]}
GRID = (B * C, H_ // 16, W_ // 32)
OPTIONS = {"num_warps": 4}
