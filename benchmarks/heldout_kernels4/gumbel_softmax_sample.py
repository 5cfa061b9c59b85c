"""Gumbel-softmax sampling over a vocabulary: per row, Gumbel noise -log(-log(u)) from ``tl.rand(seed,
offset)`` added to the bf16 logits / temperature; a first pass over 4096-wide chunks keeps the running max,
the rescaled sum and the argmax (the hard sample, int32); a second pass writes the soft sample
softmax((logits + g) / tau) in bf16; 8 warps."""
import triton
import triton.language as tl


@triton.jit
def _perturbed(logits_ptr, row, cols, V, seed, inv_tau):
    ok = cols < V
    x = tl.load(logits_ptr + row.to(tl.int64) * V + cols, mask=ok, other=float("-inf")).to(tl.float32)
    u = tl.rand(seed, row * V + cols)
    u = tl.minimum(tl.maximum(u, 1e-10), 1.0 - 1e-7)
    g = -tl.log(-tl.log(u))
    return tl.where(ok, (x + g) * inv_tau, float("-inf"))


@triton.jit
def gumbel_softmax_kernel(logits_ptr, soft_ptr, hard_ptr, V, seed, inv_tau, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols0 = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    best = tl.full([BLOCK], 0, dtype=tl.int32)
    for v0 in range(0, V, BLOCK):
        cols = v0 + cols0
        z = _perturbed(logits_ptr, row, cols, V, seed, inv_tau)
        m_new = tl.maximum(m, z)
        best = tl.where(z > m, cols, best)
        s = s * tl.exp(m - m_new) + tl.where(z == float("-inf"), 0.0, tl.exp(z - m_new))
        m = m_new
    m_row, lane = tl.max(m, axis=0, return_indices=True)
    hard = tl.sum(tl.where(cols0 == lane, best, 0), axis=0)
    total = tl.sum(s * tl.exp(m - m_row), axis=0)
    tl.store(hard_ptr + row, hard)
    for v0 in range(0, V, BLOCK):
        cols = v0 + cols0
        z = _perturbed(logits_ptr, row, cols, V, seed, inv_tau)
        tl.store(soft_ptr + row.to(tl.int64) * V + cols, (tl.exp(z - m_row) / total).to(tl.bfloat16), mask=cols < V)


R_, V_ = 512, 128256
KERNEL = gumbel_softmax_kernel
SIGNATURE = {"logits_ptr": "*bf16", "soft_ptr": "*bf16", "hard_ptr": "*i32", "V": "i32", "seed": "i32",
             "inv_tau": "fp32"}
CONSTEXPRS = {"BLOCK": 4096}
SCALARS = {"V": V_, "seed": 1234, "inv_tau": 1.0 / 0.7}
TENSORS = {"logits_ptr": [R_, V_], "soft_ptr": [R_, V_], "hard_ptr": [R_]}
GRID = (R_,)
OPTIONS = {"num_warps": 8}
