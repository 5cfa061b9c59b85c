"""The one ranking check of issue 12 item 4 (benchmarks/model_ranking.py): its pairs are the kernels each
run measured, and its tie rule is plan_conversion's."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))
import model_ranking as mr  # noqa: E402

sys.path.remove(str(BENCH))

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
