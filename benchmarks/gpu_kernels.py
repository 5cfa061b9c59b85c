"""The kernel report checked against the hardware: for every corpus kernel (tests/data/triton_kernels)
that runs on the device, ncu's shared-memory wavefronts of one launch against the sum of the report's
predictions over the kernel's shared accesses.

What is counted (per launch = per op, its wavefronts per CTA times its executions over the grid, from
the TTGIR's own loop bounds evaluated with the launch's scalars):

* ``ld``  = ``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum`` against the loads of
  convert_layout (Triton's scratch round trips), local_load (ld.shared / ldmatrix), and the inter-warp
  steps of tt.reduce;
* ``st``  = ``..._op_st.sum`` against the stores of the same ops plus local_store / local_alloc %x;
  cp.async (LDGSTS) writes are predicted separately (``cp.async``) and compared both ways, since the
  metric's treatment of LDGSTS is what the run establishes;
* outside the two counters (``report.OUTSIDE_LSU_COUNTERS``; measured: the prediction without them is
  what ncu counts), listed per kernel: TMA copies, wgmma / tcgen05 operand reads (async proxy), tensor
  memory, mbarrier init / expect / wait; a TMA descriptor's fields (tensormap.replace: single-thread
  LDS / STS in the SASS) are predicted;
* not predicted, and a reason for a difference: histograms' atom.shared counting, tt.gather, and ops
  whose execution count depends on data (spin loops).

``--mode prepare`` (CPU): every kernel is compiled by Triton 3.6 -- the device's Triton, installed here
under /tmp by benchmarks/gpu_workflow_prepare.sh -- for sm_90 with the JIT's specialization
(``KernelSpec.specialization``): the cubin the device's JIT would build; the report is built from that
compile's TTGIR with this library. ``--mode measure`` (GPU): CuPy loads the cubins and launches each kernel
once at its realistic problem size (does it run?), then one ncu process launches each runnable kernel on
three grids -- 1 CTA (program id 0), one wave (the first <= 132 CTAs) and the full grid -- ``--repeats``
times each (default 3, fresh inputs every launch), all within ``--budget`` seconds. Every count is kept;
per grid the minimum and the spread (max - min) are reported. The verdict's rule: exact <=> the minimum
over the repeats of the 1-CTA launch equals the prediction for that CTA (ld, and st with or without the
cp.async writes); the full-size launch's minimum against its prediction is stated beside it, so an excess
that appears only at scale (a counting effect of many CTAs) is told apart from a per-CTA model error.
Writes ``DIR/gpu_kernels.json`` and ``DIR/gpu_kernels.md``.

    PYTHONPATH=src:/tmp/triton-3.6.0 python3 benchmarks/gpu_kernels.py --mode prepare          # CPU, ~1 min
    PYTHONPATH=src python3 benchmarks/gpu_kernels.py --mode measure --budget 120 --out DIR     # GPU, ~60 s
    PYTHONPATH=src python3 benchmarks/gpu_kernels.py --mode rescore --results R.json --out DIR # CPU
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
import harness  # noqa: E402, F401  (puts src/ on the path)
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

CORPUS = ROOT / "tests" / "data" / "triton_kernels"
BUILD = ROOT / "benchmarks" / "build" / "kernels"
from harness.ncu import METRIC_LD as LD, METRIC_ST as ST, run_ncu  # noqa: E402
from harness.workflow import TritonCubin, prepare_build, save_cubin, start_measure, triton_compile  # noqa: E402
#: read when the device's ncu knows them (diagnostics for the kernels that differ)
EXTRA = [  # same unit as LD / ST (one pass); read when the device's ncu knows them
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum",
]



# --------------------------------------------------------------------------------------------------
# prepare (CPU, Triton 3.6) and running kernels (device, CuPy)
# --------------------------------------------------------------------------------------------------
def corpus_files() -> list[Path]:
    return sorted(CORPUS.glob("*.py"))


def prepare(args) -> int:
    """CPU: every corpus kernel compiled by Triton 3.6 (the device's) for sm_90 with the JIT's
    specialization; its report's predictions from that TTGIR; ``BUILD/plan.json`` + cubins."""
    from triton.compiler import ASTSource

    from linear_layouts.triton_model.kernel_file import load_kernel_file

    start = time.time()
    version, build = prepare_build(args.build, args.any_triton)
    resolver, resolver_name = _resolver()
    rows = []
    inventories: dict[str, dict] = {}
    for path in corpus_files():
        if args.only and path.stem not in args.only.split(","):
            continue
        spec = load_kernel_file(path)
        signature, constexprs, attrs = spec.specialization()
        row = {"kernel": spec.name, "name": spec.kernel.fn.__name__, "grid": list(spec.grid),
               "params": [[p, signature[p]] for p in spec.params if signature[p] != "constexpr"],
               "scalars": {p: v for p, v in spec.scalars.items()}, "tensors": {p: spec.tensors[p] for p in spec.tensors}}
        try:
            compiled = triton_compile(ASTSource(fn=spec.kernel, signature=signature, constexprs=constexprs,
                                                attrs=attrs), dict(spec.options))
        except Exception as error:  # a kernel Triton 3.6 cannot compile is reported, not fatal
            cause = error.__cause__ or error
            row["error"] = (f"Triton {version} cannot compile it for sm_90: {type(cause).__name__} "
                            f"{_last_line(str(cause))}").strip()
            rows.append(row)
            print(f"  {spec.name}: {row['error']}", flush=True)
            continue
        row.update(save_cubin(build, spec.name, compiled))
        row["ptx_inventory"] = ptx_inventory(compiled["ptx"])
        if args.store_ir:  # test data: this Triton's TTGIR and PTX inventory (tests/kernels/test_triton_lowering.py)
            from linear_layouts.triton_model.compile import strip_paths

            store = Path(args.store_ir)
            store.mkdir(parents=True, exist_ok=True)
            (store / f"{spec.name}.ttgir").write_text(strip_paths(compiled["ttgir"], CORPUS))
            inventories[spec.name] = row["ptx_inventory"]
        try:
            row["predicted"] = predict(spec, compiled["ttgir"], resolver, triton_version=version)
            row["variants"] = [dict(name=name, grid=list(grid), ctas=_ctas(grid),
                                    predicted=_short(predict(spec, compiled["ttgir"], resolver, triton_version=version,
                                                             grid=grid) if grid != _full(spec.grid)
                                                     else row["predicted"]))
                               for name, grid in launch_grids(spec.grid)]
        except Exception as error:
            row["error"] = f"report failed: {type(error).__name__}: {error}"[:400]
        rows.append(row)
        print(f"  {spec.name}: ld {row.get('predicted', {}).get('ld')} st {row.get('predicted', {}).get('st')} "
              f"{row.get('error', '')}", flush=True)
    plan = {"compiled_by": f"Triton {version}", "resolver": resolver_name, "seconds": round(time.time() - start, 1),
            "rows": rows}
    (build / "plan.json").write_text(json.dumps(plan, indent=1, default=list))
    if args.store_ir:
        (Path(args.store_ir) / "ptx_shared.json").write_text(json.dumps({"triton": version, "sm_90": inventories},
                                                                       indent=1, sort_keys=True) + "\n")
    print(f"prepared {sum('cubin' in r for r in rows)} / {len(rows)} cubins in {time.time() - start:.0f} s -> {build}")
    return 0


#: SMs of the H100 / H200 (sm_90): a "wave" launch is this many CTAs (one per SM)
WAVE_CTAS = 132
#: each launch grid is profiled this many times (ncu counts are not always the same on a repeat)
REPEATS = 3


def _full(grid) -> tuple[int, int, int]:
    return tuple(int(g) for g in grid) + (1,) * (3 - len(grid))


def _ctas(grid) -> int:
    return int(grid[0]) * int(grid[1]) * int(grid[2])


def launch_grids(grid) -> list[tuple[str, tuple[int, int, int]]]:
    """The grids each kernel is measured at, smallest first, without repeats: ``cta1`` (the CTA of program
    id (0, 0, 0) alone), ``wave`` (the first <= WAVE_CTAS CTAs of the grid in x-major order: x, then y, then
    z as far as they fit) and ``full`` (the kernel's realistic grid). A kernel computes its tiles from its
    program id and its scalars, so a prefix of its grid is the same work per CTA; the prediction for each
    grid counts exactly the CTAs launched (``trips.grid_op_counts``: masked tails and pid-dependent loops
    evaluated per CTA; ``tl.num_programs`` is the reduced grid's; a lone CTA takes its spin locks at the
    first try, its inputs being fresh with the locks zeroed: ``trips.op_counts``'s ``free_locks``).

    >>> launch_grids((64, 64))
    [('cta1', (1, 1, 1)), ('wave', (64, 2, 1)), ('full', (64, 64, 1))]
    >>> launch_grids((97,))
    [('cta1', (1, 1, 1)), ('full', (97, 1, 1))]
    """
    full = _full(grid)
    x = min(full[0], WAVE_CTAS)
    y = min(full[1], WAVE_CTAS // x)
    z = min(full[2], WAVE_CTAS // (x * y))
    out = [("cta1", (1, 1, 1))] + [("wave", (x, y, z))] * ((x, y, z) not in ((1, 1, 1), full))
    return out + [("full", full)] * (full != (1, 1, 1))


def _short(predicted: dict) -> dict:
    return {k: predicted[k] for k in ("ld", "st", "cp_async", "unknown_counts")}


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return (lines[-1] if lines else "")[:300]


_CUPY_DTYPES = {"fp16": "float16", "bf16": "uint16", "fp32": "float32", "fp64": "float64", "fp8e5": "uint8",
                "fp8e4nv": "uint8", "i8": "int8", "u8": "uint8", "i16": "int16", "i32": "int32", "i64": "int64",
                "i1": "bool_"}
_SCALARS = {"i32": "int32", "i64": "int64", "u32": "uint32", "u64": "uint64", "fp32": "float32",
            "fp64": "float64", "i1": "bool_"}


def make_args(row: dict):
    """Every launch argument of ``row``'s kernel (CuPy arrays on the GPU: random normal values scaled by
    0.5, small fp8 values, zeros or integers in a range as TENSORS says; scalars as given)."""
    import cupy
    import numpy as np

    rng = cupy.random.default_rng(0)
    args = []
    for name, ty in row["params"]:
        if not ty.startswith("*"):
            args.append(getattr(np, _SCALARS[ty])(row["scalars"][name]))
            continue
        entry = row["tensors"][name]
        shape, init = (entry, None) if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], list)) \
            else entry
        shape = tuple(int(n) for n in shape)
        element = ty[1:]
        dtype = getattr(cupy, _CUPY_DTYPES[element])
        if init == "zeros":
            t = cupy.zeros(shape, dtype=dtype)
        elif isinstance(init, list) and init and init[0] == "randint":
            t = rng.integers(init[1], init[2], size=shape, dtype=cupy.int64).astype(dtype)
        elif element.startswith("fp8"):
            t = rng.integers(0, 64, size=shape, dtype=cupy.int32).astype(cupy.uint8)  # |x| < 2: finite
        elif element == "bf16":
            t = ((rng.standard_normal(shape, dtype=cupy.float32) * 0.5).view(cupy.uint32) >> 16).astype(cupy.uint16)
        elif element.startswith("fp"):
            t = (rng.standard_normal(shape, dtype=cupy.float32) * 0.5).astype(dtype)
        else:
            t = rng.integers(0, 64, size=shape, dtype=cupy.int64).astype(dtype)
        args.append(t)
    return args


