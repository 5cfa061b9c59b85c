"""Out-of-place transpose of an fp16 matrix in 64x64 tiles: loaded coalesced along rows, ``tl.trans``,
stored coalesced along the output's rows (a register-to-register layout change through shared memory)."""
import triton
import triton.language as tl


@triton.jit
def transpose_kernel(x_ptr, out_ptr, M, N, stride_xm, stride_om, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rm[:, None] * stride_xm + rn[None, :], mask=(rm[:, None] < M) & (rn[None, :] < N))
    tl.store(out_ptr + rn[:, None] * stride_om + rm[None, :], tl.trans(x), mask=(rn[:, None] < N) & (rm[None, :] < M))


KERNEL = transpose_kernel
SIGNATURE = {"x_ptr": "*fp16", "out_ptr": "*fp16", "M": "i32", "N": "i32", "stride_xm": "i32", "stride_om": "i32"}
CONSTEXPRS = {"BLOCK_M": 64, "BLOCK_N": 64}
SCALARS = {"M": 4096, "N": 4096, "stride_xm": 4096, "stride_om": 4096}
TENSORS = {"x_ptr": [4096, 4096], "out_ptr": [4096, 4096]}
GRID = (64, 64)
OPTIONS = {"num_warps": 4, "num_stages": 3}
