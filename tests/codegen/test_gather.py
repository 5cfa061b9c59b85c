"""Warp-local gather emitter: one shfl.sync per plan round (per 32-bit word), compiles for sm_90; the
shared-memory gather stores each source element once."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.analysis.gather import plan_gather
from linear_layouts.layouts.blocked import BlockedLayout
from linear_layouts.codegen.emulate import emulate_kernel, find_cxx
from linear_layouts.codegen.gather import emit_gather_kernel
from linear_layouts.codegen.ptx import compile_ptx, count_ptx, find_nvcc, split_ptx_entries


def _layout(shape, spt, tpw, wpc):
    full = BlockedLayout(spt, tpw, wpc, [0, 1]).to_linear(shape)
    return LinearLayout({d: v for d, v in full.bases.items() if d != "block"}, dict(full.out_dims))


CASES = [([32, 64], [1, 1], [32, 1], [1, 4], 16), ([64, 32], [2, 1], [16, 2], [1, 4], 32),
         ([16, 128], [4, 1], [4, 8], [1, 4], 64), ([64, 32], [2, 1], [16, 2], [1, 4], 16),
         ([16, 128], [4, 1], [4, 8], [1, 4], 8)]


def test_gather_kernels_match_the_plans():
    sources, expected = [], {}
    for i, (shape, spt, tpw, wpc, bits) in enumerate(CASES):
        layout = _layout(shape, spt, tpw, wpc)
        plan = plan_gather(layout, layout, 0, bits)
        assert plan.warp_local
        k = emit_gather_kernel(f"g{i}", plan)
        s = emit_gather_kernel(f"s{i}", plan, shared_memory=True)
        assert k.shuffles == plan.num_shuffles and k.shared_bytes == 0
        assert s.shared_bytes == layout.total_out_dim_size * bits // 8
        sources += [k.source, s.source]
        regs = layout.in_dim_size("register")
        expected[f"g{i}"] = {"shfl": plan.num_shuffles, "shared": 0}
        expected[f"s{i}"] = {"shfl": 0, "shared": 2 * regs}
    if find_nvcc() is None:
        pytest.skip("nvcc is not installed")
    entries = split_ptx_entries(compile_ptx("".join(sources)))
    for name, want in expected.items():
        got = count_ptx(entries[name])
        assert sum(n for op, n in got.items() if op.startswith("shfl")) == want["shfl"], name
        assert sum(n for op, n in got.items() if ".shared" in op) == want["shared"], name


def test_not_warp_local_needs_shared_memory():
    layout = _layout([64, 32], [1, 1], [8, 4], [4, 1])  # warps split the axis
    plan = plan_gather(layout, layout, 0, 32)
    assert not plan.warp_local
    with pytest.raises(LayoutError, match="warp-local"):
        emit_gather_kernel("g", plan)
    assert "ld.shared.b32" in emit_gather_kernel("g", plan, shared_memory=True).source


@dataclass(frozen=True)
class _Packed:
    """A gather kernel behind a wrapper with the emulator's conversion signature ``(in, out, iterations)``:
    each tile of ``in`` holds the source tile and then the int32 index tile (``3 x`` 16-bit elements or
    ``2 x`` 32-bit ones per tile element); the gathered tile lands at the start of ``out``'s tile."""

    name: str
    source: str
    threads: int
    element_bytes: int
    tile_elements: int


def _emulated(kernel, src_tiles: np.ndarray, index_tiles: np.ndarray, iterations: int) -> np.ndarray:
    w, tile = kernel.element_bytes, kernel.tile_elements
    per = tile * (w + 4) // w  # elements of the wrapper's tile
    t = {1: "unsigned char", 2: "unsigned short", 4: "unsigned"}[w]
    wrapper = (f'\nextern "C" __global__ void {kernel.name}_w(const {t}* in, {t}* out, int iterations) {{\n'
               f"  const {t}* s = in + (size_t)blockIdx.x * {per}u;\n"
               f"  {kernel.name}(s - (size_t)blockIdx.x * {tile}u, (const int*)(s + {tile}u) - (size_t)blockIdx.x * {tile}u,"
               f" out + (size_t)blockIdx.x * {per}u - (size_t)blockIdx.x * {tile}u, iterations);\n}}\n")
    packed = _Packed(f"{kernel.name}_w", kernel.source + wrapper, kernel.threads, w, per)
    dtype = src_tiles.dtype
    data = np.concatenate([src_tiles.reshape(len(src_tiles), -1),
                           index_tiles.astype(np.int32).reshape(len(index_tiles), -1).view(dtype)], axis=1)
    out = emulate_kernel(packed, data.ravel(), iterations).reshape(len(src_tiles), per)
    return out[:, :tile].reshape(src_tiles.shape)


@pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
@pytest.mark.parametrize("shape, spt, tpw, wpc", [
    ([32, 8], [1, 1], [32, 1], [1, 2]),     # the axis on lanes only
    ([16, 16], [2, 1], [8, 4], [1, 2]),     # one axis register bit
    ([16, 8], [4, 1], [4, 8], [1, 1]),      # two axis register bits
    ([64, 4], [4, 1], [8, 4], [1, 1]),      # two axis register bits, one of them a repeat
])
@pytest.mark.parametrize("bits", [8, 16, 32])
def test_shuffle_gathers_match_take_along_axis_on_the_emulator(shape, spt, tpw, wpc, bits):
    """Every element of a gather loop (two tiles, three dependent gathers) against numpy's
    take_along_axis, for the shuffle and the shared-memory gather."""
    layout = _layout(shape, spt, tpw, wpc)
    plan = plan_gather(layout, layout, 0, bits)
    rng = np.random.default_rng(bits + shape[0])
    dt = {8: np.uint8, 16: np.uint16, 32: np.uint32}[bits]
    src = rng.integers(0, np.iinfo(dt).max, size=(2, *shape), endpoint=True).astype(dt)
    idx = rng.integers(0, shape[0], size=(2, *shape)).astype(np.int32)
    want = np.take_along_axis(src, idx, axis=1)
    for _ in range(2):
        want = np.take_along_axis(want ^ dt(1), idx, axis=1)
    for shared in (False, True):
        k = emit_gather_kernel(f"ge{bits}_{shape[0]}_{int(shared)}", plan, shared_memory=shared)
        got = _emulated(k, src, idx, 2)
        assert np.array_equal(got, want), (shared, int(np.count_nonzero(got != want)))
        assert k.shuffles == (0 if shared else plan.num_shuffles)


def test_sub_word_rounds_share_a_shuffle_unless_the_tile_spills():
    """16-bit, two source registers along the axis: two rounds per shfl word; a [512, 32] tile
    (128 registers of each array per thread) keeps one round per shfl (analysis.gather's budget)."""
    small = plan_gather(_layout([64, 32], [2, 1], [16, 2], [1, 4]), _layout([64, 32], [2, 1], [16, 2], [1, 4]), 0, 16)
    assert small.elements_per_shuffle == 2 and small.num_shuffles == len(small.rounds) // 2
    big_layout = _layout([512, 32], [16, 1], [32, 1], [1, 4])
    big = plan_gather(big_layout, big_layout, 0, 16)
    assert big.elements_per_shuffle == 1 and big.num_shuffles == len(big.rounds) == 2048
    assert emit_gather_kernel("big", big).shuffles == 2048
