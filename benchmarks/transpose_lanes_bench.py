"""How a warp's stores of ``B`` spread over its rows, and ``ldmatrix.trans``, in the ops transposes (device).

An ops tile (``ops.kernels.tile_layouts``) stores ``B = A^T`` in 16-byte vectors, each thread one vector of ``B``'s
row, with as many lanes down a row as the tile's rows allow (16-bit 64-row tiles: 8 lanes, a warp's store covers
4 rows x 128 bytes of ``B``; 32-bit: 16 lanes, 2 rows x 256 bytes). Triton's 16-bit ``tl.trans`` puts 4 lanes down a
row (8 rows x 64 bytes) and loads them with ``ldmatrix.trans``. Variants of each tile, the launch otherwise the
same (``ops.launches.permute_launches``): ``planner``: the tile as ``ops`` has it; ``lanesK``: ``row_lanes = K``
(the planner's conversion between the new layouts); ``ldsm``: 4 row lanes through
``analysis.conversion.plan_through_matrix_trans`` (``st.shared.v4`` + ``ldmatrix.x4.trans``, 16-bit only).
Each case times them, ``ops.transpose``, Triton's tiles and a same-size copy together (``ops_bench._time_together``),
every output checked bit for bit.

``CASES`` (the calibration set) holds no shape of the sweep (``ops_cases.SWEEP``); ``--set sweep`` times the sweep's
large transposes instead (held out), ``--set heldout`` ``HELDOUT``, drawn after the rule was fixed; each case also
times the tile the planner took before ``kernels.dram_tile`` (``ops before dram_tile``).

    PYTHONPATH=src:benchmarks python3 benchmarks/transpose_lanes_bench.py --mode prepare [--set sweep|heldout]   # CPU
    PYTHONPATH=src:benchmarks python3 benchmarks/transpose_lanes_bench.py --out DIR [--set sweep|heldout]        # device;
        carry benchmarks/build/transpose_lanes and benchmarks/build/triton_transpose
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

HERE = Path(__file__).resolve().parent
CACHE = HERE / "build" / "transpose_lanes"
os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(CACHE))

#: (shape, element bytes), transposes of the last two dims, none a shape of the sweep: L2-resident to 8 L2s,
#: 2-D and batched (NCHW <-> NHWC-like batches of 64 to 256 channels).
CASES = (((2048, 3072), 1), ((3072, 10240), 1), ((6144, 6144), 1), ((12, 1536, 2048), 1), ((64, 128, 3136), 1),
         ((1536, 2048), 2), ((3072, 3072), 2), ((2048, 12288), 2), ((6144, 6144), 2), ((24, 1024, 768), 2),
         ((64, 128, 3136), 2), ((64, 3136, 128), 2), ((16, 192, 12544), 2), ((128, 784, 256), 2),
         ((1536, 1536), 4), ((3072, 5120), 4), ((6144, 6144), 4), ((24, 1024, 768), 4), ((64, 128, 3136), 4),
         ((64, 3136, 128), 4), ((1024, 2048), 8), ((3072, 3072), 8), ((32, 3136, 64), 8))
#: Held out from the calibration of ``kernels.dram_tile`` (``--set heldout``), drawn after it was fixed: 16-bit
#: activations and weights of other models (EfficientNet's 144 channels at 56 x 56, LLaMA-13B's MLP), batched
#: matrices from 50 to 141 MiB, and 8- and 32-bit controls the rule leaves alone.
HELDOUT = (((64, 144, 3136), 2), ((64, 3136, 144), 2), ((96, 256, 1024), 2), ((40, 1280, 640), 2),
           ((16, 512, 4096), 2), ((256, 64, 2304), 2), ((5120, 13824), 2), ((13824, 5120), 2),
           ((64, 144, 3136), 4), ((6144, 8192), 1))
#: Row lanes tried besides each tile's own.
ROW_LANES = (2, 4, 8)
_BASE, _OTHER = 1 << 40, 2 << 40


def sweep_cases() -> tuple:
    """The sweep's large transposes (``transpose_tiles`` vectors, one batch dim at most): the held-out set."""
    from ops_tile_scan import sweep_transposes

    return tuple(sweep_transposes())


