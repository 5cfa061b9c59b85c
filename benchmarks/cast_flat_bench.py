"""The fp8 cast-transpose of odd shapes on the device: ``ops.launches.cast_launches``' kernels for rows that 16
bytes do not align, ``chunked`` (``codegen.cast_chunks``: one fused kernel) against ``flat`` (``codegen.cast_flat``:
the cast in ``X``'s flat order, then ``T = C^T`` as a transpose of ``C``'s bytes, ``codegen.permute_bytes`` where
``ops`` takes it), each result checked bit for bit against PyTorch's ``(scale x).clamp(-max, max).to(float8)`` and
``x.abs().max()``, and ``auto`` (``ops``' choice between them), all timed together (CUDA graphs, ``harness.timing.time_together``). Bandwidth counts the bytes
moved: ``X`` read once, ``C`` and ``T`` written once (``m n (w + 2)``); "of copy" divides by the 1 GiB copy's.

``--seed N`` draws ``--cases`` odd shapes (8 to 160 MiB of input) instead of the fixed ones.

    PYTHONPATH=src python3 benchmarks/cast_flat_bench.py --mode prepare [--seed N]   # CPU: cubins
    PYTHONPATH=src python3 benchmarks/cast_flat_bench.py --out DIR [--seed N]        # device
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

BUILD = harness.BUILD / "cast_flat"
os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(BUILD / "cache"))

from harness import ops_cases  # noqa: E402

#: (m, n, input format): the sweep's odd shape and its neighbours, a small one, every input format.
CASES = (
    (4095, 11007, "bf16"), (4097, 11009, "bf16"), (8191, 8193, "bf16"), (1000, 3000, "bf16"),
    (4095, 11007, "fp16"), (4095, 11007, "fp32"), (8191, 8193, "fp32"), (3001, 5003, "bf16"),
)
CONTENDERS = ("chunked", "flat", "auto")
WIDTH = {"bf16": 2, "fp16": 2, "fp32": 4}
_BASE, _OTHER, _THIRD = 1 << 40, 2 << 40, 3 << 40


def drawn(seed: int, count: int) -> list[tuple[int, int, str]]:
    """``count`` odd ``m x n`` problems of 8 to 160 MiB of input, drawn by ``seed``."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        fmt = rng.choice(("bf16", "bf16", "fp16", "fp32"))
        target = rng.uniform(8, 160) * 2**20 / WIDTH[fmt]
        m = rng.randint(500, 16000)
        n = max(17, int(target / m)) | 1
        out.append((m, n, fmt))
    return out


def launches(m: int, n: int, fmt: str, x: int, c: int, t: int, amax: int, device) -> dict:
    from linear_layouts.ops.launches import cast_launches

    return {label: cast_launches(fmt, "e4m3", m, n, x, c, t, None, 0.37, amax, device, label) for label in CONTENDERS}


def prepare(cases) -> None:
    from linear_layouts.ops.kernels import GridShape

    (BUILD / "cache").mkdir(parents=True, mode=0o700, exist_ok=True)
    device = GridShape(ops_cases.SMS, ops_cases.L2_BYTES)
    sources = ops_cases.launch_sources(items for m, n, fmt in cases
                                       for items in launches(m, n, fmt, _BASE, _OTHER, _THIRD, 4 << 40, device).values())
    count, seconds = ops_cases.compile_sources(sources, "sm_90", 2)
    print(f"prepared {count} kernels for sm_90 in {seconds:.0f} s into {BUILD / 'cache'}")


def _time(fn) -> float:
    import gpu_suite

    return gpu_suite._time(fn, repeats=5, inner=10)


