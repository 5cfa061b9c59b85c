"""Small skinny transposes at every skinny tile length: what ``kernels.SKINNY_CTAS_PER_SM`` is calibrated on.

The cases: every small case (under 16 MiB) with a side under 32 of the held-out runs
(``results/ops_heldout/ops_heldout_1NN.json``) that the tiled kernel takes (not the interleave kernel). Each is
checked bit for bit and timed (``harness.timing.time_together``, CUDA graphs of 20 launches) at ``ops``' tile and at
the skinny tile of each length from 32 elements up to ``SKINNY_TILE_BYTES``' (``L32``, ``L64``, ...; 4 warps, fewer
where they would cover more than the tile), and eager. ``report`` scores rules "the longest length whose grid holds
at least T CTAs" on seeds 101-112 (calibration) and 113-117 (held out).

    PYTHONPATH=src python3 benchmarks/skinny_small_bench.py prepare          # CPU: the cubins
    PYTHONPATH=src python3 benchmarks/skinny_small_bench.py run OUT.json     # device
    PYTHONPATH=src python3 benchmarks/skinny_small_bench.py report OUT.json  # the rule table (markdown)
"""
from __future__ import annotations

import json
import math
import os
import sys

import harness  # puts src/ on the path

os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(harness.BUILD / "skinny_small" / "cache"))

from harness import ops_cases  # noqa: E402

ITEM = ops_cases.ITEMSIZE

def cases():
    out = []
    for f in sorted((harness.RESULTS / "ops_heldout").glob("ops_heldout_1[01][0-9].json")):
        d = json.loads(f.read_text())
        for c in d["permute"]:
            p = c.get("plan")
            if not c.get("large") and isinstance(p, dict) and p["kind"] == "transpose" and min(p["rows"], p["cols"]) < 32:
                out.append((d["seed"], tuple(c["shape"]), tuple(c["dims"]), c["dtype"]))
    return out

def tiles(shape, dims, w, src, dst, device):
    """{label: launches}: ops as it is, and each skinny tile length (the rule's lengths down to 32)."""
    from linear_layouts.ops.launches import permute_launches, _plan, pointer_alignment, transpose_vectors
    from linear_layouts.ops.kernels import skinny_tile, TileConfig, tile_layouts
    out = {"ops": permute_launches(shape, dims, w, src, dst, device)}
    if "interleave" in out["ops"][0].kernel.name:
        return None
    problem = _plan(shape, dims, w, pointer_alignment(src % 32, dst % 32))
    rule = skinny_tile(w, *transpose_vectors(problem, src % 32, dst % 32, device)[:2], problem.rows, problem.cols)
    across = problem.rows <= problem.cols
    length = rule.cols if across else rule.rows
    s = rule.rows if across else rule.cols
    L = 32
    while L <= length:
        for warps in (4, 2, 1):
            m, n = (s, L) if across else (L, s)
            try:
                cfg = TileConfig(w, m, n, warps, rule.src_vector, rule.dst_vector)
                tile_layouts(cfg)
            except Exception:
                continue
            out[f"L{L}"] = permute_launches(shape, dims, w, src, dst, device, cfg)
            break
        L *= 2
    return out

if sys.argv[1] == "prepare":
    from linear_layouts.ops.kernels import GridShape
    dev = GridShape(132, 60 << 20)
    srcs = set()
    for _, shape, dims, dt in cases():
        t = tiles(shape, dims, ITEM[dt], 1 << 40, 2 << 40, dev)
        if t:
            srcs |= ops_cases.launch_sources(t.values())
    print(len(cases()), ops_cases.compile_sources(srcs, "sm_90", 2))
elif sys.argv[1] == "report":
    rows = json.load(open(sys.argv[2]))

    def pick(r, target):
        k = r["kernels"]
        lengths = sorted(int(x[1:]) for x in k if x.startswith("L"))
        fit = [n for n in lengths if k[f"L{n}"]["ctas"] >= target]
        return k[f"L{max(fit) if fit else min(lengths)}"]["us"]

    def gm(v):
        return math.exp(sum(map(math.log, v)) / len(v))

    print("| seeds | cases | rule (CTAs at least) | best length / rule (geomean, min) | ours / eager, lowest |")
    print("|---|---:|---|---|---:|")
    for part, seeds in (("101-112 (calibration)", range(101, 113)), ("113-117 (held out)", range(113, 118))):
        rs = [r for r in rows if r["seed"] in seeds]
        for label, rule in [("none: 8 KiB tiles", 0)] + [(f"{t} ({t // 132} a SM)", t) for t in (132, 264, 396, 528, 792)]:
            us = [pick(r, rule) for r in rs]
            best = [min(v["us"] for k, v in r["kernels"].items() if k != "eager") for r in rs]
            ratio = [b / u for b, u in zip(best, us)]
            eager = [r["kernels"]["eager"]["us"] / u for r, u in zip(rs, us)]
            print(f"| {part} | {len(rs)} | {label} | {gm(ratio):.3f} ({min(ratio):.2f}) | {min(eager):.2f} |")
else:
    import gpu_suite
    from harness.timing import time_together
    from linear_layouts.ops import launch
    dev = launch.grid_shape(0)
    rows = []
    for seed, shape, dims, dt in cases():
        w = ITEM[dt]
        x, out, exp = ops_cases.permute_buffers(shape, dims, dt)
        t = tiles(shape, dims, w, x.data_ptr(), out.data_ptr(), dev)
        if t is None:
            continue
        fns, row = {}, dict(seed=seed, shape=shape, dims=dims, dtype=dt, kernels={})
        for label, items in t.items():
            fns[label], ok = ops_cases.checked_runner(items, out, exp)  # each from a filled output
            row["kernels"][label] = dict(ok=ok, tile=[items[0].kernel.tile_rows, items[0].kernel.tile_cols],
                                         ctas=items[0].ctas)
        fns["eager"] = lambda: x.permute(dims).contiguous()
        for label, us in time_together(lambda fn: gpu_suite._time(fn, repeats=5, inner=20), fns).items():
            row["kernels"].setdefault(label, {})["us"] = round(us, 3)
        rows.append(row)
        print(seed, shape, dims, dt, {k: (v.get("us"), v.get("ctas")) for k, v in row["kernels"].items()}, flush=True)
    json.dump(rows, open(sys.argv[2], "w"), indent=1)
