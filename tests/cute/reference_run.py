"""CuTe's layout algebra against CuTe's own C++: 1000 seeded cases per operation (all 26), every one compiled.

The cases are ``tests/cute/cute_cpp.py``'s (the CI test runs the first few of each): drawn until ``--cases``
per operation compute here, plus every drawn case refused here. CuTe's C++ comes from the headers of the
``nvidia-cutlass`` wheel (``pip install --no-deps nvidia-cutlass==4.2.0.0``), compiled by g++ on the CPU
(the CUDA toolkit's headers, host code only):

* computed cases: many per program, each printing CuTe's ``print`` of its result; the text must equal ours
  exactly, parse back to our value (and pycute's ``str`` of it too), and ``show --format cute`` must print
  it (:func:`cute_cpp.round_trip`). A case CuTe's C++ refuses (a compile error on its line) is a difference.
* refused cases: many per file, ``-fsyntax-only``; a case whose line an error names is refused by CuTe too.
  An instantiation that fails is reported once per file, so every case no error names is compiled again
  alone, and those CuTe compiles are printed: where CuTe computes what we refuse it is one of our two
  deliberate refusals (CuTe returns another function; checked where the tiler is a layout) or a difference.
* NVIDIA's pycute (``tests/cute/test_algebra_reference.py``, ``--pycute-cases`` per operation): every case
  where pycute and ours differ goes through the C++ too, which says, per class, who is right.

Programs are sized from a first small one per operation (``--target-cpu`` compiler seconds each), compiled
``--jobs`` at a time against precompiled CuTe headers; every result is kept in ``--state`` (a JSON line per
expression), so a run that stops resumes where it was. Writes ``cute_algebra_reference.{md,json}`` into
``--out``. Not a timing: agreement counts (the run's wall and compiler CPU seconds are recorded).

    python3 tests/cute/reference_run.py --cases 1000 --pycute-cases 1000 --out benchmarks/results
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import platform
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

HERE = pathlib.Path(__file__).resolve().parent  # tests/cute: the C++ oracle and the case draws live here
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(HERE))

import cute_cpp as C  # noqa: E402
from linear_layouts.core.errors import LayoutError  # noqa: E402
from linear_layouts.cute import algebra as A  # noqa: E402
from linear_layouts.cute.layout import Layout  # noqa: E402
from linear_layouts.cute.parse import parse_cute  # noqa: E402

CALIBRATION = 12  #: cases in an operation's first program, which measures its compile cost
MAX_PROGRAM = 400  #: most cases in one program
REFUSAL_FILE = 150  #: cases per -fsyntax-only file of refused cases
BASE = "(a program of one case)"  #: costs.json's key for the cost every program pays

AGREE = "agree"
BOTH_REFUSE = "both refuse"
DELIBERATE = "refused here, CuTe returns another function (deliberate)"


@dataclass
class Case:
    operation: str
    expression: str
    ours: Any = None  #: our result, or None where ours refuses
    error: str | None = None  #: our LayoutError's message
    call: Any = None  #: functools.partial of our call (the drawn cases)
    pycute_label: str | None = None  #: the pycute outcome this case came from
    verdict: str = ""
    cpp: str | None = None  #: CuTe's printed result (None: it refuses)
    notes: list[str] = field(default_factory=list)


# -- the cases ---------------------------------------------------------------------------------------------


def draw(per_operation: int, operations: list[str]) -> list[Case]:
    """The CI test's draw (same seeds): until ``per_operation`` cases compute here, every refused one kept."""
    cases = []
    for name in operations:
        rng, kept = random.Random(f"cute-cpp-{name}"), 0
        while kept < per_operation:
            call, expression = C.OPERATIONS[name](rng)
            try:
                cases.append(Case(name, expression, ours=call(), call=call))
                kept += 1
            except LayoutError as error:
                cases.append(Case(name, expression, error=str(error), call=call))
    return cases


