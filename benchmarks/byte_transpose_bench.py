"""The byte transpose (``codegen.permute_bytes``) on the device: transposes of 1-byte elements whose input or output
rows 16 bytes do not align, each output checked bit for bit against PyTorch's ``x.permute(dims).contiguous()`` (and
the bytes around it untouched), every contender of a case timed together (``harness.timing.time_together``, CUDA
graphs of ``LAUNCHES`` launches, as ``ops_bench``):

- ``ops`` as it is, and ``before``: with ``launches.BYTE_TRANSPOSE = False`` (the tiled or chunked kernel it took);
- the byte transpose at each tile of ``TILES``;
- PyTorch eager and a same-size copy of 4-byte elements; a 1 GiB copy for the device's bandwidth.

``--set calibration`` is the fixed list the tile and the rule were chosen on; ``--seed N`` draws ``--cases`` new
problems (2-D, batched and 3-D transposes of odd sizes, 16 to 160 MiB) to check them on cases they were not chosen
on; ``--set aligned`` times aligned byte transposes, which ``ops`` leaves to the tiled kernel.

    PYTHONPATH=src python3 benchmarks/byte_transpose_bench.py --mode prepare [--set S | --seed N]   # CPU: cubins
    PYTHONPATH=src python3 benchmarks/byte_transpose_bench.py --out DIR [--set S | --seed N]        # device
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

BUILD = harness.BUILD / "byte_transpose"
os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(BUILD / "cache"))

from harness import ops_cases  # noqa: E402

#: (shape, dims, bytes past an aligned address of the output): odd sizes on either side, batched and 3-D.
CALIBRATION = (
    ((6049, 8459), (1, 0), 0),
    ((11335, 12184), (1, 0), 0),
    ((9648, 9480), (1, 0), 0),
    ((6048, 8459), (1, 0), 0),          # output rows aligned, input rows odd
    ((6049, 8464), (1, 0), 0),          # input rows aligned, output rows odd
    ((6049, 8464), (1, 0), 5),
    ((39, 464, 1705), (0, 2, 1), 0),
    ((9, 2829, 3087), (0, 2, 1), 0),
    ((11, 931, 2984), (0, 2, 1), 0),
    ((261, 295, 467), (2, 1, 0), 0),
    ((368, 165, 343), (1, 2, 0), 0),
    ((417, 296, 201), (2, 0, 1), 0),
)
#: ``--set aligned``: both sides' rows 16-byte aligned (``ops`` keeps the tiled kernel).
ALIGNED = (
    ((8192, 8192), (1, 0), 0),
    ((4096, 11008), (1, 0), 0),
    ((16, 1024, 2048), (0, 2, 1), 0),
)
#: The byte transpose's tiles: label -> (rows, cols, warps, granule bytes).
TILES = {"128x128/9w": (128, 128, 9, 16), "128x64/5w": (128, 64, 5, 16), "256x128/17w": (256, 128, 17, 16),
         "64x64/3w": (64, 64, 3, 16), "128x128/10w s32": (128, 128, 10, 32), "128x64/5w s32": (128, 64, 5, 32),
         "64x128/6w s32": (64, 128, 6, 32), "256x128/18w s32": (256, 128, 18, 32), "128x128/12w s64": (128, 128, 12, 64),
         "128x64/6w s64": (128, 64, 6, 64)}
LAUNCHES, REPEATS = 20, 5
_BASE, _OTHER = 1 << 40, 2 << 40


def drawn(seed: int, count: int) -> list[tuple]:
    """``count`` problems drawn by ``seed``: 2-D, batched ``(0, 2, 1)`` and 3-D reversals of 1-byte elements, each
    side 33 to 14000 and the whole 16 to 160 MiB, odd sizes more often than not."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        kind = rng.choice(("2-D", "batched", "3-D"))
        target = rng.uniform(16, 160) * 2**20
        if kind == "2-D":
            m = rng.randint(600, 14000)
            shape, dims = (m, max(33, int(target / m))), (1, 0)
        elif kind == "batched":
            m, n = rng.randint(200, 4000), rng.randint(200, 4000)
            shape, dims = (max(1, int(target / (m * n))), m, n), (0, 2, 1)
        else:
            a, b = rng.randint(60, 600), rng.randint(60, 600)
            shape, dims = (a, b, max(33, int(target / (a * b)))), (2, 1, 0)
        if min(shape[d] for d in dims[-2:]) < 33 or math.prod(shape) > 180 * 2**20:
            continue
        out.append((shape, dims, rng.choice((0, 0, 0, 3, 8))))
    return out


