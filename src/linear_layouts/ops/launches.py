"""What an op launches, as values: from shapes, element sizes and addresses to kernels, grids and arguments.

Pure (no device): ``permute_launches`` plans ``x.permute(dims)`` (``ops.plan``), picks the vectors the row
lengths and the addresses allow and the tile (``ops.kernels``), and returns the ``Launch`` list (or one
``Copy``; nothing for an empty tensor); ``cast_launches`` does the same for the cast-transpose. The ops run
these on the device; the CPU tests run the very same launches through the emulator. A permutation beyond one
launch's arguments and grid (``MAX_LAUNCH_EXTENT`` rows or columns, ``MAX_LAUNCH_CTAS`` tiles) is cut into several
launches of one kernel (``launch_pieces``).

Example: ``permute_launches((4096, 11008), (1, 0), 2, a, b, 132)`` is one ``Launch`` of the 16-bit
128x128 kernel on ``32 x 86`` CTAs with arguments ``(a, b, 4096, 11008, 86, 32, 11008, 4096,
fast_divider(32))`` (the kernel divides its tile index by the 32 tiles of a column of tiles with the last: the
CTAs of a transpose of 172 MiB go down the columns of tiles, ``ops.kernels.raster_order``).
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from types import MappingProxyType
from collections.abc import Mapping
from typing import Any

from linear_layouts.codegen.flat_copy import copy_vector_bytes
from linear_layouts.codegen.permute import MAX_BATCH_DIMS, MAX_KERNEL_BATCH_DIMS, PermuteKernel, fast_divider
from linear_layouts.codegen.permute_interleave import MAX_NARROW, vector_bytes_for
from linear_layouts.codegen import realign_rows
from linear_layouts.core.errors import LayoutError
from linear_layouts.ops.kernels import (
    CAST_NARROW_CTAS, CAST_SMALLER_OF_EQUALS, CHUNKED_MIN_ROWS, MIN_TILE_BYTES, MIN_TILE_USE, SKINNY_CTAS_PER_SM, SKINNY_EXTENT, BYTE_TRANSPOSE_TILE, ByteTile, ChunkedTile, GridShape, TileConfig,
    byte_transpose_kernel, cast_kernel, cast_tiles, flat_cast_kernel, small_kernel,
    copy_kernel, choose_narrow_tile, choose_tile, chunked_cast_kernel, shared_sector_tile, chunked_transpose_kernel, interleave_kernel, permute_kernel,
    REALIGNED_SPAN_CHUNKS, raster_order, realigned_cast_kernel, realigned_rows_kernel, rows_tile, scalar_cast_kernel, skinny_tile, dram_tile, transpose_raster,
    transpose_tiles, tile_layouts, CHUNKED_TRANSPOSE_TILES,
)
from linear_layouts.ops.plan import (
    MAX_VECTOR_BYTES, SECTOR_BYTES, PermuteKind, TiledProblem, gathers_first, plan_permutation, reduce_permutation,
    vector_elements,
)

__all__ = ["Launch", "Copy", "addressed", "transpose_candidates", "TUNING_TILES", "TUNING_MAX_TILE_BYTES", "BYTE_TRANSPOSE", "BYTES_MAX_ROW_LOADS", "permute_launches", "permute_template", "cast_launches", "cast_choices", "tile_for", "pointer_alignment",
           "MISALIGNED_CAST", "MISALIGNED_CASTS", "chunked_fits", "MISALIGNED_TRANSPOSE", "MISALIGNED_TRANSPOSES",
           "chunked_transposes", "chunked_source_aligned", "strided_alignment", "view_launches", "framework_gathers",
           "gathers", "one_pass_work", "ONE_PASS_CTA_ELEMENTS", "ONE_PASS_FREE_WORK", "GATHER_MIN_WORK",
           "FRAMEWORK_GATHER_BYTES", "transpose_vectors", "interleaves", "small_blocks", "SMALL_BATCHES", "SMALL_BLOCK_BYTES", "SMALL_TILED_CTA_BYTES", "SMALL_TILED_CTA_BLOCK_BYTES", "INTERLEAVE", "INTERLEAVE_MIN_CTAS_PER_SM", "INTERLEAVE_ANY_MIN_BYTES", "INTERLEAVE_WIDE_MIN_BYTES", "INTERLEAVE_ROW_BYTES", "INTERLEAVE_VECTOR_RATIO", "tiled_arguments",
           "COPY_KERNEL_MIN_BYTES", "MAX_LAUNCH_EXTENT", "MAX_LAUNCH_CTAS", "MAX_BATCH_LAUNCHES", "Piece",
           "launch_pieces", "FOLD_BATCH", "FOLD_SIDES", "FOLD_MIN_SAVED", "fold_side", "REALIGNED_ROWS_BELOW",
           "REALIGNED_CHUNKS_BELOW", "REALIGNED_MIN_CTAS_PER_SM", "REALIGNED_TILE_USE", "realigned_rows",
           "rows_tile_use"]

#: Rows and columns of a tile problem are ``unsigned`` kernel arguments.
_MAX_EXTENT = 2**32 - 1
#: CTAs of a 1-D grid.
_MAX_CTAS = 2**31 - 1
#: The most rows or columns one launch of a permutation takes (``_MAX_EXTENT``, read at each call, so a test can
#: lower it): a longer side is cut into pieces of the largest power of two within it (``launch_pieces``).
MAX_LAUNCH_EXTENT = _MAX_EXTENT
#: The most CTAs one launch of a permutation takes (``_MAX_CTAS``, read at each call): more tiles are cut into
#: several launches along the outermost batch dims, then along the sides (``launch_pieces``).
MAX_LAUNCH_CTAS = _MAX_CTAS
#: The most launches ``permute`` makes, one per index of the batch dims beyond ``MAX_BATCH_DIMS``, before it gives
#: the kernel every batch dim instead (up to ``MAX_KERNEL_BATCH_DIMS``; read at each call): a rank-24 tensor of
#: size-2 dims reversed, 22 batch dims, is one launch instead of ``2**18``.
MAX_BATCH_LAUNCHES = 16
#: The kernels of a cast-transpose whose rows or bases 16 bytes do not align: ``realigned`` (``codegen.realign``:
#: aligned 16-byte chunks realigned in registers), ``scalar`` (``codegen.cast_scalar``: one element an access),
#: ``chunked`` (``codegen.cast_chunks``: aligned chunks of the flat positions, where ``chunked_fits``; else scalar),
#: ``flat`` (``codegen.cast_flat``: the cast in ``X``'s flat order, then ``T`` as ``permute`` transposes ``C``'s bytes,
#: where ``chunked_fits``; else chunked's choice) or ``auto``: flat where that transpose is the byte transpose
#: (``_bytes_by_default``), else chunked.
MISALIGNED_CASTS = ("realigned", "scalar", "chunked", "flat", "auto")
#: The one ``cast_launches`` takes (one of ``MISALIGNED_CASTS``): auto. Chunked was the fastest of the first three
#: for every input format (``benchmarks/results/cast_odd.md``); flat was 0.98-1.26x chunked where ``C``'s transpose
#: takes the byte transpose and 0.86-1.11x where it does not, then 1.04-1.23x on shapes drawn after this rule
#: (``benchmarks/results/cast_flat.md``).
MISALIGNED_CAST = "auto"
#: The kernels of a transpose whose input rows allow 16-byte loads and whose output rows do not: ``tiled``
#: (``codegen.permute``: narrower stores) or ``chunked`` (``codegen.permute_chunks``: aligned chunks of the output's
#: absolute positions, ``chunked_transposes``).
MISALIGNED_TRANSPOSES = ("tiled", "chunked")
#: The one ``permute_template`` takes (one of ``MISALIGNED_TRANSPOSES``) for output rows of ``CHUNKED_MIN_ROWS``
#: or more that allow single-element stores only, of ``CHUNKED_ELEMENT_BYTES``, read at each of its calls
#: (``dispatch`` caches the plans it made: set it before the first call): chunked, 1.10-1.22x the tiled kernel
#: there; it trails it on shorter rows, wider stores and bytes (``benchmarks/results/chunked_transpose.md``,
#: ``ops_heldout.md``).
MISALIGNED_TRANSPOSE = "chunked"
#: Element sizes the chunked transpose takes by default (``_chunked_by_default``): 2 bytes (1.03-1.22x the tiled
#: kernel's best tile on all 19 such held-out cases) and 8 (fp64 ``4095 x 4096``: 79.9% -> 88.7% of copy); of 4-byte
#: elements it won 3 of 7 (0.85-1.12x, 0.975 in geomean), so they keep the tiled kernel (``ops_heldout.md``).
CHUNKED_ELEMENT_BYTES = (2, 8)
#: Of those, the element sizes it takes for a batch of matrices too (else a single matrix only): on 32 fp64 problems
#: drawn for it (``chunked_transpose_bench.py --set draw``, seeds 1 and 2) it ran 0.78-0.89x the tiled kernel on all
#: 11 batched ones and 0.92-1.05x on the 21 single matrices, 0.995 in geomean (kept there for ``4095 x 4096``'s
#: 1.09x); 16-bit batches gained 1.07-1.15x (``benchmarks/results/chunked_transpose.md``).
CHUNKED_BATCH_ELEMENT_BYTES = (2,)
#: Row moves whose rows the tiled kernel would move in vectors narrower than this many bytes (``plan.vector_elements``
#: of the row length and both addresses) take a realigned rows kernel (``codegen.realign_rows``, ``realigned_rows``):
#: the span kernel where the rows are at least a span long (``kernels.REALIGNED_SPAN_CHUNKS`` chunks), else the chunk
#: kernel where the vectors are narrower than ``REALIGNED_CHUNKS_BELOW``; 0: never. Read at each ``permute_template``
#: call. The span kernel ran 2.65x, 1.28x and 1.41x the tiled kernel in geomean on rows of 1-, 2- and 4-byte vectors,
#: 1.07x of 8-byte ones (0.78x on 3 MiB); the chunk kernel 1.86x on rows of single bytes, 0.89-0.97x on wider
#: (``benchmarks/results/realign_rows.md``).
REALIGNED_ROWS_BELOW = 8
#: The vectors (bytes) below which rows shorter than a span take the chunk kernel (``REALIGNED_ROWS_BELOW``).
REALIGNED_CHUNKS_BELOW = 2
#: CTAs per SM a realigned rows kernel's grid must give the device for ``permute_template`` to take it: on fewer (under
#: about 2 MiB on an H200) its longer chain a thread trailed the tiled kernel's tiles (0.74-0.95x on all five such
#: problems of the held-out seeds 23-26, ``benchmarks/results/realign_rows.md``).
REALIGNED_MIN_CTAS_PER_SM = 4
#: Row moves whose tile (``tile_for``) would hold elements in less than this fraction of its area -- matrices of a few
#: rows in a large batch, ``[4, N, 40]`` bf16 by ``(1, 0, 2)`` on 64 x 64 tiles: 6% -- take the span kernel at any
#: vector and grid, where their rows are a span long (``realigned_rows``): on such draws it ran 1.1-7.2x the tile
#: (``benchmarks/results/realign_rows.md``, seeds 70-71). 0: never.
REALIGNED_TILE_USE = MIN_TILE_USE
#: Whether ``permute_template`` takes the byte transpose (``codegen.permute_bytes``) where ``_bytes_by_default`` says
#: (False: the tiled kernel's byte accesses), read at each of its calls as ``MISALIGNED_TRANSPOSE`` is.
BYTE_TRANSPOSE = True
#: Rows of ``A`` a byte transpose's tile rows may load per row of the problem (``_bytes_by_default``): above, the
#: halo of short outputs costs more than the aligned accesses save (0.83-0.94x the tiled kernel at 1.84, 1.05-1.08x at
#: 1.37: ``benchmarks/results/byte_transpose.md``).
BYTES_MAX_ROW_LOADS = 1.5
#: Whether ``permute_template`` takes the interleave kernel (``codegen.permute_interleave``) for the transposes
#: ``interleaves`` admits (False: the tiled kernel's skinny tiles), read at each of its calls as
#: ``MISALIGNED_TRANSPOSE`` is.
INTERLEAVE = True
#: Bytes from which ``interleaves`` gives a problem whose vectors do not align the interleave kernel's form at any
#: offset: below, its edge lanes' element accesses cost more than the skinny tiles (``[8, 35, 35, 3]`` fp16, 57
#: KiB: 2.41 against 1.72 µs; ``[256, 35, 35, 3]`` fp16, 1.8 MiB: equal; from 4 MiB 1.27-2.44x faster:
#: ``benchmarks/results/interleave_odd.md``). On 85 problems of 2-32 MiB drawn for it (``interleave_bench.py --set
#: small``, seeds 1 and 2) the form ran 0.36-1.42x the skinny tiles below 4 MiB (rows of 9-29 bytes the slowest,
#: two of them slower than eager), 0.66-1.88x above; from 4 MiB the choice was 0.977 of the faster of the two in
#: geomean, from 2 MiB 0.887, from 6 or 8 MiB 0.980 and 0.974 (``benchmarks/results/interleave_small.md``).
INTERLEAVE_ANY_MIN_BYTES = 4 << 20
#: Bytes from which ``interleaves`` gives a problem rows of more than 16 bytes (one-byte elements, 17-32 a row, of
#: ``INTERLEAVE_ROW_BYTES``; 4-byte vectors), whose calibration (``interleave_wide.md``) was of 20-85 MiB problems.
#: On the small draws of ``interleave_bench.py --set small`` (seeds 1-4) such rows under 1 MiB ran 0.51-1.07x the
#: skinny tiles, 0.85x in geomean over 12 (three slower than eager); from 1.35 MiB 0.73-1.41x
#: (``benchmarks/results/interleave_small.md``).
INTERLEAVE_WIDE_MIN_BYTES = 1 << 20
#: The longest row along the narrow side ``interleaves`` admits, by element size: a 16-byte vector's, and 32
#: one-byte elements (4-byte vectors); from 24 bytes of 2- to 8-byte elements the tiled kernel was as fast
#: (``interleave_calibration.md``).
INTERLEAVE_ROW_BYTES = {1: 32, 2: MAX_VECTOR_BYTES, 4: MAX_VECTOR_BYTES, 8: MAX_VECTOR_BYTES}
#: How many times wider than the tiled kernel's accesses along the narrow rows (``plan.vector_elements``) the
#: interleave kernel's vectors must be for ``interleaves`` to take a problem: where they were 1-2x as wide the
#: tiles measured as fast or faster (uint8 rows of 16, 22, 24, 26, 28 bytes: 0.64-0.95x; of 8 and 4: 1.00-1.01x),
#: from 4x the kernel 1.04-2.5x (one fp16 row of 12 bytes 0.89x). Chosen on ``interleave.md``, ``interleave_wide.md``
#: and the held-out seeds 114 and 115 (``ops_heldout.md``): no seed was held out from it.
INTERLEAVE_VECTOR_RATIO = 4
#: Tiles per SM the interleave kernel's grid must hold for ``permute_template`` to take it (0: any grid): one for
#: every 8 SMs. A problem of a few tens of KiB makes a grid of a few of its long tiles, each a long serial run on one
#: SM, where the skinny tiles (``kernels.skinny_tile``, shortened to ``SKINNY_CTAS_PER_SM`` an SM) spread it over
#: every SM. Chosen on 64 small problems the kernel takes (``interleave_bench.py --set small``, seeds 1 and 2): on
#: grids under 16 tiles it ran 0.86x the skinny tiles in geomean (0.51-1.09x, 10 cases), on 16-32 tiles 1.03x,
#: from 32 on 1.0-1.4x in its aligned form (``benchmarks/results/interleave_small.md``).
INTERLEAVE_MIN_CTAS_PER_SM = 0.125
#: Whether ``permute_template`` takes the small-block kernel (``codegen.permute_small``) for the batches
#: ``small_blocks`` admits (False: the kernel they took before), read at each of its calls as ``INTERLEAVE`` is.
SMALL_BATCHES = True
#: The largest block (bytes) the small-block kernel takes from the interleave kernel on aligned planes, read at each
#: call; from any other kernel it takes blocks up to ``MIN_TILE_BYTES``. The kernels that take one block a CTA are
#: bound by how fast CTAs start and retire where a block is small or their accesses narrow; the aligned interleave
#: kernel moves its block with 16-byte vectors and shuffles, at about the copy's speed from blocks of a KiB or two,
#: where the small-block kernel's gathers of single elements from shared memory are slower. Calibrated on the device
#: (``benchmarks/small_batches_bench.py``: ``results/small_batches_calibration.md`` and seeds 1-3 in
#: ``results/small_batches/``), checked on held-out seeds drawn after (``results/small_batches.md``).
SMALL_BLOCK_BYTES = 1024
#: The least bytes a CTA of the tiled transpose kernel moves for it to keep a batch of small blocks that fill its tile
#: (``small_blocks``' ``least_cta_bytes``): below, one small matrix a CTA (blocks of several, or a tile of a few hundred
#: bytes) is bound by how fast CTAs start and retire, and the small-block kernel's runs of whole blocks move the same
#: bytes in a CTA of ``MIN_TILE_BYTES``. Only where the tiled grid holds ``SKINNY_CTAS_PER_SM`` CTAs an SM or more (a
#: smaller problem's skinny tiles are short so as to spread it over the SMs). Read at each call
#: (``benchmarks/results/tiny_ctas.md``).
SMALL_TILED_CTA_BYTES = 1024
#: The largest block the small-block kernel takes from a tiled kernel whose CTAs move under ``SMALL_TILED_CTA_BYTES``
#: (``small_blocks``' ``tiny_block_bytes``): a run of one block a CTA, its shared chunk under the 48 KiB any launch
#: gets (from others, blocks up to ``MIN_TILE_BYTES``), where there are at least as many blocks as SMs (fewer: a
#: CTA of 8 warps moves a whole block while most SMs idle; ``results/tiny_ctas.md``).
SMALL_TILED_CTA_BLOCK_BYTES = 32 * 1024

#: What a CTA of the one pass over a view without a stride-1 dim costs, in elements moved (``gathers``): on an H200
#: a CTA of one-element rows took about 1.1 ns beyond its elements, which moved at about 130 a ns
#: (``benchmarks/results/gather_first.md``).
ONE_PASS_CTA_ELEMENTS = 148
#: The one pass's work (``one_pass_work``) that one launch's host time hides: 20 µs a call back to back, at 130
#: elements a ns (``framework_gathers``).
ONE_PASS_FREE_WORK = 2_600_000
#: The one pass's work from which ``gathers`` takes two passes: the 35 µs a call of the two passes costs back to
#: back at the least (a second launch and a scratch tensor), at 130 elements a ns.
GATHER_MIN_WORK = 4_500_000

#: Bytes of a view below which ``framework_gathers`` leaves a view ``gathers`` would gather first to the framework's
#: copy: two launches and a scratch tensor cost a call about 35 µs back to back on an H200's host, PyTorch's one
#: copy of such views up to 2.5 MiB 14-27 µs, and of views from 10 MiB 25-210 µs to our 25-170
#: (``benchmarks/results/gather_first.md``).
FRAMEWORK_GATHER_BYTES = 4 << 20

#: Whether a tiled transpose whose matrices leave a partial edge tile may run a batch dim on across its tiles
#: (``fold_side``), read at each call of ``permute_template``.
FOLD_BATCH = True
#: The sides a batch dim is folded along (``fold_side``): ``A``'s columns only. Where a fold saved 22% of the CTAs or
#: more, folded there (the loads split at the matrices' ends, the stores whole) the kernel ran 0.94-1.17x the unfolded
#: one on an H200, folded along the rows (the stores split, their end sectors shared by two tiles) 0.80-1.01x
#: (``benchmarks/results/fold.md``).
FOLD_SIDES = ("cols",)
#: The fraction of its CTAs a fold must save (``fold_side``), by element bytes; other element sizes do not fold.
#: Where it saved 10% or less the folded kernel ran 0.87-1.06x (its tiles' runs start inside sectors), from 22% along
#: the columns 0.94-1.17x; 4- and 8-byte elements then ran 0.88-1.16x (geomean 1.02 and 0.99) on problems drawn after
#: that, 1- and 2-byte ones 0.92-1.70x; on problems drawn after those, 2-byte elements that saved 15-30% ran 0.998 in
#: geomean (0.905-1.09x), from 30% 1.154 (0.99-1.31x), 1-byte elements 1.116 and 1.338 (``benchmarks/results/fold.md``).
FOLD_MIN_SAVED = MappingProxyType({1: 0.15, 2: 0.30})

#: Bytes from which a permutation that is the identity in memory runs the flat copy kernel (``ops.kernels.copy_kernel``)
#: instead of the driver's copy (``Copy``): on an H200, 1.45-1.9x the driver's copy in CUDA graphs (where it is a
#: graph memcpy node) at sizes no power of two divides well, and 1.02-1.2x launched on a stream; 0.97x at 64 and 256
#: MiB; below 2 MiB 0.92-0.96x (``benchmarks/results/copy.md``).
COPY_KERNEL_MIN_BYTES = 2 << 20


@dataclass(frozen=True)
class Launch:
    """``kernel`` on a 1-D grid of ``ctas`` CTAs with ``values`` (one per ``kernel.params``; pointers as ints)."""

    kernel: PermuteKernel
    ctas: int
    values: tuple[Any, ...]


@dataclass(frozen=True)
class Copy:
    """``nbytes`` from address ``src`` to ``dst``."""

    dst: int
    src: int
    nbytes: int


def pointer_alignment(*pointers: int) -> int:
    """The largest power of two, at most 8, dividing every pointer: ``pointer_alignment(0x100, 0x104) == 4``."""
    a = 8
    while a > 1 and any(p % a for p in pointers):
        a //= 2
    return a


@functools.lru_cache(maxsize=4096)
def _plan(shape: tuple[int, ...], dims: tuple[int, ...], itemsize: int, alignment: int,
          strides: tuple[int, ...] | None = None, out_strides: tuple[int, ...] | None = None) -> TiledProblem:
    if itemsize == 16:  # a 16-byte element moves as a pair of 8-byte halves: one more dim that stays last
        shape, dims, itemsize = shape + (2,), dims + (len(shape),), 8
        strides = None if strides is None else tuple(2 * s for s in strides) + (1,)
        out_strides = None if out_strides is None else tuple(2 * s for s in out_strides) + (1,)
    return plan_permutation(shape, dims, itemsize, alignment, strides, out_strides)


def strided_alignment(address: int, problem: TiledProblem, side: str = "src") -> int:
    """The address, modulo ``SECTOR_BYTES``, whose alignment is that of every row and batch start of ``problem``'s
    input at ``address`` (``side`` "dst": of its output): the largest power of two dividing ``address`` and each
    stride of that side in bytes (what the vectors of a view with gaps may be: ``y[:, :100]`` of a bf16 ``y`` of rows
    of 300 at an aligned address reads 8-byte vectors, ``strided_alignment(0, p)`` is 8 for its ``p``)."""
    w = problem.element_bytes
    alignment = SECTOR_BYTES
    strides = ((problem.lda, *(s for _, s, _ in problem.batch)) if side == "src"
               else (problem.ldb, *(d for _, _, d in problem.batch)))
    for value in (address, *(w * s for s in strides)):
        if value % SECTOR_BYTES:
            alignment = min(alignment, value & -value)
    return alignment % SECTOR_BYTES


def _rows_on_sectors(row_bytes: int, base: int) -> bool:
    """Whether rows of ``row_bytes`` from address ``base`` each start on a 32-byte sector boundary."""
    return row_bytes % SECTOR_BYTES == 0 and base % SECTOR_BYTES == 0


def _on_sectors(row_bytes: int, base: int, moved_bytes: int, device: GridShape) -> bool:
    """Whether an output's rows of ``row_bytes`` at address ``base`` start on sector boundaries, or the problem
    (``moved_bytes`` read and written) stays in ``device``'s L2, where a sector two tiles share costs no DRAM
    access: False asks for the tall tiles. ``_on_sectors(4112, 0, 64 << 20, GridShape(132))`` is False."""
    return moved_bytes <= device.l2_bytes or _rows_on_sectors(row_bytes, base)


def transpose_vectors(problem: TiledProblem, src: int, dst: int, device: GridShape) -> tuple[int, int, bool]:
    """``(src_vector, dst_vector, sectors)`` of a transpose ``problem`` at these addresses: the widest vectors
    its rows allow (``plan.vector_elements``) and ``_on_sectors`` of its output rows, what its tile lists read."""
    w = problem.element_bytes
    moved = problem.rows * problem.cols * problem.batch_count * 2 * w
    return (vector_elements(w, problem.cols, src), vector_elements(w, problem.rows, dst),
            _on_sectors(problem.rows * w, dst, moved, device))


def tile_for(problem: TiledProblem, src: int, dst: int, device: GridShape) -> TileConfig:
    """The tile of ``problem`` with these addresses on ``device``: the widest vectors the row lengths and the
    addresses allow (``plan.vector_elements``); a row move ``kernels.rows_tile`` (``dram`` where it moves more than
    ``device``'s L2); then ``kernels.skinny_tile`` for a matrix with a side under
    ``SKINNY_EXTENT`` (shorter where the grid would not fill ``device``; ``dram`` where it moves more than the L2),
    else ``kernels.choose_tile``
    (``choose_narrow_tile`` for narrow vectors or rows that start inside a sector)."""
    w = problem.element_bytes
    moved = 2 * w * problem.rows * problem.cols * problem.batch_count
    if problem.kind is PermuteKind.ROWS:
        return rows_tile(w, vector_elements(w, problem.cols, src, dst), problem.cols, moved > device.l2_bytes)
    vin, vout, sectors = transpose_vectors(problem, src, dst, device)
    skinny = skinny_tile(w, vin, vout, problem.rows, problem.cols, problem.batch_count, device, moved > device.l2_bytes)
    if skinny is not None:
        return skinny
    full = vin == vout == MAX_VECTOR_BYTES // w
    if full and not _rows_on_sectors(problem.rows * w, dst):  # 16-byte vectors, output rows inside sectors
        tall = shared_sector_tile(w, problem.rows, problem.cols, problem.batch_count, device)
        if tall is not None:
            return tall
    choose = choose_tile if full and sectors else choose_narrow_tile
    config = choose(transpose_tiles(w, vin, vout, sectors), problem.rows, problem.cols, problem.batch_count, device)
    return dram_tile(config, moved, device)


#: Tiles ``(rows, cols, warps)`` that ``transpose_candidates`` adds to a transpose's two lists, at the problem's own
#: vectors: what autotuning (``ops.tune``) times beside the planner's choice.
TUNING_TILES = ((32, 32, 4), (64, 64, 4), (64, 64, 8), (128, 64, 4), (64, 128, 4), (128, 64, 8), (64, 128, 8),
                (128, 128, 8), (256, 128, 8), (128, 256, 8))
#: The largest tile ``transpose_candidates`` adds (an SM's shared memory holds 227 KiB).
TUNING_MAX_TILE_BYTES = 128 * 1024


def transpose_candidates(problem: TiledProblem, src: int, dst: int, device: GridShape
                         ) -> list[TileConfig | ChunkedTile]:
    """The tiles a transpose ``problem`` at these addresses may take instead of ``tile_for``'s, in order: both of
    ``transpose_tiles``' lists at its vectors (``transpose_vectors``), ``TUNING_TILES`` (bytes at 16-byte vectors
    also in 4 x 4-byte blocks), tiles ``2**k`` across a side under 32 with 32-2048 along the other, and the chunked
    transpose's tile where ``chunked_transposes`` takes the problem from aligned input rows; [] for other kinds. A
    tile whose threads over-cover it, or over ``TUNING_MAX_TILE_BYTES``, is left out; ``permute_launches(...,
    tile=t)`` may still refuse one for the problem's sizes (LayoutError). A 16-bit ``4096 x 4096`` transpose has
    10."""
    if problem.kind is not PermuteKind.TRANSPOSE:
        return []
    w = problem.element_bytes
    vin, vout, sectors = transpose_vectors(problem, src, dst, device)
    tiles: dict = dict.fromkeys(transpose_tiles(w, vin, vout, sectors) + transpose_tiles(w, vin, vout, not sectors))
    shapes = list(TUNING_TILES)
    for extent, across in ((problem.rows, True), (problem.cols, False)):
        if extent < 32:
            small = 1 << max(0, (extent - 1).bit_length())
            shapes += [(small, n, warps) if across else (n, small, warps)
                       for n in (32, 64, 128, 256, 512, 1024, 2048) for warps in (4, 8)]
    for m, n, warps in shapes:
        for block in ((4, 1) if w == 1 and vin == vout == MAX_VECTOR_BYTES else (1,)):
            try:
                tile = TileConfig(w, m, n, warps, vin, vout, block)
                if tile.tile_bytes > TUNING_MAX_TILE_BYTES:
                    continue
                tile_layouts(tile)
            except LayoutError:  # threads that over-cover the tile
                continue
            tiles.setdefault(tile)
    out: list[TileConfig | ChunkedTile] = list(tiles)
    if chunked_transposes(problem, src, dst) and chunked_source_aligned(problem, src) and w in CHUNKED_TRANSPOSE_TILES:
        out.append(CHUNKED_TRANSPOSE_TILES[w])
    return out


def chunked_transposes(problem: TiledProblem, src: int, dst: int) -> bool:
    """Whether ``problem`` at these addresses is one the chunked transpose (``codegen.permute_chunks``) takes: a
    transpose whose output rows 16 bytes do not align (its input rows aligned or not: ``chunked_source_aligned``).
    A 16-bit ``6415 x 12552`` transpose at aligned addresses is one (its output rows are 12830 bytes), and so is
    an fp32 ``5209 x 4557`` one."""
    w = problem.element_bytes
    return (problem.kind is PermuteKind.TRANSPOSE and src % w == dst % w == 0
            and vector_elements(w, problem.rows, dst) < MAX_VECTOR_BYTES // w)


def chunked_source_aligned(problem: TiledProblem, src: int) -> bool:
    """Whether the input rows of ``problem`` at ``src`` allow 16-byte vectors (the chunked transpose's aligned
    loads; else each row's aligned chunks around it): ``chunked_source_aligned(p, 0)`` for a 16-bit ``6415 x
    12552`` ``p``."""
    w = problem.element_bytes
    return vector_elements(w, problem.cols, src) == MAX_VECTOR_BYTES // w


def interleaves(problem: TiledProblem, src: int, dst: int, any_min_bytes: int | None = None,
                wide_min_bytes: int | None = None) -> tuple[int, bool, bool] | None:
    """``(narrow, deinterleave, aligned)`` where the interleave kernel (``codegen.permute_interleave``) takes
    ``problem`` at these addresses, else None: a transpose with a side of 2 to ``MAX_NARROW`` elements and at most
    ``INTERLEAVE_ROW_BYTES`` bytes, whose vectors are ``INTERLEAVE_VECTOR_RATIO`` times the tiled kernel's along it
    or wider (its columns first: NHWC -> NCHW, *deinterleave*; else its rows: NCHW -> NHWC),
    dense along it (``lda = cols``, resp. ``ldb = rows``), both addresses ``w``-aligned. ``aligned`` where its long
    side, other row stride, batch strides and both addresses are whole vectors (``vector_bytes_for(narrow)``);
    else the form at any element offset, which needs the dense side's address and batch strides multiples of
    ``gcd(narrow, V)`` elements (``permute_interleave.group_origin``) and a tensor of ``any_min_bytes``
    (``INTERLEAVE_ANY_MIN_BYTES``) or more; rows of more than 16 bytes need a tensor of ``wide_min_bytes``
    (``INTERLEAVE_WIDE_MIN_BYTES``) or more. ``[64, 224, 224, 3]`` uint8
    ``(0, 3, 1, 2)`` is ``(3, True, True)``; at ``[64, 299, 299, 3]`` the planes of 89401 bytes are not whole
    vectors: ``(3, True, False)``."""
    if problem.kind is not PermuteKind.TRANSPOSE or src % problem.element_bytes or dst % problem.element_bytes:
        return None
    w = problem.element_bytes
    any_min_bytes = INTERLEAVE_ANY_MIN_BYTES if any_min_bytes is None else any_min_bytes
    wide_min_bytes = INTERLEAVE_WIDE_MIN_BYTES if wide_min_bytes is None else wide_min_bytes
    nbytes = problem.rows * problem.cols * problem.batch_count * w
    sides = []  # (deinterleave, narrow, long side, other row stride, dense side's address, its batch strides)
    for deinterleave, narrow, long_side, dense, stride, address, strides in (
            (True, problem.cols, problem.rows, problem.lda == problem.cols, problem.ldb, src,
             [s for _, s, _ in problem.batch]),
            (False, problem.rows, problem.cols, problem.ldb == problem.rows, problem.lda, dst,
             [d for _, _, d in problem.batch])):
        tiles_vector = vector_elements(w, narrow, address) * w  # the tiled kernel's accesses along those rows
        if (2 <= narrow <= MAX_NARROW and narrow * w <= INTERLEAVE_ROW_BYTES[w] and dense
                and (narrow * w <= MAX_VECTOR_BYTES or nbytes >= wide_min_bytes)
                and vector_bytes_for(narrow) >= max(w, INTERLEAVE_VECTOR_RATIO * tiles_vector)):
            sides.append((deinterleave, narrow, long_side, stride, address, strides))
    for deinterleave, narrow, long_side, stride, _, _ in sides:
        vb = vector_bytes_for(narrow)
        v = vb // w
        if src % vb == 0 and dst % vb == 0 and long_side % v == 0 and stride % v == 0 and all(
                s % v == 0 and d % v == 0 for _, s, d in problem.batch):
            return narrow, deinterleave, True
    if nbytes < any_min_bytes:
        return None
    for deinterleave, narrow, _, _, address, strides in sides:
        d = math.gcd(narrow, vector_bytes_for(narrow) // w)
        if address // w % d == 0 and all(s % d == 0 for s in strides):
            return narrow, deinterleave, False
    return None


def small_blocks(problem: TiledProblem, src: int, dst: int, kernel: PermuteKernel,
                 max_bytes: int = MIN_TILE_BYTES, least_cta_bytes: int = 0,
                 fold: str = "", tiny_block_bytes: int = MIN_TILE_BYTES,
                 multiprocessors: int = 0) -> tuple[tuple, int] | None:
    """``(block, count)`` where the small-block kernel (``codegen.permute_small``) takes ``problem`` at these
    addresses in place of ``kernel`` (the one it would take otherwise), else None: ``count`` blocks, each the
    problem's other dims ``block`` (``(size, src_stride, dst_stride)``: the matrix's rows ``(rows, lda, 1)`` and
    columns ``(cols, 1, ldb)`` of a transpose, ``(rows, lda, ldb)`` and ``(cols, 1, 1)`` of a row move, the inner
    batch dims), where

    - the outermost batch dim (``problem.batch[0]``: first in the output) has strides ``E`` on both sides, ``E`` the
      block's elements: each of its indices is one dense block, contiguous in the input and in the output;
    - a block is at most ``max_bytes`` (``ops.permute``: ``SMALL_BLOCK_BYTES`` in place of the aligned interleave
      kernel, else ``MIN_TILE_BYTES``), and at most ``MIN_TILE_BYTES`` (8 KiB,
      the tiled kernels' smallest DRAM tile, a run's bytes: a run then holds one block or more); at most
      ``tiny_block_bytes`` (``SMALL_TILED_CTA_BLOCK_BYTES``) where a CTA of ``kernel`` moves less than
      ``least_cta_bytes`` (below) and there are ``multiprocessors`` blocks or more, and
    - fills less than ``MIN_TILE_USE`` of ``kernel``'s tile (``tile_rows x tile_cols``): every CTA of ``kernel``
      takes one block of one matrix (its batch dims index CTAs), so each of its tiles would leave more than a
      quarter of its area empty, the bar below which ``choose_tile`` passes a tile over; or a CTA of ``kernel``
      (a transpose's tiled kernel: a tile's part of one matrix, ``fold``: of several along that side) moves less
      than ``least_cta_bytes`` (``SMALL_TILED_CTA_BYTES``);
    - both addresses are whole elements.

    Then each CTA moves runs of whole blocks, ``MIN_TILE_BYTES`` or just under, instead of one block.
    ``(100000, 3, 5)`` fp32 with dims ``(0, 2, 1)``: a ``3 x 5`` transpose per index, 60 bytes against the interleave
    kernel's ``4 x 512`` tile: ``(((3, 5, 1), (5, 1, 3)), 100000)``; ``(1000, 32, 32)`` fp32 fills its ``32 x 32``
    tile: None; ``(167622, 2, 3, 63)`` uint8 by ``(0, 3, 2, 1)``, blocks of three ``2 x 63`` matrices, fills its
    ``2 x 64`` tile, whose CTA moves 126 bytes: the small-block kernel where ``least_cta_bytes`` is more."""
    w = problem.element_bytes
    if problem.kind not in (PermuteKind.TRANSPOSE, PermuteKind.ROWS) or not problem.batch:
        return None
    if src % w or dst % w:
        return None
    rows = (problem.rows, problem.lda, 1 if problem.transposed else problem.ldb)
    cols = (problem.cols, 1, problem.ldb if problem.transposed else 1)
    block = tuple(d for d in (*problem.batch[1:], rows, cols) if d[0] > 1)
    elements = math.prod(size for size, _, _ in block)
    count, src_stride, dst_stride = problem.batch[0]
    tiny = _cta_elements(problem, kernel, fold) * w < least_cta_bytes
    largest = max(tiny_block_bytes, MIN_TILE_BYTES) if tiny and count >= multiprocessors else \
        min(max_bytes, MIN_TILE_BYTES)
    if not (src_stride == dst_stride == elements) or elements * w > largest:
        return None
    if elements >= MIN_TILE_USE * kernel.tile_rows * kernel.tile_cols and not tiny:
        return None
    return block, count


def _cta_elements(problem: TiledProblem, kernel: PermuteKernel, fold: str = "") -> int:
    """The elements a CTA of ``kernel`` moves: a tile of one matrix, as much of it as the matrix fills (``fold``:
    the side its tiles run on across matrices, filled)."""
    rows = kernel.tile_rows if fold == "rows" else min(problem.rows, kernel.tile_rows)
    return rows * (kernel.tile_cols if fold == "cols" else min(problem.cols, kernel.tile_cols))


def _chunked_by_default(problem: TiledProblem, src: int, dst: int, element_bytes: tuple[int, ...] | None = None,
                        batch_element_bytes: tuple[int, ...] | None = None) -> bool:
    """Whether ``permute`` takes the chunked transpose for ``problem`` where ``MISALIGNED_TRANSPOSE`` asks for it:
    its measured domain, an input whose rows allow 16-byte loads (its misaligned-input form measured 0.93-1.06x the
    tiled kernel), an output whose rows of ``CHUNKED_MIN_ROWS`` or more allow single-element stores only, of
    ``element_bytes`` (``CHUNKED_ELEMENT_BYTES``; a batch of matrices: ``batch_element_bytes``,
    ``CHUNKED_BATCH_ELEMENT_BYTES``), and no side under ``SKINNY_EXTENT`` (skinny tiles, ``tile_for``)."""
    w = problem.element_bytes
    element_bytes = CHUNKED_ELEMENT_BYTES if element_bytes is None else element_bytes
    batch_element_bytes = CHUNKED_BATCH_ELEMENT_BYTES if batch_element_bytes is None else batch_element_bytes
    return (chunked_transposes(problem, src, dst) and chunked_source_aligned(problem, src) and w in element_bytes
            and (problem.batch_count == 1 or w in batch_element_bytes)
            and vector_elements(w, problem.rows, dst) == 1 and problem.rows >= CHUNKED_MIN_ROWS
            and problem.cols >= SKINNY_EXTENT)


def _bytes_by_default(problem: TiledProblem, src: int, dst: int, device: GridShape) -> bool:
    """Whether ``permute`` takes the byte transpose for ``problem`` where ``BYTE_TRANSPOSE`` asks for it: a transpose
    of bytes whose output rows 16 bytes do not align and no side under ``SKINNY_EXTENT`` (skinny tiles), with

    - a tile row between its first and last (theirs are edge tiles, the guarded path);
    - its tile rows loading at most ``BYTES_MAX_ROW_LOADS`` rows of ``A`` per row of the problem (each loads its ``R``
      rows and the granule's ``Q`` above): 1.25 for 6049 rows, 1.84 for 261 (3 tile rows of 160 loaded rows);
    - more bytes read and written than ``device``'s L2 holds: where both fit, the transpose is bound by the SMs'
      instructions, of which the tiled kernel issues fewer."""
    if not (problem.kind is PermuteKind.TRANSPOSE and problem.element_bytes == 1 and problem.cols >= SKINNY_EXTENT
            and vector_elements(1, problem.rows, dst) < MAX_VECTOR_BYTES):
        return False
    tile = BYTE_TRANSPOSE_TILE
    tiles_m = -(-problem.rows // tile.rows)
    return (tiles_m > 2 and tiles_m * (tile.rows + tile.granule_bytes) <= BYTES_MAX_ROW_LOADS * problem.rows
            and 2 * problem.rows * problem.cols * problem.batch_count > device.l2_bytes)


def permute_launches(shape: tuple[int, ...], dims: tuple[int, ...], itemsize: int, src: int, dst: int,
                     device: GridShape | int, tile: TileConfig | ChunkedTile | ByteTile | None = None,
                     strides: tuple[int, ...] | None = None,
                     out_strides: tuple[int, ...] | None = None) -> list[Launch | Copy]:
    """What ``permute`` launches for a contiguous ``shape`` of ``itemsize``-byte elements at address ``src``,
    its output at ``dst``, on ``device`` (a ``GridShape``, or its SMs with an H100's L2) (module doc; a
    permutation that is the identity in memory: one ``Copy``, or from ``COPY_KERNEL_MIN_BYTES`` the flat copy
    kernel); ``tile``:
    this tile instead of ``tile_for``'s (its element size and vectors must fit the problem; a ``ChunkedTile``: the
    chunked transpose at that tile, where ``chunked_transposes``). ``strides``: the input's element strides where
    it is a view with gaps or repeats, its dims in memory order (``plan.strided_order``): the tiled kernel reads
    it at those strides, with the vectors every row start allows (``strided_alignment``); ``out_strides``: the
    output's, by output position, where it is a view with gaps (a slice of a larger buffer): written there. Batch dims
    beyond ``MAX_BATCH_DIMS`` take one launch per index of the outer ones (at most ``MAX_BATCH_LAUNCHES``; more:
    one kernel takes them all); sizes beyond one launch's parameters are cut into several (``launch_pieces``).
    Requires: ``dims`` a permutation of ``range(len(shape))``."""
    if isinstance(device, int):
        device = GridShape(device)
    launches, nbytes = permute_template(tuple(shape), tuple(dims), itemsize, src % SECTOR_BYTES, dst % SECTOR_BYTES,
                                        device, tile, None if strides is None else tuple(strides),
                                        None if out_strides is None else tuple(out_strides))
    return addressed(launches, nbytes, src, dst)


def addressed(launches, nbytes: int, src: int, dst: int) -> list[Launch | Copy]:
    """``permute_template``'s ``(launches, nbytes)`` at the addresses ``src`` and ``dst``: each a ``Launch`` with its
    pointers, or a ``Copy`` of ``nbytes`` where there are none (nothing for an empty tensor)."""
    if not launches:
        return [Copy(dst, src, nbytes)] if nbytes else []
    return [Launch(kernel, ctas, (src + s, dst + d) + tail) for kernel, ctas, tail, s, d in launches]


def framework_gathers(shape: tuple[int, ...], dims: tuple[int, ...], itemsize: int,
                      strides: tuple[int, ...] | None) -> bool:
    """Whether ``permute`` leaves a view at ``strides`` (dims in memory order) to the framework's own strided copy
    (``out.copy_(x.permute(dims))``, PyTorch's eager permutation), for a view with no dim of stride 1:

    - its innermost dim is shorter than the tile of one-element rows (``kernels.rows_tile``: 512 or 1024 rows), which
      would leave most of each tile empty (gathered by that copy and then permuted by ours it measured 0.91-0.93x
      eager);
    - else, where our one pass costs more than its launch hides (``one_pass_work`` from ``ONE_PASS_FREE_WORK``): its
      output's last dim is that short (ours, either way, measured 0.35-0.8x eager's one copy on most such views), or
      ``gathers`` would gather it and it is under ``FRAMEWORK_GATHER_BYTES`` (one launch against our two and a
      scratch tensor).

    ``framework_gathers((27, 28, 34, 25), (2, 3, 0, 1), 8, (110160, 3060, 90, 3))`` is True; a ``w[:, ::2]`` of
    4096-long columns is ours."""
    if strides is None or 0 in shape or itemsize == 16:  # 16-byte elements: two contiguous halves
        return False
    reduced = reduce_permutation(shape, dims, strides)
    if reduced.strides is None or reduced.strides[-1] == 1:
        return False
    rows = rows_tile(itemsize, 1, 1).rows
    if reduced.shape[-1] < rows:
        return True
    work = one_pass_work(shape, dims, itemsize, strides)
    if work < ONE_PASS_FREE_WORK:
        return False
    if reduced.shape[reduced.dims[-1]] < rows:
        return True
    # what ``gathers`` would gather, from the work already counted
    return (math.prod(shape) * itemsize < FRAMEWORK_GATHER_BYTES and work >= GATHER_MIN_WORK
            and gathers_first(shape, dims, strides))


def one_pass_work(shape: tuple[int, ...], dims: tuple[int, ...], itemsize: int, strides: tuple[int, ...] | None,
                  out_strides: tuple[int, ...] | None = None) -> int:
    """What the one pass over a view without a stride-1 dim costs, in elements moved: its elements plus
    ``ONE_PASS_CTA_ELEMENTS`` for each of its CTAs (tiles of ``kernels.rows_tile`` one-element rows along the output's
    last dim). ``one_pass_work((8, 4096), (1, 0), 4, (8192, 2)) == 32768 + 148 * 4096``. Kept per view: a call of
    the general path asks it up to three times (``framework_gathers``, ``gathers``, ``view_launches``)."""
    return _one_pass_work(tuple(shape), tuple(dims), itemsize, None if strides is None else tuple(strides),
                          None if out_strides is None else tuple(out_strides))


@functools.lru_cache(maxsize=4096)
def _one_pass_work(shape: tuple[int, ...], dims: tuple[int, ...], itemsize: int, strides: tuple[int, ...] | None,
                   out_strides: tuple[int, ...] | None) -> int:
    problem = _plan(shape, dims, itemsize, 8, strides, out_strides)  # 16-byte elements: pairs of 8-byte halves
    ctas = -(-problem.rows // rows_tile(problem.element_bytes, 1, 1).rows) * problem.cols * math.prod(
        size for size, _, _ in problem.batch)
    return math.prod(shape) + ONE_PASS_CTA_ELEMENTS * ctas


def gathers(shape: tuple[int, ...], dims: tuple[int, ...], itemsize: int, strides: tuple[int, ...] | None,
            out_strides: tuple[int, ...] | None = None) -> bool:
    """Whether ``permute`` gathers a view at ``strides`` (dims in memory order) into a scratch tensor first (where
    ``framework_gathers`` does not leave it to the framework): where ``plan.gathers_first`` and ``one_pass_work`` is
    ``GATHER_MIN_WORK`` or more. Below, the one pass is quicker than the two passes' second launch and allocation.
    ``gathers((4096, 4096), (1, 0), 2, (8192, 2))`` (``y[:, ::2].t()``, 16.8M elements) is True;
    ``gathers((8, 4096), (1, 0), 4, (8192, 2))`` (4096 CTAs) is False."""
    if not gathers_first(shape, dims, strides, out_strides):
        return False
    return one_pass_work(shape, dims, itemsize, strides, out_strides) >= GATHER_MIN_WORK


def view_launches(shape: tuple[int, ...], dims: tuple[int, ...], itemsize: int, src: int, dst: int,
                  device: GridShape | int, strides: tuple[int, ...] | None, scratch: int | None = None,
                  out_strides: tuple[int, ...] | None = None) -> list[Launch | Copy]:
    """``permute_launches`` of a view at ``strides`` (dims in memory order; None: contiguous) into an output at
    ``out_strides`` (None: contiguous), in two passes where ``gathers``: the view gathered into ``scratch`` (a
    contiguous buffer of its bytes, required then), then that dense copy permuted into ``dst``."""
    if not gathers(shape, dims, itemsize, strides, out_strides):
        return permute_launches(shape, dims, itemsize, src, dst, device, strides=strides, out_strides=out_strides)
    if scratch is None:
        raise LayoutError("scratch: this view is gathered into a buffer of its bytes first (launches.gathers)")
    identity = tuple(range(len(shape)))
    return (permute_launches(shape, identity, itemsize, src, scratch, device, strides=strides)
            + permute_launches(shape, dims, itemsize, scratch, dst, device, out_strides=out_strides))


def _checked_tile(problem: TiledProblem, src: int, dst: int, device: GridShape, tile: TileConfig | None) -> TileConfig:
    """``tile``, or ``tile_for``'s where None; LayoutError unless its element size and vectors fit ``problem``."""
    config = tile_for(problem, src, dst, device) if tile is None else tile
    if (config.element_bytes, config.transposed) != (problem.element_bytes, problem.transposed) or (
            problem.cols % config.src_vector or (problem.rows if problem.transposed else problem.cols) % config.dst_vector
            or src % (config.src_vector * config.element_bytes) or dst % (config.dst_vector * config.element_bytes)):
        raise LayoutError(f"tile: {config} does not fit a {problem.kind.value} of {problem.rows} x {problem.cols} "
                          f"{8 * problem.element_bytes}-bit elements at these addresses")
    return config


