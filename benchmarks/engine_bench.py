"""Engine speed and quality on the CPU: time to propagate each example program (median of 5) and the
conversions left vs. the legacy "blocked everywhere" baseline, plus the same over 100 random programs
(the generator of tests/engine/random_programs.py).

Run: ``python benchmarks/engine_bench.py``.
"""

from __future__ import annotations

import datetime
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "engine"))

from linear_layouts.engine import examples, naive_conversions, propagate  # noqa: E402


def timed(fn, repeat=5):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main() -> None:
    print(f"# engine_bench — {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
          f"Python {platform.python_version()}, {platform.processor() or platform.machine()}")
    print("| program | ops | propagate (ms) | conversions | cost | blocked everywhere |")
    print("|---|---|---|---|---|---|")
    for name, build in examples.EXAMPLES.items():
        program = build()
        seconds, result = timed(lambda: propagate(program))
        print(f"| {name} | {len(program.ops)} | {seconds * 1e3:.0f} | {len(result.conversions)} | "
              f"{result.total_cost:.1f} | {naive_conversions(program)} |")
    from random_programs import random_program

    ours = naive = 0
    total = 0.0
    for seed in range(100):
        program = random_program(seed)
        t0 = time.perf_counter()
        result = propagate(program)
        total += time.perf_counter() - t0
        ours += len(result.conversions)
        naive += naive_conversions(program)
    print(f"\n100 random programs: {ours} conversions left vs {naive} blocked everywhere; "
          f"mean propagate time {total * 10:.0f} ms")


if __name__ == "__main__":
    main()
