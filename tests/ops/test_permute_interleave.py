"""The interleave / deinterleave transpose (``codegen.permute_interleave``) without a GPU: the emitted kernel, run
by the emulator on NHWC <-> NCHW problems of a few channels, against ``np.transpose``; the output words' byte
sources against a direct reading of the module doc; the kernel ``ops`` takes and where it does not; the form at
any element offset on strided problems (odd long sides, padded rows, misaligned bases) against a NumPy gather,
every byte outside the output checked unwritten."""

from __future__ import annotations

import numpy as np
import pytest

from linear_layouts.codegen.emulate import emulate_launch, find_cxx
from linear_layouts.codegen.permute import MAX_KERNEL_BATCH_DIMS
from linear_layouts.codegen.permute_interleave import (
    MAX_NARROW, UnalignedInterleaveKernel, emit_interleave_kernel, group_origin, vector_bytes_for, word_sources,
)
from linear_layouts.core.errors import LayoutError
from linear_layouts.ops.kernels import GridShape
from linear_layouts.ops.launches import Launch, interleaves, permute_launches, tiled_arguments
from linear_layouts.ops.plan import plan_permutation

from ._emulated import DST, SRC, UNWRITTEN, emulated_permute

_DTYPES = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _random(shape, w: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 2 ** (8 * w) - 1, size=shape, dtype=np.uint64).astype(_DTYPES[w])


def _run(kernel, shape, dims, a: np.ndarray) -> np.ndarray:
    """``kernel`` on the plan of ``a.permute(dims)``, emulated; the output between guard bytes ``UNWRITTEN``."""
    problem = plan_permutation(shape, dims, a.itemsize)
    dst = np.full(a.nbytes + 64, UNWRITTEN, np.uint8)
    tm, tn = kernel.tile_counts(problem.rows, problem.cols)
    tail = tiled_arguments(kernel, problem.rows, problem.cols, problem.lda, problem.ldb, problem.batch)
    src = np.ascontiguousarray(a).view(np.uint8).reshape(-1)
    out = emulate_launch(kernel, tm * tn * problem.batch_count, [src, dst, *tail])[1]
    assert (out[a.nbytes:] == UNWRITTEN).all()  # nothing past the output
    return out[:a.nbytes].view(a.dtype).reshape(tuple(shape[d] for d in dims))


@pytest.mark.parametrize("w, n, deinterleave, vb", [
    (1, 3, True, 16), (1, 3, False, 16), (1, 4, True, 16), (1, 8, False, 16), (1, 9, True, 8), (1, 16, False, 8),
    (2, 3, True, 16), (2, 5, False, 16), (2, 7, True, 16), (2, 12, False, 8), (4, 3, True, 16), (4, 6, False, 16),
    (8, 2, True, 16), (8, 3, False, 8), (4, 15, True, 8), (1, 19, True, 4), (1, 31, False, 4), (2, 17, True, 4)])
def test_word_sources_read_the_transpose(w, n, deinterleave, vb):
    """Each output byte's source, followed byte by byte, is the transpose of the thread's ``V x n`` block."""
    v = vb // w
    loaded = np.arange(n * vb)  # byte ids
    block = loaded.reshape(v, n, w) if deinterleave else loaded.reshape(n, v, w).transpose(1, 0, 2)
    expected = (block.transpose(1, 0, 2) if deinterleave else block).reshape(-1)  # the output's bytes, in order
    got = [4 * word + byte for sources in word_sources(w, n, vb, deinterleave) for word, byte in sources]
    assert got == list(expected)


@pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
@pytest.mark.parametrize("shape, dims, w, n, deinterleave", [
    ((2, 16, 16, 3), (0, 3, 1, 2), 1, 3, True),      # NHWC -> NCHW, 3 byte channels, 2 images
    ((2, 3, 16, 16), (0, 2, 3, 1), 1, 3, False),     # NCHW -> NHWC
    ((5, 64, 4), (0, 2, 1), 2, 4, True),             # batched [64, 4] fp16 -> [4, 64]
    ((3, 7, 32), (0, 2, 1), 2, 7, False),            # 7 planes of 32 fp16
    ((96, 9), (1, 0), 1, 9, True),                   # 8-byte vectors: 9 channels
    ((16, 40), (1, 0), 4, 16, False),                # 16 fp32 planes
    ((2, 2, 24, 5), (0, 1, 3, 2), 4, 5, True),       # two batch dims
    ((4, 8, 6), (0, 2, 1), 8, 6, True),              # 64-bit: 2 a vector
    ((1, 3, 4096), (0, 2, 1), 1, 3, False),          # a tile past the end: idle threads
    ((2, 64, 19), (0, 2, 1), 1, 19, True),           # 4-byte vectors: 19 byte channels
    ((2, 23, 64), (0, 2, 1), 1, 23, False),
])
def test_emulated_against_numpy(shape, dims, w, n, deinterleave):
    a = _random(shape, w)
    batch = len(plan_permutation(shape, dims, w).batch)
    kernel = emit_interleave_kernel("k", w, n, deinterleave, warps=1, batch_dims=batch)
    assert np.array_equal(_run(kernel, shape, dims, a), np.ascontiguousarray(np.transpose(a, dims)))


def test_prmt_count():
    """3 one-byte channels: 24 ``prmt`` for 48 bytes (2 an output word); 2-byte ones 1 a word; 4-byte ones none."""
    assert emit_interleave_kernel("k", 1, 3, True).source.count("__byte_perm(") == 24
    assert emit_interleave_kernel("k", 2, 3, True).source.count("__byte_perm(") == 12
    assert "__byte_perm(" not in emit_interleave_kernel("k", 4, 3, False).source.split("extern")[1]


def test_bad_arguments():
    for kwargs, word in (({"narrow": 1}, "narrow"), ({"narrow": MAX_NARROW + 1}, "narrow"), ({"warps": 0}, "warps"),
                         ({"batch_dims": MAX_KERNEL_BATCH_DIMS + 1}, "batch_dims"), ({"vector_bytes": 2}, "vector_bytes"),
                         ({"deinterleave": 1}, "deinterleave")):
        args = dict(name="k", element_bytes=2, narrow=3, deinterleave=True) | kwargs
        with pytest.raises(LayoutError, match=word):
            emit_interleave_kernel(**args)
    with pytest.raises(LayoutError, match="vector_bytes"):
        emit_interleave_kernel("k", 8, 3, True, vector_bytes=4)
    assert (vector_bytes_for(8), vector_bytes_for(9), vector_bytes_for(17), vector_bytes_for(32)) == (16, 8, 4, 4)


def _compiles_without_spills(kernel, tmp_path) -> None:
    """nvcc (sm_90, ``-Xptxas -v``) compiles ``kernel`` with no stack frame, no spills, at most 128 registers."""
    import re
    import subprocess

    from linear_layouts.codegen.ptx import find_nvcc
    if find_nvcc() is None:
        pytest.skip("no nvcc")
    (tmp_path / "k.cu").write_text(kernel.source)
    report = subprocess.run([find_nvcc(), "-arch=sm_90", "-cubin", "-w", "-Xptxas", "-v", "-o",
                             str(tmp_path / "k.cubin"), str(tmp_path / "k.cu")],
                            capture_output=True, text=True, check=True).stderr
    assert re.search(r"0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads", report), report
    assert int(re.search(r"Used (\d+) registers", report).group(1)) <= 128


def _problem(shape, dims, w):
    return plan_permutation(shape, dims, w)


