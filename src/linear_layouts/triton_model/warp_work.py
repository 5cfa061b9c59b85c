"""What Triton's lowering of ``tt.reduce`` and ``tt.scan`` issues inside the warps, per thread, from the
operand's layout: the combiner's instructions and the ``shfl.sync`` across lanes (the shared-memory part of a
reduction or scan across warps is ``lowering.reduce_lowering_smem`` / ``scan_lowering``'s).

With ``R`` the distinct registers of a thread, ``r`` of their bits along the axis, ``l`` the lane bits along
it, ``w`` the warp bits along it, ``words`` the 32-bit words of the operands and ``c`` the combiner's ops
(each on every word of the widest operand):

* reduce: ``R - R / 2^r`` combines in the thread; then per lane bit one butterfly shuffle of every word of
  the ``R / 2^r`` partials and a combine; across warps, each of the ``max(1, elements / threads)`` rounds
  of the partials shuffles ``w`` times more;
* scan (``r``: only the register bits along the axis below its first lane bit, the thread's group; the
  others are further chunks): the ``R / 2^r`` groups scanned in registers (``R - R / 2^r`` combines), their totals
  shuffled up once per lane bit with a combine and a select, and every register combined with its
  carry (``R`` combines); across warps, every group also shuffles its left neighbour's prefix up.

E.g. a sum of a ``[16, 256]`` f32 tensor along axis 1 in ``blocked([1, 4], [1, 32], [4, 1])``
(``R = 32``, ``r = 3``, ``l = 5``): 28 + 5 x 4 = 48 adds and 20 shuffles per thread.
"""

from __future__ import annotations

from collections.abc import Sequence

from linear_layouts.analysis.op_counts import OpCounts
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout

__all__ = ["reduce_warp_counts", "scan_warp_counts", "combine_ops"]

_REG, _LANE, _WARP = "register", "lane", "warp"


def _bits_along(layout: LinearLayout, dim: str, axis: int) -> int:
    """How many non-zero bases of in dim ``dim`` move along output dim ``axis``."""
    return sum(1 for v in layout.bases.get(dim, []) if any(v) and v[axis])


def _words(bits: Sequence[int]) -> int:
    return sum(max(1, -(-int(b) // 32)) for b in bits)


def _check(layout: LinearLayout, axis: int, bits: Sequence[int], combine: int) -> LinearLayout:
    if not 0 <= axis < layout.num_out_dims:
        raise LayoutError(f"axis: {axis} is not a dim of a rank-{layout.num_out_dims} layout")
    if not bits or any(int(b) <= 0 for b in bits):
        raise LayoutError(f"bits: one positive width per operand, got {list(bits)}")
    if combine < 0:
        raise LayoutError(f"combine: the combiner's op count must be >= 0, got {combine}")
    return layout.remove_zero_bases_along_dim(_REG)


def reduce_warp_counts(layout: LinearLayout, axis: int, bits: Sequence[int], combine: int = 1) -> OpCounts:
    """``shfl`` and ``alu`` per thread of Triton's ``tt.reduce`` along ``axis`` of a tensor in ``layout``
    (operands of ``bits`` each, a combiner of ``combine`` ops): module doc.

    >>> from linear_layouts.layouts import BlockedLayout
    >>> src = BlockedLayout([1, 4], [1, 32], [4, 1], [1, 0]).to_linear([16, 256])
    >>> reduce_warp_counts(src, 1, [32])
    OpCounts(wavefronts=0, shfl=20, alu=48, barriers_cta=0, barriers_warp=0)
    """
    layout = _check(layout, axis, bits, combine)
    regs = layout.in_dim_size(_REG)
    left = regs >> _bits_along(layout, _REG, axis)
    lanes = _bits_along(layout, _LANE, axis)
    warps = _bits_along(layout, _WARP, axis)
    words = _words(bits)
    widest = max(1, -(-max(int(b) for b in bits) // 32))
    per_combine = combine * widest
    shfl = lanes * left * words
    alu = (regs - left) * per_combine + lanes * left * per_combine
    if warps:
        threads = layout.in_dim_size(_LANE) * layout.in_dim_size(_WARP)
        out_elements = layout.total_out_dim_size // layout.out_dim_size(layout.out_dim_names[axis])
        rounds = max(1, (out_elements << warps) // max(1, threads))
        shfl += rounds * warps * words
        alu += rounds * warps * per_combine
    return OpCounts(shfl=shfl, alu=alu)


def scan_warp_counts(layout: LinearLayout, axis: int, bits: Sequence[int], combine: int = 1) -> OpCounts:
    """``shfl`` and ``alu`` per thread of Triton's ``tt.scan`` along ``axis`` (module doc).

    >>> from linear_layouts.layouts import BlockedLayout
    >>> src = BlockedLayout([4], [32], [4], [0]).to_linear([512])
    >>> scan_warp_counts(src, 0, [32])
    OpCounts(wavefronts=0, shfl=6, alu=18, barriers_cta=0, barriers_warp=0)
    """
    layout = _check(layout, axis, bits, combine)
    regs = layout.in_dim_size(_REG)
    steps = [v[axis] for v in layout.bases.get(_LANE, []) if any(v) and v[axis]]
    below = min(steps, default=None)  # a thread's group: its registers' axis bits below the lanes' first
    groups = regs >> sum(1 for v in layout.bases.get(_REG, []) if v[axis] and (below is None or v[axis] < below))
    lanes = len(steps)
    words = _words(bits)
    per_combine = combine * max(1, -(-max(int(b) for b in bits) // 32))
    shfl = lanes * groups * words
    alu = (regs - groups) * per_combine + lanes * groups * (per_combine + 1) + regs * per_combine
    if _bits_along(layout, _WARP, axis):  # each lane takes its left neighbour's prefix across the warps' totals
        shfl += groups * words
        alu += groups * per_combine
    return OpCounts(shfl=shfl, alu=alu)


def combine_ops(op) -> int:
    """The ops of a ``tt.reduce`` / ``tt.scan`` combiner region (its ``*.return`` left out), at least 1."""
    if not op.regions:
        return 1
    return max(1, sum(1 for inner in op.regions[0].ops if not inner.name.endswith(".return")))
