"""AMD matrix-core layouts: ``AMDMFMALayout`` (CDNA, 64-lane waves) and ``AMDWMMALayout`` (RDNA / gfx1250,
32-lane waves), and the layouts of their dot operands.

Both follow Triton's C++ ``toLinearLayout`` (``AMDMfmaEncodingAttr``, ``AMDWmmaEncodingAttr``,
``mfmaDotToLinearLayout``, ``wmmaDotOperandToLinearLayout``) bit for bit: one instruction tile of
registers x lanes, repeated over ``tiles_per_warp`` registers and the warps, fit to the shape, times
the CGA layout. The classes are parameterized exactly as Gluon 3.9's
``triton.experimental.gluon.language.amd`` classes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from linear_layouts.layouts.base import (
    Bases,
    DistributedLayout,
    check_bases,
    check_bool,
    check_cga_layout,
    check_permutation_bases,
    check_int,
    check_int_tuple,
    check_shape,
    combine_cta_cga_with_shape,
    freeze_fields,
    get_matrix_order,
    get_order_for_dot_operand,
    identity_standard_nd,
    is_power_of_two,
    remove_broadcast_registers,
    standard_out_dim_names,
)
from linear_layouts.layouts.blocked import dot_operand_cga_layout
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import quote
from linear_layouts.layouts.ttgir_text import CGA_KEYS, cga_bases, cga_text, fields, flag, ints, linear_text
from linear_layouts.layouts.registry import LayoutKind, Space, register

__all__ = [
    "AMDMFMALayout",
    "AMDWMMALayout",
    "choose_wmma_cta_linear_layout",
    "MFMA_INSTR_SHAPES_MN",
    "WMMA_INSTR_SHAPES",
]

#: CDNA waves have 64 lanes (MFMA); RDNA / gfx1250 waves used by WMMA have 32.
MFMA_WARP_SIZE = 64
WMMA_WARP_SIZE = 32

#: The (M, N) of the MFMA instructions Triton accepts (``AMDMfmaEncodingAttr::verify``).
MFMA_INSTR_SHAPES_MN: tuple[tuple[int, int], ...] = ((32, 32), (16, 16), (64, 4), (4, 64))

#: The (M, N, K) of the WMMA instructions Triton 3.9 accepts, per version (1: RDNA3, 2: RDNA4, 3: gfx1250).
WMMA_INSTR_SHAPES: dict[int, tuple[tuple[int, int, int], ...]] = {
    1: ((16, 16, 16),),
    2: ((16, 16, 16), (16, 16, 32)),
    3: ((16, 16, 4), (16, 16, 32), (16, 16, 64), (16, 16, 128), (32, 16, 64), (32, 16, 128)),
}

#: The ``k_width`` values a WMMA parent accepts (``DotOperandEncodingAttr::verify``); version 3: any power of two.
WMMA_K_WIDTHS: dict[int, tuple[int, ...]] = {1: (8, 16), 2: (4, 8, 16)}


def _check_operand_index(operand_index: object) -> int:
    operand_index = check_int("operand_index", operand_index)
    if operand_index not in (0, 1):
        raise LayoutError(f"operand_index must be 0 (A) or 1 (B), got {operand_index}")
    return operand_index


def _check_rank_2_or_3(name: str, rank: int) -> None:
    if rank not in (2, 3):
        raise LayoutError(f"{name} must have 2 or 3 entries (a matrix, or a batch of matrices), got rank {rank}")


# --------------------------------------------------------------------------------------------------
# MFMA
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AMDMFMALayout(DistributedLayout):
    """The accumulator layout of AMD MFMA instructions (Triton's ``#ttg.amd_mfma``; Gluon's ``AMDMFMALayout``).

    One ``M x N`` instruction tile spreads over the 64 lanes: lanes run along N (along M when
    ``transposed``) and each lane holds 4 consecutive rows (1 for 64-bit elements) of M (of N when
    ``transposed``), repeated in registers to cover the tile. Tiles repeat ``tiles_per_warp`` times in
    registers, then over ``warps_per_cta``; along N first, over the whole tensor, then along M.

    ``version``: 1 gfx908, 2 gfx90a, 3 gfx942, 4 gfx950. ``instr_shape``: (M, N, K) with (M, N) in
    (32, 32), (16, 16), (64, 4) (``transposed`` only) and (4, 64). ``element_bitwidth``: 32 (default) or 64.

    Example (blog 001's 32x32 tile: lane 32 holds rows 4..7 of column 0):

    >>> L = AMDMFMALayout(3, [32, 32, 8], False, [1, 1]).to_linear([32, 32])
    >>> L.bases["register"], L.bases["lane"]
    ([[1, 0], [2, 0], [8, 0], [16, 0]], [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [4, 0]])
    """

    version: int
    instr_shape: tuple[int, ...]
    transposed: bool
    warps_per_cta: tuple[int, ...]
    element_bitwidth: int | None = None
    tiles_per_warp: tuple[int, ...] | None = None
    cga_layout: Bases = field(default_factory=tuple)

    def __post_init__(self) -> None:
        version = check_int("version", self.version)
        if not 1 <= version <= 4:
            raise LayoutError(f"version must be in the [1, 4] range (gfx908 .. gfx950), got {version}")
        instr_shape = check_int_tuple("instr_shape", self.instr_shape, minimum=0)
        if len(instr_shape) != 3:
            raise LayoutError(f"instr_shape must follow the (M, N, K) format, got {list(instr_shape)}")
        if instr_shape[:2] not in MFMA_INSTR_SHAPES_MN:
            allowed = [list(s) for s in MFMA_INSTR_SHAPES_MN]
            raise LayoutError(f"instr_shape: (M, N) must be one of {allowed}, got {list(instr_shape[:2])}")
        transposed = check_bool("transposed", self.transposed)
        if instr_shape[:2] == (64, 4) and not transposed:
            raise LayoutError(
                "transposed must be True for a 64x4 instr_shape (Triton computes 64x4 as a transposed 4x64)"
            )
        warps_per_cta = check_int_tuple("warps_per_cta", self.warps_per_cta, power_of_two=True)
        rank = len(warps_per_cta)
        _check_rank_2_or_3("warps_per_cta", rank)
        element_bitwidth = self.element_bitwidth
        element_bitwidth = 32 if element_bitwidth is None else check_int("element_bitwidth", element_bitwidth)
        if element_bitwidth not in (32, 64):
            raise LayoutError(f"element_bitwidth must be 32 or 64, got {element_bitwidth}")
        if self.tiles_per_warp is None:
            tiles_per_warp = (1,) * rank
        else:
            tiles_per_warp = check_int_tuple(
                "tiles_per_warp", self.tiles_per_warp, length=rank, power_of_two=True
            )
        freeze_fields(
            self,
            version=version,
            instr_shape=instr_shape,
            transposed=transposed,
            warps_per_cta=warps_per_cta,
            element_bitwidth=element_bitwidth,
            tiles_per_warp=tiles_per_warp,
            cga_layout=check_cga_layout("cga_layout", self.cga_layout, rank),
        )

    @property
    def rank(self) -> int:
        """Number of tensor dims (2, or 3 with a leading batch dim)."""
        return len(self.warps_per_cta)

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        """Triton's ``AMDMfmaEncodingAttr::toLinearLayout``: the instruction tile, ``tiles_per_warp`` and the
        warps along N, the register repeats along the rest of N, then ``tiles_per_warp`` and warps along M;
        fit to ``shape`` and times the CGA layout.

        >>> AMDMFMALayout(3, [16, 16, 16], True, [1, 1]).to_linear([16, 16]).bases["lane"]
        [[1, 0], [2, 0], [4, 0], [8, 0], [0, 4], [0, 8]]
        """
        rank = self.rank
        shape = check_shape(shape, rank)
        names = standard_out_dim_names(rank)
        has_batch = rank == 3
        m_index, n_index = int(has_batch), 1 + int(has_batch)
        order = get_matrix_order(rank, row_major=True)  # getDefaultMmaOrder: (N, M[, batch])
        dim_m, dim_n = names[order[1]], names[order[0]]
        m, n = self.instr_shape[0], self.instr_shape[1]
        height = 1 if self.element_bitwidth == 64 else 4
        tiles = (m * n) // (MFMA_WARP_SIZE * height)

        if not self.transposed:
            # Each lane holds `height` rows of M; lanes run along N, then along M.
            tile = LinearLayout.identity_1d(height, "register", dim_m) * (
                LinearLayout.identity_1d(n, "lane", dim_n)
                * LinearLayout.identity_1d(MFMA_WARP_SIZE // n, "lane", dim_m)
            )
            if tiles > 0:
                tile = tile * LinearLayout.identity_1d(tiles, "register", dim_m)
        else:
            tile = LinearLayout.identity_1d(height, "register", dim_n) * (
                LinearLayout.identity_1d(m, "lane", dim_m)
                * LinearLayout.identity_1d(MFMA_WARP_SIZE // m, "lane", dim_n)
            )
            if tiles > 0:
                tile = tile * LinearLayout.identity_1d(tiles, "register", dim_n)
        tile = tile.transpose_outs([dim_n, dim_m])

        # Tiles are N-contiguous over the whole tensor: N tiles, N warps, N repeats, then M.
        tiles_m, tiles_n = self.tiles_per_warp[m_index], self.tiles_per_warp[n_index]
        warps_m, warps_n = self.warps_per_cta[m_index], self.warps_per_cta[n_index]
        tile = tile * LinearLayout.identity_1d(tiles_n, "register", dim_n)
        tile = tile * LinearLayout.identity_1d(warps_n, "warp", dim_n)
        tile = tile * LinearLayout.identity_1d(shape[n_index] // (n * warps_n * tiles_n), "register", dim_n)
        tile = tile * LinearLayout.identity_1d(tiles_m, "register", dim_m)
        tile = tile * LinearLayout.identity_1d(warps_m, "warp", dim_m)
        if has_batch:
            dim_batch = names[order[2]]
            tile = tile * LinearLayout.identity_1d(1, "register", dim_batch)
            tile = tile * LinearLayout.identity_1d(1, "lane", dim_batch)
            tile = tile * LinearLayout.identity_1d(self.warps_per_cta[0], "warp", dim_batch)
        return combine_cta_cga_with_shape(tile, self.cga_layout, shape)

    def check_dot_operand(self, operand_index: int, k_width: int) -> tuple[int, int]:
        """Validate a dot operand of this parent: ``operand_index`` 0 or 1; ``k_width`` a power of two (mandatory)."""
        operand_index = _check_operand_index(operand_index)
        k_width = check_int("k_width", k_width)
        if k_width == 0:
            raise LayoutError("k_width is mandatory (non-zero) for an AMDMFMALayout parent")
        if not is_power_of_two(k_width):
            raise LayoutError(f"k_width must be a power of two, got {k_width}")
        return operand_index, k_width

    def dot_operand_to_linear(self, operand_index: int, k_width: int, shape: Sequence[int]) -> LinearLayout:
        """Triton's ``mfmaDotToLinearLayout``: each lane holds ``k_width`` consecutive K elements; lanes run
        along the non-K dim of the instruction, then along K; the tile repeats along K to cover the
        shape and ``tiles_per_warp`` times along non-K. As in Triton, the warps (``identity_standard_nd``
        over ``warps_per_cta``, last dim first) and the CGA are the parent's, not broadcast along K.

        >>> P = AMDMFMALayout(3, [32, 32, 8], False, [1, 1])
        >>> P.dot_operand_to_linear(0, 4, [32, 8]).bases["lane"]
        [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 4]]
        """
        operand_index, k_width = self.check_dot_operand(operand_index, k_width)
        rank = self.rank
        shape = check_shape(shape, rank)
        names = standard_out_dim_names(rank)
        m, n = self.instr_shape[0], self.instr_shape[1]
        non_k_index = rank - 2 if operand_index == 0 else rank - 1
        k_index = rank - 1 if operand_index == 0 else rank - 2
        non_k = m if operand_index == 0 else n
        order = get_order_for_dot_operand(operand_index, rank, k_contig=True)  # (K, non-K[, batch])
        dim_k, dim_non_k = names[order[0]], names[order[1]]

        tile = LinearLayout.identity_1d(k_width, "register", dim_k) * (
            LinearLayout.identity_1d(non_k, "lane", dim_non_k)
            * LinearLayout.identity_1d(MFMA_WARP_SIZE // non_k, "lane", dim_k)
        )
        k_tile_size = MFMA_WARP_SIZE // non_k * k_width
        # 4x64 / 64x4: the 64-wide operand repeats 16 times along K.
        if (m, n, operand_index) in ((64, 4, 0), (4, 64, 1)):
            tile = tile * LinearLayout.identity_1d(16, "register", dim_k)
            k_tile_size *= 16
        if shape[k_index] > k_tile_size:
            tile = tile * LinearLayout.identity_1d(shape[k_index] // k_tile_size, "register", dim_k)
        tile = tile * LinearLayout.identity_1d(self.tiles_per_warp[non_k_index], "register", dim_non_k)
        tile = tile.transpose_outs([dim_k, dim_non_k])
        if rank == 3:
            tile = tile * LinearLayout.identity_1d(1, "register", names[order[2]])
            tile = tile * LinearLayout.identity_1d(1, "lane", names[order[2]])

        warps = identity_standard_nd("warp", self.warps_per_cta, get_matrix_order(rank, row_major=True))
        return combine_cta_cga_with_shape(tile * warps, self.cga_layout, shape)


# --------------------------------------------------------------------------------------------------
# WMMA
# --------------------------------------------------------------------------------------------------


def choose_wmma_cta_linear_layout(
    rank: int, warps_per_cta: Sequence[int], tiles_per_warp: Sequence[int] | None = None
) -> LinearLayout:
    """Triton's ``chooseWmmaCTALinearLayout``: for dims ``rank-1, .., 0`` (last dim first), ``tiles_per_warp[d]``
    registers then ``warps_per_cta[d]`` warps along ``d``, in units of one WMMA tile.

    It turns the classic ``warpsPerCTA`` / ``tilesPerWarp`` parameters into the ``reg_bases`` / ``warp_bases``
    of 3.9's ``AMDWMMALayout``.

    >>> choose_wmma_cta_linear_layout(2, [2, 4]).bases["warp"]
    [[0, 1], [0, 2], [1, 0]]
    """
    rank = check_int("rank", rank)
    _check_rank_2_or_3("rank", rank)
    warps_per_cta = check_int_tuple("warps_per_cta", warps_per_cta, length=rank, power_of_two=True)
    if tiles_per_warp is None:
        tiles_per_warp = (1,) * rank
    tiles_per_warp = check_int_tuple("tiles_per_warp", tiles_per_warp, length=rank, power_of_two=True)
    names = standard_out_dim_names(rank)
    layout = LinearLayout.empty()
    for d in get_matrix_order(rank, row_major=True):
        layout = layout * LinearLayout.identity_1d(tiles_per_warp[d], "register", names[d])
        layout = layout * LinearLayout.identity_1d(warps_per_cta[d], "warp", names[d])
    return layout.transpose_outs(list(names))


def _check_cta_bases(reg_bases: object, warp_bases: object, rank: int) -> tuple[Bases, Bases]:
    """Validate ``reg_bases`` / ``warp_bases``: ``rank`` entries each, and together, after dropping the zero
    (broadcast) vectors, a permutation matrix: each a single power of two, along each dim 1, 2, 4, ...

    That is Triton's rule for the result (``LinearEncodingAttr`` "requires a permutation matrix layout
    after removing broadcast bases") and the paper's Def. 4.10 (distributed layout) for the CTA layout.
    """
    reg = check_bases("reg_bases", reg_bases, rank)
    warp = check_bases("warp_bases", warp_bases, rank)
    check_permutation_bases(
        {"reg_bases": reg, "warp_bases": warp},
        "together they must span their tile as a permutation matrix, as Triton's LinearEncodingAttr requires",
    )
    return reg, warp


@dataclass(frozen=True)
class AMDWMMALayout(DistributedLayout):
    """The accumulator layout of AMD WMMA instructions (Triton's ``#ttg.amd_wmma``; Gluon's ``AMDWMMALayout``).

    One 16x16 (or 32x16) instruction tile over 32 lanes: version 1 (RDNA3) interleaves rows between the
    two half-waves (each lane holds every other row of M); versions 2 (RDNA4) and 3 (gfx1250) give each
    half-wave 8 consecutive rows. ``transposed`` swaps the roles of M and N inside the tile. The tile is
    repeated by the CTA layout ``reg_bases`` (register repeats) and ``warp_bases`` (one vector per warp
    bit, in units of whole tiles), then fit to the shape and times the CGA layout.

    Defaults as in Gluon: ``reg_bases`` empty, ``instr_shape`` (16, 16, 16), ``rank`` 2.

    >>> L = AMDWMMALayout(2, False, [[0, 1], [0, 2], [1, 0]]).to_linear([32, 64])
    >>> L.bases["warp"], L.bases["lane"][4]
    ([[0, 16], [0, 32], [16, 0]], [8, 0])
    """

    version: int
    transposed: bool
    warp_bases: Bases
    reg_bases: Bases | None = None
    instr_shape: tuple[int, ...] | None = None
    cga_layout: Bases = field(default_factory=tuple)
    rank: int | None = None  # type: ignore[assignment]  # a field here, as in Gluon

    def __post_init__(self) -> None:
        version = check_int("version", self.version)
        if not 1 <= version <= 3:
            raise LayoutError(f"version must be in the [1, 3] range (RDNA3, RDNA4, gfx1250), got {version}")
        transposed = check_bool("transposed", self.transposed)
        rank = 2 if self.rank is None else check_int("rank", self.rank)
        _check_rank_2_or_3("rank", rank)
        instr_shape = self.instr_shape
        instr_shape = (16, 16, 16) if instr_shape is None else check_int_tuple("instr_shape", instr_shape)
        if instr_shape not in WMMA_INSTR_SHAPES[version]:
            raise LayoutError(
                f"instr_shape must be one of {[list(s) for s in WMMA_INSTR_SHAPES[version]]} for WMMA version "
                f"{version}, got {list(instr_shape)}"
            )
        reg_bases = () if self.reg_bases is None else self.reg_bases
        reg_bases, warp_bases = _check_cta_bases(reg_bases, self.warp_bases, rank)
        freeze_fields(
            self,
            version=version,
            transposed=transposed,
            warp_bases=warp_bases,
            reg_bases=reg_bases,
            instr_shape=instr_shape,
            cga_layout=check_cga_layout("cga_layout", self.cga_layout, rank),
            rank=rank,
        )

    @classmethod
    def from_warps_per_cta(
        cls,
        version: int,
        transposed: bool,
        warps_per_cta: Sequence[int],
        tiles_per_warp: Sequence[int] | None = None,
        instr_shape: Sequence[int] | None = None,
        cga_layout: Sequence[Sequence[int]] = (),
    ) -> "AMDWMMALayout":
        """The layout of Triton's classic ``warpsPerCTA`` / ``tilesPerWarp`` parameters (as in Triton's unit
        tests and Triton 3.6's Gluon), through ``choose_wmma_cta_linear_layout``.

        >>> AMDWMMALayout.from_warps_per_cta(2, False, [2, 4]).warp_bases
        ((0, 1), (0, 2), (1, 0))
        """
        warps_per_cta = check_int_tuple("warps_per_cta", warps_per_cta, power_of_two=True)
        cta = choose_wmma_cta_linear_layout(len(warps_per_cta), warps_per_cta, tiles_per_warp)
        bases = cta.bases
        return cls(
            version,
            transposed,
            bases["warp"],
            bases["register"],
            instr_shape,
            cga_layout,
            len(warps_per_cta),
        )

    def classic_parameters(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """``(warps_per_cta, tiles_per_warp)`` such that ``choose_wmma_cta_linear_layout`` gives this layout's
        ``reg_bases`` / ``warp_bases`` (the parameters of Triton 3.6's Gluon class); ``LayoutError`` if none do.

        >>> AMDWMMALayout(2, False, [[0, 1], [0, 2], [1, 0]]).classic_parameters()
        ((2, 4), (1, 1))
        """
        warps = [1] * self.rank
        tiles = [1] * self.rank
        for counts, bases in ((tiles, self.reg_bases), (warps, self.warp_bases)):
            for vector in bases:
                for d, x in enumerate(vector):
                    if x:
                        counts[d] *= 2
        cta = choose_wmma_cta_linear_layout(self.rank, warps, tiles).bases
        if [list(v) for v in self.reg_bases] != cta["register"] or [list(v) for v in self.warp_bases] != cta["warp"]:
            raise LayoutError(
                "warp_bases / reg_bases have no warps_per_cta / tiles_per_warp form (they must walk the last dim "
                "first, registers before warps, without zero bases)"
            )
        return tuple(warps), tuple(tiles)

    def cta_layout(self) -> LinearLayout:
        """``(register, warp) -> dims`` of ``reg_bases`` / ``warp_bases``, in units of instruction tiles
        (Triton's ``getCtaLayout``; out sizes inferred, so it must be surjective)."""
        return LinearLayout(
            {"register": [list(v) for v in self.reg_bases], "warp": [list(v) for v in self.warp_bases]},
            list(standard_out_dim_names(self.rank)),
        )

    def tile_layout(self) -> LinearLayout:
        """One instruction tile: ``(register, lane) -> dims`` (Triton's ``AMDWmmaEncodingAttr::getTileLayout``).

        >>> AMDWMMALayout(1, False, []).tile_layout().bases["register"]
        [[2, 0], [4, 0], [8, 0]]
        """
        rank = self.rank
        names = standard_out_dim_names(rank)
        thread_order = get_matrix_order(rank, row_major=not self.transposed)
        tile_dims = [names[thread_order[0]], names[thread_order[1]]]
        lanes = [[1, 0], [2, 0], [4, 0], [8, 0]]
        if self.version == 1:
            registers = [[0, 2], [0, 4], [0, 8]]
            lanes.append([0, 1])
        else:
            registers = [[0, 1], [0, 2], [0, 4]]
            if self.instr_shape[:2] == (32, 16):  # two 16x16 tiles stacked, in extra registers
                registers.append([0, 16])
            lanes.append([0, 8])
        tile = LinearLayout({"register": registers, "lane": lanes}, tile_dims)
        if rank == 3:
            tile = tile * LinearLayout.identity_1d(1, "register", names[0])
            tile = tile * LinearLayout.identity_1d(1, "lane", names[0])
        return tile.transpose_outs(list(names))

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        """Triton's ``AMDWmmaEncodingAttr::toLinearLayout``: ``tile_layout() * cta_layout()``, fit to ``shape``
        (repeating along the last dim first) and times the CGA layout.

        >>> AMDWMMALayout(1, False, []).to_linear([16, 16]).bases["lane"]
        [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0]]
        """
        rank = self.rank
        shape = check_shape(shape, rank)
        names = standard_out_dim_names(rank)
        layout = self.tile_layout() * self.cta_layout()
        rep_dims = [names[d] for d in get_matrix_order(rank, row_major=True)]
        return combine_cta_cga_with_shape(layout.transpose_outs(rep_dims), self.cga_layout, shape)

    def operand_non_k_dim(self, operand_index: int) -> int:
        """The non-K size of an instruction operand (Triton's ``getOperandNonKDim``): M for A (0), N for B (1);
        swapped when ``transposed`` (the instruction then computes the transposed product).

        >>> AMDWMMALayout(3, True, [], instr_shape=[32, 16, 64]).operand_non_k_dim(1)
        32
        """
        return self.instr_shape[_check_operand_index(operand_index) ^ int(self.transposed)]

    def check_dot_operand(self, operand_index: int, k_width: int) -> tuple[int, int]:
        """Validate a dot operand of this parent: ``operand_index`` 0 or 1; ``k_width`` 8/16 (v1), 4/8/16 (v2),
        a power of two (v3)."""
        operand_index = _check_operand_index(operand_index)
        k_width = check_int("k_width", k_width)
        allowed = WMMA_K_WIDTHS.get(self.version)
        if allowed is not None and k_width not in allowed:
            raise LayoutError(f"k_width must be one of {list(allowed)} for WMMA version {self.version}, got {k_width}")
        if k_width == 0:
            raise LayoutError(f"k_width is mandatory (non-zero) for WMMA version {self.version}")
        if not is_power_of_two(k_width):
            raise LayoutError(f"k_width must be a power of two, got {k_width}")
        return operand_index, k_width

    def dot_operand_to_linear(self, operand_index: int, k_width: int, shape: Sequence[int]) -> LinearLayout:
        """Triton's ``wmmaDotOperandToLinearLayout``: ``k_width`` K elements per lane, 16 lanes along non-K,
        the two half-waves along K (version 1: duplicated, K broadcast), repeated to the instruction's K
        (and to M = 32 in registers); warps as in the parent with the K coordinate dropped (broadcast).

        >>> P = AMDWMMALayout(2, False, [])
        >>> P.dot_operand_to_linear(0, 8, [16, 16]).bases["lane"]
        [[1, 0], [2, 0], [4, 0], [8, 0], [0, 8]]
        """
        operand_index, k_width = self.check_dot_operand(operand_index, k_width)
        rank = self.rank
        shape = check_shape(shape, rank)
        names = standard_out_dim_names(rank)
        order = get_order_for_dot_operand(operand_index, rank, k_contig=True)  # (K, non-K[, batch])
        dim_k, dim_non_k = names[order[0]], names[order[1]]
        k_dim = self.instr_shape[2]
        tile_dim = 16
        k_depth = WMMA_WARP_SIZE // tile_dim
        non_k_repeat = self.operand_non_k_dim(operand_index) // tile_dim

        tile = LinearLayout.identity_1d(k_width, "register", dim_k) * LinearLayout.identity_1d(
            tile_dim, "lane", dim_non_k
        )
        if self.version == 1:
            tile = tile * LinearLayout.zeros_1d(k_depth, "lane", dim_k)
        else:
            tile = tile * LinearLayout.identity_1d(k_depth, "lane", dim_k)
        tile = tile * LinearLayout.identity_1d(k_dim // (k_depth * k_width), "register", dim_k)
        if non_k_repeat > 1:
            tile = tile * LinearLayout.identity_1d(non_k_repeat, "register", dim_non_k)

        # The parent's CTA layout with its K coordinate projected away; register repeats that became 0 go.
        k_out = names.index(dim_k)
        cta_bases = {
            in_dim: [[0 if d == k_out else x for d, x in enumerate(v)] for v in vectors]
            for in_dim, vectors in self.cta_layout().bases.items()
        }
        cta = remove_broadcast_registers(LinearLayout(cta_bases, list(names)))
        layout = (tile * cta).transpose_outs([names[d] for d in order])
        return combine_cta_cga_with_shape(layout, dot_operand_cga_layout(self.cga_layout, operand_index, rank), shape)


# --------------------------------------------------------------------------------------------------
# their kinds: #ttg.amd_mfma, gl.amd.AMDMFMALayout; #ttg.amd_wmma, gl.amd.AMDWMMALayout
# --------------------------------------------------------------------------------------------------


#: The default WMMA instruction shape (Triton prints ``instrShape`` only when it differs).
_WMMA_DEFAULT_INSTR = (16, 16, 16)


def _parse_mfma(body: dict) -> AMDMFMALayout:
    b = fields(body, "amd_mfma layout", ("version", "warpsPerCTA", "instrShape", "isTransposed"),
               ("tilesPerWarp", "elementBitWidth", *CGA_KEYS))
    return AMDMFMALayout(b["version"], b["instrShape"], b["isTransposed"], b["warpsPerCTA"],
                         b.get("elementBitWidth", 32), b.get("tilesPerWarp"), cga_bases(b, len(b["warpsPerCTA"])))


def _format_mfma(layout: AMDMFMALayout) -> str:
    text = (f"#ttg.amd_mfma<{{version = {layout.version}, warpsPerCTA = {ints(layout.warps_per_cta)}, "
            f"instrShape = {ints(layout.instr_shape)}, isTransposed = {flag(layout.transposed)}"
            f"{cga_text(layout.cga_layout)}")
    if any(t != 1 for t in layout.tiles_per_warp):
        text += f", tilesPerWarp = {ints(layout.tiles_per_warp)}"
    if layout.element_bitwidth != 32:
        text += f", elementBitWidth = {layout.element_bitwidth}"
    return text + "}>"


def _mfma_gluon_implied(name: str, value: object) -> bool:
    """Gluon's defaults (None) of ``element_bitwidth`` and ``tiles_per_warp`` mean 32 and all ones."""
    if name == "element_bitwidth":
        return value == 32
    return name == "tiles_per_warp" and value is not None and all(t == 1 for t in value)  # type: ignore[attr-defined]


def _parse_wmma(body: dict) -> AMDWMMALayout:
    b = fields(body, "amd_wmma layout", ("version", "isTranspose"),
               ("ctaLayout", "warpsPerCTA", "tilesPerWarp", "instrShape", *CGA_KEYS))
    instr = b.get("instrShape", list(_WMMA_DEFAULT_INSTR))
    if "ctaLayout" not in b:  # the classic parameters of older dumps
        if "warpsPerCTA" not in b:
            raise LayoutError("missing key 'ctaLayout' (or the classic 'warpsPerCTA')")
        rank = len(b["warpsPerCTA"])
        return AMDWMMALayout.from_warps_per_cta(b["version"], b["isTranspose"], b["warpsPerCTA"],
                                                b.get("tilesPerWarp"), instr, cga_bases(b, rank))
    cta = b["ctaLayout"]
    if not isinstance(cta, dict) or any(k not in ("register", "warp") for k in cta):
        raise LayoutError(f"'ctaLayout' must be a dictionary of 'register' and 'warp' bases, got {quote(cta)}")
    vectors = [v for v in (*cta.get("register", []), *cta.get("warp", []), *b.get("CGALayout", []))]
    rank = len(vectors[0]) if vectors else 2
    return AMDWMMALayout(b["version"], b["isTranspose"], cta.get("warp", []), cta.get("register", []), instr,
                         cga_bases(b, rank), rank)


def _format_wmma(layout: AMDWMMALayout) -> str:
    cta = []
    if layout.reg_bases:
        cta.append(("register", layout.reg_bases))
    if layout.warp_bases:
        cta.append(("warp", layout.warp_bases))
    text = (f"#ttg.amd_wmma<{{version = {layout.version}, isTranspose = {flag(layout.transposed)}, "
            f"ctaLayout = {{{linear_text(cta)}}}{cga_text(layout.cga_layout)}")
    if tuple(layout.instr_shape) != _WMMA_DEFAULT_INSTR:
        text += f", instrShape = {ints(layout.instr_shape)}"
    return text + "}>"


register(LayoutKind(AMDMFMALayout, Space.DISTRIBUTED, "ttg.amd_mfma", _parse_mfma, _format_mfma, gluon_module="gl.amd",
                    gluon_implied=_mfma_gluon_implied, rank=2))
register(LayoutKind(AMDWMMALayout, Space.DISTRIBUTED, "ttg.amd_wmma", _parse_wmma, _format_wmma, gluon_module="gl.amd",
                    rank=5))
