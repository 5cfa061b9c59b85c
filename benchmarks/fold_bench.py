"""Folded transposes on the device (``ops.launches.fold_side``): batched transposes whose matrices leave a partial
edge tile (NCHW <-> NHWC of 7 x 7 ... 28 x 28 planes, batches of odd matrices), with the batch dim run on across the
tiles, against the same launches unfolded (``launches.FOLD_BATCH = False``: what ``ops`` launched before), PyTorch
eager ``x.permute(dims).contiguous()`` and a same-size copy. Each output is checked bit for bit against PyTorch's;
the contenders of a case are timed together (``harness.timing.time_together``, CUDA graphs of ``LAUNCHES`` launches,
as ``ops_bench``). The rule has no constant to calibrate: ``--set models`` (the sweep's conv shapes) is where it
was looked at first, ``--seed N`` draws ``--cases`` problems it was not (only those that fold are kept).

    PYTHONPATH=src:benchmarks python3 benchmarks/fold_bench.py --mode prepare [--set models | --seed N]  # CPU
    PYTHONPATH=src:benchmarks python3 benchmarks/fold_bench.py --out DIR [--set models | --seed N]      # device
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

BUILD = harness.BUILD / "fold"
os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(BUILD / "cache"))

from harness import ops_cases  # noqa: E402
from harness.timing import geomean  # noqa: E402

#: The sweep's conv activations whose planes leave partial tiles, and two batches of odd matrices:
#: (shape, dims, dtype).
MODELS = tuple(
    [((32, c, p, p), (0, 2, 3, 1), dtype) for c, p in ((512, 28), (1024, 14), (2048, 7)) for dtype in ("float16", "float32")]
    + [((32, p, p, c), (0, 3, 1, 2), dtype) for c, p in ((512, 28), (1024, 14), (2048, 7)) for dtype in ("float16", "float32")]
    + [((64, 1000, 300), (0, 2, 1), "float16"), ((12, 77, 8192), (0, 2, 1), "uint8")])
LAUNCHES, REPEATS = 20, 5
_KINDS = ("NCHW->NHWC", "NHWC->NCHW", "batched")
_DTYPES = {"uint8": 1, "float16": 2, "float32": 4, "float64": 8}


def _draw(seed: int, count: int, sides: tuple[int, int], planes: tuple[int, int], channels: tuple[int, int],
          mib: tuple[float, int], takes) -> list[tuple]:
    """``count`` problems drawn by ``seed`` whose launches ``takes``: NCHW -> NHWC, NHWC -> NCHW (planes ``planes``
    pixels a side, ``channels``) and batched ``(0, 2, 1)`` transposes (``sides`` a side), any element size, 1 MiB to
    ``mib[1]`` MiB (a size drawn up to ``mib[0]``, log-uniform)."""
    from linear_layouts.ops.kernels import GridShape
    from linear_layouts.ops.launches import Launch, permute_launches

    device = GridShape(ops_cases.SMS, ops_cases.L2_BYTES)
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        kind, dtype = rng.choice(_KINDS), rng.choice(tuple(_DTYPES))
        target = math.exp(rng.uniform(0, math.log(mib[0]))) * 2**20 / _DTYPES[dtype]
        if kind == "batched":
            m, n = rng.randint(*sides), rng.randint(*sides)
            shape, dims = (max(2, round(target / (m * n))), m, n), (0, 2, 1)
        else:
            p, c = rng.randint(*planes), rng.randint(*channels)
            b = max(2, round(target / (p * p * c)))
            shape, dims = ((b, c, p, p), (0, 2, 3, 1)) if kind == "NCHW->NHWC" else ((b, p, p, c), (0, 3, 1, 2))
        if not 2**20 <= math.prod(shape) * _DTYPES[dtype] <= mib[1] * 2**20:
            continue
        launches = permute_launches(shape, dims, _DTYPES[dtype], ops_cases._BASE, ops_cases._OTHER, device)
        if any(isinstance(x, Launch) and takes(x.kernel) for x in launches):
            out.append((shape, dims, dtype))
    return out


def drawn(seed: int, count: int) -> list[tuple]:
    """``count`` problems drawn by ``seed`` that fold: NCHW -> NHWC, NHWC -> NCHW (planes of 3 to 90 a side, 3 to
    2048 channels) and batched ``(0, 2, 1)`` transposes (sides 5 to 5000), any element size, 1 to 100 MiB."""
    return _draw(seed, count, (5, 5000), (3, 90), (3, 2048), (96, 100), lambda kernel: kernel.fold)


def drawn_small(seed: int, count: int) -> list[tuple]:
    """``count`` problems drawn by ``seed`` that ``ops`` gives the small-block kernel (``launches.small_blocks``):
    batches of ``m x n`` transposes (2 to 64 a side) and NCHW <-> NHWC of small images (2 to 16 a side, 2 to 64
    channels), any element size, 1 to 64 MiB."""
    return _draw(seed, count, (2, 64), (2, 16), (2, 64), (64, 64), lambda kernel: "small" in kernel.name)


def _with(settings: dict, plan):
    """``plan()`` with ``ops.launches``' switches set to ``settings`` for the call."""
    from linear_layouts.ops import launches

    saved = {name: getattr(launches, name) for name in settings}
    try:
        for name, value in settings.items():
            setattr(launches, name, value)
        return plan()
    finally:
        for name, value in saved.items():
            setattr(launches, name, value)


