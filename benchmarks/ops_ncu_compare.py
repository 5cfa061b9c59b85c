"""Why a Triton ``tl.trans`` kernel beats our ops transpose at the same tile: Nsight Compute's counters of both
on one problem (device only).

Each kernel -- ours at the tiles of its list (``harness.ops_cases.tile_alternatives``) and Triton's precompiled
tiles (``triton_transpose.TritonTransposes``) -- is launched ``--warm`` times and then profiled once by ncu in
its own process: duration, DRAM bytes read and written, L2 sectors read / written by the SMs, L2 hit rate,
shared-memory wavefronts and bank conflicts, achieved occupancy, instructions and the warp-state stalls.
Every kernel's output is checked against ``x.permute(dims)`` first.

    PYTHONPATH=src python3 benchmarks/ops_ncu_compare.py --out DIR [--shape 8192,4096 --dtype fp8]   # device
    ... --shape 32,28,28,512 --dims 0,3,1,2 --dtype bf16     # a batched transpose (NHWC -> NCHW)

``--dims``: any permutation whose plan is a batched transpose of matrices that follow one another (what Triton's
kernel takes, ``ops_bench._triton_batch``); else only our kernels are profiled.

Carries ``benchmarks/build/ops_cubins`` (our kernel cache) and ``benchmarks/build/triton_transpose``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
import harness  # noqa: E402, F401  (puts src/ on the path)
from harness import ncu, ops_cases  # noqa: E402

METRICS = [
    "gpu__time_duration.sum",
    "dram__bytes_read.sum", "dram__bytes_write.sum",
    "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_op_write.sum",
    "lts__t_sector_hit_rate.pct",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active", "smsp__inst_executed.sum",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_drain_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio",
]
ITEMSIZE = {"fp8": 1, "bf16": 2, "fp32": 4}
DTYPE_NAMES = {"fp8": "uint8", "bf16": "bfloat16", "fp32": "float32"}


def _setup(shape: tuple[int, ...], dims: tuple[int, ...], dtype: str):
    """The input, the output and ``{label: run()}`` for ours at each tile of its list and Triton's tiles."""
    import torch

    from linear_layouts.ops import launch
    import ops_bench
    import triton_transpose

    itemsize = ITEMSIZE[dtype]
    torch_dtype = {1: torch.uint8, 2: torch.int16, 4: torch.int32}[itemsize]
    x = torch.randint(0, 100, shape, device="cuda").to(torch_dtype)
    out = torch.empty(tuple(shape[d] for d in dims), device="cuda", dtype=torch_dtype)
    device = x.device.index or 0
    grid = launch.grid_shape(device)
    runs = {}
    for label, launches in ops_cases.tile_alternatives(shape, dims, itemsize, x.data_ptr(), out.data_ptr(),
                                                       grid.multiprocessors, grid.l2_bytes).items():
        runs[f"ours {label}"] = ops_cases.runner(launches, device)
    problem = ops_bench._problem(shape, dims, DTYPE_NAMES[dtype])
    batch = ops_bench._triton_batch(problem)
    if batch is not None:
        for label, go in triton_transpose.TritonTransposes().launchers(itemsize, problem.rows, problem.cols).items():
            runs[f"triton {label}"] = lambda go=go: go(x.data_ptr(), out.data_ptr(), batch)
    return x, out, runs


def _dims(args, shape: tuple[int, ...]) -> tuple[int, ...]:
    """``--dims`` as a tuple (the 2-D transpose where empty); a bad one ends the run with one line."""
    if not args.dims:
        return (1, 0) if len(shape) == 2 else tuple(range(len(shape)))[::-1]
    try:
        dims = tuple(int(d) for d in args.dims.split(","))
    except ValueError:
        raise SystemExit(f"--dims: {args.dims!r} is not a comma list of ints")
    if sorted(dims) != list(range(len(shape))):
        raise SystemExit(f"--dims: {list(dims)} is not a permutation of the {len(shape)} dims of --shape")
    return dims


