"""Where gathering a view first pays (``ops.launches.gathers`` and ``framework_gathers``).

A view with no stride-1 dim whose output's last dim is not its innermost (``w[:, ::2].t()``) either moves in one
pass, rows of one element read a row stride apart, or is gathered first into a scratch tensor by one launch and
then permuted from that dense copy by another, or is left to the framework's own strided copy. The second form
reads faster but costs the call a second launch and an allocation. Per seed, random such views (2-D and 3-D, steps 2-4, the innermost dim at least 1024 long so
that ours moves them, sizes log-uniform from 16 KiB to 64 MiB, 1- to 8-byte elements); for each, the wall time per
call of ``ops.permute(view, dims)`` with the view gathered first by ours, in one pass, and as the ops decide
(``ops``), and of PyTorch eager's
``view.permute(dims).contiguous()``: ``CALLS`` calls then one synchronization, the median of ``ROUNDS`` rounds, the
forms in turn within each round (what a program that launches back to back sees, host and device together). Every
output is checked bit for bit against eager's.

The report puts each view under ``launches.gathers`` as it is now (``--mode report`` redoes it from a run's JSON):
the rule was fitted on seed 1 and checked on seeds drawn after it.

    PYTHONPATH=src:benchmarks python3 benchmarks/gather_first_bench.py --seed 1 --out DIR           # device
    PYTHONPATH=src:benchmarks python3 benchmarks/gather_first_bench.py --mode report --seed 1 --out DIR  # CPU
"""

from __future__ import annotations

import argparse
import math
import random
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)
from harness import ops_cases
from harness.results import write_outputs
from harness.timing import per_call_us

CALLS, ROUNDS = 50, 7
DTYPES = ("uint8", "bfloat16", "float32", "float64")
#: The sizes (bytes of a view's elements) drawn between.
LOW, HIGH = 16 << 10, 64 << 20


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