def contenders(shape, dims, itemsize: int, src: int, dst: int, device, small: bool = False) -> dict:
    """``{label: launches}``: ``ops`` (folded where ``fold_side`` says) and ``unfolded``; ``small`` (problems the
    small-block kernel takes): ``ops``, the tiled kernel folded by the rule (``folded``), folded wherever a tile is
    saved whatever the element size (``folded any``) and unfolded (``tiles``)."""
    from linear_layouts.ops import launches

    def plan():
        return launches.permute_launches(shape, dims, itemsize, src, dst, device)

    if not small:
        return {"ops": plan(), "unfolded": _with({"FOLD_BATCH": False}, plan)}
    return {"ops": plan(), "folded": _with({"SMALL_BATCHES": False}, plan),
            "folded any": _with({"SMALL_BATCHES": False, "FOLD_MIN_SAVED": {w: 0.0 for w in (1, 2, 4, 8, 16)}},
                                plan),
            "tiles": _with({"SMALL_BATCHES": False, "FOLD_BATCH": False}, plan)}


def _time(fn) -> float:
    import gpu_suite

    return gpu_suite._time(fn, repeats=REPEATS, inner=LAUNCHES)


def bench_case(shape, dims, dtype: str, device, copy_tbs: float, small: bool = False) -> dict:
    x, out, expected = ops_cases.permute_buffers(shape, dims, dtype)
    nbytes = x.numel() * x.element_size()
    row = dict(shape=list(shape), dims=list(dims), dtype=dtype, mib=round(nbytes / 2**20, 2), kernels={})
    fns = {}
    for label, items in contenders(shape, dims, x.element_size(), x.data_ptr(), out.data_ptr(), device,
                                   small).items():
        run, correct = ops_cases.checked_runner(items, out, expected)
        kernel = next(item.kernel for item in items if hasattr(item, "kernel"))
        row["kernels"][label] = dict(correct=correct, name=kernel.name, fold=getattr(kernel, "fold", ""),
                                     tile=[kernel.tile_rows, kernel.tile_cols], ctas=sum(
                                         item.ctas for item in items if hasattr(item, "ctas")))
        fns[label] = run
    ops_cases.time_with_peers(_time, fns, x, dims, nbytes, copy_tbs, row["kernels"])
    return row


