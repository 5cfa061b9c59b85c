"""Our ops transposes against Triton's ``tl.trans`` tiles and a same-size copy, in three L2 regimes (device only).

The sweep (``ops_bench.py``) times a CUDA graph of launches on one set of buffers. For tensors near the L2's size
(16-64 MiB on an H100/H200) part of one launch's input and output is still in L2 when the next launch starts, so
that loop measures how a kernel's order of accesses meets the previous launch's leftovers as much as its own
bandwidth. This script times every kernel three ways, on the same buffers and in one run:

* ``warm``: ``LAUNCHES`` launches on one input / output pair (the sweep's loop);
* ``rotate``: the same launches over ``K`` input / output pairs taken in turn, ``K`` chosen so that the pairs
  together hold more than three L2s: back to back as in the loop (the previous launch's dirty lines are written
  back during the next), but nothing a launch reads was touched by the launch before it;
* ``cold``: one launch between CUDA events after reading a 1 GiB buffer (no dirty lines, nothing cached).

Every kernel's output is checked bit for bit against ``x.t()`` first.

``--state``: the process-state probe instead. fp8 8192x4096 (ours, Triton's 64x128 tile, a copy; ``warm``)
timed before and after a ``torch.compile`` call, after idling and after ``cuCtxSetLimit`` of the persisting L2
size: the reason ``ops_bench.py`` times a case's contenders together after its compile.

    PYTHONPATH=src python3 benchmarks/ops_l2_regimes.py --out DIR [--state]   # device; carries build/ops_cubins
                                                                              # and build/triton_transpose
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)
from harness import ops_cases

#: (M, N, element bytes): Figure 2's and the weights' fp8 cases near the L2's size, one far above it, and the
#: 16- and 32-bit cases of the sweep that trailed Triton's best tile.
CASES = ((8192, 4096, 1), (4096, 8192, 1), (11008, 4096, 1), (8192, 8192, 1), (8192, 28672, 1),
         (4096, 4096, 2), (8192, 1024, 2), (8192, 8192, 2), (4096, 4096, 4))
LAUNCHES = 20
REPEATS = 5
ROTATE_BYTES = 3 * ops_cases.L2_BYTES


def _graph_us(fns) -> float:
    """Median µs per launch: the launches of ``fns`` (called in turn, ``LAUNCHES`` in all) in one CUDA graph,
    replayed ``REPEATS`` times between events."""
    import cupy as cp
    import torch

    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream), cp.cuda.ExternalStream(stream.cuda_stream):
        for fn in fns:
            fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            for i in range(LAUNCHES):
                fns[i % len(fns)]()
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(REPEATS):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e3 / LAUNCHES)
    return float(sorted(times)[len(times) // 2])


def _cold_us(fn, scrub) -> float:
    """Median µs of one launch after reading ``scrub`` (``gpu_suite._time_cold``), CuPy's launches on PyTorch's
    stream."""
    import cupy as cp
    import torch

    import gpu_suite

    with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
        fn()
        return gpu_suite._time_cold(fn, scrub, REPEATS)


def _kernels(m: int, n: int, w: int, pairs) -> dict:
    """``{label: [run per pair]}``: ours at each tile of its list, the planner's choice, Triton's tiles, a copy."""
    import triton_transpose
    from linear_layouts import ops
    from linear_layouts.ops import launch

    device = pairs[0][0].device.index or 0
    grid = launch.grid_shape(device)
    out: dict = {}
    for x, y in pairs:
        for label, launches in ops_cases.tile_alternatives((m, n), (1, 0), w, x.data_ptr(), y.data_ptr(),
                                                           grid.multiprocessors, grid.l2_bytes).items():
            out.setdefault(f"ours {label}", []).append(ops_cases.runner(launches, device))
        out.setdefault("ours (planner)", []).append(lambda x=x, y=y: ops.transpose(x, out=y))
    triton = triton_transpose.TritonTransposes()
    for x, y in pairs:
        for label, go in triton.launchers(w, m, n).items():
            out.setdefault(f"triton {label}", []).append(lambda go=go, x=x, y=y: go(x.data_ptr(), y.data_ptr(), 1))
        flat_x, flat_y = x.reshape(-1), y.reshape(-1)
        out.setdefault("copy", []).append(lambda a=flat_x, b=flat_y: b.copy_(a))
    return out


def _input(m: int, n: int, w: int, data: str):
    """``m x n`` elements of ``w`` bytes: uniformly random bytes (``uniform``) or small integers (``small``:
    each element 0..99, its other bits zero)."""
    import torch

    dtype = {1: torch.uint8, 2: torch.int16, 4: torch.int32}[w]
    if data == "small":
        return torch.randint(0, 100, (m, n), device="cuda").to(dtype)
    return torch.randint(0, 256, (m, n, w), dtype=torch.uint8, device="cuda").view(dtype).reshape(m, n)


def bench(m: int, n: int, w: int, scrub, data: str = "uniform") -> dict:
    import torch

    nbytes = m * n * w
    k = max(1, -(-ROTATE_BYTES // (2 * nbytes)))
    pairs = []
    for _ in range(k):
        x = _input(m, n, w, data)
        pairs.append((x, torch.empty((n, m), device="cuda", dtype=x.dtype)))
    expected = [x.t().contiguous() for x, _ in pairs[:1]]
    rows = {}
    for label, runs in _kernels(m, n, w, pairs).items():
        pairs[0][1].zero_()
        runs[0]()
        torch.cuda.synchronize()
        correct = label == "copy" or bool(torch.equal(pairs[0][1], expected[0]))
        rows[label] = dict(correct=correct, warm=_graph_us(runs[:1]), rotate=_graph_us(runs), cold=_cold_us(runs[0], scrub))
    del pairs
    torch.cuda.empty_cache()
    return dict(m=m, n=n, element_bytes=w, data=data, bytes=nbytes, rotate_pairs=k, kernels=rows)


def _best(kernels: dict, prefix: str, regime: str):
    good = {k: v for k, v in kernels.items() if k.startswith(prefix) and v["correct"]}
    if not good:
        return None, None
    label = min(good, key=lambda k: good[k][regime])
    return label, good[label][regime]


def report(results: dict) -> str:
    env = results["environment"]
    lines = [f"# Ops transposes vs Triton's tiles in three L2 regimes ({env['gpu']}, {env['date']})", "",
             f"torch {env['torch']}, CuPy {env['cupy']}; µs per launch: `warm` a CUDA graph of {LAUNCHES} launches "
             f"on one buffer pair, `rotate` the same over pairs holding > 3 L2s ({ROTATE_BYTES >> 20} MiB), `cold` "
             "one launch after reading 1 GiB. Copy bandwidth of a row: 2 x bytes / µs of the same-size copy "
             "in that regime. Ratios are Triton's best tile / ours (> 1: ours faster).", "",
             "| case | regime | ours planner µs | ours best (tile) | Triton best (tile) | copy µs | planner / Triton | "
             "best / Triton | planner of copy |", "|---|---|---|---|---|---|---|---|---|"]
    for row in results["rows"]:
        ks = row["kernels"]
        for regime in ("warm", "rotate", "cold"):
            planner = ks.get("ours (planner)", {}).get(regime)
            best_label, best = _best(ks, "ours ", regime)
            t_label, t = _best(ks, "triton ", regime)
            copy = ks["copy"][regime]
            lines.append(
                f"| {row['m']}x{row['n']} {8 * row['element_bytes']}-bit {row.get('data', 'small')} | {regime} | {planner:.1f} | "
                f"{best:.1f} ({best_label[5:]}) | {t:.1f} ({t_label[7:]}) | {copy:.1f} | {t / planner:.3f} | "
                f"{t / best:.3f} | {copy / planner:.1%} |")
    wrong = [f"{r['m']}x{r['n']} {k}" for r in results["rows"] for k, v in r["kernels"].items() if not v["correct"]]
    lines += ["", f"Wrong outputs: {wrong or 'none'}."]
    return "\n".join(lines) + "\n"


def state_probe(out: Path) -> None:
    """The process-state probe (module doc): one line per step, into ``ops_process_state.md``."""
    import ctypes

    import torch

    cuda = ctypes.CDLL("libcuda.so.1")
    x = _input(8192, 4096, 1, "uniform")
    y = torch.empty((4096, 8192), device="cuda", dtype=x.dtype)
    kernels = _kernels(8192, 4096, 1, [(x, y)])
    pick = ("ours (planner)", "triton 64x128/4w", "copy")
    lines = [f"# Process state and the timing of L2-sized transposes ({torch.cuda.get_device_name(0)}, "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})", "",
             f"fp8 8192x4096 -> its transpose, µs per launch (a CUDA graph of {LAUNCHES} launches on one buffer "
             "pair, median of 5 replays), timed after each step in one process.", "",
             "| step | " + " | ".join(pick) + " |", "|---|" + "---|" * len(pick)]
    start = time.time()

    def row(step: str) -> None:
        us = {k: _graph_us(kernels[k]) for k in pick}
        lines.append(f"| {step} ({time.time() - start:.0f} s) | " + " | ".join(f"{us[k]:.2f}" for k in pick) + " |")
        print(lines[-1], flush=True)

    row("start")
    time.sleep(20)
    row("after 20 s idle")
    cuda.cuCtxSetLimit(0x06, ctypes.c_size_t(0))  # CU_LIMIT_PERSISTING_L2_CACHE_SIZE
    row("after cuCtxSetLimit(persisting L2, 0)")
    compiled = torch.compile(lambda t: t.permute(1, 0).contiguous(), dynamic=True)
    compiled(x)
    torch.cuda.synchronize()
    row("after torch.compile and its first call")
    time.sleep(10)
    row("10 s later")
    x.t().contiguous()
    torch.cuda.synchronize()
    row("after an eager transpose")
    cuda.cuCtxSetLimit(0x06, ctypes.c_size_t(0))
    row("after cuCtxSetLimit(persisting L2, 0)")
    (out / "ops_process_state.md").write_text("\n".join(lines) + "\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="/tmp/ops_l2_regimes")
    ap.add_argument("--only", default="", help="comma list of MxNxBYTES cases (default: CASES)")
    ap.add_argument("--data", default="uniform", help="comma list of inputs: uniform (random bytes), small (0..99)")
    ap.add_argument("--state", action="store_true", help="the process-state probe (module doc) instead")
    args = ap.parse_args(argv)
    import cupy
    import torch

    if args.state:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        state_probe(Path(args.out))
        return 0

    cases = [tuple(int(v) for v in c.split("x")) for c in args.only.split(",") if c] or list(CASES)
    scrub = torch.empty(1 << 28, dtype=torch.float32, device="cuda")
    env = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "gpu": torch.cuda.get_device_name(0),
           "torch": torch.__version__, "cupy": cupy.__version__}
    results = {"environment": env, "rows": []}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for m, n, w in cases:
        for data in args.data.split(","):
            start = time.time()
            results["rows"].append(bench(m, n, w, scrub, data))
            print(f"{m}x{n}x{w} {data}: {time.time() - start:.1f} s", flush=True)
        (out / "ops_l2_regimes.json").write_text(json.dumps(results, indent=1))
    text = report(results)
    (out / "ops_l2_regimes.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
