"""The ops' kernels, as launched (``ops.launches``: the tile, the vectors, the grid and the arguments the
ops would pass), run on the CPU by the emulator (``codegen.emulate.emulate_launch``) and compared with
NumPy element for element: odd and prime sizes (masked edge tiles), size-1 and empty dims, batches, row
moves, misaligned buffers (narrower vectors), 16-byte elements, permutations of more batch dims than one
launch takes; and the fp8 cast-transpose against ml_dtypes' fp8 (round to nearest even) after saturation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linear_layouts.codegen.emulate import find_cxx
from linear_layouts.codegen.permute import fast_divider
from linear_layouts.ops.kernels import SKINNY_DRAM_WARPS, SKINNY_MISALIGNED_RUN_BYTES, TileConfig, copy_kernel, min_ctas, skinny_tile, transpose_tiles
from linear_layouts.ops.plan import plan_permutation, vector_elements
from linear_layouts.ops.launches import COPY_KERNEL_MIN_BYTES, Copy, Launch, permute_launches

from ._emulated import DST, SRC, emulated_cast_transpose, emulated_permute

pytestmark = pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")

_RNG = np.random.default_rng(7)


def _random(shape, dtype) -> np.ndarray:
    """Random bits of ``dtype`` (floats may hold NaNs: compare with ``_same``)."""
    dtype = np.dtype(dtype)
    return _RNG.integers(0, 256, size=tuple(shape) + (dtype.itemsize,), dtype=np.uint8).view(dtype)[..., 0]


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit for bit."""
    return a.shape == b.shape and np.array_equal(np.ascontiguousarray(a).view(np.uint8),
                                                 np.ascontiguousarray(b).view(np.uint8))


@pytest.mark.parametrize("shape, dims, dtype, src_offset, dst_offset", [
    ((37, 50), (1, 0), np.uint16, 0, 0),                  # odd sizes: masked edge tiles on both sides
    ((131, 67), (1, 0), np.uint8, 0, 0),                   # primes: 1-byte vectors
    ((3, 5), (1, 0), np.float32, 0, 0),                    # tiny: one masked tile
    ((272, 80), (1, 0), np.uint8, 0, 0),                   # 16-byte vectors, partial last tile row
    ((3, 33, 65), (0, 2, 1), np.uint64, 0, 0),             # batched, 64-bit
    ((2, 5, 3, 8), (0, 2, 1, 3), np.uint16, 0, 0),         # [B, S, H, D] -> [B, H, S, D]: rows of 16 bytes
    ((2, 5, 3, 2), (0, 2, 1, 3), np.uint16, 0, 0),         # D = 2: 4-byte words transposed
    ((2, 5, 3, 3), (0, 2, 1, 3), np.float32, 0, 0),        # rows of 12 bytes
    ((2, 16, 7, 7), (0, 2, 3, 1), np.float16, 0, 0),       # NCHW -> NHWC
    ((2, 7, 7, 16), (0, 3, 1, 2), np.float16, 0, 0),       # NHWC -> NCHW
    ((5, 3), (1, 0), np.complex128, 0, 0),                 # 16-byte elements: pairs of 8-byte halves
    ((2, 3, 2, 3, 2, 3, 4), (6, 5, 4, 3, 2, 1, 0), np.uint8, 0, 0),  # 5 batch dims: 2 launches
    ((40, 24), (1, 0), np.uint16, 2, 0),                   # a misaligned source: 2-byte accesses there
    ((40, 24), (1, 0), np.uint16, 0, 6),                   # a misaligned destination
    ((1, 7, 1), (2, 1, 0), np.uint32, 0, 0),               # size-1 dims only moved: a copy
    ((0, 5), (1, 0), np.uint8, 0, 0),                      # empty
])
def test_permute_every_element(shape, dims, dtype, src_offset, dst_offset):
    a = _random(shape, dtype)
    got = emulated_permute(a, dims, src_offset, dst_offset)
    assert _same(got, np.transpose(a, dims))


