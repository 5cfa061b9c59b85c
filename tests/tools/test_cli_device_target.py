"""``linear-layouts report KERNEL.py --device D`` without ``--target``: the kernel file is compiled for D's
architecture (an AMD device for its gfx architecture, an A100 for sm_80), not for the default sm_90."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from linear_layouts.cli import main

KERNEL = Path(__file__).resolve().parents[1] / "data" / "triton_kernels" / "transpose.py"


@pytest.fixture(autouse=True)
def _triton():
    pytest.importorskip("triton")  # compiling the .py needs Triton
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")


@pytest.mark.parametrize("device, header", [
    ("MI300X", "target hip:gfx942, 4 warps x 64 threads"),
    ("A100", "target cuda:80, 4 warps x 32 threads"),
    ("h200", "target cuda:90, 4 warps x 32 threads"),
])
def test_the_device_alone_picks_the_architecture_compiled_for(capsys, device, header):
    assert main(["report", str(KERNEL), "--device", device, "--no-layouts"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("Kernel transpose: ") and header in out.splitlines()[0]


def test_the_device_decides_the_report_api_compile_too():
    from linear_layouts.pipeline.from_file import report_for_file

    report = report_for_file(str(KERNEL), device="A100", with_triton_estimate=False, with_engine=False)
    assert report.target == "cuda:80"
    assert report_for_file(str(KERNEL), with_triton_estimate=False, with_engine=False).target == "cuda:90"


@pytest.mark.parametrize("argv, message", [
    (("--device", "MI300X", "--target", "sm_90"), "--device: MI300X is gfx942, not the target sm_90"),
    (("--device", "MI30X",), "--device: unknown 'MI30X' (did you mean 'MI300X'?)"),
])
def test_a_device_at_odds_with_the_target_exits_2_with_one_line(capsys, argv, message):
    assert main(["report", str(KERNEL), *argv, "--no-layouts"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and message in captured.err and captured.err.count("\n") == 1
