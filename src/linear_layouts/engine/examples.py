"""Example tile programs of the issue: each builds a :class:`~linear_layouts.engine.ir.Program`.

``dot_trans_store`` (a), ``row_softmax`` (b: reduce -> expand_dims -> broadcast), ``mxfp4_matmul``
(c: §5.2 mixed precision), ``welford`` (d: two descriptors of one layout), ``gather_rows`` and
``split_join``. ``REFERENCE`` gives each one's NumPy meaning for the device check.

>>> len(dot_trans_store().ops)
8
"""

from __future__ import annotations

from linear_layouts.layouts import BlockedLayout, SliceLayout
from linear_layouts.engine.ir import Builder, Program

__all__ = ["dot_trans_store", "row_softmax", "mxfp4_matmul", "welford", "split_join", "gather_rows", "EXAMPLES"]


def dot_trans_store(m: int = 64, n: int = 64, k: int = 32, *, mma_version: int = 2, num_warps: int = 4) -> Program:
    """(a) ``c = a @ b`` stored transposed: ``out[j, i] = c[i, j]``."""
    b = Builder(num_warps=num_warps)
    x = b.load(b.pointer("a", [m, k], "fp16"))
    y = b.load(b.pointer("b", [k, n], "fp16"))
    c = b.dot(x, y, mma_version=mma_version)
    b.store(b.pointer("out", [n, m], "fp32"), b.trans(c, [1, 0]))
    return b.build()


def row_softmax(m: int = 64, n: int = 128, *, num_warps: int = 4) -> Program:
    """(b) ``out = exp2(x - max(x, 1)) / sum(exp2(..), 1)``: reduce -> expand_dims -> broadcast twice."""
    b = Builder(num_warps=num_warps)
    x = b.load(b.pointer("x", [m, n], "fp32"))
    mx = b.broadcast(b.expand_dims(b.reduce(x, 1, "max"), 1), [m, n])
    e = b.elementwise("exp2", b.elementwise("sub", x, mx))
    s = b.broadcast(b.expand_dims(b.reduce(e, 1, "add"), 1), [m, n])
    b.store(b.pointer("out", [m, n], "fp32"), b.elementwise("div", e, s))
    return b.build()


def mxfp4_matmul(m: int = 64, n: int = 64, k: int = 128, *, mma_version: int = 2, num_warps: int = 4) -> Program:
    """(c) ``a (bf16) @ (b (mxfp4) * scale)``: ``b`` packed two e2m1 nibbles per byte along K (low first),
    one e8m0 scale per 32 K-elements of each column, ``scale`` stored ``[N, K/32]``. With wgmma
    (``mma_version=3``) the upcast operand must be A, so the program computes ``(b^T @ a^T)^T``. The upcast is
    join -> trans -> reshape of the nibbles; the scales reach ``[K, N]`` by reshape / broadcast / trans."""
    b = Builder(num_warps=num_warps)
    a = b.load(b.pointer("a", [m, k], "bf16"))
    packed = b.load(b.pointer("b_packed", [k // 2, n], "u8"))
    lo = b.elementwise("and", packed, b.full([k // 2, n], 15, "u8"))
    hi = b.elementwise("shr", packed, b.full([k // 2, n], 4, "u8"))
    nibbles = b.reshape(b.trans(b.join(lo, hi), [0, 2, 1]), [k, n])
    values = b.elementwise("fp4_to_fp", nibbles, dtype="bf16")
    scale = b.elementwise("e8m0_to_fp", b.load(b.pointer("b_scale", [n, k // 32], "u8")), dtype="bf16")
    scale = b.reshape(b.broadcast(b.reshape(scale, [n, k // 32, 1]), [n, k // 32, 32]), [n, k])
    scaled = b.elementwise("mul", values, b.trans(scale, [1, 0]))
    if mma_version == 2:
        c = b.dot(a, scaled, mma_version=2)
    else:  # wgmma reads only A from registers: out^T = scaled^T @ a^T
        c = b.trans(b.dot(b.trans(scaled, [1, 0]), b.trans(a, [1, 0]), mma_version=3), [1, 0])
    b.store(b.pointer("out", [m, n], "fp32"), c)
    return b.build()


def welford(m: int = 64, n: int = 64, *, num_warps: int = 4) -> Program:
    """(d) mean and variance per row, with the user converting the row statistics to a 1-D
    ``BlockedLayout`` that is the same LinearLayout as the reduction's ``SliceLayout``."""
    b = Builder(num_warps=num_warps)
    x = b.load(b.pointer("x", [m, n], "fp32"))
    parent = BlockedLayout([m // 32, 1], [32, 1], [1, num_warps], [0, 1])
    same = BlockedLayout([m // 32], [32], [num_warps], [0])  # == SliceLayout(1, parent) on [m], m >= 32
    x = b.convert_layout(x, parent)
    mean = b.convert_layout(b.reduce(x, 1, "add"), same)
    mean = b.elementwise("div", mean, b.full([m], n, "fp32"))
    d = b.elementwise("sub", x, b.broadcast(b.expand_dims(b.convert_layout(mean, SliceLayout(1, parent)), 1), [m, n]))
    var = b.elementwise("div", b.convert_layout(b.reduce(b.elementwise("mul", d, d), 1, "add"), same), b.full([m], n, "fp32"))
    b.store(b.pointer("mean", [m], "fp32"), mean)
    b.store(b.pointer("var", [m], "fp32"), var)
    return b.build()


def split_join(m: int = 64, n: int = 64, *, num_warps: int = 4) -> Program:
    """Even / odd columns swapped: reshape -> split -> join(odd, even) -> reshape."""
    b = Builder(num_warps=num_warps)
    x = b.load(b.pointer("x", [m, n], "fp16"))
    even, odd = b.split(b.reshape(x, [m, n // 2, 2]))
    b.store(b.pointer("out", [m, n], "fp16"), b.reshape(b.join(odd, even), [m, n]))
    return b.build()


def gather_rows(m: int = 32, n: int = 32, *, num_warps: int = 4) -> Program:
    """``out[i, j] = x[i, idx[i, j]]``, then scaled by the row sum of ``out``."""
    b = Builder(num_warps=num_warps)
    x = b.load(b.pointer("x", [m, n], "fp32"))
    idx = b.load(b.pointer("idx", [m, n], "i32"))
    g = b.gather(x, idx, 1)
    s = b.broadcast(b.expand_dims(b.reduce(g, 1, "add"), 1), [m, n])
    b.store(b.pointer("out", [m, n], "fp32"), b.elementwise("mul", g, s))
    return b.build()


EXAMPLES = {
    "dot_trans_store": dot_trans_store,
    "row_softmax": row_softmax,
    "mxfp4_matmul": mxfp4_matmul,
    "welford": welford,
    "split_join": split_join,
    "gather_rows": gather_rows,
}
