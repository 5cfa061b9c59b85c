"""Codegen emits exactly what analysis counts: ``codegen.cost.step_counts`` of the emitted warp-shuffle
conversion equals ``analysis.op_counts.shuffle_counts`` of its plan, field by field, on seeded random
in-warp pairs, register <-> lane swaps (the emitter's butterfly form) and the GPU suite's cases; where one cannot emit a plan, the other says so too."""

from __future__ import annotations

import collections
import dataclasses

import numpy as np
import pytest

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.analysis.conversion import plan_conversion
from linear_layouts.analysis.cost_model import shuffle_time_ns
from linear_layouts.analysis.op_counts import OpCounts, shuffle_counts
from linear_layouts.analysis.shuffles import ShufflePlan, plan_shuffle, same_warp_data
from linear_layouts.analysis.steps import ConversionKind
from linear_layouts.analysis.warp_simulator import random_distributed_layout, random_within_warp_partner
from linear_layouts.codegen.cost import step_counts
from linear_layouts.codegen.shuffle import ShuffleConversion

WIDTHS = (8, 16, 32, 64)
BUTTERFLY = (0, 0, "butterfly")  # the key counting plans in butterfly form


def emitted(plan: ShufflePlan) -> OpCounts | None:
    """What the emitter counts for ``plan`` (None where it refuses the plan)."""
    try:
        return step_counts(ShuffleConversion(plan))
    except LayoutError:
        return None


def random_pairs(n: int, seed: int, lane_bits: int = 5):
    """``n`` seeded (src, dst) in-warp pairs, 2**(i % 4) warps (1 to 8), broadcast on either side."""
    rng = np.random.default_rng(seed)
    for i in range(n):
        shape = [int(x) for x in rng.integers(0, 4, size=int(rng.integers(1, 4)))]
        while sum(shape) < 5:
            shape[int(rng.integers(len(shape)))] += 1
        src = random_distributed_layout(rng, shape, lane_bits=lane_bits, warp_bits=i % 4,
                                        extra_register_zeros=int(rng.integers(0, 3)))
        yield src, random_within_warp_partner(rng, src, extra_register_zeros=int(rng.integers(0, 3)))


def swapped_pairs(n: int, seed: int):
    """``n`` seeded pairs whose destination swaps one register basis of the source with one lane basis
    (§5.4's register <-> lane exchange; at 32 and 64 bits often the emitter's butterfly form); sources
without a register basis are skipped."""
    rng = np.random.default_rng(seed)
    for i in range(n):
        shape = [int(x) for x in rng.integers(1, 4, size=2)]
        while sum(shape) < 6:
            shape[0] += 1
        src = random_distributed_layout(rng, shape, warp_bits=i % 4, extra_register_zeros=int(rng.integers(0, 2)))
        bases = src.bases
        registers = [j for j, v in enumerate(bases["register"]) if any(v)]
        if not registers:  # every tensor bit on lanes and warps: nothing to swap
            continue
        r = int(rng.choice(registers))
        lane = int(rng.integers(len(bases["lane"])))
        bases["register"][r], bases["lane"][lane] = bases["lane"][lane], bases["register"][r]
        yield src, LinearLayout(bases, src.out_dims)


def _compare(pairs, widths=WIDTHS) -> collections.Counter:
    seen: collections.Counter = collections.Counter()
    for src, dst in pairs:
        for bits in widths:
            plan = plan_shuffle(src, dst, bits)
            want, got = emitted(plan), shuffle_counts(plan)
            assert got == want, (bits, src, dst, want, got)
            seen[bits, plan.num_warps, "alu" if want.alu else "shfl only"] += 1
            seen[BUTTERFLY] += plan.butterfly_form is not None
    return seen


def test_random_in_warp_pairs_count_exactly():
    """2000 pairs x 4 widths x 1-8 warps: every field equal; the set exercises selects and byte permutes
    at every width and warp count (and pairs whose emitted code is shuffles alone)."""
    seen = _compare(random_pairs(2000, seed=20261126))
    assert sum(seen.values()) - seen[BUTTERFLY] == 8000
    for bits in WIDTHS:
        for warps in (1, 2, 4, 8):
            assert seen[bits, warps, "alu"] >= 40 and seen[bits, warps, "shfl only"] >= 10, (bits, warps, seen)


def test_register_lane_swaps_count_exactly():
    """600 register <-> lane swaps x 4 widths: the butterfly form (shfl.bfly and select trees) included."""
    seen = _compare(swapped_pairs(600, seed=109))
    assert seen[BUTTERFLY] >= 100, seen


def test_other_lane_counts_count_exactly():
    """Warps of 8 and 16 lanes (the plans and the emitter take any power of two)."""
    seen = _compare(list(random_pairs(100, seed=11, lane_bits=3)) + list(random_pairs(100, seed=12, lane_bits=4)))
    assert sum(n for (_, _, kind), n in seen.items() if kind == "alu") >= 200


def test_gpu_suite_cases_count_exactly():
    """Every in-warp pair of the GPU suite (benchmarks/harness/cases.py) at its own width and at all four."""
    from harness.cases import all_cases  # noqa: PLC0415
    cases = [c for c in all_cases() if same_warp_data(c.src, c.dst) and c.src != c.dst]
    assert len(cases) >= 40
    for case in cases:
        assert shuffle_counts(plan_shuffle(case.src, case.dst, case.bits)) == emitted(
            plan_shuffle(case.src, case.dst, case.bits)), case.name
    seen = _compare([(c.src, c.dst) for c in cases])
    assert seen[BUTTERFLY] >= 2  # random_109 (the suite's register <-> lane swap) at 32 and 64 bits


