"""Fused dropout + residual add + LayerNorm (a transformer block's post-attention step): h = residual +
dropout(x) with the keep mask drawn from ``tl.rand(seed, offset)``; h stored (the next residual, bf16), then
LayerNorm of h with weight and bias; one 4096-wide bf16 row per program on 8 warps."""
import triton
import triton.language as tl


@triton.jit
def dropout_add_ln_kernel(x_ptr, res_ptr, w_ptr, b_ptr, h_ptr, y_ptr, D, eps, seed, P: tl.constexpr,
                          BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    ok = cols < D
    base = row.to(tl.int64) * D
    x = tl.load(x_ptr + base + cols, mask=ok, other=0.0).to(tl.float32)
    r = tl.load(res_ptr + base + cols, mask=ok, other=0.0).to(tl.float32)
    keep = tl.rand(seed, row * D + cols) >= P
    h = r + tl.where(keep, x * (1.0 / (1.0 - P)), 0.0)
    h = h.to(tl.bfloat16)
    tl.store(h_ptr + base + cols, h, mask=ok)
    hf = tl.where(ok, h.to(tl.float32), 0.0)
    mean = tl.sum(hf, axis=0) / D
    d = tl.where(ok, hf - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / D + eps)
    w = tl.load(w_ptr + cols, mask=ok, other=1.0)
    b = tl.load(b_ptr + cols, mask=ok, other=0.0)
    tl.store(y_ptr + base + cols, (d * rstd * w + b).to(tl.bfloat16), mask=ok)


T_, D_ = 16384, 4096
KERNEL = dropout_add_ln_kernel
SIGNATURE = {"x_ptr": "*bf16", "res_ptr": "*bf16", "w_ptr": "*fp32", "b_ptr": "*fp32", "h_ptr": "*bf16",
             "y_ptr": "*bf16", "D": "i32", "eps": "fp32", "seed": "i32"}
CONSTEXPRS = {"P": 0.1, "BLOCK": 4096}
SCALARS = {"D": D_, "eps": 1e-5, "seed": 20240}
TENSORS = {"x_ptr": [T_, D_], "res_ptr": [T_, D_], "w_ptr": [D_], "b_ptr": [D_], "h_ptr": [T_, D_],
           "y_ptr": [T_, D_]}
GRID = (T_,)
OPTIONS = {"num_warps": 8}
