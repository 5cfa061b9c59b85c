"""The GPU suite's transpose stage alone (``gpu_suite.transposes``: 8192^2, 8/16/32-bit, every
variant of ``gpu_suite.transpose_kernels``, against the 1 GiB device copy), plus compute-sanitizer
memcheck and racecheck of the new transpose kernels (persistent, hinted, grouped; ``--sanitize-all``:
every one) on a small matrix, persistent kernels on a grid of 3 CTAs so each loops over several
tiles.  About a minute of device time.

    # CPU (compiles the cubins into benchmarks/build/cubins):
    PYTHONPATH=src python3 benchmarks/transpose_bench.py --mode prepare
    # device (carry benchmarks/build):
    PYTHONUNBUFFERED=1 PYTHONPATH=src python3 benchmarks/transpose_bench.py --out $OUT

Writes ``transposes.json`` (the copy, the transpose rows, the sanitizer summaries) and
``transposes.md`` (a table: µs, TB/s, fraction of the copy bandwidth, of torch's and of our same-size copy)
under ``--out``; ``--only persist256x16w,blocks256x16w`` times the named variants only.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import gpu_suite  # noqa: E402  (sets LINEAR_LAYOUTS_CACHE to benchmarks/build/cubins)

#: Matrix size of the sanitizer runs: every tile shape of the suite divides it, 4 or more tiles.
SANITIZE_SIZE = 512
#: CTAs of a persistent kernel under the sanitizers (fewer than the tiles: each CTA loops).
SANITIZE_CTAS = 3


def _sources(n: int) -> list[str]:
    return [k.source for *_, k in gpu_suite.transpose_kernels(n)] + [gpu_suite.SAME_SIZE_COPY_SOURCE]


def _new(tag: str, kernel) -> bool:
    """The variants of issue 12's last step: persistent kernels, and the hinted or grouped one-tile ones."""
    return kernel.persistent or tag in gpu_suite.ONE_TILE_OPTIONS


def launch_child(every: bool) -> None:
    """The new transpose kernels (``every``: all of them) once on a ``SANITIZE_SIZE`` matrix, checked
    element by element."""
    import cupy as cp
    import numpy as np

    from linear_layouts.codegen.runtime import compile_kernel

    n, wrong = SANITIZE_SIZE, 0
    rng = np.random.default_rng(0)
    for w, tag, _, k in gpu_suite.transpose_kernels(n):
        if not (every or _new(tag, k)):
            continue
        dt = {1: np.uint8, 2: np.uint16, 4: np.uint32}[w]
        a = cp.asarray(rng.integers(0, np.iinfo(dt).max, size=(n, n), dtype=dt, endpoint=True))
        b = cp.zeros_like(a)
        grid = (min(SANITIZE_CTAS, k.tiles),) if k.persistent else k.grid(1)
        extra = (cp.zeros(2, dtype=cp.uint32),) if k.dynamic else ()
        compile_kernel(k)(grid, (k.threads,), (a, b) + extra, shared_mem=k.shared_bytes)
        cp.cuda.runtime.deviceSynchronize()
        ok = bool(cp.array_equal(b, a.T))
        wrong += not ok
        print(f"  {8 * w}-bit {tag}: grid {grid} {'ok' if ok else 'WRONG'}", flush=True)
    print(f"TRANSPOSE SUMMARY: {wrong} wrong", flush=True)


def profile_child(only: str, n: int = 8192) -> None:
    """The ``only`` transposes once each on an ``n x n`` matrix (grid as ``gpu_suite.transposes``:
    persistent kernels on every resident slot, balanced), for ncu; checked element by element."""
    import cupy as cp
    import numpy as np

    from linear_layouts.codegen.runtime import compile_kernel

    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    for w, tag, _, k in gpu_suite.transpose_kernels(n):
        if tag not in only.split(","):
            continue
        dt = {1: np.uint8, 2: np.uint16, 4: np.uint32}[w]
        a = cp.asarray(np.random.default_rng(0).integers(0, 255, size=(n, n), dtype=np.uint8).astype(dt))
        b = cp.zeros_like(a)
        fn = compile_kernel(k)
        grid = k.grid(sms)
        if k.persistent:
            fn.preferred_shared_memory_carveout = 100
            slots = int(cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
                getattr(fn, "kernel", fn).ptr, k.threads, k.shared_bytes))
            grid = k.grid(sms, True, slots)
        extra = (cp.zeros(2, dtype=cp.uint32),) if k.dynamic else ()
        fn(grid, (k.threads,), (a, b) + extra, shared_mem=k.shared_bytes)
        cp.cuda.runtime.deviceSynchronize()
        print(f"  {8 * w}-bit {tag} ({k.name}): grid {grid} {'ok' if bool(cp.array_equal(b, a.T)) else 'WRONG'}",
              flush=True)


