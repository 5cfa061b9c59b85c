"""benchmarks/gpu_kernels.py and the workflow GPU scripts on the CPU: prepare compiles corpus kernels to
sm_90 cubins with their launch parameters and the report's predictions, the verdict compares ncu with the
prediction, the results name their device, and the collect step (benchmarks/harness/collect.py) copies only
device results."""

from __future__ import annotations

import importlib
import json

import pytest

pytest.importorskip("triton")
from harness import collect as collect_module  # noqa: E402


@pytest.fixture(scope="module")
def scripts():
    yield importlib.import_module("gpu_kernels"), collect_module


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


def test_launch_grids_and_their_predictions(scripts, plan):
    """1 CTA, one wave and the full grid, each predicted for exactly the CTAs launched."""
    gpu_kernels, _ = scripts
    assert gpu_kernels.launch_grids((4, 49, 16)) == [("cta1", (1, 1, 1)), ("wave", (4, 33, 1)), ("full", (4, 49, 16))]
    assert gpu_kernels.launch_grids((1,)) == [("cta1", (1, 1, 1))]
    _, data = plan
    transpose = next(r for r in data["rows"] if r["kernel"] == "transpose")
    one, wave, full = transpose["variants"]
    assert (one["ctas"], wave["ctas"], full["ctas"]) == (1, 128, 4096)
    for v in (wave, full):  # every CTA of the transpose moves the same tile
        assert v["predicted"]["ld"] == v["ctas"] * one["predicted"]["ld"] > 0
    assert full["predicted"]["st"] == transpose["predicted"]["st"]


def test_measure_repeats_every_grid_and_judges_the_one_cta_launch(scripts, plan, tmp_path, monkeypatch):
    """The device step with ncu replaced by counts as the 16:12 run saw them (the full transpose +1%):
    every grid launched `repeats` times in one ncu process, min and spread recorded, exact per CTA."""
    gpu_kernels, _ = scripts
    from harness.workflow import Deadline

    build, data = plan
    rows = {r["kernel"]: r for r in data["rows"]}
    seen = {}

    def fake_ncu(child, regex, metrics, launch_count, timeout):
        items = child[child.index("--launch") + 1].split(",")
        seen["items"] = items
        launches = []
        for i, item in enumerate(items):
            name, grid = item.split("@")
            ctas = 1
            for g in grid.split("."):
                ctas *= int(g)
            p = next(v for v in rows[name]["variants"] if v["ctas"] == ctas)["predicted"]
            extra = 0 if ctas == 1 else 2693 + i % 3  # the full and wave launches count a little more
            launches.append({"kernel": rows[name]["name"], "metrics": {gpu_kernels.LD: float(p["ld"] + extra),
                                                                      gpu_kernels.ST: float(p["st"])}})
        return dict(rc=0, seconds=1.0, launches=launches, tail="")

    env = {"date": "2026-11-26 17:05 UTC", "gpu": "NVIDIA H100 80GB HBM3"}
    monkeypatch.setattr(gpu_kernels, "start_measure",
                        lambda args: (Deadline(args.budget), build, data, env))
    monkeypatch.setattr(gpu_kernels, "check_launches", lambda build, names, deadline: {n: "ok" for n in names})
    monkeypatch.setattr(gpu_kernels, "available_metrics", lambda timeout: set())
    monkeypatch.setattr(gpu_kernels, "run_ncu", fake_ncu)
    assert gpu_kernels.main(["--mode", "measure", "--budget", "60", "--out", str(tmp_path), "--repeats", "3"]) == 0
    assert len(seen["items"]) == 3 * (3 + 2)  # transpose: 1 CTA, a wave, full; vector_add: 1 CTA, full (97 CTAs)
    assert seen["items"][:4] == ["transpose@1.1.1"] * 3 + ["transpose@64.2.1"]
    out = {r["kernel"]: r for r in json.loads((tmp_path / "gpu_kernels.json").read_text())["rows"]}
    full = next(v for v in out["transpose"]["launches"] if v["name"] == "full")
    assert len(full["counts"]) == 3 and full["spread"][gpu_kernels.LD] == 2
    assert out["transpose"]["measured"][gpu_kernels.LD] == rows["transpose"]["predicted"]["ld"] + 2693
    assert out["transpose"]["exact"] and out["transpose"]["verdict"].startswith("exact per CTA; full ld +1.0% (+0.6575 per CTA) st +0.0%")
    text = (tmp_path / "gpu_kernels.md").read_text()
    assert "exact per CTA (min over the repeats of a 1-CTA launch = the prediction for that CTA, ld and st) on 2 / 2" in text
    assert "the full-size launch (min of 3) is exact on 0 / 2; one wave" in text
