"""NCHW -> NHWC for an fp16 activation: a [2, 64, 64] (N, C, HW) tile, ``tl.permute(x, (0, 2, 1))``."""
import triton
import triton.language as tl


@triton.jit
def nchw_to_nhwc_kernel(x_ptr, out_ptr, C, HW, BLOCK_B: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_HW: tl.constexpr):
    rb = tl.program_id(2) * BLOCK_B + tl.arange(0, BLOCK_B)
    rc = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    rs = tl.program_id(1) * BLOCK_HW + tl.arange(0, BLOCK_HW)
    src = x_ptr + rb[:, None, None] * C * HW + rc[None, :, None] * HW + rs[None, None, :]
    x = tl.load(src)
    dst = out_ptr + rb[:, None, None] * C * HW + rs[None, :, None] * C + rc[None, None, :]
    tl.store(dst, tl.permute(x, (0, 2, 1)))


KERNEL = nchw_to_nhwc_kernel
SIGNATURE = {"x_ptr": "*fp16", "out_ptr": "*fp16", "C": "i32", "HW": "i32"}
CONSTEXPRS = {"BLOCK_B": 2, "BLOCK_C": 64, "BLOCK_HW": 64}
SCALARS = {"C": 256, "HW": 3136}
TENSORS = {"x_ptr": [32, 256, 3136], "out_ptr": [32, 3136, 256]}
GRID = (4, 49, 16)
OPTIONS = {"num_warps": 4, "num_stages": 3}
