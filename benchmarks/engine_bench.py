"""Engine speed and quality on the CPU: time to propagate each example program and 100 random programs
(the generator of benchmarks/harness/random_programs.py), and the conversions left vs. the legacy
"blocked everywhere" baseline.

Timings, each the median over ``--runs`` fresh processes (wall clock ``perf_counter`` and CPU
``process_time``; the machine is shared, so CPU time is the steadier figure):

* **cold**: the first ``propagate`` of the program in a fresh process (every cache empty; the
  package imported, including ``codegen.cost``, which the analyses import on their first shuffle
  cost: that one-time import is timed apart, ``import``) — what a compiler pass pays per new kernel;
* **warm**: the median of 5 further calls on the same program in that process (caches full);
* **random cold**: for each of 100 seeded random programs, every ``functools`` cache of the package
  cleared, then one ``propagate`` (so no program reuses another's work); the mean per program;
* **+ descriptors**: then reading every value's catalog descriptor (``EngineResult.descriptors``,
  found on first access since this change; what the Gluon emitter reads), cold;
* **random seq**: the 100 programs one after another in one process without clearing (caches shared
  across different programs, as in one compiler process); the mean per program.

The algebra runs on the compiled core when it is built (``python setup.py build_ext --inplace``) unless
``--pure-python`` (``LINEAR_LAYOUTS_PURE_PYTHON=1`` in the workers); the header says which.

Run: ``python benchmarks/engine_bench.py [--runs 5] [--pure-python]``; ``--child ...`` is the per-process worker.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve()
import harness  # noqa: E402, F401  (puts src/ on the path)
from harness.timing import clear_caches  # noqa: E402


def _time(fn):
    gc.collect()
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w, time.process_time() - c, out


def child(what: str) -> dict:
    """One fresh process: cold then warm timings of example ``what``, or of the random set (``random``)."""
    from linear_layouts.engine import examples, naive_conversions, propagate

    if what == "import":
        wall, cpu, _ = _time(lambda: __import__("linear_layouts.codegen.cost"))
        return {"cold_wall": wall, "cold_cpu": cpu}
    __import__("linear_layouts.codegen.cost")

    if what != "random":
        program = examples.EXAMPLES[what]()
        wall, cpu, result = _time(lambda: propagate(program))
        desc_cpu = _time(lambda: dict(result.descriptors))[1]
        warm = [_time(lambda: propagate(program))[:2] for _ in range(5)]
        return {"cold_wall": wall, "cold_cpu": cpu, "desc_cpu": desc_cpu,
                "warm_wall": statistics.median(w for w, _ in warm), "warm_cpu": statistics.median(c for _, c in warm),
                "ops": len(program.ops), "conversions": len(result.conversions), "cost": result.total_cost,
                "naive": naive_conversions(program)}
    from harness.random_programs import random_program

    programs = [random_program(seed) for seed in range(100)]
    cold_wall = cold_cpu = desc_cpu = 0.0
    convs = []
    for program in programs:
        clear_caches()
        wall, cpu, result = _time(lambda: propagate(program))
        desc_cpu += _time(lambda: dict(result.descriptors))[1]
        cold_wall += wall
        cold_cpu += cpu
        convs.append(len(result.conversions))
    clear_caches()
    seq_wall = seq_cpu = 0.0
    for program in programs:
        wall, cpu, _ = _time(lambda: propagate(program))
        seq_wall += wall
        seq_cpu += cpu
    return {"cold_wall": cold_wall / 100, "cold_cpu": cold_cpu / 100, "desc_cpu": desc_cpu / 100, "seq_wall": seq_wall / 100,
            "seq_cpu": seq_cpu / 100, "conversions": sum(convs), "per_program": convs,
            "naive": sum(naive_conversions(p) for p in programs)}


def _run_child(what: str, pure_python: bool) -> dict:
    env = dict(os.environ, LINEAR_LAYOUTS_PURE_PYTHON="1" if pure_python else "")
    out = subprocess.run([sys.executable, str(HERE), "--child", what], check=True, capture_output=True, text=True,
                         env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _backend(pure_python: bool) -> str:
    """The workers' algebra backend ("c" or "python")."""
    code = ("try:\n    from linear_layouts.core import _ccore\nexcept ImportError:\n    print('python (no compiled core)')\n"
            "else:\n    print(_ccore.backend())")
    env = dict(os.environ, LINEAR_LAYOUTS_PURE_PYTHON="1" if pure_python else "")
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per program (median)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--only", help="comma-separated example names (and/or 'random')")
    parser.add_argument("--pure-python", action="store_true", help="the pure-Python algebra even if the C core is built")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child)))
        return
    from linear_layouts.engine import examples
    import numpy

    names = ["import"] + list(examples.EXAMPLES) + ["random"]
    if args.only:
        names = [n for n in names if n in args.only.split(",")]
    print(f"# engine_bench — {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
          f"Python {platform.python_version()}, NumPy {numpy.__version__}, {platform.machine()}, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}, algebra backend {_backend(args.pure_python)}, "
          f"median of {args.runs} fresh processes (ms; wall / CPU process_time)")
    print("| program | ops | cold wall | cold CPU | + descriptors CPU | warm wall | warm CPU | conversions | cost | "
          "blocked everywhere |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        runs = [_run_child(name, args.pure_python) for _ in range(args.runs)]

        def med(key):
            return statistics.median(r[key] for r in runs) * 1e3

        r = runs[0]
        if name == "import":
            print(f"| (one-time import of codegen.cost) | - | {med('cold_wall'):.1f} | {med('cold_cpu'):.1f} | - | - | - | "
                  "- | - | - |")
        elif name == "random":
            print(f"| 100 random (mean) | - | {med('cold_wall'):.1f} | {med('cold_cpu'):.1f} | {med('desc_cpu'):.1f} | "
                  f"{med('seq_wall'):.1f} (seq) | {med('seq_cpu'):.1f} (seq) | {r['conversions']} | - | {r['naive']} |")
        else:
            print(f"| {name} | {r['ops']} | {med('cold_wall'):.1f} | {med('cold_cpu'):.1f} | {med('desc_cpu'):.1f} | "
                  f"{med('warm_wall'):.1f} | "
                  f"{med('warm_cpu'):.1f} | {r['conversions']} | {r['cost']:.1f} | {r['naive']} |", flush=True)


if __name__ == "__main__":
    main()
