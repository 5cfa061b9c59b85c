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
``benchmarks/fit_cost_model.py``) on the conversion loop of the GPU suite (in-warp pairs, both
mechanisms timed) with the others fixed; the fit is checked held out on later runs
(``benchmarks/model_ranking.py``; benchmarks/results/conversion_cost_model.md).

The tables are data, one JSON file per device in ``target/devices/`` (``target.DEVICES[name]``); a
target prices its plans with its device's table, or the nearest one where its device has none
(``target.cost_table``: the H100 and H200 have their own; an A100 or B200 takes the nearest).
``OpCounts`` (``analysis.op_counts``) are the counts of a step, computed from its plan
(``shuffle_counts``; codegen checks that it emits exactly those: ``codegen.cost.step_counts``);
``plan_conversion`` compares its alternatives with ``conversion_time_ns``.

Example: ``conversion_time_ns(OpCounts(wavefronts=256, barriers_cta=1), warps=4)`` is the predicted
SM-time of a conversion through shared memory with 256 wavefronts.
"""

from __future__ import annotations

from linear_layouts.analysis.broadcast import zero_bases_mask
from linear_layouts.analysis.op_counts import OpCounts, shuffle_counts
from linear_layouts.core.errors import LayoutError
from linear_layouts.target import DEFAULT_TARGET, DEVICE_DIR, DEVICES, DeviceCosts, Target, cost_table, load_device
from linear_layouts.target.costs import device_costs as _device_costs

__all__ = ["DeviceCosts", "OpCounts", "DEVICES", "DEFAULT_DEVICE", "conversion_time_ns", "copied_load_wavefronts",
           "warp_copies_log2",
           "device_costs", "load_device", "shuffle_time_ns", "shared_time_ns",
           "SM_SHARED_BYTES", "CTA_RESERVED_SHARED_BYTES", "CTA_SHARED_BYTES", "SM_THREADS"]

#: The default target's device and capacity, for callers of the old names; every fact lives on the
#: ``Target`` (``linear_layouts.target``), and the package reads it there, from the target it is given.
DEFAULT_DEVICE = DEFAULT_TARGET.device
SM_SHARED_BYTES = DEFAULT_TARGET.sm_shared_bytes
CTA_RESERVED_SHARED_BYTES = DEFAULT_TARGET.cta_reserved_shared_bytes
CTA_SHARED_BYTES = DEFAULT_TARGET.cta_shared_bytes
SM_THREADS = DEFAULT_TARGET.sm_threads


def device_costs(device: str | DeviceCosts | Target | None = None) -> DeviceCosts:
    """The table of ``device``: a table itself, a device name (its own table; an unknown name is a
    LayoutError listing the known ones), a ``Target`` (its device's table or the nearest,
    ``target.cost_table``), or None (the default target's).

    >>> device_costs("B200")
    Traceback (most recent call last):
    ...
    linear_layouts.core.errors.LayoutError: device: no cost table for 'B200'; known: ['H100', 'H200']
    """
    if isinstance(device, DeviceCosts):
        return device
    if isinstance(device, str):
        return _device_costs(device)
    return cost_table(device).costs


def _costs(device: str | DeviceCosts | None, target: Target | None) -> DeviceCosts:
    """An explicit table or device name, else the table pricing ``target``."""
    return device_costs(device) if device is not None else cost_table(target).costs


def conversion_time_ns(counts: OpCounts, warps: int, device: str | DeviceCosts | None = None,
                       copied_wavefronts: int = 0, *, target: Target | None = None) -> float:
    """Predicted SM-nanoseconds of one conversion step of a CTA of ``warps`` warps (module doc) on ``target``
    (its device's table, ``target.cost_table``; ``device``: a table or device name instead);
    ``copied_wavefronts``: how many of ``counts.wavefronts`` load what another warp also loads."""
    if not 0 <= copied_wavefronts <= counts.wavefronts:
        raise LayoutError(f"copied_wavefronts: {copied_wavefronts} must lie in [0, wavefronts = {counts.wavefronts}]")
    d = _costs(device, target)
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


def shuffle_time_ns(plan, device: str | DeviceCosts | None = None, *, target: Target | None = None) -> float:
    """Predicted SM-nanoseconds of the warp-shuffle conversion ``plan`` (a ``ShufflePlan``) of one CTA:
    its ``shfl.sync`` and the selects / byte permutes codegen emits for it, counted from the plan
    (``op_counts.shuffle_counts``).  Infinite where codegen cannot emit the plan."""
    counts = shuffle_counts(plan)
    if counts is None:
        return float("inf")
    return conversion_time_ns(counts, plan.num_warps, device, target=target)


def shared_time_ns(wavefronts: int, warp_local: bool, warps: int, device: str | DeviceCosts | None = None,
                   copied_wavefronts: int = 0, *, target: Target | None = None) -> float:
    """Predicted SM-nanoseconds of a shared-memory conversion of one CTA with ``wavefronts`` store +
    load wavefronts (``copied_wavefronts`` of them re-reading another warp's loads) and one barrier
    between store and load (a warp barrier when every warp reads only what it stored, ``warp_local``);
    the packed registers need no byte permutes in steady state."""
    counts = OpCounts(wavefronts=wavefronts, barriers_cta=0 if warp_local else 1, barriers_warp=1 if warp_local else 0)
    return conversion_time_ns(counts, warps, device, copied_wavefronts, target=target)
