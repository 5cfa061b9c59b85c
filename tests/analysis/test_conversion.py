"""Conversion planning: kinds checked against a brute-force data-ownership test, every plan simulated."""

from __future__ import annotations

import numpy as np
import pytest

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.analysis import conversion as cv
from linear_layouts.analysis import cost_model
from linear_layouts.analysis.steps import BarrierScope, ConversionPlan, WarpShuffle
from linear_layouts.core.element_type import element_type
from linear_layouts.analysis.op_counts import OpCounts, shuffle_counts
from linear_layouts.analysis.warp_simulator import (
    distribute,
    execute_shuffle_plan,
    random_distributed_layout,
    random_within_warp_partner,
)


def _owners(layout: LinearLayout):
    """warp -> lane -> set of flattened elements (block 0)."""
    n_w = layout.in_dim_size("warp") if layout.has_in_dim("warp") else 1
    out = {}
    for w in range(n_w):
        for t in range(layout.in_dim_size("lane")):
            out[(w, t)] = {
                layout.apply_flat(r | (t << layout.in_dim_size_log2("register"))
                                  | (w << (layout.in_dim_size_log2("register") + layout.in_dim_size_log2("lane"))))
                for r in range(layout.in_dim_size("register"))
            }
    return out


def _simulate_register_map(plan, tensor):
    src = distribute(plan.src, tensor)
    return src[:, :, list(plan.register_map)]


def _offsets(shared: LinearLayout, layout: LinearLayout) -> np.ndarray:
    """offsets[warp, lane, register] = S^-1(L(register, lane, warp))."""
    n_w = layout.in_dim_size("warp") if layout.has_in_dim("warp") else 1
    w, t, r = np.meshgrid(np.arange(n_w), np.arange(layout.in_dim_size("lane")),
                          np.arange(layout.in_dim_size("register")), indexing="ij")
    ins = {"register": r, "lane": t}
    if layout.has_in_dim("warp"):
        ins["warp"] = w
    return shared.invert().apply_array(layout.apply_array(ins))["offset"]


def _simulate_shared(plan, tensor):
    """Store every src register at S^-1(element), then load every dst register from S^-1(element)."""
    S = plan.shared_layout
    assert S.is_invertible()
    mem = np.full(S.in_dim_size("offset"), -1, dtype=np.int64)
    mem[_offsets(S, plan.src)] = distribute(plan.src, tensor)
    return mem[_offsets(S, plan.dst)]


def test_no_op_from_different_descriptors():
    from linear_layouts.layouts.blocked import BlockedLayout
    # dim1 has size 1: the order of the dims cannot matter, the LinearLayouts are equal
    a = BlockedLayout([1, 1], [32, 1], [4, 1], [1, 0]).to_linear([128, 1])
    b = BlockedLayout([1, 1], [32, 1], [4, 1], [0, 1]).to_linear([128, 1])
    assert a == b
    plan = cv.plan_conversion(a, b, "fp16")
    assert plan.kind == cv.NO_OP and plan.instructions == 0 and plan.wavefronts == 0


def test_register_permutation():
    rng = np.random.default_rng(2)
    for _ in range(100):
        A = random_distributed_layout(rng, [3, 4], extra_register_zeros=int(rng.integers(0, 2)))
        n = A.in_dim_size_log2("register")
        order = [int(x) for x in rng.permutation(n)]
        bases = A.bases
        bases["register"] = [bases["register"][i] for i in order]
        B = LinearLayout(bases, A.out_dims)
        plan = cv.plan_conversion(A, B, 32)
        assert plan.kind in (cv.NO_OP, cv.REGISTER_PERMUTATION)
        assert (plan.kind == cv.NO_OP) == (A == B)
        tensor = rng.integers(0, 1 << 30, size=tuple(A.out_dims.values()))
        assert np.array_equal(_simulate_register_map(plan, tensor), distribute(B, tensor))


