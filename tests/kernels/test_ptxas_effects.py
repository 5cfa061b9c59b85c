"""What ptxas does to Triton 3.6's shared-memory code on sm_90 beyond the PTX, as the report models it,
against ncu's counts of the 2026-11-26 16:12 H100 run (benchmarks/results/gpu_kernels.json):

* a conversion whose result only feeds the kernel's final global stores: its ``ld.shared`` is sunk behind
  the early exit of the threads that hold copies (row_sum: ncu ld 512 on 512 CTAs; moe_router: 1536 on 256);
* a rank-2 TMA descriptor (``ttng.tensormap_create``): 11 LDS + 15 STS of one thread (tma_persistent_matmul:
  ncu 4356 / 268084 on 132 CTAs)."""

from __future__ import annotations

from pathlib import Path

from linear_layouts.pipeline.report import analyze_ttgir
from linear_layouts.triton_model.lowering import convert_lowering

T36 = Path(__file__).resolve().parents[1] / "data" / "triton36_sm90"


def _report(name: str):
    return analyze_ttgir((T36 / f"{name}.ttgir").read_text(), with_triton_estimate=False, triton_version="3.6.0")


def test_the_tail_conversion_loads_only_in_the_owning_threads():
    row_sum = [op for op in _report("row_sum").ops if op.kind == "convert_layout"]
    assert [(op.triton.store_wavefronts, op.triton.load_wavefronts) for op in row_sum] == [(16, 1)]
    assert row_sum[0].triton.loads[0].count == 4  # every warp's code has the ld.shared (the PTX's inventory)
    moe = [op for op in _report("moe_router").ops if op.kind == "convert_layout"]
    assert [op.triton.load_wavefronts for op in moe] == [4, 2]  # only the last one is sunk (SASS: @P0 EXIT; LDS)
    assert 256 * sum(op.triton.load_wavefronts for op in moe) == 1536  # ncu's ld on the full grid


def test_tail_is_only_the_owners_wavefronts():
    """On the same pair, ``tail`` only removes the copies' wavefronts: warps and lanes holding a copy."""
    [op] = [op for op in _report("row_sum").ops if op.kind == "convert_layout"]
    every = convert_lowering(op.src_layout, op.dst_layout, 32)
    sunk = convert_lowering(op.src_layout, op.dst_layout, 32, tail=True)
    assert every.loads[0].wavefronts == 4 and sunk.loads[0].wavefronts == 1
    assert every.stores == sunk.stores and every.loads[0].count == sunk.loads[0].count


def test_the_rule_moves_exactly_the_conversions_that_ncu_saw_moved(monkeypatch):
    """Over the corpus, the tail rule changes the load wavefronts of row_sum and moe_router only (their
    tail conversions go to layouts with copies in other warps); the kernels with a tail conversion that
    ncu measured exact without it (matmul_fp16 / fp8, layer_norm_bwd_dwdb) keep their prediction."""
    import linear_layouts.pipeline.report as report

    def loads(name: str) -> list[int]:
        return [op.triton.load_wavefronts for op in _report(name).ops if op.kind == "convert_layout"]

    names = sorted(p.stem for p in T36.glob("*.ttgir"))
    with_rule = {n: loads(n) for n in names}
    monkeypatch.setattr(report, "_tail_conversion", lambda fn: None)
    changed = sorted(n for n in names if loads(n) != with_rule[n])
    assert changed == ["moe_router", "row_sum"]
    assert loads("row_sum") == [4] and loads("moe_router") == [4, 4]


def test_a_rank2_tma_descriptor_costs_its_sass_accesses():
    ops = [op for op in _report("tma_persistent_matmul").ops if op.kind == "tensormap_create"]
    assert len(ops) == 3
    assert {(op.triton.store_wavefronts, op.triton.load_wavefronts) for op in ops} == {(15, 11)}
    assert {tuple(i.count for i in op.triton.loads) for op in ops} == {(0,)}  # no ld.shared in the PTX
    assert 132 * 3 * 11 == 4356  # ncu's ld on tma_persistent_matmul's 132 CTAs


def test_one_cta_takes_its_spin_lock_at_the_first_try():
    """layer_norm_bwd_dx's ``while tl.atomic_cas(Lock, 0, 1) == 1`` (its result reaches every thread through
    shared memory: 1 st + 1 ld per warp each try): unknown on a grid of many CTAs (they contend), one
    try on a grid of one CTA with the locks zeroed -- the 1-CTA launch of benchmarks/gpu_kernels.py."""
    from linear_layouts.triton_model.ir_text import parse_module
    from linear_layouts.triton_model.trips import grid_op_counts

    fn = parse_module((T36 / "layer_norm_bwd_dx.ttgir").read_text()).functions[0]
    [cas] = [op for op in fn.walk() if op.name == "tt.atomic_cas"]
    scalars = {"%stride": 4096, "%N": 4096}
    assert grid_op_counts(fn, scalars, (1,))[id(cas)] == 1
    assert grid_op_counts(fn, scalars, (2,))[id(cas)] is None
    [spin] = [op for op in fn.walk() if op.name == "scf.while"]
    assert grid_op_counts(fn, scalars, (1,))[id(spin.regions[1].ops[0])] == 0  # the empty body: never
