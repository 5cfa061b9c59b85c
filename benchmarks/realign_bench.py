"""1-byte transposes whose output rows 16 bytes do not align: realigned 16-byte stores against narrower stores.

``ops.launches.REALIGNED_STORES`` gives such a transpose the tiles it had, their stores realigned
(``intrinsics.REALIGNED_STORE_FUNCTIONS``: each row's 16-byte vectors at the absolute 16-byte boundaries, the
bytes of its two ends one by one) instead of the 1-, 2-, 4- or 8-byte stores the rows' length allows. Each case is
checked bit for bit against PyTorch and its contenders timed together (``harness.timing.time_together``, CUDA
graphs of ``LAUNCHES`` launches):

- ``ops``: as it is (realigned stores);
- ``ops (narrow stores)``: with ``REALIGNED_STORES = False``;
- PyTorch eager and a same-size copy of 4-byte elements; and a 1 GiB copy for the device's bandwidth.

    PYTHONPATH=src python3 benchmarks/realign_bench.py --mode prepare   # CPU: nvcc cubins for sm_90
    PYTHONPATH=src python3 benchmarks/realign_bench.py --out DIR        # device: realign.{json,md}

Bandwidth counts the bytes read and written.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

BUILD = harness.BUILD / "realign"
os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(BUILD / "cache"))

from harness import ops_cases  # noqa: E402

#: (shape, dims): 2-D transposes of every output-row residue mod 16, odd inputs too, NHWC -> NCHW of odd planes,
#: 3-D and batched ones, in DRAM and in L2.
CASES = (
    ((11921, 3976), (1, 0)), ((11922, 3976), (1, 0)), ((11924, 3976), (1, 0)), ((11928, 3976), (1, 0)),
    ((11921, 3977), (1, 0)), ((11923, 3977), (1, 0)), ((8399, 4792), (1, 0)), ((4095, 4097), (1, 0)),
    ((15023, 7237), (1, 0)), ((8191, 8192), (1, 0)), ((4100, 8192), (1, 0)),
    ((128, 31, 31, 576), (0, 3, 1, 2)), ((64, 19, 19, 1024), (0, 3, 1, 2)), ((32, 25, 25, 2048), (0, 3, 1, 2)),
    ((331, 569, 592), (2, 1, 0)), ((44, 721, 3528), (0, 2, 1)), ((24, 483, 3341), (0, 2, 1)),
    ((1001, 3000), (1, 0)), ((2049, 4096), (1, 0)), ((777, 555), (1, 0)), ((4, 300, 517), (0, 2, 1)),
)
LAUNCHES, REPEATS = 20, 5
_BASE, _OTHER = 1 << 40, 2 << 40


def contenders(shape, dims, src: int, dst: int, device) -> dict:
    """``{label: launches}`` of one case at addresses ``src``, ``dst``: ``ops`` and ``ops`` with narrow stores."""
    from linear_layouts.ops import launches

    out = {"ops": launches.permute_launches(shape, dims, 1, src, dst, device)}
    default, launches.REALIGNED_STORES = launches.REALIGNED_STORES, False
    try:
        out["ops (narrow stores)"] = launches.permute_launches(shape, dims, 1, src, dst, device)
    finally:
        launches.REALIGNED_STORES = default
    return out


def prepare(jobs: int) -> None:
    """Every kernel of every case compiled for sm_90 into the kernel cache ``BUILD/cache``."""
    from linear_layouts.codegen.ptx import find_nvcc
    from linear_layouts.ops.kernels import GridShape

    if find_nvcc() is None:
        sys.exit("realign_bench: nvcc not found")
    (BUILD / "cache").mkdir(parents=True, mode=0o700, exist_ok=True)
    device = GridShape(ops_cases.SMS, ops_cases.L2_BYTES)
    sources = ops_cases.launch_sources(items for shape, dims in CASES
                                       for items in contenders(shape, dims, _BASE, _OTHER, device).values())
    n, seconds = ops_cases.compile_sources(sources, "sm_90", jobs)
    print(f"prepared {n} kernels for sm_90 in {seconds:.0f} s into {BUILD / 'cache'}")


def _time(fn) -> float:
    import gpu_suite

    return gpu_suite._time(fn, repeats=REPEATS, inner=LAUNCHES)


def bench_case(shape, dims, device, copy_tbs: float) -> dict:
    import torch

    numel = 1
    for size in shape:
        numel *= size
    x = torch.randint(0, 256, tuple(shape), dtype=torch.uint8, device="cuda")
    out = torch.empty(tuple(shape[d] for d in dims), dtype=torch.uint8, device="cuda")
    expected = x.permute(dims).contiguous()
    row = dict(shape=list(shape), dims=list(dims), mib=round(numel / 2**20, 2), kernels={})
    fns = {}
    for label, items in contenders(shape, dims, x.data_ptr(), out.data_ptr(), device).items():
        run = ops_cases.runner(items)
        out.fill_(0xAB)
        run()
        torch.cuda.synchronize()
        kernel = next(item.kernel for item in items if hasattr(item, "kernel"))
        row["kernels"][label] = dict(correct=bool(torch.equal(out, expected)), name=kernel.name,
                                     tile=[kernel.tile_rows, kernel.tile_cols], vectors=[kernel.src_vector,
                                                                                         kernel.dst_vector])
        fns[label] = run
    ops_cases.time_with_peers(_time, fns, x, dims, numel, copy_tbs, row["kernels"])
    k = row["kernels"]
    row["speedup"] = round(k["ops (narrow stores)"]["us"] / k["ops"]["us"], 3)
    row["vs_eager"] = round(k["eager"]["us"] / k["ops"]["us"], 3)
    return row


def markdown(env: dict, copy_tbs: float, rows: list[dict]) -> str:
    lines = ["# Realigned 16-byte stores for 1-byte transposes (`REALIGNED_STORE_FUNCTIONS`)", "",
             f"{env.get('date', '')}, {env.get('gpu', '')}; torch {env.get('torch', '')}, {env.get('nvcc', '')}. "
             f"1 GiB copy: {copy_tbs:.3f} TB/s (read + written). Cells: µs (% of the 1 GiB copy's bandwidth); "
             "`narrow`: the stores the output rows allow (tile rows x cols, input / output vector).", "",
             "| shape | dims | MiB | tile | vectors (narrow) | ops | narrow stores | ops / narrow | eager | ops / eager "
             "| correct |", "|---|---|---:|---|---|---:|---:|---:|---:|---:|---|"]
    for row in rows:
        k = row["kernels"]

        def cell(label):
            return f"{k[label]['us']} ({100 * k[label]['of_copy']:.1f}%)"
        ok = all(v.get("correct", True) for v in k.values())
        n = k["ops (narrow stores)"]
        lines.append(f"| {tuple(row['shape'])} | {tuple(row['dims'])} | {row['mib']} | "
                     f"{k['ops']['tile'][0]}x{k['ops']['tile'][1]} | {n['vectors'][0]}/{n['vectors'][1]} | "
                     f"{cell('ops')} | {cell('ops (narrow stores)')} | {row['speedup']}x | {cell('eager')} | "
                     f"{row['vs_eager']}x | {'yes' if ok else 'WRONG'} |")
    return "\n".join(lines) + "\n"


def run(out: Path) -> None:
    import torch
    from harness.environment import environment

    import gpu_suite
    from linear_layouts.ops import launch

    start = time.time()
    env = environment(modules=("torch", "cupy", "numpy"), device=True)
    device = launch.grid_shape(0)
    copy_tbs = gpu_suite.copy_bandwidth()["tb_per_s"]
    rows = []
    for shape, dims in CASES:
        rows.append(bench_case(shape, dims, device, copy_tbs))
        print(f"{shape} {dims}: {rows[-1]['speedup']}x the narrow stores, {time.time() - start:.0f} s", flush=True)
        torch.cuda.empty_cache()
    env["seconds"] = round(time.time() - start, 1)
    out.mkdir(parents=True, exist_ok=True)
    (out / "realign.json").write_text(json.dumps(dict(environment=env, copy_tbs=copy_tbs, cases=rows), indent=1))
    (out / "realign.md").write_text(markdown(env, copy_tbs, rows))
    print((out / "realign.md").read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("prepare", "run"), default="run")
    parser.add_argument("--out", type=Path, default=Path("realign_out"))
    parser.add_argument("--jobs", type=int, default=2, help="nvcc processes at a time (prepare)")
    args = parser.parse_args()
    if args.mode == "prepare":
        prepare(args.jobs)
    else:
        run(args.out)


if __name__ == "__main__":
    main()