def test_kind_matches_data_ownership():
    """conversion_dims against brute force on random pairs: register-only iff every thread already
    owns its destination elements; no warp / block iff every warp does."""
    rng = np.random.default_rng(9)
    for i in range(300):
        A = random_distributed_layout(rng, [2, 3], lane_bits=3, warp_bits=2)
        B = random_within_warp_partner(rng, A) if i % 2 else random_distributed_layout(rng, [2, 3], lane_bits=3)
        dims = cv.conversion_dims(A, B)
        own_a, own_b = _owners(A), _owners(B)
        thread_ok = all(own_b[k] <= own_a[k] for k in own_b)
        warp_a = {w: set().union(*(s for (ww, _), s in own_a.items() if ww == w)) for w, _ in own_a}
        warp_b = {w: set().union(*(s for (ww, _), s in own_b.items() if ww == w)) for w, _ in own_b}
        warp_ok = all(warp_b[w] <= warp_a[w] for w in warp_b)
        if "lane" not in dims and "warp" not in dims:
            assert thread_ok, (A, B, dims)
        if "warp" not in dims:
            assert warp_ok, (A, B, dims)
        if "lane" in dims or "warp" in dims:
            # Triton's choice reads duplicated data from the first copy, so a movable case may be
            # classified one level up only when the source duplicates data
            assert not thread_ok or any(A.free_variable_masks().values())


def test_bad_input():
    A = LinearLayout({"register": [[1]], "lane": [[2]]}, ["dim0"])
    B = LinearLayout({"register": [[1, 0]], "lane": [[0, 1]]}, ["dim0", "dim1"])
    with pytest.raises(LayoutError, match="out dims"):
        cv.plan_conversion(A, B, 32)
    with pytest.raises(LayoutError, match="dtype"):
        cv.plan_conversion(A, A, "complex")


# ---------------------------------------------------------------------------------------------
# shared-memory plans (need smem's swizzle module)