def test_large_tiles_masked_at_the_edges():
    """The large 8-bit tile (256 x 256, 4x4 byte blocks) on a 272 x 288 matrix, 3 of its 4 tiles cut: one tile per
    CTA; and its persistent form (32 warps) on one SM, one CTA looping over all 4 tiles."""
    a = _random((272, 288), np.uint8)
    large = transpose_tiles(1, 16, 16)[0]
    (launch,) = permute_launches(a.shape, (1, 0), 1, SRC, DST, 132, tile=large)
    assert (launch.kernel.tile_rows, launch.kernel.threads, launch.kernel.ctas_per_sm, launch.ctas) == (256, 512, 0, 4)
    assert _same(emulated_permute(a, (1, 0), tile=large), a.T)
    persistent = TileConfig(1, 256, 256, 32, 16, 16, 4, ctas_per_sm=1)
    (launch,) = permute_launches(a.shape, (1, 0), 1, SRC, DST, 1, tile=persistent)
    assert (launch.kernel.tile_rows, launch.kernel.threads, launch.kernel.ctas_per_sm, launch.ctas) == (256, 1024, 1, 1)
    assert _same(emulated_permute(a, (1, 0), sms=1, tile=persistent), a.T)


def test_persistent_batched_every_element():
    """The persistent kernel over 2 x 2 batches of 272 x 288 (16 tiles, masked at two edges) on 3 CTAs:
    6, 5 and 5 tiles each, each CTA's next tile in another batch than its current one."""
    a = _random((2, 2, 272, 288), np.uint8)
    persistent = TileConfig(1, 256, 256, 32, 16, 16, 4, ctas_per_sm=1)
    (launch,) = permute_launches(a.shape, (1, 0, 3, 2), 1, SRC, DST, 3, tile=persistent)
    assert (launch.kernel.ctas_per_sm, launch.kernel.batch_dims, launch.ctas) == (1, 2, 3)
    assert _same(emulated_permute(a, (1, 0, 3, 2), sms=3, tile=persistent), np.transpose(a, (1, 0, 3, 2)))


def test_raster_m_every_element():
    """Transposes in raster order "m" (planned so on a device whose L2 they exceed): batched, edge tiles cut on both
    sides, one tile per CTA and persistent (3 CTAs over 16 tiles)."""
    from linear_layouts.ops.kernels import GridShape

    tiny_l2 = GridShape(132, 4096)
    a = _random((2, 2, 272, 288), np.uint8)
    (launch,) = permute_launches(a.shape, (1, 0, 3, 2), 1, SRC, DST, tiny_l2)
    assert "tile_row = t - q * tiles_m;" in launch.kernel.source
    assert _same(emulated_permute(a, (1, 0, 3, 2), sms=tiny_l2), np.transpose(a, (1, 0, 3, 2)))
    persistent = TileConfig(1, 256, 256, 32, 16, 16, 4, ctas_per_sm=1)
    assert _same(emulated_permute(a, (1, 0, 3, 2), sms=GridShape(3, 4096), tile=persistent),
                 np.transpose(a, (1, 0, 3, 2)))
    b = _random((37, 50), np.uint16)
    assert _same(emulated_permute(b, (1, 0), sms=tiny_l2), b.T)


