"""Depthwise 3x3 convolution (stride 1, padding 1) of channels-last bf16 [N, H, W, C] (MobileNet-style):
a program owns 32 pixels of one output row and 64 channels; nine ``tl.static_range`` taps, each a
[32, 64] load masked at the image border times a per-channel weight, fp32 accumulation, bias, ReLU6."""
import triton
import triton.language as tl


@triton.jit
def dwconv2d_nhwc_kernel(x_ptr, w_ptr, b_ptr, y_ptr, H, W, C, BW: tl.constexpr, BC: tl.constexpr):
    pid = tl.program_id(0)
    w_blocks = tl.cdiv(W, BW)
    nh = pid // w_blocks
    n = nh // H
    h = nh % H
    ow = (pid % w_blocks) * BW + tl.arange(0, BW)
    oc = tl.program_id(1) * BC + tl.arange(0, BC)
    c_ok = oc < C
    acc = tl.zeros([BW, BC], dtype=tl.float32)
    for r in tl.static_range(3):
        ih = h - 1 + r
        for s in tl.static_range(3):
            iw = ow - 1 + s
            ok = (iw[:, None] >= 0) & (iw[:, None] < W) & (ih >= 0) & (ih < H) & c_ok[None, :]
            pix = (n * H + ih).to(tl.int64) * W + iw
            x = tl.load(x_ptr + pix[:, None] * C + oc[None, :], mask=ok, other=0.0)
            wt = tl.load(w_ptr + (r * 3 + s) * C + oc, mask=c_ok, other=0.0)
            acc += x.to(tl.float32) * wt.to(tl.float32)[None, :]
    acc += tl.load(b_ptr + oc, mask=c_ok, other=0.0)[None, :]
    acc = tl.minimum(tl.maximum(acc, 0.0), 6.0)
    out = (n * H + h).to(tl.int64) * W + ow
    tl.store(y_ptr + out[:, None] * C + oc[None, :], acc.to(tl.bfloat16), mask=(ow[:, None] < W) & c_ok[None, :])


N_, H_, W_, C_ = 16, 112, 112, 192
KERNEL = dwconv2d_nhwc_kernel
SIGNATURE = {"x_ptr": "*bf16", "w_ptr": "*bf16", "b_ptr": "*fp32", "y_ptr": "*bf16", "H": "i32", "W": "i32",
             "C": "i32"}
CONSTEXPRS = {"BW": 32, "BC": 64}
SCALARS = {"H": H_, "W": W_, "C": C_}
TENSORS = {"x_ptr": [N_, H_, W_, C_], "w_ptr": [3, 3, C_], "b_ptr": [C_], "y_ptr": [N_, H_, W_, C_]}
GRID = (N_ * H_ * ((W_ + 31) // 32), C_ // 64)
OPTIONS = {"num_warps": 2}
