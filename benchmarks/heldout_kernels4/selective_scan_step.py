"""Mamba selective-scan decode step (one token): per (batch, channel) a state of N = 16 fp32 values is
updated in place, h = h * exp(softplus(dt + dt_bias) * A) + dt * B * x, and read out along the state axis,
y = sum(h * C, axis=1) + D * x, gated by silu(z); [32 channels, 16 states] tiles on one warp, bf16
activations."""
import triton
import triton.language as tl


@triton.jit
def selective_scan_step_kernel(state_ptr, x_ptr, dt_ptr, z_ptr, a_ptr, bm_ptr, cm_ptr, dskip_ptr, dtb_ptr, y_ptr,
                               DIM, BD: tl.constexpr, NS: tl.constexpr):
    b = tl.program_id(1)
    rd = tl.program_id(0) * BD + tl.arange(0, BD)
    rn = tl.arange(0, NS)
    d_ok = rd < DIM
    io = b * DIM + rd
    x = tl.load(x_ptr + io, mask=d_ok, other=0.0).to(tl.float32)
    dt = tl.load(dt_ptr + io, mask=d_ok, other=0.0).to(tl.float32) + tl.load(dtb_ptr + rd, mask=d_ok, other=0.0)
    dt = tl.where(dt > 20.0, dt, tl.log(1.0 + tl.exp(dt)))
    a = tl.load(a_ptr + rd[:, None] * NS + rn[None, :], mask=d_ok[:, None], other=0.0)
    bv = tl.load(bm_ptr + b * NS + rn)
    cv = tl.load(cm_ptr + b * NS + rn)
    s_offs = (b * DIM + rd)[:, None].to(tl.int64) * NS + rn[None, :]
    h = tl.load(state_ptr + s_offs, mask=d_ok[:, None], other=0.0)
    h = h * tl.exp(dt[:, None] * a) + (dt * x)[:, None] * bv[None, :]
    tl.store(state_ptr + s_offs, h, mask=d_ok[:, None])
    y = tl.sum(h * cv[None, :], axis=1) + tl.load(dskip_ptr + rd, mask=d_ok, other=0.0) * x
    z = tl.load(z_ptr + io, mask=d_ok, other=0.0).to(tl.float32)
    y = y * z / (1.0 + tl.exp(-z))
    tl.store(y_ptr + io, y.to(tl.bfloat16), mask=d_ok)


B_, DIM_, NS_ = 256, 5120, 16
KERNEL = selective_scan_step_kernel
SIGNATURE = {"state_ptr": "*fp32", "x_ptr": "*bf16", "dt_ptr": "*bf16", "z_ptr": "*bf16", "a_ptr": "*fp32",
             "bm_ptr": "*fp32", "cm_ptr": "*fp32", "dskip_ptr": "*fp32", "dtb_ptr": "*fp32", "y_ptr": "*bf16",
             "DIM": "i32"}
CONSTEXPRS = {"BD": 32, "NS": NS_}
SCALARS = {"DIM": DIM_}
TENSORS = {"state_ptr": [B_, DIM_, NS_], "x_ptr": [B_, DIM_], "dt_ptr": [B_, DIM_], "z_ptr": [B_, DIM_],
           "a_ptr": [DIM_, NS_], "bm_ptr": [B_, NS_], "cm_ptr": [B_, NS_], "dskip_ptr": [DIM_], "dtb_ptr": [DIM_],
           "y_ptr": [B_, DIM_]}
GRID = (DIM_ // 32, B_)
OPTIONS = {"num_warps": 1}
