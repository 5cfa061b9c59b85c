"""fp32 matrix multiplication on tensor cores (``input_precision="tf32"``), 64x128x32 tiles, with a
bias-add and ReLU epilogue (a linear layer)."""
import triton
import triton.language as tl


@triton.jit
def linear_tf32_kernel(x_ptr, w_ptr, bias_ptr, y_ptr, M, N, K,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        x = tl.load(x_ptr + rm[:, None] * K + (k0 + rk)[None, :])
        w = tl.load(w_ptr + (k0 + rk)[:, None] * N + rn[None, :])
        acc = tl.dot(x, w, acc, input_precision="tf32")
    y = tl.maximum(acc + tl.load(bias_ptr + rn)[None, :], 0.0)
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], y)


KERNEL = linear_tf32_kernel
SIGNATURE = {"x_ptr": "*fp32", "w_ptr": "*fp32", "bias_ptr": "*fp32", "y_ptr": "*fp32", "M": "i32", "N": "i32",
             "K": "i32"}
CONSTEXPRS = {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32}
SCALARS = {"M": 4096, "N": 4096, "K": 2048}
TENSORS = {"x_ptr": [4096, 2048], "w_ptr": [2048, 4096], "bias_ptr": [4096], "y_ptr": [4096, 4096]}
GRID = (64, 32)
OPTIONS = {"num_warps": 4, "num_stages": 3}
