"""The kernel report on the whole corpus (CPU): for every kernel of tests/data/triton_kernels compiled by
the installed Triton for one target, the summary of ``linear-layouts report`` — layouts, ops that move
data through shared memory, Triton's predicted wavefronts per CTA and per launch, flags, whether the
model's instructions equal the PTX's — and our engine's alternative on the kernel's TTIR.

    PYTHONPATH=src python3 benchmarks/kernel_reports.py [--target sm_90] [--out benchmarks/results/kernels.md]

Layouts are read by the project's TTGIR parser (``linear_layouts.layouts.ttgir``); Triton only compiles.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
import harness  # noqa: E402, F401  (puts src/ on the path)
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

from gpu_kernels import _resolver  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default="sm_90")
    ap.add_argument("--out", default="benchmarks/results/kernels.md")
    args = ap.parse_args()
    import triton

    from linear_layouts.pipeline.from_file import report_for_file

    resolver, resolver_name = _resolver()
    ptx = json.loads((ROOT / "tests/data/triton_kernels/ir/ptx_shared.json").read_text()).get(args.target, {})
    rows = []
    for path in sorted((ROOT / "tests/data/triton_kernels").glob("*.py")):
        t0 = time.time()
        try:
            r = report_for_file(str(path), target=args.target, resolver=resolver, with_triton_estimate=False)
        except Exception as error:  # a kernel the target does not compile
            rows.append(f"| {path.stem} | - | - | - | - | - | - | - | {str(error)[:120]} |")
            continue
        inventory: dict[str, int] = {}
        for op in r.ops:
            if op.kind == "async_copy":
                continue
            for ins in op.triton.stores + op.triton.loads:
                if not ins.count:  # SASS only (a tensormap's LDS from ptxas's tensormap.replace): not in the PTX
                    continue
                key = ins.instruction if "matrix" in ins.instruction else f"{ins.instruction[:2]}.shared.{ins.bytes}B"
                inventory[key] = inventory.get(key, 0) + ins.count // r.num_warps
        same = "yes" if path.stem in ptx and dict(sorted(inventory.items())) == ptx[path.stem] else "no"
        flags = sum(len(op.flags) for op in r.ops)
        e = r.engine
        engine = ("-" if e is None else
                  f"{e.triton_conversions} (+{e.triton_stagings}) / {e.triton_wavefronts} wf vs "
                  + (f"{e.ours_conversions} / {e.ours_wavefronts} wf" if e.ran else f"not run ({e.error[:40]})")
                  + (f"; {len(e.unmodeled)} ops not imported" if e.unmodeled else ""))
        rows.append(f"| {path.stem} | {len(r.layouts)} | {len(r.ops)} | {r.total('store_wavefronts')} + "
                    f"{r.total('load_wavefronts')} | {r.total('store_wavefronts', dynamic=True)} + "
                    f"{r.total('load_wavefronts', dynamic=True)} | {same} | {flags} | {len(r.unmodeled)} | {engine} |")
        print(rows[-1], f"({time.time() - t0:.1f} s)", flush=True)
    head = [f"# The kernel report on the corpus ({args.target}, CPU)", "",
            f"Date {datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}; Triton "
            f"{triton.__version__} (compiles on the CPU); Python {platform.python_version()}; layouts read by "
            f"{resolver_name}. Script: `benchmarks/kernel_reports.py`.", "",
            "Columns: distinct layouts; ops that move data through shared memory (convert_layout, local_alloc/"
            "store/load, cross-warp reductions, cp.async, TMA descriptor writes); Triton's predicted store + load "
            "wavefronts per CTA (each op once) and per launch (times its executions over the grid); whether the "
            "model's shared instructions equal the PTX's (static inventory); flags (bank conflicts, cheaper plans); "
            "ops not counted (TMA, wgmma operand reads, histograms, ...); the engine's alternative: Triton's conversions "
            "(+ register->shared stagings) / shared wavefronts per CTA vs our engine's on the kernel's TTIR.", "",
            "| kernel | layouts | ops | wf per CTA (st + ld) | wf per launch (st + ld) | model = PTX | flags | not counted | Triton vs our engine |",
            "|---|---|---|---|---|---|---|---|---|"]
    foot = ["", "Reading the last column: Triton stages dot operands global -> shared with cp.async / TMA (no "
            "registers, so no conversion, and wgmma reads them from shared memory), while the engine has no "
            "asynchronous copy and counts a loaded wgmma A operand as one shared-memory conversion into its register "
            "operand layout: on the matmuls \"1 vs 2\" is that operand, not a worse epilogue. Where ops are \"not "
            "imported\" (histograms, `dot_scaled`, 3-D dots, descriptor loads) the engine lays out their "
            "results for free, so its count is a lower bound there. A TTIR above `engine_compare.MAX_ENGINE_OPS` "
            "ops is not propagated (the last column says so)."]
    Path(args.out).write_text("\n".join(head + rows + foot) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