def test_which_transposes_interleave():
    """The module doc's domain: a narrow side of 2 to 16, dense along it; whole vectors elsewhere (aligned), else
    the dense side's address and batch strides multiples of ``gcd(n, V)`` elements (any offset)."""
    assert interleaves(_problem((64, 224, 224, 3), (0, 3, 1, 2), 1), 0, 0) == (3, True, True)
    assert interleaves(_problem((64, 3, 224, 224), (0, 2, 3, 1), 1), 0, 0) == (3, False, True)
    assert interleaves(_problem((8, 512, 512, 15), (0, 3, 1, 2), 1), 0, 0) == (15, True, True)  # 8-byte vectors
    assert interleaves(_problem((8, 512, 512, 16), (0, 3, 1, 2), 1), 0, 0) is None       # the tiles' 16-byte vectors
    assert interleaves(_problem((8, 512, 512, 4), (0, 3, 1, 2), 2), 0, 0) is None        # and 8-byte ones
    assert interleaves(_problem((8, 512, 512, 12), (0, 3, 1, 2), 2), 0, 0) is None       # 24-byte pixels
    assert interleaves(_problem((64, 299, 299, 3), (0, 3, 1, 2), 1), 0, 0) == (3, True, False)  # planes of 89401
    assert interleaves(_problem((64, 224, 224, 3), (0, 3, 1, 2), 1), 8, 0) == (3, True, False)  # input 8 bytes off
    assert interleaves(_problem((64, 299, 299, 4), (0, 3, 1, 2), 1), 0, 0) == (4, True, False)
    assert interleaves(_problem((64, 299, 299, 4), (0, 3, 1, 2), 1), 2, 0) is None      # 2 bytes: gcd(4, 16) = 4
    assert interleaves(_problem((64, 299, 299, 4), (0, 3, 1, 2), 1), 4, 3) == (4, True, False)  # B's free
    assert interleaves(_problem((16, 6, 299, 299), (0, 2, 3, 1), 2), 4, 8) == (6, False, False)  # gcd(6, 8) = 2
    assert interleaves(_problem((16, 6, 299, 299), (0, 2, 3, 1), 2), 0, 2) is None
    assert interleaves(_problem((16, 3, 299, 299), (0, 2, 3, 1), 4), 0, 2) is None      # not 4-byte aligned
    assert interleaves(_problem((1393441, 5), (1, 0), 2), 0, 0) == (5, True, False)
    assert interleaves(_problem((64, 224, 224, 17), (0, 3, 1, 2), 1), 0, 0) == (17, True, True)  # 4-byte vectors
    assert interleaves(_problem((4, 32, 32, 17), (0, 3, 1, 2), 1), 0, 0) is None          # rows of 17 bytes: 68 KiB
    assert interleaves(_problem((4, 32, 32, 17), (0, 3, 1, 2), 1), 0, 0, wide_min_bytes=0) == (17, True, True)
    assert interleaves(_problem((4, 32, 32, 15), (0, 3, 1, 2), 1), 0, 0) == (15, True, True)  # 15 bytes: any size
    assert interleaves(_problem((64, 224, 224, 24), (0, 3, 1, 2), 1), 0, 0) is None     # the tiles' 8-byte vectors
    assert interleaves(_problem((64, 224, 224, 33), (0, 3, 1, 2), 1), 0, 0) is None     # 33 channels
    # INTERLEAVE_VECTOR_RATIO: the kernel's vectors 4x the tiles' along the narrow rows or wider
    assert interleaves(_problem((18, 141448, 26), (0, 2, 1), 1), 0, 0) is None          # 4 bytes against 2
    assert interleaves(_problem((62, 51825, 22), (0, 2, 1), 1), 0, 0) is None
    assert interleaves(_problem((2521168, 6), (1, 0), 2), 0, 0) == (6, True, True)      # 16 bytes against 4
    assert interleaves(_problem((96, 40096, 10), (0, 2, 1), 1), 0, 0) == (10, True, True)  # 8 bytes against 2
    assert interleaves(_problem((64, 224, 224, 17), (0, 3, 1, 2), 2), 0, 0) is None     # 34-byte pixels
    assert interleaves(_problem((64, 224, 224, 64), (0, 3, 1, 2), 2), 0, 0) is None     # not narrow
    assert interleaves(_problem((24, 5, 9), (2, 1, 0), 2), 0, 0) is None                # lda = 45, ldb = 120
    assert interleaves(_problem((4096, 4096), (1, 0), 1), 0, 0) is None


@pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
@pytest.mark.parametrize("shape, dims, w", [
    ((2, 32, 32, 3), (0, 3, 1, 2), 1), ((2, 3, 32, 32), (0, 2, 3, 1), 1), ((3, 16, 16, 5), (0, 3, 1, 2), 2),
    ((2, 3, 48), (0, 2, 1), 4), ((2, 6, 64), (0, 2, 1), 2), ((520, 9), (1, 0), 1), ((2, 3, 2, 8, 3), (0, 1, 4, 2, 3), 4),
])
def test_ops_takes_it(shape, dims, w, monkeypatch):
    """``ops.permute``'s launches (one interleave kernel) run emulated equal ``np.transpose`` (these small batches
    take the small-block kernel where ``SMALL_BATCHES``, and their grids of a few tiles the skinny tiles where
    ``INTERLEAVE_MIN_CTAS_PER_SM``: both off here)."""
    from linear_layouts.ops import launches as ops_launches
    monkeypatch.setattr(ops_launches, "SMALL_BATCHES", False)
    monkeypatch.setattr(ops_launches, "INTERLEAVE_MIN_CTAS_PER_SM", 0)
    monkeypatch.setattr(ops_launches, "INTERLEAVE_WIDE_MIN_BYTES", 0)
    a = _random(shape, w, seed=3)
    launches = permute_launches(shape, dims, w, SRC, DST, GridShape(132))
    assert [type(x) for x in launches] == [Launch] and "interleave" in launches[0].kernel.name
    assert np.array_equal(emulated_permute(a, dims), np.ascontiguousarray(np.transpose(a, dims)))


