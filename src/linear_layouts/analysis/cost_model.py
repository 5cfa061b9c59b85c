"""Time model of a layout conversion on a named device, from measured building blocks.

A conversion step of one CTA with ``W`` warps costs, in SM-nanoseconds (the time one SM is busy
with it when ``C`` CTAs share the SM, as in a throughput-bound loop), the larger of its issue time and
its dependent latency shared by the CTAs that overlap it:

    issue   = (wavefronts - copied) * t_wavefront + copied * t_copied
              + W * (shfl * t_shfl(W) + alu * t_alu(W)) + barriers * t_barrier(scope, W)
    latency = latency_shared + barriers_cta * latency_barrier            (a shared-memory step)
              latency_shuffle + (shfl + alu) * latency_per_instruction   (a warp-shuffle step)
    time    = max(issue, latency / C)

``wavefronts``: the shared-memory wavefronts of all warps (store + load, the analysis prediction, = ncu);
``copied``: those of them that load what another warp of the CTA loads in the same step (the loaded
layout's zero warp bases: ``2^z`` warps read the same addresses, ``copied_load_wavefronts``);
``shfl``, ``alu``: per thread (``alu``: the byte permutes and selects codegen emits); ``barriers``:
CTA barriers (``bar.sync``) or warp barriers (``bar.warp.sync``, free where the compiler proves the
warp converged).  A shuffle step's latency grows with the instructions each thread issues one after
another (a select waits for the shuffle or select before it), which the issue sum of few warps does
not see.  ``t_shfl``, ``t_alu``, ``t_barrier`` are the building blocks measured by
``benchmarks/gpu_microbench.py`` (8 CTAs per SM, 8 independent chains per thread), per warp count,
interpolated in log2(W); ``t_wavefront``, ``t_copied``, ``latency_shuffle`` and
``latency_per_instruction`` are fitted (least squares on log time ratios,
``benchmarks/fit_cost_model.py``) on the H100 conversion loop of the 2026-11-23 suite run (105 in-warp
pairs, both mechanisms timed) with the others fixed; the fit is checked held out on later runs
(``benchmarks/model_ranking.py``; benchmarks/results/conversion_cost_model.md).

The tables are data, one JSON file per device in ``analysis/devices/`` (``DEVICES[name]``, ``"H100"``
now).  ``OpCounts`` (``analysis.op_counts``) are the counts of a step, computed from its plan
(``shuffle_counts``; codegen checks that it emits exactly those: ``codegen.cost.step_counts``);
``plan_conversion`` compares its alternatives with ``conversion_time_ns``.

Example: ``conversion_time_ns(OpCounts(wavefronts=256, barriers_cta=1), warps=4)`` is the predicted
SM-time of a conversion through shared memory with 256 wavefronts.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields
from pathlib import Path

from linear_layouts.analysis.broadcast import zero_bases_mask
from linear_layouts.analysis.op_counts import OpCounts, shuffle_counts
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote

__all__ = ["DeviceCosts", "OpCounts", "DEVICES", "DEFAULT_DEVICE", "conversion_time_ns", "copied_load_wavefronts",
           "warp_copies_log2",
           "device_costs", "load_device", "shuffle_time_ns", "shared_time_ns",
           "SM_SHARED_BYTES", "CTA_RESERVED_SHARED_BYTES", "CTA_SHARED_BYTES", "SM_THREADS"]

DEVICE_DIR = Path(__file__).resolve().parent / "devices"


@dataclass(frozen=True)
class DeviceCosts:
    """SM-nanoseconds per building block, by warps per CTA (``{1: .., 2: .., 4: .., 8: ..}``), and the
    latencies (ns) of a step's dependent chain (module doc)."""

    name: str
    measured: str
    wavefront: dict = field(default_factory=dict)
    copied_wavefront: dict = field(default_factory=dict)  # a load wavefront another warp also loads
    shfl: dict = field(default_factory=dict)
    alu: dict = field(default_factory=dict)
    bar_cta: dict = field(default_factory=dict)  # per CTA barrier
    bar_warp: dict = field(default_factory=dict)  # per warp barrier of one warp
    latency_shared: float = 0.0  # store -> barrier -> load
    latency_barrier: float = 0.0  # what a CTA barrier adds to that chain
    latency_shuffle: float = 0.0  # a shuffle step's chain before its instructions
    latency_per_instruction: float = 0.0  # per shfl / select / prmt a thread of a shuffle step issues
    concurrent_ctas: int = 8  # CTAs one SM overlaps (the conversion benchmark's 1056 CTAs on 132 SMs)
    fit: str = ""  # the data the fitted fields came from

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


