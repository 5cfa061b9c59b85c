"""Group normalization of channels-last activations ([N, H * W, C] fp16, 32 groups of 16 channels): a
program owns one (sample, group); a first pass sums x and x^2 over a [256 pixels, 16 channels] tile
per step (each row 32 contiguous bytes, rows C apart), a second pass normalizes, applies the
per-channel affine and stores."""
import triton
import triton.language as tl


@triton.jit
def group_norm_nhwc_kernel(x_ptr, weight_ptr, bias_ptr, y_ptr, HW, C, eps, stride_n,
                           CHANNELS_PER_GROUP: tl.constexpr, BLOCK_HW: tl.constexpr):
    n = tl.program_id(0)
    g = tl.program_id(1)
    rc = g * CHANNELS_PER_GROUP + tl.arange(0, CHANNELS_PER_GROUP)
    rp = tl.arange(0, BLOCK_HW)
    base = n.to(tl.int64) * stride_n
    acc = tl.zeros([BLOCK_HW, CHANNELS_PER_GROUP], dtype=tl.float32)
    acc2 = tl.zeros([BLOCK_HW, CHANNELS_PER_GROUP], dtype=tl.float32)
    for start in range(0, HW, BLOCK_HW):
        pix = start + rp
        x = tl.load(x_ptr + base + pix[:, None] * C + rc[None, :], mask=pix[:, None] < HW, other=0.0)
        x = x.to(tl.float32)
        acc += x
        acc2 += x * x
    count = HW * CHANNELS_PER_GROUP
    mean = tl.sum(tl.sum(acc, 1), 0) / count
    var = tl.sum(tl.sum(acc2, 1), 0) / count - mean * mean
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(weight_ptr + rc).to(tl.float32) * rstd
    b = tl.load(bias_ptr + rc).to(tl.float32) - mean * w
    for start in range(0, HW, BLOCK_HW):
        pix = start + rp
        offs = base + pix[:, None] * C + rc[None, :]
        x = tl.load(x_ptr + offs, mask=pix[:, None] < HW, other=0.0).to(tl.float32)
        tl.store(y_ptr + offs, (x * w[None, :] + b[None, :]).to(tl.float16), mask=pix[:, None] < HW)


BATCH, PIXELS, CHANNELS, GROUPS = 16, 64 * 64, 512, 32
KERNEL = group_norm_nhwc_kernel
SIGNATURE = {"x_ptr": "*fp16", "weight_ptr": "*fp16", "bias_ptr": "*fp16", "y_ptr": "*fp16", "HW": "i32",
             "C": "i32", "eps": "fp32", "stride_n": "i32"}
CONSTEXPRS = {"CHANNELS_PER_GROUP": CHANNELS // GROUPS, "BLOCK_HW": 256}
SCALARS = {"HW": PIXELS, "C": CHANNELS, "eps": 1e-5, "stride_n": PIXELS * CHANNELS}
TENSORS = {"x_ptr": [BATCH, PIXELS, CHANNELS], "weight_ptr": [CHANNELS], "bias_ptr": [CHANNELS],
           "y_ptr": [BATCH, PIXELS, CHANNELS]}
GRID = (BATCH, GROUPS)
OPTIONS = {"num_warps": 4}
