"""The engine's shortcuts change nothing: the pruned engine (plan_cost's floor) against an engine that
asks the cost of every candidate, on every example and seeded random programs; the floor itself on
random layout pairs."""

from __future__ import annotations

import numpy as np
import pytest

from linear_layouts.analysis.warp_simulator import random_distributed_layout, random_within_warp_partner
from linear_layouts.engine import examples, plan_cost, propagate
from harness.random_programs import random_program
from linear_layouts.target import DEFAULT_TARGET


def every_cost(src, dst, bits):
    """``plan_cost`` without its ``floor``: the engine then asks for every direct cost, as it did before."""
    return plan_cost(src, dst, bits)


def outcome(result):
    """Everything the engine decides: ops (with layouts in their attributes), layouts, descriptors, conversions."""
    ops = [(op.kind, op.operands, op.results, op.attrs) for op in result.program.ops]
    convs = [(c.value, c.result, c.src, c.dst, c.dtype, c.plan.kind if c.plan else None, c.cost)
             for c in result.conversions]
    return ops, dict(result.layouts), dict(result.descriptors), convs


PROGRAMS = [pytest.param(build, id=name) for name, build in examples.EXAMPLES.items()]
PROGRAMS += [pytest.param(lambda seed=seed: random_program(seed), id=f"random{seed}") for seed in range(0, 120, 3)]


@pytest.mark.parametrize("build", PROGRAMS)
def test_pruned_engine_decides_as_the_exhaustive_one(build):
    program = build()
    fast, slow = propagate(program), propagate(program, cost_fn=every_cost)
    assert not hasattr(every_cost, "floor") and plan_cost.floor > 0
    assert outcome(fast) == outcome(slow)


def test_plan_cost_floor_holds_on_random_pairs():
    """Pruning skips a direct conversion when a rematerialization is cheaper than ``plan_cost.floor``:
    every conversion between different layouts costs at least that much."""
    rng = np.random.default_rng(11)
    costs = []
    for i in range(150):
        a = random_distributed_layout(rng, [3, 3], warp_bits=2)
        b = random_within_warp_partner(rng, a) if i % 2 else random_distributed_layout(rng, [3, 3], warp_bits=2)
        bits = int(rng.choice([8, 16, 32, 64]))
        if a != b:
            costs.append(plan_cost(a, b, bits))
    assert len(costs) > 100 and min(costs) >= plan_cost.floor


def random_pairs(seed, count):
    """Random distributed layout pairs for the conversion analyses: unrelated, within-warp partners,
    and with duplicated (zero) register bases on one side, on 2-D tensors."""
    rng = np.random.default_rng(seed)
    for i in range(count):
        shape = [int(rng.integers(1, 4)), int(rng.integers(1, 4))]
        zeros = int(rng.integers(0, 2))
        a = random_distributed_layout(rng, shape, lane_bits=5 if sum(shape) >= 5 else 3, warp_bits=2,
                                      extra_register_zeros=zeros)
        if i % 2:
            b = random_within_warp_partner(rng, a, extra_register_zeros=int(rng.integers(0, 2)))
        else:
            b = random_distributed_layout(rng, shape, lane_bits=a.in_dim_size_log2("lane"), warp_bits=2)
        yield a, b


def test_conversion_dims_read_off_the_bases_equal_the_quotient():
    """``conversion_dims`` answers permutation pairs from their bases; the quotient of ``src^-1 ∘ dst``
    (Triton's ``minimalCvtLayout``) gives the same dims on every random pair, the identity included."""
    from linear_layouts.analysis import conversion as cv

    kinds = set()
    for a, b in random_pairs(5, 1500):
        for src, dst in ((a, b), (a, a), (b, b)):
            fast = cv._same_data_dims(src, dst)
            assert fast is not None and fast == cv._composed_dims(src, dst)
            kinds.add(fast)
    assert {(), ("register",), ("register", "lane"), ("register", "lane", "warp")} <= kinds


def test_global_cost_reads_the_vector_off_one_memory_order_layout():
    """``anchors.global_cost`` permutes and measures contiguity on one ``memory_order_layout``: the same
    permutation and width as ``vector_permutation`` / ``contiguous_elements`` on the layout itself."""
    from linear_layouts.analysis.vectorization import contiguous_elements, memory_order_layout, vector_permutation

    widths = set()
    for a, _ in random_pairs(8, 300):
        for order in ([1, 0], [0, 1]):
            in_memory = memory_order_layout(a, order)
            fast = vector_permutation(in_memory)
            assert fast == vector_permutation(a, order)
            width = contiguous_elements(fast.apply(a), order)
            assert fast.apply(in_memory).num_consecutive_in_out() == width
            widths.add(width)
    assert len(widths) >= 3


