"""What the three workflow GPU checks share (gpu_shared_advice.py, gpu_kernels.py, gpu_cute.py):
ahead-of-time Triton cubins, a CuPy launcher for them, one ncu process per check under a deadline,
and the environment record.

Why ahead of time: the device runs Triton 3.6, and Triton 3.6's compiler runs on this CPU machine as well
(``pip install --no-deps --target DIR triton==3.6.0``; ``gpu_workflow_prepare.sh``): ``triton.compile``
for ``GPUTarget("cuda", 90, 32)`` gives the very cubin the device's JIT would build (same compiler, same
bundled ptxas, the JIT's specialization from ``KernelSpec.specialization``). The device then only loads
the cubins with CuPy and launches them -- no PyTorch import, no JIT, seconds instead of minutes.

A Triton 3.6 kernel's parameters are its non-constexpr arguments followed by two pointers (global scratch,
profile scratch), allocated per CTA as Triton's launcher does when the metadata asks for them.
"""

from __future__ import annotations

import csv
import io
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUILD = HERE / "build"
METRIC_LD = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
METRIC_ST = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
_META_KEYS = ("name", "shared", "num_warps", "num_ctas", "global_scratch_size", "global_scratch_align",
              "profile_scratch_size", "profile_scratch_align", "triton_version", "cluster_dims")


# ---------------------------------------------------------------------------------------------- CPU side
def triton_compile(source, options: dict) -> dict:
    """``triton.compile(source)`` for sm_90 on the CPU: cubin bytes, PTX, TTGIR and the launch metadata."""
    import triton
    from triton.backends.compiler import GPUTarget

    compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32), options=dict(options))
    meta = compiled.metadata._asdict() if hasattr(compiled.metadata, "_asdict") else dict(compiled.metadata)
    meta = {k: meta[k] for k in _META_KEYS if k in meta}
    meta["triton_version"] = meta.get("triton_version", triton.__version__)
    ptx = compiled.asm["ptx"]
    entry = ptx[ptx.index(".entry"):]
    meta["params"] = entry[:entry.index(")")].count(".param")  # user arguments + the two scratch pointers
    return dict(cubin=compiled.asm["cubin"], ptx=compiled.asm["ptx"], ttgir=compiled.asm.get("ttgir", ""), meta=meta)


