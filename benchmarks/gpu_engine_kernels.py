"""Our engine's layouts against Triton's on the device (issue 15, item 6): for every corpus kernel
(tests/data/triton_kernels), Triton's own TTGIR and the TTGIR with our engine's layout assignment
(``linear_layouts.pipeline.rewrite``) are both compiled by Triton 3.6 for sm_90 -- from the TTGIR files,
so the only difference between the two cubins is the layouts -- then run on the same inputs at the
kernel's realistic problem size: ours must produce Triton's output, and both are timed.

``--layouts-for sm_80`` takes both TTGIRs (Triton's and the engine's) for that target instead -- the
layouts Triton and our engine pick for an A100 (``mma`` v2, ``cp.async``) -- and still compiles them
for the device (Triton's sm_90 lowering takes the layouts as they are; the cubin of an sm_80 TTGIR is
the same whether its ``ttg.target`` says cuda:80 or cuda:90): it measures sm_80's layout choices on
an H100, not an A100's timing.  Its build folder and results carry the target's name
(``engine_kernels_sm_80``, ``gpu_engine_kernels_sm_80.{json,md}``).

``--mode prepare`` (CPU, Triton 3.6 -- the device's -- under /tmp/triton-3.6.0, see
benchmarks/gpu_workflow_prepare.sh): compile each kernel (TTIR + TTGIR), rewrite the TTGIR with our
engine's layouts, compile both TTGIRs to cubins; every kernel gets a status (rewritten and compiled, the
same layouts as Triton's, or why not). Writes ``benchmarks/build/engine_kernels/`` (plan.json, the two
TTGIRs and cubins per kernel).

``--mode run`` (device, CuPy; the measuring runs in a child process, restarted after a kernel that kills
it): for each kernel with two cubins: fresh inputs (gpu_kernels.make_args, seeded),
one launch of Triton's and one of ours on copies of them, every tensor argument compared afterwards
(outputs must match: exact for integers, ``rtol = atol = 1e-2`` for floats, atomics included); then each
timed with CUDA events over ``--repeats`` launches after 3 warm-up launches, alternating Triton / ours,
median reported; then (unless ``--no-ncu``) one ncu process launches each side once more on fresh inputs
and counts its shared-memory wavefronts. Writes ``OUT/gpu_engine_kernels.{json,md}`` with device, date
and versions, within ``--budget`` seconds.

    PYTHONPATH=src:/tmp/triton-3.6.0 python3 benchmarks/gpu_engine_kernels.py --mode prepare      # CPU, ~1 min
    PYTHONPATH=src python3 benchmarks/gpu_engine_kernels.py --mode run --out DIR --budget 150     # GPU
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
import harness  # noqa: E402, F401  (puts src/ on the path)
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

from harness import isolation  # noqa: E402
from harness.cupy_outputs import compare  # noqa: E402
from harness.engine_kernels_report import write_results  # noqa: E402
from harness.environment import environment  # noqa: E402
from harness.ncu import METRIC_LD, METRIC_ST, run_ncu  # noqa: E402
from harness.workflow import (Deadline, TritonCubin, prepare_build, require_gpu, save_cubin,  # noqa: E402
                              triton_compile)

CORPUS = ROOT / "tests" / "data" / "triton_kernels"
BUILD = ROOT / "benchmarks" / "build" / "engine_kernels"
RESULTS = ROOT / "benchmarks" / "results"
#: launches per timed sample (one CUDA event pair around them)
INNER = 5


# --------------------------------------------------------------------------------------------------
# prepare (CPU)
# --------------------------------------------------------------------------------------------------
def launch_row(spec) -> dict:
    """What the device needs to launch ``spec``'s kernel (as gpu_kernels.prepare records it)."""
    signature, _, _ = spec.specialization()
    return {"kernel": spec.name, "name": spec.kernel.fn.__name__, "grid": list(spec.grid),
            "params": [[p, signature[p]] for p in spec.params if signature[p] != "constexpr"],
            "scalars": dict(spec.scalars), "tensors": {p: spec.tensors[p] for p in spec.tensors}}


