"""GeGLU on a fused gate/up projection whose outputs are interleaved column by column (g0, u0, g1, u1, ...):
a [32, 256] bf16 tile ``tl.reshape``-d to [32, 128, 2] and ``tl.split`` into gate and up, tanh-GELU(gate) * up,
bf16 [T, F] out."""
import triton
import triton.language as tl


@triton.jit
def geglu_interleaved_kernel(x_ptr, y_ptr, T, F, BT: tl.constexpr, BF: tl.constexpr):
    rt = tl.program_id(0) * BT + tl.arange(0, BT)
    rc = tl.program_id(1) * 2 * BF + tl.arange(0, 2 * BF)
    ok = rt[:, None] < T
    x = tl.load(x_ptr + rt[:, None].to(tl.int64) * (2 * F) + rc[None, :], mask=ok, other=0.0)
    g, u = tl.split(tl.reshape(x, [BT, BF, 2]))
    g = g.to(tl.float32)
    inner = 0.7978845608028654 * (g + 0.044715 * g * g * g)
    t = 2.0 / (1.0 + tl.exp(-2.0 * inner)) - 1.0
    y = 0.5 * g * (1.0 + t) * u.to(tl.float32)
    rf = tl.program_id(1) * BF + tl.arange(0, BF)
    tl.store(y_ptr + rt[:, None].to(tl.int64) * F + rf[None, :], y.to(tl.bfloat16), mask=ok)


T_, F_ = 8190, 8192
KERNEL = geglu_interleaved_kernel
SIGNATURE = {"x_ptr": "*bf16", "y_ptr": "*bf16", "T": "i32", "F": "i32"}
CONSTEXPRS = {"BT": 32, "BF": 128}
SCALARS = {"T": T_, "F": F_}
TENSORS = {"x_ptr": [T_, 2 * F_], "y_ptr": [T_, F_]}
GRID = ((T_ + 31) // 32, F_ // 128)
OPTIONS = {"num_warps": 4}
