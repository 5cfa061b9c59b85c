"""Fitting the cost model's free constants to one suite run: a device table (``DeviceCosts``) with some
constants replaced (``table``), the building blocks of a microbenchmark run put in (``with_microbench``),
the objective (``loss``: mean squared log ratio error of predicted against measured ours / other over the
ranking's pairs, ``harness.ranking``), its Nelder-Mead minimum (``fit``, needs SciPy) and the k-fold
held-out agreement of a choice of free constants (``kfold``).
"""

from __future__ import annotations

import dataclasses
import math
import random

from harness import ranking

from linear_layouts.analysis import cost_model as cm
from linear_layouts.target import device_name

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


def loss(device: cm.DeviceCosts, pairs: list[ranking.Pair]) -> float:
    """Mean over ``pairs`` of (log predicted ours / other - log measured ours / other)^2, priced with ``device``."""
    err = 0.0
    for p in pairs:
        po, pa = ranking.kernel_ns(p.ours_steps, p.warps, device), ranking.kernel_ns(p.other_steps, p.warps, device)
        err += (math.log(po / pa) - math.log(p.ours_us / p.other_us)) ** 2
    return err / len(pairs)


def fit(pairs: list[ranking.Pair], free: tuple[str, ...], base: cm.DeviceCosts | None = None) -> dict:
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


def kfold(pairs: list[ranking.Pair], free: tuple[str, ...], k: int = 5, seeds=(1, 2, 3),
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
            agree += ranking.score([pairs[i] for i in test], priced(table(fit(train, free, base), base))).agree
            n += len(test)
    return 105 * agree / n


def priced(device: cm.DeviceCosts):
    """``time_ns(steps, warps)`` of ``ranking.score``: ``ranking.kernel_ns`` with the table ``device``."""
    return lambda steps, warps: ranking.kernel_ns(steps, warps, device)