def pycute_cases(per_operation: int) -> tuple[list[Case], dict[str, Counter]]:
    """``test_algebra_reference``'s cases at ``per_operation`` each: its table of outcomes, and every case
    whose outcome is not ``equal`` as a Case (its C++ expression, our result or refusal)."""
    sys.setrecursionlimit(10000)
    import test_algebra_reference as T

    T.CASES, T.RECORD, T.RESULTS = per_operation, [], {}
    for name, test in [(k, v) for k, v in vars(T).items() if k.startswith("test_") and callable(v)]:
        marks = getattr(test, "pytestmark", [])
        params = [m.args[1] for m in marks if m.name == "parametrize"]
        for args in (params[0] if params else [()]):
            test(*([args] if params else []))
    cases = []
    for operation, label, expression, ours, call in T.RECORD:
        error = str(ours) if isinstance(ours, LayoutError) else None
        cases.append(Case(operation, expression, ours=None if error else ours, error=error, call=call,
                          pycute_label=label))
    return cases, T.RESULTS


# -- the compiler ------------------------------------------------------------------------------------------


class Oracle:
    """CuTe's C++ on expressions, with every answer kept in ``state/answers.jsonl``: ``{"expression", "printed"}``
    (CuTe's print, or null where it refuses), ``{"expression", "named": true}`` (a -fsyntax-only file's
    error named it: refused) or ``{"expression", "alone": true}`` (compiled alone, -fsyntax-only, no error)."""

    def __init__(self, state: pathlib.Path, jobs: int, target_cpu: float) -> None:
        self.state, self.jobs, self.target_cpu = state, jobs, target_cpu
        state.mkdir(parents=True, exist_ok=True)
        self.includes = C.include_dirs()
        if self.includes is None:
            sys.exit("needs CuTe's headers (pip install --no-deps nvidia-cutlass==4.2.0.0), g++ and the CUDA "
                     "toolkit's headers")
        self.printed: dict[str, str | None] = {}
        self.named: set[str] = set()  #: refused: an error named its line
        self.alone: set[str] = set()  #: compiled alone (-fsyntax-only) without an error
        self.batched: set[str] = set()  #: in a -fsyntax-only file of many, not named
        self.costs: dict[str, float] = {}
        self.cpu_seconds, self.programs, self.files = 0.0, 0, 0
        self.lock = threading.Lock()
        answers = state / "answers.jsonl"
        if answers.exists():
            for line in answers.read_text().splitlines():
                row = json.loads(line)
                if row.get("named"):
                    self.named.add(row["expression"])
                elif row.get("alone"):
                    self.alone.add(row["expression"])
                elif row.get("batched"):
                    self.batched.add(row["expression"])
                else:
                    self.printed[row["expression"]] = row["printed"]
        ledger = state / "runs.json"  # every run's compiler CPU seconds and programs, summed over resumed runs
        self.before = json.loads(ledger.read_text()) if ledger.exists() else {"cpu_seconds": 0.0, "programs": 0,
                                                                              "syntax_files": 0, "runs": 0}
        costs = state / "costs.json"
        if costs.exists():
            self.costs = json.loads(costs.read_text())
        pch = state / "pch"
        pch.mkdir(exist_ok=True)
        if not (pch / "cute_all.hpp.gch").exists():
            C.precompiled_header(self.includes, str(pch))
        self.header = C.PRECOMPILED
        self.includes = [str(pch), *self.includes]  # the precompiled cute_all.hpp.gch first
        self.serial = 0
        if BASE not in self.costs:  # a program's cost with no case: the header, the link
            self._print_program(BASE, ["Int<1>{}"])

    def totals(self) -> dict[str, float]:
        """This run's compiler work added to the runs before it on the same ``state`` (resumed runs)."""
        return {"cpu_seconds": round(self.before["cpu_seconds"] + self.cpu_seconds, 1),
                "programs": self.before["programs"] + self.programs,
                "syntax_files": self.before["syntax_files"] + self.files, "runs": self.before["runs"] + 1}

    def save_totals(self) -> None:
        (self.state / "runs.json").write_text(json.dumps(self.totals()))

    def _keep(self, rows: list[dict]) -> None:
        with self.lock, open(self.state / "answers.jsonl", "a") as f:
            f.writelines(json.dumps(row) + "\n" for row in rows)

    def _workdir(self) -> str:
        with self.lock:
            self.serial += 1
            serial = self.serial
        work = self.state / "work" / str(serial)
        work.mkdir(parents=True, exist_ok=True)
        return str(work)

    def _print_program(self, operation: str, expressions: list[str]) -> None:
        work = self._workdir()
        results, cpu = C.compile_and_print(expressions, self.includes, work, header=self.header)
        with self.lock:
            self.cpu_seconds += cpu
            self.programs += 1
            self.printed.update(zip(expressions, results))
            old = self.costs.get(operation)
            per_case = max(cpu - self.costs.get(BASE, 0.0), 0.0) / len(expressions)
            self.costs[operation] = per_case if old is None else 0.5 * (old + per_case)
            (self.state / "costs.json").write_text(json.dumps(self.costs, indent=1))
        self._keep([{"expression": e, "printed": r} for e, r in zip(expressions, results)])
        _clean(work)

    def print_all(self, by_operation: dict[str, list[str]]) -> None:
        """CuTe's print of every expression not yet answered: one small program per operation first (it
        measures the operation's compile cost), then programs of about ``target_cpu`` seconds each, the
        costliest first, ``jobs`` at a time."""
        pending = {op: [e for e in dict.fromkeys(es) if e not in self.printed] for op, es in by_operation.items()}
        pending = {op: es for op, es in pending.items() if es}
        first = {op: es[:CALIBRATION] for op, es in pending.items() if op not in self.costs}
        self._run([(op, es) for op, es in first.items()], "calibration")
        programs = []
        for op, es in pending.items():
            rest = es[len(first.get(op, [])):]
            size = max(CALIBRATION, min(MAX_PROGRAM, int(self.target_cpu / max(self.costs.get(op, 0.05), 1e-3))))
            programs += [(op, rest[i:i + size]) for i in range(0, len(rest), size)]
        programs.sort(key=lambda p: -len(p[1]) * self.costs.get(p[0], 0.05))
        self._run(programs, "programs")

    def _run(self, programs: list[tuple[str, list[str]]], what: str) -> None:
        if not programs:
            return
        total, done, start = sum(len(es) for _, es in programs), [0], time.time()

        def one(program: tuple[str, list[str]]) -> None:
            self._print_program(*program)
            with self.lock:
                done[0] += len(program[1])
                print(f"  {what}: {done[0]}/{total} cases ({program[0]}, {len(program[1])} in one program), "
                      f"{time.time() - start:.0f} s", flush=True)

        with ThreadPoolExecutor(self.jobs) as pool:
            list(pool.map(one, programs))

    def refusals(self, expressions: list[str]) -> None:
        """Which of ``expressions`` CuTe's C++ refuses: first in -fsyntax-only files of ``REFUSAL_FILE`` cases
        (a case an error names is refused); an instantiation that fails is reported once per file, so every
        case no error named is then compiled alone (-fsyntax-only): refused or not, certainly. The ones CuTe
        compiles are printed (``print_all``)."""
        pending = [e for e in dict.fromkeys(expressions) if e not in self.named and e not in self.printed]
        fresh = [e for e in pending if e not in self.batched]
        files = [fresh[i:i + REFUSAL_FILE] for i in range(0, len(fresh), REFUSAL_FILE)]
        self._syntax(files, "refusals, many per file")
        alone = [e for e in pending if e not in self.named and e not in self.alone]
        self._syntax([[e] for e in alone], "refusals, each alone")
        self.print_all({"refused here": [e for e in pending if e not in self.named]})

    def _syntax(self, files: list[list[str]], what: str) -> None:
        if not files:
            return
        total, done, start = len(files), [0, 0], time.time()

        def one(batch: list[str]) -> None:
            work = self._workdir()
            verdicts, _, cpu = C.refused_in_batch(batch, self.includes, work, header=self.header)
            hits = [e for e, v in zip(batch, verdicts) if v]
            rows = [{"expression": e, "named": True} for e in hits]
            if len(batch) == 1 and not hits:  # alone and not refused: CuTe's C++ compiles it
                rows.append({"expression": batch[0], "alone": True})
            elif len(batch) > 1:  # not named in a file of many: to be compiled alone (a resumed run skips the file)
                rows += [{"expression": e, "batched": True} for e in batch if e not in hits]
            with self.lock:
                self.cpu_seconds += cpu
                self.files += 1
                self.named.update(hits)
                self.alone.update(r["expression"] for r in rows if r.get("alone"))
                done[0] += 1
                done[1] += len(hits)
                if done[0] % 50 == 0 or done[0] == total:
                    print(f"  {what}: {done[0]}/{total} files, {done[1]} cases named, {time.time() - start:.0f} s",
                          flush=True)
            self._keep(rows)
            _clean(work)

        with ThreadPoolExecutor(self.jobs) as pool:
            list(pool.map(one, files))


