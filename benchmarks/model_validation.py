"""Does the whole-kernel model (``linear_layouts.pipeline.kernel_model``) hold on kernels it has not seen?
Predicted gain against measured gain for every rewrite of the engine, the honest way.

Inputs: a build folder of ``benchmarks/gpu_engine_kernels.py --mode prepare --every-candidate`` (every engine
rewrite as written, whether the model would choose it or not: ``<kernel>.ttir``, ``.triton.ttgir``,
``.ours.ttgir`` and ``plan.json``) and the results of its ``--mode run`` on the device
(``gpu_engine_kernels.json``: Triton's and our time per kernel, median of alternating launches).

For each rewrite that ran and gave Triton's output: the predicted gain (``kernel_model.predicted_gain``
with the launch's scalars and grid, the device's measured global table where there is one), the measured
gain ``1 - ours / triton``, and whether the model would choose it (``model_choice`` of the plan: what
``rewrite_kernel`` runs in model-only mode). Kernels are split into a *fit* and a *test* half by a fixed
hash of their name (``half``); the model's constants come from microbenchmarks only -- nothing is fitted
on either half -- and the split shows it: both halves are reported alike.

The goals (issue 34): the sign right on at least 90% of rewrites (a measured gain within ``NOISE`` of zero
and a predicted gain below ``MIN_GAIN`` agree; so do two gains of one sign); ``|predicted - measured|``
at most 5 points; never a predicted gain above twice the measured one (for predictions of at least
``MIN_GAIN``: those the model acts on); in model-only mode no chosen rewrite slower than Triton by more
than 2%.

``--compile`` (CPU, Triton 3.9) adds the model's facts that need no device: for every rewrite of every
corpus kernel for sm_80 and sm_90 (``rewrite_kernel(choose=False)``), Triton's and our TTGIR compiled to
PTX and cubin: the predicted global inventory against the PTX's, and the register estimate against
ptxas's registers (Spearman rank correlation).

    PYTHONPATH=src python3 benchmarks/model_validation.py --build benchmarks/build/engine_kernels_all \\
        --results DIR/gpu_engine_kernels.json [--compile]
    PYTHONPATH=src python3 benchmarks/model_validation.py --compile          # CPU facts only (~6 min, 2 cores)

Writes ``benchmarks/results/model_validation.{json,md}`` (``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
import harness  # noqa: E402, F401  (puts src/ on the path)
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
from harness.validation import markdown, predictions, summary  # noqa: E402

CORPUS = ROOT / "tests" / "data" / "triton_kernels"
RESULTS = ROOT / "benchmarks" / "results"


# --------------------------------------------------------------------------------------------------
# CPU facts: inventories and registers of every rewrite, compiled by Triton 3.9
# --------------------------------------------------------------------------------------------------
def _compile_pair(item: tuple[str, str]) -> dict:
    from linear_layouts.pipeline.rewrite import rewrite_kernel
    from linear_layouts.triton_model.compile import compile_ttgir
    from linear_layouts.triton_model.global_access import global_inventory, ptx_global_inventory
    from linear_layouts.triton_model.ir_text import parse_module
    from linear_layouts.triton_model.registers import register_estimate

    target, kernel = item
    ir = CORPUS / "ir" / target
    ttgir, ttir = (ir / f"{kernel}.ttgir").read_text(), (ir / f"{kernel}.ttir").read_text()
    row: dict = {"target": target, "kernel": kernel}
    try:
        rewrite, _ = rewrite_kernel(ttir, ttgir, choose=False)
    except Exception as error:  # noqa: BLE001 - recorded
        row["error"] = f"rewrite: {type(error).__name__}: {str(error)[:200]}"
        return row
    sides = {"triton": ttgir}
    if rewrite.text != ttgir and not rewrite.rejected:
        sides["ours"] = rewrite.text
    for side, text in sides.items():
        try:
            compiled = compile_ttgir(text)
        except Exception as error:  # noqa: BLE001 - recorded
            row[side] = {"error": f"{type(error).__name__}: {str(error)[:200]}"}
            continue
        module = parse_module(text)
        row[side] = {"predicted": global_inventory(module), "ptx": ptx_global_inventory(compiled.ptx),
                     "estimate": register_estimate(module).per_thread, "registers": compiled.registers,
                     "stack": compiled.stack}
    return row


def spearman(a: list[float], b: list[float]) -> float:
    import numpy as np

    def ranks(values):
        values = np.asarray(values, dtype=float)
        order = np.argsort(values, kind="stable")
        r = np.empty(len(values))
        r[order] = np.arange(1, len(values) + 1)
        for v in np.unique(values):
            r[values == v] = r[values == v].mean()
        return r

    return float(np.corrcoef(ranks(a), ranks(b))[0, 1])


def compile_facts(jobs: int) -> dict:
    items = sorted((p.parent.name, p.stem) for p in (CORPUS / "ir").glob("sm_*/*.ttgir"))
    start = time.time()
    with ProcessPoolExecutor(jobs) as pool:
        rows = list(pool.map(_compile_pair, items))
    compiled = [(r, side) for r in rows for side in ("triton", "ours") if "ptx" in (r.get(side) or {})]
    matches = [(r, side) for r, side in compiled if r[side]["predicted"] == r[side]["ptx"]]
    estimates = [r[side]["estimate"] for r, side in compiled]
    allocated = [r[side]["registers"] + r[side]["stack"] / 4 for r, side in compiled]
    return {"seconds": round(time.time() - start, 1), "rows": rows, "cubins": len(compiled),
            "inventory_matches": len(matches),
            "inventory_differs": [f"{r['target']}/{r['kernel']}.{side}" for r, side in compiled
                                  if (r, side) not in matches],
            "register_spearman": round(spearman(estimates, allocated), 3) if compiled else None,
            "spills_estimated_above_255": sum(1 for r, side in compiled if r[side]["stack"] and r[side]["estimate"] > 255),
            "spills": sum(1 for r, side in compiled if r[side]["stack"])}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", help="a gpu_engine_kernels.py --every-candidate build folder")
    ap.add_argument("--results", help="its gpu_engine_kernels.json from the device")
    ap.add_argument("--compile", action="store_true", help="add the CPU compile facts (Triton 3.9)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args(argv)
    if not args.compile and not (args.build and args.results):
        ap.error("give --build and --results (device results), or --compile (CPU facts), or both")
    from linear_layouts.pipeline.rewrite import MIN_GAIN

    doc: dict = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "min_gain": MIN_GAIN}
    try:
        doc["triton"] = __import__("triton").__version__
    except ImportError:
        doc["triton"] = None
    if args.build and args.results:
        results = json.loads(Path(args.results).read_text())
        doc.update(results=str(args.results), build=str(args.build), device=(results.get("meta") or {}).get("device"))
        doc["predictions"] = predictions(Path(args.build), results)
        doc["summary"] = summary(doc["predictions"], MIN_GAIN)
    if args.compile:
        doc["compile"] = compile_facts(args.jobs)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "model_validation.json").write_text(json.dumps(doc, indent=1, default=list) + "\n")
    (out / "model_validation.md").write_text(markdown(doc))
    print(f"-> {out / 'model_validation.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
