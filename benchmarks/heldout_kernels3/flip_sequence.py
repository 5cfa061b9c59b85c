"""Time reversal of fp16 sequences for a backward-direction RNN: a [BLOCK_T, D] tile is flipped along axis 0
with ``tl.flip`` (a reshape to [2, 2, ..., D] and xor-swaps) and stored at the mirrored block."""
import triton
import triton.language as tl


@triton.jit
def flip_sequence_kernel(x_ptr, y_ptr, T, BLOCK_T: tl.constexpr, D: tl.constexpr):
    b = tl.program_id(1).to(tl.int64)
    tb = tl.program_id(0)
    t = tb * BLOCK_T + tl.arange(0, BLOCK_T)
    d = tl.arange(0, D)
    x = tl.load(x_ptr + b * T * D + t[:, None] * D + d[None, :])
    y = tl.flip(x, 0)
    out_t = (T - (tb + 1) * BLOCK_T) + tl.arange(0, BLOCK_T)
    tl.store(y_ptr + b * T * D + out_t[:, None] * D + d[None, :], y)


BATCH, T_, D_ = 64, 4096, 256
KERNEL = flip_sequence_kernel
SIGNATURE = {"x_ptr": "*fp16", "y_ptr": "*fp16", "T": "i32"}
CONSTEXPRS = {"BLOCK_T": 16, "D": D_}
SCALARS = {"T": T_}
TENSORS = {"x_ptr": [BATCH, T_, D_], "y_ptr": [BATCH, T_, D_]}
GRID = (T_ // 16, BATCH)
OPTIONS = {"num_warps": 4}
