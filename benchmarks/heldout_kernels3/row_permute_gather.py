"""Permutation of the rows within a tile (MoE token reordering inside a 64-token block): a [64, 128] bf16
tile, the block's int32 permutation broadcast along columns, ``tl.gather`` along axis 0, then scaled by a
per-row router weight."""
import triton
import triton.language as tl


@triton.jit
def row_permute_gather_kernel(x_ptr, perm_ptr, w_ptr, y_ptr, D, BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
    base = tl.program_id(0) * BLOCK_T
    t = tl.arange(0, BLOCK_T)
    d = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    offs = (base + t[:, None]).to(tl.int64) * D + d[None, :]
    x = tl.load(x_ptr + offs)
    p = tl.load(perm_ptr + base + t)
    idx = tl.broadcast_to(p[:, None], [BLOCK_T, BLOCK_D])
    y = tl.gather(x, idx, axis=0).to(tl.float32)
    w = tl.load(w_ptr + base + t)
    tl.store(y_ptr + offs, (y * w[:, None]).to(tl.bfloat16))


TOKENS, HIDDEN = 32768, 4096
KERNEL = row_permute_gather_kernel
SIGNATURE = {"x_ptr": "*bf16", "perm_ptr": "*i32", "w_ptr": "*fp32", "y_ptr": "*bf16", "D": "i32"}
CONSTEXPRS = {"BLOCK_T": 64, "BLOCK_D": 128}
SCALARS = {"D": HIDDEN}
TENSORS = {"x_ptr": [TOKENS, HIDDEN], "perm_ptr": ([TOKENS], ("randint", 0, 64)), "w_ptr": [TOKENS],
           "y_ptr": [TOKENS, HIDDEN]}
GRID = (TOKENS // 64, HIDDEN // 128)
OPTIONS = {"num_warps": 4}
