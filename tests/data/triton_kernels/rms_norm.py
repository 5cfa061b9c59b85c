"""RMS norm of 4 rows of 4096 fp16 features per program: ``y = x / sqrt(mean(x^2) + eps) * w``, the
mean reduced along axis 1 of a [4, 4096] tile."""
import triton
import triton.language as tl


@triton.jit
def rms_norm_kernel(x_ptr, w_ptr, y_ptr, eps, BLOCK_M: tl.constexpr, N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, N)
    offs = rows[:, None] * N + cols[None, :]
    x = tl.load(x_ptr + offs).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) / N + eps)
    y = x * rstd[:, None] * tl.load(w_ptr + cols).to(tl.float32)[None, :]
    tl.store(y_ptr + offs, y.to(tl.float16))


KERNEL = rms_norm_kernel
SIGNATURE = {"x_ptr": "*fp16", "w_ptr": "*fp16", "y_ptr": "*fp16", "eps": "fp32"}
CONSTEXPRS = {"BLOCK_M": 4, "N": 4096}
SCALARS = {"eps": 1e-6}
TENSORS = {"x_ptr": [8192, 4096], "w_ptr": [4096], "y_ptr": [8192, 4096]}
GRID = (2048,)
OPTIONS = {"num_warps": 8, "num_stages": 3}
