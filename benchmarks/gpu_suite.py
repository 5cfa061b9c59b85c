"""GPU suite for linear_layouts.codegen: correctness, hardware counters, sanitizers, benchmarks.

One script, one device call, bounded in time (``--budget`` seconds, default 530):

    # CPU, once (compiles every cubin into benchmarks/build/cubins; ~10 min on 2 cores):
    PYTHONPATH=src python benchmarks/gpu_suite.py --mode prepare
    # device (carry benchmarks/build):
    PYTHONUNBUFFERED=1 PYTHONPATH=src python benchmarks/gpu_suite.py --out $OUT
    # CPU, any time: the report (gpu_suite.md) again from OUT/gpu_suite.json, with today's scoring
    PYTHONPATH=src python benchmarks/gpu_suite.py --mode report --out benchmarks/results

    # the cost model's inputs on whichever device the run gets (~2 minutes: the microbenchmarks and the
    # conversion loop of the in-warp pairs, both mechanisms, no Triton peer), then the fit on the CPU:
    PYTHONPATH=src python benchmarks/gpu_suite.py --mode prepare --in-warp          # CPU, once
    PYTHONPATH=src python benchmarks/gpu_suite.py --in-warp --only microbench,bench --out $OUT   # device
    PYTHONPATH=src python benchmarks/fit_cost_model.py --results $OUT/gpu_suite.json --write   # CPU

(Without the CPU step the device builds the kernel list and compiles every cubin itself, one nvcc per
core: about a minute more.)  Stages (each timed; a stage that would not fit in what is left of the
budget is skipped and named):

1. ``microbench``: the building blocks of the cost model (``gpu_microbench.py``);
2. ``triton``: Triton's ``gl.convert_layout`` peers of every case compiled in parallel (one process
   per CPU core), so the benchmark never waits on a compiler;
3. ``verify``: every kernel on the GPU, every element (3 tiles with one round trip, 2 with none);
4. ``bench``: the conversion loop (data in L2, 1 + 2 x iterations dependent conversions per CTA)
   ours vs Triton for every pair, register permutations included, the in-warp pairs first (shuffles
   vs shared memory, both timed); the legacy baselines for some; whole kernels (load, convert, store)
   for the first ``--whole-cases`` and every register permutation; ours and Triton timed in
   ``--rounds`` alternating rounds; it stops where the later stages' estimates (``STAGE_ESTIMATE``) begin;
5. ``copy``, ``transpose``: device copy bandwidth; 8192^2 transposes (8/16/32-bit);
6. ``gather``: warp-local gather (shuffles) vs shared-memory gather vs Triton's ``tl.gather``
   (the regime of the paper's Fig. 8: small per-warp gather axes);
7. ``ncu``: shared-memory wavefront counters of every shared-memory kernel (one ncu process), against
   the analysis prediction and codegen's model of its emitted instructions;
8. ``memcheck``, ``racecheck``: compute-sanitizer over every kernel (one process each);
9. ``profile``: ``ncu --set full`` of the slowest pairs relative to Triton (ours and Triton's),
   Triton's cubins of them (``artifacts.tar.gz``).

Resumable: every stage's result is written to ``gpu_suite.json`` as it finishes and the benchmark
writes one line per case to ``bench_rows.jsonl``; ``--resume DIR`` takes the finished stages and
benchmarked cases of an earlier run from ``DIR`` (e.g. a copy of a previous ``$OUT``).

Writes ``gpu_suite.json``, ``gpu_suite.md`` (commit-ready: copy to benchmarks/results/),
``gpu_bench.png``, ``microbench.json`` and ``artifacts.tar.gz`` under ``--out``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import subprocess
import sys
import tarfile
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
import harness  # noqa: E402, F401  (puts src/ on the path)
os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(HERE / "build" / "cubins"))

from harness import ranking as model_ranking  # noqa: E402
from harness.cases import (  # noqa: E402
    Case, all_cases, in_warp_cases, in_warp_suite_cases, named_cases, random_cases, register_cases, wide_cases,
)
from harness.transposes import (  # noqa: E402, F401  (ONE_TILE_OPTIONS, PEER_TILE_TRANSPOSES: read as gpu_suite.X)
    ONE_TILE_OPTIONS, PEER_TILE_TRANSPOSES, SAME_SIZE_COPY_CTAS_PER_SM, SAME_SIZE_COPY_SOURCE, same_size_copy_kernel,
    transpose_kernels,
)

from linear_layouts.analysis.shuffles import plan_shuffle, same_warp_data  # noqa: E402
from linear_layouts.codegen.conversion import RegisterCopy, SharedConversion, canonical_vector_order  # noqa: E402
from linear_layouts.codegen.kernel import KernelSource, emit_conversion_kernel  # noqa: E402
from linear_layouts.codegen.model import emitted_wavefronts  # noqa: E402
from linear_layouts.codegen.plan import baseline_step, conversion_step, kernel_name  # noqa: E402
from linear_layouts.codegen.ptx import compile_cubin  # noqa: E402
from linear_layouts.codegen.shuffle import ShuffleConversion  # noqa: E402

from harness.environment import environment as device_environment  # noqa: E402
from harness.ncu import METRIC_LD, METRIC_ST, SOURCE_WAVEFRONTS, metric_values, source_wavefronts  # noqa: E402
from harness.timing import geomean, time_back_to_back  # noqa: E402


@dataclass
class Variant:
    case: Case
    variant: str  # ours | unswizzled | padded | shared | shuffle (the forced alternatives)
    kernel: KernelSource
    step_kind: str
    predicted: tuple[int, int] | None = None  # analysis (store, load) wavefronts
    modelled: tuple[int, int] | None = None  # codegen's model of its own instructions
    instructions: dict = field(default_factory=dict)
    note: str = ""
    model_us: float | None = None  # cost model: predicted µs of one conversion round trip per CTA
    steps: list | None = None  # model_ranking.StepRecord of the forward and backward step (as dicts)


def _kind(step) -> str:
    if isinstance(step, SharedConversion):
        return "shared memory" if not step.padding else "shared memory (padded)"
    if isinstance(step, ShuffleConversion):
        return "warp shuffle"
    if isinstance(step, RegisterCopy):
        return "registers"
    return type(step).__name__


def _plan_prediction(src, dst, bits, force_shared=False):
    from linear_layouts.analysis import conversion as cv

    if force_shared:
        s = cv.plan_shared_memory(src, dst, bits)
    else:
        p = cv.plan_conversion(src, dst, bits)
        s = p if p.kind == cv.SHARED_MEMORY else None
    return None if s is None else (s.store.wavefronts, s.load.wavefronts)


def _model_us(fwd, bwd, case: Case) -> float | None:
    """The cost model's time (µs) of one forward + backward conversion of one CTA."""
    try:
        from linear_layouts.codegen.cost import step_time_ns
    except ImportError:
        return None
    try:
        return (step_time_ns(fwd, case.warps) + step_time_ns(bwd, case.warps)) / 1e3
    except Exception:
        return None


def _variant(case: Case, name: str, fwd, bwd, predicted=None, note="") -> "Variant":
    s, d, w = case.src, case.dst, case.bits // 8
    k = emit_conversion_kernel(kernel_name(f"ll_{name}", case.name), s, d, w, fwd, bwd)
    v = Variant(case, name, k, _kind(fwd), predicted=predicted, instructions=fwd.instruction_counts(), note=note,
                model_us=_model_us(fwd, bwd, case))
    if isinstance(fwd, SharedConversion):
        v.modelled = emitted_wavefronts(canonical_vector_order(fwd))
    if isinstance(fwd, (SharedConversion, ShuffleConversion)) and isinstance(bwd, (SharedConversion, ShuffleConversion)):
        v.steps = [asdict(x) for x in model_ranking.kernel_records(s, d, case.bits, fwd, bwd)]
    return v


def build_variants(cases: list[Case], baselines_for: int) -> list[Variant]:
    """Every kernel of the suite: ours (the plan); for in-warp pairs the other mechanism too (shuffles
    or shared memory, whichever the plan did not pick); the legacy baselines (unswizzled, padded) for
    the named cases and the first ``baselines_for`` other shared-memory pairs."""
    out: list[Variant] = []
    shared_seen = 0
    for case in cases:
        s, d, bits = case.src, case.dst, case.bits
        note = ""
        fwd = conversion_step(s, d, bits)
        bwd = conversion_step(d, s, bits)
        predicted = None
        if isinstance(fwd, SharedConversion):
            try:
                predicted = _plan_prediction(s, d, bits)
            except Exception:
                predicted = None
        out.append(_variant(case, "ours", fwd, bwd, predicted, note))
        in_warp = same_warp_data(s, d) and not isinstance(fwd, RegisterCopy)
        if in_warp and isinstance(fwd, SharedConversion):
            try:
                out.append(_variant(case, "shuffle", ShuffleConversion(plan_shuffle(s, d, bits)),
                                    ShuffleConversion(plan_shuffle(d, s, bits))))
            except Exception as exc:
                print(f"  shuffle variant of {case.name} skipped: {exc}")
        if in_warp and isinstance(fwd, ShuffleConversion) or isinstance(fwd, RegisterCopy) and case.family == "named":
            f = conversion_step(s, d, bits, force_shared=True)
            b = conversion_step(d, s, bits, force_shared=True)
            out.append(_variant(case, "shared", f, b, _plan_prediction(s, d, bits, True)))
        want_baselines = case.family == "named" or shared_seen < baselines_for
        if isinstance(fwd, SharedConversion) and want_baselines:
            if case.family != "named":
                shared_seen += 1
            for padded in (False, True):
                name = "padded" if padded else "unswizzled"
                try:
                    f = baseline_step(s, d, bits, padded=padded)
                    b = baseline_step(d, s, bits, padded=padded)
                except Exception as exc:
                    print(f"  baseline {name} of {case.name} skipped: {exc}")
                    continue
                out.append(_variant(case, name, f, b))
    return out


