"""Shared/global emitters: a model of st/ld.shared and stmatrix/ldmatrix driven by the emitted
addresses moves every element where the layouts say; generated kernels compile with nvcc -arch=sm_90
and their PTX holds exactly the predicted shared-memory instructions."""

from __future__ import annotations

import numpy as np
import pytest

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.analysis.steps import SharedInstruction
from linear_layouts.layouts import row_major_shared as _row_major_shared
from linear_layouts.codegen.conversion import (
    RegisterCopy,
    SharedConversion,
    widest_vector,
)
from linear_layouts.codegen.global_memory import global_instruction_count, global_vector_elements
from linear_layouts.codegen.hardware_map import global_map, shared_map
from linear_layouts.codegen.kernel import emit_conversion_kernel
from linear_layouts.codegen.packing import Emission, Packing
from linear_layouts.codegen.ptx import compile_ptx, count_ptx, find_nvcc, split_ptx_entries
from linear_layouts.codegen.shared import EmittedAccess, access_addresses

from ._layouts import random_distributed, random_shared, seed_transpose

def row_major_shared(layout: LinearLayout) -> LinearLayout:
    """The unswizzled shared layout of ``layout``'s tensor (the catalog's, last dim fastest)."""
    return _row_major_shared(list(layout.out_dims.values()))


needs_nvcc = pytest.mark.skipif(find_nvcc() is None, reason="nvcc is not installed")


