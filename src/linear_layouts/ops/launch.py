"""Compiling, loading and launching the kernels of ``linear_layouts.ops`` on a device.

A kernel is compiled once per (source, device architecture): by ``nvcc`` into the package's private,
verified kernel cache (``codegen.ptx.compile_cubin``: files written atomically, so processes sharing the
cache never read a half-written cubin) when nvcc is installed, else by NVRTC through CuPy (CuPy's own
on-disk cache). CuPy loads the module into the device's primary context; later calls in the process find
the loaded function in memory. ``prepare`` fixes a launch (function, grid, block, shared memory, argument
packing) and ``launch`` runs it on a given CUDA stream through the driver (``ops.driver``).

The kernels compile for every architecture from ``MIN_ARCH`` (sm_75, the oldest nvcc 13 targets) on, from one
source each: their helpers choose by ``__CUDA_ARCH__`` (below sm_89 the fp8 conversion is done in software,
bit-identical); a device below ``MIN_ARCH`` is refused (LayoutError) before anything is compiled.
``portable_kernel(kernel)`` is the kernel with those software fallbacks forced on any architecture (a test
runs it beside the normal one on a recent GPU).

Example (on a GPU): ``launch(kernel, 0, stream_ptr, 128, [src_ptr, dst_ptr, 64, 64, 1, 1, 64, 64])``.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from typing import Any, Sequence

from linear_layouts.codegen.permute import PermuteKernel
from linear_layouts.codegen.ptx import compile_cubin_bytes, find_nvcc
from linear_layouts.codegen.runtime import allow_dynamic_shared, cupy_module, function_pointer
from linear_layouts.core.errors import LayoutError
from linear_layouts.ops.driver import ArgumentPacking, PreparedLaunch, driver
from linear_layouts.ops.kernels import GridShape

__all__ = ["launch", "prepare", "device_arch", "multiprocessors", "grid_shape", "copy_bytes", "compile_log",
           "device_context", "MIN_ARCH", "check_arch", "portable_kernel"]

#: The oldest architecture (compute capability) the ops compile for: nvcc 13's oldest target.
MIN_ARCH = 75

#: ``(kernel name, architecture, seconds)`` of every compile (or cache load) in this process, in order.
compile_log: list[tuple[str, str, float]] = []


def check_arch(capability: str, device: int = 0) -> str:
    """``sm_XY`` of compute capability ``capability`` (CuPy's ``"XY"``), LayoutError below ``MIN_ARCH``.
    Example: ``check_arch("90")`` is ``"sm_90"``; ``check_arch("70")`` raises."""
    if not (isinstance(capability, str) and capability.isdigit()):
        raise LayoutError(f"device {device}: compute capability {capability!r} is not a number like '90'")
    if int(capability) < MIN_ARCH:
        raise LayoutError(f"device {device}: its architecture sm_{capability} is below sm_{MIN_ARCH}, the oldest "
                          f"the layout ops compile for")
    return f"sm_{capability}"


@functools.lru_cache(maxsize=None)
def device_arch(device: int) -> str:
    """``sm_XY`` of CUDA device ``device`` (LayoutError below ``MIN_ARCH``: ``check_arch``)."""
    cp = cupy_module()
    return check_arch(str(cp.cuda.Device(device).compute_capability), device)


def portable_kernel(kernel: PermuteKernel) -> PermuteKernel:
    """``kernel`` with its helpers' software fallbacks forced on every architecture (``#define LL_PORTABLE``
    before its source; a new source, so a kernel cache entry of its own): the kernel an sm_75 device runs,
    for a test on a newer one. Same name, parameters and launch."""
    return dataclasses.replace(kernel, source="#define LL_PORTABLE\n" + kernel.source)


@functools.lru_cache(maxsize=None)
def multiprocessors(device: int) -> int:
    """Streaming multiprocessors of CUDA device ``device``."""
    cp = cupy_module()
    return int(cp.cuda.Device(device).attributes["MultiProcessorCount"])


@functools.lru_cache(maxsize=None)
def grid_shape(device: int) -> GridShape:
    """What the tile choice and the kernels read of CUDA device ``device``: its SMs, L2 bytes and architecture."""
    cp = cupy_module()
    return GridShape(multiprocessors(device), int(cp.cuda.Device(device).attributes["L2CacheSize"]),
                     device_arch(device))


@functools.lru_cache(maxsize=None)
def device_context(device: int) -> int:
    """The primary context of CUDA device ``device`` (made current by CuPy), where the ops load their kernels."""
    cp = cupy_module()
    with cp.cuda.Device(device):
        cp.cuda.runtime.free(0)  # the device's primary context, initialized and current
        return driver().current_context()


@functools.lru_cache(maxsize=None)
def _function(source: str, name: str, shared_bytes: int, device: int) -> tuple[Any, Any]:
    cp = cupy_module()
    arch = device_arch(device)
    start = time.perf_counter()
    with cp.cuda.Device(device):
        if find_nvcc() is not None:  # the cubin's verified bytes, loaded from memory (never reopened by path)
            module = cp.cuda.function.Module()
            module.load(compile_cubin_bytes(source, arch))
        else:
            module = cp.RawModule(code=source, options=("-std=c++17", f"-arch={arch}"))
        function = module.get_function(name)
        if shared_bytes > 48 * 1024:
            allow_dynamic_shared(function, shared_bytes)
    compile_log.append((name, arch, time.perf_counter() - start))
    return module, function


def prepare(kernel: PermuteKernel, device: int, ctas: int) -> PreparedLaunch:
    """``kernel`` compiled and loaded on ``device`` (at its first use), as a 1-D grid of ``ctas`` CTAs."""
    if not 0 < ctas < 2**31:
        raise LayoutError(f"ctas: a 1-D grid holds 1 to 2**31 - 1 CTAs, got {ctas}")
    _, function = _function(kernel.source, kernel.name, kernel.shared_bytes, device)
    return PreparedLaunch(function_pointer(function), device_context(device), ctas, kernel.threads, kernel.shared_bytes,
                          ArgumentPacking.of(kernel.params))


@functools.lru_cache(maxsize=1024)
def _prepared(kernel: PermuteKernel, device: int, ctas: int) -> PreparedLaunch:
    return prepare(kernel, device, ctas)


def launch(kernel: PermuteKernel, device: int, stream: int, ctas: int, values: Sequence[Any]) -> None:
    """Run ``kernel`` as a 1-D grid of ``ctas`` CTAs on ``stream`` of ``device`` with ``values``, one per
    ``kernel.params`` (pointers as ints, None for a null pointer)."""
    if len(values) != len(kernel.params):
        raise LayoutError(f"values: the kernel takes {len(kernel.params)} arguments, got {len(values)}")
    _prepared(kernel, device, ctas).run(stream, [0 if v is None else v for v in values])


def copy_bytes(device: int, stream: int, dst: int, src: int, nbytes: int) -> None:
    """``nbytes`` from device address ``src`` to ``dst`` on ``stream`` (``cuMemcpyDtoDAsync``, in the device's
    context)."""
    d = driver()
    d.in_context(device_context(device), lambda: d.copy(dst, src, nbytes, stream))
