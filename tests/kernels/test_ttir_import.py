"""The TTIR of every corpus kernel imported into the engine's tile IR, and the engine's alternative
compared with Triton's TTGIR."""

from __future__ import annotations

from pathlib import Path

import pytest

from linear_layouts.engine import propagate
from linear_layouts.engine.propagate import check_consistent
from linear_layouts.triton_model.ir_text import parse_module
from linear_layouts.pipeline.ttir_import import UNKNOWN_STRIDE, import_ttir

IR = Path(__file__).resolve().parent.parent / "data" / "triton_kernels" / "ir"
TTIR = sorted((IR / "sm_90").glob("*.ttir"))
#: what the import leaves out, per kernel (stated in ImportedProgram.unmodeled)
LEFT_OUT = {
    "batched_dot_3d": {"tt.dot"}, "histogram": {"tt.histogram"}, "layer_norm_bwd_dx": {"scf.while"}, "mxfp4_matmul": {"tt.dot_scaled"},
    "mxfp8_matmul": {"tt.dot_scaled"}, "tma_persistent_matmul": {"tt.descriptor_load", "tt.descriptor_store"},
}


def _import(name: str):
    ttgir = parse_module((IR / "sm_90" / f"{name}.ttgir").read_text())
    return import_ttir(parse_module((IR / "sm_90" / f"{name}.ttir").read_text()), cc=90, num_warps=ttgir.num_warps)


@pytest.mark.parametrize("path", TTIR, ids=[p.stem for p in TTIR])
def test_every_corpus_ttir_imports_and_states_what_it_leaves_out(path):
    imported = _import(path.stem)
    assert imported.program.ops
    left = {op for op, _, _ in imported.unmodeled}
    assert left <= LEFT_OUT.get(path.stem, set()), left
    assert all(reason for _, _, reason in imported.unmodeled)


def test_matmul_imports_as_loads_a_wgmma_dot_and_a_store_with_the_strides_of_its_pointers():
    imported = _import("matmul_fp16")
    ops = imported.program.ops
    pointers = [op for op in ops if op.kind == "pointer"]
    assert [op.attr("arg") for op in pointers] == ["a_ptr", "b_ptr", "c_ptr"]
    # stride 1 along the columns (Triton specializes stride_ak = 1 to a constant), run-time row strides
    assert [op.attr("strides") for op in pointers] == [(UNKNOWN_STRIDE, 1)] * 3
    (dot,) = [op for op in ops if op.kind == "dot"]
    assert dot.attr("mma_version") == 3 and imported.program.num_warps == 8
    assert [op.kind for op in ops].count("store") == 1 and imported.loops == 1


def test_the_engine_lays_out_imported_programs_consistently():
    for name in ("transpose", "fused_softmax", "row_sum", "rope_split_join", "gather_columns", "layer_norm_fwd"):
        result = propagate(_import(name).program)
        assert check_consistent(result) == [], name


def test_the_transpose_needs_one_conversion_on_both_sides():
    """Loading the tile in the transposed layout instead costs 4x the load requests, each warp fetching
    the sectors the others fetch too (``anchors.global_cost``): the engine keeps the conversion."""
    from linear_layouts.pipeline.engine_compare import compare_with_engine
    from linear_layouts.pipeline.report import analyze_ttgir

    report = analyze_ttgir((IR / "sm_90" / "transpose.ttgir").read_text(), with_triton_estimate=False)
    c = compare_with_engine(report, parse_module((IR / "sm_90" / "transpose.ttir").read_text()))
    assert (c.triton_conversions, c.ours_conversions) == (1, 1)
    assert c.triton_wavefronts == 128 and c.ours_wavefronts > 0 and c.ran
    assert "convert_layout" in c.program_text


def test_large_programs_are_imported_but_not_propagated():
    from linear_layouts.pipeline.engine_compare import compare_with_engine
    from linear_layouts.pipeline.report import analyze_ttgir

    report = analyze_ttgir((IR / "sm_90" / "sort_rows.ttgir").read_text(), with_triton_estimate=False)
    c = compare_with_engine(report, parse_module((IR / "sm_90" / "sort_rows.ttir").read_text()), max_ops=50)
    assert not c.ran and "above the 50-op limit" in c.error


def test_strides_through_division_and_scaling():
    """rope: ``cos_ptr + (rows // n_heads)[:, None] * (D // 2) + half[None, :]``: a run-time row stride
    (the division) scaled by a constant stays a run-time stride, the column stride is 1; with those
    strides the engine, like Triton, needs no conversion around the split / join."""
    imported = _import("rope_split_join")
    strides = [op.attr("strides") for op in imported.program.ops if op.kind == "pointer"]
    assert strides == [(128, 1), (UNKNOWN_STRIDE, 1), (UNKNOWN_STRIDE, 1), (128, 1)]
    assert propagate(imported.program).conversions == ()
