"""The engine's lower bounds (engine/bounds.py) are lower bounds, and the choices they settle are the
exhaustive search's: ``plan_cost_bound`` against ``plan_cost`` on random pairs and on every pair the
exhaustive engine prices; ``CostBounds`` proofs against the search's exact costs; the bounded engine
against the exhaustive one on real kernels' imported TTIR (where the bounds settle most choices)."""

from __future__ import annotations

import functools
import importlib
import math
from pathlib import Path

import numpy as np
import pytest

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.analysis.warp_simulator import random_distributed_layout, random_within_warp_partner
from linear_layouts.engine import examples, plan_cost, propagate, propagate_runs
from linear_layouts.engine.bounds import CONVERT_OVERHEAD, CostBounds, plan_cost_bound
from harness.random_programs import random_program

engine = importlib.import_module("linear_layouts.engine.propagate")  # the module (the package exports the function)
CORPUS = Path(__file__).resolve().parents[1] / "data" / "triton_kernels" / "ir"


def every_cost(src, dst, bits):
    """``plan_cost`` as a plain function: no floor, no bound, so the engine searches every choice."""
    return plan_cost(src, dst, bits)


def outcome(result):
    """Everything the engine decides: ops, layouts, conversions with their plans' kind and cost."""
    ops = [(op.kind, op.operands, op.results, op.attrs) for op in result.program.ops]
    convs = [(c.value, c.result, c.src, c.dst, c.dtype, c.plan.kind if c.plan else None, c.cost)
             for c in result.conversions]
    return ops, dict(result.layouts), convs, dict(result.recomputes)


def with_block(layout: LinearLayout) -> LinearLayout:
    """``layout`` with its last warp basis moved to a ``block`` dim: two CTAs of a cluster."""
    bases = layout.bases
    bases["block"] = [bases["warp"].pop()]
    return LinearLayout(bases, layout.out_dims)


def test_plan_cost_bound_holds_on_random_pairs():
    """Unrelated pairs, within-warp partners (shuffle or shared memory) and pairs across CTAs, of 8- to
    128-bit elements: the bound never exceeds ``plan_cost``, is 0 on equal layouts, at least the convert
    op's overhead on different ones, and well above it where many bytes cross warps."""
    rng = np.random.default_rng(3)
    above = 0
    for i in range(240):
        shape = [int(rng.integers(2, 6)), int(rng.integers(2, 6))]
        a = random_distributed_layout(rng, shape, warp_bits=2)
        b = random_within_warp_partner(rng, a) if i % 2 else random_distributed_layout(rng, shape, warp_bits=2)
        if i % 5 == 0:
            a, b = with_block(a), with_block(b)
        bits = int(rng.choice([8, 16, 32, 64, 128]))
        bound, cost = plan_cost_bound(a, b, bits), plan_cost(a, b, bits)
        assert bound <= cost + 1e-9, (a, b, bits, bound, cost)
        assert plan_cost_bound(a, a, bits) == 0.0
        if a != b:
            assert bound >= CONVERT_OVERHEAD
            above += bound > 5.0
    assert above > 40


def test_plan_cost_bound_holds_on_every_pair_the_exhaustive_engine_prices():
    asked = set()

    def recording(src, dst, bits):
        asked.add((src, dst, bits))
        return plan_cost(src, dst, bits)

    for build in list(examples.EXAMPLES.values()) + [functools.partial(random_program, s) for s in range(0, 60, 2)]:
        propagate(build(), cost_fn=recording)
    assert len(asked) > 300
    for src, dst, bits in asked:
        assert plan_cost_bound(src, dst, bits) <= plan_cost(src, dst, bits) + 1e-9


def test_cost_bounds_prove_only_what_the_search_finds():
    """After the forward pass of random programs: for each conversion ``x -> R``, where ``CostBounds``
    proves the rematerialization costs at least ``B`` (plus its moved region's negative costs), the
    search (``_remat``, a fresh memo) finds at least that; and for each value and each other layout of
    its shape, the same for recomputing it there without conversions (``_plan(convert=False)``, the
    merges' question)."""
    proven = {True: 0, False: 0}
    for seed in range(0, 60, 3):
        state = engine._State(random_program(seed), plan_cost)
        engine._forward(state)
        questions = [(op.operands[0], state.layout[op.results[0]], True) for op in state.ops
                     if op.kind == "convert_layout"]
        shapes: dict = {}
        for v, layout in state.layout.items():
            shapes.setdefault(state.values[v].shape, set()).add(layout)
        questions += [(v, other, False) for v, layout in state.layout.items()
                      for other in shapes[state.values[v].shape] if not state.reused(v, other)]
        for x, target, convert in questions:
            top = (x, target, True)
            bounds = state.bounds(top, convert, {})
            if convert:
                exact = engine._remat(state, x, target, {}, 0)[0]
            else:
                exact = engine._plan(state, x, target, {}, convert=False)[0]
            for bound in (0.6, 5.0, 20.0, 60.0, 200.0, 1000.0):
                if bounds.recompute_at_least(top, bound) if convert else bounds.at_least(top, bound):
                    proven[convert] += 1
                    assert exact >= bound + bounds.negative - 1e-6, (seed, x, target, bound, exact)
    assert proven[True] > 50 and proven[False] > 50, proven


KERNELS = ["sort_rows", "many_reductions", "unrolled_chain", "moe_router", "attention_fwd"]


@pytest.mark.parametrize("name", KERNELS)
def test_bounded_engine_decides_as_the_exhaustive_one_on_corpus_kernels(name):
    """Real kernels' TTIR (sm_90), where the bounds settle most merges and backward choices: every run of
    the engine gives what the exhaustive search gives. (topk_router, whose exhaustive search plans 2.7k
    conversions, is checked by ``benchmarks/engine_speed.py --fingerprint`` before and after a change.)"""
    from linear_layouts.triton_model.ir_text import parse_module
    from linear_layouts.pipeline.ttir_import import import_ttir

    path = CORPUS / "sm_90" / f"{name}.ttir"
    ttgir = parse_module(path.with_suffix(".ttgir").read_text())
    program = import_ttir(parse_module(path.read_text()), cc=90, num_warps=ttgir.num_warps).program
    fast, slow = propagate_runs(program), propagate_runs(program, cost_fn=every_cost)
    for start in fast:
        assert outcome(fast[start]) == outcome(slow[start]), start


def test_the_search_decides_where_the_bounds_give_up(monkeypatch):
    """With the bound search stopped after 3 keys (``GiveUp`` everywhere), every choice falls back to the
    exhaustive search: the same results."""
    program = random_program(7)
    expected = outcome(propagate(program, cost_fn=every_cost))
    monkeypatch.setattr(engine, "CostBounds", functools.partial(CostBounds, max_steps=3))
    assert outcome(propagate(program)) == expected


def test_a_bound_without_a_floor_decides_as_the_exhaustive_search():
    """A ``CostFunction`` with a ``bound`` but no ``floor`` (-inf): the bounds settle choices without
    the floor's shortcuts, and every result is the exhaustive search's."""
    from linear_layouts.engine import CostFunction

    bounded = CostFunction(every_cost, bound=plan_cost_bound)
    assert bounded.floor == -math.inf
    with pytest.raises(LayoutError, match="bound: must be None or callable"):
        CostFunction(every_cost, bound=0.5)  # type: ignore[arg-type]
    for seed in range(0, 60, 6):
        program = random_program(seed)
        assert outcome(propagate(program, cost_fn=bounded)) == outcome(propagate(program, cost_fn=every_cost))
