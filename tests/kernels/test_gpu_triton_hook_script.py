"""The device benchmark of the Triton hook (benchmarks/gpu_triton_hook.py) on the CPU: what it computes
without a GPU -- the launch arguments of a kernel file, the summary and the Markdown of a run -- and its
warm step compiling a corpus kernel (Triton 3.9 here, for sm_90)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("triton")
import gpu_triton_hook as bench  # noqa: E402

from linear_layouts.kernels.spec import load_kernel_file  # noqa: E402


def row(kernel, triton_us, model_us, measured_us, model_differs, measured_differs, gain=None, choice="triton"):
    decision = {"choice": choice, "reason": "measured: x | y", "predicted_gain": gain}
    return {"kernel": kernel, "first_call_s": {"triton": 0.1, "model": 0.2, "measured": 0.3},
            "time": {"us": {"triton": triton_us, "model": model_us, "measured": measured_us}, "inner": 2},
            "model": {"correct": True, "wrong": [], "decision": decision, "binary_differs": model_differs,
                      "ratio": round(model_us / triton_us, 4)},
            "measured": {"correct": True, "wrong": [], "decision": decision, "binary_differs": measured_differs,
                         "ratio": round(measured_us / triton_us, 4)}}


def test_summary_and_markdown():
    rows = [row("a", 10.0, 8.0, 8.0, True, True, 0.2, "ours"), row("b", 10.0, 10.5, 10.0, True, False, 0.1),
            row("c", 5.0, 5.0, 5.05, False, False), {"kernel": "d", "error": "not run: budget"}]
    stats = bench.summary(rows)
    assert stats["timed"] == 3 and stats["measured"]["rewritten"] == 1 and stats["model"]["rewritten"] == 2
    assert stats["measured"]["geomean_triton_over_ours_where_differs"] == 1.25
    assert stats["model"]["slower_than_1.02"] == ["b"] and stats["model"]["sign_right"] == "1 / 2"
    assert stats["measured"]["at_most_1.01"] == 3 and stats["measured"]["max_ratio"] == 1.01
    meta = {"environment": {"date": "today", "gpu": "GPU"}, "repeats": 100, "package_key": "k", "seconds": 1,
            "warm": {"seconds": 2, "jobs": 4, "rows": {"d": {"error": "AssertionError: "}}}}
    text = bench.markdown(meta, rows, {"autotune": {"correct": True}}, stats)
    assert "| a | 10.0 | ours (+20.0%) | 0.8 | ours (measured: x / y) | 0.8 |" in text
    assert "| d | not run: budget |" in text and "autotune**: correct = True" in text and "d: AssertionError" in text


def test_launch_arguments_of_a_kernel_file():
    spec = load_kernel_file(Path(bench.CORPUS) / "transpose.py")
    assert bench.launch_scalars(spec) == {"%M": 4096, "%N": 4096, "%stride_xm": 4096, "%stride_om": 4096}
    assert bench.full_args(spec, ["x", "o", 1, 2, 3, 4]) == ["x", "o", 1, 2, 3, 4, 64, 64]


def test_warm_compiles_the_three_variants(tmp_path, monkeypatch):
    """With the model made to prefer int4_dequant_matmul's rewrite (the warm step is under test)."""
    import linear_layouts.pipeline.kernel_model as kernel_model

    monkeypatch.setattr(kernel_model, "predicted_gain", lambda triton, ours: 0.5)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    monkeypatch.setenv("LINEAR_LAYOUTS_CACHE", str(tmp_path / "ours"))
    found = bench.warm_one(str(Path(bench.CORPUS) / "int4_dequant_matmul.py"), 90)
    assert "error" not in found, found
    assert found["model"]["rewritten"] and found["measured_candidate"] and found["variant_compiled"]
    assert json.dumps(found)
