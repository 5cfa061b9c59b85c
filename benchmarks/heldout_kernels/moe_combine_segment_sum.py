"""MoE combine as a weighted segment sum: each of the top-4 expert outputs (bf16 rows, in expert order)
is scaled by its gate and added into the row of the token it came from, ``out[seg[r], :] += g[r] * y[r, :]``,
with ``tl.atomic_add`` on fp32 [64, 128] tiles."""
import triton
import triton.language as tl


@triton.jit
def moe_combine_segment_sum_kernel(y_ptr, seg_ptr, gate_ptr, out_ptr, R, D, stride_y, stride_out,
                                   BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    row_ok = rows < R
    mask = row_ok[:, None] & (cols[None, :] < D)
    seg = tl.load(seg_ptr + rows, mask=row_ok, other=0).to(tl.int64)
    gate = tl.load(gate_ptr + rows, mask=row_ok, other=0.0)
    y = tl.load(y_ptr + rows[:, None].to(tl.int64) * stride_y + cols[None, :], mask=mask, other=0.0)
    contrib = y.to(tl.float32) * gate[:, None]
    tl.atomic_add(out_ptr + seg[:, None] * stride_out + cols[None, :], contrib, mask=mask, sem="relaxed")


TOKENS, TOP_K, HIDDEN = 4096, 4, 2880
ROWS = TOKENS * TOP_K
KERNEL = moe_combine_segment_sum_kernel
SIGNATURE = {"y_ptr": "*bf16", "seg_ptr": "*i32", "gate_ptr": "*fp32", "out_ptr": "*fp32", "R": "i32", "D": "i32",
             "stride_y": "i32", "stride_out": "i32"}
CONSTEXPRS = {"BLOCK_R": 64, "BLOCK_D": 128}
SCALARS = {"R": ROWS, "D": HIDDEN, "stride_y": HIDDEN, "stride_out": HIDDEN}
TENSORS = {"y_ptr": [ROWS, HIDDEN], "seg_ptr": ([ROWS], ("randint", 0, TOKENS)), "gate_ptr": [ROWS],
           "out_ptr": ([TOKENS, HIDDEN], "zeros")}
GRID = (ROWS // 64, (HIDDEN + 127) // 128)
OPTIONS = {"num_warps": 4, "num_stages": 2}
