"""Runtime: compile, cache, launch and verify generated kernels on an NVIDIA GPU through CuPy.

Why CuPy rather than cuda-python's NVRTC: one package gives compilation (``RawModule`` from a cubin
or through NVRTC), device arrays, streams and events for timing; it is installed on the GPU machines
(CuPy 14) while cuda-python is not, and it needs no hand-written memory management.  CuPy is
imported lazily, inside the functions: the rest of ``linear_layouts.codegen`` (and this module's
import) works without it.  When ``nvcc`` is on PATH kernels are compiled by it to a cubin (the very
code the CPU tests count instructions in); otherwise CuPy's NVRTC compiles the source.

Example (on a GPU)::

    wrong = check_kernel(conversion_kernel(src, dst, "fp16"))   # 0: every element arrived

Planning, generating and checking a conversion in one call is :func:`linear_layouts.codegen.verify.verify_conversion`.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from linear_layouts.codegen.kernel import KernelSource
from linear_layouts.codegen.ptx import compile_cubin, find_nvcc
from linear_layouts.errors import LayoutError

__all__ = [
    "cupy_module",
    "compile_kernel",
    "launch",
    "run_kernel",
    "check_kernel",
    "time_kernel",
]

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def cupy_module() -> Any:
    """``import cupy`` on demand, with a clear message where it is absent."""
    try:
        import cupy  # noqa: PLC0415 - lazy on purpose
    except ImportError as exc:  # pragma: no cover - depends on the machine
        raise RuntimeError("the codegen runtime needs CuPy (pip install cupy-cuda13x) and a GPU") from exc
    return cupy


@functools.lru_cache(maxsize=None)
def _function(source: str, name: str, shared_bytes: int) -> Any:
    cp = cupy_module()
    if find_nvcc() is not None:
        module = cp.RawModule(path=str(compile_cubin(source)))
    else:
        module = cp.RawModule(code=source, options=("-std=c++17", "-arch=sm_90"))
    function = module.get_function(name)
    if shared_bytes > 48 * 1024:
        function.max_dynamic_shared_size_bytes = shared_bytes
    return function


def compile_kernel(kernel: KernelSource) -> Any:
    """The launchable CuPy function of ``kernel`` (compiled once per source)."""
    return _function(kernel.source, kernel.name, kernel.shared_bytes)


def launch(kernel: KernelSource, src: Any, dst: Any, tiles: int, iterations: int = 0) -> None:
    """Launch ``tiles`` CTAs of ``kernel`` on CuPy arrays ``src`` -> ``dst`` (``tiles * tile_elements``
    elements each)."""
    function = compile_kernel(kernel)
    function(
        (tiles,), (kernel.threads,), (src, dst, np.int32(iterations)), shared_mem=kernel.shared_bytes
    )


def run_kernel(kernel: KernelSource, data: np.ndarray, iterations: int = 0) -> np.ndarray:
    """Run ``kernel`` over host ``data`` (a multiple of the tile) and return the output."""
    cp = cupy_module()
    if data.size % kernel.tile_elements:
        raise LayoutError(f"data: {data.size} elements is not a whole number of {kernel.tile_elements}-element tiles")
    src = cp.asarray(data)
    dst = cp.full(data.shape, np.array(-1).astype(data.dtype), dtype=data.dtype)
    launch(kernel, src, dst, data.size // kernel.tile_elements, iterations)
    cp.cuda.runtime.deviceSynchronize()
    return cp.asnumpy(dst)


def check_kernel(kernel: KernelSource, tiles: int = 3, iterations: int = 0, seed: int = 0) -> int:
    """Number of wrong output elements of ``kernel`` on random data (0 = correct).  A conversion
    kernel maps every tile onto itself, so the output must equal the input element for element."""
    rng = np.random.default_rng(seed)
    dtype = _UINT[kernel.element_bytes]
    data = rng.integers(0, np.iinfo(dtype).max, size=tiles * kernel.tile_elements, dtype=dtype, endpoint=False)
    out = run_kernel(kernel, data, iterations)
    return int(np.count_nonzero(out != data))


def time_kernel(kernel: KernelSource, tiles: int, iterations: int = 0, repeats: int = 20, warmup: int = 3) -> float:
    """Median time in microseconds of one launch over ``tiles`` tiles (CUDA events)."""
    cp = cupy_module()
    dtype = _UINT[kernel.element_bytes]
    src = cp.zeros(tiles * kernel.tile_elements, dtype=dtype)
    dst = cp.zeros_like(src)
    for _ in range(warmup):
        launch(kernel, src, dst, tiles, iterations)
    times = []
    for _ in range(repeats):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        launch(kernel, src, dst, tiles, iterations)
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) * 1e3)
    return float(np.median(times))
