"""``linear_layouts.target``: the Target value, the known targets, the cost tables, and what a target changes.

The default target (``target=None``) reproduces the package's results before targets existed (the output
hashes of ``tools/output_hashes.py`` check that for every output; here, worked examples); AMD's LDS model
(``target.amd``) is checked twice: its phase masks against AMD's published lane groups, and the closed form
(``analysis.banks``) against the lane-by-lane simulator (``analysis.bank_simulator``) on random 64-lane layouts.
"""

from __future__ import annotations

import dataclasses
import random

import pytest

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.analysis import optimal_swizzle, plan_conversion, shared_access, simulate_wavefronts, wavefronts
from linear_layouts.analysis.bank_simulator import instruction_wavefronts, phase_lanes
from linear_layouts.analysis.simd_tiles import best_instruction
from linear_layouts.layouts import BlockedLayout
from linear_layouts.target import (
    DEFAULT_TARGET, DEVICES, SharedMemory, Target, cost_table, device_name, named_target, target_for_module,
)
from linear_layouts.target.amd import MI300X
from linear_layouts.target.nvidia import A100, B200, H100, H200

# seed 004: a 16x32 fp32 transpose, one warp (benchmarks/harness/smem_cases.py)
DIMS = {"dim0": 16, "dim1": 32}
STORE = LinearLayout({"register": [[1, 0], [2, 0], [4, 0], [8, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]]},
                     DIMS)
LOAD = LinearLayout({"register": [[0, 2], [0, 4], [0, 8], [0, 16]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]]},
                    DIMS)
ROW_MAJOR = LinearLayout({"offset": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [1, 0], [2, 0], [4, 0], [8, 0]]}, DIMS)


# --------------------------------------------------------------------------------------------- the value
def _fields(**changes):
    return dataclasses.replace(H100, **changes)


@pytest.mark.parametrize("field, value", [
    ("lanes", 48), ("lanes", True), ("backend", "rocm"), ("arch", "sm90"), ("arch", "gfx942"), ("device", ""),
    ("features", frozenset({"tensor-cores"})), ("features", {"ldmatrix"}), ("sms", 0),
    ("cta_shared_bytes", 300 * 1024), ("cta_reserved_shared_bytes", -1), ("sm_threads", 2000),
    ("shared", "32 banks"), ("l2_bytes", 0), ("l2_bytes", 50.0),
])
def test_a_target_with_a_bad_fact_is_refused_naming_the_field(field, value):
    with pytest.raises(LayoutError, match=f"Target: {field}"):
        _fields(**{field: value})


@pytest.mark.parametrize("changes, field", [
    (dict(banks=33), "banks"), (dict(bank_bytes=3), "bank_bytes"), (dict(phase_bytes=64), "phase_bytes"),
    (dict(pairs_loads=1), "pairs_loads"), (dict(phase_groups=(("load", 16, (1, 2)),)), "phase_groups"),
    (dict(phase_groups=(("load", 16, (1, 2, 3)),)), "phase_groups"), (dict(phase_groups=(("read", 16, (1, 2, 4)),)),
                                                                         "phase_groups"),
])
def test_a_shared_memory_with_a_bad_fact_is_refused_naming_the_field(changes, field):
    with pytest.raises(LayoutError, match=f"SharedMemory: {field}"):
        dataclasses.replace(SharedMemory(32, 4, 128), **changes)


def test_a_phase_group_beyond_the_warp_is_refused():
    with pytest.raises(LayoutError, match="Target: shared.phase_groups"):
        _fields(shared=SharedMemory(32, 4, 128, phase_groups=(("load", 16, (1, 2, 32)),)))


