"""Key-value sort of 16 rows of 256 pairs per program (``tl.sort`` of 64-bit keys, the key in the high
32 bits and the value's position in the low 32, unpacked afterwards), ascending: e.g. sorting a MoE
block's token ids by their expert id. ``tl.sort`` unrolls into 36 compare-and-swap stages, each a
reshape to a [2, 2, ..] hypercube, an xor-reduction, a compare and a select."""
import triton
import triton.language as tl


@triton.jit
def bitonic_sort_pairs_kernel(key_ptr, value_ptr, key_out_ptr, value_out_ptr, BLOCK_M: tl.constexpr,
                              N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, N)
    offs = rows[:, None] * N + cols[None, :]
    key = tl.load(key_ptr + offs)
    packed = (key.to(tl.int64) << 32) | cols[None, :].to(tl.int64)
    packed = tl.sort(packed, dim=1)
    position = (packed & 0xFFFFFFFF).to(tl.int32)
    value = tl.load(value_ptr + rows[:, None] * N + position)
    tl.store(key_out_ptr + offs, (packed >> 32).to(tl.int32))
    tl.store(value_out_ptr + offs, value)


KERNEL = bitonic_sort_pairs_kernel
SIGNATURE = {"key_ptr": "*i32", "value_ptr": "*i32", "key_out_ptr": "*i32", "value_out_ptr": "*i32"}
CONSTEXPRS = {"BLOCK_M": 16, "N": 256}
SCALARS = {}
TENSORS = {"key_ptr": ([4096, 256], ("randint", 0, 128)), "value_ptr": ([4096, 256], ("randint", 0, 1 << 20)),
           "key_out_ptr": [4096, 256], "value_out_ptr": [4096, 256]}
GRID = (256,)
OPTIONS = {"num_warps": 4, "num_stages": 3}
