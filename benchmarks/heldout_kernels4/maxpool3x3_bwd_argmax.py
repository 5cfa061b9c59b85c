"""Backward of a 3x3 / stride-2 / padding-1 max pooling (ResNet stem) over NCHW fp16, with the forward's
argmax kept as an int8 window code (kh * 3 + kw): each input pixel of an [8, 128] tile (W = 112 masked)
gathers from the up to 2 x 2 overlapping windows that contain it the gradient of those whose code names
it, summed in fp32 in a fixed order (no atomics)."""
import triton
import triton.language as tl


@triton.jit
def maxpool_bwd_kernel(gout_ptr, code_ptr, gin_ptr, H, W, OH, OW, BH: tl.constexpr, BW: tl.constexpr):
    plane = tl.program_id(1).to(tl.int64)
    ih = tl.program_id(0) * BH + tl.arange(0, BH)
    iw = tl.arange(0, BW)
    acc = tl.zeros([BH, BW], dtype=tl.float32)
    for dh in tl.static_range(2):
        oh = (ih + 1) // 2 - dh
        kh = ih + 1 - 2 * oh
        h_ok = (oh >= 0) & (oh < OH) & (kh <= 2) & (ih < H)
        for dw in tl.static_range(2):
            ow = (iw + 1) // 2 - dw
            kw = iw + 1 - 2 * ow
            w_ok = (ow >= 0) & (ow < OW) & (kw <= 2) & (iw < W)
            ok = h_ok[:, None] & w_ok[None, :]
            o = plane * OH * OW + oh[:, None] * OW + ow[None, :]
            code = tl.load(code_ptr + o, mask=ok, other=-1).to(tl.int32)
            g = tl.load(gout_ptr + o, mask=ok, other=0.0).to(tl.float32)
            acc += tl.where(code == kh[:, None] * 3 + kw[None, :], g, 0.0)
    out_ok = (ih[:, None] < H) & (iw[None, :] < W)
    tl.store(gin_ptr + plane * H * W + ih[:, None] * W + iw[None, :], acc.to(tl.float16), mask=out_ok)


N_, C_, H_, W_ = 64, 64, 112, 112
OH_, OW_ = 56, 56
KERNEL = maxpool_bwd_kernel
SIGNATURE = {"gout_ptr": "*fp16", "code_ptr": "*i8", "gin_ptr": "*fp16", "H": "i32", "W": "i32", "OH": "i32",
             "OW": "i32"}
CONSTEXPRS = {"BH": 8, "BW": 128}
SCALARS = {"H": H_, "W": W_, "OH": OH_, "OW": OW_}
TENSORS = {"gout_ptr": [N_, C_, OH_, OW_], "code_ptr": ([N_, C_, OH_, OW_], ("randint", 0, 9)),
           "gin_ptr": [N_, C_, H_, W_]}
GRID = (H_ // 8, N_ * C_)
OPTIONS = {"num_warps": 4}
