"""Skinny transposes whose output rows 16 bytes do not align: ``kernels.skinny_tile``'s longer runs along them
(``SKINNY_MISALIGNED_RUN_BYTES``) against the tile it took before, on seeded random shapes.

Each seed draws tall matrices of 17 to 31 columns (a skinny tile of 256-byte runs before the rule) whose transposes'
rows 16 bytes do not align — 2-D ``(1, 0)`` or a batch ``(0, 2, 1)`` of 2 to 64 — of 2-, 4- and 8-byte elements,
32 to 160 MiB (more than the L2 moved), every case checked bit for bit and its contenders timed together
(``harness.timing.time_together``, CUDA graphs of 20 launches):

- ``ops``: as ``permute`` launches it;
- ``before``: the tile without the rule (``SKINNY_SHORT_RUN_BYTES = 0``);
- ``r512``, ``r2048``: the rule with runs of 512 or 2048 bytes instead of 1024;
- PyTorch eager and a same-size copy of 4-byte elements; and a 1 GiB copy for the device's bandwidth.

    PYTHONPATH=src:benchmarks python3 benchmarks/skinny_runs_bench.py --mode prepare --seed 1   # CPU: the cubins
    PYTHONPATH=src:benchmarks python3 benchmarks/skinny_runs_bench.py --seed 1 --out DIR        # device
"""

from __future__ import annotations

import itertools
import math
import os
import random
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

BUILD = harness.BUILD / "skinny_runs"
os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(BUILD / "cache"))

from harness import cli, ops_cases  # noqa: E402
from harness.results import write_outputs  # noqa: E402

LAUNCHES, REPEATS = 20, 5
DTYPES = ("bfloat16", "float16", "float32", "float64")
#: Contenders beside ``ops``: label -> (``SKINNY_SHORT_RUN_BYTES``, ``SKINNY_MISALIGNED_RUN_BYTES``) for the call.
SETTINGS = {"before": (0, 1024), "r512": (512, 512), "r2048": (512, 2048)}


def _draw(rng: random.Random) -> tuple[tuple[int, ...], tuple[int, ...], str] | None:
    """One ``(shape, dims, dtype)`` of the module doc, or None where the draw's output rows align or are few."""
    dtype = rng.choice(DTYPES)
    w = ops_cases.ITEMSIZE[dtype]
    cols = rng.randint(17, 31)
    total = int(rng.uniform(32, 160) * 2**20 / w)
    batch = 1 if rng.random() < 0.5 else rng.randint(2, 64)
    rows = total // (batch * cols)
    if rows < 1024 or rows * w % 16 == 0:
        return None
    return ((rows, cols), (1, 0), dtype) if batch == 1 else ((batch, rows, cols), (0, 2, 1), dtype)


def cases(seed: int, count: int) -> list[tuple[tuple[int, ...], tuple[int, ...], str]]:
    """``count`` draws of ``_draw`` by ``seed`` (those it keeps)."""
    rng = random.Random(seed)
    kept = (case for case in iter(lambda: _draw(rng), ()) if case is not None)
    return list(itertools.islice(kept, count))


def _launches_at(shape, dims, w: int, src: int, dst: int, device, setting: tuple[int, int] | None):
    """``permute_launches`` with ``kernels.SKINNY_SHORT_RUN_BYTES`` and ``SKINNY_MISALIGNED_RUN_BYTES`` set to
    ``setting`` for the call (None: as they are)."""
    from linear_layouts.ops import kernels, launches

    saved = kernels.SKINNY_SHORT_RUN_BYTES, kernels.SKINNY_MISALIGNED_RUN_BYTES
    if setting is not None:
        kernels.SKINNY_SHORT_RUN_BYTES, kernels.SKINNY_MISALIGNED_RUN_BYTES = setting
    launches._template.cache_clear()  # its plans do not key on the kernels' constants
    try:
        return launches.permute_launches(shape, dims, w, src, dst, device)
    finally:
        kernels.SKINNY_SHORT_RUN_BYTES, kernels.SKINNY_MISALIGNED_RUN_BYTES = saved
        launches._template.cache_clear()


def contenders(shape, dims, w: int, src: int, dst: int, device) -> dict:
    """``{label: launches}`` (module doc)."""
    out = {"ops": _launches_at(shape, dims, w, src, dst, device, None)}
    for label, setting in SETTINGS.items():
        out[label] = _launches_at(shape, dims, w, src, dst, device, setting)
    return out


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
    changed = [r for r in rows if r["kernels"]["ops"]["tile"] != r["kernels"]["before"]["tile"]]
    speedups = [r["kernels"]["before"]["us"] / r["kernels"]["ops"]["us"] for r in changed]
    others = {label: gm([r["kernels"][label]["us"] / r["kernels"]["ops"]["us"] for r in changed]) for label in ("r512", "r2048")}
    correct = sum(all(v.get("correct", True) for v in r["kernels"].values()) for r in rows)
    lines = [f"# Skinny transposes of misaligned output rows: 1 KiB runs against the tile before (seed {seed})", "",
             f"{env.get('date', '')}, {env.get('gpu', '')}; torch {env.get('torch', '')}. 1 GiB copy: {copy_tbs:.3f} TB/s. "
             f"{correct}/{len(rows)} bit-exact. The rule changed the tile of {len(changed)} of {len(rows)}: before / ops "
             f"{gm(speedups):.3f} in geomean" + (f" ({min(speedups):.3f}-{max(speedups):.3f}; slower by more than 2%: "
                                                 f"{sum(s < 0.98 for s in speedups)})" if speedups else "")
             + "; r512 / ops " + f"{others['r512']:.3f}, r2048 / ops {others['r2048']:.3f}.", "",
             "| shape | dims | dtype | MiB | before (tile) µs | ops (tile) µs (of copy) | before / ops | r512 | r2048 | "
             "eager µs | ops / eager |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        k = r["kernels"]
        lines.append(f"| {tuple(r['shape'])} | {tuple(r['dims'])} | {r['dtype']} | {r['mib']} | {k['before']['us']} "
                     f"({k['before']['tile']}) | {k['ops']['us']} ({k['ops']['tile']}) ({100 * k['ops']['of_copy']:.1f}%) | "
                     f"{k['before']['us'] / k['ops']['us']:.3f} | {k['r512']['us']} | {k['r2048']['us']} | "
                     f"{k['eager']['us']} | {k['eager']['us'] / k['ops']['us']:.2f}x |")
    text = "\n".join(lines) + "\n"
    write_outputs(out, f"skinny_runs_{seed}", dict(environment=env, copy_tbs=copy_tbs, cases=rows), text)
    print(text, end="", flush=True)


def main() -> None:
    cli.seeded_main(__doc__.splitlines()[0], prepare, run, cases=16, out="skinny_runs_out")


if __name__ == "__main__":
    main()
