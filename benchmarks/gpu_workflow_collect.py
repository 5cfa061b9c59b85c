"""Copy the device results of ``benchmarks/gpu_workflow_run.sh OUT`` into benchmarks/results/:

    OUT/advice/gpu_shared_advice.{json,md} -> benchmarks/results/gpu_shared_advice.{json,md}   (issue 14)
    OUT/kernels/gpu_kernels.{json,md}      -> benchmarks/results/gpu_kernels.{json,md}         (issue 15)
    OUT/cute/gpu_cute.{json,md}            -> benchmarks/results/gpu_cute.{json,md}            (issue 16)

Usage: ``python3 benchmarks/gpu_workflow_collect.py OUT`` (OUT: the folder the device tool's files landed in,
i.e. its ``files_at``; the script also finds the three folders one or two levels below it). Prints each
file's summary line; copies only results that came from a device (a dry run's are refused).
"""

from __future__ import annotations

import sys
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)
from harness.collect import collect


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__)
        return 2
    lines = collect(Path(argv[0]))
    print("\n".join(lines))
    return 0 if all("copied" in ln for ln in lines) else 1


if __name__ == "__main__":
    sys.exit(main())
