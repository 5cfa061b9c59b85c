"""The device cost model: tables are the package's data files and interpolate in log2(warps), the latency
floors hold, costs are monotone in the work, copied load wavefronts never cost more than distinct ones,
shuffle plans are priced by what codegen emits for them, and the fitted run's pairs rank as recorded."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.analysis import conversion as cv
from linear_layouts.analysis.cost_model import (
    DEVICE_DIR,
    DEVICES,
    OpCounts,
    conversion_time_ns,
    copied_load_wavefronts,
    device_costs,
    load_device,
    warp_copies_log2,
    shared_time_ns,
    shuffle_time_ns,
)
from linear_layouts.layouts.blocked import BlockedLayout


def _strip(layout: LinearLayout) -> LinearLayout:
    return LinearLayout({d: v for d, v in layout.bases.items() if d != "block"}, dict(layout.out_dims),
                        require_surjective=False)


def test_tables_and_formula():
    h100 = device_costs("H100")
    assert device_costs() is DEVICES["H100"] and device_costs(h100) is h100
    assert h100.at({1: 1.0, 4: 3.0}, 2) == pytest.approx(2.0)  # halfway in log2
    assert h100.at({1: 1.0, 4: 3.0}, 16) == 3.0  # clamped
    issue = 256 * h100.at(h100.wavefront, 4) + h100.at(h100.bar_cta, 4)
    assert conversion_time_ns(OpCounts(wavefronts=256, barriers_cta=1), 4) == pytest.approx(issue)
    copied = 192 * h100.at(h100.copied_wavefront, 4) + 64 * h100.at(h100.wavefront, 4) + h100.at(h100.bar_cta, 4)
    assert conversion_time_ns(OpCounts(wavefronts=256, barriers_cta=1), 4, copied_wavefronts=192) == pytest.approx(copied)
    # a tiny conversion is bound by its latency, shared by the CTAs the SM overlaps
    floor = (h100.latency_shared + h100.latency_barrier) / h100.concurrent_ctas
    assert conversion_time_ns(OpCounts(wavefronts=2, barriers_cta=1), 4) == pytest.approx(floor)
    # a shuffle step's floor grows with the instructions each thread issues in sequence
    floor = (h100.latency_shuffle + 12 * h100.latency_per_instruction) / h100.concurrent_ctas
    assert conversion_time_ns(OpCounts(shfl=4, alu=8), 1) == pytest.approx(floor)
    assert conversion_time_ns(OpCounts(alu=4), 1) == pytest.approx(4 * h100.at(h100.alu, 1))  # registers: no floor
    assert shared_time_ns(64, True, 2) < shared_time_ns(64, False, 2)
    with pytest.raises(LayoutError, match="device: no cost table .*known"):
        device_costs("B200")
    with pytest.raises(LayoutError, match="copied_wavefronts"):
        conversion_time_ns(OpCounts(wavefronts=4), 1, copied_wavefronts=5)


def test_tables_are_the_package_data():
    """Every field of the H100 table is the value in target/devices/H100.json, tables keyed by warps;
    the fitted fields name their data, which is in the repository."""
    raw = json.loads((DEVICE_DIR / "H100.json").read_text())
    h100 = device_costs("H100")
    for name, value in raw.items():
        got = getattr(h100, name)
        assert got == ({int(w): t for w, t in value.items()} if isinstance(value, dict) else value), name
    assert load_device(DEVICE_DIR / "H100.json") == h100
    assert (Path(__file__).resolve().parents[2] / h100.fit).exists()
    assert h100.copied_wavefront[1] < h100.wavefront[1]


def test_unknown_device_fields_are_refused(tmp_path):
    bad = tmp_path / "X.json"
    bad.write_text(json.dumps({"name": "X", "measured": "-", "wavefronts": {"1": 1.0}}))
    with pytest.raises(LayoutError, match="unknown fields"):
        load_device(bad)


def test_copied_load_wavefronts():
    """``2^z`` warps holding the same data (``z`` zero warp bases) load the same addresses: all but
    ``1 / 2^z`` of the load wavefronts are copies."""
    lanes = [[1 << i] for i in range(5)]
    all_same = LinearLayout({"register": [], "lane": lanes, "warp": [[0], [0], [0]]}, ["dim0"])
    assert copied_load_wavefronts(64, all_same) == 56
    half = LinearLayout({"register": [], "lane": lanes, "warp": [[32], [0]]}, ["dim0"])
    assert copied_load_wavefronts(16, half) == 8
    distinct = LinearLayout({"register": [], "lane": lanes, "warp": [[32]]}, ["dim0"])
    assert copied_load_wavefronts(16, distinct) == 0
    assert copied_load_wavefronts(64, 3) == 56 and warp_copies_log2(half) == 1


COUNTS = st.builds(OpCounts, st.integers(0, 512), st.integers(0, 64), st.integers(0, 256), st.integers(0, 2),
                   st.integers(0, 2))


@settings(max_examples=300, deadline=None)
@given(COUNTS, st.sampled_from([1, 2, 3, 4, 8, 16]), st.sampled_from(["wavefronts", "shfl", "alu", "barriers_cta",
                                                                     "barriers_warp"]), st.integers(1, 64))
def test_more_work_never_costs_less(counts, warps, what, more):
    """Monotone in every count: one more wavefront, shfl, select or barrier never makes a step cheaper
    (issue and latency both grow or stay), whatever the warps."""
    if counts.wavefronts and counts.shfl:
        counts = replace(counts, shfl=0)  # a step is a shared-memory step or a shuffle step
    bigger = replace(counts, **{what: getattr(counts, what) + more})
    if bigger.wavefronts and bigger.shfl:
        return
    assert conversion_time_ns(bigger, warps) >= conversion_time_ns(counts, warps) - 1e-9


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 512), st.data(), st.sampled_from([1, 2, 4, 8]))
def test_copies_never_cost_more(wavefronts, data, warps):
    """A wavefront that re-reads what another warp loads costs at most a distinct one; time is monotone
    in the copies (more copies of the same total: never slower) and in the warps' table lookups."""
    copied = data.draw(st.integers(0, wavefronts))
    counts = OpCounts(wavefronts=wavefronts, barriers_cta=1)
    t = conversion_time_ns(counts, warps, copied_wavefronts=copied)
    assert t <= conversion_time_ns(counts, warps, copied_wavefronts=0) + 1e-9
    assert t >= conversion_time_ns(counts, warps, copied_wavefronts=wavefronts) - 1e-9


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
