"""The device cost model: tables interpolate in log2(warps), the latency floor holds, shuffle plans are
priced by what codegen emits for them, and the measured H100 pairs rank as on the device."""

from __future__ import annotations

import pytest

from linear_layouts import LinearLayout
from linear_layouts.analysis import conversion as cv
from linear_layouts.analysis.cost_model import (
    DEVICES,
    OpCounts,
    conversion_time_ns,
    device_costs,
    shared_time_ns,
    shuffle_time_ns,
)
from linear_layouts.catalog.blocked import BlockedLayout


def _strip(layout: LinearLayout) -> LinearLayout:
    return LinearLayout({d: v for d, v in layout.bases.items() if d != "block"}, dict(layout.out_dims),
                        require_surjective=False)


def test_tables_and_formula():
    h100 = device_costs("H100")
    assert device_costs() is DEVICES["H100"]
    assert h100.at({1: 1.0, 4: 3.0}, 2) == pytest.approx(2.0)  # halfway in log2
    assert h100.at({1: 1.0, 4: 3.0}, 16) == 3.0  # clamped
    issue = 256 * h100.at(h100.wavefront, 4) + h100.at(h100.bar_cta, 4)
    assert conversion_time_ns(OpCounts(wavefronts=256, barriers_cta=1), 4) == pytest.approx(issue)
    # a tiny conversion is bound by its latency, shared by the CTAs the SM overlaps
    floor = (h100.latency_step + h100.latency_barrier) / h100.concurrent_ctas
    assert conversion_time_ns(OpCounts(wavefronts=2, barriers_cta=1), 4) == pytest.approx(floor)
    assert conversion_time_ns(OpCounts(alu=4), 1) == pytest.approx(4 * h100.at(h100.alu, 1))  # registers: no floor
    assert shared_time_ns(64, True, 2) < shared_time_ns(64, False, 2)
    with pytest.raises(KeyError, match="known"):
        device_costs("B200")


def test_shuffle_time_counts_the_emitted_code():
    """A 16x16 fp32 transpose-like exchange in one warp: its shuffle plan costs its shfl plus the selects
    codegen emits for the lane-dependent register choice."""
    from linear_layouts.codegen.cost import step_counts
    from linear_layouts.codegen.shuffle import ShuffleConversion

    src = _strip(BlockedLayout([1, 1], [4, 8], [1, 1], [1, 0]).to_linear([16, 16]))
    dst = _strip(BlockedLayout([1, 2], [4, 8], [1, 1], [0, 1]).to_linear([16, 16]))
    plan = cv.plan_shuffle(src, dst, 32)
    counts = step_counts(ShuffleConversion(plan))
    assert counts.shfl == plan.shuffles_per_warp and counts.wavefronts == 0
    assert shuffle_time_ns(plan) == pytest.approx(conversion_time_ns(counts, 1))
    chosen = cv.plan_conversion(src, dst, 32)
    assert chosen.cost.total == min([chosen.cost.total] + [c.total for _, c in chosen.alternatives])
