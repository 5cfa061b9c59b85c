"""The GPU suite's transposes at the tile shapes of Triton's best tiles (``harness.transposes.PEER_TILE_TRANSPOSES``):
each new layout, emitted for a 256 x 256 matrix, computes ``A^T`` on every element (emulated on the CPU), and
nvcc compiles exactly its plan: the planned shared instructions and one 16-byte global load and store per 16
bytes of the thread's tile (streaming hints where asked). And the cp.async pipeline on 16- and 32-bit elements
(``harness.transposes.ASYNC_TRANSPOSES``): every element on a grid of 3 CTAs, each looping over several tiles."""

from __future__ import annotations

import pytest

from linear_layouts.codegen.emulate import emulate_transpose, find_cxx
from linear_layouts.codegen.ptx import compile_ptx, count_ptx, find_nvcc


def _peer_tile_kernels(n: int):
    from harness.transposes import PEER_TILE_TRANSPOSES, transpose_kernels  # noqa: PLC0415

    tags = {(w, tag) for w, variants in PEER_TILE_TRANSPOSES.items() for tag, *_ in variants}
    return [(w, tag, step, k) for w, tag, step, k in transpose_kernels(n) if (w, tag) in tags]


def test_one_kernel_per_peer_tile():
    """Each tile once in the grid's order and once in raster order "m" (tags ending in ``m``: CTAs down the columns
    of tiles, a whole column a group)."""
    kernels = _peer_tile_kernels(256)
    tiles = [(1, 64, 128, 4), (1, 128, 128, 8), (2, 64, 64, 4), (2, 128, 128, 8), (4, 64, 64, 8), (4, 64, 64, 8)]
    assert sorted((w, k.tile_rows, k.tile_cols, k.threads // 32) for w, _, _, k in kernels) == sorted(tiles * 2)
    ordered = [k for _, tag, _, k in kernels if tag.endswith("m")]
    assert len(ordered) == 6 and all("const unsigned tile = blockIdx.y" in k.source for k in ordered)


@pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
@pytest.mark.parametrize("index", range(8))
def test_peer_tile_transpose_every_element(index):
    """The four new tile layouts, in both orders (the 32-bit ones are ``shared64x8w``'s, with hints or a grouped
    order: their own tests are in ``test_persistent_transpose.py``)."""
    w, tag, _, kernel = [k for k in _peer_tile_kernels(256) if k[0] < 4][index]
    assert emulate_transpose(kernel, seed=index), (w, tag)


@pytest.mark.skipif(find_nvcc() is None, reason="nvcc is not installed")
@pytest.mark.parametrize("index", range(12))
def test_peer_tile_transpose_compiles_to_its_plan(index):
    w, tag, step, kernel = _peer_tile_kernels(256)[index]
    ptx = compile_ptx(kernel.source)
    counts = count_ptx(ptx)
    assert {op: counts[op] for op in step.instruction_counts()} == step.instruction_counts(), tag
    vectors = kernel.tile_rows * kernel.tile_cols * w // (16 * kernel.threads)
    hinted = tag.rstrip("m").endswith("h")
    loads = ptx.count("ld.global.nc.L1::no_allocate.v4.b32") if hinted else counts["ld.global.nc.v4.u32"]
    stores = counts["st.global.cs.v4.b32" if hinted else "st.global.v4.b32"]
    assert (loads, stores) == (vectors, vectors), tag


def _async_wide(n: int):
    from harness.transposes import transpose_kernels  # noqa: PLC0415

    return [(w, tag, step, k) for w, tag, step, k in transpose_kernels(n) if tag.startswith("async") and w > 1]


@pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
@pytest.mark.parametrize("index", range(2))
def test_async_wide_transpose_every_element(index):
    w, tag, _, kernel = _async_wide(512)[index]
    assert kernel.persistent and kernel.tiles > 3 and emulate_transpose(kernel, seed=index, ctas=3), (w, tag)


@pytest.mark.skipif(find_nvcc() is None, reason="nvcc is not installed")
def test_async_wide_transposes_copy_with_cp_async():
    """16 bytes per cp.async, 16 per thread and tile (2 tiles ahead of the loop, 1 in it); no shared stores."""
    kernels = _async_wide(8192)
    assert [(w, tag) for w, tag, *_ in kernels] == [(2, "async128x8w_s3"), (4, "async64x8w_s3")]
    for w, tag, step, k in kernels:
        ptx = compile_ptx(k.source)
        per_tile = k.tile_rows * k.tile_cols * w // (16 * k.threads)
        assert ptx.count("cp.async.cg.shared.global ") == 3 * per_tile, tag
        assert "st.shared" not in ptx.split(".entry")[1], tag
        assert count_ptx(ptx)["ld.shared.v4.b32"] == step.instruction_counts()["ld.shared.v4.b32"], tag