def test_a_grid_of_too_few_tiles_takes_the_skinny_tiles(monkeypatch):
    """The interleave kernel only where its grid holds ``INTERLEAVE_MIN_CTAS_PER_SM`` tiles an SM: ``[4, 64, 64,
    2]`` bf16 makes 16 tiles of 1024 x 2, 0.12 for each of 132 SMs (the skinny tiles), on 8 SMs 2 (the kernel);
    ``[64, 64, 64, 2]``, 256 tiles, takes it on 132."""
    from linear_layouts.ops import launches

    def name(shape, sms):
        return permute_launches(shape, (0, 3, 1, 2), 2, SRC, DST, GridShape(sms))[0].kernel.name
    assert "interleave" not in name((4, 64, 64, 2), 132) and "interleave" in name((4, 64, 64, 2), 8)
    assert "interleave" in name((64, 64, 64, 2), 132)
    monkeypatch.setattr(launches, "INTERLEAVE_MIN_CTAS_PER_SM", 0)
    assert "interleave" in name((4, 64, 64, 2), 132)
    monkeypatch.setattr(launches, "INTERLEAVE_MIN_CTAS_PER_SM", -1)
    with pytest.raises(LayoutError, match="INTERLEAVE_MIN_CTAS_PER_SM: must be a number, 0 or more"):
        name((4, 64, 64, 2), 132)



def test_off_switch(monkeypatch):
    """``INTERLEAVE = False`` gives the problem back to the skinny tiles."""
    from linear_layouts.ops import launches
    monkeypatch.setattr(launches, "INTERLEAVE", False)
    kernel = permute_launches((4, 32, 32, 3), (0, 3, 1, 2), 1, SRC, DST, GridShape(132))[0].kernel
    assert "interleave" not in kernel.name


@pytest.mark.parametrize("w, n, deinterleave", [(1, 3, True), (1, 8, False), (1, 16, True), (2, 16, False),
                                                (4, 8, True), (8, 16, False)])
def test_compiles_for_sm_90_without_spills(w, n, deinterleave, tmp_path):
    _compiles_without_spills(emit_interleave_kernel("k", w, n, deinterleave, batch_dims=1), tmp_path)


# ------------------------------------------------------------------------------------ the form at any element offset
def test_group_origin():
    """``e in (-V, 0]`` with ``position + n e = 0 mod V``, for every residue; None exactly where ``gcd(n, V)`` does
    not divide the position."""
    for n in range(2, MAX_NARROW + 1):
        for v in (1, 2, 4, 8, 16):
            for position in range(40):
                e = group_origin(position, n, v)
                if position % np.gcd(n, v):
                    assert e is None
                else:
                    assert -v < e <= 0 and (position + n * e) % v == 0


