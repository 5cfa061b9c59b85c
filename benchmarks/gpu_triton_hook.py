"""``linear_layouts.triton.enable()`` on the device (issue 34, items 1-2): every corpus kernel
(tests/data/triton_kernels) launched as a plain ``@triton.jit`` function through Triton's JIT -- without
the hook, with ``enable("model")`` and with ``enable("measured")`` -- on the same seeded inputs at its
realistic size (the kernel file's TENSORS / SCALARS / GRID), each mode from a fresh ``JITFunction`` (the
kernel file imported again: no in-memory kernel shared between modes, as in a user's new process). Per kernel:
the outputs of both hooked runs against Triton's (every tensor argument: integers exactly, floats within
``RTOL`` / ``ATOL``; a hooked run of Triton's own binary computes what Triton's does and is not judged: Triton's
own outputs may differ from launch to launch), each variant's decision (rewritten or not, the model's predicted
gain; the measured choice's basis -- measured faster / not faster, no predicted gain, outputs differ, not measurable, error, or
no decision at all -- its reason, and the hook's own samples of both variants), the hook's trace of the
measured launch (``trace``; with ``--log`` also the children's stderr in ``OUT/gpu_triton_hook.log``), the time
of each variant's first call, and the time per launch of the three variants, all on the same buffers (the
Triton run's arguments: input placement alone moves equal binaries apart): a CUDA graph of ``inner``
launches per sample (``inner`` makes a sample about ``SAMPLE_US``), the three replayed in rotating order
``--repeats`` times, median per launch. Then ours / Triton per kernel and the geomean of Triton / ours over
the kernels whose binary differs. Two integration checks follow while the budget lasts: a corpus kernel
under ``triton.autotune`` in measured mode (outputs, decisions per config), and a ``torch.compile``d function
in model mode (Inductor in this process: our stage must see its Triton kernels; outputs against eager).

Compiles: Triton compiles on the device cost seconds per kernel and variant, so ``run`` first warms Triton's
cache in parallel worker processes (``warm``: Triton's compile, the model mode's, and the measured choice's
variant for the kernel file's scalars -- what the JIT will ask for; no GPU needed), then launches. A cache
carried from elsewhere (``--triton-cache``) is used as it is; what the JIT still compiles shows in the
first-call times. The measured choices are made in the run itself (the decision cache starts empty).

    PYTHONPATH=src python3 benchmarks/gpu_triton_hook.py --out DIR --log           # device, ~2 minutes
    PYTHONPATH=src:/tmp/triton-3.6.0 python3 benchmarks/gpu_triton_hook.py --mode warm --jobs 2   # CPU dry run
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
import harness  # noqa: E402, F401  (puts src/ on the path)
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

from harness.environment import environment  # noqa: E402
from harness.hook_launch import compare, full_args, launch_kwargs, torch_args, warm_one, why  # noqa: E402
from harness.hook_report import NO_DECISION, Trace as _Trace, decision_record as _decision  # noqa: E402
from harness.hook_report import markdown, one_line, summary  # noqa: E402
from harness.results import write_outputs  # noqa: E402
from harness.workflow import Deadline  # noqa: E402

CORPUS = ROOT / "tests" / "data" / "triton_kernels"
BUILD = ROOT / "benchmarks" / "build" / "triton_hook"
RESULTS = ROOT / "benchmarks" / "results"
#: launches per graph sample: enough for a sample to last about this long (microseconds)
SAMPLE_US = 200.0
MAX_INNER = 200
VARIANTS = ("triton", "model", "measured")


#: the kernel files run (``--corpus``: another folder of kernel files, e.g. benchmarks/heldout_kernels)
KERNELS = CORPUS


def corpus(only: str = "") -> list[Path]:
    names = set(filter(None, only.split(",")))
    return [p for p in sorted(KERNELS.glob("*.py")) if not names or p.stem in names]


# --------------------------------------------------------------------------------------------------
# warm: Triton's cache filled in parallel (no GPU)
# --------------------------------------------------------------------------------------------------
def _worker_env(triton_cache: str, ours_cache: str) -> None:
    os.environ["TRITON_CACHE_DIR"] = triton_cache
    os.environ["LINEAR_LAYOUTS_CACHE"] = ours_cache


def measuring_reserve(kernels: int) -> float:
    """Seconds of the budget the warm step leaves to the measuring children for ``kernels`` kernels."""
    return min(90.0, 20.0 + 3.0 * kernels)


def warm(paths: list[Path], arch: int, jobs: int, triton_cache: Path, ours_cache: Path, deadline: Deadline) -> dict:
    """``warm_one`` for each kernel in ``jobs`` processes (spawned: no CUDA context in them)."""
    import multiprocessing

    start = time.time()
    rows = {}
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_worker_env,
                               initargs=(str(triton_cache), str(ours_cache)))
    futures = {pool.submit(warm_one, str(p), arch): p.stem for p in paths}
    try:
        for future in as_completed(futures, timeout=max(10.0, deadline.left() - measuring_reserve(len(paths)))):
            try:
                row = future.result()
            except Exception as error:  # noqa: BLE001 - a dead worker is recorded
                row = {"kernel": futures[future], "error": f"worker: {why(error)}"}
            rows[row["kernel"]] = row
            print(f"  warm {row['kernel']}: {row.get('error') or {k: v for k, v in row.items() if k.endswith('_s')}}",
                  flush=True)
    except TimeoutError:  # what is left compiles in the JIT
        for future, name in futures.items():
            rows.setdefault(name, {"kernel": name, "error": "warm-up not finished within the budget"})
    pool.shutdown(wait=False, cancel_futures=True)
    return {"seconds": round(time.time() - start, 1), "jobs": jobs, "rows": rows}


# --------------------------------------------------------------------------------------------------
# device: one kernel, three variants
# --------------------------------------------------------------------------------------------------
def _graph(launch, inner: int):
    """A CUDA graph of ``inner`` launches (warmed on a side stream first, as PyTorch's docs do)."""
    import torch

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        launch()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(inner):
            launch()
    return graph


def time_variants(launches: dict, repeats: int) -> dict:
    """Per-launch medians (microseconds) of each variant: graphs of ``inner`` launches (else plain launches
    between events), replayed in rotating order ``repeats`` times."""
    import torch

    first = next(iter(launches.values()))
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    first()
    start.record()
    for _ in range(3):
        first()
    stop.record()
    stop.synchronize()
    estimate = max(start.elapsed_time(stop) * 1e3 / 3, 0.5)
    inner = max(1, min(MAX_INNER, math.ceil(SAMPLE_US / estimate)))
    try:
        runners = {name: _graph(go, inner).replay for name, go in launches.items()}
        how = "graph"
    except Exception as error:  # noqa: BLE001 - some launches cannot be captured: time them directly
        torch.cuda.synchronize()
        how = f"events ({type(error).__name__} in graph capture)"

        def direct(go):
            def run():
                for _ in range(inner):
                    go()
            return run

        runners = {name: direct(go) for name, go in launches.items()}
    names = list(runners)
    for run in runners.values():
        run()
    events = []
    for r in range(repeats):
        for k in range(len(names)):
            name = names[(r + k) % len(names)]
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            begin.record()
            runners[name]()
            end.record()
            events.append((name, begin, end))
    torch.cuda.synchronize()
    samples: dict[str, list[float]] = {name: [] for name in names}
    for name, begin, end in events:
        samples[name].append(begin.elapsed_time(end) * 1e3 / inner)
    return {"inner": inner, "timing": how, "samples": repeats,
            "us": {name: round(statistics.median(v), 3) for name, v in samples.items()},
            "iqr_us": {name: round(_iqr(v), 3) for name, v in samples.items()}}


def _iqr(values: list[float]) -> float:
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q3 - q1


def run_kernel(path: Path, repeats: int, trace: _Trace | None = None) -> dict:
    """The three variants of one corpus kernel (module doc), each from its own ``JITFunction``; ``trace``:
    the hook's steps are kept in the row (``trace``)."""
    import torch
    import triton

    import linear_layouts.triton as lt
    from linear_layouts.kernels.spec import load_kernel_file

    spec = load_kernel_file(path)
    if spec.needs_allocator:
        triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    # Triton twice: a kernel whose own outputs differ from run to run (atomics adding floats in another order)
    # sets the envelope a hooked run's outputs are judged in
    modes = {"triton": None, "triton again": None, "model": "model", "measured": "measured"}
    args, kernels, first_call, traces = {}, {}, {}, {}
    for variant, mode in modes.items():
        fresh = load_kernel_file(path)  # a new JITFunction: each mode meets the kernel as a user's process does
        args[variant] = torch_args(spec)
        torch.cuda.synchronize()
        if trace is not None:
            trace.take()
        start = time.time()
        if mode is None:
            lt.disable()
            kernels[variant] = fresh.kernel[spec.grid](*args[variant], **launch_kwargs(spec))
        else:
            with lt.enabled(mode):
                kernels[variant] = fresh.kernel[spec.grid](*args[variant], **launch_kwargs(spec))
        torch.cuda.synchronize()
        first_call[variant] = round(time.time() - start, 3)
        if trace is not None:
            traces[variant] = trace.take()
    first_call.pop("triton again", None)
    row: dict = {"kernel": spec.name, "first_call_s": first_call, "trace": traces.get("measured", [])}
    names = [p for p in spec.params if p not in spec.constexprs]
    envelope = {}  # tensors Triton's own binary does not reproduce: the largest difference of its two runs
    for name, theirs, again in zip(names, args["triton"], args["triton again"]):
        if torch.is_tensor(theirs):
            _, worst = compare(again, theirs)
            if worst > 0:
                envelope[name] = worst
    row["nondeterministic"] = {name: round(worst, 6) for name, worst in envelope.items()}
    for variant in ("model", "measured"):
        differs = kernels[variant].asm["cubin"] != kernels["triton"].asm["cubin"]
        checks = []  # Triton's own binary computes what Triton's does: only another binary is judged
        for name, theirs, ours in zip(names, args["triton"], args[variant]):
            if differs and torch.is_tensor(theirs):
                same, worst = compare(ours, theirs)
                if not same and worst > 2 * envelope.get(name, 0.0):
                    checks.append(f"{name} (max |diff| {worst:.3g})")
        decision = _decision(kernels[variant]) or (NO_DECISION if variant == "measured" else None)
        row[variant] = {"correct": not checks, "wrong": checks, "decision": decision, "binary_differs": differs}
    grid = tuple(spec.grid) + (1,) * (3 - len(spec.grid))  # a CompiledKernel's launcher reads grid[0..2]
    # timed on one set of buffers: each variant's own (equal) inputs sit at other addresses, and placement
    # alone moves identical binaries apart; the outputs were compared above
    shared = full_args(spec, args["triton"])
    launches = {variant: (lambda k=kernels[variant], a=shared: k[grid](*a)) for variant in VARIANTS}
    row["time"] = time_variants(launches, repeats)
    us = row["time"]["us"]
    for variant in ("model", "measured"):
        row[variant]["ratio"] = round(us[variant] / us["triton"], 4) if us["triton"] > 0 else None
    del args, kernels, launches
    torch.cuda.empty_cache()
    return row


# --------------------------------------------------------------------------------------------------
# device: integration checks
# --------------------------------------------------------------------------------------------------
def check_autotune() -> dict:
    """int4_dequant_matmul under ``triton.autotune`` (two configs) in measured mode: its output against a plain
    launch, and each config's decision."""
    import torch
    import triton

    import linear_layouts.triton as lt
    from linear_layouts.kernels.spec import load_kernel_file

    spec = load_kernel_file(CORPUS / "int4_dequant_matmul.py")
    plain = load_kernel_file(CORPUS / "int4_dequant_matmul.py")
    configs = [triton.Config({}, num_warps=spec.num_warps, num_stages=s) for s in (2, 3)]
    tuned = triton.autotune(configs=configs, key=[], restore_value=[
        p for p in spec.params if spec.signature.get(p, "").startswith("*")])(spec.kernel)
    reference = torch_args(plain)
    plain.kernel[plain.grid](*reference, **launch_kwargs(plain))
    args = torch_args(spec)
    start = time.time()
    with lt.enabled("measured"):
        tuned[spec.grid](*args, **spec.constexprs)
    torch.cuda.synchronize()
    wrong = [name for name, a, b in zip([p for p in spec.params if p not in spec.constexprs], args, reference)
             if torch.is_tensor(a) and not compare(a, b)[0]]
    found = {}
    for key, kernel in tuned.fn.device_caches[torch.cuda.current_device()][0].items():
        decision = _decision(kernel)
        if decision is not None:
            found[f"config {len(found)}"] = decision
    return {"seconds": round(time.time() - start, 1), "correct": not wrong, "wrong": wrong,
            "best_config": str(tuned.best_config), "decisions": found}


def check_inductor() -> dict:
    """A ``torch.compile``d function in model mode, Inductor compiling in this process: how many Triton
    compiles our stage saw (and rewrote), and the output against eager."""
    import torch
    import torch._inductor.config as inductor_config

    import linear_layouts.triton as lt
    from linear_layouts.pipeline.triton_hook import hook, stage

    inductor_config.compile_threads = 1
    inductor_config.fx_graph_cache = False
    seen = {"stages": 0, "rewritten": 0}
    add_stages, engine = hook.add_stages, stage.engine_ttgir

    def counting_stages(*args, **kwargs):
        seen["stages"] += 1
        return add_stages(*args, **kwargs)

    def counting_engine(*args, **kwargs):
        outcome = engine(*args, **kwargs)
        seen["rewritten"] += outcome.ttgir is not None
        return outcome

    def f(x, w):
        return (torch.softmax(x @ w, dim=-1).t().contiguous() * 2 + x.t()).sum(dim=0)

    x = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
    w = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
    hook.add_stages, stage.engine_ttgir = counting_stages, counting_engine
    start = time.time()
    try:
        with lt.enabled("model", timeout_s=10):
            out = torch.compile(f)(x, w)
        torch.cuda.synchronize()
    finally:
        hook.add_stages, stage.engine_ttgir = add_stages, engine
    same, worst = compare(out.float(), f(x, w).float())
    return {"seconds": round(time.time() - start, 1), "triton_compiles_seen": seen["stages"],
            "rewritten": seen["rewritten"], "correct": same, "max_abs_diff": worst}


# --------------------------------------------------------------------------------------------------
# device: the measuring child, restarted after a kernel that kills it
# --------------------------------------------------------------------------------------------------
def child(args) -> int:
    deadline = Deadline(args.budget)
    trace = _Trace()
    for name in args.kernels.split(","):
        if not name:
            continue
        if deadline.left() < 8:
            print(f"RESULT {json.dumps({'kernel': name, 'error': 'not run: budget'})}", flush=True)
            continue
        try:
            row = run_kernel(KERNELS / f"{name}.py", args.repeats, trace)
        except Exception as error:  # noqa: BLE001 - recorded per kernel
            row = {"kernel": name, "error": why(error), "trace": trace.take()}
        print(f"RESULT {json.dumps(row)}", flush=True)
    for check, function in (("autotune", check_autotune), ("inductor", check_inductor)):
        if check not in args.checks.split(","):
            continue
        if deadline.left() < (20 if check == "autotune" else 45):
            print(f"CHECK {json.dumps({'check': check, 'error': 'not run: budget'})}", flush=True)
            continue
        try:
            found = function()
        except Exception as error:  # noqa: BLE001 - recorded
            found = {"error": why(error)}
        print(f"CHECK {json.dumps({'check': check, **found})}", flush=True)
    return 0


def measure(args, names: list[str], deadline: Deadline, env: dict) -> tuple[dict, dict, str]:
    """Children over ``names`` until all ran or the budget is spent; a kernel that kills a child is
    recorded with the child's last words and the next child goes on after it. Returns the rows, the
    checks and the children's stderr (the hook's trace where ``$LINEAR_LAYOUTS_TRITON_LOG`` is on)."""
    rows: dict[str, dict] = {}
    checks: dict[str, dict] = {}
    log: list[str] = []
    todo, pending_checks = list(names), args.checks
    while (todo or pending_checks) and deadline.left() > 10:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--mode", "child", "--corpus", str(KERNELS),
               "--kernels", ",".join(todo),
               "--repeats", str(args.repeats), "--budget", str(deadline.left() - 8), "--checks", pending_checks]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=max(10.0, deadline.left() - 3))
            out, err = proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            err = (exc.stderr.decode() if isinstance(exc.stderr, bytes) else (exc.stderr or "")) + "\ntimeout"
        log.append(err)
        for line in out.splitlines():
            if line.startswith("RESULT "):
                row = json.loads(line[len("RESULT "):])
                rows[row["kernel"]] = row
            elif line.startswith("CHECK "):
                found = json.loads(line[len("CHECK "):])
                checks[found.pop("check")] = found
        todo = [n for n in todo if n not in rows]
        if todo:
            rows[todo[0]] = {"kernel": todo[0], "error": f"the measuring process died here: {err.strip()[-300:]}"}
            todo = todo[1:]
            pending_checks = ",".join(c for c in args.checks.split(",") if c and c not in checks)
        else:
            missing = [c for c in args.checks.split(",") if c and c not in checks]
            if missing:
                checks.update({c: {"error": f"the process died in this check: {err.strip()[-300:]}"} for c in missing})
            pending_checks = ""
    for name in todo:
        rows[name] = {"kernel": name, "error": "not run: budget"}
    return rows, checks, "".join(log)