def launch_one(build: Path, row: dict, grid=None, loaded: dict | None = None) -> None:
    """One launch of ``row``'s kernel on ``grid`` (default its full grid) with fresh arguments (zeros where
    the kernel wants zeros: locks and counters start clean on every launch)."""
    import cupy

    loaded = {} if loaded is None else loaded
    kernel = loaded.get(row["kernel"]) or loaded.setdefault(row["kernel"], TritonCubin(build, row))
    args = make_args(row)
    cupy.cuda.runtime.deviceSynchronize()
    kernel.launch(tuple(grid or row["grid"]), args)
    cupy.cuda.runtime.deviceSynchronize()
    del args
    cupy.get_default_memory_pool().free_all_blocks()


def launch_child(args) -> int:
    """Child (under ncu, or of ``check_launches``): launch each item of ``--launch`` in order -- a corpus
    kernel's name, or ``name@X.Y.Z`` for that grid -- until ``--until``, printing ``LAUNCHED item`` after
    each (an error is printed, and ends the child)."""
    build = Path(args.build)
    plan = {r["kernel"]: r for r in json.loads((build / "plan.json").read_text())["rows"]}
    loaded: dict = {}
    for item in args.launch.split(","):
        if args.until and time.time() > args.until:
            break
        name, _, grid = item.partition("@")
        try:
            launch_one(build, plan[name], tuple(int(g) for g in grid.split(".")) if grid else None, loaded)
        except Exception as error:  # noqa: BLE001 - the parent records it
            print(f"FAILED {name} {type(error).__name__}: {str(error)[:300]}", flush=True)
            return 1
        print(f"LAUNCHED {item}", flush=True)
    return 0


