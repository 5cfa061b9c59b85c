"""Fit the cost model's free constants on one suite run of one device, check them on runs not fitted on
(CPU, needs SciPy); write the device's table (``target/devices/<device>.json``).

    PYTHONPATH=src python benchmarks/fit_cost_model.py                  # the H100 fit of 2026-11-23, as committed
    PYTHONPATH=src python benchmarks/fit_cost_model.py --results RUN/gpu_suite.json [--device H200]
        [--microbench RUN/microbench.json] [--score OTHER/gpu_suite.json ...] [--write]

Fit data: the in-warp pairs of one suite run (``harness.ranking.pairs``: both mechanisms timed, each
kernel's steps as measured); default ``results/kernel_steps/2026-11-23_1850.json`` (the 105 pairs of the
2026-11-23 18:50 UTC H100 run). The device is ``--device``, else the run's (``environment.device``, or its
GPU's name). Its table starts from the device's own or the nearest one (``target.cost_table``); the
building blocks (shfl, prmt / selp, bar.sync) are replaced by the run's microbenchmarks where it has
them (``--microbench``, or the suite's ``microbench`` stage in the results); ``latency_shared`` and
``latency_barrier`` stay.

Objective: the mean squared error of log(predicted ours / other) against log(measured ours / other)
over the pairs: the quantity whose sign the ranking check scores, fitted as a magnitude (a count of
agreements is flat almost everywhere).  Nelder-Mead from the 2026-11-26 table.  Which constants are
free is chosen by 5-fold cross-validation on the fit run (3 shuffles; the set with the most held-out
agreements, then the fewest constants).

Scored where the table was not fitted: the 5-fold held-out agreements of the fit run (each fold priced by
constants fitted on the other four; the "held-out split"), and every ``--score`` run (another run of the
same device, or of another one: the ranking per device) with the final table; for the default H100 fit,
the other steps files (``results/kernel_steps``). ``--write`` stores the table in ``target/devices``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
import harness  # noqa: E402, F401  (puts src/ on the path)
from harness import ranking as mr  # noqa: E402
from harness.cost_fit import (CANDIDATES, START, TABLES, fit, kfold, loss, priced, run_device, table,  # noqa: E402
                              with_microbench)

from linear_layouts.analysis import cost_model as cm  # noqa: E402
from linear_layouts.target import DEVICE_DIR, cost_table, named_target  # noqa: E402

FIT_RUN = HERE / "results" / "kernel_steps" / "2026-11-23_1850.json"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", default=str(FIT_RUN), help="the run to fit on: a gpu_suite.json (or a steps file)")
    ap.add_argument("--device", default="", help="the device of the run (default: the run's own); names the table")
    ap.add_argument("--microbench", default="", help="the run's microbench.json (default: the suite's microbench "
                                                     "stage in --results, if it ran)")
    ap.add_argument("--score", action="append", default=[], help="a run not fitted on, to score the table on "
                                                                 "(repeatable; any device)")
    ap.add_argument("--write", action="store_true", help="store the table in target/devices/<device>.json")
    ap.add_argument("--recount", action="store_true", help="count every run's kernels as they run them "
                                                           "(model_ranking.recount)")
    args = ap.parse_args()
    load = (lambda p: mr.recount(mr.load_run(p))) if args.recount else mr.load_run
    run = load(Path(args.results))
    device = args.device or run_device(run) or cm.DEFAULT_DEVICE
    named = named_target(device=device) if device in _known() else None
    start = cost_table(named) if named is not None else None
    base = start.costs if start is not None else cm.device_costs()
    bench = json.loads(Path(args.microbench).read_text()) if args.microbench else run.get("microbench")
    if isinstance(bench, dict) and bench.get("blocks"):
        base = with_microbench(base, bench, device)
    elif base.name != device:
        base = dataclasses.replace(base, name=device)
    pairs = mr.pairs(run)
    held = {Path(p).stem: mr.pairs(load(Path(p))) for p in args.score}
    if not args.score and Path(args.results) == FIT_RUN:
        held = {p.stem: mr.pairs(mr.load_run(p)) for p in sorted(FIT_RUN.parent.glob("*.json")) if p != FIT_RUN}
    print(f"device {device}: start from the {start.label if start else 'package default table'}; fit on "
          f"{Path(args.results).name}: {len(pairs)} pairs; scored on: {', '.join(held) or '(no other run)'}")
    before = table(START, base)
    print(f"before (2026-11-26 constants): fit run {mr.score(pairs, priced(before))}, loss {loss(before, pairs):.4f}; "
          + ", ".join(f"{k} {mr.score(v, priced(before))}" for k, v in held.items()))
    rows = []
    for free in CANDIDATES:
        rows.append((kfold(pairs, free, base=base) * len(pairs) / 105, -len(free), free))
        print(f"  free {', '.join(free)}: 5-fold held-out {rows[-1][0]:.1f} / {len(pairs)}")
    held_out, _, free = max(rows)
    values = fit(pairs, free, base)
    device_table = table(values, base)
    print(f"chosen: {', '.join(free)} -> {values}")
    print(f"fit run: in sample {mr.score(pairs, priced(device_table))}, loss {loss(device_table, pairs):.4f}; "
          f"held out (5-fold, fitted on the other folds): {held_out:.1f} / {len(pairs)} "
          f"({100 * held_out / max(len(pairs), 1):.1f}%)")
    for k, v in held.items():
        s = mr.score(v, priced(device_table))
        print(f"held out {k}: {s}, loss {loss(device_table, v):.4f}; misses: {', '.join(map(str, s.misses))}")
    if args.write:
        path = DEVICE_DIR / f"{device}.json"
        raw = json.loads(path.read_text()) if path.exists() else {
            f.name: ({str(w): t for w, t in getattr(device_table, f.name).items()}
                     if isinstance(getattr(device_table, f.name), dict) else getattr(device_table, f.name))
            for f in dataclasses.fields(device_table)}
        if not path.exists() or isinstance(bench, dict) and bench.get("blocks"):
            for key in ("shfl", "alu", "bar_cta"):
                raw[key] = {str(w): t for w, t in getattr(base, key).items()}
            date = run.get("environment", {}).get("date", "")
            raw["name"], raw["measured"] = device, base.measured + (
                f" of the run; {', '.join(free)} fitted on its {len(pairs)} in-warp pairs ({Path(args.results).name}"
                + (f", {date}" if date else "") + (", each kernel's steps recounted as it runs them" if args.recount else "")
                + "), the other constants at START (benchmarks/fit_cost_model.py)")
        for key, v in values.items():
            raw[key] = {"1": v, "8": v} if key in TABLES else v
        raw["fit"] = os.path.relpath(Path(args.results).resolve(), HERE.parent)  # the data the fit came from
        path.write_text(json.dumps(raw, indent=1) + "\n")
        print(f"wrote {path}")


def _known() -> set[str]:
    from linear_layouts.target import TARGETS

    return set(TARGETS)


if __name__ == "__main__":
    main()
