"""Time model of a layout conversion on a named device, from measured building blocks.

A conversion step of one CTA with ``W`` warps costs, in SM-nanoseconds (the time one SM is busy
with it when ``C`` CTAs share the SM, as in a throughput-bound loop), the larger of its issue time and
its dependent latency shared by the CTAs that overlap it:

    max(wavefronts * t_wavefront(W) + W * (shfl * t_shfl(W) + alu * t_alu(W))
            + barriers * t_barrier(scope, W),
        (latency_step + barriers_cta * latency_barrier) / C)

``wavefronts``: the shared-memory wavefronts of all warps (store + load, the analysis prediction);
``shfl``, ``alu``: per thread (``alu``: the byte permutes and selects codegen emits); ``barriers``:
CTA barriers (``bar.sync``) or warp barriers (``bar.warp.sync``, free where the compiler proves the
warp converged).  ``t_*`` are the building blocks measured by ``benchmarks/gpu_microbench.py``
(8 CTAs per SM, 8 independent chains per thread), per warp count, interpolated in log2(W); the
wavefront cost and the two latencies were fitted on the H100 conversion loop (105 in-warp pairs timed
both ways, shuffles and shared memory) with the other blocks fixed at their microbenchmark values;
the wavefront cost refitted on 2026-11-26 against the emitters and plans of that day: 98 / 105 ranked
as measured, 98 / 105 in 2-fold cross-validation (benchmarks/results/conversion_cost_model.md).

The table is data: ``DEVICES[name]`` (``"H100"`` now).  ``OpCounts`` (``analysis.op_counts``) are the
counts of a step, computed from its plan (``shuffle_counts``; codegen checks that it emits exactly those:
``codegen.cost.step_counts``); ``plan_conversion`` compares its alternatives with ``conversion_time_ns``.

Example: ``conversion_time_ns(OpCounts(wavefronts=256, barriers_cta=1), warps=4)`` is the predicted
SM-time of a conversion through shared memory with 256 wavefronts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from linear_layouts.analysis.op_counts import OpCounts, shuffle_counts

__all__ = ["DeviceCosts", "OpCounts", "DEVICES", "DEFAULT_DEVICE", "conversion_time_ns", "device_costs",
           "shuffle_time_ns", "shared_time_ns"]


@dataclass(frozen=True)
class DeviceCosts:
    """SM-nanoseconds per building block, by warps per CTA (``{1: .., 2: .., 4: .., 8: ..}``)."""

    name: str
    measured: str
    wavefront: dict = field(default_factory=dict)
    shfl: dict = field(default_factory=dict)
    alu: dict = field(default_factory=dict)
    bar_cta: dict = field(default_factory=dict)  # per CTA barrier
    bar_warp: dict = field(default_factory=dict)  # per warp barrier of one warp
    latency_step: float = 0.0  # ns of a step's dependent chain (store/load or shuffle round trip)
    latency_barrier: float = 0.0  # ns a CTA barrier adds to that chain
    concurrent_ctas: int = 8  # CTAs one SM overlaps (the conversion benchmark's 1056 CTAs on 132 SMs)

    def at(self, table: dict, warps: int) -> float:
        """``table`` interpolated at ``warps`` (log2 scale, clamped to the measured range)."""
        keys = sorted(table)
        x = math.log2(max(1, warps))
        lo = max((k for k in keys if math.log2(k) <= x), default=keys[0])
        hi = min((k for k in keys if math.log2(k) >= x), default=keys[-1])
        if lo == hi:
            return float(table[lo])
        t = (x - math.log2(lo)) / (math.log2(hi) - math.log2(lo))
        return float(table[lo]) * (1 - t) + float(table[hi]) * t


#: Measured tables.  H100: benchmarks/gpu_microbench.py on an NVIDIA H100 80GB HBM3 (driver 580,
#: CUDA 13.0), 2026-11-23 19:00 UTC, after a warm-up: shfl.sync, prmt / selp (alu) and bar.sync per
#: warp count (bar.warp.sync compiles to nothing where the warp is converged); the wavefront cost
#: (microbenchmark: 0.34-0.49 ns) and the latencies fitted on the conversion loop of the 105 in-warp
#: pairs of the 18:50 UTC suite run (module doc); the wavefront cost refitted 2026-11-26 (0.60 -> 0.70)
#: on the same pairs with that day's emitters and shared-memory plans.
DEVICES: dict[str, DeviceCosts] = {
    "H100": DeviceCosts(
        name="H100",
        measured="gpu_microbench.py, H100 80GB HBM3, 2026-11-23 19:00 UTC; wavefront and latencies fitted "
                 "on 105 in-warp pairs (benchmarks/results/conversion_cost_model.md)",
        wavefront={1: 0.70, 8: 0.70},
        shfl={1: 0.314, 2: 0.363, 4: 0.362, 8: 0.360},
        alu={1: 0.298, 2: 0.353, 4: 0.361, 8: 0.365},
        bar_cta={1: 0.034, 2: 0.003, 4: 0.520, 8: 1.279},
        bar_warp={1: 0.0, 8: 0.0},
        latency_step=40.0,
        latency_barrier=20.0,
        concurrent_ctas=8,
    ),
}
DEFAULT_DEVICE = "H100"


def device_costs(device: str | None = None) -> DeviceCosts:
    """The table of ``device`` (default ``DEFAULT_DEVICE``); KeyError lists the known devices."""
    name = device or DEFAULT_DEVICE
    if name not in DEVICES:
        raise KeyError(f"device: no cost table for {name!r}; known: {sorted(DEVICES)}")
    return DEVICES[name]


def conversion_time_ns(counts: OpCounts, warps: int, device: str | None = None) -> float:
    """Predicted SM-nanoseconds of one conversion step of a CTA of ``warps`` warps (module doc)."""
    d = device_costs(device)
    issue = (counts.wavefronts * d.at(d.wavefront, warps)
             + warps * (counts.shfl * d.at(d.shfl, warps) + counts.alu * d.at(d.alu, warps))
             + counts.barriers_cta * d.at(d.bar_cta, warps)
             + counts.barriers_warp * warps * d.at(d.bar_warp, warps))
    if not (counts.wavefronts or counts.shfl):
        return issue  # registers only: no dependent memory or shuffle round trip
    latency = (d.latency_step + counts.barriers_cta * d.latency_barrier) / d.concurrent_ctas
    return max(issue, latency)


def shuffle_time_ns(plan, device: str | None = None) -> float:
    """Predicted SM-nanoseconds of the warp-shuffle conversion ``plan`` (a ``ShufflePlan``) of one CTA:
    its ``shfl.sync`` and the selects / byte permutes codegen emits for it, counted from the plan
    (``op_counts.shuffle_counts``).  Infinite where codegen cannot emit the plan."""
    counts = shuffle_counts(plan)
    if counts is None:
        return float("inf")
    return conversion_time_ns(counts, plan.num_warps, device)


def shared_time_ns(wavefronts: int, warp_local: bool, warps: int, device: str | None = None) -> float:
    """Predicted SM-nanoseconds of a shared-memory conversion of one CTA with ``wavefronts`` store +
    load wavefronts and one barrier between store and load (a warp barrier when every warp reads only
    what it stored, ``warp_local``); the packed registers need no byte permutes in steady state."""
    counts = OpCounts(wavefronts=wavefronts, barriers_cta=0 if warp_local else 1, barriers_warp=1 if warp_local else 0)
    return conversion_time_ns(counts, warps, device)
