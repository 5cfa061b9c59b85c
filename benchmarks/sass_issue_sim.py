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

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
import harness  # noqa: E402, F401  (puts src/ on the path)

#: the pipe each SASS opcode issues to (anything else: the integer pipe)
PIPE = {"SHFL": "mio", "IMAD": "fma", "FFMA": "fma", "UIADD3": "uniform", "BRA": "branch"}
#: cycles between two instructions a pipe of one scheduler accepts
ISSUE_INTERVAL = {"alu": 2, "mio": 2, "fma": 2, "uniform": 1, "branch": 1}
#: cycles from issue until the result can be read
LATENCY = {"SHFL": 23}
DEFAULT_LATENCY = 4
_REG = re.compile(r"\b(R\d+|P\d|UR\d+)\b")


def loop_program(sass: str) -> list[tuple[str, str, tuple[str, ...]]]:
    """(opcode, destination, sources) of each instruction of the longest loop of ``cuobjdump -sass`` text
    (the body between a backward branch and its target); a guard predicate counts as a source.

    >>> text = '''/*0000*/ SEL R1, R2, R3, !P0 ;
    ... /*0010*/ SHFL.IDX PT, R4, R1, R0, 0x1f ;
    ... /*0020*/ @!P1 BRA 0x0 ;'''
    >>> loop_program(text)
    [('SEL', 'R1', ('R2', 'R3', 'P0')), ('SHFL', 'R4', ('R1', 'R0'))]
    """
    from harness.sass import loop_rows  # noqa: PLC0415

    program = []
    for _, op, args, guard in loop_rows(sass):
        name, regs = op.split(".")[0], _REG.findall(args)
        if name == "BRA" or not regs:
            continue
        program.append((name, regs[0], tuple(regs[1:]) + tuple(_REG.findall(guard))))
    return program


def issue_cycles(program: list[tuple[str, str, tuple[str, ...]]], warps: int = 2, iterations: int = 6) -> float:
    """Cycles per loop iteration of one scheduler running ``warps`` copies of ``program`` (module doc).

    >>> chain = [("SHFL", "R1", ("R0",)), ("SEL", "R2", ("R1",))]   # the select waits for the shuffle
    >>> apart = [("SHFL", "R1", ("R0",)), ("SEL", "R2", ("R3",))]   # independent
    >>> issue_cycles(chain, warps=1, iterations=1), issue_cycles(apart, warps=1, iterations=1)
    (24.0, 2.0)
    """
    steps = program * iterations
    pc, ready, busy, cycle = [0] * warps, [dict() for _ in range(warps)], {}, 0
    while any(p < len(steps) for p in pc):
        for w in sorted(range(warps), key=pc.__getitem__):
            if pc[w] >= len(steps):
                continue
            op, dst, srcs = steps[pc[w]]
            pipe = PIPE.get(op, "alu")
            if busy.get(pipe, 0) > cycle or any(ready[w].get(s, 0) > cycle for s in srcs):
                continue
            busy[pipe] = cycle + ISSUE_INTERVAL[pipe]
            ready[w][dst] = cycle + LATENCY.get(op, DEFAULT_LATENCY)
            pc[w] += 1
            break
        cycle += 1
    return cycle / iterations


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
