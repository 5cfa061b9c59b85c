"""What one global-memory instruction costs on a device, from a measured table
(``benchmarks/gpu_global_microbench.py``, one JSON per device under ``analysis/devices/global/``).

The table gives SM-nanoseconds per warp-instruction (the time one SM is busy with it while the whole
chip streams such instructions, 8 CTAs of 256 threads per SM) for each

* ``op``: ``ld``, ``st`` (any type: ``element`` ``b``), ``atom.acq_rel``, ``atom.relaxed``, ``red.relaxed``
  (``element`` ``f32``, ``f16``, ``bf16``);
* ``bytes`` per lane (1 .. 16; an atomic's whole vector: ``.v4.f32`` is 16);
* ``pattern``: ``dense/g`` -- ``g`` lanes per contiguous segment, the other bytes of each sector the
  warp's next instructions' (a tile) -- or ``sparse/g`` (nobody's: a gather), with its sectors per
  request (``sectors_per_request[bytes][pattern]``);
* ``footprint``: ``dram`` (1 GiB streamed), ``l2`` (4 MiB, L2-resident), ``contended`` (atomics into 4 KiB).

``GlobalCostTable.instruction_ns`` finds an instruction's cost from its op, element, bytes and the
sectors one warp-request touches: between the two measured patterns of the same kind with the nearest
sector counts, linearly in sectors (a request touching 6 sectors at 4 bytes per lane lies between
``dense/8``'s 4 and ``dense/4``'s 8); outside the measured range, the nearest. A file is data only:
nothing here is a default; a device without a file has no table (``global_table`` returns None).

>>> t = GlobalCostTable.from_json({"name": "T", "sectors_per_request": {"4": {"dense/32": 4, "dense/8": 4, "dense/4": 8}},
...     "ns": {"full": {"dram": {"st": {"b": {"4": {"dense/32": 2.0, "dense/4": 6.0}}}}}}})
>>> t.instruction_ns("st", "b", 4, sectors=6)
4.0
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from linear_layouts.core.arguments import checked
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote

__all__ = ["GlobalCostTable", "global_table", "load_global_table", "GLOBAL_TABLE_DIR", "table_op"]

GLOBAL_TABLE_DIR = Path(__file__).resolve().parent / "devices" / "global"


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
    def instruction_ns(self, op: str, element: str, nbytes: int, *, sectors: float, dense: bool = True,
                       footprint: str = "dram", size: str = "full") -> float:
        """SM-ns of one warp-instruction ``op`` of ``nbytes`` per lane touching ``sectors`` 32-byte sectors
        (module doc). ``LayoutError`` where the table has no cell for (op, element, bytes, footprint)."""
        cells = self._cells(op, element, nbytes, footprint, size)
        kind = "dense/" if dense else "sparse/"
        counts = self.sectors.get(str(nbytes)) or {}
        points = sorted({(float(counts[key]), float(value)) for key, value in cells.items()
                         if key.startswith(kind) and key in counts})
        if not points and cells:  # no pattern of this kind measured: the other kind's
            points = sorted({(float(counts[key]), float(value)) for key, value in cells.items() if key in counts})
        if not points:
            raise LayoutError(f"global cost table {self.name}: no measured cell for {quote(op)} {quote(element)} "
                              f"{nbytes} bytes per lane ({footprint}, {size})")
        merged: dict[float, list[float]] = {}
        for s, v in points:
            merged.setdefault(s, []).append(v)
        xs = sorted(merged)
        ys = [sum(merged[x]) / len(merged[x]) for x in xs]
        if sectors <= xs[0]:
            return ys[0]
        if sectors >= xs[-1]:
            return ys[-1]
        for (x0, y0), (x1, y1) in zip(zip(xs, ys), zip(xs[1:], ys[1:])):
            if x0 <= sectors <= x1:
                return y0 + (y1 - y0) * (sectors - x0) / (x1 - x0)
        return ys[-1]  # pragma: no cover - the range checks above cover every sectors value


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
    """The table in the JSON file ``path``."""
    try:
        raw = json.loads(Path(path).read_text())
    except (OSError, ValueError) as error:
        raise LayoutError(f"path: cannot read a global cost table from {quote(str(path))}: {error}") from None
    return GlobalCostTable.from_json(raw)


def global_table(device: str | None = None) -> GlobalCostTable | None:
    """The measured table of ``device`` (``analysis/devices/global/<device>.json``; default: the only
    file there, if exactly one), or None where none is measured."""
    files = sorted(GLOBAL_TABLE_DIR.glob("*.json")) if GLOBAL_TABLE_DIR.is_dir() else []
    if device is not None:
        files = [f for f in files if f.stem == device]
    if len(files) != 1:
        return None
    return load_global_table(files[0])
