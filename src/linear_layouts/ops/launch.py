"""Compiling and launching the kernels of ``linear_layouts.ops`` on a device, through CuPy.

A kernel is compiled once per (source, device architecture): by ``nvcc`` into the package's private,
verified kernel cache (``codegen.ptx.compile_cubin``: files written atomically, so processes sharing the
cache never read a half-written cubin) when nvcc is installed, else by NVRTC through CuPy (CuPy's own
on-disk cache). Later calls in the process find the loaded function in memory. ``launch`` runs it on a
given CUDA stream (the caller's framework's current one) of a given device.

Example (on a GPU): ``launch(kernel, 0, stream_ptr, 128, [src_ptr, dst_ptr, 64, 64, 1, 1, 64, 64])``.
"""

from __future__ import annotations

import functools
import time
from typing import Any, Sequence

import numpy as np

from linear_layouts.codegen.permute import PermuteKernel
from linear_layouts.codegen.ptx import compile_cubin, find_nvcc
from linear_layouts.codegen.runtime import cupy_module
from linear_layouts.core.errors import LayoutError

__all__ = ["launch", "device_arch", "multiprocessors", "copy_bytes", "compile_log"]

#: ``(kernel name, architecture, seconds)`` of every compile (or cache load) in this process, in order.
compile_log: list[tuple[str, str, float]] = []

_SCALARS = {"unsigned": np.uint32, "unsigned long long": np.uint64, "float": np.float32, "int": np.int32}


@functools.lru_cache(maxsize=None)
def device_arch(device: int) -> str:
    """``sm_XY`` of CUDA device ``device``."""
    cp = cupy_module()
    return f"sm_{cp.cuda.Device(device).compute_capability}"


@functools.lru_cache(maxsize=None)
def multiprocessors(device: int) -> int:
    """Streaming multiprocessors of CUDA device ``device``."""
    cp = cupy_module()
    return int(cp.cuda.Device(device).attributes["MultiProcessorCount"])


@functools.lru_cache(maxsize=None)
def _function(source: str, name: str, shared_bytes: int, device: int) -> Any:
    cp = cupy_module()
    arch = device_arch(device)
    start = time.perf_counter()
    with cp.cuda.Device(device):
        if find_nvcc() is not None:
            module = cp.RawModule(path=str(compile_cubin(source, arch)))
        else:
            module = cp.RawModule(code=source, options=("-std=c++17", f"-arch={arch}"))
        function = module.get_function(name)
        if shared_bytes > 48 * 1024:
            function.max_dynamic_shared_size_bytes = shared_bytes
    compile_log.append((name, arch, time.perf_counter() - start))
    return module, function


@functools.lru_cache(maxsize=64)
def _stream(pointer: int, device: int) -> Any:
    cp = cupy_module()
    return cp.cuda.ExternalStream(pointer, device)


@functools.lru_cache(maxsize=None)
def _converters(params: tuple[tuple[str, str], ...]) -> tuple[Any, ...]:
    """One NumPy scalar type per parameter: pointers as 64-bit addresses, scalars by C type."""
    return tuple(np.uint64 if "*" in ctype else _SCALARS[ctype] for ctype, _ in params)


def _arguments(params: tuple[tuple[str, str], ...], values: Sequence[Any]) -> tuple:
    """``values`` typed as the kernel's ``params`` (a None pointer is the null pointer)."""
    if len(values) != len(params):
        raise LayoutError(f"values: the kernel takes {len(params)} arguments, got {len(values)}")
    return tuple(convert(0 if value is None else value) for convert, value in zip(_converters(params), values))


def launch(kernel: PermuteKernel, device: int, stream: int, ctas: int, values: Sequence[Any]) -> None:
    """Run ``kernel`` as a 1-D grid of ``ctas`` CTAs on ``stream`` of ``device`` with ``values``, one per
    ``kernel.params`` (pointers as ints, None for a null pointer)."""
    if not 0 < ctas < 2**31:
        raise LayoutError(f"ctas: a 1-D grid holds 1 to 2**31 - 1 CTAs, got {ctas}")
    _, function = _function(kernel.source, kernel.name, kernel.shared_bytes, device)
    cp = cupy_module()
    with cp.cuda.Device(device), _stream(stream, device):
        function((ctas,), (kernel.threads,), _arguments(kernel.params, values), shared_mem=kernel.shared_bytes)


def copy_bytes(device: int, stream: int, dst: int, src: int, nbytes: int) -> None:
    """``nbytes`` from device address ``src`` to ``dst`` on ``stream`` (cudaMemcpyAsync)."""
    cp = cupy_module()
    with cp.cuda.Device(device):
        cp.cuda.runtime.memcpyAsync(dst, src, nbytes, cp.cuda.runtime.memcpyDeviceToDevice, stream)