def contenders(shape, dims, src: int, dst: int, device) -> dict:
    """``{label: launches}`` of one case: ``ops``, ``before`` (the kernel ``ops`` took without the byte transpose) and
    the byte transpose at each of ``TILES``."""
    from linear_layouts.ops import launches
    from linear_layouts.ops.kernels import ByteTile

    out = {"ops": launches.permute_launches(shape, dims, 1, src, dst, device)}
    launches.BYTE_TRANSPOSE = False
    try:
        out["before"] = launches.permute_launches(shape, dims, 1, src, dst, device)
    finally:
        launches.BYTE_TRANSPOSE = True
    for label, tile in TILES.items():
        out[f"bytes {label}"] = launches.permute_launches(shape, dims, 1, src, dst, device, ByteTile(*tile))
    return out


def _cases(args) -> list[tuple]:
    if args.seed is not None:
        return drawn(args.seed, args.cases)
    return list(ALIGNED if args.set == "aligned" else CALIBRATION)


def prepare(cases, jobs: int) -> None:
    from linear_layouts.ops.kernels import GridShape

    (BUILD / "cache").mkdir(parents=True, mode=0o700, exist_ok=True)
    device = GridShape(ops_cases.SMS, ops_cases.L2_BYTES)
    sources = ops_cases.launch_sources(items for shape, dims, offset in cases
                                       for items in contenders(shape, dims, _BASE, _OTHER + offset, device).values())
    n, seconds = ops_cases.compile_sources(sources, "sm_90", jobs)
    print(f"prepared {n} kernels for sm_90 in {seconds:.0f} s into {BUILD / 'cache'}")


def _time(fn) -> float:
    import gpu_suite

    return gpu_suite._time(fn, repeats=REPEATS, inner=LAUNCHES)


def bench_case(shape, dims, offset: int, device, copy_tbs: float) -> dict:
    import torch

    x = ops_cases.random_tensor(shape, "uint8")
    numel = x.numel()
    buffer = torch.empty(numel + 64, dtype=torch.uint8, device="cuda")
    out = buffer[offset:offset + numel].view(tuple(shape[d] for d in dims))
    expected = x.permute(dims).contiguous()
    row = dict(shape=list(shape), dims=list(dims), dst_offset=offset, mib=round(numel / 2**20, 2), kernels={})
    fns = {}
    for label, items in contenders(shape, dims, x.data_ptr(), out.data_ptr(), device).items():
        run, correct = ops_cases.checked_runner(items, out, expected, fill=buffer)
        outside = torch.cat([buffer[:offset], buffer[offset + numel:]])
        kernel = next(item.kernel for item in items if hasattr(item, "kernel"))
        row["kernels"][label] = dict(correct=correct and bool((outside == 0xAB).all()), name=kernel.name,
                                     tile=[kernel.tile_rows, kernel.tile_cols], threads=kernel.threads)
        fns[label] = run
    ops_cases.time_with_peers(_time, fns, x, dims, numel, copy_tbs, row["kernels"])
    return row