def require_torch_gpu() -> None:
    """Exit with one clear line where PyTorch or a CUDA device is missing (a CPU dry run stops here)."""
    try:
        import torch

        if torch.cuda.is_available():
            return
        reason = "no CUDA device"
    except ImportError as error:
        reason = f"PyTorch is missing ({error})"
    sys.exit(f"run mode launches kernels through Triton's JIT and needs PyTorch with a CUDA GPU: {reason} "
             f"(--mode warm runs on the CPU)")


def run(args) -> int:
    require_torch_gpu()
    deadline = Deadline(args.budget)
    paths = corpus(args.only)
    scratch = Path(tempfile.mkdtemp(prefix="gpu_triton_hook_"))
    triton_cache = Path(args.triton_cache) if args.triton_cache else scratch / "triton"
    ours_cache = scratch / "linear_layouts"  # empty: every measured choice is made in this run
    ours_cache.mkdir(mode=0o700)
    env = dict(os.environ, TRITON_CACHE_DIR=str(triton_cache), LINEAR_LAYOUTS_CACHE=str(ours_cache))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH", "")]))
    import torch

    major, minor = torch.cuda.get_device_capability()
    arch = 10 * major + minor
    warmed = {}
    if args.jobs > 0:
        warmed = warm(paths, arch, args.jobs, triton_cache, ours_cache, deadline)
    if args.log:
        env["LINEAR_LAYOUTS_TRITON_LOG"] = "1"
    rows, checks, log = measure(args, [p.stem for p in paths], deadline, env)
    from linear_layouts.pipeline.triton_hook.settings import package_key

    meta = {"environment": environment(), "repeats": args.repeats, "package_key": package_key(), "arch": arch,
            "warm": warmed, "seconds": round(args.budget - deadline.left(), 1)}
    ordered = [rows[p.stem] for p in paths]
    stats = summary(ordered)
    data = {"meta": meta, "summary": stats, "rows": ordered, "checks": checks}
    write_outputs(Path(args.out), "gpu_triton_hook", data, markdown(meta, ordered, checks, stats))
    (Path(args.out) / "gpu_triton_hook.log").write_text(log)
    for row in ordered:
        print(one_line(row), flush=True)
    print(json.dumps(stats, indent=1))
    shutil.rmtree(scratch, ignore_errors=True)
    return 0


