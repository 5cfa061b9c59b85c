"""Issue 12 item 4's check, in one place: does the cost model rank the two measured mechanisms of every
in-warp suite pair as the device did?  ``gpu_suite.py`` (its report), ``inwarp_shuffles.py`` and the
calibration (``fit_cost_model.py``) all score with ``harness.ranking.score``; this script prints the score
of a run and makes the steps files of old runs.

    PYTHONPATH=src python benchmarks/model_ranking.py [--results benchmarks/results/gpu_suite.json]
    PYTHONPATH=src python benchmarks/model_ranking.py --results benchmarks/results/kernel_steps/2026-11-23_1850.json
    PYTHONPATH=src python benchmarks/model_ranking.py --results H200_RUN/gpu_suite.json --device H200
    PYTHONPATH=src python benchmarks/model_ranking.py --results RUN_B/gpu_suite.json --table FITTED_ON_RUN_A.json
    PYTHONPATH=<checkout of the run>/src python benchmarks/model_ranking.py counts --results RUN.json --out FILE

Per device: a run is scored with the table of its device (``--device``, default the run's own:
``environment.device`` or its GPU's name; a device without a table is priced by the nearest one, and the
output says which, ``target.cost_table``), or with a given table file (``--table``: e.g. one
``fit_cost_model.py`` fitted on another run, so the score is on a run the table was not fitted on).

Pairs: every in-warp conversion-loop row (``bench``, config ``conversion``) where our kernel (``ours``:
each direction planned by ``plan_conversion``, so possibly one shuffle and one shared-memory step) and
the kernel of the other mechanism (``shuffle`` or ``shared``, forced in both directions) were both timed
and both correct.  Each kernel is predicted from the steps it executes, as emitted (``StepRecord``: the
counts of ``codegen.cost.step_counts`` plus the layout facts the model prices): the suite's prepare
stage stores them per variant (``variants[*].steps``); for runs made before that, a file of them made by
``counts`` with the code the run was built from (``results/kernel_steps/<date>.json``; the file also
holds each kernel's ``model_us`` as priced then, so the pairing can be checked against the run's, and
the run's in-warp rows, so that it is the whole record of the run for this check).  Made so:
``counts --commit 7460e06 --table '<95cc9d3's H100 fields>' --results <7460e06's gpu_suite.json>`` with
7460e06's src (the 2026-11-23 18:50 run, planned with 95cc9d3's table), and ``counts --commit e9b5d69
--results <a1d0150's gpu_suite.json>`` with e9b5d69's src (the 2026-11-26 16:48 run).

Rule: a pair agrees when the kernel predicted faster was measured faster.  A predicted tie is broken
as ``plan_conversion`` breaks it (a shuffle is taken only when strictly cheaper): the kernel with fewer
shuffle steps is predicted faster.  No tolerance: a measured 0.97x counts as much as a 0.5x (run to run,
the same kernels moved by 2% (sd) between the 16:24 and 16:48 UTC runs of 2026-11-26; misses list
the measured and predicted ratios so near-ties are visible, they are not excused).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
import harness  # noqa: E402, F401  (puts src/ on the path)
from harness.ranking import (check_steps_file, kernel_ns, kernel_steps, load_run, pairs, recount,  # noqa: E402
                             run_table, score, steps_file)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", nargs="?", default="score", choices=["score", "counts"])
    ap.add_argument("--results", default=str(HERE / "results" / "gpu_suite.json"))
    ap.add_argument("--out", default="")
    ap.add_argument("--commit", default="", help="counts: the commit the code on PYTHONPATH is (recorded)")
    ap.add_argument("--source", default="", help="counts: where --results came from (recorded)")
    ap.add_argument("--table", default="", help="score: a device table file (JSON) to score with; counts: JSON of "
                                                "DeviceCosts fields the run was planned with")
    ap.add_argument("--device", default="", help="score: the device whose table scores the run (default: the run's)")
    ap.add_argument("--recount", action="store_true", help="score: count each kernel's steps as it runs them "
                                                           "(``recount``: runs recorded before the seams were)")
    args = ap.parse_args()
    if args.what == "counts":
        if args.table:  # the run's kernels were planned with an older table: the package's, replaced
            import dataclasses
            from types import MappingProxyType

            from linear_layouts.target import DEFAULT_TARGET, costs

            fields = {k: ({int(a): b for a, b in v.items()} if isinstance(v, dict) else v)
                      for k, v in json.loads(args.table).items()}
            name = DEFAULT_TARGET.device
            costs.DEVICES = MappingProxyType({**costs.DEVICES, name: dataclasses.replace(costs.DEVICES[name], **fields)})
            costs._cost_table.cache_clear()
        kernels = kernel_steps()
        run = json.loads(Path(args.results).read_text())
        rows = [r for r in run["bench"] if r["config"] == "conversion" and r.get("in_warp")]
        cases = {r["case"] for r in rows}
        variants = [{k: v[k] for k in ("case", "variant", "kind", "bits", "warps", "model_us")}
                    for v in run["variants"] if v["case"] in cases]
        bundled = dict(environment=run["environment"], source=args.source, bench=rows, variants=variants)
        Path(args.out).write_text(json.dumps(dict(commit=args.commit, table=args.table, kernels=kernels,
                                                  results=bundled), separators=(",", ":")))
        print(f"{len(kernels)} cases -> {args.out}")
        return
    results = load_run(Path(args.results))
    if args.recount:
        results = recount(results)
    path = steps_file(results)
    if path.exists():
        bad = check_steps_file(results, json.loads(path.read_text())["kernels"])
        print(f"steps file {path.name}: " + (f"{len(bad)} kernels differ from the run's: {bad[:8]}" if bad
                                            else "every kernel's model_us equals the run's"))
    costs, label = run_table(results, args.device, args.table)
    s = score(pairs(results), lambda steps, warps: kernel_ns(steps, warps, costs))
    print(f"{results['environment'].get('date')}, {label}: ranked as measured on {s}; misses: "
          + (", ".join(map(str, s.misses)) or "none"))


if __name__ == "__main__":
    main()
