"""QK RMS norm with int8 quantization (as SageAttention quantizes Q and K) for 4 heads of 64 features,
the heads unrolled with ``tl.static_range``: per head and token, ``q`` and ``k`` are normalized by their
RMS over the head dim, scaled by per-head weights, and rounded to int8 with a per-(token, head) scale
from their absolute maximum; 32 tokens per program. Four reductions along axis 1 per head, 16 in all,
plus the mean of the q scales over the heads."""
import triton
import triton.language as tl


@triton.jit
def many_reductions_kernel(q_ptr, k_ptr, wq_ptr, wk_ptr, q8_ptr, k8_ptr, qs_ptr, ks_ptr, qmean_ptr, eps,
                           H: tl.constexpr, BLOCK_T: tl.constexpr, D: tl.constexpr):
    t = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    d = tl.arange(0, D)
    q_sum = tl.zeros([BLOCK_T], dtype=tl.float32)
    for h in tl.static_range(H):
        offs = t[:, None] * (H * D) + h * D + d[None, :]
        q = tl.load(q_ptr + offs).to(tl.float32)
        k = tl.load(k_ptr + offs).to(tl.float32)
        q = q / tl.sqrt(tl.sum(q * q, axis=1) / D + eps)[:, None] * tl.load(wq_ptr + h * D + d)[None, :]
        k = k / tl.sqrt(tl.sum(k * k, axis=1) / D + eps)[:, None] * tl.load(wk_ptr + h * D + d)[None, :]
        q_scale = tl.maximum(tl.max(tl.abs(q), axis=1), 1e-12) / 127.0
        k_scale = tl.maximum(tl.max(tl.abs(k), axis=1), 1e-12) / 127.0
        q = q / q_scale[:, None]
        k = k / k_scale[:, None]
        tl.store(q8_ptr + offs, (q + tl.where(q >= 0, 0.5, -0.5)).to(tl.int8))
        tl.store(k8_ptr + offs, (k + tl.where(k >= 0, 0.5, -0.5)).to(tl.int8))
        tl.store(qs_ptr + t * H + h, q_scale)
        tl.store(ks_ptr + t * H + h, k_scale)
        q_sum += q_scale
    tl.store(qmean_ptr + t, q_sum / H)


KERNEL = many_reductions_kernel
SIGNATURE = {"q_ptr": "*bf16", "k_ptr": "*bf16", "wq_ptr": "*fp32", "wk_ptr": "*fp32", "q8_ptr": "*i8",
             "k8_ptr": "*i8", "qs_ptr": "*fp32", "ks_ptr": "*fp32", "qmean_ptr": "*fp32", "eps": "fp32"}
CONSTEXPRS = {"H": 4, "BLOCK_T": 32, "D": 64}
SCALARS = {"eps": 1e-6}
TENSORS = {"q_ptr": [8192, 256], "k_ptr": [8192, 256], "wq_ptr": [256], "wk_ptr": [256], "q8_ptr": [8192, 256],
           "k8_ptr": [8192, 256], "qs_ptr": [8192, 4], "ks_ptr": [8192, 4], "qmean_ptr": [8192]}
GRID = (256,)
OPTIONS = {"num_warps": 4, "num_stages": 3}
