"""Engine CPU time per kernel of the corpus (tests/data/triton_kernels, TTIR and TTGIR in ir/<target>/), per
target: what our layout engine costs a report or a rewrite of a real kernel.

Each kernel is measured in this one process, after a warm-up of the imports (the package, the analyses'
lazy ``codegen.cost``, one small program propagated), with every ``functools`` cache of the package
cleared before it (so no kernel reuses another's work, nor the same kernel's earlier repeat). CPU time is
``time.process_time``; the median of ``--repeat`` runs. Columns (milliseconds):

* **parse**: ``parse_module`` of the TTIR text (the IR reader's, ``kernels.ir_text``; a report has parsed
  it already, ``rewrite_kernel`` parses it once): shown apart, not in **engine**;
* **import**: ``import_ttir`` of the parsed TTIR (its well-formedness check included) at the TTGIR's
  warps and target (read from the TTGIR, which the report has parsed; not timed);
* **propagate**: ``engine.propagate_runs`` (the anchored and the legacy runs and the choice between them,
  each remaining conversion planned): what ``rewrite_kernel`` asks of the engine;
* **describe**: ``EngineResult.to_text`` of each distinct run (every value's catalog descriptor), what
  ``engine_compare.compare_with_engine`` prints and ``rewrite_kernel`` ties to the TTGIR;
* **engine** = import + propagate + describe: the figure the targets are about (p95 and max also with
  parse added);
* **rewrite_kernel**: one whole ``kernels.rewrite.rewrite_kernel(ttir, ttgir)`` (choose=True), caches
  cleared first: the engine's work plus the report's model of each candidate TTGIR (``--no-rewrite``
  leaves it out).

``--fingerprint FILE`` writes instead a digest of every result the engine gives (each run's layouts of
every value, its conversions and their plans, ``rewrite_kernel``'s text with ``choose`` True and False)
per kernel and target, and of the random programs of benchmarks/harness/random_programs.py: two such files
from before and after a change that should only make the engine faster must be equal.

``--synthetic sort=2048 chain=128 straight=1000`` also measures (and fingerprints) the synthetic kernels of
``benchmarks/rewrite_scaling.py`` at those sizes, compiled for sm_90 by the installed Triton, apart from
the corpus (not in its p50 / p95 / max).

Run: ``PYTHONPATH=src python3 benchmarks/engine_speed.py [--label after] [--targets sm_80,sm_90,gfx942]
[--kernels a,b] [--repeat 3] [--synthetic ...]`` writes ``benchmarks/results/engine_speed.{json,md}`` (the
JSON keeps the rows of other labels, e.g. ``before``, and the Markdown shows them side by side).
"""

from __future__ import annotations

import argparse
import datetime
import gc
import hashlib
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)
from harness.environment import cpu_model  # noqa: E402
from harness.timing import clear_caches  # noqa: E402

HERE = Path(__file__).resolve()
ROOT = HERE.parents[1]
CORPUS = ROOT / "tests" / "data" / "triton_kernels"
RESULTS = ROOT / "benchmarks" / "results"
TARGETS = ("sm_80", "sm_90", "gfx942")
#: targets of the issue (ms of engine CPU time per kernel)
P95_MS, MAX_MS = 100.0, 500.0
#: the stress kernels written for the engine's speed (kinds users write that unroll into long programs)
STRESS = ("topk_router", "bitonic_sort_pairs", "unrolled_chain", "many_reductions")


def synthetic(specs: list[str], folder: Path) -> list[tuple[str, str, Path]]:
    """("synthetic", stem, TTIR path) of rewrite_scaling's kernels at the sizes of ``specs``
    (``FAMILY=SIZE,SIZE``), compiled for sm_90 into ``folder``."""
    import rewrite_scaling

    rows = []
    for spec in specs:
        family, _, sizes = spec.partition("=")
        if family not in rewrite_scaling.FAMILIES:
            raise SystemExit(f"--synthetic: unknown family {family!r} (one of {', '.join(rewrite_scaling.FAMILIES)})")
        stems = rewrite_scaling.compile_sizes(family, [int(v) for v in sizes.split(",") if v], "sm_90", folder)
        rows += [("synthetic", stem.name, stem.with_suffix(".ttir")) for stem in stems]
    return rows


def corpus(targets: tuple[str, ...], kernels: set[str] | None) -> list[tuple[str, str, Path]]:
    """(target, kernel, TTIR path) of every stored compile, by target then kernel name."""
    rows = []
    for target in targets:
        for path in sorted((CORPUS / "ir" / target).glob("*.ttir")):
            if kernels is None or path.stem in kernels:
                rows.append((target, path.stem, path))
    return rows


