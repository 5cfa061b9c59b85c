"""Layer norm backward, dX fused with the partial dW / dB sums (Triton tutorial 05): rows of a
group accumulate into one buffer row under a spin lock (``atomic_cas`` / ``atomic_xchg``)."""
import triton
import triton.language as tl


@triton.jit
def layer_norm_bwd_dx_kernel(DX, DY, DW, DB, X, W, Mean, Rstd, Lock, stride, N,
                             GROUP_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    group = row % GROUP_SIZE_M
    Lock += group
    Count = Lock + GROUP_SIZE_M
    DW = DW + group * N + cols
    DB = DB + group * N + cols
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = tl.where(mask, (x - mean) * rstd, 0.0)
    wdy = tl.where(mask, w * dy, 0.0)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(DX + cols, dx.to(tl.float16), mask=mask)
    partial_dw = (dy * xhat).to(tl.float16)
    partial_db = dy.to(tl.float16)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(Lock, 0)


KERNEL = layer_norm_bwd_dx_kernel
SIGNATURE = {"DX": "*fp16", "DY": "*fp16", "DW": "*fp16", "DB": "*fp16", "X": "*fp16", "W": "*fp16",
             "Mean": "*fp32", "Rstd": "*fp32", "Lock": "*i32", "stride": "i32", "N": "i32"}
CONSTEXPRS = {"GROUP_SIZE_M": 128, "BLOCK_SIZE_N": 4096}
SCALARS = {"stride": 4096, "N": 4096}
TENSORS = {"DX": [4096, 4096], "DY": [4096, 4096], "DW": [128, 4096], "DB": [128, 4096], "X": [4096, 4096],
           "W": [4096], "Mean": [4096], "Rstd": [4096], "Lock": ([256], "zeros")}
GRID = (4096,)
OPTIONS = {"num_warps": 8, "num_stages": 3}
