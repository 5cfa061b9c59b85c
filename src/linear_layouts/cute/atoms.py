"""CuTe's MMA atoms as thread-value layouts (CUTLASS ``include/cute/atom/mma_traits_sm80.hpp``,
``mma_traits_sm90_gmma.hpp``).

Each operand's ``TVLayout`` maps ``(thread, value)`` to the colexicographic index of an element of
the operand's tile: A ``(M, K)``, B ``(N, K)`` (CuTe keeps B N-major: ``n + N * k``), C ``(M, N)``.
Through ``to_linear`` they are exactly the catalog's layouts (pinned in tests/cute/test_atoms.py):

========================  =====================================================================
CuTe                      catalog
========================  =====================================================================
``sm80_16x8x16('A')``     ``DotOperandLayout(0, NVMMADistributedLayout([2, 0], [1, 1], [16, 8]), 2)``
``sm80_16x8x16('B')``     the same with operand 1, dims swapped (CuTe's B tile is (N, K))
``sm80_16x8x16('C')``     ``NVMMADistributedLayout([2, 0], [1, 1], [16, 8])`` on [16, 8]
``sm90_64xN_c(N)``        ``NVMMADistributedLayout([3, 0], [4, 1], [16, N, 16])`` on [64, N]
========================  =====================================================================

>>> print(sm80_16x8x16("C"))
TV(16,8) ((4,8),(2,2)):((32,1),(16,8))
"""

from __future__ import annotations

from linear_layouts.cute.layout import Layout, TVLayout
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote

__all__ = ["sm80_16x8x16", "sm90_64xN_c", "SM80_16x8_ROW"]

#: CuTe ``SM80_16x8_Row``: (T32, V4) -> (M16, N8), the m16n8 accumulator (and m16n8k8 A) layout.
SM80_16x8_ROW = Layout(((4, 8), (2, 2)), ((32, 1), (16, 8)))


def sm80_16x8x16(operand: str) -> TVLayout:
    """``SM80_16x8x16_*_TN`` (``mma.sync.aligned.m16n8k16.row.col``, 16-bit A and B): operand
    ``"A"`` (T32, V8) -> (M16, K16), ``"B"`` (T32, V4) -> (N8, K16), ``"C"`` (T32, V4) -> (M16, N8).

    >>> sm80_16x8x16("A").coordinate(5, 7)    # lane 5 = (quad 1, row 1): register 7 holds (m 9, k 11)
    (9, 11)
    """
    if not isinstance(operand, str):
        raise LayoutError(f"operand must be 'A', 'B' or 'C', got {type(operand).__name__}")
    if operand == "A":
        return TVLayout(Layout(((4, 8), (2, 2, 2)), ((32, 1), (16, 8, 128))), (16, 16))
    if operand == "B":
        return TVLayout(Layout(((4, 8), (2, 2)), ((16, 1), (8, 64))), (8, 16))
    if operand == "C":
        return TVLayout(SM80_16x8_ROW, (16, 8))
    raise LayoutError(f"operand must be 'A', 'B' or 'C', got {quote(operand)}")


def sm90_64xN_c(n: int) -> TVLayout:
    """CuTe ``CLayout_64xN``: the wgmma accumulator of a warpgroup, (T128, V N/2) -> (M64, N).

    Requires ``n`` a multiple of 8 (wgmma's N); ``to_linear`` also needs ``n / 8`` a power of two.

    >>> print(sm90_64xN_c(16).layout)
    ((4,8,4),(2,2,2)):((128,1,16),(64,8,512))
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 8 or n % 8 or n > 256:
        raise LayoutError(f"n must be a multiple of 8 from 8 to 256 (wgmma's N), got {quote(n)}")
    return TVLayout(Layout(((4, 8, 4), (2, 2, n // 8)), ((128, 1, 16), (64, 8, 512))), (64, n))