def _engine(ttir: str, ttgir: str):
    """The engine's part of a rewrite / report of one kernel, timed by phase: ((parse, import, propagate,
    describe) seconds, ops, runs)."""
    from linear_layouts.engine import propagate_runs
    from linear_layouts.triton_model.ir_text import parse_module
    from linear_layouts.pipeline.ttir_import import import_ttir

    ttgir_module = parse_module(ttgir)
    cc, num_warps = ttgir_module.compute_capability, ttgir_module.num_warps
    c0 = time.process_time()
    ttir_module = parse_module(ttir)
    c1 = time.process_time()
    imported = import_ttir(ttir_module, cc=cc, num_warps=num_warps)
    c2 = time.process_time()
    runs = propagate_runs(imported.program)
    c3 = time.process_time()
    for result in {id(r): r for r in runs.values()}.values():
        result.to_text()
    c4 = time.process_time()
    return (c1 - c0, c2 - c1, c3 - c2, c4 - c3), len(imported.program.ops), runs


def measure(path: Path, repeat: int, with_rewrite: bool) -> dict:
    """Milliseconds of CPU time of each phase (module doc) for the kernel at ``path`` (TTIR), median of ``repeat``."""
    from linear_layouts.core.errors import LayoutError
    from linear_layouts.pipeline.rewrite import rewrite_kernel

    ttir, ttgir = path.read_text(), path.with_suffix(".ttgir").read_text()
    phases, rewrites, ops, conversions, refused = [], [], 0, 0, None
    for _ in range(repeat):
        clear_caches()
        gc.collect()
        times, ops, runs = _engine(ttir, ttgir)
        phases.append(times)
        conversions = len(runs["both"].conversions)
        if with_rewrite and refused is None:
            clear_caches()
            gc.collect()
            c = time.process_time()
            try:
                rewrite_kernel(ttir, ttgir, max_ops=max(ops, 1))
            except LayoutError as error:  # a target rewrite_kernel does not rewrite for (AMD): said, not timed
                refused = str(error)[:200]
                continue
            rewrites.append(time.process_time() - c)
    row = {"ops": ops, "conversions": conversions}
    for k, name in enumerate(("parse", "import", "propagate", "describe")):
        row[name] = round(statistics.median(t[k] for t in phases) * 1e3, 1)
    row["engine"] = round(statistics.median(sum(t[1:]) for t in phases) * 1e3, 1)
    row["engine_parse"] = round(statistics.median(sum(t) for t in phases) * 1e3, 1)
    if rewrites:
        row["rewrite_kernel"] = round(statistics.median(rewrites) * 1e3, 1)
    if refused is not None:
        row["rewrite_refused"] = refused
    return row


def warm_up() -> None:
    """Import what a kernel's engine run imports and propagate one small program (then clear the caches)."""
    import linear_layouts.codegen.cost  # noqa: F401  (the analyses import it on their first shuffle cost)
    import linear_layouts.pipeline.rewrite  # noqa: F401
    from linear_layouts.engine import examples, propagate_runs

    propagate_runs(examples.row_softmax())
    clear_caches()


# -- fingerprint -------------------------------------------------------------------------------------
def _layout_text(layout) -> str:
    return repr(sorted((d, tuple(map(tuple, vs))) for d, vs in layout.bases.items())) + repr(layout.out_dims)


