"""SASS read with ``cuobjdump``: which ``cuobjdump``, a kernel's instruction lines, its longest loop, its
opcode counts and its resources (``-res-usage``). Compiling to a cubin is the package's
(``linear_layouts.codegen.ptx.compile_cubin``: nvcc, cached and verified)."""

from __future__ import annotations

import os
import re
import subprocess
from collections import Counter
from pathlib import Path

#: a SASS line: address, guard predicate (``@!P1``, optional), opcode, operands
LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(?P<guard>@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)([^;]*);")


def cuobjdump() -> str:
    """``$CUOBJDUMP``, the one beside nvcc or on PATH, else the one in Triton's wheel."""
    from linear_layouts.codegen.ptx import find_cuobjdump

    tool = os.environ.get("CUOBJDUMP") or find_cuobjdump()
    if tool:
        return tool
    import triton  # noqa: PLC0415  (Triton ships one)

    return str(Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump")


def dump(cubin: Path | str, what: str = "-sass") -> str:
    """``cuobjdump WHAT CUBIN``'s output (``-sass``, ``-res-usage``)."""
    return subprocess.run([cuobjdump(), what, str(cubin)], capture_output=True, text=True, check=True).stdout


def opcodes(sass: str) -> list[str]:
    """Each instruction's opcode with its modifiers, in order (``STS.128``, ``@!P0 LDS.64`` -> ``LDS.64``).

    >>> opcodes("        /*0010*/  @!P0 LDS.64 R6, [R3] ;\\n        /*0020*/  STS.128 [R2], R4 ;")
    ['LDS.64', 'STS.128']
    """
    return [m.group(3) for m in map(LINE.search, sass.splitlines()) if m]


def loop_rows(sass: str) -> list[tuple[int, str, str, str]]:
    """(address, opcode, operands, guard) of each instruction of the longest loop of ``cuobjdump -sass``
    text: the body between a backward branch and its target (the branch included)."""
    rows = [(int(m.group(1), 16), m.group(3), m.group(4), m.group("guard") or "")
            for m in map(LINE.search, sass.splitlines()) if m]
    best: list = []
    for addr, op, args, _ in rows:
        target = re.search(r"0x([0-9a-f]+)", args) if op.startswith("BRA") else None
        if target and int(target.group(1), 16) < addr:  # (a branch to itself ends the kernel: no loop)
            body = [r for r in rows if int(target.group(1), 16) <= r[0] <= addr]
            if len(body) > len(best):
                best = body
    return best


def resources(res_usage: str) -> tuple[int | None, int | None]:
    """(registers per thread, stack bytes) from ``cuobjdump -res-usage`` text (None where absent).

    >>> resources("Function k:\\nREG:40 STACK:16 SHARED:0 LOCAL:0")
    (40, 16)
    """
    registers = re.search(r"REG:(\d+)", res_usage)
    stack = re.search(r"STACK:(\d+)", res_usage)
    return (int(registers.group(1)) if registers else None), (int(stack.group(1)) if stack else None)


def opcode_counts(cubin: Path | str) -> Counter[str]:
    """Count of each opcode (with modifiers) in ``cubin``'s SASS."""
    return Counter(opcodes(dump(cubin)))