def bench_case(m: int, n: int, fmt: str, device, copy_tbs: float) -> dict:
    import torch

    from harness.timing import time_together

    x, c, t, amax, expected = ops_cases.cast_buffers(m, n, fmt)
    expected_amax = x.float().abs().max()
    row = dict(m=m, n=n, fmt=fmt, kernels={})
    fns = {}
    for label, items in launches(m, n, fmt, x.data_ptr(), c.data_ptr(), t.data_ptr(), amax.data_ptr(), device).items():
        run = ops_cases.runner(items)
        c.fill_(0xAB), t.fill_(0xAB), amax.zero_()
        run()
        torch.cuda.synchronize()
        correct = (torch.equal(c, expected) and torch.equal(t, expected.t().contiguous())
                   and bool(amax[0] == expected_amax))
        row["kernels"][label] = dict(correct=correct, kernels=[i.kernel.name for i in items if hasattr(i, "kernel")])
        fns[label] = run
    moved = m * n * (WIDTH[fmt] + 2)
    for label, us in time_together(_time, fns).items():
        row["kernels"][label].update(us=round(us, 2), of_copy=round(moved / us / 1e6 / copy_tbs, 3))
    return row


def run(out: Path, cases, stem: str) -> None:
    import torch

    env, device, copy_tbs = ops_cases.device_run_setup()
    rows = []
    for m, n, fmt in cases:
        rows.append(bench_case(m, n, fmt, device, copy_tbs))
        k = rows[-1]["kernels"]
        print(f"{m} x {n} {fmt}: " + ", ".join(f"{lab} {k[lab]['us']} us ({100 * k[lab]['of_copy']:.1f}%"
                                                 f"{'' if k[lab]['correct'] else ', WRONG'})" for lab in CONTENDERS),
              flush=True)
        torch.cuda.empty_cache()
    ratios = [r["kernels"]["chunked"]["us"] / r["kernels"]["flat"]["us"] for r in rows]
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
    auto = [r["kernels"]["chunked"]["us"] / r["kernels"]["auto"]["us"] for r in rows
            if r["kernels"]["auto"]["kernels"] == r["kernels"]["flat"]["kernels"]]
    lines = [f"# fp8 cast-transpose of odd shapes: chunked against flat ({env.get('gpu', '')}, {env.get('date', '')})",
             "", f"torch {env.get('torch', '')}; 1 GiB copy {copy_tbs:.3f} TB/s. Cells: µs (% of the copy bandwidth of "
             "the bytes moved: X once, C and T once). chunked / flat: geomean "
             f"{geo:.3f}, min {min(ratios):.3f}, max {max(ratios):.3f}. `auto` (`MISALIGNED_CAST`) took flat on "
             f"{len(auto)} of {len(rows)}" + (f": chunked / auto there geomean "
             f"{math.exp(sum(map(math.log, auto)) / len(auto)):.3f}, min {min(auto):.3f}" if auto else "") +
             f"; every result bit-exact: {all(k['correct'] for r in rows for k in r['kernels'].values())}.", "",
             "| shape | input | chunked | flat | auto | chunked / flat | flat's kernels |", "|---|---|---|---|---|---|---|"]
    for r, ratio in zip(rows, ratios):
        k = r["kernels"]
        lines.append(f"| {r['m']} x {r['n']} | {r['fmt']} | " + " | ".join(
            f"{k[lab]['us']} ({100 * k[lab]['of_copy']:.1f}%){'' if k[lab]['correct'] else ' WRONG'}"
            for lab in CONTENDERS) + f" | {ratio:.3f} | {', '.join(k['flat']['kernels'])} |")
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.json").write_text(json.dumps(dict(environment=env, copy_tbs=copy_tbs, cases=rows), indent=1))
    (out / f"{stem}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:3]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("prepare", "run"), default="run")
    parser.add_argument("--out", type=Path, default=Path("cast_flat_out"))
    parser.add_argument("--seed", type=int)
    parser.add_argument("--cases", type=int, default=8)
    args = parser.parse_args()
    cases = drawn(args.seed, args.cases) if args.seed is not None else list(CASES)
    if args.mode == "prepare":
        prepare(cases)
    else:
        run(args.out, cases, "cast_flat" + (f"_seed{args.seed}" if args.seed is not None else ""))


if __name__ == "__main__":
    sys.exit(main())
