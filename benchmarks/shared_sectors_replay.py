"""The planner with and without ``ops.kernels.SHARED_SECTOR_TILES``, against the tiles runs of ``ops_heldout.py`` timed.

For every transpose of the runs (JSON) that the rule changes, the tile the planner takes without it and with it,
each one's time in the run's own scan (same run, same graphs), and their ratio; then the geomean. Cases under
16 MiB carry a scan only where the run scanned every case (``--scan-from-mib``, as the run was told).

    PYTHONPATH=src:benchmarks python3 benchmarks/shared_sectors_replay.py RUN.json ... [--scan-from-mib 4]
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)
from harness import ops_cases


def _tile(shape, dims, itemsize, rule: dict) -> str:
    """The planner's first kernel's name for the case with ``SHARED_SECTOR_TILES = rule`` (plan caches cleared; ""
    where it launches no kernel)."""
    from linear_layouts.ops import kernels, launches

    kernels.SHARED_SECTOR_TILES = rule
    launches._template.cache_clear()
    device = kernels.GridShape(ops_cases.SMS, ops_cases.L2_BYTES)
    first = next((x for x in launches.permute_launches(shape, dims, itemsize, ops_cases._BASE, ops_cases._OTHER, device)
                  if isinstance(x, launches.Launch)), None)
    return first.kernel.name if first is not None else ""


def replay(paths: list[str]) -> str:
    from linear_layouts.ops import kernels

    rule = dict(kernels.SHARED_SECTOR_TILES)
    lines = ["| run | shape | dims | dtype | MiB | without the rule (µs) | with it (µs) | without / with | Triton µs |",
             "|---|---|---|---|---|---|---|---|---|"]
    ratios = []
    try:
        for path in paths:
            run = json.loads(Path(path).read_text())
            for r in run["permute"]:
                tiles = r.get("ours_tiles") or {}
                shape, dims, w = tuple(r["shape"]), tuple(r["dims"]), ops_cases.ITEMSIZE[r["dtype"]]
                before, after = _tile(shape, dims, w, {}), _tile(shape, dims, w, rule)
                if before == after:
                    continue
                scan = ops_cases.tile_alternatives(shape, dims, w, ops_cases._BASE, ops_cases._OTHER, scan=True)
                names = {launched[0].kernel.name: label for label, launched in scan.items()}
                b, a = names.get(before), names.get(after)
                if b not in tiles or a not in tiles:
                    lines.append(f"| {run['seed']} | {list(shape)} | {list(dims)} | {r['dtype']} | | not scanned | | | |")
                    continue
                ratio = tiles[b]["us"] / tiles[a]["us"]
                ratios.append(ratio)
                triton = f"{r['triton_us']:.1f}" if r.get("triton_us") else "-"
                lines.append(f"| {run['seed']} | {list(shape)} | {list(dims)} | {r['dtype']} | {r['bytes'] / 2**20:.0f} | "
                             f"{tiles[b]['us']:.1f} ({b}) | {tiles[a]['us']:.1f} ({a}) | {ratio:.3f} | {triton} |")
    finally:
        kernels.SHARED_SECTOR_TILES = rule
    if not ratios:
        said = "the rule changes no case of these runs" if len(lines) == 2 else "no case the rule changes was scanned"
        return "\n".join(lines) + f"\n\n{said}\n"
    geomean = math.exp(sum(map(math.log, ratios)) / len(ratios))
    return ("\n".join(lines) + f"\n\n{len(ratios)} changed cases: without / with the rule {geomean:.3f} in geomean, "
            f"{min(ratios):.3f} to {max(ratios):.3f}, {sum(r < 1 for r in ratios)} slower with it\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="ops_heldout runs (JSON)")
    ap.add_argument("--scan-from-mib", type=float, default=ops_cases.LARGE_BYTES / 2**20,
                    help="the size from which the runs scanned every tile (default: the large cases')")
    args = ap.parse_args()
    ops_cases.LARGE_BYTES = int(args.scan_from_mib * 2**20)
    print(replay(args.runs), end="")


if __name__ == "__main__":
    main()
