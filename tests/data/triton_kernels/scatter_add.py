"""Scatter-add of rows (index_add / MoE combine): ``out[idx[t], :] += src[t, :]`` with ``tl.atomic_add``
on a [32, 128] fp32 tile of pointers per program."""
import triton
import triton.language as tl


@triton.jit
def scatter_add_kernel(src_ptr, idx_ptr, out_ptr, n_rows, D, BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
    t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    d = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    mask = (t[:, None] < n_rows) & (d[None, :] < D)
    idx = tl.load(idx_ptr + t, mask=t < n_rows, other=0)
    vals = tl.load(src_ptr + t[:, None] * D + d[None, :], mask=mask, other=0.0)
    tl.atomic_add(out_ptr + idx[:, None] * D + d[None, :], vals, mask=mask)


KERNEL = scatter_add_kernel
SIGNATURE = {"src_ptr": "*fp32", "idx_ptr": "*i32", "out_ptr": "*fp32", "n_rows": "i32", "D": "i32"}
CONSTEXPRS = {"BLOCK_T": 32, "BLOCK_D": 128}
SCALARS = {"n_rows": 16384, "D": 1024}
TENSORS = {"src_ptr": [16384, 1024], "idx_ptr": ([16384], ("randint", 0, 2048)), "out_ptr": ([2048, 1024], "zeros")}
GRID = (512, 8)
OPTIONS = {"num_warps": 4, "num_stages": 3}
