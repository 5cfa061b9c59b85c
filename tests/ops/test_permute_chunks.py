"""The chunked transpose (``codegen.permute_chunks``) without a GPU: the emitted kernel, run by the emulator on
buffers with guard bytes after the output, writes ``np.transpose`` bit for bit and nothing outside it, on odd
shapes of every element size, batched problems (``ldb != rows``), outputs at odd element offsets (the ownership
follows ABSOLUTE addresses), tiny problems (one row, fewer rows than a chunk) and both granules; the ownership of
a worked example, exactly; a warp's shared stores and loads without bank conflicts (``analysis.bank_simulator``);
``ops`` takes the kernel only when switched to it and only where it applies; with nvcc, the default tiles compile
for sm_90 without spills."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from linear_layouts.analysis.bank_simulator import instruction_wavefronts
from linear_layouts.codegen.cast_chunks import owned_range, thread_registers
from linear_layouts.codegen.emulate import emulate_launch, find_cxx
from linear_layouts.codegen.intrinsics import DEVICE_PRELUDE
from linear_layouts.codegen.permute_chunks import (
    chunk_elements, chunks_per_thread, column_pitch, column_start, emit_chunked_transpose_kernel, shared_bytes,
    shared_element_address,
)
from linear_layouts.codegen.permute import MAX_KERNEL_BATCH_DIMS
from linear_layouts.codegen.ptx import find_nvcc
from linear_layouts.core.errors import LayoutError
from linear_layouts.ops import launches
from linear_layouts.ops.kernels import CHUNKED_MIN_ROWS, CHUNKED_TRANSPOSE_TILES, ChunkedTile, chunked_transpose_kernel
from linear_layouts.ops.plan import TiledProblem, plan_permutation

from ._emulated import DST, SRC, UNWRITTEN, compiles_without_spills, emulated_permute

_DTYPES = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
#: Bytes after the output the kernel must leave unwritten.
_GUARD = 48
_RNG = np.random.default_rng(11)


def _random(shape, w: int) -> np.ndarray:
    return _RNG.integers(0, 256, size=tuple(shape) + (w,), dtype=np.uint8).view(_DTYPES[w])[..., 0]


#: The emulated kernel's global reads, checked: a 16-byte load or an element read holding a byte ``UNWRITTEN``
#: (``A``'s data holds none; the bytes around ``A`` all are) aborts the run.
_CHECKED_READS = """
#define LL_LDG128_NC
LL_DEV uint4 ll_ldg128_nc(const void* p) {
  const unsigned char* b = (const unsigned char*)p;
  for (int i = 0; i < 16; ++i) if (b[i] == 0xABu) std::abort();
  uint4 v; std::memcpy(&v, p, 16); return v;
}
template <class T> LL_DEV T ll_read_checked(T y) {
  for (unsigned i = 0u; i < sizeof(T); ++i) if ((unsigned char)(y >> (8u * i)) == 0xABu) std::abort();
  return y;
}
"""
_ELEMENT_READ = "a[p]"


def _checked(kernel):
    """``kernel`` with ``_CHECKED_READS`` (its element reads, if any, through ``ll_read_checked``)."""
    source = kernel.source
    assert source.startswith(DEVICE_PRELUDE) and ("ll_load_within" in source) == (_ELEMENT_READ in source)
    body = source[len(DEVICE_PRELUDE):].replace(_ELEMENT_READ, f"ll_read_checked({_ELEMENT_READ})")
    return dataclasses.replace(kernel, source=DEVICE_PRELUDE + _CHECKED_READS + body)


def _launch(kernel, problem: TiledProblem, a: np.ndarray, src_offset: int, dst_offset: int, nbytes: int) -> np.ndarray:
    """The output buffer (``dst_offset`` bytes, ``nbytes``, guard bytes) after ``kernel`` ran ``problem`` on ``a``
    (whose bytes ``UNWRITTEN`` become 0), ``A`` between ``src_offset`` and ``_GUARD`` bytes ``UNWRITTEN``: a read of
    any of them aborts (``_checked``)."""
    kernel = _checked(kernel)
    a.view(np.uint8)[a.view(np.uint8) == UNWRITTEN] = 0
    src = np.full(src_offset + a.nbytes + _GUARD, UNWRITTEN, np.uint8)
    src[src_offset:src_offset + a.nbytes] = a.view(np.uint8).reshape(-1)
    dst = np.full(dst_offset + nbytes + _GUARD, UNWRITTEN, np.uint8)
    tm, tn = kernel.tile_counts(problem.rows, problem.cols)
    tail = launches.tiled_arguments(kernel, problem.rows, problem.cols, problem.lda, problem.ldb, problem.batch)
    out = emulate_launch(kernel, tm * tn * problem.batch_count, [(src, src_offset), (dst, dst_offset), *tail])[1]
    assert (out[:dst_offset] == UNWRITTEN).all() and (out[dst_offset + nbytes:] == UNWRITTEN).all()
    return out[dst_offset:dst_offset + nbytes]


def _check_permutation(shape, dims, w: int, tile: tuple[int, int, int], src_offset: int = 0, dst_offset: int = 0,
                       granule_bytes: int = 16, source_aligned: bool = True) -> None:
    a = _random(shape, w)
    problem = plan_permutation(shape, dims, w)
    assert problem.kind.value == "transpose"
    assert not source_aligned or (problem.cols % chunk_elements(w) == 0 and src_offset % 16 == 0)
    kernel = emit_chunked_transpose_kernel("k", w, *tile, batch_dims=len(problem.batch), granule_bytes=granule_bytes,
                                           source_aligned=source_aligned)
    got = _launch(kernel, problem, a, src_offset, dst_offset, a.nbytes)
    expected = np.ascontiguousarray(np.transpose(a, dims))
    assert np.array_equal(got.view(a.dtype).reshape(expected.shape), expected)


@pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
@pytest.mark.parametrize("shape, dims, w, tile, src_offset, dst_offset", [
    ((37, 48), (1, 0), 2, (16, 16, 1), 0, 2),             # odd rows, B one element off 16 bytes
    ((131, 64), (1, 0), 2, (16, 16, 1), 16, 6),           # interior tiles, B three elements off
    ((131, 64), (1, 0), 2, (32, 16, 1), 0, 14),           # 7 elements off: the last residue
    ((45, 64), (1, 0), 1, (32, 32, 2), 0, 3),             # 8-bit, 3 bytes off
    ((75, 48), (1, 0), 1, (32, 16, 1), 32, 15),           # 8-bit, several tile rows, 15 bytes off
    ((3, 29, 8), (0, 2, 1), 4, (16, 8, 1), 0, 4),         # batched 32-bit
    ((41, 36), (1, 0), 4, (16, 8, 1), 0, 12),             # 32-bit, several tiles both ways
    ((9, 5, 24), (2, 1, 0), 2, (16, 16, 1), 0, 10),       # (2, 1, 0): batch 5, ldb = 45 != rows = 9
    ((5, 7, 6), (2, 1, 0), 8, (8, 4, 1), 0, 8),           # 64-bit, ldb = 35 != rows = 5
    ((33, 14), (1, 0), 8, (8, 4, 1), 16, 0),              # 64-bit odd rows at an aligned output
    ((2, 3, 17, 16), (0, 3, 1, 2), 2, (16, 16, 1), 0, 2),  # NHWC -> NCHW: rows 51, batch 2
    ((5, 32), (1, 0), 2, (16, 16, 1), 0, 4),              # fewer rows than a chunk
    ((3, 16), (1, 0), 1, (32, 16, 1), 0, 7),              # 3 rows of 8-bit
    ((1111, 16), (1, 0), 2, (16, 16, 1), 0, 2),            # one tile column, 70 tile rows
])
def test_every_element_once(shape, dims, w, tile, src_offset, dst_offset):
    _check_permutation(shape, dims, w, tile, src_offset, dst_offset)


@pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
@pytest.mark.parametrize("shape, dims, w, tile, src_offset, dst_offset, granule_bytes", [
    ((37, 45), (1, 0), 2, (16, 16, 1), 2, 6, 16),          # odd columns, A one element off 16 bytes
    ((131, 67), (1, 0), 2, (16, 16, 1), 14, 0, 16),        # interior tiles, A seven elements off
    ((29, 70), (1, 0), 4, (8, 64, 1), 4, 8, 16),           # 2 rows a thread apart: a shift d per chunk
    ((13, 71), (1, 0), 8, (4, 64, 1), 8, 0, 16),           # 64-bit, 1 row apart
    ((45, 61), (1, 0), 1, (32, 32, 2), 3, 5, 16),          # 8-bit, 3 bytes off
    ((75, 50), (1, 0), 1, (64, 32, 2), 15, 1, 32),         # 8-bit, sector granules
    ((41, 37), (1, 0), 4, (16, 8, 1), 4, 12, 16),          # 32-bit
    ((67, 29), (1, 0), 4, (16, 8, 1), 12, 4, 32),          # 32-bit, sector granules
    ((33, 15), (1, 0), 8, (8, 4, 1), 8, 0, 16),            # 64-bit, half a chunk off
    ((9, 5, 23), (2, 1, 0), 2, (16, 16, 1), 10, 2, 16),    # (2, 1, 0): lda = 115 != cols = 23, ldb = 45
    ((5, 7, 5), (2, 1, 0), 8, (8, 4, 1), 8, 8, 16),        # 64-bit, lda = 35 != cols = 5
    ((3, 29, 9), (0, 2, 1), 4, (16, 8, 1), 4, 4, 16),      # batched 32-bit, batch stride 261
    ((2, 3, 17, 13), (0, 3, 1, 2), 1, (32, 16, 1), 5, 2, 16),  # NHWC -> NCHW: rows 51, batch 2
    ((5, 30), (1, 0), 2, (16, 16, 1), 2, 4, 16),           # fewer rows than a chunk
    ((3, 17), (1, 0), 1, (32, 16, 1), 1, 7, 16),           # 3 rows of 8-bit
    ((2, 3), (1, 0), 1, (32, 16, 1), 9, 3, 16),            # six elements
])
def test_misaligned_rows_every_element_once(shape, dims, w, tile, src_offset, dst_offset, granule_bytes):
    """``A``'s rows at any element offset: each row's segment read as the aligned chunks around it, never a
    byte outside ``A`` (``_launch``'s checked reads), ``np.transpose`` bit for bit."""
    _check_permutation(shape, dims, w, tile, src_offset, dst_offset, granule_bytes, source_aligned=False)


@pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
@pytest.mark.parametrize("w, shape, src_offset, dst_offset", [
    (1, (300, 263), 5, 3), (2, (290, 133), 6, 2), (4, (270, 69), 4, 12), (8, (265, 37), 8, 0)])
def test_misaligned_rows_at_the_default_tiles(w, shape, src_offset, dst_offset):
    """``ops``' tiles (``CHUNKED_TRANSPOSE_TILES``: 32-byte granules) over three tile rows: interior tiles."""
    tile = CHUNKED_TRANSPOSE_TILES[w]
    _check_permutation(shape, (1, 0), w, (tile.rows, tile.cols, tile.warps), src_offset, dst_offset,
                       tile.granule_bytes, source_aligned=False)


def test_aligned_source_unchanged():
    """``source_aligned=False`` adds the misaligned loads; the default kernel has none of them."""
    for w in (1, 2, 4, 8):
        aligned = emit_chunked_transpose_kernel("k", w)
        misaligned = emit_chunked_transpose_kernel("k", w, source_aligned=False)
        assert "ll_load_within" not in aligned.source and "ll_load_within" in misaligned.source
        assert (aligned.params, aligned.shared_bytes) == (misaligned.params, misaligned.shared_bytes)
    with pytest.raises(LayoutError, match="source_aligned"):
        emit_chunked_transpose_kernel("k", 2, source_aligned=1)


def _owned_bytes(problem: TiledProblem, tile: tuple[int, int], tiles: int, w: int, dst_offset: int) -> np.ndarray:
    """The output bytes (from the buffer's 16-byte aligned start) tiles ``0 .. tiles - 1`` own by
    ``cast_chunks.owned_range`` of their columns' absolute positions."""
    rows_t, cols_t = tile
    tm, tn = -(-problem.rows // rows_t), -(-problem.cols // cols_t)
    mask = np.zeros(dst_offset + problem.rows * problem.cols * problem.batch_count * w + _GUARD, bool)
    for t in range(tiles):
        index, base = t // (tm * tn), dst_offset // w
        for size, _, dst_stride in reversed(problem.batch):  # the last batch dim varies fastest
            index, k = divmod(index, size)
            base += k * dst_stride
        r0, c0 = (t // tn) % tm * rows_t, t % tn * cols_t
        for c in range(c0, min(c0 + cols_t, problem.cols)):
            lo, hi = owned_range(base + c * problem.ldb, r0, rows_t, problem.rows, 16 // w)
            mask[lo * w:hi * w] = True
    return mask


@pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
@pytest.mark.parametrize("shape, dims, w, tile, dst_offset, grids", [
    ((70, 48), (1, 0), 2, (16, 16, 1), 6, (1, 4, 8, 14)),
    ((9, 5, 24), (2, 1, 0), 2, (16, 16, 1), 10, (1, 2, 5, 7)),
    ((41, 36), (1, 0), 4, (16, 8, 1), 4, (3, 7, 13)),
])
def test_each_tile_writes_what_it_owns(shape, dims, w, tile, dst_offset, grids):
    """The first few tiles of the grid alone write exactly the positions they own (no more: no position is
    written by two tiles; the whole grid writes every one)."""
    a = _random(shape, w)
    a.view(np.uint8)[a.view(np.uint8) == UNWRITTEN] = 0  # every byte written differs from the unwritten ones
    problem = plan_permutation(shape, dims, w)
    kernel = emit_chunked_transpose_kernel("k", w, *tile, batch_dims=len(problem.batch))
    tm, tn = kernel.tile_counts(problem.rows, problem.cols)
    tail = launches.tiled_arguments(kernel, problem.rows, problem.cols, problem.lda, problem.ldb, problem.batch)
    for ctas in grids:
        dst = np.full(dst_offset + a.nbytes + _GUARD, UNWRITTEN, np.uint8)
        out = emulate_launch(kernel, ctas, [a.view(np.uint8).reshape(-1), (dst, dst_offset), *tail])[1]
        assert np.array_equal(out != UNWRITTEN, _owned_bytes(problem, tile[:2], ctas, w, dst_offset))


@pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
@pytest.mark.parametrize("w, dst_offset", [(2, 6), (4, 20), (1, 17)])
def test_sector_granules(w, dst_offset):
    """32-byte granules: ``2G - 1`` rows above each tile, ``2G`` residues of ``B``'s rows."""
    _check_permutation((67, 64), (1, 0), w, (max(32, 64 // w), 16, 1), 0, dst_offset, granule_bytes=32)


@pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
@pytest.mark.parametrize("w, source_aligned", [(1, True), (2, True), (8, True), (1, False), (4, False)])
def test_one_row(w, source_aligned):
    """A ``1 x n`` problem (``B`` is ``n`` rows of one element each, ``ldb = 3``): every chunk a partial one;
    misaligned, ``A`` one element past 16 bytes and ``n`` no multiple of a chunk."""
    n = 4 * chunk_elements(w) + (0 if source_aligned else 3)
    a = _random((1, n), w)
    problem = TiledProblem(plan_permutation((2, 3), (1, 0), w).kind, w, 1, n, n, 3, True, ())
    kernel = emit_chunked_transpose_kernel("k", w, 2 * chunk_elements(w), chunk_elements(w), 1,
                                           source_aligned=source_aligned)
    got = _launch(kernel, problem, a, 0 if source_aligned else 16 + w, 5 * w, 3 * n * w).view(a.dtype)
    assert np.array_equal(got[::3], a[0])
    assert (got.view(np.uint8).reshape(n, 3 * w)[:, w:] == UNWRITTEN).all()  # the gaps between B's rows


@pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
def test_ops_takes_it_only_when_switched_and_eligible(monkeypatch):
    """``launches.MISALIGNED_TRANSPOSE`` "chunked" (the default): eligible transposes (``A``'s rows 16-byte vectors,
    ``B``'s single elements of ``CHUNKED_ELEMENT_BYTES``) of ``CHUNKED_MIN_ROWS`` rows or more launch the chunked kernel
    at its default tile; "tiled", shorter rows, wider stores, single bytes and 4-byte elements keep the tiled kernel. At a given tile it runs exactly (emulated), with odd output offsets and
    more batch dims than one launch takes; inputs whose rows 16 bytes do not align keep the tiled kernel unless
    a chunked tile is asked for (its misaligned form, ``ll_permute_chunked_any``); aligned transposes and row
    moves stay with the tiled kernel."""
    shape, dims = (2051, 1568), (1, 0)  # B's rows 4102 bytes: 2-byte stores
    assert launches.MISALIGNED_TRANSPOSE == "chunked" and CHUNKED_MIN_ROWS <= 2051
    (chunked,) = launches.permute_launches(shape, dims, 2, SRC, DST, 132)
    monkeypatch.setattr(launches, "MISALIGNED_TRANSPOSE", "tiled")
    tiled = launches.permute_launches(shape, dims, 2, SRC, DST, 132)
    assert chunked.kernel == chunked_transpose_kernel(2, 0) and tiled[0].kernel != chunked.kernel
    assert chunked.ctas == 17 * 25 and CHUNKED_TRANSPOSE_TILES[2] == ChunkedTile(2, 128, 64, 16, 32)  # 128 x 64
    monkeypatch.setattr(launches, "MISALIGNED_TRANSPOSE", "chunked")
    assert launches.CHUNKED_ELEMENT_BYTES == (2, 8)
    (fp64,) = launches.permute_launches(shape, dims, 8, SRC, DST, 132)  # B's rows 16408 bytes: 8-byte stores
    assert fp64.kernel == chunked_transpose_kernel(8, 0)
    assert launches.CHUNKED_BATCH_ELEMENT_BYTES == (2,)  # a batch of such matrices: fp64 keeps the tiled kernel
    (batched,) = launches.permute_launches((3,) + shape, (0, 2, 1), 8, SRC, DST, 132)
    assert not batched.kernel.name.startswith("ll_permute_chunked")
    (batched,) = launches.permute_launches((3,) + shape, (0, 2, 1), 2, SRC, DST, 132)
    assert batched.kernel == chunked_transpose_kernel(2, 1)
    # the tiled kernel: 150 rows; rows that allow 4-byte stores; single bytes; 4-byte elements
    for shape, w, offset in (((150, 64), 2, 6), ((2050, 1568), 2, 0), ((2051, 1568), 1, 0), ((2051, 1568), 4, 0)):
        (item,) = launches.permute_launches(shape, (1, 0), w, SRC, DST + offset, 132)
        assert not item.kernel.name.startswith("ll_permute_chunked"), shape
    for shape, so in (((5209, 4557), 0), ((2001, 2048), 8)):  # fp32 rows of 18228 bytes; 8 bytes off 16
        (item,) = launches.permute_launches(shape, (1, 0), 4, SRC + so, DST, 132)  # by default: the tiled kernel
        assert not item.kernel.name.startswith("ll_permute_chunked")
        tile = CHUNKED_TRANSPOSE_TILES[4]
        (item,) = launches.permute_launches(shape, (1, 0), 4, SRC + so, DST, 132, tile=tile)  # on request
        assert item.kernel == chunked_transpose_kernel(4, 0, tile, False)
        assert item.kernel.name.startswith("ll_permute_chunked_any")
    for shape, dims, dtype, so, do in (((2, 3, 2, 3, 2, 5, 16), (6, 5, 4, 3, 2, 1, 0), np.uint8, 0, 5),
                                       ((150, 64), (1, 0), np.float16, 16, 6),
                                       ((150, 67), (1, 0), np.float16, 6, 2)):
        a = _random(shape, np.dtype(dtype).itemsize).view(dtype)
        tile = CHUNKED_TRANSPOSE_TILES[a.itemsize]
        items = launches.permute_launches(shape, dims, a.itemsize, SRC + so, DST + do, 132, tile=tile)
        assert all(item.kernel.name.startswith("ll_permute_chunked" if so % 16 == 0 and shape[-1] % 8 == 0
                                                else "ll_permute_chunked_any") for item in items)
        got = emulated_permute(a, dims, so, do, tile=tile)
        assert np.array_equal(got.view(np.uint8), np.ascontiguousarray(np.transpose(a, dims)).view(np.uint8))
    for shape, dims, so in (((64, 128), (1, 0), 0), ((150, 64), (1, 0), 8), ((4, 150, 3, 64), (0, 2, 1, 3), 0),
                            ((2048, 1032), (1, 0), 0)):  # B's rows aligned: the tiled kernel
        (item,) = launches.permute_launches(shape, dims, 2, SRC + so, DST, 132)
        assert not item.kernel.name.startswith("ll_permute_chunked")
    with pytest.raises(LayoutError, match="the chunked transpose does not take"):
        launches.permute_launches((64, 128), (1, 0), 2, SRC, DST, 132, tile=ChunkedTile(2, 128, 64, 16))
    monkeypatch.setattr(launches, "MISALIGNED_TRANSPOSE", "fast")
    with pytest.raises(LayoutError, match="MISALIGNED_TRANSPOSE: must be one of"):
        launches.permute_launches(shape, dims, 2, SRC, DST, 132)


def test_ownership_worked_example():
    """16-bit ``6415 x 12552``, ``B`` at an address 6 bytes past 16 (residue 3): tile row 1 owns positions
    ``[6544, 6672)`` of ``B``'s row 1 (``start = 6418``): rows ``126 .. 253`` of ``A``; tile row 0 from 6418 itself,
    the last tile row (50, from row 6400) to its end; every row's ranges partition it."""
    g, m = 8, 6415
    start = 3 + 1 * m
    assert owned_range(start, 128, 128, m, g) == (6544, 6672)
    assert (6544 - start, 6672 - 1 - start) == (126, 253)
    assert owned_range(start, 0, 128, m, g) == (6418, 6544)
    assert owned_range(start, 6400, 128, m, g) == (12816, start + m)
    for row_start in (3, 3 + 6415 * 7, 3 + 6415 * 12551):
        for q in (8, 16):  # chunk and sector granules
            ranges = [owned_range(row_start, r0, 128, m, q) for r0 in range(0, m, 128)]
            assert ranges[0][0] == row_start and ranges[-1][1] == row_start + m
            assert all(a[1] == b[0] and b[0] % q == 0 for a, b in zip(ranges, ranges[1:]))


def test_layout_of_the_shared_tile():
    """Columns ``P w`` bytes apart plus 16 every ``G`` columns, each 16-byte aligned; an element's index is its
    position's residue mod ``G`` plus a multiple of ``G`` (aligned 16-byte reads of ``B``'s chunks)."""
    assert column_pitch(128, 8) == 144 and shared_bytes(128, 64, 2, 8) == 64 * 288 + 8 * 16
    assert [column_start(k, 128, 2, 8) for k in (0, 1, 8, 9)] == [0, 288, 2320, 2608]
    g, q, rows, w = 8, 8, 128, 2
    start, r0 = 6418, 128  # B's row 1 of the worked example, tile row 1
    s = (start + r0) % q
    for r in range(r0 - s, r0 + rows):  # the rows the tile stores of this column
        rr = r - r0 + q - 1
        index = (shared_element_address(rr, 0, 1, s, rows, w, q) - column_start(1, rows, w, q)) // w
        assert index % g == (start + r) % g and q <= index < column_pitch(rows, q)


@pytest.mark.parametrize("w", [1, 2, 4, 8])
def test_shared_accesses_are_conflict_free(w):
    """Step 1's element stores of a warp (lanes along a row of ``A``: ``K = 8`` chunks) take the fewest wavefronts
    (one; two for 8-byte elements) for every residue ``sig`` and ``ldb mod G``; step 3's 16-byte loads (lanes along
    a column) four, the least for 512 bytes."""
    tile = CHUNKED_TRANSPOSE_TILES[w]
    g, q = chunk_elements(w), 16 // w
    k_chunks = tile.cols // g
    for sig in range(q):
        for lam in range(q):
            for e in range(g):
                starts = [shared_element_address(lane // k_chunks, lane % k_chunks, e,
                                                 (sig + (g * (lane % k_chunks) + e) * lam) % q, tile.rows, w, q)
                          for lane in range(32)]
                assert instruction_wavefronts(starts, w, op="store") == max(1, 32 * w // 128)
    q_chunks = tile.rows // g
    starts = [column_start(lane // q_chunks, tile.rows, w, q) + (q + g * (lane % q_chunks)) * w for lane in range(32)]
    assert instruction_wavefronts(starts, 16, op="load") == 4


def test_bad_arguments():
    kernel = emit_chunked_transpose_kernel("k", 2)
    assert (kernel.tile_rows, kernel.tile_cols, kernel.threads, kernel.shared_bytes) == (128, 64, 512, 18560)
    assert "__launch_bounds__(512, 2)" in kernel.source and chunks_per_thread(128, 64, 16, 2, 8) == 3
    for kwargs, message in (({"element_bytes": 3}, "element_bytes"), ({"name": "1k"}, "name"),
                            ({"tile_rows": 8}, "tile_rows: must be a power of two from 16"),
                            ({"tile_cols": 4}, "tile_cols"), ({"warps": 3}, "warps"),
                            ({"granule_bytes": 8}, "granule_bytes"), ({"batch_dims": MAX_KERNEL_BATCH_DIMS + 1}, "batch_dims"),
                            ({"tile_rows": 512, "warps": 4}, "warps: 4 warps cannot take 512 x 64")):
        with pytest.raises(LayoutError, match=message):
            emit_chunked_transpose_kernel(**{"name": "k", "element_bytes": 2, **kwargs})
    with pytest.raises(LayoutError, match="tile: "):
        chunked_transpose_kernel(4, 0, ChunkedTile(2, 128, 64, 16))


@pytest.mark.skipif(find_nvcc() is None, reason="needs nvcc")
@pytest.mark.parametrize("w, batch_dims, source_aligned", [(1, 2, True), (2, 0, True), (4, 1, True), (8, 2, True),
                                                           (1, 2, False), (2, 1, False), (8, 3, False)])
def test_compiles_for_sm_90_without_spills(w, batch_dims, source_aligned, tmp_path):
    tile = CHUNKED_TRANSPOSE_TILES[w]
    kernel = chunked_transpose_kernel(w, batch_dims, None, source_aligned)
    chunks = chunks_per_thread(tile.rows, tile.cols, tile.warps, w, 16 // w)
    compiles_without_spills(kernel, thread_registers(chunks), tmp_path)


def test_the_element_sizes_are_read_at_each_call(monkeypatch):
    """``CHUNKED_ELEMENT_BYTES`` and ``CHUNKED_BATCH_ELEMENT_BYTES`` are part of the cached plan's key: changed after
    a first call, the next call follows them (a batch of fp64 matrices: tiled by default, chunked once allowed)."""
    shape, dims = (3, 2051, 1568), (0, 2, 1)
    (before,) = launches.permute_launches(shape, dims, 8, SRC, DST, 132)
    assert not before.kernel.name.startswith("ll_permute_chunked")
    monkeypatch.setattr(launches, "CHUNKED_BATCH_ELEMENT_BYTES", (2, 8))
    (after,) = launches.permute_launches(shape, dims, 8, SRC, DST, 132)
    assert after.kernel == chunked_transpose_kernel(8, 1)
    monkeypatch.setattr(launches, "CHUNKED_ELEMENT_BYTES", (2,))
    (neither,) = launches.permute_launches(shape, dims, 8, SRC, DST, 132)
    assert not neither.kernel.name.startswith("ll_permute_chunked")