def check_launches(build: Path, names: list[str], deadline) -> dict[str, str]:
    """``name -> "ok"`` or why not, for each kernel launched once in a child process; a kernel that
    fails (or kills the CUDA context) is recorded and a new child goes on after it, so one bad kernel
    does not take the others with it."""
    outcome: dict[str, str] = {}
    todo = list(names)
    while todo and deadline.left() > 40:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--mode", "launch", "--build", str(build),
               "--launch", ",".join(todo), "--until", str(deadline.end - 40)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=max(10.0, deadline.left() - 35))
            rc, out, err = proc.returncode, proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            rc, err = 0, "timeout"  # treated as the budget
        failed = False
        for line in out.splitlines():
            if line.startswith("LAUNCHED "):
                outcome[line.split()[1]] = "ok"
            elif line.startswith("FAILED "):
                outcome[line.split()[1]] = "does not run here: " + line.split(" ", 2)[2]
                failed = True
        rest = [n for n in todo if n not in outcome]
        if rc == 0 or not rest:
            todo = rest  # all launched, or the child stopped at the budget
            break
        if not failed:  # the child died at rest[0] without a word
            outcome[rest[0]] = "does not run here: the process died: " + err.strip()[-300:]
            rest = rest[1:]
        todo = rest
    for name in todo:
        outcome.setdefault(name, "not run: budget")
    return outcome


