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
* not counted, listed per kernel when present: TMA copies and wgmma / tcgen05 operand reads (async
  proxy, not the LSU), tensor memory, histograms' atom.shared counting, tt.gather,
  mbarrier operations, and ops whose execution count depends on data (spin loops).

Every kernel is compiled by the device's own Triton (its layouts may differ from 3.9's): the JIT's own
warm-up in parallel worker processes, then one ncu process launches each kernel once (``-k regex`` on the
corpus kernel names, ``--launch-count`` = their number); the report is built from the TTGIR that Triton
generated there, with this library. Writes ``DIR/gpu_kernels.json`` and ``DIR/gpu_kernels.md``.

    python benchmarks/gpu_kernels.py --out DIR            # on the device (H100): ~2-4 minutes
    python benchmarks/gpu_kernels.py --out DIR --cpu      # here: Triton 3.9 compiles for sm_90, no run
"""

from __future__ import annotations

import argparse
import csv
import datetime
import io
import json
import os
import platform
import re
import subprocess
import sys
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

CORPUS = ROOT / "tests" / "data" / "triton_kernels"
LD = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
ST = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
#: read when the device's ncu knows them (diagnostics for the kernels that differ)
EXTRA = [
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_stsm.sum",
    "smsp__inst_executed_op_shared_ld.sum",
    "smsp__inst_executed_op_shared_st.sum",
    "smsp__inst_executed_op_ldsm.sum",
    "smsp__inst_executed_op_stsm.sum",
    "smsp__inst_executed_op_ldgsts.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
]

TORCH_DTYPES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64",
                "fp8e5": "float8_e5m2", "fp8e4nv": "float8_e4m3fn", "i8": "int8", "u8": "uint8",
                "i16": "int16", "i32": "int32", "i64": "int64", "i1": "bool"}


# --------------------------------------------------------------------------------------------------
# running kernels (device)
# --------------------------------------------------------------------------------------------------
def corpus_files() -> list[Path]:
    return sorted(CORPUS.glob("*.py"))


def make_kwargs(spec, torch):
    """Every parameter of ``spec``'s kernel as a keyword: tensors allocated on the GPU (random normal,
    or as TENSORS says), scalars and constexprs as given."""
    gen = torch.Generator(device="cuda").manual_seed(0)
    kwargs = {}
    for p in spec.params:
        if p in spec.constexprs:
            kwargs[p] = spec.constexprs[p]
            continue
        ty = spec.signature[p]
        if not ty.startswith("*"):
            kwargs[p] = spec.scalars[p]
            continue
        entry = spec.tensors[p]
        shape, init = (entry, None) if isinstance(entry, list) else entry
        dtype = getattr(torch, TORCH_DTYPES[ty[1:]])
        if init == "zeros":
            t = torch.zeros(shape, dtype=dtype, device="cuda")
        elif isinstance(init, tuple) and init[0] == "randint":
            t = torch.randint(init[1], init[2], shape, generator=gen, device="cuda", dtype=torch.int64).to(dtype)
        elif dtype.is_floating_point:
            t = (torch.randn(shape, generator=gen, device="cuda", dtype=torch.float32) * 0.5).to(dtype)
        else:
            t = torch.randint(0, 64, shape, generator=gen, device="cuda", dtype=torch.int64).to(dtype)
        kwargs[p] = t
    return kwargs


def _allocator(torch):
    import triton

    if hasattr(triton, "set_allocator"):
        triton.set_allocator(lambda size, alignment, stream: torch.empty(size, device="cuda", dtype=torch.int8))


def _compiled(kernel, grid, kwargs, options):
    """Compile through the JIT (Triton's own specialization) and return the CompiledKernel."""
    if hasattr(kernel, "warmup"):
        try:
            out = kernel.warmup(grid=grid, **kwargs, **options)
            if hasattr(out, "asm"):
                return out
        except TypeError:
            pass
    out = kernel[grid](**kwargs, **options)
    if hasattr(out, "asm"):
        return out
    for cache in getattr(kernel, "device_caches", {}).values():  # the JIT's cache of compiled kernels
        found = [k for k in cache[0].values() if hasattr(k, "asm")]
        if found:
            return found[-1]
    raise RuntimeError("the JIT returned no compiled kernel to read the TTGIR from")


def compile_worker(path: str) -> dict:
    """Worker process: compile one kernel with the device's Triton (populating its cache) and return
    its TTGIR, PTX and version."""
    import torch
    import triton

    from linear_layouts.kernels.spec import load_kernel_file

    t0 = time.time()
    spec = load_kernel_file(path)
    try:
        _allocator(torch)
        kwargs = make_kwargs(spec, torch)
        compiled = _compiled(spec.kernel, spec.grid, kwargs, dict(spec.options))
        torch.cuda.synchronize()
        return {"kernel": spec.name, "name": spec.kernel.fn.__name__, "ok": True, "triton": triton.__version__,
                "ttgir": compiled.asm["ttgir"], "ptx": compiled.asm.get("ptx", ""), "seconds": round(time.time() - t0, 2)}
    except Exception as error:  # a kernel the device's Triton cannot compile or run is reported, not fatal
        return {"kernel": spec.name, "name": spec.kernel.fn.__name__, "ok": False,
                "error": f"{type(error).__name__}: {str(error).strip().splitlines()[-1] if str(error).strip() else ''}"[:400],
                "traceback": traceback.format_exc()[-1500:]}


def launch_all(names: list[str]) -> None:
    """Child under ncu: launch each named corpus kernel once (compiled already: cache hits)."""
    import torch

    from linear_layouts.kernels.spec import load_kernel_file

    _allocator(torch)
    for path in corpus_files():
        if path.stem not in names:
            continue
        spec = load_kernel_file(path)
        kwargs = make_kwargs(spec, torch)
        torch.cuda.synchronize()
        spec.kernel[spec.grid](**kwargs, **dict(spec.options))
        torch.cuda.synchronize()
        del kwargs
        torch.cuda.empty_cache()


def available_metrics(timeout: int) -> set[str]:
    """Base metric names the device's ncu knows (``--query-metrics`` lists them without ``.sum``)."""
    try:
        out = subprocess.run(["ncu", "--query-metrics", "--csv"], capture_output=True, text=True, timeout=timeout).stdout
    except (OSError, subprocess.TimeoutExpired):
        return set()
    return {line.split(",")[0].strip('"') for line in out.splitlines()}


def run_ncu(names: list[str], kernel_names: list[str], metrics: list[str], timeout: int) -> tuple[dict, str]:
    regex = "regex:^(" + "|".join(re.escape(n) for n in kernel_names) + ")$"
    log = Path("/tmp") / f"ncu_kernels_{os.getpid()}.csv"
    cmd = ["ncu", "--csv", "--print-units", "base", "--log-file", str(log), "--metrics", ",".join(metrics),
           "-k", regex, "--launch-count", str(len(kernel_names)), sys.executable, __file__, "--launch",
           ",".join(names)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        tail = (proc.stdout + proc.stderr)[-3000:]
    except subprocess.TimeoutExpired as exc:
        tail = f"ncu timed out after {timeout} s: {exc}"
    text = log.read_text() if log.exists() else ""
    measured: dict[str, dict[str, float]] = {}
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        name = row.get("Kernel Name", "").split("(")[0].strip()
        try:
            value = float(row.get("Metric Value", "nan").replace(",", ""))
        except ValueError:
            continue
        measured.setdefault(name, {})[row.get("Metric Name", "")] = value
    return measured, tail


# --------------------------------------------------------------------------------------------------
# predictions (this library; CPU or device)
# --------------------------------------------------------------------------------------------------
def _resolver():
    """The project's TTGIR attribute parser (no Triton involved in reading the layouts)."""
    from linear_layouts.kernels.layouts import default_resolver

    return default_resolver(), "linear_layouts.ttgir"


def predict(spec, ttgir: str, resolver, cc: int = 90) -> dict:
    """The report of a TTGIR for ``spec``'s launch, summed: predicted ld / st / cp.async wavefronts per
    launch, the static instruction inventory of the model, and what is left out."""
    from linear_layouts.kernels.ir_text import parse_module
    from linear_layouts.kernels.report import analyze_module
    from linear_layouts.kernels.trips import grid_op_counts

    module = parse_module(ttgir)
    scalars = {f"%{k}": v for k, v in spec.scalars.items() if isinstance(v, int)}
    counts = grid_op_counts(module.functions[0], scalars, spec.grid)
    report = analyze_module(module, resolver=resolver, name=spec.name, counts=counts, cc=cc, with_triton_estimate=False)
    ld = st = cp = 0
    unknown: list[str] = []
    inventory: dict[str, int] = {}
    ops = []
    for op in report.ops:
        for ins in op.triton.stores + op.triton.loads:
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
    left_out = {}
    for u in report.unmodeled:
        if u.count == 0:
            continue
        key = f"{u.op}: {u.reason}"
        left_out[key] = left_out.get(key, 0) + 1
    return {"ld": ld, "st": st, "cp_async": cp, "unknown_counts": unknown, "left_out": left_out,
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


def verdict(row: dict) -> tuple[bool, str]:
    """(exact, reason) for one kernel with both a prediction and a measurement."""
    p, m = row["predicted"], row["measured"]
    ld_ok = m.get(LD) == p["ld"]
    st_ok = m.get(ST) == p["st"]
    st_cp_ok = m.get(ST) == p["st"] + p["cp_async"]
    if ld_ok and (st_ok or st_cp_ok):
        how = "" if p["cp_async"] == 0 or st_ok == st_cp_ok else (" (cp.async writes not in op_st)" if st_ok
                                                                  else " (cp.async writes counted in op_st)")
        return True, "exact" + how
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
    return False, "; ".join(reasons)


# --------------------------------------------------------------------------------------------------
def write_results(out: Path, meta: dict, rows: list[dict]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "gpu_kernels.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    measured = [r for r in rows if r.get("measured")]
    exact = [r for r in measured if r.get("exact")]
    lines = [f"# Kernel report vs ncu ({meta.get('mode')})", "",
             f"Device: {meta.get('device')}; date {meta.get('date')}; Triton {meta.get('triton')}; "
             f"torch {meta.get('torch')}; ncu {meta.get('ncu')}; layouts read by {meta.get('resolver')}.", ""]
    if measured:
        lines.append(f"**Exact (ld and st wavefronts of one launch) on {len(exact)} / {len(measured)} kernels.**")
        lines.append("")
    lines += ["| kernel | predicted ld | ncu ld | predicted st | cp.async | ncu st | verdict |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        p, m = r.get("predicted") or {}, r.get("measured") or {}
        lines.append(f"| {r['kernel']} | {p.get('ld', '-')} | {m.get(LD, '-')} | {p.get('st', '-')} | "
                     f"{p.get('cp_async', '-')} | {m.get(ST, '-')} | {r.get('verdict', r.get('error', ''))[:300]} |")
    (out / "gpu_kernels.md").write_text("\n".join(lines) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="benchmarks/results/gpu_kernels")
    ap.add_argument("--cpu", action="store_true", help="compile with the local Triton for sm_90 and predict; no GPU")
    ap.add_argument("--only", default="", help="comma list of corpus kernels (default: all)")
    ap.add_argument("--jobs", type=int, default=12)
    ap.add_argument("--ncu-timeout", type=int, default=170)
    ap.add_argument("--launch", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.launch is not None:
        launch_all(args.launch.split(","))
        return 0
    start = time.time()
    files = [p for p in corpus_files() if not args.only or p.stem in args.only.split(",")]
    resolver, resolver_name = _resolver()
    from linear_layouts.kernels.spec import load_kernel_file

    specs = {p.stem: load_kernel_file(p) for p in files}
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "python": platform.python_version(), "mode": "cpu" if args.cpu else "device", "resolver": resolver_name}
    rows: list[dict] = []
    if args.cpu:
        import triton

        from linear_layouts.kernels.compile import compile_kernel

        meta.update(device="none (CPU: Triton compiles for sm_90, nothing runs)", triton=triton.__version__)
        for name, spec in specs.items():
            row = {"kernel": name}
            try:
                ir = compile_kernel(spec, "sm_90")
                row["predicted"] = predict(spec, ir.ttgir, resolver)
            except Exception as error:
                row["error"] = f"{type(error).__name__}: {error}"[:400]
            rows.append(row)
            print(json.dumps({k: v for k, v in row.items() if k != "predicted"} | {
                "ld": row.get("predicted", {}).get("ld"), "st": row.get("predicted", {}).get("st")}), flush=True)
        write_results(Path(args.out), meta, rows)
        print(f"done in {time.time() - start:.0f} s")
        return 0

    import torch
    import triton

    meta.update(device=torch.cuda.get_device_name(0), triton=triton.__version__, torch=torch.__version__)
    try:
        meta["ncu"] = subprocess.run(["ncu", "--version"], capture_output=True, text=True, timeout=60).stdout.strip().splitlines()[-1]
    except (OSError, subprocess.TimeoutExpired, IndexError):
        meta["ncu"] = "not found"
    import multiprocessing as mp

    with ProcessPoolExecutor(max_workers=args.jobs, mp_context=mp.get_context("spawn")) as pool:
        compiled = {r["kernel"]: r for r in pool.map(compile_worker, [str(p) for p in files])}
    meta["compile_seconds"] = round(time.time() - start, 1)
    runnable = [n for n, r in compiled.items() if r["ok"]]
    have = available_metrics(60)
    metrics = [LD, ST] + [m for m in EXTRA if have and m.rsplit(".", 1)[0] in have]  # query lists base names
    meta["metrics"] = metrics
    t0 = time.time()
    measured, tail = run_ncu(runnable, [compiled[n]["name"] for n in runnable], metrics, args.ncu_timeout)
    meta["ncu_seconds"] = round(time.time() - t0, 1)
    meta["ncu_tail"] = tail if len(measured) < len(runnable) else ""
    for name, spec in specs.items():
        c = compiled[name]
        row = {"kernel": name}
        if not c["ok"]:
            row["error"] = "does not run here: " + c["error"]
            rows.append(row)
            continue
        try:
            row["predicted"] = predict(spec, c["ttgir"], resolver)
        except Exception as error:
            row["error"] = f"report failed: {type(error).__name__}: {error}"[:400]
            row["traceback"] = traceback.format_exc()[-1500:]
            rows.append(row)
            continue
        row["ptx_inventory"] = ptx_inventory(c["ptx"])
        row["measured"] = measured.get(c["name"], {})
        if row["measured"]:
            row["exact"], row["verdict"] = verdict(row)
        else:
            row["verdict"] = "no ncu measurement"
        rows.append(row)
    meta["seconds"] = round(time.time() - start, 1)
    write_results(Path(args.out), meta, rows)
    measured_rows = [r for r in rows if r.get("measured")]
    print(f"exact on {sum(1 for r in measured_rows if r.get('exact'))} / {len(measured_rows)} kernels; "
          f"{meta['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
