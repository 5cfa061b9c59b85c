"""2:4 structured-sparsity compression of an fp16 weight [M, N]: each group of 4 along a row (a [32, 128]
tile reshaped to [32, 32, 4]) keeps its 2 largest magnitudes (rank by pairwise comparison, ties to the
lower index), the kept values pulled out with ``tl.gather`` along the last axis into [M, N / 2], and the
two 2-bit positions packed into one uint8 of metadata per group."""
import triton
import triton.language as tl


@triton.jit
def sparse24_compress_kernel(x_ptr, val_ptr, meta_ptr, N, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None].to(tl.int64) * N + rn[None, :])
    x3 = tl.reshape(x, [BM, BN // 4, 4])
    a = tl.abs(x3.to(tl.float32))
    i = tl.arange(0, 4)
    ai = a[:, :, :, None]
    aj = a[:, :, None, :]
    beats = (aj > ai) | ((aj == ai) & (i[None, None, None, :] < i[None, None, :, None]))
    rank = tl.sum(beats.to(tl.int32), axis=3)
    keep = rank < 2
    first = tl.min(tl.where(keep, i[None, None, :], 4), axis=2)
    second = tl.max(tl.where(keep, i[None, None, :], -1), axis=2)
    which = tl.arange(0, 2)[None, None, :]
    pos = tl.where(which == 0, first[:, :, None], second[:, :, None])
    kept = tl.gather(x3, pos, axis=2)
    cols = tl.program_id(1) * (BN // 2) + tl.arange(0, BN // 2)
    tl.store(val_ptr + rm[:, None].to(tl.int64) * (N // 2) + cols[None, :], tl.reshape(kept, [BM, BN // 2]))
    groups = tl.program_id(1) * (BN // 4) + tl.arange(0, BN // 4)
    meta = (first | (second << 2)).to(tl.uint8)
    tl.store(meta_ptr + rm[:, None].to(tl.int64) * (N // 4) + groups[None, :], meta)


M_, N_ = 8192, 8192
KERNEL = sparse24_compress_kernel
SIGNATURE = {"x_ptr": "*fp16", "val_ptr": "*fp16", "meta_ptr": "*u8", "N": "i32"}
CONSTEXPRS = {"BM": 32, "BN": 128}
SCALARS = {"N": N_}
TENSORS = {"x_ptr": [M_, N_], "val_ptr": [M_, N_ // 2], "meta_ptr": [M_, N_ // 4]}
GRID = (M_ // 32, N_ // 128)
OPTIONS = {"num_warps": 4}
