"""What one global-memory instruction costs on a device, from a measured table
(``benchmarks/gpu_global_microbench.py``, one JSON per device under ``target/devices/global/``).

The table gives SM-nanoseconds per warp-instruction (the time one SM is busy with it while the whole
chip streams such instructions, 8 CTAs of 256 threads per SM) for each

* ``op``: ``ld``, ``st`` (any type: ``element`` ``b``), ``atom.acq_rel``, ``atom.relaxed``, ``red.relaxed``
  (``element`` ``f32``, ``f16``, ``bf16``);
* ``bytes`` per lane (1 .. 16; an atomic's whole vector: ``.v4.f32`` is 16);
* ``pattern``: ``dense/g`` -- ``g`` lanes per contiguous segment, the other bytes of each sector the
  warp's next instructions' (a tile) -- or ``sparse/g`` (nobody's: a gather), with its sectors per
  request (``sectors_per_request[bytes][pattern]``);
* ``footprint``: ``dram`` (1 GiB streamed), ``l2`` (4 MiB, L2-resident), ``contended`` (atomics into 4 KiB).

``GlobalCostTable.instruction_ns`` finds an instruction's cost from its op, element, bytes and how its
lanes fall into contiguous runs (the pattern's ``g``): the measured pattern, else linearly in log2(g)
between the two nearest measured (a request of runs of 8 lanes lies halfway between ``dense/32`` and
``dense/2``); outside the measured range, the nearest. The runs matter, not the sectors alone: 16-byte
lanes in runs of 32 or of 2 touch 16 sectors either way, in 4 lines or in 16. A file is data only:
nothing here is a default; a device without a file has no table (``global_table`` returns None).

>>> t = GlobalCostTable.from_json({"name": "T", "sectors_per_request": {"4": {"dense/32": 4, "dense/2": 16}},
...     "ns": {"full": {"dram": {"st": {"b": {"4": {"dense/32": 2.0, "dense/2": 6.0}}}}}}})
>>> t.instruction_ns("st", "b", 4, lanes_per_segment=8)
4.0
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from linear_layouts.core.arguments import checked
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import parse_int, quote, unique_keys
from linear_layouts.target import DEVICE_DIR, Target, nearest_device

__all__ = ["GlobalCostTable", "global_table", "global_table_for", "load_global_table", "GLOBAL_TABLE_DIR", "table_op"]

GLOBAL_TABLE_DIR = DEVICE_DIR / "global"  #: target data, beside the conversion cost tables


@dataclass(frozen=True)
class GlobalCostTable:
    """A device's measured global-memory costs (module doc): ``ns[size][footprint][op][element][bytes][pattern]``
    and ``sectors[bytes][pattern]``; ``name`` and where it was ``measured``."""

    name: str
    ns: Any
    sectors: Any
    measured: str = ""

    @staticmethod
    def from_json(raw: Any) -> "GlobalCostTable":
        """The table of a decoded JSON document (``gpu_global_microbench.table``'s)."""
        if not isinstance(raw, dict) or not isinstance(raw.get("ns"), dict) or \
                not isinstance(raw.get("sectors_per_request"), dict):
            raise LayoutError("global cost table: needs 'ns' and 'sectors_per_request' objects "
                              "(benchmarks/gpu_global_microbench.py's table)")
        return GlobalCostTable(str(raw.get("name", "")), raw["ns"], raw["sectors_per_request"],
                               str(raw.get("measured", "")))

    def has(self, op: str, element: str, nbytes: int, *, footprint: str = "dram", size: str = "full") -> bool:
        return bool(self._cells(op, element, nbytes, footprint, size))

    def _cells(self, op: str, element: str, nbytes: int, footprint: str, size: str) -> dict:
        return (((((self.ns.get(size) or {}).get(footprint) or {}).get(op) or {}).get(element) or {})
                .get(str(nbytes)) or {})

    @checked
    def instruction_ns(self, op: str, element: str, nbytes: int, *, lanes_per_segment: float, dense: bool = True,
                       footprint: str = "dram", size: str = "full") -> float:
        """SM-ns of one warp-instruction ``op`` of ``nbytes`` per lane whose lanes fall in contiguous runs of
        ``lanes_per_segment`` (32: fully coalesced; 1: every lane its own run) (module doc): the measured
        pattern of that many lanes, else linear in log2(lanes) between the two nearest measured of the same
        kind (``dense`` or sparse; the other kind where none is), the nearest outside their range.
        ``LayoutError`` where the table has no cell for (op, element, bytes, footprint)."""
        import math

        cells = self._cells(op, element, nbytes, footprint, size)
        points = self._points(cells, "dense/" if dense else "sparse/") or self._points(cells, "")
        if not points:
            raise LayoutError(f"global cost table {self.name}: no measured cell for {quote(op)} {quote(element)} "
                              f"{nbytes} bytes per lane ({footprint}, {size})")
        x = math.log2(max(1.0, min(32.0, float(lanes_per_segment))))
        xs = sorted(points)
        if x <= xs[0]:
            return points[xs[0]]
        if x >= xs[-1]:
            return points[xs[-1]]
        for x0, x1 in zip(xs, xs[1:]):
            if x0 <= x <= x1:
                return points[x0] + (points[x1] - points[x0]) * (x - x0) / (x1 - x0)
        return points[xs[-1]]  # pragma: no cover - the range checks above cover every x

    @staticmethod
    def _points(cells: dict, kind: str) -> dict[float, float]:
        """log2(lanes per segment) -> ns of the patterns of ``cells`` of ``kind`` (``dense/``, ``sparse/``, any)."""
        import math

        out: dict[float, list[float]] = {}
        for key, value in cells.items():
            if key.startswith(kind) and "/" in key:
                lanes = parse_int(key.split("/")[1], f"global cost table: the lanes of the cell {quote(key)}")
                out.setdefault(math.log2(lanes), []).append(float(value))
        return {x: sum(v) / len(v) for x, v in out.items()}


def table_op(kind: str, semantics: str) -> str:
    """The table's op for a PTX instruction ``kind`` (``ld``, ``st``, ``cp.async``, ``atom``, ``red``) of
    ``semantics``: a ``cp.async`` reads as a load; an atomic's ordering is ``acq_rel`` unless relaxed
    (``acquire`` / ``release`` order one side only: as ``acq_rel``, the nearest measured)."""
    if kind in ("ld", "cp.async"):
        return "ld"
    if kind == "st":
        return "st"
    if kind == "red":
        return "red.relaxed"
    return "atom.relaxed" if semantics == "relaxed" else "atom.acq_rel"


@checked
def load_global_table(path: str | Path) -> GlobalCostTable:
    """The table in the JSON file ``path``; a key given twice in one object a LayoutError (``limits.unique_keys``)."""
    try:
        raw = json.loads(Path(path).read_text(), object_pairs_hook=functools.partial(unique_keys, what="json"))
    except (OSError, ValueError) as error:
        raise LayoutError(f"path: cannot read a global cost table from {quote(str(path))}: {error}") from None
    return GlobalCostTable.from_json(raw)


def global_table(device: str | None = None) -> GlobalCostTable | None:
    """The measured table of ``device`` (``target/devices/global/<device>.json``; default: the only
    file there, if exactly one), or None where none is measured."""
    files = sorted(GLOBAL_TABLE_DIR.glob("*.json")) if GLOBAL_TABLE_DIR.is_dir() else []
    if device is not None:
        files = [f for f in files if f.stem == device]
    if len(files) != 1:
        return None
    return load_global_table(files[0])


def global_table_for(target: Target | None = None) -> GlobalCostTable | None:
    """The measured table that prices ``target``'s global accesses: its device's, else the nearest one (the same
    architecture first, ``target.nearest_device``; an H100 by the H200's until it has its own), or None."""
    files = {f.stem: f for f in sorted(GLOBAL_TABLE_DIR.glob("*.json"))} if GLOBAL_TABLE_DIR.is_dir() else {}
    name = nearest_device(target, files)
    return None if name is None else load_global_table(files[name])
