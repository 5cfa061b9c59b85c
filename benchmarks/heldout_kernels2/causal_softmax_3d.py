"""Causal softmax of attention scores: each row of a [batch * heads, S, S] fp16 score tensor is scaled,
masked above the diagonal (key > query) and normalized over the last dim; four query rows per program."""
import triton
import triton.language as tl


@triton.jit
def causal_softmax_3d_kernel(x_ptr, y_ptr, S, stride_bh, stride_row, scale,
                             ROWS: tl.constexpr, BLOCK_S: tl.constexpr):
    bh = tl.program_id(1).to(tl.int64)
    q = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    k = tl.arange(0, BLOCK_S)
    in_bounds = (q[:, None] < S) & (k[None, :] < S)
    offs = bh * stride_bh + q[:, None] * stride_row + k[None, :]
    x = tl.load(x_ptr + offs, mask=in_bounds & (k[None, :] <= q[:, None]), other=float("-inf"))
    x = x.to(tl.float32) * scale
    x_max = tl.max(x, axis=1)
    p = tl.exp(x - x_max[:, None])
    y = p / tl.sum(p, axis=1)[:, None]
    tl.store(y_ptr + offs, y.to(tl.float16), mask=in_bounds)


BH, S_ = 4 * 32, 1024
KERNEL = causal_softmax_3d_kernel
SIGNATURE = {"x_ptr": "*fp16", "y_ptr": "*fp16", "S": "i32", "stride_bh": "i32", "stride_row": "i32",
             "scale": "fp32"}
CONSTEXPRS = {"ROWS": 4, "BLOCK_S": 1024}
SCALARS = {"S": S_, "stride_bh": S_ * S_, "stride_row": S_, "scale": 0.125}
TENSORS = {"x_ptr": [BH, S_, S_], "y_ptr": [BH, S_, S_]}
GRID = (S_ // 4, BH)
OPTIONS = {"num_warps": 4}
