"""Measuring in a child process that a kernel may kill (a CUDA error poisons the context): the child, the
script itself in ``--mode measure``, prints one ``RESULT {json}`` line per kernel; where it dies, that kernel
is recorded with the child's last words and a new child goes on after it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from harness.workflow import Deadline


def measure_isolated(script: Path, args, todo: list[str], deadline: Deadline) -> dict[str, dict]:
    """Each kernel of ``todo`` measured by ``script --mode measure`` in a child process (module doc), while
    the budget lasts: {kernel: its result, or ``{"error": ...}``}."""
    results: dict[str, dict] = {}
    while todo and deadline.left() > 15:
        cmd = [sys.executable, str(script), "--mode", "measure", "--build", str(args.build),
               "--kernels", ",".join(todo), "--repeats", str(args.repeats), "--budget", str(deadline.left() - 10)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=max(10.0, deadline.left() - 5))
            out, err = proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            err = "timeout"
        results.update(parse_results(out))
        todo = [name for name in todo if name not in results]
        if todo:  # the child died (or ran out of time) at todo[0]
            results[todo[0]] = {"error": f"the measuring process died here: {err.strip()[-300:]}"}
            todo = todo[1:]
    for name in todo:
        results[name] = {"error": "not run: budget"}
    return results


def parse_results(out: str) -> dict[str, dict]:
    """The ``RESULT {json}`` lines of a measuring child, by kernel."""
    found = {}
    for line in out.splitlines():
        if line.startswith("RESULT "):
            item = json.loads(line[len("RESULT "):])
            found[item["kernel"]] = item["result"]
    return found
