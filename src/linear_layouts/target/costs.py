"""Measured cost tables, one per device (``devices/<device>.json``), and the table that prices a target.

A table (``DeviceCosts``) holds SM-nanoseconds per building block of a conversion (a wavefront, a
``shfl.sync``, a byte permute, a barrier) by warps per CTA, and the fitted latencies
(``analysis.cost_model`` applies them). ``benchmarks/gpu_microbench.py`` and
``benchmarks/fit_cost_model.py`` write one per device a run gets.

``cost_table(target)`` is the table of the target's device, or, where that device has none, the
nearest table: the same architecture first (a device of sm_90 without a table by the H100's or the
H200's), then the same backend by the nearest compute capability, then any. Every output that prints a
calibrated time names the table (``CostTable.label``: ``H100 table, nearest to B200``).

>>> from linear_layouts.target import named_target
>>> cost_table(named_target("sm_90", "H200")).label, cost_table(named_target(device="B200")).label
('H200 table', 'H100 table, nearest to B200')
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType

from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import parse_int, quote, unique_keys
from linear_layouts.target.known import TARGETS, resolve
from linear_layouts.target.target import Target

__all__ = ["DeviceCosts", "CostTable", "DEVICE_DIR", "DEVICES", "load_device", "device_costs", "cost_table",
           "nearest_device"]

DEVICE_DIR = Path(__file__).resolve().parent / "devices"


@dataclass(frozen=True)
class DeviceCosts:
    """SM-nanoseconds per building block, by warps per CTA (``{1: .., 2: .., 4: .., 8: ..}``), and the
    latencies (ns) of a step's dependent chain (``analysis.cost_model``'s module doc)."""

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
    concurrent_ctas: int = 8  # CTAs one SM overlaps (the conversion benchmark's 8 CTAs per SM)
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
    """The ``DeviceCosts`` of a device file (JSON: the fields, tables keyed by warps as strings of ASCII digits);
    a key given twice in one object a LayoutError (``limits.unique_keys``)."""
    keys_once = functools.partial(unique_keys, what=f"device file {path}")
    raw = json.loads(Path(path).read_text(), object_pairs_hook=keys_once)
    known = {f.name for f in fields(DeviceCosts)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise LayoutError(f"device file {path}: unknown fields {unknown}")
    return DeviceCosts(**{k: ({parse_int(w, f"device file {path}: {k}'s warps"): float(t) for w, t in v.items()}
                              if isinstance(v, dict) else v)
                          for k, v in raw.items()})


#: The measured tables, one per file of ``devices/``, by device name (each file's ``measured`` and ``fit``
#: say where its numbers come from).
DEVICES: Mapping[str, DeviceCosts] = MappingProxyType(
    {d.name: d for d in map(load_device, sorted(DEVICE_DIR.glob("*.json")))})


def device_costs(device: str) -> DeviceCosts:
    """The table measured on ``device`` itself; a device without one is a LayoutError listing the known
    tables (``cost_table`` falls back to the nearest instead).

    >>> device_costs("B200")
    Traceback (most recent call last):
    ...
    linear_layouts.core.errors.LayoutError: device: no cost table for 'B200'; known: ['H100', 'H200']
    """
    if device not in DEVICES:
        raise LayoutError(f"device: no cost table for {quote(device)}; known: {sorted(DEVICES)}")
    return DEVICES[device]


@dataclass(frozen=True)
class CostTable:
    """The table that prices plans on a target's ``device``: its own (``exact``) or the nearest one."""

    costs: DeviceCosts
    device: str

    @property
    def exact(self) -> bool:
        return self.costs.name == self.device

    @property
    def label(self) -> str:
        """``H100 table`` or ``H100 table, nearest to B200``: what an output that prints a time says."""
        return f"{self.costs.name} table" + ("" if self.exact else f", nearest to {self.device}")


def _distance(target: Target, table: str) -> tuple[int, int, str]:
    """How far the device ``table`` was measured on is from ``target``: the same architecture, then the same
    backend by compute capability, then any (a table of an unknown device last); then by name."""
    other = TARGETS.get(table)
    if other is None:
        return 3, 0, table
    if other.arch == target.arch:
        return 0, 0, table
    if other.backend == target.backend == "cuda":
        return 1, abs((other.capability or 0) - (target.capability or 0)), table
    return 2, 0, table


def nearest_device(target: Target | None, devices: Iterable[str]) -> str | None:
    """Of ``devices`` (names of measured tables of any kind), the target's own, else the nearest (the same
    architecture first, then the nearest compute capability, then any; by name on a tie); None for none."""
    target = resolve(target)
    names = list(devices)
    if not names:
        return None
    return target.device if target.device in names else min(names, key=lambda name: _distance(target, name))


def cost_table(target: Target | None = None, *, tables: Mapping[str, DeviceCosts] | None = None) -> CostTable:
    """The table pricing plans on ``target`` (module doc); ``tables``: where to look (default ``DEVICES``)."""
    target = resolve(target)
    if tables is None:
        return _cost_table(target)
    return _nearest(target, tables)


@functools.lru_cache(maxsize=64)  # a handful of targets; plans ask for their table on every cost
def _cost_table(target: Target) -> CostTable:
    return _nearest(target, DEVICES)


def _nearest(target: Target, tables: Mapping[str, DeviceCosts]) -> CostTable:
    if not tables:
        raise LayoutError("cost table: no device tables (target/devices/*.json) to price a plan with")
    return CostTable(tables[nearest_device(target, tables)], target.device)