def sanitize(tool: str, timeout: int, every: bool) -> dict:
    cmd = ["compute-sanitizer", "--tool", tool, "--print-limit", "20"]
    if tool == "racecheck":
        cmd += ["--racecheck-report", "all"]
    cmd += [sys.executable, __file__, "--mode", "launch-child"] + (["--sanitize-all"] if every else [])
    start = time.time()
    rc, out = gpu_suite._tool(cmd, timeout)
    summary = [line for line in out.splitlines() if "SUMMARY" in line or "ERROR" in line.upper() or "WRONG" in line]
    return dict(tool=tool, rc=rc, seconds=round(time.time() - start, 1), summary=summary[-10:], tail=out[-1500:])


def report(results: dict) -> str:
    c = results.get("copy") or {}
    lines = [f"# 8192^2 transposes ({results['environment'].get('gpu', '?')}, {results['environment']['date']})", "",
             f"Device copy (1 GiB): {c.get('tb_per_s', float('nan')):.3f} TB/s.", "",
             "| element | layouts | tile | grid | µs | TB/s | of copy bandwidth | of a same-size copy "
             "| of our same-size copy | cold µs (copy) | correct |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results.get("transpose", []):
        frac = f"{100 * r['fraction_of_copy']:.1f}%" if "fraction_of_copy" in r else "-"
        lines.append(f"| {r['bits']}-bit | {r['layouts']} | {r['tile']} | {r.get('grid')} | {r['us']:.1f} | "
                     f"{r['tb_per_s']:.3f} | {frac} | {100 * r['fraction_of_same_size_copy']:.1f}% | "
                     f"{gpu_suite.own_copy_cell(r)} | "
                     f"{r.get('cold_us', float('nan')):.1f} ({r.get('same_size_copy_cold_us', float('nan')):.1f}) | "
                     f"{r['correct']} |")
    for s in results.get("sanitizers", []):
        lines += ["", f"{s['tool']}: rc {s['rc']}, {s['seconds']} s: " + " / ".join(s["summary"])]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="measure", choices=["prepare", "measure", "launch-child", "profile-child"])
    ap.add_argument("--out", default=str(HERE / "build" / "transposes"))
    ap.add_argument("--only", default="", help="comma-separated variant tags to time (default: all)")
    ap.add_argument("--repeats", type=int, default=15, help="graph replays (of gpu_suite.TRANSPOSE_GRAPH_LAUNCHES launches) per median (suite: 5)")
    ap.add_argument("--no-sanitize", action="store_true")
    ap.add_argument("--sanitize-all", action="store_true", help="sanitize every transpose (default: the new ones)")
    ap.add_argument("--sanitizer-timeout", type=int, default=150)
    args = ap.parse_args()
    if args.mode == "launch-child":
        launch_child(args.sanitize_all)
        return
    if args.mode == "profile-child":  # e.g. under ncu: ncu -k regex:ll_transpose ... --mode profile-child --only X
        profile_child(args.only)
        return
    sources = _sources(8192) + _sources(SANITIZE_SIZE)
    print(f"compiled (or found cached) {len(sources)} cubins in {gpu_suite.compile_all(sources):.1f} s", flush=True)
    if args.mode == "prepare":
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results: dict = dict(environment=gpu_suite.environment())
    results["copy"] = gpu_suite.copy_bandwidth()
    print("copy", results["copy"], flush=True)
    ns = argparse.Namespace(transpose_size=8192, transpose_only=args.only, transpose_repeats=args.repeats)
    results["transpose"] = gpu_suite.transposes(ns, results["copy"])
    if not args.no_sanitize:
        results["sanitizers"] = [sanitize(tool, args.sanitizer_timeout, args.sanitize_all)
                                 for tool in ("memcheck", "racecheck")]
    (out / "transposes.json").write_text(json.dumps(results, indent=1, default=str))
    text = report(results)
    (out / "transposes.md").write_text(text)
    print(text, flush=True)


if __name__ == "__main__":
    main()
