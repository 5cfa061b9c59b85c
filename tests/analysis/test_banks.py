"""Bank conflicts: Lemma 9.4's formula, the brute-force simulator, Triton 3.9 and the hardware (ncu)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from harness.smem_cases import (
    COLUMNS,
    DIMS,
    LOAD,
    STORE,
    random_distributed,
    random_pair,
    seed_shared,
    triton_bank_conflicts,
    triton_crashes,
)

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.analysis import bank_conflicts, shared_access, simulate_wavefronts, wavefronts

@pytest.mark.parametrize("shift, expected", [(None, (16, 256)), (0, (16, 32)), (1, (16, 16))])
def test_seed_transpose_table(shift, expected):
    """Seeds 003/004: unswizzled 16 + 256, XOR m 16 + 32, XOR 2m 16 + 16 (also measured with ncu)."""
    shared = seed_shared(shift)
    got = (wavefronts(shared, STORE, 32, op="store"), wavefronts(shared, LOAD, 32, op="load"))
    assert got == expected
    assert (simulate_wavefronts(shared, STORE, 32, op="store"), simulate_wavefronts(shared, LOAD, 32)) == expected
    assert bank_conflicts(shared, LOAD, 32) == expected[1] // 16 - 1


def test_row_padding_seed():
    """Row padding by 1 element (offset 33 m + n): 16 + 32; by 2: 16 + 16 (both measured on H100)."""
    shared = seed_shared(None)
    assert simulate_wavefronts(shared, LOAD, 32, padding=((32, 1),)) == 32
    assert simulate_wavefronts(shared, STORE, 32, op="store", padding=((32, 1),)) == 16
    assert simulate_wavefronts(shared, LOAD, 32, padding=((32, 2),)) == 16


def test_formula_equals_simulator_on_random_pairs():
    """Acceptance: formula and brute force agree on >= 500 random (shared, distributed, bitwidth) cases."""
    rng = random.Random(2026)
    seen_vectors, seen_conflicts = set(), set()
    for _ in range(520):
        shared, dist, w = random_pair(rng)
        access = shared_access(shared, dist, w)
        formula = wavefronts(shared, dist, w)
        assert formula == simulate_wavefronts(shared, dist, w), (shared, dist, w)
        seen_vectors.add(access.vector_bits)
        seen_conflicts.add(formula // (access.instructions * access.phases))
    # the cases exercise every access width and several conflict degrees
    assert seen_vectors == {8, 16, 32, 64, 128}
    assert {1, 2, 4, 8} <= seen_conflicts


def test_formula_equals_simulator_128_bit_elements():
    """16-byte elements: one element per lane, 4 phases of 8 lanes (2 of 16 when lane 0 or 1 is a broadcast)."""
    rng = random.Random(128)
    seen = set()
    for _ in range(60):
        shared, dist, w = random_pair(rng, 128)
        access = shared_access(shared, dist, w)
        paired = 0 in [x for x in dist.flat_bases("lane")[:2]]
        assert access.paired == paired and access.phases == (2 if paired else 4)
        seen.add(paired)
        assert wavefronts(shared, dist, w) == simulate_wavefronts(shared, dist, w)
    assert seen == {False, True}


def test_vector_choice_is_left_division():
    """The vector is the widest identity register->offset tile after a register permutation (Thm 5.1)."""
    shared = LinearLayout({"offset": [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0], [2, 0], [4, 0], [8, 0]]},
                          {"dim0": 16, "dim1": 16})
    # registers hold columns 2, 1 (permuted), 8 and rows; lanes the rest
    dist = LinearLayout({"register": [[0, 2], [0, 1], [0, 0], [8, 0]],
                         "lane": [[0, 4], [0, 8], [1, 0], [2, 0], [4, 0]]}, {"dim0": 16, "dim1": 16})
    access = shared_access(shared, dist, 16)
    assert access.vector_elements == 4 and access.vector_bits == 64  # 1, 2 swapped; 4 is a lane
    assert access.permutation.action == (1, 0, 3)  # the broadcast register 2 is dropped
    assert access.instructions == 2 and access.phases == 2
    assert shared_access(shared, dist, 16, max_vector_bits=32).vector_elements == 2


def test_hardware_confirmed_disagreement_with_triton():
    """Pinned from the H100 ncu run (benchmarks/gpu_bank_check), fp16 scalar accesses, 2 warps x 16
    instructions: lane 1 sits at element offset 129 = 128 + 1, the second half of word 64, so lanes
    0 and 1 read words 0 and 64, both in bank 0 (with lane 3's word 256: 4-way). ncu: 128 wavefronts
    for the load and for the store; ours 128; Triton 3.9 says 1 conflict (64): its test
    span(segment) ∩ span(lanes) misses 128 + 1 because of the half-word bit."""
    data = json.loads((Path(__file__).parent / "data" / "bank_disagreement.json").read_text())
    for case in data["cases"]:
        shared = LinearLayout(case["shared"]["bases"], case["shared"]["out_dims"])
        dist = LinearLayout(case["distributed"]["bases"], case["distributed"]["out_dims"])
        w, op = case["bitwidth"], case["op"]
        assert case["measured_ncu"] == 128 and case["triton_3_9_conflicts"] == 1
        assert wavefronts(shared, dist, w, op=op) == 128 == simulate_wavefronts(shared, dist, w, op=op)
        assert bank_conflicts(shared, dist, w) == 3
        assert shared_access(shared, dist, w).lane_offsets[:2] == (66, 129)
    try:
        import triton  # noqa: F401
    except ImportError:
        return
    assert triton_bank_conflicts(shared, dist, w) == 1  # Triton's estimate, refuted by ncu


def test_all_gpu_measurements_match_formula():
    """Every case replayed on the GPU (40 kernels: seeds, padding, controls, Triton disagreements)."""
    folder = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_bank_check"
    cases = json.loads((folder / "cases.json").read_text())["cases"]
    rows = json.loads((folder / "results_h100.json").read_text())["rows"]
    assert len(rows) == len(cases) == 40
    for case, row in zip(cases, rows):
        shared = LinearLayout(case["shared"]["bases"], case["shared"]["out_dims"])
        dist = LinearLayout(case["distributed"]["bases"], case["distributed"]["out_dims"])
        padding = tuple(tuple(p) for p in case["padding"])
        sim = simulate_wavefronts(shared, dist, case["bitwidth"], op=case["op"], padding=padding)
        assert sim == row["measured"], case["name"]
        if not padding:
            assert wavefronts(shared, dist, case["bitwidth"], op=case["op"]) == row["measured"], case["name"]
        if case["name"].startswith("disagree"):
            assert row["triton"] < row["measured"], case["name"]  # Triton under-counts every one


@pytest.mark.gpu
def test_gpu_replay_matches_formula(tmp_path):
    """On a GPU machine with nvcc and ncu: replay cases.json and require 40/40 matches."""
    import os
    import shutil
    import subprocess
    import sys

    if not (shutil.which("ncu") and shutil.which("nvcc") and shutil.which("nvidia-smi")):
        pytest.skip("needs an NVIDIA GPU with nvcc and ncu")
    folder = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_bank_check"
    env = dict(os.environ, OUT=str(tmp_path), BANK_CHECK_WORK=str(tmp_path / "work"))
    out = subprocess.run([sys.executable, "run.py"], cwd=folder, env=env, capture_output=True, text=True, timeout=600)
    assert "ours matches ncu on 40/40" in out.stdout, out.stdout[-2000:] + out.stderr[-2000:]


def test_against_triton_random():
    """Triton 3.9 get_shared_bank_conflicts agrees with us whenever a lane moves >= 4 bytes and the
    lanes do not pair; below 4 bytes it may under-count (it ignores the sub-word offset bits, see test
    above) but never over-counts. Paired 8/16-byte accesses (lane 0 or 1 a broadcast): Triton keeps
    phases of 128 bytes of lanes, the hardware merges two lanes per slot (ncu: wavefronts_vs_ncu.md),
    so Triton's implied total, instructions x 128-byte phases x (1 + conflicts), is never below ours
    and is above it on some cases."""
    pytest.importorskip("triton")
    rng = random.Random(7)
    compared = sub_word = paired_over = 0
    for _ in range(300):
        shared, dist, w = random_pair(rng)
        access = shared_access(shared, dist, w)
        if triton_crashes(shared, access.vector_elements, w):
            continue
        ours, theirs = bank_conflicts(shared, dist, w), triton_bank_conflicts(shared, dist, w)
        compared += 1
        if access.paired:
            implied = access.instructions * (access.unit_bytes // 4) * (1 + theirs)
            total = wavefronts(shared, dist, w)
            assert implied >= total, (shared, dist, w)
            paired_over += implied > total
        elif access.vector_bits >= 32:
            assert ours == theirs, (shared, dist, w)
        else:
            assert theirs <= ours, (shared, dist, w)
            sub_word += ours != theirs
    assert compared > 250 and sub_word > 0 and paired_over > 0


def test_triton_bank_conflict_unittest():
    """BankConflictTest.F64MmaV2BSharedLayout (swizzle.json): 0 conflicts for a blocked and an mma-v2
    dot-operand layout over SwizzledShared(vec 4, perPhase 1, maxPhase 4), [4, 16] fp64."""
    from linear_layouts import layouts as catalog
    from linear_layouts.layouts.shared import SwizzledSharedLayout

    shape = [4, 16]
    shared = SwizzledSharedLayout(4, 1, 4, [1, 0]).to_linear(shape)
    blocked = catalog.BlockedLayout([1, 1], [2, 16], [4, 1], [1, 0]).to_linear(shape)
    dot = catalog.DotOperandLayout(1, catalog.NVMMADistributedLayout([2, 0], [4, 1], [8, 8]), 1).to_linear(shape)
    for reg in (blocked, dot):
        assert bank_conflicts(shared, reg, 64) == 0
        assert wavefronts(shared, reg, 64) == simulate_wavefronts(shared, reg, 64)


def test_broadcast_lanes_and_warps():
    """Lanes reading one word cost nothing; broadcast warps still issue their instructions. All lanes on
    one 16-byte vector pair up (lane l asks for lane l ^ 1's address): 2 phases of 16 lanes, not 4 of 8
    (measured: random_129 of the H100 suite, 16-byte loads with lanes 0-7 / 8-15 on one address each,
    64 wavefronts for 32 ld.shared.v4, i.e. 2 per instruction)."""
    dims = {"dim0": 32}
    shared = LinearLayout({"offset": [[1], [2], [4], [8], [16]]}, dims)
    all_same = LinearLayout({"register": [[1], [2], [4], [8], [16]], "lane": [[0]] * 5, "warp": [[0], [0]]}, dims)
    assert wavefronts(shared, all_same, 32) == 32 * 2 == simulate_wavefronts(shared, all_same, 32)
    # every lane stores (the default; stores never pair, ncu: results_paired_h100.json) vs what
    # codegen emits: one lane of one warp stores
    every_lane = wavefronts(shared, all_same, 32, op="store")
    assert every_lane == 32 * 4 == simulate_wavefronts(shared, all_same, 32, op="store")
    assert wavefronts(shared, all_same, 32, op="store", skip_duplicates=True) == 8
    assert simulate_wavefronts(shared, all_same, 32, op="store", skip_duplicates=True) == 8


def test_multi_warp_vectorized_fp8():
    """4 warps, 16-byte vectors of fp8 (4 phases of 8 lanes), plain row-major: conflict-free."""
    rng = random.Random(3)
    log2s = [5, 7]
    for _ in range(20):
        dist = random_distributed(rng, log2s, 2, zero_prob=0.0)
        shared = LinearLayout({"offset": [[0, 1 << i] for i in range(7)] + [[1 << i, 0] for i in range(5)]},
                              {"dim0": 32, "dim1": 128})
        assert wavefronts(shared, dist, 8) == simulate_wavefronts(shared, dist, 8)
        assert shared_access(shared, dist, 8).phases in (1, 2, 4)


def test_bad_input():
    shared = seed_shared(None)
    with pytest.raises(LayoutError, match="dtype as a bit width must be one of"):
        wavefronts(shared, LOAD, 12)
    with pytest.raises(LayoutError, match="op"):
        wavefronts(shared, LOAD, 32, op="copy")
    with pytest.raises(LayoutError, match="LinearLayout"):
        wavefronts([[0, 1]], LOAD, 32)
    with pytest.raises(LayoutError, match="out dims"):
        wavefronts(LinearLayout({"offset": [[1], [2]]}, {"dim0": 4}), LOAD, 32)
    singular = LinearLayout({"offset": COLUMNS + [[1, 0], [2, 0], [4, 0], [4, 0]]}, DIMS, require_surjective=False)
    with pytest.raises(LayoutError, match="one to one"):
        wavefronts(singular, LOAD, 32)
    half_warp = LinearLayout({"register": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 16]],
                              "lane": [[0, 1], [0, 2], [0, 4], [0, 8]]}, DIMS)
    with pytest.raises(LayoutError, match="lane"):
        wavefronts(shared, half_warp, 32)
    with pytest.raises(LayoutError, match="in dims"):
        wavefronts(shared, shared, 32)
    with pytest.raises(LayoutError, match="padding"):
        simulate_wavefronts(shared, LOAD, 32, padding=((3, 1),))


def test_hardware_confirmed_paired_load_vs_triton():
    """Pinned from the H100 ncu run of the GPU suite (random_150, 2026-11-22, gpu_suite.json): an mma v2
    accumulator (fp16, 2 warps) loads from our swizzled layout with ld.shared.v4, lane 1 a broadcast, so
    lanes l and l^2 ask for one address and each instruction takes 2 phases of 16 lanes: ncu 8
    wavefronts. Triton 3.9 estimates 0 conflicts over 4 phases of 8 lanes: 16 (all 17 paired loads of
    the suite: benchmarks/paired_loads_vs_triton.py)."""
    dst = LinearLayout({"register": [[0, 1], [8, 0], [16, 0], [32, 0]],
                        "lane": [[0, 2], [0, 0], [1, 0], [2, 0], [4, 0]], "warp": [[0, 0]]}, {"dim0": 64, "dim1": 4})
    shared = LinearLayout({"offset": [[0, 1], [8, 0], [32, 0], [0, 2], [1, 0], [2, 0], [4, 0], [16, 0]]},
                          {"dim0": 64, "dim1": 4})
    access = shared_access(shared, dst, 16)
    assert access.paired and access.vector_bits == 128 and access.instructions == 4 and access.phases == 2
    assert wavefronts(shared, dst, 16) == simulate_wavefronts(shared, dst, 16) == 8  # = ncu
    pytest.importorskip("triton")
    conflicts = triton_bank_conflicts(shared, dst, 16)
    assert conflicts == 0 and access.instructions * 4 * (1 + conflicts) == 16  # Triton's implied count


def test_triton_estimate_of_one_element_is_refused():
    """A one-element shared layout (a scalar staged through shared memory, as the corpus's paged decode
    attention does) has no offset basis: Gluon's SharedLinearLayout asserted, and ``report`` printed a
    traceback; now it is a LayoutError, which the report's estimate reads as "no estimate"."""
    pytest.importorskip("triton")
    dist = LinearLayout({"register": [], "lane": [[0]] * 5, "warp": [[0]] * 2}, {"dim0": 1})
    shared = LinearLayout({"offset": []}, {"dim0": 1})
    with pytest.raises(LayoutError, match="one-element layout has no offset basis"):
        triton_bank_conflicts(shared, dist, 32)
    from linear_layouts.pipeline.report import analyze_ttgir

    ir = Path(__file__).resolve().parents[1] / "data" / "triton_kernels" / "ir" / "sm_90" / "paged_decode_attention.ttgir"
    assert analyze_ttgir(ir.read_text()).ops


def test_triton_estimate_refuses_what_triton_aborts_on():
    """Triton 3.9 aborts the process when a bank row of vectors exceeds the tensor (8x8 bytes, 4-byte
    vectors: 32 x 4 elements > 64); linear_layouts.triton_model.interop raises LayoutError instead."""
    pytest.importorskip("triton")
    dist = LinearLayout({"register": [[0, 1], [0, 2]], "lane": [[0, 4], [1, 0], [2, 0], [4, 0], [0, 0]], "warp": []},
                        {"dim0": 8, "dim1": 8})
    shared = LinearLayout({"offset": [[0, 1], [0, 2], [0, 4], [1, 0], [2, 0], [4, 0]]}, {"dim0": 8, "dim1": 8})
    assert shared_access(shared, dist, 8).vector_elements == 4
    with pytest.raises(LayoutError, match="aborts"):
        triton_bank_conflicts(shared, dist, 8)


def test_check_distributed_refuses_each_time_and_returns_the_callers_layout():
    """``check_distributed`` caches its checks: a refusal is raised on every call (never cached as a pass),
    and an accepted layout comes back as the very object passed."""
    from linear_layouts.analysis.banks import check_distributed

    half_warp = LinearLayout({"register": [[1]], "lane": [[2], [4], [8], [16]]}, ["dim0"])
    for _ in range(2):
        with pytest.raises(LayoutError, match="needs a 'lane' in dim of size 32"):
            check_distributed(half_warp, "src")
    with pytest.raises(LayoutError, match="shared: in dims must be among"):
        check_distributed(LinearLayout({"offset": [[1]], "lane": [[2], [4], [8], [16], [32]]}, ["dim0"]), "shared")
    with pytest.raises(LayoutError, match="dst"):
        check_distributed([[1]], "dst")
    layout = LinearLayout({"register": [[1]], "lane": [[2], [4], [8], [16], [32]]}, ["dim0"])
    same = LinearLayout({"register": [[1]], "lane": [[2], [4], [8], [16], [32]]}, ["dim0"])
    assert check_distributed(layout, "a") is layout and check_distributed(same, "a") is same