def prepare_one(spec, build: Path, layouts_for: str = "sm_90", choose: bool = True) -> dict:
    """Rewrite and compile (for sm_90) one kernel whose TTGIR is Triton's for ``layouts_for``; the row
    says what happened. ``choose``: the rewrite ``rewrite_kernel`` chooses (Triton's where the model keeps
    it); else the engine's rewrite as written (``choose=False``), to measure what the model refuses too
    (``benchmarks/model_validation.py``), with the model's own choice recorded beside it."""
    from linear_layouts.core.errors import LayoutError
    from linear_layouts.triton_model.compile import compile_kernel
    from linear_layouts.pipeline.rewrite import rewrite_kernel

    row = launch_row(spec)
    try:
        ir = compile_kernel(spec, layouts_for)
    except LayoutError as error:
        row["status"] = f"not compiled: {error}"
        return row
    scalars = {f"%{k}": v for k, v in spec.scalars.items() if isinstance(v, int)}
    try:
        rewrite, assignment = rewrite_kernel(ir.ttir, ir.ttgir, num_warps=spec.options.get("num_warps"),
                                             scalars=scalars, choose=choose)
    except Exception as error:  # noqa: BLE001 - the reason is the row's status
        row["status"] = f"not rewritten: {type(error).__name__}: {str(error)[:300]}"
        return row
    if not choose and rewrite.rejected:
        row["status"] = f"the engine's rewrite cannot launch: {rewrite.rejected[0][:300]}"
        return row
    if not choose:  # what model-only mode would run: the model's own choice among the candidates
        try:
            chosen, _ = rewrite_kernel(ir.ttir, ir.ttgir, num_warps=spec.options.get("num_warps"), scalars=scalars)
            row["model_choice"] = {"chooses_this": chosen.text == rewrite.text, "chooses_another":
                                   chosen.text not in (rewrite.text, ir.ttgir), "gain": chosen.gain,
                                   "rejected": list(chosen.rejected), "kept": list(chosen.kept)[:1]}
        except Exception as error:  # noqa: BLE001 - recorded
            row["model_choice"] = {"error": f"{type(error).__name__}: {str(error)[:200]}"}
    row.update(triton_conversions=rewrite.triton_conversions, ours_conversions=rewrite.conversions,
               engine_conversions=assignment.engine_conversions, kept=list(rewrite.kept),
               rejected=list(rewrite.rejected),
               unmodeled=[list(u) for u in assignment.unmodeled], mapped=len(assignment.values),
               same_layouts=rewrite.same_layouts, differs=list(rewrite.differs),
               predicted={"triton": shared_traffic(ir.ttgir), "ours": shared_traffic(rewrite.text)},
               predicted_ns={"triton": predicted_ns(ir.ttir, ir.ttgir, scalars),
                             "ours": predicted_ns(ir.ttir, rewrite.text, scalars)})
    row["predicted_gain"] = model_gain(ir.ttir, ir.ttgir, rewrite.text, scalars, tuple(spec.grid))
    (build / f"{spec.name}.ttir").write_text(ir.ttir)
    (build / f"{spec.name}.triton.ttgir").write_text(ir.ttgir)
    (build / f"{spec.name}.ours.ttgir").write_text(rewrite.text)
    if _strip(rewrite.text) == _strip(ir.ttgir):
        row["status"] = "same layouts as Triton's (nothing to measure)"
        return row
    for side in ("triton", "ours"):
        try:
            compiled = triton_compile(str(build / f"{spec.name}.{side}.ttgir"), dict(spec.options))
        except Exception as error:  # noqa: BLE001 - Triton's message is the reason
            cause = error.__cause__ or error
            row["status"] = f"{side} TTGIR does not compile: {type(cause).__name__}: {_last_line(str(cause))}"
            return row
        row[side] = save_cubin(build, f"{spec.name}.{side}", compiled, ptx_global=ptx_global(compiled["ptx"]))
    row["status"] = "rewritten and compiled"
    return row


def ptx_global(ptx: str) -> dict:
    """The static global-memory instructions of a PTX (``global_access.ptx_global_inventory``)."""
    from linear_layouts.triton_model.global_access import ptx_global_inventory

    return ptx_global_inventory(ptx)


