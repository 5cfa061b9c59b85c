"""The chunked transpose (``codegen.permute_chunks``) on the device: transposes whose output rows 16 bytes do not
align (odd row lengths), their input rows aligned or (the last five cases: both sides odd) not, in one run, each
output checked bit for bit against PyTorch's ``x.permute(dims).contiguous()``, every contender of a case timed together (``harness.timing.time_together``,
CUDA graphs of ``LAUNCHES`` launches, as ``ops_bench``):

- the chunked kernel at the tiles of ``CHUNKED_VARIANTS`` (``ops.kernels.ChunkedTile``; 16-byte granules, and the
  default tile with 32-byte ones);
- ``ops`` as it is, and with ``launches.MISALIGNED_TRANSPOSE = "tiled"`` (the tile ``tile_for`` picks);
- the tiled kernel at the tallest narrow tile its list holds (``transpose_tiles(..., dst_sectors=False)[0]``) and,
  for 8- and 16-bit elements, at 256 x 128 of 8 warps;
- PyTorch eager and a same-size copy of 4-byte elements; and a 1 GiB copy for the device's bandwidth.

    PYTHONPATH=src python3 benchmarks/chunked_transpose_bench.py --mode prepare   # CPU: nvcc cubins for sm_90
    PYTHONPATH=src python3 benchmarks/chunked_transpose_bench.py --out DIR        # device: chunked_transpose.{json,md}

``prepare`` compiles every kernel of every case into ``benchmarks/build/chunked_transpose/cache`` (the package's
kernel cache, ``LINEAR_LAYOUTS_CACHE``); the device run loads them from there. Bandwidth counts the bytes read
and written (``2 x nbytes``); "of copy" divides by the 1 GiB copy's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

BUILD = harness.BUILD / "chunked_transpose"
os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(BUILD / "cache"))

from harness import ops_cases  # noqa: E402

#: (shape, dims, dtype, bytes past an aligned address of the output).
CASES = (
    ((6415, 12552), (1, 0), "float16", 0),
    ((6415, 12552), (1, 0), "float16", 6),        # the output 3 elements past 16 bytes
    ((6753, 11560), (1, 0), "float16", 0),
    ((256, 35, 35, 160), (0, 3, 1, 2), "bfloat16", 0),
    ((128, 17, 17, 1280), (0, 3, 1, 2), "float16", 0),
    ((13417, 2584), (1, 0), "float32", 0),
    ((11, 931, 2984), (0, 2, 1), "uint8", 0),      # rows of 2984 bytes: the chunked kernel's misaligned loads
    ((249, 375, 592), (2, 1, 0), "bfloat16", 0),
    ((32, 7, 7, 2048), (0, 3, 1, 2), "float16", 0),
    ((4095, 4096), (1, 0), "float64", 0),
    ((517, 1000), (1, 0), "float16", 0),           # ~1 MiB
    ((4, 13, 13, 768), (0, 3, 1, 2), "bfloat16", 0),  # ~1 MiB
    ((5209, 4557), (1, 0), "float32", 0),          # input and output rows both odd: the misaligned loads
    ((5629, 11089), (1, 0), "float16", 0),
    ((7608, 8913), (1, 0), "bfloat16", 0),         # output rows aligned: ops tiled, the chunked kernel forced
    ((6049, 8459), (1, 0), "uint8", 0),
    ((4097, 4099), (1, 0), "float64", 0),
)
#: ``--set skinny``: problems with a side under 32 (``ops.kernels.skinny_tile``'s), their narrow side the input
#: rows (a row of ``A`` a few elements, ``B``'s rows long and, but for three, 16 bytes not aligning them).
SKINNY_CASES = (
    ((64, 299, 299, 9), (0, 3, 1, 2), "uint8", 0),
    ((135, 68293, 9), (0, 2, 1), "uint8", 0),
    ((128, 299, 299, 4), (0, 3, 1, 2), "uint8", 0),
    ((64, 299, 299, 3), (0, 3, 1, 2), "uint8", 0),
    ((64, 224, 224, 3), (0, 3, 1, 2), "uint8", 0),     # output rows aligned
    ((32, 512, 512, 5), (0, 3, 1, 2), "uint8", 0),     # output rows aligned
    ((1393441, 14), (1, 0), "bfloat16", 0),
    ((3032445, 5), (1, 0), "bfloat16", 0),
    ((1278600, 9), (1, 0), "bfloat16", 0),
    ((104, 48273, 3), (0, 2, 1), "float16", 0),
    ((34, 74400, 9), (0, 2, 1), "bfloat16", 0),        # output rows aligned
    ((1125051, 15), (1, 0), "float32", 0),
    ((8, 299, 299, 15), (0, 3, 1, 2), "bfloat16", 0),
)
ITEMSIZE = {"uint8": 1, "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}
#: ``--set draw``: problems of 16-160 MiB of ``--dtype`` the chunked kernel takes by default
#: (``launches._chunked_by_default``), drawn from ``--seed`` as ``ops_heldout.py`` draws its non-skinny ones.
DRAW_COUNT = 16


def draw_cases(seed: int, dtype: str, count: int = DRAW_COUNT) -> list[tuple]:
    """``count`` ``(shape, dims, dtype, 0)`` from ``seed``: ``ops_heldout._draw``'s problems of 16-160 MiB of
    ``dtype`` whose plan the chunked transpose takes (``launches._chunked_by_default`` at fresh tensors' addresses;
    the draws do not depend on ``CHUNKED_ELEMENT_BYTES`` or ``CHUNKED_BATCH_ELEMENT_BYTES``)."""
    import math
    import random

    import ops_heldout
    from linear_layouts.ops import launches

    rng = random.Random(seed)
    w = ITEMSIZE[dtype]
    out: list[tuple] = []
    eligible = launches.CHUNKED_ELEMENT_BYTES, launches.CHUNKED_BATCH_ELEMENT_BYTES
    launches.CHUNKED_ELEMENT_BYTES = launches.CHUNKED_BATCH_ELEMENT_BYTES = (1, 2, 4, 8)
    try:
        for _ in range(1_000_000):
            if len(out) == count:
                break
            _, shape, dims = ops_heldout._draw(rng)
            if not ops_cases.LARGE_BYTES <= math.prod(shape) * w <= ops_heldout.MAX_LARGE_BYTES:
                continue
            problem = _problem(shape, dims, w, 0)
            if problem.kind.value == "transpose" and launches._chunked_by_default(problem, _BASE % 32, _OTHER % 32):
                out.append((shape, dims, dtype, 0))
    finally:
        launches.CHUNKED_ELEMENT_BYTES, launches.CHUNKED_BATCH_ELEMENT_BYTES = eligible
    return out
#: The chunked kernel's tiles of each element size: label -> (rows, cols, warps, granule bytes); the first is
#: ``ops.kernels.CHUNKED_TRANSPOSE_TILES``'.
CHUNKED_VARIANTS = {
    1: {"128x128/16w": (128, 128, 16, 16), "256x128/32w": (256, 128, 32, 16), "64x128/8w": (64, 128, 8, 16),
        "128x128/16w s32": (128, 128, 16, 32)},
    2: {"128x64/16w": (128, 64, 16, 16), "256x64/16w": (256, 64, 16, 16), "64x64/8w": (64, 64, 8, 16),
        "128x64/16w s32": (128, 64, 16, 32)},
    4: {"128x32/16w": (128, 32, 16, 16), "256x32/16w": (256, 32, 16, 16), "64x32/8w": (64, 32, 8, 16),
        "128x32/16w s32": (128, 32, 16, 32)},
    8: {"128x16/16w": (128, 16, 16, 16), "256x16/16w": (256, 16, 16, 16), "64x16/8w": (64, 16, 8, 16),
        "128x16/16w s32": (128, 16, 16, 32)},
}
#: ``--set skinny``: the chunked kernel's tiles a few chunks wide (a tile column holds a narrow row whole).
SKINNY_VARIANTS = {
    1: {"512x16/8w": (512, 16, 8, 16), "256x16/4w": (256, 16, 4, 16), "512x16/8w s32": (512, 16, 8, 32),
        "512x32/16w": (512, 32, 16, 16)},
    2: {"512x16/16w": (512, 16, 16, 16), "256x16/8w": (256, 16, 8, 16), "512x8/8w": (512, 8, 8, 16),
        "512x16/16w s32": (512, 16, 16, 32)},
    4: {"256x16/8w": (256, 16, 8, 16), "512x16/16w": (512, 16, 16, 16), "512x8/16w": (512, 8, 16, 16),
        "256x16/8w s32": (256, 16, 8, 32)},
}
#: Launches per CUDA graph and graph replays per median.
LAUNCHES, REPEATS = 20, 5
_BASE, _OTHER = 1 << 40, 2 << 40


def _problem(shape, dims, w: int, dst_offset: int):
    from linear_layouts.ops.launches import _plan, pointer_alignment

    return _plan(tuple(shape), tuple(dims), w, pointer_alignment(_BASE, _OTHER + dst_offset))


def contenders(shape, dims, w: int, src: int, dst: int, device, variants: dict | None = None) -> dict:
    """``{label: launches}`` of one case at addresses ``src``, ``dst``: the chunked kernel's tiles (where it applies),
    ``ops`` as it is and the tallest narrow tiled kernel."""
    from linear_layouts.core.errors import LayoutError
    from linear_layouts.ops import launches
    from linear_layouts.ops.kernels import ChunkedTile, TileConfig, transpose_tiles

    out = {}
    problem = _problem(shape, dims, w, dst % 32)
    takes = launches.chunked_transposes(problem, src % 32, dst % 32)
    # input rows 16 bytes do not align into aligned output rows: ops keeps the tiled kernel; the chunked one is
    # timed there too (its eligibility test bypassed for the forced tiles)
    forced = not takes and problem.kind.value == "transpose" and not launches.chunked_source_aligned(problem, src % 32)
    if takes or forced:
        eligible = launches.chunked_transposes
        if forced:
            launches.chunked_transposes = lambda *_: True
        try:
            for label, (rows, cols, warps, granule) in (variants or CHUNKED_VARIANTS)[w].items():
                try:
                    out[f"chunked {label}"] = launches.permute_launches(shape, dims, w, src, dst, device,
                                                                        ChunkedTile(w, rows, cols, warps, granule))
                except LayoutError:  # a tile the kernel's limits leave out (chunks a thread)
                    continue
        finally:
            launches.chunked_transposes = eligible
    out["ops"] = launches.permute_launches(shape, dims, w, src, dst, device)
    default, launches.MISALIGNED_TRANSPOSE = launches.MISALIGNED_TRANSPOSE, "tiled"
    try:
        out["ops (tiled)"] = launches.permute_launches(shape, dims, w, src, dst, device)
    finally:
        launches.MISALIGNED_TRANSPOSE = default
    if variants is not None:  # skinny: the wide tiled tiles below are the ones ops no longer takes
        return out
    vin, vout, _ = launches.transpose_vectors(problem, src, dst, device)
    tall = transpose_tiles(w, vin, vout, False)[0]
    wide = TileConfig(w, 256, 128, 8, vin, vout)  # the tall tile of 16-bit odd shapes, for 8- and 16-bit elements
    for tile in [tall] + ([wide] if w <= 2 and wide != tall else []):
        out[f"tiled {tile.rows}x{tile.cols}/{tile.warps}w ({vin * w}B/{vout * w}B)"] = launches.permute_launches(
            shape, dims, w, src, dst, device, tile)
    return out


# ---------------------------------------------------------------------------------------------- CPU
def prepare(jobs: int, cases=CASES, variants: dict | None = None) -> None:
    """Every kernel of every case compiled for sm_90 into the kernel cache ``BUILD/cache``."""
    from linear_layouts.codegen.ptx import find_nvcc
    from linear_layouts.ops.kernels import GridShape

    if find_nvcc() is None:
        sys.exit("chunked_transpose_bench: nvcc not found")
    (BUILD / "cache").mkdir(parents=True, mode=0o700, exist_ok=True)
    device = GridShape(ops_cases.SMS, ops_cases.L2_BYTES)
    sources = ops_cases.launch_sources(
        items for shape, dims, dtype, offset in cases
        for items in contenders(shape, dims, ITEMSIZE[dtype], _BASE, _OTHER + offset, device, variants).values())
    n, seconds = ops_cases.compile_sources(sources, "sm_90", jobs)
    print(f"prepared {n} kernels for sm_90 in {seconds:.0f} s into {BUILD / 'cache'}")


# ------------------------------------------------------------------------------------------- device
def _time(fn) -> float:
    import gpu_suite

    return gpu_suite._time(fn, repeats=REPEATS, inner=LAUNCHES)


def _copy_tbs() -> float:
    """TB/s (read + written) of the device's 1 GiB copy (``gpu_suite.copy_bandwidth``: 4-byte elements; PyTorch's
    byte copy is slower)."""
    import gpu_suite

    return gpu_suite.copy_bandwidth()["tb_per_s"]


def bench_case(shape, dims, dtype: str, offset: int, device, copy_tbs: float, variants: dict | None = None) -> dict:
    import torch

    from linear_layouts.ops.launches import _plan

    w = ITEMSIZE[dtype]
    x = ops_cases.random_tensor(shape, dtype)
    numel = x.numel()
    out_shape = tuple(shape[d] for d in dims)
    buffer = torch.empty(numel * w + 64, dtype=torch.uint8, device="cuda")
    out = buffer[offset:offset + numel * w].view(getattr(torch, dtype)).view(out_shape)
    expected = x.permute(dims).contiguous()
    problem = _plan(tuple(shape), tuple(dims), w, 8)
    row = dict(shape=list(shape), dims=list(dims), dtype=dtype, dst_offset=offset, mib=round(numel * w / 2**20, 2),
               rows=problem.rows, cols=problem.cols, ldb=problem.ldb, batch=problem.batch_count, kernels={})
    fns = {}
    for label, items in contenders(shape, dims, w, x.data_ptr(), out.data_ptr(), device, variants).items():
        run, correct = ops_cases.checked_runner(items, out, expected, fill=buffer)
        outside = torch.cat([buffer[:offset], buffer[offset + numel * w:]])
        correct = correct and bool((outside == 0xAB).all())
        kernel = next(item.kernel for item in items if hasattr(item, "kernel"))
        row["kernels"][label] = dict(correct=correct, ctas=items[0].ctas, threads=kernel.threads,
                                     tile=[kernel.tile_rows, kernel.tile_cols], name=kernel.name)
        fns[label] = run
    ops_cases.time_with_peers(_time, fns, x, dims, numel * w, copy_tbs, row["kernels"])
    chunked = {k: v for k, v in row["kernels"].items() if k.startswith("chunked") and v.get("correct")}
    if chunked:
        best = min(chunked, key=lambda k: chunked[k]["us"])
        row["best_chunked"] = best
        row["speedup_vs_ops"] = round(row["kernels"]["ops (tiled)"]["us"] / chunked[best]["us"], 3)
    return row


def markdown(env: dict, copy_tbs: float, rows: list[dict]) -> str:
    lines = ["# The chunked transpose of odd output rows (`codegen.permute_chunks`)", "",
             f"{env.get('date', '')}, {env.get('gpu', '')}; torch {env.get('torch', '')}, cupy {env.get('cupy', '')}, "
             f"{env.get('nvcc', '')}. 1 GiB copy: {copy_tbs:.3f} TB/s (read + written). Each cell: µs, % of the copy "
             "bandwidth; a wrong output is marked WRONG.", ""]
    for row in rows:
        lines += [f"## {tuple(row['shape'])} dims {tuple(row['dims'])} {row['dtype']}"
                  + (f", output {row['dst_offset']} bytes past 16" if row["dst_offset"] else ""),
                  "", f"{row['mib']} MiB; A {row['rows']} x {row['cols']}, ldb {row['ldb']}, batch {row['batch']}."
                  + (f" Best chunked: {row['best_chunked']}, {row['speedup_vs_ops']}x ops." if "best_chunked" in row
                     else " The chunked kernel does not take it."), "",
                  "| contender | µs | TB/s | of copy | correct |", "|---|---:|---:|---:|---|"]
        for label, k in row["kernels"].items():
            ok = "" if "correct" not in k else ("yes" if k["correct"] else "WRONG")
            lines.append(f"| {label} | {k['us']} | {k['tbs']} | {100 * k['of_copy']:.1f}% | {ok} |")
        lines.append("")
    return "\n".join(lines) + "\n"


def run(out: Path, cases=CASES, variants: dict | None = None, stem: str = "chunked_transpose") -> None:
    import torch
    from harness.environment import environment

    from linear_layouts.ops import launch

    start = time.time()
    env = environment(modules=("torch", "cupy", "numpy"), device=True)
    device = launch.grid_shape(0)
    copy_tbs = _copy_tbs()
    rows = []
    for shape, dims, dtype, offset in cases:
        rows.append(bench_case(shape, dims, dtype, offset, device, copy_tbs, variants))
        best = rows[-1].get("best_chunked", "-")
        print(f"{shape} {dims} {dtype} +{offset}: best chunked {best} "
              f"({rows[-1].get('speedup_vs_ops', '-')}x ops), {time.time() - start:.0f} s", flush=True)
        torch.cuda.empty_cache()
    env["seconds"] = round(time.time() - start, 1)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.json").write_text(json.dumps(dict(environment=env, copy_tbs=copy_tbs, cases=rows),
                                                           indent=1))
    (out / f"{stem}.md").write_text(markdown(env, copy_tbs, rows))
    print((out / f"{stem}.md").read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("prepare", "run"), default="run")
    parser.add_argument("--out", type=Path, default=Path("chunked_transpose_out"))
    parser.add_argument("--jobs", type=int, default=2, help="nvcc processes at a time (prepare)")
    parser.add_argument("--set", choices=("odd", "skinny", "draw"), default="odd",
                        help="odd: CASES (odd output rows); skinny: SKINNY_CASES at SKINNY_VARIANTS' tiles; draw: "
                             "draw_cases(--seed, --dtype)")
    parser.add_argument("--seed", type=int, default=1, help="--set draw: the draw's seed")
    parser.add_argument("--dtype", choices=tuple(ITEMSIZE), default="float64", help="--set draw: the element type")
    args = parser.parse_args()
    cases, variants = (SKINNY_CASES, SKINNY_VARIANTS) if args.set == "skinny" else (CASES, None)
    stem = "chunked_transpose" + ("_skinny" if args.set == "skinny" else "")
    if args.set == "draw":
        cases, stem = draw_cases(args.seed, args.dtype), f"chunked_transpose_draw_{args.dtype}_{args.seed}"
    if args.mode == "prepare":
        prepare(args.jobs, cases, variants)
    else:
        run(args.out, cases, variants, stem)


if __name__ == "__main__":
    main()
