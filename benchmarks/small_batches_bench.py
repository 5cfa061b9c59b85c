"""Batches of small blocks: the small-block kernel (``codegen.permute_small``) against the kernel the batch took
before (``launches.SMALL_BATCHES = False``: one CTA per matrix), PyTorch eager and a same-size copy.

Twelve fixed batches (4x4 / 3x3 / 2x2 matrices, tiny heads, small images with few channels, of 1- to 8-byte
elements) and ``--cases`` more drawn from ``--seed`` (a batch of ``r x c`` matrices or ``h x w x ch`` images,
sizes 2 to 24, 4-64 MiB), each kept only where the small-block kernel can take it (``small_blocks`` with blocks up
to ``MIN_TILE_BYTES``: both sides of ``SMALL_BLOCK_BYTES``). Every case is checked bit for bit against
``x.permute(dims).contiguous()`` and its contenders timed together (``harness.timing.time_together``, CUDA graphs
of 20 launches, the median of 5 replays):

- ``ops``: as it is (the small-block kernel, but for blocks over ``SMALL_BLOCK_BYTES`` of the aligned interleave
  kernel);
- ``before``: the kernel the batch took before (interleave, skinny or tiled: one CTA per matrix);
- ``small``: the small-block kernel for every block it can take (``SMALL_BLOCK_BYTES = MIN_TILE_BYTES``);
- PyTorch eager and a same-size copy of 4-byte elements; and a 1 GiB copy for the device's bandwidth.

    PYTHONPATH=src:benchmarks python3 benchmarks/small_batches_bench.py --mode prepare   # CPU: the cubins
    PYTHONPATH=src:benchmarks python3 benchmarks/small_batches_bench.py --out DIR        # device: small_batches.{json,md}
"""

from __future__ import annotations

import json
import math
import os
import random
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

BUILD = harness.BUILD / "small_batches"
os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(BUILD / "cache"))

from harness import cli, ops_cases  # noqa: E402

LAUNCHES, REPEATS = 20, 5
#: (shape, dims, dtype) fixed: the issue's four and more of their kind.
FIXED = (
    ((1000000, 2, 2), (0, 2, 1), "uint8"), ((100000, 3, 5), (0, 2, 1), "float32"),
    ((100000, 8, 8), (0, 2, 1), "float16"), ((10000, 7, 7, 3), (0, 3, 1, 2), "float32"),
    ((1000000, 4, 4), (0, 2, 1), "float32"), ((1000000, 3, 3), (0, 2, 1), "float32"),
    ((500000, 4, 4), (0, 2, 1), "float64"), ((8000000, 2, 2), (0, 2, 1), "float16"),
    ((65536, 8, 16), (0, 2, 1), "bfloat16"), ((20000, 3, 16, 16), (0, 2, 3, 1), "uint8"),
    ((20000, 16, 16, 3), (0, 3, 1, 2), "float16"), ((100000, 2, 3, 4), (0, 3, 2, 1), "float32"),
)
DTYPES = ("uint8", "float16", "bfloat16", "float32", "float64")


def _takes_it(shape, dims, itemsize: int) -> bool:
    from linear_layouts.ops.kernels import GridShape
    from linear_layouts.ops.launches import permute_launches

    from linear_layouts.ops import launches

    default, launches.SMALL_BLOCK_BYTES = launches.SMALL_BLOCK_BYTES, launches.MIN_TILE_BYTES
    try:
        items = permute_launches(shape, dims, itemsize, 0, 0, GridShape(ops_cases.SMS, ops_cases.L2_BYTES))
    finally:
        launches.SMALL_BLOCK_BYTES = default
    return bool(items) and hasattr(items[0], "kernel") and "small" in items[0].kernel.name


