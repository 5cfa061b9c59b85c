"""Autotuning of the fp8 cast-transpose (``ops.tune``) on the device, on problems drawn by a seed: odd shapes (as
``cast_flat_bench.drawn``) and aligned ones (sides multiples of 16), 8 to 160 MiB of input. Each case's first
``ops.cast_transpose`` call with ``AUTOTUNE`` on tunes it (host seconds kept); then the planner's call, the tuned
call and ``cast_launches`` at each of ``launches.cast_choices`` are checked bit for bit against PyTorch and timed
together (CUDA graphs, ``harness.timing.time_together``). Bandwidth counts ``X`` read once, ``C`` and ``T`` written
once, against the 1 GiB copy.

    PYTHONPATH=src python3 benchmarks/cast_tune_bench.py --mode prepare --seed N   # CPU: cubins
    PYTHONPATH=src python3 benchmarks/cast_tune_bench.py --seed N --out DIR        # device
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import time
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

BUILD = harness.BUILD / "cast_tune"
os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(BUILD / "cache"))

from harness import ops_cases  # noqa: E402

WIDTH = {"bf16": 2, "fp16": 2, "fp32": 4}
_BASE, _OTHER, _THIRD = 1 << 40, 2 << 40, 3 << 40


def drawn(seed: int, count: int) -> list[tuple[int, int, str]]:
    """``count`` ``m x n`` problems of 8 to 160 MiB of input, drawn by ``seed``: odd and aligned (both sides
    multiples of 16) in turn."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        fmt = rng.choice(("bf16", "bf16", "fp16", "fp32"))
        target = rng.uniform(8, 160) * 2**20 / WIDTH[fmt]
        m = rng.randint(500, 16000)
        n = max(17, int(target / m))
        out.append((m, n | 1, fmt) if len(out) % 2 == 0 else (m // 16 * 16, max(16, n // 16 * 16), fmt))
    return out


def choices(m: int, n: int, fmt: str, x: int, c: int, t: int, amax: int, device) -> dict:
    """``{label: launches}``: ``cast_launches`` at each of ``cast_choices`` (the planner's own among them)."""
    from linear_layouts.ops.launches import cast_choices, cast_launches
    from linear_layouts.ops.tune import tune_label

    out = {}
    for choice in cast_choices(fmt, m, n, x, c, t):
        option = {"misaligned": choice} if isinstance(choice, str) else {"tile": choice}
        out[tune_label(choice)] = cast_launches(fmt, "e4m3", m, n, x, c, t, None, 0.37, amax, device, **option)
    return out


def prepare(cases) -> None:
    from linear_layouts.ops.kernels import GridShape
    from linear_layouts.ops.launches import cast_launches

    (BUILD / "cache").mkdir(parents=True, mode=0o700, exist_ok=True)
    device = GridShape(ops_cases.SMS, ops_cases.L2_BYTES)
    lists = []
    for m, n, fmt in cases:
        lists += choices(m, n, fmt, _BASE, _OTHER, _THIRD, 4 << 40, device).values()
        lists.append(cast_launches(fmt, "e4m3", m, n, _BASE, _OTHER, _THIRD, None, 0.37, 4 << 40, device))
    count, seconds = ops_cases.compile_sources(ops_cases.launch_sources(lists), "sm_90", 2)
    print(f"prepared {count} kernels for sm_90 in {seconds:.0f} s into {BUILD / 'cache'}")


def bench_case(m: int, n: int, fmt: str, device, copy_tbs: float) -> dict:
    import torch

    from harness.timing import time_together
    from linear_layouts import ops
    from linear_layouts.ops import tune

    x, c, t, amax, expected = ops_cases.cast_buffers(m, n, fmt)
    expected_amax = x.float().abs().max()
    f8 = torch.float8_e4m3fn

    def call(tuned: bool):
        def run():
            tune.AUTOTUNE = tuned
            try:
                ops.cast_transpose(x, f8, 0.37, out=c.view(f8), out_t=t.view(f8), amax=amax)
            finally:
                tune.AUTOTUNE = False
        return run

    def correct(run) -> bool:
        c.fill_(0xAB), t.fill_(0xAB), amax.zero_()
        run()
        torch.cuda.synchronize()
        return torch.equal(c, expected) and torch.equal(t, expected.t().contiguous()) and bool(amax[0] == expected_amax)

    row = dict(m=m, n=n, fmt=fmt, kernels={})
    before = len(tune.tunings)
    torch.cuda.synchronize()
    start = time.perf_counter()
    call(True)()
    torch.cuda.synchronize()
    row["tune_s"] = round(time.perf_counter() - start, 3)
    new = tune.tunings[before:]
    row["tuned"] = new[-1].chosen if new else None
    fns = {"planner": call(False), "tuned": call(True)}
    for label, items in choices(m, n, fmt, x.data_ptr(), c.data_ptr(), t.data_ptr(), amax.data_ptr(), device).items():
        fns[label] = ops_cases.runner(items)
    for label, fn in fns.items():
        row["kernels"][label] = dict(correct=correct(fn))
    moved = m * n * (WIDTH[fmt] + 2)
    import gpu_suite

    for label, us in time_together(lambda fn: gpu_suite._time(fn, repeats=5, inner=10), fns).items():
        row["kernels"][label].update(us=round(us, 2), of_copy=round(moved / us / 1e6 / copy_tbs, 3))
    return row


def run(out: Path, cases, stem: str) -> None:
    import torch

    env, device, copy_tbs = ops_cases.device_run_setup()
    rows = []
    for m, n, fmt in cases:
        rows.append(bench_case(m, n, fmt, device, copy_tbs))
        k = rows[-1]["kernels"]
        print(f"{m} x {n} {fmt}: planner {k['planner']['us']} tuned {k['tuned']['us']} ({rows[-1]['tuned']}, "
              f"{rows[-1]['tune_s']} s); all correct {all(v['correct'] for v in k.values())}", flush=True)
        torch.cuda.empty_cache()

    def geomean(values):
        return math.exp(sum(map(math.log, values)) / len(values))

    tuned = [r for r in rows if r["tuned"]]
    gain = [r["kernels"]["planner"]["us"] / r["kernels"]["tuned"]["us"] for r in tuned]
    lines = [f"# fp8 cast-transpose, autotuned ({env.get('gpu', '')}, {env.get('date', '')})", "",
             f"torch {env.get('torch', '')}; 1 GiB copy {copy_tbs:.3f} TB/s. Cells: µs (% of the copy bandwidth of the "
             f"bytes moved). Tuned {len(tuned)} of {len(rows)}" + (
                 f": planner / tuned geomean {geomean(gain):.3f}, min {min(gain):.3f}, max {max(gain):.3f}"
                 if gain else "") + f"; every result bit-exact: "
             f"{all(v['correct'] for r in rows for v in r['kernels'].values())}.", "",
             "| shape | input | planner | tuned (choice, tuning s) | best choice | planner / tuned |", "|---|---|---|---|---|---|"]
    for r in rows:
        k = r["kernels"]
        best = min((label for label in k if label not in ("planner", "tuned")), key=lambda label: k[label]["us"])
        lines.append(f"| {r['m']} x {r['n']} | {r['fmt']} | {k['planner']['us']} ({100 * k['planner']['of_copy']:.1f}%)"
                     f" | {k['tuned']['us']} ({100 * k['tuned']['of_copy']:.1f}%; {r['tuned']}, {r['tune_s']} s) | "
                     f"{k[best]['us']} ({best}) | {k['planner']['us'] / k['tuned']['us']:.3f} |")
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.json").write_text(json.dumps(dict(environment=env, copy_tbs=copy_tbs, cases=rows), indent=1))
    (out / f"{stem}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mode", choices=("prepare", "run"), default="run")
    parser.add_argument("--out", type=Path, default=BUILD / "out")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--cases", type=int, default=12)
    args = parser.parse_args()
    cases = drawn(args.seed, args.cases)
    if args.mode == "prepare":
        prepare(cases)
    else:
        run(args.out, cases, f"cast_tune_{args.seed}")


if __name__ == "__main__":
    main()