def test_the_known_targets_facts():
    assert DEFAULT_TARGET is H100 and H100.name == "sm_90 (H100)" and H100.module_target == "cuda:90"
    assert (H100.lanes, H100.shared.banks, H100.shared.bank_bytes, H100.shared.phase_bytes) == (32, 32, 4, 128)
    assert H100.cta_shared_bytes == 232448 == H100.sm_shared_bytes - H100.cta_reserved_shared_bytes
    assert (H100.sm_threads, H100.sm_registers, H100.thread_registers, H100.sms) == (2048, 65536, 255, 132)
    # H200: the H100's SM, its own device (and table); A100: no stmatrix, wgmma, TMA; B200: no wgmma
    # L2 as the driver reports it: the A100's and H100's as NVIDIA's white papers give them, the H200's as its
    # driver reported it on the device (the GPU test checks a known device against its driver)
    assert [t.l2_bytes >> 20 for t in (A100, H100, H200, B200, MI300X)] == [40, 50, 60, 126, 4]
    assert dataclasses.replace(H200, device="H100", l2_bytes=H100.l2_bytes) == H100
    assert A100.has("ldmatrix") and A100.has("cp.async") and not any(A100.has(f) for f in ("stmatrix", "wgmma", "tma"))
    assert B200.has("stmatrix") and B200.has("tma") and not B200.has("wgmma") and B200.sms == 148
    assert (MI300X.lanes, MI300X.backend, MI300X.shared.name, MI300X.module_target) == (64, "hip", "LDS", "hip:gfx942")
    assert MI300X.features == frozenset() and not MI300X.shared.pairs_loads
    assert MI300X.cta_shared_bytes == 64 * 1024 and MI300X.capability is None
    with pytest.raises(LayoutError, match="feature: unknown 'stmatrx'.*did you mean 'stmatrix'"):
        H100.has("stmatrx")


def test_naming_a_target():
    assert named_target() is DEFAULT_TARGET and named_target("sm_90") is H100 and named_target("sm_90a") is H100
    assert named_target("sm_90", "h200") is H200 and named_target(device="A100") is A100
    assert named_target("gfx942") is MI300X and named_target("sm_100") is B200
    assert named_target("sm_86").arch == "sm_86" and not named_target("sm_86").has("stmatrix")
    assert target_for_module("cuda:80") is A100 and target_for_module("cuda:90a") is H100
    assert target_for_module("hip:gfx942:sramecc+:xnack-") is MI300X and target_for_module("") is DEFAULT_TARGET
    with pytest.raises(LayoutError, match="device: A100 is sm_80, not the target sm_90"):
        named_target("sm_90", "A100")
    with pytest.raises(LayoutError, match="device: unknown 'H300'.*known"):
        named_target(device="H300")
    with pytest.raises(LayoutError, match="target must be sm_<cc>"):
        named_target("hopper")
    assert device_name("NVIDIA H100 80GB HBM3") == "H100" and device_name("NVIDIA A100-SXM4-80GB") == "A100"


# ----------------------------------------------------------------------------------------- cost tables
def test_a_device_without_a_table_is_priced_by_the_nearest_same_architecture_first():
    h100 = DEVICES["H100"]
    assert cost_table(H100).costs is h100 and cost_table(H100).label == "H100 table" and cost_table(None).exact
    assert cost_table(H200).costs is DEVICES["H200"] and cost_table(H200).label == "H200 table"
    # no table of their own: the nearest capability (a tie by name: the H100's), then any
    assert [cost_table(t).label for t in (A100, B200, MI300X)] == [
        "H100 table, nearest to A100", "H100 table, nearest to B200", "H100 table, nearest to MI300X"]
    # with a B200 table too: the H200 still takes its architecture's (H100), the A100 the nearer capability
    tables = {"H100": h100, "B200": dataclasses.replace(h100, name="B200"), "A100": dataclasses.replace(h100, name="A100")}
    assert cost_table(H200, tables=tables).costs.name == "H100"
    assert cost_table(B200, tables=tables).exact
    del tables["A100"]
    assert cost_table(A100, tables=tables).costs.name == "H100"  # |90 - 80| < |100 - 80|
    assert cost_table(MI300X, tables={"B200": tables["B200"]}).label == "B200 table, nearest to MI300X"


def test_the_plan_says_which_table_priced_it():
    text_default = plan_conversion(STORE, LOAD, "fp32").explain()
    assert "(analysis.cost_model, H100)" in text_default and str(plan_conversion(STORE, LOAD, "fp32")) == text_default
    assert "(analysis.cost_model, H200)" in plan_conversion(STORE, LOAD, "fp32", target=H200).explain(H200)
    assert "(analysis.cost_model, H100 table, nearest to A100)" in plan_conversion(STORE, LOAD, "fp32",
                                                                                  target=A100).explain(A100)