def available_metrics(timeout: float) -> set[str]:
    """Base metric names the device's ncu knows (``--query-metrics`` lists them without ``.sum``)."""
    try:
        out = subprocess.run(["ncu", "--query-metrics", "--csv"], capture_output=True, text=True, timeout=timeout).stdout
    except (OSError, subprocess.TimeoutExpired):
        return set()
    return {line.split(",")[0].strip('"') for line in out.splitlines()}


# --------------------------------------------------------------------------------------------------
# predictions (this library; CPU or device)
# --------------------------------------------------------------------------------------------------
def _resolver():
    """The project's TTGIR attribute parser (no Triton involved in reading the layouts)."""
    from linear_layouts.triton_model.encodings import default_resolver

    return default_resolver(), "linear_layouts.layouts.ttgir"


def predict(spec, ttgir: str, resolver, cc: int = 90, triton_version: str = "", grid=None) -> dict:
    """The report of a TTGIR for ``spec``'s launch (on ``grid``, default the spec's), summed: predicted
    ld / st / cp.async wavefronts per launch, the static instruction inventory of the model, and what is
    left out."""
    from linear_layouts.triton_model.ir_text import parse_module
    from linear_layouts.pipeline.report import OUTSIDE_LSU_COUNTERS, analyze_module
    from linear_layouts.triton_model.trips import grid_op_counts

    module = parse_module(ttgir)
    scalars = {f"%{k}": v for k, v in spec.scalars.items() if isinstance(v, int)}
    counts = grid_op_counts(module.functions[0], scalars, tuple(grid or spec.grid))
    report = analyze_module(module, resolver=resolver, name=spec.name, counts=counts, cc=cc, with_triton_estimate=False,
                            triton_version=triton_version)
    ld = st = cp = 0
    unknown: list[str] = []
    inventory: dict[str, int] = {}
    ops = []
    for op in report.ops:
        for ins in op.triton.stores + op.triton.loads:
            if ins.count == 0:
                continue  # SASS-only accesses (a TMA descriptor's tensormap.replace): no PTX instruction
            key = _inventory_key(ins.instruction, ins.bytes)
            inventory[key] = inventory.get(key, 0) + ins.count // max(1, report.num_warps)
        if op.count is None:
            unknown.append(f"{op.kind} at {op.loc}")
            continue
        if op.kind == "async_copy":
            cp += op.count * op.triton.store_wavefronts
        else:
            st += op.count * op.triton.store_wavefronts
        ld += op.count * op.triton.load_wavefronts
        ops.append({"op": op.kind, "loc": str(op.loc), "count": op.count, "st": op.triton.store_wavefronts,
                    "ld": op.triton.load_wavefronts, "instructions": [i.instruction for i in op.triton.stores + op.triton.loads]})
    left_out: dict[str, int] = {}
    outside: dict[str, int] = {}
    for u in report.unmodeled:
        if u.count == 0:
            continue
        key = f"{u.op}: {u.reason}"
        into = outside if u.op in OUTSIDE_LSU_COUNTERS else left_out
        into[key] = into.get(key, 0) + 1
    return {"ld": ld, "st": st, "cp_async": cp, "unknown_counts": unknown, "left_out": left_out,
            "outside_counters": outside,
            "model_inventory": dict(sorted(inventory.items())), "ops": ops}