def model_gain(ttir: str, triton: str, ours: str, scalars: dict, grid: tuple) -> dict:
    """The whole-kernel model's predicted gain of ``ours`` over ``triton`` (``kernel_model``), with the
    launch's scalars and grid; the table that priced the global accesses (``""``: none measured)."""
    from linear_layouts.pipeline.engine_compare import global_pointers
    from linear_layouts.pipeline.kernel_model import kernel_time, predicted_gain
    from linear_layouts.pipeline.ttir_import import import_ttir
    from linear_layouts.triton_model.ir_text import parse_module

    try:
        module = parse_module(ttir)
        pointers = global_pointers(module, import_ttir(module, num_warps=parse_module(triton).num_warps,
                                                       scalars=scalars))
        t = kernel_time(triton, pointers, scalars=scalars, grid=grid)
        o = kernel_time(ours, pointers, scalars=scalars, grid=grid)
    except Exception as error:  # noqa: BLE001 - a model failure is recorded, not fatal
        return {"error": f"{type(error).__name__}: {str(error)[:200]}"}
    return {"gain": round(predicted_gain(t, o), 4), "table": t.table, "triton_ns": round(t.cta_ns, 1),
            "ours_ns": round(o.cta_ns, 1)}


def shared_traffic(ttgir: str) -> dict:
    """The report's count of a TTGIR, per CTA with each op once (``engine_compare``'s Triton side):
    conversions that move data, register -> shared stagings, and their predicted wavefronts."""
    from linear_layouts.pipeline.engine_compare import triton_side
    from linear_layouts.pipeline.report import analyze_ttgir

    try:
        conversions, stagings, wavefronts = triton_side(analyze_ttgir(ttgir, with_triton_estimate=False))
    except Exception as error:  # noqa: BLE001 - a report failure is recorded, not fatal
        return {"error": f"{type(error).__name__}: {str(error)[:200]}"}
    return {"conversions": conversions, "stagings": stagings, "wavefronts": wavefronts}


def predicted_ns(ttir: str, ttgir: str, scalars: dict | None = None) -> dict:
    """The model's SM-ns per CTA of a TTGIR (``engine_compare.kernel_costs``): shared, global, total."""
    from linear_layouts.pipeline.engine_compare import kernel_costs

    try:
        c = kernel_costs(ttir, ttgir, scalars=scalars)
    except Exception as error:  # noqa: BLE001 - a model failure is recorded, not fatal
        return {"error": f"{type(error).__name__}: {str(error)[:200]}"}
    return {"shared": round(c.shared_ns, 1), "global": round(c.global_ns, 1), "total": round(c.total_ns, 1)}


def _strip(text: str) -> str:
    return "\n".join(line.split(" loc(")[0].rstrip() for line in text.splitlines() if not line.startswith("#loc"))


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith(("#", "%", "}"))]
    return (lines[-1] if lines else "")[:300]


def prepare(args) -> int:
    from linear_layouts.triton_model.kernel_file import load_kernel_file

    start = time.time()
    version, build = prepare_build(args.build, args.any_triton)
    rows = []
    for path in sorted(CORPUS.glob("*.py")):
        if args.only and path.stem not in args.only.split(","):
            continue
        row = prepare_one(load_kernel_file(path), build, args.layouts_for, choose=not args.every_candidate)
        rows.append(row)
        print(f"  {row['kernel']}: {row['status']} (conversions: Triton {row.get('triton_conversions', '-')}, "
              f"ours {row.get('ours_conversions', '-')})", flush=True)
    plan = {"compiled_by": f"Triton {version}", "layouts_for": args.layouts_for, "choose": not args.every_candidate,
            "seconds": round(time.time() - start, 1), "rows": rows}
    (build / "plan.json").write_text(json.dumps(plan, indent=1, default=list))
    ready = sum("ours" in r for r in rows)
    print(f"prepared {ready} / {len(rows)} kernel pairs in {time.time() - start:.0f} s -> {build}")
    return 0


# --------------------------------------------------------------------------------------------------
# run (device)
# --------------------------------------------------------------------------------------------------
def load_plan(build: Path) -> dict:
    """``plan.json`` of a prepare step, with one clear exit where it is missing."""
    path = Path(build) / "plan.json"
    if not path.is_file():
        sys.exit(f"no {path}: run --mode prepare on the CPU and carry benchmarks/build/engine_kernels")
    return json.loads(path.read_text())


