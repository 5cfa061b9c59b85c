"""The tile microbenchmark of the ops transposes: every tile of a grid on shapes the sweep does not hold (device).

``ops.kernels.choose_tile`` picks a tile from a short list by rules (its module doc). This script is their
calibration data: for each case of ``CASES`` (2-D and batched transposes of every element width, from
L2-resident to 8x the L2, none of them a shape of ``ops_cases.SWEEP``, which stays the held-out check) it
times our kernel at every tile of ``GRID`` that the tile layouts allow, and Triton's ``tl.trans`` tiles, all
in one process, after one ``torch.compile`` call (the state ``ops_bench.py`` times in), in order and in
reverse order (the faster median kept, as ``ops_bench._time_together``). Every output is checked bit for bit.

    PYTHONPATH=src python3 benchmarks/ops_tile_scan.py --mode prepare     # CPU: cubins into build/tile_scan
    PYTHONPATH=src python3 benchmarks/ops_tile_scan.py --out DIR          # device; carries build/tile_scan and
                                                                          # build/triton_transpose
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

HERE = Path(__file__).resolve().parent
CACHE = HERE / "build" / "tile_scan"
os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(CACHE))

#: (shape, element bytes): transposes of the last two dims; none is a shape of the sweep.
CASES = (((2048, 3072), 1), ((3072, 10240), 1), ((6144, 6144), 1), ((16384, 16384), 1), ((12, 1536, 2048), 1),
         ((1536, 2048), 2), ((3072, 3072), 2), ((2048, 12288), 2), ((6144, 6144), 2), ((12288, 12288), 2),
         ((24, 1024, 768), 2),
         ((1536, 1536), 4), ((3072, 3072), 4), ((3072, 5120), 4), ((6144, 6144), 4), ((24, 1024, 768), 4),
         ((1024, 2048), 8), ((3072, 3072), 8))
#: Transposes whose rows of ``X^T`` 16 bytes do not divide (``--narrow``): row counts of 8, 4 and 2 bytes past a
#: multiple of 16, so the tiles store narrower vectors.
NARROW_CASES = (((4104, 8192), 1), ((4100, 8192), 1), ((4100, 8192), 2), ((4098, 8192), 2), ((4098, 8192), 4),
                ((8200, 8192), 1))
#: Held out from the narrow tiles' calibration (``--narrow-heldout``): narrow rows of ``X`` and of ``X^T``, both,
#: L2-resident sizes, a batch, 4-byte elements from DRAM.
NARROW_HELDOUT = (((8192, 4104), 1), ((4100, 4100), 2), ((2052, 4096), 1), ((1030, 2048), 2), ((16, 1000, 1028), 2),
                  ((12290, 4096), 4), ((6150, 6150), 1), ((777, 8192), 4))
#: Held out from the refined rule (``--narrow-heldout2``; ``NARROW_HELDOUT`` refined it): rows of ``X`` alone
#: narrow, L2-resident, batched, single elements.
NARROW_HELDOUT2 = (((12288, 6150), 1), ((3074, 1024), 4), ((8, 2050, 2048), 1), ((5002, 3000), 2), ((1000, 1000), 1),
                   ((20000, 1030), 2), ((4097, 4097), 4), ((6, 3000, 3002), 4))
#: Transposes with 16-byte vectors whose rows of ``X^T`` start inside a 32-byte sector every other row (``--sector``):
#: ``m w`` an odd multiple of 16.
SECTOR_CASES = (((4112, 8192), 1), ((12304, 4096), 1), ((6, 1040, 4096), 1), ((4104, 8192), 2), ((2056, 16384), 2),
                ((4100, 8192), 4))
#: Held out from the sector rule (``--sector-heldout``): from DRAM and in L2, 8/16/32-bit, a batch.
SECTOR_HELDOUT = (((8208, 8192), 1), ((3088, 3072), 1), ((6152, 4096), 2), ((1032, 2048), 2), ((2052, 8192), 4),
                  ((12, 1028, 1024), 4), ((516, 2048), 4))
#: Held out from the sector rule's refinement (``--sector-heldout2``; ``SECTOR_HELDOUT`` refined it: in L2 the rule
#: does not apply).
SECTOR_HELDOUT2 = (((16400, 4096), 1), ((2, 6160, 4096), 1), ((10248, 3072), 2), ((3, 4104, 2048), 2),
                   ((4100, 6144), 4), ((1540, 1536), 4))
#: Tile shapes, warps and blocks tried (those ``tile_layouts`` accepts, of 4 to 64 KiB), besides the planner's list.
SHAPES = ((32, 32), (64, 64), (64, 128), (128, 64), (128, 128), (256, 128), (128, 256), (256, 256))
WARPS = (4, 8, 16)
BLOCKS = (1, 4)
MIN_TILE, MAX_TILE = 4 << 10, 64 << 10
_BASE, _OTHER = 1 << 40, 2 << 40


def vectors(shape, element_bytes: int) -> tuple[int, int]:
    """Elements per global access along a row of ``X`` and of ``X^T`` for a transpose of ``shape``'s last two
    dims at aligned addresses (``ops.plan.vector_elements``)."""
    from linear_layouts.ops.plan import vector_elements

    return vector_elements(element_bytes, shape[-1]), vector_elements(element_bytes, shape[-2])


def grid(element_bytes: int, blocks=BLOCKS, shapes=SHAPES, vector: tuple[int, int] = (0, 0)) -> list:
    """The planner's tiles and every tile of ``shapes`` x ``WARPS`` x ``blocks`` that ``tile_layouts`` accepts,
    with ``vector`` elements per access (default: 16 bytes on both sides)."""
    from linear_layouts.core.errors import LayoutError
    from linear_layouts.ops.kernels import TileConfig, tile_layouts, transpose_tiles

    vin, vout = vector if vector[0] else (16 // element_bytes,) * 2
    out = list(transpose_tiles(element_bytes, vin, vout))  # the planner's list, then the grid
    for rows, cols in shapes:
        for warps in WARPS:
            for block in blocks:
                config = TileConfig(element_bytes, rows, cols, warps, vin, vout, block)
                if not MIN_TILE <= config.tile_bytes <= MAX_TILE:
                    continue
                try:
                    tile_layouts(config)
                except LayoutError:
                    continue
                if config not in out:
                    out.append(config)
    return out


def sweep_transposes() -> list:
    """The sweep's transposes as ``(shape, element bytes)`` of a batched transpose of the last two dims (the
    held-out check of what ``CASES`` calibrates)."""
    from harness.ops_cases import ITEMSIZE, SWEEP
    from linear_layouts.ops.plan import PermuteKind, plan_permutation

    out = []
    for _, shape, dims, dtype in SWEEP:
        w = ITEMSIZE[dtype]
        if w not in (1, 2, 4, 8):
            continue
        p = plan_permutation(tuple(shape), tuple(dims), w)
        if p.kind is not PermuteKind.TRANSPOSE or p.element_bytes != w or len(p.batch) > 1:
            continue
        batch = p.batch[0][0] if p.batch else 1
        case = (((batch,) if batch > 1 else ()) + (p.rows, p.cols), w)
        if case not in out and p.rows * p.cols * batch * w >= 16 << 20:
            out.append(case)
    return out


def label(config) -> str:
    return f"{config.rows}x{config.cols}/{config.warps}w/b{config.block}"


def launches(shape, w: int, config, src: int, dst: int, sms: int, l2: int):
    from linear_layouts.ops.kernels import GridShape
    from linear_layouts.ops.launches import permute_launches

    dims = tuple(range(len(shape) - 2)) + (len(shape) - 1, len(shape) - 2)
    return permute_launches(tuple(shape), dims, w, src, dst, GridShape(sms, l2), config)


def prepare(workers: int = 0, cases=CASES, blocks=BLOCKS, shapes=SHAPES) -> None:
    from harness.ops_cases import L2_BYTES, SMS
    from linear_layouts.codegen.ptx import compile_cubin
    from linear_layouts.ops.launches import Launch

    from linear_layouts.ops.kernels import GridShape
    from linear_layouts.ops.launches import permute_launches

    sources = {}
    for shape, w in cases:
        dims = tuple(range(len(shape) - 2)) + (len(shape) - 1, len(shape) - 2)
        for item in permute_launches(tuple(shape), dims, w, _BASE, _OTHER, GridShape(SMS, L2_BYTES)):
            if isinstance(item, Launch):  # the planner's own
                sources[item.kernel.source] = None
        for config in grid(w, blocks, shapes, vectors(shape, w)):
            for item in launches(shape, w, config, _BASE, _OTHER, SMS, L2_BYTES):
                if isinstance(item, Launch):
                    sources[item.kernel.source] = None
    start = time.time()
    with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 2) as pool:
        list(pool.map(lambda s: compile_cubin(s, "sm_90"), sources))
    print(f"{len(sources)} cubins in {time.time() - start:.0f} s into {CACHE}")


def measure_setup(out: str):
    """``(out_dir, dtype names by element bytes, Triton's tiles, the device's GridShape)`` of a transpose scan, after
    one ``torch.compile`` call (the state the sweep times in)."""
    import torch

    import triton_transpose
    from ops_bench import _random
    from linear_layouts.ops import launch

    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    warm = _random((4096, 4096), "bfloat16")
    torch.compile(lambda t: t.t().contiguous(), dynamic=True)(warm)  # the sweep's process state
    torch.cuda.synchronize()
    dtype = {1: "uint8", 2: "bfloat16", 4: "float32", 8: "float64"}
    return out_dir, dtype, triton_transpose.TritonTransposes(), launch.grid_shape(0)


def add_peers(fns: dict, correct: dict, triton, x, out, expected, w: int) -> None:
    """Into ``fns`` / ``correct``: Triton's ``tl.trans`` at each of its tiles (``triton {tile}``, each output checked
    against ``expected``) and a same-size ``copy`` of ``x``, for the transpose of ``x``'s last two dims into ``out``."""
    import torch

    from ops_bench import _same

    m, n = x.shape[-2], x.shape[-1]
    batch = x.numel() // (m * n)
    for tile, go in triton.launchers(w, m, n).items():
        out.zero_()
        go(x.data_ptr(), out.data_ptr(), batch)
        correct[f"triton {tile}"] = _same(out, expected)
        fns[f"triton {tile}"] = lambda go=go: go(x.data_ptr(), out.data_ptr(), batch)
    flat = x.reshape(-1)
    copy = torch.empty_like(flat)
    fns["copy"], correct["copy"] = (lambda: copy.copy_(flat)), True


