"""What the workflow GPU checks share (gpu_shared_advice.py, gpu_kernels.py, gpu_cute.py,
gpu_engine_kernels.py, gpu_triton_hook.py): ahead-of-time Triton cubins, a CuPy launcher for them, and a
deadline for the measure step (ncu: ``harness.ncu``; the record: ``harness.environment``).

Why ahead of time: the device runs Triton 3.6, and Triton 3.6's compiler runs on this CPU machine as well
(``pip install --no-deps --target DIR triton==3.6.0``; ``gpu_workflow_prepare.sh``): ``triton.compile``
for ``GPUTarget("cuda", 90, 32)`` gives the very cubin the device's JIT would build (same compiler, same
bundled ptxas, the JIT's specialization from ``KernelSpec.specialization``). The device then only loads
the cubins with CuPy and launches them -- no PyTorch import, no JIT, seconds instead of minutes.

A Triton 3.6 kernel's parameters are its non-constexpr arguments followed by two pointers (global scratch,
profile scratch), allocated per CTA as Triton's launcher does when the metadata asks for them.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from .environment import environment

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
    return deadline, build, plan, environment(compiled_by=plan.get("compiled_by"))
