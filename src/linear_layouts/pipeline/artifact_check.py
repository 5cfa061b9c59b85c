"""The last check before a rewrite is chosen: compile Triton's TTGIR and the candidate on the CPU (PTX and
cubin, Triton's bundled ptxas; about a second each) and compare what the model priced with what came out.

A candidate is refused (``ArtifactCheck.refusal``) where its compiled form

* has global-memory instructions other than the model predicted for it (``triton_model.global_access``):
  the model priced a program that is not the one that would run;
* issues more global instructions than Triton's for the same data -- narrower loads, stores or atomics --
  while the model had no measured table to price that (``priced_widths=False``);
* spills more than Triton's (ptxas's stack bytes per thread), or keeps fewer CTAs resident on an SM
  (``registers.occupancy`` from ptxas's registers, the threads and the shared memory).

``check_compiled`` runs the two compiles in this process; ``check_compiled(..., subprocess=True)`` runs
them in a child Python (``python -m linear_layouts.pipeline.artifact_check``), for a caller that is itself
inside a Triton compile (the hook's stage).

>>> ArtifactCheck.__name__
'ArtifactCheck'
"""

from __future__ import annotations

import json
import subprocess as _subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field

from linear_layouts.core.arguments import checked
from linear_layouts.core.errors import LayoutError

__all__ = ["CompiledSummary", "ArtifactCheck", "check_compiled", "compiled_summary"]


@dataclass(frozen=True)
class CompiledSummary:
    """What ptxas made of one TTGIR: its global instructions (``global_access.ptx_global_inventory``),
    registers and stack bytes per thread, and the compile's seconds."""

    inventory: Mapping[str, int]
    registers: int
    stack: int
    seconds: float = 0.0


@dataclass(frozen=True)
class ArtifactCheck:
    """Triton's and the candidate's compiled summaries and the verdict: ``refusal`` (``None``: the candidate
    passes), one line saying which rule it breaks."""

    triton: CompiledSummary
    ours: CompiledSummary
    refusal: str | None = None
    notes: tuple[str, ...] = field(default=())


def compiled_summary(ttgir: str, options: Mapping | None = None) -> CompiledSummary:
    """``ttgir`` compiled (``triton_model.compile.compile_ttgir``) and summarized."""
    from linear_layouts.triton_model.compile import compile_ttgir
    from linear_layouts.triton_model.global_access import ptx_global_inventory

    start = time.time()
    compiled = compile_ttgir(ttgir, options=dict(options or {}))
    return CompiledSummary(ptx_global_inventory(compiled.ptx), compiled.registers, compiled.stack,
                           round(time.time() - start, 2))


def _instructions(inventory: Mapping[str, int], kind: str) -> tuple[int, int]:
    """(instructions, bytes per lane summed) of ``inventory``'s ``kind`` (``ld``, ``st``, ``atom``, ...)."""
    count = moved = 0
    for key, n in inventory.items():
        if key.split(".")[0] == kind:
            count += n
            moved += n * int(key.rsplit(".", 1)[-1].rstrip("B"))
    return count, moved


@checked
def check_compiled(triton_ttgir: str, candidate_ttgir: str, *, predicted: Mapping[str, int] | None = None,
                   priced_widths: bool = True, options: Mapping | None = None, subprocess: bool = False,
                   timeout_s: float = 120.0) -> ArtifactCheck:
    """Compile both TTGIR texts and judge the candidate (module doc). ``predicted``: the model's global
    inventory of the candidate (``global_access.global_inventory``); ``priced_widths``: whether the model
    priced instruction widths from a measured table; ``options``: Triton's compile options (the JIT's)."""
    from linear_layouts.triton_model.ir_text import parse_module
    from linear_layouts.triton_model.registers import occupancy

    if subprocess:
        triton, ours = _in_child([triton_ttgir, candidate_ttgir], options, timeout_s)
    else:
        triton, ours = compiled_summary(triton_ttgir, options), compiled_summary(candidate_ttgir, options)
    notes = [f"compiled on the CPU in {triton.seconds + ours.seconds:.1f} s"]
    if predicted is not None and dict(predicted) != dict(ours.inventory):
        return ArtifactCheck(triton, ours, f"the compiled candidate's global instructions {dict(ours.inventory)} are "
                                           f"not the {dict(predicted)} the model priced", tuple(notes))
    if not priced_widths:
        for kind in ("ld", "st", "atom", "red"):
            (t_count, t_bytes), (o_count, o_bytes) = _instructions(triton.inventory, kind), \
                _instructions(ours.inventory, kind)
            if o_count > t_count and o_bytes <= t_bytes:
                return ArtifactCheck(triton, ours, f"narrower global {kind} instructions than Triton's ({t_count} -> "
                                                   f"{o_count} for {t_bytes} bytes per thread) and no measured table "
                                                   "priced them", tuple(notes))
    if ours.stack > triton.stack:
        return ArtifactCheck(triton, ours, f"spills more than Triton's ({triton.stack} -> {ours.stack} stack bytes "
                                           "per thread)", tuple(notes))
    module = parse_module(candidate_ttgir)
    threads = module.num_warps * module.threads_per_warp
    shared = _shared_bytes(triton_ttgir), _shared_bytes(candidate_ttgir)
    before = occupancy(registers=triton.registers, threads=threads, shared_bytes=shared[0])
    after = occupancy(registers=ours.registers, threads=threads, shared_bytes=shared[1])
    if after < before:
        return ArtifactCheck(triton, ours, f"fewer CTAs per SM than Triton's ({before} -> {after}: {triton.registers} -> "
                                           f"{ours.registers} registers per thread)", tuple(notes))
    return ArtifactCheck(triton, ours, None, tuple(notes))


def _shared_bytes(ttgir: str) -> int:
    from linear_layouts.pipeline.engine_compare import cost_report
    from linear_layouts.pipeline.shared_memory import shared_memory_need

    report = cost_report(ttgir)
    return shared_memory_need(report.module, report).bytes


def _in_child(texts: list[str], options: Mapping | None, timeout_s: float) -> tuple[CompiledSummary, ...]:
    """``compiled_summary`` of each text in a child Python (one JSON document in, one out)."""
    import os
    from pathlib import Path

    import linear_layouts

    payload = json.dumps({"ttgirs": texts, "options": dict(options or {})})
    source = str(Path(linear_layouts.__file__).resolve().parents[1])  # this package, wherever it was imported from
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (source, os.environ.get("PYTHONPATH", "")) if p))
    env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    try:
        proc = _subprocess.run([sys.executable, "-m", "linear_layouts.pipeline.artifact_check"], input=payload,
                               capture_output=True, text=True, timeout=timeout_s, env=env)
    except _subprocess.TimeoutExpired:
        raise LayoutError(f"the compile of the candidate took more than {timeout_s} s") from None
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise LayoutError(f"the compile of the candidate failed: {tail[:300]}")
    return tuple(CompiledSummary(**row) for row in json.loads(proc.stdout.strip().splitlines()[-1]))


def _main() -> int:
    request = json.loads(sys.stdin.read())
    rows = []
    for text in request["ttgirs"]:
        rows.append(asdict(compiled_summary(text, request.get("options"))))
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(_main())
