"""Time model of a layout conversion on a named device, from measured building blocks.

A conversion step of one CTA with ``W`` warps costs, in SM-nanoseconds (the time one SM is busy
with it when many CTAs share the SM, as in a throughput-bound loop):

    wavefronts * t_wavefront(W) + W * (shfl * t_shfl(W) + alu * t_alu(W)) + barriers * t_barrier(scope, W)

``wavefronts``: the shared-memory wavefronts of all warps (store + load, the analysis prediction);
``shfl``, ``alu``: per thread (``alu``: the byte permutes and selects codegen emits); ``barriers``:
CTA barriers (``bar.sync``) or warp barriers (``bar.warp.sync``, free where the compiler proves the
warp converged).  ``t_*`` are the building blocks measured by ``benchmarks/gpu_microbench.py``
(8 CTAs per SM, 8 independent chains per thread), per warp count, interpolated in log2(W).

The table is data: ``DEVICES[name]`` (``"H100"`` now).  ``codegen.cost.step_counts`` counts what
codegen emits for a step; ``plan_conversion`` compares its alternatives with ``conversion_time_ns``.

Example: ``conversion_time_ns(OpCounts(wavefronts=256, barriers_cta=1), warps=4)`` is the predicted
SM-time of a conversion through shared memory with 256 wavefronts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = ["DeviceCosts", "OpCounts", "DEVICES", "DEFAULT_DEVICE", "conversion_time_ns", "device_costs"]


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


@dataclass(frozen=True)
class OpCounts:
    """What one conversion step of one CTA executes (see the module doc)."""

    wavefronts: int = 0
    shfl: int = 0
    alu: int = 0
    barriers_cta: int = 0
    barriers_warp: int = 0


#: Measured tables.  H100: benchmarks/gpu_microbench.py on an H100 80GB HBM3 (see benchmarks/results/
#: microbench.json for the run); until the first run, the 2026-11-22 loop measurements of
#: analysis.conversion's module doc (0.64 ns per wavefront, 0.77 ns per shfl, 0.22 ns per ALU op,
#: 1.4 ns per CTA barrier).
DEVICES: dict[str, DeviceCosts] = {
    "H100": DeviceCosts(
        name="H100",
        measured="2026-11-22 loop measurements (analysis.conversion docstring)",
        wavefront={1: 0.64, 8: 0.64},
        shfl={1: 0.77, 8: 0.77},
        alu={1: 0.22, 8: 0.22},
        bar_cta={1: 2.2, 8: 1.4},
        bar_warp={1: 0.0, 8: 0.0},
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
    return (counts.wavefronts * d.at(d.wavefront, warps)
            + warps * (counts.shfl * d.at(d.shfl, warps) + counts.alu * d.at(d.alu, warps))
            + counts.barriers_cta * d.at(d.bar_cta, warps)
            + counts.barriers_warp * warps * d.at(d.bar_warp, warps))