def tiled_arguments(kernel: PermuteKernel, rows: int, cols: int, lda: int, ldb: int,
                    batch: tuple[tuple[int, int, int], ...], fold: tuple[int, int] = ()) -> tuple[int, ...]:
    """The arguments after the two pointers of a tiled permute kernel (``codegen.permute.tiled_params``: the
    sizes, tile counts, row strides, each batch dim's size and strides, a folded kernel's ``fold = (extent,
    stride)``, then a ``fast_divider`` for each ``{divisor}_div`` parameter) of a ``rows x cols`` problem.

    >>> k = permute_kernel(TileConfig(2, 64, 64, 4, 8, 8), 0)
    >>> tiled_arguments(k, 100, 200, 200, 100, ())[:6]
    (100, 200, 4, 2, 200, 100)
    """
    tm, tn = kernel.tile_counts(rows, cols)
    tail: list[int] = [rows, cols, tn, tm, lda, ldb]
    for size, src_stride, dst_stride in batch:
        tail += [size, src_stride, dst_stride]
    if bool(fold) != bool(kernel.fold):
        raise LayoutError(f"fold: kernel {kernel.name} {'folds' if kernel.fold else 'does not fold'} a batch dim, "
                          f"got fold={fold!r}")
    tail += list(fold)
    named = dict(zip((p for _, p in kernel.params[2:]), tail))
    tail += [fast_divider(named[p[:-4]]) for _, p in kernel.params[2 + len(tail):]]  # the "{divisor}_div" ones
    return tuple(tail)