def load_device(path: Path) -> DeviceCosts:
    """The ``DeviceCosts`` of a device file (JSON: the fields, tables keyed by warps as strings)."""
    raw = json.loads(Path(path).read_text())
    known = {f.name for f in fields(DeviceCosts)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise LayoutError(f"device file {path}: unknown fields {unknown}")
    return DeviceCosts(**{k: ({int(w): float(t) for w, t in v.items()} if isinstance(v, dict) else v)
                          for k, v in raw.items()})


#: Measured tables, one per file of ``analysis/devices``.  H100: see its ``measured`` and ``fit``.
DEVICES: dict[str, DeviceCosts] = {d.name: d for d in map(load_device, sorted(DEVICE_DIR.glob("*.json")))}
DEFAULT_DEVICE = "H100"

#: Shared memory of one H100 SM that CTAs can use (228 KiB); each resident CTA also takes
#: ``CTA_RESERVED_SHARED_BYTES`` of it (the driver's reserved shared memory).
SM_SHARED_BYTES = 228 * 1024
CTA_RESERVED_SHARED_BYTES = 1024
#: The most shared memory one CTA can allocate on an H100 (opt-in, ``cudaDevAttrMaxSharedMemoryPerBlockOptin``:
#: 227 KiB = 232448 bytes); a kernel asking for more does not launch (Triton: ``OutOfResources``).
CTA_SHARED_BYTES = SM_SHARED_BYTES - CTA_RESERVED_SHARED_BYTES
#: Threads resident on one H100 SM at most (64 warps).
SM_THREADS = 2048


def device_costs(device: str | DeviceCosts | None = None) -> DeviceCosts:
    """The table of ``device`` (a name, default ``DEFAULT_DEVICE``, or a table itself); an unknown name
    is a LayoutError that lists the known devices.

    >>> device_costs("B200")
    Traceback (most recent call last):
    ...
    linear_layouts.core.errors.LayoutError: device: no cost table for 'B200'; known: ['H100']
    """
    if isinstance(device, DeviceCosts):
        return device
    name = device or DEFAULT_DEVICE
    if name not in DEVICES:
        raise LayoutError(f"device: no cost table for {quote(name)}; known: {sorted(DEVICES)}")
    return DEVICES[name]


def conversion_time_ns(counts: OpCounts, warps: int, device: str | DeviceCosts | None = None,
                       copied_wavefronts: int = 0) -> float:
    """Predicted SM-nanoseconds of one conversion step of a CTA of ``warps`` warps (module doc);
    ``copied_wavefronts``: how many of ``counts.wavefronts`` load what another warp also loads."""
    if not 0 <= copied_wavefronts <= counts.wavefronts:
        raise LayoutError(f"copied_wavefronts: {copied_wavefronts} must lie in [0, wavefronts = {counts.wavefronts}]")
    d = device_costs(device)
    issue = ((counts.wavefronts - copied_wavefronts) * d.at(d.wavefront, warps)
             + copied_wavefronts * d.at(d.copied_wavefront, warps)
             + warps * (counts.shfl * d.at(d.shfl, warps) + counts.alu * d.at(d.alu, warps))
             + counts.barriers_cta * d.at(d.bar_cta, warps)
             + counts.barriers_warp * warps * d.at(d.bar_warp, warps))
    if counts.wavefronts:
        latency = d.latency_shared + counts.barriers_cta * d.latency_barrier
    elif counts.shfl:
        latency = d.latency_shuffle + (counts.shfl + counts.alu) * d.latency_per_instruction
    else:
        return issue  # registers only: no dependent memory or shuffle round trip
    return max(issue, latency / d.concurrent_ctas)


def warp_copies_log2(layout) -> int:
    """``z``: ``2^z`` warps of ``layout`` (a ``LinearLayout``) hold the same data (its zero warp bases,
    ``broadcast.zero_bases_mask``)."""
    return zero_bases_mask(layout, "warp").bit_count()


def copied_load_wavefronts(load_wavefronts: int, loaded) -> int:
    """The load wavefronts that re-read what another warp loads: ``2^z`` warps of the loaded layout
    ``loaded`` (``z = warp_copies_log2(loaded)``, or ``z`` itself) load the same addresses, so all but
    ``load_wavefronts / 2^z`` of them.  E.g. 64 wavefronts of 8 warps that all hold the same data: 56."""
    zeros = loaded if isinstance(loaded, int) else warp_copies_log2(loaded)
    return load_wavefronts - load_wavefronts // (1 << zeros)


def shuffle_time_ns(plan, device: str | DeviceCosts | None = None) -> float:
    """Predicted SM-nanoseconds of the warp-shuffle conversion ``plan`` (a ``ShufflePlan``) of one CTA:
    its ``shfl.sync`` and the selects / byte permutes codegen emits for it, counted from the plan
    (``op_counts.shuffle_counts``).  Infinite where codegen cannot emit the plan."""
    counts = shuffle_counts(plan)
    if counts is None:
        return float("inf")
    return conversion_time_ns(counts, plan.num_warps, device)


def shared_time_ns(wavefronts: int, warp_local: bool, warps: int, device: str | DeviceCosts | None = None,
                   copied_wavefronts: int = 0) -> float:
    """Predicted SM-nanoseconds of a shared-memory conversion of one CTA with ``wavefronts`` store +
    load wavefronts (``copied_wavefronts`` of them re-reading another warp's loads) and one barrier
    between store and load (a warp barrier when every warp reads only what it stored, ``warp_local``);
    the packed registers need no byte permutes in steady state."""
    counts = OpCounts(wavefronts=wavefronts, barriers_cta=0 if warp_local else 1, barriers_warp=1 if warp_local else 0)
    return conversion_time_ns(counts, warps, device, copied_wavefronts)
