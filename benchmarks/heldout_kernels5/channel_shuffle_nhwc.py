"""ShuffleNet channel shuffle of channels-last fp16 activations (8 groups of 32 channels): a [64 pixels, 256]
tile ``tl.reshape``-d to [64, 8, 32], ``tl.permute``-d to [64, 32, 8] and reshaped back, so input channel
g * 32 + i lands at i * 8 + g; one contiguous store."""
import triton
import triton.language as tl


@triton.jit
def channel_shuffle_kernel(x_ptr, y_ptr, P, BP: tl.constexpr, G: tl.constexpr, CPG: tl.constexpr):
    rp = tl.program_id(0) * BP + tl.arange(0, BP)
    rc = tl.arange(0, G * CPG)
    ok = rp[:, None] < P
    x = tl.load(x_ptr + rp[:, None] * (G * CPG) + rc[None, :], mask=ok, other=0.0)
    y = tl.reshape(tl.permute(tl.reshape(x, [BP, G, CPG]), (0, 2, 1)), [BP, G * CPG])
    tl.store(y_ptr + rp[:, None] * (G * CPG) + rc[None, :], y, mask=ok)


P_ = 64 * 56 * 56
KERNEL = channel_shuffle_kernel
SIGNATURE = {"x_ptr": "*fp16", "y_ptr": "*fp16", "P": "i32"}
CONSTEXPRS = {"BP": 64, "G": 8, "CPG": 32}
SCALARS = {"P": P_}
TENSORS = {"x_ptr": [P_, 256], "y_ptr": [P_, 256]}
GRID = ((P_ + 63) // 64,)
OPTIONS = {"num_warps": 4}
