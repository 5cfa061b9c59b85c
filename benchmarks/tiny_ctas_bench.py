"""Batches whose tiled kernel moves a few hundred bytes a CTA: the small-block kernel (``codegen.permute_small``)
against the tiled kernel where ``launches.SMALL_TILED_CTA_BYTES`` makes the difference.

``--seed N`` draws ``--cases`` problems whose launches ``SMALL_TILED_CTA_BYTES`` changes (the small-block kernel
in place of a tiled kernel whose CTA moves less than that): batches of ``s x n`` transposes (``(b, s, n)`` by
``(0, 2, 1)``), NCHW -> NHWC of images of few channels, ``(b, s, p, q)`` by ``(0, 3, 2, 1)``, and the small
batches of ``small_batches_bench`` (matrices and images 2 to 24 a side), any element size, 1 to 100 MiB
(log-uniform). Each case is checked bit for bit against ``x.permute(dims).contiguous()`` and its contenders
timed together (``harness.timing.time_together``: CUDA graphs of 20 launches, the median of 5 replays):
``ops`` (as it is), ``tiled`` (``SMALL_TILED_CTA_BYTES = 0``: what ``ops`` launched before), PyTorch eager and
a same-size copy.

    PYTHONPATH=src:benchmarks python3 benchmarks/tiny_ctas_bench.py --mode prepare --seed 1   # CPU: the cubins
    PYTHONPATH=src:benchmarks python3 benchmarks/tiny_ctas_bench.py --seed 1 --out DIR        # device
"""

from __future__ import annotations

import json
import math
import os
import random
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

BUILD = harness.BUILD / "tiny_ctas"
os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(BUILD / "cache"))

from harness import cli, ops_cases  # noqa: E402
from harness.timing import geomean  # noqa: E402

LAUNCHES, REPEATS = 20, 5
DTYPES = ("uint8", "float16", "bfloat16", "float32", "float64")


def _plans(shape, dims, w: int, src: int, dst: int, device) -> dict:
    """``{label: launches}``: ``ops`` and ``tiled`` (``SMALL_TILED_CTA_BYTES = 0``)."""
    from linear_layouts.ops import launches

    out = {"ops": launches.permute_launches(shape, dims, w, src, dst, device)}
    default, launches.SMALL_TILED_CTA_BYTES = launches.SMALL_TILED_CTA_BYTES, 0
    try:
        out["tiled"] = launches.permute_launches(shape, dims, w, src, dst, device)
    finally:
        launches.SMALL_TILED_CTA_BYTES = default
    return out


def _draw_one(rng: random.Random) -> tuple[tuple[int, ...], tuple[int, ...], str]:
    """One problem of the module doc's kinds."""
    dtype = rng.choice(DTYPES)
    target = math.exp(rng.uniform(0, math.log(100))) * 2**20 / ops_cases.ITEMSIZE[dtype]
    kind = rng.choice(("batched", "NCHW->NHWC", "reversed", "small"))
    if kind == "small":
        r, c = rng.randrange(2, 25), rng.randrange(2, 25)
        if rng.random() < 0.5:
            return (max(2, round(target / (r * c))), r, c), (0, 2, 1), dtype
        ch = rng.randrange(2, 9)
        shape = (max(2, round(target / (r * c * ch))), r, c, ch)
        return (shape, (0, 3, 1, 2), dtype) if rng.random() < 0.5 else ((shape[0], ch, r, c), (0, 2, 3, 1), dtype)
    s = rng.randint(1, 31)
    if kind == "batched":
        n = rng.randint(2, 2048)
        return (max(2, round(target / (s * n))), s, n), (0, 2, 1), dtype
    if kind == "NCHW->NHWC":
        side = rng.randint(2, 64)
        return (max(2, round(target / (s * side * side))), s, side, side), (0, 2, 3, 1), dtype
    p, q = rng.randint(2, 128), rng.randint(2, 128)
    return (max(2, round(target / (s * p * q))), s, p, q), (0, 3, 2, 1), dtype