def summary(rows: list[dict]) -> list[str]:
    """Lines: unfolded / ops and eager / ops over the cases (geomean, min, max), the fraction of copy before and
    after, correctness."""
    folded = [r for r in rows if r["kernels"]["ops"]["fold"]]
    if not folded:
        return ["no case folded"]
    k = [r["kernels"] for r in folded]
    gain = [x["unfolded"]["us"] / x["ops"]["us"] for x in k]
    eager = [x["eager"]["us"] / x["ops"]["us"] for x in k]
    wrong = [tuple(r["shape"]) for r in rows for v in r["kernels"].values() if v.get("correct") is False]
    return [f"- folded: {len(folded)} of {len(rows)} cases; unfolded / folded geomean {geomean(gain):.3f} (min "
            f"{min(gain):.3f}, max {max(gain):.3f}); slower than unfolded by more than 2%: "
            f"{sum(g < 0.98 for g in gain)}",
            f"- of the 1 GiB copy: unfolded geomean {100 * geomean(x['unfolded']['of_copy'] for x in k):.1f}%, folded "
            f"{100 * geomean(x['ops']['of_copy'] for x in k):.1f}%",
            f"- eager / ops geomean {geomean(eager):.2f} (min {min(eager):.2f})",
            f"- correct: {'all' if not wrong else 'WRONG on ' + str(wrong)}"]


def markdown(env: dict, copy_tbs: float, rows: list[dict], title: str) -> str:
    lines = [f"# {title}", "",
             f"{env.get('date', '')}, {env.get('gpu', '')}; torch {env.get('torch', '')}. 1 GiB copy: {copy_tbs:.3f} "
             "TB/s (read + written). GPU times: median of 5 replays of a CUDA graph of 20 launches, the contenders "
             "of a case timed together, in order and in reverse, the faster kept.", "", *summary(rows), "",
             "| shape | dims | dtype | MiB | fold | CTAs unfolded -> folded | µs unfolded | µs ops | unfolded / ops "
             "| of copy unfolded -> ops | eager µs | same-size copy µs | correct |",
             "|---|---|---|---:|---|---|---:|---:|---:|---|---:|---:|---|"]
    for r in rows:
        k = r["kernels"]
        ok = all(v.get("correct", True) for v in k.values())
        lines.append(f"| {tuple(r['shape'])} | {tuple(r['dims'])} | {r['dtype']} | {r['mib']} | {k['ops']['fold'] or '-'} "
                     f"| {k['unfolded']['ctas']} -> {k['ops']['ctas']} | {k['unfolded']['us']} | {k['ops']['us']} | "
                     f"{k['unfolded']['us'] / k['ops']['us']:.3f} | {100 * k['unfolded']['of_copy']:.1f}% -> "
                     f"{100 * k['ops']['of_copy']:.1f}% | {k['eager']['us']} | {k['copy']['us']} | "
                     f"{'yes' if ok else 'WRONG'} |")
    return "\n".join(lines) + "\n"


def small_summary(rows: list[dict]) -> list[str]:
    """Lines: each contender's speed against ``ops`` (the small-block kernel) over the cases, correctness."""
    lines = []
    for label in ("folded", "folded any", "tiles"):
        ratio = [r["kernels"]["ops"]["us"] / r["kernels"][label]["us"] for r in rows]
        taken = sum(bool(r["kernels"][label]["fold"]) for r in rows)
        lines.append(f"- ops (small blocks) / {label}: geomean {geomean(ratio):.3f} (min {min(ratio):.3f}, max "
                     f"{max(ratio):.3f}); folded on {taken} of {len(rows)}")
    eager = [r["kernels"]["eager"]["us"] / r["kernels"]["ops"]["us"] for r in rows]
    wrong = [tuple(r["shape"]) for r in rows for v in r["kernels"].values() if v.get("correct") is False]
    return lines + [f"- eager / ops geomean {geomean(eager):.2f} (min {min(eager):.2f})",
                    f"- correct: {'all' if not wrong else 'WRONG on ' + str(wrong)}"]


