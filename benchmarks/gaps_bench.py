"""Views with gaps or repeats (a fused ``qkv``'s ``q`` and ``k``, column slices of weights, channel slices of images,
``expand``, every other column): ``ops.permute`` reading them at their strides, against PyTorch eager
``view.permute(dims).contiguous()`` and the two passes ``ops.permute(view.contiguous(), dims)`` took before; and
outputs with gaps (``out=`` a window of a KV cache or a fused buffer) against ``window.copy_(x.permute(dims))``.

A fixed set of views from models and, per seed, random ones (slices of 2-4-dim tensors, some transposed, some with a
step, 8-64 MiB moved, a quarter of them 64 KiB-2 MiB). Every case is checked bit for bit against eager; the
contenders are timed together (``harness.timing.time_together``, CUDA graphs of 20 launches) with a same-size copy.
Where the permuted view is already contiguous, eager returns it without a copy (the ops always return a new tensor):
those rows are left out of the ratios to eager.

    PYTHONPATH=src:benchmarks python3 benchmarks/gaps_bench.py --mode prepare --seed 1   # CPU: the cubins
    PYTHONPATH=src:benchmarks python3 benchmarks/gaps_bench.py --seed 1 --out DIR        # device: gaps_<seed>.{json,md}
"""

from __future__ import annotations

import math
import os
import random
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

BUILD = harness.BUILD / "gaps"
os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(BUILD / "cache"))

from harness import cli, ops_cases  # noqa: E402
from harness.results import write_outputs  # noqa: E402

LAUNCHES, REPEATS = 20, 5
DTYPES = ("uint8", "bfloat16", "float32", "float64")

#: ``(label, base shape, dtype, view steps, dims)`` (the steps: ``harness.ops_cases.apply_view``'s).
FIXED = [
    ("q of qkv, BSHD -> BHSD", (8, 2048, 3 * 32 * 128), "bfloat16",
     (("reshape", (8, 2048, 3, 32, 128)), ("index", ((0, 8, 1), (0, 2048, 1), 0))), (0, 2, 1, 3)),
    ("k of qkv, BSHD -> BHDS", (8, 2048, 3 * 32 * 128), "bfloat16",
     (("reshape", (8, 2048, 3, 32, 128)), ("index", ((0, 8, 1), (0, 2048, 1), 1))), (0, 2, 3, 1)),
    ("v of a GQA qkv, BSHD -> BHSD", (4, 4096, (32 + 16) * 128), "bfloat16",
     (("index", ((0, 4, 1), (0, 4096, 1), (40 * 128, 48 * 128, 1))), ("reshape", (4, 4096, 8, 128))),
     (0, 2, 1, 3)),
    ("weight column slice, transpose", (4096, 11008), "bfloat16", (("index", ((0, 4096, 1), (0, 8192, 1))),), (1, 0)),
    ("fp8 weight slice at an odd column", (8192, 8192), "uint8", (("index", ((0, 8192, 1), (3, 8003, 1))),), (1, 0)),
    ("channel slice NHWC -> NCHW", (32, 56, 56, 512), "float16", (("index", ((0, 32, 1), (0, 56, 1), (0, 56, 1),
                                                                              (0, 256, 1))),), (0, 3, 1, 2)),
    ("transposed slice to rows", (11008, 4096), "float32", (("index", ((0, 8192, 1), (0, 4096, 1))),
                                                            ("transpose", (1, 0))), (1, 0)),
    ("expanded bias, transpose", (1, 8192), "float32", (("expand", (4096, 8192)),), (1, 0)),
    ("every other column, transpose", (4096, 8192), "bfloat16", (("index", ((0, 4096, 1), (0, 8192, 2))),), (1, 0)),
    ("head-dim slice, BSHD -> BHSD", (8, 1024, 32, 128), "float32", (("index", ((0, 8, 1), (0, 1024, 1), (0, 32, 1),
                                                                                (0, 64, 1))),), (0, 2, 1, 3)),
]


