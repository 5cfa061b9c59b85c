"""Round three of the differential hunt against triton 3.9: regressions for the differences it found."""

from __future__ import annotations

import pytest

from linear_layouts import LayoutError
from linear_layouts.layouts import TensorMemoryLayout

from .oracle import build_gluon, build_ours, oracle_linear

# Two-CTA blockM = 64 layouts move the tile's last column basis to the rows; with blockN = 1 that basis
# is a zero stride basis when col_stride > 1 (or fp4_padded, stride 2), which triton 3.9 accepts.
TWO_CTA_M64_NARROW = [
    ((64, 1), 4, False, [128, 1]),
    ((64, 1), 2, False, [128, 8]),
    ((64, 1), 1, True, [256, 1]),
    ((64, 2), 2, False, [128, 1]),  # one column per CTA: blockN is clamped to 1
    ((64, 4), 1, True, [256, 1]),
]


@pytest.mark.parametrize("block, col_stride, fp4_padded, shape", TWO_CTA_M64_NARROW)
def test_two_cta_m64_narrow_tiles_with_a_column_stride(block, col_stride, fp4_padded, shape):
    params = ("TensorMemoryLayout", dict(block=block, col_stride=col_stride, cga_layout=[[1, 0]], two_ctas=True,
                                         fp4_padded=fp4_padded))
    ours = build_ours(params).to_linear(shape)
    assert ours.sublayout(["row", "col"], ["dim0", "dim1"]) == oracle_linear(build_gluon(params), shape)


def test_two_cta_m64_without_a_column_basis_still_raises():
    """(64, 1) with col_stride 1 leaves no column basis to move (triton 3.9 aborts)."""
    with pytest.raises(LayoutError, match=r"block: a two_ctas layout with blockM = 64 needs blockN \* col_stride"):
        TensorMemoryLayout((64, 1), 1, [[1, 0]], two_ctas=True)
    with pytest.raises(LayoutError, match=r"shape: a two_ctas layout with blockM = 64 needs at least 2 columns"):
        TensorMemoryLayout((64, 2), 1, [[1, 0]], two_ctas=True).to_linear([128, 1])
