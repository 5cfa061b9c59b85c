"""The benchmarks' shared code: one home each for the GPU suite's cases (``cases``), the ahead-of-time
Triton cubins and the workflow checks' launcher (``workflow``), ncu's metric names, invocation and CSV
reading (``ncu``), SASS reading (``sass``), the device / host record (``environment``), timing
(``timing``), results files (``results``), the scripts' common flags (``cli``), the ops' device cases
(``ops_cases``) and the random / fake inputs shared with the tests (``random_programs``, ``smem_cases``,
``fakes``, ``fake_cupy``); and the scripts' own logic that their tests check: the cost model's ranking and
fit (``ranking``, ``cost_fit``), the whole-kernel model's validation (``validation``), the Triton hook's
launches and report (``hook_launch``, ``hook_report``), the engine kernels' report, output comparison and
crash-isolated measuring (``engine_kernels_report``, ``cupy_outputs``, ``isolation``), the suite's
transposes (``transposes``), the SASS issue model (``sass_issue``) and the copying of device results
(``collect``).

Every script in ``benchmarks/`` runs as ``python3 benchmarks/NAME.py`` (Python puts ``benchmarks/`` first
on the path) and imports ``harness`` before the package: importing it puts this checkout's ``src/`` first,
so a script runs the tree it sits in without an install. Tests reach it the same way (``benchmarks`` is
on pytest's path) and never import a script.
"""

from __future__ import annotations

import sys
from pathlib import Path

#: ``benchmarks/``, the repository root, its ``src/``, the Triton kernel corpus, the committed results and
#: the ignored build folder.
BENCHMARKS = Path(__file__).resolve().parent.parent
ROOT = BENCHMARKS.parent
SRC = ROOT / "src"
CORPUS = ROOT / "tests" / "data" / "triton_kernels"
RESULTS = BENCHMARKS / "results"
BUILD = BENCHMARKS / "build"

if sys.path[:1] != [str(SRC)]:
    sys.path.insert(0, str(SRC))  # the one path entry the benchmarks add