def warm_only(args) -> int:
    """CPU: the warm step alone, into ``--triton-cache`` (default: BUILD/triton_cache)."""
    triton_cache = Path(args.triton_cache or BUILD / "triton_cache")
    ours_cache = Path(tempfile.mkdtemp(prefix="gpu_triton_hook_ours_"))
    found = warm(corpus(args.only), args.arch, args.jobs, triton_cache, ours_cache, Deadline(args.budget))
    print(json.dumps({"seconds": found["seconds"], "errors": {k: v["error"] for k, v in found["rows"].items()
                                                              if "error" in v}}, indent=1))
    shutil.rmtree(ours_cache, ignore_errors=True)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=["run", "warm", "child"], default="run")
    ap.add_argument("--out", default=str(RESULTS), help="run: where gpu_triton_hook.{json,md} go")
    ap.add_argument("--only", default="", help="comma list of corpus kernels (default: all)")
    ap.add_argument("--corpus", default=str(CORPUS), help="the folder of kernel files (default: the corpus)")
    ap.add_argument("--budget", type=float, default=220.0, help="seconds for everything")
    ap.add_argument("--repeats", type=int, default=100, help="timed samples per kernel and variant")
    ap.add_argument("--jobs", type=int, default=min(16, os.cpu_count() or 1),
                    help="warm-up compile processes (0: none, the JIT compiles)")
    ap.add_argument("--triton-cache", default="", help="Triton's cache folder (default: a fresh one)")
    ap.add_argument("--arch", type=int, default=90, help="warm mode: the compute capability compiled for")
    ap.add_argument("--checks", default="autotune,inductor", help="integration checks after the kernels")
    ap.add_argument("--log", action="store_true",
                    help="the hook traces each step on the children's stderr ($LINEAR_LAYOUTS_TRITON_LOG=1), "
                         "kept in OUT/gpu_triton_hook.log")
    ap.add_argument("--kernels", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.repeats < 1:
        ap.error("--repeats must be at least 1")
    global KERNELS
    KERNELS = Path(args.corpus).resolve()
    if not KERNELS.is_dir():
        ap.error(f"--corpus: no folder {args.corpus}")
    return {"run": run, "warm": warm_only, "child": child}[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