def _seed_pair():
    """Seed 003/004: 16x32 fp32, one warp. Store: lane -> column n, register -> row m.
    Load: lanes 0-15 -> m, lane 16 -> n0, registers -> column pairs n1..n4."""
    store = LinearLayout(
        {"register": [[1, 0], [2, 0], [4, 0], [8, 0]],
         "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]], "warp": []},
        [("dim0", 16), ("dim1", 32)],
    )
    load = LinearLayout(
        {"register": [[0, 2], [0, 4], [0, 8], [0, 16]],
         "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]], "warp": []},
        [("dim0", 16), ("dim1", 32)],
    )
    return store, load


def test_seed_transpose_plan():
    store, load = _seed_pair()
    shared = cv.plan_shared_memory(store, load, "fp32", baselines=True)
    assert (shared.store.wavefronts, shared.load.wavefronts) == (16, 16)
    baselines = {b.name: (b.store_wavefronts, b.load_wavefronts) for b in shared.baselines}
    assert baselines["unswizzled"] == (16, 256)  # the seeds' table, first row
    assert baselines["padded"] == (16, 32)
    for m in range(16):
        for n in range(32):
            assert shared.shared_layout.invert().apply({"dim0": m, "dim1": n})["offset"] == 32 * m + (n ^ (2 * m))
    plan = cv.plan_conversion(store, load, "fp32")
    assert plan.baselines == ()  # simulated only when asked for
    # within one warp the shuffle plan is 16 rounds, but codegen also permutes 16 registers per moving
    # lane bit on each side (4 + 4 bits: 128 selects); measured on H100 (2026-11-23) it ran 36.7 us
    # against 18.0 us for shared memory (16 + 16 wavefronts and a warp barrier): shared memory is chosen
    assert plan.kind == cv.SHARED_MEMORY and plan.wavefronts == 32
    h100 = cost_model.device_costs("H100")
    assert plan.cost.total == pytest.approx(32 * h100.at(h100.wavefront, 1))
    assert (plan.cost.wavefronts, plan.cost.warps) == (32, 1) and plan.barrier.scope is BarrierScope.WARP
    alt = dict(plan.alternatives)[cv.WARP_SHUFFLE]
    # 1 warp: the thread's 144 dependent instructions (its latency floor) outlast their issue slots
    issue = 16 * h100.at(h100.shfl, 1) + 128 * h100.at(h100.alu, 1)
    floor = (h100.latency_shuffle + 144 * h100.latency_per_instruction) / h100.concurrent_ctas
    assert floor > issue and alt.total == pytest.approx(floor)
    assert alt.total > plan.cost.total and alt.shuffles == 16
    shuffle = cv.plan_shuffle(store, load, "fp32")
    assert shuffle.num_rounds == 16
    assert shuffle_counts(shuffle) == OpCounts(shfl=16, alu=128)
    plan = ConversionPlan(cv.WARP_SHUFFLE, store, load, element_type(32), (WarpShuffle(shuffle),), alt)
    rng = np.random.default_rng(0)
    tensor = rng.integers(0, 1 << 32, size=(16, 32))
    assert np.array_equal(execute_shuffle_plan(plan.shuffle, distribute(store, tensor)), distribute(load, tensor))


def test_random_conversions_are_correct_and_cheapest():
    """500 random pairs (half within-warp partners): every plan, simulated, delivers exactly the
    destination distribution, and the chosen mechanism is never costlier than an alternative."""
    rng = np.random.default_rng(4)
    seen = set()
    for i in range(500):
        A = random_distributed_layout(rng, [3, 4], warp_bits=2)
        B = random_within_warp_partner(rng, A) if i % 2 else random_distributed_layout(rng, [3, 4], warp_bits=2)
        bits = int(rng.choice([8, 16, 32]))
        plan = cv.plan_conversion(A, B, bits, baselines=i < 20)
        seen.add(plan.kind)
        if plan.shared_layout is not None or cv.SHARED_MEMORY in dict(plan.alternatives):
            assert (len(plan.baselines) >= 1) == (i < 20)  # simulated only when asked for
        else:
            assert plan.baselines == ()
        tensor = rng.integers(0, 1 << bits, size=tuple(A.out_dims.values()))
        want = distribute(B, tensor)
        if plan.kind == cv.WARP_SHUFFLE:
            got = execute_shuffle_plan(plan.shuffle, distribute(A, tensor))
            assert all(plan.cost.total < c.total for _, c in plan.alternatives)
        elif plan.kind == cv.SHARED_MEMORY:
            got = _simulate_shared(plan, tensor)
            assert all(plan.cost.total <= c.total for _, c in plan.alternatives)
            assert plan.wavefronts == plan.store.wavefronts + plan.load.wavefronts
        else:
            got = _simulate_register_map(plan, tensor)
        assert np.array_equal(got, want), (A, B, plan.kind)
    assert {cv.WARP_SHUFFLE, cv.SHARED_MEMORY} <= seen


# ---------------------------------------------------------------------------------------------
# Triton 3.9 oracle: Gluon's is_convert_layout_trivial (minimalCvtLayout has only register in dims)


class _TritonTrivial:
    """Builds Gluon IR values so that ``is_convert_layout_trivial`` can be asked about two layouts."""

    def __init__(self):
        from triton._C.libtriton import gluon_ir, ir

        self.ctx = ir.context()
        ir.load_dialects(self.ctx)
        self.b = gluon_ir.GluonOpBuilder(self.ctx)
        self.mod = self.b.create_module()
        fn = self.b.get_or_insert_function(self.mod, "k", self.b.get_function_ty([], []), "public", False)
        self.mod.push_back(fn)
        self.b.set_insertion_point_to_start(fn.add_entry_block())
        self.i32 = self.b.get_int32_ty()

    def ty(self, layout: LinearLayout):
        shape = list(layout.out_dims.values())
        bases = layout.bases
        attr = self.b.get_distributed_linear_layout(
            bases["register"], bases["lane"], bases.get("warp", []), bases.get("block", []), shape)
        return self.b.get_distributed_ty(self.i32, shape, attr)

    def trivial(self, src: LinearLayout, dst: LinearLayout) -> bool:
        value = self.b.create_splat(self.ty(src), self.b.get_int32(0))
        return self.b.is_convert_layout_trivial(self.ty(dst), value)


def test_trivial_conversions_match_triton():
    """300 random pairs (half of them within-warp partners): no-op / register permutation exactly
    when Triton 3.9's is_convert_layout_trivial says the conversion moves no data."""
    pytest.importorskip("triton")
    oracle = _TritonTrivial()
    rng = np.random.default_rng(39)
    trivial_seen = 0
    for i in range(300):
        A = random_distributed_layout(rng, [int(rng.integers(2, 4)), int(rng.integers(2, 5))], warp_bits=2)
        if i % 3 == 0:  # registers permuted: often trivial
            b = A.bases
            b["register"] = [b["register"][j] for j in rng.permutation(len(b["register"]))]
            B = LinearLayout(b, A.out_dims)
        elif i % 3 == 1:
            B = random_within_warp_partner(rng, A)
        else:
            B = random_distributed_layout(rng, [A.out_dim_size_log2("dim0"), A.out_dim_size_log2("dim1")], warp_bits=2)
        ours = cv.conversion_dims(A, B) in ((), ("register",))
        assert ours == oracle.trivial(A, B), (A, B)
        trivial_seen += ours
    assert 50 < trivial_seen < 250


def test_cross_cta_plan_moves_data_between_blocks():
    # two CTAs: src splits dim0 across blocks, dst splits dim1 across blocks
    A = LinearLayout({"register": [[0, 1], [0, 2], [0, 16]], "lane": [[0, 4], [0, 8], [1, 0], [2, 0], [4, 0]],
                      "warp": [[8, 0]], "block": [[16, 0]]}, [("dim0", 32), ("dim1", 32)])
    B = LinearLayout({"register": [[1, 0], [2, 0], [0, 8]], "lane": [[4, 0], [8, 0], [0, 1], [0, 2], [0, 4]],
                      "warp": [[16, 0]], "block": [[0, 16]]}, [("dim0", 32), ("dim1", 32)])
    plan = cv.plan_conversion(A, B, "fp32")
    assert plan.kind == cv.CROSS_CTA and "block" in cv.conversion_dims(A, B)
    assert plan.instructions > 0 and plan.wavefronts > 0
    assert plan.cost.total == pytest.approx(cost_model.shared_time_ns(plan.wavefronts + 4 * cv.CLUSTER_BARRIER_COST, False, 4))
    assert plan.barrier.scope is BarrierScope.CLUSTER
    # the cluster-wide buffer round trip delivers every destination element (blocks folded into warps)
    folded = cv._fold_blocks
    tensor = np.random.default_rng(3).integers(0, 1 << 30, size=(32, 32))
    fake = ConversionPlan(plan.kind, folded(A), folded(B), plan.element, plan.steps, plan.cost)
    assert np.array_equal(_simulate_shared(fake, tensor), distribute(folded(B), tensor))


def test_figure4_shuffle_has_no_plan_on_a_target_of_other_lanes():
    # 4 lanes (paper Fig. 4): the shuffle analysis takes any lane count (2 rounds), but a plan runs on the
    # target's warps (32 lanes on sm_90), so plan_conversion refuses it, naming both lane counts; a register
    # permutation of 4-lane layouts moves nothing between lanes and is still planned
    A = LinearLayout({"register": [[1]], "lane": [[2], [4]]}, ["dim0"])
    B = LinearLayout({"register": [[4]], "lane": [[1], [2]]}, ["dim0"])
    assert cv.plan_shuffle(A, B, 32).num_rounds == 2
    assert cv.conversion_dims(A, B) == ("register", "lane")
    with pytest.raises(LayoutError, match=r"^src: needs a 'lane' in dim of size 32 \(one sm_90 warp\).* 4 lanes"):
        cv.plan_conversion(A, B, 32)
    R = LinearLayout({"register": [[1], [2]], "lane": [[4], [8]]}, ["dim0"])
    S = LinearLayout({"register": [[2], [1]], "lane": [[4], [8]]}, ["dim0"])
    assert cv.plan_conversion(R, S, 32).kind == cv.REGISTER_PERMUTATION
    # a conversion across warps of 4-lane layouts has no plan: the error names the rule
    A4 = LinearLayout({"register": [[1]], "lane": [[2], [4]], "warp": [[8]]}, ["dim0"])
    B4 = LinearLayout({"register": [[8]], "lane": [[2], [4]], "warp": [[1]]}, ["dim0"])
    with pytest.raises(LayoutError, match="lane"):
        cv.plan_conversion(A4, B4, 32)


def _bench_case(name: str):
    import sys
    from pathlib import Path

    from harness.cases import named_cases, random_cases  # noqa: PLC0415

    return {c.name: c for c in named_cases() + random_cases(18)}[name]


@pytest.mark.parametrize(
    "name, faster",
    [
        # (case of benchmarks/harness/cases.py, the faster kernel on H100: results/gpu_suite.json, conversion)
        ("lanes_cols_to_rows_fp32", cv.SHARED_MEMORY),  # 80.7 us shuffle vs 38.7 us shared
        ("random_003", cv.SHARED_MEMORY),  # 16-bit: 92.8 vs 42.4
        ("random_006", cv.WARP_SHUFFLE),  # 16-bit: 25.4 vs 34.4
        ("random_011", cv.WARP_SHUFFLE),  # 32-bit, 64 registers: 46.1 vs 67.4
        ("random_017", cv.SHARED_MEMORY),  # 16-bit: 47.9 vs 25.1
    ],
)
def test_measured_cases_rank_as_on_the_device(name, faster):
    """The kernel times src -> dst -> src; the model's summed costs of both directions must rank warp
    shuffle and shared memory as measured."""
    case = _bench_case(name)
    shfl = smem = 0.0
    for a, b in ((case.src, case.dst), (case.dst, case.src)):
        shfl += cv.shuffle_cost(cv.plan_shuffle(a, b, case.bits)).total
        smem += cv.plan_shared_memory(a, b, case.bits).cost.total
    assert (cv.WARP_SHUFFLE if shfl < smem else cv.SHARED_MEMORY) == faster
    plan = cv.plan_conversion(case.src, case.dst, case.bits)
    assert {plan.kind, *dict(plan.alternatives)} == {cv.WARP_SHUFFLE, cv.SHARED_MEMORY}


def test_shuffle_instruction_count_matches_emitted_selects():
    """32x32 fp32, lanes on columns -> lanes on rows (1 warp): 32 rounds, of which the diagonal one
    reads every lane's own register (no shfl): 31 shfl; 32 registers permuted over 10 moving lane
    bits (5 per side): 320 selects, as nvcc's PTX of codegen's kernel has."""
    from linear_layouts.layouts.blocked import BlockedLayout

    cols = BlockedLayout([1, 1], [1, 32], [1, 1], [1, 0]).to_linear([32, 32])
    rows = BlockedLayout([1, 1], [32, 1], [1, 1], [0, 1]).to_linear([32, 32])
    assert shuffle_counts(cv.plan_shuffle(cols, rows, 32)) == OpCounts(shfl=31, alu=320)


def test_same_data_dims_fast_path_equals_the_composition_on_random_pairs():
    """``conversion_dims``' fast path (``_same_data_dims``: both layouts hold the same non-zero bases, the
    dims read off the bases) against the general path (``_composed_dims``: quotienting ``src^-1 ∘ dst``) on
    600 seeded random pairs where the fast path applies: the destination moves the source's bases (zeros
    included) among a random choice of hardware dims, with a block dim in some, so every answer occurs;
    and pairs of unrelated layouts, where the fast path must answer the same or decline (None)."""
    import random

    from harness.smem_cases import random_distributed, random_shape

    rng = random.Random(20261126)
    dims_sets = [("register",), ("register", "lane"), ("lane",), ("lane", "warp"), ("register", "lane", "warp"),
                 ("warp", "block"), ("register", "lane", "warp", "block"), ()]
    answers: dict = {}
    fast_cases = 0
    while fast_cases < 600:
        warps = rng.choice([0, 1, 2, 3])
        log2s = random_shape(rng, rng.randint(5 + warps, 10))
        src = random_distributed(rng, log2s, warps)
        bases = src.bases
        nonzero_regs = [i for i, v in enumerate(bases["register"]) if any(v)]
        if rng.random() < 0.35 and len(nonzero_regs) >= 2:  # a CTA bit (and sometimes a broadcast one)
            bases["block"] = [bases["register"].pop(nonzero_regs[-1])] + ([[0] * len(log2s)] if rng.random() < 0.3 else [])
            src = LinearLayout(bases, src.out_dims)
        if rng.random() < 0.2:  # unrelated layouts: the fast path answers the same or declines
            other = random_distributed(rng, log2s, warps)
            dst = LinearLayout({**other.bases, **({"block": bases["block"]} if "block" in bases else {})},
                               src.out_dims, require_surjective=False)
            try:
                cv.conversion_dims(src, dst)  # the fast path's precondition: both checked (Def. 4.10)
            except LayoutError:
                continue
            fast = cv._same_data_dims(src, dst)
            assert fast is None or fast == cv._composed_dims(src, dst), (src, dst)
            continue
        movable = [d for d in rng.choice(dims_sets) if d in bases]
        slots = [(d, i) for d in movable for i in range(len(bases[d]))]
        vectors = [bases[d][i] for d, i in slots]
        rng.shuffle(vectors)
        moved = {d: [list(v) for v in vs] for d, vs in bases.items()}
        for (d, i), v in zip(slots, vectors):
            moved[d][i] = v
        dst = LinearLayout(moved, src.out_dims)
        fast = cv._same_data_dims(src, dst)
        assert fast is not None, (src, dst)
        assert fast == cv._composed_dims(src, dst) == cv.conversion_dims(src, dst), (src, dst)
        answers[fast] = answers.get(fast, 0) + 1
        fast_cases += 1
    assert {(), ("register",), ("register", "lane"), ("register", "lane", "warp"),
            ("register", "lane", "warp", "block")} <= set(answers), answers
