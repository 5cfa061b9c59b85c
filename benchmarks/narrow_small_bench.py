"""Small transposes of narrow vectors within the L2: the narrow list's tile (``kernels.choose_narrow_tile`` without
``L2_TINY_ELEMENT_BYTES``) against the tiny tile (``kernels.TINY_TILE``) where no tile of that list gives every SM
``L2_NARROW_CTAS`` tiles, on seeded random shapes.

Each seed draws batched ``(0, 2, 1)`` and 2-D ``(1, 0)`` transposes of 1-, 2-, 4- and 8-byte elements (from seed
``FP64_SEEDS`` on, 8-byte ones only), 0.25 to 24 MiB (input and output within the L2), whose rows allow only narrow
vectors on at least one side and whose tile from the narrow list gives fewer than ``L2_NARROW_CTAS`` x 132 tiles;
every case checked bit for bit and its contenders timed together (``harness.timing.time_together``, CUDA graphs of
20 launches):

- ``ops``: as ``permute`` launches it;
- ``list``: the narrow list's tile (``L2_TINY_ELEMENT_BYTES = ()``: what ``ops`` took before that rule);
- ``tiny``: the same launches at ``TINY_TILE`` (32 x 32, 4 warps) with the plan's vectors;
- PyTorch eager and a same-size copy of 4-byte elements; and a 1 GiB copy for the device's bandwidth.

    PYTHONPATH=src:benchmarks python3 benchmarks/narrow_small_bench.py --mode prepare --seed 1   # CPU: the cubins
    PYTHONPATH=src:benchmarks python3 benchmarks/narrow_small_bench.py --seed 1 --out DIR        # device
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
import random
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

BUILD = harness.BUILD / "narrow_small"
os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(BUILD / "cache"))

from harness import cli, ops_cases  # noqa: E402
from harness.results import write_outputs  # noqa: E402

LAUNCHES, REPEATS = 20, 5
DTYPES = ("uint8", "bfloat16", "float32", "float64")
#: Seeds from this one draw 8-byte elements only.
FP64_SEEDS = 10


def _plan_tile(shape, dims, w: int, device):
    """The tile of the narrow list for the problem (``tile_for`` without ``L2_TINY_ELEMENT_BYTES``) and the problem,
    or None where it is no tile of the tiled kernel."""
    from linear_layouts.ops import kernels
    from linear_layouts.ops.kernels import TileConfig
    from linear_layouts.ops.launches import _plan, pointer_alignment, tile_for
    from linear_layouts.ops.plan import PermuteKind

    problem = _plan(tuple(shape), tuple(dims), w, pointer_alignment(0, 0))
    if problem.kind is not PermuteKind.TRANSPOSE or min(problem.rows, problem.cols) < 32:
        return None
    saved, kernels.L2_TINY_ELEMENT_BYTES = kernels.L2_TINY_ELEMENT_BYTES, ()
    try:
        config = tile_for(problem, 0, 0, device)
    finally:
        kernels.L2_TINY_ELEMENT_BYTES = saved
    return (config, problem) if isinstance(config, TileConfig) else None


def _draw(rng: random.Random, device, dtypes=DTYPES) -> tuple[tuple[int, ...], tuple[int, ...], str] | None:
    """One ``(shape, dims, dtype)`` of the module doc (of ``dtypes``), or None where the draw is not one."""
    from linear_layouts.core.errors import LayoutError
    from linear_layouts.ops.kernels import L2_NARROW_CTAS, MAX_VECTOR_BYTES, tile_layouts

    dtype = rng.choice(dtypes)
    w = ops_cases.ITEMSIZE[dtype]
    total = int(rng.uniform(0.25, 24) * 2**20 / w)
    rows, cols = rng.randint(33, 3000), rng.randint(33, 3000)
    batch = max(1, total // (rows * cols))
    shape, dims = ((rows, cols), (1, 0)) if batch == 1 else ((batch, rows, cols), (0, 2, 1))
    if math.prod(shape) * w < 2**18:
        return None
    planned = _plan_tile(shape, dims, w, device)
    if planned is None:
        return None
    config, problem = planned
    narrow = min(config.src_vector, config.dst_vector) * w < MAX_VECTOR_BYTES
    tiles = config.tiles(problem.rows, problem.cols) * problem.batch_count
    if not narrow or (config.rows, config.cols) == (32, 32) or tiles >= L2_NARROW_CTAS * device.multiprocessors:
        return None
    try:
        tile_layouts(_tiny(config))
    except LayoutError:  # the tiny tile does not fit these vectors (choose_narrow_tile keeps its own then)
        return None
    return shape, dims, dtype


def _tiny(config):
    """``config`` at ``TINY_TILE`` (same element size and vectors)."""
    from linear_layouts.ops.kernels import TINY_TILE

    return dataclasses.replace(config, rows=TINY_TILE[0], cols=TINY_TILE[1], warps=TINY_TILE[2], block=1)


def cases(seed: int, count: int) -> list[tuple[tuple[int, ...], tuple[int, ...], str]]:
    """``count`` draws of ``_draw`` by ``seed`` (those it keeps)."""
    from linear_layouts.ops.kernels import GridShape

    device = GridShape(ops_cases.SMS, ops_cases.L2_BYTES)
    rng = random.Random(seed)
    dtypes = ("float64",) if seed >= FP64_SEEDS else DTYPES
    kept = (case for case in iter(lambda: _draw(rng, device, dtypes), ()) if case is not None)
    return list(itertools.islice(kept, count))


def contenders(shape, dims, w: int, src: int, dst: int, device) -> dict:
    """``{label: launches}`` (module doc)."""
    from linear_layouts.ops.launches import permute_launches

    config, _ = _plan_tile(shape, dims, w, device)
    return {"ops": permute_launches(shape, dims, w, src, dst, device),
            "list": permute_launches(shape, dims, w, src, dst, device, config),
            "tiny": permute_launches(shape, dims, w, src, dst, device, _tiny(config))}


def prepare(seed: int, count: int, jobs: int) -> None:
    ops_cases.compile_contenders(contenders, [(shape, dims, ops_cases.ITEMSIZE[dtype]) for shape, dims, dtype in
                                              cases(seed, count)], BUILD / "cache", jobs)


def _time(fn) -> float:
    import gpu_suite

    return gpu_suite._time(fn, repeats=REPEATS, inner=LAUNCHES)


def bench_case(shape, dims, dtype: str, device, copy_tbs: float) -> dict:
    return ops_cases.bench_permutation(shape, dims, dtype, contenders, device, copy_tbs, _time, ops_cases.launched_tile)


def run(seed: int, count: int, out: Path) -> None:
    env, copy_tbs, rows = ops_cases.run_cases([(cases(seed, count), bench_case)])
    gm = lambda v: math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")  # noqa: E731
    ratios = [r["kernels"]["list"]["us"] / r["kernels"]["tiny"]["us"] for r in rows]
    changed = [r["kernels"]["list"]["us"] / r["kernels"]["ops"]["us"] for r in rows
               if r["kernels"]["ops"]["tile"] != r["kernels"]["list"]["tile"]]
    slower = {label: sum(r["kernels"][label]["us"] > r["kernels"]["eager"]["us"] for r in rows) for label in
              ("ops", "list", "tiny")}
    correct = sum(all(v.get("correct", True) for v in r["kernels"].values()) for r in rows)
    lines = [f"# Small narrow transposes in L2: the narrow list's tile against the tiny tile (seed {seed})", "",
             f"{env.get('date', '')}, {env.get('gpu', '')}; torch {env.get('torch', '')}. 1 GiB copy: {copy_tbs:.3f} TB/s. "
             f"{correct}/{len(rows)} bit-exact. list / tiny {gm(ratios):.3f} in geomean ({min(ratios):.3f}-"
             f"{max(ratios):.3f}; tiny faster by more than 2%: {sum(x > 1.02 for x in ratios)}, slower by more than 2%: "
             f"{sum(x < 0.98 for x in ratios)}). `ops` took another tile than the list on {len(changed)}: list / ops "
             f"{gm(changed):.3f}" + (f" ({min(changed):.3f}-{max(changed):.3f})" if changed else "")
             + f". Slower than eager: ops {slower['ops']}, list {slower['list']}, tiny {slower['tiny']}.", "",
             "| shape | dims | dtype | MiB | list (tile, CTAs) µs | tiny (CTAs) µs | list / tiny | ops (tile) µs | eager µs | "
             "ops / eager |", "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        k = r["kernels"]
        lines.append(f"| {tuple(r['shape'])} | {tuple(r['dims'])} | {r['dtype']} | {r['mib']} | {k['list']['us']} "
                     f"({k['list']['tile']}, {k['list']['ctas']}) | {k['tiny']['us']} ({k['tiny']['ctas']}) | "
                     f"{k['list']['us'] / k['tiny']['us']:.3f} | {k['ops']['us']} ({k['ops']['tile']}) | "
                     f"{k['eager']['us']} | {k['eager']['us'] / k['ops']['us']:.2f}x |")
    text = "\n".join(lines) + "\n"
    write_outputs(out, f"narrow_small_{seed}", dict(environment=env, copy_tbs=copy_tbs, cases=rows), text)
    print(text, end="", flush=True)


def main() -> None:
    cli.seeded_main(__doc__.splitlines()[0], prepare, run, cases=24, out="narrow_small_out")


if __name__ == "__main__":
    main()
