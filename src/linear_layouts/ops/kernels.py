"""The tiles of ``linear_layouts.ops`` and their kernels: layouts, our planner's conversion, our generator.

A ``TileConfig`` names one tile: its shape ``rows x cols`` (powers of two), warps, the elements per global
access on each side and ``block`` (rows per thread of ``A``, columns per thread of ``B``: 4 packs 4x4-byte
blocks, so 8-bit data moves through shared memory in 16-byte vectors on both sides). Its two layouts are
blocked layouts (``tile_layouts``); ``analysis.conversion.plan_conversion`` plans the conversion between
them (shared memory with the optimal swizzle; an empty plan where ``src == dst``) and
``codegen.permute`` emits the kernel. ``transpose_tiles`` lists the tiles of a transpose, largest first,
and ``choose_tile`` picks one for a problem on a device (``GridShape``: SMs and L2 bytes):

1. tiles of which an edge tile would leave more than ``1 - MIN_TILE_USE`` of the matrix's tiled area empty
   are passed over (a 128-row tile on 64 rows idles half its threads);
2. the largest tile when the grid holds ``MANY_WAVES`` or more waves of it (``slots``: SMs times the CTAs an
   SM holds by threads, shared memory and registers, ``resident_ctas``): its last, partial wave is then a
   small part of the run;
3. else, when the input and output fit in L2 together (launched back to back, the data stays there), the
   largest tile of at most ``L2_TILE_BYTES`` with ``CTAS_PER_SM`` tiles per SM or more (a short chain of
   load, barrier and store per CTA), of equal tiles an unblocked one, then the one with more warps (less work a
   thread where the latency is L2's: 16-bit 64 x 64 tiles of 8 warps; the 32-bit 64 x 64 tile of 4 warps ran
   faster than the blocked one of 8 on all 8 such problems of the held-out seeds 1-31, 0.953 of its time in
   geomean: ``benchmarks/results/ops_heldout.md``);
4. else (a few waves from DRAM) the tile of at least ``MIN_TILE_BYTES`` with the most bytes in flight per SM
   (its resident CTAs times its tile: each CTA issues all its loads before its barrier), among the tiles an SM
   holds ``OVERLAP_CTAS`` or more of (while one CTA waits at its barrier, the others load and store); the
   larger of equals (fewer CTAs: fewer prologues, barriers and tail), the smaller for the cast-transpose
   (``CAST_SMALLER_OF_EQUALS``).

========  =================================================================  =========================
element   tiles (16-byte vectors; rows x cols / warps, block)                shared memory (the tile)
========  =================================================================  =========================
8-bit     256x256/16 (4), 128x128/4 (4), 64x128/4 (4), 64x64/4 (1)           64, 16, 8, 4 KiB
16-bit    128x128/8 (1), 64x64/4 (1), 64x64/8 (1)                            32, 8, 8 KiB
32-bit    64x64/4 (1), 64x64/8 (4), 32x32/4 (1)                              16, 16, 4 KiB
64-bit    32x32/4 (2)                                                        8 KiB
========  =================================================================  =========================

A 16-bit 64 x 64 tile that reads from DRAM (raster order "m") takes ``DRAM_WARPS`` warps and stores ``B`` with
``DRAM_ROW_LANES`` lanes down its rows (``dram_tile``).

E.g. 8-bit ``8192 x 28672`` (3584 tiles of 256 x 256, 13.6 waves of 264 slots): the 256 x 256 tile;
``8192 x 8192`` (3.9 waves of it, 128 MiB > L2): 128 x 128 (8 CTAs an SM of 16 KiB, as many bytes in flight as
16 of 64 x 128 and half the CTAs); ``4096 x 4096`` (32 MiB in L2):
128 x 128 (1024 tiles).

Where the rows of ``B`` start inside a 32-byte sector -- narrower vectors (a row length or a pointer that 16
bytes do not divide), or, from DRAM, rows an odd multiple of 16 bytes long -- the tiles on either side of a tile
boundary share a sector of every such row: ``transpose_tiles`` then lists tall tiles (8-bit 256 x 256 and
256 x 128, 16-bit 256 x 128, 32-bit 128 x 64, all of 8 warps; 64 x 64 of 8 warps last), and
``choose_narrow_tile`` takes the tallest whose grid gives every SM a tile (``L2_NARROW_CTAS`` in L2), of those
whose edge tiles are at least ``NARROW_TILE_USE`` full. Where only ``A``'s rows are narrow, 128-row tiles. A listed
tile loads at most ``MAX_NARROW_WORDS`` words a thread (all in flight at its barrier) and stores at most
``MAX_NARROW_STORES`` times a thread.

A matrix with fewer than ``SKINNY_EXTENT`` rows or columns (3 channels of an image, a ``[N, 9]`` matrix) fits no
tile of the lists: ``skinny_tile`` gives it a tile of its short side whole, as long as ``SKINNY_TILE_BYTES`` along
the other (``3 x 65536`` fp16: ``4 x 1024``). The persistent form (``ctas_per_sm``) is emitted on request; no list
holds it.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field

from linear_layouts.layouts.blocked import BlockedLayout
from linear_layouts.codegen.permute import PermuteKernel, emit_cast_transpose_kernel, emit_tiled_permute_kernel
from linear_layouts.analysis.conversion import plan_through_matrix_trans
from linear_layouts.codegen.plan import conversion_step, kernel_name, step_from_plan
from linear_layouts.codegen.cast_chunks import emit_chunked_cast_transpose_kernel
from linear_layouts.codegen.flat_copy import emit_copy_kernel
from linear_layouts.codegen.permute_chunks import emit_chunked_transpose_kernel
from linear_layouts.codegen.permute_interleave import emit_interleave_kernel
from linear_layouts.codegen.permute_small import emit_small_kernel
from linear_layouts.codegen.cast_scalar import emit_scalar_cast_transpose_kernel
from linear_layouts.codegen.cast_flat import emit_flat_cast_kernel
from linear_layouts.codegen.permute_bytes import emit_byte_transpose_kernel
from linear_layouts.codegen.realign import emit_realigned_cast_transpose_kernel
from linear_layouts.codegen.realign_rows import emit_realigned_rows_kernel, emit_realigned_span_kernel
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.ops.plan import MAX_VECTOR_BYTES
from linear_layouts.target import DEFAULT_TARGET, Target, named_target, resolve

__all__ = ["copy_kernel", "COPY_WARPS", "TileConfig", "GridShape", "tile_layouts", "transpose_tiles", "rows_tile", "cast_tiles", "choose_tile",
           "choose_narrow_tile", "resident_ctas", "min_ctas", "permute_kernel", "cast_kernel", "realigned_cast_kernel",
           "scalar_cast_kernel", "SCALAR_TILE", "chunked_cast_kernel", "flat_cast_kernel", "ByteTile", "BYTE_TRANSPOSE_TILE", "byte_transpose_kernel", "transpose_raster", "CHUNKED_TILE", "CHUNKED_TILES",
           "MAX_NARROW_WORDS", "MAX_NARROW_STORES", "NARROW_TILE_USE", "CHUNKED_MIN_ROWS", "SKINNY_EXTENT", "SKINNY_TILE_BYTES",
           "SKINNY_CTAS_PER_SM", "SKINNY_DRAM_WARPS", "SKINNY_MISALIGNED_RUN_BYTES", "SKINNY_SHORT_RUN_BYTES", "ROWS_THREAD_BYTES", "ROWS_THREAD_ACCESSES", "RASTER_M_L2S", "raster_order",
           "skinny_tile", "realigned_rows_kernel", "REALIGNED_ROWS_WARPS", "REALIGNED_ROWS_CHUNKS", "REALIGNED_SPAN_CHUNKS", "L2_NARROW_CTAS", "L2_TINY_ELEMENT_BYTES", "CAST_NARROW_CTAS", "interleave_kernel", "INTERLEAVE_WARPS", "small_kernel", "SMALL_WARPS",
           "REGISTERS_PER_WORD", "CTAS_PER_SM", "MANY_WAVES", "MIN_TILE_USE", "L2_TILE_BYTES", "MIN_TILE_BYTES",
           "OVERLAP_CTAS", "TINY_TILE", "KERNEL_KINDS", "CAST_SMALLER_OF_EQUALS", "DRAM_ROW_LANES", "DRAM_WARPS", "dram_tile",
           "SHARED_SECTOR_TILES", "shared_sector_tile"]

#: Tiles per SM below which an L2-resident problem takes a smaller tile (``choose_tile``, rule 3).
CTAS_PER_SM = 2
#: Waves of the largest tile from which ``choose_tile`` takes it (rule 2).
MANY_WAVES = 4
#: The least fraction of a tile's area an edge may leave holding elements (``choose_tile``, rule 1).
MIN_TILE_USE = 0.75
#: The largest tile of an L2-resident problem (``choose_tile``, rule 3).
L2_TILE_BYTES = 16 * 1024
#: The smallest tile of a problem from DRAM with few waves (``choose_tile``, rule 4).
MIN_TILE_BYTES = 8 * 1024
#: CTAs an SM holds of a tile that rule 4 of ``choose_tile`` prefers (others overlap one CTA's barrier).
OVERLAP_CTAS = 8
#: CTAs an SM holds at most (sm_90).
_SM_CTAS = 32
#: Tiles per SM a narrow-vector problem in L2 takes at least (``choose_narrow_tile``): latency-bound, it wants
#: many CTAs more than long runs.
L2_NARROW_CTAS = 4
#: Element sizes whose problems of vectors under 16 bytes within the L2 take ``TINY_TILE`` where no tile of the
#: narrow list gives ``L2_NARROW_CTAS`` tiles an SM (``choose_narrow_tile``; others only where the list leaves SMs
#: without a tile).
#: 8-byte elements' list is one 64 x 64 tile of 8 warps: the tiny tile ran 1.035-1.32x it on all 18 such fp64
#: problems of two draws of 0.25-24 MiB, where fp32 (22) and 16-bit (7) were even, 0.90-1.22x; held out on 35 more
#: fp64 problems, 1.107x and 1.125x in geomean (``benchmarks/results/narrow_small.md``).
L2_TINY_ELEMENT_BYTES = (8,)
#: Whether the cast-transpose's tile choice from DRAM (``choose_tile``'s rule 4) takes the smaller of tiles with as
#: many bytes in flight: 64 x 128 of 4 warps over 128 x 128 of 8, 0.5-2.7% faster on 8 aligned casts of 12 to 72 MiB
#: from DRAM (``benchmarks/results/cast_tiles_aligned.md``; a CTA converts, reduces the amax and stores twice, so
#: twice the CTAs overlap those steps with other CTAs' loads).
CAST_SMALLER_OF_EQUALS = True
#: Tiles per SM a narrow-row cast-transpose in L2 takes at least: its CTAs convert and store twice, so one a
#: SM covers L2's latency (``ops.launches.cast_launches``).
CAST_NARROW_CTAS = 1
#: ``MIN_TILE_USE`` of the narrow-vector tiles (``choose_narrow_tile``): a taller tile's longer runs of ``B``'s rows
#: pay for an edge tile up to half empty (its masked accesses move nothing).
NARROW_TILE_USE = 0.5
#: The tile (rows, cols, warps) of a narrow-vector problem whose grid of the lists' smallest tile would not give every
#: SM a tile (``choose_narrow_tile``): a launch-bound problem wants CTAs more than long runs
#: (``benchmarks/results/tiny_tiles.md``).
TINY_TILE = (32, 32, 4)
#: A matrix with fewer rows (or columns) than this is skinny (``skinny_tile``): no tile of the lists fits it.
SKINNY_EXTENT = 32
#: Bytes of a skinny tile (``skinny_tile``): as a copy's CTA moves, many of them.
SKINNY_TILE_BYTES = 8 * 1024
#: Tiles per SM a skinny problem's grid holds at least where shorter tiles allow (``skinny_tile``): a small problem
#: (a few MiB) on fewer, longer tiles leaves SMs idle and each CTA a long serial run. Calibrated on the small
#: skinny cases of the held-out seeds 101-112 (3 or 4 a SM best, 0.972 of the best length in geomean against 0.936
#: for 8 KiB tiles), held out on 113-117 (0.973 against 0.924): ``benchmarks/results/skinny_small.md``.
SKINNY_CTAS_PER_SM = 4
#: Warps of a skinny tile of 4-byte elements in a problem that moves more than the L2 holds (``skinny_tile``'s
#: ``dram``; 4: every other skinny tile). The same tile of 8 warps ran faster than the 4-warp one on all 29 such
#: cases of the skinny held-out seeds 101-118 (0.956 of its time in geomean, 0.87-0.99); of 2-byte and 1-byte
#: elements it was a coin toss (0.82-1.19x) (``benchmarks/results/ops_heldout.md``).
SKINNY_DRAM_WARPS = 8
#: Bytes of ``B``'s rows a skinny tile runs along where those rows allow only stores narrower than 16 bytes, its
#: elements are 2 bytes or more, the problem moves more than the L2 holds and ``SKINNY_TILE_BYTES`` would give runs
#: shorter than ``SKINNY_SHORT_RUN_BYTES`` (a matrix of 17-31 columns: 256-byte runs, each starting and ending inside
#: a 16-byte chunk the next tile shares); such a tile takes ``SKINNY_DRAM_WARPS`` warps too. Chosen on the skinny
#: held-out runs of seeds 101-123 (21 such cases: 1024-byte runs of 8 warps 1.11x the 256-byte tile in geomean,
#: 0.95-1.30x; 512-byte runs 1.06-1.08x; 2048 1.05x; problems in L2 and single-byte elements slower; rows 16-byte
#: aligned 0.99-1.01x); held out on two new draws of 16, 1.09x and 1.10x (0.92-1.26x):
#: ``benchmarks/results/skinny_runs.md``.
SKINNY_MISALIGNED_RUN_BYTES = 1024
#: Runs along ``B``'s rows below which ``SKINNY_MISALIGNED_RUN_BYTES`` applies (512-byte runs, matrices of 9-16
#: columns, gained 1.01x from 1024).
SKINNY_SHORT_RUN_BYTES = 512
#: Bytes a thread of a ``ROWS`` tile moves at least (``rows_tile``), in at most ``ROWS_THREAD_ACCESSES`` accesses:
#: 4 accesses of 2 bytes a thread left 1 KiB tiles with too little in flight (rows of 145 fp16 elements: 19.7
#: against 11.0 µs at 2 KiB); 16 one-byte accesses lost to 8 (``benchmarks/results/rows_tiles.md``).
ROWS_THREAD_BYTES = 16
#: The most accesses a thread of a ``ROWS`` tile makes to reach ``ROWS_THREAD_BYTES``.
ROWS_THREAD_ACCESSES = 8
#: Warps of a ``ROWS`` tile of 16-byte accesses in a problem that moves more than the L2 holds (``rows_tile``'s
#: ``dram``; 4: as other tiles). The same 8 KiB tile of 8 warps ran 1.025-1.063x the 4-warp one on the scan's row
#: moves of 16-byte vectors from DRAM (attention's bf16 heads of 128: 18.1 -> 17.5 µs), 0.98-0.99x on those held in
#: L2 (``benchmarks/results/rows_tiles.md``, ``rows_tile_scan.json``).
ROWS_DRAM_WARPS = 8
#: The most 32-bit words a thread of a narrow-vector tile loads (``transpose_tiles``, ``_narrow_fits``): about 120
#: registers (ptxas, sm_90).
MAX_NARROW_WORDS = 64
#: The most stores a thread of a narrow-vector tile issues (``_narrow_fits``).
MAX_NARROW_STORES = 128
#: Registers a thread of a tile kernel is given per 32-bit word of the tile it moves (the word itself, its
#: addresses and the conversion's temporaries): with fewer, ptxas (sm_90) spills (a 16 KiB tile of 4 warps at
#: 40 registers; 8 KiB tiles of 4 warps fit 32).
REGISTERS_PER_WORD = 2


@dataclass(frozen=True)
class GridShape:
    """What the tile choice and the kernels read of a device: its SMs, its L2 bytes (by default an H100's, the
    ``DEFAULT_TARGET``'s 50 MiB) and its architecture, the ``Target`` (``target.named_target(arch)``: its
    instructions, shared memory and registers) the tiles' conversions are planned for and their launch bounds set
    by: an A100's ``sm_80`` plans no ``stmatrix``. On a GPU the ops read all three from the driver
    (``ops.launch.grid_shape``); on the CPU ``GridShape.of(target)`` takes a known device's.

    >>> GridShape.of(named_target(device="H200"))
    GridShape(multiprocessors=132, l2_bytes=62914560, arch='sm_90')
    """

    multiprocessors: int
    l2_bytes: int = DEFAULT_TARGET.l2_bytes
    arch: str = DEFAULT_TARGET.arch

    def __post_init__(self) -> None:
        for name, least in (("multiprocessors", 1), ("l2_bytes", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise LayoutError(f"GridShape: {name} must be an int >= {least}, got {value!r}")
        if not isinstance(self.arch, str):
            raise LayoutError(f"GridShape: arch must be a string like 'sm_90', got {self.arch!r}")

    @classmethod
    def of(cls, target: Target) -> GridShape:
        """The grid of a known device: ``target``'s SMs, L2 bytes and architecture."""
        if not isinstance(target, Target):
            raise LayoutError(f"target: must be a Target (linear_layouts.target.named_target), got {target!r}")
        return cls(target.sms, target.l2_bytes, target.arch)

    @property
    def target(self) -> Target:
        return named_target(self.arch)


