"""Whole-row moves (a permutation that keeps the last dim) on seeded random shapes: ``rows_tile`` against its form
before its last change (``ROWS_DRAM_WARPS``; before that, ``ROWS_THREAD_BYTES``: seeds 1-6).

Each seed draws ``--cases`` problems: 3-D ``(1, 0, 2)`` and 4-D ``(0, 2, 1, 3)`` (attention's head move) of 1-, 2-
and 4-byte elements, the last dim from 17 to 600 (odd at least half the time: rows 16 bytes do not align), 16-128 MiB (a
quarter of them 64 KiB-4 MiB); seeds from ``ALIGNED_SEEDS`` (100) draw rows of 16 to 320 bytes in whole 16-byte vectors
(attention heads), the same shapes otherwise. Every case is checked bit for bit and its contenders timed together
(``harness.timing.time_together``, CUDA graphs of 20 launches):

- ``ops``: as it is;
- ``before``: the tile ``rows_tile`` takes without ``dram``, 4 warps always (seeds 1-6 were run against
  its form with 4 accesses a thread only, 1 KiB tiles of 1- and 2-byte accesses);
- PyTorch eager and a same-size copy of 4-byte elements; and a 1 GiB copy for the device's bandwidth.

    PYTHONPATH=src python3 benchmarks/rows_bench.py --mode prepare --seed 1   # CPU: the cubins
    PYTHONPATH=src python3 benchmarks/rows_bench.py --seed 1 --out DIR        # device: rows_<seed>.{json,md}
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

BUILD = harness.BUILD / "rows"
os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(BUILD / "cache"))

from harness import cli, ops_cases  # noqa: E402

DTYPES = ("uint8", "float16", "bfloat16", "float32")
LAUNCHES, REPEATS = 20, 5


#: Seeds from this one draw rows of whole 16-byte vectors (module doc).
ALIGNED_SEEDS = 100


def cases(seed: int, count: int) -> list[tuple[tuple[int, ...], tuple[int, ...], str]]:
    """The seed's problems (module doc)."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        dtype = rng.choice(DTYPES)
        w = ops_cases.ITEMSIZE[dtype]
        if seed >= ALIGNED_SEEDS:  # a head or row of whole 16-byte vectors, 8 to 320 bytes
            last = rng.randrange(1, 21) * 16 // w
        else:
            last = rng.randrange(17, 601) | (1 if rng.random() < 0.5 else 0)
        target = rng.randrange(64 << 10, 4 << 20) if rng.random() < 0.25 else rng.randrange(16 << 20, 128 << 20)
        shape, dims = row_move(rng, max(2, target // (last * w)), last)
        out.append((shape, dims, dtype))
    return out


def row_move(rng: random.Random, rows: int, last: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A move of about ``rows`` rows of ``last`` elements: 3-D ``(1, 0, 2)`` or attention's ``(0, 2, 1, 3)`` (4 to 32
    heads, a batch of 1 to 8), even odds."""
    if rng.random() < 0.5:
        a = rng.randrange(2, 600)
        return (a, max(2, rows // a), last), (1, 0, 2)
    heads = rng.choice((4, 6, 8, 12, 16, 20, 25, 32))
    batch = rng.choice((1, 2, 4, 8))
    return (batch, max(2, rows // (heads * batch)), heads, last), (0, 2, 1, 3)


def contenders(shape, dims, w: int, src: int, dst: int, device) -> dict:
    """``{label: launches}``: ``ops`` and ``before`` (``rows_tile`` without ``dram``: 4 warps always)."""
    from linear_layouts.ops import kernels
    from linear_layouts.ops.launches import _plan, permute_launches, pointer_alignment
    from linear_layouts.ops.plan import vector_elements

    problem = _plan(shape, dims, w, pointer_alignment(src % 32, dst % 32))
    before = kernels.rows_tile(w, vector_elements(w, problem.cols, src % 32, dst % 32), problem.cols)
    return {"ops": permute_launches(shape, dims, w, src, dst, device),
            "before": permute_launches(shape, dims, w, src, dst, device, before)}


def prepare(seed: int, count: int, jobs: int) -> None:
    ops_cases.compile_contenders(contenders, ((shape, dims, ops_cases.ITEMSIZE[dtype])
                                              for shape, dims, dtype in cases(seed, count)), BUILD / "cache", jobs)


def _time(fn) -> float:
    import gpu_suite

    return gpu_suite._time(fn, repeats=REPEATS, inner=LAUNCHES)


def bench_case(shape, dims, dtype: str, device, copy_tbs: float) -> dict:
    def describe(items):
        kernel = items[0].kernel
        return dict(tile=[kernel.tile_rows, kernel.tile_cols, kernel.threads // 32], vector=kernel.src_vector)

    row = ops_cases.bench_permutation(shape, dims, dtype, contenders, device, copy_tbs, _time, describe)
    k = row["kernels"]
    row["speedup"] = round(k["before"]["us"] / k["ops"]["us"], 3)
    return row


def run(seed: int, count: int, out: Path) -> None:
    import math

    env, copy_tbs, rows = ops_cases.run_cases([(cases(seed, count), bench_case)])
    changed = [r for r in rows if r["kernels"]["ops"]["tile"] != r["kernels"]["before"]["tile"]]
    ratios = [r["speedup"] for r in changed]
    gm = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else float("nan")
    lines = [f"# Whole-row moves on seeded random shapes (seed {seed}): `rows_tile` against before", "",
             f"{env.get('date', '')}, {env.get('gpu', '')}; torch {env.get('torch', '')}. 1 GiB copy: {copy_tbs:.3f} "
             f"TB/s. {sum(all(v.get('correct', True) for v in r['kernels'].values()) for r in rows)}/{len(rows)} "
             f"bit-exact. Tiles that changed: {len(changed)}, before / ops {gm:.3f} in geomean"
             + (f" ({min(ratios):.2f}-{max(ratios):.2f})." if ratios else "."), "",
             "| shape | dims | dtype | MiB | vector | tile before | tile | before µs | ops µs (of copy) | before / ops "
             "| eager µs | ops / eager |", "|---|---|---|---:|---:|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        k = r["kernels"]
        lines.append(f"| {tuple(r['shape'])} | {tuple(r['dims'])} | {r['dtype']} | {r['mib']} | {k['ops']['vector']} | "
                     f"{k['before']['tile'][0]}x{k['before']['tile'][1]}/{k['before']['tile'][2]}w | "
                     f"{k['ops']['tile'][0]}x{k['ops']['tile'][1]}/{k['ops']['tile'][2]}w | "
                     f"{k['before']['us']} | {k['ops']['us']} ({100 * k['ops']['of_copy']:.1f}%) | {r['speedup']}x | "
                     f"{k['eager']['us']} | {k['eager']['us'] / k['ops']['us']:.2f}x |")
    out.mkdir(parents=True, exist_ok=True)
    (out / f"rows_{seed}.json").write_text(json.dumps(dict(environment=env, copy_tbs=copy_tbs, cases=rows), indent=1))
    (out / f"rows_{seed}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines), flush=True)


def main() -> None:
    cli.seeded_main(__doc__.splitlines()[0], prepare, run, cases=24, out="rows_out")


if __name__ == "__main__":
    main()
