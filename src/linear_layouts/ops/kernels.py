"""The tiles of ``linear_layouts.ops`` and their kernels: layouts, our planner's conversion, our generator.

A ``TileConfig`` names one tile: its shape ``rows x cols`` (powers of two), warps, the elements per global
access on each side and ``block`` (rows per thread of ``A``, columns per thread of ``B``: 4 packs 4x4-byte
blocks, so 8-bit data moves through shared memory in 16-byte vectors on both sides). Its two layouts are
blocked layouts (``tile_layouts``); ``analysis.conversion.plan_conversion`` plans the conversion between
them (shared memory with the optimal swizzle; an empty plan where ``src == dst``) and
``codegen.permute`` emits the kernel. ``transpose_tiles`` lists the tiles of a transpose, largest first;
``choose_tile`` takes the first that gives every SM at least ``CTAS_PER_SM`` tiles (a persistent tile:
``PERSISTENT_TILES_PER_SM``).

========  ======================  ======  =====  ===============================================
element   fast tile (16-byte)     warps   block  also
========  ======================  ======  =====  ===============================================
8-bit     256 x 256, persistent   32      4      256 x 256 (16 warps), 128 x 128 (4 warps), 64 x 64
16-bit    128 x 128               16      4      64 x 64 (4 warps)
32-bit    64 x 64                 4       1      32 x 32 (4 warps)
64-bit    64 x 64                 4       1      32 x 32 (4 warps)
========  ======================  ======  =====  ===============================================

Narrower vectors (a row length or a pointer that 16 bytes do not divide) take 64 x 64 tiles of 4 warps.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from linear_layouts.layouts.blocked import BlockedLayout
from linear_layouts.codegen.permute import PermuteKernel, emit_cast_transpose_kernel, emit_tiled_permute_kernel
from linear_layouts.codegen.plan import conversion_step, kernel_name
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.ops.plan import MAX_VECTOR_BYTES

__all__ = ["TileConfig", "tile_layouts", "transpose_tiles", "rows_tile", "cast_tiles", "choose_tile",
           "permute_kernel", "cast_kernel", "CTAS_PER_SM", "PERSISTENT_TILES_PER_SM"]

#: Tiles per SM below which ``choose_tile`` takes a smaller tile (more CTAs in flight).
CTAS_PER_SM = 2
#: Tiles per SM below which ``choose_tile`` passes over a persistent tile (too few tiles to pipeline).
PERSISTENT_TILES_PER_SM = 4


@dataclass(frozen=True)
class TileConfig:
    """One tile (module doc): ``element_bytes`` of the moved elements (the cast-transpose: of its fp8
    output, with ``input_format`` its input's), ``src_vector`` / ``dst_vector`` elements per access along a
    row of ``A`` / of ``B``, ``transposed`` as in ``codegen.permute``; ``ctas_per_sm > 0``: persistent (at
    most that many CTAs per SM, each looping over tiles with the next tile's loads in flight)."""

    element_bytes: int
    rows: int
    cols: int
    warps: int
    src_vector: int
    dst_vector: int
    block: int = 1
    transposed: bool = True
    ctas_per_sm: int = 0

    def __post_init__(self) -> None:
        for label in ("rows", "cols", "warps", "src_vector", "dst_vector", "block"):
            value = getattr(self, label)
            if value < 1 or value & (value - 1):
                raise LayoutError(f"{label}: must be a power of two, got {value}")
        if self.element_bytes not in (1, 2, 4, 8):
            raise LayoutError(f"element_bytes: must be 1, 2, 4 or 8, got {self.element_bytes}")

    @property
    def threads(self) -> int:
        return 32 * self.warps

    def tiles(self, rows: int, cols: int) -> int:
        """Tiles of one ``rows x cols`` matrix."""
        return -(-rows // self.rows) * -(-cols // self.cols)


def _lanes(extent: int, vector: int, cap: int) -> int:
    return max(1, min(cap, extent // vector))


def _one_cta(layout: LinearLayout) -> LinearLayout:
    """The (register, lane, warp) part of a distributed layout: codegen runs one CTA."""
    return layout.sublayout([d for d in ("register", "lane", "warp") if layout.has_in_dim(d)], layout.out_dim_names)


@functools.lru_cache(maxsize=None)
def tile_layouts(config: TileConfig) -> tuple[LinearLayout, LinearLayout]:
    """``(src, dst)`` of ``config``: ``src`` holds ``block x src_vector`` elements per thread along the rows
    of the tile (``cols / src_vector`` lanes per row, at most 16 with blocks, 32 without), warps down the
    rows; ``dst`` (transposed) ``dst_vector x block`` along its columns, warps across; not transposed,
    ``dst == src``. LayoutError when the threads would cover more than the tile (duplicated elements)."""
    c = config
    cap = 16 if c.block > 1 else 32
    ta = _lanes(c.cols, c.src_vector, cap)
    src = BlockedLayout([c.block, c.src_vector], [32 // ta, ta], [c.warps, 1], [1, 0])
    if c.block * (32 // ta) * c.warps > c.rows or c.src_vector * ta > c.cols:
        raise LayoutError(f"config: {c} covers more than its tile on the src side")
    if not c.transposed:
        layout = _one_cta(src.to_linear([c.rows, c.cols]))
        return layout, layout
    tb = _lanes(c.rows, c.dst_vector, cap)
    dst = BlockedLayout([c.dst_vector, c.block], [tb, 32 // tb], [1, c.warps], [0, 1])
    if c.dst_vector * tb > c.rows or c.block * (32 // tb) * c.warps > c.cols:
        raise LayoutError(f"config: {c} covers more than its tile on the dst side")
    return _one_cta(src.to_linear([c.rows, c.cols])), _one_cta(dst.to_linear([c.rows, c.cols]))


def transpose_tiles(element_bytes: int, src_vector: int, dst_vector: int) -> list[TileConfig]:
    """The tiles of a transpose (module doc's table), largest first."""
    w, v = element_bytes, MAX_VECTOR_BYTES // element_bytes
    if src_vector != v or dst_vector != v:
        return [TileConfig(w, 64, 64, 4, src_vector, dst_vector)]
    fast = {1: [(256, 256, 32, 4, 1), (256, 256, 16, 4, 0), (128, 128, 4, 4, 0), (64, 64, 4, 1, 0)],
            2: [(128, 128, 16, 4, 0), (64, 64, 4, 1, 0)],
            4: [(64, 64, 4, 1, 0), (32, 32, 4, 1, 0)],
            8: [(64, 64, 4, 1, 0), (32, 32, 4, 1, 0)]}[w]
    return [TileConfig(w, m, n, warps, v, v, block, ctas_per_sm=ctas) for m, n, warps, block, ctas in fast]


def rows_tile(element_bytes: int, vector: int, cols: int) -> TileConfig:
    """The tile of a ``ROWS`` permutation with rows of ``cols`` elements: up to 256 bytes of a row (all of it
    when shorter), rows enough for 8 accesses per thread of 4 warps."""
    n = max(vector, min(1 << max(0, (cols - 1).bit_length()), 256 // element_bytes))
    warps = 4
    m = max((32 // _lanes(n, vector, 32)) * warps, 1024 * vector // n)
    return TileConfig(element_bytes, m, n, warps, vector, vector, 1, transposed=False)


def cast_tiles(src_vector: int, dst_vector: int) -> list[TileConfig]:
    """The tiles of the cast-transpose (8-bit configs: the fp8 tile), largest first: 16 elements per
    thread along a row of ``X`` and of ``T`` (16-byte fp8 stores on both sides), else narrower."""
    if src_vector == 16 and dst_vector == 16:
        return [TileConfig(1, 128, 128, 8, 16, 16, 4), TileConfig(1, 64, 64, 2, 16, 16, 4)]
    return [TileConfig(1, 64, 64, 4, src_vector, dst_vector)]


def choose_tile(candidates: list[TileConfig], rows: int, cols: int, batch: int, sms: int) -> TileConfig:
    """The first of ``candidates`` with at least ``CTAS_PER_SM`` tiles per SM (``PERSISTENT_TILES_PER_SM`` for a
    persistent one), else the last (smallest)."""
    for config in candidates:
        if config.tiles(rows, cols) * batch >= (PERSISTENT_TILES_PER_SM if config.ctas_per_sm else CTAS_PER_SM) * sms:
            return config
    return candidates[-1]


@functools.lru_cache(maxsize=None)
def permute_kernel(config: TileConfig, batch_dims: int) -> PermuteKernel:
    """The tiled kernel of ``config`` with ``batch_dims`` batch dims: our planner's conversion between
    ``tile_layouts(config)``, emitted by ``codegen.permute``."""
    src, dst = tile_layouts(config)
    step = conversion_step(src, dst, 8 * config.element_bytes)
    name = kernel_name("ll_permute", config, batch_dims)
    return emit_tiled_permute_kernel(name, src, dst, config.element_bytes, step, transposed=config.transposed,
                                     batch_dims=batch_dims, ctas_per_sm=config.ctas_per_sm)


@functools.lru_cache(maxsize=None)
def cast_kernel(config: TileConfig, input_format: str, fp8: str) -> PermuteKernel:
    """The cast-transpose kernel of ``config`` (the fp8 tile) from ``input_format`` to ``fp8``."""
    src, dst = tile_layouts(config)
    step = conversion_step(src, dst, 8)
    name = kernel_name("ll_cast_transpose", config, input_format, fp8)
    return emit_cast_transpose_kernel(name, src, dst, input_format, fp8, step)
