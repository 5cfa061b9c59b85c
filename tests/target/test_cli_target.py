"""The CLI's ``--target`` / ``--device``: they select the ``Target`` every number is computed for, a bad one
exits 2 with one line, and every calibrated time says which cost table priced it."""

from __future__ import annotations

from pathlib import Path

import pytest

from linear_layouts.cli import main

IR = Path(__file__).resolve().parents[1] / "data" / "triton_kernels" / "ir"
SRC, DST = "BlockedLayout([1,8],[4,8],[4,1],[1,0])", "NVMMADistributedLayout([2,0],[4,1],[16,8])"
AMD = "BlockedLayout([1,4],[8,8],[4,1],[1,0])"  # 64 lanes a warp
PLAIN = "SwizzledSharedLayout(1,1,1,[1,0])"


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("argv, message", [
    (("--target", "sm_90", "--device", "A100"), "device: A100 is sm_80, not the target sm_90"),
    (("--device", "H300"), "device: unknown 'H300'"),
    (("--target", "sm90"), "target must be sm_<cc>"),
    (("--target", "gfx942"), "SRC has 32 lanes per warp; a warp of --target gfx942 has 64"),
])
def test_a_bad_target_or_device_exits_2_with_one_line(capsys, argv, message):
    status, out, err = _run(capsys, "convert", SRC, DST, "--shape", "64,64", "--dtype", "fp16", *argv)
    assert status == 2 and out == "" and err.count("\n") == 1 and message in err


def test_the_device_names_the_table_that_priced_the_plan(capsys):
    base = ("convert", SRC, DST, "--shape", "64,64", "--dtype", "fp16")
    assert "(analysis.cost_model, H100):" in _run(capsys, *base)[1]
    assert "(analysis.cost_model, H200):" in _run(capsys, *base, "--device", "H200")[1]
    assert "(analysis.cost_model, H100 table, nearest to B200):" in _run(capsys, *base, "--device", "B200")[1]
    assert "(analysis.cost_model, H100 table, nearest to A100):" in _run(capsys, *base, "--target", "sm_80")[1]


def test_a_64_lane_layout_asks_for_an_amd_target(capsys):
    base = ("banks", PLAIN, AMD, "--shape", "32,32", "--dtype", "fp16")
    status, _, err = _run(capsys, *base)
    assert status == 2 and "pass --target gfx942" in err
    status, out, _ = _run(capsys, *base, "--target", "gfx942")
    # 4 warps x one 8-byte load a lane: 64 lanes x 8 bytes = 4 phases of 16 lanes (LDS b64), no conflict
    assert status == 0 and "load: 16 wavefronts (4 instructions × 4 phases × 1 per phase); brute-force simulation: 16" in out


def test_report_on_each_target(capsys):
    status, out, _ = _run(capsys, "report", str(IR / "sm_80" / "transpose.ttgir"), "--no-layouts")
    assert status == 0 and "(calibrated cost model, H100 table, nearest to A100)" in out
    status, out, _ = _run(capsys, "report", str(IR / "sm_90" / "transpose.ttgir"), "--no-layouts", "--device", "H200")
    assert status == 0 and "(calibrated cost model, H200)" in out
    status, out, _ = _run(capsys, "report", str(IR / "gfx942" / "batched_dot_3d.ttgir"), "--no-layouts")
    assert status == 0 and "no wavefront or time is predicted on hip:gfx942" in out
    assert "wavefronts." not in out and "calibrated cost model" not in out and "The engine's alternative" not in out
    status, _, err = _run(capsys, "report", str(IR / "sm_80" / "transpose.ttgir"), "--target", "sm_90")
    assert status == 2 and "target: sm_90 given, but the kernel's TTGIR is for cuda:80" in err


def test_show_draws_a_64_lane_layout_without_a_target(capsys):
    status, out, err = _run(capsys, "show", AMD, "--shape", "32,32")
    assert status == 0 and err == "" and out


def test_a_compile_names_its_target():
    """The Triton hook's target: the compile's capability (``backend.target.arch``) and, where the driver
    names one, the current device; no GPU here: the architecture's default device."""
    from types import SimpleNamespace

    from linear_layouts.pipeline.triton_hook.stage import compile_target
    from linear_layouts.target import named_target

    assert compile_target(SimpleNamespace(target=SimpleNamespace(arch=80))).arch == "sm_80"
    assert compile_target(SimpleNamespace(target=SimpleNamespace(arch=90))) in (named_target("sm_90"),
                                                                               named_target("sm_90", "H200"))
    assert compile_target(SimpleNamespace(target=SimpleNamespace(arch="gfx942"))) is None