@dataclass(frozen=True)
class TileConfig:
    """One tile (module doc): ``element_bytes`` of the moved elements (the cast-transpose: of its fp8
    output, with ``input_format`` its input's), ``src_vector`` / ``dst_vector`` elements per access along a
    row of ``A`` / of ``B``, ``transposed`` as in ``codegen.permute``; ``ctas_per_sm > 0``: persistent (at
    most that many CTAs per SM, each looping over tiles with the next tile's loads in flight); ``ldmatrix``
    (16-bit transposes): ``B``'s layout with 4 lanes down its 8-row vectors, as ``ldmatrix.trans`` delivers them,
    converted through ``analysis.conversion.plan_through_matrix_trans``; ``row_lanes``: lanes of a warp down
    ``B``'s row vectors (0: as many as the tile's rows allow, at most 32, 16 with blocks), the rest across its
    rows, so that a warp's store covers ``row_lanes`` vectors of each of ``32 / row_lanes`` rows of ``B``."""

    element_bytes: int
    rows: int
    cols: int
    warps: int
    src_vector: int
    dst_vector: int
    block: int = 1
    transposed: bool = True
    ctas_per_sm: int = 0
    row_lanes: int = field(default=0, repr=False)
    ldmatrix: bool = field(default=False, repr=False)

    def __repr__(self) -> str:
        """The fields, ``row_lanes`` and ``ldmatrix`` only where set (kernel names hash this text)."""
        shown = (f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self)
                 if f.repr or getattr(self, f.name) != f.default)
        return f"TileConfig({', '.join(shown)})"

    def __post_init__(self) -> None:
        if self.row_lanes and (self.row_lanes > 32 or self.row_lanes & (self.row_lanes - 1) or not self.transposed):
            raise LayoutError(f"row_lanes: a power of two up to 32, for a transpose, got {self.row_lanes}")
        if self.ldmatrix and (self.element_bytes != 2 or not self.transposed or self.block != 1
                              or self.dst_vector != MAX_VECTOR_BYTES // 2 or self.src_vector != MAX_VECTOR_BYTES // 2
                              or self.row_lanes not in (0, 4)):
            raise LayoutError("ldmatrix: a 16-bit transpose of 16-byte vectors on both sides, no blocks and 4 row "
                              f"lanes, got {self}, row_lanes {self.row_lanes}")
        for label in ("rows", "cols", "warps", "src_vector", "dst_vector", "block"):
            value = getattr(self, label)
            if value < 1 or value & (value - 1):
                raise LayoutError(f"{label}: must be a power of two, got {value}")
        if self.element_bytes not in (1, 2, 4, 8):
            raise LayoutError(f"element_bytes: must be 1, 2, 4 or 8, got {self.element_bytes}")

    @property
    def threads(self) -> int:
        return 32 * self.warps

    @property
    def tile_bytes(self) -> int:
        return self.rows * self.cols * self.element_bytes

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
    rows; ``dst`` (transposed) ``dst_vector x block`` along its columns (``rows / dst_vector`` lanes down them, at
    most 32, 16 with blocks, 4 with ``ldmatrix``; ``row_lanes`` if set), warps across; not transposed,
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
    tb = c.row_lanes or (min(_lanes(c.rows, c.dst_vector, cap), 4) if c.ldmatrix else _lanes(c.rows, c.dst_vector, cap))
    dst = BlockedLayout([c.dst_vector, c.block], [tb, 32 // tb], [1, c.warps], [0, 1])
    if c.dst_vector * tb > c.rows or c.block * (32 // tb) * c.warps > c.cols:
        raise LayoutError(f"config: {c} covers more than its tile on the dst side")
    return _one_cta(src.to_linear([c.rows, c.cols])), _one_cta(dst.to_linear([c.rows, c.cols]))


def transpose_tiles(element_bytes: int, src_vector: int, dst_vector: int, dst_sectors: bool = True) -> list[TileConfig]:
    """The tiles of a transpose (module doc's table), largest first; ``dst_sectors``: whether the rows of ``B``
    start on sector boundaries (False: tall tiles, as for narrow vectors, ``choose_narrow_tile``)."""
    w, v = element_bytes, MAX_VECTOR_BYTES // element_bytes
    if dst_vector != v or not dst_sectors:  # tall tiles: long runs of B's rows between the sectors they share
        narrow = {1: [(256, 256, 8), (256, 128, 8), (128, 128, 8)], 2: [(256, 128, 8), (128, 64, 8)],
                  4: [(128, 64, 8)], 8: []}[w]
    elif src_vector != v:  # only A's rows start inside a sector: a shared sector is read twice, written never
        narrow = {1: [(128, 128, 8)], 2: [(128, 64, 8)], 4: [(128, 64, 8)], 8: []}[w]
    if src_vector != v or dst_vector != v or not dst_sectors:
        block = 4 if w == 1 and src_vector == dst_vector == v else 1  # 8-bit 16-byte vectors: 4 x 4-byte blocks
        tiles = [TileConfig(w, m, n, warps, src_vector, dst_vector, block) for m, n, warps in narrow]
        return [c for c in tiles if _narrow_fits(c)] + [TileConfig(w, 64, 64, 8, src_vector, dst_vector)]
    fast = {1: [(256, 256, 16, 4), (128, 128, 4, 4), (64, 128, 4, 4), (64, 64, 4, 1)],
            2: [(128, 128, 8, 1), (64, 64, 4, 1), (64, 64, 8, 1)],
            4: [(64, 64, 4, 1), (64, 64, 8, 4), (32, 32, 4, 1)],
            8: [(32, 32, 4, 2)]}[w]
    return [TileConfig(w, m, n, warps, v, v, block) for m, n, warps, block in fast]


def shared_sector_tile(element_bytes: int, rows: int, cols: int, batch: int, device: GridShape) -> TileConfig | None:
    """``SHARED_SECTOR_TILES``' tile of ``element_bytes`` (16-byte vectors) for ``batch`` matrices of ``rows x cols``
    whose output rows start inside sectors, where the bytes moved, its grid and its edges allow it on ``device``, else
    None.

    >>> h200 = GridShape(132, 60 << 20)
    >>> shared_sector_tile(2, 2712, 104, 39, h200).rows, shared_sector_tile(2, 2712, 104, 1, h200)  # 1 matrix: 44 tiles
    (128, None)
    """
    entry = SHARED_SECTOR_TILES.get(element_bytes)
    if entry is None:
        return None
    (m, n, warps, block), per_sm, use, l2s = entry
    if 2 * element_bytes * rows * cols * batch > l2s * device.l2_bytes:
        return None
    v = MAX_VECTOR_BYTES // element_bytes
    tile = TileConfig(element_bytes, m, n, warps, v, v, block)
    if _use(tile, rows, cols) >= use and tile.tiles(rows, cols) * batch >= per_sm * device.multiprocessors:
        return tile
    return None


def _pow2_at_least(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def skinny_tile(element_bytes: int, src_vector: int, dst_vector: int, rows: int, cols: int, batch: int = 1,
                device: GridShape | None = None, dram: bool = False) -> TileConfig | None:
    """The tile of ``batch`` skinny ``rows x cols`` matrices (a side under ``SKINNY_EXTENT``): that side rounded up
    to a power of two, the other as long as ``SKINNY_TILE_BYTES`` allows (at most the matrix's, rounded up), 4 warps
    (fewer, then longer, where its threads would cover more than the tile; ``SKINNY_DRAM_WARPS`` for 4-byte
    elements where ``dram``: the problem moves more than the L2 holds); on ``device``, shorter (halved down to
    32) while the grid holds fewer than ``SKINNY_CTAS_PER_SM`` tiles an SM. None for a matrix that is not skinny or
    that no such tile fits. Where the tile runs along ``B``'s rows and those allow only stores narrower than 16 bytes,
    from DRAM, of elements of 2 bytes or more, runs shorter than ``SKINNY_SHORT_RUN_BYTES`` grow to
    ``SKINNY_MISALIGNED_RUN_BYTES`` on ``SKINNY_DRAM_WARPS`` warps (the two partial chunks each run starts and ends in
    are a smaller part of a longer one). A 64-row tile on 3 rows idles 95% of its threads and stores 12-byte runs of
    ``B``; the ``4 x 1024`` tile of ``3 x 65536`` fp16 stores 3072 contiguous elements a CTA.

    >>> skinny_tile(2, 8, 1, 3, 65536)
    TileConfig(element_bytes=2, rows=4, cols=1024, warps=4, src_vector=8, dst_vector=1, block=1, transposed=True, ctas_per_sm=0)
    >>> skinny_tile(4, 1, 1, 289, 11, 16, GridShape(132)).rows  # 48 tiles of 128 rows: 160 of 32
    32
    >>> skinny_tile(4, 2, 1, 2074915, 9, dram=True).warps  # 128 x 16 tiles of fp32 from DRAM
    8
    >>> c = skinny_tile(2, 2, 1, 1074727, 24, dram=True)  # B's rows of 2149454 bytes: 1 KiB runs, not 256
    >>> c.rows, c.cols, c.warps
    (512, 32, 8)
    """
    if min(rows, cols) >= SKINNY_EXTENT:
        return None
    across = rows <= cols  # the short side is the rows: a tile of all of them, long along the columns
    short, other = (rows, cols) if across else (cols, rows)
    s = _pow2_at_least(short)
    length = max(32, min(SKINNY_TILE_BYTES // (s * element_bytes), _pow2_at_least(other)))
    long_runs = (not across and dram and element_bytes >= 2 and dst_vector * element_bytes < 16
                 and length * element_bytes < SKINNY_SHORT_RUN_BYTES)  # B's rows misaligned, runs short
    if long_runs:
        length = max(length, min(SKINNY_MISALIGNED_RUN_BYTES // element_bytes, _pow2_at_least(other)))

    most = SKINNY_DRAM_WARPS if dram and (element_bytes == 4 or long_runs) else 4
    warp_counts = (most, *(w for w in (4, 2, 1) if w < most))  # a side of 1 or 2 elements spreads fewer warps

    def fitting(length: int) -> TileConfig | None:
        m, n = (s, length) if across else (length, s)
        for warps in warp_counts:
            try:
                config = TileConfig(element_bytes, m, n, warps, src_vector, dst_vector)
                tile_layouts(config)
                return config
            except LayoutError:
                continue
        return None

    config = None
    while config is None and length <= 8 * SKINNY_TILE_BYTES // element_bytes:
        config = fitting(length)
        length *= 2
    if config is None or device is None:
        return config
    least = SKINNY_CTAS_PER_SM * device.multiprocessors
    length = (config.cols if across else config.rows) // 2
    while config.tiles(rows, cols) * batch < least and length >= 32:
        shorter = fitting(length)
        if shorter is None:
            break
        config, length = shorter, length // 2
    return config


def rows_tile(element_bytes: int, vector: int, cols: int, dram: bool = False) -> TileConfig:
    """The tile of a ``ROWS`` permutation with rows of ``cols`` elements: up to 256 bytes of a row (all of it
    when shorter), rows enough for 4 accesses per thread of 4 warps and for ``ROWS_THREAD_BYTES`` a thread in at
    most ``ROWS_THREAD_ACCESSES`` accesses (8 KiB of 16-byte vectors, as a copy's CTA: many of them, so that the
    last wave is short; 2 KiB of 2-byte accesses; 1 KiB of 1-byte ones). ``dram`` (the problem moves more than
    the L2 holds): a tile of 16-byte accesses takes ``ROWS_DRAM_WARPS`` warps, its rows unchanged, where they
    hold a row of lanes for each warp.

    >>> rows_tile(2, 1, 145).rows  # rows of 290 bytes at 2-byte alignment: 8 x 128 elements
    8
    >>> rows_tile(2, 8, 128).warps, rows_tile(2, 8, 128, dram=True).warps  # attention's bf16 heads of 128
    (4, 8)
    """
    n = max(vector, min(1 << max(0, (cols - 1).bit_length()), 256 // element_bytes))
    warps = 4
    threads = 32 * warps
    filled = min(ROWS_THREAD_BYTES * threads // (n * element_bytes), ROWS_THREAD_ACCESSES * vector * threads // n)
    rows_per_warp = 32 // _lanes(n, vector, 32)
    m = max(rows_per_warp * warps, 512 * vector // n, filled)
    if dram and vector * element_bytes == MAX_VECTOR_BYTES and m >= rows_per_warp * ROWS_DRAM_WARPS:
        warps = ROWS_DRAM_WARPS
    return TileConfig(element_bytes, m, n, warps, vector, vector, 1, transposed=False)


def cast_tiles(src_vector: int, dst_vector: int, dst_sectors: bool = True) -> list[TileConfig]:
    """The tiles of the cast-transpose (8-bit configs: the fp8 tile), largest first: 16 elements per
    thread along a row of ``X`` and of ``T`` (16-byte fp8 stores on both sides); where ``T``'s rows are
    narrower or start inside a sector (``dst_sectors`` False), tall tiles (``choose_narrow_tile``), as the
    transposes take."""
    if src_vector == 16 and dst_vector == 16 and dst_sectors:
        return [TileConfig(1, 128, 128, 8, 16, 16, 4), TileConfig(1, 64, 128, 4, 16, 16, 4)]
    block = 4 if src_vector == dst_vector == 16 else 1
    tall = [TileConfig(1, 256, 64, 8, 16, dst_vector, block), TileConfig(1, 128, 64, 4, 16, dst_vector, block)]
    return (tall if src_vector == 16 else []) + [TileConfig(1, 64, 64, 4, src_vector, dst_vector)]


def _space_ctas(config: TileConfig, t: Target) -> int:
    """CTAs of ``config`` an SM of ``t`` holds by threads and shared memory (the conversion's buffer holds the
    tile; each CTA also takes the target's reserved shared memory)."""
    shared = config.tile_bytes if config.transposed else 0
    return max(1, min(t.sm_threads // config.threads, t.sm_shared_bytes // (shared + t.cta_reserved_shared_bytes),
                      _SM_CTAS))


def resident_ctas(config: TileConfig, target: Target | None = None) -> int:
    """CTAs of ``config`` an SM of ``target`` (default: the default target) holds by threads, shared memory and
    registers (``REGISTERS_PER_WORD`` per 32-bit register its elements fill). On sm_90: 2 for 8-bit
    256 x 256 tiles of 16 warps (64 registers a thread), 16 for 8 KiB tiles of 4 warps (32 registers)."""
    t = resolve(target)
    return max(1, min(_space_ctas(config, t), t.sm_registers // (config.threads * REGISTERS_PER_WORD * _words(config))))


def _words(config: TileConfig) -> int:
    """32-bit registers a thread's elements fill as its accesses load them (an access narrower than 4 bytes
    still fills a register): 16 for 8 KiB of 16-byte vectors on 128 threads, 32 for 4 KiB of single bytes."""
    elements = max(1, config.rows * config.cols // config.threads)
    access = min(config.src_vector, config.dst_vector) * config.element_bytes
    return max(1, elements * config.element_bytes // min(4, access))


def _narrow_fits(config: TileConfig) -> bool:
    """Whether a narrow-vector tile stays within ``MAX_NARROW_WORDS`` words of loads a thread (all in flight at
    its barrier; its stores read shared memory one access at a time) and ``MAX_NARROW_STORES`` stores a thread:
    the 16-bit 256 x 128 tile of 8 warps with 16-byte loads and 2-byte stores does (64 words, 128 stores), the
    8-bit 256 x 256 one with single-byte stores does not (256 stores)."""
    elements = max(1, config.rows * config.cols // config.threads)
    words = elements * config.element_bytes // min(4, config.src_vector * config.element_bytes)
    return words <= MAX_NARROW_WORDS and elements // config.dst_vector <= MAX_NARROW_STORES


def min_ctas(config: TileConfig, target: Target | None = None) -> int:
    """The CTAs per SM ``permute_kernel`` compiles ``config`` for (``__launch_bounds__``): those the SM holds by
    threads and shared memory when ``REGISTERS_PER_WORD`` registers per word fit them (registers then never
    lower the occupancy); else 0, no bound (the compiler's own choice). On sm_90: 16 for 8 KiB tiles of
    4 warps (32 registers a thread), 0 for 16 KiB tiles of 4 warps (13 CTAs would leave 39 registers)."""
    t = resolve(target)
    space = _space_ctas(config, t)
    return space if resident_ctas(config, t) == space else 0


def _use(config: TileConfig, rows: int, cols: int) -> float:
    """The fraction of the tiled area ``T_m M x T_n N`` that holds elements of a ``rows x cols`` matrix."""
    return rows * cols / (config.tiles(rows, cols) * config.rows * config.cols)


def choose_tile(candidates: list[TileConfig], rows: int, cols: int, batch: int, device: GridShape,
                element_traffic: int = 0, smaller_of_equals: bool = False) -> TileConfig:
    """The tile of ``candidates`` (largest first) for ``batch`` matrices of ``rows x cols`` on ``device``, by the
    module doc's rules; ``element_traffic``: bytes read and written per element (default: the element read
    and written once); ``smaller_of_equals``: rule 4 takes the smaller of tiles with as many bytes in flight
    (``CAST_SMALLER_OF_EQUALS``: the cast-transpose's)."""
    usable = [c for c in candidates if _use(c, rows, cols) >= MIN_TILE_USE]
    if not usable:
        return max(reversed(candidates), key=lambda c: _use(c, rows, cols))
    first = usable[0]
    t = device.target
    if first.tiles(rows, cols) * batch >= MANY_WAVES * device.multiprocessors * resident_ctas(first, t):
        return first
    if rows * cols * batch * (element_traffic or 2 * first.element_bytes) <= device.l2_bytes:
        small = [c for c in usable if c.tile_bytes <= L2_TILE_BYTES] or usable[-1:]
        enough = [c for c in small if c.tiles(rows, cols) * batch >= CTAS_PER_SM * device.multiprocessors]
        return max(enough, key=lambda c: (c.tile_bytes, c.block == 1, c.warps)) if enough else small[-1]
    grains = [c for c in usable if c.tile_bytes >= MIN_TILE_BYTES] or usable[:1]
    grains = [c for c in grains if resident_ctas(c, t) >= OVERLAP_CTAS] or grains
    sign = -1 if smaller_of_equals else 1
    return max(grains, key=lambda c: (resident_ctas(c, t) * c.tile_bytes, sign * c.tile_bytes))


def choose_narrow_tile(candidates: list[TileConfig], rows: int, cols: int, batch: int, device: GridShape,
                       element_traffic: int = 0, l2_ctas: int = 0) -> TileConfig:
    """The tile of ``candidates`` (narrow vectors, tallest first) for ``batch`` matrices of ``rows x cols``: the
    tallest of ``choose_tile``'s rule 1 whose grid gives every SM of ``device`` a tile (``L2_NARROW_CTAS`` tiles
    when the input and output fit in L2 together, or ``l2_ctas``; ``element_traffic`` as ``choose_tile``'s), else
    the one of most tiles, or ``TINY_TILE`` of the same vectors where even that one leaves SMs without a tile (within
    the L2, vectors under 16 bytes of the element sizes of ``L2_TINY_ELEMENT_BYTES``: where it falls short of
    ``L2_NARROW_CTAS``). A row of
    ``B`` that starts inside a sector ends each tile's run of it in two sectors shared with the neighbouring tiles:
    taller tiles make longer runs and fewer shared sectors.

    Example: 8-bit ``4104 x 8192`` (64 MiB moved, from DRAM) takes 256 x 256 tiles (544 of them); ``2052 x 4096``
    (16 MiB, in L2) takes 128 x 128 tiles (544) over 256 x 128 (288 < 4 x 132)."""
    usable = [c for c in candidates if _use(c, rows, cols) >= NARROW_TILE_USE] or candidates[-1:]
    resident = rows * cols * batch * (element_traffic or 2 * usable[0].element_bytes) <= device.l2_bytes
    least = ((l2_ctas or L2_NARROW_CTAS) if resident else 1) * device.multiprocessors
    for c in usable:
        if c.tiles(rows, cols) * batch >= least:
            return c
    most = max(usable, key=lambda c: c.tiles(rows, cols))
    narrow = min(most.src_vector, most.dst_vector) * most.element_bytes < MAX_VECTOR_BYTES
    if most.tiles(rows, cols) * batch >= device.multiprocessors and not (
            resident and narrow and most.element_bytes in L2_TINY_ELEMENT_BYTES):
        return most
    tiny = dataclasses.replace(most, rows=TINY_TILE[0], cols=TINY_TILE[1], warps=TINY_TILE[2], block=1)
    try:
        tile_layouts(tiny)
    except LayoutError:
        return most
    return tiny


@functools.lru_cache(maxsize=None)
def permute_kernel(config: TileConfig, batch_dims: int, arch: str = "sm_90", raster: str = "n",
                   fold: str = "") -> PermuteKernel:
    """The tiled kernel of ``config`` with ``batch_dims`` batch dims for architecture ``arch``: our planner's
    conversion between ``tile_layouts(config)`` on ``named_target(arch)`` (its instructions only), emitted by
    ``codegen.permute``; one tile per CTA, it is compiled for ``min_ctas(config)`` CTAs per SM of that target
    (registers capped to match). Its CTAs take tiles in order ``raster`` (``raster_order``); ``fold`` (``"cols"``,
    ``"rows"``): one more batch dim runs on along ``A``'s or ``B``'s columns (``ops.launches.fold_side``)."""
    t = named_target(arch)
    src, dst = tile_layouts(config)
    if config.ldmatrix:
        step = step_from_plan(plan_through_matrix_trans(src, dst, 8 * config.element_bytes, target=t))
    else:  # the optimal swizzle's plan, on which the tiles were calibrated (config.ldmatrix takes the other)
        step = conversion_step(src, dst, 8 * config.element_bytes, target=t, ldmatrix_trans=False)
    name = kernel_name("ll_permute", config, batch_dims, *(("raster m",) if raster == "m" else ()),
                       *((f"fold {fold}",) if fold else ()))
    return emit_tiled_permute_kernel(name, src, dst, config.element_bytes, step, transposed=config.transposed,
                                     batch_dims=batch_dims, ctas_per_sm=config.ctas_per_sm,
                                     min_ctas=0 if config.ctas_per_sm else min_ctas(config, t), raster=raster,
                                     fold=fold, target=t)


#: Bytes moved (read and written), in L2s, from which a transpose's CTAs take tiles in raster order "m"
#: (``raster_order``); calibrated on an H200 (``benchmarks/results/tile_order.md``).
RASTER_M_L2S = 1.25

#: The tile of a transpose that stays in L2 between launches and whose output rows start inside 32-byte sectors (16-byte
#: aligned), by element size: ``((rows, cols, warps, block), tiles per SM, use, L2s)``, taken where its grid gives every
#: SM that many tiles, its edge tiles leave at most ``1 - use`` of its area empty and the problem moves at most ``L2s``
#: times the L2 (``shared_sector_tile``). Taller than the L2 rule's tiles, so that fewer of ``B``'s sectors are written
#: in halves by two CTAs. 16-bit: chosen on the held-out scans (4 cases: 1.08x the 64 x 64 tile) and held out on two
#: draws, 1.05x over 24 (0.96-1.18x); up to ``RASTER_M_L2S`` L2s (where the tall 256 x 128 tile was taken): chosen on
#: one draw (1.06x over 9), held out on another, 1.09x over 8 (1.02-1.12x). 8-bit: within the L2, chosen on one draw
#: (1.12x over 7), held out on two, 1.08x over 11 (0.99-1.32x); beyond it 0.99x on held-out shapes, so not there. Rows
#: on sectors gain nothing (``benchmarks/results/shared_sectors.md``).
SHARED_SECTOR_TILES = {1: ((256, 128, 8, 4), 3, 0.5, 1.0), 2: ((128, 64, 8, 1), 2, 0.75, RASTER_M_L2S)}


def raster_order(config: TileConfig, moved_bytes: int, device: GridShape, cast: bool = False) -> str:
    """The order the CTAs of ``config``'s kernel take tiles in (``codegen.permute.RASTERS``) for a problem that
    reads and writes ``moved_bytes`` in all: ``"m"``, down ``A``'s columns of tiles, for a transpose of more than
    ``RASTER_M_L2S`` L2s, so that the CTAs running at one time write whole stretches of ``B``'s rows to DRAM;
    ``"n"`` (``A`` read row after row) otherwise: for row moves, whose reads and writes run the same way, for
    problems that stay in L2 between launches, and (``cast``) for a cast-transpose whose ``T`` takes 16-byte
    stores, where ``X`` read and ``C`` written in whole stretches are most of the bytes. A cast-transpose with
    narrower stores of ``T`` (rows ``M`` bytes long that 16 bytes do not align) takes ``"m"`` as a transpose does:
    the next CTA completes the sectors a tile leaves partly written at its ends.

    >>> h200 = GridShape.of(named_target(device="H200"))
    >>> raster_order(TileConfig(2, 64, 64, 4, 8, 8), 2 * 128 * 2**20, h200), raster_order(
    ...     TileConfig(2, 64, 64, 4, 8, 8), 2 * 32 * 2**20, h200)
    ('m', 'n')
    """
    if not config.transposed or (cast and config.element_bytes * config.dst_vector >= 16):
        return "n"
    return transpose_raster(moved_bytes, device)


def transpose_raster(moved_bytes: int, device: GridShape) -> str:
    """The raster order of a transpose moving ``moved_bytes`` (read and written) on ``device``: ``"m"`` from
    ``RASTER_M_L2S`` L2s on (its CTAs write stretches of the output's rows), else ``"n"``."""
    return "m" if moved_bytes > RASTER_M_L2S * device.l2_bytes else "n"


#: Lanes down ``B``'s rows and warps of a 16-bit 64 x 64 tile that reads from DRAM (raster order "m", ``dram_tile``):
#: 4 lanes, so that a warp's store covers 8 rows x 64 bytes of ``B`` (the tile's own 8 lanes: 4 rows x 128 bytes),
#: and 8 warps. Calibrated on an H200 (``benchmarks/results/transpose_lanes.md``): 4 row lanes 1.1% faster in the
#: mean at 64 x 64 tiles of 4 and 8 warps over 7 problems of 24 to 74 MiB, 8 warps another 1.2%; neither pays on
#: 128-row tiles, on 8- or 32-bit ones, nor in L2 (3% slower there).
DRAM_ROW_LANES = 4
DRAM_WARPS = 8


def dram_tile(config: TileConfig, moved_bytes: int, device: GridShape) -> TileConfig:
    """``config`` with ``DRAM_WARPS`` warps and ``row_lanes = DRAM_ROW_LANES`` where it is a 16-bit 64 x 64
    transpose tile of 16-byte vectors whose CTAs take tiles in raster order "m" (``transpose_raster``: more than
    ``RASTER_M_L2S`` L2s moved), else ``config``.

    >>> h200 = GridShape.of(named_target(device="H200"))
    >>> dram_tile(TileConfig(2, 64, 64, 4, 8, 8), 200 << 20, h200)
    TileConfig(element_bytes=2, rows=64, cols=64, warps=8, src_vector=8, dst_vector=8, block=1, transposed=True, ctas_per_sm=0, row_lanes=4)
    >>> dram_tile(TileConfig(2, 64, 64, 4, 8, 8), 20 << 20, h200).warps  # in L2
    4
    """
    if (config.element_bytes, config.rows, config.cols, config.src_vector, config.dst_vector, config.block) == (
            2, 64, 64, 8, 8, 1) and config.transposed and not config.row_lanes and not config.ldmatrix \
            and not config.ctas_per_sm and transpose_raster(moved_bytes, device) == "m":
        return dataclasses.replace(config, warps=DRAM_WARPS, row_lanes=DRAM_ROW_LANES)
    return config


#: The name prefixes of this module's permutation kernels (longest first) and the kind of kernel each names
#: (``ops.explain`` reads a launch's kind from its kernel's name).
KERNEL_KINDS = (("ll_permute_chunked", "chunked transpose"), ("ll_permute_bytes", "byte transpose"),
                ("ll_rows_realigned", "realigned rows"),
                ("ll_permute_deinterleave", "deinterleave"), ("ll_permute_interleave", "interleave"),
                ("ll_permute_small", "small blocks"), ("ll_copy", "flat copy"), ("ll_permute", "tiled"))

#: Warps of the flat copy kernel's CTA (``codegen.flat_copy``).
COPY_WARPS = 8


@functools.lru_cache(maxsize=None)
def copy_kernel(vector_bytes: int) -> PermuteKernel:
    """The copy of contiguous bytes (``codegen.flat_copy``) in ``vector_bytes`` vectors, ``COPY_WARPS`` warps, at
    least 16 bytes a thread (2 vectors of 16 or 8 bytes, 4 of 4, 8 of 2 or 1): on an H200 within 3% of the fastest
    of 12 variants from 2 MiB, at every vector width (``benchmarks/results/copy.md``)."""
    vectors = min(8, max(2, 16 // vector_bytes))
    return emit_copy_kernel(f"ll_copy_{8 * vector_bytes}b", vector_bytes, vectors, COPY_WARPS)


#: Warps of the realigned rows kernels' CTA (``codegen.realign_rows``), the 16-byte output chunks a thread of the
#: chunk kernel owns and a thread of the span kernel (rows of ``16 REALIGNED_SPAN_CHUNKS`` bytes or more). Both are
#: bound by their instructions, so more resident threads gain over more work a thread: of the chunk kernel 1 chunk of
#: 4 warps ran 1.47x the tiled kernel on rows of single bytes where 4 chunks of 8 warps ran 0.84x; of the span kernel
#: 2 chunks 2.65x, 4 chunks 2.21x, 8 chunks 1.37x (``benchmarks/results/realign_rows.md``).
REALIGNED_ROWS_WARPS = 4
REALIGNED_ROWS_CHUNKS = 1
REALIGNED_SPAN_CHUNKS = 2


@functools.lru_cache(maxsize=None)
def realigned_rows_kernel(batch_dims: int, span: bool = False) -> PermuteKernel:
    """The move of rows that 16 bytes do not align (``codegen.realign_rows``), ``batch_dims`` batch dims,
    ``REALIGNED_ROWS_WARPS`` warps; ``span``: the span kernel, ``REALIGNED_SPAN_CHUNKS`` chunks a thread (rows of
    that many chunks or more), else the chunk kernel of ``REALIGNED_ROWS_CHUNKS``: ``ll_rows_realigned_1b``,
    ``ll_rows_realigned_span_1b``."""
    if span:
        return emit_realigned_span_kernel(f"ll_rows_realigned_span_{batch_dims}b", batch_dims, REALIGNED_SPAN_CHUNKS,
                                          REALIGNED_ROWS_WARPS)
    return emit_realigned_rows_kernel(f"ll_rows_realigned_{batch_dims}b", batch_dims, REALIGNED_ROWS_CHUNKS,
                                      REALIGNED_ROWS_WARPS)


#: Warps of the interleave kernel's CTA (``codegen.permute_interleave``): its tile is ``32 W V`` long-side indices.
INTERLEAVE_WARPS = 4


@functools.lru_cache(maxsize=None)
def interleave_kernel(element_bytes: int, narrow: int, deinterleave: bool, batch_dims: int,
                      aligned: bool = True) -> PermuteKernel:
    """The transpose of a matrix whose narrow side is ``narrow`` elements (``codegen.permute_interleave``; its
    columns when ``deinterleave``, else its rows), ``INTERLEAVE_WARPS`` warps, ``batch_dims`` batch dims; not
    ``aligned``: the form at any element offset (its name ends in ``_any``)."""
    name = (f"ll_permute_{'de' if deinterleave else ''}interleave_{8 * element_bytes}b_n{narrow}_d{batch_dims}"
            + ("" if aligned else "_any"))
    return emit_interleave_kernel(name, element_bytes, narrow, deinterleave, INTERLEAVE_WARPS, batch_dims,
                                  aligned=aligned)


#: Warps of the small-block kernel's CTA (``codegen.permute_small``).
SMALL_WARPS = 8


@functools.lru_cache(maxsize=None)
def small_kernel(element_bytes: int, block: tuple[tuple[int, int, int], ...]) -> PermuteKernel:
    """The batch-of-small-blocks kernel (``codegen.permute_small``) of ``block`` (``(size, src_stride, dst_stride)``
    per dim), ``SMALL_WARPS`` warps, runs of ``max(1, MIN_TILE_BYTES // (E w))`` blocks: the bytes of the tiled
    kernels' smallest DRAM tile a CTA (fp32 ``3 x 5`` blocks: 136 a run). Its name spells the block as its input
    shape and the permutation of it: ``ll_permute_small_32b_3x5_p10``."""
    elements = 1
    for size, _, _ in block:
        elements *= size
    by_src = sorted(block, key=lambda d: -d[1])
    order = "".join("0123456789abcdefghijklmnopqrstuvwxyz"[by_src.index(d)] for d in sorted(block, key=lambda d: -d[2]))
    name = (f"ll_permute_small_{8 * element_bytes}b_{'x'.join(str(d[0]) for d in by_src)}_p{order}")
    run = max(1, MIN_TILE_BYTES // (elements * element_bytes))
    return emit_small_kernel(name, element_bytes, block, run, SMALL_WARPS)


@functools.lru_cache(maxsize=None)
def cast_kernel(config: TileConfig, input_format: str, fp8: str, arch: str = "sm_90", raster: str = "n") -> PermuteKernel:
    """The cast-transpose kernel of ``config`` (the fp8 tile) from ``input_format`` to ``fp8``, its conversion
    planned for ``named_target(arch)``, its CTAs taking tiles in order ``raster`` (``raster_order``)."""
    t = named_target(arch)
    src, dst = tile_layouts(config)
    step = conversion_step(src, dst, 8, target=t)
    name = kernel_name("ll_cast_transpose", config, input_format, fp8, *(("raster m",) if raster == "m" else ()))
    return emit_cast_transpose_kernel(name, src, dst, input_format, fp8, step, raster=raster, target=t)


#: Tiles of the realigned cast-transpose (``codegen.realign``): rows and warps (the columns follow from the
#: input's bytes: 256 of 2 bytes, 128 of 4).
_REALIGNED_TILE = (64, 8)


@functools.lru_cache(maxsize=None)
def realigned_cast_kernel(input_format: str, fp8: str, arch: str = "sm_90") -> PermuteKernel:
    """The cast-transpose of rows that 16 bytes do not align (``codegen.realign``): 64-row tiles of 8 warps
    (64 x 256 of bf16 / fp16, 64 x 128 of fp32), launch bounds for ``named_target(arch)``."""
    rows, warps = _REALIGNED_TILE
    name = kernel_name("ll_cast_transpose_realigned", input_format, fp8, rows, warps)
    return emit_realigned_cast_transpose_kernel(name, input_format, fp8, rows, warps, target=named_target(arch))


#: The tile of the scalar cast-transpose (``codegen.cast_scalar``): rows, columns, warps.
SCALAR_TILE = (128, 64, 8)


@functools.lru_cache(maxsize=None)
def scalar_cast_kernel(input_format: str, fp8: str, tile: tuple[int, int, int] = SCALAR_TILE,
                       arch: str = "sm_90") -> PermuteKernel:
    """The cast-transpose of rows at any alignment by single-element accesses (``codegen.cast_scalar``):
    ``tile`` = (rows, columns, warps), by default 128 x 64 tiles of 8 warps (32 elements a thread); launch bounds
    for ``named_target(arch)``."""
    rows, cols, warps = tile
    name = kernel_name("ll_cast_transpose_scalar", input_format, fp8, rows, cols, warps)
    return emit_scalar_cast_transpose_kernel(name, input_format, fp8, rows, cols, warps, target=named_target(arch))


#: The tile of the chunked cast-transpose (``codegen.cast_chunks``) of 2-byte inputs: rows, columns, warps (3
#: chunks a thread in flight), the fastest of ``cast_odd_bench``'s (``benchmarks/results/cast_odd.md``).
CHUNKED_TILE = (128, 64, 16)
#: Its tile of each input format (fp32: 64 x 64 tiles of 16 warps, the fastest for 4-byte inputs).
CHUNKED_TILES = {"bf16": CHUNKED_TILE, "fp16": CHUNKED_TILE, "fp32": (64, 64, 16)}


@functools.lru_cache(maxsize=None)
def chunked_cast_kernel(input_format: str, fp8: str, tile: tuple[int, int, int] | None = None,
                        arch: str = "sm_90") -> PermuteKernel:
    """The cast-transpose of rows at any length by aligned chunks of the flat positions (``codegen.cast_chunks``;
    ``X`` 16-byte aligned, ``C`` and ``T`` at multiples of 8 bytes, 4 for fp32): ``tile`` = (rows, columns,
    warps), by default ``CHUNKED_TILES[input_format]``; launch bounds for ``named_target(arch)``."""
    rows, cols, warps = CHUNKED_TILES.get(input_format, CHUNKED_TILE) if tile is None else tile
    name = kernel_name("ll_cast_transpose_chunked", input_format, fp8, rows, cols, warps)
    return emit_chunked_cast_transpose_kernel(name, input_format, fp8, rows, cols, warps, target=named_target(arch))


@functools.lru_cache(maxsize=None)
def flat_cast_kernel(input_format: str, fp8: str, arch: str = "sm_90") -> PermuteKernel:
    """The fp8 cast in ``X``'s flat order (``codegen.cast_flat``; ``X`` 16-byte aligned, ``C`` at a multiple of 8
    bytes, 4 for fp32): CTAs of 8 warps, 4 chunks a thread; launch bounds for ``named_target(arch)``."""
    return emit_flat_cast_kernel(kernel_name("ll_cast_flat", input_format, fp8), input_format, fp8,
                                 target=named_target(arch))


@dataclass(frozen=True)
class ChunkedTile:
    """A tile of the chunked transpose (``codegen.permute_chunks``): ``rows x cols`` elements of
    ``element_bytes`` bytes, ``warps`` warps, ownership granules of ``granule_bytes`` (16 or 32)."""

    element_bytes: int
    rows: int
    cols: int
    warps: int
    granule_bytes: int = 16


@dataclass(frozen=True)
class ByteTile:
    """A tile of the byte transpose (``codegen.permute_bytes``): ``rows x cols`` bytes of ``warps`` warps, ownership
    granules of ``granule_bytes`` (16, 32 or 64)."""

    rows: int
    cols: int
    warps: int
    granule_bytes: int = 16


#: The byte transpose's tile: 128 x 64 of 5 warps with 32-byte granules (the 160 rows a tile loads, 4 chunks each:
#: one item a thread; no sector of the output two tiles share), the fastest of ten on the calibration set
#: (``benchmarks/results/byte_transpose.md``).
BYTE_TRANSPOSE_TILE = ByteTile(128, 64, 5, 32)


@functools.lru_cache(maxsize=None)
def byte_transpose_kernel(batch_dims: int, tile: ByteTile | None = None, arch: str = "sm_90",
                          raster: str = "n") -> PermuteKernel:
    """The transpose of bytes at any alignment (``codegen.permute_bytes``) with ``batch_dims`` batch dims at ``tile``
    (default ``BYTE_TRANSPOSE_TILE``) in ``raster`` order; launch bounds for ``named_target(arch)``."""
    tile = BYTE_TRANSPOSE_TILE if tile is None else tile
    name = kernel_name("ll_permute_bytes", tile, batch_dims, *(("raster m",) if raster == "m" else ()))
    return emit_byte_transpose_kernel(name, tile.rows, tile.cols, tile.warps, batch_dims, tile.granule_bytes,
                                      target=named_target(arch), raster=raster)


#: The chunked transpose's tile of each element size: 128 rows (the 15 halo rows of a 16-bit tile's 32-byte
#: granules are 12% more loads), ``8 G`` columns (a warp's element stores into shared memory conflict-free), 16
#: warps (3 chunks a thread), 32-byte granules (no sector of the output shared between tiles).
CHUNKED_TRANSPOSE_TILES = {1: ChunkedTile(1, 128, 128, 16, 32), 2: ChunkedTile(2, 128, 64, 16, 32),
                           4: ChunkedTile(4, 128, 32, 16, 32), 8: ChunkedTile(8, 128, 16, 16, 32)}
#: Rows of ``A`` (of the output's rows) from which ``ops`` takes the chunked transpose (``ops.launches``): it won
#: from 4095 rows on and lost at 1225 (fp32; bf16 won there) and at 931-2696 fp8 ones.
CHUNKED_MIN_ROWS = 2048


@functools.lru_cache(maxsize=None)
def chunked_transpose_kernel(element_bytes: int, batch_dims: int, tile: ChunkedTile | None = None,
                             source_aligned: bool = True, arch: str = "sm_90") -> PermuteKernel:
    """The transpose into rows 16 bytes do not align (``codegen.permute_chunks``) with ``batch_dims`` batch dims:
    ``tile``, by default ``CHUNKED_TRANSPOSE_TILES[element_bytes]``; ``source_aligned``: of input rows 16 bytes
    align, else of input rows at any element offset; launch bounds for ``named_target(arch)``."""
    tile = CHUNKED_TRANSPOSE_TILES[element_bytes] if tile is None else tile
    if tile.element_bytes != element_bytes:
        raise LayoutError(f"tile: {tile} is not of {element_bytes}-byte elements")
    name = kernel_name("ll_permute_chunked" if source_aligned else "ll_permute_chunked_any", tile, batch_dims)
    return emit_chunked_transpose_kernel(name, element_bytes, tile.rows, tile.cols, tile.warps, batch_dims,
                                         tile.granule_bytes, target=named_target(arch), source_aligned=source_aligned)