def cases(seed: int, count: int) -> list[tuple[tuple[int, ...], tuple[int, ...], str]]:
    """``count`` problems drawn by ``seed`` whose launches ``SMALL_TILED_CTA_BYTES`` changes."""
    from linear_layouts.ops.kernels import GridShape

    device = GridShape(ops_cases.SMS, ops_cases.L2_BYTES)
    rng = random.Random(seed)
    out: list[tuple[tuple[int, ...], tuple[int, ...], str]] = []
    while len(out) < count:
        shape, dims, dtype = _draw_one(rng)
        if not 2**20 <= math.prod(shape) * ops_cases.ITEMSIZE[dtype] <= 100 * 2**20 or (shape, dims, dtype) in out:
            continue
        plans = _plans(shape, dims, ops_cases.ITEMSIZE[dtype], ops_cases._BASE, ops_cases._OTHER, device)
        if plans["ops"] != plans["tiled"]:
            out.append((shape, dims, dtype))
    return out


def prepare(seed: int, count: int, jobs: int) -> None:
    ops_cases.compile_contenders(_plans, ((shape, dims, ops_cases.ITEMSIZE[dtype])
                                          for shape, dims, dtype in cases(seed, count)), BUILD / "cache", jobs)


def _time(fn) -> float:
    import gpu_suite

    return gpu_suite._time(fn, repeats=REPEATS, inner=LAUNCHES)


def bench_case(shape, dims, dtype: str, device, copy_tbs: float) -> dict:
    def describe(items):
        kernel = items[0].kernel
        return dict(kernel=kernel.name, tile=[kernel.tile_rows, kernel.tile_cols], ctas=sum(i.ctas for i in items))

    row = ops_cases.bench_permutation(shape, dims, dtype, _plans, device, copy_tbs, _time, describe)
    row["speedup"] = round(row["kernels"]["tiled"]["us"] / row["kernels"]["ops"]["us"], 3)
    return row


def summary(rows: list[dict]) -> str:
    """One line: tiled / ops over the cases (geomean, min, max, slower by more than 2%), eager / ops, exactness."""
    ratios = [r["speedup"] for r in rows]
    eager = [r["kernels"]["eager"]["us"] / r["kernels"]["ops"]["us"] for r in rows]
    exact = sum(all(v.get("correct", True) for v in r["kernels"].values()) for r in rows)
    return (f"{exact}/{len(rows)} bit-exact; tiled / ops geomean {geomean(ratios):.3f} (min {min(ratios):.3f}, max "
            f"{max(ratios):.3f}); ops slower than tiled by more than 2%: {sum(x < 0.98 for x in ratios)}; eager / ops "
            f"geomean {geomean(eager):.2f} (min {min(eager):.2f})")


def run(seed: int, count: int, out: Path) -> None:
    env, copy_tbs, rows = ops_cases.run_cases([(cases(seed, count), bench_case)])
    line = summary(rows)
    lines = [f"# The small-block kernel where the tiled kernel's CTAs are small: seed {seed}", "",
             f"{env.get('date', '')}, {env.get('gpu', '')}; torch {env.get('torch', '')}. 1 GiB copy: {copy_tbs:.3f} "
             f"TB/s. GPU times: median of 5 replays of a CUDA graph of 20 launches, the contenders of a case timed "
             f"together. {line}.", "",
             "| shape | dims | dtype | MiB | tiled (tile, CTAs) | tiled µs | ops (CTAs) | ops µs (of copy) | tiled / ops "
             "| eager µs | ops / eager | copy µs | correct |",
             "|---|---|---|---:|---|---:|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        k = r["kernels"]
        ok = all(v.get("correct", True) for v in k.values())
        lines.append(f"| {tuple(r['shape'])} | {tuple(r['dims'])} | {r['dtype']} | {r['mib']} | "
                     f"{tuple(k['tiled']['tile'])}, {k['tiled']['ctas']} | {k['tiled']['us']} | {k['ops']['kernel']} "
                     f"({k['ops']['ctas']}) | {k['ops']['us']} ({100 * k['ops']['of_copy']:.1f}%) | {r['speedup']} | "
                     f"{k['eager']['us']} | {k['eager']['us'] / k['ops']['us']:.2f}x | {k['copy']['us']} | "
                     f"{'yes' if ok else 'WRONG'} |")
    out.mkdir(parents=True, exist_ok=True)
    (out / f"tiny_ctas_seed{seed}.json").write_text(json.dumps(dict(environment=env, copy_tbs=copy_tbs, seed=seed,
                                                                    cases=rows), indent=1))
    (out / f"tiny_ctas_seed{seed}.md").write_text("\n".join(lines) + "\n")
    print(line, flush=True)


def main() -> None:
    cli.seeded_main(__doc__.splitlines()[0], prepare, run, cases=24, out="tiny_ctas_out")


if __name__ == "__main__":
    main()
