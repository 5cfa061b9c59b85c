"""2-D convolution as an implicit GEMM (NHWC activations, KRSC filters, fp16, 3x3, stride 1, padding 1):
GEMM rows are output pixels (n, p, q), columns output channels, and the reduction runs over (r, s, c);
the A tile is gathered from the input with the padding masked, 64 channels at a time."""
import triton
import triton.language as tl


@triton.jit
def conv2d_nhwc_kernel(x_ptr, w_ptr, y_ptr, NB, H, W, C, K, P, Q, stride_xn, stride_xh, stride_xw,
                       stride_wk, R: tl.constexpr, S: tl.constexpr, PAD: tl.constexpr,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_C: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rc = tl.arange(0, BLOCK_C)
    n = rm // (P * Q)
    p = rm % (P * Q) // Q
    q = rm % Q
    valid_m = rm < NB * P * Q
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for rs in range(0, R * S):
        r = rs // S
        s = rs % S
        h = p + r - PAD
        w = q + s - PAD
        inside = valid_m & (h >= 0) & (h < H) & (w >= 0) & (w < W)
        x_base = x_ptr + n * stride_xn + h * stride_xh + w * stride_xw
        w_base = w_ptr + rn * stride_wk + rs * C
        for c in range(0, C, BLOCK_C):
            a = tl.load(x_base[:, None] + (c + rc)[None, :], mask=inside[:, None], other=0.0)
            b = tl.load(w_base[None, :] + (c + rc)[:, None])
            acc = tl.dot(a, b, acc)
    y_ptrs = y_ptr + rm[:, None] * K + rn[None, :]
    tl.store(y_ptrs, acc.to(tl.float16), mask=valid_m[:, None])


BATCH, HW, CIN, COUT = 32, 28, 128, 128
KERNEL = conv2d_nhwc_kernel
SIGNATURE = {"x_ptr": "*fp16", "w_ptr": "*fp16", "y_ptr": "*fp16", "NB": "i32", "H": "i32", "W": "i32", "C": "i32",
             "K": "i32", "P": "i32", "Q": "i32", "stride_xn": "i32", "stride_xh": "i32", "stride_xw": "i32",
             "stride_wk": "i32"}
CONSTEXPRS = {"R": 3, "S": 3, "PAD": 1, "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_C": 64}
SCALARS = {"NB": BATCH, "H": HW, "W": HW, "C": CIN, "K": COUT, "P": HW, "Q": HW, "stride_xn": HW * HW * CIN,
           "stride_xh": HW * CIN, "stride_xw": CIN, "stride_wk": 9 * CIN}
TENSORS = {"x_ptr": [BATCH, HW, HW, CIN], "w_ptr": [COUT, 3, 3, CIN], "y_ptr": [BATCH, HW, HW, COUT]}
GRID = (BATCH * HW * HW // 128, COUT // 128)
OPTIONS = {"num_warps": 8, "num_stages": 3}