def _fig4() -> tuple[LinearLayout, LinearLayout]:
    return (LinearLayout({"register": [[1]], "lane": [[2], [4]]}, ["dim0"]),
            LinearLayout({"register": [[4]], "lane": [[1], [2]]}, ["dim0"]))


def test_worked_counts():
    """Fig. 4, worked by hand.  Lane bit 1 picks the register sent (f = (0, 1)), lane bit 0 the register
    received (g = (1, 0)).  fp32: two rounds of one shfl; each translation is one conditional swap of
    the two words (2 selects), 4 ALU in all; fp64: twice the words, 4 shfl and 8 selects.  16- and 8-bit:
    both registers share one word, so each translation is one prmt (an in-word move) and the two
    received elements are merged by one more: 3 ALU."""
    a, b = _fig4()
    expected = {32: OpCounts(shfl=2, alu=4), 64: OpCounts(shfl=4, alu=8), 16: OpCounts(shfl=2, alu=3),
                8: OpCounts(shfl=2, alu=3)}
    for bits, counts in expected.items():
        plan = plan_shuffle(a, b, bits)
        assert shuffle_counts(plan) == counts == emitted(plan), bits


def test_plans_the_emitter_refuses_are_not_counted():
    """A 128-bit element (no packing of 16-byte registers) and rounds whose registers are not a lane
    translation: both sides refuse, and the plan is priced infinite (never chosen)."""
    a, b = _fig4()
    wide = dataclasses.replace(plan_shuffle(a, b, 64), bitwidth=128, words_per_shuffle=4)
    assert emitted(wide) is None and shuffle_counts(wide) is None
    assert shuffle_time_ns(wide) == float("inf")
    plan = plan_shuffle(a, b, 32)
    r0 = plan.rounds[0]
    scrambled = tuple((r[0] ^ (lane == 1),) for lane, r in enumerate(r0.send_registers))
    broken = dataclasses.replace(plan, rounds=(dataclasses.replace(r0, send_registers=scrambled),) + plan.rounds[1:])
    assert emitted(broken) is None and shuffle_counts(broken) is None
    assert shuffle_time_ns(broken) == float("inf")


def test_the_planner_prices_shuffles_by_the_count():
    """``plan_conversion`` chooses a shuffle by the analysis count: its cost is what the count prices."""
    rng_pairs = list(random_pairs(40, seed=3))
    chose = 0
    for src, dst in rng_pairs:
        plan = plan_conversion(src, dst, 16)
        if plan.kind is ConversionKind.WARP_SHUFFLE:
            chose += 1
            assert plan.cost.total == shuffle_time_ns(plan_shuffle(src, dst, 16))
    assert chose >= 5


@pytest.mark.parametrize("bits", WIDTHS)
def test_count_is_independent_of_the_emitter(bits, monkeypatch):
    """Analysis counts without codegen: with the emitter's counter broken, the count is unchanged."""
    a, b = next(random_pairs(1, seed=bits))
    plan = plan_shuffle(a, b, bits)
    before = shuffle_counts(plan)
    import linear_layouts.codegen.cost as cost  # noqa: PLC0415

    monkeypatch.setattr(cost, "step_counts", lambda *_: pytest.fail("analysis called codegen"))
    assert shuffle_counts(plan) == before and shuffle_time_ns(plan) >= 0


def _loop_body(source: str) -> str:
    """The round-trip loop of an ``emit_conversion_kernel`` kernel (the backward and forward step)."""
    start = source.index("for (int it = 0;")
    depth, i = 0, source.index("{", start)
    for end in range(i, len(source)):
        depth += {"{": 1, "}": -1}.get(source[end], 0)
        if depth == 0:
            return source[i:end]
    raise AssertionError("unbalanced loop")


def test_step_counts_with_the_kernels_packings_count_its_seams():
    """A round trip whose two shuffle steps prefer different packings (16-bit, 1 warp: the suite's
    random_068): counted between the packings the kernel gives them, the steps' byte permutes and selects
    are those of the emitted loop (their own preferred packings miss the repacks at the seams)."""
    from linear_layouts.codegen.kernel import choose_packings, emit_conversion_kernel

    src = LinearLayout({"register": [[0, 4], [0, 8], [0, 16], [8, 0]], "lane": [[0, 1], [0, 2], [1, 0], [2, 0], [4, 0]],
                        "warp": []}, ["dim0", "dim1"])
    dst = LinearLayout({"register": [[0, 1], [8, 0], [0, 8], [0, 16]], "lane": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]],
                        "warp": []}, ["dim0", "dim1"])
    fwd, bwd = ShuffleConversion(plan_shuffle(src, dst, 16)), ShuffleConversion(plan_shuffle(dst, src, 16))
    pa, pb = choose_packings(src, dst, 2, fwd, bwd)
    body = _loop_body(emit_conversion_kernel("k", src, dst, 2, fwd, bwd).source)
    emitted_alu = body.count("__byte_perm(") + body.count(") ? ")
    seams = step_counts(fwd, packings=(pa, pb)).alu + step_counts(bwd, packings=(pb, pa)).alu
    own = step_counts(fwd).alu + step_counts(bwd).alu
    assert seams == emitted_alu == 48
    assert own == 32  # each step between its own preferred packings: no seam
    assert step_counts(fwd, packings=(pa, pb)).shfl == body.count("__shfl_sync(") // 2
