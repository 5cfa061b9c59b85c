"""``BlockedLayout``: Triton's ``#ttg.blocked`` encoding, and its FMA dot operands.

The CTA tile is ``size_per_thread`` registers, times ``threads_per_warp`` lanes, times ``warps_per_cta``
warps, each filling the dims in ``order`` (most minor first); the CTA tile is then repeated in
registers (or broadcast) to fit the shape, and the CTAs of ``cga_layout`` tile the CGA.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field

from linear_layouts.layouts.base import (
    Bases,
    DistributedLayout,
    check_cga_layout,
    check_int,
    check_int_tuple,
    check_order,
    check_shape,
    combine_cta_cga_with_shape,
    freeze_fields,
    identity_standard_nd,
    standard_out_dim_names,
)
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.layouts.ttgir_text import CGA_KEYS, cga_bases, cga_text, fields, ints
from linear_layouts.layouts.registry import LayoutKind, Space, register

__all__ = ["BlockedLayout", "broadcasted_dot_operand_layout", "dot_operand_cga_layout"]


@dataclass(frozen=True)
class BlockedLayout(DistributedLayout):
    """A blocked layout: ``L = identity_nd(register, size_per_thread) * identity_nd(lane, threads_per_warp)
    * identity_nd(warp, warps_per_cta)`` (each filling ``order``), fit to the shape, times the CGA layout.

    Example (the paper's Fig. 1 Layout A): register 1, lane 9, warp 0 holds element (2, 3) of a 16x16 tensor.

    >>> L = BlockedLayout([2, 2], [4, 8], [2, 1], [1, 0]).to_linear([16, 16])
    >>> L.apply({"register": 1, "lane": 9, "warp": 0})
    {'dim0': 2, 'dim1': 3}
    """

    size_per_thread: tuple[int, ...]
    threads_per_warp: tuple[int, ...]
    warps_per_cta: tuple[int, ...]
    order: tuple[int, ...]
    cga_layout: Bases = field(default_factory=tuple)

    def __post_init__(self) -> None:
        size_per_thread = check_int_tuple("size_per_thread", self.size_per_thread, power_of_two=True)
        rank = len(size_per_thread)
        if rank == 0:
            raise LayoutError("size_per_thread must have at least one entry (the rank)")
        freeze_fields(
            self,
            size_per_thread=size_per_thread,
            threads_per_warp=check_int_tuple("threads_per_warp", self.threads_per_warp, length=rank, power_of_two=True),
            warps_per_cta=check_int_tuple("warps_per_cta", self.warps_per_cta, length=rank, power_of_two=True),
            order=check_order("order", self.order, rank),
            cga_layout=check_cga_layout("cga_layout", self.cga_layout, rank),
        )

    @property
    def rank(self) -> int:
        """Number of tensor dims."""
        return len(self.order)

    def cta_layout(self) -> LinearLayout:
        """The layout of one CTA's tile, before fitting it to a shape: (register, lane, warp) -> dims."""
        return (
            identity_standard_nd("register", self.size_per_thread, self.order)
            * identity_standard_nd("lane", self.threads_per_warp, self.order)
            * identity_standard_nd("warp", self.warps_per_cta, self.order)
        )

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        """Triton's ``BlockedEncodingAttr::toLinearLayout`` (zero register bases kept)."""
        return _blocked_linear(self, check_shape(shape, self.rank))

    def dot_operand_to_linear(self, operand_index: int, k_width: int, shape: Sequence[int]) -> LinearLayout:
        """FMA dot operand (Triton's ``fmaDotToLinearLayout``): each thread holds the whole K extent in
        registers; lanes and warps are broadcast along K.

        >>> B = BlockedLayout([2, 4], [8, 4], [2, 4], [1, 0])
        >>> B.dot_operand_to_linear(0, 0, [32, 16]).bases["lane"]
        [[0, 0], [0, 0], [2, 0], [4, 0], [8, 0]]
        """
        shape = check_shape(shape, self.rank)
        operand_index = check_int("operand_index", operand_index)
        if operand_index not in (0, 1):
            raise LayoutError(f"operand_index must be 0 or 1, got {operand_index}")
        if check_int("k_width", k_width) != 0:
            raise LayoutError(f"k_width must be 0 for a BlockedLayout parent (FMA dot), got {k_width}")
        rank = self.rank
        if rank < 2:
            raise LayoutError("parent: a dot operand needs a parent of rank >= 2")
        k_dim = rank - 1 if operand_index == 0 else rank - 2
        thread_size = list(self.size_per_thread)
        thread_size[k_dim] = shape[k_dim]
        rep_dim_names = [f"dim{d}" for d in self.order]  # BlockedEncodingAttr::getRepOrder() == order
        registers = identity_standard_nd("register", thread_size, self.order)
        lanes = broadcasted_dot_operand_layout(self.threads_per_warp, self.order, k_dim, "lane")
        warps = broadcasted_dot_operand_layout(self.warps_per_cta, self.order, k_dim, "warp")
        cta = (
            registers.transpose_outs(rep_dim_names)
            * lanes.transpose_outs(rep_dim_names)
            * warps.transpose_outs(rep_dim_names)
        )
        return combine_cta_cga_with_shape(cta, dot_operand_cga_layout(self.cga_layout, operand_index, rank), shape)


def broadcasted_dot_operand_layout(
    shape: Sequence[int], order: Sequence[int], k_dim: int, in_dim: str
) -> LinearLayout:
    """Triton's ``broadcastedDotOperandLayout``: ``identity_standard_nd(in_dim, shape, order)`` with the
    ``k_dim`` factor replaced by zeros (lanes / warps of a dot operand are broadcast along K).

    >>> L = broadcasted_dot_operand_layout([2, 2], [1, 0], 1, "warp")
    >>> L.out_dim_names, L.bases["warp"]
    (('dim1', 'dim0'), [[0, 0], [0, 1]])
    """
    names = standard_out_dim_names(len(shape))
    layout = LinearLayout.empty()
    for d in order:
        if d == k_dim:
            layout = layout * LinearLayout.zeros_1d(shape[d], in_dim, names[d])
        else:
            layout = layout * LinearLayout.identity_1d(shape[d], in_dim, names[d])
    return layout


def dot_operand_cga_layout(cga_layout: Bases, operand_index: int, rank: int) -> Bases:
    """The CGA layout of a dot operand: the parent's, with the K coordinate of every basis set to 0.

    >>> dot_operand_cga_layout(((1, 0), (0, 1)), 0, 2)
    ((1, 0), (0, 0))
    """
    k_dim = rank - 1 if operand_index == 0 else rank - 2
    return tuple(tuple(0 if d == k_dim else x for d, x in enumerate(v)) for v in cga_layout)


# --------------------------------------------------------------------------------------------------
# its kind: #ttg.blocked, gl.BlockedLayout
# --------------------------------------------------------------------------------------------------


def _parse_ttgir(body: dict) -> BlockedLayout:
    b = fields(body, "blocked layout", ("sizePerThread", "threadsPerWarp", "warpsPerCTA", "order"), CGA_KEYS)
    return BlockedLayout(b["sizePerThread"], b["threadsPerWarp"], b["warpsPerCTA"], b["order"],
                         cga_bases(b, len(b["order"])))


def _format_ttgir(layout: BlockedLayout) -> str:
    return (f"#ttg.blocked<{{sizePerThread = {ints(layout.size_per_thread)}, threadsPerWarp = "
            f"{ints(layout.threads_per_warp)}, warpsPerCTA = {ints(layout.warps_per_cta)}, order = "
            f"{ints(layout.order)}{cga_text(layout.cga_layout)}}}>")


register(LayoutKind(BlockedLayout, Space.DISTRIBUTED, "ttg.blocked", _parse_ttgir, _format_ttgir, rank=0))


@functools.lru_cache(maxsize=4096)
def _blocked_linear(layout: BlockedLayout, shape: tuple[int, ...]) -> LinearLayout:
    """``layout.to_linear(shape)`` (an immutable value, kept: a kernel's model asks for one layout's many times)."""
    return combine_cta_cga_with_shape(layout.cta_layout(), layout.cga_layout, shape)
