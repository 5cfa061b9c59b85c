"""CPU, no GPU: SASS of our conversion-loop kernels against Triton's for the same pairs (issue 12, the
shared-memory path): static instruction counts from ``cuobjdump -sass`` of the sm_90 cubins.

    PYTHONPATH=src python benchmarks/shared_path_sass.py [--cases random_029,wide_001,...] [--out FILE]

Ours: ``emit_conversion_kernel`` with the plan's forward and backward steps (the kernel the GPU
suite times). Triton: the Gluon kernel of ``gpu_gluon_convert`` (load, convert_layout, the same
round-trip loop, store) compiled by Triton 3.9 to PTX for sm_90a, assembled by nvcc's ptxas (its
``.version`` line lowered to what that ptxas reads). Both kernels hold one conversion before the
loop and one round trip in it; counts are static (per thread, whole kernel). Also: registers per
thread and spills (LDL/STL), from ``cuobjdump -res-usage`` and the SASS.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
import harness  # noqa: E402, F401  (puts src/ on the path)

from harness.cases import all_cases  # noqa: E402
from harness.sass import dump, opcode_counts, resources  # noqa: E402

from linear_layouts.analysis.conversion import plan_conversion  # noqa: E402
from linear_layouts.codegen.kernel import emit_conversion_kernel  # noqa: E402
from linear_layouts.codegen.plan import conversion_step, kernel_name  # noqa: E402
from linear_layouts.codegen.ptx import compile_cubin, find_nvcc  # noqa: E402

KEYS = ("STS", "LDS", "STSM", "LDSM", "SHFL", "SEL", "PRMT", "BAR", "LDL", "STL")
DEFAULT = "random_029,wide_001,wide_005,random_109,seed_transpose_fp32"


def sass_counts(cubin: Path) -> dict:
    ops = opcode_counts(cubin)
    registers, _ = resources(dump(cubin, "-res-usage"))
    return {"ops": ops, "total": sum(ops.values()), "registers": registers}


def triton_cubin(case, work: Path) -> Path:
    from gpu_gluon_convert import gluon_ptx  # noqa: PLC0415

    ptx = re.sub(r"\.version \d+\.\d+", ".version 8.7", gluon_ptx(case.src, case.dst, case.bits // 8, case.warps))
    src, out = work / f"{case.name}.ptx", work / f"{case.name}.cubin"
    src.write_text(ptx)
    ptxas = Path(find_nvcc()).with_name("ptxas")
    subprocess.run([str(ptxas), "-arch=sm_90a", "-O3", str(src), "-o", str(out)], check=True)
    return out


def summary(c: dict) -> str:
    parts = [f"{k} {n}" for k, n in sorted(c["ops"].items()) if k.split(".")[0] in KEYS]
    return ", ".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default=DEFAULT)
    ap.add_argument("--out", default=str(HERE / "results" / "shared_path_sass.md"))
    args = ap.parse_args()
    cases = {c.name: c for c in all_cases()}
    lines = ["# SASS of the conversion loop, ours vs Triton 3.9 (sm_90, static counts per thread)", "",
             "Reproduce (CPU): `PYTHONPATH=src python benchmarks/shared_path_sass.py`. Each kernel: one conversion, "
             "then a loop of one round trip (back, forth), as the GPU suite times them.", "",
             "| case | bits | warps | our plan (forward) | ours: SASS | Triton: SASS | ours / Triton total | registers ours / Triton |",
             "|---|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.cases.split(","):
            case = cases[name]
            fwd, bwd = conversion_step(case.src, case.dst, case.bits), conversion_step(case.dst, case.src, case.bits)
            kernel = emit_conversion_kernel(kernel_name("ll_sass", name), case.src, case.dst, case.bits // 8, fwd, bwd)
            ours = sass_counts(compile_cubin(kernel.source))
            theirs = sass_counts(triton_cubin(case, Path(tmp)))
            plan = plan_conversion(case.src, case.dst, case.bits)
            counts = ", ".join(f"{k} x{n}" for k, n in sorted(plan.instruction_counts().items()))
            row = (f"| {name} | {case.bits} | {case.warps} | {plan.kind.value}: {counts} | {summary(ours)} | "
                   f"{summary(theirs)} | {ours['total']} / {theirs['total']} | {ours['registers']} / {theirs['registers']} |")
            print(row, flush=True)
            lines.append(row)
    Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
