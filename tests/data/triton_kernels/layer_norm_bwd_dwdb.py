"""Layer norm backward, final dW / dB (Triton tutorial 05): column sums of the partial buffers,
a [32, 128] tile accumulated down the rows and reduced along axis 0."""
import triton
import triton.language as tl


@triton.jit
def layer_norm_bwd_dwdb_kernel(DW, DB, FINAL_DW, FINAL_DB, M, N,
                               BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_SIZE_M):
        rows = i + tl.arange(0, BLOCK_SIZE_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + offs, mask=mask, other=0.0).to(tl.float32)
        db += tl.load(DB + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(FINAL_DW + cols, tl.sum(dw, axis=0).to(tl.float16), mask=cols < N)
    tl.store(FINAL_DB + cols, tl.sum(db, axis=0).to(tl.float16), mask=cols < N)


KERNEL = layer_norm_bwd_dwdb_kernel
SIGNATURE = {"DW": "*fp16", "DB": "*fp16", "FINAL_DW": "*fp16", "FINAL_DB": "*fp16", "M": "i32", "N": "i32"}
CONSTEXPRS = {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 128}
SCALARS = {"M": 128, "N": 4096}
TENSORS = {"DW": [128, 4096], "DB": [128, 4096], "FINAL_DW": [4096], "FINAL_DB": [4096]}
GRID = (32,)
OPTIONS = {"num_warps": 4, "num_stages": 3}