def save_cubin(directory: Path, key: str, compiled: dict, **extra) -> dict:
    """Write ``key.cubin`` and return the JSON-able record (metadata + ``extra``) that points at it."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{key}.cubin").write_bytes(compiled["cubin"])
    return dict(key=key, cubin=f"{key}.cubin", meta=compiled["meta"], **extra)


def triton_version_or_die(wanted: str = "3.6") -> str:
    """The installed Triton's version; a clear exit when it is not ``wanted`` (the device's)."""
    import triton

    if not triton.__version__.startswith(wanted):
        sys.exit(f"prepare needs Triton {wanted} (the device's) for the cubins, found {triton.__version__} at "
                 f"{triton.__file__}: run benchmarks/gpu_workflow_prepare.sh (it installs {wanted} under /tmp)")
    return triton.__version__


def prepare_build(directory: str | Path, any_triton: bool) -> tuple[str, Path]:
    """(Triton version, build folder emptied of old cubins) for a prepare step: Triton 3.6 unless
    ``any_triton`` (the CPU tests, with 3.9)."""
    version = __import__("triton").__version__ if any_triton else triton_version_or_die("3.6")
    build = Path(directory)
    build.mkdir(parents=True, exist_ok=True)
    for old in build.glob("*.cubin"):
        old.unlink()
    return version, build


# ---------------------------------------------------------------------------------------------- device side
class TritonCubin:
    """A Triton cubin loaded with CuPy: ``launch(grid, args)`` with the scratch pointers appended."""

    def __init__(self, directory: Path, record: dict):
        import cupy

        self.cupy = cupy
        self.meta = record["meta"]
        module = cupy.RawModule(path=str(Path(directory) / record["cubin"]))
        self.function = module.get_function(self.meta["name"])
        self.shared = int(self.meta.get("shared", 0))
        if self.shared > 48 * 1024:
            self.function.max_dynamic_shared_size_bytes = self.shared
        self.threads = 32 * int(self.meta["num_warps"])
        self._keep = module

    def _scratch(self, size_key: str, ctas: int):
        size = int(self.meta.get(size_key, 0) or 0)
        if size <= 0:
            return 0
        return self.cupy.zeros(size * ctas * int(self.meta.get("num_ctas", 1) or 1), dtype=self.cupy.uint8)

    def launch(self, grid: tuple[int, ...], args: list) -> None:
        import numpy as np

        if "params" in self.meta and len(args) + 2 != self.meta["params"]:
            raise ValueError(f"{self.meta['name']}: {len(args)} arguments + 2 scratch pointers, but the cubin's "
                             f"entry takes {self.meta['params']} parameters")
        grid = tuple(grid) + (1,) * (3 - len(grid))
        ctas = grid[0] * grid[1] * grid[2]
        scratch = [self._scratch("global_scratch_size", ctas), self._scratch("profile_scratch_size", ctas)]
        pointers = [np.uint64(0) if isinstance(s, int) else s for s in scratch]
        self.function(grid, (self.threads, 1, 1), tuple(args) + tuple(pointers), shared_mem=self.shared)


def run_ncu(child: list[str], regex: str, metrics: list[str], launch_count: int, timeout: float) -> dict:
    """One ncu process over ``child`` (a command that launches the kernels once each): the profiled
    launches in order, each ``{"kernel": name, "metrics": {name: value}}``; ``rc``, ``seconds``, and the
    output's tail when something went wrong. A timeout keeps what ncu wrote so far."""
    log = Path("/tmp") / f"ncu_{os.getpid()}_{int(time.time())}.csv"
    cmd = ["ncu", "--csv", "--print-units", "base", "--log-file", str(log), "--metrics", ",".join(metrics),
           "-k", regex, "--launch-count", str(launch_count)] + child
    start = time.time()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=max(5.0, timeout))
        rc, tail = proc.returncode, (proc.stdout + proc.stderr)[-2000:]
    except subprocess.TimeoutExpired as exc:
        rc, tail = 124, f"ncu stopped at the budget ({timeout:.0f} s): {str(exc)[-300:]}"
    except OSError as exc:
        rc, tail = 127, f"ncu could not start: {exc}"
    text = log.read_text() if log.exists() else ""
    launches: dict[str, dict] = {}
    lines = [line for line in text.splitlines() if line.startswith('"')]
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        try:
            value = float(row.get("Metric Value", "nan").replace(",", ""))
        except ValueError:
            continue
        entry = launches.setdefault(row.get("ID", ""), {"kernel": row.get("Kernel Name", "").split("(")[0].strip(),
                                                         "metrics": {}})
        entry["metrics"][row.get("Metric Name", "")] = value
    ordered = [launches[k] for k in sorted(launches, key=lambda s: int(s) if s.isdigit() else -1)]
    ok = rc == 0 and len(ordered) == launch_count
    return dict(rc=rc, seconds=round(time.time() - start, 1), launches=ordered, tail="" if ok else tail)


def environment(compiled_by: str | None = None) -> dict:
    """Device, date and versions (the device's tools; ``compiled_by``: the Triton that built the cubins)."""
    env = dict(date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), python=platform.python_version())
    for cmd, key in ((["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"], "gpu"),
                     (["nvcc", "--version"], "nvcc"), (["ncu", "--version"], "ncu")):
        try:
            env[key] = subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip().splitlines()[-1]
        except (OSError, subprocess.TimeoutExpired, IndexError):
            env[key] = "unavailable"
    for mod in ("cupy", "numpy", "triton", "torch"):
        try:
            env[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001 - a missing or broken module is recorded, not fatal
            env[mod] = "absent"
    if compiled_by:
        env["cubins_compiled_by"] = compiled_by
    return env


def require_gpu() -> None:
    """Exit with one clear line where there is no CUDA device (the measure modes on the CPU)."""
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            return
        reason = "no CUDA device"
    except Exception as exc:  # noqa: BLE001 - ImportError, CUDARuntimeError, ...
        reason = f"{type(exc).__name__}: {str(exc)[:200]}"
    sys.exit(f"measure mode needs an NVIDIA GPU with CuPy: {reason} (everything before this step ran; "
             f"this is where a CPU dry run stops)")


class Deadline:
    """Seconds left of ``--budget`` (measured from construction)."""

    def __init__(self, budget: float):
        self.end = time.time() + budget
        self.budget = budget

    def left(self) -> float:
        return self.end - time.time()


def start_measure(args) -> tuple["Deadline", Path, dict, dict]:
    """(deadline of ``--budget``, build folder, its ``plan.json``, environment) for a measure step;
    exits with one line where there is no GPU."""
    deadline = Deadline(args.budget)
    build = Path(args.build)
    plan = json.loads((build / "plan.json").read_text())
    require_gpu()
    return deadline, build, plan, environment(plan.get("compiled_by"))


def write_outputs(out: Path, stem: str, data: dict, markdown: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.json").write_text(json.dumps(data, indent=1, default=str))
    (out / f"{stem}.md").write_text(markdown)
