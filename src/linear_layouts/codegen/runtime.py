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

import ctypes
import functools
from typing import Any, Sequence

import numpy as np

from linear_layouts.codegen.kernel import KernelSource
from linear_layouts.codegen.ptx import compile_cubin_bytes, find_nvcc
from linear_layouts.core.errors import LayoutError
from linear_layouts.ops.driver import LaunchConfig, dependent_config

__all__ = [
    "cupy_module",
    "compile_kernel",
    "launch",
    "run_kernel",
    "check_kernel",
    "time_kernel",
    "launch_programmatic",
    "function_pointer",
    "allow_dynamic_shared",
    "prefer_shared_carveout",
    "registers_per_thread",
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
    """The CuPy function ``name`` of ``source``: with nvcc, from the cubin's verified bytes (loaded from memory,
    ``cuModuleLoadData``: the file is never opened again after its hash was checked); else through NVRTC."""
    cp = cupy_module()
    if find_nvcc() is not None:
        module = cp.cuda.function.Module()
        module.load(compile_cubin_bytes(source))
    else:
        module = cp.RawModule(code=source, options=("-std=c++17", "-arch=sm_90"))
    function = module.get_function(name)
    if shared_bytes > 48 * 1024:
        allow_dynamic_shared(function, shared_bytes)
    return function


# ``CUfunction_attribute`` values of the CUDA driver API (``cuda.h``); CuPy's driver module does not export them all.
_CU_FUNC_ATTRIBUTE_NUM_REGS = 4
_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
_CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 9


def function_pointer(function: Any) -> int:
    """The ``CUfunction`` of a CuPy kernel: a ``cupy.cuda.function.Function`` (``.ptr``) or a ``RawKernel``
    (``.kernel.ptr``)."""
    ptr = getattr(function, "ptr", None)
    return int(function.kernel.ptr if ptr is None else ptr)


def prefer_shared_carveout(function: Any, percent: int = 100) -> None:
    """Ask for ``percent`` of the SM's unified L1 / shared memory as shared memory for ``function``
    (``cuFuncSetAttribute(PREFERRED_SHARED_MEMORY_CARVEOUT)``)."""
    driver = cupy_module().cuda.driver
    driver.funcSetAttribute(function_pointer(function), _CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, int(percent))


def registers_per_thread(function: Any) -> int:
    """The registers ``function`` uses per thread (``cuFuncGetAttribute(NUM_REGS)``)."""
    driver = cupy_module().cuda.driver
    return int(driver.funcGetAttribute(_CU_FUNC_ATTRIBUTE_NUM_REGS, function_pointer(function)))


def allow_dynamic_shared(function: Any, shared_bytes: int) -> None:
    """Let ``function`` take ``shared_bytes`` of dynamic shared memory (above the default 48 KiB):
    ``cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)``, which CuPy's ``Function`` has no setter for."""
    driver = cupy_module().cuda.driver
    driver.funcSetAttribute(function_pointer(function), _CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                            int(shared_bytes))


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


# --------------------------------------------------------------------------- programmatic dependent launch
@functools.lru_cache(maxsize=1)
def _driver() -> Any:
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        launch_ex = lib.cuLaunchKernelEx
    except (OSError, AttributeError) as exc:  # pragma: no cover - depends on the machine
        raise RuntimeError("launch_programmatic needs the CUDA driver (libcuda.so.1, CUDA 12 or later)") from exc
    launch_ex.argtypes = [ctypes.POINTER(LaunchConfig), ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                          ctypes.c_void_p]
    launch_ex.restype = ctypes.c_int
    return launch_ex


def launch_programmatic(function: Any, grid: Sequence[int], block: int, pointers: Sequence[int],
                        shared_bytes: int = 0, stream: int = 0) -> None:
    """Launch ``function`` (a CuPy kernel function, e.g. ``compile_kernel(k)``) on ``stream`` (a
    ``cudaStream_t`` as an int; 0: the default stream) with programmatic stream serialization (CUDA's
    programmatic dependent launch, sm_90 and later): the grid may be scheduled before the previous grid
    of ``stream`` finishes, from the moment all of that grid's CTAs ran ``griddepcontrol.launch_dependents``.
    For kernels emitted with ``pdl=True`` (``transpose.emit_transpose_kernel`` and the persistent and
    cp.async forms), which wait (``griddepcontrol.wait``) for the previous grid's memory before their
    first access: back-to-back launches then overlap their launch latency, never their data.
    ``pointers``: the kernel's arguments, all device pointers (ints), in order.  Works inside CUDA graph
    capture (the dependency becomes a programmatic edge).

    Example (on a GPU): ``launch_programmatic(compile_kernel(k), k.grid(132), k.threads,
    [a.data.ptr, b.data.ptr], k.shared_bytes)`` for a ``TransposeKernel`` ``k`` of CuPy arrays ``a``, ``b``."""
    dims = tuple(int(g) for g in grid)
    if not 1 <= len(dims) <= 3 or min(dims) < 1:
        raise LayoutError(f"grid: expected 1 to 3 positive sizes, got {tuple(grid)}")
    values = [ctypes.c_void_p(int(p)) for p in pointers]
    params = (ctypes.c_void_p * max(1, len(values)))(*[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p)
                                                      for v in values])
    dims += (1,) * (3 - len(dims))
    config = dependent_config(dims, int(block), int(shared_bytes), stream)
    handle = getattr(function, "kernel", function).ptr
    status = _driver()(ctypes.byref(config), handle, params, None)
    if status:
        raise RuntimeError(f"cuLaunchKernelEx failed with CUresult {status}")
