"""Why transposes into rows that 16 bytes do not align run below the copy bandwidth: Nsight Compute's counters of
each contender of ``chunked_transpose_bench`` (the chunked kernel, ``ops`` as it is, the tiled kernel) on a few
odd shapes and one aligned neighbour, one profiled launch each after ``--warm`` others (device only).

Each contender's output is checked against ``x.permute(dims).contiguous()`` first. Counters: duration, DRAM bytes
read and written (a partly written sector that leaves L2 costs a DRAM read), L2 sectors, shared wavefronts and
conflicts, instructions, occupancy and the warp stalls (``ops_ncu_compare.METRICS``).

    PYTHONPATH=src:benchmarks python3 benchmarks/ops_odd_ncu.py --mode prepare        # CPU: cubins for sm_90
    PYTHONPATH=src:benchmarks python3 benchmarks/ops_odd_ncu.py --out DIR [--set bytes]   # device
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import chunked_transpose_bench as ctb  # sets LINEAR_LAYOUTS_CACHE to its build cache
from harness import ops_cases
from ops_ncu_compare import METRICS, _profile

#: (shape, dims, dtype): odd 8-bit, the aligned neighbour of the first, odd 16-bit (2-D and a 3-D reversal).
CASES = (
    ((6049, 8459), (1, 0), "uint8"),
    ((11335, 12184), (1, 0), "uint8"),
    ((6048, 8464), (1, 0), "uint8"),
    ((6415, 12552), (1, 0), "float16"),
    ((345, 568, 384), (2, 1, 0), "bfloat16"),
)
#: ``--set bytes``: the byte transpose (``byte_transpose_bench``) with its output rows odd, its input rows odd, both
#: aligned (forced there), and a case where it trailed the tiled kernel.
BYTE_CASES = (
    ((6049, 8464), (1, 0), "uint8"),
    ((6048, 8459), (1, 0), "uint8"),
    ((6048, 8464), (1, 0), "uint8"),
    ((9648, 9480), (1, 0), "uint8"),
)
#: The chunked tiles timed (``chunked_transpose_bench.CHUNKED_VARIANTS`` labels); others of a case are all kept.
CHUNKED = ("128x128/16w s32", "128x64/16w s32", "128x128/16w", "128x64/16w")
EXTRA = ["dram__sectors_read.sum", "dram__sectors_write.sum", "lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum",
         "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio",
         "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio",
         "sm__throughput.avg.pct_of_peak_sustained_elapsed", "l1tex__throughput.avg.pct_of_peak_sustained_elapsed"]


def _contenders(case: int, src: int, dst: int) -> dict:
    from linear_layouts.ops.kernels import GridShape

    if case >= len(CASES):  # --set bytes
        import byte_transpose_bench as btb

        shape, dims, _ = BYTE_CASES[case - len(CASES)]
        out = btb.contenders(shape, dims, src, dst, GridShape(ops_cases.SMS, ops_cases.L2_BYTES))
        return {label: out[label] for label in ("before", "bytes 128x128/9w", "bytes 256x128/17w")}
    shape, dims, dtype = CASES[case]
    out = ctb.contenders(shape, dims, ctb.ITEMSIZE[dtype], src, dst, GridShape(ops_cases.SMS, ops_cases.L2_BYTES))
    kept: dict[tuple, str] = {}  # the same launches under several labels: profiled once, the labels joined
    for label, items in out.items():
        if label.startswith("chunked ") and label[len("chunked "):] not in CHUNKED:
            continue
        same = tuple((item.kernel.name, item.ctas) for item in items if hasattr(item, "kernel"))
        kept[same] = f"{kept[same]} = {label}" if same in kept else label
    return {label: out[label.split(" = ")[0]] for label in kept.values()}


def prepare() -> None:
    """Every contender's kernels compiled into the chunked benchmark's cache."""
    ctb.prepare(2, [(shape, dims, dtype, 0) for shape, dims, dtype in CASES])


def _setup(case: int):
    import torch

    shape, dims, dtype = (CASES + BYTE_CASES)[case]
    x = ops_cases.random_tensor(shape, dtype)
    out = torch.empty(tuple(shape[d] for d in dims), device="cuda", dtype=x.dtype)
    runs = {label: ops_cases.runner(items) for label, items in _contenders(case, x.data_ptr(), out.data_ptr()).items()}
    return x, out, runs


def child(args) -> int:
    import torch

    _, _, runs = _setup(args.case)
    for _ in range(args.warm + 1):
        runs[args.which]()
    torch.cuda.synchronize()
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=("prepare", "device"), default="device")
    ap.add_argument("--out", default="/tmp/ops_odd_ncu")
    ap.add_argument("--warm", type=int, default=2)
    ap.add_argument("--set", choices=("odd", "bytes"), default="odd", help="odd: CASES; bytes: BYTE_CASES")
    ap.add_argument("--case", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--which", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.mode == "prepare":
        prepare()
        return 0
    if args.which:
        return child(args)
    import torch

    metrics = METRICS + EXTRA
    report = {}
    for case, (shape, dims, dtype) in enumerate(CASES + BYTE_CASES):
        if (case >= len(CASES)) != (args.set == "bytes"):
            continue
        x, out, runs = _setup(case)
        expected = x.permute(dims).contiguous()
        rows = {}
        for label, run in runs.items():
            out.zero_()
            run()
            torch.cuda.synchronize()
            correct = bool(torch.equal(out.view(torch.uint8), expected.view(torch.uint8)))
            cmd = [sys.executable, __file__, "--case", str(case), "--which", label, "--warm", str(args.warm)]
            result = _profile(cmd, args.warm, metrics)
            m = (result.get("launches") or [{}])[0].get("metrics", {})
            rows[label] = dict(correct=correct, metrics=m, rc=result["rc"], tail=result["tail"][-300:])
            print(f"{shape} {dtype} {label}: correct {correct}, {m.get('gpu__time_duration.sum', 0) / 1e3:.1f} us, "
                  f"DRAM r/w {m.get('dram__bytes_read.sum', 0) / 2**20:.1f}/"
                  f"{m.get('dram__bytes_write.sum', 0) / 2**20:.1f} MiB", flush=True)
        report[f"{list(shape)} {list(dims)} {dtype}"] = dict(nbytes=x.numel() * x.element_size(), rows=rows)
        del x, out
    env = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "gpu": torch.cuda.get_device_name(0),
           "torch": torch.__version__}
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = "ops_odd_ncu" if args.set == "odd" else "ops_odd_ncu_bytes"
    (out_dir / f"{stem}.json").write_text(json.dumps({"environment": env, "cases": report}, indent=1))
    lines = [f"# Odd-row transposes under ncu ({env['gpu']}, {env['date']}, torch {env['torch']})", "",
             f"One profiled launch after {args.warm} warm ones (ncu flushes the caches before it); "
             "DRAM MiB against the tensor's size.", ""]
    for name, case in report.items():
        labels = list(case["rows"])
        lines += [f"## {name} ({case['nbytes'] / 2**20:.1f} MiB)", "", "| metric | " + " | ".join(labels) + " |",
                  "|---|" + "---|" * len(labels)]
        lines.append("| correct | " + " | ".join(str(case["rows"][k]["correct"]) for k in labels) + " |")
        for metric in metrics:
            cells = []
            for k in labels:
                value = case["rows"][k]["metrics"].get(metric)
                cells.append("-" if value is None else f"{value:,.3g}" if abs(value) < 1e4 else f"{value:,.0f}")
            lines.append(f"| {metric} | " + " | ".join(cells) + " |")
        lines.append("")
    (out_dir / f"{stem}.md").write_text("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
