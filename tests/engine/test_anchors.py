"""Anchors: our coalesced blocked layouts and mma layouts are the ones Triton 3.9 picks (TTGIR of plain
Triton kernels compiled for sm_80 / sm_90 on the CPU), and the global-memory cost model."""

from __future__ import annotations

import re

import pytest

from linear_layouts import LayoutError
from linear_layouts.engine.anchors import (
    coalesced_layout,
    default_blocked_layout,
    GLOBAL_SECTOR_NS,
    global_cost,
    memory_order,
    mma_layout,
)


def _ttgir(kernel, signature, constexprs, cc, num_warps):
    triton = pytest.importorskip("triton")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    sig = dict(signature)
    sig.update(dict.fromkeys(constexprs, "constexpr"))
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(len(signature))}
    src = ASTSource(fn=kernel, signature=sig, constexprs=constexprs, attrs=attrs)
    return triton.compile(src, target=GPUTarget("cuda", cc, 32), options={"num_warps": num_warps}).asm["ttgir"]


def _ints(text):
    return tuple(int(x) for x in text.split(",") if x.strip())


def _blocked(ttgir):
    m = re.search(r"#blocked\d* = #ttg.blocked<\{sizePerThread = \[([^\]]*)\], threadsPerWarp = \[([^\]]*)\], "
                  r"warpsPerCTA = \[([^\]]*)\], order = \[([^\]]*)\]", ttgir)
    return tuple(_ints(g) for g in m.groups())


@pytest.mark.parametrize("m, n, dtype, num_warps", [
    (64, 64, "fp16", 4), (32, 128, "fp32", 4), (16, 256, "fp16", 8), (128, 8, "fp32", 2), (64, 32, "i8", 4),
])
def test_coalesced_layout_matches_triton(m, n, dtype, num_warps):
    triton = pytest.importorskip("triton")
    import triton.language as tl

    @triton.jit
    def copy(X, Y, M: tl.constexpr, N: tl.constexpr):
        offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
        tl.store(Y + offs, tl.load(X + offs))

    ptr = {"fp16": "*fp16", "fp32": "*fp32", "i8": "*i8"}[dtype]
    got = _blocked(_ttgir(copy, {"X": ptr, "Y": ptr}, {"M": m, "N": n}, 90, num_warps))
    ours = coalesced_layout([m, n], [n, 1], dtype, num_warps=num_warps)
    assert (ours.size_per_thread, ours.threads_per_warp, ours.warps_per_cta, ours.order) == got


@pytest.mark.parametrize("cc, m, n, num_warps", [
    (80, 64, 64, 4), (80, 128, 32, 8), (80, 16, 128, 4), (80, 32, 32, 2), (90, 64, 64, 4), (90, 128, 128, 8),
])
def test_mma_layout_matches_triton(cc, m, n, num_warps):
    triton = pytest.importorskip("triton")
    import triton.language as tl

    @triton.jit
    def mm(A, B, C, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
        rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
        c = tl.dot(tl.load(A + rm[:, None] * K + rk[None, :]), tl.load(B + rk[:, None] * N + rn[None, :]))
        tl.store(C + rm[:, None] * N + rn[None, :], c)

    ttgir = _ttgir(mm, {"A": "*fp16", "B": "*fp16", "C": "*fp32"}, {"M": m, "N": n, "K": 32}, cc, num_warps)
    match = re.search(r"#ttg.nvidia_mma<\{versionMajor = (\d+), versionMinor = \d+, warpsPerCTA = \[([^\]]*)\], "
                      r"instrShape = \[([^\]]*)\]", ttgir)
    ours = mma_layout([m, n], "fp16", 3 if cc == 90 else 2, num_warps)
    assert ours.version[0] == int(match.group(1))
    assert ours.warps_per_cta == _ints(match.group(2))
    assert ours.instr_shape == _ints(match.group(3))


def test_default_blocked_and_order():
    assert memory_order([64, 1]) == (1, 0) and memory_order([1, 64]) == (0, 1)
    d = default_blocked_layout([64, 64], 4)
    assert d.size_per_thread == (1, 1) and d.threads_per_warp == (1, 32) and d.warps_per_cta == (2, 2)
    with pytest.raises(LayoutError, match="strides"):
        coalesced_layout([64, 64], [1], "fp16", num_warps=4)
    with pytest.raises(LayoutError, match="num_warps"):
        mma_layout([64, 64], "fp16", 3, 2)


def test_global_cost_prefers_coalesced_access():
    """Coalesced rows cost less than the transposed layout (every lane in another row, a sector each)."""
    from linear_layouts.engine.transfer import trans_forward

    good = coalesced_layout([64, 64], [64, 1], "fp16", num_warps=4).to_linear([64, 64])
    bad = trans_forward(good, [1, 0])
    ns = GLOBAL_SECTOR_NS
    # 4 warps x 4 v4 instructions, each 4 lines (0.75 ns wavefronts) and 16 sectors
    assert global_cost(good, [64, 1], "fp16") == pytest.approx(4 * 4 * (4 * 0.75 + 16 * ns))
    assert global_cost(good, [64, 1], "fp16", store=True) == global_cost(good, [64, 1], "fp16")
    # the transposed layout: 4x the requests; a load fetches each sector from L2 once (L1 hits), a store
    # sends every request's sectors
    assert global_cost(bad, [64, 1], "fp16") > 1.5 * global_cost(good, [64, 1], "fp16")
    assert global_cost(bad, [64, 1], "fp16", store=True) > 2 * global_cost(good, [64, 1], "fp16")


def test_global_cost_charges_half_written_sectors_above_a_conversion():
    """The fp16 wgmma accumulator of a 128x256 tile (8 warps) stored as is: every st.global.b32 of a
    warp covers 8 rows, 8 lines and 8 half-written sectors; coalesced 16-byte stores move the same tile
    in 1/4 of the instructions and half the sectors. The difference exceeds twice the conversion between
    the two (matmul_fp16's epilogue, which Triton keeps)."""
    from linear_layouts.engine.propagate import plan_cost

    mma = mma_layout([128, 256], "fp16", 3, 8).to_linear([128, 256])
    coalesced = coalesced_layout([128, 256], [4096, 1], "fp16", num_warps=8).to_linear([128, 256])
    direct = global_cost(mma, [4096, 1], "fp16", store=True)
    # 8 warps x 64 instructions x (2 wavefronts + 8 sectors)
    assert direct == pytest.approx(8 * 64 * (2 * 0.75 + 8 * GLOBAL_SECTOR_NS))
    saved = direct - global_cost(coalesced, [4096, 1], "fp16", store=True)
    assert saved > 2 * plan_cost(mma, coalesced, 16)


def test_global_cost_counts_stores_of_duplicated_warps_once():
    """Triton masks the warps that hold another warp's data in a store; a load issues in every warp (and
    fetches each sector once)."""
    from linear_layouts.layouts import SliceLayout

    row = SliceLayout(1, default_blocked_layout([16, 256], 4)).to_linear([16])  # warps along dim 1
    # 16 rows in registers: 4 v4 instructions of one sector each; every lane and warp holds them all
    assert global_cost(row, [1], "fp32", store=True) == pytest.approx(4 * (0.75 + GLOBAL_SECTOR_NS))
    assert global_cost(row, [1], "fp32") == pytest.approx(4 * 4 * 0.75 + 2 * GLOBAL_SECTOR_NS)
