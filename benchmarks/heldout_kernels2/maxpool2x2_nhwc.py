"""2-D max pooling, 2x2 window, stride 2, over channels-last fp16 activations [N, H, W, C]: a program
owns 64 output pixels x 64 channels and takes the max of the four strided input taps."""
import triton
import triton.language as tl


@triton.jit
def maxpool2x2_nhwc_kernel(x_ptr, y_ptr, P, H, W, C, OH, OW,
                           BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr):
    p = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)
    c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = (p[:, None] < P) & (c[None, :] < C)
    ow = p % OW
    oh = (p // OW) % OH
    n = (p // (OW * OH)).to(tl.int64)
    top_left = ((n * H + 2 * oh) * W + 2 * ow) * C
    ptrs = x_ptr + top_left[:, None] + c[None, :]
    v00 = tl.load(ptrs, mask=mask, other=float("-inf"))
    v01 = tl.load(ptrs + C, mask=mask, other=float("-inf"))
    v10 = tl.load(ptrs + W * C, mask=mask, other=float("-inf"))
    v11 = tl.load(ptrs + W * C + C, mask=mask, other=float("-inf"))
    y = tl.maximum(tl.maximum(v00, v01), tl.maximum(v10, v11))
    tl.store(y_ptr + p[:, None].to(tl.int64) * C + c[None, :], y, mask=mask)


N_, H_, W_, C_ = 32, 224, 224, 64
OH_, OW_ = H_ // 2, W_ // 2
P_ = N_ * OH_ * OW_
KERNEL = maxpool2x2_nhwc_kernel
SIGNATURE = {"x_ptr": "*fp16", "y_ptr": "*fp16", "P": "i32", "H": "i32", "W": "i32", "C": "i32", "OH": "i32",
             "OW": "i32"}
CONSTEXPRS = {"BLOCK_P": 64, "BLOCK_C": 64}
SCALARS = {"P": P_, "H": H_, "W": W_, "C": C_, "OH": OH_, "OW": OW_}
TENSORS = {"x_ptr": [N_, H_, W_, C_], "y_ptr": [N_, OH_, OW_, C_]}
GRID = (P_ // 64, C_ // 64)
OPTIONS = {"num_warps": 4}