def _geomean(values) -> float:
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def summary(rows: list[dict]) -> list[str]:
    """Lines: ops over before (geomean, min, max), each tile over before, how often each tile was the best."""
    ratio = {label: [r["kernels"]["before"]["us"] / r["kernels"][label]["us"] for r in rows]
             for label in rows[0]["kernels"] if label not in ("eager", "copy")}
    best = [min((lab for lab in r["kernels"] if lab.startswith("bytes ")), key=lambda lab: r["kernels"][lab]["us"])
            for r in rows]
    lines = ["| contender | before / it, geomean | min | max | best tile of the case |", "|---|---|---|---|---|"]
    for label, values in ratio.items():
        lines.append(f"| {label} | {_geomean(values):.3f} | {min(values):.3f} | {max(values):.3f} | "
                     f"{best.count(label) if label.startswith('bytes ') else '-'} |")
    taken = [r["kernels"]["before"]["us"] / r["kernels"]["ops"]["us"] for r in rows
             if r["kernels"]["ops"]["name"].startswith("ll_permute_bytes")]
    lines += ["", f"`ops` took the byte transpose on {len(taken)} of {len(rows)} cases"
              + (f": before / ops geomean {_geomean(taken):.3f}, min {min(taken):.3f}, max {max(taken):.3f}." if taken
                 else ".")]
    of_copy = [(r["kernels"]["ops"]["of_copy"], tuple(r["shape"])) for r in rows]
    lines += ["", f"ops: lowest of the copy bandwidth {100 * min(of_copy)[0]:.1f}% {min(of_copy)[1]}; "
              f"geomean {100 * _geomean(v for v, _ in of_copy):.1f}%."]
    return lines


def markdown(env: dict, copy_tbs: float, rows: list[dict], title: str) -> str:
    lines = [f"# {title}", "",
             f"{env.get('date', '')}, {env.get('gpu', '')}; torch {env.get('torch', '')}. 1 GiB copy: {copy_tbs:.3f} "
             "TB/s (read + written). Cells: µs, % of the copy bandwidth; a wrong output is marked WRONG. `before`: "
             "what `ops` launched without the byte transpose.", "", *summary(rows), ""]
    for row in rows:
        lines += [f"## {tuple(row['shape'])} dims {tuple(row['dims'])} uint8"
                  + (f", output {row['dst_offset']} bytes past 16" if row["dst_offset"] else "")
                  + f" ({row['mib']} MiB)", "", "| contender | kernel | µs | of copy | correct |", "|---|---|---:|---:|---|"]
        for label, k in row["kernels"].items():
            ok = "" if "correct" not in k else ("yes" if k["correct"] else "WRONG")
            lines.append(f"| {label} | {k.get('name', '')} | {k['us']} | {100 * k['of_copy']:.1f}% | {ok} |")
        lines.append("")
    return "\n".join(lines) + "\n"


def run(out: Path, cases, stem: str, title: str) -> None:
    import torch

    start = time.time()
    env, device, copy_tbs = ops_cases.device_run_setup()
    rows = []
    for shape, dims, offset in cases:
        rows.append(bench_case(shape, dims, offset, device, copy_tbs))
        k = rows[-1]["kernels"]
        print(f"{shape} {dims} +{offset}: ops {k['ops']['us']} us ({100 * k['ops']['of_copy']:.1f}%), before "
              f"{k['before']['us']} us, correct {all(v.get('correct', True) for v in k.values())}, "
              f"{time.time() - start:.0f} s", flush=True)
        torch.cuda.empty_cache()
    env["seconds"] = round(time.time() - start, 1)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.json").write_text(json.dumps(dict(environment=env, copy_tbs=copy_tbs, cases=rows), indent=1))
    (out / f"{stem}.md").write_text(markdown(env, copy_tbs, rows, title))
    print("\n".join(summary(rows)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("prepare", "run"), default="run")
    parser.add_argument("--out", type=Path, default=Path("byte_transpose_out"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--set", choices=("calibration", "aligned"), default="calibration")
    parser.add_argument("--seed", type=int, help="draw --cases problems with this seed instead of a fixed set")
    parser.add_argument("--cases", type=int, default=10)
    args = parser.parse_args()
    cases = _cases(args)
    if args.mode == "prepare":
        prepare(cases, args.jobs)
        return
    stem = f"byte_transpose_seed{args.seed}" if args.seed is not None else f"byte_transpose_{args.set}"
    title = (f"The byte transpose on problems drawn by seed {args.seed}" if args.seed is not None
             else f"The byte transpose, {args.set} set (`codegen.permute_bytes`)")
    run(args.out, cases, stem, title)


if __name__ == "__main__":
    sys.exit(main())
