"""The interleave / deinterleave transpose (``codegen.permute_interleave``) against the skinny tiles it replaces.

NHWC <-> NCHW of a few channels and ``[N, k]`` matrices (k <= 16) of every element size, DRAM-sized and
L2-sized, in one run: each output checked bit for bit against PyTorch's ``x.permute(dims).contiguous()``, every
contender of a case timed together (``harness.timing.time_together``, CUDA graphs of ``LAUNCHES`` launches):

- ``ops``: as it is (the interleave kernel where ``launches.interleaves`` admits the problem: the aligned form,
  or the form at any element offset, its name ending in ``_any``, for odd long sides);
- ``ops (skinny tiles)``: with ``launches.INTERLEAVE = False`` (what ``ops`` takes without the interleave kernel:
  the tiled kernel at ``kernels.skinny_tile``, or the chunked transpose);
- PyTorch eager and a same-size copy of 4-byte elements; and a 1 GiB copy for the device's bandwidth.

    PYTHONPATH=src python3 benchmarks/interleave_bench.py --mode prepare   # CPU: nvcc cubins for sm_90
    PYTHONPATH=src python3 benchmarks/interleave_bench.py --out DIR        # device: interleave.{json,md}

``--set odd`` takes only ``ODD_CASES`` (planes and matrices whose long side is no whole number of vectors), ``--set
aligned`` only ``CASES``; the default both. ``--set small --seed N`` draws small problems the kernel takes
(``small_cases``), written as ``interleave_small_N.{json,md}``.

``prepare`` compiles every kernel into ``benchmarks/build/interleave/cache`` (the package's kernel cache,
``LINEAR_LAYOUTS_CACHE``); the device run loads them from there. Bandwidth counts the bytes read and written.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

BUILD = harness.BUILD / "interleave"
os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(BUILD / "cache"))

from harness import ops_cases  # noqa: E402

#: (shape, dims, dtype): deinterleave (NHWC -> NCHW, [N, k] -> [k, N]) and interleave (the reverse).
CASES = (
    ((64, 224, 224, 3), (0, 3, 1, 2), "uint8"),
    ((64, 3, 224, 224), (0, 2, 3, 1), "uint8"),
    ((128, 256, 256, 3), (0, 3, 1, 2), "uint8"),
    ((32, 512, 512, 4), (0, 3, 1, 2), "uint8"),
    ((32, 512, 512, 5), (0, 3, 1, 2), "uint8"),
    ((64, 384, 384, 9), (0, 3, 1, 2), "uint8"),
    ((64, 224, 224, 3), (0, 3, 1, 2), "float16"),
    ((64, 3, 224, 224), (0, 2, 3, 1), "float16"),
    ((64, 224, 224, 3), (0, 3, 1, 2), "float32"),
    ((64, 3, 224, 224), (0, 2, 3, 1), "float32"),
    ((32, 256, 256, 7), (0, 3, 1, 2), "bfloat16"),
    ((16, 256, 256, 12), (0, 3, 1, 2), "bfloat16"),
    ((16, 12, 256, 256), (0, 2, 3, 1), "bfloat16"),
    ((3000000, 5), (1, 0), "bfloat16"),
    ((5, 3000000), (1, 0), "bfloat16"),
    ((2097152, 16), (1, 0), "float32"),
    ((4194304, 6), (1, 0), "float64"),
    ((8, 224, 224, 3), (0, 3, 1, 2), "uint8"),     # 1.2 MiB: in L2
    ((8, 3, 224, 224), (0, 2, 3, 1), "float16"),   # 2.3 MiB
    ((65536, 8), (1, 0), "float32"),               # 2 MiB
    ((32, 512, 512, 3), (0, 3, 1, 2), "float32"),
    ((64, 224, 224, 4), (0, 3, 1, 2), "float32"),
    ((64, 8, 224, 224), (0, 2, 3, 1), "uint8"),
    ((128, 4, 256, 256), (0, 2, 3, 1), "float16"),
    ((8, 3, 224, 224), (0, 2, 3, 1), "uint8"),     # 1.2 MiB
)
#: Odd long sides (299 x 299 = 89401, 35 x 35, 68293, 1393441): the form at any element offset.
ODD_CASES = (
    ((64, 299, 299, 9), (0, 3, 1, 2), "uint8"),
    ((128, 299, 299, 4), (0, 3, 1, 2), "uint8"),
    ((64, 299, 299, 3), (0, 3, 1, 2), "uint8"),
    ((64, 3, 299, 299), (0, 2, 3, 1), "uint8"),
    ((16, 299, 299, 3), (0, 3, 1, 2), "float16"),
    ((16, 3, 299, 299), (0, 2, 3, 1), "float16"),
    ((32, 3, 299, 299), (0, 2, 3, 1), "float32"),
    ((32, 299, 299, 3), (0, 3, 1, 2), "float32"),
    ((1393441, 5), (1, 0), "bfloat16"),
    ((5, 1393441), (1, 0), "bfloat16"),
    ((135, 68293, 9), (0, 2, 1), "uint8"),
    ((8, 35, 35, 3), (0, 3, 1, 2), "float16"),     # 57 KiB: launch-bound
    ((8, 3, 35, 35), (0, 2, 3, 1), "float16"),
)
#: ``--set short``: odd planes from short to long, small and large batches (where the odd form starts to pay).
SHORT_CASES = tuple(
    ((batch, side, side, 3), (0, 3, 1, 2), dtype)
    for dtype in ("float16", "uint8") for batch, side in ((8, 35), (256, 35), (32, 75), (8, 149), (64, 149), (2, 1001)))
#: ``--set wide``: rows of 17-32 one-byte elements (4-byte vectors), aligned and odd, both directions.
WIDE_CASES = (
    ((64, 224, 224, 19), (0, 3, 1, 2), "uint8"), ((64, 224, 224, 24), (0, 3, 1, 2), "uint8"),
    ((32, 224, 224, 31), (0, 3, 1, 2), "uint8"), ((64, 24, 224, 224), (0, 2, 3, 1), "uint8"),
    ((16, 29, 224, 224), (0, 2, 3, 1), "uint8"), ((256, 64, 64, 23), (0, 3, 1, 2), "uint8"),
    ((3328897, 19), (1, 0), "uint8"), ((996345, 23), (1, 0), "uint8"), ((2877915, 31), (1, 0), "uint8"),
    ((185, 7384, 19), (0, 2, 1), "uint8"), ((19, 3328897), (1, 0), "uint8"), ((32, 17, 299, 299), (0, 2, 3, 1), "uint8"),
    ((4, 56, 56, 20), (0, 3, 1, 2), "uint8"),       # 245 KiB
)
#: ``--set`` -> cases.
SETS = {"all": CASES + ODD_CASES, "aligned": CASES, "odd": ODD_CASES, "short": SHORT_CASES, "wide": WIDE_CASES}
ITEMSIZE = {"uint8": 1, "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}
#: The rules of the interleave kernel's small problems as they were before them: the ``interleave`` contender, and
#: what ``small_cases`` draws from whatever they are now.
INTERLEAVE_BEFORE = {"INTERLEAVE_MIN_CTAS_PER_SM": 0, "INTERLEAVE_ANY_MIN_BYTES": 2 << 20,
                     "INTERLEAVE_WIDE_MIN_BYTES": 0}
#: ``--set small``: problems the interleave kernel takes drawn from ``--seed``, of ``SMALL_BYTES`` (launch-bound:
#: a grid of a few CTAs an SM or fewer), ``SMALL_COUNT`` of them.
SMALL_BYTES = (32 << 10, 4 << 20)
SMALL_COUNT = 32


def small_cases(seed: int, count: int = SMALL_COUNT, size: tuple[int, int] = SMALL_BYTES, form: str = "") -> list[tuple]:
    """``count`` ``(shape, dims, dtype)`` drawn from ``seed``: NHWC <-> NCHW of ``k`` channels, ``[N, k]`` and
    ``[k, N]`` matrices and batches of ``[n, k]`` ones, ``k`` from 2 to the most ``launches.interleaves`` admits for
    the element size, of log-uniform size within ``size`` bytes; only those the ``interleave`` contender takes (the
    draws stay the same whatever the rules of ``launches`` are now), and with ``form="any"`` only
    its form at any offset (``_any``), with ``"aligned"`` only the other, with ``"wide"`` only rows of more than 16
    bytes."""
    import math
    import random

    from linear_layouts.ops.kernels import GridShape

    rng = random.Random(seed)
    device = GridShape(ops_cases.SMS, ops_cases.L2_BYTES)
    out: list[tuple] = []
    while len(out) < count:
        dtype = rng.choice(tuple(ITEMSIZE))
        w = ITEMSIZE[dtype]
        k = rng.randint(2, max(2, (32 if w == 1 else 16) // w))
        elements = int(2 ** rng.uniform(math.log2(size[0]), math.log2(size[1]))) // w
        kind = rng.choice(("NHWC->NCHW", "NCHW->NHWC", "[N, k]", "[k, N]", "batched"))
        if kind in ("NHWC->NCHW", "NCHW->NHWC"):
            batch = rng.choice((1, 2, 4, 8, 16, 32, 64, 128, 256))
            side = math.isqrt(elements // (batch * k))
            if side < 4:
                continue
            shape, dims = (((batch, side, side, k), (0, 3, 1, 2)) if kind == "NHWC->NCHW" else
                           ((batch, k, side, side), (0, 2, 3, 1)))
        elif kind == "batched":
            batch = rng.randint(2, 64)
            shape, dims = (batch, max(1, elements // (batch * k)), k), (0, 2, 1)
        else:
            shape = (elements // k, k) if kind == "[N, k]" else (k, elements // k)
            dims = (1, 0)
        nbytes = math.prod(shape) * w
        if not size[0] <= nbytes <= size[1]:
            continue
        kernels = [item.kernel.name for item in contenders(shape, dims, w, ops_cases._BASE, ops_cases._OTHER,
                                                            device)["interleave"] if hasattr(item, "kernel")]
        wide = kernels and "interleave" in kernels[0] and int(kernels[0].split("_n")[1].split("_")[0]) * w > 16
        if kernels and "interleave" in kernels[0] and form in ("", "wide" if wide else "",
                                                               "any" if kernels[0].endswith("_any") else "aligned"):
            out.append((shape, dims, dtype))
    return out
#: Launches per CUDA graph and graph replays per median.
LAUNCHES, REPEATS = 20, 5


def contenders(shape, dims, w: int, src: int, dst: int, device) -> dict:
    """``{label: launches}`` of one case at addresses ``src``, ``dst``: ``ops``, ``ops`` without the interleave
    kernel, and ``interleave``: the kernel as it was taken before the grid and size rules of its small problems
    (``INTERLEAVE_BEFORE``: at any grid, its form at any offset from 2 MiB)."""
    from linear_layouts.ops import launches

    out = {"ops": launches.permute_launches(shape, dims, w, src, dst, device)}
    default = {name: getattr(launches, name) for name in ("INTERLEAVE", *INTERLEAVE_BEFORE)}
    try:
        for name, value in INTERLEAVE_BEFORE.items():
            setattr(launches, name, value)
        out["interleave"] = launches.permute_launches(shape, dims, w, src, dst, device)
        launches.INTERLEAVE = False
        out["ops (skinny tiles)"] = launches.permute_launches(shape, dims, w, src, dst, device)
    finally:
        for name, value in default.items():
            setattr(launches, name, value)
    return out


# ---------------------------------------------------------------------------------------------- CPU
def prepare(jobs: int, cases=SETS["all"]) -> None:
    """Every kernel of every case of ``cases`` compiled for sm_90 into the kernel cache ``BUILD/cache``."""
    from linear_layouts.codegen.ptx import find_nvcc

    if find_nvcc() is None:
        sys.exit("interleave_bench: nvcc not found")
    ops_cases.compile_contenders(contenders, ((shape, dims, ITEMSIZE[dtype]) for shape, dims, dtype in cases),
                                 BUILD / "cache", jobs)


# ------------------------------------------------------------------------------------------- device
def _time(fn) -> float:
    import gpu_suite

    return gpu_suite._time(fn, repeats=REPEATS, inner=LAUNCHES)


def bench_case(shape, dims, dtype: str, device, copy_tbs: float) -> dict:
    w = ITEMSIZE[dtype]
    x, out, expected = ops_cases.permute_buffers(shape, dims, dtype)
    numel = x.numel()
    row = dict(shape=list(shape), dims=list(dims), dtype=dtype, mib=round(numel * w / 2**20, 2), kernels={})
    fns = {}
    for label, items in contenders(shape, dims, w, x.data_ptr(), out.data_ptr(), device).items():
        run, correct = ops_cases.checked_runner(items, out, expected)
        kernel = next(item.kernel for item in items if hasattr(item, "kernel"))
        row["kernels"][label] = dict(correct=correct, ctas=items[0].ctas, threads=kernel.threads, name=kernel.name,
                                     tile=[kernel.tile_rows, kernel.tile_cols])
        fns[label] = run
    ops_cases.time_with_peers(_time, fns, x, dims, numel * w, copy_tbs, row["kernels"])
    k = row["kernels"]
    row["speedup"] = round(k["ops (skinny tiles)"]["us"] / k["ops"]["us"], 3)
    row["vs_eager"] = round(k["eager"]["us"] / k["ops"]["us"], 3)
    row["of_same_size_copy"] = round(k["copy"]["us"] / k["ops"]["us"], 3)
    return row


def markdown(env: dict, copy_tbs: float, rows: list[dict]) -> str:
    lines = ["# The interleave / deinterleave transpose against the skinny tiles (`codegen.permute_interleave`)", "",
             f"{env.get('date', '')}, {env.get('gpu', '')}; torch {env.get('torch', '')}, cupy {env.get('cupy', '')}, "
             f"{env.get('nvcc', '')}. 1 GiB copy: {copy_tbs:.3f} TB/s (read + written). Cells: µs (% of the 1 GiB "
             "copy's bandwidth); `copy`: a same-size copy of 4-byte elements.", "",
             "| shape | dims | dtype | MiB | ops kernel | ops | skinny tiles | ops / skinny tiles | eager | ops / eager "
             "| copy | ops / copy | correct |", "|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for row in rows:
        k = row["kernels"]

        def cell(label):
            return f"{k[label]['us']} ({100 * k[label]['of_copy']:.1f}%)"
        ok = all(v.get("correct", True) for v in k.values())
        lines.append(f"| {tuple(row['shape'])} | {tuple(row['dims'])} | {row['dtype']} | {row['mib']} | "
                     f"{k['ops']['name']} | {cell('ops')} | {cell('ops (skinny tiles)')} | {row['speedup']}x | "
                     f"{cell('eager')} | {row['vs_eager']}x | {cell('copy')} | {row['of_same_size_copy']} | "
                     f"{'yes' if ok else 'WRONG'} |")
    return "\n".join(lines) + "\n"


def run(out: Path, cases=SETS["all"], name: str = "interleave") -> None:
    import torch
    from harness.environment import environment

    import gpu_suite
    from linear_layouts.ops import launch

    start = time.time()
    env = environment(modules=("torch", "cupy", "numpy"), device=True)
    device = launch.grid_shape(0)
    copy_tbs = gpu_suite.copy_bandwidth()["tb_per_s"]
    rows = []
    for shape, dims, dtype in cases:
        rows.append(bench_case(shape, dims, dtype, device, copy_tbs))
        print(f"{shape} {dims} {dtype}: {rows[-1]['speedup']}x the skinny tiles, {time.time() - start:.0f} s",
              flush=True)
        torch.cuda.empty_cache()
    env["seconds"] = round(time.time() - start, 1)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(dict(environment=env, copy_tbs=copy_tbs, cases=rows), indent=1))
    (out / f"{name}.md").write_text(markdown(env, copy_tbs, rows))
    print((out / f"{name}.md").read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("prepare", "run"), default="run")
    parser.add_argument("--out", type=Path, default=Path("interleave_out"))
    parser.add_argument("--jobs", type=int, default=2, help="nvcc processes at a time (prepare)")
    parser.add_argument("--set", choices=tuple(SETS) + ("small",), default="all", help="which cases (module doc)")
    parser.add_argument("--seed", type=int, default=1, help="--set small: the draw's seed")
    parser.add_argument("--mib", type=float, nargs=2, metavar=("LO", "HI"), help="--set small: sizes (0.03125 4)")
    parser.add_argument("--form", choices=("", "any", "aligned", "wide"), default="",
                        help="--set small: the kernel's form (wide: rows of more than 16 bytes)")
    args = parser.parse_args()
    size = tuple(int(m * (1 << 20)) for m in args.mib) if args.mib else SMALL_BYTES
    cases = small_cases(args.seed, size=size, form=args.form) if args.set == "small" else SETS[args.set]
    name = "interleave"
    if args.set == "small":
        name = f"interleave_small_{args.seed}" + (f"_{args.form}" if args.form else "") + (
            f"_{args.mib[0]:g}-{args.mib[1]:g}mib" if args.mib else "")
    if args.mode == "prepare":
        prepare(args.jobs, cases)
    else:
        run(args.out, cases, name)


if __name__ == "__main__":
    main()