def small_markdown(env: dict, copy_tbs: float, rows: list[dict], title: str) -> str:
    labels = ("ops", "folded", "folded any", "tiles", "eager", "copy")
    lines = [f"# {title}", "",
             f"{env.get('date', '')}, {env.get('gpu', '')}; torch {env.get('torch', '')}. 1 GiB copy: {copy_tbs:.3f} "
             "TB/s (read + written). GPU times (µs): median of 5 replays of a CUDA graph of 20 launches, the "
             "contenders of a case timed together, in order and in reverse, the faster kept. `ops`: the small-block "
             "kernel; `folded`: the tiled kernel as the fold rule takes it; `folded any`: folded wherever a tile is "
             "saved; `tiles`: unfolded.", "", *small_summary(rows), "",
             "| shape | dims | dtype | MiB | " + " | ".join(labels) + " | correct |",
             "|---|---|---|---:|" + "---:|" * len(labels) + "---|"]
    for r in rows:
        k = r["kernels"]
        ok = all(v.get("correct", True) for v in k.values())
        lines.append(f"| {tuple(r['shape'])} | {tuple(r['dims'])} | {r['dtype']} | {r['mib']} | "
                     + " | ".join(f"{k[x]['us']}" + (" (f)" if k[x].get("fold") else "") for x in labels)
                     + f" | {'yes' if ok else 'WRONG'} |")
    return "\n".join(lines) + "\n"


def run(out: Path, cases, stem: str, title: str, small: bool = False) -> None:
    import torch

    start = time.time()
    env, device, copy_tbs = ops_cases.device_run_setup()
    rows = []
    for shape, dims, dtype in cases:
        rows.append(bench_case(shape, dims, dtype, device, copy_tbs, small))
        k = rows[-1]["kernels"]
        print(f"{shape} {dims} {dtype}: " + ", ".join(f"{label} {v['us']} us" for label, v in k.items())
              + f", {time.time() - start:.0f} s", flush=True)
        torch.cuda.empty_cache()
    env["seconds"] = round(time.time() - start, 1)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.json").write_text(json.dumps(dict(environment=env, copy_tbs=copy_tbs, cases=rows), indent=1))
    (out / f"{stem}.md").write_text((small_markdown if small else markdown)(env, copy_tbs, rows, title))
    print("\n".join((small_summary if small else summary)(rows)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("prepare", "run"), default="run")
    parser.add_argument("--out", type=Path, default=Path("fold_out"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--set", choices=("models", "small"), default="models",
                        help="small: with --seed, problems the small-block kernel takes, against the folded tiles")
    parser.add_argument("--seed", type=int, help="draw --cases problems with this seed instead of the fixed set")
    parser.add_argument("--cases", type=int, default=24)
    args = parser.parse_args()
    small = args.set == "small"
    if small and args.seed is None:
        parser.error("--set small draws its problems: give --seed")
    cases = (drawn_small if small else drawn)(args.seed, args.cases) if args.seed is not None else list(MODELS)
    if args.mode == "prepare":
        ops_cases.compile_contenders(lambda shape, dims, w, src, dst, device: contenders(shape, dims, w, src, dst, device,
                                                                                       small),
                                     [(shape, dims, _DTYPES[dtype]) for shape, dims, dtype in cases], BUILD / "cache",
                                     args.jobs)
        return
    stem = (f"fold_small_seed{args.seed}" if small else f"fold_seed{args.seed}") if args.seed is not None \
        else "fold_models"
    title = (f"Folded tiles against the small-block kernel on problems drawn by seed {args.seed}" if small
             else f"Folded transposes on problems drawn by seed {args.seed}" if args.seed is not None
             else "Folded transposes: the sweep's conv shapes (`ops.launches.fold_side`)")
    run(args.out, cases, stem, title, small)


if __name__ == "__main__":
    sys.exit(main())