def _inventory_key(instruction: str, nbytes: int) -> str:
    if "matrix" in instruction:
        return instruction
    if instruction.startswith("cp.async"):
        return instruction
    return f"{instruction[:2]}.shared.{nbytes}B"


def ptx_inventory(ptx: str) -> dict[str, int]:
    sys.path.insert(0, str(ROOT / "tools"))
    from compile_triton_kernels import ptx_shared_inventory

    return ptx_shared_inventory(ptx)


def _match(p: dict, m: dict) -> tuple[bool, str]:
    """(ld and st equal, how cp.async was counted) for one grid's prediction ``p`` and ncu counts ``m``."""
    st_ok, st_cp_ok = m.get(ST) == p["st"], m.get(ST) == p["st"] + p["cp_async"]
    if m.get(LD) != p["ld"] or not (st_ok or st_cp_ok) or p.get("unknown_counts"):
        return False, ""
    return True, "" if p["cp_async"] == 0 or st_ok == st_cp_ok else (
        " (cp.async writes not in op_st)" if st_ok else " (cp.async writes counted in op_st)")


def _launch(row: dict, name: str) -> dict | None:
    return next((v for v in row.get("launches") or [] if v["name"] == name and v.get("min")), None)


def verdict(row: dict) -> tuple[bool, str]:
    """(exact, reason) for one kernel with both a prediction and a measurement.

    The rule: where a 1-CTA launch was measured, exact <=> the minimum over its repeats of ncu's ld and st
    wavefronts equals the prediction for that one CTA (st: with or without the cp.async writes); the
    full-size launch's minimum against its prediction is stated beside it (``full exact`` or its excess).
    Runs without the reduced grids (before 2026-11-26 17:00) compare the full-size launch.
    """
    p, m = row["predicted"], row["measured"]
    one = _launch(row, "cta1")
    full_ok, full_how = _match(p, m)
    outside = ("; not in the counters (async proxy / mbarriers): "
               + ", ".join(sorted({k.split(":")[0] for k in p.get("outside_counters") or {}}))) \
        if p.get("outside_counters") else ""
    if one is not None:
        ok, how = _match(one["predicted"], one["min"])
        beside = "full exact" if full_ok else f"full {_excess(p, m, _ctas(_full(row.get('grid') or [1])))}"
        if ok:
            return True, f"exact per CTA{how}; {beside}{outside}"
    elif full_ok:
        return True, "exact" + full_how + outside
    reasons = []
    if p["left_out"]:
        reasons.append("not modeled: " + "; ".join(p["left_out"]))
    if p["unknown_counts"]:
        reasons.append("data-dependent execution counts: " + ", ".join(p["unknown_counts"][:3]))
    ptx = row.get("ptx_inventory")
    static_model = {k: v for k, v in p["model_inventory"].items() if not k.startswith("cp.async")}
    if ptx is not None and ptx != static_model:
        reasons.append(f"model's instructions differ from the device Triton's PTX: model {static_model}, PTX {ptx}")
    if not reasons:
        reasons.append("same instructions as the PTX; wavefronts or execution counts differ")
    if one is not None:
        reasons.append(f"1 CTA {_excess(one['predicted'], one['min'])}")
    reasons.append(f"full {_excess(p, m, _ctas(_full(row.get('grid') or [1])))}")
    return False, "; ".join(reasons)


