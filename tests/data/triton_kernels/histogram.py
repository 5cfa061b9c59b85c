"""Histogram of byte values: ``tl.histogram`` of 8192 values per program into 256 bins, merged into a
global histogram with ``tl.atomic_add``."""
import triton
import triton.language as tl


@triton.jit
def histogram_kernel(x_ptr, bins_ptr, n_elements, BLOCK_SIZE: tl.constexpr, NUM_BINS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    x = tl.load(x_ptr + offs, mask=offs < n_elements, other=0)
    h = tl.histogram(x, NUM_BINS)
    tl.atomic_add(bins_ptr + tl.arange(0, NUM_BINS), h)


KERNEL = histogram_kernel
SIGNATURE = {"x_ptr": "*i32", "bins_ptr": "*i32", "n_elements": "i32"}
CONSTEXPRS = {"BLOCK_SIZE": 8192, "NUM_BINS": 256}
SCALARS = {"n_elements": 1 << 22}
TENSORS = {"x_ptr": ([1 << 22], ("randint", 0, 256)), "bins_ptr": ([256], "zeros")}
GRID = (512,)
OPTIONS = {"num_warps": 8, "num_stages": 3}
