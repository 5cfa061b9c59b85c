"""Confusion matrix of a classifier over a large evaluation set: int16 labels and predictions (32 classes)
combined into label * 32 + pred, a 1024-bin ``tl.histogram`` of 8192 pairs per program (tail masked through
its ``mask``), ``tl.reshape``-d to [32, 32] and merged into the int32 matrix with ``tl.atomic_add``."""
import triton
import triton.language as tl


@triton.jit
def confusion_matrix_kernel(label_ptr, pred_ptr, conf_ptr, N, BLOCK: tl.constexpr, C: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < N
    lab = tl.load(label_ptr + offs, mask=ok, other=0).to(tl.int32)
    pred = tl.load(pred_ptr + offs, mask=ok, other=0).to(tl.int32)
    hist = tl.histogram(lab * C + pred, C * C, mask=ok)
    h2 = tl.reshape(hist, [C, C])
    rc = tl.arange(0, C)
    tl.atomic_add(conf_ptr + rc[:, None] * C + rc[None, :], h2, mask=h2 > 0, sem="relaxed")


N_, C_ = 60_000_000, 32
KERNEL = confusion_matrix_kernel
SIGNATURE = {"label_ptr": "*i16", "pred_ptr": "*i16", "conf_ptr": "*i32", "N": "i32"}
CONSTEXPRS = {"BLOCK": 8192, "C": C_}
SCALARS = {"N": N_}
TENSORS = {"label_ptr": ([N_], ("randint", 0, C_)), "pred_ptr": ([N_], ("randint", 0, C_)),
           "conf_ptr": ([C_, C_], "zeros")}
GRID = ((N_ + 8191) // 8192,)
OPTIONS = {"num_warps": 8}
