"""Fit the cost model's free constants on one suite run of one device, check them on runs not fitted on
(CPU, needs SciPy); write the device's table (``target/devices/<device>.json``).

    PYTHONPATH=src python benchmarks/fit_cost_model.py                  # the H100 fit of 2026-11-23, as committed
    PYTHONPATH=src python benchmarks/fit_cost_model.py --results RUN/gpu_suite.json [--device H200]
        [--microbench RUN/microbench.json] [--score OTHER/gpu_suite.json ...] [--write]

Fit data: the in-warp pairs of one suite run (``model_ranking.pairs``: both mechanisms timed, each
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
import math
import os
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
import harness  # noqa: E402, F401  (puts src/ on the path)

import model_ranking as mr  # noqa: E402

from linear_layouts.analysis import cost_model as cm  # noqa: E402
from linear_layouts.target import DEVICE_DIR, cost_table, device_name, named_target  # noqa: E402

FIT_RUN = HERE / "results" / "kernel_steps" / "2026-11-23_1850.json"
#: The table before this fit (2026-11-26): the start of the search and the "before" row.
START = dict(wavefront=0.70, copied_wavefront=0.70, latency_shared=40.0, latency_shuffle=40.0,
             latency_per_instruction=0.0)
CANDIDATES = (("wavefront",), ("wavefront", "copied_wavefront"),
              ("wavefront", "copied_wavefront", "latency_shared"),
              ("wavefront", "copied_wavefront", "latency_shuffle", "latency_per_instruction"),
              ("wavefront", "copied_wavefront", "latency_shared", "latency_shuffle", "latency_per_instruction"))
TABLES = ("wavefront", "copied_wavefront")  # constant over warps: {1: x, 8: x}


def table(values: dict, base: cm.DeviceCosts | None = None) -> cm.DeviceCosts:
    """The device table with ``values`` (the fitted constants) in place (``base``: default the package's)."""
    base = base or cm.device_costs()
    return dataclasses.replace(base, **{k: ({1: v, 8: v} if k in TABLES else v) for k, v in values.items()})


def with_microbench(base: cm.DeviceCosts, microbench: dict, name: str) -> cm.DeviceCosts:
    """``base`` with the building blocks a ``gpu_microbench.py`` run measured (SM-ns per warp-instruction by
    warps per CTA): ``shfl``; ``alu``, the mean of ``prmt`` and ``selp``; ``bar_cta``, ``bar.sync`` per CTA
    barrier; named ``name``. (``bar_warp`` stays: free where the compiler proves the warp converged.)"""
    blocks = microbench["blocks"]

    def row(block: str) -> dict[int, float]:
        return {int(w): float(v["ns"]) for w, v in blocks[block].items()}

    prmt, selp = row("prmt"), row("selp")
    alu = {w: round((prmt[w] + selp[w]) / 2, 4) for w in prmt}
    measured = (f"gpu_microbench.py, {microbench.get('device', name)}"
                + (f", {microbench['date']}" if microbench.get("date") else "") + " (shfl, prmt/selp, bar.sync)")
    return dataclasses.replace(base, name=name, shfl=row("shfl"), alu=alu, bar_cta=row("bar.sync"), measured=measured)


def run_device(results: dict) -> str | None:
    """The short name of the device a suite run ran on (``environment.device``, else its GPU's name)."""
    env = results.get("environment", {})
    if env.get("device"):
        return env["device"]
    gpu = str(env.get("gpu", "")).split(",")[0].strip()
    return device_name(gpu) if gpu and not gpu.startswith("unavailable") else None


def loss(device: cm.DeviceCosts, pairs: list[mr.Pair]) -> float:
    err = 0.0
    for p in pairs:
        po, pa = mr.kernel_ns(p.ours_steps, p.warps, device), mr.kernel_ns(p.other_steps, p.warps, device)
        err += (math.log(po / pa) - math.log(p.ours_us / p.other_us)) ** 2
    return err / len(pairs)


def fit(pairs: list[mr.Pair], free: tuple[str, ...], base: cm.DeviceCosts | None = None) -> dict:
    """The constants ``free`` minimising ``loss`` on ``pairs`` (the others at ``START``; ``base``: the table
    they go into)."""
    from scipy.optimize import minimize

    def objective(x):
        if min(x) < 0:
            return 1e9
        return loss(table({**START, **dict(zip(free, x))}, base), pairs)

    r = minimize(objective, [START[k] for k in free], method="Nelder-Mead",
                 options=dict(maxiter=4000, xatol=1e-4, fatol=1e-8))
    return {**START, **{k: round(float(v), 3) for k, v in zip(free, r.x)}}


def kfold(pairs: list[mr.Pair], free: tuple[str, ...], k: int = 5, seeds=(1, 2, 3),
          base: cm.DeviceCosts | None = None) -> float:
    """Held-out agreements per 105 pairs, averaged over ``k``-fold splits of ``pairs`` (``seeds``): each
    fold is priced by the constants fitted on the other folds."""
    agree = n = 0
    for seed in seeds:
        order = list(range(len(pairs)))
        random.Random(seed).shuffle(order)
        for f in range(k):
            test = set(order[f::k])
            train = [p for i, p in enumerate(pairs) if i not in test]
            agree += mr.score([pairs[i] for i in test], _priced(table(fit(train, free, base), base))).agree
            n += len(test)
    return 105 * agree / n


def _priced(device: cm.DeviceCosts):
    return lambda steps, warps: mr.kernel_ns(steps, warps, device)


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
    print(f"before (2026-11-26 constants): fit run {mr.score(pairs, _priced(before))}, loss {loss(before, pairs):.4f}; "
          + ", ".join(f"{k} {mr.score(v, _priced(before))}" for k, v in held.items()))
    rows = []
    for free in CANDIDATES:
        rows.append((kfold(pairs, free, base=base) * len(pairs) / 105, -len(free), free))
        print(f"  free {', '.join(free)}: 5-fold held-out {rows[-1][0]:.1f} / {len(pairs)}")
    held_out, _, free = max(rows)
    values = fit(pairs, free, base)
    device_table = table(values, base)
    print(f"chosen: {', '.join(free)} -> {values}")
    print(f"fit run: in sample {mr.score(pairs, _priced(device_table))}, loss {loss(device_table, pairs):.4f}; "
          f"held out (5-fold, fitted on the other folds): {held_out:.1f} / {len(pairs)} "
          f"({100 * held_out / max(len(pairs), 1):.1f}%)")
    for k, v in held.items():
        s = mr.score(v, _priced(device_table))
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
