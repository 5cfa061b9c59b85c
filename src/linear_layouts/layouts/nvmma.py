"""``NVMMADistributedLayout``: Triton's ``#ttg.nvidia_mma`` (Ampere ``mma`` v2, Hopper ``wgmma`` v3)
accumulator layout, and the layouts of its dot operands.

Inside one warp, an MMA tile of ``m x n`` accumulators is split as: ``k_width`` = 2 consecutive
registers along the inner dim, 4 lanes along the inner dim, 8 lanes along the outer dim, then
``m / 8`` register repeats along the outer dim and ``n / 8`` along the inner dim (Triton's
``nvidiaMmaTile``). Warps tile the CTA row-major (Ampere) or column-major (Hopper).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from linear_layouts.layouts.base import (
    Bases,
    DistributedLayout,
    check_cga_layout,
    check_int,
    check_int_tuple,
    check_power_of_two,
    check_shape,
    combine_cta_cga_with_shape,
    freeze_fields,
    get_matrix_order,
    get_order_for_dot_operand,
    identity_standard_nd,
    standard_out_dim_names,
)
from linear_layouts.layouts.blocked import broadcasted_dot_operand_layout, dot_operand_cga_layout
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.layouts.ttgir_text import CGA_KEYS, cga_bases, cga_text, fields, ints
from linear_layouts.layouts.registry import LayoutKind, Space, register

__all__ = ["NVMMADistributedLayout", "nvidia_mma_tile"]


def nvidia_mma_tile(
    tile_shape: Sequence[int], k_width: int, order: Sequence[int], rep_order: Sequence[int]
) -> LinearLayout:
    """Triton's ``nvidiaMmaTile``: one warp's ``tile_shape`` tile; out dims listed in ``rep_order``.

    inner = ``order[0]``, outer = ``order[1]``: ``id(k_width, register, inner) * id(4, lane, inner)
    * id(8, lane, outer) * id(m/8, register, outer) * id(n/(4 k_width), register, inner)``.

    >>> L = nvidia_mma_tile([16, 8], 2, [1, 0], [1, 0])
    >>> L.out_dim_names, L.bases["register"]
    (('dim1', 'dim0'), [[1, 0], [0, 8]])
    """
    rank = len(rep_order)
    names = standard_out_dim_names(rank)
    inner, outer = order[0], order[1]
    m, n = tile_shape[outer], tile_shape[inner]
    if m % 8 != 0:
        raise LayoutError(f"instr_shape: the MMA tile's outer extent must be a multiple of 8, got {m}")
    if n % (k_width * 4) != 0:
        raise LayoutError(f"instr_shape: the MMA tile's inner extent must be a multiple of 4*k_width={4 * k_width}, got {n}")
    layout = identity_standard_nd("register", [1] * rank, rep_order)
    layout = (
        layout
        * LinearLayout.identity_1d(k_width, "register", names[inner])
        * LinearLayout.identity_1d(4, "lane", names[inner])
        * LinearLayout.identity_1d(8, "lane", names[outer])
        * LinearLayout.identity_1d(m // 8, "register", names[outer])
        * LinearLayout.identity_1d(n // (k_width * 4), "register", names[inner])
    )
    return layout


@dataclass(frozen=True)
class NVMMADistributedLayout(DistributedLayout):
    """NVIDIA MMA accumulator layout: ``version`` [2, x] (Ampere mma.sync) or [3, x] (Hopper wgmma);
    ``instr_shape`` is the per-warp tile [m, n] (Ampere; [1, m, n] for rank 3) or [M, N, K] (Hopper).

    >>> L = NVMMADistributedLayout([2, 0], [1, 1], [16, 8]).to_linear([16, 16])
    >>> L.bases["register"], L.bases["lane"]
    ([[0, 1], [8, 0], [0, 8]], [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]])
    """

    version: tuple[int, ...]
    warps_per_cta: tuple[int, ...]
    instr_shape: tuple[int, ...]
    cga_layout: Bases = field(default_factory=tuple)

    def __post_init__(self) -> None:
        version = check_int_tuple("version", self.version, length=2, minimum=0)
        if version[0] not in (2, 3):
            raise LayoutError(
                f"version[0] must be 2 (Ampere) or 3 (Hopper); Volta (1) is no longer supported, got {version[0]}"
            )
        warps = check_int_tuple("warps_per_cta", self.warps_per_cta, power_of_two=True)
        rank = len(warps)
        if rank < 2:
            raise LayoutError(f"warps_per_cta must have at least 2 entries (MMA layouts have rank >= 2), got {rank}")
        instr = check_int_tuple("instr_shape", self.instr_shape, power_of_two=True)
        if version[0] == 2 and len(instr) != rank:
            raise LayoutError(f"instr_shape of an Ampere (v2) layout must have {rank} entries (the rank), got {len(instr)}")
        if version[0] == 3:
            if rank != 2:
                raise LayoutError(f"warps_per_cta of a Hopper (v3) layout must have 2 entries (rank 2), got {rank}")
            if len(instr) not in (2, 3):
                raise LayoutError(f"instr_shape of a Hopper (v3) layout must be [M, N, K], got {list(instr)}")
        freeze_fields(
            self,
            version=version,
            warps_per_cta=warps,
            instr_shape=instr,
            cga_layout=check_cga_layout("cga_layout", self.cga_layout, rank),
        )
        self._tile_shape()  # validates the tile

    @property
    def rank(self) -> int:
        """Number of tensor dims."""
        return len(self.warps_per_cta)

    @property
    def is_ampere(self) -> bool:
        """True for version [2, x] (mma.sync)."""
        return self.version[0] == 2

    @property
    def is_hopper(self) -> bool:
        """True for version [3, x] (wgmma)."""
        return self.version[0] == 3

    def _tile_shape(self) -> tuple[int, ...]:
        tile = self.instr_shape if self.is_ampere else self.instr_shape[:2]
        m, n = tile[-2], tile[-1]
        if m % 8 != 0 or n % 8 != 0:
            raise LayoutError(f"instr_shape: the per-warp tile [m, n] must be multiples of 8, got {[m, n]}")
        return tuple(tile)

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        """Triton's ``NvidiaMmaEncodingAttr::toLinearLayout``."""
        shape = check_shape(shape, self.rank)
        rank = self.rank
        order = get_matrix_order(rank, row_major=True)
        cta = nvidia_mma_tile(self._tile_shape(), 2, order, order)
        warp_order = get_matrix_order(rank, row_major=not self.is_hopper)
        warps = identity_standard_nd("warp", self.warps_per_cta, warp_order)
        cta = cta * warps.transpose_outs(list(cta.out_dim_names))
        return combine_cta_cga_with_shape(cta, self.cga_layout, shape)

    def dot_operand_to_linear(self, operand_index: int, k_width: int, shape: Sequence[int]) -> LinearLayout:
        """Triton's ``nvidiaDotToLinearLayout``: operand A tiles m x 8k_width (m = the parent's per-warp M),
        B (Ampere only) 8k_width x 8; warps broadcast along K.

        >>> P = NVMMADistributedLayout([2, 0], [1, 1], [16, 8])
        >>> P.dot_operand_to_linear(0, 8, [16, 64]).bases["register"][:3]
        [[0, 1], [0, 2], [0, 4]]
        """
        shape = check_shape(shape, self.rank)
        operand_index = check_int("operand_index", operand_index)
        if operand_index not in (0, 1):
            raise LayoutError(f"operand_index must be 0 or 1, got {operand_index}")
        k_width = check_power_of_two("k_width", k_width)
        rank = self.rank
        is_a = operand_index == 0
        tile = [1] * rank
        if is_a:  # the A tile spans the parent's per-warp M (16 for mma.sync m16n8k*)
            tile[rank - 2], tile[rank - 1] = self._tile_shape()[-2], k_width * 8
        else:
            if self.is_hopper:
                raise LayoutError("operand_index: a Hopper (v3) MMA takes operand B (1) from shared memory, not registers")
            tile[rank - 2], tile[rank - 1] = k_width * 8, 8
        order = get_order_for_dot_operand(operand_index, rank, k_contig=True)
        cta = nvidia_mma_tile(tile, k_width, order, order)  # rep order = getOrderForDotOperand(.., kContig)
        k_dim = rank - 1 if is_a else rank - 2
        warp_order = get_matrix_order(rank, row_major=not self.is_hopper)
        warps = broadcasted_dot_operand_layout(self.warps_per_cta, warp_order, k_dim, "warp")
        cta = cta * warps.transpose_outs(list(cta.out_dim_names))
        return combine_cta_cga_with_shape(cta, dot_operand_cga_layout(self.cga_layout, operand_index, rank), shape)


# --------------------------------------------------------------------------------------------------
# its kind: #ttg.nvidia_mma, gl.NVMMADistributedLayout
# --------------------------------------------------------------------------------------------------


def _parse_ttgir(body: dict) -> NVMMADistributedLayout:
    b = fields(body, "nvidia_mma layout", ("versionMajor", "warpsPerCTA", "instrShape"), ("versionMinor", *CGA_KEYS))
    return NVMMADistributedLayout([b["versionMajor"], b.get("versionMinor", 0)], b["warpsPerCTA"], b["instrShape"],
                                  cga_bases(b, len(b["warpsPerCTA"])))


def _format_ttgir(layout: NVMMADistributedLayout) -> str:
    return (f"#ttg.nvidia_mma<{{versionMajor = {layout.version[0]}, versionMinor = {layout.version[1]}, "
            f"warpsPerCTA = {ints(layout.warps_per_cta)}{cga_text(layout.cga_layout)}, "
            f"instrShape = {ints(layout.instr_shape)}}}>")


register(LayoutKind(NVMMADistributedLayout, Space.DISTRIBUTED, "ttg.nvidia_mma", _parse_ttgir, _format_ttgir, rank=1))