def test_shared_offsets_by_the_compiled_core_equal_the_elimination():
    """``banks`` reads a shared layout's offsets with the compiled core's ``f2.solve`` when it is active:
    the same accesses (offsets, vector, free bits) as one Python elimination on the swizzle's layouts."""
    from linear_layouts.core import _ccore
    from linear_layouts.analysis import banks, swizzle

    if not _ccore.available():
        pytest.skip("the C extension is not built (python setup.py build_ext --inplace)")
    compared = 0
    for a, b in random_pairs(13, 200):
        if a.in_dim_size("lane") != 32:
            continue
        columns = tuple(swizzle.optimal_swizzle(a, b, 16).layout.flat_bases("offset"))
        answers = []
        for backend in ("c", "python"):
            with _ccore.using(backend):
                banks._access_from_columns.cache_clear()
                answers.append([banks._access_from_columns(columns, side, 16, 128, DEFAULT_TARGET) for side in (a, b)])
        assert answers[0] == answers[1]
        compared += 1
    banks._access_from_columns.cache_clear()
    assert compared > 50


def test_cost_function_carries_its_floor_as_a_field():
    """``plan_cost`` is a frozen ``CostFunction`` whose ``floor`` field is ``CONVERT_OVERHEAD``; any cost
    wrapped with the same floor prunes alike, and a wrong cost or floor is refused."""
    import dataclasses

    from linear_layouts import LayoutError
    from linear_layouts.engine import CostFunction
    from linear_layouts.engine.propagate import CONVERT_OVERHEAD

    assert isinstance(plan_cost, CostFunction) and plan_cost.floor == CONVERT_OVERHEAD
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field"):
        plan_cost.floor = 0.0  # type: ignore[misc]
    program = examples.EXAMPLES["dot_trans_store"]()
    wrapped = CostFunction(every_cost, floor=CONVERT_OVERHEAD)
    assert outcome(propagate(program, cost_fn=wrapped)) == outcome(propagate(program))
    with pytest.raises(LayoutError, match="cost: must be callable"):
        CostFunction(3.0)  # type: ignore[arg-type]
    with pytest.raises(LayoutError, match="floor: must be a number"):
        CostFunction(every_cost, floor="0.5")  # type: ignore[arg-type]


def test_def_index_answers_as_a_scan_through_insertions_and_removals():
    """``_State.def_index`` keeps its last answers (each value has one definition): an answer is checked
    against the op still there, so one moved by an insertion or removal is found again by a scan; a
    program defining a value twice keeps the scan's first definition."""
    from linear_layouts import LayoutError
    from linear_layouts.engine import ir
    from linear_layouts.engine.propagate import _State

    def scanned(state, vid):
        return next(i for i, op in enumerate(state.ops) if vid in op.results)

    program = examples.row_softmax()
    state = _State(program, plan_cost)
    state.ops = list(program.ops)
    vids = [r for op in program.ops for r in op.results]
    assert [state.def_index(v) for v in vids] == [scanned(state, v) for v in vids]
    state.ops.insert(0, ir.Op("full", (), (10_000,), ()))  # every later op moves one place
    assert [state.def_index(v) for v in vids] == [scanned(state, v) for v in vids]
    state.ops.pop(3)
    gone = [v for v in vids if not any(v in op.results for op in state.ops)]
    assert [state.def_index(v) for v in vids if v not in gone] == [scanned(state, v) for v in vids if v not in gone]
    with pytest.raises(LayoutError, match="no definition"):
        state.def_index(gone[0])
    twice = ir.Program(program.ops + program.ops[5:6], program.values, program.num_warps, program.threads_per_warp)
    state = _State(twice, plan_cost)  # a malformed program: a value defined twice, the scan's answer kept
    state.ops = list(twice.ops)
    v = twice.ops[5].results[0]
    assert state.def_index(v) == 5
    state.ops.insert(2, twice.ops[5])  # a definition before it, and the one at 5 back at 5
    state.ops.pop(0)
    assert state.def_index(v) == 1 == scanned(state, v)


def test_a_chain_of_element_wise_ops_longer_than_the_recursion_limit_is_laid_out():
    """An unrolled kernel is one dependency chain as deep as the kernel (a ``tl.static_range`` loop of
    multiply-adds): ``_is_free`` / ``_from_load`` walk it with a stack (their recursion stopped at ~500
    ops with a RecursionError)."""
    import sys

    from linear_layouts.engine.ir import Builder

    b = Builder(num_warps=4)
    x = b.load(b.pointer("x", [64, 64], "fp32"))
    for _ in range(sys.getrecursionlimit()):
        x = b.elementwise("exp2", x)
    b.store(b.pointer("out", [64, 64], "fp32"), x)
    result = propagate(b.build())
    assert result.conversions == () and len(set(result.layouts.values())) == 1