def _excess(p: dict, m: dict, ctas: int = 0) -> str:
    """``ld +x% st +y%``: ncu over the prediction (st against the nearer of st and st + cp.async); with
    ``ctas``, also the difference per CTA (a fraction on a grid of identical CTAs is no fixed per-CTA
    model error).

    >>> _excess({"ld": 64, "st": 64, "cp_async": 0}, {LD: 72.0, ST: 64.0}, ctas=4)
    'ld +12.5% (+2 per CTA) st +0.0%'
    """
    def pct(got, want):
        if got is None:
            return "-"
        text = f"{got - want:+g}" if want == 0 else f"{100 * (got - want) / want:+.1f}%"
        return text + (f" ({(got - want) / ctas:+.4g} per CTA)" if ctas > 1 and got != want else "")
    st_want = min((p["st"], p["st"] + p["cp_async"]), key=lambda w: abs((m.get(ST) or 0) - w))
    return f"ld {pct(m.get(LD), p['ld'])} st {pct(m.get(ST), st_want)}"


# --------------------------------------------------------------------------------------------------
def write_results(out: Path, meta: dict, rows: list[dict]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "gpu_kernels.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    measured = [r for r in rows if r.get("measured")]
    exact = [r for r in measured if r.get("exact")]
    prepared = [r for r in rows if "cubin" in r]
    repeats = meta.get("repeats", 1)
    lines = [f"# Kernel report vs ncu ({meta.get('mode')})", "",
             f"Device: {meta.get('device')}; date {meta.get('date')}; cubins by {meta.get('triton')}; "
             f"CuPy {meta.get('cupy')}; ncu {meta.get('ncu')}; layouts read by {meta.get('resolver')}.", ""]
    share = f" ({100 * len(exact) / len(measured):.0f}%; target >= 90%)" if measured else ""
    with_cta = [r for r in measured if _launch(r, "cta1")]
    rule = ("exact per CTA (min over the repeats of a 1-CTA launch = the prediction for that CTA, ld and st)"
            if with_cta else "exact (ld and st wavefronts of one launch)")
    lines.append(f"**Summary: {rule} on {len(exact)} / {len(measured)} kernels measured{share}; "
                 f"{len(prepared)} / {len(rows)} corpus kernels compiled by {meta.get('triton')} for sm_90.**")
    if with_cta:
        full = sum(_match(r["predicted"], r["measured"])[0] for r in measured)
        wave = [r for r in measured if _launch(r, "wave")]
        wave_ok = sum(_match(_launch(r, "wave")["predicted"], _launch(r, "wave")["min"])[0] for r in wave)
        lines += ["", f"Beside it: the full-size launch (min of {repeats}) is exact on {full} / {len(measured)}; "
                  f"one wave ({WAVE_CTAS} CTAs or the grid's x-major prefix that fits) on {wave_ok} / {len(wave)}."]
    lines += ["", "What is counted: ncu's `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum` / `_op_st.sum` "
              "(the LSU's shared-memory wavefronts) of each launch, against the report's loads / stores of "
              "convert_layout, local_load / local_store / local_alloc, tt.reduce / tt.scan's shared steps, histogram "
              "bins, scalar atomics' broadcast and TMA descriptors, times their executions over the CTAs launched "
              "(cp.async writes predicted apart; st compared with and without them). Outside both counters (measured), "
              "named in the verdict: wgmma / TMA / TMEM traffic (async proxy) and mbarriers. Not predicted, a reason "
              "for a difference: atom.shared, tt.gather, data-dependent loops. "
              + (f"Each grid is launched {repeats} times under ncu with fresh inputs; `min (spread)` is the smallest "
                 "count and max - min." if repeats > 1 else "Each kernel was launched once under ncu, on its full grid."),
              "",
              "Reproduce: `bash benchmarks/gpu_workflow_prepare.sh` (CPU), then "
              "`bash benchmarks/gpu_workflow_run.sh OUT 180` (GPU).", ""]
    if meta.get("note"):
        lines += [meta["note"], ""]
    if meta.get("ncu_tail"):
        lines += ["ncu (tail):", "", "```", meta["ncu_tail"][-1500:], "```", ""]
    lines += ["| kernel | grid | predicted ld / st (cp.async) | ncu ld / st | 1 CTA: predicted / ncu min (spread) | "
              "wave: CTAs, ncu over prediction | verdict |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        p, m = r.get("predicted") or {}, r.get("measured") or {}
        full = _launch(r, "full")
        spread = f" (spread {full['spread'].get(LD, 0):g} / {full['spread'].get(ST, 0):g})" if full else ""
        one, wave = _launch(r, "cta1"), _launch(r, "wave")
        one_text = "-" if one is None else (
            f"{one['predicted']['ld']} / {one['predicted']['st']} vs {one['min'].get(LD, '-'):g} / "
            f"{one['min'].get(ST, '-'):g} ({one['spread'].get(LD, 0):g} / {one['spread'].get(ST, 0):g})")
        wave_text = "-" if wave is None else f"{wave['ctas']}: {_excess(wave['predicted'], wave['min'])}"
        grid = "x".join(str(g) for g in r.get("grid", []))
        meas = f"{m.get(LD, '-')} / {m.get(ST, '-')}{spread}" if m else "-"
        pred = f"{p.get('ld', '-')} / {p.get('st', '-')} ({p.get('cp_async', '-')})" if p else "-"
        lines.append(f"| {r['kernel']} | {grid} | {pred} | {meas} | {one_text} | {wave_text} | "
                     f"{r.get('verdict', r.get('error', ''))[:300]} |")
    (out / "gpu_kernels.md").write_text("\n".join(lines) + "\n")


def _summarize(launches: list[dict]) -> dict:
    """min and max - min of each metric over one grid's repeated launches."""
    keys = sorted({k for launch in launches for k in launch})
    return dict(min={k: min(launch.get(k, float("inf")) for launch in launches) for k in keys},
                spread={k: max(launch.get(k, 0) for launch in launches) - min(launch.get(k, 0) for launch in launches)
                        for k in keys})


def measure(args) -> int:
    """Device: run every prepared kernel once (does it launch?), then one ncu process that launches each
    runnable kernel's grids (1 CTA, one wave, full; ``--repeats`` times each, fresh inputs every time);
    writes ``gpu_kernels.json`` / ``.md`` to ``--out`` within ``--budget`` seconds."""
    deadline, build, plan, env = start_measure(args)
    rows = plan["rows"]
    meta = {"date": env["date"], "device": env.get("gpu"), "triton": plan.get("compiled_by"), "cupy": env.get("cupy"),
            "ncu": env.get("ncu"), "python": env.get("python"), "resolver": plan.get("resolver"), "mode": "device",
            "environment": env, "repeats": args.repeats}
    candidates = [r["kernel"] for r in rows if "cubin" in r and "predicted" in r]
    outcome = check_launches(build, candidates, deadline)
    runnable = [name for name in candidates if outcome.get(name) == "ok"]
    for row in rows:
        if row["kernel"] in outcome and outcome[row["kernel"]] != "ok":
            row["error"] = outcome[row["kernel"]]
    meta["run_seconds"] = round(args.budget - deadline.left(), 1)
    print(f"{len(runnable)} kernels run ({meta['run_seconds']} s)", flush=True)
    have = available_metrics(min(20.0, deadline.left() / 4))
    metrics = [LD, ST] + [m for m in EXTRA if have and m.rsplit(".", 1)[0] in have]
    meta["metrics"] = metrics
    by_row = {r["kernel"]: r for r in rows}
    sequence = [(name, v) for name in runnable for v in by_row[name].get("variants") or
                [dict(name="full", grid=_full(by_row[name]["grid"]))] for _ in range(args.repeats)]
    got: dict[tuple[str, str], list[dict]] = {}
    if sequence and deadline.left() > 15:
        names = [by_row[n]["name"] for n in runnable]
        regex = "regex:^(" + "|".join(re.escape(n) for n in dict.fromkeys(names)) + ")$"
        child = [sys.executable, str(Path(__file__).resolve()), "--mode", "launch", "--build", str(build),
                 "--launch", ",".join(f"{n}@{'.'.join(map(str, v['grid']))}" for n, v in sequence),
                 "--until", str(deadline.end - 8)]
        ncu = run_ncu(child, regex, metrics, len(sequence), deadline.left() - 4)
        meta.update(ncu_seconds=ncu["seconds"], ncu_rc=ncu["rc"], ncu_tail=ncu["tail"], ncu_launches=len(ncu["launches"]))
        for (name, v), launch in zip(sequence, ncu["launches"]):
            if launch["kernel"] != by_row[name]["name"]:
                by_row[name]["verdict"] = f"ncu's launch is {launch['kernel']}, not {by_row[name]['name']}: not compared"
                continue
            got.setdefault((name, v["name"]), []).append(launch["metrics"])
    for row in rows:
        row["launches"] = [dict(v, counts=got[(row["kernel"], v["name"])], **_summarize(got[(row["kernel"], v["name"])]))
                           for v in row.get("variants") or [] if (row["kernel"], v["name"]) in got]
        full = _launch(row, "full") or (_launch(row, "cta1") if _ctas(_full(row.get("grid", [1]))) == 1 else None)
        if full is None:
            if "predicted" in row and "error" not in row and "verdict" not in row:
                row["verdict"] = "no ncu measurement"
            continue
        row["measured"] = full["min"]
        row["exact"], row["verdict"] = verdict(row)
    meta["seconds"] = round(args.budget - deadline.left(), 1)
    write_results(Path(args.out), meta, rows)
    measured_rows = [r for r in rows if r.get("measured")]
    print(f"exact on {sum(1 for r in measured_rows if r.get('exact'))} / {len(measured_rows)} kernels; "
          f"{meta['seconds']} s")
    return 0


def rescore(args) -> int:
    """CPU, after a device run: the run's ncu numbers against the predictions of a fresh ``--mode prepare``
    (the same cubins: same Triton 3.6 compile, so the same kernels), for a model changed since the run;
    rewrites ``gpu_kernels.json`` / ``.md`` into ``--out``."""
    old = json.loads(Path(args.results).read_text())
    plan = {r["kernel"]: r for r in json.loads((Path(args.build) / "plan.json").read_text())["rows"]}
    rows = []
    for before in old["rows"]:
        row = dict(plan.get(before["kernel"], before))
        for key in ("measured", "error"):
            if key in before:
                row[key] = before[key]
        fresh = {v["name"]: v["predicted"] for v in row.get("variants") or []}
        row["launches"] = [dict(launch, predicted=fresh.get(launch["name"], launch["predicted"]))
                           for launch in before.get("launches") or []]
        if row.get("measured") and row.get("predicted"):
            row["exact"], row["verdict"] = verdict(row)
        else:
            row["verdict"] = before.get("verdict") or row.get("error", "")
        rows.append(row)
    meta = dict(old["meta"], rescored=datetime_now(), mode="device, rescored on the CPU with the current model")
    if args.note:
        meta["note"] = f"Rescored {meta['rescored']}: {args.note}"
    write_results(Path(args.out), meta, rows)
    measured = [r for r in rows if r.get("measured")]
    print(f"exact on {sum(1 for r in measured if r.get('exact'))} / {len(measured)} kernels (rescored)")
    return 0


def datetime_now() -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=["prepare", "measure", "launch", "rescore"], required=True)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "build" / "kernels_out"))
    ap.add_argument("--build", default=str(BUILD))
    ap.add_argument("--budget", type=float, default=100.0, help="measure: seconds for everything")
    ap.add_argument("--repeats", type=int, default=REPEATS, help="measure: launches of each grid under ncu")
    ap.add_argument("--only", default="", help="prepare: comma list of corpus kernels (default: all)")
    ap.add_argument("--any-triton", action="store_true", help="prepare with a Triton other than 3.6 (tests)")
    ap.add_argument("--store-ir", default="", help="prepare: also write each TTGIR and the PTX inventory there")
    ap.add_argument("--results", default="", help="rescore: a device run's gpu_kernels.json")
    ap.add_argument("--note", default="", help="rescore: what changed in the model (written above the table)")
    ap.add_argument("--launch", help=argparse.SUPPRESS)
    ap.add_argument("--until", type=float, default=0.0, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    return {"prepare": prepare, "measure": measure, "launch": launch_child, "rescore": rescore}[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
