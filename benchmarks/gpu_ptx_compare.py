"""CPU comparison (no GPU): instruction counts of our conversion kernels against the PTX Triton
generates for ``gl.convert_layout`` between the same layouts on sm_90 (issue 5, item 6).

    PYTHONPATH=src python benchmarks/gpu_ptx_compare.py [--random N] [--out benchmarks/results/gpu_ptx_compare.md]

Both kernels do load(src) -> one conversion -> store(dst) on one tile.  Counted (static, per thread,
in PTX): shared stores/loads, stmatrix/ldmatrix, shfl.sync, bar.sync, and all instructions of the
kernel body.  Also checks that our PTX holds exactly the instructions the plan predicts.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
import harness  # noqa: E402, F401  (puts src/ on the path)

from gpu_gluon_convert import gluon_ptx  # noqa: E402
from harness.cases import in_warp_cases, named_cases, random_cases  # noqa: E402

from linear_layouts.codegen.kernel import emit_conversion_kernel  # noqa: E402
from linear_layouts.codegen.plan import conversion_step, kernel_name  # noqa: E402
from linear_layouts.codegen.ptx import compile_ptx, count_ptx  # noqa: E402


def summarize(ptx: str) -> dict[str, int]:
    c = count_ptx(ptx, ("st.shared", "ld.shared", "stmatrix", "ldmatrix", "shfl.sync", "bar.sync"))
    body = [l.strip() for l in ptx.split(".entry", 1)[-1].splitlines()]
    total = sum(1 for l in body if l and l.endswith(";") and not l.startswith((".", "//", "{", "}")))
    out = {
        "st.shared": sum(n for k, n in c.items() if k.startswith("st.shared")),
        "ld.shared": sum(n for k, n in c.items() if k.startswith("ld.shared")),
        "stmatrix": sum(n for k, n in c.items() if k.startswith("stmatrix")),
        "ldmatrix": sum(n for k, n in c.items() if k.startswith("ldmatrix")),
        "shfl": sum(n for k, n in c.items() if k.startswith("shfl")),
        "bar": sum(n for k, n in c.items() if k.startswith("bar")),
        "total": total,
    }
    out["kinds"] = ", ".join(f"{k} x{n}" for k, n in sorted(c.items()) if not k.startswith("bar"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--random", type=int, default=16)
    ap.add_argument("--out", default=str(HERE / "results" / "gpu_ptx_compare.md"))
    args = ap.parse_args()
    cases = named_cases() + random_cases(args.random) + in_warp_cases(6)
    rows = []
    mismatches = []
    for case in cases:
        step = conversion_step(case.src, case.dst, case.bits)
        kernel = emit_conversion_kernel(kernel_name("ll_cmp", case.name), case.src, case.dst, case.bits // 8, step)
        ours = summarize(compile_ptx(kernel.source))
        got = count_ptx(compile_ptx(kernel.source))
        for op, n in step.instruction_counts().items():
            if got[op] != n:
                mismatches.append(f"{case.name}: {op} predicted {n}, PTX has {got[op]}")
        try:
            theirs = summarize(gluon_ptx(case.src, case.dst, case.bits // 8, case.warps, once=True))
        except Exception as exc:  # noqa: BLE001
            theirs = {"error": repr(exc)[:120]}
        rows.append((case, type(step).__name__, ours, theirs))
        print(case.name, ours, theirs, flush=True)
    import triton

    lines = [
        "# Instruction counts: our conversion kernels vs Triton's convert_layout (PTX, sm_90, no GPU)", "",
        f"Generated {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} with Triton {triton.__version__} (CPU "
        "compile for sm_90) and nvcc for ours; static counts per thread, one conversion between the same "
        "layouts (load, convert, store). Reproduce: `PYTHONPATH=src python benchmarks/gpu_ptx_compare.py`.", "",
        f"Plan predictions vs our PTX: {len(cases) - len({m.split(':')[0] for m in mismatches})} / {len(cases)} "
        "kernels hold exactly the predicted shared-memory / shuffle instructions."
        + ("" if not mismatches else " Mismatches: " + "; ".join(mismatches[:10])), "",
        "| case | ours: plan | ours st/ld.shared | ours st/ldmatrix | ours shfl | ours total | Triton st/ld.shared | "
        "Triton st/ldmatrix | Triton shfl | Triton total | ours | Triton |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for case, kind, o, t in rows:
        if "error" in t:
            tcols = ["error"] * 4 + [t["error"]]
        else:
            tcols = [f"{t['st.shared']}/{t['ld.shared']}", f"{t['stmatrix']}/{t['ldmatrix']}", str(t["shfl"]),
                     str(t["total"]), t["kinds"]]
        lines.append(f"| {case.name} | {kind} | {o['st.shared']}/{o['ld.shared']} | {o['stmatrix']}/{o['ldmatrix']} | "
                     f"{o['shfl']} | {o['total']} | {' | '.join(tcols[:4])} | {o['kinds']} | {tcols[4]} |")
    lines += ["", "Case descriptions:", ""] + [f"- {c.name}: {c.description}" for c, *_ in rows]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}; {len(mismatches)} mismatches")


if __name__ == "__main__":
    main()
