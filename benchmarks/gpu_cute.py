"""GPU check of CuTe swizzles: our generated conversions through CuTe-swizzled shared layouts, with
ncu's shared-memory wavefronts against the prediction.

One command, one device call, bounded (about a minute on an H100 once the cubins are built):

    PYTHONPATH=src python3 benchmarks/gpu_cute.py --mode prepare      # CPU: build + nvcc the kernels
    PYTHONPATH=src python3 benchmarks/gpu_cute.py --mode measure --budget 100 --out $OUT   # GPU

Each case is a conversion ``src -> dst`` through a shared layout that is a CuTe layout
(``linear_layouts.cute.to_linear``): CUTLASS's canonical swizzle atoms (``Sw<3,3,3> o (64,64):(64,1)``
for fp16, ...), deliberately weaker swizzles and the plain layout (so that the counts differ), and
``best_cute_swizzle``'s choice for the GPU suite's named pairs and some of its random catalog pairs.
The kernels are ``codegen``'s: ``SharedConversion`` with ``banks.shared_access``'s vectors on each
side (``codegen.plan.shared_step``). For each kernel:

* correctness on the device (every element, with a round trip);
* ncu ``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{st,ld}.sum`` for one CTA and one conversion,
  against the prediction ``analysis.banks.wavefronts(S, src, op="store", skip_duplicates=True)`` and
  ``wavefronts(S, dst)`` (the bank model), which the CPU checks against codegen's model of its own
  emitted instructions and the brute-force simulator (tests/cute/test_gpu_cute.py).

Writes ``gpu_cute.json`` and ``gpu_cute.md`` under ``--out``. Prepare compiles the kernels with nvcc into
benchmarks/build/cute/cubins (the kernel cache, ``$LINEAR_LAYOUTS_CACHE``) and writes the case list to
benchmarks/build/cute/variants.json; carried to the device, measure copies the cubins into a private
cache folder and compiles nothing (nvcc runs there only for a kernel that is missing).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
import harness  # noqa: E402, F401  (puts src/ on the path)
BUILD = HERE / "build" / "cute"
os.environ.setdefault("LINEAR_LAYOUTS_CACHE", str(BUILD / "cubins"))

from linear_layouts import LinearLayout  # noqa: E402
from linear_layouts.analysis.banks import wavefronts  # noqa: E402
from linear_layouts.codegen.kernel import KernelSource, emit_conversion_kernel  # noqa: E402
from linear_layouts.codegen.model import emitted_wavefronts  # noqa: E402
from linear_layouts.codegen.plan import kernel_name, shared_step  # noqa: E402
from linear_layouts.codegen.ptx import compile_cubin  # noqa: E402

from harness.ncu import METRIC_LD, METRIC_ST, launches_by_kernel as parse_ncu_launches  # noqa: E402
CACHE = BUILD / "variants.json"
PREFIX = "llcute"


@dataclass
class CuteKernel:
    name: str  #: the case
    description: str
    cute: str  #: the CuTe layout (print form) of the shared memory
    src: LinearLayout
    dst: LinearLayout
    bits: int
    kernel: KernelSource
    predicted: tuple[int, int]  #: banks.wavefronts (store with skip_duplicates, load)
    modelled: tuple[int, int]  #: codegen's model of its emitted instructions
    instructions: dict = field(default_factory=dict)


def _pairs() -> list[tuple[str, str, LinearLayout, LinearLayout, int, list[str]]]:
    """(name, description, src, dst, bits, CuTe layouts: text, or "best" for best_cute_swizzle)."""
    from harness.cases import _strip, named_cases, random_cases

    from linear_layouts.layouts import BlockedLayout, DotOperandLayout, NVMMADistributedLayout

    out = []
    dot_a = _strip(DotOperandLayout(0, NVMMADistributedLayout([2, 0], [4, 1], [16, 8]), 2).to_linear([64, 64]))
    rows128 = _strip(BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0]).to_linear([64, 64]))
    out.append(("atoms_fp16_rows_to_dotA", "fp16 64x64: 8 lanes x 16 bytes per 128-byte row -> mma.sync A operand "
                "(4 warps); CUTLASS's Swizzle<3,4,3> on bytes is Sw<3,3,3> on halves", rows128, dot_a, 16,
                ["Sw<3,3,3> o (64,64):(64,1)", "Sw<2,3,3> o (64,64):(64,1)", "Sw<1,3,3> o (64,64):(64,1)",
                 "(64,64):(64,1)", "Sw<3,2,3> o (64,64):(64,1)", "Sw<3,4,3> o (64,64):(64,1)",
                 "Sw<3,3,4> o (64,64):(64,1)", "best"]))
    row16 = _strip(BlockedLayout([1, 8], [8, 4], [4, 1], [1, 0]).to_linear([64, 64]))
    out.append(("atoms_fp16_row_to_dotA", "fp16 64x64: 4 lanes x 16 bytes per row -> mma.sync A operand (4 warps)",
                row16, dot_a, 16, ["Sw<3,3,3> o (64,64):(64,1)", "Sw<2,3,3> o (64,64):(64,1)",
                                   "Sw<1,3,3> o (64,64):(64,1)", "(64,64):(64,1)", "best"]))
    row32 = _strip(BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0]).to_linear([32, 64]))
    col32 = _strip(BlockedLayout([4, 1], [4, 8], [1, 4], [0, 1]).to_linear([32, 64]))
    out.append(("atoms_fp32_transpose", "fp32 32x64: 16-byte row vectors -> 16-byte column vectors (4 warps)",
                row32, col32, 32, ["Sw<3,2,3> o (32,64):(64,1)", "(32,64):(64,1)", "best"]))
    for case in named_cases():
        out.append((case.name, case.description, case.src, case.dst, case.bits, ["best"]))
    for case in random_cases(12):
        out.append((case.name, case.description, case.src, case.dst, case.bits, ["best"]))
    return out


def _kernel_for(name: str, description: str, src: LinearLayout, dst: LinearLayout, bits: int,
                cute_text: str) -> CuteKernel | None:
    from linear_layouts.cute import best_cute_swizzle, parse_cute, to_linear

    if cute_text == "best":
        best = best_cute_swizzle(src, dst, bits)
        layout, shared = best.layout, best.shared
    else:
        layout = parse_cute(cute_text)
        shared = to_linear(layout)
    forward = shared_step(src, dst, shared, bits)
    backward = shared_step(dst, src, shared, bits)
    predicted = (wavefronts(shared, src, bits, op="store", skip_duplicates=True), wavefronts(shared, dst, bits))
    kname = kernel_name(PREFIX, name, str(layout))
    kernel = emit_conversion_kernel(kname, src, dst, bits // 8, forward, backward)
    return CuteKernel(name, description, str(layout), src, dst, bits, kernel, predicted,
                      emitted_wavefronts(forward), forward.instruction_counts())


def build(limit: int | None = None) -> list[CuteKernel]:
    """Every kernel (the first ``limit`` pairs only, when given), shared memory through CuTe layouts."""
    kernels, seen = [], set()
    for name, description, src, dst, bits, layouts in _pairs()[:limit]:
        for text in layouts:
            k = _kernel_for(name, description, src, dst, bits, text)
            if k is not None and (k.name, k.cute) not in seen:
                seen.add((k.name, k.cute))
                kernels.append(k)
    return kernels


def _layout_dict(layout: LinearLayout) -> dict:
    return {"bases": layout.bases, "out_dims": dict(layout.out_dims)}


def save(kernels: list[CuteKernel], path: Path = CACHE) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [dict(name=k.name, description=k.description, cute=k.cute, src=_layout_dict(k.src), dst=_layout_dict(k.dst),
                 bits=k.bits, kernel=k.kernel.__dict__, predicted=k.predicted, modelled=k.modelled,
                 instructions=k.instructions) for k in kernels]
    path.write_text(json.dumps(rows))


def load(path: Path = CACHE) -> list[CuteKernel]:
    def layout(d: dict) -> LinearLayout:
        return LinearLayout(d["bases"], d["out_dims"], require_surjective=False)

    return [CuteKernel(r["name"], r["description"], r["cute"], layout(r["src"]), layout(r["dst"]), r["bits"],
                       KernelSource(**r["kernel"]), tuple(r["predicted"]), tuple(r["modelled"]), r["instructions"])
            for r in json.loads(path.read_text())]


def compile_all(kernels: list[CuteKernel]) -> float:
    start = time.time()
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        list(pool.map(lambda k: compile_cubin(k.kernel.source), kernels))
    return time.time() - start


# ---------------------------------------------------------------------------------------------- GPU
#: each kernel is launched this many times under ncu; its count is the minimum (the spread is kept)
REPEATS = 3


def launch_all(kernels: list[CuteKernel], until: float = 0.0, repeats: int = 1) -> None:
    """One CTA, one conversion per launch (what ncu measures), ``repeats`` launches of each kernel in a
    row, until the time ``until`` (0: all)."""
    from linear_layouts.codegen.runtime import check_kernel

    for k in kernels:
        for repeat in range(repeats):
            if until and time.time() > until:
                return
            check_kernel(k.kernel, tiles=1, iterations=0, seed=repeat)


def verify(kernels: list[CuteKernel], until: float = 0.0) -> list[dict]:
    from linear_layouts.codegen.runtime import check_kernel

    rows = []
    for k in kernels:
        if until and time.time() > until:
            rows.append(dict(case=k.name, cute=k.cute, wrong=-1, error="not run: budget"))
            continue
        try:
            wrong = check_kernel(k.kernel, tiles=3, iterations=1, seed=1) + check_kernel(k.kernel, tiles=2, seed=2)
            rows.append(dict(case=k.name, cute=k.cute, wrong=wrong))
        except Exception as exc:  # noqa: BLE001 - report, do not stop the batch
            rows.append(dict(case=k.name, cute=k.cute, wrong=-1, error=repr(exc)[:300]))
    return rows


def run_ncu(kernels: list[CuteKernel], timeout: float, until: float = 0.0, repeats: int = REPEATS) -> dict:
    """One ncu process launching every kernel ``repeats`` times: per kernel the minimum store and load
    count over its launches (``measured``) and every launch's (``measured_all``)."""
    cmd = ["ncu", "--csv", "--metrics", f"{METRIC_LD},{METRIC_ST}", "-k", f"regex:^{PREFIX}_",
           sys.executable, __file__, "--mode", "launch", "--until", str(until), "--repeats", str(repeats)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        rc, out = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out = 124, str(exc)
    except OSError as exc:
        rc, out = 127, str(exc)
    measured = parse_ncu_launches(out)
    rows = []
    for k in kernels:
        every = [[m[METRIC_ST], m[METRIC_LD]] for m in measured.get(k.kernel.name, [])
                 if METRIC_ST in m and METRIC_LD in m]
        st, ld = (min(c[0] for c in every), min(c[1] for c in every)) if every else (None, None)
        rows.append(dict(case=k.name, cute=k.cute, bits=k.bits, measured=[st, ld], measured_all=every,
                         predicted=list(k.predicted), modelled=list(k.modelled), instructions=k.instructions,
                         equal=st is not None and ld is not None and [int(st), int(ld)] == list(k.predicted)))
    return dict(rc=rc, rows=rows, tail=out[-3000:] if rc or not measured else "")


def report(results: dict) -> str:
    env = results["environment"]
    ncu_rows = results.get("ncu", {}).get("rows", [])
    ver = results.get("verify", [])
    equal = sum(r["equal"] for r in ncu_rows)
    lines = ["# CuTe-swizzled shared memory on the device: ncu wavefronts against the prediction", "",
             f"Device: {env.get('gpu')}; {env.get('date')}; CUDA {env.get('nvcc')}; ncu {env.get('ncu')}; "
             f"CuPy {env.get('cupy')}, Python {env.get('python')}.", "",
             "Reproduce: `bash benchmarks/gpu_workflow_prepare.sh` (CPU: nvcc), then "
             "`bash benchmarks/gpu_workflow_run.sh OUT 180` (GPU). ncu: `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum`"
             " + `_op_ld.sum` of one CTA; each kernel is launched " + str(results.get("repeats", 1)) + " times under "
             "ncu and the minimum per metric is compared (every launch listed where they differ).", "",
             f"**Summary: ncu store + load wavefronts = prediction on {equal} / {len(ncu_rows)} conversions through "
             f"CuTe-swizzled shared layouts (target >= 10); correct on "
             f"{sum(r['wrong'] == 0 for r in ver)} / {len(ver)}.**", "",
             f"* kernels: {len(results.get('kernels', []))}; correct on every element: "
             f"**{sum(r['wrong'] == 0 for r in ver)} / {len(ver)}**",
             f"* ncu store + load wavefronts = prediction (`analysis.banks.wavefronts`): **{equal} / {len(ncu_rows)}**",
             f"* seconds: {results.get('seconds')}", "",
             "| case | CuTe shared layout | bits | instructions | ncu st + ld | predicted st + ld | model st + ld |",
             "|---|---|---|---|---|---|---|"]
    for r in ncu_rows:
        inst = ", ".join(f"{k} {v}" for k, v in sorted(r["instructions"].items()))
        meas = "+".join("?" if x is None else str(int(x)) for x in r["measured"])
        every = r.get("measured_all") or []
        if len({tuple(c) for c in every}) > 1:
            meas += " (launches: " + ", ".join("+".join(str(int(x)) for x in c) for c in every) + ")"
        mark = "" if r["equal"] else " **≠**"
        lines.append(f"| {r['case']} | `{r['cute']}` | {r['bits']} | {inst} | {meas}{mark} | "
                     f"{'+'.join(map(str, r['predicted']))} | {'+'.join(map(str, r['modelled']))} |")
    bad = [r for r in ver if r["wrong"] != 0]
    for r in bad:
        lines.append(f"- WRONG: {r['case']} `{r['cute']}`: {r['wrong']} {r.get('error', '')}")
    if results.get("ncu", {}).get("tail"):
        lines += ["", "ncu output (tail):", "", "```", results["ncu"]["tail"], "```"]
    return "\n".join(lines) + "\n"


def _private_cache() -> str:
    """The prepared cubins (carried to the device) copied into a fresh 0700 folder of ours, which the
    kernel cache accepts whoever owns the carried files (``codegen.ptx.cache_dir``); its path."""
    import shutil
    import tempfile

    source = Path(os.environ["LINEAR_LAYOUTS_CACHE"])
    private = tempfile.mkdtemp(prefix="llcute_cubins_")
    if source.is_dir():
        for path in source.iterdir():
            if path.is_file() and not path.is_symlink():
                shutil.copyfile(path, Path(private) / path.name)
                os.chmod(Path(private) / path.name, 0o600)
    os.environ["LINEAR_LAYOUTS_CACHE"] = private
    return private


def measure(args) -> int:
    """Device: correctness of every kernel, then one ncu process over all of them, within ``--budget``."""
    from harness.environment import environment
    from harness.results import write_outputs
    from harness.workflow import Deadline, require_gpu

    deadline = Deadline(args.budget)
    kernels = load()
    require_gpu()
    _private_cache()
    compiled = compile_all(kernels)  # cache hits when prepared (nvcc only for what is missing)
    print(f"{len(kernels)} kernels ready in {compiled:.1f} s", flush=True)
    results: dict = dict(environment=environment(),
                         kernels=[dict(case=k.name, cute=k.cute, kernel=k.kernel.name, predicted=k.predicted,
                                       modelled=k.modelled, description=k.description) for k in kernels])
    results["verify"] = verify(kernels, deadline.end - 30)
    if deadline.left() > 10:
        results["ncu"] = run_ncu(kernels, deadline.left() - 4, until=deadline.end - 8, repeats=args.repeats)
        results["repeats"] = args.repeats
    else:
        results["ncu"] = dict(rc=None, rows=[], tail="not run: budget")
    results["seconds"] = round(args.budget - deadline.left(), 1)
    text = report(results)
    write_outputs(Path(args.out), "gpu_cute", results, text)
    print(text)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="CuTe-swizzled conversions: ncu wavefronts vs prediction")
    ap.add_argument("--mode", required=True, choices=["prepare", "measure", "launch"])
    ap.add_argument("--out", default=str(HERE / "build" / "cute_out"))
    ap.add_argument("--budget", type=float, default=100.0, help="measure: seconds for everything")
    ap.add_argument("--no-compile", action="store_true", help="prepare: build the kernel list only")
    ap.add_argument("--repeats", type=int, default=REPEATS, help="measure: launches of each kernel under ncu")
    ap.add_argument("--until", type=float, default=0.0, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    start = time.time()
    if args.mode == "launch":
        launch_all(load(), args.until, args.repeats)
        return 0
    if args.mode == "measure":
        return measure(args)
    kernels = build()
    save(kernels)
    print(f"{len(kernels)} kernels built in {time.time() - start:.1f} s", flush=True)
    if not args.no_compile:
        print(f"compiled (or found cached) with nvcc in {compile_all(kernels):.1f} s -> {BUILD}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