def suite_cases(quick: bool, names: str = "") -> list[Case]:
    cases = (named_cases()[:4] + random_cases(6) + in_warp_cases(3) + wide_cases(2)) if quick else all_cases()
    if names:
        wanted = set(names.split(","))
        pool = {c.name: c for c in all_cases() + register_cases()}
        cases = [pool[n] for n in names.split(",") if n in pool]
        missing = wanted - set(pool)
        if missing:
            raise SystemExit(f"--cases: unknown {sorted(missing)}")
    return cases


def _layout_dict(layout) -> dict:
    return dict(bases=layout.bases, out_dims=dict(layout.out_dims))


def _layout_from(d: dict):
    from linear_layouts import LinearLayout

    return LinearLayout(d["bases"], d["out_dims"], require_surjective=False)


def save_variants(path: Path, variants: list[Variant]) -> None:
    rows = []
    for v in variants:
        c = v.case
        rows.append(dict(case=dict(name=c.name, src=_layout_dict(c.src), dst=_layout_dict(c.dst), bits=c.bits,
                                   warps=c.warps, family=c.family, description=c.description),
                         variant=v.variant, kernel=v.kernel.__dict__, step_kind=v.step_kind,
                         predicted=v.predicted, modelled=v.modelled, instructions=v.instructions, note=v.note,
                         model_us=v.model_us, steps=v.steps))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rows))


def load_variants(path: Path) -> list[Variant]:
    out, cases = [], {}
    for r in json.loads(path.read_text()):
        c = r["case"]
        if c["name"] not in cases:
            cases[c["name"]] = Case(c["name"], _layout_from(c["src"]), _layout_from(c["dst"]), c["bits"],
                                    c["warps"], c["family"], c["description"])
        out.append(Variant(cases[c["name"]], r["variant"], KernelSource(**r["kernel"]), r["step_kind"],
                           tuple(r["predicted"]) if r["predicted"] else None,
                           tuple(r["modelled"]) if r["modelled"] else None, r["instructions"], r["note"],
                           r.get("model_us"), r.get("steps")))
    return out


def compile_all(sources: list[str]) -> float:
    start = time.time()
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        list(pool.map(compile_cubin, sources))
    return time.time() - start


# ---------------------------------------------------------------------------------------------- GPU
def _launch_all(variants: list[Variant], tiles: int, iterations: int, only_shared: bool) -> None:
    from linear_layouts.codegen.runtime import check_kernel

    launched = wrong = 0
    for v in variants:
        if only_shared and v.predicted is None and v.modelled is None:
            continue
        wrong += check_kernel(v.kernel, tiles=tiles, iterations=iterations) != 0
        launched += 1
    print(f"SUITE SUMMARY: launched {launched} kernels, {wrong} with wrong output", flush=True)


def verify_rows(variants: list[Variant], sink) -> None:
    """Check every kernel; one JSON line per kernel to ``sink`` (flushed: a hang loses nothing)."""
    from linear_layouts.codegen.runtime import check_kernel

    for i, v in enumerate(variants):
        try:
            wrong = check_kernel(v.kernel, tiles=3, iterations=1, seed=1)
            wrong0 = check_kernel(v.kernel, tiles=2, iterations=0, seed=2)
            row = dict(case=v.case.name, variant=v.variant, wrong=wrong + wrong0, checked=5 * v.kernel.tile_elements)
        except Exception as exc:
            row = dict(case=v.case.name, variant=v.variant, wrong=-1, error=repr(exc)[:300])
        sink.write(json.dumps(row) + "\n")
        sink.flush()
        if i % 100 == 0:
            print(f"  verified {i + 1} / {len(variants)}", flush=True)


def _child(args, mode: str) -> list[str]:
    cmd = [sys.executable, __file__, "--mode", mode, "--out", args.out, "--variants", str(args.variants_path)]
    return cmd + (["--quick"] if args.quick else [])


def verify(args, variants: list[Variant]) -> list[dict]:
    """``verify_rows`` in a child process with a time limit (a hung kernel cannot stall the suite)."""
    path = Path(args.out) / "verify_rows.jsonl"
    rc, out = _tool(_child(args, "verify-child"), args.verify_timeout)
    rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    done = {(r["case"], r["variant"]) for r in rows}
    for v in variants:
        if (v.case.name, v.variant) not in done:
            rows.append(dict(case=v.case.name, variant=v.variant, wrong=-1,
                             error=f"not run: the verification child stopped (rc {rc})"))
    return rows


def _tool(cmd: list[str], timeout: int) -> tuple[int, str]:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return 124, out


def run_ncu(args, variants: list[Variant]) -> dict:
    """Shared-memory wavefronts of every shared-memory kernel (``METRIC_ST`` + ``METRIC_LD``, one CTA, one
    conversion); where they differ from the analysis prediction or codegen's model, the kernels are profiled
    again with ncu's per-instruction counters (``source_wavefronts``, at most 24 kernels) and each row gets
    ``per_instruction``: ``[store, load]`` summed over its shared instructions."""
    cmd = ["ncu", "--csv", "--metrics", f"{METRIC_LD},{METRIC_ST}", "-k", "regex:^ll_"] + _child(args, "launch-shared")
    rc, out = _tool(cmd, args.ncu_timeout)
    measured: dict[str, dict[str, float]] = {}
    for _, name, metric, value in metric_values(out):
        measured.setdefault(name, {}).setdefault(metric, []).append(value)
    rows = []
    for v in variants:
        if v.predicted is None and v.modelled is None:
            continue
        m = measured.get(v.kernel.name, {})
        st, ld = m.get(METRIC_ST, [None]), m.get(METRIC_LD, [None])
        # each kernel is launched twice: a launch that counts differently from the other is noted
        rows.append(dict(case=v.case.name, variant=v.variant, kernel=v.kernel.name, measured=[st[0], ld[0]],
                         predicted=v.predicted, modelled=v.modelled, instructions=v.instructions,
                         repeat=[st[-1], ld[-1]] if len(st) > 1 else None))

    def differs(r) -> bool:
        m = None if r["measured"][0] is None else [int(x) for x in r["measured"]]
        return m is not None and any(r[k] is not None and list(r[k]) != m for k in ("predicted", "modelled"))

    names = sorted({r["kernel"] for r in rows if differs(r)})[:24]
    source = {}
    if names:
        report = Path(args.out) / "ncu_source"
        _tool(["ncu", "--section", "SourceCounters", "-f", "-o", str(report), "-k", f"regex:^({'|'.join(names)})$"]
              + _child(args, "launch-shared"), args.ncu_timeout)
        _, text = _tool(["ncu", "-i", f"{report}.ncu-rep", "--page", "source", "--csv", "--print-source", "sass"], 300)
        source = source_wavefronts(text)
        for r in rows:
            if r["kernel"] in source:
                r["per_instruction"] = source[r["kernel"]]
    return dict(rc=rc, rows=rows, tail=out[-3000:] if not rows or rc else "", source_profiled=names,
                source_found=sorted(source))


def run_sanitizer(args, tool: str) -> dict:
    cmd = ["compute-sanitizer", "--tool", tool, "--print-limit", "20"] + _child(args, "launch-all")
    if tool == "racecheck":
        cmd[3:3] = ["--racecheck-report", "all"]
    start = time.time()
    rc, out = _tool(cmd, args.sanitizer_timeout)
    summary = [line for line in out.splitlines() if "SUMMARY" in line or "ERROR" in line.upper()][-10:]
    return dict(tool=tool, rc=rc, seconds=round(time.time() - start, 1), summary=summary, tail=out[-2000:])


# ------------------------------------------------------------------------------------------ timing
def _time(fn, repeats: int = 5, inner: int = 10) -> float:
    """Median µs per launch of ``fn``: ``inner`` launches captured in a CUDA graph (so neither our
    CuPy launches nor Triton's Python launcher add host overhead), replayed ``repeats`` times between
    CUDA events.  Falls back to plain back-to-back launches if capture fails."""
    import cupy as cp
    import torch

    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream), cp.cuda.ExternalStream(stream.cuda_stream):
        fn()  # warm up: JIT compilation, module loading
    torch.cuda.synchronize()
    try:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
                for _ in range(inner):
                    fn()
        run = graph.replay
    except Exception:
        torch.cuda.synchronize()

        def run():
            with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
                for _ in range(inner):
                    fn()
    return time_back_to_back(run, repeats, 1) / inner  # run() once to warm up, then timed repeats times


def _triton_spec(case: Case) -> dict:
    return dict(name=case.name, src=_layout_dict(case.src), dst=_layout_dict(case.dst), bits=case.bits,
                warps=case.warps)


