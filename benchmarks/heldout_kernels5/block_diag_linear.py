"""Block-diagonal linear layer (per-head projections, e.g. xLSTM / Monarch-style factors): a [64 tokens, 512]
bf16 tile ``tl.reshape``-d to [64, 8, 64], ``tl.permute``-d to head-major [8, 64, 64], a batched 3-D ``tl.dot``
with the eight [64, 64] weight blocks, permuted and reshaped back to [64, 512], bf16 out."""
import triton
import triton.language as tl


@triton.jit
def block_diag_linear_kernel(x_ptr, w_ptr, y_ptr, T, BT: tl.constexpr, NB: tl.constexpr, BD: tl.constexpr):
    rt = tl.program_id(0) * BT + tl.arange(0, BT)
    rc = tl.arange(0, NB * BD)
    x = tl.load(x_ptr + rt[:, None] * (NB * BD) + rc[None, :])
    xh = tl.permute(tl.reshape(x, [BT, NB, BD]), (1, 0, 2))
    rb = tl.arange(0, NB)
    ri = tl.arange(0, BD)
    w = tl.load(w_ptr + rb[:, None, None] * (BD * BD) + ri[None, :, None] * BD + ri[None, None, :])
    yh = tl.dot(xh, w)
    y = tl.reshape(tl.permute(yh, (1, 0, 2)), [BT, NB * BD])
    tl.store(y_ptr + rt[:, None] * (NB * BD) + rc[None, :], y.to(tl.bfloat16))


T_ = 65536
KERNEL = block_diag_linear_kernel
SIGNATURE = {"x_ptr": "*bf16", "w_ptr": "*bf16", "y_ptr": "*bf16", "T": "i32"}
CONSTEXPRS = {"BT": 64, "NB": 8, "BD": 64}
SCALARS = {"T": T_}
TENSORS = {"x_ptr": [T_, 512], "w_ptr": [8, 64, 64], "y_ptr": [T_, 512]}
GRID = (T_ // 64,)
OPTIONS = {"num_warps": 8}