def bound(kernel, grid: tuple, args: list):
    """A launch of ``kernel`` on ``grid`` with ``args``, its scratch buffers allocated once (so a timed
    launch is the kernel alone)."""
    import numpy as np

    grid = tuple(grid) + (1,) * (3 - len(grid))
    ctas = grid[0] * grid[1] * grid[2]
    scratch = [kernel._scratch("global_scratch_size", ctas), kernel._scratch("profile_scratch_size", ctas)]
    params = tuple(args) + tuple(np.uint64(0) if isinstance(x, int) else x for x in scratch)
    if "params" in kernel.meta and len(args) + 2 != kernel.meta["params"]:
        raise ValueError(f"{kernel.meta['name']}: {len(args)} arguments + 2 scratch pointers, but the cubin's "
                         f"entry takes {kernel.meta['params']} parameters")

    def go() -> None:
        kernel.function(grid, (kernel.threads, 1, 1), params, shared_mem=kernel.shared)

    go.keep = scratch  # type: ignore[attr-defined]
    return go


def run_one(build: Path, row: dict, repeats: int) -> dict:
    import cupy
    from gpu_kernels import make_args

    kernels = {side: TritonCubin(build, row[side]) for side in ("triton", "ours")}
    grid = tuple(row["grid"])
    base = make_args(row)
    outputs = {}
    for side, kernel in kernels.items():
        args = [a.copy() if isinstance(a, cupy.ndarray) else a for a in base]
        kernel.launch(grid, args)
        cupy.cuda.runtime.deviceSynchronize()
        outputs[side] = args
    checks, ok = [], True
    for (name, ty), t, o in zip(row["params"], outputs["triton"], outputs["ours"]):
        if ty.startswith("*"):
            same, worst = compare(o, t, ty[1:])
            checks.append({"arg": name, "equal": same, "max_abs_diff": worst})
            ok &= same
    times: dict[str, list[float]] = {"triton": [], "ours": []}
    launch = {side: bound(kernel, grid, outputs["triton"]) for side, kernel in kernels.items()}
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    for _ in range(3):
        for go in launch.values():
            go()
    for _ in range(repeats):  # alternating sides, INNER launches per sample
        for side, go in launch.items():
            start.record()
            for _ in range(INNER):
                go()
            stop.record()
            stop.synchronize()
            times[side].append(cupy.cuda.get_elapsed_time(start, stop) * 1000.0 / INNER)
    del base, outputs
    cupy.get_default_memory_pool().free_all_blocks()
    med = {side: statistics.median(v) for side, v in times.items()}
    return {"correct": ok, "checks": checks, "triton_us": round(med["triton"], 2), "ours_us": round(med["ours"], 2),
            "ratio": round(med["ours"] / med["triton"], 3) if med["triton"] > 0 else None,
            "spread_us": {side: round(max(v) - min(v), 2) for side, v in times.items()}}


def run(args) -> int:
    build = Path(args.build)
    plan = load_plan(build)
    deadline = Deadline(args.budget)
    require_gpu()
    env = environment(compiled_by=plan.get("compiled_by"))
    rows = plan["rows"]
    todo = [r["kernel"] for r in rows if "ours" in r]
    results = measure_isolated(args, todo, deadline) if args.isolate else measure_inline(args, rows, todo, deadline)
    for row in rows:
        if row["kernel"] in results:
            row["result"] = results[row["kernel"]]
    meta = {"date": env["date"], "device": env.get("gpu"), "compiled_by": plan.get("compiled_by"),
            "layouts_for": plan.get("layouts_for", "sm_90"),
            "cupy": env.get("cupy"), "python": env.get("python"), "repeats": args.repeats, "environment": env,
            "ncu": env.get("ncu")}
    if args.ncu and deadline.left() > 30:
        meta.update(profile(build, rows, deadline))
    meta["seconds"] = round(args.budget - deadline.left(), 1)
    write_results(Path(args.out), meta, rows)
    return 0


def measure_inline(args, rows: list[dict], todo: list[str], deadline: Deadline) -> dict[str, dict]:
    """Each kernel of ``todo`` measured in this process (``run_one``), while the budget lasts."""
    by_kernel = {r["kernel"]: r for r in rows}
    results: dict[str, dict] = {}
    for name in todo:
        if deadline.left() < 10:
            results[name] = {"error": "not run: budget"}
            continue
        try:
            results[name] = run_one(Path(args.build), by_kernel[name], args.repeats)
        except Exception as error:  # noqa: BLE001 - recorded per kernel
            results[name] = {"error": f"{type(error).__name__}: {str(error)[:300]}"}
        print(f"RESULT {json.dumps({'kernel': name, 'result': results[name]})}", flush=True)
    return results