def result_text(result) -> str:
    """Everything an ``EngineResult`` says, as text: the program, each value's layout, the conversions with
    their plans' kind, cost and wavefronts, the recomputed values."""
    lines = [result.program.to_text()]
    lines += [f"%{v} {_layout_text(lay)}" for v, lay in sorted(result.layouts.items())]
    for c in result.conversions:
        plan = c.plan
        lines.append(f"conv %{c.value}->%{c.result} {c.dtype} {c.cost!r} "
                     + (f"{plan.kind} {plan.cost.total!r} {plan.wavefronts}" if plan is not None else "none"))
    lines.append(repr(sorted(result.recomputes.items())))
    return "\n".join(lines)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def fingerprint(targets: tuple[str, ...], kernels: set[str] | None, random_count: int,
                extra: list[tuple[str, str, Path]] = ()) -> dict:
    """Digest of every engine result on the corpus (and ``extra`` kernels) and on ``random_count`` random
    programs (module doc)."""
    from linear_layouts.engine import naive_conversions, propagate_runs
    from linear_layouts.core.errors import LayoutError
    from linear_layouts.pipeline.rewrite import rewrite_kernel

    out: dict = {"corpus": {}, "random": {}}
    for target, name, path in corpus(targets, kernels) + list(extra):
        ttir, ttgir = path.read_text(), path.with_suffix(".ttgir").read_text()
        _, ops, runs = _engine(ttir, ttgir)
        entry = {start: _digest(result_text(run)) for start, run in runs.items()}
        for choose in (True, False):
            try:
                rewrite, assignment = rewrite_kernel(ttir, ttgir, choose=choose, max_ops=max(ops, 1))
            except LayoutError as error:  # refused for this target: the refusal is the result
                entry[f"rewrite_{choose}"] = _digest(str(error))
                continue
            entry[f"rewrite_{choose}"] = _digest("\n".join([rewrite.text, repr(rewrite.rejected), repr(rewrite.kept),
                                                            str(rewrite.conversions), repr(sorted(assignment.values.items(),
                                                                                                  key=str))]))
        out["corpus"][f"{target}/{name}"] = entry
        print(f"{target}/{name}: {entry}", flush=True)
    from harness.random_programs import random_program

    for seed in range(random_count):
        program = random_program(seed)
        try:
            runs = propagate_runs(program)
            text = "\n".join(result_text(runs[s]) for s in ("anchored", "legacy", "both"))
            text += f"\nnaive {naive_conversions(program)}"
        except LayoutError as error:
            text = f"error {error}"
        out["random"][str(seed)] = _digest(text)
    return out


