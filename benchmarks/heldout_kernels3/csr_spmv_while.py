"""Sparse matrix (rows padded to a fixed stride, each with its own length, as ELLPACK-R keeps them) times a
dense vector, one row per program: a ``while`` loop (``scf.while``) walks the row's nonzeros in 128-wide
chunks, gathering x at the column indices; fp32, int32 indices."""
import triton
import triton.language as tl


@triton.jit
def csr_spmv_kernel(len_ptr, col_ptr, val_ptr, x_ptr, y_ptr, row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    start = row * row_stride
    end = start + tl.load(len_ptr + row)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    offs = tl.arange(0, BLOCK)
    i = start
    while i < end:
        ok = i + offs < end
        c = tl.load(col_ptr + i + offs, mask=ok, other=0)
        v = tl.load(val_ptr + i + offs, mask=ok, other=0.0)
        acc += v * tl.load(x_ptr + c, mask=ok, other=0.0)
        i += BLOCK
    tl.store(y_ptr + row, tl.sum(acc, axis=0))


ROWS, COLS, STRIDE = 1 << 18, 1 << 20, 256
KERNEL = csr_spmv_kernel
SIGNATURE = {"len_ptr": "*i32", "col_ptr": "*i32", "val_ptr": "*fp32", "x_ptr": "*fp32", "y_ptr": "*fp32",
             "row_stride": "i32"}
CONSTEXPRS = {"BLOCK": 128}
SCALARS = {"row_stride": STRIDE}
TENSORS = {"len_ptr": ([ROWS], ("randint", 0, STRIDE + 1)), "col_ptr": ([ROWS * STRIDE], ("randint", 0, COLS)),
           "val_ptr": [ROWS * STRIDE], "x_ptr": [COLS], "y_ptr": [ROWS]}
GRID = (ROWS,)
OPTIONS = {"num_warps": 4}