def _strided(w: int, n: int, deinterleave: bool, long_side: int, batch=(), offsets=(0, 0), pad: int = 0,
             warps: int = 1, seed: int = 0):
    """The unaligned form on ``B = A^T`` (``A`` ``rows x cols`` at row stride ``lda``, ``B``'s row ``c`` at ``c
    ldb``, ``batch``: ``(size, src_stride, dst_stride)``), the strided side's rows ``pad`` elements apart more
    than the long side, the buffers ``offsets`` bytes past 16-byte aligned ones; ``(output bytes, expected)``:
    the gather ``B[c, r] = A[r, c]`` into bytes ``UNWRITTEN`` elsewhere."""
    rows, cols = (long_side, n) if deinterleave else (n, long_side)
    lda, ldb = (n, long_side + pad) if deinterleave else (long_side + pad, n)
    kernel = emit_interleave_kernel("k", w, n, deinterleave, warps=warps, batch_dims=len(batch), aligned=False)
    assert isinstance(kernel, UnalignedInterleaveKernel)
    src_elements = (rows - 1) * lda + cols + sum((size - 1) * s for size, s, _ in batch)
    dst_elements = (cols - 1) * ldb + rows + sum((size - 1) * d for size, _, d in batch)
    so, do = offsets
    src = np.zeros(so + src_elements * w, np.uint8)
    src[so:] = np.random.default_rng(seed).integers(0, 256, src_elements * w, dtype=np.uint8)
    dst = np.full(do + dst_elements * w + 32, UNWRITTEN, np.uint8)
    tm, tn = kernel.tile_counts(rows, cols)
    tail = tiled_arguments(kernel, rows, cols, lda, ldb, tuple(batch))
    ctas = tm * tn * int(np.prod([size for size, _, _ in batch]))
    out = emulate_launch(kernel, ctas, [(src, so), (dst, do), *tail])[1]
    expected = np.full_like(dst, UNWRITTEN)
    a = src[so:].view(_DTYPES[w])
    b = expected[do:do + dst_elements * w].view(_DTYPES[w])
    r, c = np.arange(rows)[:, None], np.arange(cols)[None, :]
    for index in np.ndindex(*(size for size, _, _ in batch)):
        s = sum(i * stride for i, (_, stride, _) in zip(index, batch))
        d = sum(i * stride for i, (_, _, stride) in zip(index, batch))
        b[d + c * ldb + r] = a[s + r * lda + c]
    return out, expected


@pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
@pytest.mark.parametrize("w, n, deinterleave, long_side, batch, offsets, pad, warps", [
    (1, 3, True, 17 * 17, ((3, 867, 870),), (0, 5), 0, 1),          # 299-like planes, 3 images, B 5 bytes off
    (1, 3, False, 17 * 17, ((3, 870, 867),), (7, 3), 1, 1),         # NCHW -> NHWC, A's planes 1 apart more
    (1, 4, True, 37 * 41, ((1, 6068, 6071), (3, 6072, 6100)), (4, 9), 3, 1),  # two batch dims; gcd(4, 16) = 4
    (1, 9, False, 35 * 35, ((5, 9824, 11025),), (3, 9), 0, 1),      # 8-byte vectors; gcd(9, 8) = 1
    (1, 16, True, 37 * 41, (), (8, 1), 5, 2),                       # 16 channels: gcd(16, 8) = 8
    (1, 7, True, 300, ((3, 2101, 2111),), (1, 15), 2, 4),           # idle warps
    (2, 5, True, 1225, ((3, 6125, 6130),), (2, 6), 0, 1),
    (2, 8, False, 41, ((5, 330, 328),), (6, 16), 0, 1),             # gcd(8, 8) = 8: B on 16 bytes
    (2, 7, False, 300, (), (2, 0), 9, 1),
    (4, 3, True, 289, ((3, 867, 870),), (4, 12), 0, 1),
    (4, 4, False, 37, ((3, 150, 148),), (12, 0), 1, 1),             # gcd(4, 4) = 4: B on 16 bytes
    (8, 2, True, 77, ((3, 154, 160),), (0, 8), 3, 1),               # gcd(2, 2) = 2: A on 16 bytes
    (8, 2, False, 77, ((3, 160, 154),), (8, 0), 3, 1),
    (1, 5, True, 1, ((7, 5, 6),), (1, 3), 0, 1),                    # 1-element-long planes
    (2, 3, False, 1, ((5, 4, 3),), (2, 2), 1, 1),
    (1, 2, False, 15, (), (0, 1), 0, 1),                            # shorter than a vector
    (1, 19, True, 301, ((3, 301 * 19 + 5, 301 * 19 + 7),), (1, 3), 0, 1),  # 4-byte vectors
    (1, 23, False, 77, (), (0, 1), 0, 1),
])
def test_unaligned_emulated_against_numpy(w, n, deinterleave, long_side, batch, offsets, pad, warps):
    """Every element of ``B`` is its ``A`` element, written once (nothing else, also between the padded rows)."""
    out, expected = _strided(w, n, deinterleave, long_side, batch, offsets, pad, warps)
    assert np.array_equal(out, expected)


@pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
@pytest.mark.parametrize("shape, dims, w, offsets", [
    ((3, 17, 17, 3), (0, 3, 1, 2), 1, (1, 7)), ((3, 3, 17, 17), (0, 2, 3, 1), 1, (5, 2)),
    ((300, 5), (1, 0), 2, (2, 6)), ((7, 3, 41), (0, 2, 1), 4, (4, 0)), ((2, 35, 35, 3), (0, 3, 1, 2), 2, (0, 0)),
])
def test_ops_takes_the_unaligned_form(shape, dims, w, offsets, monkeypatch):
    """``ops.permute`` of odd shapes at misaligned bases: one launch of the ``_any`` kernel, equal to
    ``np.transpose`` (the size rule ``INTERLEAVE_ANY_MIN_BYTES`` and the grid's ``INTERLEAVE_MIN_CTAS_PER_SM``
    lowered to these emulated sizes; ``SMALL_BATCHES`` off: some are batches of small blocks)."""
    from linear_layouts.ops import launches as ops_launches
    monkeypatch.setattr(ops_launches, "SMALL_BATCHES", False)
    monkeypatch.setattr(ops_launches, "INTERLEAVE_ANY_MIN_BYTES", 0)
    monkeypatch.setattr(ops_launches, "INTERLEAVE_MIN_CTAS_PER_SM", 0)
    monkeypatch.setattr(ops_launches, "INTERLEAVE_WIDE_MIN_BYTES", 0)
    ops_launches._template.cache_clear()
    a = _random(shape, w, seed=5)
    launches = permute_launches(shape, dims, w, SRC + offsets[0], DST + offsets[1], GridShape(132))
    assert [type(x) for x in launches] == [Launch] and launches[0].kernel.name.endswith("_any")
    assert np.array_equal(emulated_permute(a, dims, *offsets), np.ascontiguousarray(np.transpose(a, dims)))
    ops_launches._template.cache_clear()


def test_small_odd_problems_keep_the_tiles():
    """Below ``INTERLEAVE_ANY_MIN_BYTES`` an odd problem keeps the skinny tiles; from it, the ``_any`` form."""
    from linear_layouts.ops.launches import INTERLEAVE_ANY_MIN_BYTES
    assert INTERLEAVE_ANY_MIN_BYTES == 4 << 20
    assert interleaves(_problem((8, 35, 35, 3), (0, 3, 1, 2), 2), 0, 0) is None
    assert interleaves(_problem((40, 35, 35, 3), (0, 3, 1, 2), 2), 0, 0) is None         # 294000 bytes
    assert interleaves(_problem((16, 299, 299, 3), (0, 3, 1, 2), 1), 0, 0) == (3, True, False)  # 4291248 bytes
    assert interleaves(_problem((15, 299, 299, 3), (0, 3, 1, 2), 1), 0, 0) is None       # 4023045 bytes
    assert interleaves(_problem((181355, 15), (1, 0), 1), 0, 0) is None                 # 2.6 MiB: rows of 15 bytes
    assert interleaves(_problem((362709, 15), (1, 0), 1), 0, 0) == (15, True, False)     # 5.2 MiB
    name = permute_launches((8, 35, 35, 3), (0, 3, 1, 2), 2, SRC, DST, GridShape(132))[0].kernel.name
    assert "interleave" not in name


def test_unaligned_tiles():
    """``ceil((floor((L + V - 2) / V) + 2) / 31 W)`` tiles along the long side: 89401 one-byte pixels of 3
    channels, 16 a group, 4 warps: 46; the aligned form's tiles are ``32 W V``."""
    kernel = emit_interleave_kernel("k", 1, 3, True, aligned=False)
    assert (kernel.tile_rows, kernel.tile_counts(89401, 3)) == (1984, (46, 1))
    assert emit_interleave_kernel("k", 1, 3, False, aligned=False).tile_counts(3, 1) == (1, 1)
    assert emit_interleave_kernel("k", 1, 3, True).tile_counts(89401, 3) == (44, 1)
    with pytest.raises(LayoutError, match="aligned"):
        emit_interleave_kernel("k", 1, 3, True, aligned=0)


@pytest.mark.parametrize("w, n, deinterleave", [(1, 3, True), (1, 8, False), (1, 16, True), (2, 5, False),
                                                (4, 4, True), (8, 2, False)])
def test_unaligned_compiles_for_sm_90_without_spills(w, n, deinterleave, tmp_path):
    _compiles_without_spills(emit_interleave_kernel("k", w, n, deinterleave, batch_dims=1, aligned=False), tmp_path)
