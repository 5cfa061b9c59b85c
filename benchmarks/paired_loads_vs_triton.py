"""Paired 8/16-byte shared loads: our wavefronts, Triton 3.9's estimate and ncu (CPU; reads the device run).

For every shared-memory conversion of the GPU suite whose load is an ``ld.shared`` of 8 or 16 bytes
with paired lanes (``EmittedAccess.paired``: lane 0 or 1 of the destination layout is a broadcast),
prints the load wavefronts ncu measured (``results/gpu_suite.json``, key ``ncu``), ours
(``plan_conversion``) and Triton's implied count, ``instructions x 128-byte phases x (1 + conflicts)``
from ``get_shared_bank_conflicts`` on the same shared layout.

    PYTHONPATH=src python benchmarks/paired_loads_vs_triton.py
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
import harness  # noqa: E402, F401  (puts src/ on the path)

from harness.cases import all_cases  # noqa: E402

from linear_layouts import LayoutError  # noqa: E402
from linear_layouts.analysis.banks import shared_access  # noqa: E402
from linear_layouts.analysis.conversion import SHARED_MEMORY, plan_conversion  # noqa: E402
from linear_layouts.triton_model.interop import triton_bank_conflicts  # noqa: E402


def main() -> int:
    suite = json.loads((HERE / "results" / "gpu_suite.json").read_text())
    measured = {r["case"]: r["measured"][1] for r in suite["ncu"]["rows"] if r.get("variant") == "ours"}
    print("| case | bits | load | ncu ld | ours | Triton implied | Triton conflicts |")
    print("|---|---|---|---|---|---|---|")
    rows = ours_ok = triton_ok = skipped = 0
    for case in all_cases():
        plan = plan_conversion(case.src, case.dst, case.bits)
        if plan.kind != SHARED_MEMORY or not plan.load.ptx.startswith("ld.shared"):
            continue
        access = shared_access(plan.shared_layout, case.dst, case.bits)
        if not access.paired or case.name not in measured:
            continue
        try:
            conflicts = triton_bank_conflicts(plan.shared_layout, case.dst, case.bits)
        except LayoutError:
            skipped += 1
            continue
        implied = access.instructions * (access.unit_bytes // 4) * (1 + conflicts)
        ncu = int(measured[case.name])
        rows += 1
        ours_ok += ncu == plan.load.wavefronts
        triton_ok += ncu == implied
        print(f"| {case.name} | {case.bits} | {plan.load.ptx} x{plan.load.instructions} | "
              f"{ncu} | {plan.load.wavefronts} | {implied} | {conflicts} |")
    print(f"\n{rows} paired loads measured: ours = ncu on {ours_ok}, Triton's implied count = ncu on {triton_ok}"
          f" ({skipped} skipped: Triton 3.9 aborts on them)")
    return 0 if ours_ok == rows else 1


if __name__ == "__main__":
    raise SystemExit(main())
