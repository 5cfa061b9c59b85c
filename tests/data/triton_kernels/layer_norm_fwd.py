"""Layer norm forward (Triton tutorial 05): one row per program, three passes over the row in
``BLOCK_SIZE`` chunks (mean, variance, normalize), mean and 1/std stored for the backward pass."""
import triton
import triton.language as tl


@triton.jit
def layer_norm_fwd_kernel(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    X += row * stride
    Y += row * stride
    partial = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        partial += tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(partial, axis=0) / N
    partial = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        partial += x * x
    var = tl.sum(partial, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(Y + cols, y.to(tl.float16), mask=mask)


KERNEL = layer_norm_fwd_kernel
SIGNATURE = {"X": "*fp16", "Y": "*fp16", "W": "*fp16", "B": "*fp16", "Mean": "*fp32", "Rstd": "*fp32",
             "stride": "i32", "N": "i32", "eps": "fp32"}
CONSTEXPRS = {"BLOCK_SIZE": 4096}
SCALARS = {"stride": 4096, "N": 4096, "eps": 1e-5}
TENSORS = {"X": [4096, 4096], "Y": [4096, 4096], "W": [4096], "B": [4096], "Mean": [4096], "Rstd": [4096]}
GRID = (4096,)
OPTIONS = {"num_warps": 8, "num_stages": 3}
