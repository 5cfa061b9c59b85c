"""Shared-memory layouts: swizzled, NVMMA (wgmma / tcgen05 / TMA), AMD rotating and padded.

Each class maps a shared-memory element ``offset`` (and the CTA ``block``) to the logical tensor
coordinates ``dim0 .. dim{rank-1}``, bit for bit as Triton's C++ ``toLinearLayout``
(``swizzledSharedToLinearLayout``, ``nvmmaSharedToLinearLayout``, ``sharedToLinearLayoutAMDRotating``
and the linear component of ``PaddedSharedEncodingAttr``). The classes are named and parameterized
as Gluon's (triton 3.9); ``AMDRotatingSharedLayout`` has no Gluon class and takes the parameters of
``SwizzledSharedLayout``.

The swizzle of paper §5.1 / Def. 4.11: offset row ``r`` (a power of two) of the two most minor
dims maps to ``(r, vec * ((r // per_phase) % max_phase) % num_cols)``; column bit ``c`` to ``(0, c)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from linear_layouts.layouts.base import (
    Bases,
    SharedLayout,
    Shape,
    check_bases,
    check_bool,
    check_cga_layout,
    check_int,
    check_int_tuple,
    check_order,
    check_shape,
    combine_cta_cga_with_shape,
    ensure_layout_not_smaller_than,
    freeze_fields,
    is_power_of_two,
    make_cga_layout,
    order_from_bases,
    standard_out_dim_names,
)
from linear_layouts.core.element_type import element_type
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.layouts.ttgir_text import (CGA_KEYS, AttributeReader, bases_shape, cga_bases, cga_text, fields,
                                              flag, ints, linear_text)
from linear_layouts.layouts.linear import SharedLinearLayout
from linear_layouts.layouts.registry import LayoutKind, Space, register

__all__ = [
    "SwizzledSharedLayout",
    "NVMMASharedLayout",
    "AMDRotatingSharedLayout",
    "PaddedSharedLayout",
    "row_major_shared",
    "shape_per_cta",
    "reshape_layout",
    "transpose_layout",
]


# --------------------------------------------------------------------------------------------------
# Helpers shared by the kinds below (Triton's getShapePerCTA, reshapeLayout, transposeLinearLayout)
# --------------------------------------------------------------------------------------------------


def shape_per_cta(cga_layout: Sequence[Sequence[int]], shape: Sequence[int]) -> Shape:
    """Triton's ``getShapePerCTA``: ``shape[d] / min(shape[d], ctas_along(d))`` for each dim ``d``.

    ``ctas_along(d)`` is the size of the CGA layout (``block -> dims``) along ``d``.

    >>> shape_per_cta([[0, 1]], [32, 32])
    (32, 16)
    """
    cga = make_cga_layout(cga_layout, len(shape))
    return tuple(
        size // min(size, cga.out_dim_size(name)) for name, size in zip(standard_out_dim_names(len(shape)), shape)
    )


def reshape_layout(layout: LinearLayout, shape: Sequence[int]) -> LinearLayout:
    """Triton's ``reshapeLayout``: reshape the out dims to ``dim0 .. dim{len(shape)-1}`` of ``shape``,
    row-major (the last dim is the most minor), keeping every in dim unchanged.

    >>> L = LinearLayout.identity_1d(8, "offset", "dim0")
    >>> reshape_layout(L, [2, 4]).bases["offset"]
    [[0, 1], [0, 2], [1, 0]]
    """
    names = standard_out_dim_names(len(shape))
    reversed_outs = list(reversed(layout.out_dim_names))
    new_outs = list(reversed(list(zip(names, shape))))
    return layout.transpose_outs(reversed_outs).reshape_outs(new_outs).transpose_outs(list(names))


def transpose_layout(layout: LinearLayout, order: Sequence[int]) -> LinearLayout:
    """Triton's ``transposeLinearLayout``: coordinate ``j`` of every basis (in the layout's out-dim
    order) becomes old coordinate ``order[j]``; out dim names and their order are kept, sizes inferred.

    >>> L = LinearLayout({"offset": [[0, 1], [1, 0]]}, ["dim0", "dim1"])
    >>> transpose_layout(L, [1, 0]).bases["offset"]
    [[1, 0], [0, 1]]
    """
    bases = {
        in_dim: [[vector[i] for i in order] for vector in vectors] for in_dim, vectors in layout.bases.items()
    }
    return LinearLayout(bases, list(layout.out_dim_names))


def _swizzled_2d(order: Sequence[int], sizes: Sequence[int], row_columns: Callable[[int, int], int]) -> LinearLayout:
    """The offset layout of a swizzled tile of ``sizes``: column bits of dim ``order[0]`` first (``(0, c)``),
    then row bits of dim ``order[1]`` (``(r, row_columns(r, num_cols))``), then the remaining dims of
    ``order`` unswizzled; out dims in the order ``[order[1], order[0], order[2], ...]``."""
    names = standard_out_dim_names(len(sizes))
    col_dim, row_dim = order[0], order[1]
    num_cols, num_rows = sizes[col_dim], sizes[row_dim]
    bases = [[0, 1 << i] for i in range(num_cols.bit_length() - 1)]
    bases += [[1 << i, row_columns(1 << i, num_cols)] for i in range(num_rows.bit_length() - 1)]
    layout = LinearLayout({"offset": bases}, [names[row_dim], names[col_dim]])
    for dim in order[2:]:
        layout = layout * LinearLayout.identity_1d(sizes[dim], "offset", names[dim])
    return layout


def _check_swizzle_params(obj: Any) -> None:
    vec = check_int("vec", obj.vec, minimum=1)
    per_phase = check_int("per_phase", obj.per_phase, minimum=1)
    max_phase = check_int("max_phase", obj.max_phase, minimum=1)
    order = check_int_tuple("order", obj.order)
    if not order:
        raise LayoutError("order must have at least one entry (the rank)")
    order = check_order("order", order, len(order))
    cga_layout = check_cga_layout("cga_layout", () if obj.cga_layout is None else obj.cga_layout, len(order))
    freeze_fields(obj, vec=vec, per_phase=per_phase, max_phase=max_phase, order=order, cga_layout=cga_layout)


# --------------------------------------------------------------------------------------------------
# SwizzledSharedLayout
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _PhaseSwizzledLayout(SharedLayout):
    """The parameters shared by the swizzled and the AMD rotating layouts: XOR ``vec``-element groups
    of a row with its phase ``(row // per_phase) % max_phase``, dims in ``order`` (minor first)."""

    vec: int
    per_phase: int
    max_phase: int
    order: tuple[int, ...]
    cga_layout: Bases = ()

    def __post_init__(self) -> None:
        _check_swizzle_params(self)

    @property
    def rank(self) -> int:
        """The tensor rank, ``len(order)``."""
        return len(self.order)


@dataclass(frozen=True)
class SwizzledSharedLayout(_PhaseSwizzledLayout):
    """Gluon's ``SwizzledSharedLayout`` (Triton ``#ttg.swizzled_shared``).

    Offset bit ``c`` of the ``order[0]`` dim maps to column ``2**c``; row ``r = 2**i`` of the
    ``order[1]`` dim maps to ``(r, vec * ((r // per_phase) % max_phase) % num_cols)``; the other
    dims follow ``order`` unswizzled; ``cga_layout`` spreads the tensor over CTAs (the swizzle is
    computed on the shape per CTA). ``vec``, ``per_phase``, ``max_phase`` are positive integers
    (powers of two in practice; Triton computes the same bases for any).

    >>> SwizzledSharedLayout(2, 1, 4, [1, 0]).to_linear([4, 8]).bases["offset"]
    [[0, 1], [0, 2], [0, 4], [1, 2], [2, 4]]
    """


    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        """``(offset, block) -> (dim0, ..)`` of a tensor of ``shape`` (Triton's swizzledSharedToLinearLayout)."""
        shape = check_shape(shape, self.rank)
        per_cta = shape_per_cta(self.cga_layout, shape)
        if self.rank == 1:
            cta = LinearLayout.identity_1d(per_cta[0], "offset", "dim0")
        else:
            vec, per_phase, max_phase = self.vec, self.per_phase, self.max_phase
            cta = _swizzled_2d(
                self.order, per_cta, lambda row, num_cols: (vec * ((row // per_phase) % max_phase)) % num_cols
            )
        return combine_cta_cga_with_shape(cta, self.cga_layout, shape)


def row_major_shared(shape: Sequence[int], order: Sequence[int] | None = None) -> LinearLayout:
    """The unswizzled shared layout of a tensor of ``shape``: offsets walk the dims in ``order`` (``order[0]``
    fastest; default: the last dim fastest, i.e. row-major), ``SwizzledSharedLayout(1, 1, 1, order)``.

    >>> row_major_shared([2, 4]).apply({"offset": 5, "block": 0})
    {'dim0': 1, 'dim1': 1}
    """
    shape = check_shape(shape)
    if order is None:
        order = list(reversed(range(len(shape))))
    return SwizzledSharedLayout(1, 1, 1, order).to_linear(shape)


# --------------------------------------------------------------------------------------------------
# AMDRotatingSharedLayout
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AMDRotatingSharedLayout(_PhaseSwizzledLayout):
    """Triton's ``AMDRotatingSharedEncodingAttr`` (``#ttg.amd_rotating_shared``); no Gluon class exists,
    so it takes ``SwizzledSharedLayout``'s parameters.

    Like the swizzled layout, but the phase of row ``r`` is rotated by its block of
    ``per_phase * max_phase`` rows: column ``vec * (phase ^ block_no) % num_cols`` with
    ``phase = (r // per_phase) % max_phase`` and ``block_no = (r // max_phase // per_phase) % max_phase``.
    As in Triton's C++, the 2-D part is sized by the whole ``shape`` (not the shape per CTA, unlike
    the swizzled layout and the rank-1 case) before the CGA split.

    >>> AMDRotatingSharedLayout(2, 2, 2, [1, 0]).to_linear([8, 16]).bases["offset"]
    [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0], [2, 2], [4, 2]]
    """


    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        """``(offset, block) -> (dim0, ..)`` of a tensor of ``shape`` (Triton's sharedToLinearLayoutAMDRotating)."""
        shape = check_shape(shape, self.rank)
        if self.rank == 1:
            cta = LinearLayout.identity_1d(shape_per_cta(self.cga_layout, shape)[0], "offset", "dim0")
        else:
            vec, per_phase, max_phase = self.vec, self.per_phase, self.max_phase

            def row_columns(row: int, num_cols: int) -> int:
                phase = (row // per_phase) % max_phase
                block_no = (row // max_phase // per_phase) % max_phase
                return (vec * (phase ^ block_no)) % num_cols

            cta = _swizzled_2d(self.order, shape, row_columns)
        return combine_cta_cga_with_shape(cta, self.cga_layout, shape)


# --------------------------------------------------------------------------------------------------
# NVMMASharedLayout
# --------------------------------------------------------------------------------------------------

_SWIZZLE_BYTE_WIDTHS = (0, 32, 64, 128)
_NVMMA_ELEMENT_BITWIDTHS = (8, 16, 32, 64)
_TMA_MAX_BOX = 256


@dataclass(frozen=True)
class NVMMASharedLayout(SharedLayout):
    """Gluon's ``NVMMASharedLayout`` (Triton ``#ttg.nvmma_shared``): the layouts read by wgmma / tcgen05
    and written by TMA.

    The core matrix has 8 rows of ``max(16, swizzle_byte_width)`` bytes; row ``r`` is XOR-swizzled by
    ``vec * ((r // per_phase) % max_phase)`` with ``vec = 128 / element_bitwidth``,
    ``per_phase = 128 / swizzle_byte_width`` and ``max_phase = swizzle_byte_width / 16``. Core matrices
    tile the TMA box (each dim at most 256, the contiguous dim exactly one swizzle width), boxes tile
    the CTA's shape. ``transposed`` makes dim0 the contiguous dim; ``fp4_padded`` stores each 8 bytes of
    packed fp4 in 16 (the 8 padding offsets map to the same elements as the 8 real ones).

    >>> NVMMASharedLayout(32, 16).to_linear([8, 16]).bases["offset"]
    [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0], [2, 0], [4, 8]]
    """

    swizzle_byte_width: int
    element_bitwidth: int
    rank: int = 2
    transposed: bool = False
    fp4_padded: bool = False
    cga_layout: Bases = ()

    def __post_init__(self) -> None:
        swizzle = check_int("swizzle_byte_width", self.swizzle_byte_width)
        if swizzle not in _SWIZZLE_BYTE_WIDTHS:
            raise LayoutError(f"swizzle_byte_width must be one of {_SWIZZLE_BYTE_WIDTHS}, got {swizzle}")
        bitwidth = check_int("element_bitwidth", self.element_bitwidth)
        if bitwidth not in _NVMMA_ELEMENT_BITWIDTHS:
            raise LayoutError(f"element_bitwidth must be one of {_NVMMA_ELEMENT_BITWIDTHS}, got {bitwidth}")
        rank = check_int("rank", self.rank, minimum=1)
        transposed = check_bool("transposed", self.transposed)
        fp4_padded = check_bool("fp4_padded", self.fp4_padded)
        if fp4_padded and swizzle != 128:
            raise LayoutError(f"fp4_padded requires swizzle_byte_width == 128, got {swizzle}")
        if fp4_padded and bitwidth != 8:
            raise LayoutError(f"fp4_padded requires element_bitwidth == 8 (packed fp4 pairs), got {bitwidth}")
        cga_layout = check_cga_layout("cga_layout", self.cga_layout if self.cga_layout is not None else (), rank)
        freeze_fields(
            self,
            swizzle_byte_width=swizzle,
            element_bitwidth=bitwidth,
            rank=rank,
            transposed=transposed,
            fp4_padded=fp4_padded,
            cga_layout=cga_layout,
        )

    @classmethod
    def get_default_for(
        cls,
        block_shape: Sequence[int],
        dtype: Any,
        transposed: bool = False,
        fp4_padded: bool = False,
        cga_layout: Sequence[Sequence[int]] | None = None,
    ) -> "NVMMASharedLayout":
        """Gluon's ``get_default_for``: the widest swizzle (128, 64, 32 or 0 bytes) that divides the
        contiguous dim of the CTA's block (in bytes; fp4-padded counts padded elements), and no swizzle
        for rank 1 or fewer than 8 outer rows. ``dtype``: an element type in any spelling of
        :func:`linear_layouts.core.element_type.element_type` (a bit width, a name, a Gluon / Triton dtype, ...).

        >>> NVMMASharedLayout.get_default_for([64, 64], 16).swizzle_byte_width
        128
        """
        bitwidth = element_type(dtype).bits
        shape = check_shape(block_shape, name="block_shape")
        cga = check_cga_layout("cga_layout", cga_layout or (), len(shape))
        cga_tile = make_cga_layout(cga, len(shape)).out_dims.values()
        if any(size % ctas for size, ctas in zip(shape, cga_tile)):
            raise LayoutError(f"block_shape {list(shape)} must be divisible by the CGA tile {list(cga_tile)}")
        per_cta = [size // ctas for size, ctas in zip(shape, cga_tile)]
        if transposed:
            per_cta = per_cta[1:] + per_cta[:1]
        contig_bytes = per_cta[-1] * (2 if fp4_padded else 1) * bitwidth // 8
        swizzle = next((width for width in (128, 64, 32) if contig_bytes >= width and contig_bytes % width == 0), 0)
        outer = 1
        for size in per_cta[:-1]:
            outer *= size
        if len(shape) < 2 or outer < 8:
            swizzle = 0
        return cls(swizzle, bitwidth, len(shape), transposed, fp4_padded, cga)

    @property
    def vec(self) -> int:
        """Elements per 16-byte swizzle unit (1 when unswizzled): ``128 / element_bitwidth``."""
        return 1 if self.swizzle_byte_width == 0 else 128 // self.element_bitwidth

    @property
    def per_phase(self) -> int:
        """Rows sharing one swizzle phase: ``128 / swizzle_byte_width`` (1 when unswizzled)."""
        return 1 if self.swizzle_byte_width == 0 else 128 // self.swizzle_byte_width

    @property
    def max_phase(self) -> int:
        """Number of distinct phases: ``swizzle_byte_width / 16`` (1 when unswizzled)."""
        return 1 if self.swizzle_byte_width == 0 else self.swizzle_byte_width // 16

    @property
    def alignment(self) -> int:
        """Required byte alignment of the buffer: ``128 * max_phase`` (Triton's getAlignment)."""
        return 128 * self.max_phase

    def tma_block_shape(self, cta_shape: Sequence[int]) -> Shape:
        """Triton's ``getTMABlockShape`` (tiled mode, packed size): the TMA box of a CTA's tile.

        Each dim is clamped to 256; the contiguous dim (dim ``rank-1``, dim0 when ``transposed``) is one
        swizzle width, ``8 * swizzle_byte_width / element_bitwidth`` elements (fp4-padded: counted in
        padded elements, then halved).

        >>> NVMMASharedLayout(128, 16).tma_block_shape([512, 512])
        (256, 64)
        """
        block = list(check_int_tuple("cta_shape", cta_shape, length=self.rank, minimum=1))
        contig = 0 if self.transposed else len(block) - 1
        if self.fp4_padded:
            block[contig] *= 2
        block = [min(size, _TMA_MAX_BOX) for size in block]
        if self.swizzle_byte_width != 0:
            contig_size = 8 * self.swizzle_byte_width // self.element_bitwidth
            if block[contig] < contig_size:
                raise LayoutError(
                    f"shape: the contiguous dim {contig} holds {block[contig]} elements per CTA"
                    f"{' (fp4-padded)' if self.fp4_padded else ''}, fewer than one {self.swizzle_byte_width}-byte "
                    f"swizzle row of {contig_size} elements"
                )
            block[contig] = contig_size
        if self.fp4_padded:
            block[contig] //= 2
        return tuple(block)

    def core_matrix(self) -> LinearLayout:
        """Triton's ``getCoreMatrixLinearLayout``: the swizzled 8-row tile ``offset -> (dim0 = row, dim1 = col)``.

        >>> NVMMASharedLayout(32, 16).core_matrix().bases["offset"][-3:]
        [[1, 0], [2, 0], [4, 8]]
        """
        tile_cols = 8 * max(16, self.swizzle_byte_width) // self.element_bitwidth

        def packed(col: int) -> int:
            return col // 16 * 8 + col % 8 if self.fp4_padded else col

        bases = [[0, packed(1 << i)] for i in range(tile_cols.bit_length() - 1)]
        for i in range(3):
            row = 1 << i
            bases.append([row, packed(self.vec * ((row // self.per_phase) % self.max_phase))])
        return LinearLayout({"offset": bases}, ["dim0", "dim1"])

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        """``(offset, block) -> (dim0, ..)`` of a tensor of ``shape`` (Triton's nvmmaSharedToLinearLayout)."""
        shape = check_shape(shape, self.rank)
        rank = self.rank
        names = standard_out_dim_names(rank)
        per_cta = shape_per_cta(self.cga_layout, shape)
        tma = self.tma_block_shape(per_cta)
        if self.swizzle_byte_width == 0:
            # Row-major over the TMA box (out dims in the order dim{rank-1} .. dim0). When transposed,
            # over the box rotated left (dim0 last), then with the coordinates permuted by
            # [rank-1, 0, .., rank-2] in that out-dim order -- triton 3.9's choice; for rank >= 3 it
            # is not the inverse of the rotation, and the CTA fit below then pads / broadcasts.
            box = list(tma[1:]) + [tma[0]] if self.transposed else list(tma)
            layout = LinearLayout.identity_1d(box[rank - 1], "offset", names[rank - 1])
            for i in range(rank - 2, -1, -1):
                layout = layout * LinearLayout.identity_1d(box[i], "offset", names[i])
            if self.transposed:
                layout = transpose_layout(layout, [rank - 1, *range(rank - 1)])
            layout = ensure_layout_not_smaller_than(layout, per_cta)
            return combine_cta_cga_with_shape(layout, self.cga_layout, shape)
        if rank < 2:
            raise LayoutError(
                f"rank must be >= 2 for a swizzled NVMMASharedLayout (swizzle_byte_width={self.swizzle_byte_width})"
            )
        rows = 1
        for size in tma[:-1]:
            rows *= size
        collapsed = [rows, tma[-1]]
        if self.transposed:
            collapsed.reverse()
        tile = self.core_matrix()
        tile_rows, tile_cols = tile.out_dim_size("dim0"), tile.out_dim_size("dim1")
        packing = 2 if self.fp4_padded else 1
        if collapsed[1] * packing < tile_cols or collapsed[0] < tile_rows:
            raise LayoutError(
                f"shape: the TMA box per CTA, collapsed to 2-D, is {collapsed}; it must be at least "
                f"[{tile_rows}, {tile_cols // packing}] (one core matrix)"
            )
        layout = ensure_layout_not_smaller_than(tile, collapsed)
        pre_transposed = list(tma[1:]) + [tma[0]] if self.transposed else list(tma)
        layout = reshape_layout(layout, pre_transposed)
        if self.transposed:
            layout = transpose_layout(layout, [rank - 1, *range(rank - 1)])
        layout = ensure_layout_not_smaller_than(layout, per_cta)
        return combine_cta_cga_with_shape(layout, self.cga_layout, shape)


# --------------------------------------------------------------------------------------------------
# PaddedSharedLayout
# --------------------------------------------------------------------------------------------------


def _padded_component(offset_bases: Bases, cga_layout: Bases, rank: int) -> LinearLayout:
    """The linear component of a padded layout: the CTA's ``offset`` bases times the CGA layout (block
    bases scaled by the CTA tile), as triton 3.9's ``get_padded_shared_layout`` builds it."""
    names = list(standard_out_dim_names(rank))
    try:
        cta = LinearLayout({"offset": [list(v) for v in offset_bases]}, names)
    except LayoutError as error:
        raise LayoutError(f"offset_bases must cover a whole box of the tensor (surjective): {error}") from None
    return cta * make_cga_layout(cga_layout, rank)


@dataclass(frozen=True)
class PaddedSharedLayout(SharedLayout):
    """Gluon's ``PaddedSharedLayout`` (Triton ``#ttg.padded_shared``): a linear component plus padding.

    The linear component ``(offset, block) -> dims`` is the CTA's ``offset_bases`` (linearly
    independent, each moving along at most one dim by a power of two) times the CGA layout
    ``cga_layout`` (in units of the CTA tile, as for every 3.9 layout); it must span ``shape``.
    After every ``interval`` elements, ``padding`` unused elements are inserted, for each pair:
    ``padded_offset(x) = x + sum((x >> log2(interval)) << log2(padding))``.

    >>> p = PaddedSharedLayout([[2, 1], [4, 2]], [[1], [2], [4]], [], [8])
    >>> [p.padded_offset(x) for x in range(8)]
    [0, 1, 3, 4, 8, 9, 11, 12]
    """

    interval_padding_pairs: tuple[tuple[int, int], ...]
    offset_bases: Bases
    cga_layout: Bases
    shape: Shape

    def __post_init__(self) -> None:
        pairs = check_bases("interval_padding_pairs", self.interval_padding_pairs)
        if not pairs:
            raise LayoutError("interval_padding_pairs must have at least one [interval, padding] pair")
        for i, pair in enumerate(pairs):
            if len(pair) != 2:
                raise LayoutError(f"interval_padding_pairs[{i}] must be an [interval, padding] pair, got {list(pair)}")
            interval, padding = pair
            if not is_power_of_two(interval):
                raise LayoutError(f"interval_padding_pairs[{i}]: interval must be a power of two, got {interval}")
            if not is_power_of_two(padding):
                raise LayoutError(f"interval_padding_pairs[{i}]: padding must be a power of two, got {padding}")
        intervals = [interval for interval, _ in pairs]
        if len(set(intervals)) != len(intervals):
            raise LayoutError(f"interval_padding_pairs: intervals must be distinct, got {intervals}")
        shape = check_shape(self.shape)
        rank = len(shape)
        offset_bases = check_bases("offset_bases", self.offset_bases, rank)
        for i, vector in enumerate(offset_bases):
            nonzero = [entry for entry in vector if entry != 0]
            if len(nonzero) > 1:
                raise LayoutError(f"offset_bases[{i}] must move along at most one dim, got {list(vector)}")
            if nonzero and not is_power_of_two(nonzero[0]):
                raise LayoutError(f"offset_bases[{i}] must be 0 or a power of two along its dim, got {list(vector)}")
        cga_layout = check_cga_layout("cga_layout", self.cga_layout, rank)
        component = _padded_component(offset_bases, cga_layout, rank)
        if not component.sublayout(["offset"], list(component.out_dim_names)).is_injective():
            raise LayoutError("offset_bases must be linearly independent (no broadcast in the offset dim)")
        if tuple(component.out_dims.values()) != shape:
            raise LayoutError(
                f"offset_bases and cga_layout must span shape {list(shape)}, "
                f"they span {list(component.out_dims.values())}"
            )
        freeze_fields(
            self,
            interval_padding_pairs=tuple((int(a), int(b)) for a, b in pairs),
            offset_bases=offset_bases,
            cga_layout=cga_layout,
            shape=shape,
        )

    @property
    def rank(self) -> int:
        """The tensor rank, ``len(shape)``."""
        return len(self.shape)

    @property
    def intervals(self) -> tuple[int, ...]:
        """The padding intervals, in pair order."""
        return tuple(interval for interval, _ in self.interval_padding_pairs)

    @property
    def paddings(self) -> tuple[int, ...]:
        """The padding amounts, in pair order."""
        return tuple(padding for _, padding in self.interval_padding_pairs)

    @classmethod
    def with_identity_for(
        cls,
        interval_padding_pairs: Sequence[Sequence[int]],
        shape: Sequence[int],
        order: Sequence[int],
        cga_layout: Sequence[Sequence[int]] = (),
    ) -> "PaddedSharedLayout":
        """Gluon's ``with_identity_for``: the padded layout whose linear component walks the CTA's tile
        in ``order`` (``order[0]`` most minor), as Triton's ``identityStandardND``.

        >>> PaddedSharedLayout.with_identity_for([[64, 8]], [4, 8], [1, 0]).offset_bases
        ((0, 1), (0, 2), (0, 4), (1, 0), (2, 0))
        """
        shape = check_shape(shape)
        order = check_order("order", order, len(shape))
        cga = check_cga_layout("cga_layout", cga_layout, len(shape))
        per_cta = shape_per_cta(cga, shape) if cga else shape
        offset_bases = []
        for dim in order:
            for bit in range(per_cta[dim].bit_length() - 1):
                offset_bases.append([1 << bit if i == dim else 0 for i in range(len(shape))])
        return cls(interval_padding_pairs, offset_bases, cga, shape)

    def identity_order(self) -> tuple[int, ...] | None:
        """The ``order`` of ``with_identity_for`` that gives this layout (no CGA bases, offsets walking
        the shape dim by dim), else None. Dims are ordered as Triton's ``getOrder`` reads them: by first
        appearance in the offset bases, then the rest from the last dim (the form Triton prints short).

        >>> PaddedSharedLayout.with_identity_for([[64, 8]], [4, 8], [0, 1]).identity_order()
        (0, 1)
        """
        if self.cga_layout:
            return None
        order = order_from_bases(self.offset_bases, self.rank)
        expected = PaddedSharedLayout.with_identity_for(self.interval_padding_pairs, self.shape, order)
        return order if expected.offset_bases == self.offset_bases else None

    def to_linear(self, shape: Sequence[int] | None = None) -> LinearLayout:
        """The linear component ``(offset, block) -> (dim0, ..)``; the padding is not part of it
        (Triton's ``paddedLinearLayout``). ``shape``, when given, must be the layout's ``shape``.

        >>> PaddedSharedLayout([[4, 1]], [[0, 1], [1, 0]], [], [2, 2]).to_linear().bases["offset"]
        [[0, 1], [1, 0]]
        """
        if shape is not None and check_shape(shape, self.rank) != self.shape:
            raise LayoutError(f"shape must be the layout's shape {list(self.shape)}, got {list(shape)}")
        return _padded_component(self.offset_bases, self.cga_layout, self.rank)

    def padded_offset(self, offset: int) -> int:
        """The physical offset (in elements) of linear offset ``offset``: Triton's ``emitPadding``,
        ``offset + sum over pairs of (offset >> log2(interval)) << log2(padding)``.

        >>> PaddedSharedLayout([[4, 1]], [[1], [2], [4]], [], [8]).padded_offset(5)
        6
        """
        offset = check_int("offset", offset, minimum=0)
        padded = offset
        for interval, padding in self.interval_padding_pairs:
            padded += (offset >> (interval.bit_length() - 1)) << (padding.bit_length() - 1)
        return padded

    def padded_size(self, shape: Sequence[int] | None = None) -> int:
        """Elements a buffer of ``shape`` (default: the layout's) occupies with padding: Triton's
        ``getPaddedSize`` (no padding after the last element).

        >>> PaddedSharedLayout([[4, 1]], [[1], [2], [4]], [], [8]).padded_size()
        9
        """
        shape = self.shape if shape is None else check_shape(shape)
        unpadded = 1
        for size in shape:
            unpadded *= size
        padding_size = 0
        for interval, padding in self.interval_padding_pairs:
            padding_size += (unpadded >> (interval.bit_length() - 1)) << (padding.bit_length() - 1)
            if unpadded % interval == 0:
                padding_size -= padding
        return unpadded + padding_size


# --------------------------------------------------------------------------------------------------
# their kinds: #ttg.swizzled_shared, #ttg.amd_rotating_shared (no Gluon class), #ttg.nvmma_shared,
# #ttg.padded_shared
# --------------------------------------------------------------------------------------------------


def _parse_swizzled(cls: type) -> Callable[[dict], Any]:
    def parse(body: dict) -> Any:
        b = fields(body, "swizzled shared layout", ("vec", "perPhase", "maxPhase", "order"), CGA_KEYS)
        return cls(b["vec"], b["perPhase"], b["maxPhase"], b["order"], cga_bases(b, len(b["order"])))

    return parse


def _format_swizzled(name: str) -> Callable[[Any], str]:
    def format_ttgir(layout: Any) -> str:
        return (f"#ttg.{name}<{{vec = {layout.vec}, perPhase = {layout.per_phase}, maxPhase = {layout.max_phase}, "
                f"order = {ints(layout.order)}{cga_text(layout.cga_layout)}}}>")

    return format_ttgir


def _rotating_in_gluon(layout: AMDRotatingSharedLayout, shape: Sequence[int] | None) -> Any:
    """Gluon has no ``AMDRotatingSharedLayout``: the ``SharedLinearLayout`` of ``shape`` is written instead."""
    if shape is None:
        raise LayoutError("shape is required: Gluon has no AMDRotatingSharedLayout; it becomes a SharedLinearLayout")
    linear = layout.to_linear(shape)
    return SharedLinearLayout(linear.bases["offset"], linear.bases.get("block", []))


def _parse_nvmma(body: dict) -> NVMMASharedLayout:
    b = fields(body, "nvmma_shared layout", ("swizzlingByteWidth", "elementBitWidth"),
               ("transposed", "fp4Padded", "rank", *CGA_KEYS))
    cga = b.get("CGALayout", [])
    rank = len(cga[0]) if cga else b.get("rank", 2)
    if cga and "rank" in b and b["rank"] != rank:
        raise LayoutError(f"'rank' = {b['rank']} disagrees with the CGALayout's rank {rank}")
    return NVMMASharedLayout(b["swizzlingByteWidth"], b["elementBitWidth"], rank, b.get("transposed", False),
                             b.get("fp4Padded", False), cga_bases(b, rank))


def _format_nvmma(layout: NVMMASharedLayout) -> str:
    text = (f"#ttg.nvmma_shared<{{swizzlingByteWidth = {layout.swizzle_byte_width}, transposed = "
            f"{flag(layout.transposed)}, elementBitWidth = {layout.element_bitwidth}")
    if layout.fp4_padded:
        text += ", fp4Padded = true"
    if not layout.cga_layout and layout.rank != 2:
        text += f", rank = {layout.rank}"
    return text + cga_text(layout.cga_layout) + "}>"


def _read_padded_body(reader: AttributeReader) -> tuple[tuple[tuple[int, int], ...], dict]:
    """``[interval:+padding, ...] {order = .., shape = ..}`` (or ``{offset = .., block = ..}``)."""
    reader.expect("[")
    pairs = []
    while True:
        interval = reader.integer()
        reader.expect(":")
        reader.expect("+")
        pairs.append((interval, reader.integer()))
        if reader.accept("]"):
            break
        reader.expect(",")
    return tuple(pairs), reader.dictionary()


def _parse_padded(body: tuple[tuple[tuple[int, int], ...], dict]) -> PaddedSharedLayout:
    pairs, layout = body
    if "order" in layout or "shape" in layout:
        b = fields(layout, "padded_shared layout", ("order", "shape"), ())
        return PaddedSharedLayout.with_identity_for(pairs, b["shape"], b["order"])
    b = fields(layout, "padded_shared layout", ("offset",), ("block",))
    offset, block = b["offset"], b.get("block", [])
    shape = bases_shape({"offset": offset, "block": block})
    tile = bases_shape({"offset": offset}) if offset else [1] * len(shape)
    cga = [[x // t if x else 0 for x, t in zip(v, tile)] for v in block]
    return PaddedSharedLayout(pairs, offset, cga, shape)


def _format_padded(layout: PaddedSharedLayout) -> str:
    pairs_text = ", ".join(f"{i}:+{p}" for i, p in layout.interval_padding_pairs)
    order = layout.identity_order()
    if order is not None:
        body = f"order = {ints(order)}, shape = {ints(layout.shape)}"
    else:
        component = layout.to_linear()
        body = linear_text([("offset", component.bases["offset"]), ("block", component.bases["block"])])
    return f"#ttg.padded_shared<[{pairs_text}] {{{body}}}>"


def _padded_gluon_factory(layout: PaddedSharedLayout) -> tuple[str, tuple[Any, ...]] | None:
    """Gluon's ``with_identity_for(pairs, shape, order)`` when the layout is one."""
    order = layout.identity_order()
    return None if order is None else ("with_identity_for", (layout.interval_padding_pairs, layout.shape, order))


register(LayoutKind(NVMMASharedLayout, Space.SHARED, "ttg.nvmma_shared", _parse_nvmma, _format_nvmma, rank=0))
register(LayoutKind(SwizzledSharedLayout, Space.SHARED, "ttg.swizzled_shared", _parse_swizzled(SwizzledSharedLayout),
                    _format_swizzled("swizzled_shared"), rank=1))
register(LayoutKind(PaddedSharedLayout, Space.SHARED, "ttg.padded_shared", _parse_padded, _format_padded,
                    read_body=_read_padded_body, gluon_factory=_padded_gluon_factory, rank=2))
register(LayoutKind(AMDRotatingSharedLayout, Space.SHARED, "ttg.amd_rotating_shared",
                    _parse_swizzled(AMDRotatingSharedLayout), _format_swizzled("amd_rotating_shared"),
                    gluon_module=None, gluon_substitute=_rotating_in_gluon, rank=4))
