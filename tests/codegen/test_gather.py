"""Warp-local gather emitter: one shfl.sync per plan round (per 32-bit word), compiles for sm_90; the
shared-memory gather stores each source element once."""

from __future__ import annotations

import pytest

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.analysis.gather import plan_gather
from linear_layouts.catalog.blocked import BlockedLayout
from linear_layouts.codegen.gather import emit_gather_kernel
from linear_layouts.codegen.ptx import compile_ptx, count_ptx, find_nvcc, split_ptx_entries


def _layout(shape, spt, tpw, wpc):
    full = BlockedLayout(spt, tpw, wpc, [0, 1]).to_linear(shape)
    return LinearLayout({d: v for d, v in full.bases.items() if d != "block"}, dict(full.out_dims))


CASES = [([32, 64], [1, 1], [32, 1], [1, 4], 16), ([64, 32], [2, 1], [16, 2], [1, 4], 32),
         ([16, 128], [4, 1], [4, 8], [1, 4], 64)]


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
