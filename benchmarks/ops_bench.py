"""The layout ops (``linear_layouts.ops``) on the device against their peers, one run, side by side.

For every case of ``ops_cases.SWEEP`` (the paper's Figure 2 fp8 transposes, 7B/70B weight matrices, attention
head transposes, NCHW <-> NHWC of ResNet-50 activations, small launch-bound shapes; fp8, bf16, fp16, fp32,
fp64) and ``ops_cases.CASTS`` (fp8 cast-transposes): ours, PyTorch eager ``x.permute(dims).contiguous()``,
``torch.compile`` of the same (Inductor's Triton kernel; ``dynamic=True``, one compile per class, rank,
permutation and dtype, so the compiles fit the run), a Triton ``tl.trans`` kernel at its best of ``triton_transpose.TILES``
(cubins compiled on the CPU, for the cases that reduce to a batched transpose) and a same-size copy, each
timed as the median of CUDA graphs of ``LAUNCHES`` launches (GPU time), each output checked bit for bit
against PyTorch's (the cast against ``(scale x).clamp(-max, max).to(float8)``); for small cases also the
host time of a call. Plus the device's copy bandwidth (1 GiB) and the first call's compile time (a fresh
process with an empty kernel cache, then one with the cubin on disk).

    # CPU: our cubins into benchmarks/build/cubins, Triton's into benchmarks/build/triton_transpose (~3 min):
    PYTHONPATH=src:/tmp/triton-3.6.0 python3 benchmarks/ops_bench.py --mode prepare
    # device (carry benchmarks/build):
    PYTHONUNBUFFERED=1 PYTHONPATH=src python3 benchmarks/ops_bench.py --out $OUT

Writes ``ops_bench.json`` and ``ops_bench.md`` under ``--out``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
import harness  # noqa: E402, F401  (puts src/ on the path)
os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(HERE / "build" / "cubins"))

from harness import ops_cases  # noqa: E402

#: Launches per CUDA graph (as the suite's transposes: a replay's own start is paid once per graph).
LAUNCHES = 20
#: Graph replays per median.
REPEATS = 5
#: Bytes from which a case is "large" (the issue's bandwidth targets).
LARGE_BYTES = ops_cases.LARGE_BYTES
#: Calls timed on the host for a small case.
HOST_CALLS = 200
_FP8_MAX = {"float8_e4m3fn": 448.0, "float8_e5m2": 57344.0}


# ---------------------------------------------------------------------------------------------- CPU
def _triton_needs() -> set[tuple[int, bool, bool]]:
    """``(element bytes, M % 16 == 0, N % 16 == 0)`` of every sweep case that is a batched transpose."""
    needs = set()
    for _, shape, dims, dtype in ops_cases.SWEEP:
        problem = _problem(shape, dims, dtype)
        if _triton_batch(problem) is not None:
            needs.add((problem.element_bytes, problem.rows % 16 == 0, problem.cols % 16 == 0))
    return needs


def prepare(jobs: int = 0) -> None:
    kernels, seconds = ops_cases.precompile(workers=jobs)
    print(f"ours: {kernels} kernels compiled (or found) in {seconds:.0f} s", flush=True)
    import triton_transpose  # noqa: PLC0415 - needs Triton 3.6 (the device's) on the path

    triton_transpose.prepare(_triton_needs(), workers=jobs or 2)


# ---------------------------------------------------------------------------------------------- device
def _problem(shape, dims, dtype):
    from linear_layouts.ops.plan import plan_permutation

    return plan_permutation(tuple(shape), tuple(dims), ops_cases.ITEMSIZE[dtype])


def _triton_batch(problem) -> int | None:
    """The batch of ``problem`` when it is a plain batched transpose (what the Triton kernel takes), else None."""
    from linear_layouts.ops.plan import PermuteKind

    if problem.kind is not PermuteKind.TRANSPOSE or problem.element_bytes not in (1, 2, 4, 8):
        return None
    if problem.lda != problem.cols or problem.ldb != problem.rows:
        return None
    size = problem.rows * problem.cols
    if len(problem.batch) > 1 or any(b[1] != size or b[2] != size for b in problem.batch):
        return None
    return problem.batch[0][0] if problem.batch else 1


def _random(shape, dtype_name: str):
    """Random bits of ``dtype_name`` (a bool: 0 or 1, the only bytes PyTorch's copies keep as they are)."""
    import torch

    dtype = getattr(torch, dtype_name)
    if dtype == torch.bool:
        return torch.randint(0, 2, tuple(shape), dtype=torch.uint8, device="cuda").view(torch.bool)
    size = torch.empty((), dtype=dtype).element_size()
    return torch.randint(0, 256, tuple(shape) + (size,), dtype=torch.uint8, device="cuda").view(dtype).reshape(shape)


def _same(a, b) -> bool:
    """Bit for bit (``ops_cases.bit_equal``)."""
    return ops_cases.bit_equal(a, b)


def _time(fn) -> float:
    import gpu_suite

    return gpu_suite._time(fn, repeats=REPEATS, inner=LAUNCHES)


def _time_together(fns: dict) -> dict:
    """``{label: µs}``: every contender of one case timed together (``harness.timing.time_together``). The
    process's state moves the L2-sized cases by up to 8% for every kernel alike (a ``torch.compile`` call, for
    one, makes them all faster, ``ops_l2_regimes.py``), so a case's contenders are timed together, after its
    compile, never one side before it and the other after."""
    from harness.timing import time_together

    return time_together(_time, fns)


def _host_us(fns: dict, calls: int = HOST_CALLS, repeats: int = REPEATS) -> dict:
    """``{label: µs per call on the host}``: ``calls`` calls then a synchronization, each function in turn,
    ``repeats`` rounds, the median kept (one run of a few ms is at the mercy of the host's scheduler)."""
    from harness.timing import per_call_us

    times: dict = {label: [] for label in fns}
    for fn in fns.values():
        fn()
    for _ in range(repeats):
        for label, fn in fns.items():
            times[label].append(per_call_us(fn, calls))
    return {label: sorted(t)[len(t) // 2] for label, t in times.items()}


class Compiled:
    """``torch.compile(fn, dynamic=True)``, one per key (class, rank, permutation, dtype), within a budget of
    compile seconds (a key first met after it is spent is not compiled)."""

    def __init__(self, budget: float):
        self.budget, self.spent = budget, 0.0
        self.functions: dict = {}

    def get(self, key, fn):
        import torch

        if key in self.functions:
            return self.functions[key], "dynamic"
        if self.spent > self.budget:
            return None, "skipped: compile budget spent"
        self.functions[key] = torch.compile(fn, dynamic=True)
        return self.functions[key], "dynamic"


def _tiles(x, out, shape, dims, expected, scan: bool = False) -> dict:
    """For a large batched transpose: ``{label: (run, correct)}``, ours at each tile of its list
    (``ops_cases.tile_alternatives``; ``scan``: its scan's tiles), checked (and then timed with the case's other
    contenders) so that the planner's choice is seen against the alternatives."""
    from linear_layouts.ops import launch

    device = x.device.index or 0
    shape_of = launch.grid_shape(device)
    alternatives = ops_cases.tile_alternatives(tuple(shape), tuple(dims), x.element_size(), x.data_ptr(),
                                               out.data_ptr(), shape_of.multiprocessors, shape_of.l2_bytes, scan)
    tiles = {}
    for label, launches in alternatives.items():
        run = ops_cases.runner(launches, device)
        out.zero_()
        run()
        tiles[label] = (run, _same(out, expected))
    return tiles


def _tuned(contenders: dict, row: dict, x, dims, expected, view: bool) -> None:
    """``bench_case``'s ``tuned``: the first call with ``ops.tune.AUTOTUNE`` on (host seconds, the tuning's
    choice and times in ``row``), its output checked, and ``ours tuned`` among the contenders (called as ``ours``
    is: into ``out=``, or where the permutation keeps memory order, ``view``, returning the view)."""
    import torch

    from linear_layouts import ops
    from linear_layouts.ops import launch, tune

    result = torch.empty_like(expected)
    before, compiles = len(tune.tunings), len(launch.compile_log)

    def ours_tuned():
        tune.AUTOTUNE = True
        try:
            return ops.permute(x, dims) if view else ops.permute(x, dims, out=result)
        finally:
            tune.AUTOTUNE = False

    torch.cuda.synchronize()
    start = time.perf_counter()
    first = ours_tuned()
    torch.cuda.synchronize()
    row["tune_s"] = time.perf_counter() - start
    row["tune_compile_s"] = sum(seconds for _, _, seconds in launch.compile_log[compiles:])
    new = tune.tunings[before:]
    row["tuned"] = new[-1].chosen if new else None
    row["tuning_us"] = dict(new[-1].us) if new else None
    row["tuned_correct"] = _same(first if view else result, expected)
    contenders["ours tuned"] = ours_tuned


def _grid(x):
    from linear_layouts.ops import launch

    return launch.grid_shape(x.device.index or 0)


def _variants(contenders: dict, launches, x, foreign: bool) -> None:
    """Adds ours with every launch plain (``ours plain``: what the ops launched before dependent launches) and
    with every launch dependent (``ours chained``: ``ops.launch.DEPENDENT_LAUNCH = "all"``, what a program running
    our ops back to back gets); ``foreign``: also PyTorch's ``add_`` on one element (a kernel that lets no
    dependent grid launch early) and ours and ours chained after it, what a program whose previous kernel is not
    ours sees (their difference)."""
    import torch

    device = x.device.index or 0
    contenders["ours plain"] = ops_cases.runner(launches, device, dependent=False)
    contenders["ours chained"] = chained = ops_cases.runner(launches, device, dependent=True)
    if foreign:
        tiny = torch.zeros(1, device="cuda")
        ours = contenders["ours"]
        contenders["foreign"] = lambda: tiny.add_(1)
        contenders["foreign + ours"] = lambda: (tiny.add_(1), ours())
        contenders["foreign + ours chained"] = lambda: (tiny.add_(1), chained())


def _variant_times(us: dict) -> dict:
    """A row's times of ``_variants``' contenders."""
    row = dict(ours_plain_us=us["ours plain"], ours_chained_us=us["ours chained"])
    if "foreign" in us:
        row.update(ours_after_foreign_us=us["foreign + ours"] - us["foreign"],
                   ours_chained_after_foreign_us=us["foreign + ours chained"] - us["foreign"])
    return row


def _best_of(tiles: dict) -> tuple[str | None, float | None]:
    good = {t: v for t, v in tiles.items() if v["correct"]}
    best = min(good, key=lambda t: good[t]["us"]) if good else None
    return best, good[best]["us"] if best else None


def _chosen_tile(shape, dims, x) -> str:
    """The planner's tile of this case (``rows x cols / warps``, and the side a batch dim is folded along), or the
    kernel's kind."""
    from linear_layouts.ops import launch
    from linear_layouts.ops.launches import Launch, permute_launches

    launches = permute_launches(tuple(shape), tuple(dims), x.element_size(), x.data_ptr(), x.data_ptr() + (1 << 30),
                                launch.grid_shape(x.device.index or 0))
    kernels = [item.kernel for item in launches if isinstance(item, Launch)]
    if kernels and getattr(kernels[0], "run", None):  # the small-block kernel: runs of whole blocks, no tile
        return f"small blocks, {kernels[0].run} a run/{kernels[0].threads // 32}w"
    if not kernels:
        return "copy"
    folded = f" (batch folded along {kernels[0].fold})" if getattr(kernels[0], "fold", "") else ""
    return f"{kernels[0].tile_rows}x{kernels[0].tile_cols}/{kernels[0].threads // 32}w{folded}"


def bench_case(kind: str, shape, dims, dtype: str, triton, compiled: Compiled, scan: bool = False,
               tuned: bool = False) -> dict:
    """One permutation: the compile first (it changes the process's state), every output checked, then ours,
    ours at each tile (``scan``: the scan's tiles), Triton's tiles, eager, the compiled function and a same-size
    copy timed together; ``tuned``: also ours with ``ops.tune.AUTOTUNE`` on (its first call, which tunes, timed on
    the host; then its output checked and its calls timed with the others)."""
    import torch

    from linear_layouts import ops

    x = _random(shape, dtype)
    expected = x.permute(dims).contiguous()
    out = torch.empty_like(expected)
    nbytes = x.numel() * x.element_size()
    row = dict(kind=kind, shape=list(shape), dims=list(dims), dtype=dtype, bytes=nbytes, large=nbytes >= LARGE_BYTES)
    problem = _problem(shape, dims, dtype)
    row["plan"] = dict(kind=problem.kind.value, element_bytes=problem.element_bytes, rows=problem.rows,
                       cols=problem.cols, batch=[b[0] for b in problem.batch])
    contenders: dict = {}
    fn, mode = compiled.get((kind, len(shape), tuple(dims), dtype), lambda t: t.permute(dims).contiguous())
    row["compile_mode"] = mode
    if fn is not None:
        start = time.time()
        try:
            got = fn(x)
            compiled.spent += time.time() - start
            row["compile_s"] = round(time.time() - start, 1)
            row["compile_correct"] = _same(got, expected)
            contenders["compile"] = lambda: fn(x)
        except Exception as error:  # noqa: BLE001 - reported, the sweep goes on
            compiled.spent += time.time() - start
            row["compile_error"] = f"{type(error).__name__}: {str(error)[:200]}"

    def ours():
        ops.permute(x, dims, out=out)

    ours()
    row["correct"] = _same(out, expected)
    contenders["ours"] = ours
    if x.permute(dims).is_contiguous():  # an identity in memory: ours returns the view, as eager does
        view = ops.permute(x, dims)
        row["view"] = True
        row["correct"] = row["correct"] and view.data_ptr() == x.data_ptr() and _same(view, expected)
        contenders["ours"], contenders["ours copy"] = (lambda: ops.permute(x, dims)), ours
    if tuned:
        _tuned(contenders, row, x, dims, expected, row.get("view", False))
    from linear_layouts.ops.launches import permute_launches

    _variants(contenders, permute_launches(tuple(shape), tuple(dims), x.element_size(), x.data_ptr(),
                                           out.data_ptr(), _grid(x)), x, row["large"])
    tiles = _tiles(x, out, shape, dims, expected, scan)
    contenders.update({f"tile {label}": run for label, (run, _) in tiles.items()})
    batch = _triton_batch(problem)
    triton_ok = {}
    if triton is not None and batch is not None:
        for tile, launch in triton.launchers(problem.element_bytes, problem.rows, problem.cols).items():
            out.zero_()
            try:  # a grid past CUDA's 65535 programs in y or z: that tile is no peer
                launch(x.data_ptr(), out.data_ptr(), batch)
            except Exception:  # noqa: BLE001
                continue
            triton_ok[tile] = _same(out, expected)
            contenders[f"triton {tile}"] = lambda launch=launch: launch(x.data_ptr(), out.data_ptr(), batch)
    contenders["eager"] = lambda: x.permute(dims).contiguous()
    flat = x.reshape(-1)
    copy = torch.empty_like(flat)
    contenders["copy"] = lambda: copy.copy_(flat)
    us = _time_together(contenders)
    row["ours_us"], row["eager_us"], row["same_size_copy_us"] = us["ours"], us["eager"], us["copy"]
    if "ours copy" in us:
        row["ours_copy_us"] = us["ours copy"]
    if "ours tuned" in us:
        row["ours_tuned_us"] = us["ours tuned"]
    row.update(_variant_times(us))
    if "compile" in us:
        row["compile_us"] = us["compile"]
    if tiles:
        row["ours_tiles"] = {label: dict(us=us[f"tile {label}"], correct=ok) for label, (_, ok) in tiles.items()}
        row["ours_best_tile"], row["ours_best_tile_us"] = _best_of(row["ours_tiles"])
    row["tile"] = _chosen_tile(shape, dims, x)
    if triton_ok:
        row["triton_tiles"] = {tile: dict(us=us[f"triton {tile}"], correct=ok) for tile, ok in triton_ok.items()}
        best, best_us = _best_of(row["triton_tiles"])
        if best:
            row.update(triton_us=best_us, triton_tile=best)
    if not row["large"]:
        host = _host_us({"ours": contenders["ours"], "eager": lambda: x.permute(dims).contiguous()})
        row["ours_host_us"], row["eager_host_us"] = host["ours"], host["eager"]
    return row


def bench_cast(shape, dtype: str, fp8: str, compiled: Compiled) -> dict:
    import torch

    from linear_layouts import ops

    x = (torch.randn(shape, device="cuda") * 100).to(getattr(torch, dtype))
    f8, top = getattr(torch, fp8), _FP8_MAX[fp8]
    scale = torch.tensor([top / 200.0], device="cuda")
    n = shape[-1]
    m = x.numel() // n
    c = torch.empty(shape, dtype=f8, device="cuda")
    ct = torch.empty(n, m, dtype=f8, device="cuda")
    amax = torch.zeros(1, device="cuda")

    def reference(t, s):  # everything else it reads is fixed by the compile key (dtype, fp8)
        a = t.abs().max().float()
        q = (t.float() * s).clamp(-top, top).to(f8)
        return q, q.reshape(-1, t.shape[-1]).t().contiguous(), a

    def ours():
        ops.cast_transpose(x, f8, scale, out=c, out_t=ct, amax=amax)

    q, qt, a = reference(x, scale)
    nbytes = x.numel() * (x.element_size() + 2)
    row = dict(shape=list(shape), dtype=dtype, fp8=fp8, bytes_moved=nbytes, large=nbytes >= LARGE_BYTES)
    contenders: dict = {}
    fn, mode = compiled.get(("cast", len(shape), dtype, fp8), reference)
    row["compile_mode"] = mode
    if fn is not None:  # first: compiling changes the process's state (``_time_together``)
        start = time.time()
        try:
            got = fn(x, scale)
            compiled.spent += time.time() - start
            row["compile_correct"] = _same(got[0], q) and _same(got[1], qt)
            contenders["compile"] = lambda: fn(x, scale)
        except Exception as error:  # noqa: BLE001
            compiled.spent += time.time() - start
            row["compile_error"] = f"{type(error).__name__}: {str(error)[:200]}"
    ours()
    row["correct"] = _same(c, q) and _same(ct, qt) and float(amax[0]) == float(a)
    contenders["ours"] = ours
    from linear_layouts.ops.launches import cast_launches

    formats = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}
    _variants(contenders, cast_launches(
        formats[dtype], fp8.replace("float8_", "")[:4], m, n, x.data_ptr(), c.data_ptr(), ct.data_ptr(),
        scale.data_ptr(), 1.0, amax.data_ptr(), _grid(x)), x, False)
    contenders["eager"] = lambda: reference(x, scale)
    flat = x.view(torch.uint8).reshape(-1)[: nbytes // 2]
    copy = torch.empty_like(flat)
    contenders["copy"] = lambda: copy.copy_(flat)  # reads and writes nbytes in all
    us = _time_together(contenders)
    row["ours_us"], row["eager_us"], row["same_bytes_copy_us"] = us["ours"], us["eager"], us["copy"]
    row.update(_variant_times(us))
    if "compile" in us:
        row["compile_us"] = us["compile"]
    return row


_FIRST_CALL = r"""
import json, time, torch
from linear_layouts import ops
from linear_layouts.ops import launch
x = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
torch.cuda.synchronize()
out = {}
for label, call in (("transpose bf16 4096x4096", lambda: ops.transpose(x)),
                    ("cast_transpose bf16 -> e4m3 4096x4096", lambda: ops.cast_transpose(x, torch.float8_e4m3fn, 1.0))):
    for attempt in ("first call", "second call"):
        start = time.perf_counter(); call(); torch.cuda.synchronize()
        out[f"{label}, {attempt}"] = round(time.perf_counter() - start, 4)
out["compile_log"] = launch.compile_log
print("FIRST_CALL " + json.dumps(out))
"""


def first_call() -> dict:
    """Seconds of the first and second call in a fresh process: with an empty kernel cache (planning,
    emission, nvcc, module load), then again with the cubins on disk."""
    results = {}
    with tempfile.TemporaryDirectory(prefix="ll_first_call_") as cache:
        os.chmod(cache, 0o700)
        for label in ("empty kernel cache", "cubins on disk"):
            env = dict(os.environ, LINEAR_LAYOUTS_CACHE=str(Path(cache) / "kernels"))
            proc = subprocess.run([sys.executable, "-c", _FIRST_CALL], capture_output=True, text=True, env=env,
                                  timeout=300)
            line = [x for x in proc.stdout.splitlines() if x.startswith("FIRST_CALL ")]
            results[label] = json.loads(line[0][11:]) if line else dict(error=(proc.stdout + proc.stderr)[-800:])
    return results


def _geomean(values) -> float | None:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def _copy_tb_per_s(results: dict) -> float:
    """The device's copy bandwidth: the faster of the 1 GiB copies at the run's start and end."""
    return max(results["copy"]["tb_per_s"], results.get("copy_end", {}).get("tb_per_s", 0.0))


def summary(results: dict) -> dict:
    """The issue's targets from the rows."""
    copy = _copy_tb_per_s(results)
    rows = [r for r in results["permute"] if "ours_us" in r]
    s: dict = dict(cases=len(rows), correct=sum(r["correct"] for r in rows),
                   compile_correct=sum(r.get("compile_correct", True) for r in rows))
    for r in rows:
        r["ours_tb_per_s"] = 2 * r["bytes"] / (r["ours_us"] * 1e-6) / 1e12
        r["ours_of_copy"] = r["ours_tb_per_s"] / copy
        r["ours_of_same_size_copy"] = r["same_size_copy_us"] / r["ours_us"]
        r["vs_eager"] = r["eager_us"] / r["ours_us"]
        if r.get("compile_us"):
            r["vs_compile"] = r["compile_us"] / r["ours_us"]
        if r.get("triton_us"):
            r["vs_triton"] = r["triton_us"] / r["ours_us"]
    # identities in memory return the view (no bytes moved): against eager only, not in the bandwidth figures
    s["views"] = [f"{r['kind']} {r['shape']} {r['dims']} {r['dtype']}: {r['vs_eager']:.2f}x eager, a copy "
                  f"{r['ours_copy_us']:.1f} µs" for r in rows if r.get("view") and "ours_copy_us" in r]
    large = [r for r in rows if r["large"] and not r.get("view")]
    s["large"] = len(large)
    s["large_min_of_copy"] = min((r["ours_of_copy"] for r in large), default=None)
    s["large_below_90"] = [f"{r['kind']} {r['shape']} {r['dtype']}: {r['ours_of_copy']:.1%} (of a same-size copy "
                           f"{r['ours_of_same_size_copy']:.1%})" for r in large if r["ours_of_copy"] < 0.90]
    for key, label in (("ours_plain_us", "plain"), ("ours_chained_us", "chained"),
                       ("ours_after_foreign_us", "after_foreign"),
                       ("ours_chained_after_foreign_us", "chained_after_foreign")):
        timed = [(2 * r["bytes"] / (r[key] * 1e-6) / 1e12 / copy, r) for r in large if r.get(key)]
        s[f"large_min_of_copy_{label}"] = min((f for f, _ in timed), default=None)
        s[f"large_below_90_{label}"] = [f"{r['kind']} {r['shape']} {r['dtype']}: {f:.1%}" for f, r in timed if f < 0.90]
    two_d = [r for r in large if len(r["shape"]) == 2]
    s["large_2d_min_vs_eager"] = min((r["vs_eager"] for r in two_d), default=None)
    # the most a transpose at the copy bandwidth could gain over eager: eager's time over the copy's for its bytes
    s["large_2d_below_3x_eager"] = [f"{r['shape']} {r['dtype']}: {r['vs_eager']:.2f}x (at 100% of copy: "
                                    f"{r['eager_us'] * 1e-6 * copy * 1e12 / (2 * r['bytes']):.2f}x)"
                                    for r in two_d if r["vs_eager"] < 3.0]
    tiled = [r for r in large if r.get("ours_best_tile_us")]
    s["planner_vs_our_best_tile"] = dict(
        cases=len(tiled), geomean=_geomean([r["ours_best_tile_us"] / r["ours_us"] for r in tiled]),
        missed=[f"{r['kind']} {r['shape']} {r['dtype']}: {r['tile']} {r['ours_us']:.1f} µs, {r['ours_best_tile']} "
                f"{r['ours_best_tile_us']:.1f} µs" for r in tiled if r["ours_best_tile_us"] < 0.97 * r["ours_us"]],
        wrong=[f"{r['kind']} {r['shape']} {r['dtype']}: {t}" for r in tiled for t, v in r["ours_tiles"].items()
               if not v["correct"]])
    classes: dict = {}
    for r in large:
        c = classes.setdefault(r["kind"], dict(vs_compile=[], vs_triton=[], of_copy=[]))
        c["of_copy"].append(r["ours_of_copy"])
        if "vs_compile" in r and r.get("compile_correct"):
            c["vs_compile"].append(r["vs_compile"])
        if "vs_triton" in r:
            c["vs_triton"].append(r["vs_triton"])
    s["classes"] = {k: dict(cases=len(v["of_copy"]), geomean_vs_compile=_geomean(v["vs_compile"]),
                            min_vs_compile=min(v["vs_compile"], default=None),
                            geomean_vs_triton=_geomean(v["vs_triton"]), min_vs_triton=min(v["vs_triton"], default=None),
                            min_of_copy=min(v["of_copy"])) for k, v in classes.items()}
    small = [r for r in rows if not r["large"]]
    s["small_gpu_slower_than_eager"] = [f"{r['kind']} {r['shape']} {r['dtype']}: {r['vs_eager']:.2f}x" for r in small
                                        if r["vs_eager"] < 1.0]
    s["small_host_slower_than_eager"] = [f"{r['kind']} {r['shape']} {r['dtype']}: {r['ours_host_us']:.1f} vs "
                                         f"{r['eager_host_us']:.1f} µs" for r in small
                                         if r.get("ours_host_us") and r["ours_host_us"] > r["eager_host_us"]]
    casts = [r for r in results.get("cast", []) if "ours_us" in r]
    for r in casts:
        r["ours_tb_per_s"] = r["bytes_moved"] / (r["ours_us"] * 1e-6) / 1e12
        r["ours_of_copy"] = r["ours_tb_per_s"] / copy
        r["ours_of_same_bytes_copy"] = r["same_bytes_copy_us"] / r["ours_us"]
        r["vs_eager"] = r["eager_us"] / r["ours_us"]
        if r.get("compile_us"):
            r["vs_compile"] = r["compile_us"] / r["ours_us"]
    s["cast_correct"] = f"{sum(r['correct'] for r in casts)}/{len(casts)}"
    s["cast_large_min_of_copy"] = min((r["ours_of_copy"] for r in casts if r["large"]), default=None)
    for key in ("plain", "chained"):
        s[f"cast_large_min_of_copy_{key}"] = min((r["bytes_moved"] / (r[f"ours_{key}_us"] * 1e-6) / 1e12 / copy
                                                  for r in casts if r["large"] and r.get(f"ours_{key}_us")),
                                                 default=None)
    return s


def _f(value, fmt: str = "{:.2f}") -> str:
    return "-" if value is None else fmt.format(value)


def report(results: dict) -> str:
    env, s, copy = results["environment"], results["summary"], results["copy"]
    lines = [f"# Layout ops vs PyTorch, torch.compile and Triton ({env.get('gpu', '?')}, {env['date']})", "",
             f"torch {env.get('torch')}, Triton {env.get('triton')}, CuPy {env.get('cupy')}, {env.get('nvcc')}. "
             f"Copy bandwidth (1 GiB, the faster of the run's start and end): {_copy_tb_per_s(results):.3f} TB/s "
             f"(start {copy['tb_per_s']:.3f}, end {results.get('copy_end', {}).get('tb_per_s', float('nan')):.3f}). "
             f"GPU times: median of {REPEATS} replays of a CUDA graph of {LAUNCHES} launches; a case's contenders "
             "(ours, ours with every launch plain and with every launch dependent, ours at each tile, Triton's tiles, "
             "eager, torch.compile, a same-size copy; for large cases also ours after one PyTorch kernel) are timed "
             "together after its compile, in order and in reverse order, the faster median kept. `ours`: as the ops "
             "launch (dependent only after a kernel of the same call); `chained`: every launch dependent, so in a graph "
             "of back-to-back launches each one's start overlaps the previous one's end. "
             f"Stage times (s): {results.get('stage_seconds')}.", "",
             "## Targets", "",
             f"- correct: {s['correct']}/{s['cases']} permutations bit for bit (torch.compile: {s['compile_correct']}), "
             f"casts {s['cast_correct']}",
             f"- large cases (>= 16 MiB, {s['large']}): lowest fraction of the copy bandwidth "
             f"{_f(s['large_min_of_copy'], '{:.1%}')} (target >= 90%); below 90%: {s['large_below_90'] or 'none'}",
             f"- the same with every launch plain (`plain`): lowest {_f(s.get('large_min_of_copy_plain'), '{:.1%}')}; "
             f"below 90%: {s.get('large_below_90_plain') or 'none'}; with every launch dependent (`chained`, "
             f"`DEPENDENT_LAUNCH = \"all\"`, back to back): lowest {_f(s.get('large_min_of_copy_chained'), '{:.1%}')}; "
             f"below 90%: {s.get('large_below_90_chained') or 'none'}",
             f"- each after one PyTorch kernel (which lets no grid launch early; the difference of the two graphs): "
             f"ours lowest {_f(s.get('large_min_of_copy_after_foreign'), '{:.1%}')}, below 90%: "
             f"{s.get('large_below_90_after_foreign') or 'none'}; chained lowest "
             f"{_f(s.get('large_min_of_copy_chained_after_foreign'), '{:.1%}')}, below 90%: "
             f"{s.get('large_below_90_chained_after_foreign') or 'none'}",
             f"- large 2-D transposes: lowest ours / PyTorch eager {_f(s['large_2d_min_vs_eager'])}x (target >= 3x); "
             f"below 3x: {s.get('large_2d_below_3x_eager') or 'none'}",
             f"- the planner's tile against our best tile of its list (large batched transposes, "
             f"{s.get('planner_vs_our_best_tile', {}).get('cases')}): geomean of best / planner "
             f"{_f(s.get('planner_vs_our_best_tile', {}).get('geomean'), '{:.3f}')}; more than 3% slower than the best: "
             f"{s.get('planner_vs_our_best_tile', {}).get('missed') or 'none'}; wrong: "
             f"{s.get('planner_vs_our_best_tile', {}).get('wrong') or 'none'}",
             f"- small cases slower than eager on the GPU: {s['small_gpu_slower_than_eager'] or 'none'}; on the host: "
             f"{s['small_host_slower_than_eager'] or 'none'}",
             f"- identities in memory (ours returns the view, as eager; left out of the bandwidth figures): "
             f"{s.get('views') or 'none'}",
             f"- cast-transpose, large: lowest fraction of the copy bandwidth of its bytes (read once, two writes) "
             f"{_f(s['cast_large_min_of_copy'], '{:.1%}')} (target >= 85%; plain "
             f"{_f(s.get('cast_large_min_of_copy_plain'), '{:.1%}')}, chained "
             f"{_f(s.get('cast_large_min_of_copy_chained'), '{:.1%}')})", "",
             "| class (large cases) | cases | ours / torch.compile geomean (min) | ours / Triton best tile geomean (min) "
             "| lowest of copy |", "|---|---|---|---|---|"]
    for k, c in s["classes"].items():
        lines.append(f"| {k} | {c['cases']} | {_f(c['geomean_vs_compile'])} ({_f(c['min_vs_compile'])}) | "
                     f"{_f(c['geomean_vs_triton'], '{:.3f}')} ({_f(c['min_vs_triton'], '{:.3f}')}) | "
                     f"{c['min_of_copy']:.1%} |")
    fc = results.get("first_call", {})
    lines += ["", "## First call (fresh process)", ""]
    for label, value in fc.items():
        shown = {k: v for k, v in value.items() if k != "compile_log"} if isinstance(value, dict) else value
        lines.append(f"- {label}: {shown}")
    lines += ["", "## Permutations", "",
              "| class | shape | dims | dtype | plan | µs ours | µs plain | µs chained | µs after a PyTorch kernel "
              "(chained) | TB/s | of copy "
              "| of same-size copy | eager µs | ours / eager | compile µs | ours / compile | Triton best µs (tile) "
              "| ours / Triton | host µs ours / eager | correct |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results["permute"]:
        if "ours_us" not in r:
            lines.append(f"| {r['kind']} | {r['shape']} | {r['dims']} | {r['dtype']} | - | {r.get('error', 'skipped')} |")
            continue
        p = r["plan"]
        plan = f"{p['kind']} {p['rows']}x{p['cols']}" + (f" x{p['batch']}" if p["batch"] else "") + \
            (f" ({8 * p['element_bytes']}-bit)" if p["element_bytes"] != ops_cases.ITEMSIZE[r["dtype"]] else "")
        compile_cell = (f"{r['compile_us']:.1f} ({r['compile_mode']})" if r.get("compile_us")
                        else r.get("compile_error", r.get("compile_mode", "-"))[:40])
        triton = f"{r['triton_us']:.1f} ({r['triton_tile']})" if r.get("triton_us") else "-"
        host = f"{r['ours_host_us']:.1f} / {r['eager_host_us']:.1f}" if r.get("ours_host_us") else "-"
        plan += f", {r['tile']}" if r.get("tile") else ""
        if r.get("ours_tiles"):  # the other tiles of its list: our best, where the planner's is not it
            wrong = [t for t, v in r["ours_tiles"].items() if not v["correct"]]
            if r.get("ours_best_tile") and r["ours_best_tile"] != r.get("tile"):
                plan += f" (our best: {r['ours_best_tile']} {r['ours_best_tile_us']:.1f} µs)"
            plan += f" WRONG at {wrong}" if wrong else ""
        after = (f"{r['ours_after_foreign_us']:.1f} ({r['ours_chained_after_foreign_us']:.1f})"
                 if r.get("ours_after_foreign_us") else "-")
        lines.append(f"| {r['kind']} | {r['shape']} | {r['dims']} | {r['dtype']} | {plan} | {r['ours_us']:.1f} | "
                     f"{_f(r.get('ours_plain_us'), '{:.1f}')} | {_f(r.get('ours_chained_us'), '{:.1f}')} | {after} | {r['ours_tb_per_s']:.2f} | {r['ours_of_copy']:.1%} | {r['ours_of_same_size_copy']:.1%} | "
                     f"{r['eager_us']:.1f} | {r['vs_eager']:.2f}x | {compile_cell} | {_f(r.get('vs_compile'), '{:.2f}x')} | "
                     f"{triton} | {_f(r.get('vs_triton'), '{:.2f}x')} | {host} | "
                     f"{r['correct']}{'' if r.get('compile_correct', True) else ' (compile WRONG)'} |")
    lines += ["", "## fp8 cast-transpose (amax, cast, transposed cast)", "",
              "| shape | input | fp8 | µs ours | µs plain | µs chained | TB/s (bytes moved) | of copy | of same-bytes copy "
              "| eager µs | ours / eager | compile µs | ours / compile | correct |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results.get("cast", []):
        if "ours_us" not in r:
            lines.append(f"| {r['shape']} | {r['dtype']} | {r['fp8']} | {r.get('error', 'skipped')} |")
            continue
        lines.append(f"| {r['shape']} | {r['dtype']} | {r['fp8']} | {r['ours_us']:.1f} | "
                     f"{_f(r.get('ours_plain_us'), '{:.1f}')} | {_f(r.get('ours_chained_us'), '{:.1f}')} | "
                     f"{r['ours_tb_per_s']:.2f} | "
                     f"{r['ours_of_copy']:.1%} | {r['ours_of_same_bytes_copy']:.1%} | {r['eager_us']:.1f} | "
                     f"{r['vs_eager']:.2f}x | {_f(r.get('compile_us'), '{:.1f}')} | {_f(r.get('vs_compile'), '{:.2f}x')} | "
                     f"{r['correct']} |")
    return "\n".join(lines) + "\n"


def sweep(cases, results: dict, triton, compiled: Compiled, deadline: float) -> None:
    """``bench_case`` of each case into ``results["permute"]`` (a row saying why where a case was skipped or
    failed)."""
    for kind, shape, dims, dtype in cases:
        if time.time() > deadline:
            results["permute"].append(dict(kind=kind, shape=list(shape), dims=list(dims), dtype=dtype,
                                           error="skipped: out of time"))
            continue
        try:
            row = bench_case(kind, shape, dims, dtype, triton, compiled)
        except Exception as error:  # noqa: BLE001 - one case's failure is a row, not the end of the run
            row = dict(kind=kind, shape=list(shape), dims=list(dims), dtype=dtype, correct=False,
                       error=f"{type(error).__name__}: {str(error)[:300]}")
        results["permute"].append(row)
        print(f"  {kind} {shape} {dtype}: ours {row.get('ours_us', 0):.1f} eager {row.get('eager_us', 0):.1f} "
              f"compile {row.get('compile_us') or 0:.1f} triton {row.get('triton_us') or 0:.1f} "
              f"correct {row.get('correct')}", flush=True)


def measure(args) -> None:
    import gpu_suite

    deadline = time.time() + args.budget
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stages: dict = {}
    results: dict = dict(environment=gpu_suite.environment(), permute=[], cast=[])
    start = time.time()
    results["copy"] = gpu_suite.copy_bandwidth()
    results["first_call"] = first_call()
    stages["copy + first call"] = round(time.time() - start, 1)
    print("copy", results["copy"], "first call", results["first_call"], flush=True)
    try:
        from triton_transpose import TritonTransposes

        triton = TritonTransposes()
    except Exception as error:  # noqa: BLE001 - no Triton peer: said in every row
        print(f"Triton peer unavailable: {error}", flush=True)
        triton = None
    compiled = Compiled(args.compile_budget)
    # the small cases and the casts first (quick), then the large classes until the budget is spent
    order = sorted(ops_cases.SWEEP, key=lambda case: case[0] != "small")
    small = [case for case in order if case[0] == "small"]
    start = time.time()
    sweep(small, results, triton, compiled, deadline)
    stages["small"] = round(time.time() - start, 1)
    start = time.time()
    for shape, dtype, fp8 in ops_cases.CASTS:
        if time.time() > deadline:
            results["cast"].append(dict(shape=list(shape), dtype=dtype, fp8=fp8, error="skipped: out of time"))
            continue
        try:
            row = bench_cast(shape, dtype, fp8, compiled)
        except Exception as error:  # noqa: BLE001
            row = dict(shape=list(shape), dtype=dtype, fp8=fp8, correct=False,
                       error=f"{type(error).__name__}: {str(error)[:300]}")
        results["cast"].append(row)
        print(f"  cast {shape} {dtype}->{fp8}: ours {row.get('ours_us', 0):.1f} eager {row.get('eager_us', 0):.1f} "
              f"compile {row.get('compile_us') or 0:.1f} correct {row.get('correct')}", flush=True)
    stages["cast"] = round(time.time() - start, 1)
    start = time.time()
    sweep(order[len(small):], results, triton, compiled, deadline)
    stages["permute"] = round(time.time() - start, 1)
    results["copy_end"] = gpu_suite.copy_bandwidth()  # the state moves (``_time_together``): the faster counts
    stages["torch.compile compiling"] = round(compiled.spent, 1)
    results["stage_seconds"] = stages
    results["summary"] = summary(results)
    (out / "ops_bench.json").write_text(json.dumps(results, indent=1, default=str))
    text = report(results)
    (out / "ops_bench.md").write_text(text)
    print(text, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", default="measure", choices=["prepare", "measure", "report"])
    ap.add_argument("--out", default=str(HERE / "build" / "ops_bench"))
    ap.add_argument("--budget", type=float, default=150.0, help="seconds for the sweep (cases beyond are skipped)")
    ap.add_argument("--compile-budget", type=float, default=60.0, help="seconds of torch.compile compiling")
    ap.add_argument("--jobs", type=int, default=0, help="prepare: compiler processes (default: one per CPU)")
    args = ap.parse_args()
    if args.mode == "prepare":
        prepare(args.jobs)
    elif args.mode == "report":  # the Markdown again from OUT/ops_bench.json
        results = json.loads((Path(args.out) / "ops_bench.json").read_text())
        results["summary"] = summary(results)
        (Path(args.out) / "ops_bench.md").write_text(report(results))
    else:
        measure(args)


if __name__ == "__main__":
    main()
