"""benchmarks/gpu_kernels.py and the workflow GPU scripts on the CPU: prepare compiles corpus kernels to
sm_90 cubins with their launch parameters and the report's predictions, the verdict compares ncu with the
prediction, the results name their device, and the collect step copies only device results."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("triton")

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def scripts():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        yield importlib.import_module("gpu_kernels"), importlib.import_module("gpu_workflow_collect")
    finally:
        sys.path.remove(str(BENCHMARKS))


@pytest.fixture(scope="module")
def plan(scripts, tmp_path_factory):
    gpu_kernels, _ = scripts
    build = tmp_path_factory.mktemp("kernels")
    assert gpu_kernels.main(["--mode", "prepare", "--any-triton", "--only", "transpose,vector_add",
                             "--build", str(build)]) == 0
    return build, json.loads((build / "plan.json").read_text())


def test_prepare_writes_cubins_launch_parameters_and_predictions(plan):
    build, data = plan
    rows = {r["kernel"]: r for r in data["rows"]}
    assert set(rows) == {"transpose", "vector_add"}
    for row in rows.values():
        assert (build / row["cubin"]).read_bytes()[:4] == b"\x7fELF"
        assert row["meta"]["params"] == len(row["params"]) + 2  # the scratch pointers follow the arguments
        assert all(ty != "constexpr" for _, ty in row["params"])
    transpose = rows["transpose"]
    assert transpose["predicted"]["ld"] > 0 and transpose["predicted"]["st"] > 0
    assert transpose["ptx_inventory"] == {k: v for k, v in transpose["predicted"]["model_inventory"].items()
                                          if not k.startswith("cp.async")}
    assert rows["vector_add"]["predicted"]["ld"] == rows["vector_add"]["predicted"]["st"] == 0


def test_verdict_and_results(scripts, plan, tmp_path):
    gpu_kernels, _ = scripts
    _, data = plan
    row = dict(next(r for r in data["rows"] if r["kernel"] == "transpose"))
    p = row["predicted"]
    row["measured"] = {gpu_kernels.LD: float(p["ld"]), gpu_kernels.ST: float(p["st"])}
    assert gpu_kernels.verdict(row) == (True, "exact")
    wrong = dict(row, measured={gpu_kernels.LD: p["ld"] * 2.0, gpu_kernels.ST: float(p["st"])})
    exact, reason = gpu_kernels.verdict(wrong)
    assert not exact and "differ" in reason
    row["exact"], row["verdict"] = True, "exact"
    gpu_kernels.write_results(tmp_path, {"device": "NVIDIA H100", "triton": "Triton 3.6.0"}, [row, wrong])
    text = (tmp_path / "gpu_kernels.md").read_text()
    assert "**Summary: exact (ld and st wavefronts of one launch) on 1 / 2 kernels measured (50%" in text


def test_collect_copies_only_device_results(scripts, tmp_path):
    _, collect = scripts
    out, results = tmp_path / "out", tmp_path / "results"
    results.mkdir()
    for sub, stem, data in (("advice", "gpu_shared_advice", {"environment": {"gpu": "NVIDIA H100 80GB HBM3, 580"}}),
                            ("kernels", "gpu_kernels", {"meta": {"device": "NVIDIA H100 80GB HBM3"}}),
                            ("cute", "gpu_cute", {"environment": {"gpu": "unavailable"}})):
        (out / "files" / sub).mkdir(parents=True)
        (out / "files" / sub / f"{stem}.json").write_text(json.dumps(data))
        (out / "files" / sub / f"{stem}.md").write_text(f"# {stem}\n\n**Summary: {sub}.**\n")
    lines = collect.collect(out, results)
    assert sorted(p.name for p in results.iterdir()) == ["gpu_kernels.json", "gpu_kernels.md",
                                                         "gpu_shared_advice.json", "gpu_shared_advice.md"]
    assert "no device" in lines[2] and "**Summary: advice.**" in lines[0]


def test_rescore_applies_the_current_predictions_to_a_device_run(scripts, plan, tmp_path):
    gpu_kernels, _ = scripts
    build, data = plan
    transpose = next(r for r in data["rows"] if r["kernel"] == "transpose")
    p = transpose["predicted"]
    run = {"meta": {"device": "NVIDIA H100", "triton": "Triton 3.6.0"},
           "rows": [{"kernel": "transpose", "measured": {gpu_kernels.LD: float(p["ld"]), gpu_kernels.ST: float(p["st"])},
                     "predicted": {"ld": 0, "st": 0, "cp_async": 0, "left_out": {}, "unknown_counts": [],
                                   "model_inventory": {}}, "exact": False, "verdict": "stale"}]}
    (tmp_path / "run.json").write_text(json.dumps(run))
    assert gpu_kernels.main(["--mode", "rescore", "--results", str(tmp_path / "run.json"), "--build", str(build),
                             "--out", str(tmp_path / "out")]) == 0
    rescored = json.loads((tmp_path / "out" / "gpu_kernels.json").read_text())
    assert rescored["rows"][0]["exact"] and rescored["rows"][0]["predicted"] == p
    assert "rescored" in (tmp_path / "out" / "gpu_kernels.md").read_text()