#: Outputs with gaps: ``(label, input shape, dtype, dims, output buffer shape, window steps)``; against eager
#: ``window.copy_(x.permute(dims))``.
OUT_CASES = [
    ("new keys into a KV cache window, BSHD -> BHSD", (8, 2048, 8, 128), "bfloat16", (0, 2, 1, 3), (8, 8, 8192, 128),
     (("index", ((0, 8, 1), (0, 8, 1), (1024, 3072, 1))),)),
    ("new keys into a K^T cache window, BSHD -> BHDS", (8, 2048, 8, 128), "bfloat16", (0, 2, 3, 1), (8, 8, 128, 8192),
     (("index", ((0, 8, 1), (0, 8, 1), (0, 128, 1), (1024, 3072, 1))),)),
    ("weight transpose into a block of a fused buffer", (4096, 4096), "bfloat16", (1, 0), (4096, 12288),
     (("index", ((0, 4096, 1), (4096, 8192, 1))),)),
    ("fp8 transpose into a block at an odd column", (8192, 4096), "uint8", (1, 0), (4096, 8200),
     (("index", ((0, 4096, 1), (3, 8195, 1))),)),
]


def random_cases(seed: int, count: int) -> list[tuple]:
    """The seed's views (module doc), as ``FIXED``'s entries."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        dtype = rng.choice(DTYPES)
        w = ops_cases.ITEMSIZE[dtype]
        rank = rng.choice((2, 3, 3, 4))
        target = rng.randrange(64 << 10, 2 << 20) if rng.random() < 0.25 else rng.randrange(8 << 20, 64 << 20)
        sizes = [rng.randrange(2, 40) for _ in range(rank)]
        sizes[-1] = rng.randrange(17, 700)
        scale = (target / w / math.prod(sizes)) ** (1 / 2)
        for k in (rank - 2, 0):  # grow two dims to reach the target
            sizes[k] = max(2, int(sizes[k] * scale))
        index = []
        for k, size in enumerate(sizes):
            if rng.random() < 0.5:
                start = rng.randrange(0, size // 4 + 1)
                stop = rng.randrange(max(start + 1, size // 2), size + 1)
            else:
                start, stop = 0, size
            step = rng.choice((2, 3)) if rng.random() < 0.15 else 1
            index.append((start, stop, step))
        if all(i == (0, s, 1) for i, s in zip(index, sizes)):
            index[-1] = (1, sizes[-1], 1)  # at least one gap
        steps = [("index", tuple(index))]
        if rng.random() < 0.3:
            steps.append(("transpose", tuple(rng.sample(range(rank), rank))))
        dims = tuple(rng.sample(range(rank), rank))
        out.append((f"seed {seed} #{len(out)}", tuple(sizes), dtype, tuple(steps), dims))
    return out


def contenders(view, dims, src: int, dst: int, device) -> dict:
    """``{label: launches}``: ``ops`` (the view read at its strides) and the second pass of ``two passes`` (its
    contiguous copy permuted)."""
    from linear_layouts.ops.launches import permute_launches

    return {"ops": ops_cases.view_launches(view, dims, src, dst, device),
            "two passes": permute_launches(tuple(view.shape), tuple(dims), view.itemsize, dst + (1 << 36), dst, device)}


def prepare(seed: int, count: int, jobs: int) -> None:
    import numpy as np

    from linear_layouts.ops.kernels import GridShape
    from linear_layouts.ops.launches import permute_launches

    device = GridShape(ops_cases.SMS, ops_cases.L2_BYTES)
    sources = set()
    for _, shape, dtype, dims, buffer, steps in OUT_CASES:
        w = ops_cases.ITEMSIZE[dtype]
        window = ops_cases.apply_view(np.empty(buffer, np.dtype(f"u{w}")), steps)
        sources |= ops_cases.launch_sources([permute_launches(shape, dims, w, 1 << 40, 2 << 40, device,
                                                              out_strides=tuple(st // w for st in window.strides))])
    for _, base_shape, dtype, steps, dims in FIXED + HOST_VIEWS + random_cases(seed, count):
        base = np.empty(base_shape, np.dtype(f"u{ops_cases.ITEMSIZE[dtype]}"))
        view = ops_cases.apply_view(base, steps)
        offset = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
        sources |= ops_cases.launch_sources(contenders(view, dims, (1 << 40) + offset, 2 << 40, device).values())
    BUILD.joinpath("cache").mkdir(parents=True, mode=0o700, exist_ok=True)
    n, seconds = ops_cases.compile_sources(sources, "sm_90", jobs)
    print(f"prepared {n} kernels for sm_90 in {seconds:.0f} s into {BUILD / 'cache'}")


def _time(fn) -> float:
    import gpu_suite

    return gpu_suite._time(fn, repeats=REPEATS, inner=LAUNCHES)


def bench_case(label, base_shape, dtype, steps, dims, device, copy_tbs: float) -> dict:
    import torch

    from harness.ops_cases import bit_equal, random_tensor, time_with_peers
    from linear_layouts import ops

    view = ops_cases.apply_view(random_tensor(base_shape, dtype), steps)
    expected = view.permute(dims).contiguous()
    out = torch.empty_like(expected)
    nbytes = expected.numel() * expected.element_size()
    row = dict(label=label, base=list(base_shape), dtype=dtype, steps=[list(s) for s in steps], dims=list(dims),
               shape=list(view.shape), strides=list(view.stride()), mib=round(nbytes / 2**20, 2), kernels={})
    fns = {"ops": lambda: ops.permute(view, dims, out=out),
           "two passes": lambda: ops.permute(view.contiguous(), dims, out=out)}
    for name, fn in fns.items():
        out.view(torch.uint8).fill_(0xAB)
        fn()
        torch.cuda.synchronize()
        row["kernels"][name] = dict(correct=bit_equal(out, expected))
    time_with_peers(_time, fns, view, dims, nbytes, copy_tbs, row["kernels"])
    k = row["kernels"]
    row["eager_copies"] = expected.data_ptr() != view.data_ptr()  # else the permuted view was already contiguous
    row["ops_over_eager"] = round(k["eager"]["us"] / k["ops"]["us"], 3)
    row["ops_over_two_passes"] = round(k["two passes"]["us"] / k["ops"]["us"], 3)
    return row


#: Small views (launch-bound: the host's time per call is the call's) whose host time per call is measured.
HOST_VIEWS = [
    ("q of a small qkv, BSHD -> BHSD", (1, 64, 3 * 8 * 64), "bfloat16",
     (("reshape", (1, 64, 3, 8, 64)), ("index", ((0, 1, 1), (0, 64, 1), 0))), (0, 2, 1, 3)),
    ("column slice, transpose", (128, 300), "float32", (("index", ((0, 128, 1), (0, 100, 1))),), (1, 0)),
    ("channel slice NHWC -> NCHW", (2, 8, 8, 32), "float16", (("index", ((0, 2, 1), (0, 8, 1), (0, 8, 1),
                                                                          (0, 16, 1))),), (0, 3, 1, 2)),
    ("every other column, transpose (ours gathers)", (4, 2100), "bfloat16", (("index", ((0, 4, 1), (0, 2100, 2))),),
     (1, 0)),
]


def host_times() -> list[dict]:
    """Host µs per call of ``ops.permute`` on ``HOST_VIEWS`` against eager (``ops_bench._host_us``)."""
    from harness.ops_cases import bit_equal, random_tensor
    from linear_layouts import ops
    from ops_bench import _host_us

    rows = []
    for label, base_shape, dtype, steps, dims in HOST_VIEWS:
        view = ops_cases.apply_view(random_tensor(base_shape, dtype), steps)
        fns = {"ops": lambda: ops.permute(view, dims), "eager": lambda: view.permute(dims).contiguous()}
        us = _host_us(fns)
        rows.append(dict(label=label, shape=list(view.shape), strides=list(view.stride()), dtype=dtype,
                         host_us={k: round(v, 2) for k, v in us.items()},
                         correct=bit_equal(ops.permute(view, dims), view.permute(dims).contiguous())))
        print(rows[-1], flush=True)
    return rows


def bench_out_case(label, shape, dtype, dims, buffer, steps, device, copy_tbs: float) -> dict:
    import torch

    from harness.ops_cases import bit_equal, random_tensor
    from harness.timing import time_together
    from linear_layouts import ops

    x = random_tensor(shape, dtype)
    ours = random_tensor(buffer, dtype)
    want = ours.clone()
    window, want_window = ops_cases.apply_view(ours, steps), ops_cases.apply_view(want, steps)
    ops.permute(x, dims, out=window)
    want_window.copy_(x.permute(dims))
    torch.cuda.synchronize()
    nbytes = x.numel() * x.element_size()
    row = dict(label=label, shape=list(shape), dtype=dtype, dims=list(dims), buffer=list(buffer),
               window_strides=list(window.stride()), mib=round(nbytes / 2**20, 2), correct=bit_equal(ours, want))
    fns = {"ops": lambda: ops.permute(x, dims, out=window), "eager": lambda: window.copy_(x.permute(dims)),
           "two passes": lambda: window.copy_(ops.permute(x, dims))}
    row["us"] = {k: round(v, 2) for k, v in time_together(_time, fns).items()}
    row["of_copy"] = round(2 * nbytes / row["us"]["ops"] / 1e6 / copy_tbs, 3)
    row["ops_over_eager"] = round(row["us"]["eager"] / row["us"]["ops"], 3)
    row["ops_over_two_passes"] = round(row["us"]["two passes"] / row["us"]["ops"], 3)
    return row


def run(seed: int, count: int, out: Path) -> None:
    from harness.timing import geomean

    groups = [(FIXED, bench_case), (random_cases(seed, count), bench_case)]
    env, copy_tbs, rows = ops_cases.run_cases(groups)
    _, _, out_rows = ops_cases.run_cases([(OUT_CASES, bench_out_case)])
    host = host_times()
    correct = sum(all(v.get("correct", True) for v in r["kernels"].values()) for r in rows)
    lines = [f"# Views with gaps: `ops.permute` at their strides (fixed views, seed {seed})", "",
             f"{env.get('date', '')}, {env.get('gpu', '')}; torch {env.get('torch', '')}. 1 GiB copy: {copy_tbs:.3f} "
             f"TB/s. {correct}/{len(rows)} bit-exact (ops and two passes against eager).", ""]
    for title, part in (("fixed", rows[:len(FIXED)]), (f"seed {seed}", rows[len(FIXED):])):
        e = [r["ops_over_eager"] for r in part if r["eager_copies"]]
        t = [r["ops_over_two_passes"] for r in part]
        if part:
            lines.append(f"- {title} ({len(part)}): ops / eager geomean {geomean(e):.2f} (min {min(e):.2f}) over the "
                         f"{len(e)} where eager copies; ops / two passes geomean {geomean(t):.2f} (min {min(t):.2f})")
    lines += ["", "| case | view shape | strides | dtype | dims | MiB | ops µs (of copy) | two passes µs | eager µs | "
              "ops / eager | ops / two passes | correct |", "|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        k = r["kernels"]
        lines.append(f"| {r['label']} | {tuple(r['shape'])} | {tuple(r['strides'])} | {r['dtype']} | "
                     f"{tuple(r['dims'])} | {r['mib']} | {k['ops']['us']} ({100 * k['ops']['of_copy']:.1f}%) | "
                     f"{k['two passes']['us']} | {k['eager']['us']} | "
                     f"{str(r['ops_over_eager']) + 'x' if r['eager_copies'] else '- (no copy: the view)'} | "
                     f"{r['ops_over_two_passes']}x | {k['ops']['correct'] and k['two passes']['correct']} |")
    lines += ["", "Outputs with gaps (`out=` a window of a larger buffer; eager: `window.copy_(x.permute(dims))`; two "
              "passes: `window.copy_(ops.permute(x, dims))`):", "",
              "| case | shape | dtype | dims | window strides | MiB | ops µs (of copy) | two passes µs | eager µs | "
              "ops / eager | correct (whole buffer) |", "|---|---|---|---|---|---:|---:|---:|---:|---:|---|"]
    lines += [f"| {r['label']} | {tuple(r['shape'])} | {r['dtype']} | {tuple(r['dims'])} | {tuple(r['window_strides'])} "
              f"| {r['mib']} | {r['us']['ops']} ({100 * r['of_copy']:.1f}%) | {r['us']['two passes']} | "
              f"{r['us']['eager']} | {r['ops_over_eager']}x | {r['correct']} |" for r in out_rows]
    lines += ["", "Host µs per call (small views, launch-bound; median of rounds of calls then a synchronization):", "",
              "| view | shape | strides | dtype | ops | eager | correct |", "|---|---|---|---|---:|---:|---|"]
    lines += [f"| {h['label']} | {tuple(h['shape'])} | {tuple(h['strides'])} | {h['dtype']} | {h['host_us']['ops']} | "
              f"{h['host_us']['eager']} | {h['correct']} |" for h in host]
    write_outputs(out, f"gaps_{seed}", dict(environment=env, copy_tbs=copy_tbs, cases=rows, outputs=out_rows,
                                            host=host), "\n".join(lines) + "\n")
    print("\n".join(lines), flush=True)


def main() -> None:
    cli.seeded_main(__doc__.splitlines()[0], prepare, run, cases=16, out="gaps_out")


if __name__ == "__main__":
    main()
