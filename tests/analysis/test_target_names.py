"""Every public analysis entry with a ``target`` takes a name as well as a ``Target`` (``target.resolve``): the
same answer for ``"H200"`` as for ``named_target(device="H200")``, for ``"gfx942"`` as for its ``Target``; a
misspelt name is a LayoutError naming ``target``."""

from __future__ import annotations

import inspect

import pytest

import linear_layouts.analysis as A
import linear_layouts.layouts as C
from linear_layouts import LayoutError
from linear_layouts.analysis.shared_advice import Consumer
from linear_layouts.catalog import row_major_shared
from linear_layouts.target import named_target

SHAPE = [64, 64]
STORE = C.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0]).to_linear(SHAPE)
LOAD = C.BlockedLayout([8, 1], [8, 4], [1, 4], [0, 1]).to_linear(SHAPE)
SHARED = row_major_shared(SHAPE)
WIDE = C.BlockedLayout([1, 8], [2, 32], [4, 1], [1, 0]).to_linear(SHAPE)  # 64 lanes: an AMD wavefront

#: each entry's call on the 32-lane layouts, given its target
CALLS = {
    "shared_access": lambda t: A.shared_access(SHARED, STORE, "fp16", target=t),
    "wavefronts": lambda t: A.wavefronts(SHARED, STORE, "fp16", target=t),
    "bank_conflicts": lambda t: A.bank_conflicts(SHARED, LOAD, "fp16", target=t),
    "simulate_wavefronts": lambda t: A.simulate_wavefronts(SHARED, LOAD, "fp16", target=t),
    "lane_addresses": lambda t: A.lane_addresses(SHARED, LOAD, "fp16", target=t)[1],
    "optimal_swizzle": lambda t: A.optimal_swizzle(STORE, LOAD, "fp16", target=t),
    "padded_baseline": lambda t: A.padded_baseline(STORE, LOAD, "fp16", target=t),
    "legacy_swizzle_baseline": lambda t: A.legacy_swizzle_baseline(STORE, LOAD, "fp16", vec=8, per_phase=1,
                                                                   max_phase=8, target=t),
    "simd_choices": lambda t: A.simd_choices(SHARED, LOAD, "fp16", target=t),
    "best_instruction": lambda t: A.best_instruction(SHARED, LOAD, "fp16", target=t),
    "conversion_instructions": lambda t: A.conversion_instructions(SHARED, STORE, LOAD, "fp16", target=t),
    "plan_conversion": lambda t: A.plan_conversion(STORE, LOAD, "fp16", target=t),
    "plan_shared_memory": lambda t: A.plan_shared_memory(STORE, LOAD, "fp16", target=t),
    "plan_through": lambda t: A.plan_through(STORE, LOAD, SHARED, "fp16", target=t),
    "suggest_shared_layout": lambda t: A.suggest_shared_layout(STORE, Consumer.local_load(LOAD), "fp16", target=t),
}


def test_every_public_entry_with_a_target_is_called_here():
    """A new entry with a ``target`` joins ``CALLS`` (and so takes names)."""
    with_target = {name for name in A.__all__ if callable(getattr(A, name)) and not inspect.isclass(getattr(A, name))
                   and "target" in inspect.signature(getattr(A, name)).parameters}
    assert with_target == set(CALLS)


@pytest.mark.parametrize("entry", sorted(CALLS))
@pytest.mark.parametrize("name", ["H200", "a100", "sm_90"])
def test_a_name_gives_the_answer_of_its_target(entry, name):
    by_value = named_target(device=name) if name[0].isalpha() and not name.startswith("sm_") else named_target(name)
    assert CALLS[entry](name) == CALLS[entry](by_value)


def test_a_64_lane_target_by_name():
    assert A.wavefronts(SHARED, WIDE, "fp16", target="gfx942") == A.wavefronts(SHARED, WIDE, "fp16",
                                                                                 target=named_target("gfx942"))
    with pytest.raises(LayoutError, match="gfx942"):
        A.wavefronts(SHARED, STORE, "fp16", target="MI300X")  # 32 lanes on a 64-lane wavefront


@pytest.mark.parametrize("entry", ["wavefronts", "plan_conversion", "optimal_swizzle"])
def test_a_misspelt_name_is_refused_naming_target(entry):
    with pytest.raises(LayoutError, match=r"target.*'H300'.*did you mean"):
        CALLS[entry]("H300")


def test_the_engine_takes_a_name():
    from linear_layouts.engine import examples
    from linear_layouts.engine.propagate import propagate

    program = examples.row_softmax()
    assert propagate(program, target="H200").conversions == propagate(program, target=named_target(device="H200")).conversions
    with pytest.raises(LayoutError, match="target: unknown 'H300'"):
        propagate(program, target="H300")
