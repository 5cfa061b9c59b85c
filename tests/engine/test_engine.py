"""The layout engine on the issue's programs (a)-(e): conversions left, layouts chosen, consistency."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linear_layouts import LayoutError
from linear_layouts.layouts import BlockedLayout, DotOperandLayout, NVMMADistributedLayout, SliceLayout
from linear_layouts.engine import Builder, check_consistent, naive_conversions, plan_cost, propagate, transfer
from linear_layouts.engine.anchors import dot_operand_layout, mma_layout
from linear_layouts.engine.examples import dot_trans_store, mxfp4_matmul, row_softmax, welford
from harness.random_programs import random_program


def defining(program, vid):
    return next(op for op in program.ops if vid in op.results)


@pytest.mark.parametrize("version", [2, 3])
def test_a_dot_trans_store_needs_no_conversion(version):
    """(a) the transposed mma accumulator is stored as is: the only conversions feed the dot's operands."""
    result = propagate(dot_trans_store(mma_version=version))
    assert check_consistent(result) == []
    prog = result.program
    dot = next(op for op in prog.ops if op.kind == "dot")
    trans = next(op for op in prog.ops if op.kind == "trans")
    store = next(op for op in prog.ops if op.kind == "store")
    assert trans.operands[0] == dot.results[0] and store.operands[1] == trans.results[0]
    mma = transfer.standard_outs(mma_layout([64, 64], "fp16", version, 4).to_linear([64, 64]))
    assert result.layouts[dot.results[0]] == mma
    assert result.layouts[store.operands[0]] == transfer.trans_forward(mma, [1, 0])
    assert {c.result for c in result.conversions} <= set(dot.operands)
    # (wgmma's A may load straight in its dot-operand layout where that costs less than converting it)
    assert len(result.conversions) <= (2 if version == 2 else 1)
    # a legacy engine (blocked everywhere) converts the accumulator and the transposed result
    assert naive_conversions(dot_trans_store(mma_version=version)) > len(result.conversions)


def test_b_reduce_expand_broadcast_needs_no_conversion():
    result = propagate(row_softmax())
    assert check_consistent(result) == [] and result.conversions == ()
    x = next(op for op in result.program.ops if op.kind == "load").results[0]
    for op in result.program.ops:
        if op.kind == "broadcast":
            assert result.layouts[op.results[0]] == result.layouts[x]
    assert naive_conversions(row_softmax()) == 4  # blocked everywhere: reduce and broadcast results


def test_b_without_rematerialization_conversions_remain():
    """The backward pass is what removes them: forward alone converts at the broadcast merge."""
    assert len(propagate(row_softmax(), rematerialize=False).conversions) > 0


