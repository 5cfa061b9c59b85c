"""Fused SwiGLU of a gate/up projection stored side by side (``[tokens, 2 * hidden]``, bf16, as one GEMM
writes it): out = silu(gate) * up in fp32, stored bf16; 2-D tiles of 16 rows x 512 columns."""
import triton
import triton.language as tl


@triton.jit
def swiglu_fwd_kernel(x_ptr, out_ptr, M, N, stride_xm, stride_om, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    rows = x_ptr + rm[:, None].to(tl.int64) * stride_xm
    gate = tl.load(rows + rn[None, :], mask=mask, other=0.0).to(tl.float32)
    up = tl.load(rows + N + rn[None, :], mask=mask, other=0.0).to(tl.float32)
    out = gate / (1.0 + tl.exp(-gate)) * up
    tl.store(out_ptr + rm[:, None].to(tl.int64) * stride_om + rn[None, :], out.to(tl.bfloat16), mask=mask)


TOKENS, HIDDEN = 8192, 11008
KERNEL = swiglu_fwd_kernel
SIGNATURE = {"x_ptr": "*bf16", "out_ptr": "*bf16", "M": "i32", "N": "i32", "stride_xm": "i32", "stride_om": "i32"}
CONSTEXPRS = {"BLOCK_M": 16, "BLOCK_N": 512}
SCALARS = {"M": TOKENS, "N": HIDDEN, "stride_xm": 2 * HIDDEN, "stride_om": HIDDEN}
TENSORS = {"x_ptr": [TOKENS, 2 * HIDDEN], "out_ptr": [TOKENS, HIDDEN]}
GRID = (TOKENS // 16, (HIDDEN + 511) // 512)
OPTIONS = {"num_warps": 4}