def bench_view(base_shape, dtype: str, step: int, dims) -> dict:
    import torch

    from linear_layouts import ops
    from linear_layouts.ops import dispatch, launches

    base = ops_cases.random_tensor(base_shape, dtype)
    view = base[..., ::step]
    expected = view.permute(dims).contiguous()
    nbytes = expected.numel() * expected.element_size()
    row = dict(base=list(base_shape), dtype=dtype, step=step, dims=list(dims), shape=list(view.shape),
               strides=list(view.stride()), bytes=nbytes, correct={}, us={})
    saved = launches.GATHER_MIN_WORK, launches.FRAMEWORK_GATHER_BYTES
    forms = {"gathered first": (0, 0), "one pass": (1 << 62, 0), "ops": saved}
    samples: dict = {name: [] for name in [*forms, "eager"]}
    try:
        for _ in range(ROUNDS):
            for name, (work, framework) in forms.items():
                launches.GATHER_MIN_WORK, launches.FRAMEWORK_GATHER_BYTES = work, framework
                dispatch.call_plan.cache_clear()
                got = ops.permute(view, dims)  # plans, compiles at the first round; checked each round
                row["correct"][name] = row["correct"].get(name, True) and ops_cases.bit_equal(got, expected)
                samples[name].append(per_call_us(lambda: ops.permute(view, dims), CALLS))
            samples["eager"].append(per_call_us(lambda: view.permute(dims).contiguous(), CALLS))
    finally:
        launches.GATHER_MIN_WORK, launches.FRAMEWORK_GATHER_BYTES = saved
        dispatch.call_plan.cache_clear()
    row["us"] = {name: round(sorted(t)[len(t) // 2], 2) for name, t in samples.items()}
    torch.cuda.synchronize()
    return row


def one_pass_work(row: dict) -> tuple[int, int, str]:
    """``(elements, CTAs of the one pass, the form the ops take now)`` of a row's view."""
    from linear_layouts.ops.launches import ONE_PASS_CTA_ELEMENTS, framework_gathers, gathers, one_pass_work as work
    from linear_layouts.ops.plan import memory_permutation

    w = ops_cases.ITEMSIZE[row["dtype"]]
    shape, strides, dims = memory_permutation(tuple(row["shape"]), tuple(row["strides"]), tuple(row["dims"]))
    ctas = (work(shape, dims, w, strides) - math.prod(shape)) // ONE_PASS_CTA_ELEMENTS
    form = ("framework" if framework_gathers(shape, dims, w, strides) else "gathered first"
            if gathers(shape, dims, w, strides) else "one pass")
    return math.prod(shape), ctas, form


def rule_rows(rows: list[dict]) -> list[dict]:
    """Each row under the rules as they are now against the better of ours and eager's: the chosen form's time
    (eager's for the framework's copy, which the ops call with their dispatch's few µs more; the run's measured
    ``ops`` form, under the rules it ran with, is in the table)."""
    out = []
    for r in rows:
        elements, ctas, chosen = one_pass_work(r)
        rule_us = r["us"]["eager" if chosen == "framework" else chosen]
        best = min(r["us"]["gathered first"], r["us"]["one pass"], r["us"]["eager"])
        out.append(dict(r, elements=elements, ctas=ctas, chosen=chosen, rule_us=rule_us,
                        best_over_rule=round(best / rule_us, 3),
                        eager_over_rule=round(r["us"]["eager"] / rule_us, 3),
                        eager_over_gathered=round(r["us"]["eager"] / r["us"]["gathered first"], 3)))
    return out


def report(rows: list[dict], seed: int, environment: dict) -> str:
    from harness.timing import geomean
    from linear_layouts.ops.launches import FRAMEWORK_GATHER_BYTES, GATHER_MIN_WORK, ONE_PASS_CTA_ELEMENTS

    ruled = rule_rows(rows)
    lines = [f"# Views gathered first or moved in one pass, seed {seed} ({environment.get('gpu', '?')}, "
             f"{environment.get('date', '?')})", "",
             f"torch {environment.get('torch')}; µs per call of {CALLS} back-to-back calls then one synchronization, "
             f"median of {ROUNDS} rounds. Rules: gather first where the one pass's elements + "
             f"{ONE_PASS_CTA_ELEMENTS} x its CTAs >= {GATHER_MIN_WORK} (`launches.gathers`), by the framework's copy "
             f"below {FRAMEWORK_GATHER_BYTES} bytes or where the output's rows are short (`launches.framework_gathers`). "
             "`ops`: measured as the ops decided under the rules of its run; `rule`: the form the rules as they are now choose, timed as that form "
             "(the framework's copy as eager). Best: the fastest of gathered, one pass and eager.", "",
             f"- under the rules: best / rule geomean {geomean([r['best_over_rule'] for r in ruled]):.3f}, lowest "
             f"{min(r['best_over_rule'] for r in ruled):.3f}; eager / rule geomean "
             f"{geomean([r['eager_over_rule'] for r in ruled]):.2f}, lowest {min(r['eager_over_rule'] for r in ruled):.2f}",
             f"- always gathered first (before the rule): best form / gathered geomean "
             f"{geomean([min(r['us'].values()) / r['us']['gathered first'] for r in ruled]):.3f}; eager / gathered "
             f"geomean {geomean([r['eager_over_gathered'] for r in ruled]):.2f}, lowest "
             f"{min(r['eager_over_gathered'] for r in ruled):.2f}",
             f"- correct: {sum(all(r['correct'].values()) for r in ruled)}/{len(ruled)} (every form)", "",
             "| view | dims | dtype | KiB | one-pass CTAs | work (M) | gathered first µs | one pass µs | eager µs | rule "
             "| rule µs | best / rule | eager / rule | ops µs (its run) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(ruled, key=lambda r: r["bytes"]):
        u = r["us"]
        work = (r["elements"] + ONE_PASS_CTA_ELEMENTS * r["ctas"]) / 1e6
        lines.append(f"| {tuple(r['shape'])} at {tuple(r['strides'])} | {tuple(r['dims'])} | {r['dtype']} | "
                     f"{r['bytes'] / 1024:.0f} | {r['ctas']} | {work:.2f} | {u['gathered first']} | {u['one pass']} | "
                     f"{u['eager']} | {r['chosen']} | {r['rule_us']} | {r['best_over_rule']:.2f} | "
                     f"{r['eager_over_rule']:.2f} | {u.get('ops', '-')} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    import json

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", default="measure", choices=["measure", "report"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=24)
    ap.add_argument("--out", default=str(harness.BUILD / "gather_first"))
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
    write_outputs(out, name, dict(environment=environment, seed=args.seed, rows=rows),
                  report(rows, args.seed, environment))


if __name__ == "__main__":
    main()
