"""The order in which a tiled kernel's CTAs take their tiles (its raster order), on large transposes and fp8
cast-transposes: ``ops`` as it is against the other order.

A tiled kernel's CTA ``t`` takes tile ``(t / T_n, t mod T_n)`` of its batch in raster order ``"n"`` (consecutive
CTAs walk along ``A``'s rows of tiles: the CTAs resident at one time read a band of whole rows of ``A`` and write
short segments of each of ``B``'s rows) and tile ``(t mod T_m, t / T_m)`` in order ``"m"`` (down ``A``'s columns
of tiles: they write whole stretches of ``B``'s rows). ``ops`` plans large transposes in order ``"m"``, and
cast-transposes with narrow stores of ``T`` (``ops.kernels.raster_order``); for those the contender ``raster n``
is the same plan emitted in order ``"n"``. Kernels that ``ops`` launches in order ``"n"`` (smaller problems, the
other cast-transposes, the chunked and interleave kernels) get the contender ``raster m``: their source with the
tile index remapped. Seed 0 is a fixed list (square and weight transposes,
batched transposes, NCHW <-> NHWC, cast-transposes); other seeds draw ``--cases`` random large transposes and a
third as many cast-transposes. Every output is checked bit for bit (casts: against PyTorch's cast, and the amax)
and a case's contenders are timed together (``harness.timing.time_together``, CUDA graphs of 20 launches), with
PyTorch eager and a same-size copy for permutations, and a 1 GiB copy for the device's bandwidth.

    PYTHONPATH=src python3 benchmarks/tile_order_bench.py --mode prepare --seed 0   # CPU: the cubins
    PYTHONPATH=src python3 benchmarks/tile_order_bench.py --seed 0 --out DIR        # device: tile_order_<seed>.*
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import random
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

BUILD = harness.BUILD / "tile_order"
os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(BUILD / "cache"))

from harness import cli, ops_cases  # noqa: E402

LAUNCHES, REPEATS = 20, 5
FIXED = (
    ((8192, 8192), (1, 0), "uint8"), ((8192, 8192), (1, 0), "bfloat16"), ((8192, 8192), (1, 0), "float32"),
    ((4096, 11008), (1, 0), "bfloat16"), ((28672, 8192), (1, 0), "float8_e4m3fn"), ((4096, 4096), (1, 0), "float64"),
    ((16, 2048, 2048), (0, 2, 1), "float16"), ((32, 256, 56, 56), (0, 2, 3, 1), "float16"),
    ((32, 56, 56, 256), (0, 3, 1, 2), "float16"), ((8192, 28672), (1, 0), "bfloat16"),
    ((6415, 12552), (1, 0), "float16"), ((15023, 7237), (1, 0), "uint8"),   # odd output rows: the chunked kernel
)
#: Seed 0's cast-transposes ``(M, N, input format)``: aligned, odd and odd token counts.
FIXED_CASTS = ((8192, 8192, "bf16"), (4096, 11008, "bf16"), (16384, 4096, "fp32"), (4095, 11007, "bf16"),
               (8191, 8192, "bf16"), (12289, 4096, "fp16"))
DTYPES = ("uint8", "bfloat16", "float32", "float64")
FORMATS = ("bf16", "fp16", "fp32")
#: The one-tile-per-CTA tile index lines ``remapped`` rewrites into raster order "m".
_ORDER_N = ("  unsigned t = blockIdx.x;\n",
            "  const unsigned tile_col = blockIdx.x % tiles_n, tile_row = blockIdx.x / tiles_n;\n")
#: Bytes of the random cases (``[seed >= 100]``: large, or in and out of L2).
_SIZES = ((32 << 20, 512 << 20), (2 << 20, 40 << 20))
_CAST_SIZES = ((16 << 20, 256 << 20), (2 << 20, 40 << 20))
_AMAX = 5 << 40


def cases(seed: int, count: int) -> list[tuple[tuple[int, ...], tuple[int, ...], str]]:
    """Seed 0: ``FIXED``; else ``count`` random 2-D and batched transposes of 32-512 MiB (seeds from 100: 2-40 MiB,
    in and out of L2), sides multiples of 16."""
    if seed == 0:
        return list(FIXED)
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        dtype = rng.choice(DTYPES)
        w = ops_cases.ITEMSIZE[dtype]
        elements = rng.randrange(*_SIZES[seed >= 100]) // w
        batch = 1 if rng.random() < 0.6 else rng.choice((2, 4, 8, 16, 32))
        rows = 16 * max(1, int(math.sqrt(elements / batch) * rng.uniform(0.25, 4.0)) // 16)
        cols = 16 * max(1, elements // (batch * rows) // 16)
        out.append(((rows, cols), (1, 0), dtype) if batch == 1 else ((batch, rows, cols), (0, 2, 1), dtype))
    return out


def cast_cases(seed: int, count: int) -> list[tuple[int, int, str]]:
    """Seed 0: ``FIXED_CASTS``; else ``count // 3`` random cast-transposes of 16-256 MiB of input (seeds from 100:
    2-40 MiB), ``M`` odd half the time, ``N`` a multiple of 64."""
    if seed == 0:
        return list(FIXED_CASTS)
    rng = random.Random(seed + 1000)
    out = []
    while len(out) < count // 3:
        fmt = rng.choice(FORMATS)
        elements = rng.randrange(*_CAST_SIZES[seed >= 100]) // (4 if fmt == "fp32" else 2)
        n = 64 * rng.randrange(16, 256 if seed < 100 else 96)
        m = max(16, elements // n) | (1 if rng.random() < 0.5 else 0)
        out.append((m, n, fmt))
    return out


def remapped(kernel):
    """``kernel`` (one tile per CTA, raster order "n") with its tile index in raster order "m"; None if it has no
    such tile index."""
    source = kernel.source
    if _ORDER_N[0] in source and {"tiles_m", "tiles_n"} <= {p for _, p in kernel.params}:
        lines = ["  unsigned t = blockIdx.x;",
                 "  {  // raster order m: down the columns of tiles of each batch",
                 "    const unsigned per_batch = tiles_m * tiles_n, batch_index = t / per_batch;",
                 "    const unsigned r = t - batch_index * per_batch, column = r / tiles_m;",
                 "    t = batch_index * per_batch + (r - column * tiles_m) * tiles_n + column;",
                 "  }", ""]
        source = source.replace(_ORDER_N[0], "\n".join(lines), 1)
    elif _ORDER_N[1] in source:
        source = source.replace(_ORDER_N[1], "  const unsigned tile_row = blockIdx.x % tiles_m, tile_col = blockIdx.x / "
                                "tiles_m;\n", 1)
    else:
        return None
    return dataclasses.replace(kernel, name=kernel.name + "_mr", source=source.replace(kernel.name, kernel.name + "_mr"))


def in_raster_m(source: str) -> bool:
    """Whether a tiled kernel's ``source`` takes its tile row from the tile index first (raster order "m",
    ``codegen.permute.tile_index_lines``)."""
    row, col = source.find("  const unsigned tile_row = t"), source.find("  const unsigned tile_col = t")
    return 0 <= row < col


def _other_order(items, rebuild):
    """``(label, launches)`` of ``items`` (a plan's launches) in the other raster order: ``rebuild()`` (the plan
    made again in order "n") for a transpose ``ops`` plans in order "m", else each kernel ``remapped``."""
    from linear_layouts.ops.launches import Launch

    kernels = [item.kernel for item in items if isinstance(item, Launch)]
    if not kernels:
        return None
    if in_raster_m(kernels[0].source):
        return "raster n", rebuild()
    swapped = {k.name: remapped(k) for k in kernels}
    if any(k is None for k in swapped.values()):
        return None
    return "raster m", [dataclasses.replace(item, kernel=swapped[item.kernel.name]) if isinstance(item, Launch)
                        else item for item in items]


def _in_order_n(plan):
    """``plan()`` with every tiled kernel planned in raster order "n" (``ops.launches.raster_order`` replaced, the
    planner's caches cleared around it)."""
    from linear_layouts.ops import kernels, launches

    def clear():
        for cached in (kernels.permute_kernel, kernels.cast_kernel, launches._template):
            cached.cache_clear()

    clear()
    default = launches.raster_order
    launches.raster_order = lambda *_, **__: "n"
    try:
        return plan()
    finally:
        launches.raster_order = default
        clear()


def contenders(shape, dims, w: int, src: int, dst: int, device) -> dict:
    """``{label: launches}`` of a permutation: ``ops`` and ``_other_order``'s."""
    from linear_layouts.ops.launches import permute_launches

    items = permute_launches(shape, dims, w, src, dst, device)
    other = _other_order(items, lambda: _in_order_n(lambda: permute_launches(shape, dims, w, src, dst, device)))
    return {"ops": items, **(dict([other]) if other else {})}


def cast_contenders(m: int, n: int, fmt: str, x: int, c: int, t: int, device) -> dict:
    """``{label: launches}`` of a cast-transpose (scale 0.37, e4m3): ``ops`` and ``_other_order``'s."""
    from linear_layouts.ops.launches import cast_launches

    def plan():
        return cast_launches(fmt, "e4m3", m, n, x, c, t, None, 0.37, _AMAX, device)

    items = plan()
    other = _other_order(items, lambda: _in_order_n(plan))
    return {"ops": items, **(dict([other]) if other else {})}


def prepare(seed: int, count: int, jobs: int) -> None:
    from linear_layouts.ops.kernels import GridShape

    ops_cases.compile_contenders(contenders, ((shape, dims, ops_cases.ITEMSIZE[dtype])
                                              for shape, dims, dtype in cases(seed, count)), BUILD / "cache", jobs)
    device = GridShape(ops_cases.SMS, ops_cases.L2_BYTES)
    sources = ops_cases.launch_sources(items for m, n, fmt in cast_cases(seed, count)
                                       for items in cast_contenders(m, n, fmt, 1 << 40, 2 << 40, 3 << 40, device).values())
    print("casts: %d kernels in %.0f s" % ops_cases.compile_sources(sources, "sm_90", jobs))


def _time(fn) -> float:
    import gpu_suite

    return gpu_suite._time(fn, repeats=REPEATS, inner=LAUNCHES)


def _describe(items) -> dict:
    kernel = items[0].kernel
    return dict(tile=[kernel.tile_rows, kernel.tile_cols], ctas=items[0].ctas, threads=kernel.threads, name=kernel.name)


def bench_case(shape, dims, dtype: str, device, copy_tbs: float) -> dict:
    return ops_cases.bench_permutation(shape, dims, dtype, contenders, device, copy_tbs, _time, _describe)


def bench_cast(m: int, n: int, fmt: str, device, copy_tbs: float) -> dict:
    from harness.timing import time_together

    w = 4 if fmt == "fp32" else 2
    buffers = ops_cases.cast_buffers(m, n, fmt)
    x, c, t = buffers[:3]
    row = dict(shape=[m, n], dims=["cast"], dtype=fmt, mib=round(m * n * w / 2**20, 2), kernels={})
    fns = {}
    for label, items in cast_contenders(m, n, fmt, x.data_ptr(), c.data_ptr(), t.data_ptr(), device).items():
        fns[label], items, correct = ops_cases.checked_cast_runner(items, buffers)
        row["kernels"][label] = dict(correct=correct, **_describe(items))
    for label, us in time_together(_time, fns).items():  # bytes: X read once, C and T written once
        row["kernels"][label].update(us=round(us, 2), of_copy=round(m * n * (w + 2) / us / 1e6 / copy_tbs, 3))
    return row


def markdown(seed: int, env: dict, copy_tbs: float, rows: list[dict]) -> str:
    def ratio(r):  # the time in order "n" over the time in order "m"
        k = r["kernels"]
        return (k["raster n"]["us"] / k["ops"]["us"] if "raster n" in k
                else k["ops"]["us"] / k["raster m"]["us"] if "raster m" in k else None)

    def summary(label, subset):
        values = [v for v in map(ratio, subset) if v]
        if not values:
            return f"{label}: none"
        return (f"{label} ({len(values)}): {math.exp(sum(map(math.log, values)) / len(values)):.3f} "
                f"({min(values):.3f}-{max(values):.3f})")

    casts = [r for r in rows if r["dims"] == ["cast"]]
    perms = [r for r in rows if r["dims"] != ["cast"]]
    lines = [f"# Raster orders of large transposes and cast-transposes (seed {seed})", "",
             f"{env.get('date', '')}, {env.get('gpu', '')}; torch {env.get('torch', '')}. 1 GiB copy: {copy_tbs:.3f} "
             f"TB/s. {sum(all(v.get('correct', True) for v in r['kernels'].values()) for r in rows)}/{len(rows)} "
             "cases bit-exact. Cells: µs (% of the 1 GiB copy's bandwidth; casts: of their bytes, X read, C and T "
             "written).", "",
             "Time in raster order n / time in order m, geomean (range): "
             + "; ".join([summary("ops transposes", [r for r in perms if "raster n" in r["kernels"]]),
                          summary("other permutation kernels", [r for r in perms if "raster m" in r["kernels"]]),
                          summary("cast-transposes", casts)]), "",
             "| shape | dims | dtype | MiB | ops kernel | tile | CTAs | ops | other order | n / m | copy | eager |",
             "|---|---|---|---:|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        k = r["kernels"]
        other = "raster n" if "raster n" in k else "raster m" if "raster m" in k else None

        def cell(label):
            return f"{k[label]['us']} ({100 * k[label]['of_copy']:.1f}%)" if label in k else "-"

        value = ratio(r)
        lines.append(f"| {tuple(r['shape'])} | {tuple(r['dims'])} | {r['dtype']} | {r['mib']} | {k['ops']['name']} | "
                     f"{k['ops']['tile'][0]}x{k['ops']['tile'][1]}/{k['ops']['threads'] // 32}w | {k['ops']['ctas']} | "
                     f"{cell('ops')} | {(other or '') + ' ' + cell(other) if other else '-'} | "
                     f"{'-' if value is None else f'{value:.3f}'} | {cell('copy')} | {cell('eager')} |")
    return "\n".join(lines) + "\n"


def run(seed: int, count: int, out: Path) -> None:
    env, copy_tbs, rows = ops_cases.run_cases([(cases(seed, count), bench_case), (cast_cases(seed, count), bench_cast)])
    out.mkdir(parents=True, exist_ok=True)
    (out / f"tile_order_{seed}.json").write_text(json.dumps(dict(environment=env, copy_tbs=copy_tbs, cases=rows),
                                                            indent=1))
    text = markdown(seed, env, copy_tbs, rows)
    (out / f"tile_order_{seed}.md").write_text(text)
    print(text, flush=True)


def main() -> None:
    cli.seeded_main(__doc__.splitlines()[0], prepare, run, cases=12, out="tile_order_out")


if __name__ == "__main__":
    main()
