"""Segmented running maximum along each row: a (start flag, value) pair scanned with
``tl.associative_scan`` along axis 1 of [4, 2048] bf16 tiles, the maximum restarting where an int8
segment-start flag is set (packed variable-length sequences)."""
import triton
import triton.language as tl


@triton.jit
def _seg_max(f1, v1, f2, v2):
    return f1 | f2, tl.where(f2 != 0, v2, tl.maximum(v1, v2))


@triton.jit
def segmented_cummax_kernel(x_ptr, flag_ptr, y_ptr, R, BR: tl.constexpr, L: tl.constexpr):
    rows = tl.program_id(0) * BR + tl.arange(0, BR)
    offs = rows[:, None] * L + tl.arange(0, L)[None, :]
    ok = rows[:, None] < R
    x = tl.load(x_ptr + offs, mask=ok, other=0.0).to(tl.float32)
    f = (tl.load(flag_ptr + offs, mask=ok, other=0) == 0).to(tl.int32)
    _, m = tl.associative_scan((f, x), axis=1, combine_fn=_seg_max)
    tl.store(y_ptr + offs, m.to(tl.bfloat16), mask=ok)


R_, L_ = 8190, 2048
KERNEL = segmented_cummax_kernel
SIGNATURE = {"x_ptr": "*bf16", "flag_ptr": "*i8", "y_ptr": "*bf16", "R": "i32"}
CONSTEXPRS = {"BR": 4, "L": L_}
SCALARS = {"R": R_}
TENSORS = {"x_ptr": [R_, L_], "flag_ptr": ([R_, L_], ("randint", 0, 64)), "y_ptr": [R_, L_]}
GRID = ((R_ + 3) // 4,)
OPTIONS = {"num_warps": 8}
