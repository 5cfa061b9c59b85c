"""Fused row softmax (Triton tutorial 02): a persistent loop over rows, one row of up to
``BLOCK_SIZE`` columns per iteration, max and sum reduced across the whole CTA."""
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
    first = tl.program_id(0)
    step = tl.num_programs(0)
    for row in tl.range(first, n_rows, step, num_stages=num_stages):
        cols = tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf"))
        shifted = x - tl.max(x, axis=0)
        num = tl.exp(shifted)
        den = tl.sum(num, axis=0)
        tl.store(out_ptr + row * out_row_stride + cols, num / den, mask=mask)


KERNEL = softmax_kernel
SIGNATURE = {"out_ptr": "*fp32", "in_ptr": "*fp32", "in_row_stride": "i32", "out_row_stride": "i32",
             "n_rows": "i32", "n_cols": "i32"}
CONSTEXPRS = {"BLOCK_SIZE": 1024, "num_stages": 2}
SCALARS = {"in_row_stride": 781, "out_row_stride": 781, "n_rows": 1823, "n_cols": 781}
TENSORS = {"out_ptr": [1823, 781], "in_ptr": [1823, 781]}
GRID = (264,)
OPTIONS = {"num_warps": 8, "num_stages": 2}