@pytest.mark.parametrize("version", [2, 3])
def test_c_mxfp4_scales_are_loaded_in_the_derived_layout(version):
    """(c) §5.2: the scale layout is the dot-operand layout pulled back through trans / reshape /
    broadcast / reshape; scales load straight into it and the upcast needs no conversion."""
    m, n, k = 64, 64, 128
    result = propagate(mxfp4_matmul(m, n, k, mma_version=version))
    assert check_consistent(result) == []
    prog, lay = result.program, result.layouts
    dot = next(op for op in prog.ops if op.kind == "dot")
    operand = dot.operands[1] if version == 2 else dot.operands[0]
    mul = defining(prog, operand if version == 2 else defining(prog, operand).operands[0])
    assert mul.kind == "elementwise" and dict(mul.attrs)["fn"] == "mul"  # no conversion between upcast and dot
    scale_ptr = next(op for op in prog.ops if op.kind == "pointer" and op.attr("arg") == "b_scale")
    scale_load = next(op for op in prog.ops if op.kind == "load" and op.operands[0] == scale_ptr.results[0])
    target = lay[mul.results[0]]
    if version == 2:
        mma = mma_layout([m, n], "bf16", 2, 4)
        assert target == transfer.standard_outs(dot_operand_layout(mma, 1, "bf16").to_linear([k, n]))
    else:
        mma = mma_layout([n, m], "bf16", 3, 4)
        a_layout = transfer.standard_outs(dot_operand_layout(mma, 0, "bf16").to_linear([n, k]))
        assert target == transfer.trans_backward(a_layout, [1, 0])
    derived = transfer.trans_backward(target, [1, 0])                      # [N, K]
    derived = transfer.reshape_backward(derived, [n, k // 32, 32])
    derived = transfer.broadcast_backward(derived, [n, k // 32, 1])
    derived = transfer.reshape_backward(derived, [n, k // 32])
    assert lay[scale_load.results[0]] == derived
    # the rows of the mma layout share scales: lanes that differ only along K hold the same scale
    assert any(not any(v) for v in derived.bases["lane"])
    scale_chain = set()
    frontier = [mul.operands[1]]
    while frontier:
        v = frontier.pop()
        scale_chain.add(v)
        frontier += list(defining(prog, v).operands)
    assert not any(c.result in scale_chain for c in result.conversions)
    kinds = {prog.values[c.value].dtype for c in result.conversions}
    assert kinds <= {"bf16", "u8"}  # a -> dot operand, packed nibbles (8-bit, before the upcast)
    assert len(result.conversions) <= 2 < naive_conversions(mxfp4_matmul(m, n, k, mma_version=version))


def test_d_welford_equal_layouts_need_no_conversion():
    """(d) ``BlockedLayout([2], [32], [4], [0])`` and ``SliceLayout(1, parent)`` are one LinearLayout:
    converting between them is a no-op; converting to a truly different layout is not."""
    parent = BlockedLayout([2, 1], [32, 1], [1, 4], [0, 1])
    same = BlockedLayout([2], [32], [4], [0])
    assert same != SliceLayout(1, parent) and same.to_linear([64]) == SliceLayout(1, parent).to_linear([64])
    with_converts = propagate(welford())
    assert check_consistent(with_converts) == []
    assert not any(op.kind == "convert_layout" and op.attr("target") == same.to_linear([64])
                   for op in with_converts.program.ops)
    # the same program without the two user conversions leaves exactly as many
    b = Builder(num_warps=4)
    x = b.convert_layout(b.load(b.pointer("x", [64, 64], "fp32")), parent)
    mean = b.elementwise("div", b.reduce(x, 1, "add"), b.full([64], 64, "fp32"))
    d = b.elementwise("sub", x, b.broadcast(b.expand_dims(mean, 1), [64, 64]))
    var = b.elementwise("div", b.reduce(b.elementwise("mul", d, d), 1, "add"), b.full([64], 64, "fp32"))
    b.store(b.pointer("mean", [64], "fp32"), mean)
    b.store(b.pointer("var", [64], "fp32"), var)
    assert len(propagate(b.build()).conversions) == len(with_converts.conversions)
    # a different 1-D layout is a real conversion
    b = Builder(num_warps=4)
    x = b.convert_layout(b.load(b.pointer("x", [64, 64], "fp32")), parent)
    r = b.convert_layout(b.reduce(x, 1, "add"), BlockedLayout([1], [32], [4], [0]))
    b.store(b.pointer("y", [64], "fp32"), b.elementwise("max", r, r))
    b.store(b.pointer("z", [64, 64], "fp32"), x)
    res = propagate(b.build())
    assert any(c.dst == BlockedLayout([1], [32], [4], [0]).to_linear([64]) or c.src != c.dst for c in res.conversions)


def test_descriptors_and_text():
    result = propagate(dot_trans_store())
    prog = result.program
    dot = next(op for op in prog.ops if op.kind == "dot")
    assert isinstance(result.descriptors[dot.results[0]], NVMMADistributedLayout)
    assert all(isinstance(result.descriptors[v], DotOperandLayout) for v in dot.operands)
    text = result.to_text()
    assert "NVMMADistributedLayout" in text and "DistributedLinearLayout" in text  # the transposed mma
    assert "conversions: 2" in text and "shared memory" in text


def test_cost_function_is_a_parameter():
    calls = []

    def unit_cost(src, dst, bits):
        calls.append(bits)
        return 0.0 if src == dst else 1.0

    result = propagate(mxfp4_matmul(), cost_fn=unit_cost)
    assert calls and check_consistent(result) == []


# --------------------------------------------------------------------------------------------------
# (e) random programs
# --------------------------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**31 - 1))
def test_e_random_programs_consistent_and_no_worse_than_blocked_everywhere(seed):
    program = random_program(seed)
    result = propagate(program)
    assert check_consistent(result) == []
    assert len(result.conversions) <= naive_conversions(program)
    for c in result.conversions:
        assert c.src != c.dst and c.plan is not None and c.plan.kind != "no-op"


def test_bad_input_raises_layout_error():
    with pytest.raises(LayoutError, match="program"):
        propagate("not a program")
    b = Builder()
    with pytest.raises(LayoutError, match="shape"):
        b.pointer("x", [3, 4], "fp16")
    p = b.pointer("x", [16, 16], "fp16")
    with pytest.raises(LayoutError, match="perm"):
        b.trans(b.load(p), [0, 0])
    with pytest.raises(LayoutError, match="mma_version"):
        b.dot(b.load(p), b.load(p), mma_version=4)
    with pytest.raises(LayoutError, match="num_warps"):
        Builder(num_warps=3)


def test_e_anchor_run_alone_beats_blocked_everywhere():
    """Without the legacy-start candidate, the anchored forward + backward run alone leaves fewer
    conversions than blocked everywhere in total, and no more in at least 90% of random programs."""
    from linear_layouts.engine.propagate import _run

    ours = naive = worse = 0
    for seed in range(30):
        program = random_program(seed)
        state = _run(program, plan_cost, True)
        count = sum(op.kind == "convert_layout" for op in state.ops)
        n = naive_conversions(program)
        ours, naive, worse = ours + count, naive + n, worse + (count > n)
    assert worse <= 3 and ours < 0.7 * naive


def test_legacy_run_counts_the_blocked_everywhere_baseline_as_naive_conversions():
    """``propagate`` takes its limit (the legacy baseline's conversions) from the legacy run's forward pass
    with ``plan_cost``, not from a third pass: the same count as ``naive_conversions``; other costs count anew."""
    from linear_layouts.engine.propagate import _run

    programs = [random_program(seed) for seed in range(40)] + [dot_trans_store(), row_softmax(), welford()]
    counts = [_run(program, plan_cost, True, legacy=True).naive_conversions for program in programs]
    assert counts == [naive_conversions(program) for program in programs] and max(counts) > 0
    assert _run(programs[0], lambda s, d, b: 1.0, True, legacy=True).naive_conversions is None
    assert _run(programs[0], plan_cost, True).naive_conversions is None


@pytest.mark.parametrize("seed", range(8))
def test_propagate_runs_equals_propagate_of_each_start(seed):
    """``propagate_runs`` makes each run once: the same layouts and conversions as ``propagate`` with each
    ``start``, and its ``"both"`` is the very result of the run it chose."""
    from linear_layouts.engine import propagate_runs

    program = random_program(seed)
    runs = propagate_runs(program)
    for start, result in runs.items():
        alone = propagate(program, start=start)
        assert result.layouts == alone.layouts, start
        assert [(c.src, c.dst) for c in result.conversions] == [(c.src, c.dst) for c in alone.conversions], start
    assert runs["both"] is runs["anchored"] or runs["both"] is runs["legacy"]
    assert list(propagate_runs(program, starts=("legacy",))) == ["legacy"]
    with pytest.raises(LayoutError, match="start must be"):
        propagate_runs(program, starts=("sideways",))
    with pytest.raises(LayoutError, match="rematerialize"):
        propagate_runs(program, starts=("legacy",), rematerialize=False)
