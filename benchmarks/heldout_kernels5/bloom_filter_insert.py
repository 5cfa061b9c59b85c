"""Bloom filter build: int64 keys hashed three ways (multiply by odd 64-bit constants, high bits) as a
[1024, 4] tile (fourth column masked), bits set in a 2^27-bit int32 filter with ``tl.atomic_or`` (the result is
order independent)."""
import triton
import triton.language as tl


@triton.jit
def bloom_insert_kernel(key_ptr, bits_ptr, N, BLOCK: tl.constexpr, LOG_BITS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < N
    key = tl.load(key_ptr + offs, mask=ok, other=0).to(tl.uint64)
    j = tl.arange(0, 4)
    mult = tl.where(j == 0, -7046029254386353131, tl.where(j == 1, -4658895280553007687, -8796714831421723037))
    h = key[:, None] * mult[None, :].to(tl.uint64)
    h = h ^ (h >> 29)
    bit = (h >> (64 - LOG_BITS)).to(tl.int32)
    word = bit >> 5
    val = tl.full([BLOCK, 4], 1, tl.int32) << (bit & 31)
    tl.atomic_or(bits_ptr + word, val, mask=ok[:, None] & (j[None, :] < 3), sem="relaxed")


N_, LOG_BITS_ = 1 << 24, 27
KERNEL = bloom_insert_kernel
SIGNATURE = {"key_ptr": "*i64", "bits_ptr": "*i32", "N": "i32"}
CONSTEXPRS = {"BLOCK": 1024, "LOG_BITS": LOG_BITS_}
SCALARS = {"N": N_}
TENSORS = {"key_ptr": ([N_], ("randint", 0, 1 << 40)), "bits_ptr": ([1 << (LOG_BITS_ - 5)], "zeros")}
GRID = (N_ // 1024,)
OPTIONS = {"num_warps": 4}
