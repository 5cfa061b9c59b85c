"""The ops' kernels built by NVRTC (where nvcc is absent) against the same kernels built by nvcc (device).

Where a PyTorch user has no CUDA toolkit, ``codegen.ptx.kernel_compiler`` compiles with NVRTC in-process. Its
cubins hold the same kernels, the instructions at times allocated otherwise (the shared-memory base computed in
64 bits); this times, for each case, both builds together (``ops_bench._time_together``), checks both outputs
bit for bit (against PyTorch for the permutations, and against each other for the cast-transpose), and times a
first call in a fresh process without CuPy, by each compiler, with an empty kernel cache.

    PYTHONPATH=src:benchmarks python3 benchmarks/nvrtc_bench.py --out DIR     # device
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import harness  # noqa: F401  (puts src/ on the path)

#: Permutations (shape, dims, dtype), one or more of each kernel family: the tiled transposes (16-byte and narrow
#: vectors), the byte transpose, the chunked transpose, rows, NCHW -> NHWC.
PERMUTES = (((8192, 8192), (1, 0), "bfloat16"), ((4096, 4096), (1, 0), "float32"),
            ((8192, 8192), (1, 0), "float8_e4m3fn"), ((6049, 8459), (1, 0), "uint8"),
            ((4097, 3001), (1, 0), "float16"), ((8, 2048, 32, 128), (0, 2, 1, 3), "bfloat16"),
            ((32, 256, 56, 56), (0, 2, 3, 1), "float16"), ((32, 56, 56, 256), (0, 3, 1, 2), "float32"))
#: Cast-transposes (m, n, input): aligned, and odd (the flat cast and the byte transpose).
CASTS = ((8192, 8192, "bfloat16"), (4096, 11008, "float32"), (4095, 11007, "bfloat16"))

_FIRST_CALL = r"""
import json, sys, time
sys.modules["cupy"] = None  # a PyTorch user without CuPy
import torch
from linear_layouts import ops
from linear_layouts.ops import launch
x = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
out = {}
for label, call in (("transpose", lambda: ops.transpose(x)),
                    ("cast_transpose", lambda: ops.cast_transpose(x, torch.float8_e4m3fn, 0.5))):
    for attempt in ("first call", "second call"):
        torch.cuda.synchronize(); start = time.perf_counter(); call(); torch.cuda.synchronize()
        out[f"{label}, {attempt}"] = round(time.perf_counter() - start, 4)