def simulate_access(layout: LinearLayout, shared: LinearLayout, element_bytes: int, access: EmittedAccess, store: bool):
    """Model of the hardware access: yields (register, lane, warp, offset) for every element each
    emitted instruction moves, with the PTX semantics of st/ld.shared vectors and st/ldmatrix."""
    base = shared_map(layout, shared)
    hmap = access.apply(base)
    k = (4 // element_bytes).bit_length() - 1
    reg = hmap.register_index
    for warp in range(hmap.num_warps):
        for r, expr in access_addresses(base, element_bytes, access, store):
            rows = [expr.evaluate({"lane": t, "warp": warp}) for t in range(32)]
            for lane in range(32):
                if store and ((lane & hmap.free_lane and access.kind is SharedInstruction.VECTOR) or (warp & hmap.free_warp)):
                    continue
                if access.kind is SharedInstruction.VECTOR:
                    for j in range(access.width):
                        yield reg(r + j), lane, warp, rows[lane] + j
                elif access.trans:  # word i, half j: row 2 (lane % 4) + j of matrix i, column lane / 4
                    for i in range(access.width):
                        for j in range(2):
                            yield reg(r + (i << 1) + j), lane, warp, rows[8 * i + 2 * (lane % 4) + j] + lane // 4
                else:
                    for i in range(access.width):
                        start = rows[8 * i + lane // 4] + (lane % 4) * (1 << k)
                        for j in range(1 << k):
                            yield reg(r + (i << k) + j), lane, warp, start + j


def check_side(layout, shared, element_bytes, access, store):
    seen = set()
    for r, lane, warp, offset in simulate_access(layout, shared, element_bytes, access, store):
        assert layout.apply({"register": r, "lane": lane, "warp": warp}) == shared.apply({"offset": offset})
        seen.add(offset)
    if store:  # every element written, exactly once per slot
        assert len(seen) == shared.in_dim_size("offset")


def test_seed_transpose_addresses_and_ptx_counts():
    src, dst, shared = seed_transpose()
    v1 = EmittedAccess("vector", 1)
    check_side(src, shared, 4, v1, True)
    check_side(dst, shared, 4, v1, False)
    step = SharedConversion(src, dst, shared, 4, v1, v1)
    assert step.instruction_counts() == {"st.shared.b32": 16, "ld.shared.b32": 16}
    if find_nvcc():
        ptx = compile_ptx(emit_conversion_kernel("seed", src, dst, 4, step).source)
        counts = count_ptx(ptx)
        assert counts["st.shared.b32"] == 16 and counts["ld.shared.b32"] == 16
        assert counts["ld.global.nc.u32"] == 16 and counts["st.global.b32"] == 16


def _matrix_pair():
    """fp16 [32, 16]: src 8 contiguous registers per lane (st.shared.v4), dst an ldmatrix.x4 tile."""
    src = LinearLayout({"register": [[0, 1], [0, 2], [0, 4], [0, 8]],
                        "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], "warp": []}, ["dim0", "dim1"])
    dst = LinearLayout({"register": [[0, 1], [0, 8], [8, 0], [16, 0]],
                        "lane": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], "warp": []}, ["dim0", "dim1"])
    return src, dst, row_major_shared(src)


def test_ldmatrix_stmatrix_tiles_move_the_right_elements():
    src, dst, shared = _matrix_pair()
    for width in (1, 2, 4):
        check_side(dst, shared, 2, EmittedAccess("matrix", width), False)
        check_side(dst, shared, 2, EmittedAccess("matrix", width), True)
    check_side(src, shared, 2, EmittedAccess("vector", 8), True)
    # fp32 (k = 0) and fp8 (k = 2) tiles
    f32 = LinearLayout({"register": [[0, 4], [8, 0]], "lane": [[0, 1], [0, 2], [1, 0], [2, 0], [4, 0]], "warp": []},
                       ["dim0", "dim1"])
    check_side(f32, row_major_shared(f32), 4, EmittedAccess("matrix", 4), False)
    f8 = LinearLayout({"register": [[0, 1], [0, 2], [0, 16], [8, 0]],
                       "lane": [[0, 4], [0, 8], [1, 0], [2, 0], [4, 0]], "warp": []}, ["dim0", "dim1"])
    check_side(f8, row_major_shared(f8), 1, EmittedAccess("matrix", 4), True)
    # transposed fp16 tile: lanes 2..4 walk a row, register 0 and lanes 0, 1 pick rows
    tr = LinearLayout({"register": [[1, 0], [0, 8], [8, 0], [16, 0]],
                       "lane": [[2, 0], [4, 0], [0, 1], [0, 2], [0, 4]], "warp": []}, ["dim0", "dim1"])
    for width in (1, 2, 4):
        for store in (True, False):
            check_side(tr, row_major_shared(tr), 2, EmittedAccess("matrix", width, trans=True), store)
    with pytest.raises(LayoutError, match="16-byte rows"):
        check_side(tr, row_major_shared(tr), 2, EmittedAccess("matrix", 4), False)


def test_register_order_permutes_the_vector_bits():
    """Vector bits that are not the first register bits (a plan's register permutation)."""
    src = LinearLayout({"register": [[1, 0], [2, 0], [0, 1], [0, 2]],
                        "lane": [[0, 4], [0, 8], [0, 16], [4, 0], [8, 0]], "warp": []}, ["dim0", "dim1"])
    shared = row_major_shared(src)
    with pytest.raises(LayoutError, match="consecutive"):
        check_side(src, shared, 4, EmittedAccess("vector", 4), True)
    for store in (True, False):
        check_side(src, shared, 4, EmittedAccess("vector", 4, (2, 3)), store)
    step = SharedConversion(src, src, shared, 4, EmittedAccess("vector", 4, (2, 3)), EmittedAccess("vector", 2, (2,)))
    assert step.instruction_counts() == {"st.shared.v4.b32": 4, "ld.shared.v2.b32": 8}


def test_random_vector_accesses_move_the_right_elements():
    rng = np.random.default_rng(5)
    for case in range(40):
        shape = [int(rng.integers(2, 6)), int(rng.integers(2, 6))]
        src = random_distributed(rng, shape, int(rng.integers(0, 3)))
        shared = random_shared(rng, shape, keep_low=int(rng.integers(0, 3)))
        w = int(rng.choice([1, 2, 4, 8]))
        hmap = shared_map(src, shared)
        v = widest_vector(hmap, w)
        check_side(src, shared, w, EmittedAccess("vector", v), True)
        check_side(src, shared, w, EmittedAccess("vector", v), False)


@needs_nvcc
def test_random_kernels_compile_and_ptx_counts_match_predictions():
    """20 random conversions (1-4 warps; 8/16/32/64-bit; swizzled, unswizzled, padded) in one nvcc run."""
    rng = np.random.default_rng(7)
    kernels, expected = [], {}
    for case in range(20):
        shape = [int(rng.integers(3, 6)), int(rng.integers(3, 6))]
        warps = int(rng.integers(0, 3))
        src = random_distributed(rng, shape, warps)
        dst = random_distributed(rng, shape, warps)
        w = int(rng.choice([1, 2, 4, 8]))
        kind = case % 3
        shared = random_shared(rng, shape, keep_low=2) if kind == 0 else row_major_shared(src)
        vs, vd = widest_vector(shared_map(src, shared), w), widest_vector(shared_map(dst, shared), w)
        padding = (1 << shape[1], max(vs, vd)) if kind == 2 else ()
        step = SharedConversion(src, dst, shared, w, EmittedAccess("vector", vs), EmittedAccess("vector", vd), padding)
        name = f"k{case}"
        kernels.append(emit_conversion_kernel(name, src, dst, w, step))
        want = dict(step.instruction_counts())
        g_src, g_dst = global_map(src), global_map(dst)
        want["ld.global"] = global_instruction_count(g_src, w, store=False)
        want["st.global"] = global_instruction_count(g_dst, w, store=True)
        want["vec"] = (global_vector_elements(g_src, w), global_vector_elements(g_dst, w))
        expected[name] = want
    entries = split_ptx_entries(compile_ptx("".join(k.source for k in kernels)))
    assert sorted(entries) == sorted(expected)
    for name, want in expected.items():
        got = count_ptx(entries[name])
        for op, n in want.items():
            if op in ("ld.global", "st.global", "vec"):
                continue
            assert got[op] == n, (name, op, got)
        shared_ops = {op for op in got if ".shared" in op}
        assert shared_ops == {op for op in want if ".shared" in op}, (name, got)
        assert sum(n for op, n in got.items() if op.startswith("ld.global")) == want["ld.global"], (name, got)
        assert sum(n for op, n in got.items() if op.startswith("st.global")) == want["st.global"], (name, got)


@needs_nvcc
def test_matrix_kernel_ptx_counts():
    src, dst, shared = _matrix_pair()
    forward = SharedConversion(src, dst, shared, 2, EmittedAccess("vector", 8), EmittedAccess("matrix", 4))
    backward = SharedConversion(dst, src, shared, 2, EmittedAccess("matrix", 4), EmittedAccess("vector", 8))
    counts = count_ptx(compile_ptx(emit_conversion_kernel("mat", src, dst, 2, forward).source))
    assert counts["st.shared.v4.b32"] == 2 and counts["ldmatrix.sync.aligned.m8n8.x4.shared.b16"] == 2
    assert counts["ld.global.nc.v4.u32"] == 2
    counts = count_ptx(compile_ptx(emit_conversion_kernel("mat_back", dst, src, 2, backward).source))
    assert counts["stmatrix.sync.aligned.m8n8.x4.shared.b16"] == 2 and counts["ld.shared.v4.b32"] == 2
    # the round-trip kernel holds both (nvcc may unroll its loop)
    counts = count_ptx(compile_ptx(emit_conversion_kernel("mat_both", src, dst, 2, forward, backward).source))
    assert counts["stmatrix.sync.aligned.m8n8.x4.shared.b16"] >= 2 and counts["ldmatrix.sync.aligned.m8n8.x4.shared.b16"] >= 4


def test_register_copy_and_errors():
    src, dst, shared = seed_transpose()
    copy = RegisterCopy(src, src, tuple(range(16)))
    natural = Packing.natural(4, 4)
    assert copy.emit_words("a", "b", natural, natural, Emission())[3] == "b[3] = a[3];"
    assert copy.instruction_counts() == {}
    with pytest.raises(LayoutError, match="source"):
        RegisterCopy(src, src, (0,) * 15)
    with pytest.raises(LayoutError, match="consecutive"):
        SharedConversion(src, dst, shared, 4, EmittedAccess("vector", 2), EmittedAccess("vector", 1))
    with pytest.raises(LayoutError, match="16-byte"):
        SharedConversion(src, dst, shared, 4, EmittedAccess("matrix", 4), EmittedAccess("vector", 1))
    with pytest.raises(LayoutError, match="width"):
        EmittedAccess("vector", 3)
    with pytest.raises(LayoutError, match="kind"):
        EmittedAccess("scalar", 1)
    with pytest.raises(LayoutError, match="element_bytes"):
        SharedConversion(src, dst, shared, 3, EmittedAccess("vector", 1), EmittedAccess("vector", 1))
    with pytest.raises(LayoutError, match="bijective"):
        SharedConversion(src, dst, LinearLayout({"offset": [[0, 1]] * 9}, {"dim0": 16, "dim1": 32},
                                                require_surjective=False),
                         4, EmittedAccess("vector", 1), EmittedAccess("vector", 1))