def _clean(work: str) -> None:
    for f in pathlib.Path(work).iterdir():
        f.unlink()
    pathlib.Path(work).rmdir()


# -- verdicts ----------------------------------------------------------------------------------------------


def composed(a: Layout, b: Layout, i: int) -> int:
    """``(a ∘ b)(i)`` as CuTe defines it: a distributed over b's leaf modes, ``sum_k a(c_k * d_k)`` at i's
    coordinate ``c`` (a's last mode extends past its size); ``a(b(i))`` wherever a does not carry."""
    from linear_layouts.cute.int_tuple import flatten, idx2crd

    coordinate, strides = flatten(idx2crd(i, b.shape)), flatten(b.stride)
    return sum(a(c * d) for c, d in zip(coordinate, strides))


def another_function(case: Case) -> bool | None:
    """Whether CuTe's printed answer to one of our deliberate refusals is not the operation's function, as a
    function of the 1-D index (None: not checked). ``left_inverse``: CuTe's postcondition ``L(R(L(i))) ==
    L(i)`` fails for some ``i``. With a layout (or integer) B: ``composition``: ``R(i) != (A ∘ B)(i)`` for
    some ``i`` (:func:`composed`); the divides, ``A ∘ W`` with ``W = (B, complement(B, shape(coalesce(A))))``
    the same way (regrouping modes keeps the 1-D function); the products, ``R(size(A) * k) != (A* ∘ B)(k)``,
    ``A* = complement(A, size(A) * cosize(B))``. A tuple tiler, ``blocked/raked_product`` and
    ``tile_to_shape`` are not checked."""
    if case.call is None or case.cpp is None:
        return None
    r, op = parse_cute(case.cpp), case.operation
    if op == "left_inverse":
        (L,) = case.call.args
        return any(L(r(L(i))) != L(i) for i in range(L.size))
    if op not in ("composition", *(f"{k}_{n}" for k in ("logical", "zipped", "tiled", "flat")
                                   for n in ("divide", "product"))):
        return None
    a, b = case.call.args
    if isinstance(b, tuple) or not isinstance(a, Layout):
        return None
    b = Layout(b, 1) if isinstance(b, int) else b
    if op.endswith("product"):
        rest = A.complement(a, a.size * A.cosize(b))
        return any(r(a.size * k) != composed(rest, b, k) for k in range(b.size))
    whole = b if op == "composition" else A.make_layout(b, A.complement(b, A.coalesce(a).shape))
    return any(r(i) != composed(a, whole, i) for i in range(whole.size))


