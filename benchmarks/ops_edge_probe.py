"""How the ops' aligned kernels fare when a dim is a multiple of 16 but not of the tile (device).

A matrix of ``m x n`` whose rows are 16-byte aligned but whose ``m`` is not a multiple of 32 bytes of ``T``'s
rows (e.g. 4112 tokens) leaves every other row of ``T = X^T`` starting inside a 32-byte sector: the tiles on
either side of a tile boundary each write part of one sector. This probe times ``ops.cast_transpose`` (bf16 ->
e4m3) and ``ops.transpose`` (fp8, bf16) over row counts ``m`` from a multiple of 128 up by 8, 16, 32 and 64
elements, with a same-size copy each, all in one process after one ``torch.compile`` call and timed together
(``harness.timing.time_together``); then ncu's DRAM and L2 counters of the cast at two of the shapes.

    PYTHONPATH=src python3 benchmarks/ops_edge_probe.py --out DIR     # device; carries build/ops_cubins
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

#: Row counts tried (``n`` fixed): a multiple of 128, then 8, 16, 32, 64 and 128 more.
ROWS = (4096, 4104, 4112, 4128, 4160, 4224)
COLS = 8192
#: ncu compares the cast at these two row counts.
NCU_ROWS = (4096, 4112)
NCU_METRICS = ["gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
               "lts__t_sectors_srcunit_tex_op_write.sum", "lts__t_sectors_srcunit_tex_op_read.sum",
               "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "lts__t_sector_hit_rate.pct"]


def _child(m: int, warm: int) -> int:
    import torch

    from linear_layouts import ops

    x = (torch.randn((m, COLS), device="cuda") * 100).to(torch.bfloat16)
    for _ in range(warm + 1):
        ops.cast_transpose(x, torch.float8_e4m3fn, 0.5)
    torch.cuda.synchronize()
    return 0


def measure() -> list[dict]:
    import torch

    import gpu_suite
    from harness.timing import time_together
    from linear_layouts import ops

    torch.compile(lambda t: t.t().contiguous())(torch.ones((512, 512), device="cuda"))
    rows = []
    for m in ROWS:
        x = (torch.randn((m, COLS), device="cuda") * 100).to(torch.bfloat16)
        x8 = torch.randint(0, 255, (m, COLS), dtype=torch.uint8, device="cuda")
        t16, t8 = torch.empty((COLS, m), dtype=torch.bfloat16, device="cuda"), torch.empty((COLS, m), dtype=torch.uint8, device="cuda")
        c, ct = torch.empty((m, COLS), dtype=torch.float8_e4m3fn, device="cuda"), torch.empty((COLS, m), dtype=torch.float8_e4m3fn, device="cuda")
        amax = torch.zeros((), dtype=torch.float32, device="cuda")
        y16, y8 = torch.empty_like(x), torch.empty_like(x8)
        fns = {"cast": lambda: ops.cast_transpose(x, torch.float8_e4m3fn, 0.5, out=c, out_t=ct, amax=amax),
               "transpose bf16": lambda: ops.transpose(x, out=t16), "transpose u8": lambda: ops.transpose(x8, out=t8),
               "copy bf16": lambda: y16.copy_(x), "copy u8": lambda: y8.copy_(x8)}
        us = time_together(lambda fn: gpu_suite._time(fn, repeats=7, inner=20), fns)
        ok = bool(torch.equal(t16.view(torch.int16), x.t().contiguous().view(torch.int16))) and bool(torch.equal(t8, x8.t()))
        row = dict(m=m, n=COLS, us=us, correct=ok,
                   gbps={k: (m * COLS * (4 if k.startswith("cast") else 2 * (2 if "bf16" in k else 1))) / (v * 1e-6) / 1e9
                         for k, v in us.items()})
        print(m, {k: round(v, 1) for k, v in us.items()}, ok, flush=True)
        rows.append(row)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="/tmp/ops_edge_probe")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return _child(args.child, 3)
    import torch

    from harness import ncu
    from ops_ncu_compare import _profile

    rows = measure()
    profiles = {m: _profile([sys.executable, __file__, "--child", str(m)], 3, NCU_METRICS, kernel="ll_cast_transpose")
                for m in NCU_ROWS}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    env = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "gpu": torch.cuda.get_device_name(0)}
    (out / "ops_edge_probe.json").write_text(json.dumps(dict(environment=env, rows=rows, ncu=profiles), indent=1))
    lines = [f"# Row counts off the tile ({env['gpu']}, {env['date']})", "",
             f"`m x {COLS}`; µs (GB/s of bytes moved), timed together after one `torch.compile` call.", "",
             "| m | cast bf16->e4m3 | transpose bf16 | transpose u8 | copy bf16 | copy u8 | correct |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        cells = " | ".join(f"{r['us'][k]:.1f} ({r['gbps'][k]:.0f})" for k in
                           ("cast", "transpose bf16", "transpose u8", "copy bf16", "copy u8"))
        lines.append(f"| {r['m']} | {cells} | {r['correct']} |")
    lines += ["", "ncu, the cast (one launch after 3):", "",
              *ncu.metric_table({f"m = {m}": profiles[m] for m in NCU_ROWS}, NCU_METRICS)]
    (out / "ops_edge_probe.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