def variants(config) -> dict:
    """``{label: TileConfig}``: ``config`` as it is (``planner``), at each of ``ROW_LANES`` that differs from its
    own and fits the tile (``lanesK``), and through ``ldmatrix.trans`` (``ldsm``, 16-bit)."""
    from linear_layouts.core.errors import LayoutError
    from linear_layouts.ops.kernels import tile_layouts

    own = tile_layouts(config)
    out = {"planner": config}
    tries = {f"lanes{k}": dataclasses.replace(config, row_lanes=k) for k in ROW_LANES}
    if config.element_bytes == 2 and config.block == 1:
        tries["ldsm"] = dataclasses.replace(config, ldmatrix=True)
    for label, other in tries.items():
        try:
            if tile_layouts(other) != own or label == "ldsm":
                out[label] = other
        except LayoutError:
            continue
    return out


def contenders(shape, w: int, src: int, dst: int, sms: int, l2: int) -> dict:
    """``{label: launches}``: every variant of every tile of the planner's list for the transpose of ``shape``'s
    last two dims (``w``-byte elements, 16-byte vectors), at pointers ``src`` and ``dst``."""
    from linear_layouts.core.errors import LayoutError
    from linear_layouts.ops.kernels import GridShape, transpose_tiles
    from linear_layouts.ops.launches import permute_launches

    dims = tuple(range(len(shape) - 2)) + (len(shape) - 1, len(shape) - 2)
    v = 16 // w
    out = {}
    for config in transpose_tiles(w, v, v):
        for label, tile in variants(config).items():
            try:
                items = permute_launches(tuple(shape), dims, w, src, dst, GridShape(sms, l2), tile)
            except LayoutError:
                continue
            out[f"{config.rows}x{config.cols}/{config.warps}w {label}"] = items
    return out


def _cases(which: str) -> tuple:
    return {"sweep": sweep_cases, "heldout": lambda: HELDOUT}.get(which, lambda: CASES)()


