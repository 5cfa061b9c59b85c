"""``DotOperandLayout``: Triton's ``#ttg.dot_op``, the register layout of operand A (0) or B (1) of a dot
whose result has layout ``parent``. Each parent class computes it (``parent.dot_operand_to_linear``):
``NVMMADistributedLayout``, ``AMDMFMALayout``, ``AMDWMMALayout``, and ``BlockedLayout`` (FMA dot).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from linear_layouts.layouts.base import Bases, DistributedLayout, check_int, check_shape, freeze_fields
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.layouts.ttgir_text import fields, format_attribute, layout_value
from linear_layouts.layouts.registry import LayoutKind, Space, register

__all__ = ["DotOperandLayout"]


@dataclass(frozen=True)
class DotOperandLayout(DistributedLayout):
    """Operand ``operand_index`` (0: A of shape [.., M, K]; 1: B of shape [.., K, N]) of a dot with
    result layout ``parent``; ``k_width`` consecutive K elements per thread (0 for a blocked parent).

    >>> from linear_layouts.layouts.nvmma import NVMMADistributedLayout
    >>> A = DotOperandLayout(0, NVMMADistributedLayout([2, 0], [1, 1], [16, 8]), 2)
    >>> A.to_linear([16, 16]).bases["register"]
    [[0, 1], [8, 0], [0, 8]]
    """

    operand_index: int
    parent: DistributedLayout
    k_width: int

    def __post_init__(self) -> None:
        operand_index = check_int("operand_index", self.operand_index)
        if operand_index not in (0, 1):
            raise LayoutError(f"operand_index must be 0 (A) or 1 (B), got {operand_index}")
        if not isinstance(self.parent, DistributedLayout):
            raise LayoutError(f"parent must be a distributed layout, got {type(self.parent).__name__}")
        if type(self.parent).dot_operand_to_linear is DistributedLayout.dot_operand_to_linear:
            raise LayoutError(
                f"parent must be an MMA (NVMMA, AMD MFMA/WMMA) or blocked layout, got {type(self.parent).__name__}"
            )
        k_width = check_int("k_width", self.k_width, minimum=0)
        freeze_fields(self, operand_index=operand_index, k_width=k_width)

    @property
    def rank(self) -> int:
        """Number of tensor dims (the parent's)."""
        return self.parent.rank

    @property
    def cga_layout(self) -> Bases:
        """The parent's CGA bases with the K coordinate set to 0 (as Gluon's property)."""
        parent_cga = getattr(self.parent, "cga_layout", ())
        k_dim = self.rank - 1 if self.operand_index == 0 else self.rank - 2
        return tuple(tuple(0 if d == k_dim else x for d, x in enumerate(v)) for v in parent_cga)

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        """``parent.dot_operand_to_linear(operand_index, k_width, shape)``."""
        shape = check_shape(shape, self.rank)
        return self.parent.dot_operand_to_linear(self.operand_index, self.k_width, shape)


# --------------------------------------------------------------------------------------------------
# its kind: #ttg.dot_op, gl.DotOperandLayout
# --------------------------------------------------------------------------------------------------


def _parse_ttgir(body: dict) -> DotOperandLayout:
    b = fields(body, "dot_op layout", ("opIdx", "parent"), ("kWidth",))
    return DotOperandLayout(b["opIdx"], layout_value(b["parent"], "parent"), b.get("kWidth", 0))


def _format_ttgir(layout: DotOperandLayout) -> str:
    k_width = f", kWidth = {layout.k_width}" if layout.k_width else ""
    return f"#ttg.dot_op<{{opIdx = {layout.operand_index}, parent = {format_attribute(layout.parent)}{k_width}}}>"


register(LayoutKind(DotOperandLayout, Space.DISTRIBUTED, "ttg.dot_op", _parse_ttgir, _format_ttgir, rank=3))
