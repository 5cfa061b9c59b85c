"""Conversion plans for a suite of catalog layout pairs, and a Table-4-like count of reduction stores.

Prints (and writes ``benchmarks/results/plans.md``):

1. for each conversion (8/16/32-bit, 1-8 warps): the plan kind chosen by ``plan_conversion``, its
   model cost, instructions, predicted shared-memory wavefronts (store + load) against the legacy
   baselines (plain row-major, row-major padded by one access width, Triton's legacy mma swizzle),
   and the warp-shuffle alternative when the data stays inside each warp;
2. shared-memory store instructions of reductions (paper Table 4's layout families, shapes
   [128, 16], [128, 128], [32, 128], [32, 32], [16, 16], 4 warps, both axes): legacy Triton (every
   warp stores every accumulator) against linear layouts (duplicated registers and warps skipped).

Everything here is a prediction of the analyses (no device); run: ``python benchmarks/bench_plans.py``.
"""

from __future__ import annotations

import datetime
import platform
import sys
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

import numpy as np

from linear_layouts import LinearLayout
from linear_layouts.analysis import conversion as cv
from linear_layouts.analysis.broadcast import reduction_stores
from linear_layouts.analysis.warp_simulator import random_distributed_layout
from linear_layouts.layouts import BlockedLayout, DotOperandLayout, NVMMADistributedLayout, SliceLayout

RESULTS = Path(__file__).parent / "results" / "plans.md"


