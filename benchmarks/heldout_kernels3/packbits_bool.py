"""Pack a boolean attention mask into bits: a [BLOCK_M, N] tile of an int1 mask, reshaped to
[BLOCK_M, N / 32, 32] and reduced along the last axis with per-bit shifts into int32 words; the row's
count of set entries is stored too."""
import triton
import triton.language as tl


@triton.jit
def packbits_kernel(m_ptr, bits_ptr, count_ptr, BLOCK_M: tl.constexpr, N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, N)
    m = tl.load(m_ptr + rows[:, None].to(tl.int64) * N + cols[None, :])
    v = tl.reshape(m.to(tl.int32), [BLOCK_M, N // 32, 32])
    shift = tl.arange(0, 32)
    words = tl.sum(v << shift[None, None, :], axis=2)
    w = tl.arange(0, N // 32)
    tl.store(bits_ptr + rows[:, None] * (N // 32) + w[None, :], words)
    tl.store(count_ptr + rows, tl.sum(m.to(tl.int32), axis=1))


ROWS, COLS = 65536, 1024
KERNEL = packbits_kernel
SIGNATURE = {"m_ptr": "*i1", "bits_ptr": "*i32", "count_ptr": "*i32"}
CONSTEXPRS = {"BLOCK_M": 16, "N": COLS}
SCALARS = {}
TENSORS = {"m_ptr": ([ROWS, COLS], ("randint", 0, 2)), "bits_ptr": [ROWS, COLS // 32], "count_ptr": [ROWS]}
GRID = (ROWS // 16,)
OPTIONS = {"num_warps": 4}