# -- report --------------------------------------------------------------------------------------------
def _percentile(values: list[float], q: float) -> float:
    """The ``q``-quantile (0..1) by linear interpolation between closest ranks (NumPy's default)."""
    values = sorted(values)
    if not values:
        return float("nan")
    pos = (len(values) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (pos - lo)


def summary(rows: dict[str, dict]) -> dict:
    """p50 / p95 / max of the engine column (and p95 / max with parse added), per target and over all."""
    out = {}
    groups: dict[str, list[dict]] = {"all": []}
    for key, row in rows.items():
        groups.setdefault(key.split("/")[0], []).append(row)
        groups["all"].append(row)
    for group, members in groups.items():
        values = [row["engine"] for row in members]
        parsed = [row.get("engine_parse", row["engine"]) for row in members]
        out[group] = {"kernels": len(values), "p50": round(_percentile(values, 0.5), 1),
                      "p95": round(_percentile(values, 0.95), 1), "max": round(max(values), 1),
                      "p95_parse": round(_percentile(parsed, 0.95), 1), "max_parse": round(max(parsed), 1)}
    return out


def environment() -> dict:
    import numpy

    try:
        import triton
        triton_version = triton.__version__
    except ImportError:
        triton_version = None
    try:
        from linear_layouts.core import _ccore
        backend = _ccore.backend()
    except ImportError:
        backend = "python (no compiled core)"
    import linear_layouts

    source = Path(linear_layouts.__file__).resolve().parents[2]  # the checkout whose package is measured
    commit = os.popen(f"git -C {source} rev-parse --short HEAD 2>/dev/null").read().strip()
    if os.popen(f"git -C {source} status --porcelain -- src 2>/dev/null").read().strip():
        commit += " (+ changes)"
    return {"date": f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {cpu_model()}",
            "load": round(os.getloadavg()[0], 1), "python": platform.python_version(), "numpy": numpy.__version__,
            "triton": triton_version, "backend": backend, "commit": commit}


def markdown(data: dict) -> str:
    labels = list(data["runs"])
    lines = ["# Engine CPU time per corpus kernel (`benchmarks/engine_speed.py`)", "",
             "Engine = `import_ttir` of the parsed TTIR + `engine.propagate_runs` (both runs, the choice, every "
             "remaining conversion planned) + `EngineResult.to_text` (descriptors); parse = `parse_module` of the "
             "TTIR text (the IR reader's, shown apart). CPU `process_time`, each kernel in one process after a "
             "warm-up of the imports, every `functools` cache of the package cleared before it; median of the "
             f"repeats. Targets: p95 <= {P95_MS:.0f} ms, max <= {MAX_MS:.0f} ms. `rewrite_kernel`: one whole call "
             "(the engine plus the report's model of each candidate TTGIR), caches cleared first. Milliseconds.", ""]
    for label in labels:
        env = data["runs"][label]["environment"]
        lines.append(f"- **{label}**: commit {env['commit']}, {env['date']}, {env['machine']} (load {env['load']}), "
                     f"Python {env['python']}, NumPy {env['numpy']}, Triton {env['triton']}, algebra backend "
                     f"{env['backend']}, repeat {data['runs'][label]['repeat']}.")
    lines += ["", "## Summary (engine ms)", "",
              "| run | target | kernels | p50 | p95 | max | p95 with parse | max with parse |",
              "|---|---|---|---|---|---|---|---|"]
    for label in labels:
        for group, s in data["runs"][label]["summary"].items():
            lines.append(f"| {label} | {group} | {s['kernels']} | {s['p50']} | **{s['p95']}** | **{s['max']}** | "
                         f"{s.get('p95_parse', '-')} | {s.get('max_parse', '-')} |")
    keys = list(dict.fromkeys(k for label in labels for k in data["runs"][label]["rows"]))
    head = "| kernel | ops | conv. |"
    rule = "|---|---|---|"
    for label in labels:
        head += f" {label}: parse | import | propagate | describe | **engine** | rewrite_kernel |"
        rule += "---|---|---|---|---|---|"
    lines += ["", "## Per kernel (ms)", "", head, rule]
    for key in keys:
        first = next(data["runs"][label]["rows"][key] for label in labels if key in data["runs"][label]["rows"])
        name = key.split("/")[1]
        cells = [f"{key}{' (stress)' if name in STRESS else ''}", str(first["ops"]), str(first["conversions"])]
        for label in labels:
            row = data["runs"][label]["rows"].get(key)
            if row is None:
                cells += ["-"] * 6
                continue
            cells += [str(row.get("parse", "-")), str(row["import"]), str(row["propagate"]), str(row["describe"]),
                      f"**{row['engine']}**", str(row.get("rewrite_kernel", "-"))]
        lines.append("| " + " | ".join(cells) + " |")
    synthetic_keys = list(dict.fromkeys(k for label in labels for k in data["runs"][label].get("synthetic", {})))
    if synthetic_keys:
        lines += ["", "## Synthetic kernels of `benchmarks/rewrite_scaling.py` (sm_90; not in the summary, ms)", "",
                  head, rule]
        for key in synthetic_keys:
            first = next(data["runs"][label]["synthetic"][key] for label in labels
                         if key in data["runs"][label].get("synthetic", {}))
            cells = [key.split("/")[1], str(first["ops"]), str(first["conversions"])]
            for label in labels:
                row = data["runs"][label].get("synthetic", {}).get(key)
                cells += ["-"] * 6 if row is None else [
                    str(row.get("parse", "-")), str(row["import"]), str(row["propagate"]), str(row["describe"]),
                    f"**{row['engine']}**", str(row.get("rewrite_kernel", "-"))]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--kernels", help="comma-separated kernel names (default: every corpus kernel)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--label", default="after", help="the name of this run in the results (e.g. before)")
    parser.add_argument("--no-rewrite", action="store_true", help="leave out the whole rewrite_kernel timing")
    parser.add_argument("--out", default=str(RESULTS / "engine_speed"), help="results stem (.json and .md)")
    parser.add_argument("--fingerprint", help="write the digest of every engine result to this file, time nothing")
    parser.add_argument("--random", type=int, default=300, help="random programs in the fingerprint")
    parser.add_argument("--synthetic", nargs="*", default=[], help="rewrite_scaling kernels: FAMILY=SIZE,SIZE")
    args = parser.parse_args(argv)
    targets = tuple(t for t in args.targets.split(",") if t)
    kernels = set(args.kernels.split(",")) if args.kernels else None
    with tempfile.TemporaryDirectory() as folder:
        extra = synthetic(args.synthetic, Path(folder)) if args.synthetic else []
        if args.fingerprint:
            Path(args.fingerprint).write_text(json.dumps(fingerprint(targets, kernels, args.random, extra), indent=1,
                                                         sort_keys=True) + "\n")
            return 0
        warm_up()
        rows, synthetic_rows = {}, {}
        for target, name, path in corpus(targets, kernels) + extra:
            table = synthetic_rows if target == "synthetic" else rows
            table[f"{target}/{name}"] = row = measure(path, args.repeat, not args.no_rewrite)
            print(f"{target}/{name}: {row}", flush=True)
    out = Path(args.out)
    json_path = out.with_suffix(".json")
    data = json.loads(json_path.read_text()) if json_path.is_file() else {"runs": {}}
    data["runs"][args.label] = {"environment": environment(), "repeat": args.repeat, "summary": summary(rows),
                                "rows": rows, "synthetic": synthetic_rows}
    json_path.write_text(json.dumps(data, indent=1) + "\n")
    out.with_suffix(".md").write_text(markdown(data))
    for group, s in data["runs"][args.label]["summary"].items():
        print(f"{args.label} {group}: {s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