def ruleless(shape, w: int, src: int, dst: int, sms: int, l2: int) -> list:
    """The launches of the tile ``choose_tile`` picks for the transpose of ``shape``'s last two dims without
    ``kernels.dram_tile`` (the planner before that rule)."""
    from linear_layouts.ops.kernels import GridShape, choose_tile, transpose_tiles
    from linear_layouts.ops.launches import permute_launches

    dims = tuple(range(len(shape) - 2)) + (len(shape) - 1, len(shape) - 2)
    batch = 1
    for size in shape[:-2]:
        batch *= size
    device = GridShape(sms, l2)
    tile = choose_tile(transpose_tiles(w, 16 // w, 16 // w), shape[-2], shape[-1], batch, device)
    return permute_launches(tuple(shape), dims, w, src, dst, device, tile)


def prepare(which: str, workers: int = 0) -> None:
    from harness.ops_cases import L2_BYTES, SMS, compile_sources, launch_sources
    from linear_layouts.ops.kernels import GridShape
    from linear_layouts.ops.launches import permute_launches

    def every(shape, w):
        dims = tuple(range(len(shape) - 2)) + (len(shape) - 1, len(shape) - 2)
        yield permute_launches(shape, dims, w, _BASE, _OTHER, GridShape(SMS, L2_BYTES))
        yield ruleless(shape, w, _BASE, _OTHER, SMS, L2_BYTES)
        yield from contenders(shape, w, _BASE, _OTHER, SMS, L2_BYTES).values()

    count, seconds = compile_sources(launch_sources(items for shape, w in _cases(which) for items in every(shape, w)),
                                     "sm_90", workers)
    print(f"{count} cubins in {seconds:.0f} s into {CACHE}")


def measure(args) -> None:
    import torch

    from ops_bench import _random, _same, _time_together
    from ops_tile_scan import add_peers, measure_setup
    from harness import ops_cases
    from linear_layouts import ops

    out_dir, dtype, triton, shape_of = measure_setup(args.out)
    rows = []
    name = f"transpose_lanes_{args.set}"
    for shape, w in _cases(args.set):
        start = time.time()
        x = _random(shape, dtype[w])
        expected = x.transpose(-1, -2).contiguous()
        out = torch.empty_like(expected)
        fns, correct = {}, {}
        for label, items in contenders(shape, w, x.data_ptr(), out.data_ptr(), shape_of.multiprocessors,
                                       shape_of.l2_bytes).items():
            run = ops_cases.runner(items, 0)
            out.zero_()
            run()
            correct[label], fns[label] = _same(out, expected), run

        before = ops_cases.runner(ruleless(shape, w, x.data_ptr(), out.data_ptr(), shape_of.multiprocessors,
                                           shape_of.l2_bytes), 0)
        out.zero_()
        before()
        correct["ops before dram_tile"], fns["ops before dram_tile"] = _same(out, expected), before

        def chosen():
            ops.transpose(x, out=out)

        out.zero_()
        chosen()
        correct["ops.transpose"], fns["ops.transpose"] = _same(out, expected), chosen
        add_peers(fns, correct, triton, x, out, expected, w)
        us = _time_together(fns)
        rows.append(dict(shape=list(shape), element_bytes=w, bytes=x.numel() * w,
                         kernels={k: dict(us=us[k], correct=correct[k]) for k in fns}))
        print(f"{shape} {w}: {len(fns)} kernels, {time.time() - start:.1f} s", flush=True)
        (out_dir / f"{name}.json").write_text(json.dumps(dict(environment=environment(), set=args.set, rows=rows),
                                                         indent=1))
    (out_dir / f"{name}.md").write_text(report(dict(environment=environment(), set=args.set, rows=rows)))


def environment() -> dict:
    import torch

    from datetime import datetime, timezone

    return dict(device=torch.cuda.get_device_name(0), torch=torch.__version__,
                date=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))


def _labels(kernels: dict) -> list[str]:
    return sorted({label.split(" ", 1)[1] for label in kernels if "/" in label and not label.startswith("triton")})


def report(results: dict) -> str:
    """Per case: the planner's tile (``ops.transpose``) and each variant's fastest tile; then per tile: each
    variant over the same tile as it is (> 1: the variant faster)."""
    env = results["environment"]
    lines = [f"# Row lanes of the ops transposes' stores, and ldmatrix.trans ({env['device']}, {env['date']}; "
             f"set {results['set']})", "",
             f"torch {env['torch']}. µs per launch (CUDA graphs of 20, every contender of a case timed together); "
             "`planner`: the tile as `ops` has it; `lanesK`: `row_lanes = K`; `ldsm`: 4 row lanes through "
             "st.shared.v4 + ldmatrix.x4.trans. Cells: the variant's fastest tile (µs, tile).", "",
             "| shape | bytes | MiB | copy | ops.transpose | before dram_tile | Triton best | planner | lanes2 | lanes4 | "
             "lanes8 | ldsm | wrong |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in results["rows"]:
        k = row["kernels"]

        def best(variant):
            got = [(v["us"], label.split(" ")[0]) for label, v in k.items()
                   if label.endswith(" " + variant) and "/" in label and not label.startswith("triton")
                   and v["correct"]]
            return f"{min(got)[0]:.1f} ({min(got)[1]})" if got else "-"

        tri = min(((v["us"], label[7:]) for label, v in k.items() if label.startswith("triton") and v["correct"]),
                  default=(float("nan"), "-"))
        wrong = [label for label, v in k.items() if not v["correct"]]
        lines.append(f"| {row['shape']} | {row['element_bytes']} | {row['bytes'] / 2**20:.0f} | {k['copy']['us']:.1f} | "
                     f"{k['ops.transpose']['us']:.1f} | "
                     + (f"{k['ops before dram_tile']['us']:.1f}" if "ops before dram_tile" in k else "-")
                     + f" | {tri[0]:.1f} ({tri[1]}) | "
                     + " | ".join(best(v) for v in ("planner", "lanes2", "lanes4", "lanes8", "ldsm"))
                     + f" | {', '.join(wrong) or '-'} |")
    lines += ["", "Per tile, the variant's µs over the tile's as it is (`planner`), > 1: the variant faster:", "",
              "| shape | bytes | tile | planner µs | lanes2 | lanes4 | lanes8 | ldsm |", "|---|---|---|---|---|---|---|---|"]
    for row in results["rows"]:
        k = row["kernels"]
        tiles = sorted({label.split(" ")[0] for label in k if "/" in label and not label.startswith("triton")})
        for tile in tiles:
            base = k.get(f"{tile} planner")
            if not base:
                continue
            cells = [f"{base['us'] / k[f'{tile} {v}']['us']:.3f}" if f"{tile} {v}" in k else "-"
                     for v in ("lanes2", "lanes4", "lanes8", "ldsm")]
            lines.append(f"| {row['shape']} | {row['element_bytes']} | {tile} | {base['us']:.1f} | " + " | ".join(cells)
                         + " |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", default="measure", choices=["prepare", "measure", "report"])
    ap.add_argument("--set", default="calibration", choices=["calibration", "sweep", "heldout"])
    ap.add_argument("--out", default="/tmp/transpose_lanes")
    ap.add_argument("--jobs", type=int, default=0)
    args = ap.parse_args(argv)
    if args.mode == "prepare":
        prepare(args.set, args.jobs)
    elif args.mode == "report":
        path = Path(args.out) / f"transpose_lanes_{args.set}.json"
        (Path(args.out) / f"transpose_lanes_{args.set}.md").write_text(report(json.loads(path.read_text())))
    else:
        measure(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
