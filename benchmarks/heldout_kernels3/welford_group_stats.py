"""Per-group mean and variance with a Welford merge: a [GROUPS_PER_PROG, 512] fp16 tile of (count, mean,
M2) triples reduced along axis 1 by ``tl.reduce`` with a three-operand combine; fp32 outputs."""
import triton
import triton.language as tl


@triton.jit
def _welford(m1, s1, n1, m2, s2, n2):
    n = n1 + n2
    d = m2 - m1
    w = tl.where(n == 0, 0.0, n2 / tl.where(n == 0, 1.0, n))
    return m1 + d * w, s1 + s2 + d * d * n1 * w, n


@triton.jit
def welford_group_stats_kernel(x_ptr, mean_ptr, var_ptr, G, L, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    g = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    c = tl.arange(0, BLOCK)
    ok = (g[:, None] < G) & (c[None, :] < L)
    x = tl.load(x_ptr + g[:, None].to(tl.int64) * L + c[None, :], mask=ok, other=0.0).to(tl.float32)
    n = ok.to(tl.float32)
    zero = tl.zeros_like(x)
    mean, m2, cnt = tl.reduce((x, zero, n), 1, _welford)
    tl.store(mean_ptr + g, mean, mask=g < G)
    tl.store(var_ptr + g, m2 / tl.maximum(cnt, 1.0), mask=g < G)


GROUPS, LEN = 262144, 480
KERNEL = welford_group_stats_kernel
SIGNATURE = {"x_ptr": "*fp16", "mean_ptr": "*fp32", "var_ptr": "*fp32", "G": "i32", "L": "i32"}
CONSTEXPRS = {"ROWS": 8, "BLOCK": 512}
SCALARS = {"G": GROUPS, "L": LEN}
TENSORS = {"x_ptr": [GROUPS, LEN], "mean_ptr": [GROUPS], "var_ptr": [GROUPS]}
GRID = (GROUPS // 8,)
OPTIONS = {"num_warps": 4}