@pytest.mark.parametrize("element_bytes", [1, 2, 4, 8])
def test_every_tile_of_the_lists_every_element(element_bytes):
    """Each tile ``choose_tile`` may pick, on a matrix that cuts its edge tiles (rows and columns 16 bytes past
    a multiple of 256 bytes), batched."""
    side = 256 // element_bytes + 16 // element_bytes
    a = _random((2, side, side + 16 // element_bytes), np.dtype(f"u{element_bytes}"))
    for tile in transpose_tiles(element_bytes, 16 // element_bytes, 16 // element_bytes):
        assert _same(emulated_permute(a, (0, 2, 1), tile=tile), np.transpose(a, (0, 2, 1))), tile
    for tile in transpose_tiles(element_bytes, 16 // element_bytes, 16 // element_bytes):
        if min_ctas(tile):  # the kernels bounded to their occupancy, unbatched too
            assert _same(emulated_permute(a[0], (1, 0), tile=tile), a[0].T), tile


@pytest.mark.parametrize("element_bytes, narrow", [(1, 8), (1, 1), (2, 4), (2, 1), (4, 2), (8, 1), (1, 16), (2, 8),
                                                   (4, 4)])
def test_every_tall_tile_every_element(element_bytes, narrow):
    """Each tile ``choose_narrow_tile`` may pick: rows of ``X^T`` allowing ``narrow`` elements an access
    (``narrow`` = 16 bytes: the sector rule's tiles, ``dst_sectors`` False), the columns cutting the edge tiles,
    batched; and the 128-row tiles of rows of ``X`` alone narrow."""
    w, v = element_bytes, 16 // element_bytes
    rows = 2 * 256 + narrow  # two tall tiles and a masked one; the rows allow vectors of ``narrow`` elements
    a = _random((2, rows, 64 + v), np.dtype(f"u{w}"))
    tiles = transpose_tiles(w, v, narrow, dst_sectors=narrow != v)
    if narrow == v:
        tiles = transpose_tiles(w, v, v, dst_sectors=False)
    for tile in tiles:
        assert _same(emulated_permute(a, (0, 2, 1), tile=tile), np.transpose(a, (0, 2, 1))), tile
    b = _random((2 * 256, 2 * 128 + 1), np.dtype(f"u{w}"))  # rows of X of an odd length: single elements
    for tile in transpose_tiles(w, 1, v):
        assert _same(emulated_permute(b, (1, 0), tile=tile), b.T), tile


@pytest.mark.parametrize("shape, dims, dtype, src_offset, dst_offset", [
    ((3, 1000), (1, 0), np.uint16, 0, 0),                  # 3 rows: a 4 x 1024 tile, rows of B of 3 elements
    ((1000, 2), (1, 0), np.uint8, 0, 0),                   # 2 columns: 2 warps across them
    ((2, 5, 700), (0, 2, 1), np.float32, 0, 0),            # batched, 5 rows
    ((2, 3, 9, 40), (0, 2, 3, 1), np.uint8, 0, 0),          # NCHW -> NHWC of 3 channels
    ((2, 9, 40, 3), (0, 3, 1, 2), np.uint16, 0, 0),         # NHWC -> NCHW of 3 channels
    ((6, 300), (1, 0), np.uint64, 0, 0),                   # 64-bit
    ((17, 256), (1, 0), np.uint16, 2, 4),                  # misaligned buffers: narrower accesses
])
def test_skinny_tiles_every_element(shape, dims, dtype, src_offset, dst_offset):
    """A tile problem with a side under ``SKINNY_EXTENT`` takes ``skinny_tile``'s tile (that side whole),
    element for element."""
    a = _random(shape, dtype)
    launches = [item for item in permute_launches(shape, dims, a.itemsize, SRC + src_offset, DST + dst_offset, 132)
                if isinstance(item, Launch)]
    kernel = launches[0].kernel
    problem = plan_permutation(shape, dims, a.itemsize)  # tiny problems: shortened tiles (SKINNY_CTAS_PER_SM)
    short = min(problem.rows, problem.cols)
    assert min(kernel.tile_rows, kernel.tile_cols) == 1 << (short - 1).bit_length()
    assert max(kernel.tile_rows, kernel.tile_cols) >= 32
    assert _same(emulated_permute(a, dims, src_offset, dst_offset), np.transpose(a, dims))


@pytest.mark.parametrize("shape, dims, src_offset, dst_offset", [
    ((1000, 9), (1, 0), 0, 0),           # 128 x 16 tiles
    ((3, 700, 26), (0, 2, 1), 4, 8),     # batched, 64 x 32 tiles, buffers off 16 bytes
    ((2, 30, 31, 7), (0, 3, 1, 2), 0, 0),  # NHWC -> NCHW of 7 channels
    ((13, 555), (1, 0), 0, 4),           # the short side along A's rows
])
def test_skinny_tiles_of_8_warps_every_element(shape, dims, src_offset, dst_offset):
    """The skinny tile of 4-byte elements from DRAM (``SKINNY_DRAM_WARPS``, asked for here at a size the L2 holds)
    moves every element: 8 warps over the same tile as the 4-warp one."""
    a = _random(shape, np.float32)
    problem = plan_permutation(shape, dims, 4)
    vectors = (vector_elements(4, problem.cols, SRC + src_offset), vector_elements(4, problem.rows, DST + dst_offset))
    tile = skinny_tile(4, *vectors, problem.rows, problem.cols, dram=True)
    assert tile.warps == SKINNY_DRAM_WARPS
    assert _same(emulated_permute(a, dims, src_offset, dst_offset, tile=tile), np.transpose(a, dims))


@pytest.mark.parametrize("shape, dims, dtype, src_offset, dst_offset", [
    ((1001, 24), (1, 0), np.float16, 0, 0),          # 512 x 32 tiles of 8 warps: B's rows of 2002 bytes
    ((2, 999, 17), (0, 2, 1), np.float32, 4, 4),     # 256 x 32, batched, buffers off 16 bytes
    ((301, 29), (1, 0), np.float64, 0, 8),           # 128 x 32, B's base off 16 bytes
])
def test_skinny_tiles_of_misaligned_rows_every_element(shape, dims, dtype, src_offset, dst_offset):
    """The skinny tile whose runs along ``B``'s misaligned rows are ``SKINNY_MISALIGNED_RUN_BYTES`` long (asked for
    here at a size the L2 holds) moves every element once."""
    a = _random(shape, dtype)
    w = a.itemsize
    problem = plan_permutation(shape, dims, w)
    vectors = (vector_elements(w, problem.cols, SRC + src_offset), vector_elements(w, problem.rows, DST + dst_offset))
    tile = skinny_tile(w, *vectors, problem.rows, problem.cols, dram=True)
    assert (tile.rows * w, tile.warps) == (SKINNY_MISALIGNED_RUN_BYTES, SKINNY_DRAM_WARPS)
    assert _same(emulated_permute(a, dims, src_offset, dst_offset, tile=tile), np.transpose(a, dims))


def test_narrow_8_byte_tiny_tile_every_element():
    """An fp64 transpose of odd sides within the L2 on a device of 8 SMs: 16 tiles of 64 x 64 (under
    ``L2_NARROW_CTAS`` an SM) become 48 of ``TINY_TILE``, every element moved once."""
    a = _random((4, 67, 115), np.float64)
    (item,) = [i for i in permute_launches(a.shape, (0, 2, 1), 8, SRC, DST, 8) if isinstance(i, Launch)]
    assert (item.kernel.tile_rows, item.kernel.tile_cols, item.ctas) == (32, 32, 48)
    assert _same(emulated_permute(a, (0, 2, 1), sms=8), np.transpose(a, (0, 2, 1)))


@settings(max_examples=6, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from([1, 2, 3, 5, 8, 13]), min_size=2, max_size=4).flatmap(
    lambda shape: st.tuples(st.just(tuple(shape)), st.permutations(range(len(shape))),
                            st.sampled_from([np.uint8, np.uint16, np.uint32, np.uint64]))))
def test_random_permutations_every_element(case):
    shape, dims, dtype = case
    a = _random(shape, dtype)
    assert _same(emulated_permute(a, tuple(dims)), np.transpose(a, dims))


def test_launch_plans():
    """The worked example of ``ops.launches``; a copy; nothing for an empty tensor."""
    (launch,) = permute_launches((4096, 11008), (1, 0), 2, SRC, DST, 132)
    assert isinstance(launch, Launch) and launch.ctas == 32 * 86
    assert launch.values == (SRC, DST, 4096, 11008, 86, 32, 11008, 4096, fast_divider(32))  # raster "m"
    assert (launch.kernel.tile_rows, launch.kernel.src_vector, launch.kernel.dst_vector) == (128, 8, 8)
    assert permute_launches((4, 1, 5), (1, 0, 2), 4, SRC, DST, 132) == [Copy(DST, SRC, 80)]
    assert permute_launches((4, 0, 5), (2, 1, 0), 4, SRC, DST, 132) == []


@pytest.mark.parametrize("src_offset, vector", [(0, 16), (8, 8), (2, 2), (1, 1)])
def test_identity_in_memory_from_2_mib_is_the_copy_kernel(src_offset, vector):
    """``[3, 1, 174763] -> [1, 3, 174763]`` of 4-byte elements (2 MiB + 4 bytes) moves no element: one launch of
    the flat copy kernel with the vectors the addresses allow, every byte in place; three elements fewer (under
    2 MiB) are the driver's copy."""
    shape, dims = (3, 1, 174763), (1, 0, 2)
    nbytes = 3 * 174763 * 4
    assert nbytes - 12 < COPY_KERNEL_MIN_BYTES <= nbytes
    (launch,) = permute_launches(shape, dims, 4, SRC + src_offset, DST, 132)
    assert launch.kernel is copy_kernel(vector) and launch.values == (SRC + src_offset, DST, nbytes)
    assert launch.ctas == -(-nbytes // launch.kernel.tile_cols)
    a = _random(shape, np.uint32)
    assert _same(emulated_permute(a, dims, src_offset), np.transpose(a, dims))
    assert permute_launches((3, 1, 174762), dims, 4, SRC, DST, 132) == [Copy(DST, SRC, nbytes - 12)]


ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes gives the reference fp8 rounding")

#: Values that find the rounding's edges: ties, fp8 subnormals, the largest finite values, beyond them,
#: infinities, signed zeros.
_EDGES = np.array([0.0, -0.0, 1.0, 1.0625, 1.1875, 1.125, -1.1875, 0.001953125, 0.0029296875, 0.013671875,
                   448.0, 464.0, 480.0, 1e6, -1e6, 57344.0, 61440.0, 1e-9, 3.0e-5, -240.0,
                   0.5, 300.0, 2.0 ** -10, 2.0 ** -17, 15.0, 15.5, 0.11, -0.11], np.float32)


def _reference(values: np.ndarray, fp8: str, scale: float) -> np.ndarray:
    f8, top = (ml_dtypes.float8_e4m3fn, 448.0) if fp8 == "e4m3" else (ml_dtypes.float8_e5m2, 57344.0)
    return np.clip(values.astype(np.float32) * np.float32(scale), -top, top).astype(f8).view(np.uint8)


@pytest.mark.parametrize("input_format, fp8, shape, scale, offsets, infinite", [
    ("bf16", "e4m3", (130, 272), 0.37, (0, 0, 0), False),    # 16-byte fp8 accesses, partial tiles
    ("fp16", "e5m2", (45, 77), 1.0, (0, 0, 0), True),         # 1-byte accesses; infinite inputs
    ("fp32", "e4m3", (200, 96), 2.5, (0, 0, 0), False),
    ("bf16", "e5m2", (256, 256), 0.001, (0, 0, 0), False),   # whole 128 x 128 tiles
    ("fp16", "e4m3", (64, 48), 1.0, (2, 8, 4), False),        # misaligned buffers: narrower accesses
    ("fp32", "e5m2", (1, 30), 1.0, (0, 0, 0), True),          # one row
    ("bf16", "e4m3", (131, 259), 0.37, (2, 3, 5), False),     # realigned: 2 x 3 tiles, every base misaligned
    ("fp32", "e4m3", (133, 70), 1.0, (4, 1, 7), False),       # realigned fp32: 128 x 64 tiles, 2 x 2
    ("fp16", "e5m2", (256, 100), 0.5, (0, 0, 0), False),      # aligned bases, rows of 100: realigned
])
def test_cast_transpose_every_element(input_format, fp8, shape, scale, offsets, infinite):
    """(Aligned 16-byte tiles where every row and base allows them, else the realigned kernel.)"""
    values = (_RNG.standard_normal(shape) * 300).astype(np.float32)
    flat = values.reshape(-1)
    edges = np.concatenate([[np.inf, -np.inf], _EDGES]) if infinite else _EDGES
    flat[:len(edges)] = edges[:flat.size]
    with np.errstate(over="ignore"):  # 1e6 is infinite in fp16 (amax is then infinite too)
        x = values.astype({"bf16": ml_dtypes.bfloat16, "fp16": np.float16, "fp32": np.float32}[input_format])
    raw = x.view(np.uint32 if input_format == "fp32" else np.uint16)
    out, out_t, amax = emulated_cast_transpose(raw, input_format, fp8, scale, 3.0, offsets)
    expected = _reference(x, fp8, scale)
    assert np.array_equal(out, expected)
    assert np.array_equal(out_t, expected.T)
    assert amax == max(3.0, float(np.abs(x.astype(np.float32)).max()))  # of the input, before scaling


@pytest.mark.parametrize("input_format, shape", [("bf16", (301, 128)), ("fp32", (255, 192))])
def test_cast_transpose_raster_m_every_element(input_format, shape):
    """The cast-transpose with narrow stores of T (M odd: 1-byte stores) in raster order "m", as planned on a device
    whose L2 the problem exceeds, at the planner's tile (the last tile row cut)."""
    from linear_layouts.ops.kernels import GridShape
    from linear_layouts.ops.launches import cast_launches

    (launch,) = cast_launches(input_format, "e4m3", *shape, SRC, DST, 3 << 40, None, 1.0, 4 << 40, GridShape(132, 4096))
    assert launch.kernel.dst_vector == 1 and shape[0] % launch.kernel.tile_rows
    assert "tile_row = t - q * tiles_m;" in launch.kernel.source
    x = (_RNG.standard_normal(shape) * 300).astype({"bf16": ml_dtypes.bfloat16, "fp32": np.float32}[input_format])
    raw = x.view(np.uint32 if input_format == "fp32" else np.uint16)
    out, out_t, amax = emulated_cast_transpose(raw, input_format, "e4m3", 0.37, 0.0, sms=GridShape(132, 4096))
    expected = _reference(x, "e4m3", 0.37)
    assert np.array_equal(out, expected) and np.array_equal(out_t, expected.T)
    assert amax == float(np.abs(x.astype(np.float32)).max())


@pytest.mark.parametrize("input_format, fp8, shape, offsets", [
    ("bf16", "e4m3", (131, 259), (0, 8, 24)),      # chunked: 3 x 5 tiles, C and T 8 bytes past 16
    ("fp16", "e5m2", (65, 100), (16, 0, 0)),
    ("fp32", "e4m3", (133, 70), (0, 4, 12)),       # fp32: C and T at multiples of 4
    ("bf16", "e5m2", (5, 3), (0, 0, 0)),           # fewer rows and columns than a chunk
])
def test_cast_transpose_chunked(input_format, fp8, shape, offsets):
    """``ops``' launch list with ``misaligned="chunked"``: the chunked kernel (``codegen.cast_chunks``), as the
    pointers allow it here, emulated, against ml_dtypes' fp8."""
    from linear_layouts.ops.launches import cast_launches

    m, n = shape
    (launch,) = cast_launches(input_format, fp8, m, n, SRC + offsets[0], DST + offsets[1], (3 << 40) + offsets[2],
                              None, 1.0, 4 << 40, 132, "chunked")
    assert launch.kernel.name.startswith("ll_cast_transpose_chunked")
    values = (_RNG.standard_normal(shape) * 300).astype(np.float32)
    x = values.astype({"bf16": ml_dtypes.bfloat16, "fp16": np.float16, "fp32": np.float32}[input_format])
    raw = x.view(np.uint32 if input_format == "fp32" else np.uint16)
    out, out_t, amax = emulated_cast_transpose(raw, input_format, fp8, 0.37, 3.0, offsets, misaligned="chunked")
    expected = _reference(x, fp8, 0.37)
    assert np.array_equal(out, expected) and np.array_equal(out_t, expected.T)
    assert amax == max(3.0, float(np.abs(x.astype(np.float32)).max()))


@pytest.mark.parametrize("dst_vector", [16, 8, 4, 2, 1])
@pytest.mark.parametrize("input_format", ["bf16", "fp32"])
def test_cast_transpose_tall_tiles_with_narrow_rows_of_t(input_format, dst_vector):
    """The vectorized cast-transpose at the tall tiles ``cast_tiles`` lists where ``T``'s rows are narrow or start
    inside a sector: ``512 + dst_vector`` rows (two 256-row tiles and a masked one), so that ``T``'s rows allow
    stores of ``dst_vector`` bytes and no wider (16: every other row 16 bytes into a sector)."""
    import ml_dtypes

    from linear_layouts.ops.kernels import cast_kernel, cast_tiles

    from ._emulated import check_cast_kernel

    tiles = cast_tiles(16, dst_vector, dst_sectors=False)
    assert (tiles[0].rows, tiles[0].cols, tiles[0].dst_vector) == (256, 64, dst_vector)
    x = (_RNG.standard_normal((512 + dst_vector, 128)) * 300).astype(np.float32)
    if input_format == "bf16":
        x = x.astype(ml_dtypes.bfloat16)
    check_cast_kernel(cast_kernel(tiles[0], input_format, "e4m3"), x, "e4m3", (0, 0, 0))


@pytest.mark.parametrize("shape, dims, dtype", [((2, 40, 3, 128), (0, 2, 1, 3), np.uint16),   # bf16 heads of 128
                                                ((3, 50, 2, 64), (0, 2, 1, 3), np.uint8),
                                                ((70, 3, 36), (1, 0, 2), np.float32)])
def test_row_moves_with_the_dram_tile_every_element(shape, dims, dtype):
    """The 8-warp tile ``rows_tile(..., dram=True)`` takes for problems beyond the L2, forced on small ones."""
    from linear_layouts.ops.kernels import rows_tile

    a = _random(shape, dtype)
    w = a.itemsize
    problem = plan_permutation(shape, dims, w)
    tile = rows_tile(w, 16 // w, problem.cols, dram=True)
    assert tile.warps == 8
    assert _same(emulated_permute(a, dims, tile=tile), np.transpose(a, dims))
