"""Why the odd-shape cast-transpose is slower than the aligned one: Nsight Compute's counters of both (device).

``ops.cast_transpose`` of a bf16 ``4095 x 11007`` matrix (rows at every byte offset: the chunked kernel, and
the scalar one forced) and of ``4096 x 11008`` (the aligned kernel), each launched ``--warm`` times and then
profiled once by ncu in its own process: duration, DRAM and L2 bytes, L1 requests, shared wavefronts,
occupancy, instructions and the warp stalls (``ops_ncu_compare.METRICS`` plus the global stores').

    PYTHONPATH=src python3 benchmarks/cast_odd_ncu.py --out DIR    # device; carries build/ops_cubins
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)
from harness import ncu
from ops_ncu_compare import METRICS, _profile

EXTRA = ["sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active", "smsp__issue_active.avg.pct_of_peak_sustained_active",
         "l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed",
         "smsp__warps_eligible.avg.per_cycle_active", "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio",
         "smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio",
         "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio",
         "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
         "lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum", "dram__sectors_read.sum",
         "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio"]
CASES = {"chunked 4095x11007": ((4095, 11007), "chunked"), "scalar 4095x11007": ((4095, 11007), "scalar"),
         "aligned 4096x11008": ((4096, 11008), None)}


def child(label: str, warm: int) -> int:
    import torch

    from linear_layouts import ops
    from linear_layouts.ops import launches

    shape, kind = CASES[label]
    if kind:
        launches.MISALIGNED_CAST = kind
    x = (torch.randn(shape, device="cuda") * 100).to(torch.bfloat16)
    for _ in range(warm + 1):
        ops.cast_transpose(x, torch.float8_e4m3fn, 0.5)
    torch.cuda.synchronize()
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="/tmp/cast_odd_ncu")
    ap.add_argument("--warm", type=int, default=3)
    ap.add_argument("--which", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.which:
        return child(args.which, args.warm)
    import torch

    rows = {}
    for label in CASES:
        cmd = [sys.executable, __file__, "--which", label, "--warm", str(args.warm)]
        rows[label] = _profile(cmd, args.warm, METRICS + EXTRA, kernel="ll_cast_transpose")
        print(label, rows[label].get("rc"), rows[label].get("seconds"), flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    env = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "gpu": torch.cuda.get_device_name(0)}
    (out / "cast_odd_ncu.json").write_text(json.dumps({"environment": env, "rows": rows}, indent=1))
    lines = [f"# The odd-shape cast-transpose against the aligned one, ncu counters ({env['gpu']}, {env['date']})", "",
             f"bf16 -> e4m3 `ops.cast_transpose`; one profiled launch after {args.warm} warm ones (the last kernel "
             "of the launch: the cast-transpose).", "", *ncu.metric_table(rows, METRICS + EXTRA)]
    (out / "cast_odd_ncu.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
