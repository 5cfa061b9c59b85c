"""benchmarks/model_validation.py's logic (benchmarks/harness/validation.py) on the CPU: the split, the sign
rule, the goals' summary, and predicted against (stand-in) measured gains on a build of two corpus kernels
prepared by ``benchmarks/gpu_engine_kernels.py --mode prepare`` (run as a script)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from harness import validation as mv

ROOT = Path(__file__).resolve().parents[2]


def test_the_split_is_a_fixed_hash_of_the_name():
    halves = {name: mv.half(name) for name in ("vector_add", "matmul_fp16", "transpose", "layer_norm_bwd_dwdb")}
    assert set(halves.values()) <= {"fit", "test"} and halves == {n: mv.half(n) for n in halves}
    assert mv.half("vector_add") == ("fit" if __import__("hashlib").sha256(b"vector_add").digest()[0] % 2 == 0 else "test")


def test_the_sign_rule():
    assert mv.sign_right(0.10, 0.05, 0.02) and not mv.sign_right(0.10, -0.03, 0.02)
    assert mv.sign_right(0.0, 0.005, 0.02) and mv.sign_right(0.0, -0.04, 0.02)  # not acted on, not a loss
    assert not mv.sign_right(0.0, 0.05, 0.02)  # a gain the model missed
    assert not mv.sign_right(0.03, 0.004, 0.02)  # acted on, no gain beyond the noise


def test_the_summary_checks_each_goal():
    rows = [{"kernel": "a", "half": "fit", "predicted": 0.10, "measured": 0.04, "chosen": True},
            {"kernel": "b", "half": "test", "predicted": 0.0, "measured": -0.03, "chosen": False},
            {"kernel": "c", "half": "test", "predicted": 0.05, "measured": -0.03, "chosen": True}]
    s = mv.summary(rows, 0.02)
    assert s["fit"]["overstated_2x"] == ["a"] and s["fit"]["max_error_points"] == 6.0
    assert s["test"]["sign_right"] == 0.5 and s["test"]["chosen_slower_than_2pct"] == ["c"]
    assert s["all"]["rewrites"] == 3 and s["all"]["within_5_points"] == pytest.approx(1 / 3)  # 6, 3, 8 points


def test_predictions_on_a_prepared_build(tmp_path):
    pytest.importorskip("triton")
    build = tmp_path / "build"
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu_engine_kernels.py"), "--mode", "prepare",
                          "--any-triton", "--every-candidate", "--only", "layer_norm_bwd_dwdb,vector_add",
                          "--build", str(build)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    plan = json.loads((build / "plan.json").read_text())
    rows = [dict(r, result={"correct": True, "triton_us": 10.0, "ours_us": 9.9, "ratio": 0.99})
            for r in plan["rows"] if "ours" in r]
    assert [r["kernel"] for r in rows] == ["layer_norm_bwd_dwdb"]
    [row] = rows
    assert row["triton"]["ptx_global"] == {"ld.global.16B": 8, "st.global.2B": 2}  # the device's Triton's PTX
    assert row["ours"]["ptx_global"] == {"ld.global.16B": 8, "st.global.16B": 2}
    choice = row["model_choice"]  # the model's own choice (no grid): this rewrite where its gain reaches MIN_GAIN
    assert choice["chooses_this"] == (choice["gain"] >= 0.02) and row["predicted_gain"]["table"] == "H200"
    [p] = mv.predictions(build, {"rows": rows})
    assert p["measured"] == pytest.approx(0.01) and p["predicted"] == pytest.approx(row["predicted_gain"]["gain"], abs=1e-4)
    assert p["inventory_triton_matches"] and p["inventory_ours_matches"] and p["narrowed"] == []
    assert p["concurrent"] == [1, 1]  # 32 CTAs on 132 SMs: one each, so shared and global time add up
    doc = {"date": "d", "predictions": [p], "summary": mv.summary([p], 0.02), "results": "r", "build": "b",
           "device": "GPU"}
    text = mv.markdown(doc)
    assert "| layer_norm_bwd_dwdb |" in text and "sign right" in text
