"""The bank rule pinned to ncu measurements (H100 80GB HBM3, CUDA 13.0, ncu 2025.3.1, 2026-11-22:
benchmarks/results/gpu_suite.json, key ncu -> rows; benchmarks/results/wavefronts_vs_ncu.md).

Two findings, each case cited with its measured wavefronts:
1. pairing: an 8- or 16-byte LOAD by all lanes where every lane asks for lane l ^ 1's (or l ^ 2's)
   address has phases of twice as many lanes; duplicates along lane bits 2..4 do not pair,
   predicated-off lanes never merge phases, and stores never pair (hand-written tables,
   benchmarks/gpu_bank_check/results_paired_h100.json, H100 2026-11-22);
2. the code generator does not store duplicated registers, lanes, warps: the plan's prediction is
   ``wavefronts(..., op="store", skip_duplicates=True)``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.analysis import conversion as cv
from linear_layouts.analysis.steps import SharedInstruction
from linear_layouts.analysis.bank_simulator import (
    instruction_wavefronts,
    matrix_instruction_wavefronts,
    paired_lanes,
    simulate_wavefronts,
)
from linear_layouts.analysis.banks import shared_access, wavefronts


def _lanes(pattern: list[int], unit: int) -> list[int]:
    return [p * unit for p in pattern]


# one instruction of each measured kernel: lane -> 16-byte block (or 8-byte unit), as codegen emitted it
R129 = [0] * 8 + [4] * 8 + [0] * 8 + [4] * 8  # random_129 ld.shared.v4 x32 (4 warps x 8): ncu 64
R184 = [0, 132, 0, 132, 1, 133, 1, 133, 2, 134, 2, 134, 3, 135, 3, 135,
        8, 140, 8, 140, 9, 141, 9, 141, 10, 142, 10, 142, 11, 143, 11, 143]  # random_184 ld.v4 x64: ncu 128
R028 = [0, 1, 0, 1, 2, 3, 2, 3, 8, 9, 8, 9, 10, 11, 10, 11,
        16, 17, 16, 17, 18, 19, 18, 19, 24, 25, 24, 25, 26, 27, 26, 27]  # random_028 ld.v4 x8: ncu 32
R004 = [0, 1, 18, 19, 4, 5, 22, 23] * 4  # random_004 ld.v4 x4: ncu 16 (lanes 3, 4 duplicate: no pairing)
R007 = [i // 4 for i in range(32)]  # random_007 ld.v2 x4 (8-byte): ncu 4
R032 = [0, 4, 8, 12, 1, 5, 9, 13] * 4  # random_032 ld.v2 x16 (8-byte units of 8 bytes): ncu 32


@pytest.mark.parametrize("name, pattern, vector_bytes, instructions, ncu", [
    ("random_129", R129, 16, 32, 64),
    ("random_184", R184, 16, 64, 128),
    ("random_028", R028, 16, 8, 32),  # paired, but the 16-lane phases conflict: no gain
    ("random_004", R004, 16, 4, 16),
    ("random_007", R007, 8, 4, 4),
    ("random_032", R032, 8, 16, 32),
])
def test_pairing_rule_on_measured_loads(name, pattern, vector_bytes, instructions, ncu):
    starts = _lanes(pattern, vector_bytes)
    assert instruction_wavefronts(starts, vector_bytes) * instructions == ncu


def test_what_pairs():
    assert paired_lanes(_lanes(R129, 16)) and paired_lanes(_lanes(R184, 16)) and paired_lanes(_lanes(R007, 8))
    assert not paired_lanes(_lanes(R004, 16)) and not paired_lanes(_lanes(R032, 8))
    # 4-byte and narrower accesses: one phase of 32 lanes already, pairing changes nothing
    assert instruction_wavefronts([0] * 32, 4) == 1


def test_predicated_lanes_never_merge_phases():
    """Stores with lanes predicated off keep their phases (ncu): random_085 st.shared.v4 x8, one lane of
    four storing: 32 (4 per instruction); random_185 st.shared.v2 x8, even lanes storing: 16."""
    starts = [16 * (lane // 4) for lane in range(32)]
    assert instruction_wavefronts(starts, 16, active=[lane % 4 == 0 for lane in range(32)]) * 8 == 32
    starts = [8 * (lane // 2) for lane in range(32)]
    assert instruction_wavefronts(starts, 8, active=[lane % 2 == 0 for lane in range(32)]) * 8 == 16
    # a phase whose lanes are all predicated off costs nothing (random_020: st.shared.v4 x128, lanes 0-3: 128)
    first_quad = [lane < 4 for lane in range(32)]
    assert instruction_wavefronts([16 * (lane % 4) for lane in range(32)], 16, active=first_quad) == 1


def test_matrix_phases():
    assert matrix_instruction_wavefronts([16 * r for r in range(16)]) == 2
    assert matrix_instruction_wavefronts([128 * r for r in range(8)]) == 8
    with pytest.raises(LayoutError, match=r"row_starts: 8 row addresses per matrix"):
        matrix_instruction_wavefronts([0] * 7)
    with pytest.raises(LayoutError, match=r"an instruction has 32 lane addresses \(and activity flags\)"):
        instruction_wavefronts([0] * 31, 4)
    with pytest.raises(LayoutError, match=r"vector_bytes must be 1, 2, 4, 8 or 16"):
        instruction_wavefronts([0] * 32, 12)


# benchmarks/gpu_bank_check/paired_cases.json replayed on an H100 80GB HBM3 (ncu 2025.3.1, CUDA 13.0,
# 2026-11-22): one warp, one instruction each; the ncu wavefronts of every table as a load and as a store
PAIRED_NCU = {  # name: (vector bytes, load, store); the two readings: paired (load) / unpaired (store)
    "v4_l1_clean": (16, 2, 4), "v4_l1_conflict": (16, 3, 4), "v4_l2_clean": (16, 2, 4),
    "v4_l2_conflict": (16, 3, 4), "v4_quad": (16, 2, 4), "v4_all_same": (16, 2, 4),
    "v4_ctrl_l16": (16, 4, 4), "v4_ctrl_distinct": (16, 4, 4),
    "v2_l1_clean": (8, 1, 2), "v2_l1_conflict": (8, 2, 3), "v2_l1_conflict_both": (8, 2, 4),
    "v2_l2_clean": (8, 1, 2), "v2_quad": (8, 1, 2), "v2_all_same": (8, 1, 2), "v2_ctrl_l16": (8, 2, 2),
}
PAIRED_SAME_DATA_NCU = {"v4_l1_clean": 4, "v4_quad": 4, "v2_l1_clean": 2}  # stores, equal data in all lanes


def test_stores_never_pair_measured():
    """Hand-written l^1 / l^2 / quad / all-equal tables (8- and 16-byte): every load takes the paired
    reading, every store the unpaired one (4 phases of 8 lanes, 2 of 16), whatever the data stored."""
    folder = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_bank_check"
    cases = json.loads((folder / "paired_cases.json").read_text())["cases"]
    rows = {r["name"]: r for r in json.loads((folder / "results_paired_h100.json").read_text())["rows"]}
    assert len(cases) == len(rows) == 2 * len(PAIRED_NCU) + len(PAIRED_SAME_DATA_NCU)
    for case in cases:
        op, same = case["op"], case.get("same_data", False)
        base = case["name"].removesuffix("_same" if same else "").removesuffix("_" + op)
        vb, load, store = PAIRED_NCU[base]
        pinned = PAIRED_SAME_DATA_NCU[base] if same else (load if op == "load" else store)
        starts = case["addresses"][0][0]
        assert case["vector_bytes"] == vb and rows[case["name"]]["measured"] == pinned, case["name"]
        assert instruction_wavefronts(starts, vb, op=op) == pinned, case["name"]
        # the two readings: loads pair, stores do not
        assert pinned == (case["predicted_paired"] if op == "load" else case["predicted_unpaired"]), case["name"]
        if "ctrl" not in base:
            assert paired_lanes(starts) and case["predicted_paired"] != case["predicted_unpaired"]


def test_stores_never_pair_closed_form():
    """A 16-byte access whose lane 0 is a broadcast (lanes l, l ^ 1 on one block): loaded in 2 phases
    of 16 lanes, stored in 4 of 8 (closed form, simulator and the rule agree)."""
    dims = {"dim0": 64}
    shared = LinearLayout({"offset": [[1], [2], [4], [8], [16], [32]]}, dims)
    dist = LinearLayout({"register": [[1], [2]], "lane": [[0], [4], [8], [16], [32]], "warp": []}, dims)
    access = shared_access(shared, dist, 32)
    assert access.paired and access.vector_bits == 128
    assert wavefronts(shared, dist, 32) == simulate_wavefronts(shared, dist, 32) == 2
    assert wavefronts(shared, dist, 32, op="store") == simulate_wavefronts(shared, dist, 32, op="store") == 4
    starts = [16 * (lane >> 1) for lane in range(32)]
    assert instruction_wavefronts(starts, 16) == 2 and instruction_wavefronts(starts, 16, op="store") == 4
    with pytest.raises(LayoutError, match="op"):
        instruction_wavefronts(starts, 16, op="st")


# measured kernels of the suite: (src, dst, shared layout chosen by the plan, bits, ncu store + load)
SUITE = {
    "random_184": (  # ncu 32 + 128; before: predicted 256 + 256
        {"register": [[0, 0], [0, 4], [0, 8], [0, 16], [0, 32], [0, 64]],
         "lane": [[0, 1], [0, 2], [1, 0], [2, 0], [4, 0]], "warp": [[0, 0], [0, 0], [0, 0]]},
        {"register": [[1, 0], [2, 0], [0, 16], [0, 32], [0, 64]], "lane": [[4, 0], [0, 0], [0, 1], [0, 2], [0, 4]],
         "warp": [[0, 0], [0, 0], [0, 8]]},
        {"offset": [[0, 16], [0, 32], [0, 1], [0, 2], [1, 0], [0, 4], [0, 8], [0, 64], [2, 0], [5, 0]]},
        {"dim0": 8, "dim1": 128}, 32, (32, 128)),
    "random_129": (  # ncu 4 + 64; before: 16 + 128
        {"register": [[1, 0], [2, 0], [16, 0]], "lane": [[4, 0], [8, 0], [0, 1], [0, 2], [0, 4]],
         "warp": [[0, 0], [0, 0]]},
        {"register": [[0, 1], [1, 0], [0, 2], [4, 0], [16, 0], [0, 4]],
         "lane": [[0, 0], [0, 0], [0, 0], [8, 0], [0, 0]], "warp": [[0, 0], [2, 0]]},
        {"offset": [[1, 0], [16, 0], [0, 1], [0, 2], [4, 0], [8, 0], [0, 4], [2, 0]]},
        {"dim0": 32, "dim1": 8}, 16, (4, 64)),
    "random_007": (  # forced shared memory: ncu 2 + 4; before: 4 + 8
        {"register": [[0, 1], [0, 0], [0, 8], [0, 16], [0, 32]],
         "lane": [[0, 2], [0, 4], [1, 0], [2, 0], [0, 0]], "warp": []},
        {"register": [[1, 0], [2, 0], [0, 0], [0, 8], [0, 16], [0, 32]],
         "lane": [[0, 0], [0, 0], [0, 1], [0, 2], [0, 4]], "warp": []},
        {"offset": [[0, 8], [0, 16], [0, 32], [0, 1], [0, 2], [0, 4], [2, 0], [1, 1]]},
        {"dim0": 4, "dim1": 64}, 8, (2, 4)),
    "random_014": (  # ncu 32 + 32; before: 128 + 32
        {"register": [[0, 1], [8, 0], [0, 8], [0, 16], [16, 0], [32, 0]],
         "lane": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], "warp": [[0, 0], [0, 0]]},
        {"register": [[1, 0], [2, 0], [0, 16], [32, 0]], "lane": [[0, 1], [0, 2], [0, 4], [4, 0], [8, 0]],
         "warp": [[0, 8], [16, 0]]},
        {"offset": [[0, 16], [32, 0], [0, 1], [0, 2], [0, 4], [1, 0], [0, 8], [8, 0], [16, 0], [5, 0], [2, 1]]},
        {"dim0": 64, "dim1": 32}, 16, (32, 32)),
}


@pytest.mark.parametrize("name", sorted(SUITE))
def test_measured_suite_kernels(name):
    src_b, dst_b, shared_b, dims, bits, ncu = SUITE[name]
    src, dst, shared = LinearLayout(src_b, dims), LinearLayout(dst_b, dims), LinearLayout(shared_b, dims)
    store = wavefronts(shared, src, bits, op="store", skip_duplicates=True)
    load = wavefronts(shared, dst, bits)
    assert (store, load) == ncu
    assert simulate_wavefronts(shared, src, bits, op="store", skip_duplicates=True) == store
    assert simulate_wavefronts(shared, dst, bits) == load
    # loads ignore skip_duplicates; the default store counts every lane of every warp
    assert wavefronts(shared, dst, bits, skip_duplicates=True) == load
    assert wavefronts(shared, src, bits, op="store") >= store
    # the plan predicts what codegen emits (vector instructions here)
    plan = cv.plan_shared_memory(src, dst, bits)
    vectors = {plan.store.instruction, plan.load.instruction} == {SharedInstruction.VECTOR}
    if plan.shared_layout == shared and vectors:
        assert (plan.store.wavefronts, plan.load.wavefronts) == ncu


def test_skip_duplicates_counts():
    """One lane of one warp stores (all lanes and warps broadcast): 8 instructions x 1 phase."""
    dims = {"dim0": 32}
    shared = LinearLayout({"offset": [[1], [2], [4], [8], [16]]}, dims)
    dist = LinearLayout({"register": [[1], [2], [4], [8], [16]], "lane": [[0]] * 5, "warp": [[0], [0]]}, dims)
    assert shared_access(shared, dist, 32).free_lanes == 31 and shared_access(shared, dist, 32).free_warps == 3
    assert wavefronts(shared, dist, 32, op="store", skip_duplicates=True) == 8
    with pytest.raises(LayoutError, match="skip_duplicates"):
        wavefronts(shared, dist, 32, op="store", skip_duplicates=1)


def test_closed_form_equals_simulator_with_pairing_and_skipped_duplicates():
    """The closed form agrees with the simulator on random pairs, both ops, with and without skipping
    duplicates; the cases include paired accesses and predicated lanes and warps."""
    import random

    from harness.smem_cases import random_pair

    rng = random.Random(2027)
    paired = skipped = 0
    for _ in range(300):
        shared, dist, w = random_pair(rng)
        access = shared_access(shared, dist, w)
        for op in ("load", "store"):
            for skip in (False, True):
                got = wavefronts(shared, dist, w, op=op, skip_duplicates=skip)
                assert got == simulate_wavefronts(shared, dist, w, op=op, skip_duplicates=skip), (shared, dist, w)
        paired += access.paired
        skipped += bool(access.free_lanes or access.free_warps or access.free_registers)
    assert paired >= 10 and skipped >= 50
