"""The layout ops on shapes nobody chose: seeded random permutations against Triton, eager and a copy.

The sweep (``ops_bench.py``) times shapes picked from real models; every tile rule was calibrated on shapes
of its own scans. This run draws shapes from a seed instead (``cases``): 2-D transposes, batched transposes,
NCHW <-> NHWC, attention head moves and other 3-D permutations, with sizes odd or multiples of 8, fp8 to
fp32, large (16 to 160 MiB) and small (64 KiB to 4 MiB); seeds from ``SKINNY_SEEDS`` on draw problems with a
side under 32 (few channels, short rows) only. Each case runs through ``ops_bench.bench_case``
(bit-exact check; ours, Triton's ``tl.trans`` kernel at each of its tiles, eager and a same-size copy timed
together), large transposes also at each tile of ``ops_cases.tile_alternatives(scan=True)``, so that a rule
is seen against every tile on shapes it was not fitted on. One seed calibrates, another one checks.

    PYTHONPATH=src:/tmp/triton-3.6.0 python3 benchmarks/ops_heldout.py --mode prepare --seed 1   # CPU
    PYTHONPATH=src python3 benchmarks/ops_heldout.py --seed 1 --out $OUT                        # device

``--dtype``, ``--kind`` (repeatable), ``--large-mib LO HI`` and ``--inside-sectors`` narrow the draw to a rule's
problems (its dtypes, classes, sizes: the L2-resident ones up to 25 MiB, say; output rows starting inside sectors);
``--scan-from-mib N`` scans (and reports as large) every case of N MiB or more; ``--autotune`` also times ours
with ``ops.tune.AUTOTUNE`` on (each case's first call tunes it) and reports it against the planner and Triton;
``--small N`` and ``--large N`` set the cases drawn (8, 24). Writes ``ops_heldout_<seed>.{json,md}`` under ``--out``,
the draw's settings in the JSON. ``--mode replay RUN.json ...`` replays runs against the planner as it is now (its
tile's measured time over the run's best tile).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import random
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
import harness  # noqa: E402, F401  (puts src/ on the path)
os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(HERE / "build" / "ops_cubins"))

from harness import ops_cases  # noqa: E402

import ops_bench  # noqa: E402

#: Bytes of a large case: at least ``LARGE_BYTES`` (the issue's), at most this.
MAX_LARGE_BYTES = 160 << 20
#: Bytes of a small case.
SMALL_BYTES = (64 << 10, 4 << 20)
DTYPES = ("uint8", "bfloat16", "float16", "float32")
#: Dtypes a seed draws from when asked for one outside ``DTYPES`` (``--dtype float64``); ``DTYPES`` alone otherwise,
#: so that the seeds drawn before it draw what they drew.
ALL_DTYPES = DTYPES + ("float64",)
#: Seeds from this one on draw skinny problems (a side under 32).
SKINNY_SEEDS = 100


def _size(rng: random.Random, lo: int, hi: int) -> int:
    """An odd size half the time, else a multiple of 8."""
    if rng.random() < 0.5:
        return rng.randrange(lo | 1, hi, 2)
    return 8 * rng.randrange(max(1, lo // 8), max(2, hi // 8))


#: The classes ``_draw`` draws, and ``_draw_skinny`` (a subset).
KINDS = ("2-D", "batched", "NCHW->NHWC", "NHWC->NCHW", "attention", "3-D")
SKINNY_KINDS = KINDS[:4]
#: Draws ``cases`` makes at most before it says the settings leave too little to draw.
MAX_DRAWS = 1_000_000


def _draw(rng: random.Random) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
    kind = rng.choice(KINDS)
    if kind == "2-D":
        return kind, (_size(rng, 500, 16000), _size(rng, 500, 16000)), (1, 0)
    if kind == "batched":
        return kind, (rng.randrange(2, 65), _size(rng, 40, 4000), _size(rng, 40, 4000)), (0, 2, 1)
    spatial = rng.choice((7, 9, 13, 14, 17, 19, 28, 31, 35, 56, 64, 73, 112))
    channels = rng.choice((24, 40, 80, 96, 112, 160, 192, 320, 384, 480, 576, 720, 960, 1280, 1536, 2048, 3, 17))
    batch = rng.choice((1, 2, 4, 8, 16, 32, 64, 128, 256))
    if kind == "NCHW->NHWC":
        return kind, (batch, channels, spatial, spatial), (0, 2, 3, 1)
    if kind == "NHWC->NCHW":
        return kind, (batch, spatial, spatial, channels), (0, 3, 1, 2)
    if kind == "attention":
        heads = rng.choice((6, 8, 12, 16, 20, 25, 32, 40, 52, 64))
        return kind, (rng.choice((1, 2, 4, 8)), _size(rng, 100, 8192), heads,
                      rng.choice((32, 64, 80, 96, 112, 128, 256))), (0, 2, 1, 3)
    dims = rng.choice(((1, 0, 2), (2, 1, 0), (1, 2, 0), (2, 0, 1)))
    return kind, (_size(rng, 8, 600), _size(rng, 8, 600), _size(rng, 8, 600)), dims


def _draw_skinny(rng: random.Random) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
    """A permutation whose tile problem has a side under 32: few channels, a short row or column."""
    kind = rng.choice(SKINNY_KINDS)
    thin = rng.randrange(1, 32)
    if kind == "2-D":
        long = _size(rng, 100_000, 4_000_000)
        return kind, ((thin, long) if rng.random() < 0.5 else (long, thin)), (1, 0)
    if kind == "batched":
        long = _size(rng, 1000, 200_000)
        return kind, (rng.randrange(1, 257),) + ((thin, long) if rng.random() < 0.5 else (long, thin)), (0, 2, 1)
    spatial = rng.choice((17, 28, 32, 56, 64, 112, 128, 224, 256, 299, 384, 512))
    batch = rng.choice((1, 2, 4, 8, 16, 32, 64, 128, 256))
    if kind == "NCHW->NHWC":
        return kind, (batch, thin, spatial, spatial), (0, 2, 3, 1)
    return kind, (batch, spatial, spatial, thin), (0, 3, 1, 2)


@dataclass(frozen=True)
class Draw:
    """What a seed draws: ``large`` cases of ``large_bytes`` (inclusive), ``small`` of ``SMALL_BYTES``, each of one
    of ``dtypes`` and of one of ``kinds`` (None: any class); ``inside_sectors``: only transposes whose rows 16 bytes
    align on both sides and whose output rows start inside 32-byte sectors (``SHARED_SECTOR_TILES``' problems)."""
    large: int = 24
    small: int = 8
    dtypes: tuple[str, ...] = DTYPES
    large_bytes: tuple[int, int] = (ops_cases.LARGE_BYTES, MAX_LARGE_BYTES)
    kinds: tuple[str, ...] | None = None
    inside_sectors: bool = False


def cases(seed: int, draw_settings: Draw = Draw()) -> list[tuple[str, tuple[int, ...], tuple[int, ...], str]]:
    """``(class, shape, dims, dtype)``: ``draw_settings.large`` cases of its ``large_bytes`` and ``small`` of
    ``SMALL_BYTES``, drawn from ``seed`` (draws outside both ranges or of another dtype are drawn again); a seed
    of ``SKINNY_SEEDS`` or more draws skinny problems only (``_draw_skinny``). Settings that leave nothing to draw
    (a class the seed's draw has not, counts below 0, an empty size range) or too little to fill the counts within
    ``MAX_DRAWS`` draws raise a ``ValueError`` saying which."""
    skinny = seed >= SKINNY_SEEDS
    kinds = SKINNY_KINDS if skinny else KINDS
    unknown = set(draw_settings.kinds or ()) - set(kinds)
    if unknown:
        raise ValueError(f"kinds: {sorted(unknown)} are not classes seed {seed} draws ({', '.join(kinds)})")
    if draw_settings.large < 0 or draw_settings.small < 0:
        raise ValueError("large, small: the counts must be >= 0")
    lo, hi = draw_settings.large_bytes
    if draw_settings.large and not 0 <= lo <= hi:
        raise ValueError(f"large_bytes: ({lo}, {hi}) is no range of sizes")
    rng = random.Random(seed)
    out: list = []
    want = {"large": draw_settings.large, "small": draw_settings.small}
    draw = _draw_skinny if skinny else _draw
    pool = DTYPES if set(draw_settings.dtypes) <= set(DTYPES) else ALL_DTYPES
    for _ in range(MAX_DRAWS):
        if not (want["large"] or want["small"]):
            return out
        kind, shape, dims = draw(rng)
        dtype = rng.choice(pool)
        if dtype not in draw_settings.dtypes or (draw_settings.kinds and kind not in draw_settings.kinds):
            continue
        nbytes = math.prod(shape) * ops_cases.ITEMSIZE[dtype]
        if draw_settings.inside_sectors and not _inside_sectors(shape, dims, dtype):
            continue
        size = ("large" if lo <= nbytes <= hi else
                "small" if SMALL_BYTES[0] <= nbytes <= SMALL_BYTES[1] else None)
        if size and want[size]:
            want[size] -= 1
            out.append((kind if size == "large" else f"small {kind}", shape, dims, dtype))
    if want["large"] or want["small"]:
        raise ValueError(f"seed {seed}: {MAX_DRAWS} draws found {draw_settings.large - want['large']} of "
                         f"{draw_settings.large} large and {draw_settings.small - want['small']} of "
                         f"{draw_settings.small} small cases: widen the dtypes, classes or sizes")
    return out


def _inside_sectors(shape: tuple[int, ...], dims: tuple[int, ...], dtype: str) -> bool:
    """Whether the permutation is a transpose whose input and output rows are whole 16-byte vectors and whose output
    rows are not whole 32-byte sectors."""
    problem = ops_bench._problem(shape, dims, dtype)
    if problem.kind.value != "transpose":
        return False
    w = problem.element_bytes
    return (problem.cols * w) % 16 == 0 and (problem.rows * w) % 32 == 16


def kernel_sources(seed: int, draw: Draw = Draw()) -> list[str]:
    from linear_layouts.ops import tune
    from linear_layouts.ops.kernels import GridShape
    from linear_layouts.ops.launches import Launch, permute_launches

    device = GridShape(ops_cases.SMS, ops_cases.L2_BYTES)
    sources: dict[str, None] = {}
    for _, shape, dims, dtype in cases(seed, draw):
        w = ops_cases.ITEMSIZE[dtype]
        launches = [permute_launches(shape, dims, w, ops_cases._BASE, ops_cases._OTHER, device)]
        launches += ops_cases.tile_alternatives(shape, dims, w, ops_cases._BASE, ops_cases._OTHER, scan=True).values()
        signature = (tuple(shape), tuple(dims), w, 0, 0, 0)  # what ``ops.tune`` times (``--autotune``)
        sources.update((kernel.source, None) for candidate in tune._candidates(signature, device)[0].values()
                       for kernel, _, _ in candidate.launches(ops_cases._BASE, ops_cases._OTHER))
        for items in launches:
            sources.update((item.kernel.source, None) for item in items if isinstance(item, Launch))
    return list(sources)


def prepare(seed: int, jobs: int, draw: Draw = Draw()) -> None:
    n, seconds = ops_cases.compile_sources(kernel_sources(seed, draw), "sm_90", jobs)
    print(f"ours: {n} kernels in {seconds:.0f} s", flush=True)
    import triton_transpose  # noqa: PLC0415 - Triton 3.6 on the path

    needs = set()
    for _, shape, dims, dtype in cases(seed, draw):
        problem = ops_bench._problem(shape, dims, dtype)
        if ops_bench._triton_batch(problem) is not None:
            needs.add((problem.element_bytes, problem.rows % 16 == 0, problem.cols % 16 == 0))
    triton_transpose.prepare(needs, workers=jobs or 2)


def measure(seed: int, out: Path, budget: float, draw: Draw = Draw(), tuned: bool = False) -> None:
    import gpu_suite

    out.mkdir(parents=True, exist_ok=True)
    results: dict = dict(environment=gpu_suite.environment(), permute=[], cast=[], seed=seed,
                         draw=dataclasses.asdict(draw))
    results["copy"] = gpu_suite.copy_bandwidth()
    try:
        from triton_transpose import TritonTransposes

        triton = TritonTransposes()
    except Exception as error:  # noqa: BLE001 - no Triton peer: said in every row
        print(f"Triton peer unavailable: {error}", flush=True)
        triton = None
    compiled = ops_bench.Compiled(-1.0)  # no torch.compile: the sweep compares it
    deadline = time.time() + budget
    for kind, shape, dims, dtype in cases(seed, draw):
        if time.time() > deadline:
            results["permute"].append(dict(kind=kind, shape=list(shape), dims=list(dims), dtype=dtype,
                                           error="skipped: out of time"))
            continue
        try:
            row = ops_bench.bench_case(kind, shape, dims, dtype, triton, compiled, scan=True, tuned=tuned)
        except Exception as error:  # noqa: BLE001 - a row, not the end of the run
            row = dict(kind=kind, shape=list(shape), dims=list(dims), dtype=dtype, correct=False,
                       error=f"{type(error).__name__}: {str(error)[:300]}")
        results["permute"].append(row)
        print(f"  {kind} {shape} {dims} {dtype}: ours {row.get('ours_us', 0):.1f} ({row.get('tile')}) best tile "
              f"{row.get('ours_best_tile_us') or 0:.1f} ({row.get('ours_best_tile')}) triton "
              f"{row.get('triton_us') or 0:.1f} ({row.get('triton_tile')}) eager {row.get('eager_us', 0):.1f} "
              f"correct {row.get('correct')}" + (f" tuned {row.get('ours_tuned_us', 0):.1f} ({row.get('tuned')}, "
                                                  f"{row.get('tune_s', 0):.2f} s) correct {row.get('tuned_correct')}"
                                                  if tuned else ""), flush=True)
    results["copy_end"] = gpu_suite.copy_bandwidth()
    results["summary"] = ops_bench.summary(results)
    (out / f"ops_heldout_{seed}.json").write_text(json.dumps(results, indent=1, default=str))
    text = ops_bench.report(results).replace("# Layout ops vs PyTorch, torch.compile and Triton",
                                             f"# Layout ops on held-out shapes (seed {seed})", 1)
    if tuned:
        text += "\n" + autotune_report(results["permute"])
    (out / f"ops_heldout_{seed}.md").write_text(text)
    print(text, flush=True)


def autotune_report(rows: list[dict]) -> str:
    """Markdown: for each case timed with ``ops.tune.AUTOTUNE`` on, the planner's and the tuned launches' µs (timed
    together), the tuning's choice (None: not a problem it tunes, so the planner's) and host seconds, our best
    scanned tile and Triton's best; then geomeans and counts over the cases it tuned."""
    lines = ["## Autotuning (`ops.tune.AUTOTUNE`)", "",
             "| shape | dims | dtype | planner µs | tuned µs (choice) | tuning s | best scanned µs | Triton best µs | "
             "tuned / planner | Triton / tuned | Triton / planner | correct |", "|" + "---|" * 12]
    ratios: dict[str, list[float]] = {"planner / tuned": [], "triton / tuned": [], "triton / planner": []}
    for r in rows:
        if "ours_tuned_us" not in r:
            continue
        t, p, tt = r["ours_tuned_us"], r["ours_us"], r.get("triton_us")
        if r.get("tuned"):
            ratios["planner / tuned"].append(p / t)
            if tt:
                ratios["triton / tuned"].append(tt / t)
                ratios["triton / planner"].append(tt / p)
        lines.append(f"| {r['shape']} | {r['dims']} | {r['dtype']} | {p:.1f} | {t:.1f} ({r.get('tuned')}) | "
                     f"{r.get('tune_s', 0):.2f} | {r.get('ours_best_tile_us') or 0:.1f} | {tt or 0:.1f} | "
                     f"{p / t:.3f} | {(tt or 0) / t:.3f} | {(tt or 0) / p:.3f} | "
                     f"{r.get('correct') and r.get('tuned_correct')} |")
    lines.append("")
    for name, values in ratios.items():
        if values:
            g = math.exp(sum(math.log(v) for v in values) / len(values))
            lines.append(f"- {name} (tuned cases): geomean {g:.3f} over {len(values)}, lowest {min(values):.3f}, "
                         f"below 0.9: {sum(v < 0.9 for v in values)}, below 0.95: {sum(v < 0.95 for v in values)}")
    return "\n".join(lines) + "\n"


def replay(paths: list[str]) -> str:
    """The planner as it is now against the tiles a run measured: for each large transpose of each run (JSON),
    the tile ``ops`` would take today, its measured time over the run's best tile (1.0: the best), and the
    tile the run itself took. A tile today's planner takes that the run did not time is said so."""
    from linear_layouts.ops.kernels import GridShape
    from linear_layouts.ops.launches import Launch, permute_launches

    device = GridShape(ops_cases.SMS, ops_cases.L2_BYTES)
    lines = ["| run | class | shape | dtype | tile now | best / now | tile then | best / then |",
             "|---|---|---|---|---|---|---|---|"]
    ratios: dict[str, list[float]] = {}
    then: dict[str, list[float]] = {}
    for path in paths:
        results = json.loads(Path(path).read_text())
        for r in results["permute"]:
            tiles = r.get("ours_tiles")
            if not tiles:
                continue
            items = [x for x in permute_launches(tuple(r["shape"]), tuple(r["dims"]), ops_cases.ITEMSIZE[r["dtype"]],
                                                 ops_cases._BASE, ops_cases._OTHER, device) if isinstance(x, Launch)]
            k = items[0].kernel
            scan = ops_cases.tile_alternatives(tuple(r["shape"]), tuple(r["dims"]), ops_cases.ITEMSIZE[r["dtype"]],
                                               ops_cases._BASE, ops_cases._OTHER, scan=True)
            labels = [label for label, launched in scan.items() if launched[0].kernel.name == k.name]
            now = labels[0] if labels else ("chunked" if k.name.startswith("ll_permute_chunked") else
                                            f"{k.tile_rows}x{k.tile_cols}/{k.threads // 32}w")
            best = min(v["us"] for v in tiles.values())
            measured = [tiles[label]["us"] for label in labels if label in tiles]
            cell = f"{best / min(measured):.2f}" if measured else "not timed"
            if measured:
                ratios.setdefault(str(results.get("seed", path)), []).append(best / min(measured))
                then.setdefault(str(results.get("seed", path)), []).append(best / r["ours_us"])
            lines.append(f"| {results.get('seed', path)} | {r['kind']} | {r['shape']} | {r['dtype']} | {now} | {cell} | "
                         f"{r['tile']} | {best / r['ours_us']:.2f} |")
    def geomean(v: list[float]) -> float:
        return math.exp(sum(map(math.log, v)) / len(v))

    summary = [f"- run {run}: {len(v)} cases, best / now geomean {geomean(v):.3f}, lowest {min(v):.2f} (the run's "
               f"own planner: {geomean(then[run]):.3f}, lowest {min(then[run]):.2f})" for run, v in ratios.items()]
    return "\n".join(summary + [""] + lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", default="measure", choices=["prepare", "measure", "list", "replay"])
    ap.add_argument("runs", nargs="*", help="replay: the runs' JSON files")
    ap.add_argument("--seed", type=int, action="append", help="one or more seeds (default: 1)")
    ap.add_argument("--out", default=str(HERE / "build" / "ops_heldout"))
    ap.add_argument("--budget", type=float, default=120.0, help="seconds per seed")
    ap.add_argument("--jobs", type=int, default=0)
    ap.add_argument("--dtype", action="append", choices=ALL_DTYPES, help="draw only these dtypes (repeatable)")
    ap.add_argument("--large-mib", type=float, nargs=2, metavar=("LO", "HI"),
                    help="large cases of LO to HI MiB (default: 16 to 160)")
    ap.add_argument("--small", type=int, default=8, help="small cases a seed draws")
    ap.add_argument("--large", type=int, default=24, help="large cases a seed draws")
    ap.add_argument("--kind", action="append", help="draw only these classes (2-D, batched, NCHW->NHWC, ...)")
    ap.add_argument("--scan-from-mib", type=float, help="scan every tile of the cases of this size and more (default: "
                                                        "the large cases', 16 MiB)")
    ap.add_argument("--autotune", action="store_true", help="also time ours with ops.tune.AUTOTUNE on (prepare: "
                                                            "its candidates are compiled either way)")
    ap.add_argument("--inside-sectors", action="store_true", help="draw only transposes of 16-byte-aligned rows whose "
                                                                  "output rows start inside 32-byte sectors")
    args = ap.parse_args()
    if args.scan_from_mib is not None:  # the cases counted large (scanned at every tile, reported as large)
        ops_bench.LARGE_BYTES = ops_cases.LARGE_BYTES = int(args.scan_from_mib * (1 << 20))
    draw = Draw(large=args.large, small=args.small, dtypes=tuple(args.dtype or DTYPES), kinds=tuple(args.kind) if args.kind else None,
                large_bytes=tuple(int(x * (1 << 20)) for x in args.large_mib) if args.large_mib else Draw().large_bytes,
                inside_sectors=args.inside_sectors)
    try:
        for seed in args.seed or [1] if args.mode != "replay" else []:
            cases(seed, draw)
    except ValueError as error:
        ap.error(str(error))
    if args.mode == "replay":
        print(replay(args.runs), end="")
        return
    for seed in args.seed or [1]:
        if args.mode == "prepare":
            prepare(seed, args.jobs, draw)
        elif args.mode == "list":
            for case in cases(seed, draw):
                print(case, math.prod(case[1]) * ops_cases.ITEMSIZE[case[3]] >> 20, "MiB")
        else:
            measure(seed, Path(args.out), args.budget, draw, args.autotune)


if __name__ == "__main__":
    main()