# ------------------------------------------------------------------------- the default target, as before
def test_the_default_target_reproduces_the_worked_examples():
    """Seed 004 (banks' module doc): 16 store and 256 load wavefronts unswizzled, 16 + 16 swizzled."""
    for target in (None, H100, H200, A100):
        assert wavefronts(ROW_MAJOR, STORE, 32, op="store", target=target) == 16
        assert wavefronts(ROW_MAJOR, LOAD, 32, target=target) == 256
        result = optimal_swizzle(STORE, LOAD, 32, target=target)
        assert (result.store_wavefronts, result.load_wavefronts) == (16, 16)
    assert plan_conversion(STORE, LOAD, "fp32") == plan_conversion(STORE, LOAD, "fp32", target=H100)


def test_a_target_without_stmatrix_stores_with_st_shared():
    """A 16x16 fp16 mma fragment over a row-major tile (simd_tiles' module doc): ldmatrix / stmatrix .x4 on the
    H100; the A100 loads with ldmatrix and stores with st.shared (no stmatrix before sm_90)."""
    dims = {"dim0": 16, "dim1": 16}
    fragment = LinearLayout({"register": [[0, 1], [8, 0], [0, 8]], "lane": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]]},
                            dims)
    row_major = LinearLayout({"offset": [[0, 1], [0, 2], [0, 4], [0, 8], [1, 0], [2, 0], [4, 0], [8, 0]]}, dims)
    best = {(t.arch, op): best_instruction(row_major, fragment, 16, op=op, target=t).instruction
            for t in (H100, A100) for op in ("load", "store")}
    assert best == {("sm_90", "load"): "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
                    ("sm_90", "store"): "stmatrix.sync.aligned.m8n8.x4.shared.b16",
                    ("sm_80", "load"): "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
                    ("sm_80", "store"): "st.shared.b32"}


def test_a_64_lane_layout_needs_a_64_lane_target():
    layout = BlockedLayout([1, 4], [8, 8], [4, 1], [1, 0]).to_linear([32, 32])
    shared = LinearLayout({"offset": [[0, 1 << i] for i in range(5)] + [[1 << i, 0] for i in range(5)]},
                          {"dim0": 32, "dim1": 32})
    with pytest.raises(LayoutError, match="size 32 .one NVIDIA warp.; a 64-lane layout needs a target"):
        wavefronts(shared, layout, 16)
    assert wavefronts(shared, layout, 16, target=MI300X) == simulate_wavefronts(shared, layout, 16, target=MI300X)
    plan = plan_conversion(layout, BlockedLayout([4, 1], [8, 8], [1, 4], [0, 1]).to_linear([32, 32]), "fp16",
                           target=MI300X)
    assert plan.kind.value == "shared memory"  # no shfl.sync on AMD: through LDS
    assert all(not k.startswith(("ldmatrix", "stmatrix")) for k in plan.instruction_counts())


# ------------------------------------------------------------------------------------------ AMD's LDS
def _groups(vector_bytes: int, op: str) -> set[frozenset[int]]:
    return {frozenset(g) for g in phase_lanes([0] * 64, vector_bytes, op=op, target=MI300X)}


def test_the_lds_phases_are_amds_published_lane_groups():
    """CDNA3: b32 in 2 phases of 32 lanes, b64 in 4 of 16, ds_write_b128 in 8 of 8 consecutive lanes,
    ds_read_b128 in 8 of lanes 0-3 + 20-23, 4-7 + 16-19, 8-11 + 28-31, 12-15 + 24-27 (and 32 up)."""
    def runs(n: int) -> set[frozenset[int]]:
        return {frozenset(range(s, s + n)) for s in range(0, 64, n)}

    for vb in (1, 2, 4):
        assert _groups(vb, "load") == _groups(vb, "store") == runs(32)
    assert _groups(8, "load") == _groups(8, "store") == runs(16)
    assert _groups(16, "store") == runs(8)
    pairs = [(0, 20), (4, 16), (8, 28), (12, 24)]
    assert _groups(16, "load") == {frozenset(range(a + h, a + h + 4)) | frozenset(range(b + h, b + h + 4))
                                   for a, b in pairs for h in (0, 32)}


