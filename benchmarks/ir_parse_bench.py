"""Parse time of large TTGIR texts: ``parse_module`` (the IR reader the CLI's ``report`` calls on an IR file)
and the whole ``linear-layouts report FILE`` on the same text, at 1k, 10k and 100k ops.

The texts are built from the corpus's real kernels (``tests/data/triton_kernels/ir/sm_90/*.ttgir``, those of
one module header: 4 warps, ``cuda:90``): the body of each kernel's function is copied again and again, the
kernels taken in turn, into one function, with fresh names, so every text is one well-formed module:

* every value a copy defines gets the copy's prefix (``%rn_3`` -> ``%k17_rn_3``), so no name is defined twice;
* the function arguments and the aliases (``#blocked``, ``#loc12``) of each kernel get its kernel's prefix
  (``%x_ptr`` -> ``%s3_x_ptr``, ``#blocked`` -> ``#s3_blocked``), shared by that kernel's copies: aliases
  and types repeat as in a real long kernel;
* each copy's ``tt.return`` is dropped, one closes the function.

Each measure is the best of ``--repeat`` runs in CPU time (``time.process_time``: the machines are shared, and
a wall clock counts the other users' work), every ``functools`` cache of the package cleared before each
(``parse_module`` keeps its last parses). **parse** is ``parse_module(last_module(text))``; **report** is
``linear-layouts report FILE -o FILE`` run in this process (``cli.main``: the read, the parse, the analysis,
the text), the file's text being the same.

Run: ``PYTHONPATH=src python3 benchmarks/ir_parse_bench.py --label before [--sizes 1000,10000,100000]
[--repeat 3] [--out benchmarks/results/ir_parse]`` writes ``OUT.json`` (keeping the runs of other labels) and
``OUT.md`` (the runs side by side, and each run's speedup over the one labelled ``before``).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import json
import os
import platform
import re
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)
from harness.environment import cpu_model  # noqa: E402
from harness.timing import clear_caches  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "triton_kernels" / "ir" / "sm_90"
RESULTS = ROOT / "benchmarks" / "results"
SIZES = (1_000, 10_000, 100_000)
#: the module header every kernel of the texts shares (their layouts are for 4 warps of sm_90)
HEADER = ('module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", '
          '"ttg.threads-per-warp" = 32 : i32, "ttng.two-ctas" = false} {')

#: an SSA value name (``%x_19``, ``%12``) and an alias name (``#blocked1``, ``#loc7``, not ``#ttg.slice``'s)
_VALUE = re.compile(r"%([\w$.-]+)")
_ALIAS = re.compile(r"#([A-Za-z_][\w$.-]*)")
_ARGUMENT = re.compile(r"%([\w$.-]+)\s*:")


@dataclass(frozen=True)
class Kernel:
    """One corpus kernel cut for copying: its ``aliases`` (``#name = ...`` lines, before and after the module),
    its function's argument list (inner text) and ``arguments`` (their names), and its function's ``body``
    (the lines between the header and the closing ``}``, the top-level ``tt.return`` left out).

    >>> k = kernel_of("#a = #ttg.blocked<{}>\\nmodule {\\n  tt.func @f(%x: i32) {\\n    %y = arith.addi %x, %x : i32\\n"
    ...               "    tt.return\\n  }\\n}", "f")
    >>> k.arguments, k.body
    (frozenset({'x'}), ('    %y = arith.addi %x, %x : i32',))
    """

    name: str
    aliases: tuple[str, ...]
    argument_list: str
    arguments: frozenset[str]
    body: tuple[str, ...]

    @property
    def ops(self) -> int:
        """The op lines of one copy of the body (``}`` closers and block labels are none)."""
        return sum(1 for line in self.body if line.strip() and not line.strip().startswith(("}", "^")))


def _closing_paren(text: str, start: int) -> int:
    """Index of the ``)`` closing the ``(`` at ``start`` (strings skipped); -1 if none.

    >>> _closing_paren('f(a, ")", (b)) c', 1)
    13
    """
    depth, quoted = 0, False
    for i in range(start, len(text)):
        c = text[i]
        if c == '"':
            quoted = not quoted
        elif not quoted and c == "(":
            depth += 1
        elif not quoted and c == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


def kernel_of(text: str, name: str) -> Kernel:
    """The :class:`Kernel` of a one-function TTGIR text (``name``: what it is called in the tables)."""
    lines = text.splitlines()
    aliases = tuple(line for line in lines if line.startswith("#"))
    head = next(k for k, line in enumerate(lines) if line.strip().startswith("tt.func"))
    header = lines[head]
    open_at = header.index("(")
    argument_list = header[open_at + 1:_closing_paren(header, open_at)]
    indent = len(header) - len(header.lstrip())
    end = next(k for k in range(head + 1, len(lines))
               if lines[k].startswith(" " * indent + "}") and not lines[k].startswith(" " * (indent + 1)))
    body = tuple(line for line in lines[head + 1:end]
                 if not (line.startswith(" " * (indent + 2) + "tt.return")
                         and not line.startswith(" " * (indent + 3))))
    return Kernel(name, aliases, argument_list, frozenset(_ARGUMENT.findall(argument_list)), body)


def corpus(folder: Path = CORPUS) -> list[Kernel]:
    """The corpus kernels of ``folder`` whose module header is :data:`HEADER`, by name."""
    kernels = []
    for path in sorted(folder.glob("*.ttgir")):
        text = path.read_text()
        if HEADER in text.splitlines() and text.count("tt.func") == 1:
            kernels.append(kernel_of(text, path.stem))
    return kernels


def _renamed(line: str, values: Callable[[str], str], aliases: dict[str, str]) -> str:
    """``line`` with each value name ``%n`` as ``values(n)`` and each alias of ``aliases`` renamed."""
    line = _VALUE.sub(lambda m: "%" + values(m.group(1)), line)
    return _ALIAS.sub(lambda m: "#" + aliases.get(m.group(1), m.group(1)), line)


def build_text(kernels: list[Kernel], ops: int) -> str:
    """One module of at least ``ops`` op lines: copies of the kernels' bodies in turn, renamed (module doc)."""
    lines: list[str] = []
    arguments: list[str] = []
    alias_lines: list[str] = []
    count, copy = 0, 0
    used: set[int] = set()
    while count < ops:
        s = copy % len(kernels)
        kernel = kernels[s]
        aliases = {a.split("=")[0].strip()[1:]: f"s{s}_" + a.split("=")[0].strip()[1:] for a in kernel.aliases}

        def value(name: str, s: int = s, copy: int = copy, kernel: Kernel = kernel) -> str:
            return f"s{s}_{name}" if name in kernel.arguments else f"k{copy}_{name}"

        if s not in used:
            used.add(s)
            alias_lines += [_renamed(a, value, aliases) for a in kernel.aliases]
            arguments.append(_renamed(kernel.argument_list, value, aliases))
        lines += [_renamed(line, value, aliases) for line in kernel.body]
        count += kernel.ops
        copy += 1
    definitions = [a for a in alias_lines if not a.split("=", 1)[1].strip().startswith("loc(")]
    locations = [a for a in alias_lines if a.split("=", 1)[1].strip().startswith("loc(")]
    head = f"  tt.func public @bench_kernel({', '.join(arguments)}) attributes {{noinline = false}} {{"
    return "\n".join(definitions + [HEADER, head] + lines + ["    tt.return", "  }", "}"] + locations) + "\n"


def best_of(fn: Callable[[], object], repeat: int) -> float:
    """The fewest CPU seconds of ``repeat`` calls of ``fn``, the package's caches cleared before each."""
    times = []
    for _ in range(repeat):
        clear_caches()
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def measure(text: str, repeat: int, folder: Path, with_report: bool) -> dict:
    """The row of one text: its ops (parsed), bytes, and the best parse and report times (seconds)."""
    from linear_layouts.cli import main
    from linear_layouts.triton_model.ir_text import last_module, parse_module

    module = parse_module(last_module(text))
    row = {"ops": sum(1 for fn in module.functions for _ in fn.walk()), "bytes": len(text.encode()),
           "parse_s": round(best_of(lambda: parse_module(last_module(text)), repeat), 4)}
    if with_report:
        path, out = folder / "bench.ttgir", folder / "report.txt"
        path.write_text(text)

        def report() -> None:
            with contextlib.redirect_stderr(io.StringIO()):
                status = main(["report", str(path), "-o", str(out)])
            if status != 0:
                raise SystemExit(f"report failed (exit {status})")

        row["report_s"] = round(best_of(report, repeat), 4)
    return row


def environment() -> dict:
    """Where and when the run was: date, CPU, Python, load."""
    return {"date": f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {cpu_model()}",
            "python": platform.python_version(), "load": round(os.getloadavg()[0], 1)}


def markdown(data: dict) -> str:
    """The runs as a Markdown table, one row per size, with each run's speedup over the run labelled ``before``."""
    runs = data["runs"]
    labels = list(runs)
    others = [label for label in labels if label != "before"] if "before" in runs else []
    lines = ["# IR parse time (`benchmarks/ir_parse_bench.py`)", "",
             "parse = `parse_module(last_module(text))`; report = `linear-layouts report FILE -o FILE` in-process. "
             "CPU seconds (`time.process_time`), best of the repeats, the package's caches cleared before each.", ""]
    for label in labels:
        env = runs[label]["environment"]
        lines.append(f"- **{label}**: {env['date']}, {env['machine']}, Python {env['python']} "
                     f"(load {env['load']}), repeat {runs[label]['repeat']}.")
    sizes = list(dict.fromkeys(size for label in labels for size in runs[label]["rows"]))
    head = "| target ops | ops | MiB |" + "".join(f" {label}: parse | {label}: report |" for label in labels)
    head += "".join(f" {label}: parse speedup | {label}: report speedup |" for label in others)
    rule = "|---|---|---|" + "---|---|" * (len(labels) + len(others))
    lines += ["", head, rule]
    for size in sizes:
        first = next(runs[label]["rows"][size] for label in labels if size in runs[label]["rows"])
        cells = [size, str(first["ops"]), f"{first['bytes'] / 2**20:.2f}"]
        for label in labels:
            row = runs[label]["rows"].get(size, {})
            cells += [str(row.get("parse_s", "-")), str(row.get("report_s", "-"))]
        base = runs["before"]["rows"].get(size, {}) if others else {}
        for label in others:
            row = runs[label]["rows"].get(size, {})
            cells += [f"{base[k] / row[k]:.1f}x" if k in row and k in base and row[k] else "-"
                      for k in ("parse_s", "report_s")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="op counts of the texts")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--label", default="after", help="the name of this run in the results (e.g. before)")
    parser.add_argument("--no-report", action="store_true", help="time the parse only")
    parser.add_argument("--report-sizes", help="time the whole report only at these sizes (default: all)")
    parser.add_argument("--save-text", help="write the text of the largest size here (to profile it)")
    parser.add_argument("--out", default=str(RESULTS / "ir_parse"), help="results stem (.json and .md)")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    report_sizes = set(sizes) if args.report_sizes is None else {int(s) for s in args.report_sizes.split(",") if s}
    kernels = corpus()
    rows = {}
    print(f"{'ops':>8} {'MiB':>6} {'parse s':>9} {'report s':>9}")
    with tempfile.TemporaryDirectory() as folder:
        for size in sizes:
            text = build_text(kernels, size)
            if args.save_text and size == max(sizes):
                Path(args.save_text).write_text(text)
            row = measure(text, args.repeat, Path(folder), not args.no_report and size in report_sizes)
            rows[str(size)] = row
            print(f"{row['ops']:>8} {row['bytes'] / 2**20:>6.2f} {row['parse_s']:>9.3f} "
                  f"{row.get('report_s', float('nan')):>9.3f}", flush=True)
    out = Path(args.out)
    json_path = out.with_suffix(".json")
    data = json.loads(json_path.read_text()) if json_path.is_file() else {"runs": {}}
    data["runs"][args.label] = {"environment": environment(), "repeat": args.repeat, "rows": rows}
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(data, indent=1) + "\n")
    out.with_suffix(".md").write_text(markdown(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
