"""Row-wise log-sum-exp of bf16 [R, V] with a 64-bit row stride (an ``i64`` scalar, as for tensors past 2^31
elements): [2, 4096] tiles over the row in a loop, an online max and rescaled sum per lane, merged along
axis 1 at the end; fp32 out."""
import triton
import triton.language as tl


@triton.jit
def logsumexp_kernel(x_ptr, out_ptr, R, V, stride_row, BR: tl.constexpr, BV: tl.constexpr):
    rows = tl.program_id(0) * BR + tl.arange(0, BR)
    r_ok = rows < R
    row_base = rows.to(tl.int64) * stride_row
    cols0 = tl.arange(0, BV)
    m = tl.full([BR, BV], float("-inf"), dtype=tl.float32)
    s = tl.zeros([BR, BV], dtype=tl.float32)
    for v0 in range(0, V, BV):
        cols = v0 + cols0
        ok = r_ok[:, None] & (cols[None, :] < V)
        x = tl.load(x_ptr + row_base[:, None] + cols[None, :], mask=ok, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        s = s * tl.exp(m - m_safe) + tl.exp(x - m_safe)
        m = m_new
    m_row = tl.max(m, axis=1)
    m_row_safe = tl.where(m_row == float("-inf"), 0.0, m_row)
    total = tl.sum(s * tl.exp(m - m_row_safe[:, None]), axis=1)
    tl.store(out_ptr + rows, m_row_safe + tl.log(total), mask=r_ok)


R_, V_ = 8191, 32000
KERNEL = logsumexp_kernel
SIGNATURE = {"x_ptr": "*bf16", "out_ptr": "*fp32", "R": "i32", "V": "i32", "stride_row": "i64"}
CONSTEXPRS = {"BR": 2, "BV": 4096}
SCALARS = {"R": R_, "V": V_, "stride_row": V_}
TENSORS = {"x_ptr": [R_, V_], "out_ptr": [R_]}
GRID = ((R_ + 1) // 2,)
OPTIONS = {"num_warps": 8}
