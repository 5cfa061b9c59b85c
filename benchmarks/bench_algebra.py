"""Benchmark: the LinearLayout algebra, ours (both backends) against Triton's C++ binding, in one run.

Usage:  python benchmarks/bench_algebra.py [--quick] [--backend both|c|python] [--timer cpu|wall]
                                           [--out benchmarks/results/algebra.md]

Realistic layouts (10 to 24 in bits) are built by Triton's Gluon ``to_linear_layout`` — blocked,
NVIDIA mma (v2), swizzled shared and NVMMA shared — and the same bases are given to both libraries.
Each operation is timed for Triton and for each of our backends (the compiled core ``c`` and pure
``python``, see ``linear_layouts.core._ccore``) back to back with ``timeit`` (best of several repeats, calls
per repeat chosen by ``Timer.autorange``); the per-call time in microseconds and the ratio Triton time /
our time are printed (> 1 means we are faster), with the geometric mean. The timer is this process's CPU
time by default (``--timer cpu``: other jobs of a shared machine do not inflate it), wall time on request.
Every call does the whole operation: construction, apply, product, str and the solvers keep no cached
result between calls in the compiled core (the pure-Python ``apply`` reuses its byte tables, as before).
Targets (issue 17, compiled core): geometric mean >= 2.0, no operation below 1.0, and the vectorized apply
over all 2^20 inputs (``apply_all``, ``apply_array``) >= 300x faster than a Python loop over Triton's
``apply`` (that loop is timed on a sample of inputs and extrapolated); the pure-Python backend no slower
than before the compiled core. Results go to ``benchmarks/results/algebra.md`` with date, machine, versions.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import math
import os
import platform
import sys
import time
import timeit
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import harness  # noqa: F401  (puts src/ on the path)
from harness.environment import cpu_model  # noqa: E402

import numpy as np

from linear_layouts import LinearLayout

try:
    from linear_layouts.core import _ccore
except ImportError:  # a checkout from before the compiled core: pure Python only
    _ccore = None

try:
    import triton
    from triton._C.libtriton import gluon_ir, ir
    from triton._C.libtriton.linear_layout import LinearLayout as TritonLL
    from triton.experimental.gluon import language as gl
except ImportError:  # pragma: no cover - the benchmark needs the peer
    sys.exit("bench_algebra.py needs triton (pip install triton==3.9.0): it times ours against Triton's C++")

Spec = tuple[list[tuple[str, list[list[int]]]], list[tuple[str, int]]]


# ----------------------------------------------------------------------------- layouts
def _builder():
    ctx = ir.context()
    ir.load_dialects(ctx)
    return ctx, gluon_ir.GluonOpBuilder(ctx)


def _distributed(builder, layout, shape) -> Spec:
    ll = builder.to_linear_layout(layout._to_ir(builder), shape)
    bases = [("register", ll.reg_bases), ("lane", ll.lane_bases), ("warp", ll.warp_bases), ("block", ll.block_bases)]
    return bases, [(f"dim{i}", s) for i, s in enumerate(ll.shape)]


def _shared(builder, layout, shape) -> Spec:
    ll = builder.to_linear_layout(layout._to_ir(builder), shape)
    return [("offset", ll.offset_bases), ("block", ll.block_bases)], [(f"dim{i}", s) for i, s in enumerate(ll.shape)]


@dataclass(frozen=True)
class Case:
    """One benchmark layout: its name, the spec (bases + out dims), and its kind."""

    name: str
    spec: Spec
    kind: str  # "distributed" or "shared"

    @property
    def in_bits(self) -> int:
        return sum(len(b) for _, b in self.spec[0])


def realistic_cases(quick: bool) -> list[Case]:
    _, b = _builder()
    blocked = gl.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])
    blocked_wide = gl.BlockedLayout([4, 4], [2, 16], [8, 1], [1, 0])
    mma = gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=[4, 1], instr_shape=[16, 8])
    swz = gl.SwizzledSharedLayout(8, 1, 8, [1, 0])
    nvmma = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)
    cases = [
        Case("blocked 32x32", _distributed(b, blocked, [32, 32]), "distributed"),
        Case("blocked 128x128", _distributed(b, blocked, [128, 128]), "distributed"),
        Case("mma v2 128x128", _distributed(b, mma, [128, 128]), "distributed"),
        Case("swizzled shared 128x64", _shared(b, swz, [128, 64]), "shared"),
        Case("nvmma shared 128x128", _shared(b, nvmma, [128, 128]), "shared"),
        Case("blocked 1024x1024", _distributed(b, blocked_wide, [1024, 1024]), "distributed"),
        Case("mma v2 512x512", _distributed(b, mma, [512, 512]), "distributed"),
        Case("swizzled shared 1024x1024", _shared(b, swz, [1024, 1024]), "shared"),
        Case("blocked 4096x4096", _distributed(b, blocked_wide, [4096, 4096]), "distributed"),
    ]
    if quick:
        cases = cases[1:5]
    return cases


def ours_of(spec: Spec) -> LinearLayout:
    return LinearLayout(spec[0], spec[1], require_surjective=False)


def triton_of(spec: Spec):
    bases, out_dims = spec
    return TritonLL.from_bases(bases, [n for n, _ in out_dims], [s for _, s in out_dims], False)


# ----------------------------------------------------------------------------- timing
TIMERS = {"cpu": time.process_time, "wall": time.perf_counter}
TIMER = TIMERS["cpu"]


def best_us(fn: Callable[[], object], repeat: int) -> float:
    """Best time of one call in microseconds (timeit: autorange calls per repeat, best repeat)."""
    timer = timeit.Timer(fn, timer=TIMER)
    number, _ = timer.autorange()
    number = max(1, number // 2)
    return min(timer.repeat(repeat=repeat, number=number)) / number * 1e6


@dataclass(frozen=True)
class Row:
    op: str
    layout: str
    ours_us: float
    triton_us: float

    @property
    def ratio(self) -> float:
        return self.triton_us / self.ours_us


def backend_scope(name: str):
    """A context running our code on backend ``name`` ("c" or "python")."""
    if _ccore is None:
        if name != "python":
            sys.exit("this checkout has no compiled core: use --backend python")
        return contextlib.nullcontext()
    return _ccore.using(name)


def operations(case: Case, mma_spec: Spec, shared_spec: Spec) -> dict[str, tuple[Callable, Callable]]:
    """Operation name -> (ours thunk, Triton thunk), on equal inputs."""
    spec = case.spec
    a, ta = ours_of(spec), triton_of(spec)
    a.is_surjective()  # both libraries then hold the layout as constructed and queried once
    bases, out_dims = spec
    names, sizes = [n for n, _ in out_dims], [s for _, s in out_dims]
    x = {n: (1 << len(b)) - 1 for n, b in bases}
    ops: dict[str, tuple[Callable, Callable]] = {
        "construct (from_bases)": (
            lambda: LinearLayout(bases, out_dims, require_surjective=False),
            lambda: TritonLL.from_bases(bases, names, sizes, False),
        ),
        "apply": (lambda: a.apply(x), lambda: ta.apply(x)),
        "is_surjective": (lambda: a.is_surjective(), lambda: ta.is_surjective()),
        "is_injective": (lambda: a.is_injective(), lambda: ta.is_injective()),
        "is_invertible": (lambda: a.is_invertible(), lambda: ta.is_invertible()),
        "== (equal copies)": (lambda: a == ours_copy, lambda: ta == triton_copy),
        "str (toString)": (lambda: str(a), lambda: str(ta)),
        "to_matrix / get_matrix_view": (lambda: a.to_matrix(), lambda: ta.get_matrix_view()),
    }
    ours_copy, triton_copy = ours_of(spec), triton_of(spec)
    # product: the register factor times the rest (how Triton builds layouts: register * lane * warp)
    first, rest = ([bases[0]], out_dims), (bases[1:], out_dims)
    f1, f2, t1, t2 = ours_of(first), ours_of(rest), triton_of(first), triton_of(rest)
    ops["* (product)"] = (lambda: f1 * f2, lambda: t1 * t2)
    if case.kind == "shared":
        ops["invert"] = (lambda: a.invert(), lambda: ta.invert())
        s_inv, ts_inv = a.invert(), ta.invert()
        ops["compose (x.compose(inv))"] = (lambda: s_inv.compose(a), lambda: ts_inv.compose(ta))
    else:
        ops["pseudoinvert"] = (lambda: a.pseudoinvert(), lambda: ta.pseudoinvert())
        # register -> shared offset: the shared-memory store/load map of the paper's §5.3
        sh = _matching(shared_spec, out_dims)
        if sh is not None:
            s, ts = ours_of(sh), triton_of(sh)
            s_inv, ts_inv = s.invert(), ts.invert()
            ops["compose (reg -> offset)"] = (lambda: a.compose(s_inv), lambda: ta.compose(ts_inv))
            ops["invert_and_compose (reg -> shared)"] = (lambda: a.invert_and_compose(s),
                                                         lambda: ta.invert_and_compose(ts))
        mm = _matching(mma_spec, out_dims)
        if mm is not None:
            m, tm = ours_of(mm), triton_of(mm)
            ops["invert_and_compose (blocked -> mma)"] = (lambda: a.invert_and_compose(m),
                                                          lambda: ta.invert_and_compose(tm))
    return ops


def _matching(spec_by_shape: dict, out_dims) -> Spec | None:
    return spec_by_shape.get(tuple(s for _, s in out_dims))


def run(quick: bool, repeat: int, backends: list[str]) -> tuple[dict[str, list[Row]], dict[str, dict]]:
    """Rows and vectorized-apply numbers per backend; each operation timed for Triton and every backend
    back to back (Triton once per operation, shared by the backends' ratios)."""
    _, b = _builder()
    mma = gl.NVMMADistributedLayout(version=[2, 0], warps_per_cta=[4, 1], instr_shape=[16, 8])
    swz = gl.SwizzledSharedLayout(8, 1, 8, [1, 0])
    shapes = [(32, 32), (128, 128), (1024, 1024), (4096, 4096)]
    mma_specs = {s: _distributed(b, mma, list(s)) for s in shapes}
    shared_specs = {s: _shared(b, swz, list(s)) for s in shapes}
    rows: dict[str, list[Row]] = {name: [] for name in backends}
    for case in realistic_cases(quick):
        label = f"{case.name} ({case.in_bits} bits)"
        per_backend = {}
        for name in backends:  # our layouts and thunks are made under the backend that runs them
            with backend_scope(name):
                per_backend[name] = operations(case, mma_specs, shared_specs)
        for op in per_backend[backends[0]]:
            triton_us = best_us(per_backend[backends[0]][op][1], repeat)
            line = f"  {op:38s} {label:34s} triton {triton_us:9.2f} us"
            for name in backends:
                with backend_scope(name):
                    ours_us = best_us(per_backend[name][op][0], repeat)
                rows[name].append(Row(op, label, ours_us, triton_us))
                line += f"   {name} {ours_us:9.2f} us ({triton_us / ours_us:6.2f}x)"
            print(line, flush=True)
    vec = {}
    for name in backends:
        with backend_scope(name):
            vec[name] = vectorized_apply(b, repeat)
    return rows, vec


def vectorized_apply(builder, repeat: int) -> dict:
    """apply over all 2^20 inputs of a 20-bit blocked layout: apply_all / apply_array vs a Triton loop."""
    spec = _distributed(builder, gl.BlockedLayout([4, 4], [2, 16], [8, 1], [1, 0]), [1024, 1024])
    a, ta = ours_of(spec), triton_of(spec)
    n = a.total_in_dim_size
    assert n == 1 << 20
    sizes = a.in_dims
    flat = np.arange(n)
    arrays, shift = {}, 0
    for d, s in sizes.items():
        arrays[d] = (flat >> shift) & (s - 1)
        shift += s.bit_length() - 1
    ours_all = best_us(lambda: a.apply_all(), repeat)
    ours_array = best_us(lambda: a.apply_array(arrays), repeat)
    sample = 1 << 14
    rng = np.random.default_rng(0)
    picks = rng.integers(0, n, size=sample)
    inputs = [{d: int(arrays[d][i]) for d in sizes} for i in picks]

    def loop() -> None:
        for x in inputs:
            ta.apply(x)

    loop_us = best_us(loop, max(2, repeat // 2)) * (n / sample)
    # sanity: same answers
    got = a.apply_array({d: arrays[d][picks[:64]] for d in sizes})
    for k, i in enumerate(picks[:64]):
        want = ta.apply({d: int(arrays[d][i]) for d in sizes})
        assert all(int(got[d][k]) == v for d, v in want.items())
    return {"inputs": n, "sample": sample, "apply_all_us": ours_all, "apply_array_us": ours_array,
            "triton_loop_us": loop_us}


# ----------------------------------------------------------------------------- report
def geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def load_average() -> str:
    try:
        return " / ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover - not on every platform
        return "unknown"


KEEP_MARKER = "<!-- end of the generated tables; what follows is kept when the benchmark is re-run -->\n"
TARGETS = {"c": (2.0, 1.0, 300.0)}  # geomean, lowest operation, vectorized speed-up (issue 17)


def summarize_backend(name: str, rows: list[Row], vec: dict) -> tuple[list[str], dict]:
    """The markdown section of one backend, and its headline numbers."""
    per_op: dict[str, list[Row]] = {}
    for r in rows:
        per_op.setdefault(r.op, []).append(r)
    op_ratio = {op: geomean([r.ratio for r in rs]) for op, rs in per_op.items()}
    overall = geomean(list(op_ratio.values()))
    worst_op = min(op_ratio, key=op_ratio.get)
    worst_row = min(rows, key=lambda r: r.ratio)
    speedup_all = vec["triton_loop_us"] / vec["apply_all_us"]
    speedup_array = vec["triton_loop_us"] / vec["apply_array_us"]
    target = TARGETS.get(name)
    title = {"c": "compiled core (`c`, the default where the extension is built)",
             "python": "pure Python (`python`: no extension, or LINEAR_LAYOUTS_PURE_PYTHON=1)"}[name]
    lines = [
        f"## Backend {title}",
        "",
        "### Per operation (geometric mean of the ratio over the layouts)",
        "",
        "| operation | layouts | ours us (geomean) | Triton us (geomean) | ratio Triton/ours |",
        "|---|---|---|---|---|",
    ]
    for op, rs in per_op.items():
        lines.append(f"| {op} | {len(rs)} | {geomean([r.ours_us for r in rs]):.2f} | "
                     f"{geomean([r.triton_us for r in rs]):.2f} | {op_ratio[op]:.2f} |")
    goal = (f" (target >= {target[0]:.1f})" if target else "")
    low_goal = (f" (target >= {target[1]:.1f})" if target else "")
    vec_goal = (f" (target >= {target[2]:.0f}x)" if target else "")
    lines += [
        "",
        f"**Geometric mean over operations: {overall:.2f}**{goal}. "
        f"Lowest operation: {worst_op} at {op_ratio[worst_op]:.2f}{low_goal}; "
        f"lowest single row: {worst_row.op} on {worst_row.layout} at {worst_row.ratio:.2f}.",
        "",
        "### Vectorized apply over all 2^20 inputs (20-bit blocked layout 1024x1024)",
        "",
        f"- ours `apply_all()`: {vec['apply_all_us'] / 1e3:.2f} ms; ours `apply_array(...)` over all inputs: "
        f"{vec['apply_array_us'] / 1e3:.2f} ms",
        f"- Triton: a Python loop over `apply`, timed on {vec['sample']} random inputs and extrapolated to "
        f"{vec['inputs']}: {vec['triton_loop_us'] / 1e3:.0f} ms",
        f"- **speed-up: {speedup_all:.0f}x (apply_all), {speedup_array:.0f}x (apply_array)**{vec_goal}",
        "",
        "### All rows",
        "",
        "| operation | layout | ours us | Triton us | ratio |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| {r.op} | {r.layout} | {r.ours_us:.2f} | {r.triton_us:.2f} | {r.ratio:.2f} |" for r in rows]
    summary = {"geomean": overall, "op_ratio": op_ratio, "worst_op": worst_op, "speedup_all": speedup_all,
               "speedup_array": speedup_array}
    return lines + [""], summary


def summarize(rows: dict[str, list[Row]], vec: dict[str, dict], load_before: str, timer: str,
              argv: list[str]) -> tuple[str, dict[str, dict]]:
    """The whole report (header, then one section per backend) and each backend's headline numbers."""
    lines = [
        "# Algebra benchmark: linear_layouts vs Triton's C++ LinearLayout",
        "",
        f"- date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- machine: {cpu_model()}, {platform.machine()}, {platform.system()} {platform.release()}",
        f"- cores: {os.cpu_count()}; load average (1/5/15 min) before the run {load_before}, after "
        f"{load_average()} (a shared machine)",
        f"- python {platform.python_version()}, numpy {np.__version__}, triton {triton.__version__}",
        f"- command: `python benchmarks/bench_algebra.py{' ' + ' '.join(argv) if argv else ''}`",
        "- method: `timeit`, calls per repeat from `Timer.autorange`, best repeat; per-call microseconds of "
        + ("this process's CPU time (`time.process_time`: other jobs on the shared machine do not inflate it)."
           if timer == "cpu" else "wall time (`time.perf_counter`)."),
        "  Ratio = Triton time / our time (> 1: ours is faster). Layouts from Gluon `to_linear_layout`;",
        "  identical bases given to both libraries; Triton and each backend timed back to back per operation.",
        "  Predicates are timed on an already-built layout (Triton computes surjectivity in its constructor,",
        "  so does the compiled core; the pure-Python core caches the rank on first use). The compiled core",
        "  keeps no result between calls (construction, apply, product, str and the solvers run whole each",
        "  call); the pure-Python `apply` reuses its cached byte tables.",
        "",
    ]
    summaries = {}
    for name in rows:
        section, summaries[name] = summarize_backend(name, rows[name], vec[name])
        lines += section
    return "\n".join(lines), summaries


def main(argv: list[str] | None = None) -> int:
    global TIMER
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer layouts and repeats (a smoke run)")
    parser.add_argument("--repeat", type=int, default=5, help="timeit repeats; the best is kept")
    parser.add_argument("--backend", choices=("both", "c", "python"), default="both",
                        help="which of our backends to time (both: the compiled core and pure Python)")
    parser.add_argument("--timer", choices=tuple(TIMERS), default="cpu",
                        help="cpu: this process's CPU time (default, robust on a shared machine); wall: wall time")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results" / "algebra.md")
    args = parser.parse_args(argv)
    TIMER = TIMERS[args.timer]
    backends = ["c", "python"] if args.backend == "both" else [args.backend]
    if "c" in backends and (_ccore is None or not _ccore.available()):
        sys.exit("the compiled core is not built (pip install -e . builds it); use --backend python")
    load_before = load_average()
    rows, vec = run(args.quick, 2 if args.quick else args.repeat, backends)
    text, summaries = summarize(rows, vec, load_before, args.timer, sys.argv[1:] if argv is None else argv)
    for name, s in summaries.items():
        print(f"\nbackend {name}:")
        for op, ratio in s["op_ratio"].items():
            print(f"  {op:40s} ratio Triton/ours {ratio:6.2f}")
        print(f"  geometric mean {s['geomean']:.2f}; lowest op {s['worst_op']} {s['op_ratio'][s['worst_op']]:.2f}")
        print(f"  vectorized apply over 2^20 inputs: {s['speedup_all']:.0f}x (apply_all), {s['speedup_array']:.0f}x "
              "(apply_array) vs a Triton apply loop (sampled, extrapolated)")
    if not args.quick:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        kept = ""  # hand-written notes after the marker (baseline, fuzzing) survive a re-run
        if args.out.is_file() and KEEP_MARKER in args.out.read_text():
            kept = args.out.read_text().split(KEEP_MARKER, 1)[1]
        args.out.write_text(text + "\n" + KEEP_MARKER + kept)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
