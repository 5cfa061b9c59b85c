"""How often does one CuTe swizzle reach §9.2's optimum, and by how much does it miss otherwise?

For every (store, load) pair: ``best_cute_swizzle`` (the cheapest ``Swizzle<B,M,S> ∘ (row- or
column-major)`` of all ~1000 candidates, by the package's bank model) against ``optimal_swizzle`` (the
best linear layout, paper §9.2), both counted as store + load shared-memory wavefronts. Also: the best
plain (unswizzled) CuTe layout, and how many swizzles the optimum needs when written in CuTe
(``from_linear``).

Pairs: the GPU suite's named pairs and its seeded random catalog pairs (``harness.cases``: blocked, mma
v2/v3 accumulators, mma dot operands, random linear layouts; 8/16/32-bit; 1-8 warps) and seeded random
linear pairs (one tensor bit per hardware bit). No device: every number is the bank model's prediction
(validated against ncu, results/wavefronts_vs_ncu.md).

    PYTHONPATH=src python benchmarks/cute_swizzle.py [--random 200] [--linear 60] [--out benchmarks/results]

Writes ``cute_swizzle.md`` and ``cute_swizzle.json`` into ``--out``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import random
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
import harness  # noqa: E402, F401  (puts src/ on the path)

from harness.cases import Case, named_cases, random_cases  # noqa: E402

from linear_layouts.analysis.warp_simulator import random_distributed_layout  # noqa: E402
from linear_layouts.cute import best_cute_swizzle, from_linear  # noqa: E402
from linear_layouts.cute.best import cute_candidates  # noqa: E402
from linear_layouts.cute.linear import to_linear  # noqa: E402
from linear_layouts.analysis.banks import shared_access, wavefronts  # noqa: E402


def random_linear_cases(n: int, seed: int = 16) -> list[Case]:
    """``n`` pairs of random linear layouts (shapes 2**8 .. 2**12, 1-8 warps, 8/16/32-bit)."""
    rng = random.Random(seed)
    gen = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        warps_log2 = rng.randint(0, 3)
        total = rng.randint(max(8, 5 + warps_log2), 12)
        cut = rng.randint(1, total - 1)
        log2s = [cut, total - cut]
        bits = rng.choice([8, 16, 32])
        src = random_distributed_layout(gen, log2s, warp_bits=warps_log2, broadcast=rng.random() < 0.3)
        dst = random_distributed_layout(gen, log2s, warp_bits=warps_log2, broadcast=rng.random() < 0.3)
        out.append(Case(f"linear_{len(out):03d}", src, dst, bits, 1 << warps_log2, "linear",
                        f"{[1 << k for k in log2s]} {bits}-bit {1 << warps_log2} warps: random linear pair"))
    return out


def plain_cost(case: Case) -> int:
    """The best unswizzled CuTe layout (row- or column-major)."""
    shape = tuple(case.src.out_dim_size(f"dim{k}") for k in range(case.src.num_out_dims))
    costs = []
    for _, sw, layout in cute_candidates(shape):
        if sw.is_identity:
            shared = to_linear(layout)
            costs.append(wavefronts(shared, case.src, case.bits, op="store") + wavefronts(shared, case.dst, case.bits))
    return min(costs)


def measure(case: Case) -> dict:
    t = time.perf_counter()
    best = best_cute_swizzle(case.src, case.dst, case.bits)
    seconds = time.perf_counter() - t
    optimum_form = from_linear(best.optimum.layout)
    optimum_vectors = [shared_access(best.optimum.layout, layout, case.bits).vector_bits for layout in (case.src, case.dst)]
    return {
        "name": case.name, "family": case.family, "bits": case.bits, "warps": case.warps,
        "shape": case.shape, "description": case.description,
        "cute": str(best.layout), "cute_store": best.store_wavefronts, "cute_load": best.load_wavefronts,
        "cute_total": best.total_wavefronts,
        "optimum_store": best.optimum.store_wavefronts, "optimum_load": best.optimum.load_wavefronts,
        "optimum_total": best.optimum.total_wavefronts, "excess": best.excess_wavefronts,
        "reaches_optimum": best.reaches_optimum, "plain_total": plain_cost(case),
        "cute_vector_bits": [best.store_vector_bits, best.load_vector_bits], "optimum_vector_bits": optimum_vectors,
        "optimum_in_cute": str(optimum_form.layout), "optimum_swizzles": len(optimum_form.swizzles),
        "optimum_swizzles_minimal": optimum_form.minimal, "candidates": best.candidates,
        "seconds": round(seconds, 3),
    }


def _git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=HERE, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def report(rows: list[dict], meta: dict) -> str:
    n = len(rows)
    reached = sum(r["reaches_optimum"] for r in rows)
    missed = [r for r in rows if not r["reaches_optimum"]]
    better = [r for r in rows if r["excess"] < 0]
    lines = [
        "# One CuTe swizzle against §9.2's optimal swizzling",
        "",
        f"Generated by `benchmarks/cute_swizzle.py` on {meta['date']} (commit {meta['commit']}), "
        f"linear_layouts {meta['version']}, Python {meta['python']}, NumPy {meta['numpy']}, on the CPU "
        f"({meta['machine']}). No device: wavefronts are the bank model's prediction (`analysis.banks`, "
        "which matched ncu on H100/H200: results/wavefronts_vs_ncu.md).",
        "",
        "For each (store, load) pair: the best `Swizzle<B,M,S> ∘ (row- or column-major)` over every swizzle on the "
        "tile's offset bits (both signs of S) and the identity (`cute.best_cute_swizzle`), against the best "
        "linear layout (`analysis.swizzle.optimal_swizzle`, paper §9.2); cost = store + load wavefronts.",
        "",
        "## Summary",
        "",
        f"* pairs: **{n}** ({', '.join(f'{k}: {v}' for k, v in sorted(Counter(r['family'] for r in rows).items()))})",
        f"* one CuTe swizzle reaches (or beats) the optimum: **{reached} / {n}** ({100 * reached / n:.1f}%)",
    ]
    if missed:
        ratios = sorted(r["cute_total"] / r["optimum_total"] for r in missed)
        excess = sorted(r["excess"] for r in missed)
        lines += [
            f"* misses: {len(missed)}; excess wavefronts median {excess[len(excess) // 2]}, max {excess[-1]}; "
            f"cost ratio CuTe / optimum median {ratios[len(ratios) // 2]:.2f}x, max {ratios[-1]:.2f}x, "
            f"geometric mean {float(np.exp(np.mean(np.log(ratios)))):.2f}x",
            f"* of the misses, the optimum itself is one swizzle (or none) in CuTe form in "
            f"{sum(r['optimum_swizzles'] <= 1 for r in missed)}: there one swizzle would do, on a base that "
            "is neither row- nor column-major: what a CuTe `Swizzle ∘ (row- or column-major)` lacks is the order of "
            "the offsets, not more swizzles",
        ]
    if better:
        lines.append(f"* a CuTe layout beats the optimum's wavefronts on {len(better)} pairs: §9.2 vectorizes only the "
                     "registers both sides share (V), while there the CuTe layout lets one side alone use wider "
                     "vectors (table below: vector bits store/load)")
    plain_reached = sum(r["plain_total"] <= r["optimum_total"] for r in rows)
    lines += [
        f"* an unswizzled row/column-major layout already reaches the optimum on {plain_reached} / {n}",
        f"* swizzles the optimum itself needs in CuTe form (`from_linear`): "
        + ", ".join(f"{k}: {v}" for k, v in sorted(Counter(r["optimum_swizzles"] for r in rows).items()))
        + f" (proven fewest for {sum(r['optimum_swizzles_minimal'] for r in rows)} / {n})",
        f"* time: {sum(r['seconds'] for r in rows):.0f} s in all, "
        f"{max(r['seconds'] for r in rows):.2f} s for the largest pair",
        "",
        "## By family and element width",
        "",
        "| family | bits | pairs | CuTe reaches optimum | total CuTe wavefronts | total optimum | total plain |",
        "|---|---|---|---|---|---|---|",
    ]
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["family"], r["bits"]), []).append(r)
    for (family, bits), rs in sorted(groups.items()):
        lines.append(f"| {family} | {bits} | {len(rs)} | {sum(r['reaches_optimum'] for r in rs)} | "
                     f"{sum(r['cute_total'] for r in rs)} | {sum(r['optimum_total'] for r in rs)} | "
                     f"{sum(r['plain_total'] for r in rs)} |")
    lines += ["", "## Pairs where one CuTe swizzle misses the optimum", "",
              "| pair | store -> load | best CuTe layout | CuTe st+ld | optimum st+ld | optimum in CuTe |",
              "|---|---|---|---|---|---|"]
    for r in sorted(missed, key=lambda r: -r["excess"]):
        lines.append(f"| {r['name']} | {r['description']} | `{r['cute']}` | {r['cute_store']}+{r['cute_load']} | "
                     f"{r['optimum_store']}+{r['optimum_load']} | `{r['optimum_in_cute']}` |")
    if better:
        lines += ["", "## Pairs where a CuTe layout beats §9.2's construction", "",
                  "| pair | store -> load | CuTe layout | CuTe st+ld | vector bits | optimum st+ld | vector bits |",
                  "|---|---|---|---|---|---|---|"]
        for r in better:
            lines.append(f"| {r['name']} | {r['description']} | `{r['cute']}` | {r['cute_store']}+{r['cute_load']} | "
                         f"{'/'.join(map(str, r['cute_vector_bits']))} | {r['optimum_store']}+{r['optimum_load']} | "
                         f"{'/'.join(map(str, r['optimum_vector_bits']))} |")
    lines += ["", "## Named pairs", "", "| pair | best CuTe layout | CuTe st+ld | optimum st+ld | plain |",
              "|---|---|---|---|---|"]
    for r in rows:
        if r["family"] == "named":
            lines.append(f"| {r['name']} | `{r['cute']}` | {r['cute_store']}+{r['cute_load']} | "
                         f"{r['optimum_store']}+{r['optimum_load']} | {r['plain_total']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--random", type=int, default=200, help="seeded random catalog pairs (harness.cases)")
    parser.add_argument("--linear", type=int, default=60, help="seeded random linear pairs")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args(argv)
    import linear_layouts

    cases = named_cases() + random_cases(args.random) + random_linear_cases(args.linear)
    rows = []
    for i, case in enumerate(cases):
        rows.append(measure(case))
        if (i + 1) % 25 == 0:
            print(f"{i + 1}/{len(cases)} pairs", file=sys.stderr, flush=True)
    meta = {
        "date": f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC", "commit": _git_commit(),
        "version": linear_layouts.__version__, "python": platform.python_version(), "numpy": np.__version__,
        "machine": f"{platform.machine()}, {platform.processor() or platform.system()}",
    }
    text = report(rows, meta)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "cute_swizzle.md").write_text(text)
    pairs = ",\n".join(json.dumps(r) for r in rows)  # one pair per line
    (args.out / "cute_swizzle.json").write_text(f'{{"meta": {json.dumps(meta)}, "pairs": [\n{pairs}\n]}}\n')
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
