"""Whole kernels (load, one conversion, store) ours vs Triton's Gluon peer, timed and under ncu's
memory counters: where a whole kernel of ours is slower than Triton's, which counter differs.

    # device (cubins: gpu_suite.py --mode prepare on the CPU first, carry benchmarks/build)
    PYTHONPATH=src python benchmarks/whole_kernel_profile.py --cases random_006,random_013 --out OUT

Writes ``OUT/whole_kernel_profile.json`` and ``.md``: per case, µs per launch (CUDA graph of 10
launches, median of 5, as ``gpu_suite``) and one launch of each kernel under ncu with the metrics of
``METRICS`` (global sectors and requests, DRAM bytes, achieved occupancy, registers).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
import harness  # noqa: E402, F401  (puts src/ on the path)

from harness.cases import all_cases  # noqa: E402
from gpu_suite import _time, build_variants, environment  # noqa: E402

METRICS = (
    "gpu__time_duration.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "lts__t_sectors_srcunit_tex_op_read.sum",
    "lts__t_sectors_srcunit_tex_op_write.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "launch__registers_per_thread",
    "launch__occupancy_limit_registers",
    "launch__occupancy_limit_blocks",
    "smsp__inst_executed.sum",
)
_TDT = {1: "int8", 2: "int16", 4: "int32", 8: "int64"}


def _ours(names: list[str]):
    cases = [c for c in all_cases() if c.name in names]
    return {v.case.name: v for v in build_variants(cases, 0) if v.variant == "ours"}


def _launchers(v, tiles: int):
    """(ours, triton): zero-argument launches of the whole kernel (``iterations`` = 0) on ``tiles`` tiles."""
    import cupy as cp
    import numpy as np
    import torch

    from gpu_gluon_convert import gluon_launcher
    from linear_layouts.codegen.runtime import compile_kernel

    case = v.case
    x = torch.randint(-100, 100, (tiles * v.kernel.tile_elements,), dtype=getattr(torch, _TDT[case.bits // 8]),
                      device="cuda")
    y = torch.empty_like(x)
    fn = compile_kernel(v.kernel)
    a = (cp.asarray(x), cp.asarray(y), np.int32(0))
    peer = gluon_launcher(case.src, case.dst, case.warps)

    def ours():
        fn((tiles,), (v.kernel.threads,), a, shared_mem=v.kernel.shared_bytes)

    def triton():
        peer(x, y, 0, tiles)

    return ours, triton, x, y


def child(args) -> None:
    """One launch of each kernel (for ncu)."""
    import torch

    for name, v in _ours(args.cases.split(",")).items():
        ours, triton, _, _ = _launchers(v, args.tiles)
        ours()
        triton()
        torch.cuda.synchronize()


def run_ncu(args) -> dict:
    cmd = ["ncu", "--csv", "--metrics", ",".join(METRICS), "-k", "regex:^(ll_ours|convert_kernel)",
           sys.executable, __file__, "--mode", "child", "--cases", args.cases, "--tiles", str(args.tiles)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.ncu_timeout)
    lines = [line for line in proc.stdout.splitlines() if line.startswith('"')]
    launches: dict[str, dict[str, str]] = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        key = f"{row['ID']}:{row['Kernel Name'].split('(')[0]}"
        launches.setdefault(key, {})[row["Metric Name"]] = row["Metric Value"]
    return dict(rc=proc.returncode, launches=launches, tail=(proc.stdout + proc.stderr)[-3000:])


def timings(args) -> list[dict]:
    import torch

    rows = []
    for name, v in _ours(args.cases.split(",")).items():
        ours, triton, x, y = _launchers(v, args.tiles)
        row = dict(case=name, bits=v.case.bits, warps=v.case.warps, kind=v.step_kind, tiles=args.tiles)
        for label, fn in (("ours", ours), ("triton", triton)):
            y.zero_()
            row[label] = _time(fn)
            row[label + "_correct"] = bool(torch.equal(x, y))
        rows.append(row)
        print(f"  {name:14s} ours {row['ours']:7.2f} µs  triton {row['triton']:7.2f} µs", flush=True)
    return rows


def report(out: Path, result: dict) -> None:
    lines = ["# Whole kernels: ours vs Triton, timed and under ncu", "",
             f"Device: {result['environment'].get('gpu', '?')}; date {result['date']}; "
             f"Triton {result['environment'].get('triton', '?')}.", "",
             "| case | bits | warps | ours µs | Triton µs | Triton / ours |", "|---|---|---|---|---|---|"]
    for r in result["timings"]:
        lines.append(f"| {r['case']} | {r['bits']} | {r['warps']} | {r['ours']:.2f} | {r['triton']:.2f} | "
                     f"{r['triton'] / r['ours']:.2f} |")
    lines += ["", "ncu, one launch each (in launch order: ours then Triton per case):", "",
              "| launch | " + " | ".join(m.split("__", 1)[1] for m in METRICS) + " |",
              "|---|" + "---|" * len(METRICS)]
    for key, m in result["ncu"]["launches"].items():
        lines.append(f"| {key} | " + " | ".join(m.get(x, "-") for x in METRICS) + " |")
    (out / "whole_kernel_profile.md").write_text("\n".join(lines) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", default="all", choices=("all", "child"))
    ap.add_argument("--cases", default="random_006,random_013,random_004,random_003,row_to_col_fp8,random_024")
    ap.add_argument("--tiles", type=int, default=8192)
    ap.add_argument("--out", default=str(HERE / "build" / "whole"))
    ap.add_argument("--ncu-timeout", type=int, default=240)
    args = ap.parse_args()
    if args.mode == "child":
        child(args)
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    result = dict(environment=environment(), date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                  timings=timings(args))
    result["ncu"] = run_ncu(args)
    (out / "whole_kernel_profile.json").write_text(json.dumps(result, indent=1))
    report(out, result)
    print((out / "whole_kernel_profile.md").read_text())


if __name__ == "__main__":
    main()
