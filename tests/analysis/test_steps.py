"""The typed conversion plan: canonical forms checked at construction, typed steps, text forms."""

from __future__ import annotations

import dataclasses
import json

import pytest

from linear_layouts import ColumnAction, LayoutError, LinearLayout
from linear_layouts.analysis import conversion as cv
from linear_layouts.analysis import cost_model
from linear_layouts.layouts import BlockedLayout
from linear_layouts.analysis.steps import (
    Barrier,
    BarrierScope,
    ConversionKind,
    ConversionPlan,
    Cost,
    MemoryOp,
    RegisterEmission,
    RegisterPermutation,
    SharedInstruction,
    SharedMemoryAccess,
    WarpShuffle,
    shared_mnemonic,
)
from linear_layouts.cli import main
from linear_layouts.core.element_type import element_type
from linear_layouts.present.viz.scenarios import seed_transpose

SEED = seed_transpose()
FP32 = element_type("fp32")


def _spec(layout: LinearLayout) -> str:
    return json.dumps({"bases": layout.bases, "out_dims": layout.out_dims})


def test_seed_plan_steps_are_typed_values():
    plan = cv.plan_conversion(SEED.store, SEED.load, "fp32")
    store, barrier, load = plan.steps
    assert plan.kind is ConversionKind.SHARED_MEMORY and plan.element == FP32
    assert (store.op, load.op) == (MemoryOp.STORE, MemoryOp.LOAD) and isinstance(barrier, Barrier)
    assert store.instruction is load.instruction is SharedInstruction.VECTOR
    assert (store.width, store.ptx, load.ptx) == (1, "st.shared.b32", "ld.shared.b32")
    assert isinstance(store.register_order, ColumnAction) and store.layout == load.layout == plan.shared_layout
    assert (store.wavefronts, load.wavefronts, plan.wavefronts) == (16, 16, 32)  # seed 004: 16 + 16
    assert plan.cost == Cost(cost_model.shared_time_ns(32, True, 1), wavefronts=32, warps=1)
    assert plan.barrier.scope is BarrierScope.WARP  # one warp reads what it stored: a warp barrier
    assert plan.instruction_counts() == {"st.shared.b32": 16, "ld.shared.b32": 16}
    assert plan.register_map is None and plan.shuffle is None


def test_str_is_what_the_cli_prints_and_repr_is_one_short_line(capsys):
    plan = cv.plan_conversion(SEED.store, SEED.load, "fp32")
    assert main(["convert", _spec(SEED.store), _spec(SEED.load), "--dtype", "fp32", "--wide"]) == 0
    assert capsys.readouterr().out == str(plan) + "\n"
    assert "3. barrier: __syncwarp() (every warp reads what it stored)" in str(plan) and "16 wavefronts" in str(plan)
    text = repr(plan)
    assert "\n" not in text and len(text) < 160
    assert text.startswith("<ConversionPlan shared memory: [16x32] fp32, 1 warp: 16 × ld.shared.b32, 16 × st.shared.b32;")
    assert all(len(repr(step)) < 160 for step in plan.steps)


def test_canonical_forms_are_checked():
    plan = cv.plan_conversion(SEED.store, SEED.load, "fp32")
    store, barrier, load = plan.steps
    with pytest.raises(LayoutError, match="not the canonical form of a shared memory plan"):
        dataclasses.replace(plan, steps=(load, barrier, store))
    with pytest.raises(LayoutError, match="not the canonical form of a shared memory plan"):
        dataclasses.replace(plan, steps=(store, load))
    with pytest.raises(LayoutError, match="not the canonical form of a shared memory plan"):
        dataclasses.replace(plan, steps=(store, Barrier(BarrierScope.CLUSTER), load))
    with pytest.raises(LayoutError, match="BarrierScope: expected one of"):
        BarrierScope("grid")
    with pytest.raises(LayoutError, match="not the canonical form of a no-op plan"):
        dataclasses.replace(plan, kind=ConversionKind.NO_OP)
    with pytest.raises(LayoutError, match="kind: expected a ConversionKind"):
        dataclasses.replace(plan, kind="shared memory")
    with pytest.raises(LayoutError, match="cost: expected a Cost"):
        dataclasses.replace(plan, cost=34.0)
    with pytest.raises(LayoutError, match="alternatives"):
        dataclasses.replace(plan, alternatives=((ConversionKind.SHARED_MEMORY, Cost(1.0)),))
    other = dataclasses.replace(load, layout=SEED.shared[0][1])
    with pytest.raises(LayoutError, match="canonical form"):
        dataclasses.replace(plan, steps=(store, barrier, other))
    with pytest.raises(LayoutError, match="register permutation gives each of the 16 dst registers"):
        ConversionPlan(ConversionKind.REGISTER_PERMUTATION, SEED.load, SEED.load, FP32, (RegisterPermutation((0,)),),
                       Cost(0.0))


