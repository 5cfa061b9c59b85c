"""GPU suite for linear_layouts.codegen: correctness, hardware counters, sanitizers, benchmarks.

One script, one device call:

    PYTHONUNBUFFERED=1 PYTHONPATH=src python benchmarks/gpu_suite.py --out $OUT

1. builds every kernel of the suite (``gpu_cases``: HARDWARE.md's named pairs, seeded random catalog
   pairs, in-warp pairs; ours from ``analysis.conversion.plan_conversion``, plus the legacy baselines:
   unswizzled and padded shared memory, and the plan's shared-memory alternative of shuffles);
2. verifies each on the GPU (load(src) -> convert -> [round trip] -> store(dst): every element);
3. reads ncu's shared-memory wavefront counters of every shared-memory kernel (one CTA, one
   conversion) and compares them with the analysis prediction and with codegen's model;
4. runs compute-sanitizer memcheck and racecheck over every kernel;
5. benchmarks ours against Triton's ``gl.convert_layout`` (the same layouts through ``to_gluon``),
   against padding/unswizzled, shuffles against shared memory, and reports whole-kernel times.

Writes ``gpu_suite.json``, ``gpu_suite.md`` (commit-ready: copy to benchmarks/results/) and
``gpu_bench.png`` under ``--out``.  ``--quick`` runs a small subset (a smoke test of the machinery).
Kernels are compiled by nvcc into ``$LINEAR_LAYOUTS_CACHE`` (default benchmarks/build/cubins): run
``--mode prepare`` on the CPU first and carry that folder to skip compilation on the device.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import platform
import subprocess
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(HERE / "build" / "cubins"))

from gpu_cases import Case, all_cases, in_warp_cases, named_cases, random_cases  # noqa: E402

from linear_layouts.codegen.conversion import RegisterCopy, SharedConversion  # noqa: E402
from linear_layouts.codegen.kernel import KernelSource, emit_conversion_kernel  # noqa: E402
from linear_layouts.codegen.model import emitted_wavefronts  # noqa: E402
from linear_layouts.codegen.plan import baseline_step, conversion_step, kernel_name  # noqa: E402
from linear_layouts.codegen.ptx import compile_cubin  # noqa: E402
from linear_layouts.codegen.shuffle import ShuffleConversion  # noqa: E402

METRIC_LD = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
METRIC_ST = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"


@dataclass
class Variant:
    case: Case
    variant: str  # ours | unswizzled | padded | shared (forced shared memory for an in-warp pair)
    kernel: KernelSource
    step_kind: str
    predicted: tuple[int, int] | None = None  # analysis (store, load) wavefronts
    modelled: tuple[int, int] | None = None  # codegen's model of its own instructions
    instructions: dict = field(default_factory=dict)
    note: str = ""


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
        s = p.shared if p.kind == cv.SHARED_MEMORY else None
    return None if s is None else (int(s.store_wavefronts), int(s.load_wavefronts))


def build_variants(cases: list[Case], baselines_for: int) -> list[Variant]:
    """Every kernel of the suite; baselines for the named cases and the first ``baselines_for`` others."""
    out: list[Variant] = []
    shared_seen = 0
    for case in cases:
        s, d, bits, w = case.src, case.dst, case.bits, case.bits // 8
        note = ""
        try:
            fwd = conversion_step(s, d, bits)
            bwd = conversion_step(d, s, bits)
        except Exception as exc:  # analysis refused: assemble from its pieces, and say so
            note = f"plan_conversion raised {type(exc).__name__}: {exc}"[:200]
            fwd = conversion_step(s, d, bits, fallback=True)
            bwd = conversion_step(d, s, bits, fallback=True)
        k = emit_conversion_kernel(kernel_name("ll_ours", case.name), s, d, w, fwd, bwd)
        v = Variant(case, "ours", k, _kind(fwd), instructions=fwd.instruction_counts(), note=note)
        if isinstance(fwd, SharedConversion):
            try:
                v.predicted = _plan_prediction(s, d, bits)
            except Exception:
                v.predicted = None
            v.modelled = emitted_wavefronts(fwd)
        out.append(v)
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
                kb = emit_conversion_kernel(kernel_name(f"ll_{name}", case.name), s, d, w, f, b)
                out.append(Variant(case, name, kb, _kind(f), modelled=emitted_wavefronts(f),
                                   instructions=f.instruction_counts()))
        if isinstance(fwd, (ShuffleConversion, RegisterCopy)) and (case.family != "random" or want_baselines):
            f = conversion_step(s, d, bits, force_shared=True)
            b = conversion_step(d, s, bits, force_shared=True)
            kb = emit_conversion_kernel(kernel_name("ll_shared", case.name), s, d, w, f, b)
            out.append(Variant(case, "shared", kb, _kind(f), predicted=_plan_prediction(s, d, bits, True),
                               modelled=emitted_wavefronts(f), instructions=f.instruction_counts()))
    return out


def suite_cases(quick: bool) -> list[Case]:
    if quick:
        return named_cases()[:4] + random_cases(6) + in_warp_cases(3)
    return all_cases()


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
                         predicted=v.predicted, modelled=v.modelled, instructions=v.instructions, note=v.note))
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
                           tuple(r["modelled"]) if r["modelled"] else None, r["instructions"], r["note"]))
    return out


def compile_all(variants: list[Variant]) -> float:
    start = time.time()
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        list(pool.map(lambda v: compile_cubin(v.kernel.source), variants))
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
        if i % 50 == 0:
            print(f"  verified {i + 1} / {len(variants)}", flush=True)


def verify(args, variants: list[Variant]) -> list[dict]:
    """``verify_rows`` in a child process with a time limit (a hung kernel cannot stall the suite)."""
    path = Path(args.out) / "verify_rows.jsonl"
    cmd = [sys.executable, __file__, "--mode", "verify-child", "--out", args.out] + (["--quick"] if args.quick else [])
    rc, out = _tool(cmd, args.verify_timeout)
    rows = [json.loads(l) for l in path.read_text().splitlines()] if path.exists() else []
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
        return 124, (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) else str(exc)


def run_ncu(args, variants: list[Variant]) -> dict:
    cmd = ["ncu", "--csv", "--metrics", f"{METRIC_LD},{METRIC_ST}", "-k", "regex:^ll_",
           sys.executable, __file__, "--mode", "launch-shared"] + (["--quick"] if args.quick else [])
    rc, out = _tool(cmd, args.ncu_timeout)
    measured: dict[str, dict[str, float]] = {}
    lines = [l for l in out.splitlines() if l.startswith('"')]
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        name = row.get("Kernel Name", "").split("(")[0]
        metric = row.get("Metric Name", "")
        try:
            value = float(row.get("Metric Value", "nan").replace(",", ""))
        except ValueError:
            continue
        measured.setdefault(name, {})[metric] = value
    rows = []
    for v in variants:
        if v.predicted is None and v.modelled is None:
            continue
        m = measured.get(v.kernel.name, {})
        st, ld = m.get(METRIC_ST), m.get(METRIC_LD)
        rows.append(dict(case=v.case.name, variant=v.variant, measured=[st, ld], predicted=v.predicted,
                         modelled=v.modelled, instructions=v.instructions))
    return dict(rc=rc, rows=rows, tail=out[-3000:] if not rows or rc else "")


def run_sanitizer(args, tool: str) -> dict:
    cmd = ["compute-sanitizer", "--tool", tool, "--print-limit", "20", sys.executable, __file__,
           "--mode", "launch-all"] + (["--quick"] if args.quick else [])
    if tool == "racecheck":
        cmd[3:3] = ["--racecheck-report", "all"]
    start = time.time()
    rc, out = _tool(cmd, args.sanitizer_timeout)
    summary = [l for l in out.splitlines() if "SUMMARY" in l or "ERROR" in l.upper()][-10:]
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
    run()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e3 / inner)
    return float(sorted(times)[len(times) // 2])


def bench(args, variants: list[Variant]) -> list[dict]:
    import cupy as cp
    import numpy as np
    import torch

    from gpu_gluon_convert import gluon_launcher
    from linear_layouts.codegen.runtime import compile_kernel

    tdt = {1: torch.int8, 2: torch.int16, 4: torch.int32}
    by_case: dict[str, dict[str, Variant]] = {}
    for v in variants:
        by_case.setdefault(v.case.name, {})[v.variant] = v
    chosen = [n for n, vs in by_case.items() if len(vs) > 1][: args.bench_cases]
    rows = []
    for name in chosen:
        vs = by_case[name]
        case = vs["ours"].case
        w = case.bits // 8
        tile = vs["ours"].kernel.tile_elements
        for config, tiles, iters in (("conversion", args.bench_tiles, args.bench_iterations),
                                     ("whole kernel", args.whole_tiles, 0)):
            x = torch.randint(-100, 100, (tiles * tile,), dtype=tdt[w], device="cuda")
            y = torch.empty_like(x)
            row = dict(case=name, description=case.description, config=config, tiles=tiles, iterations=iters,
                       bits=case.bits, warps=case.warps, kind=vs["ours"].step_kind)
            y.zero_()
            for vname, v in vs.items():
                fn = compile_kernel(v.kernel)
                args_ = (cp.asarray(x), cp.asarray(y), np.int32(iters))

                def launch(fn=fn, v=v, a=args_):
                    fn((tiles,), (v.kernel.threads,), a, shared_mem=v.kernel.shared_bytes)

                try:
                    row[vname] = _time(launch)
                    if vname == "ours":
                        ok = bool(torch.equal(x, y))
                        row["ours_correct"] = ok
                except Exception as exc:
                    row[vname] = None
                    row[vname + "_error"] = repr(exc)[:200]
            try:
                peer = gluon_launcher(case.src, case.dst, case.warps)

                def tri(peer=peer, x=x, y=y, tiles=tiles, iters=iters):
                    peer(x, y, iters, tiles)

                row["triton"] = _time(tri)
                row["triton_correct"] = bool(torch.equal(x, y))
            except Exception as exc:
                row["triton"] = None
                row["triton_error"] = repr(exc)[:300]
            rows.append(row)
            print("  bench", json.dumps({k: (round(v, 2) if isinstance(v, float) else v) for k, v in row.items()
                                         if k not in ("description",)}))
    return rows


def transpose_layouts(element_bytes: int, warps: int = 4, tile: int = 64):
    """Tile layouts of the transpose benchmark: 16-byte vectors along the rows of A (src) and along
    the rows of B = A^T, i.e. the columns of the tile (dst)."""
    from gpu_cases import _strip
    from linear_layouts.catalog.blocked import BlockedLayout

    v = 16 // element_bytes
    t1 = min(32, tile // v)
    t0 = 32 // t1
    src = BlockedLayout([1, v], [t0, t1], [warps, 1], [1, 0]).to_linear([tile, tile])
    dst = BlockedLayout([v, 1], [t1, t0], [1, warps], [0, 1]).to_linear([tile, tile])
    return _strip(src), _strip(dst)


def transposes(args, copy: dict | None) -> list[dict]:
    """Large matrix transposes (fp8/fp16/fp32) through our planned conversion, against the device's
    copy bandwidth; checked against torch's transpose."""
    import cupy as cp
    import torch

    from linear_layouts.codegen.kernel import emit_transpose_kernel
    from linear_layouts.codegen.runtime import compile_kernel

    rows = []
    n = args.transpose_size
    for w, tdt in ((1, torch.int8), (2, torch.int16), (4, torch.int32)):
        src, dst = transpose_layouts(w)
        step = conversion_step(src, dst, 8 * w)
        k = emit_transpose_kernel(kernel_name("ll_transpose", w, n), src, dst, w, step, n, n)
        fn = compile_kernel(k)
        a = torch.randint(-100, 100, (n, n), dtype=tdt, device="cuda")
        b = torch.empty_like(a)
        grid = (n // k.tile_cols, n // k.tile_rows)
        args_ = (cp.asarray(a), cp.asarray(b))

        def launch(fn=fn, k=k, grid=grid, a_=args_):
            fn(grid, (k.threads,), a_, shared_mem=k.shared_bytes)

        us = _time(launch, repeats=5, inner=5)
        ok = bool(torch.equal(b, a.t()))
        tbs = 2 * n * n * w / (us * 1e-6) / 1e12
        row = dict(bits=8 * w, size=n, us=us, tb_per_s=tbs, correct=ok, plan=_kind(step),
                   instructions=step.instruction_counts())
        if copy:
            row["fraction_of_copy"] = tbs / copy["tb_per_s"]
        rows.append(row)
        print("  transpose", row, flush=True)
    return rows


GATHER_CASES = (  # (shape, size_per_thread, threads_per_warp, warps_per_cta, order): axis 0 inside a warp
    ([32, 64], [1, 1], [32, 1], [1, 4], [0, 1]),
    ([64, 32], [2, 1], [16, 2], [1, 4], [0, 1]),
    ([16, 128], [4, 1], [4, 8], [1, 4], [0, 1]),
    ([128, 16], [4, 1], [32, 1], [1, 4], [0, 1]),
)


def gathers(args) -> list[dict]:
    """Warp-local gather by shuffles (analysis.gather plan) against the shared-memory gather, checked
    against numpy's take_along_axis; whole kernels over many tiles."""
    import cupy as cp
    import numpy as np

    from gpu_cases import _strip
    from linear_layouts.analysis.gather import plan_gather
    from linear_layouts.catalog.blocked import BlockedLayout
    from linear_layouts.codegen.gather import emit_gather_kernel
    from linear_layouts.codegen.runtime import compile_kernel

    rows = []
    rng = np.random.default_rng(5)
    for shape, spt, tpw, wpc, order in GATHER_CASES:
        layout = _strip(BlockedLayout(spt, tpw, wpc, order).to_linear(shape))
        for bits, dt in ((16, np.uint16), (32, np.uint32)):
            plan = plan_gather(layout, layout, 0, bits)
            tiles = args.gather_tiles
            tile = layout.total_out_dim_size
            src = rng.integers(0, 60000, size=(tiles,) + tuple(shape)).astype(dt)
            idx = rng.integers(0, shape[0], size=(tiles,) + tuple(shape)).astype(np.int32)
            want = np.take_along_axis(src, idx, axis=1)
            d_src, d_idx = cp.asarray(src.ravel()), cp.asarray(idx.ravel())
            row = dict(shape=shape, bits=bits, layout=f"blocked(spt={spt}, tpw={tpw}, wpc={wpc})",
                       shfl=plan.num_shuffles, tiles=tiles)
            for variant, shared in (("shuffles", False), ("shared memory", True)):
                k = emit_gather_kernel(kernel_name("ll_gather", shape, bits, shared), plan, shared_memory=shared)
                fn = compile_kernel(k)
                d_out = cp.zeros(tiles * tile, dtype=dt)
                a_ = (d_src, d_idx, d_out)

                def launch(fn=fn, k=k, a_=a_):
                    fn((tiles,), (k.threads,), a_, shared_mem=k.shared_bytes)

                launch()
                cp.cuda.runtime.deviceSynchronize()
                row[variant + " correct"] = bool(np.array_equal(cp.asnumpy(d_out).reshape(want.shape), want))
                row[variant] = _time(launch)
            rows.append(row)
            print("  gather", row, flush=True)
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


# ------------------------------------------------------------------------------------------ report
def environment() -> dict:
    env = dict(date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), python=platform.python_version())
    for cmd, key in ((["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"], "gpu"),
                     (["nvcc", "--version"], "nvcc"), (["ncu", "--version"], "ncu")):
        try:
            env[key] = subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip().splitlines()[-1]
        except Exception as exc:
            env[key] = f"unavailable ({exc})"
    for mod in ("cupy", "torch", "triton", "numpy"):
        try:
            env[mod] = __import__(mod).__version__
        except Exception:
            env[mod] = "absent"
    return env


