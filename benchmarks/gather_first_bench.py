"""Where gathering a view first pays (``ops.plan.gathers_first``, ``GATHER_FIRST_MIN_BYTES``).

A view with no stride-1 dim whose output's last dim is not its innermost (``w[:, ::2].t()``) either moves in one
pass, rows of one element read a row stride apart, or is gathered first into a scratch tensor by one launch and
then permuted from that dense copy by another. The second form reads faster but costs the call a second launch
and an allocation. Per seed, random such views (2-D and 3-D, steps 2-4, the innermost dim at least 1024 long so
that ours moves them, sizes log-uniform from 16 KiB to 64 MiB, 1- to 8-byte elements); for each, the wall time per
call of ``ops.permute(view, dims)`` with the view gathered first and in one pass, and of PyTorch eager's
``view.permute(dims).contiguous()``: ``CALLS`` calls then one synchronization, the median of ``ROUNDS`` rounds, the
forms in turn within each round (what a program that launches back to back sees, host and device together). Every
output is checked bit for bit against eager's.

``--threshold-from RUN.json``: the smallest power-of-two size from which gathering first cost that run's views the
least in all, then each of this run's views under that rule against its better form (a seed held out from it).

    PYTHONPATH=src:benchmarks python3 benchmarks/gather_first_bench.py --seed 1 --out DIR           # device
    PYTHONPATH=src:benchmarks python3 benchmarks/gather_first_bench.py --mode report --seed 2 --out DIR \\
        --threshold-from DIR/gather_first_1.json                                                    # CPU
"""

from __future__ import annotations

import argparse
import math
import random
import time
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)
from harness import ops_cases
from harness.results import write_outputs

CALLS, ROUNDS = 50, 7
DTYPES = ("uint8", "bfloat16", "float32", "float64")
#: The sizes (bytes of a view's elements) drawn between, and the thresholds tried.
LOW, HIGH = 16 << 10, 64 << 20
THRESHOLDS = tuple(1 << k for k in range(14, 28))


def random_views(seed: int, count: int) -> list[tuple]:
    """``(base shape, dtype, step, dims)``: the view is ``base[..., ::step]`` (its last dim ``C >= 1024``)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        dtype = rng.choice(DTYPES)
        w = ops_cases.ITEMSIZE[dtype]
        nbytes = math.exp(rng.uniform(math.log(LOW), math.log(HIGH)))
        step = rng.randint(2, 4)
        c = rng.choice((1024, 1536, 2048, 3000, 4096))
        rows = max(1, round(nbytes / (w * c)))
        if rng.random() < 0.5:
            out.append(((rows, c * step), dtype, step, (1, 0)))
        else:
            b = rng.randint(2, 8)
            r = max(1, rows // b)
            out.append(((b, r, c * step), dtype, step, rng.choice(((0, 2, 1), (2, 1, 0), (2, 0, 1)))))
    return out


def _per_call_us(fn) -> float:
    import torch

    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(CALLS):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / CALLS * 1e6


def bench_view(base_shape, dtype: str, step: int, dims) -> dict:
    import torch

    from linear_layouts import ops
    from linear_layouts.ops import dispatch, plan

    base = ops_cases.random_tensor(base_shape, dtype)
    view = base[..., ::step]
    expected = view.permute(dims).contiguous()
    nbytes = expected.numel() * expected.element_size()
    row = dict(base=list(base_shape), dtype=dtype, step=step, dims=list(dims), shape=list(view.shape),
               strides=list(view.stride()), bytes=nbytes, correct={}, us={})
    forms = {"gathered first": 0, "one pass": 1 << 62}
    samples: dict = {name: [] for name in [*forms, "eager"]}
    saved = plan.GATHER_FIRST_MIN_BYTES
    try:
        for _ in range(ROUNDS):
            for name, threshold in forms.items():
                plan.GATHER_FIRST_MIN_BYTES = threshold
                dispatch.call_plan.cache_clear()
                got = ops.permute(view, dims)  # plans, compiles at the first round; checked each round
                row["correct"][name] = row["correct"].get(name, True) and ops_cases.bit_equal(got, expected)
                samples[name].append(_per_call_us(lambda: ops.permute(view, dims)))
            samples["eager"].append(_per_call_us(lambda: view.permute(dims).contiguous()))
    finally:
        plan.GATHER_FIRST_MIN_BYTES = saved
        dispatch.call_plan.cache_clear()
    row["us"] = {name: round(sorted(t)[len(t) // 2], 2) for name, t in samples.items()}
    torch.cuda.synchronize()
    return row


def best_threshold(rows: list[dict]) -> int:
    """The smallest of ``THRESHOLDS`` whose rule (gather first from it on) costs ``rows`` the least time in all."""
    def total(t: int) -> float:
        return sum(r["us"]["gathered first" if r["bytes"] >= t else "one pass"] for r in rows)

    return min(THRESHOLDS, key=lambda t: (total(t), t))


def rule_rows(rows: list[dict], threshold: int) -> list[dict]:
    """Each row's time under the rule against its better form and against eager."""
    out = []
    for r in rows:
        chosen = "gathered first" if r["bytes"] >= threshold else "one pass"
        best = min(r["us"]["gathered first"], r["us"]["one pass"])
        out.append(dict(r, chosen=chosen, rule_us=r["us"][chosen], best_over_rule=round(best / r["us"][chosen], 3),
                        eager_over_rule=round(r["us"]["eager"] / r["us"][chosen], 3)))
    return out