assert torch.equal(ops.transpose(x), x.t().contiguous())
out["kernels"] = len(launch.compile_log)
print(json.dumps(out))
"""


def _build(source: str, arch: str, compiler: str) -> bytes:
    """The cubin of ``source`` by ``compiler`` itself: NVRTC in-process, or nvcc through the kernel cache with
    ``$LINEAR_LAYOUTS_COMPILER`` set for the call (else the cache would serve the ops' NVRTC entry)."""
    from linear_layouts.codegen.nvrtc import compile_nvrtc
    from linear_layouts.codegen.ptx import COMPILER_ENV, compile_cubin_bytes

    if compiler == "nvrtc":
        return compile_nvrtc(source, arch, "cubin")
    previous = os.environ.get(COMPILER_ENV)
    os.environ[COMPILER_ENV] = "nvcc"
    try:
        return compile_cubin_bytes(source, arch)
    finally:
        if previous is None:
            del os.environ[COMPILER_ENV]
        else:
            os.environ[COMPILER_ENV] = previous


def _loaded(items, compiler: str, device: int = 0):
    """A function launching ``items`` (``Launch``es) with their kernels built by ``compiler`` (``_build``) and
    loaded by the driver."""
    import torch

    from linear_layouts.ops import launch
    from linear_layouts.ops.driver import ArgumentPacking, PreparedLaunch, driver
    from linear_layouts.ops.launches import Launch

    arch, context = launch.device_arch(device), launch.device_context(device)
    prepared = []
    for item in items:
        if isinstance(item, Launch):
            k = item.kernel
            function = driver().load_function(context, _build(k.source, arch, compiler), k.name, k.shared_bytes)
            packing = ArgumentPacking.of(k.params)
            launch_ = PreparedLaunch(function, context, item.ctas, k.threads, k.shared_bytes, packing)
            prepared.append((launch_, [0 if v is None else v for v in item.values]))

    def run():
        stream = torch.cuda.current_stream().cuda_stream
        for launch_, values in prepared:
            launch_.run(stream, values)

    return run


def _first_calls(compiler: str) -> dict:
    """The fresh process's first and second call times (s) with ``compiler`` and an empty kernel cache."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, LINEAR_LAYOUTS_CACHE=cache, LINEAR_LAYOUTS_COMPILER=compiler)
        proc = subprocess.run([sys.executable, "-c", _FIRST_CALL], capture_output=True, text=True, env=env, timeout=300)
    if proc.returncode:
        return dict(error=proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure(out: Path) -> dict:
    import torch

    from harness.environment import environment
    from linear_layouts.codegen.nvrtc import find_nvrtc, nvrtc_version
    from linear_layouts.ops import launch
    from linear_layouts.ops.launches import cast_launches, permute_launches
    from ops_bench import _random, _same, _time_together

    device = launch.grid_shape(0)
    rows = []
    for shape, dims, dtype in PERMUTES:
        x = _random(shape, dtype)
        expected = x.permute(dims).contiguous()
        ys = {label: torch.empty_like(expected) for label in ("nvcc", "nvrtc")}
        fns = {}
        for label, y in ys.items():
            items = permute_launches(tuple(shape), tuple(dims), x.element_size(), x.data_ptr(), y.data_ptr(), device)
            fns[label] = _loaded(items, label)
            fns[label]()
        correct = all(_same(y, expected) for y in ys.values())
        rows.append(dict(case=f"permute {list(shape)} {list(dims)} {dtype}", correct=correct, us=_time_together(fns)))
        print(rows[-1], flush=True)
    fp8 = torch.float8_e4m3fn
    for m, n, dtype in CASTS:
        x = torch.randn(m, n, device="cuda", dtype=getattr(torch, dtype))
        bufs = {label: (torch.empty(m, n, dtype=fp8, device="cuda"), torch.empty(n, m, dtype=fp8, device="cuda"),
                        torch.zeros(1, dtype=torch.float32, device="cuda")) for label in ("nvcc", "nvrtc")}
        fmt = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}[dtype]
        fns = {}
        for label, (c, t, amax) in bufs.items():
            items = cast_launches(fmt, "e4m3", m, n, x.data_ptr(), c.data_ptr(), t.data_ptr(), None, 0.5,
                                  amax.data_ptr(), device)
            fns[label] = _loaded(items, label)
            fns[label]()
        expected = (x.float() * 0.5).to(fp8)
        correct = all(_same(c, expected) and _same(t, expected.t().contiguous()) for c, t, _ in bufs.values())
        correct = correct and float(bufs["nvcc"][2]) == float(bufs["nvrtc"][2]) == float(x.float().abs().max())
        rows.append(dict(case=f"cast_transpose [{m}, {n}] {dtype} -> e4m3", correct=correct, us=_time_together(fns)))
        print(rows[-1], flush=True)
    ratios = [r["us"]["nvcc"] / r["us"]["nvrtc"] for r in rows]
    summary = dict(geomean_nvcc_over_nvrtc=round(math.exp(sum(map(math.log, ratios)) / len(ratios)), 4),
                   lowest=round(min(ratios), 4), highest=round(max(ratios), 4), correct=all(r["correct"] for r in rows))
    first = {compiler: _first_calls(compiler) for compiler in ("nvrtc", "nvcc")}
    env = environment(modules=("torch",), device=True)
    env["nvrtc"] = [find_nvrtc(), nvrtc_version()]
    result = dict(environment=env, summary=summary, rows=rows, first_calls=first)
    out.mkdir(parents=True, exist_ok=True)
    (out / "nvrtc_bench.json").write_text(json.dumps(result, indent=1))
    print(json.dumps(dict(summary=summary, first_calls=first)))
    return result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="/tmp/nvrtc_bench")
    measure(Path(ap.parse_args(argv).out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