def _triton_compile_worker(specs: list[dict], iterations: list[int]) -> list[tuple[str, str]]:
    """Compile the Gluon peers of ``specs`` (and ``tl.gather`` peers: specs with a ``gather`` shape)
    into Triton's cache (one CUDA context per worker)."""
    import torch

    from gpu_gluon_convert import gluon_launcher
    from gpu_triton_gather import triton_gather_launcher

    tdt = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
    out = []
    for spec in specs:
        if "gather" in spec:
            try:
                shape = spec["gather"]
                x = torch.zeros(shape, dtype=tdt[spec["bits"] // 8], device="cuda")
                k = torch.zeros(shape, dtype=torch.int32, device="cuda")
                peer = triton_gather_launcher(shape, 1, num_warps=spec["warps"])
                for it in iterations:
                    peer(x, k, torch.empty_like(x), it)
                torch.cuda.synchronize()
                out.append((spec["name"], "ok"))
            except Exception as exc:
                out.append((spec["name"], repr(exc)[:300]))
            continue
        try:
            src, dst = _layout_from(spec["src"]), _layout_from(spec["dst"])
            peer = gluon_launcher(src, dst, spec["warps"])
            n = src.total_out_dim_size
            x = torch.zeros(n, dtype=tdt[spec["bits"] // 8], device="cuda")
            y = torch.empty_like(x)
            for it in iterations:
                peer(x, y, it, 1)
            torch.cuda.synchronize()
            out.append((spec["name"], "ok"))
        except Exception as exc:
            out.append((spec["name"], repr(exc)[:300]))
    return out


def triton_compile(args, cases: list[Case]) -> dict:
    """Every peer compiled by a pool of processes (Triton's on-disk cache serves the benchmark)."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    start = time.time()
    specs = [_triton_spec(c) for c in cases]
    if "gather" not in args.skip_set:
        specs += [dict(name=f"gather_{shape}_{bits}", gather=shape, bits=bits, warps=wpc[0] * wpc[1])
                  for shape, spt, tpw, wpc, order in GATHER_CASES for bits in (16, 32)]
    jobs = max(1, min(args.jobs, len(specs)))
    chunks = [specs[i::jobs] for i in range(jobs)]
    results: list = []
    with ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("spawn")) as pool:
        futures = [pool.submit(_triton_compile_worker, chunk, [args.bench_iterations, 0]) for chunk in chunks]
        for f in futures:
            try:
                results += f.result(timeout=max(10, args.triton_timeout - (time.time() - start)))
            except Exception as exc:
                results.append(("?", repr(exc)[:300]))
    failed = {n: e for n, e in results if e != "ok"}
    return dict(seconds=round(time.time() - start, 1), compiled=len(results) - len(failed), failed=failed,
                jobs=jobs)


def _bench_case(args, name: str, vs: dict, whole: bool) -> list[dict]:
    """The rows of one case: every variant and Triton's peer timed (``_time``) in the conversion loop,
    ours and Triton in the whole kernel; then ``args.rounds - 1`` more rounds of ours and Triton
    alternately (Triton first), each time the median of the rounds (``<name>_rounds``: all of them),
    so that a drift of the device's clocks during the case falls on both."""
    import cupy as cp
    import numpy as np
    import torch

    from gpu_gluon_convert import gluon_launcher
    from linear_layouts.codegen.runtime import compile_kernel

    tdt = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
    case = vs["ours"].case
    w = case.bits // 8
    tile = vs["ours"].kernel.tile_elements
    rows = []
    configs = [("conversion", args.bench_tiles, args.bench_iterations)]
    if whole:
        configs.append(("whole kernel", args.whole_tiles, 0))
    for config, tiles, iters in configs:
        x = torch.randint(-100, 100, (tiles * tile,), dtype=tdt[w], device="cuda")
        y = torch.empty_like(x)
        row = dict(case=name, description=case.description, config=config, tiles=tiles, iterations=iters,
                   bits=case.bits, warps=case.warps, kind=vs["ours"].step_kind, family=case.family,
                   in_warp=same_warp_data(case.src, case.dst))
        launches = {}
        for vname, v in vs.items():
            if config == "whole kernel" and vname not in ("ours",):
                continue
            fn = compile_kernel(v.kernel)
            args_ = (cp.asarray(x), cp.asarray(y), np.int32(iters))

            def launch(fn=fn, v=v, a=args_):
                fn((tiles,), (v.kernel.threads,), a, shared_mem=v.kernel.shared_bytes)

            try:
                y.zero_()
                row[vname] = _time(launch)
                row[vname + "_correct"] = bool(torch.equal(x, y))
                row[vname + "_kind"] = v.step_kind
                if v.model_us is not None:
                    row[vname + "_model_us"] = v.model_us
                launches[vname] = launch
            except Exception as exc:
                row[vname] = None
                row[vname + "_error"] = repr(exc)[:200]
        if getattr(args, "in_warp", False):  # the fit's data: our two mechanisms, no Triton peer
            rows.append(row)
            continue
        try:
            peer = gluon_launcher(case.src, case.dst, case.warps)

            def tri(peer=peer, x=x, y=y, tiles=tiles, iters=iters):
                peer(x, y, iters, tiles)

            y.zero_()
            row["triton"] = _time(tri)
            row["triton_correct"] = bool(torch.equal(x, y))
            launches["triton"] = tri
        except Exception as exc:
            row["triton"] = None
            row["triton_error"] = repr(exc)[:300]
        if args.rounds > 1 and "ours" in launches and "triton" in launches:
            times = {k: [row[k]] for k in ("ours", "triton")}
            for _ in range(args.rounds - 1):
                for k in ("triton", "ours"):
                    times[k].append(_time(launches[k]))
            for k, ts in times.items():
                row[k + "_rounds"] = ts
                row[k] = float(sorted(ts)[len(ts) // 2])
        rows.append(row)
    return rows


def bench(args, variants: list[Variant], deadline: float, done_rows: list[dict]) -> list[dict]:
    by_case: dict[str, dict[str, Variant]] = {}
    for v in variants:
        by_case.setdefault(v.case.name, {})[v.variant] = v
    done = {r["case"] for r in done_rows}
    rows = list(done_rows)
    # whole kernels: the first --whole-cases cases and every register permutation (a lone conversion there
    # is the kernel's global load and store around word moves or byte permutes); none in an --in-warp run
    whole = set(list(by_case)[: args.whole_cases])
    whole |= {n for n, vs in by_case.items() if vs["ours"].step_kind == "registers"}
    if getattr(args, "in_warp", False):
        whole = set()
    # in-warp pairs (both mechanisms timed: the shuffle / shared and ranking targets) first
    order = sorted(by_case, key=lambda n: not ({"shuffle", "shared"} & set(by_case[n])))
    sink = open(Path(args.out) / "bench_rows.jsonl", "a")
    for i, name in enumerate(order):
        vs = by_case[name]
        if name in done:
            continue
        if time.time() > deadline:
            print(f"  bench: out of time after {i} of {len(by_case)} cases", flush=True)
            break
        new = _bench_case(args, name, vs, whole=name in whole)
        for r in new:
            sink.write(json.dumps(r) + "\n")
        sink.flush()
        rows += new
        r = new[0]
        ratio = (r["triton"] / r["ours"]) if r.get("triton") and r.get("ours") else float("nan")
        print(f"  bench {name:14s} {r['kind']:14s} ours {r.get('ours') or 0:8.1f} triton {r.get('triton') or 0:8.1f}"
              f"  {ratio:.2f}x", flush=True)
    sink.close()
    return rows


#: Launches per CUDA graph when timing the transposes and their same-size copies: a graph replay's own
#: start (and the first launch's ramp-up) is paid once per replay, so over 5 launches it added about 1 µs to
#: each 48 µs launch (H100, 2026-11-27: 8-bit 91.2% of the copy bandwidth at 5, 93.3% at 20); the copy
#: bandwidth itself is 10 back-to-back 1 GiB copies (``copy_bandwidth``), where that start is nothing.
#: (Suite runs before 2026-11-27 10:00 UTC used 5.)
TRANSPOSE_GRAPH_LAUNCHES = 20


def _own_copy(n: int, tdt, sms: int, repeats: int, scrub) -> dict:
    """Our same-size copy (``same_size_copy_kernel``) of an ``n x n`` matrix of ``tdt``, timed like the
    transposes (``_time``, CUDA graph of ``TRANSPOSE_GRAPH_LAUNCHES`` launches; ``_time_cold``) and checked
    element by element."""
    import cupy as cp
    import numpy as np
    import torch

    from linear_layouts.codegen.runtime import compile_kernel

    k = same_size_copy_kernel()
    fn = compile_kernel(k)
    a = torch.randint(-100, 100, (n, n), dtype=tdt, device="cuda")
    b = torch.zeros_like(a)
    vectors = a.numel() * a.element_size() // 16
    grid = (sms * SAME_SIZE_COPY_CTAS_PER_SM,)
    args_ = (cp.asarray(a), cp.asarray(b), np.uint64(vectors))

    def launch():
        fn(grid, (k.threads,), args_)

    us = _time(launch, repeats=repeats, inner=TRANSPOSE_GRAPH_LAUNCHES)
    with torch.cuda.stream(torch.cuda.Stream()), cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
        cold = _time_cold(launch, scrub)
    return dict(us=us, cold_us=cold, correct=bool(torch.equal(a, b)), grid=list(grid))


def _time_cold(fn, scrub, repeats: int = 5) -> float:
    """Median µs of one launch of ``fn`` between CUDA events after reading ``scrub`` (a buffer larger
    than L2: nothing of the previous launch stays cached, its dirty lines are written back first)."""
    import torch

    times = []
    for _ in range(repeats):
        scrub.sum()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e3)
    return float(sorted(times)[len(times) // 2])


def own_copy_cell(row: dict) -> str:
    """The report's ``of our same-size copy`` cell of a transpose row: our copy's µs over the
    transpose's, its µs and cold µs, e.g. ``93.2% (45.1 µs, cold 44.0)``; ``-`` for rows without
    it, ``WRONG`` appended where the copy's output was wrong."""
    if "fraction_of_own_copy" not in row:
        return "-"
    wrong = "" if row.get("own_copy_correct", True) else " WRONG"
    return (f"{100 * row['fraction_of_own_copy']:.1f}% ({row['own_copy_us']:.1f} µs, cold "
            f"{row['own_copy_cold_us']:.1f}){wrong}")


def transposes(args, copy: dict | None) -> list[dict]:
    """Large matrix transposes (fp8/fp16/fp32) through our planned conversion, against the device's
    copy bandwidth; checked against torch's transpose.  ``us``: back-to-back plain launches in a CUDA
    graph (``TRANSPOSE_GRAPH_LAUNCHES``); ``us_pdl``: the same with programmatic dependent launch
    (``runtime.launch_programmatic``; the kernels are emitted with ``pdl=True``, so each waits for the
    previous launch's memory before its first access and only the launch latency overlaps);
    ``cold_us``: one plain launch after an L2 scrub (``_time_cold``; ``same_size_copy_cold_us``
    likewise), against the graph-timed ``us`` whose back-to-back launches may find part of the
    previous launch's data in L2."""
    import cupy as cp
    import torch

    from linear_layouts.codegen.runtime import (compile_kernel, function_pointer, launch_programmatic,
                                              prefer_shared_carveout, registers_per_thread)

    rows = []
    n = args.transpose_size
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    scrub = torch.ones(1 << 25, dtype=torch.float32, device="cuda")  # 128 MiB, > L2 (50 MiB on H100)
    same: dict[int, float] = {}  # µs of torch's copy of the same n x n matrix, timed like the transposes
    same_cold: dict[int, float] = {}
    own: dict[int, dict] = {}  # our same-size copy (_own_copy), timed like the transposes
    repeats = getattr(args, "transpose_repeats", 5)  # graph replays (of TRANSPOSE_GRAPH_LAUNCHES launches) per median
    for w, tag, step, k in transpose_kernels(n):
        if args.transpose_only and tag not in args.transpose_only.split(","):
            continue
        tdt = {1: torch.int8, 2: torch.int16, 4: torch.int32}[w]
        if w not in same:
            x = torch.randint(-100, 100, (n, n), dtype=tdt, device="cuda")
            y = torch.empty_like(x)
            same[w] = _time(lambda x=x, y=y: y.copy_(x), repeats=repeats, inner=TRANSPOSE_GRAPH_LAUNCHES)
            same_cold[w] = _time_cold(lambda x=x, y=y: y.copy_(x), scrub)
            del x, y
            own[w] = _own_copy(n, tdt, sms, repeats, scrub)
            print(f"  our same-size copy, {8 * w}-bit {n}x{n}: {own[w]}", flush=True)
        fn = compile_kernel(k)
        extra = {}
        if k.persistent:  # all of an SM's shared memory for its CTAs; the grid: resident CTA slots
            try:
                prefer_shared_carveout(fn, 100)
                extra["registers"] = registers_per_thread(fn)
                extra["ctas_per_sm"] = int(cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
                    function_pointer(fn), k.threads, k.shared_bytes))
            except Exception as exc:  # the grid stays the planned one (k.ctas_per_sm per SM)
                extra["occupancy_error"] = repr(exc)[:200]
        # persistent: every resident slot, and the balanced grid (each CTA the same number of tiles)
        grids = {(tag, k.grid(sms))}
        if k.persistent:
            occupancy = extra.get("ctas_per_sm") or k.ctas_per_sm
            full, balanced = k.grid(sms, False, occupancy), k.grid(sms, True, occupancy)
            grids = {(tag, full)} | ({(tag + "/balanced", balanced)} if balanced != full else set())
        for label, grid in sorted(grids):
            a = torch.randint(-100, 100, (n, n), dtype=tdt, device="cuda")
            b = torch.empty_like(a)
            args_ = (cp.asarray(a), cp.asarray(b)) + ((cp.zeros(2, dtype=cp.uint32),) if k.dynamic else ())

            def launch(fn=fn, k=k, grid=grid, a_=args_):
                fn(grid, (k.threads,), a_, shared_mem=k.shared_bytes)

            def launch_pdl(fn=fn, k=k, grid=grid, pointers=[x.data.ptr for x in args_]):
                launch_programmatic(fn, grid, k.threads, pointers, k.shared_bytes,
                                    torch.cuda.current_stream().cuda_stream)

            us = _time(launch, repeats=repeats, inner=TRANSPOSE_GRAPH_LAUNCHES)
            with torch.cuda.stream(torch.cuda.Stream()), cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
                cold = _time_cold(launch, scrub)
            ok = bool(torch.equal(b, a.t()))
            tbs = 2 * n * n * w / (us * 1e-6) / 1e12
            row = dict(bits=8 * w, size=n, us=us, tb_per_s=tbs, correct=ok, plan=_kind(step), layouts=label,
                       tile=[k.tile_rows, k.tile_cols], instructions=step.instruction_counts(), grid=list(grid),
                       cold_us=cold, same_size_copy_cold_us=same_cold[w], **extra)
            if k.pdl:
                b.zero_()
                row["us_pdl"] = _time(launch_pdl, repeats=repeats, inner=TRANSPOSE_GRAPH_LAUNCHES)
                row["correct_pdl"] = bool(torch.equal(b, a.t()))
                row["tb_per_s_pdl"] = 2 * n * n * w / (row["us_pdl"] * 1e-6) / 1e12
            if copy:
                row["fraction_of_copy"] = tbs / copy["tb_per_s"]
                if "tb_per_s_pdl" in row:
                    row["fraction_of_copy_pdl"] = row["tb_per_s_pdl"] / copy["tb_per_s"]
            row["same_size_copy_us"] = same[w]
            row["fraction_of_same_size_copy"] = same[w] / us
            row.update(own_copy_us=own[w]["us"], fraction_of_own_copy=own[w]["us"] / us,
                       own_copy_cold_us=own[w]["cold_us"], own_copy_correct=own[w]["correct"],
                       own_copy_grid=own[w]["grid"])
            rows.append(row)
            print("  transpose", row, flush=True)
    return rows


# Fig. 8 of the paper: gathers along a small per-warp axis. (shape, size_per_thread, threads_per_warp,
# warps_per_cta, order); axis 0 lies inside a warp.
GATHER_CASES = (
    ([32, 64], [1, 1], [32, 1], [1, 4], [0, 1]),
    ([64, 32], [2, 1], [16, 2], [1, 4], [0, 1]),
    ([16, 128], [4, 1], [4, 8], [1, 4], [0, 1]),
    ([128, 16], [4, 1], [32, 1], [1, 4], [0, 1]),
    ([8, 256], [1, 1], [8, 4], [1, 4], [0, 1]),
    ([4, 512], [1, 1], [4, 8], [1, 4], [0, 1]),
    ([2, 512], [1, 1], [2, 16], [1, 4], [0, 1]),
    ([512, 32], [16, 1], [32, 1], [1, 4], [0, 1]),
)


def gather_kernels():
    from harness.cases import _strip
    from linear_layouts.analysis.gather import plan_gather
    from linear_layouts.layouts.blocked import BlockedLayout
    from linear_layouts.codegen.gather import emit_gather_kernel

    out = []
    for shape, spt, tpw, wpc, order in GATHER_CASES:
        layout = _strip(BlockedLayout(spt, tpw, wpc, order).to_linear(shape))
        for bits in (16, 32):
            plan = plan_gather(layout, layout, 0, bits)
            ks = {variant: emit_gather_kernel(kernel_name("ll_gather", shape, bits, shared), plan, shared_memory=shared)
                  for variant, shared in (("shuffles", False), ("shared memory", True))}
            out.append((shape, spt, tpw, wpc, bits, plan, ks))
    return out


def gathers(args) -> list[dict]:
    """Warp-local gather by shuffles (analysis.gather plan) against the shared-memory gather and
    Triton's ``tl.gather`` on the same tensors, checked against numpy's take_along_axis: whole kernels
    (load, gather, store; ``--gather-tiles`` tiles) and a gather loop (1 + ``--bench-iterations``
    dependent gathers per tile, ``--bench-tiles`` tiles: the gather without global memory)."""
    import cupy as cp
    import numpy as np
    import torch

    from gpu_triton_gather import triton_gather_launcher
    from linear_layouts.codegen.runtime import compile_kernel

    rows = []
    rng = np.random.default_rng(5)
    for shape, spt, tpw, wpc, bits, plan, ks in gather_kernels():
        dt = {16: np.uint16, 32: np.uint32}[bits]
        sdt = {16: np.int16, 32: np.int32}[bits]
        for config, tiles, iters in (("whole kernel", args.gather_tiles, 0), ("loop", args.bench_tiles, args.bench_iterations)):
            tile = shape[0] * shape[1]
            src = rng.integers(0, 60000, size=(tiles,) + tuple(shape)).astype(dt)
            idx = rng.integers(0, shape[0], size=(tiles,) + tuple(shape)).astype(np.int32)
            want = np.take_along_axis(src, idx, axis=1)
            for _ in range(iters):
                want = np.take_along_axis(want ^ dt(1), idx, axis=1)
            d_src, d_idx = cp.asarray(src.ravel()), cp.asarray(idx.ravel())
            row = dict(shape=shape, bits=bits, config=config, iterations=iters, shfl=plan.num_shuffles, tiles=tiles,
                       layout=f"blocked(spt={spt}, tpw={tpw}, wpc={wpc})")
            for variant, k in ks.items():
                fn = compile_kernel(k)
                d_out = cp.zeros(tiles * tile, dtype=dt)
                a_ = (d_src, d_idx, d_out, np.int32(iters))

                def launch(fn=fn, k=k, a_=a_):
                    fn((tiles,), (k.threads,), a_, shared_mem=k.shared_bytes)

                launch()
                cp.cuda.runtime.deviceSynchronize()
                row[variant + " correct"] = bool(np.array_equal(cp.asnumpy(d_out).reshape(want.shape), want))
                row[variant] = _time(launch)
            if iters:  # the same shuffle kernel with a permutation index (each lane reads a distinct lane):
                # separates the cost of colliding source lanes (random index) from the rounds themselves
                perm = np.broadcast_to((shape[0] - 1 - np.arange(shape[0]))[:, None], (tiles,) + tuple(shape))
                p_idx = cp.asarray(np.ascontiguousarray(perm, dtype=np.int32).ravel())
                k = ks["shuffles"]
                fn = compile_kernel(k)
                d_out = cp.zeros(tiles * tile, dtype=dt)
                a_ = (d_src, p_idx, d_out, np.int32(iters))

                def launch_perm(fn=fn, k=k, a_=a_):
                    fn((tiles,), (k.threads,), a_, shared_mem=k.shared_bytes)

                row["shuffles, permutation index"] = _time(launch_perm)
            try:
                t_src = torch.as_tensor(src.view(sdt), device="cuda")
                t_idx = torch.as_tensor(idx, device="cuda")
                t_out = torch.empty_like(t_src)
                peer = triton_gather_launcher(shape, tiles, num_warps=wpc[0] * wpc[1])
                peer(t_src, t_idx, t_out, iters)
                torch.cuda.synchronize()
                row["triton correct"] = bool(np.array_equal(t_out.cpu().numpy().view(dt), want))
                row["triton"] = _time(lambda: peer(t_src, t_idx, t_out, iters))
            except Exception as exc:
                row["triton"] = None
                row["triton_error"] = repr(exc)[:300]
            rows.append(row)
            print("  gather", {k: v for k, v in row.items() if k != "layout"}, flush=True)
    return rows


def copy_bandwidth() -> dict:
    import torch

    n = 1 << 28  # 1 GiB of int32
    x = torch.empty(n, dtype=torch.int32, device="cuda")
    y = torch.empty_like(x)
    y.copy_(x)
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        y.copy_(x)
    stop.record()
    stop.synchronize()
    seconds = start.elapsed_time(stop) / 1e3 / 10
    return dict(bytes=2 * 4 * n, seconds=seconds, tb_per_s=2 * 4 * n / seconds / 1e12)


def profile(args, variants: list[Variant], bench_rows: list[dict]) -> dict:
    """``ncu --set full`` of the pairs slowest against Triton (ours and Triton's kernel, one CTA
    wave each), summaries into the artifacts."""
    rs = [r for r in bench_rows if r["config"] == "conversion" and r.get("ours") and r.get("triton")
          and r["kind"] != "registers"]
    rs.sort(key=lambda r: r["triton"] / r["ours"])
    worst = [r["case"] for r in rs[: args.profile_cases]]
    out_dir = Path(args.out) / "artifacts"
    out_dir.mkdir(parents=True, exist_ok=True)
    done = {}
    for name in worst:
        cmd = ["ncu", "--set", "full", "--launch-count", "2", "-k", "regex:^(ll_ours|convert_kernel)",
               sys.executable, __file__, "--mode", "profile-child", "--out", args.out, "--variants",
               str(args.variants_path), "--cases", name]
        rc, text = _tool(cmd, args.profile_timeout)
        (out_dir / f"ncu_full_{name}.txt").write_text(text[-400000:])
        done[name] = rc
    return dict(cases=worst, rc=done)


def _profile_child(args, variants: list[Variant]) -> None:
    """One launch of ours and one of Triton's peer (conversion config) for ncu."""
    import cupy as cp
    import numpy as np
    import torch

    from gpu_gluon_convert import gluon_launcher
    from linear_layouts.codegen.runtime import compile_kernel

    names = set(args.cases.split(","))
    tdt = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
    for v in variants:
        if v.case.name not in names or v.variant != "ours":
            continue
        case = v.case
        x = torch.randint(-100, 100, (args.bench_tiles * v.kernel.tile_elements,), dtype=tdt[case.bits // 8],
                          device="cuda")
        y = torch.empty_like(x)
        fn = compile_kernel(v.kernel)
        fn((args.bench_tiles,), (v.kernel.threads,), (cp.asarray(x), cp.asarray(y), np.int32(args.bench_iterations)),
           shared_mem=v.kernel.shared_bytes)
        from gpu_gluon_convert import convert_kernel, gluon_layout

        m, n = (case.src.out_dim_size(d) for d in case.src.out_dim_names)
        compiled = convert_kernel[(args.bench_tiles,)](x, y, args.bench_iterations, m, n, gluon_layout(case.src),
                                                       gluon_layout(case.dst), num_warps=case.warps)
        torch.cuda.synchronize()
        try:  # Triton's cubin, for its SASS
            (Path(args.out) / "artifacts" / f"triton_{case.name}.cubin").write_bytes(compiled.asm["cubin"])
        except Exception:
            pass


# ------------------------------------------------------------------------------------------ report
def environment() -> dict:
    """The suite's record: the GPU's memory too, and its short name (the cost table a fit on this run writes)."""
    return device_environment(("name", "driver_version", "memory.total"), modules=("cupy", "torch", "triton", "numpy"),
                              device=True, timeout=60)


def _ratios(rows: list[dict]) -> dict[str, float]:
    """Triton time / our time by case, over the rows with both times."""
    return {r["case"]: r["triton"] / r["ours"] for r in rows if r.get("ours") and r.get("triton")}


def summary(results: dict) -> dict:
    """The issues' targets from the results: ratios Triton / ours (conversion loop) over every pair,
    register permutations included, by width; the register permutations alone; the pairs that move
    data (the earlier scoring) for comparison; whole kernels the same way."""
    rows = [r for r in results.get("bench", []) if r["config"] == "conversion"]
    timed = [r for r in rows if r.get("ours") and r.get("triton")]
    out: dict = {}
    ratio = _ratios(timed)
    out["pairs"] = len(timed)
    out["geomean_vs_triton"] = geomean(list(ratio.values()))
    for bits in (8, 16, 32, 64):
        vals = [ratio[r["case"]] for r in timed if r["bits"] == bits]
        out[f"geomean_vs_triton_{bits}"] = geomean(vals)
        out[f"pairs_{bits}"] = len(vals)
    if ratio:
        worst = min(ratio, key=ratio.get)
        out["worst"] = (worst, ratio[worst])
        out["below_0.90"] = sorted((n for n, x in ratio.items() if x < 0.90), key=ratio.get)
    moving = _ratios([r for r in timed if r["kind"] != "registers"])
    out["moving_pairs"], out["moving_geomean_vs_triton"] = len(moving), geomean(list(moving.values()))
    registers = {r["case"]: r for r in timed if r["kind"] == "registers"}
    reg = _ratios(list(registers.values()))
    out["register_pairs"] = len(reg)
    out["register_geomean_vs_triton"] = geomean(list(reg.values()))
    out["register_by_width"] = {bits: (len(v), geomean(v)) for bits in (8, 16, 32, 64)
                                if (v := [x for n, x in reg.items() if registers[n]["bits"] == bits])}
    out["register_worst"] = min(reg.items(), key=lambda kv: kv[1]) if reg else None
    out["register_below_0.95"] = sorted((n for n, x in reg.items() if x < 0.95), key=reg.get)
    in_warp = [r for r in rows if r.get("in_warp") and r["kind"] != "registers"]
    sh = [(r["case"], (r.get("shared") or (r["ours"] if r.get("ours_kind") == "shared memory" else None)),
           (r.get("shuffle") or (r["ours"] if r.get("ours_kind") == "warp shuffle" else None))) for r in in_warp]
    sh = [(n, a, b) for n, a, b in sh if a and b]
    out["in_warp_pairs"] = len(in_warp)
    out["shuffle_vs_shared_pairs"] = len(sh)
    out["shuffle_vs_shared_geomean"] = geomean([a / b for _, a, b in sh])
    iw = [r["triton"] / r["ours"] for r in in_warp if r.get("ours") and r.get("triton")]
    out["in_warp_vs_triton_min"] = min(iw) if iw else float("nan")
    out["in_warp_vs_triton_geomean"] = geomean(iw)
    whole_rows = [r for r in results.get("bench", []) if r["config"] == "whole kernel"]
    whole = _ratios(whole_rows)
    out["whole_kernels"] = len(whole)
    out["whole_vs_triton_geomean"] = geomean(list(whole.values()))
    out["whole_worst"] = min(whole.items(), key=lambda kv: kv[1]) if whole else None
    out["whole_below_0.97"] = sorted((n for n, x in whole.items() if x < 0.97), key=whole.get)
    whole_reg = _ratios([r for r in whole_rows if r["kind"] == "registers"])
    out["whole_register_kernels"] = len(whole_reg)
    out["whole_register_geomean"] = geomean(list(whole_reg.values()))
    out["whole_register_worst"] = min(whole_reg.items(), key=lambda kv: kv[1]) if whole_reg else None
    # the one scoring (model_ranking.py), with the table of the run's device (the nearest where it has none)
    costs, label = model_ranking.run_table(results)
    ranking = model_ranking.score(model_ranking.pairs(results),
                                  lambda steps, warps: model_ranking.kernel_ns(steps, warps, costs))
    out["model_ranking"] = (ranking.agree, ranking.total, [str(m) for m in ranking.misses])
    out["model_ranking_table"] = label
    out["transposes"], out["transposes_pdl"] = {}, {}
    for r in results.get("transpose", []):
        if r.get("correct") and (r.get("fraction_of_copy") or 0) > (out["transposes"].get(r["bits"]) or 0):
            out["transposes"][r["bits"]] = r.get("fraction_of_copy")
        if r.get("correct_pdl") and (r.get("fraction_of_copy_pdl") or 0) > (out["transposes_pdl"].get(r["bits"]) or 0):
            out["transposes_pdl"][r["bits"]] = r.get("fraction_of_copy_pdl")
    ver = results.get("verify", [])
    out["correct"] = (sum(1 for r in ver if r["wrong"] == 0), len(ver))
    return out


def write_report(out: Path, results: dict) -> None:
    env = results["environment"]
    s = summary(results)
    lines = ["# GPU suite: generated conversion kernels on the device", "",
             f"Device: {env.get('gpu')}; date {env.get('date')}; CUDA {env.get('nvcc')}; ncu {env.get('ncu')}; "
             f"CuPy {env.get('cupy')}, PyTorch {env.get('torch')}, Triton {env.get('triton')}, Python {env.get('python')}.",
             "", "Reproduce: `PYTHONPATH=src python benchmarks/gpu_suite.py --mode prepare` (CPU), then "
             "`PYTHONUNBUFFERED=1 PYTHONPATH=src python benchmarks/gpu_suite.py --out OUT` on the device.", ""]
    st = results.get("stage_seconds", {})
    if st:
        lines += ["Stage times (s): " + ", ".join(f"{k} {v}" for k, v in st.items()) + "."]
    if results.get("skipped"):
        lines += ["Skipped for time: " + ", ".join(results["skipped"]) + "."]
    lines.append("")
    lines += ["## Targets (issues 12 and 29)", "", "| target | measured |", "|---|---|"]

    def f2(x):
        return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.2f}x"

    lines.append(f"| conversion loop vs Triton, geomean over all {s.get('pairs', 0)} pairs, register permutations "
                 f"included (target >= 1.7x) | {f2(s.get('geomean_vs_triton'))} |")
    for bits in (8, 16, 32, 64):
        lines.append(f"| {bits}-bit ({s.get(f'pairs_{bits}', 0)} pairs; target >= 1.4x) | {f2(s.get(f'geomean_vs_triton_{bits}'))} |")
    if s.get("worst"):
        lines.append(f"| worst pair (target >= 0.90x) | {s['worst'][0]} {f2(s['worst'][1])}; below 0.90x: "
                     f"{len(s['below_0.90'])} ({', '.join(s['below_0.90'][:12])}) |")
    if s.get("register_pairs"):
        widths = ", ".join(f"{b}-bit {f2(g)} ({n})" for b, (n, g) in sorted(s["register_by_width"].items()))
        worst = s["register_worst"]
        lines.append(f"| register permutations: {s['register_pairs']} pairs, geomean {f2(s['register_geomean_vs_triton'])} "
                     f"({widths}); worst (target >= 0.95x) | {worst[0]} {f2(worst[1])}; below 0.95x: "
                     f"{len(s['register_below_0.95'])} ({', '.join(s['register_below_0.95'])}) |")
    lines.append(f"| (the earlier scoring) pairs that move data, register permutations left out: geomean over "
                 f"{s.get('moving_pairs', 0)} pairs | {f2(s.get('moving_geomean_vs_triton'))} |")
    lines.append(f"| in-warp: shuffles / shared memory, geomean over {s.get('shuffle_vs_shared_pairs', 0)} pairs "
                 f"(target >= 2.0x) | {f2(s.get('shuffle_vs_shared_geomean'))} |")
    lines.append(f"| in-warp pairs ({s.get('in_warp_pairs', 0)}): ours vs Triton, min (target >= 1.0x) / geomean | "
                 f"{f2(s.get('in_warp_vs_triton_min'))} / {f2(s.get('in_warp_vs_triton_geomean'))} |")
    a, t, m = s.get("model_ranking", (0, 0, []))
    lines.append(f"| cost model ({s.get('model_ranking_table', 'the package table')} when this report was written) "
                 f"ranks shuffle vs shared as measured "
                 f"(target >= 90%; `model_ranking.py`) | {a} / {t}"
                 + (f"; misses (ours/other time, measured/predicted): {', '.join(m)}" if m else "") + " |")
    for bits, frac in sorted(s.get("transposes", {}).items()):
        pdl = s.get("transposes_pdl", {}).get(bits)
        lines.append(f"| 8192^2 transpose {bits}-bit, of copy bandwidth (target >= 93%): plain launches"
                     + ("; with programmatic dependent launch" if pdl else "") + " | "
                     + f"{'-' if frac is None else f'{100 * frac:.1f}%'}"
                     + (f"; {100 * pdl:.1f}%" if pdl else "") + " |")
    c = s.get("correct", (0, 0))
    lines.append(f"| kernels correct on every element | {c[0]} / {c[1]} |")
    if s.get("whole_worst"):
        lines.append(f"| whole kernels (load, convert, store) vs Triton, geomean over {s['whole_kernels']} "
                     f"pairs / worst (target: none below 0.97x) | {f2(s['whole_vs_triton_geomean'])} / "
                     f"{s['whole_worst'][0]} {f2(s['whole_worst'][1])}; below 0.97x: {len(s['whole_below_0.97'])} "
                     f"({', '.join(s['whole_below_0.97'][:12])}) |")
    if s.get("whole_register_worst"):
        lines.append(f"| whole kernels of the register permutations: geomean over {s['whole_register_kernels']} / worst | "
                     f"{f2(s['whole_register_geomean'])} / {s['whole_register_worst'][0]} "
                     f"{f2(s['whole_register_worst'][1])} |")
    lines.append("")
    lines.append("Ratios are Triton time / our time (> 1: ours faster). Register permutations are in the comparison: "
                 "where both compilers move whole registers, each folds the loop's round trips away (its SASS has no "
                 "loop: `shuffle_sass_loop.py --kind registers`), and the loop figure times a load and a store.")
    lines.append("")
    ver = results.get("verify", [])
    bad = [r for r in ver if r["wrong"] != 0]
    kinds: dict[str, int] = {}
    for v in results.get("variants", []):
        if v["variant"] == "ours":
            kinds[v["kind"]] = kinds.get(v["kind"], 0) + 1
    lines += ["## (a) Correctness", "",
              f"{len(ver)} kernels over {len({r['case'] for r in ver})} layout pairs: **{len(ver) - len(bad)} / "
              f"{len(ver)} correct** on every element (3 tiles with one round trip, 2 tiles with none).", "",
              "Our plans: " + ", ".join(f"{k}: {n}" for k, n in sorted(kinds.items())) + "."]
    for r in bad[:20]:
        lines.append(f"- WRONG: {r['case']} / {r['variant']}: {r.get('wrong')} wrong {r.get('error', '')}")
    lines.append("")
    ncu = results.get("ncu", {})
    rows = ncu.get("rows", [])
    if rows:
        def eq(r, key):
            return r[key] is not None and r["measured"][0] is not None and list(r[key]) == [int(x) for x in r["measured"]]

        ours_rows = [r for r in rows if r["variant"] == "ours"]
        n_pred = sum(1 for r in ours_rows if eq(r, "predicted"))
        n_model = sum(1 for r in rows if eq(r, "modelled"))
        n_meas = sum(1 for r in rows if r["measured"][0] is not None)
        lines += ["## (b) Shared-memory wavefronts: ncu vs prediction", "",
                  f"`{METRIC_ST}` + `{METRIC_LD}`, one CTA, one conversion (iterations = 0).", "",
                  f"- ours: ncu = analysis prediction (`plan_conversion`'s store + load wavefronts) on **{n_pred} / {len(ours_rows)}** kernels;",
                  f"- all shared-memory kernels (ours, forced shared, baselines): ncu = codegen's model of its emitted "
                  f"instructions on **{n_model} / {n_meas}** measured kernels;",
                  f"- every kernel launched twice under ncu: {sum(1 for r in rows if r.get('repeat') and r['repeat'] != r['measured'])} "
                  f"counted differently the second time."]
        again = [r for r in rows if "per_instruction" in r]
        if again:
            def eq_source(r):
                want = r["predicted"] if r["predicted"] is not None else r["modelled"]
                return list(want) == list(r["per_instruction"])

            lines.append(f"- where the two differ, the kernels profiled again with ncu's per-instruction counters "
                         f"(`--section SourceCounters`, `{SOURCE_WAVEFRONTS}` summed over the kernel's STS/STSM and "
                         f"LDS/LDSM): equal to the prediction (the model where there is none) on "
                         f"**{sum(map(eq_source, again))} / {len(again)}**; the rest of the aggregate counter is "
                         f"attributed to no instruction (benchmarks/results/ncu_unattributed).")
        lines += ["", "| case | variant | instructions | ncu st + ld | ncu per instruction st + ld | analysis st + ld | model st + ld |",
                  "|---|---|---|---|---|---|---|"]
        shown = [r for r in rows if r["case"].startswith(("seed", "row", "blocked", "lanes"))
                 or not eq(r, "modelled") or (r["predicted"] is not None and not eq(r, "predicted"))]
        for r in shown[:60]:
            ins = ", ".join(f"{k} x{n}" for k, n in r["instructions"].items())
            m = r["measured"]
            mm = "n/a" if m[0] is None else f"{int(m[0])} + {int(m[1])}"
            p = "-" if r["predicted"] is None else f"{r['predicted'][0]} + {r['predicted'][1]}"
            mo = "-" if r["modelled"] is None else f"{r['modelled'][0]} + {r['modelled'][1]}"
            pi = f"{r['per_instruction'][0]} + {r['per_instruction'][1]}" if "per_instruction" in r else "-"
            lines.append(f"| {r['case']} | {r['variant']} | {ins} | {mm} | {pi} | {p} | {mo} |")
        lines += ["", "Rows shown: the named pairs and every kernel where ncu differs from a prediction; counts are per thread.", ""]
    for key in ("memcheck", "racecheck"):
        sres = results.get(key)
        if sres:
            lines += [f"## (c) compute-sanitizer {key}", "", f"exit code {sres['rc']}, {sres['seconds']} s over every kernel of the suite:", ""]
            lines += [f"    {line}" for line in sres["summary"]] or ["    (no summary line)"]
            lines.append("")
    bench_rows = results.get("bench", [])
    if bench_rows:
        lines += ["## (d) Benchmarks (µs per launch, median of 5 x 10 launches in a CUDA graph; ours and Triton: the "
                  "median of that over rounds timed alternately, `--rounds`)", "",
                  "`conversion`: 1056 CTAs, each doing 1 + 2 x 50 dependent conversions on its tile (data in L2, "
                  "an XOR by 1 between conversions so neither compiler can fold them; both sides XOR the same "
                  "elements); `whole kernel`: load, one conversion, store.", "",
                  "| case | bits | warps | config | kind | ours | Triton | Triton / ours | shuffles | shared | unswizzled | padded |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|"]

        def f1(x):
            return "-" if x is None else f"{x:.1f}"

        for r in bench_rows:
            ours, tri = r.get("ours"), r.get("triton")
            ratio = f"{tri / ours:.2f}" if ours and tri else "-"
            lines.append(f"| {r['case']} | {r['bits']} | {r['warps']} | {r['config']} | {r['kind']} | {f1(ours)} | {f1(tri)} | "
                         f"{ratio} | {f1(r.get('shuffle'))} | {f1(r.get('shared'))} | {f1(r.get('unswizzled'))} | {f1(r.get('padded'))} |")
        lines.append("")
        for config in ("conversion", "whole kernel"):
            rs = [r for r in bench_rows if r["config"] == config]
            tri = geomean([r["triton"] / r["ours"] for r in rs if r.get("triton") and r.get("ours")])
            pad = [r["padded"] / r["ours"] for r in rs if r.get("padded") and r.get("ours")]
            lines.append(f"**{config}**: geometric-mean speedup over Triton's convert_layout {tri:.2f}x over {len(rs)} pairs"
                         + (f"; over padding: min {min(pad):.2f}x, geomean {geomean(pad):.2f}x" if pad else "") + ".")
        lines.append("")
    if "copy" in results:
        c = results["copy"]
        lines += [f"Device-to-device copy: {c['tb_per_s']:.2f} TB/s (bytes read + written, 1 GiB).", ""]
    if results.get("transpose"):
        lines += ["### Large matrix transposes (B = A^T through the planned conversion; 4 warps unless said)", "",
                  "`shared`: 64x64 tiles, 16-byte vectors along the rows of A and of B, converted through shared memory "
                  "(`shared128`: the same with 128x128 tiles); `blocks128`: 4-row blocks with 8 lanes along the rows "
                  "of A and of B (128-byte segments on both global sides); "
                  "`blocks`: 128x64 tiles, each thread 4 rows x 16 bytes of A and 16 bytes x 4 columns of B "
                  "(`transpose_block_layouts`): 16-byte shared vectors on both sides; "
                  "`registers`: each thread holds 4/w rows x 16/w columns, loads 16-byte vectors of A and stores "
                  "4-byte words of B; the plan is a register permutation (byte transposes by prmt); "
                  "`blocks256` (8-bit: 256x256 tiles, 8 warps, `x4w`/`x16w`/`x32w` 4/16/32 warps; 16-bit: 128x128, "
                  "4 warps, `x16w` 16 warps), "
                  "`blocks128x256`, `blocks256x128` (8-bit, rows x columns of A, 4 warps): 4-row blocks with 16 lanes "
                  "along the rows of A and of B (256-byte segments, `transpose_wide_block_layouts`), 16-byte shared "
                  "vectors on both sides (8-bit: 4x4 byte transposes by prmt); "
                  "`shared256`: `shared` with 256x256 tiles and 8 warps; `persist*` (`PERSISTENT_TRANSPOSES`, "
                  "`emit_persistent_transpose_kernel`): the wide-block layouts (tile and warps in the tag) in a "
                  "persistent kernel, CTAs per SM x SMs of them (`/balanced`: fewer, so that each takes the same number "
                  "of tiles but the last), each looping over tiles with the next tile's global "
                  "loads in flight during the current tile's shared round trip and stores (`h`, and `blocks256x16wh`: "
                  "ld.global.nc.L1::no_allocate loads, st.global.cs stores; `gK`, and `blocks256x16wg16`/`wg32`: tiles "
                  "taken in groups of K tile rows, down the tile columns of a group; `d`: after its first two tiles each "
                  "CTA draws the next from an atomic counter; `_l2p256`: 16-byte loads ld.global.nc.L2::256B, "
                  "L2 prefetch size 256 bytes); `async*_sK` (`ASYNC_TRANSPOSES`, `emit_async_transpose_kernel`): "
                  "persistent, 16-byte cp.async global -> shared K - 1 tiles ahead into K buffers, 16x16-byte "
                  "blocks per thread on the B side (byte transposes after the shared load; the shared "
                  "instructions column counts the plan's, whose stores are the cp.async); `persist256x8w_rows`: "
                  "the async layouts through the persistent register path (the control). `of a same-size copy`: torch's "
                  "copy of the "
                  "same matrix timed like the transposes (CUDA graph of `TRANSPOSE_GRAPH_LAUNCHES` launches; the copy "
                  "bandwidth above is a 1 GiB copy, which pays a launch's ramp-up and tail over 16 to 4 times more "
                  "bytes). `µs PDL`: the same transposes launched with programmatic dependent launch "
                  "(`runtime.launch_programmatic`: each launch is scheduled while the previous one runs and waits, "
                  "griddepcontrol.wait, for its memory before its first access; only launch latency overlaps). "
                  "`of our same-size copy`: our persistent 16-byte-vector copy of the same matrix "
                  "(`SAME_SIZE_COPY_SOURCE`, 4 CTAs of 512 threads per SM, checked), timed the same way: the "
                  "ceiling at this size (its µs and cold µs in parentheses). `cold µs`: "
                  "one launch between events after reading a 128 MiB buffer (nothing left in L2; launch overhead "
                  "included), and the same for the same-size copy.", "",
                  "| element | matrix | layouts | tile | plan | shared instructions / thread | µs | TB/s (read + write) | of copy bandwidth | µs PDL (of copy bandwidth) | of a same-size copy | of our same-size copy | cold µs (copy) | correct |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in results["transpose"]:
            ins = ", ".join(f"{k} x{n}" for k, n in r["instructions"].items()) or "-"
            frac = f"{100 * r['fraction_of_copy']:.1f}%" if "fraction_of_copy" in r else "-"
            same = (f"{100 * r['fraction_of_same_size_copy']:.1f}% ({r['same_size_copy_us']:.0f} µs)"
                    if "fraction_of_same_size_copy" in r else "-")
            cold = f"{r['cold_us']:.1f} ({r['same_size_copy_cold_us']:.1f})" if "cold_us" in r else "-"
            pdl = (f"{r['us_pdl']:.1f} ({100 * r['fraction_of_copy_pdl']:.1f}%)" if "fraction_of_copy_pdl" in r
                   else f"{r['us_pdl']:.1f}" if "us_pdl" in r else "-")
            correct = r["correct"] and r.get("correct_pdl", True)
            lines.append(f"| {r['bits']}-bit | {r['size']}x{r['size']} | {r.get('layouts', 'shared')} | {r.get('tile', '')} | "
                         f"{r['plan']} | {ins} | {r['us']:.1f} | {r['tb_per_s']:.2f} | {frac} | {pdl} | {same} | "
                         f"{own_copy_cell(r)} | {cold} | {correct} |")
        lines.append("")
    if results.get("gather"):
        lines += ["### Gather along a small per-warp axis (axis 0, index tile = src tile, µs per launch)", "",
                  "`whole kernel`: load, gather, store; `loop`: 51 dependent gathers per tile (the previous result XOR 1), "
                  "data in registers. Triton's `tl.gather` picks its own layouts (coalesced, lanes along dim 1). "
                  "`permutation index`: the shuffle loop with index = reversed rows (no two lanes read the same "
                  "lane), against the random index of the other columns.", "",
                  "| shape | element | config | layout | shfl / thread | shuffles | shuffles, permutation index | "
                  "shared memory | Triton tl.gather | shared / shuffles | Triton / shuffles | correct |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in results["gather"]:
            sp = r["shared memory"] / r["shuffles"] if r.get("shuffles") else float("nan")
            tp = f"{r['triton'] / r['shuffles']:.2f}x" if r.get("triton") and r.get("shuffles") else "-"
            ok = r["shuffles correct"] and r["shared memory correct"] and r.get("triton correct", True)
            tri = f"{r['triton']:.1f}" if r.get("triton") else "-"
            perm = f"{r['shuffles, permutation index']:.1f}" if r.get("shuffles, permutation index") else "-"
            lines.append(f"| {r['shape']} | {r['bits']}-bit | {r.get('config', 'whole kernel')} | {r['layout']} | {r['shfl']} | {r['shuffles']:.1f} | "
                         f"{perm} | {r['shared memory']:.1f} | {tri} | {sp:.2f}x | {tp} | {ok} |")
        lines.append("")
    if results.get("microbench"):
        mb = results["microbench"]
        lines += [f"### Building blocks ({mb.get('device')}; SM-ns per warp-instruction, 8 CTAs per SM; bar.sync: per CTA barrier)", "",
                  "| block | 1 warp | 2 warps | 4 warps | 8 warps |", "|---|---|---|---|---|"]
        for block, row in mb.get("blocks", {}).items():
            lines.append(f"| {block} | " + " | ".join(f"{row[w]['ns']:.3f}" for w in ("1", "2", "4", "8") if w in row) + " |")
        lines.append("")
    if results.get("profile"):
        lines += [f"Profiles (`ncu --set full`, in artifacts.tar.gz): {', '.join(results['profile'].get('cases', []))}.", ""]
    if results.get("gaps"):
        lines += ["## Gaps", ""] + [f"- {g}" for g in results["gaps"]] + [""]
    (out / "gpu_suite.md").write_text("\n".join(lines) + "\n")


def plot(out: Path, rows: list[dict]) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:
        return
    rs = [r for r in rows if r["config"] == "conversion" and r.get("ours") and r.get("triton")]
    if not rs:
        return
    rs.sort(key=lambda r: r["triton"] / r["ours"])
    fig, ax = plt.subplots(figsize=(12, 4.5))
    colors = {8: "tab:red", 16: "tab:orange", 32: "tab:blue", 64: "tab:green"}
    ax.bar(range(len(rs)), [r["triton"] / r["ours"] for r in rs], color=[colors.get(r["bits"], "gray") for r in rs])
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xlabel("layout pairs, sorted")
    ax.set_ylabel("Triton time / our time")
    ax.set_title("Conversion loop: Triton 3.6 convert_layout / ours (red 8-bit, orange 16, blue 32, green 64)")
    fig.tight_layout()
    fig.savefig(out / "gpu_bench.png", dpi=110)


KEEP = ("artifacts.tar.gz", "gpu_suite.json", "gpu_suite.md", "gpu_bench.png", "microbench.json", "log.txt")


def _bundle(out: Path) -> None:
    """Everything but ``KEEP`` into artifacts.tar.gz (the device returns at most 8 files)."""
    with tarfile.open(out / "artifacts.tar.gz", "w:gz") as tar:
        for p in sorted(out.iterdir()):
            if p.name in KEEP:
                continue
            tar.add(p, arcname=p.name)
    for p in sorted(out.iterdir()):
        if p.name not in KEEP:
            if p.is_dir():
                import shutil

                shutil.rmtree(p)
            else:
                p.unlink()


# Seconds each stage needs at most (H100, the full suite), to skip what no longer fits the budget.
# Seconds each stage may take (the 2026-11-23 H100 run: microbench 0.5, triton 53, verify 2, ncu 14,
# memcheck 2, racecheck 8, transpose 0.3, gather 44, profile 41), with headroom; the bench gets what
# the stages after it leave.
STAGE_ESTIMATE = dict(microbench=30, triton=90, verify=60, ncu=120, memcheck=30, racecheck=30, copy=5,
                      transpose=40, gather=60, bench=150, profile=60)
#: The order of the stages: what issue 12's targets need first (correctness, the conversion loop ours
#: vs Triton and shuffles vs shared, transposes, gathers), hardware counters and sanitizers after.
STAGE_ORDER = ("microbench", "triton", "verify", "bench", "copy", "transpose", "gather", "ncu", "memcheck",
               "racecheck", "profile")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="all",
                    choices=["all", "prepare", "report", "launch-shared", "launch-all", "verify-child", "profile-child"])
    ap.add_argument("--out", default=str(HERE / "build" / "out"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--cases", default="",
                    help="comma list of case names (default: the whole suite; also harness.cases.register_cases' regperm_*)")
    ap.add_argument("--variants", default="", help="the prepared kernel list (default build/variants_<tag>.json)")
    ap.add_argument("--skip", default="", help="comma list of stages to skip")
    ap.add_argument("--only", default="", help="comma list of the stages to run (the others skipped): "
                                               + ", ".join(STAGE_ORDER))
    ap.add_argument("--in-warp", action="store_true",
                    help="the in-warp pairs only (the cost model's fit and ranking data: ours and the other "
                         "mechanism, both timed), without the Triton peer")
    ap.add_argument("--resume", default="", help="folder of an earlier run: take its finished stages and cases")
    ap.add_argument("--budget", type=float, default=530.0, help="seconds for the whole run")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--baselines-for", type=int, default=24)
    ap.add_argument("--whole-cases", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3,
                    help="bench: rounds of ours and Triton timed alternately per case and config (the median)")
    ap.add_argument("--bench-tiles", type=int, default=1056)
    ap.add_argument("--bench-iterations", type=int, default=50)
    ap.add_argument("--whole-tiles", type=int, default=8192)
    ap.add_argument("--transpose-size", type=int, default=8192)
    ap.add_argument("--transpose-only", default="", help="comma-separated transpose variants (tags) to run; default all")
    ap.add_argument("--gather-tiles", type=int, default=4096)
    ap.add_argument("--profile-cases", type=int, default=3)
    ap.add_argument("--emulate", type=int, default=0, help="prepare: also run the first N kernels on the CPU emulator")
    ap.add_argument("--no-compile", action="store_true", help="prepare: build the kernel list only")
    ap.add_argument("--ncu-timeout", type=int, default=240)
    ap.add_argument("--verify-timeout", type=int, default=150)
    ap.add_argument("--sanitizer-timeout", type=int, default=150)
    ap.add_argument("--triton-timeout", type=int, default=200)
    ap.add_argument("--profile-timeout", type=int, default=60)
    args = ap.parse_args()
    if args.mode == "report":  # CPU: re-score and rewrite OUT/gpu_suite.md from OUT/gpu_suite.json
        write_report(Path(args.out), json.loads((Path(args.out) / "gpu_suite.json").read_text()))
        return
    t0 = time.time()
    tag = "quick" if args.quick else "inwarp" if args.in_warp else "full"
    if args.cases:  # the same tag in every process (str hashes are salted per process)
        tag = "cases_" + hashlib.sha1(args.cases.encode()).hexdigest()[:8]
    args.variants_path = Path(args.variants) if args.variants else HERE / "build" / f"variants_{tag}.json"
    if args.mode == "prepare" or not args.variants_path.exists():
        cases = in_warp_suite_cases() if args.in_warp else suite_cases(args.quick, args.cases)
        variants = build_variants(cases, 4 if args.quick else 0 if args.in_warp else args.baselines_for)
        if args.in_warp:  # the two mechanisms of each pair; no legacy baselines
            variants = [v for v in variants if v.variant in ("ours", "shuffle", "shared")]
        save_variants(args.variants_path, variants)
    else:
        variants = load_variants(args.variants_path)
    if args.mode in ("verify-child", "launch-shared", "launch-all", "profile-child"):
        Path(args.out).mkdir(parents=True, exist_ok=True)
        if args.mode == "verify-child":
            with open(Path(args.out) / "verify_rows.jsonl", "w") as sink:
                verify_rows(variants, sink)
        elif args.mode == "profile-child":
            _profile_child(args, variants)
        else:
            repeats = 2 if args.mode == "launch-shared" else 1
        for _ in range(repeats):
            _launch_all(variants, tiles=1 if args.mode == "launch-shared" else 2,
                        iterations=0 if args.mode == "launch-shared" else 1, only_shared=args.mode == "launch-shared")
        return
    cases = list({v.case.name: v.case for v in variants}.values())
    print(f"{len(cases)} cases, {len(variants)} kernels built in {time.time() - t0:.1f} s", flush=True)
    def all_sources() -> list[str]:
        import gpu_microbench

        sources = [v.kernel.source for v in variants] + [gpu_microbench.SOURCE]
        if args.in_warp:  # the fit's run: no transposes, copies or gathers
            return sources
        sources += [k.source for *_, k in transpose_kernels(args.transpose_size)] + [SAME_SIZE_COPY_SOURCE]
        return sources + [k.source for *_, ks in gather_kernels() for k in ks.values()]

    if args.mode == "prepare":
        if args.no_compile:
            return
        sources = all_sources()
        print(f"compiled (or found cached) {len(sources)} cubins in {compile_all(sources):.1f} s", flush=True)
        if args.emulate:
            from linear_layouts.codegen.emulate import emulate_check

            bad = 0
            for v in variants[: args.emulate]:
                wrong = emulate_check(v.kernel, tiles=2, iterations=1)
                bad += wrong != 0
                print(f"  emulated {v.case.name}/{v.variant}: {wrong} wrong", flush=True)
            print(f"emulated {min(args.emulate, len(variants))} kernels on the CPU: {bad} wrong", flush=True)
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    skip = set(filter(None, args.skip.split(",")))
    if args.only:
        only = set(filter(None, args.only.split(",")))
        unknown = only - set(STAGE_ORDER)
        if unknown:
            raise SystemExit(f"--only: unknown stages {sorted(unknown)} (known: {', '.join(STAGE_ORDER)})")
        skip |= set(STAGE_ORDER) - only
    args.skip_set = skip
    results: dict = dict(environment=environment(), gaps=[], stage_seconds={}, skipped=[])
    done_bench: list[dict] = []
    if args.resume:
        prev = Path(args.resume)
        if (prev / "gpu_suite.json").exists():
            old = json.loads((prev / "gpu_suite.json").read_text())
            for key in STAGE_ESTIMATE:
                if key in old and key != "bench":
                    results[key] = old[key]
                    skip.add(key)
        if (prev / "bench_rows.jsonl").exists():
            done_bench = [json.loads(line) for line in (prev / "bench_rows.jsonl").read_text().splitlines()]
    results["variants"] = [dict(case=v.case.name, variant=v.variant, kind=v.step_kind, bits=v.case.bits,
                                warps=v.case.warps, family=v.case.family, kernel=v.kernel.name,
                                predicted=v.predicted, modelled=v.modelled, instructions=v.instructions,
                                description=v.case.description, note=v.note, model_us=v.model_us, steps=v.steps)
                           for v in variants]
    print(json.dumps(results["environment"]), flush=True)
    start = time.time()  # cubins not prepared on the CPU are compiled here, in parallel (nvcc per core)
    sources = all_sources()
    compile_all(sources)
    results["stage_seconds"]["compile"] = round(time.time() - start, 1)
    print(f"== compile ({len(sources)} cubins, cached or built) done in {time.time() - start:.1f} s", flush=True)
    deadline = t0 + args.budget

    def save():
        (out / "gpu_suite.json").write_text(json.dumps(results, indent=1, default=str))
        write_report(out, results)

    def run_microbench():
        import gpu_microbench

        return gpu_microbench.run(out)

    after_bench = sum(STAGE_ESTIMATE[k] for k in STAGE_ORDER[STAGE_ORDER.index("bench") + 1:] if k not in skip)
    stage_fn = {"microbench": run_microbench,
                "triton": lambda: triton_compile(args, cases),
                "verify": lambda: verify(args, variants), "ncu": lambda: run_ncu(args, variants),
                "memcheck": lambda: run_sanitizer(args, "memcheck"),
                "racecheck": lambda: run_sanitizer(args, "racecheck"),
                "copy": copy_bandwidth, "transpose": lambda: transposes(args, results.get("copy")),
                "gather": lambda: gathers(args),
                "bench": lambda: bench(args, variants, deadline - after_bench, done_bench),
                "profile": lambda: profile(args, variants, results.get("bench", []))}
    for key in STAGE_ORDER:
        fn = stage_fn[key]
        if key in skip:
            continue
        left = deadline - time.time()
        if key != "bench" and left < min(STAGE_ESTIMATE[key], 30) or left <= 0:
            results["skipped"].append(key)
            print(f"== {key} skipped: {left:.0f} s left", flush=True)
            continue
        start = time.time()
        try:
            results[key] = fn()
        except Exception:
            results[key + "_error"] = traceback.format_exc()[-3000:]
            print(results[key + "_error"], flush=True)
        results["stage_seconds"][key] = round(time.time() - start, 1)
        print(f"== {key} done in {time.time() - start:.1f} s", flush=True)
        save()
    plot(out, results.get("bench", []))
    save()
    _bundle(out)
    print(f"total {time.time() - t0:.1f} s", flush=True)
    text = (out / "gpu_suite.md").read_text()
    print(text[: text.find("## (a)")] if "## (a)" in text else text[:4000])


if __name__ == "__main__":
    main()