def child(args) -> int:
    """Launch one kernel ``--warm`` times then once more (the profiled launch: ncu's ``--launch-skip``)."""
    import torch

    shape = tuple(int(s) for s in args.shape.split(","))
    x, out, runs = _setup(shape, _dims(args, shape), args.dtype)
    run = runs[args.which]
    for _ in range(args.warm + 1):
        run()
    torch.cuda.synchronize()
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="/tmp/ops_ncu")
    ap.add_argument("--shape", default="8192,4096")
    ap.add_argument("--dims", default="", help="the permutation (default: the 2-D transpose)")
    ap.add_argument("--dtype", default="fp8", choices=sorted(ITEMSIZE))
    ap.add_argument("--warm", type=int, default=3)
    ap.add_argument("--only", default="", help="comma list of labels (default: every kernel)")
    ap.add_argument("--which", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.which:
        return child(args)
    import torch

    shape = tuple(int(s) for s in args.shape.split(","))
    dims = _dims(args, shape)
    x, out, runs = _setup(shape, dims, args.dtype)
    expected = x.permute(*dims).contiguous()
    rows = {}
    for label, run in runs.items():
        if args.only and label not in args.only.split(","):
            continue
        out.zero_()
        run()
        torch.cuda.synchronize()
        correct = bool(torch.equal(out, expected))
        cmd = [sys.executable, __file__, "--which", label, "--shape", args.shape, "--dtype", args.dtype,
               "--warm", str(args.warm), "--dims", ",".join(map(str, dims))]
        result = _profile(cmd, args.warm)
        rows[label] = dict(correct=correct, **result)
        m = (result.get("launches") or [{}])[0].get("metrics", {})
        print(f"{label}: correct {correct}, {m.get('gpu__time_duration.sum', 0) / 1e3:.1f} us, "
              f"DRAM read {m.get('dram__bytes_read.sum', 0) / 2**20:.1f} MiB, write "
              f"{m.get('dram__bytes_write.sum', 0) / 2**20:.1f} MiB", flush=True)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    env = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "gpu": torch.cuda.get_device_name(0),
           "shape": shape, "dims": dims, "dtype": args.dtype}
    (out_dir / "ops_ncu_compare.json").write_text(json.dumps({"environment": env, "rows": rows}, indent=1))
    lines = [f"# Our ops transpose against Triton's tl.trans, ncu counters ({env['gpu']}, {env['date']})", "",
             f"{args.dtype} {list(shape)} permuted by {list(dims)}; one profiled launch after {args.warm} warm ones.",
             "", "| metric | " + " | ".join(rows) + " |", "|---|" + "---|" * len(rows)]
    for metric in ["correct"] + METRICS:
        cells = []
        for r in rows.values():
            if metric == "correct":
                cells.append(str(r["correct"]))
                continue
            value = (r.get("launches") or [{}])[0].get("metrics", {}).get(metric)
            cells.append("-" if value is None else f"{value:,.3g}" if abs(value) < 1e4 else f"{value:,.0f}")
        lines.append(f"| {metric} | " + " | ".join(cells) + " |")
    (out_dir / "ops_ncu_compare.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


def _profile(cmd: list[str], warm: int, metrics: list[str] = METRICS, kernel: str = "") -> dict:
    """``ncu`` over ``cmd``: the launch after ``warm`` others (of kernels whose name matches the regex ``kernel``,
    when given), every metric of ``metrics``."""
    log = Path("/tmp") / f"ops_ncu_{os.getpid()}_{time.time_ns()}.csv"
    full = ["ncu", "--csv", "--print-units", "base", "--log-file", str(log), "--metrics", ",".join(metrics),
            "--launch-skip", str(warm), "--launch-count", "1"] + (["--kernel-name", f"regex:{kernel}"] if kernel else [])
    full += cmd
    start = time.time()
    try:
        proc = subprocess.run(full, capture_output=True, text=True, timeout=120)
        rc, tail = proc.returncode, (proc.stdout + proc.stderr)[-1500:]
    except subprocess.TimeoutExpired:
        rc, tail = 124, "ncu timed out"
    text = log.read_text() if log.exists() else ""
    launches = [{"kernel": k, "metrics": m} for k, m in ncu.launches(text)]
    return dict(rc=rc, seconds=round(time.time() - start, 1), launches=launches, tail="" if launches else tail)


if __name__ == "__main__":
    sys.exit(main())
