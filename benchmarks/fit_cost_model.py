"""Fit the cost model's free constants on one suite run, check them on the others (CPU, needs SciPy).

    PYTHONPATH=src python benchmarks/fit_cost_model.py [--write]

Fit data: ``results/kernel_steps/2026-11-23_1850.json`` only (the 105 in-warp pairs of the 2026-11-23
18:50 UTC H100 run, each kernel's steps as measured, ``model_ranking.py``).  Everything else in
``analysis/devices/H100.json`` stays at its microbenchmark value (shfl, prmt / selp, bar.sync) or at
its earlier fit (``latency_shared``, ``latency_barrier``, fitted on the same run on 2026-11-23).

Objective: the mean squared error of log(predicted ours / other) against log(measured ours / other)
over the pairs: the quantity whose sign the ranking check scores, fitted as a magnitude (a count of
agreements is flat almost everywhere).  Nelder-Mead from the 2026-11-26 table.  Which constants are
free is chosen by 5-fold cross-validation on the fit run (3 shuffles; the set with the most held-out
agreements, then the fewest constants); the later runs are scored only after that choice
(``--write`` stores the chosen fit in the device file).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import model_ranking as mr  # noqa: E402

from linear_layouts.analysis import cost_model as cm  # noqa: E402

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
    """The device table with ``values`` (the fitted constants) in place."""
    base = base or cm.device_costs()
    return dataclasses.replace(base, **{k: ({1: v, 8: v} if k in TABLES else v) for k, v in values.items()})


def loss(device: cm.DeviceCosts, pairs: list[mr.Pair]) -> float:
    err = 0.0
    for p in pairs:
        po, pa = mr.kernel_ns(p.ours_steps, p.warps, device), mr.kernel_ns(p.other_steps, p.warps, device)
        err += (math.log(po / pa) - math.log(p.ours_us / p.other_us)) ** 2
    return err / len(pairs)


def fit(pairs: list[mr.Pair], free: tuple[str, ...]) -> dict:
    """The constants ``free`` minimising ``loss`` on ``pairs`` (the others at ``START``)."""
    from scipy.optimize import minimize

    def objective(x):
        if min(x) < 0:
            return 1e9
        return loss(table({**START, **dict(zip(free, x))}), pairs)

    r = minimize(objective, [START[k] for k in free], method="Nelder-Mead",
                 options=dict(maxiter=4000, xatol=1e-4, fatol=1e-8))
    return {**START, **{k: round(float(v), 3) for k, v in zip(free, r.x)}}


def kfold(pairs: list[mr.Pair], free: tuple[str, ...], k: int = 5, seeds=(1, 2, 3)) -> float:
    """Held-out agreements per 105 pairs, averaged over ``k``-fold splits of ``pairs`` (``seeds``)."""
    agree = n = 0
    for seed in seeds:
        order = list(range(len(pairs)))
        random.Random(seed).shuffle(order)
        for f in range(k):
            test = set(order[f::k])
            train = [p for i, p in enumerate(pairs) if i not in test]
            agree += mr.score([pairs[i] for i in test], _priced(table(fit(train, free)))).agree
            n += len(test)
    return 105 * agree / n


def _priced(device: cm.DeviceCosts):
    return lambda steps, warps: mr.kernel_ns(steps, warps, device)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true", help="store the chosen fit in analysis/devices/H100.json")
    args = ap.parse_args()
    pairs = mr.pairs(mr.load_run(FIT_RUN))
    held = {p.stem: mr.pairs(mr.load_run(p)) for p in sorted(FIT_RUN.parent.glob("*.json")) if p != FIT_RUN}
    print(f"fit on {FIT_RUN.name}: {len(pairs)} pairs; held out: {', '.join(held)}")
    before = table(START)
    print(f"before (2026-11-26 table): fit run {mr.score(pairs, _priced(before))}, loss {loss(before, pairs):.4f}; "
          + ", ".join(f"{k} {mr.score(v, _priced(before))}" for k, v in held.items()))
    rows = []
    for free in CANDIDATES:
        rows.append((kfold(pairs, free), -len(free), free))
        print(f"  free {', '.join(free)}: 5-fold held-out {rows[-1][0]:.1f} / 105")
    _, _, free = max(rows)
    values = fit(pairs, free)
    device = table(values)
    print(f"chosen: {', '.join(free)} -> {values}")
    print(f"fit run: {mr.score(pairs, _priced(device))}, loss {loss(device, pairs):.4f}")
    for k, v in held.items():
        s = mr.score(v, _priced(device))
        print(f"held out {k}: {s}, loss {loss(device, v):.4f}; misses: {', '.join(map(str, s.misses))}")
    if args.write:
        path = cm.DEVICE_DIR / f"{device.name}.json"
        raw = json.loads(path.read_text())
        for key, v in values.items():
            raw[key] = {"1": v, "8": v} if key in TABLES else v
        path.write_text(json.dumps(raw, indent=1) + "\n")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
