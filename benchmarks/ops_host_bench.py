"""Host time per call of ``linear_layouts.ops`` against PyTorch eager on the device, with the launch made by the
C extension (``ops._claunch``) and by ``ctypes`` (``LINEAR_LAYOUTS_PURE_PYTHON=1``).

A tight loop of small calls is bound by the host: ``calls`` calls then one synchronization, per call. Absolute
host times swing from one process to the next, so each process times ours and eager's interleaved (median of
``repeats`` loops each) and the figure compared is their ratio; the processes alternate between the two launch
paths, ``rounds`` of each. Every call's result is checked against eager's first.

    PYTHONPATH=src python3 benchmarks/ops_host_bench.py [--rounds 3] [--calls 2000] [--out benchmarks/results]

Writes ``ops_host_bench.{json,md}`` under ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
import harness  # noqa: E402, F401  (puts src/ on the path)
from harness.timing import per_call_us  # noqa: E402

#: (shape, dims, dtype): the sweep's small cases and the small cases of earlier host comparisons.
CASES = (((64, 64), (1, 0), "float32"), ((256, 512), (1, 0), "bfloat16"), ((2, 4, 16, 8), (0, 2, 1, 3), "float16"),
         ((1, 64, 7, 7), (0, 2, 3, 1), "float16"), ((8, 96, 97), (0, 2, 1), "float32"),
         ((512, 512), (1, 0), "uint8"), ((2048, 512), (1, 0), "float8_e4m3fn"))


def _child(calls: int, repeats: int) -> dict:
    """One process's timings: ``{case: {"ours": µs, "eager": µs}}``, the launch path, the allocations' µs."""
    import torch

    from linear_layouts import ops
    from linear_layouts.ops.driver import driver

    def loop(fn) -> float:
        return per_call_us(fn, calls)

    out: dict = {"native": driver().native_entry is not None, "cases": {}}
    for shape, dims, dtype in CASES:
        x = (torch.randn(shape, device="cuda") * 10).to(getattr(torch, dtype))
        fns = {"ours": lambda: ops.permute(x, dims), "eager": lambda: x.permute(dims).contiguous()}
        if not torch.equal(fns["ours"]().view(torch.uint8), fns["eager"]().view(torch.uint8)):
            raise SystemExit(f"ops.permute{shape, dims} {dtype} differs from eager")
        times: dict = {label: [] for label in fns}
        for _ in range(repeats):
            for label, fn in fns.items():
                times[label].append(loop(fn))
        out["cases"][f"{dtype} {list(shape)} {dims}"] = {label: statistics.median(v) for label, v in times.items()}
    x = torch.empty((256, 512), device="cuda", dtype=torch.bfloat16)
    device, dt = x.device, x.dtype
    allocs = {"x.new_empty(shape)": lambda: x.new_empty((512, 256)),
              "torch.empty(shape, dtype=, device=)": lambda: torch.empty((512, 256), dtype=dt, device=device)}
    out["alloc_us"] = {label: statistics.median(loop(fn) for _ in range(repeats)) for label, fn in allocs.items()}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--out", default="")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(_child(args.calls, args.repeats)))
        return
    from harness.environment import environment
    from harness.results import write_outputs

    runs = []
    for round_ in range(args.rounds):
        for pure in ("0", "1"):
            env = dict(os.environ, LINEAR_LAYOUTS_PURE_PYTHON=pure)
            done = subprocess.run([sys.executable, __file__, "--child", "--calls", str(args.calls), "--repeats",
                                   str(args.repeats)], env=env, check=True, capture_output=True, text=True)
            run = json.loads(done.stdout.strip().splitlines()[-1])
            run["round"] = round_
            runs.append(run)
            print(f"round {round_} {'C' if run['native'] else 'ctypes'}: " + ", ".join(
                f"{c} {v['ours'] / v['eager']:.2f}" for c, v in run["cases"].items()), flush=True)
    data = {"environment": environment(device=True), "calls": args.calls, "repeats": args.repeats, "runs": runs}
    if args.out:
        write_outputs(Path(args.out), "ops_host_bench", data, _markdown(data))


def _markdown(data: dict) -> str:
    env = data["environment"]
    lines = [f"# Host µs per call, ours / PyTorch eager ({env['gpu']}, {env['date']})", "",
             f"Python {env['python']}, torch {env.get('torch')}. {data['calls']} calls then a synchronization, median "
             f"of {data['repeats']} loops, ours and eager interleaved in each process; processes alternate between "
             "the C launch (`ops._claunch`) and `ctypes` (`LINEAR_LAYOUTS_PURE_PYTHON=1`). Cells: ours / eager "
             "(ours µs, eager µs).", ""]
    runs = data["runs"]
    cases = list(runs[0]["cases"])
    header = ["case"] + [f"{'C' if r['native'] else 'ctypes'} #{r['round']}" for r in runs]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for case in cases:
        cells = [f"{r['cases'][case]['ours'] / r['cases'][case]['eager']:.2f} ({r['cases'][case]['ours']:.1f}, "
                 f"{r['cases'][case]['eager']:.1f})" for r in runs]
        lines.append(f"| {case} | " + " | ".join(cells) + " |")
    for native, label in ((True, "C launch"), (False, "ctypes")):
        ratios = [r["cases"][c]["ours"] / r["cases"][c]["eager"] for r in runs if r["native"] == native for c in cases]
        if ratios:
            worst = [max(r["cases"][c]["ours"] / r["cases"][c]["eager"] for r in runs if r["native"] == native)
                     for c in cases]
            lines += ["", f"- {label}: ours / eager from {min(ratios):.2f} to {max(ratios):.2f}; cases slower than "
                          f"eager in every round: {sum(1 for c in cases if min(r['cases'][c]['ours'] / r['cases'][c]['eager'] for r in runs if r['native'] == native) > 1.0)} of {len(cases)}; "
                          f"in at least one round: {sum(1 for w in worst if w > 1.0)} of {len(cases)}"]
    lines += ["", "Allocation of the output (µs per call, C-launch processes): " + "; ".join(
        f"{label} {statistics.median(r['alloc_us'][label] for r in runs if r['native']):.2f}"
        for label in runs[0]["alloc_us"])]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
