"""Per-row column permutation with ``tl.gather`` (take_along_axis): ``out[i, j] = x[i, idx[i, j]]``
on [32, 128] fp32 tiles, both operands loaded from global memory."""
import triton
import triton.language as tl


@triton.jit
def gather_columns_kernel(x_ptr, idx_ptr, out_ptr, M, BLOCK_M: tl.constexpr, N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs = rows[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offs)
    idx = tl.load(idx_ptr + offs)
    tl.store(out_ptr + offs, tl.gather(x, idx, axis=1))


KERNEL = gather_columns_kernel
SIGNATURE = {"x_ptr": "*fp32", "idx_ptr": "*i32", "out_ptr": "*fp32", "M": "i32"}
CONSTEXPRS = {"BLOCK_M": 32, "N": 128}
SCALARS = {"M": 4096}
TENSORS = {"x_ptr": [4096, 128], "idx_ptr": ([4096, 128], ("randint", 0, 128)), "out_ptr": [4096, 128]}
GRID = (128,)
OPTIONS = {"num_warps": 4, "num_stages": 3}