def measure_isolated(args, todo: list[str], deadline: Deadline) -> dict[str, dict]:
    """``measure_inline`` in a child process, restarted after a kernel that kills it (``harness.isolation``)."""
    return isolation.measure_isolated(Path(__file__).resolve(), args, todo, deadline)


def measure_child(args) -> int:
    """Child of ``measure_isolated``: ``measure_inline`` over ``--kernels``."""
    plan = load_plan(Path(args.build))
    measure_inline(args, plan["rows"], args.kernels.split(","), Deadline(args.budget))
    return 0


def profile(build: Path, rows: list[dict], deadline: Deadline) -> dict:
    """One ncu process launching each measured kernel's two cubins once (fresh inputs): the shared-memory
    wavefronts of each launch (``ld`` / ``st``, as gpu_kernels.py counts them) go into ``row["ncu"]``."""
    items = [f"{r['kernel']}.{side}" for r in rows if (r.get("result") or {}).get("correct") is not None
             for side in ("triton", "ours")]
    if not items:
        return {}
    names = sorted({r["name"] for r in rows if "ours" in r})
    child = [sys.executable, str(Path(__file__).resolve()), "--mode", "launch", "--build", str(build),
             "--launch", ",".join(items)]
    regex = "regex:^(" + "|".join(names) + ")$"
    ncu = run_ncu(child, regex, [METRIC_LD, METRIC_ST], len(items), deadline.left() - 10)
    by_kernel = {r["kernel"]: r for r in rows}
    for item, launch in zip(items, ncu["launches"]):
        kernel, side = item.rsplit(".", 1)
        m = launch["metrics"]
        by_kernel[kernel].setdefault("ncu", {})[side] = {"ld": m.get(METRIC_LD), "st": m.get(METRIC_ST)}
    return {"ncu_seconds": ncu["seconds"], "ncu_rc": ncu["rc"], "ncu_launches": len(ncu["launches"]),
            "ncu_tail": ncu["tail"][-1500:]}


def launch_child(args) -> int:
    """Under ncu: launch each ``KERNEL.SIDE`` of ``--launch`` once on fresh inputs, in order."""
    import cupy
    from gpu_kernels import make_args

    build = Path(args.build)
    plan = {r["kernel"]: r for r in load_plan(build)["rows"]}
    for item in args.launch.split(","):
        kernel, side = item.rsplit(".", 1)
        row = plan[kernel]
        launch_args = make_args(row)
        TritonCubin(build, row[side]).launch(tuple(row["grid"]), launch_args)
        cupy.cuda.runtime.deviceSynchronize()
        del launch_args
        cupy.get_default_memory_pool().free_all_blocks()
        print(f"LAUNCHED {item}", flush=True)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=["prepare", "run", "launch", "measure"], required=True)
    ap.add_argument("--build", default="", help=f"default: {BUILD} (sm_90), engine_kernels_<target> beside it")
    ap.add_argument("--layouts-for", default="sm_90", choices=["sm_80", "sm_90"],
                    help="prepare: the target whose TTGIR layouts (Triton's and the engine's) are compiled for the "
                         "device (sm_90)")
    ap.add_argument("--out", default=str(RESULTS), help="run: where gpu_engine_kernels.{json,md} go")
    ap.add_argument("--every-candidate", action="store_true",
                    help="prepare: the engine's own rewrite of every kernel (rewrite_kernel choose=False), not only "
                         "the ones the model chooses: predicted against measured for every rewrite")
    ap.add_argument("--only", default="", help="prepare: comma list of corpus kernels (default: all)")
    ap.add_argument("--any-triton", action="store_true", help="prepare with a Triton other than 3.6 (tests)")
    ap.add_argument("--budget", type=float, default=150.0, help="run: seconds for everything")
    ap.add_argument("--repeats", type=int, default=30, help="run: timed samples per kernel and side")
    ap.add_argument("--no-ncu", dest="ncu", action="store_false", help="run: skip the ncu wavefront counts")
    ap.add_argument("--no-isolate", dest="isolate", action="store_false",
                    help="run: measure in this process (default: a child, restarted after a kernel that kills it)")
    ap.add_argument("--launch", help=argparse.SUPPRESS)
    ap.add_argument("--kernels", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if not args.build:
        args.build = str(BUILD if args.layouts_for == "sm_90" else BUILD.with_name(f"engine_kernels_{args.layouts_for}"))
    return {"prepare": prepare, "run": run, "launch": launch_child, "measure": measure_child}[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
