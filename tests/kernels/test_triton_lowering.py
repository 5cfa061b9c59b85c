"""The model of Triton's shared-memory lowering against the PTX Triton 3.9 emits for the corpus
(static instruction inventory, tests/data/triton_kernels/ir/ptx_shared.json), and its parts against
hand-checked cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from linear_layouts.core import f2
from linear_layouts.layouts import BlockedLayout, NVMMADistributedLayout, SliceLayout
from linear_layouts.triton_model.lowering import (
    NO_OP,
    REGISTERS,
    SHARED,
    convert_lowering,
    inter_warp_layout,
    layout_order,
    reduce_lowering,
    reduce_lowering_smem,
    reg_perm_for_divide,
    zero_bases_along,
)
from linear_layouts.core.layout import LinearLayout
from linear_layouts.target import named_target

SM80, SM90 = named_target("sm_80"), named_target("sm_90")

IR = Path(__file__).resolve().parent.parent / "data" / "triton_kernels" / "ir"
PTX = json.loads((IR / "ptx_shared.json").read_text())
#: kernels whose PTX has shared-memory instructions from ops the model leaves out, and those ops
NOT_MODELED: dict[str, str] = {}


#: Triton 3.6's (the GPU machine's) TTGIR for sm_90 and its PTX inventory (benchmarks/gpu_kernels.py --store-ir)
T36 = IR.parent.parent / "triton36_sm90"


def model_inventory(target: str, name: str, *, ttgir: Path | None = None, version: str = "") -> dict[str, int]:
    from linear_layouts.pipeline.report import analyze_ttgir

    text = (ttgir or IR / target / f"{name}.ttgir").read_text()
    report = analyze_ttgir(text, with_triton_estimate=False, triton_version=version)
    out: dict[str, int] = {}
    for op in report.ops:
        if op.kind == "async_copy":
            continue  # cp.async is not an ld/st.shared in the PTX
        for ins in op.triton.stores + op.triton.loads:
            if ins.count == 0:
                continue  # SASS-only accesses (tensormap.replace's expansion): no instruction in the PTX
            key = ins.instruction if "matrix" in ins.instruction else f"{ins.instruction[:2]}.shared.{ins.bytes}B"
            out[key] = out.get(key, 0) + ins.count // report.num_warps
    return dict(sorted(out.items()))


@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
def test_the_model_emits_the_instructions_triton_emits(target):
    """Per kernel, the model's ld/st.shared (by bytes per lane), ldmatrix and stmatrix (by shape) equal
    the PTX's, except in the kernels whose extra shared-memory instructions come from ops the model
    leaves out (NOT_MODELED, none today): every kernel on sm_90 and sm_80."""
    same, different = [], []
    for name, ptx in sorted(PTX[target].items()):
        (same if model_inventory(target, name) == ptx else different).append(name)
    assert sorted(different) == sorted(NOT_MODELED), different
    assert len(same) == len(PTX[target]) - len(NOT_MODELED)  # mxfp8 has no sm_80 build


def test_the_model_of_triton_3_6_emits_the_instructions_triton_3_6_emits():
    """Triton 3.6 (the GPU machine's) reduces across warps through shared memory without conversions
    (partials stored, reloaded per thread, totals stored and loaded: ``reduce_lowering_smem``) and loads a
    scan's carries with the widest vectors that fit: with ``triton_version="3.6.0"`` the model equals 3.6's
    PTX on all 30 kernels it compiles for sm_90; the 3.9 model differs exactly on those ops' kernels."""
    ptx = json.loads((T36 / "ptx_shared.json").read_text())
    assert ptx["triton"] == "3.6.0" and len(ptx["sm_90"]) == 30
    differ_39 = []
    for name, inventory in sorted(ptx["sm_90"].items()):
        assert model_inventory("sm_90", name, ttgir=T36 / f"{name}.ttgir", version="3.6.0") == inventory, name
        if model_inventory("sm_90", name, ttgir=T36 / f"{name}.ttgir") != inventory:
            differ_39.append(name)
    assert differ_39 == ["absmax_atomic", "cross_entropy", "fused_softmax", "layer_norm_bwd_dwdb", "layer_norm_bwd_dx",
                         "layer_norm_fwd", "linear_recurrence_scan", "rms_norm", "sort_rows"]


def test_triton_3_6_reduction_through_shared_memory():
    """A CTA-wide max of 1024 fp32 over 8 warps (``absmax``'s): (1) lane 0 of each warp stores its
    partial at its warp index: 8 stores of one lane, 8 wavefronts; (2) threads 0-7 load the 8 partials
    (one wavefront, in warp 0; the other warps' loads have no active lane) and thread 0 stores the total;
    (3) every thread loads it (one broadcast wavefront per warp)."""
    src = BlockedLayout([1], [32], [8], [0]).to_linear([1024])
    p = reduce_lowering_smem(src, 0, [32], None, SM90)
    assert [(i.instruction, i.count, i.wavefronts) for i in p.stores + p.loads] == [
        ("st.shared.b32", 16, 9), ("ld.shared.b32", 16, 9)]
    # a row sum of a [16, 256] tile over 4 warps along the rows: 64 partials per warp, result per row
    parent = BlockedLayout([1, 4], [2, 16], [1, 4], [1, 0])
    rows = parent.to_linear([16, 256])
    q = reduce_lowering_smem(rows, 1, [32], SliceLayout(1, parent).to_linear([16]), SM90)
    assert q.kind == SHARED and q.stores[0].count == 4 * 8 + 4 * 1 and q.loads[0].count == 4 * 1 + 4 * 8
    # warp-synchronous: nothing in shared memory
    assert reduce_lowering_smem(BlockedLayout([1, 8], [1, 32], [4, 1], [1, 0]).to_linear([16, 256]), 1, [32],
                                None, SM90).kind == NO_OP
    assert layout_order(rows) == [1, 0] and layout_order(BlockedLayout([8, 1], [8, 4], [1, 4], [0, 1])
                                                         .to_linear([64, 64])) == [0, 1]


def test_transpose_uses_stores_of_16_bytes_and_ldmatrix_trans_conflict_free():
    a = BlockedLayout([1, 8], [8, 4], [4, 1], [1, 0]).to_linear([64, 64])
    b = BlockedLayout([8, 1], [4, 8], [1, 4], [0, 1]).to_linear([64, 64])
    p = convert_lowering(a, b, 16, SM90)
    assert p.kind == SHARED and p.reps == 4
    assert [(i.instruction, i.count, i.wavefronts) for i in p.stores + p.loads] == [
        ("st.shared.v4", 16, 64), ("ldmatrix.x4.trans", 16, 64)]
    # before sm_90 there is no stmatrix, and ldmatrix still loads: the same pair
    assert [i.instruction for i in convert_lowering(a, b, 16, SM80).loads] == ["ldmatrix.x4.trans"]
    # fp32 has no ldmatrix.trans: plain vector loads
    p32 = convert_lowering(a, b, 32, SM90)
    assert {i.instruction for i in p32.loads} <= {"ld.shared.v4", "ld.shared.v2", "ld.shared.b32"}


def test_an_ldmatrix_stmatrix_pair_keeps_two_reps_in_the_segment():
    """layer_norm_bwd_dx's legacy candidate (sm_90): 4096 x f16 from 8 to 1 element per thread. With its
    two reps left in the segment (Triton's ``leaveReps``), stmatrix + ldmatrix.trans has no more reps than
    st.shared + ldmatrix, which comes first: Triton 3.9's PTX (st.shared.v4.b32, ldmatrix.x4) and its
    allocation (8192 bytes: the whole tensor in one round); without it, the model took the pair (2 reps,
    4096 bytes)."""
    a = BlockedLayout([8], [32], [8], [0]).to_linear([4096])
    b = BlockedLayout([1], [32], [8], [0]).to_linear([4096])
    p = convert_lowering(a, b, 16, SM90)
    assert (p.reps, p.scratch_bytes) == (1, 8192)
    assert [(i.instruction, i.count, i.wavefronts) for i in p.stores + p.loads] == [
        ("st.shared.v4", 16, 64), ("ldmatrix.x4", 16, 64)]


def test_conversion_kinds():
    a = BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0]).to_linear([32, 32])
    assert convert_lowering(a, a, 16).kind == NO_OP
    swapped = LinearLayout({"register": [[0, 2], [0, 1]] + a.bases["register"][2:], "lane": a.bases["lane"],
                            "warp": a.bases["warp"], "block": []}, a.out_dims)
    assert convert_lowering(a, swapped, 16).kind == REGISTERS


