"""Host time per call of ``linear_layouts.ops`` on the CPU, the device mocked: what our Python dispatch costs
before PyTorch's own calls (the output's allocation, the stream) and the driver's launch.

The tensors are ``harness/fakes.py``'s PyTorch-like stand-ins (their methods return stored values) and
the driver's functions are one C function that returns 0 at once (compiled here by ``cc``; the launch is called
by the C extension ``ops._claunch`` where it is built, else through ``ctypes`` with the driver's argument types:
``LINEAR_LAYOUTS_PURE_PYTHON=1``), so the figure is the ops' own overhead: the call signature, the plan lookup,
the packing of the arguments and the foreign calls. On the device,
``ops_bench.py`` measures the whole call against PyTorch eager's (``host µs ours / eager``).

    PYTHONPATH=src python3 benchmarks/ops_host_overhead.py [--calls 20000] [--out benchmarks/results]

Writes ``ops_host_overhead.{json,md}`` under ``--out`` (``ops_host_overhead_ctypes.{json,md}`` for the ``ctypes``
launch).
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import statistics
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
import harness  # noqa: E402, F401  (puts src/ on the path)

CASES = (("transpose bf16 [256, 512], out=", (256, 512), (1, 0), 2, True),
         ("transpose fp32 [64, 64]", (64, 64), (1, 0), 4, False),
         ("permute fp16 [2, 4, 16, 8] (0, 2, 1, 3), out=", (2, 4, 16, 8), (0, 2, 1, 3), 2, True),
         ("permute fp16 [1, 64, 7, 7] (0, 2, 3, 1)", (1, 64, 7, 7), (0, 2, 3, 1), 2, False),
         ("permute uint8 [2, 3, 2, 3, 2, 3, 4] reversed (3 launches)", (2, 3, 2, 3, 2, 3, 4), (6, 5, 4, 3, 2, 1, 0), 1,
          False))


class _NullCuda:
    """``libcuda`` whose every function is ``int ll_null(void) { return 0; }`` (a foreign call that ignores its
    arguments): ``ctypes`` marshals the driver's arguments, nothing is launched."""

    def __init__(self, build: Path):
        import ctypes
        import subprocess

        build.mkdir(parents=True, exist_ok=True)
        (build / "null.c").write_text("int ll_null(void) { return 0; }\n")
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(build / "libnull.so"), str(build / "null.c")],
                       check=True)
        self._lib = ctypes.CDLL(str(build / "libnull.so"))

    def __getattr__(self, name: str):
        """Any driver function the ops name (``cuLaunchKernel``, ``cuInit``, ...): ``ll_null``, a fresh function
        object per name (each gets its own argtypes), kept."""
        import ctypes

        if not name.startswith("cu"):
            raise AttributeError(name)
        function = self._lib["ll_null"]
        function.restype = ctypes.c_int
        setattr(self, name, function)
        return function


class _Patch:
    """``monkeypatch.setattr`` outside pytest (kept for the whole run)."""

    @staticmethod
    def setattr(target, name, value) -> None:
        setattr(target, name, value)


def measure(calls: int, repeats: int = 5) -> list[dict]:
    from harness.fakes import FakeCuda, FakeTorchTensor, install

    from linear_layouts import ops
    from linear_layouts.ops import driver

    cuda = FakeCuda()
    install(_Patch, cuda)
    outputs: dict = {}
    # the output's allocation is PyTorch's own cost (torch.empty), not ours: a stand-in kept per shape
    def new_empty(self, shape):
        key = (tuple(shape), self._itemsize)
        if key not in outputs:
            outputs[key] = FakeTorchTensor(shape, self._itemsize)
        return outputs[key]

    _Patch.setattr(FakeTorchTensor, "new_empty", new_empty)
    launches = {}
    for label, shape, dims, itemsize, with_out in CASES:  # each case's launches, recorded once
        x = FakeTorchTensor(shape, itemsize)
        ops.permute(x, dims)
        launches[label] = len(cuda.launches) + len(cuda.copies)
        cuda.launches.clear()
        cuda.copies.clear()
    null = driver.Driver(_NullCuda(HERE / "build" / "null_driver"))
    null._holder.value = 7  # ll_null writes nothing: the "current context" stays the kernels' own
    _Patch.setattr(driver, "driver", lambda: null)
    if null.current_context() != 7:
        raise SystemExit("the null driver does not hold the context")
    rows = []
    for label, shape, dims, itemsize, with_out in CASES:
        x = FakeTorchTensor(shape, itemsize)
        out = FakeTorchTensor(tuple(shape[d] for d in dims), itemsize) if with_out else None
        ops.permute(x, dims, out=out)  # the first call plans and "loads"
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            for _ in range(calls):
                ops.permute(x, dims, out=out)
            times.append((time.perf_counter() - start) / calls * 1e6)
        rows.append(dict(case=label, us_per_call=statistics.median(times), launches_per_call=launches[label]))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    rows = measure(args.calls)
    import os

    from linear_layouts.ops.driver import native_module

    env = dict(date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
               python=platform.python_version(), machine=platform.processor() or platform.machine(),
               cpus=os.cpu_count(), load_average=[round(x, 1) for x in os.getloadavg()],
               launch="C extension (ops._claunch)" if native_module() else "ctypes")
    lines = [f"# Host µs per call of the ops, device mocked (CPU, Python {env['python']}, {env['date']}), launch "
             f"through {env['launch']}", "",
             "Our dispatch alone (PyTorch-like stand-in tensors, the driver's functions a C function that returns "
             f"0): the median of 5 runs of {args.calls} calls, on {env['cpus']} CPUs at load average "
             f"{env['load_average']}. Not counted: PyTorch's own calls (the output's allocation, the tensor's "
             "accessors) and the driver's work in cuLaunchKernel; `ops_bench.py` measures the whole call on the "
             "device against eager's.", "",
             "| case | µs per call | launches per call |", "|---|---|---|"]
    lines += [f"| {r['case']} | {r['us_per_call']:.2f} | {r['launches_per_call']} |" for r in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        stem = "ops_host_overhead" if native_module() else "ops_host_overhead_ctypes"
        (out / f"{stem}.json").write_text(json.dumps(dict(environment=env, rows=rows), indent=1))
        (out / f"{stem}.md").write_text(text)


if __name__ == "__main__":
    main()
