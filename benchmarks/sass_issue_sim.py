"""Issue-slot simulation of a conversion loop's SASS: why kernels with equal instruction counts run at
different speeds (the in-warp pairs where ours is a few percent slower than Triton's, issue 12).

The suite's conversion loop runs 1056 one-warp CTAs: 8 warps per SM, 2 per scheduler.  Both compilers'
loops are there throughput-bound on the integer pipe (SEL, LOP3), and what differs between two loops of
the same instructions is the bubbles ptxas's order leaves while a pipe waits on a shuffle.  The model,
per scheduler: ``warps`` warps, each issuing in order; at most one instruction a cycle, the oldest
warp whose next instruction has its operands ready and its pipe free; a pipe takes a new instruction
every ``ISSUE_INTERVAL`` cycles (the integer pipe and MIO, which shuffles go through, are 16 lanes wide
on Hopper: 2 cycles a warp); a result is ready ``LATENCY`` cycles after issue.  The figures are the
common microbenchmark ones (SHFL about 23 cycles, integer ops about 4), not fitted: the point is the
order, not the absolute time.

On the 2026-11-27 09:25 UTC measurements (``shuffle_order_experiment.md``) the model's ratios follow the
measured ones: ours / Triton for random_168 1.052 (measured 1.041), random_045 1.018 (1.037), random_069
1.003 (0.986), random_011 0.995 (0.985), random_146 1.026 (0.994); and the demand order / emitter order of
random_069 1.120 (measured 1.166), random_152 1.100 (1.145), random_068 0.962 (0.962).

    PYTHONPATH=src:/tmp/triton-3.6.0 python3 benchmarks/sass_issue_sim.py random_168 random_045

prints, for each named suite pair, our loop's and Triton 3.6's: instructions, simulated cycles per
iteration, and their ratio (CPU only: nvcc, Triton 3.6's compiler, cuobjdump).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
import harness  # noqa: E402, F401  (puts src/ on the path)
from harness.sass_issue import issue_cycles, loop_program  # noqa: E402


def main(names: list[str]) -> None:
    import tempfile  # noqa: PLC0415

    from gpu_suite import build_variants, suite_cases  # noqa: PLC0415
    from harness.sass import dump  # noqa: PLC0415
    from shuffle_sass_loop import triton_counts  # noqa: PLC0415

    from linear_layouts.codegen.ptx import compile_cubin  # noqa: PLC0415

    cases = [c for c in suite_cases(False) if c.name in names]
    unknown = sorted(set(names) - {c.name for c in cases})
    if not names or unknown:
        print(f"sass_issue_sim: name suite pairs (e.g. random_168); not in the suite: {', '.join(unknown) or '(none named)'}",
              file=sys.stderr)
        sys.exit(2)
    work = Path(tempfile.mkdtemp(prefix="sass_issue_sim_"))
    for v in build_variants(cases, 0):
        if v.variant != "ours" or v.step_kind != "warp shuffle":
            continue
        ours = compile_cubin(v.kernel.source)
        triton_counts(v.case, work)
        sims = {}
        for side, cubin in (("ours", ours), ("triton", work / f"{v.case.name}.triton.cubin")):
            program = loop_program(dump(cubin))
            sims[side] = (len(program), issue_cycles(program))
        print(f"{v.case.name}: ours {sims['ours'][0]} instructions {sims['ours'][1]:.1f} cycles, Triton "
              f"{sims['triton'][0]} instructions {sims['triton'][1]:.1f} cycles, ours / Triton "
              f"{sims['ours'][1] / sims['triton'][1]:.3f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
