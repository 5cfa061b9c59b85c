"""Causal depthwise 1-D convolution with SiLU (Mamba's short convolution, width 4) over channels-last bf16
``x [B, L, C]``: ``y[b, t, c] = silu(bias[c] + sum_k w[c, k] * x[b, t - 3 + k, c])``, one [64 tokens,
128 channels] tile per program, the taps unrolled and the tokens before the start masked to zero."""
import triton
import triton.language as tl


@triton.jit
def causal_conv1d_silu_kernel(x_ptr, w_ptr, bias_ptr, y_ptr, L, C, stride_xb, stride_xl,
                              WIDTH: tl.constexpr, BLOCK_L: tl.constexpr, BLOCK_C: tl.constexpr):
    t = tl.program_id(0) * BLOCK_L + tl.arange(0, BLOCK_L)
    c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    b = tl.program_id(2)
    c_ok = c < C
    base = b.to(tl.int64) * stride_xb
    acc = tl.zeros([BLOCK_L, BLOCK_C], dtype=tl.float32)
    acc += tl.load(bias_ptr + c, mask=c_ok, other=0.0).to(tl.float32)[None, :]
    for k in tl.static_range(WIDTH):
        src = t - (WIDTH - 1) + k
        mask = ((src >= 0) & (src < L))[:, None] & c_ok[None, :]
        x = tl.load(x_ptr + base + src[:, None] * stride_xl + c[None, :], mask=mask, other=0.0)
        w = tl.load(w_ptr + c * WIDTH + k, mask=c_ok, other=0.0)
        acc += x.to(tl.float32) * w.to(tl.float32)[None, :]
    y = acc * tl.sigmoid(acc)
    mask = (t < L)[:, None] & c_ok[None, :]
    tl.store(y_ptr + base + t[:, None] * stride_xl + c[None, :], y.to(tl.bfloat16), mask=mask)


BATCH, SEQ, CHANNELS, WIDTH_ = 4, 4096, 5120, 4
KERNEL = causal_conv1d_silu_kernel
SIGNATURE = {"x_ptr": "*bf16", "w_ptr": "*bf16", "bias_ptr": "*bf16", "y_ptr": "*bf16", "L": "i32", "C": "i32",
             "stride_xb": "i32", "stride_xl": "i32"}
CONSTEXPRS = {"WIDTH": WIDTH_, "BLOCK_L": 64, "BLOCK_C": 128}
SCALARS = {"L": SEQ, "C": CHANNELS, "stride_xb": SEQ * CHANNELS, "stride_xl": CHANNELS}
TENSORS = {"x_ptr": [BATCH, SEQ, CHANNELS], "w_ptr": [CHANNELS, WIDTH_], "bias_ptr": [CHANNELS],
           "y_ptr": [BATCH, SEQ, CHANNELS]}
GRID = (SEQ // 64, CHANNELS // 128, BATCH)
OPTIONS = {"num_warps": 4, "num_stages": 2}
