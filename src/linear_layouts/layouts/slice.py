"""``SliceLayout``: Triton's ``#ttg.slice``, the parent layout with one tensor dim removed.

Slicing is how a reduction's result (or the operand of ``expand_dims``) is laid out: every thread keeps
the elements its parent layout gave it, with dimension ``dim`` dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from linear_layouts.layouts.base import (
    Bases,
    DistributedLayout,
    check_int,
    check_shape,
    freeze_fields,
    standard_out_dim_names,
)
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.layouts.ttgir_text import fields, format_attribute, layout_value
from linear_layouts.layouts.registry import LayoutKind, Space, register

__all__ = ["SliceLayout"]


@dataclass(frozen=True)
class SliceLayout(DistributedLayout):
    """``parent.to_linear(shape with 1 inserted at dim)`` with coordinate ``dim`` removed and the
    zero register bases dropped (Triton's ``SliceEncodingAttr::toLinearLayout``).

    >>> from linear_layouts.layouts.blocked import BlockedLayout
    >>> S = SliceLayout(1, BlockedLayout([1, 1], [4, 8], [1, 1], [1, 0]))
    >>> S.to_linear([4]).bases["lane"]
    [[0], [0], [0], [1], [2]]
    """

    dim: int
    parent: DistributedLayout

    def __post_init__(self) -> None:
        if not isinstance(self.parent, DistributedLayout):
            raise LayoutError(f"parent must be a distributed layout, got {type(self.parent).__name__}")
        dim = check_int("dim", self.dim)
        if not 0 <= dim < self.parent.rank:
            raise LayoutError(f"dim must be in [0, {self.parent.rank}) (the parent's rank), got {dim}")
        if self.parent.rank < 2:
            raise LayoutError("parent must have rank >= 2 (a slice removes one dim)")
        freeze_fields(self, dim=dim)

    @property
    def rank(self) -> int:
        """Number of tensor dims: the parent's minus one."""
        return self.parent.rank - 1

    @property
    def cga_layout(self) -> Bases:
        """The parent's CGA bases with coordinate ``dim`` removed (as Gluon's property)."""
        parent_cga = getattr(self.parent, "cga_layout", ())
        return tuple(v[: self.dim] + v[self.dim + 1 :] for v in parent_cga)

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        """The sliced layout: in dims of the parent, out dims ``dim0..dim{rank-1}``."""
        shape = check_shape(shape, self.rank)
        parent_shape = shape[: self.dim] + (1,) + shape[self.dim :]
        parent = self.parent.to_linear(parent_shape)
        bases = {}
        for in_dim, vectors in parent.bases.items():
            sliced = [v[: self.dim] + v[self.dim + 1 :] for v in vectors]
            if in_dim == "register":
                sliced = [v for v in sliced if any(v)]
            bases[in_dim] = sliced
        return LinearLayout(bases, list(standard_out_dim_names(self.rank)))


# --------------------------------------------------------------------------------------------------
# its kind: #ttg.slice, gl.SliceLayout
# --------------------------------------------------------------------------------------------------


def _parse_ttgir(body: dict) -> SliceLayout:
    b = fields(body, "slice layout", ("dim", "parent"), ())
    return SliceLayout(b["dim"], layout_value(b["parent"], "parent"))


def _format_ttgir(layout: SliceLayout) -> str:
    return f"#ttg.slice<{{dim = {layout.dim}, parent = {format_attribute(layout.parent)}}}>"


register(LayoutKind(SliceLayout, Space.DISTRIBUTED, "ttg.slice", _parse_ttgir, _format_ttgir, rank=4))