def geomean(values: list[float]) -> float:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def write_report(out: Path, results: dict) -> None:
    env = results["environment"]
    lines = ["# GPU suite: generated conversion kernels on the device", "",
             f"Device: {env.get('gpu')}; date {env.get('date')}; CUDA {env.get('nvcc')}; ncu {env.get('ncu')}; "
             f"CuPy {env.get('cupy')}, PyTorch {env.get('torch')}, Triton {env.get('triton')}, Python {env.get('python')}.",
             "", "Reproduce: `PYTHONUNBUFFERED=1 PYTHONPATH=src python benchmarks/gpu_suite.py --out OUT` "
             "(`--mode prepare` on a CPU machine first compiles the cubins).", ""]
    ver = results.get("verify", [])
    cases = {r["case"] for r in ver}
    ours = [r for r in ver if r["variant"] == "ours"]
    bad = [r for r in ver if r["wrong"] != 0]
    lines += ["## (a) Correctness", "",
              f"{len(ours)} conversions (ours) + {len(ver) - len(ours)} baseline kernels over {len(cases)} layout pairs: "
              f"**{len(ver) - len(bad)} / {len(ver)} kernels correct** on every element "
              "(3 tiles with one round trip, 2 tiles with none).", ""]
    kinds: dict[str, int] = {}
    for v in results.get("variants", []):
        if v["variant"] == "ours":
            kinds[v["kind"]] = kinds.get(v["kind"], 0) + 1
    lines.append("Our plans: " + ", ".join(f"{k}: {n}" for k, n in sorted(kinds.items())) + ".")
    fams: dict[str, int] = {}
    for v in results.get("variants", []):
        if v["variant"] == "ours":
            key = f"{v['bits']}-bit / {v['warps']} warps"
            fams[key] = fams.get(key, 0) + 1
    lines.append("By element width and warps: " + ", ".join(f"{k}: {n}" for k, n in sorted(fams.items())) + ".")
    notes = [v for v in results.get("variants", []) if v.get("note")]
    if notes:
        lines.append(f"{len(notes)} pairs fell back to the analysis pieces because plan_conversion raised "
                     f"(first: {notes[0]['case']}: {notes[0]['note']}).")
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
                  f"- all shared-memory kernels (ours and baselines): ncu = codegen's model of its emitted instructions on **{n_model} / {n_meas}** measured kernels.",
                  "", "| case | variant | instructions | ncu st + ld | analysis st + ld | model st + ld |", "|---|---|---|---|---|---|"]
        shown = [r for r in rows if r["case"] in {c for c in (x["case"] for x in rows)} and (
            r["case"].startswith(("seed", "row", "blocked", "lanes")) or not eq(r, "modelled") or not eq(r, "predicted"))]
        for r in shown[:80]:
            ins = ", ".join(f"{k} x{n}" for k, n in r["instructions"].items())
            m = r["measured"]
            mm = "n/a" if m[0] is None else f"{int(m[0])} + {int(m[1])}"
            p = "-" if r["predicted"] is None else f"{r['predicted'][0]} + {r['predicted'][1]}"
            mo = "-" if r["modelled"] is None else f"{r['modelled'][0]} + {r['modelled'][1]}"
            lines.append(f"| {r['case']} | {r['variant']} | {ins} | {mm} | {p} | {mo} |")
        lines.append("")
        lines.append("Rows shown: the named pairs and every kernel where ncu differs from a prediction; counts are per thread.")
        lines.append("")
    for key in ("memcheck", "racecheck"):
        s = results.get(key)
        if s:
            lines += [f"## (c) compute-sanitizer {key}", "", f"exit code {s['rc']}, {s['seconds']} s over every kernel of the suite:", ""]
            lines += [f"    {l}" for l in s["summary"]] or ["    (no summary line)"]
            lines.append("")
    bench_rows = results.get("bench", [])
    if bench_rows:
        lines += ["## (d) Benchmarks (µs per launch, median of 5 x 10 launches; CUDA events)", "",
                  "`conversion`: many CTAs, each doing 1 + 2 x iterations dependent conversions on its tile (data in L2, "
                  "an XOR between conversions so neither compiler can fold them); `whole kernel`: load, one conversion, store.", "",
                  "| case | config | kind | ours | Triton | unswizzled | padded | shared (for shuffles) | Triton / ours | padded / ours |",
                  "|---|---|---|---|---|---|---|---|---|---|"]

        def f(x):
            return "-" if x is None else f"{x:.1f}"

        for r in bench_rows:
            ours = r.get("ours")
            tri = r.get("triton")
            pad = r.get("padded")
            ratio = f"{tri / ours:.2f}" if ours and tri else "-"
            pratio = f"{pad / ours:.2f}" if ours and pad else "-"
            lines.append(f"| {r['case']} | {r['config']} | {r['kind']} | {f(ours)} | {f(tri)} | {f(r.get('unswizzled'))} | "
                         f"{f(pad)} | {f(r.get('shared'))} | {ratio} | {pratio} |")
        for config in ("conversion", "whole kernel"):
            rs = [r for r in bench_rows if r["config"] == config]
            tri = geomean([r["triton"] / r["ours"] for r in rs if r.get("triton") and r.get("ours")])
            pad = [r["padded"] / r["ours"] for r in rs if r.get("padded") and r.get("ours")]
            sh = [r["shared"] / r["ours"] for r in rs if r.get("shared") and r.get("ours") and r["kind"] == "warp shuffle"]
            rg = [r["shared"] / r["ours"] for r in rs if r.get("shared") and r.get("ours") and r["kind"] == "registers"]
            lines.append("")
            lines.append(f"**{config}**: geometric-mean speedup over Triton's convert_layout {tri:.2f}x"
                         + (f"; over padding: min {min(pad):.2f}x, geomean {geomean(pad):.2f}x" if pad else "")
                         + (f"; warp shuffles over shared memory: max {max(sh):.2f}x, geomean {geomean(sh):.2f}x" if sh else "")
                         + (f"; register permutations over shared memory: geomean {geomean(rg):.2f}x" if rg else ""))
        lines.append("")
    if "copy" in results:
        c = results["copy"]
        lines += [f"Device-to-device copy: {c['tb_per_s']:.2f} TB/s (bytes read + written, 1 GiB).", ""]
    if results.get("transpose"):
        lines += ["### Large matrix transposes (B = A^T, 64x64 tiles through the planned conversion, 4 warps)", "",
                  "| element | matrix | plan | shared instructions / thread | µs | TB/s (read + write) | of copy bandwidth | correct |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in results["transpose"]:
            ins = ", ".join(f"{k} x{n}" for k, n in r["instructions"].items())
            frac = f"{100 * r['fraction_of_copy']:.0f}%" if "fraction_of_copy" in r else "-"
            lines.append(f"| {r['bits']}-bit | {r['size']}x{r['size']} | {r['plan']} | {ins} | {r['us']:.0f} | "
                         f"{r['tb_per_s']:.2f} | {frac} | {r['correct']} |")
        lines.append("")
    if results.get("gather"):
        lines += ["### Warp-local gather (axis 0, index tile = src tile, whole kernels, µs per launch)", "",
                  "| shape | element | layout | shfl / thread | shuffles | shared memory | speedup | correct |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in results["gather"]:
            sp = r["shared memory"] / r["shuffles"] if r.get("shuffles") else float("nan")
            lines.append(f"| {r['shape']} | {r['bits']}-bit | {r['layout']} | {r['shfl']} | {r['shuffles']:.1f} | "
                         f"{r['shared memory']:.1f} | {sp:.2f}x | {r['shuffles correct'] and r['shared memory correct']} |")
        lines.append("")
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
    rs = [r for r in rows if r["config"] == "conversion" and r.get("ours")]
    if not rs:
        return
    names = [r["case"] for r in rs]
    series = {k: [(r[k] / r["ours"]) if r.get(k) else 0 for r in rs] for k in ("triton", "padded", "unswizzled", "shared")}
    fig, ax = plt.subplots(figsize=(max(8, len(rs) * 0.6), 4.5))
    width = 0.2
    for i, (k, vals) in enumerate(series.items()):
        ax.bar([j + i * width for j in range(len(rs))], vals, width, label=f"{k} time / ours")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks([j + 1.5 * width for j in range(len(rs))])
    ax.set_xticklabels(names, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("speedup of ours (x)")
    ax.set_title("Conversion-dominated kernels: peer time / our time")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "gpu_bench.png", dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="all",
                    choices=["all", "prepare", "launch-shared", "launch-all", "verify-child"])
    ap.add_argument("--out", default=str(HERE / "build" / "out"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--skip", default="", help="comma list of: verify,ncu,memcheck,racecheck,bench")
    ap.add_argument("--baselines-for", type=int, default=24)
    ap.add_argument("--bench-cases", type=int, default=40)
    ap.add_argument("--bench-tiles", type=int, default=1056)
    ap.add_argument("--bench-iterations", type=int, default=50)
    ap.add_argument("--whole-tiles", type=int, default=8192)
    ap.add_argument("--transpose-size", type=int, default=8192)
    ap.add_argument("--gather-tiles", type=int, default=4096)
    ap.add_argument("--no-compile", action="store_true", help="prepare: build the kernel list only")
    ap.add_argument("--ncu-timeout", type=int, default=240)
    ap.add_argument("--verify-timeout", type=int, default=150)
    ap.add_argument("--sanitizer-timeout", type=int, default=200)
    args = ap.parse_args()
    t0 = time.time()
    cache = HERE / "build" / f"variants_{'quick' if args.quick else 'full'}.json"
    if args.mode == "prepare" or not cache.exists():
        cases = suite_cases(args.quick)
        variants = build_variants(cases, 4 if args.quick else args.baselines_for)
        save_variants(cache, variants)
    else:
        variants = load_variants(cache)
    cases = list({v.case.name: v.case for v in variants}.values())
    if args.mode == "verify-child":
        Path(args.out).mkdir(parents=True, exist_ok=True)
        with open(Path(args.out) / "verify_rows.jsonl", "w") as sink:
            verify_rows(variants, sink)
        return
    if args.mode in ("launch-shared", "launch-all"):
        _launch_all(variants, tiles=1 if args.mode == "launch-shared" else 2,
                    iterations=0 if args.mode == "launch-shared" else 1, only_shared=args.mode == "launch-shared")
        return
    print(f"{len(cases)} cases, {len(variants)} kernels built in {time.time() - t0:.1f} s", flush=True)
    if args.no_compile:
        return
    seconds = compile_all(variants)
    print(f"compiled (or found cached) in {seconds:.1f} s", flush=True)
    if args.mode == "prepare":
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    skip = set(filter(None, args.skip.split(",")))
    results: dict = dict(environment=environment(), gaps=[])
    results["variants"] = [dict(case=v.case.name, variant=v.variant, kind=v.step_kind, bits=v.case.bits,
                                warps=v.case.warps, family=v.case.family, kernel=v.kernel.name,
                                predicted=v.predicted, modelled=v.modelled, instructions=v.instructions,
                                description=v.case.description, note=v.note) for v in variants]
    print(json.dumps(results["environment"]), flush=True)

    def save():
        (out / "gpu_suite.json").write_text(json.dumps(results, indent=1, default=str))
        write_report(out, results)

    stages = [("verify", lambda: verify(args, variants)), ("ncu", lambda: run_ncu(args, variants)),
              ("memcheck", lambda: run_sanitizer(args, "memcheck")),
              ("racecheck", lambda: run_sanitizer(args, "racecheck")),
              ("copy", copy_bandwidth), ("transpose", lambda: transposes(args, results.get("copy"))),
              ("gather", lambda: gathers(args)), ("bench", lambda: bench(args, variants))]
    for key, fn in stages:
        if key in skip:
            continue
        start = time.time()
        try:
            results[key] = fn()
        except Exception:
            results[key + "_error"] = traceback.format_exc()[-3000:]
            print(results[key + "_error"], flush=True)
        print(f"== {key} done in {time.time() - start:.1f} s", flush=True)
        save()
    plot(out, results.get("bench", []))
    save()
    print((out / "gpu_suite.md").read_text())


if __name__ == "__main__":
    main()
