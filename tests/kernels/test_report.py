"""The kernel report: execution counts from the TTGIR's loops, the report of every corpus kernel, its
text and HTML, and the ``linear-layouts report`` command."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from linear_layouts.core.errors import LayoutError
from linear_layouts.triton_model.ir_text import parse_module
from linear_layouts.triton_model.trips import grid_op_counts, op_counts

DATA = Path(__file__).resolve().parent.parent / "data" / "triton_kernels"
IR = DATA / "ir"


def test_counts_follow_loop_bounds_program_ids_and_conditions():
    m = parse_module('''module {
  tt.func public @k(%n: i32, %rows: i32) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c64 = arith.constant 64 : i32
    %pid = tt.get_program_id x : i32
    %np = tt.get_num_programs x : i32
    %k = arith.divsi %n, %c64 : i32
    %0 = scf.for %i = %c0 to %k step %c1 iter_args(%a = %c0) -> (i32)  : i32 {
      %1 = arith.addi %a, %i : i32
      scf.yield %1 : i32
    }
    scf.for %r = %pid to %rows step %np  : i32 {
      %2 = arith.muli %r, %r : i32
    }
    %c = arith.cmpi slt, %pid, %c1 : i32
    scf.if %c {
      %3 = arith.subi %n, %c1 : i32
    }
    tt.return
  }
}''')
    fn = m.functions[0]
    names = {op.results[0]: op for op in fn.walk() if op.results}
    one = op_counts(fn, {"%n": 256, "%rows": 10}, program_id=(1, 0, 0), num_programs=(4, 1, 1))
    assert one[id(names["%1"])] == 4  # 256 / 64 iterations
    assert one[id(names["%2"])] == 3  # rows 1, 5, 9
    assert one[id(names["%3"])] == 0  # pid 1 is not < 1
    grid = grid_op_counts(fn, {"%n": 256, "%rows": 10}, (4,))
    assert grid[id(names["%1"])] == 16 and grid[id(names["%2"])] == 10 and grid[id(names["%3"])] == 1


def test_counts_in_a_data_dependent_loop_are_unknown():
    text = (IR / "sm_90" / "layer_norm_bwd_dx.ttgir").read_text()
    fn = parse_module(text).functions[0]
    counts = grid_op_counts(fn, {"%stride": 4096, "%N": 4096}, (8,))
    cas = [op for op in fn.walk() if op.name == "tt.atomic_cas"]
    assert cas and all(counts[id(op)] is None for op in cas)
    reduces = [op for op in fn.walk() if op.name == "tt.reduce"]
    assert [counts[id(op)] for op in reduces] == [8, 8]


def _analyze(target: str, name: str):
    from linear_layouts.pipeline.report import analyze_ttgir

    return analyze_ttgir((IR / target / f"{name}.ttgir").read_text(), with_triton_estimate=False)


@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
def test_every_corpus_kernel_gets_a_report(target):
    """Every layout of every NVIDIA TTGIR resolves and every op is either predicted or listed with a reason."""
    from linear_layouts.present.reports.kernel import kernel_report_text

    for path in sorted((IR / target).glob("*.ttgir")):
        report = _analyze(target, path.stem)
        assert report.layouts, path.stem
        assert all(entry.linear for entry in report.layouts), path.stem
        assert not [u for u in report.unmodeled if u.reason.startswith("layout not understood")], path.stem
        text = kernel_report_text(report)
        assert report.name in text and "wavefronts" in text


def test_the_transpose_report():
    report = _analyze("sm_90", "transpose")
    (op,) = report.ops
    assert (op.kind, op.src, op.dst, op.loc.line) == ("convert_layout", "#blocked1", "#blocked", 12)
    assert [i.instruction for i in op.triton.stores + op.triton.loads] == ["st.shared.v4", "ldmatrix.x4.trans"]
    assert (op.triton.store_wavefronts, op.triton.load_wavefronts) == (64, 64)
    assert op.ours is not None and op.ours.kind == "shared memory"
    assert report.total("store_wavefronts") == 64 and not report.unmodeled


def test_wgmma_and_cp_async_are_reported_for_what_they_are():
    report = _analyze("sm_90", "matmul_fp16")
    kinds = [op.kind for op in report.ops]
    assert kinds.count("async_copy") == 6 and kinds.count("convert_layout") == 1
    assert [u.op for u in report.unmodeled] == ["ttng.warp_group_dot"]
    assert "async proxy" in report.unmodeled[0].reason


def test_html_page_has_the_tables_and_pictures():
    from linear_layouts.present.reports.kernel import kernel_report_html

    page = kernel_report_html(_analyze("sm_90", "transpose"))
    assert page.startswith("<!doctype html>") and page.count("<svg") >= 2
    assert "ldmatrix.x4.trans" in page and "#blocked1" in page
    assert "<svg" not in kernel_report_html(_analyze("sm_90", "transpose"), pictures=False)


def test_report_command_on_a_kernel_file_and_a_ttgir(tmp_path, capsys):
    pytest.importorskip("triton")  # compiling the .py needs Triton; the TTGIR needs nothing
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    from linear_layouts.cli import main

    assert main(["report", str(DATA / "transpose.py"), "--target", "sm_90", "--no-layouts"]) == 0
    out = capsys.readouterr().out
    assert "Kernel transpose" in out and "Per launch" in out and "4096" in out  # 64 x 64 CTAs, one convert each
    html = tmp_path / "r.html"
    assert main(["report", str(IR / "sm_80" / "attention_fwd.ttgir"), "--format", "html", "-o", str(html)]) == 0
    assert "attention_fwd_kernel" in html.read_text()
    assert main(["report", str(tmp_path / "missing.ttgir")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_report_without_an_attribute_parser_says_what_is_missing(monkeypatch):
    import linear_layouts.triton_model.encodings as layouts
    from linear_layouts.pipeline.report import analyze_ttgir

    def missing():
        raise LayoutError("reading TTGIR layouts needs the TTGIR attribute parser (linear_layouts.layouts.ttgir)")

    monkeypatch.setattr(layouts, "default_resolver", missing)
    with pytest.raises(LayoutError, match="needs the TTGIR attribute parser"):
        analyze_ttgir((IR / "sm_90" / "vector_add.ttgir").read_text())


def test_amd_reports_read_the_layouts_and_list_lds_traffic_as_not_modeled():
    report = _analyze("gfx942", "matmul_fp16")
    assert report.threads_per_warp == 64 and not report.ops
    assert report.unmodeled and all("AMD" in u.reason for u in report.unmodeled)
    assert any(entry.name == "#mma" for entry in report.layouts)


def test_the_report_command_covers_the_whole_corpus():
    """CI runs the report (text, with the engine's alternative from the sibling .ttir) on every sm_90
    TTGIR of the corpus; no Triton needed (the layouts are read by linear_layouts.layouts.ttgir)."""
    from linear_layouts.pipeline.from_file import report_for_file
    from linear_layouts.present.reports.kernel import kernel_report_text

    ran = 0
    for path in sorted((IR / "sm_90").glob("*.ttgir")):
        report = report_for_file(str(path), with_triton_estimate=False)
        assert report.engine is not None, path.stem
        ran += report.engine.ran
        text = kernel_report_text(report, layouts=False)
        assert "The engine's alternative" in text
    assert ran >= 29  # all but the 366-op sort (above the engine limit of a report)


def test_linear_layouts_are_named_by_the_simplest_gluon_class_that_produces_them():
    from linear_layouts.layouts import DotOperandLayout, NVMMADistributedLayout

    report = _analyze("sm_90", "mxfp4_matmul")
    by_name = {entry.name: entry for entry in report.layouts}
    assert isinstance(by_name["#linear2"].recognized, DotOperandLayout)
    assert isinstance(by_name["#linear3"].recognized, NVMMADistributedLayout)
    assert by_name["#mma"].recognized is None  # already a Gluon class


def test_pipelined_copies_share_one_row_with_their_runs_summed():
    from linear_layouts.present.reports.kernel import op_rows

    report = _analyze("sm_90", "matmul_fp16")
    rows = op_rows(report)
    assert [r[1] for r in rows] == ["async_copy ×3", "async_copy ×3", "convert_layout"]
    assert [r[0] for r in rows] == ["1", "2", "7"]     # each row keeps the number of its first op
    counted = dataclasses.replace(report, counted=True, ops=tuple(
        dataclasses.replace(op, count=c) for op, c in zip(report.ops, (512, 512, 512, 512, 32768, 32768, 512))))
    assert [r[12] for r in op_rows(counted)] == ["33792", "33792", "512"]
    unknown = dataclasses.replace(counted, ops=(dataclasses.replace(counted.ops[0], count=None),) + counted.ops[1:])
    assert op_rows(unknown)[0][12] == "?"


def test_the_report_names_the_edit_for_an_operand_stored_the_wrong_way_round():
    """int8 B [K, N] loaded N-contiguous and stored for wgmma, which reads 8-bit operands K-major only."""
    from linear_layouts.analysis.shared_advice import Consumer, suggest_shared_layout
    from linear_layouts.layouts import BlockedLayout
    from linear_layouts.pipeline.advice import suggest_edits
    from linear_layouts.present.reports.kernel import kernel_report_text

    report = _analyze("sm_90", "int8_matmul")
    (edit,) = [e for e in suggest_edits(report) if e.subject.startswith("local_alloc")]
    op = report.ops[edit.row - 1]
    assert (op.kind, op.src, op.triton.store_wavefronts) == ("local_alloc", "#blocked1", 2048)
    assert "gl.BlockedLayout(size_per_thread=[16, 1], threads_per_warp=[4, 8], warps_per_cta=[1, 4], order=[0, 1])" \
        in edit.change and "wgmma operand B" in edit.subject
    k_major = BlockedLayout([16, 1], [4, 8], [1, 4], [0, 1]).to_linear([64, 128])
    assert edit.after_wavefronts == suggest_shared_layout(k_major, Consumer.wgmma(1), "i8").best.store_wavefronts == 64
    assert edit.before_ns == op.triton_time() and edit.after_ns < edit.before_ns / 10
    text = " ".join(kernel_report_text(report).split())
    assert "What to change" in text and "2048 -> 64 wavefronts" in text


def test_a_convert_layout_our_plan_does_cheaper_gets_its_gluon_shared_layout():
    from linear_layouts.pipeline.advice import suggest_edits
    from linear_layouts.spec import parse_spec

    report = _analyze("sm_90", "row_sum")
    (edit,) = suggest_edits(report)
    op = report.ops[edit.row - 1]
    assert edit.after_wavefronts == op.ours.wavefronts < edit.before_wavefronts == op.triton.wavefronts
    layout = edit.change.split("laid out as ")[1].split(": in Gluon")[0]
    assert parse_spec(layout).value.to_linear([16]).bases["offset"] == op.ours.shared_layout.bases["offset"]


def test_the_engines_alternative_is_shown_only_when_predicted_faster():
    from linear_layouts.pipeline.engine_compare import EngineComparison, comparison_lines

    slower = EngineComparison(1, 0, 128, ours_conversions=2, ours_wavefronts=162, triton_ns=100.0, ours_ns=130.0)
    (line,) = comparison_lines(slower, 0.02)
    assert line.startswith("Triton's choice is already the best we know") and "162" in line and "128" in line
    faster = EngineComparison(3, 1, 2704, ours_conversions=1, ours_wavefronts=512, triton_ns=2033.0, ours_ns=385.0)
    assert faster.faster(0.02) and any(l.startswith("Our engine") for l in comparison_lines(faster, 0.02))
    assert not EngineComparison(1, 0, 128, ours_wavefronts=128, triton_ns=100.0, ours_ns=99.0).faster(0.02)


def test_counts_of_one_are_singular_in_the_text_and_the_page():
    from linear_layouts.present.reports.kernel import kernel_report_html, kernel_report_text

    report = _analyze("sm_90", "transpose")
    assert len(report.ops) == 1 and report.num_warps == 4
    text = kernel_report_text(report, layouts=False)
    assert "4 warps x 32 threads" in text and "(1 op;" in text and "1 ops" not in text
    one = dataclasses.replace(report, num_warps=1)
    assert "1 warp x 32 threads" in kernel_report_text(one, layouts=False)
    assert "1 warp × 32 threads" in kernel_report_html(one, pictures=False)
