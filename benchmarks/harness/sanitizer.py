"""compute-sanitizer around a child process: the command, its exit code and time, and the lines of its output that
summarize (``SUMMARY`` / ``WRONG``), for the benchmarks that sanitize kernels (``ops_sanitize``, ``tune_sanitize``)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path


def sanitize(tool: str, child: list[str], timeout: int, env: dict | None = None, tail: int = 1500) -> dict:
    """``compute-sanitizer --tool tool`` (racecheck reporting every hazard) running ``child`` (argv) within
    ``timeout`` seconds: ``{tool, rc, seconds, summary, tail}`` (rc -1 on timeout; ``tail``: the output's last
    characters)."""
    cmd = ["compute-sanitizer", "--tool", tool, "--print-limit", "20"]
    if tool == "racecheck":
        cmd += ["--racecheck-report", "all"]
    start = time.time()
    try:
        proc = subprocess.run(cmd + child, capture_output=True, text=True, timeout=timeout, env=env)
        rc, out = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as error:
        rc, out = -1, f"timeout after {timeout} s: {(error.stdout or b'')[-tail:]!r}"
    summary = [line for line in out.splitlines() if "SUMMARY" in line or "WRONG" in line]
    return dict(tool=tool, rc=rc, seconds=round(time.time() - start, 1), summary=summary[-10:], tail=out[-tail:])


def sanitize_all(child: list[str], timeout: int, out: Path, env: dict | None = None, tail: int = 1500) -> list[dict]:
    """``sanitize`` with memcheck then racecheck; the results written to ``out`` (JSON) and a line each printed."""
    results = [sanitize(tool, child, timeout, env, tail) for tool in ("memcheck", "racecheck")]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1))
    for r in results:
        print(f"{r['tool']}: rc {r['rc']}, {r['seconds']} s: " + " / ".join(r["summary"]), flush=True)
    return results