def test_wavefronts_count_every_warp_and_round():
    """A conversion of an [8] fp32 tensor from one element per warp (all lanes hold it) to lanes 0-7:
    each of 8 warps stores one word (1 wavefront) and loads 8 words (1 wavefront)."""
    src = LinearLayout({"register": [], "lane": [[0]] * 5, "warp": [[1], [2], [4]]}, {"dim0": 8})
    dst = LinearLayout({"register": [], "lane": [[1], [2], [4], [0], [0]], "warp": [[0]] * 3}, {"dim0": 8})
    p = convert_lowering(src, dst, 32, SM90)
    assert (p.store_wavefronts, p.load_wavefronts) == (8, 8)


def test_reduction_across_warps_goes_through_one_conversion():
    """Fused softmax's row max: 1024 fp32 over 8 warps, one element per thread per 256: after the
    in-thread and in-warp steps each warp holds one partial; the partials move to lanes 0-7 (one
    st.shared.b32 and one ld.shared.b32 per warp), then a shuffle finishes."""
    src = BlockedLayout([1], [32], [8], [0]).to_linear([1024])
    p = reduce_lowering(src, 0, [32], None, SM90)
    assert [(i.instruction, i.count, i.wavefronts) for i in p.stores + p.loads] == [
        ("st.shared.b32", 8, 8), ("ld.shared.b32", 8, 8)]
    # warp-synchronous: the reduced axis never spans warps
    rows = BlockedLayout([1, 8], [1, 32], [4, 1], [1, 0]).to_linear([16, 256])
    out = SliceLayout(1, BlockedLayout([1, 8], [1, 32], [4, 1], [1, 0])).to_linear([16])
    assert reduce_lowering(rows, 1, [32], out, SM90).kind == NO_OP


