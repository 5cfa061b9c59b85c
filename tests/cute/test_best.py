"""best_cute_swizzle: the cheapest CuTe swizzled layout under the one bank model, beside §9.2's optimum."""

from __future__ import annotations

import random

import numpy as np
import pytest

from linear_layouts.analysis.bank_simulator import simulate_wavefronts
from linear_layouts.analysis.banks import wavefronts
from linear_layouts.layouts import BlockedLayout, DotOperandLayout, NVMMADistributedLayout
from linear_layouts.cute.best import best_cute_swizzle, cute_candidates
from linear_layouts.cute.layout import Swizzle
from linear_layouts.cute.linear import to_linear
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout

from linear_layouts.analysis.warp_simulator import random_distributed_layout

# seed 004: a 16 x 32 fp32 transpose, one warp (store: register -> row; load: lanes 0-3 -> row)
STORE = LinearLayout({"register": [[1, 0], [2, 0], [4, 0], [8, 0]],
                      "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]], "warp": []}, ["dim0", "dim1"])
LOAD = LinearLayout({"register": [[0, 2], [0, 4], [0, 8], [0, 16]],
                     "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]], "warp": []}, ["dim0", "dim1"])


def test_seed_transpose_reaches_the_optimum():
    best = best_cute_swizzle(STORE, LOAD, 32)
    assert (best.store_wavefronts, best.load_wavefronts) == (16, 16)
    assert best.reaches_optimum and best.excess_wavefronts == 0
    assert best.optimum.total_wavefronts == 32
    assert best.candidates == len(cute_candidates((16, 32)))


def test_the_choice_is_the_minimum_over_every_candidate_and_the_simulator_agrees():
    rng = random.Random(21)
    gen = np.random.default_rng(21)
    for _ in range(6):
        log2s = rng.choice([[3, 4], [4, 3], [2, 5], [5, 3]])
        warps = rng.randint(0, 1)
        store = random_distributed_layout(gen, log2s, warp_bits=warps, broadcast=False)
        load = random_distributed_layout(gen, log2s, warp_bits=warps, broadcast=False)
        w = rng.choice([8, 16, 32])
        best = best_cute_swizzle(store, load, w)
        costs = []
        for _, _, layout in cute_candidates(tuple(1 << k for k in log2s)):
            shared = to_linear(layout)
            costs.append(wavefronts(shared, store, w, op="store") + wavefronts(shared, load, w))
        assert best.total_wavefronts == min(costs)
        assert simulate_wavefronts(best.shared, store, w, op="store") == best.store_wavefronts
        assert simulate_wavefronts(best.shared, load, w) == best.load_wavefronts
        assert to_linear(best.layout) == best.shared


def test_blocked_to_mma_operand_fp16():
    """A coalesced fp16 tile read as an mma.sync A operand: one CuTe swizzle matches the optimum."""
    store = BlockedLayout([1, 8], [8, 4], [4, 1], [1, 0]).to_linear([64, 32])
    load = DotOperandLayout(0, NVMMADistributedLayout([2, 0], [4, 1], [16, 8]), 2).to_linear([64, 32])
    best = best_cute_swizzle(store, load, "fp16")
    assert best.reaches_optimum
    assert best.swizzle.bits >= 1


def test_refusals():
    with pytest.raises(LayoutError, match="store_layout must be a LinearLayout"):
        best_cute_swizzle("x", LOAD, 32)
    with pytest.raises(LayoutError, match="dtype"):
        best_cute_swizzle(STORE, LOAD, "fp7")
    other = LinearLayout({"register": [[1, 0], [2, 0], [4, 0], [8, 0]],
                          "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]], "warp": []}, ["rows", "cols"])
    with pytest.raises(LayoutError, match="out dims must be dim0"):
        best_cute_swizzle(other, other, 32)


def test_identity_candidate_is_plain_layout():
    shape = (8, 8)
    cands = cute_candidates(shape)
    assert cands[0][1] == Swizzle(0, 0, 0) and str(cands[0][2]) == "(8,8):(8,1)"
    assert {m for m, _, _ in cands} == {"row", "column"}