def test_access_rules():
    order = ColumnAction([0, 1], "register", 4)
    ok = dict(op=MemoryOp.LOAD, layout=SEED.shared[2][1], instruction=SharedInstruction.MATRIX, width=4,
              element_bits=16, register_order=order, instructions=4, wavefronts=16)
    assert SharedMemoryAccess(**ok, trans=True).ptx == "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"
    with pytest.raises(LayoutError, match="trans: .trans moves 16-bit elements"):
        SharedMemoryAccess(**{**ok, "element_bits": 32}, trans=True)
    with pytest.raises(LayoutError, match=r"\.x1/\.x2/\.x4"):
        SharedMemoryAccess(**{**ok, "width": 8})
    with pytest.raises(LayoutError, match="only ldmatrix/stmatrix have a transposing form"):
        SharedMemoryAccess(**{**ok, "instruction": SharedInstruction.VECTOR}, trans=True)
    with pytest.raises(LayoutError, match="a shared vector is 1 to 16 bytes, got 32"):
        SharedMemoryAccess(**{**ok, "instruction": SharedInstruction.VECTOR, "width": 8, "element_bits": 32})
    with pytest.raises(LayoutError, match="width: a power of two"):
        SharedMemoryAccess(**{**ok, "width": 3})
    with pytest.raises(LayoutError, match="register_order: a ColumnAction"):
        SharedMemoryAccess(**{**ok, "register_order": (0, 1)})
    assert shared_mnemonic(MemoryOp.STORE, SharedInstruction.VECTOR, 2, 8) == "st.shared.u16"
    with pytest.raises(LayoutError, match="total: a cost is a finite number"):
        Cost(float("inf"))


def test_each_kind_has_its_steps():
    register = LinearLayout({"register": [[1], [2]], "lane": [[4], [8], [16], [32], [64]]}, ["dim0"])
    swapped = LinearLayout({"register": [[2], [1]], "lane": [[4], [8], [16], [32], [64]]}, ["dim0"])
    plan = cv.plan_conversion(register, swapped, "i8")
    # four i8 in one word, two of them trading places: the destination's word is the source's, renamed
    renamed = RegisterPermutation((0, 2, 1, 3), RegisterEmission.RENAMED_WORDS)
    assert plan.kind is ConversionKind.REGISTER_PERMUTATION and plan.steps == (renamed,)
    assert cv.plan_conversion(register, swapped, "fp32").steps == (RegisterPermutation((0, 2, 1, 3)),)
    assert "Registers are renamed: b[0] = a[0], b[1] = a[2], b[2] = a[1], b[3] = a[3]" in str(plan)
    assert cv.plan_conversion(register, register, 8).steps == ()
    # 16x16 fp32, one warp: the calibrated model prefers 8 shuffles to the shared-memory round trip
    lanes = BlockedLayout([1, 1], [4, 8], [1, 1], [1, 0]).to_linear([16, 16])
    moved = BlockedLayout([1, 2], [4, 8], [1, 1], [0, 1]).to_linear([16, 16])
    shuffle = cv.plan_conversion(lanes, moved, "fp32")
    assert shuffle.kind is ConversionKind.WARP_SHUFFLE and [type(s) for s in shuffle.steps] == [WarpShuffle]
    assert shuffle.instruction_counts() == {"shfl.sync.idx.b32": shuffle.shuffle.shuffles_per_warp}
    assert dict(shuffle.alternatives)[ConversionKind.SHARED_MEMORY].total > shuffle.cost.total
