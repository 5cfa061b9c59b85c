"""Per-column (per-channel) fp8 quantization of a bf16 [M, N] activation: a program owns 64 columns, finds
their absolute maxima in a first loop over the rows (a reduction over the non-contiguous axis), then
rescales the same columns to e4m3 in a second loop and stores the fp32 dequantization scales."""
import triton
import triton.language as tl


@triton.jit
def colwise_fp8_quant_kernel(x_ptr, q_ptr, scale_ptr, M, N, stride_xm, stride_qm,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < N
    rr = tl.arange(0, BLOCK_M)
    amax = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, M, BLOCK_M):
        rows = start + rr
        mask = (rows[:, None] < M) & col_ok[None, :]
        x = tl.load(x_ptr + rows[:, None].to(tl.int64) * stride_xm + cols[None, :], mask=mask, other=0.0)
        amax = tl.maximum(amax, tl.max(tl.abs(x.to(tl.float32)), axis=0))
    scale = tl.maximum(amax, 1e-12) / 448.0
    inv = 1.0 / scale
    for start in range(0, M, BLOCK_M):
        rows = start + rr
        mask = (rows[:, None] < M) & col_ok[None, :]
        x = tl.load(x_ptr + rows[:, None].to(tl.int64) * stride_xm + cols[None, :], mask=mask, other=0.0)
        q = tl.clamp(x.to(tl.float32) * inv[None, :], -448.0, 448.0)
        tl.store(q_ptr + rows[:, None].to(tl.int64) * stride_qm + cols[None, :], q.to(tl.float8e4nv), mask=mask)
    tl.store(scale_ptr + cols, scale, mask=col_ok)


M_, N_ = 4000, 8192
KERNEL = colwise_fp8_quant_kernel
SIGNATURE = {"x_ptr": "*bf16", "q_ptr": "*fp8e4nv", "scale_ptr": "*fp32", "M": "i32", "N": "i32",
             "stride_xm": "i32", "stride_qm": "i32"}
CONSTEXPRS = {"BLOCK_M": 64, "BLOCK_N": 64}
SCALARS = {"M": M_, "N": N_, "stride_xm": N_, "stride_qm": N_}
TENSORS = {"x_ptr": [M_, N_], "q_ptr": [M_, N_], "scale_ptr": [N_]}
GRID = (N_ // 64,)
OPTIONS = {"num_warps": 4, "num_stages": 3}
