"""Tests of catalog/dot_operand.py: DotOperandLayout dispatch and validation (the layouts themselves are
tested with their parents: test_nvmma.py, test_blocked.py, test_amd.py)."""

from __future__ import annotations

import pytest

from linear_layouts import LayoutError
from linear_layouts.layouts import BlockedLayout, DotOperandLayout, NVMMADistributedLayout, SliceLayout


def test_dispatches_to_parent():
    parent = NVMMADistributedLayout([2, 0], [2, 2], [16, 8], [[1, 0], [0, 1]])
    dot = DotOperandLayout(1, parent, 4)
    assert dot.rank == 2
    assert dot.to_linear([64, 32]) == parent.dot_operand_to_linear(1, 4, [64, 32])
    # the operand's CGA keeps the parent's bases with K zeroed (Gluon's DotOperandLayout.cga_layout)
    assert dot.cga_layout == ((0, 0), (0, 1))  # B: K is dim 0
    assert dot.to_linear([64, 32]).bases["block"] == [[0, 0], [0, 16]]


def test_hashable_and_equal_from_lists_or_tuples():
    a = DotOperandLayout(0, BlockedLayout([1, 1], [4, 8], [1, 1], [1, 0]), 0)
    b = DotOperandLayout(0, BlockedLayout((1, 1), (4, 8), (1, 1), (1, 0)), 0)
    assert a == b and hash(a) == hash(b)


@pytest.mark.parametrize(
    "make, rule",
    [
        (lambda: DotOperandLayout(0, SliceLayout(0, BlockedLayout([1, 1, 1], [4, 8, 1], [1, 1, 1], [2, 1, 0])), 0),
         r"parent must be an MMA"),
        (lambda: DotOperandLayout(0, None, 0), r"parent must be a distributed layout"),
        (lambda: DotOperandLayout(-1, BlockedLayout([1, 1], [4, 8], [1, 1], [1, 0]), 0),
         r"operand_index must be 0 \(A\) or 1 \(B\)"),
        (lambda: DotOperandLayout(True, BlockedLayout([1, 1], [4, 8], [1, 1], [1, 0]), 0),
         r"operand_index must be an integer"),
        (lambda: DotOperandLayout(0, BlockedLayout([1, 1], [4, 8], [1, 1], [1, 0]), 1.0),
         r"k_width must be an integer"),
        (lambda: DotOperandLayout(0, BlockedLayout([1], [32], [1], [0]), 0).to_linear([32]),
         r"parent: a dot operand needs a parent of rank >= 2"),
    ],
)
def test_invalid_raise(make, rule):
    with pytest.raises(LayoutError, match=rule):
        make()