def test_reduce_layout_steps():
    L = LinearLayout({"register": [[0, 1], [2, 0]], "lane": [[0, 2], [1, 0]], "warp": [[0, 4], [4, 0]]},
                     {"dim0": 8, "dim1": 8})
    z = zero_bases_along(L, 1, "register")
    assert z.bases["register"] == [[0, 0], [2, 0]] and z.bases["lane"] == [[0, 1], [1, 0]]
    assert z.out_dim_size("dim1") == 4
    w = inter_warp_layout(zero_bases_along(z, 1, "lane"), 1)
    assert w.bases["lane"][0] == [0, 1] and w.bases["warp"][0] == [0, 0]


def test_f2_helpers_follow_triton():
    assert f2.intersection_by_complements([1, 2, 4], [4, 1], 3) == [1, 4]  # unit vectors: b1's order
    assert sorted(f2.intersection_by_complements([3, 4], [1, 2, 4], 3)) == [3, 4]
    assert f2.orthogonal_complement([0b011], 2) == [0b11]
    assert f2.unit_complement([0b011, 0b100], 3) == [0b010]  # bit 1 is no lowest-bit pivot
    a = LinearLayout({"register": [[2], [1]]}, {"dim0": 4})
    perm = reg_perm_for_divide(a, LinearLayout.identity_1d(2, "register", "dim0"), left=True)
    assert perm is not None and perm.action == (1, 0)


@pytest.mark.parametrize("shape,axis,spt,tpw,wpc,order,ptx", [
    # (static PTX inventory of Triton 3.9 for tl.cumsum over that layout, fp32, sm_90)
    ([1024], 0, [4], [32], [4], [0], {"st.shared.4B": 2, "ld.shared.16B": 2}),
    ([2048], 0, [4], [32], [8], [0], {"st.shared.4B": 2, "ld.shared.16B": 4}),
    ([128], 0, [1], [32], [4], [0], {"st.shared.4B": 1, "ld.shared.16B": 1}),
    ([16, 256], 1, [1, 4], [1, 32], [2, 2], [1, 0], {"st.shared.4B": 8, "ld.shared.4B": 8}),
    ([256, 16], 0, [1, 4], [8, 4], [4, 1], [1, 0], {"st.shared.4B": 32, "ld.shared.4B": 124}),
    ([64, 64], 0, [1, 4], [2, 16], [4, 1], [1, 0], {"st.shared.4B": 32, "ld.shared.4B": 124}),
    ([64, 64], 1, [1, 4], [2, 16], [8, 1], [1, 0], {}),
    ([8, 1024], 1, [1, 4], [1, 32], [1, 8], [1, 0], {"st.shared.4B": 8, "ld.shared.16B": 16}),
])
def test_scan_instructions_match_triton(shape, axis, spt, tpw, wpc, order, ptx):
    from linear_layouts.triton_model.lowering import scan_lowering

    layout = BlockedLayout(spt, tpw, wpc, order).to_linear(shape)
    warps = 1
    for w in wpc:
        warps *= w
    p = scan_lowering(layout, axis, [32], SM90)
    inventory = {f"{i.instruction[:2]}.shared.{i.bytes}B": i.count // warps for i in p.stores + p.loads}
    assert inventory == ptx
