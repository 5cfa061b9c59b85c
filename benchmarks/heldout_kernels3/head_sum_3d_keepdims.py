"""Sum over heads of per-head attention outputs: a [BLOCK_T, H, D] bf16 tile reduced along the middle axis
(``keep_dims=True``) and broadcast back to subtract the mean (centering across heads), 8 warps."""
import triton
import triton.language as tl


@triton.jit
def head_center_kernel(x_ptr, y_ptr, mean_ptr, BLOCK_T: tl.constexpr, H: tl.constexpr, D: tl.constexpr):
    t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    h = tl.arange(0, H)
    d = tl.arange(0, D)
    offs = t[:, None, None].to(tl.int64) * (H * D) + h[None, :, None] * D + d[None, None, :]
    x = tl.load(x_ptr + offs).to(tl.float32)
    mean = tl.sum(x, axis=1, keep_dims=True) / H
    tl.store(y_ptr + offs, (x - mean).to(tl.bfloat16))
    m2 = tl.reshape(mean, [BLOCK_T, D])
    tl.store(mean_ptr + t[:, None] * D + d[None, :], m2)


TOKENS, HEADS, HEAD_DIM = 16384, 16, 64
KERNEL = head_center_kernel
SIGNATURE = {"x_ptr": "*bf16", "y_ptr": "*bf16", "mean_ptr": "*fp32"}
CONSTEXPRS = {"BLOCK_T": 8, "H": HEADS, "D": HEAD_DIM}
SCALARS = {}
TENSORS = {"x_ptr": [TOKENS, HEADS, HEAD_DIM], "y_ptr": [TOKENS, HEADS, HEAD_DIM], "mean_ptr": [TOKENS, HEAD_DIM]}
GRID = (TOKENS // 8,)
OPTIONS = {"num_warps": 8}
