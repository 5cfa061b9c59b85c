"""Hash-partition int64 keys into buckets: multiplicative hashing with ``tl.umulhi`` on the key's halves,
bucket = hi mod B, bucket ids stored int16 and a per-program [BLOCK, B] one-hot count reduced along axis 0
(B = 64) into an int32 histogram with ``tl.atomic_add``; one warp per 512 keys."""
import triton
import triton.language as tl


@triton.jit
def hash_bucket_kernel(k_ptr, b_ptr, hist_ptr, n, BLOCK: tl.constexpr, B: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n
    k = tl.load(k_ptr + offs, mask=ok, other=0)
    lo = (k & 0xFFFFFFFF).to(tl.uint32)
    hi = (k >> 32).to(tl.uint32)
    h = tl.umulhi(lo, 0x9E3779B1) ^ tl.umulhi(hi, 0x85EBCA77)
    bucket = (h % B).to(tl.int32)
    tl.store(b_ptr + offs, bucket.to(tl.int16), mask=ok)
    onehot = (bucket[:, None] == tl.arange(0, B)[None, :]) & ok[:, None]
    tl.atomic_add(hist_ptr + tl.arange(0, B), tl.sum(onehot.to(tl.int32), axis=0))


N_ = 1 << 26
KERNEL = hash_bucket_kernel
SIGNATURE = {"k_ptr": "*i64", "b_ptr": "*i16", "hist_ptr": "*i32", "n": "i32"}
CONSTEXPRS = {"BLOCK": 512, "B": 64}
SCALARS = {"n": N_}
TENSORS = {"k_ptr": ([N_], ("randint", 0, 1 << 62)), "b_ptr": [N_], "hist_ptr": ([64], "zeros")}
GRID = (N_ // 512,)
OPTIONS = {"num_warps": 1}