def report(rows: list[dict], seed: int, threshold: int | None, source: str, environment: dict) -> str:
    from harness.timing import geomean

    lines = [f"# Views gathered first or moved in one pass, seed {seed} ({environment.get('gpu', '?')}, "
             f"{environment.get('date', '?')})", "",
             f"torch {environment.get('torch')}; µs per call of {CALLS} back-to-back calls then one synchronization, "
             f"median of {ROUNDS} rounds.", ""]
    if threshold is not None:
        ruled = rule_rows(rows, threshold)
        lines += [f"Rule: gather first from {threshold} bytes ({source}). Under it: best form / rule geomean "
                  f"{geomean([r['best_over_rule'] for r in ruled]):.3f}, lowest {min(r['best_over_rule'] for r in ruled):.3f}; "
                  f"eager / rule geomean {geomean([r['eager_over_rule'] for r in ruled]):.2f}, lowest "
                  f"{min(r['eager_over_rule'] for r in ruled):.2f}.", ""]
        rows = ruled
    lines += ["| view | dims | dtype | KiB | gathered first µs | one pass µs | eager µs | gathered / one pass | rule | "
              "correct |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: r["bytes"]):
        u = r["us"]
        lines.append(f"| {tuple(r['shape'])} at {tuple(r['strides'])} | {tuple(r['dims'])} | {r['dtype']} | "
                     f"{r['bytes'] / 1024:.0f} | {u['gathered first']} | {u['one pass']} | {u['eager']} | "
                     f"{u['gathered first'] / u['one pass']:.2f} | {r.get('chosen', '-')} | "
                     f"{all(r['correct'].values())} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    import json

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", default="measure", choices=["measure", "report"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=24)
    ap.add_argument("--out", default=str(harness.BUILD / "gather_first"))
    ap.add_argument("--threshold-from", default=None, help="a run whose views fix the rule (else this run's own)")
    args = ap.parse_args()
    out = Path(args.out)
    name = f"gather_first_{args.seed}"
    if args.mode == "measure":
        import gpu_suite

        environment = gpu_suite.environment()
        rows = []
        for base_shape, dtype, step, dims in random_views(args.seed, args.count):
            rows.append(bench_view(base_shape, dtype, step, dims))
            print(rows[-1], flush=True)
    else:
        saved = json.loads((out / f"{name}.json").read_text())
        rows, environment = saved["rows"], saved["environment"]
    if args.threshold_from:
        threshold, source = best_threshold(json.loads(Path(args.threshold_from).read_text())["rows"]), \
            f"chosen on {Path(args.threshold_from).name}"
    else:
        threshold, source = best_threshold(rows), "chosen on this run's views"
    write_outputs(out, name, dict(environment=environment, seed=args.seed, rows=rows, threshold=threshold),
                  report(rows, args.seed, threshold, source, environment))


if __name__ == "__main__":
    main()
