"""Byte histogram of a uint8 stream (256 bins): each program takes 8192 bytes, ``tl.histogram`` (the masked
tail's zeros taken back out of bin 0), the block's bins merged into the global int32 histogram with one ``tl.atomic_add``
per bin; eight warps."""
import triton
import triton.language as tl


@triton.jit
def byte_histogram_kernel(x_ptr, hist_ptr, n, BLOCK: tl.constexpr, BINS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    x = tl.load(x_ptr + offs, mask=ok, other=0).to(tl.int32) & 255
    h = tl.histogram(x, BINS)
    bins = tl.arange(0, BINS)
    h = h - tl.where(bins == 0, tl.sum((~ok).to(tl.int32), axis=0), 0)
    tl.atomic_add(hist_ptr + bins, h)


N_ = 200_000_000
KERNEL = byte_histogram_kernel
SIGNATURE = {"x_ptr": "*u8", "hist_ptr": "*i32", "n": "i32"}
CONSTEXPRS = {"BLOCK": 8192, "BINS": 256}
SCALARS = {"n": N_}
TENSORS = {"x_ptr": ([N_], ("randint", 0, 256)), "hist_ptr": ([256], "zeros")}
GRID = ((N_ + 8191) // 8192,)
OPTIONS = {"num_warps": 8}
