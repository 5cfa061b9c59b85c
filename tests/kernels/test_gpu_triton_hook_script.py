"""The device benchmark of the Triton hook (benchmarks/gpu_triton_hook.py) on the CPU: what it computes
without a GPU -- the launch arguments of a kernel file (benchmarks/harness/hook_launch.py), the summary and
the Markdown of a run (benchmarks/harness/hook_report.py) -- and its warm step compiling a corpus kernel
(Triton 3.9 here, for sm_90)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("triton")
from harness import CORPUS, hook_launch, hook_report  # noqa: E402

from linear_layouts.kernels.spec import load_kernel_file  # noqa: E402


def row(kernel, triton_us, model_us, measured_us, model_differs, measured_differs, gain=None, choice="triton",
        basis="measured not faster"):
    decision = {"choice": choice, "basis": basis, "reason": "measured: x | y", "predicted_gain": gain}
    if basis.startswith("measured"):
        decision.update(inner=3, triton_quartiles_us=[9.9, 10.0, 10.1], ours_quartiles_us=[7.9, 8.0, 8.1],
                        triton_samples_us=[10.0] * 5, ours_samples_us=[8.0] * 5)
    return {"kernel": kernel, "first_call_s": {"triton": 0.1, "model": 0.2, "measured": 0.3},
            "time": {"us": {"triton": triton_us, "model": model_us, "measured": measured_us}, "inner": 2},
            "model": {"correct": True, "wrong": [], "decision": decision, "binary_differs": model_differs,
                      "ratio": round(model_us / triton_us, 4)},
            "measured": {"correct": True, "wrong": [], "decision": decision, "binary_differs": measured_differs,
                         "ratio": round(measured_us / triton_us, 4)}, "trace": ["k: armed", "k: first launch"]}


def test_summary_and_markdown():
    unarmed = row("e", 4.0, 4.0, 4.0, False, False)
    unarmed["measured"]["decision"] = None  # the hook recorded nothing: said so, with the trace
    rows = [row("a", 10.0, 8.0, 8.0, True, True, 0.2, "ours", "measured faster"),
            row("b", 10.0, 10.5, 10.0, True, False, 0.1), row("c", 5.0, 5.0, 5.05, False, False, None, "triton",
                                                              "no predicted gain"),
            {"kernel": "d", "error": "not run: budget"}, unarmed]
    stats = hook_report.summary(rows)
    assert stats["timed"] == 4 and stats["measured"]["rewritten"] == 1 and stats["model"]["rewritten"] == 2
    assert stats["measured"]["geomean_triton_over_ours_where_differs"] == 1.25
    assert stats["model"]["slower_than_1.02"] == ["b"] and stats["model"]["sign_right"] == "1 / 2"
    assert stats["measured"]["at_most_1.01"] == 4 and stats["measured"]["max_ratio"] == 0.8
    assert stats["measured"]["max_ratio_same_binary"] == 1.01  # Triton's binary kept: noise, counted as 1
    assert stats["measured"]["bases"] == {"measured faster": 1, "measured not faster": 1, "no decision": 1,
                                          "no predicted gain": 1}
    assert stats["measured"]["measured_by_the_hook"] == 2
    meta = {"environment": {"date": "today", "gpu": "GPU"}, "repeats": 100, "package_key": "k", "seconds": 1,
            "warm": {"seconds": 2, "jobs": 4, "rows": {"d": {"error": "AssertionError: "}}}}
    text = hook_report.markdown(meta, rows, {"autotune": {"correct": True}}, stats)
    assert "| a | 10.0 | ours (+20.0%) | 0.8 | ours (measured faster) | 9.9 / 10.0 / 10.1 vs 7.9 / 8.0 / 8.1 " \
           "(5 x 3) | 0.8 |" in text
    assert "| c | 5.0 | Triton's | 1.0 | Triton (no predicted gain) | - | 1.01 |" in text
    assert "- b: measured not faster: measured: x / y" in text
    assert "- e: no decision: the hook recorded no decision" in text and "  - trace: k: armed" in text
    assert "| d | not run: budget |" in text and "autotune**: correct = True" in text and "d: AssertionError" in text
    assert hook_report.one_line(rows[0]).startswith("a: Triton 10.0 us; model 0.8 (ours); measured 0.8 (ours, measured "
                                                    "faster: measured: x | y; samples 9.9 / 10.0 / 10.1 vs")


def test_launch_arguments_of_a_kernel_file():
    spec = load_kernel_file(CORPUS / "transpose.py")
    assert hook_launch.launch_scalars(spec) == {"%M": 4096, "%N": 4096, "%stride_xm": 4096, "%stride_om": 4096}
    assert hook_launch.full_args(spec, ["x", "o", 1, 2, 3, 4]) == ["x", "o", 1, 2, 3, 4, 64, 64]


def test_warm_compiles_the_three_variants(tmp_path, monkeypatch):
    """With the model made to prefer int4_dequant_matmul's rewrite (the warm step is under test)."""
    import linear_layouts.pipeline.kernel_model as kernel_model

    monkeypatch.setattr(kernel_model, "predicted_gain", lambda triton, ours: 0.5)
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    monkeypatch.setenv("LINEAR_LAYOUTS_CACHE", str(tmp_path / "ours"))
    found = hook_launch.warm_one(str(CORPUS / "int4_dequant_matmul.py"), 90)
    assert "error" not in found, found
    assert found["model"]["rewritten"] and found["measured_candidate"] and found["variant_compiled"]
    assert json.dumps(found)


def test_a_decision_and_the_trace_as_the_rows_keep_them():
    from linear_layouts.pipeline.triton_hook.decisions import Basis, Decision
    from linear_layouts.pipeline.triton_hook.log import step

    class Kernel:
        _linear_layouts = Decision("ours", Basis.MEASURED_FASTER, "won", 0.1, (10.0, 11.0, 12.0), (8.0, 8.5, 9.0), 4,
                                   "module {}", "ab")

    found = hook_report.decision_record(Kernel())
    assert found["basis"] == "measured faster" and found["triton_quartiles_us"] == [10.5, 11.0, 11.5]
    assert found["ours_samples_us"] == [8.0, 8.5, 9.0] and found["inner"] == 4 and found["measured_gain"] == 0.2273
    assert json.dumps(found) and hook_report.decision_record(object()) is None
    trace = hook_report.Trace()
    step("k", "armed")
    assert trace.take() == ["k: armed"] and trace.take() == []
    trace.close()
    step("k", "launched")
    assert trace.take() == []
