"""Backward of a cumulative sum along the sequence: dx = reverse cumulative sum of dy, ``tl.cumsum(...,
reverse=True)`` along axis 1 of [4, 2048] tiles, bf16 gradients accumulated in fp32, positions past each row's
int32 length zeroed (padded batch)."""
import triton
import triton.language as tl


@triton.jit
def cumsum_bwd_kernel(dy_ptr, len_ptr, dx_ptr, R, L: tl.constexpr, ROWS: tl.constexpr):
    rr = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    rl = tl.arange(0, L)
    row_ok = rr < R
    n = tl.load(len_ptr + rr, mask=row_ok, other=0)
    ok = row_ok[:, None] & (rl[None, :] < n[:, None])
    ptrs = rr[:, None].to(tl.int64) * L + rl[None, :]
    dy = tl.load(dy_ptr + ptrs, mask=ok, other=0.0).to(tl.float32)
    dx = tl.cumsum(dy, axis=1, reverse=True)
    tl.store(dx_ptr + ptrs, dx.to(tl.bfloat16), mask=row_ok[:, None])


R_, L_ = 32766, 2048
KERNEL = cumsum_bwd_kernel
SIGNATURE = {"dy_ptr": "*bf16", "len_ptr": "*i32", "dx_ptr": "*bf16", "R": "i32"}
CONSTEXPRS = {"L": L_, "ROWS": 4}
SCALARS = {"R": R_}
TENSORS = {"dy_ptr": [R_, L_], "len_ptr": ([R_], ("randint", 1, L_ + 1)), "dx_ptr": [R_, L_]}
GRID = ((R_ + 3) // 4,)
OPTIONS = {"num_warps": 4}
