"""Rotary position embedding on interleaved pairs (GPT-J style): each row of 128 features is split into
(even, odd) with ``tl.reshape`` + ``tl.split``, rotated, and re-interleaved with ``tl.join``."""
import triton
import triton.language as tl


@triton.jit
def rope_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, n_rows, n_heads, BLOCK_R: tl.constexpr, D: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    pos = rows // n_heads
    x = tl.load(x_ptr + rows[:, None] * D + tl.arange(0, D)[None, :]).to(tl.float32)
    x0, x1 = tl.split(tl.reshape(x, [BLOCK_R, D // 2, 2]))
    half = tl.arange(0, D // 2)
    c = tl.load(cos_ptr + pos[:, None] * (D // 2) + half[None, :])
    s = tl.load(sin_ptr + pos[:, None] * (D // 2) + half[None, :])
    y = tl.reshape(tl.join(x0 * c - x1 * s, x0 * s + x1 * c), [BLOCK_R, D])
    tl.store(out_ptr + rows[:, None] * D + tl.arange(0, D)[None, :], y.to(tl.float16))


KERNEL = rope_kernel
SIGNATURE = {"x_ptr": "*fp16", "cos_ptr": "*fp32", "sin_ptr": "*fp32", "out_ptr": "*fp16", "n_rows": "i32",
             "n_heads": "i32"}
CONSTEXPRS = {"BLOCK_R": 64, "D": 128}
SCALARS = {"n_rows": 65536, "n_heads": 32}
TENSORS = {"x_ptr": [65536, 128], "cos_ptr": [2048, 64], "sin_ptr": [2048, 64], "out_ptr": [65536, 128]}
GRID = (1024,)
OPTIONS = {"num_warps": 4, "num_stages": 3}
