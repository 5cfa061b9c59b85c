"""The scripts' common command lines: ``seeded_main``, for a seeded benchmark whose CPU ``prepare`` compiles what
its device ``run`` launches.

Example: ``seeded_main(__doc__.splitlines()[0], prepare, run, cases=24, out="rows_out")`` parses ``--mode
{prepare,run} --seed N --cases N --out DIR --jobs N`` and calls ``prepare(seed, cases, jobs)`` or ``run(seed,
cases, out)``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Callable

__all__ = ["seeded_main"]


def seeded_main(description: str, prepare: Callable[[int, int, int], None], run: Callable[[int, int, Path], None],
                cases: int, out: str) -> None:
    """Parse the command line (module doc) and run ``prepare`` or ``run``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--mode", choices=("prepare", "run"), default="run")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cases", type=int, default=cases)
    parser.add_argument("--out", type=Path, default=Path(out))
    parser.add_argument("--jobs", type=int, default=2, help="nvcc processes at a time (prepare)")
    args = parser.parse_args()
    if args.mode == "prepare":
        prepare(args.seed, args.cases, args.jobs)
    else:
        run(args.seed, args.cases, args.out)