def measure(args) -> None:
    import torch

    from ops_bench import _random, _same, _time_together
    from linear_layouts import ops
    from harness import ops_cases

    out_dir, dtype, triton, shape_of = measure_setup(args.out)
    device = 0
    rows = []
    for shape, w in args.cases:
        start = time.time()
        x = _random(shape, dtype[w])
        expected = x.transpose(-1, -2).contiguous()
        out = torch.empty_like(expected)
        contenders, correct = {}, {}
        for config in grid(w, args.blocks, args.shapes, vectors(shape, w)):
            items = launches(shape, w, config, x.data_ptr(), out.data_ptr(), shape_of.multiprocessors,
                             shape_of.l2_bytes)
            run = ops_cases.runner(items, device)
            out.zero_()
            run()
            correct[f"ours {label(config)}"] = _same(out, expected)
            contenders[f"ours {label(config)}"] = run

        def planner():
            ops.transpose(x, out=out)

        out.zero_()
        planner()
        correct["ours (planner)"] = _same(out, expected)
        contenders["ours (planner)"] = planner
        add_peers(contenders, correct, triton, x, out, expected, w)
        us = _time_together(contenders)
        rows.append(dict(shape=list(shape), element_bytes=w, bytes=x.numel() * w,
                         kernels={k: dict(us=us[k], correct=correct[k]) for k in contenders}))
        print(f"{shape} {w}: {len(contenders)} kernels, {time.time() - start:.1f} s", flush=True)
        (out_dir / "ops_tile_scan.json").write_text(json.dumps(dict(environment=_environment(), rows=rows), indent=1))
    (out_dir / "ops_tile_scan.md").write_text(report(dict(environment=_environment(), rows=rows)))


