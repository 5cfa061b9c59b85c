"""``linear-layouts report``: one report prices everything on the one target / device it names (the op rows
and "The engine's alternative" alike), and a layout-free TTIR is refused instead of reported as an empty
4-warp kernel."""

from __future__ import annotations

from pathlib import Path

import pytest

from linear_layouts.cli import main
from linear_layouts.core.errors import LayoutError
from linear_layouts.pipeline.from_file import analysis_target, report_for_file
from linear_layouts.pipeline.report import KernelReport, SharedOp
from linear_layouts.triton_model.lowering import NO_OP, REGISTERS, SHARED

DATA = Path(__file__).resolve().parent.parent / "data" / "triton_kernels"
IR = DATA / "ir"
MATMUL_TTGIR = IR / "sm_90" / "matmul_fp16.ttgir"
MATMUL_TTIR = IR / "sm_90" / "matmul_fp16.ttir"
ATTENTION_PY = DATA / "attention_fwd.py"
DEVICES = ("H100", "H200")


def _moves_data(op: SharedOp) -> bool:
    """An op the engine comparison counts on Triton's side: a conversion that moves data between threads,
    or a register <-> shared staging."""
    return (op.kind == "convert_layout" and op.triton.kind not in (NO_OP, REGISTERS)) or (
        op.kind in ("local_alloc", "local_store", "local_load") and op.triton.kind == SHARED)


def _expected_alternative(report: KernelReport, device: str) -> tuple[float, float]:
    """(Triton's, ours) ns of the engine comparison priced on ``device``'s table: Triton's side is the sum of
    the op rows' times of the ops that move data; ours, the single shared-memory plan the engine makes on
    these kernels, priced by ``cost_model.shared_time_ns`` on the same table."""
    from linear_layouts.analysis.cost_model import shared_time_ns

    target = analysis_target(report.target, None, device)
    engine = report.engine
    assert engine is not None and engine.ran and engine.ours_kinds == (SHARED,)
    triton = sum(op.triton_time(target) or 0.0 for op in report.ops if _moves_data(op))
    return triton, shared_time_ns(engine.ours_wavefronts, False, report.num_warps, target=target)


def _reports(path: Path) -> dict[str, KernelReport]:
    return {device: report_for_file(str(path), device=device, with_triton_estimate=False) for device in DEVICES}


def _check_priced_per_device(reports: dict[str, KernelReport]) -> None:
    for device, report in reports.items():
        triton, ours = _expected_alternative(report, device)
        assert report.engine.triton_ns == pytest.approx(triton)
        assert report.engine.ours_ns == pytest.approx(ours)
    h100, h200 = reports["H100"].engine, reports["H200"].engine
    assert (h100.triton_ns, h100.ours_ns) != (h200.triton_ns, h200.ours_ns)


def test_a_ttgir_alternative_is_priced_on_the_device_of_the_op_rows():
    _check_priced_per_device(_reports(MATMUL_TTGIR))


def test_a_kernel_file_alternative_is_priced_on_the_device_of_the_op_rows():
    pytest.importorskip("triton")
    _check_priced_per_device(_reports(ATTENTION_PY))


@pytest.mark.parametrize("device", DEVICES)
def test_the_printed_alternative_agrees_with_the_printed_op_row(capsys, device):
    """matmul_fp16's one conversion is the comparison's whole Triton side: the alternative's "ours against
    Triton's" are the op row's "ns Triton / ours"."""
    assert main(["report", str(MATMUL_TTGIR), "--no-layouts", "--no-triton-estimate", "--device", device]) == 0
    out = " ".join(capsys.readouterr()[0].split())
    report = report_for_file(str(MATMUL_TTGIR), device=device, with_triton_estimate=False)
    target = analysis_target(report.target, None, device)
    (conversion,) = [op for op in report.ops if _moves_data(op)]
    triton, ours = conversion.triton_time(target), conversion.ours_time(target)
    assert f"ns Triton / ours: {triton:.0f} / {ours:.0f}" in out
    assert f"({ours:.0f} ns against Triton's {triton:.0f} ns per CTA)" in out


def test_a_ttir_is_refused_by_the_api():
    with pytest.raises(LayoutError, match=r"matmul_fp16\.ttir'?: layout-free TTIR .* needs the kernel's TTGIR"):
        report_for_file(str(MATMUL_TTIR))


def test_a_dump_ending_in_its_ttir_is_refused(tmp_path):
    dump = tmp_path / "dump.log"
    dump.write_text("// -----// IR Dump After Inliner (inline) ('builtin.module' operation) //----- //\n"
                    + MATMUL_TTIR.read_text())
    with pytest.raises(LayoutError, match="layout-free TTIR"):
        report_for_file(str(dump))


def test_a_ttir_is_refused_by_the_cli_with_one_line(capsys):
    status = main(["report", str(MATMUL_TTIR)])
    out, err = capsys.readouterr()
    assert status == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert "matmul_fp16.ttir" in err and "layout-free TTIR" in err
    assert "TTGIR" in err and 'asm["ttgir"]' in err and "TRITON_KERNEL_DUMP" in err and ".py" in err


@pytest.mark.parametrize("name", ["matmul_fp16.ttgir", "transpose.ttgir", "attention_fwd.ttgir"])
def test_a_ttgir_is_still_reported(capsys, name):
    from linear_layouts.triton_model.ir_text import parse_module

    path = IR / "sm_90" / name
    assert main(["report", str(path), "--no-triton-estimate"]) == 0
    out = capsys.readouterr()[0]
    warps = parse_module(path.read_text()).num_warps
    assert f"target cuda:90, {warps} warps" in out and "Layouts (0)" not in out
