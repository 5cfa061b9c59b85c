"""RMS norm backward (y = x * rstd * w, hidden 3584, bf16): a persistent program walks rows p, p + G, ...
computing dx = rstd * (dy * w - x * rstd^2 * mean(dy * w * x)) and accumulating dw = sum dy * x * rstd
over its rows, added once into fp32 dw with ``tl.atomic_add``."""
import triton
import triton.language as tl


@triton.jit
def rms_norm_bwd_kernel(x_ptr, dy_ptr, w_ptr, rstd_ptr, dx_ptr, dw_ptr, M, N, stride_row,
                        BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    col_ok = cols < N
    w = tl.load(w_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK_N], dtype=tl.float32)
    for row in range(pid, M, tl.num_programs(0)):
        offs = row.to(tl.int64) * stride_row + cols
        x = tl.load(x_ptr + offs, mask=col_ok, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + offs, mask=col_ok, other=0.0).to(tl.float32)
        rstd = tl.load(rstd_ptr + row)
        g = dy * w
        c = tl.sum(g * x, axis=0) / N
        dx = rstd * (g - x * (rstd * rstd * c))
        tl.store(dx_ptr + offs, dx.to(tl.bfloat16), mask=col_ok)
        dw += dy * x * rstd
    tl.atomic_add(dw_ptr + cols, dw, mask=col_ok)


TOKENS, HIDDEN = 16384, 3584
KERNEL = rms_norm_bwd_kernel
SIGNATURE = {"x_ptr": "*bf16", "dy_ptr": "*bf16", "w_ptr": "*bf16", "rstd_ptr": "*fp32", "dx_ptr": "*bf16",
             "dw_ptr": "*fp32", "M": "i32", "N": "i32", "stride_row": "i32"}
CONSTEXPRS = {"BLOCK_N": 4096}
SCALARS = {"M": TOKENS, "N": HIDDEN, "stride_row": HIDDEN}
TENSORS = {"x_ptr": [TOKENS, HIDDEN], "dy_ptr": [TOKENS, HIDDEN], "w_ptr": [HIDDEN], "rstd_ptr": [TOKENS],
           "dx_ptr": [TOKENS, HIDDEN], "dw_ptr": ([HIDDEN], "zeros")}
GRID = (2 * 132,)
OPTIONS = {"num_warps": 8}
