"""The benchmark scripts that run on the CPU still run against the package as it is (each in its own process, as a
user starts it): the mocked dispatch's host overhead, and the held-out draw's listing. They time nothing here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=f"{ROOT / 'src'}{os.pathsep}{ROOT / 'benchmarks'}")
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_host_overhead_runs_on_the_null_driver(tmp_path):
    done = _run("benchmarks/ops_host_overhead.py", "--calls", "20", "--out", str(tmp_path), tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [line for line in (tmp_path / "ops_host_overhead.md").read_text().splitlines() if line.startswith("| t")
            or line.startswith("| p")]
    assert len(rows) == 5 and all(float(row.split("|")[2]) > 0 for row in rows)


def test_heldout_lists_its_draw(tmp_path):
    done = _run("benchmarks/ops_heldout.py", "--mode", "list", "--seed", "50", "--autotune", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert len(lines) == 32 and lines[1].startswith("('3-D', (360, 201, 345), (1, 2, 0), 'float32')")


def test_heldout_and_cast_tuning_plan_their_kernels(tmp_path):
    """What ``--mode prepare`` would compile, planned without compiling: the held-out draw's kernels (the planner's,
    the scanned tiles', the tuning's candidates') and the cast tuning's choices."""
    code = ("import ops_heldout, cast_tune_bench\n"
            "from harness import ops_cases\n"
            "from linear_layouts.ops.kernels import GridShape\n"
            "print(len(ops_heldout.kernel_sources(50, ops_heldout.Draw(large=2, small=2))))\n"
            "device = GridShape(ops_cases.SMS, ops_cases.L2_BYTES)\n"
            "print(sorted(cast_tune_bench.choices(4095, 11007, 'bf16', 1 << 40, 2 << 40, 3 << 40, 4 << 40, device)))\n")
    done = _run("-c", code, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    count, labels = done.stdout.splitlines()
    assert int(count) > 10 and labels == "['chunked', 'flat', 'realigned', 'scalar']"
