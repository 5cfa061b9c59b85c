"""The one ranking check of issue 12 item 4 (benchmarks/harness/ranking.py, scored by
benchmarks/model_ranking.py): its pairs are the kernels each run measured, and its tie rule is
plan_conversion's; the fit of benchmarks/harness/cost_fit.py is the package table's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
from harness import cost_fit as fcm  # noqa: E402
from harness import ranking as mr  # noqa: E402

RUNS = sorted((BENCH / "results" / "kernel_steps").glob("*.json"))


def _pair(ours, other, ours_us, other_us, other_kind="shared"):
    return mr.Pair("p", 8, 1, other_kind, ours_us, other_us, (ours, ours), (other, other))


def test_tie_goes_to_the_kernel_with_fewer_shuffles():
    """Equal predictions: shared memory is predicted faster, as plan_conversion takes a shuffle only when
    strictly cheaper; the other orders follow the predicted times."""
    sh, sf = mr.StepRecord("shared", 4, 4), mr.StepRecord("shuffle", shfl=1)
    same = lambda steps, warps: 1.0  # noqa: E731 - every kernel predicted equal
    assert mr.score([_pair(sf, sh, 2.0, 1.0)], same).agree == 1  # shared measured faster: agrees
    s = mr.score([_pair(sf, sh, 1.0, 2.0)], same)
    assert (s.agree, s.total) == (0, 1) and s.misses[0].measured == pytest.approx(0.5)
    by_shfl = lambda steps, warps: sum(x.shfl for x in steps) + 0.5  # noqa: E731
    assert mr.score([_pair(sf, sh, 3.0, 1.0)], by_shfl).agree == 1  # 2.5 vs 0.5 predicted, 3 vs 1 measured
    assert str(mr.score([_pair(sf, sh, 1.0, 3.0)], by_shfl).misses[0]) == "p 0.33x/5.00x"


@pytest.mark.parametrize("path", RUNS, ids=[p.stem for p in RUNS])
def test_steps_files_are_the_runs_kernels(path):
    """Every kernel of the run, rebuilt by ``model_ranking counts`` at the run's commit, prices as the
    run recorded it (``model_us``, the cost model of that day): the scored steps are the measured ones."""
    kernels = json.loads(path.read_text())["kernels"]
    results = mr.load_run(path)
    assert mr.steps_file(results) == path
    assert mr.check_steps_file(results, kernels) == []
    ps = mr.pairs(results)
    assert len(ps) == 105
    mixed = [p.case for p in ps if len({s.kind for s in p.ours_steps}) == 2]
    assert "random_004" in mixed  # a kernel the old inwarp_shuffles scoring took for a shuffle kernel


def _run(stem):
    return mr.pairs(mr.load_run(BENCH / "results" / "kernel_steps" / f"{stem}.json"))


def test_package_table_reproduces_its_fit_and_the_held_out_run():
    """The H100 table (package data) on the run it was fitted on (2026-11-23) and on the later run it
    never saw (2026-11-26 16:48), as benchmarks/results/conversion_cost_model.md reports them."""
    fit = mr.score(_run("2026-11-23_1850"))
    assert (fit.agree, fit.total) == (98, 105)
    assert [m.case for m in fit.misses] == ["random_007", "random_068", "random_179", "inwarp_000", "inwarp_012",
                                             "inwarp_014", "wide_015"]
    held = mr.score(_run("2026-11-26_1648"))
    assert (held.agree, held.total) == (97, 105)


def test_fitted_constants_are_a_least_squares_optimum_of_the_fit_run():
    """Moving any fitted constant by 2% either way does not lower the fit objective (mean squared log
    ratio error on the 2026-11-23 pairs, benchmarks/fit_cost_model.py), so the table is that fit."""
    from linear_layouts.analysis.cost_model import device_costs  # noqa: PLC0415

    pairs = _run("2026-11-23_1850")
    h100 = device_costs()
    best = fcm.loss(h100, pairs)
    fitted = {"wavefront": h100.wavefront[1], "copied_wavefront": h100.copied_wavefront[1],
              "latency_shuffle": h100.latency_shuffle, "latency_per_instruction": h100.latency_per_instruction}
    for name, value in fitted.items():
        for factor in (0.98, 1.02):
            assert fcm.loss(fcm.table({name: value * factor}, h100), pairs) >= best - 1e-6, (name, factor)


def test_a_run_is_scored_with_its_devices_table_or_the_nearest():
    """Per device: a run of an H200 is priced by the H200's table, a B200's by the nearest (the H100's), and says so;
    a table file (fitted on another run) scores a run it was not fitted on."""
    h100_run = mr.load_run(BENCH / "results" / "gpu_suite.json")
    costs, label = mr.run_table(h100_run)
    assert (costs.name, label) == ("H100", "H100 table")
    h200_run = dict(h100_run, environment=dict(h100_run["environment"], gpu="NVIDIA H200, 580.0, 143771 MiB"))
    assert fcm.run_device(h200_run) == "H200" and mr.run_table(h200_run)[1] == "H200 table"
    b200_run = dict(h100_run, environment=dict(h100_run["environment"], gpu="NVIDIA B200, 580.0, 183359 MiB"))
    assert mr.run_table(b200_run)[1] == "H100 table, nearest to B200"
    from linear_layouts.target import DEVICE_DIR  # noqa: PLC0415

    costs, label = mr.run_table(h200_run, table=str(DEVICE_DIR / "H100.json"))
    assert costs.name == "H100" and label == "H100 table from H100.json"


def test_a_microbenchmark_run_gives_the_tables_building_blocks():
    """shfl, alu (the mean of prmt and selp) and bar.sync per warp count, from gpu_microbench.py's output."""
    from linear_layouts.analysis.cost_model import device_costs  # noqa: PLC0415

    bench = json.loads((BENCH / "results" / "microbench.json").read_text())
    table = fcm.with_microbench(device_costs(), bench, "H200")
    blocks = bench["blocks"]
    assert table.name == "H200" and table.shfl == {int(w): v["ns"] for w, v in blocks["shfl"].items()}
    assert table.alu[4] == pytest.approx((blocks["prmt"]["4"]["ns"] + blocks["selp"]["4"]["ns"]) / 2, abs=1e-4)
    assert table.bar_cta[8] == blocks["bar.sync"]["8"]["ns"] and bench["device"] in table.measured


def test_the_in_warp_suite_is_the_ranked_pairs():
    """``gpu_suite.py --in-warp`` runs exactly the cases whose pairs the ranking scores (105)."""
    from harness.cases import in_warp_suite_cases  # noqa: PLC0415

    names = {c.name for c in in_warp_suite_cases()}
    assert names == {p.case for p in _run("2026-11-26_1648")}
