"""RMS norm forward over fp16 rows of hidden 1024 with one warp per program and several rows per program:
a [4, 1024] tile reduced along axis 1, the weight broadcast along rows, rstd kept in fp32."""
import triton
import triton.language as tl


@triton.jit
def rms_norm_rows_kernel(x_ptr, w_ptr, y_ptr, rstd_ptr, M, N, eps, ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    ok = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None].to(tl.int64) * N + cols[None, :]
    x = tl.load(x_ptr + offs, mask=ok, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) / N + eps)
    w = tl.load(w_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
    y = x * rstd[:, None] * w[None, :]
    tl.store(y_ptr + offs, y.to(tl.float16), mask=ok)
    tl.store(rstd_ptr + rows, rstd, mask=rows < M)


TOKENS, HIDDEN = 32768, 1024
KERNEL = rms_norm_rows_kernel
SIGNATURE = {"x_ptr": "*fp16", "w_ptr": "*fp16", "y_ptr": "*fp16", "rstd_ptr": "*fp32", "M": "i32", "N": "i32",
             "eps": "fp32"}
CONSTEXPRS = {"ROWS": 4, "BLOCK_N": 1024}
SCALARS = {"M": TOKENS, "N": HIDDEN, "eps": 1e-6}
TENSORS = {"x_ptr": [TOKENS, HIDDEN], "w_ptr": [HIDDEN], "y_ptr": [TOKENS, HIDDEN], "rstd_ptr": [TOKENS]}
GRID = (TOKENS // 4,)
OPTIONS = {"num_warps": 1}