def held_out(seed: int, count: int) -> list[tuple[tuple[int, ...], tuple[int, ...], str]]:
    """``count`` batches from ``seed`` (module doc) that the small-block kernel takes."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        dtype = rng.choice(DTYPES)
        w = ops_cases.ITEMSIZE[dtype]
        target = rng.randrange(4 << 20, 64 << 20)
        if rng.random() < 0.5:
            r, c = rng.randrange(2, 25), rng.randrange(2, 25)
            shape, dims = (max(2, target // (r * c * w)), r, c), (0, 2, 1)
        else:
            h, wd, ch = rng.randrange(2, 17), rng.randrange(2, 17), rng.randrange(2, 9)
            if rng.random() < 0.5:
                shape, dims = (max(2, target // (h * wd * ch * w)), h, wd, ch), (0, 3, 1, 2)
            else:
                shape, dims = (max(2, target // (h * wd * ch * w)), ch, h, wd), (0, 2, 3, 1)
        if _takes_it(shape, dims, w):
            out.append((shape, dims, dtype))
    return out


def cases(seed: int, count: int) -> list[tuple[tuple[int, ...], tuple[int, ...], str]]:
    return list(FIXED) + held_out(seed, count)


def contenders(shape, dims, w: int, src: int, dst: int, device) -> dict:
    """``{label: launches}``: ``ops``, ``before`` (``SMALL_BATCHES`` off) and ``small`` (every block it can take)."""
    from linear_layouts.ops import launches

    out = {"ops": launches.permute_launches(shape, dims, w, src, dst, device)}
    default, launches.SMALL_BATCHES = launches.SMALL_BATCHES, False
    try:
        out["before"] = launches.permute_launches(shape, dims, w, src, dst, device)
    finally:
        launches.SMALL_BATCHES = default
    default, launches.SMALL_BLOCK_BYTES = launches.SMALL_BLOCK_BYTES, launches.MIN_TILE_BYTES
    try:
        out["small"] = launches.permute_launches(shape, dims, w, src, dst, device)
    finally:
        launches.SMALL_BLOCK_BYTES = default
    return out


def prepare(seed: int, count: int, jobs: int) -> None:
    ops_cases.compile_contenders(contenders, ((shape, dims, ops_cases.ITEMSIZE[dtype])
                                              for shape, dims, dtype in cases(seed, count)), BUILD / "cache", jobs)


def _time(fn) -> float:
    import gpu_suite

    return gpu_suite._time(fn, repeats=REPEATS, inner=LAUNCHES)


def bench_case(shape, dims, dtype: str, device, copy_tbs: float) -> dict:
    def describe(items):
        kernel = items[0].kernel
        return dict(kernel=kernel.name, ctas=sum(i.ctas for i in items), threads=kernel.threads)

    row = ops_cases.bench_permutation(shape, dims, dtype, contenders, device, copy_tbs, _time, describe)
    k = row["kernels"]
    row["speedup"] = round(k["before"]["us"] / k["ops"]["us"], 3)
    row["of_best"] = round(min(k["before"]["us"], k["small"]["us"]) / k["ops"]["us"], 3)
    row["block_bytes"] = math.prod(row["shape"][1:]) * ops_cases.ITEMSIZE[dtype]
    return row


def run(seed: int, count: int, out: Path) -> None:
    env, copy_tbs, rows = ops_cases.run_cases([(cases(seed, count), bench_case)])
    fixed, held = rows[:len(FIXED)], rows[len(FIXED):]

    def gm(part):
        ratios = [r["speedup"] for r in part]
        return math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else float("nan")

    exact = sum(all(v.get("correct", True) for v in r["kernels"].values()) for r in rows)
    summary = (f"small batches: {exact}/{len(rows)} bit-exact; ops / before {gm(fixed):.2f}x in geomean on the "
               f"{len(fixed)} fixed cases, {gm(held):.2f}x on {len(held)} held out (seed {seed}); slowest "
               f"{min(r['speedup'] for r in rows):.2f}x; ops at {100 * gm([dict(speedup=r['kernels']['ops']['of_copy']) for r in rows]):.1f}% "
               f"of copy in geomean; the rule's choice / the faster of before and small: slowest "
               f"{min(r['of_best'] for r in rows):.2f}x ({sum(r['of_best'] < 0.97 for r in rows)} below 0.97x)")
    lines = ["# Batches of small blocks: the small-block kernel against the kernel they took before", "",
             f"{env.get('date', '')}, {env.get('gpu', '')}; torch {env.get('torch', '')}. 1 GiB copy: {copy_tbs:.3f} "
             f"TB/s. {summary}.", "",
             "| shape | dims | dtype | MiB | block bytes | before (CTAs) | before µs | small µs | ops µs (of copy) | "
             "before / ops | best / ops | eager µs | ops / eager | copy µs |",
             "|---|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for i, r in enumerate(rows):
        k = r["kernels"]
        tag = "" if i < len(FIXED) else " (held out)"
        lines.append(f"| {tuple(r['shape'])}{tag} | {tuple(r['dims'])} | {r['dtype']} | {r['mib']} | "
                     f"{r['block_bytes']} | {k['before']['kernel']} ({k['before']['ctas']}) | {k['before']['us']} | "
                     f"{k['small']['us']} | {k['ops']['us']} "
                     f"({100 * k['ops']['of_copy']:.1f}%) | {r['speedup']}x | {r['of_best']}x | {k['eager']['us']} | "
                     f"{k['eager']['us'] / k['ops']['us']:.2f}x | {k['copy']['us']} |")
    out.mkdir(parents=True, exist_ok=True)
    (out / "small_batches.json").write_text(json.dumps(dict(environment=env, copy_tbs=copy_tbs, seed=seed, cases=rows),
                                                       indent=1))
    (out / "small_batches.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines), flush=True)
    print(summary, flush=True)


def main() -> None:
    cli.seeded_main(__doc__.splitlines()[0], prepare, run, cases=4, out="small_batches_out")


if __name__ == "__main__":
    main()
