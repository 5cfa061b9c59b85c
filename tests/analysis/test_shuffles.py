"""Warp-shuffle plans (§5.4) executed by the warp simulator on random distributed layout pairs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.analysis.shuffles import (
    butterfly_form,
    check_permutation_layout,
    lane_translation,
    plan_shuffle,
    same_warp_data,
)
from linear_layouts.analysis.warp_simulator import (
    distribute,
    execute_shuffle_plan,
    pack,
    pack_words,
    random_distributed_layout,
    random_within_warp_partner,
    shfl_sync_idx,
    unpack,
    unpack_words,
)


def _random_values(rng, shape, bits):
    high = 1 << bits if bits < 64 else 1 << 62
    return rng.integers(0, high, size=shape, dtype=np.int64)


def _run(plan, A, B, rng):
    tensor = _random_values(rng, tuple(A.out_dims.values()), plan.bitwidth)
    got = execute_shuffle_plan(plan, distribute(A, tensor))
    return got, distribute(B, tensor)


def test_figure4_example():
    # 4 lanes, tensor of 8 elements: A = reg->1, lanes->2,4; B = reg->4, lanes->1,2 (V = {}, I = {2}).
    A = LinearLayout({"register": [[1]], "lane": [[2], [4]]}, ["dim0"])
    B = LinearLayout({"register": [[4]], "lane": [[1], [2]]}, ["dim0"])
    plan = plan_shuffle(A, B, 32)
    assert (plan.V, plan.I, plan.E, plan.F, plan.G, plan.R) == ((), (2,), (4,), (1,), (5,), (4,))
    assert plan.num_rounds == 2 and plan.shuffles_per_warp == 2
    # round 0 moves span(I ∪ G) = {0, 2, 5, 7}: exactly one element per thread of A and of B
    moved = set()
    for lane in range(4):
        src_lane = plan.rounds[0].source_lane[lane]
        (src_reg,) = plan.rounds[0].send_registers[src_lane]
        moved.add(A.apply({"register": src_reg, "lane": src_lane})["dim0"])
    assert moved == {0, 2, 5, 7}
    got, want = _run(plan, A, B, np.random.default_rng(0))
    assert np.array_equal(got, want)


def test_vectorized_payload_packs_common_registers():
    # 16-bit elements, both layouts keep register bit 0 -> dim0 bit 0: V = {1}, two elements per shuffle.
    A = LinearLayout({"register": [[1], [2]], "lane": [[4], [8], [16], [32], [64]]}, ["dim0"])
    B = LinearLayout({"register": [[1], [64]], "lane": [[4], [8], [16], [32], [2]]}, ["dim0"])
    plan = plan_shuffle(A, B, "fp16")
    assert plan.V == (1,) and plan.elements_per_shuffle == 2 and plan.num_rounds == 2
    assert plan_shuffle(A, B, "fp32").V == ()  # 32-bit: one element per word, so twice the rounds
    assert plan_shuffle(A, B, "fp32").num_rounds == 4
    assert plan_shuffle(A, B, 64).words_per_shuffle == 2
    for dtype in (8, 16, 32, 64):
        got, want = _run(plan_shuffle(A, B, dtype), A, B, np.random.default_rng(dtype))
        assert np.array_equal(got, want)


def _random_pair(rng):
    """A random distributed layout of 6 to 9 tensor bits (broadcast lanes / warps, maybe a zero register)
    and a partner keeping its data in the warp."""
    shape = [int(x) for x in rng.integers(0, 4, size=int(rng.integers(1, 4)))]
    while sum(shape) < 6:
        shape[int(rng.integers(len(shape)))] += 1
    A = random_distributed_layout(rng, shape, warp_bits=int(rng.integers(0, 3)),
                                  extra_register_zeros=int(rng.integers(0, 2)))
    return A, random_within_warp_partner(rng, A, extra_register_zeros=int(rng.integers(0, 2)))


def test_random_pairs_simulate_exactly():
    """>= 500 random pairs (broadcast on either side, 8/16/32/64-bit): the simulator ends with exactly
    the destination distribution, and the round count is the lower bound 2**(|B_Reg| - |V|)."""
    rng = np.random.default_rng(20261122)
    kinds = {"src_bcast": 0, "dst_bcast": 0, "vectorized": 0}
    for _ in range(520):
        A, B = _random_pair(rng)
        bits = int(rng.choice([8, 16, 32, 64]))
        plan = plan_shuffle(A, B, bits)
        got, want = _run(plan, A, B, rng)
        assert np.array_equal(got, want), (A, B, bits)
        b_regs = sum(1 for b in B.flat_bases("register") if b)
        assert plan.num_rounds == 2 ** (b_regs - len(plan.V))
        assert plan.elements_per_shuffle * bits <= max(32, bits)
        kinds["src_bcast"] += any(b == 0 for b in A.flat_bases("lane"))
        kinds["dst_bcast"] += any(b == 0 for b in B.flat_bases("lane") + B.flat_bases("register"))
        kinds["vectorized"] += len(plan.V) > 0
    assert min(kinds.values()) >= 50, kinds  # the random cases do exercise every situation


def test_simulator_catches_a_wrong_plan():
    A = LinearLayout({"register": [[1]], "lane": [[2], [4]]}, ["dim0"])
    B = LinearLayout({"register": [[4]], "lane": [[1], [2]]}, ["dim0"])
    plan = plan_shuffle(A, B, 32)
    r0 = plan.rounds[0]
    broken = type(r0)(r0.send_registers, tuple(reversed(r0.source_lane)), r0.receive_registers)
    bad = dataclasses.replace(plan, rounds=(broken,) + plan.rounds[1:])
    got, want = _run(bad, A, B, np.random.default_rng(1))
    assert not np.array_equal(got, want)


def test_pack_and_shuffle_primitives():
    assert unpack(pack([1, 2, 3, 4], 8), 8, 4) == [1, 2, 3, 4]
    assert unpack(pack([2**63 - 5], 64), 64, 1) == [2**63 - 5]
    vals = np.array([[1, 2], [250, 3]])
    assert pack_words(vals, 16)[:, 0].tolist() == [pack([1, 2], 16)[0], pack([250, 3], 16)[0]]
    assert unpack_words(pack_words(vals, 8), 8, 2).tolist() == vals.tolist()
    assert unpack_words(pack_words(vals << 40, 64), 64, 2).tolist() == (vals << 40).tolist()
    with pytest.raises(LayoutError, match=r"at most 2 elements of 16 bits fit in one 32-bit word"):
        pack([1, 2, 3], 16)  # three 16-bit elements do not fit one word
    with pytest.raises(LayoutError, match=r"shfl_sync_idx: every payload must fit in 32 bits"):
        shfl_sync_idx(np.array([1 << 32]), np.array([0]))
    assert shfl_sync_idx(np.array([5, 6]), np.array([1, 1])).tolist() == [6, 6]


def test_bad_input_names_the_rule():
    A = LinearLayout({"register": [[1]], "lane": [[2]], "warp": [[4]]}, ["dim0"])
    B = LinearLayout({"register": [[4]], "lane": [[2]], "warp": [[1]]}, ["dim0"])
    assert not same_warp_data(A, B)
    with pytest.raises(LayoutError, match="warp"):
        plan_shuffle(A, B, 32)
    swizzled = LinearLayout({"register": [[3]], "lane": [[2]], "warp": [[4]]}, ["dim0"])
    with pytest.raises(LayoutError, match="power of two"):
        check_permutation_layout(swizzled, "src")
    with pytest.raises(LayoutError, match="dtype"):
        plan_shuffle(A, A, "fp7")


def test_butterfly_counts_equal_the_emitter_and_tritons_transfer():
    """random_109's register bit 2 <-> lane bit 1 swap (fp32, [32, 64], one warp): the structural count
    in butterfly form is 32 shfl + 96 selects per conversion (Triton's SASS before its loop: SEL 96,
    SHFL.BFLY 32), what the emitter emits (codegen.cost.step_counts)."""
    from linear_layouts.analysis.op_counts import OpCounts, shuffle_counts
    from linear_layouts.layouts.blocked import BlockedLayout
    from linear_layouts.codegen.cost import step_counts
    from linear_layouts.codegen.shuffle import ShuffleConversion

    def blocked(spt, tpw):
        lay = BlockedLayout(spt, tpw, [1, 1], [1, 0]).to_linear([32, 64])
        return LinearLayout({d: v for d, v in lay.bases.items() if d != "block"}, dict(lay.out_dims),
                            require_surjective=False)

    src, dst = blocked([1, 4], [16, 2]), blocked([2, 4], [8, 4])
    for bits, words in ((32, 1), (64, 2)):
        plan = plan_shuffle(src, dst, bits)
        assert butterfly_form(plan) is not None
        assert shuffle_counts(plan) == OpCounts(shfl=32 * words, alu=96 * words)
        counts = step_counts(ShuffleConversion(plan))
        assert (counts.shfl, counts.alu) == (32 * words, 96 * words)
    assert butterfly_form(plan_shuffle(src, dst, 16)) is None


def test_derived_values_are_computed_once_and_leave_the_plan_unchanged():
    """``send_translation``, ``receive_translation``, ``zero_register_mask`` and ``butterfly_form`` are the
    free functions' answers, cached on the frozen plan (the same object on a second read); a plan with
    cached values still equals, hashes and ``replace``-copies like a fresh one, and stays frozen."""
    rng = np.random.default_rng(20261126)
    seen_form = seen_zero = 0
    for _ in range(60):
        A, B = _random_pair(rng)
        plan, fresh = plan_shuffle(A, B, 32), plan_shuffle(A, B, 32)
        n_lanes = A.in_dim_size("lane")
        assert plan.send_translation == lane_translation([r.send_registers for r in plan.rounds], n_lanes)
        assert plan.receive_translation == lane_translation([r.receive_registers for r in plan.rounds], n_lanes)
        zero = sum(1 << i for i, b in enumerate(B.flat_bases("register")) if b == 0)
        assert plan.zero_register_mask == zero
        assert plan.butterfly_form == butterfly_form(fresh)
        assert plan.butterfly_form is plan.butterfly_form and plan.send_translation is plan.send_translation
        assert plan == fresh and hash(plan) == hash(fresh) and repr(plan) == repr(fresh)
        assert dataclasses.replace(plan) == fresh
        seen_form += plan.butterfly_form is not None
        seen_zero += zero != 0
    assert seen_form and seen_zero, (seen_form, seen_zero)
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field"):
        plan.bitwidth = 16  # type: ignore[misc]