def fold_side(problem: TiledProblem, config: TileConfig, sides: tuple[str, ...] = ("cols", "rows"),
              min_saved: float = 0.0) -> tuple[str, int] | None:
    """``(side, k)``: the batch dim ``k`` of transpose ``problem`` that ``config``'s tiles run on across, along
    ``A``'s columns (``"cols"``) or rows (``"rows"``; ``codegen.permute``'s ``fold``), of ``sides``, or None. A dim
    folds where it continues the side on the other tensor (``B``'s rows of matrix ``b + 1`` follow those of ``b``:
    ``dst_stride == cols * ldb``; or ``A``'s, ``src_stride == rows * lda``), the vectors stay whole, every column of
    the folded side, its last tile's too, is below ``2**31`` (the kernel's quotient) and the fold saves more than
    ``min_saved`` of the tiles (the partial edge tiles of each matrix); of several, the one that saves the most.
    A ``[32, 1024, 196]`` fp32 batch of ``1024 x 196`` transposes (NCHW -> NHWC of 14 x 14 planes) in 64 x 64 tiles
    has 4 tile columns a matrix, the last of 4 columns: folded, 98 full ones along ``32 x 196`` (23% fewer).

    >>> fold_side(plan_permutation((32, 1024, 196), (0, 2, 1), 4), TileConfig(4, 64, 64, 4, 4, 4))
    ('cols', 0)
    """
    if not (problem.transposed and problem.batch) or config.ctas_per_sm:
        return None
    best = None
    for side, extent, tile, vector, pitch in (("cols", problem.cols, config.cols, config.src_vector, problem.ldb),
                                              ("rows", problem.rows, config.rows, config.dst_vector, problem.lda)):
        if side not in sides or extent % vector:
            continue
        for k, (size, src_stride, dst_stride) in enumerate(problem.batch):
            clean, split = (dst_stride, src_stride) if side == "cols" else (src_stride, dst_stride)
            saved = 1 - -(-size * extent // tile) / (size * -(-extent // tile))
            if clean == extent * pitch and split % vector == 0 and size * extent + tile <= 2**31 and (
                    saved > max(min_saved, 0.0 if best is None else best[0])):
                best = (saved, side, k)
    return None if best is None else best[1:]


def permute_template(shape: tuple[int, ...], dims: tuple[int, ...], itemsize: int, src: int, dst: int,
                     device: GridShape, tile: TileConfig | ChunkedTile | ByteTile | None = None,
                     strides: tuple[int, ...] | None = None, out_strides: tuple[int, ...] | None = None):
    """``(launches, bytes)`` of ``permute_launches`` for addresses ``src``, ``dst`` modulo ``SECTOR_BYTES`` (all the
    plan depends on): each launch ``(kernel, ctas, arguments after the two pointers, source byte offset, destination
    byte offset)``; none for an empty tensor or a copy under ``COPY_KERNEL_MIN_BYTES``. Transposes
    ``chunked_transposes`` takes get the kernel ``MISALIGNED_TRANSPOSE`` names; batches of small blocks
    ``small_blocks`` takes the small-block kernel (where ``SMALL_BATCHES``; from the aligned interleave kernel blocks up
    to ``SMALL_BLOCK_BYTES``). An input or output with gaps (``strides``, ``out_strides``): ``_template``."""
    if MISALIGNED_TRANSPOSE not in MISALIGNED_TRANSPOSES:
        raise LayoutError(f"MISALIGNED_TRANSPOSE: must be one of {MISALIGNED_TRANSPOSES}, got {MISALIGNED_TRANSPOSE!r}")
    if not (isinstance(FOLD_SIDES, tuple) and set(FOLD_SIDES) <= {"cols", "rows"}):
        raise LayoutError(f"FOLD_SIDES: must be a tuple of 'cols' and 'rows', got {FOLD_SIDES!r}")
    if not (isinstance(FOLD_MIN_SAVED, Mapping) and all(
            isinstance(w, int) and isinstance(v, (int, float)) and 0 <= v < 1 for w, v in FOLD_MIN_SAVED.items())):
        raise LayoutError(f"FOLD_MIN_SAVED: must map element bytes to a fraction in [0, 1), got {FOLD_MIN_SAVED!r}")
    for name, value in (("REALIGNED_ROWS_BELOW", REALIGNED_ROWS_BELOW), ("REALIGNED_CHUNKS_BELOW", REALIGNED_CHUNKS_BELOW),
                        ("REALIGNED_MIN_CTAS_PER_SM", REALIGNED_MIN_CTAS_PER_SM),
                        ("SMALL_TILED_CTA_BYTES", SMALL_TILED_CTA_BYTES),
                        ("SMALL_TILED_CTA_BLOCK_BYTES", SMALL_TILED_CTA_BLOCK_BYTES)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise LayoutError(f"{name}: must be an int, 0 or more, got {value!r}")
    if isinstance(REALIGNED_TILE_USE, bool) or not isinstance(REALIGNED_TILE_USE, (int, float)) \
            or not 0 <= REALIGNED_TILE_USE <= 1:
        raise LayoutError(f"REALIGNED_TILE_USE: must be a fraction in [0, 1], got {REALIGNED_TILE_USE!r}")
    for name, value in (("INTERLEAVE_MIN_CTAS_PER_SM", INTERLEAVE_MIN_CTAS_PER_SM),
                        ("INTERLEAVE_ANY_MIN_BYTES", INTERLEAVE_ANY_MIN_BYTES),
                        ("INTERLEAVE_WIDE_MIN_BYTES", INTERLEAVE_WIDE_MIN_BYTES)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise LayoutError(f"{name}: must be a number, 0 or more, got {value!r}")
    return _template(shape, dims, itemsize, src, dst, device, tile, MISALIGNED_TRANSPOSE,
                     (INTERLEAVE_MIN_CTAS_PER_SM, INTERLEAVE_ANY_MIN_BYTES, INTERLEAVE_WIDE_MIN_BYTES)
                     if INTERLEAVE else None,
                     (MAX_LAUNCH_EXTENT, MAX_LAUNCH_CTAS, MAX_BATCH_LAUNCHES), SMALL_BLOCK_BYTES if SMALL_BATCHES else 0,
                     BYTE_TRANSPOSE, strides, out_strides,
                     (FOLD_SIDES, tuple(sorted(FOLD_MIN_SAVED.items()))) if FOLD_BATCH else None,
                     (REALIGNED_ROWS_BELOW, REALIGNED_CHUNKS_BELOW, REALIGNED_MIN_CTAS_PER_SM, REALIGNED_TILE_USE),
                     (tuple(CHUNKED_ELEMENT_BYTES), tuple(CHUNKED_BATCH_ELEMENT_BYTES)),
                     (SMALL_TILED_CTA_BYTES if SMALL_BATCHES else 0, SMALL_TILED_CTA_BLOCK_BYTES))


def _tile_count(kernel: PermuteKernel, problem: TiledProblem) -> int:
    """Tiles of ``kernel`` over the whole ``problem``: ``tile_counts`` of a matrix times the batch."""
    tm, tn = kernel.tile_counts(problem.rows, problem.cols)
    return tm * tn * problem.batch_count


@functools.lru_cache(maxsize=4096)
def _template(shape: tuple[int, ...], dims: tuple[int, ...], itemsize: int, src: int, dst: int, device: GridShape,
              tile: TileConfig | ChunkedTile | ByteTile | None, misaligned: str,
              interleave: tuple[float, int, int] | None,
              limits: tuple[int, int, int], small: int = 0, byte_transpose: bool = False,
              strides: tuple[int, ...] | None = None, out_strides: tuple[int, ...] | None = None,
              fold: tuple[tuple[str, ...], tuple[tuple[int, float], ...]] | None = None,
              realign_below: tuple[int, int, int, float] = (0, 0, 0, 0.0),
              chunked: tuple[tuple[int, ...], tuple[int, ...]] = ((), ()),
              least_cta_bytes: tuple[int, int] = (0, MIN_TILE_BYTES)):
    """``permute_template``'s launches (``interleave``: ``INTERLEAVE_MIN_CTAS_PER_SM``, ``INTERLEAVE_ANY_MIN_BYTES``
    and ``INTERLEAVE_WIDE_MIN_BYTES``, None: no interleave kernel; ``fold``: ``fold_side``'s sides and
    ``FOLD_MIN_SAVED``'s items, None: no fold; ``realign_below``: ``REALIGNED_ROWS_BELOW``,
    ``REALIGNED_CHUNKS_BELOW``, ``REALIGNED_MIN_CTAS_PER_SM``, ``REALIGNED_TILE_USE``; ``chunked``: ``CHUNKED_ELEMENT_BYTES`` and ``CHUNKED_BATCH_ELEMENT_BYTES``; ``least_cta_bytes``: ``SMALL_TILED_CTA_BYTES`` and ``SMALL_TILED_CTA_BLOCK_BYTES``, so that the
    cached plans follow them too). An input or output with gaps (``strides``, ``out_strides``; row-major ones
    plan as none) takes the tiled kernel at the vectors every row and batch start allows (``strided_alignment``), or
    the byte transpose where ``_bytes_by_default`` takes the problem at those alignments (it finds each row's
    position from its address and owns granules of each output row: any row strides); the other kernels assume
    dense rows."""
    max_extent, max_ctas, max_batch_launches = limits
    for name, given in (("strides", strides), ("out_strides", out_strides)):
        if given is not None and len(given) != len(shape):
            raise LayoutError(f"{name}: {len(given)} strides for a shape of {len(shape)} dims")
    problem = _plan(shape, dims, itemsize, pointer_alignment(src, dst), strides, out_strides)
    nbytes = math.prod(shape) * itemsize
    if (strides is not None or out_strides is not None) and problem.kind is not PermuteKind.COPY:
        if tile is not None and not isinstance(tile, (TileConfig, ByteTile)):
            raise LayoutError(f"tile: a view with gaps takes the tiled kernel or the byte transpose, not "
                              f"{type(tile).__name__}")
        src, dst = strided_alignment(src, problem), strided_alignment(dst, problem, "dst")
        misaligned, interleave, small = "tiled", None, 0
    if problem.kind is PermuteKind.COPY and nbytes >= COPY_KERNEL_MIN_BYTES:
        kernel = copy_kernel(copy_vector_bytes(src, dst))
        step = nbytes if kernel.tiles(1, nbytes) <= max_ctas else kernel.tile_cols * _pow2_floor(max_ctas)
        return tuple((kernel, kernel.tiles(1, min(step, nbytes - start)), (min(step, nbytes - start),), start, start)
                     for start in range(0, nbytes, step)), nbytes
    if problem.kind in (PermuteKind.EMPTY, PermuteKind.COPY):
        return (), nbytes
    form, floor = None, 0
    if tile is None and strides is None and out_strides is None and problem.kind is PermuteKind.ROWS:
        config = tile_for(problem, src, dst, device)
        tiled = permute_kernel(config, len(problem.batch), device.arch, raster_order(config, 2 * nbytes, device))
        if not (small and small_blocks(problem, src, dst, tiled, MIN_TILE_BYTES)):  # the small-block kernel's
            form = realigned_rows(problem, src, dst, *realign_below[:2])
            floor = realign_below[2] * device.multiprocessors
            if _realignable(problem) and _spans(problem) and rows_tile_use(problem, config) < realign_below[3]:
                form, floor = "span", 0  # a tile mostly empty: the span kernel at any vector and grid
    if form is not None:
        kernel = realigned_rows_kernel(len(problem.batch), form == "span")
        ctas = kernel.tiles(1, nbytes + 2 * realign_rows.CHUNK_BYTES)
        if floor <= ctas <= max_ctas:  # else the tiled kernel's (cut to the limit)
            w = problem.element_bytes
            arguments = realign_rows.realigned_rows_arguments(
                kernel, nbytes, problem.cols * w, problem.rows, problem.lda * w,
                tuple((size, stride * w) for size, stride, _ in problem.batch), nbytes)
            return ((kernel, ctas, arguments, 0, 0),), nbytes
    split = max(0, len(problem.batch) - MAX_BATCH_DIMS)
    if math.prod(size for size, _, _ in problem.batch[:split]) > max_batch_launches:
        split = max(0, len(problem.batch) - MAX_KERNEL_BATCH_DIMS)
    inner = problem.batch[split:]
    narrow = interleaves(problem, src, dst, *interleave[1:]) if tile is None and interleave is not None else None
    if narrow is not None and _tile_count(interleave_kernel(problem.element_bytes, narrow[0], narrow[1], len(inner),
                                                            narrow[2]), problem) < interleave[0] * device.multiprocessors:
        narrow = None  # too few of its tiles to fill the GPU: the skinny tiles spread wider
    config = None
    if narrow is not None:
        kernel = interleave_kernel(problem.element_bytes, narrow[0], narrow[1], len(inner), narrow[2])
    elif isinstance(tile, ByteTile) or (tile is None and byte_transpose and _bytes_by_default(problem, src, dst, device)):
        if problem.kind is not PermuteKind.TRANSPOSE or problem.element_bytes != 1:
            raise LayoutError(f"tile: the byte transpose does not take a {problem.kind.value} of {problem.rows} x "
                              f"{problem.cols} {8 * problem.element_bytes}-bit elements")
        kernel = byte_transpose_kernel(len(inner), tile, device.arch, transpose_raster(2 * nbytes, device))
    elif isinstance(tile, ChunkedTile) or (tile is None and misaligned == "chunked"
                                         and _chunked_by_default(problem, src, dst, *chunked)):
        if not chunked_transposes(problem, src, dst):
            raise LayoutError(f"tile: the chunked transpose does not take a {problem.kind.value} of {problem.rows} x "
                              f"{problem.cols} {8 * problem.element_bytes}-bit elements at these addresses")
        kernel = chunked_transpose_kernel(problem.element_bytes, len(inner), tile, chunked_source_aligned(problem, src),
                                          device.arch)
    else:
        config = _checked_tile(problem, src, dst, device, tile)
        raster = raster_order(config, 2 * nbytes, device)
        kernel = permute_kernel(config, len(inner), device.arch, raster)
    least = None if fold is None else dict(fold[1]).get(problem.element_bytes)
    side = None  # the tiled kernel: fold a batch dim where it gains
    if config is not None and least is not None and not split:
        side = fold_side(problem, config, fold[0], least)
    blocks = None
    if small and tile is None:  # the aligned interleave kernel keeps blocks over SMALL_BLOCK_BYTES
        tiled = config is not None and problem.kind is PermuteKind.TRANSPOSE and (
            _tile_count(kernel, problem) >= SKINNY_CTAS_PER_SM * device.multiprocessors)
        blocks = small_blocks(problem, src, dst, kernel, small if narrow is not None and narrow[2] else MIN_TILE_BYTES,
                              least_cta_bytes[0] if tiled else 0, "" if side is None else side[0], least_cta_bytes[1],
                              device.multiprocessors)
    if blocks is not None:  # runs of whole blocks: one launch of any grid, at most max_ctas CTAs
        kernel = small_kernel(problem.element_bytes, blocks[0])
        return ((kernel, min(kernel.runs(blocks[1]), max_ctas), (blocks[1],), 0, 0),), nbytes
    if side is not None:
        folded = _folded(problem, config, raster, side, device, max_extent, max_ctas)
        if folded is not None:
            return (folded,), nbytes
    w = problem.element_bytes
    tails: dict[tuple, tuple[int, tuple[int, ...]]] = {}  # (rows, cols, batch) -> (ctas, arguments)
    launches = []
    for piece in launch_pieces(problem, split, kernel.tile_rows, kernel.tile_cols, max_extent, max_ctas):
        if (piece.rows, piece.cols, piece.batch) not in tails:
            tm, tn = kernel.tile_counts(piece.rows, piece.cols)
            tiles = tm * tn * math.prod(size for size, _, _ in piece.batch)
            tails[piece.rows, piece.cols, piece.batch] = (
                kernel.ctas(tiles, device.multiprocessors),
                tiled_arguments(kernel, piece.rows, piece.cols, problem.lda, problem.ldb, piece.batch))
        ctas, tail = tails[piece.rows, piece.cols, piece.batch]
        launches.append((kernel, ctas, tail, w * piece.src, w * piece.dst))
    return tuple(launches), nbytes


def realigned_rows(problem: TiledProblem, src: int, dst: int, below: int = REALIGNED_ROWS_BELOW,
                   chunks_below: int = REALIGNED_CHUNKS_BELOW) -> str | None:
    """The realigned rows kernel a ``problem`` at addresses ``src``, ``dst`` takes by its vectors: ``"span"``,
    ``"chunks"`` or None (``REALIGNED_ROWS_BELOW``), where ``_realignable``. ``[231, 312, 361]`` bytes by
    ``(1, 0, 2)`` (rows of 361 bytes: single bytes) takes the span kernel."""
    if not _realignable(problem):
        return None
    vector = vector_elements(problem.element_bytes, problem.cols, src, dst) * problem.element_bytes
    if _spans(problem):
        return "span" if vector < below else None
    return "chunks" if vector < min(below, chunks_below) else None


def _realignable(problem: TiledProblem) -> bool:
    """Whether a realigned rows kernel takes ``problem``: a move of rows of ``realign_rows.MIN_ROW_BYTES`` or more
    into a dense output of at most ``realign_rows.MAX_BYTES``, with at most ``realign_rows.MAX_BATCH_DIMS`` batch
    dims."""
    if problem.kind is not PermuteKind.ROWS or len(problem.batch) > realign_rows.MAX_BATCH_DIMS:
        return False
    row_bytes = problem.cols * problem.element_bytes
    nbytes = row_bytes * problem.rows * math.prod(size for size, _, _ in problem.batch)
    if row_bytes < realign_rows.MIN_ROW_BYTES or nbytes > realign_rows.MAX_BYTES or problem.ldb != problem.cols:
        return False
    dense = problem.rows * problem.cols
    for size, _, dst_stride in reversed(problem.batch):  # the output: row q at q L, the batch dims outer first
        if dst_stride != dense:
            return False
        dense *= size
    return True


def _spans(problem: TiledProblem) -> bool:
    """Whether ``problem``'s rows are a span of the span kernel long (``REALIGNED_SPAN_CHUNKS`` chunks) or longer."""
    return problem.cols * problem.element_bytes >= realign_rows.CHUNK_BYTES * REALIGNED_SPAN_CHUNKS


def rows_tile_use(problem: TiledProblem, config: TileConfig) -> float:
    """The fraction of the area of ``config``'s tiles over a rows ``problem``'s matrix that holds its elements:
    ``[4, N, 40]`` bf16 by ``(1, 0, 2)`` (matrices of 4 rows of 40) on 64 x 64 tiles: ``4 / 64 * 40 / 64``."""
    rows, cols = problem.rows, problem.cols
    return rows / (-(-rows // config.rows) * config.rows) * cols / (-(-cols // config.cols) * config.cols)


def _folded(problem: TiledProblem, config: TileConfig, raster: str, fold: tuple[str, int],
            device: GridShape, max_extent: int, max_ctas: int) -> tuple | None:
    """The one launch ``(kernel, ctas, arguments, 0, 0)`` of ``problem`` with batch dim ``fold[1]`` run on along
    side ``fold[0]`` (``fold_side``), or None where it would not fit one launch (``launch_pieces`` cuts sides at
    offsets that a folded side does not take) or the tile's accesses do not fold (``codegen.global_memory.Pitch``)."""
    side, k = fold
    size, src_stride, dst_stride = problem.batch[k]
    batch = problem.batch[:k] + problem.batch[k + 1:]
    rows, cols = (problem.rows, size * problem.cols) if side == "cols" else (size * problem.rows, problem.cols)
    if max(rows, cols) > max_extent:
        return None
    try:
        kernel = permute_kernel(config, len(batch), device.arch, raster, side)
    except LayoutError:  # the tile's accesses lie at no constant offset from a thread's own: not foldable
        return None
    tiles = kernel.tiles(rows, cols, math.prod(s for s, _, _ in batch))
    if tiles > max_ctas:
        return None
    extent, stride = (problem.cols, src_stride) if side == "cols" else (problem.rows, dst_stride)
    return (kernel, kernel.ctas(tiles, device.multiprocessors),
            tiled_arguments(kernel, rows, cols, problem.lda, problem.ldb, batch, (extent, stride)), 0, 0)


def _pow2_floor(n: int) -> int:
    """The largest power of two at most ``n`` (>= 1)."""
    return 1 << (n.bit_length() - 1)


@dataclass(frozen=True)
class Piece:
    """One launch of a tiled permutation: a ``rows x cols`` part of its matrices, ``batch`` its batch dims as the
    kernel takes them (``(size, src_stride, dst_stride)``), at element offsets ``src`` and ``dst``."""

    rows: int
    cols: int
    batch: tuple[tuple[int, int, int], ...]
    src: int
    dst: int


#: The shortest length ``launch_pieces`` cuts a side into: 32 elements are whole sectors and vectors of any size.
_MIN_CUT = SECTOR_BYTES


def _cuts(extent: int, step: int) -> list[tuple[int, int]]:
    """``(start, length)`` of ``extent`` cut into lengths of ``step`` (the last one shorter)."""
    return [(start, min(step, extent - start)) for start in range(0, extent, step)]


def launch_pieces(problem: TiledProblem, split: int, tile_rows: int, tile_cols: int,
                  max_extent: int = _MAX_EXTENT, max_ctas: int = _MAX_CTAS) -> list[Piece]:
    """The launches of ``problem`` by a kernel of ``tile_rows x tile_cols`` tiles taking its batch dims from
    ``split`` on: one per index of the batch dims before ``split`` (first varying slowest), each cut so that it
    has at most ``max_extent`` rows and columns and ``max_ctas`` tiles.

    With ``T`` the tiles of one matrix and ``S_k`` the kernel's batch sizes, a launch takes ``T S_0 ... S_{b-1}``
    CTAs. Where that exceeds ``max_ctas``: a side over ``max_extent`` (or whose one matrix has more than
    ``max_ctas`` tiles) is cut into lengths of a power of two ``L >= 32`` (offsets ``r0 lda`` / ``r0`` or ``r0 ldb``
    for rows, ``c0`` / ``c0 ldb`` or ``c0`` for columns: ``L`` keeps every vector and sector of the original
    alignment); then the first batch dim ``k`` with ``T S_{k+1} ... S_{b-1} <= max_ctas`` is cut into runs of
    ``s = max_ctas // (T S_{k+1} ... S_{b-1})`` (rounded down to a multiple of the least run whose offsets are
    whole sectors, where one fits), the dims before it taken one index at a time (size 1 in the kernel).
    Every offset is a sum of the problem's strides, so each piece is a problem of the same alignment.

    Example: ``(2**31, 2, 2)`` uint8 with dims ``(0, 2, 1)`` is a batch of ``2**31`` ``2 x 2`` transposes (one
    2 x 2 tile each): two launches, of ``2**31 - 8`` and 8 matrices, the second at byte offset ``4 (2**31 - 8)``."""
    if max_extent < _MIN_CUT or max_ctas < 1:
        raise LayoutError(f"max_extent, max_ctas: a launch must take {_MIN_CUT} or more rows and columns and a CTA, "
                          f"got {max_extent} and {max_ctas}")
    outer, inner = problem.batch[:split], problem.batch[split:]

    def tiles(rows: int, cols: int) -> int:
        return -(-rows // tile_rows) * -(-cols // tile_cols)

    row_step = problem.rows if problem.rows <= max_extent else _pow2_floor(max_extent)
    col_step = problem.cols if problem.cols <= max_extent else _pow2_floor(max_extent)
    while tiles(row_step, col_step) > max_ctas and row_step > max(_MIN_CUT, tile_rows):
        row_step = _pow2_floor(row_step - 1)  # the next power of two down
    while tiles(row_step, col_step) > max_ctas and col_step > max(_MIN_CUT, tile_cols):
        col_step = _pow2_floor(col_step - 1)
    if tiles(row_step, col_step) > max_ctas:
        raise LayoutError(f"x: a {problem.rows} x {problem.cols} matrix of {tile_rows} x {tile_cols} tiles has more "
                          f"tiles than the {max_ctas} CTAs of a launch even cut into {row_step} x {col_step} pieces")
    ldb_rows, ldb_cols = (1, problem.ldb) if problem.transposed else (problem.ldb, 1)
    sides = [(rows, cols, r0 * problem.lda + c0, r0 * ldb_rows + c0 * ldb_cols)
             for r0, rows in _cuts(problem.rows, row_step) for c0, cols in _cuts(problem.cols, col_step)]
    batch_runs = _batch_runs(inner, tiles(row_step, col_step), max_ctas, problem.element_bytes)
    pieces = []
    for index in itertools.product(*(range(size) for size, _, _ in outer)):
        s0 = sum(i * s for i, (_, s, _) in zip(index, outer))
        d0 = sum(i * d for i, (_, _, d) in zip(index, outer))
        for rows, cols, s1, d1 in sides:
            pieces += [Piece(rows, cols, batch, s0 + s1 + s2, d0 + d1 + d2) for batch, s2, d2 in batch_runs]
    return pieces


def _batch_runs(inner: tuple[tuple[int, int, int], ...], per_matrix: int, max_ctas: int,
                element_bytes: int) -> list[tuple[tuple[tuple[int, int, int], ...], int, int]]:
    """``(batch dims, src offset, dst offset)`` of each launch over the kernel's batch dims ``inner``, ``per_matrix``
    tiles a matrix, at most ``max_ctas`` tiles a launch (``launch_pieces``)."""
    sizes = [size for size, _, _ in inner]
    if per_matrix * math.prod(sizes) <= max_ctas:
        return [(inner, 0, 0)]
    k = next(k for k in range(len(inner)) if per_matrix * math.prod(sizes[k + 1:]) <= max_ctas)
    run = max_ctas // (per_matrix * math.prod(sizes[k + 1:]))
    _, src_stride, dst_stride = inner[k]
    sector = max(SECTOR_BYTES // math.gcd(SECTOR_BYTES, src_stride * element_bytes),
                 SECTOR_BYTES // math.gcd(SECTOR_BYTES, dst_stride * element_bytes))
    if run >= sector:
        run -= run % sector
    out = []
    for index in itertools.product(*(range(size) for size in sizes[:k])):
        s0 = sum(i * s for i, (_, s, _) in zip(index, inner))
        d0 = sum(i * d for i, (_, _, d) in zip(index, inner))
        for start, length in _cuts(sizes[k], run):
            batch = tuple((1, s, d) for _, s, d in inner[:k]) + ((length, src_stride, dst_stride),) + inner[k + 1:]
            out.append((batch, s0 + start * src_stride, d0 + start * dst_stride))
    return out


def cast_vectors(m: int, n: int, input_bytes: int, x: int, out: int, out_t: int) -> tuple[int, int]:
    """``(src_vector, dst_vector)`` of a cast-transpose: fp8 elements per access along a row of ``out``
    (whose input elements are loaded in 16-byte or narrower pieces) and of ``out_t``."""
    vin = 16
    while vin > 1 and (n % vin or out % vin or x % min(16, vin * input_bytes)):
        vin //= 2
    return vin, vector_elements(1, m, out_t)


def chunked_fits(input_bytes: int, x: int, out: int, out_t: int) -> bool:
    """Whether the chunked kernel (``codegen.cast_chunks``) takes these addresses: ``x`` a multiple of 16, ``out``
    and ``out_t`` of its chunk's fp8 bytes (8 for 2-byte inputs, 4 for fp32). ``chunked_fits(2, 0, 8, 4)`` is
    False."""
    g = 16 // input_bytes
    return x % 16 == 0 and out % g == 0 and out_t % g == 0


def cast_choices(input_format: str, m: int, n: int, x: int, out: int, out_t: int) -> list[TileConfig | str]:
    """What ``cast_launches`` may take for these sizes and addresses besides its own choice: where ``X`` and
    ``out`` allow 16-byte vectors, the tiles of both of ``cast_tiles``' lists at ``out_t``'s vectors (its ``tile``);
    else the misaligned kernels that take these addresses (its ``misaligned``: ``flat`` and ``chunked`` where
    ``chunked_fits``, ``realigned``, ``scalar``). A ``4096 x 4096`` bf16 cast at aligned addresses has 5 tiles."""
    input_bytes = 4 if input_format == "fp32" else 2
    vin, vout = cast_vectors(m, n, input_bytes, x, out, out_t)
    if vin == 16:
        return list(dict.fromkeys(cast_tiles(vin, vout, True) + cast_tiles(vin, vout, False)))
    kernels = (["flat"] if chunked_fits(input_bytes, x, out, out) else []) + (
        ["chunked"] if chunked_fits(input_bytes, x, out, out_t) else [])
    return kernels + ["realigned", "scalar"]


def cast_launches(input_format: str, fp8: str, m: int, n: int, x: int, out: int, out_t: int, scale: int | None,
                  scale_value: float, amax: int, device: GridShape | int, misaligned: str | None = None,
                  tile: TileConfig | None = None) -> list[Launch | Copy]:
    """What ``cast_transpose`` launches for an ``m x n`` matrix (``input_format``: ``bf16``, ``fp16`` or
    ``fp32``) at ``x`` into ``out`` / ``out_t``, with the scale at address ``scale`` (None: ``scale_value``)
    and the amax at ``amax``, on ``device`` (a ``GridShape``, or its SMs); rows or bases that 16 bytes do not
    align take the kernel ``misaligned`` names (one of ``MISALIGNED_CASTS``; None: ``MISALIGNED_CAST``;
    ``chunked`` where ``chunked_fits``, else the scalar one). ``tile``: where they align, this tile (one of
    ``cast_choices``) instead of the planner's."""
    misaligned = misaligned or MISALIGNED_CAST
    if misaligned not in MISALIGNED_CASTS:
        raise LayoutError(f"misaligned: must be one of {MISALIGNED_CASTS}, got {misaligned!r}")
    if not (m and n):
        return []
    if m > _MAX_EXTENT or n > _MAX_EXTENT:
        raise LayoutError(f"x: a {m} x {n} matrix exceeds 2**32 - 1 rows or columns")
    input_bytes = 4 if input_format == "fp32" else 2
    vin, vout = cast_vectors(m, n, input_bytes, x, out, out_t)
    if isinstance(device, int):
        device = GridShape(device)
    if vin == 16:  # X and C in 16-byte vectors; T's rows in the widest the addresses allow, tall tiles if narrow
        traffic = input_bytes + 2
        sectors = _on_sectors(m, out_t, m * n * traffic, device)
        tiles = cast_tiles(vin, vout, sectors)
        if tile is not None and tile not in cast_tiles(vin, vout, True) + cast_tiles(vin, vout, False):
            raise LayoutError(f"tile: {tile} is not a cast tile of these sizes and addresses (cast_choices)")
        config = tile or (choose_tile(tiles, m, n, 1, device, traffic, CAST_SMALLER_OF_EQUALS) if vout == 16 and sectors
                          else choose_narrow_tile(tiles, m, n, 1, device, traffic, CAST_NARROW_CTAS))
        kernel = cast_kernel(config, input_format, fp8, device.arch,
                             raster_order(config, m * n * traffic, device, cast=True))
    else:  # rows at any byte offset: read as the aligned 16-byte chunks that cover them
        if x % input_bytes:
            raise LayoutError(f"x: the address {x:#x} is not a multiple of its {input_bytes}-byte elements")
        if misaligned == "auto":
            transpose = _plan((m, n), (1, 0), 1, pointer_alignment(out, out_t))
            misaligned = "flat" if BYTE_TRANSPOSE and _bytes_by_default(transpose, out, out_t, device) else "chunked"
        if misaligned == "flat" and chunked_fits(input_bytes, x, out, out):
            kernel = flat_cast_kernel(input_format, fp8, device.arch)
            ctas = -(-m * n // kernel.tile_cols)
            if ctas > _MAX_CTAS:
                raise LayoutError(f"x: {ctas} blocks exceed the {_MAX_CTAS} CTAs of one launch")
            return [Launch(kernel, ctas, (x, out, out_t, scale, scale_value, amax, m, n, 1, 1)),
                    *permute_launches((m, n), (1, 0), 1, out, out_t, device)]
        if misaligned == "chunked" and chunked_fits(input_bytes, x, out, out_t):
            kernel = chunked_cast_kernel(input_format, fp8, arch=device.arch)
        elif misaligned == "realigned":
            kernel = realigned_cast_kernel(input_format, fp8, device.arch)
        else:
            kernel = scalar_cast_kernel(input_format, fp8, arch=device.arch)
    tm, tn = kernel.tile_counts(m, n)
    if tm * tn > _MAX_CTAS:
        raise LayoutError(f"x: {tm * tn} tiles exceed the {_MAX_CTAS} CTAs of one launch")
    return [Launch(kernel, tm * tn, (x, out, out_t, scale, scale_value, amax, m, n, tn, tm))]