#: units (16 bytes) of each lane bit: phase 0 of a 16-byte write (lanes 0-7) gets units 0-7, of a read
#: (lanes 0-3, 20-23) units 0-3 and, by lane bits 2 and 4, 4 ^ 20 = 16 ... 19: bank groups 0-3 twice
_UNITS = (1, 2, 4, 8, 20, 32)


def _address(lane: int) -> int:
    unit = 0
    for bit, u in enumerate(_UNITS):
        if lane >> bit & 1:
            unit ^= u
    return 16 * unit


def test_a_16_byte_read_conflicts_where_the_write_does_not():
    starts = [_address(lane) for lane in range(64)]
    assert instruction_wavefronts(starts, 16, op="store", target=MI300X) == 8
    assert instruction_wavefronts(starts, 16, op="load", target=MI300X) == 16
    # the same lanes as one distributed layout (fp32, 4 registers = 16 bytes a lane, 2 warps): the closed form
    dist = LinearLayout({"register": [[1], [2]], "lane": [[4 * u] for u in _UNITS], "warp": [[256]]}, {"dim0": 512})
    shared = LinearLayout({"offset": [[1 << i] for i in range(9)]}, {"dim0": 512})
    assert wavefronts(shared, dist, 32, op="store", target=MI300X) == 2 * 8
    assert wavefronts(shared, dist, 32, target=MI300X) == 2 * 16 == simulate_wavefronts(shared, dist, 32,
                                                                                         target=MI300X)


def _random_64_lane_pair(rng: random.Random) -> tuple[LinearLayout, LinearLayout, int]:
    """A random distributed layout of 64 lanes (some broadcast) over a rank-1..2 tensor and a random
    invertible shared layout of it."""
    from linear_layouts.core import f2

    warps = rng.choice([0, 1, 2])
    d = rng.randint(7 + warps, 11)
    cut = rng.randint(0, d)
    log2s = [cut, d - cut] if rng.random() < 0.7 else [d]
    log2s = [x for x in log2s if x] or [d]
    bits = [1 << i for i in range(d)]
    rng.shuffle(bits)
    pick = lambda: 0 if rng.random() < 0.1 else bits.pop()  # noqa: E731
    lanes = [pick() for _ in range(6)]
    warp = [pick() for _ in range(warps)]
    regs = sorted(bits) if rng.random() < 0.5 else bits

    def unflatten(x: int) -> list[int]:
        out = []
        for k in log2s:
            out.append(x & ((1 << k) - 1))
            x >>= k
        return out

    names = {f"dim{i}": 1 << k for i, k in enumerate(log2s)}
    dist = LinearLayout({"register": [unflatten(b) for b in regs], "lane": [unflatten(b) for b in lanes],
                         "warp": [unflatten(b) for b in warp]}, names, require_surjective=False)
    cols = [b for b in regs if b][:rng.randint(0, 4)]  # some registers contiguous in memory: vectors
    units = [1 << i for i in range(d)]
    rng.shuffle(units)
    for c in [u if rng.random() < 0.7 else rng.getrandbits(d) for u in units] + units:  # mostly plain, some xor
        if len(cols) < d and f2.rank(cols + [c]) > len(cols):
            cols.append(c)
    shared = LinearLayout({"offset": [unflatten(c) for c in cols]}, names)
    return shared, dist, rng.choice([8, 16, 32, 64])


def test_the_closed_form_equals_the_simulator_on_the_lds():
    """Random 64-lane accesses on MI300X: ``banks`` (Lemma 9.4 over the LDS phases, read phases spanning
    lane combinations) equals the lane-by-lane count, loads and stores, duplicates skipped or not."""
    rng = random.Random(942)
    seen = set()
    for _ in range(160):
        shared, dist, w = _random_64_lane_pair(rng)
        if not dist.is_surjective():
            continue
        access = shared_access(shared, dist, w, target=MI300X)
        for op in ("load", "store"):
            for skip in (False, True):
                closed = wavefronts(shared, dist, w, op=op, skip_duplicates=skip, target=MI300X)
                assert closed == simulate_wavefronts(shared, dist, w, op=op, skip_duplicates=skip, target=MI300X), \
                    (shared, dist, w, op, skip)
        seen.add(access.unit_bytes)
    assert seen == {4, 8, 16}
