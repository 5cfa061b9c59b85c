"""Two-pass layer norm over long rows (fp16 [rows, 32768], one row per program, 2048 columns per step):
the first pass accumulates sum and sum of squares in fp32 vectors and reduces them once, the second
reloads, normalizes, applies weight and bias and stores; the mean and 1/std go out for the backward."""
import triton
import triton.language as tl


@triton.jit
def layer_norm_long_rows_kernel(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, N, stride_row, eps,
                                BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_row
    y_row = y_ptr + row * stride_row
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    acc2 = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        x = tl.load(x_row + start + cols, mask=start + cols < N, other=0.0).to(tl.float32)
        acc += x
        acc2 += x * x
    mean = tl.sum(acc, 0) / N
    var = tl.sum(acc2, 0) / N - mean * mean
    rstd = 1.0 / tl.sqrt(var + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    for start in range(0, N, BLOCK):
        offs = start + cols
        mask = offs < N
        x = tl.load(x_row + offs, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_row + offs, ((x - mean) * rstd * w + b).to(tl.float16), mask=mask)


ROWS, COLS = 4096, 32768
KERNEL = layer_norm_long_rows_kernel
SIGNATURE = {"x_ptr": "*fp16", "w_ptr": "*fp16", "b_ptr": "*fp16", "y_ptr": "*fp16", "mean_ptr": "*fp32",
             "rstd_ptr": "*fp32", "N": "i32", "stride_row": "i32", "eps": "fp32"}
CONSTEXPRS = {"BLOCK": 2048}
SCALARS = {"N": COLS, "stride_row": COLS, "eps": 1e-5}
TENSORS = {"x_ptr": [ROWS, COLS], "w_ptr": [COLS], "b_ptr": [COLS], "y_ptr": [ROWS, COLS], "mean_ptr": [ROWS],
           "rstd_ptr": [ROWS]}
GRID = (ROWS,)
OPTIONS = {"num_warps": 8}
