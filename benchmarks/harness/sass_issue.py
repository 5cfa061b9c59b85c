"""Issue-slot model of a loop's SASS: the cycles one SM scheduler takes per iteration when ``warps`` warps
run the same instructions.  Per scheduler: each warp issues in order; at most one instruction a cycle, the
oldest warp whose next instruction has its operands ready and its pipe free; a pipe takes a new instruction
every ``ISSUE_INTERVAL`` cycles (the integer pipe and MIO, which shuffles go through, are 16 lanes wide on
Hopper: 2 cycles a warp); a result is ready ``LATENCY`` cycles after issue.  The figures are the common
microbenchmark ones (SHFL about 23 cycles, integer ops about 4), not fitted: the model compares orders of
the same instructions, not absolute times.
"""

from __future__ import annotations

import re

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
    """Cycles per loop iteration of one scheduler running ``warps`` copies of ``program`` (the model: module doc).

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