def judge(case: Case, oracle: Oracle) -> None:
    """The case's verdict: ``agree`` (CuTe prints ours exactly), ``both refuse``, the deliberate refusal,
    or a named difference."""
    if case.error is None:
        case.cpp = oracle.printed[case.expression]
        if case.cpp is None:
            case.verdict = "differ: CuTe's C++ refuses, ours computes"
        elif case.cpp == C.printed(case.ours):
            case.verdict = AGREE
            case.notes = C.round_trip(case.cpp, case.ours)
        else:
            case.verdict = "differ: another result"
        return
    if case.expression in oracle.named:
        case.verdict = BOTH_REFUSE
        return
    case.cpp = oracle.printed[case.expression]
    if case.cpp is None:
        case.verdict = BOTH_REFUSE
    elif "refused here" in case.error:
        checked = another_function(case)
        case.verdict = DELIBERATE if checked is not False else "differ: refused here, CuTe's answer is the function"
        case.notes = ["CuTe's answer checked: not the function"] if checked else []
    else:
        case.verdict = "differ: ours refuses, CuTe's C++ computes"


def claim(label: str) -> tuple[str, set[str]]:
    """What a pycute outcome class says of CuTe's C++, and the verdicts that bear it out. A class naming the
    C++'s refusal (``CuTe's C++ refuses, pycute computes``): it refuses, and so do we. ``both refuse`` (pycute
    and ours): CuTe refuses too, or it is one of our deliberate refusals. ``refused where CuTe's C++ returns
    another function``: the C++ computes, and not the operation's function where that is checked. Every other
    class (ours computes, pycute differs or refuses): CuTe's C++ prints exactly our result."""
    if "CuTe's C++ refuses" in label:
        return "CuTe's C++ refuses (so do we)", {BOTH_REFUSE}
    if label == "both refuse":
        return "CuTe's C++ refuses, or returns another function (deliberate)", {BOTH_REFUSE, DELIBERATE}
    if label == "refused where CuTe's C++ returns another function":
        return "CuTe's C++ computes another function (deliberate)", {DELIBERATE}
    return "CuTe's C++ prints our result", {AGREE}