def _warps2(n: int) -> list[int]:
    """warps_per_cta for rank 2, splitting n warps as evenly as possible (dim0 first)."""
    a = 1 << ((n.bit_length() - 1 + 1) // 2)
    return [a, n // a]


def _seed_pair() -> tuple[LinearLayout, LinearLayout]:
    store = LinearLayout(
        {"register": [[1, 0], [2, 0], [4, 0], [8, 0]], "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]],
         "warp": [], "block": []}, [("dim0", 16), ("dim1", 32)])
    load = LinearLayout(
        {"register": [[0, 2], [0, 4], [0, 8], [0, 16]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]],
         "warp": [], "block": []}, [("dim0", 16), ("dim1", 32)])
    return store, load


def conversion_suite() -> list[tuple[str, int, int, LinearLayout, LinearLayout]]:
    """(name, warps, bits, src, dst)."""
    cases = []
    store, load = _seed_pair()
    for bits in (32, 16, 8):
        cases.append(("seed 16x32 transpose", 1, bits, store, load))
    shape = [64, 64]
    for warps in (1, 2, 4, 8):
        w2 = _warps2(warps)
        row = BlockedLayout([1, 4], [4, 8], [warps, 1], [1, 0]).to_linear(shape)
        col = BlockedLayout([4, 1], [8, 4], [1, warps], [0, 1]).to_linear(shape)
        mma = NVMMADistributedLayout([2, 0], w2, [16, 8])
        lanes_cols = BlockedLayout([1, 1], [1, 32], [warps, 1], [1, 0]).to_linear(shape)
        lanes_rows = BlockedLayout([1, 1], [32, 1], [warps, 1], [0, 1]).to_linear(shape)
        for bits in (32, 16, 8):
            k_width = 32 // bits
            pairs = {
                "blocked row -> blocked col": (row, col),
                "blocked row -> mma v2": (row, mma.to_linear(shape)),
                "mma v2 -> blocked row": (mma.to_linear(shape), row),
                "mma v2 -> dot operand A": (mma.to_linear(shape), DotOperandLayout(0, mma, k_width).to_linear(shape)),
                "blocked row -> dot operand B": (row, DotOperandLayout(1, mma, k_width).to_linear(shape)),
                "lanes along cols -> lanes along rows": (lanes_cols, lanes_rows),
            }
            for name, (a, b) in pairs.items():
                cases.append((name, warps, bits, a, b))
    return cases


def _fmt_baselines(shared: cv.ConversionPlan | None) -> str:
    if shared is None:
        return "-"
    return ", ".join(f"{b.name} {b.store_wavefronts}+{b.load_wavefronts}" for b in shared.baselines)


def conversion_table() -> list[str]:
    rows = [
        "| pair | warps | bits | plan | cost/warp | instructions | wavefronts st+ld | shared instructions "
        "| legacy baselines st+ld | shuffle alternative |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    kinds: dict[str, int] = {}
    for name, warps, bits, a, b in conversion_suite():
        plan = cv.plan_conversion(a, b, bits, baselines=True)
        kinds[str(plan.kind)] = kinds.get(str(plan.kind), 0) + 1
        shared = plan if plan.shared_layout is not None else None
        if plan.kind == cv.WARP_SHUFFLE:
            shared = cv.plan_shared_memory(a, b, bits, baselines=True)
            wf = f"(shared: {shared.store.wavefronts}+{shared.load.wavefronts})"
        elif shared is not None:
            wf = f"{shared.store.wavefronts}+{shared.load.wavefronts}"
        else:
            wf = "0"
        instr = "-" if shared is None else (
            f"{shared.store.ptx} x{shared.store.instructions}, {shared.load.ptx} x{shared.load.instructions}"
        )
        alt = dict(plan.alternatives).get(cv.WARP_SHUFFLE)
        if plan.kind == cv.WARP_SHUFFLE:
            alt_s = f"chosen: {plan.shuffle.shuffles_per_warp} shfl/warp"
        elif alt is not None:
            alt_s = f"cost {alt.total:.1f} (not cheaper)"
        else:
            alt_s = "-"
        rows.append(
            f"| {name} | {warps} | {bits} | {plan.kind} | {plan.cost.total:.1f} | {plan.instructions} | {wf} | {instr} "
            f"| {_fmt_baselines(shared)} | {alt_s} |"
        )
    rows.append("")
    rows.append("Plan kinds: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    return rows


def _bench_pairs() -> list[tuple[dict, object]]:
    """The conversion-config (and whole-kernel) rows of ``results/gpu_suite.json`` where both our warp
    shuffle kernel and its forced shared-memory variant were timed, with their suite cases."""
    import json

    from harness.cases import named_cases, random_cases  # noqa: PLC0415

    suite = Path(__file__).parent / "results" / "gpu_suite.json"
    if not suite.exists():
        return []
    rows = [r for r in json.loads(suite.read_text())["bench"]
            if r.get("kind") == "warp shuffle" and r.get("ours") and r.get("shared")]
    names = {r["case"] for r in rows}
    n_random = 1 + max((int(n.split("_")[1]) for n in names if n.startswith("random_")), default=-1)
    cases = {c.name: c for c in named_cases() + random_cases(n_random)}
    return [(r, cases[r["case"]]) for r in rows if r["case"] in cases]


def _both_costs(src, dst, bits: int, old: bool) -> tuple[float, float]:
    """(shuffle, shared-memory) model cost per warp of ``src -> dst``: the old shfl-only model or ours."""
    sh = cv.plan_shuffle(src, dst, bits)
    sm = cv.plan_shared_memory(src, dst, bits)
    warps = src.in_dim_size("warp") if src.has_in_dim("warp") else 1
    if old:
        return cv.SHUFFLE_COST * sh.shuffles_per_warp, sm.wavefronts / warps + cv.BARRIER_COST
    return cv.shuffle_cost(sh).total, sm.cost.total


def model_vs_measured() -> list[str]:
    """Does the model rank (warp shuffle, shared memory) as the H100 measured? Each timed kernel runs
    the conversion src -> dst and back, so both directions' costs are summed."""
    pairs = _bench_pairs()
    if not pairs:
        return ["(no benchmarks/results/gpu_suite.json)"]
    out = [
        "| case | bits | warps | config | measured shuffle / shared µs | faster | old model shfl / smem | "
        "old | new model shfl / smem | new |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    agree = {("conversion", False): [0, 0], ("conversion", True): [0, 0],
             ("whole kernel", False): [0, 0], ("whole kernel", True): [0, 0]}
    ties = 0
    for r, c in pairs:
        faster = "shuffle" if r["ours"] < r["shared"] else "shared"
        tie = r["config"] == "whole kernel" and abs(r["ours"] / r["shared"] - 1) < 0.10
        cells = []
        for old in (True, False):
            f = _both_costs(c.src, c.dst, c.bits, old)
            b = _both_costs(c.dst, c.src, c.bits, old)
            shfl, smem = f[0] + b[0], f[1] + b[1]
            pick = "shuffle" if shfl < smem else "shared"
            ok = pick == faster
            if not tie:
                agree[(r["config"], not old)][0] += ok
                agree[(r["config"], not old)][1] += 1
            cells.append(f"{shfl:.0f} / {smem:.0f} | {pick}{'' if ok else ' ✗'}")
        ties += tie
        out.append(f"| {r['case']} | {c.bits} | {c.warps} | {r['config']} | {r['ours']:.1f} / {r['shared']:.1f} | "
                   f"{faster}{' (tie <10%)' if tie else ''} | {cells[0]} | {cells[1]} |")
    out.append("")
    for config in ("conversion", "whole kernel"):
        o, n = agree[(config, False)], agree[(config, True)]
        out.append(f"- {config}: old model ranks {o[0]} / {o[1]} right, new model {n[0]} / {n[1]}"
                   + (f" ({ties} whole-kernel rows within 10% left out as ties)" if config == "whole kernel" else ""))
    return out


def reduction_families() -> dict[str, list]:
    """Table 4's layout families (4 warps), each a list of descriptors of rank 2."""
    mma = NVMMADistributedLayout([2, 0], [2, 2], [16, 8])
    mma3 = NVMMADistributedLayout([2, 0], [1, 2, 2], [1, 16, 8])
    blocked3 = BlockedLayout([1, 1, 4], [1, 4, 8], [1, 4, 1], [2, 1, 0])
    return {
        "Blocked": [BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0]), BlockedLayout([4, 1], [8, 4], [1, 4], [0, 1]),
                    BlockedLayout([1, 1], [1, 32], [4, 1], [1, 0]), BlockedLayout([2, 2], [8, 4], [2, 2], [1, 0])],
        "MMA": [mma, NVMMADistributedLayout([2, 0], [4, 1], [16, 8])],
        "MMA Input": [DotOperandLayout(0, mma, 2), DotOperandLayout(1, mma, 2)],
        "Sliced-Blocked": [SliceLayout(0, blocked3)],
        "Sliced-MMA": [SliceLayout(0, mma3)],
        "Sliced-MMA Input": [SliceLayout(0, DotOperandLayout(0, mma3, 2))],
    }


def reduction_table() -> list[str]:
    shapes = [[128, 16], [128, 128], [32, 128], [32, 32], [16, 16]]
    rows = [
        "| layout family | cases | legacy store instructions | linear store instructions | saved "
        "| legacy thread stores | linear thread stores |",
        "|---|---|---|---|---|---|---|",
    ]
    families = reduction_families()
    rng = np.random.default_rng(2026)
    custom = [random_distributed_layout(rng, [7, 4], warp_bits=2) for _ in range(2)]
    for fam, descs in list(families.items()) + [("Custom", None)]:
        legacy = linear = legacy_el = linear_el = cases = 0
        layouts = []
        if descs is None:
            layouts = [(None, L) for L in custom]
        else:
            for d in descs:
                for s in shapes:
                    try:
                        layouts.append((s, d.to_linear(s)))
                    except Exception:  # a shape the descriptor cannot tile
                        continue
        for _, L in layouts:
            for axis in (0, 1):
                st = reduction_stores(L, axis)
                legacy += st.legacy_stores
                linear += st.stores
                legacy_el += st.legacy_element_stores
                linear_el += st.element_stores
                cases += 1
        saved = f"{100 * (legacy - linear) / legacy:.0f}%" if legacy else "-"
        rows.append(f"| {fam} | {cases} | {legacy} | {linear} | {saved} | {legacy_el} | {linear_el} |")
    return rows


def main(argv: list[str] | None = None) -> None:
    import argparse

    import linear_layouts

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.parse_args(argv)

    header = [
        "# Conversion plans and reduction stores (predicted by the analyses)",
        "",
        "Generated by `benchmarks/bench_plans.py` on "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
        f"linear_layouts {linear_layouts.__version__}, Python {platform.python_version()}, NumPy {np.__version__}. "
        "No device: every number is the analyses' prediction (wavefronts: the bank model that matched ncu "
        "on H200, see the project's HARDWARE.md).",
        "",
        f"Cost model (units of one shared-memory wavefront, calibrated on H100, see analysis/conversion.py): "
        f"shuffles cost {cv.SHUFFLE_COST} per `shfl.sync` per warp; shared memory costs "
        f"(store + load wavefronts) / warps + {cv.BARRIER_COST} for the barriers; every select / prmt / cvt / shr "
        f"the emitted code needs (lane-dependent register choice, sub-word packing) costs {cv.ALU_COST} "
        "(see results/conversion_cost_model.md). Baselines are shared layouts "
        "the legacy compiler would use: plain row-major, row-major padded by one access width, and Triton's legacy mma "
        "swizzle (vec, per_phase, max_phase); their wavefronts come from smem's analyses.",
        "",
        "## Conversions",
        "",
    ]
    body = conversion_table()
    body += [
        "",
        "## Model against the H100 measurements (results/gpu_suite.json)",
        "",
        "Every benchmarked case where both our warp-shuffle kernel and the forced shared-memory variant were "
        "timed (µs per launch; each kernel converts src -> dst and back, so costs are summed over both "
        "directions). Old model: shfl count only; new: emitted instructions (this file's header).",
        "",
    ] + model_vs_measured()
    tail = [
        "",
        "## Reductions: shared-memory store instructions (Table 4 style)",
        "",
        "Shapes [128, 16], [128, 128], [32, 128], [32, 32], [16, 16]; 4 warps; reduce along each axis. "
        "Store instructions are warp-level (a warp that holds only duplicated data stores nothing); legacy = "
        "every warp stores every accumulator. Thread stores count (thread, value) pairs; legacy skips only the "
        "lanes along the reduced axis. Legacy Triton could not reduce MMA-input and sliced-MMA layouts at all "
        "(Table 4's N/A); their legacy columns are what the legacy rule would have stored.",
        "",
    ]
    text = "\n".join(header + body + tail + reduction_table()) + "\n"
    print(text)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text)
    print(f"wrote {RESULTS}", file=sys.stderr)


if __name__ == "__main__":
    main()