def _environment() -> dict:
    import torch

    return {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "gpu": torch.cuda.get_device_name(0),
            "torch": torch.__version__}


def report(results: dict) -> str:
    env = results["environment"]
    lines = [f"# Ops transpose tiles on shapes outside the sweep ({env['gpu']}, {env['date']})", "",
             "µs per launch (CUDA graphs of 20, timed together after a torch.compile call); `best`: our fastest "
             "tile; ratios over Triton's fastest tile (> 1: ours faster).", "",
             "| shape | bytes | planner (µs) | our best tile (µs) | Triton best (µs) | copy µs | planner / Triton | "
             "best / Triton | our 5 fastest |", "|---|---|---|---|---|---|---|---|---|"]
    for row in results["rows"]:
        ks = {k: v for k, v in row["kernels"].items() if v["correct"]}
        ours = {k[5:]: v["us"] for k, v in ks.items() if k.startswith("ours ") and k != "ours (planner)"}
        tri = {k[7:]: v["us"] for k, v in ks.items() if k.startswith("triton ")}
        best = min(ours, key=ours.get)
        tbest = min(tri, key=tri.get) if tri else None
        planner = ks.get("ours (planner)", {}).get("us")
        top = ", ".join(f"{k} {ours[k]:.1f}" for k in sorted(ours, key=ours.get)[:5])
        t = tri[tbest] if tbest else float("nan")
        lines.append(f"| {row['shape']} {8 * row['element_bytes']}-bit | {row['bytes'] >> 20} MiB | {planner:.1f} | "
                     f"{best} {ours[best]:.1f} | {tbest} {t:.1f} | {row['kernels']['copy']['us']:.1f} | "
                     f"{t / planner:.3f} | {t / ours[best]:.3f} | {top} |")
    wrong = [f"{r['shape']} {k}" for r in results["rows"] for k, v in r["kernels"].items() if not v["correct"]]
    lines += ["", f"Wrong outputs: {wrong or 'none'}."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", default="measure", choices=["prepare", "measure", "report"])
    ap.add_argument("--out", default="/tmp/ops_tile_scan")
    ap.add_argument("--jobs", type=int, default=0)
    ap.add_argument("--bytes", default="", help="comma list of element sizes (default: all of CASES)")
    ap.add_argument("--blocks", default=",".join(map(str, BLOCKS)), help="blocks tried (default: %(default)s)")
    ap.add_argument("--shapes", default=",".join(f"{r}x{c}" for r, c in SHAPES), help="tile shapes tried")
    ap.add_argument("--sweep", action="store_true", help="also the sweep's 2-D and batched transposes (validation)")
    ap.add_argument("--narrow", action="store_true", help="NARROW_CASES instead of CASES")
    ap.add_argument("--narrow-heldout", action="store_true", help="NARROW_HELDOUT instead of CASES")
    ap.add_argument("--narrow-heldout2", action="store_true", help="NARROW_HELDOUT2 instead of CASES")
    ap.add_argument("--sector", action="store_true", help="SECTOR_CASES instead of CASES")
    ap.add_argument("--sector-heldout", action="store_true", help="SECTOR_HELDOUT instead of CASES")
    ap.add_argument("--sector-heldout2", action="store_true", help="SECTOR_HELDOUT2 instead of CASES")
    args = ap.parse_args(argv)
    args.blocks = tuple(int(b) for b in args.blocks.split(","))
    args.shapes = tuple(tuple(int(v) for v in s.split("x")) for s in args.shapes.split(","))
    args.cases = (list(NARROW_CASES) if args.narrow else list(NARROW_HELDOUT) if args.narrow_heldout
                  else list(NARROW_HELDOUT2) if args.narrow_heldout2 else list(SECTOR_CASES) if args.sector
                  else list(SECTOR_HELDOUT) if args.sector_heldout
                  else list(SECTOR_HELDOUT2) if args.sector_heldout2 else list(CASES)) + (sweep_transposes() if args.sweep else [])
    if args.bytes:
        keep = {int(b) for b in args.bytes.split(",")}
        args.cases = [c for c in args.cases if c[1] in keep]
    if args.mode == "prepare":
        prepare(args.jobs, args.cases, args.blocks, args.shapes)
    elif args.mode == "report":
        results = json.loads((Path(args.out) / "ops_tile_scan.json").read_text())
        (Path(args.out) / "ops_tile_scan.md").write_text(report(results))
    else:
        measure(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