# -- the report --------------------------------------------------------------------------------------------


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version(), "machine": f"{platform.machine()}, {platform.system()}"}
    for package in ("linear_layouts", "nvidia-cutlass", "pycute"):
        try:
            out[package] = version(package)
        except PackageNotFoundError:
            pass
    out["g++"] = subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    nvcc = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout if _has("nvcc") else ""
    out["cuda headers"] = next((line.strip() for line in nvcc.splitlines() if "release" in line), "unknown")
    try:
        out["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                       cwd=ROOT, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        out["commit"] = "unknown"
    return out


def _has(tool: str) -> bool:
    import shutil

    return shutil.which(tool) is not None


def summarize(drawn: list[Case], from_pycute: list[Case], pycute_table: dict[str, Counter],
              oracle: Oracle, meta: dict[str, Any]) -> dict[str, Any]:
    operations: dict[str, Any] = {}
    for name in dict.fromkeys(c.operation for c in drawn):
        mine = [c for c in drawn if c.operation == name]
        verdicts = Counter(c.verdict for c in mine)
        operations[name] = {
            "drawn": len(mine),
            "computed": sum(c.error is None for c in mine),
            "verdicts": dict(verdicts.most_common()),
            "round_trip_checked": sum(c.verdict == AGREE for c in mine),
            "round_trip_failures": [{"expression": c.expression, "problems": c.notes} for c in mine
                                    if c.verdict == AGREE and c.notes],
            "differences": [{"expression": c.expression, "verdict": c.verdict, "ours": c.error or C.printed(c.ours),
                             "cpp": c.cpp} for c in mine if c.verdict.startswith("differ")],
            "deliberate": [{"expression": c.expression, "cpp": c.cpp, "checked": bool(c.notes)} for c in mine
                           if c.verdict == DELIBERATE],
        }
    classes: dict[str, dict[str, Any]] = defaultdict(dict)
    for c in from_pycute:
        said, bearing = claim(c.pycute_label)
        row = classes[c.operation].setdefault(c.pycute_label, {"cases": 0, "claim": said, "verified": 0,
                                                               "checked_another_function": 0,
                                                               "verdicts": Counter()})
        row["cases"] += 1
        row["verified"] += c.verdict in bearing
        row["checked_another_function"] += c.verdict == DELIBERATE and bool(c.notes)
        row["verdicts"][c.verdict] += 1
    differences = [{"operation": c.operation, "pycute": c.pycute_label, "claim": claim(c.pycute_label)[0],
                    "expression": c.expression, "verdict": c.verdict, "ours": c.error or C.printed(c.ours),
                    "cpp": c.cpp} for c in from_pycute if c.verdict not in claim(c.pycute_label)[1]]
    return {
        **meta,
        "cpp": {"operations": operations,
                "programs": oracle.programs, "syntax_files": oracle.files},
        "pycute": {"table": {k: dict(v.most_common()) for k, v in pycute_table.items()},
                   "classes": {op: {label: {**row, "verdicts": dict(row["verdicts"].most_common())}
                                    for label, row in rows.items()} for op, rows in classes.items()},
                   "differences": differences},
    }


def markdown(report: dict[str, Any]) -> str:
    v, ops = report["versions"], report["cpp"]["operations"]
    per = report["cases_per_operation"]
    lines = [
        "# CuTe's layout algebra against CuTe's C++ (and NVIDIA's pycute, refereed by the C++)",
        "",
        f"Run {report['date']} (commit {v['commit']}), linear_layouts {v.get('linear_layouts', '?')}, Python "
        f"{v['python']}, on the CPU ({v['machine']}, {report['jobs']} compiler jobs): CUTLASS "
        f"{v.get('nvidia-cutlass', '?')} as the `nvidia-cutlass` wheel ships it (`pip install --no-deps`), its "
        f"`cutlass_library/source/include` headers compiled by {v['g++']} against the CUDA toolkit's headers "
        f"({v['cuda headers']}; host code only), and its pycute. Not a timing: agreement counts. This run took "
        f"{report['wall_seconds'] / 60:.1f} min wall and {report['compiler_cpu_seconds'] / 60:.1f} min of compiler "
        f"CPU ({report['cpp']['programs']} programs, {report['cpp']['syntax_files']} -fsyntax-only files); it "
        f"resumed from `--state`, whose answers earlier runs compiled ({report['totals']['runs']} runs recorded: "
        f"{report['totals']['cpu_seconds'] / 60:.1f} min of compiler CPU, {report['totals']['programs']} programs, "
        f"{report['totals']['syntax_files']} -fsyntax-only files; {report['answers']} expressions answered)."
        + (f" {report['note']}" if report.get("note") else ""),
        "",
        f"Reproduce: `python3 tests/cute/reference_run.py --cases {per} --pycute-cases "
        f"{report['pycute_cases_per_operation']} --out benchmarks/results` (resumable: `--state`). The default "
        "test run (`tests/cute/test_algebra_cpp.py`) compiles the first cases of the same draw and one refusal "
        "per CuTe rule.",
        "",
        "## Against CuTe's C++ (the reference semantics)",
        "",
        f"Seeded cases per operation (`tests/cute/cute_cpp.py`'s draw), every integer static (`Int<N>`), drawn "
        f"until {per} compute here; every drawn case that we refuse is compiled too. `agree`: CuTe's `print` "
        "prints exactly our result, and that text, pycute's `str` of the same value "
        "(`SW_1_0_-1 o 0 o (2, 8):(1, 2)`) and `show --format cute` round-trip (`cute_cpp.round_trip`). `both "
        "refuse`: CuTe's C++ stops with a `static_assert` where we raise a LayoutError. `deliberate`: our two "
        "refusals where CuTe 4.2 compiles and returns another function (a composition through a stride that "
        "does not divide a mode -- and so the divides, products and `tile_to_shape` built on it -- and the left "
        "inverse of overlapping modes; `linear_layouts.cute.algebra`'s module doc); in parentheses, how many of "
        "CuTe's printed answers this script checked not to be the operation's function (`another_function`: "
        "every one with a layout or integer tiler; a tuple tiler, `blocked/raked_product` and `tile_to_shape` "
        "are not checked here).",
        "",
        "| operation | drawn | computed here: CuTe prints the same | both refuse | deliberate refusals "
        "(CuTe's answer checked wrong) | differ | round trips failed |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    totals = Counter()
    for name, row in ops.items():
        vd = row["verdicts"]
        deliberate = len(row["deliberate"])
        checked = sum(d["checked"] for d in row["deliberate"])
        differ = sum(n for k, n in vd.items() if k.startswith("differ"))
        rt = len(row["round_trip_failures"])
        cells = dict(drawn=row["drawn"], agree=vd.get(AGREE, 0), computed=row["computed"],
                     both=vd.get(BOTH_REFUSE, 0), deliberate=deliberate, checked=checked, differ=differ, rt=rt)
        totals.update(cells)
        lines.append(f"| `{name}` | {cells['drawn']} | {cells['agree']} / {cells['computed']} | {cells['both']} | "
                     f"{deliberate}" + (f" ({checked})" if deliberate else "") + f" | {differ} | {rt} |")
    lines.append(f"| **all {len(ops)}** | **{totals['drawn']}** | **{totals['agree']} / {totals['computed']}** | "
                 f"**{totals['both']}** | **{totals['deliberate']}** ({totals['checked']}) | **{totals['differ']}** "
                 f"| **{totals['rt']}** |")
    differences = [d for row in ops.values() for d in row["differences"]]
    lines += ["", f"Differences: {len(differences)}." + ("" if not differences else " Each:"), ""]
    lines += [f"- `{d['expression']}`: {d['verdict']}; CuTe `{d['cpp']}`, ours `{d['ours']}`" for d in differences]
    lines += ["", "Calls where ours once differed from CuTe's C++, fixed in `linear_layouts.cute.algebra` and kept "
              "as regression tests (`tests/cute/test_algebra_regressions.py`, compiled again by "
              "`test_algebra_cpp.py`), with what CuTe prints:", ""]
    lines += [f"- `{expression}`: `{text}`" for expression, text in report["regressions"]]
    pycute_classes = report["pycute"]["classes"]
    total_cases = sum(row["cases"] for rows in pycute_classes.values() for row in rows.values())
    total_verified = sum(row["verified"] for rows in pycute_classes.values() for row in rows.values())
    lines += [
        "",
        "## pycute's differences, each case sent through CuTe's C++",
        "",
        f"`tests/cute/test_algebra_reference.py` at {report['pycute_cases_per_operation']} seeded cases per "
        "operation (the default test run does the same) sorts each case into an outcome; every outcome besides "
        "`equal` (pycute and ours the same) is a class of difference between pycute and ours, and each class "
        "says something of CuTe's C++ (`claim`): that it refuses (`CuTe's C++ refuses, pycute computes`, and "
        "`both refuse`, where it may instead be one of our deliberate refusals), that it returns another function "
        "(our deliberate refusals), or -- every other class -- that it prints exactly our result. Every case of "
        "every class was compiled against CuTe's C++ and the claim checked on that case: "
        f"**{total_verified} / {total_cases}** cases bear their class's claim out.",
        "",
        "| operation | pycute's outcome (a class of difference) | what it says of CuTe's C++ | cases | "
        "borne out by CuTe's C++ | not borne out |",
        "|---|---|---|---:|---:|---:|",
    ]
    for op, rows in pycute_classes.items():
        for label, row in sorted(rows.items(), key=lambda kv: -kv[1]["cases"]):
            checked = (f" ({row['checked_another_function']} checked not the function)"
                       if row["checked_another_function"] else "")
            lines.append(f"| `{op}` | {label} | {row['claim']} | {row['cases']} | {row['verified']}{checked} | "
                         f"{row['cases'] - row['verified']} |")
    if report["pycute"]["differences"]:
        lines += ["", "Cases whose class's claim CuTe's C++ does not bear out:", ""]
        lines += [f"- `{d['operation']}` ({d['pycute']}; claims: {d['claim']}): `{d['expression']}`: "
                  f"{d['verdict']}; CuTe `{d['cpp']}`, ours `{d['ours']}`" for d in report["pycute"]["differences"]]
    lines += ["", f"The table of outcomes ({report['pycute_cases_per_operation']} cases per operation):", "", "```"]
    table = report["pycute"]["table"]
    width = max(map(len, table), default=0)
    for name, counts in table.items():
        lines.append(f"{name:{width}}  {sum(counts.values()):5}  " + ", ".join(f"{k}: {n}" for k, n in counts.items()))
    lines += ["```", ""]
    return "\n".join(lines)


def _regressions() -> list[tuple[Any, str, str]]:
    from test_algebra_regressions import CASES

    return CASES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000, help="computed cases per operation (default 1000)")
    parser.add_argument("--pycute-cases", type=int, default=1000, help="pycute cases per operation (0: none)")
    parser.add_argument("--operations", help="comma-separated operations (default: all 26)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="g++ processes at a time")
    parser.add_argument("--target-cpu", type=float, default=40.0, help="compiler CPU seconds per program")
    parser.add_argument("--state", default=str(pathlib.Path(tempfile.gettempdir()) / "cute_algebra_reference"),
                        help="where CuTe's answers are kept between runs")
    parser.add_argument("--out", help="write cute_algebra_reference.{md,json} here")
    parser.add_argument("--note", default="", help="a sentence for the report (e.g. how the state was built)")
    args = parser.parse_args(argv)
    start = time.time()
    operations = args.operations.split(",") if args.operations else list(C.OPERATIONS)
    unknown = [op for op in operations if op not in C.OPERATIONS]
    if unknown:
        parser.error(f"--operations: unknown {unknown}; known: {list(C.OPERATIONS)}")
    oracle = Oracle(pathlib.Path(args.state), args.jobs, args.target_cpu)

    drawn = draw(args.cases, operations)
    print(f"drawn: {len(drawn)} cases, {sum(c.error is not None for c in drawn)} refused here", flush=True)
    from_pycute, pycute_table = pycute_cases(args.pycute_cases) if args.pycute_cases else ([], {})
    print(f"pycute: {len(from_pycute)} cases differ from pycute", flush=True)
    every = drawn + from_pycute
    by_operation: dict[str, list[str]] = defaultdict(list)
    for c in every:
        if c.error is None:
            by_operation[c.operation].append(c.expression)
    oracle.print_all(by_operation)
    oracle.save_totals()
    oracle.refusals([c.expression for c in every if c.error is not None])
    oracle.save_totals()
    for c in every:
        judge(c, oracle)

    report = summarize(drawn, from_pycute, pycute_table, oracle, {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "versions": versions(), "cases_per_operation": args.cases,
        "pycute_cases_per_operation": args.pycute_cases, "jobs": args.jobs,
        "wall_seconds": round(time.time() - start, 1), "compiler_cpu_seconds": round(oracle.cpu_seconds, 1),
        "regressions": [[e, t] for _, e, t in _regressions()], "totals": oracle.totals(), "answers": len(oracle.printed) + len(oracle.named), "note": args.note})
    text = markdown(report)
    print(text)
    if args.out:
        out = pathlib.Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "cute_algebra_reference.json").write_text(json.dumps(report, indent=1) + "\n")
        (out / "cute_algebra_reference.md").write_text(text)
    bad = sum(1 for c in every if c.verdict.startswith("differ") or (c.verdict == AGREE and c.notes))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
