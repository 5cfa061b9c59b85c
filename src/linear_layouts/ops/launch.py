"""Compiling, loading and launching the kernels of ``linear_layouts.ops`` on a device.

A kernel is compiled once per (source, device architecture) into the package's private, verified kernel
cache (``codegen.ptx.compile_cubin_bytes``: files written atomically, so processes sharing the cache never
read a half-written cubin): by NVRTC in-process (``codegen.nvrtc``: the library PyTorch's and CuPy's CUDA
wheels bring) where it is found, else by ``nvcc`` (``COMPILER``; ``$LINEAR_LAYOUTS_COMPILER`` forces one).
Both build the same kernels (as fast: ``benchmarks/results/nvrtc.md``); NVRTC, without a process of its own
and the host compiler, builds them 3-7 times sooner. The CUDA driver (``ops.driver``) reads the device's
attributes and loads the cubin into the device's primary context (PyTorch's and CuPy's own); later calls in
the process find the loaded function in memory. No framework is asked for any of it: PyTorch alone is
enough. ``prepare`` fixes a launch (function, grid, block, shared memory, argument packing) and ``launch``
runs it on a given CUDA stream. From sm_90 on, a launch that follows another kernel of the same op call is
dependent (``DEPENDENT_LAUNCH``): its launch overlaps the end of that kernel, and the kernel waits for that
kernel's memory before its first access (``codegen.intrinsics.OP_PROLOGUE``), so only launch latency overlaps,
never data.

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
import os
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Sequence

from linear_layouts.codegen.permute import PermuteKernel
from linear_layouts.codegen.ptx import COMPILER_ENV, compile_cubin_bytes, kernel_compiler
from linear_layouts.core.errors import LayoutError
from linear_layouts.ops.driver import ArgumentPacking, PreparedLaunch, driver
from linear_layouts.ops.kernels import GridShape

__all__ = ["launch", "prepare", "compile_ahead", "COMPILE_THREADS", "device_arch", "multiprocessors", "grid_shape",
           "copy_bytes", "compile_log", "device_context", "MIN_ARCH", "check_arch", "portable_kernel", "COMPILER", "DEPENDENT_LAUNCH",
           "DEPENDENT_LAUNCHES", "DEPENDENT_ARCH", "dependent"]

#: The oldest architecture (compute capability) the ops compile for: nvcc 13's oldest target.
MIN_ARCH = 75

#: The compiler the ops build their kernels with where both are here (``codegen.ptx.kernel_compiler``).
COMPILER = "nvrtc"

#: Which launches take programmatic stream serialization (CUDA's programmatic dependent launch) on devices from
#: ``DEPENDENT_ARCH`` on, where the driver allows it (``driver.Driver.dependent_launch``): ``"within"`` those that
#: follow another kernel of the same op call (a gather and then its permutation, the flat cast and then its byte
#: transpose), ``"all"`` every launch, ``"none"`` none. A dependent launch gains where the previous kernel lets it
#: be scheduled early, as ours do, and loses a handshake after a kernel that does not, as PyTorch's
#: (``benchmarks/results/dependent_launch.md``), hence ``"within"``; ``"all"`` suits a program that runs our ops
#: back to back. Read at each ``prepare`` (``dispatch`` and ``launch`` keep what they
#: prepared: set it before the first call).
DEPENDENT_LAUNCH = "within"
#: The values ``DEPENDENT_LAUNCH`` takes.
DEPENDENT_LAUNCHES = ("within", "all", "none")
#: The first compute capability with programmatic dependent launch (``griddepcontrol``: sm_90).
DEPENDENT_ARCH = 90

#: ``(kernel name, architecture, seconds)`` of every compile (or cache load) in this process, in order.
compile_log: list[tuple[str, str, float]] = []


def check_arch(capability: str, device: int = 0) -> str:
    """``sm_XY`` of compute capability ``capability`` (``"XY"``: major and minor), LayoutError below ``MIN_ARCH``.
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
    cuda = driver()
    return check_arch(f"{cuda.attribute(device, 'major')}{cuda.attribute(device, 'minor')}", device)


def portable_kernel(kernel: PermuteKernel) -> PermuteKernel:
    """``kernel`` with its helpers' software fallbacks forced on every architecture (``#define LL_PORTABLE``
    before its source; a new source, so a kernel cache entry of its own): the kernel an sm_75 device runs,
    for a test on a newer one. Same name, parameters and launch."""
    return dataclasses.replace(kernel, source="#define LL_PORTABLE\n" + kernel.source)


@functools.lru_cache(maxsize=None)
def multiprocessors(device: int) -> int:
    """Streaming multiprocessors of CUDA device ``device``."""
    return driver().attribute(device, "multiprocessors")


@functools.lru_cache(maxsize=None)
def grid_shape(device: int) -> GridShape:
    """What the tile choice and the kernels read of CUDA device ``device``: its SMs, L2 bytes and architecture."""
    return GridShape(multiprocessors(device), driver().attribute(device, "l2_bytes"), device_arch(device))


@functools.lru_cache(maxsize=None)
def device_context(device: int) -> int:
    """The primary context of CUDA device ``device`` (PyTorch's and CuPy's), where the ops load their kernels."""
    return driver().primary_context(device)


@functools.lru_cache(maxsize=None)
def _function(source: str, name: str, shared_bytes: int, device: int) -> int:
    """The ``CUfunction`` of kernel ``name`` of ``source``, compiled for ``device``'s architecture (or read from
    the kernel cache) and loaded into its primary context from the verified bytes (never reopened by path)."""
    arch = device_arch(device)
    start = time.perf_counter()
    image = compile_cubin_bytes(source, arch, COMPILER)
    try:
        function = driver().load_function(device_context(device), image, name, shared_bytes)
    except RuntimeError as error:
        if "cuModuleLoadData" not in str(error):
            raise
        built = kernel_compiler(required=False, prefer=COMPILER)
        other = "nvcc" if built == "nvrtc" else "nvrtc"
        raise RuntimeError(f"{error}: kernel {name}, compiled by {built} for {arch}, does not load on device "
                           f"{device}; a compiler newer than the driver builds what it cannot load: update the "
                           f"driver, or set ${COMPILER_ENV}={other}") from error
    compile_log.append((name, arch, time.perf_counter() - start))
    return function


def dependent(device: int, follows_ours: bool) -> bool:
    """Whether a launch on ``device`` is dependent: by ``DEPENDENT_LAUNCH`` (``follows_ours``: it follows a kernel
    of the same op call), the device from ``DEPENDENT_ARCH`` on and the driver allowing it."""
    if DEPENDENT_LAUNCH not in DEPENDENT_LAUNCHES:
        raise LayoutError(f"DEPENDENT_LAUNCH: must be one of {DEPENDENT_LAUNCHES}, got {DEPENDENT_LAUNCH!r}")
    wanted = DEPENDENT_LAUNCH == "all" or (DEPENDENT_LAUNCH == "within" and follows_ours)
    return wanted and int(device_arch(device)[3:]) >= DEPENDENT_ARCH and driver().dependent_launch


def prepare(kernel: PermuteKernel, device: int, ctas: int, follows_ours: bool = False) -> PreparedLaunch:
    """``kernel`` compiled and loaded on ``device`` (at its first use), as a 1-D grid of ``ctas`` CTAs, dependent
    where ``dependent(device, follows_ours)``."""
    if not 0 < ctas < 2**31:
        raise LayoutError(f"ctas: a 1-D grid holds 1 to 2**31 - 1 CTAs, got {ctas}")
    function = _function(kernel.source, kernel.name, kernel.shared_bytes, device)
    return PreparedLaunch(function, device_context(device), ctas, kernel.threads, kernel.shared_bytes,
                          ArgumentPacking.of(kernel.params), dependent(device, follows_ours))


#: The most compiles ``compile_ahead`` runs at once (each NVRTC or nvcc holds a few hundred MB while it works).
COMPILE_THREADS = 16


def compile_ahead(kernels: Iterable[PermuteKernel], device: int) -> None:
    """The cubins of ``kernels`` for ``device``'s architecture compiled into the kernel cache (or found there) on
    as many threads as CPUs (at most ``COMPILE_THREADS``), so that their first ``prepare`` loads at once: NVRTC
    and nvcc run outside the interpreter lock, where ``prepare`` compiles one kernel after another. A kernel that
    does not compile is left to ``prepare``, which raises its error. Example: a tuning's 20-odd candidates compile
    in about the time of the slowest few instead of their sum."""
    sources = list(dict.fromkeys(kernel.source for kernel in kernels))
    if len(sources) < 2:
        return
    arch = device_arch(device)

    def build(source: str) -> None:
        try:
            compile_cubin_bytes(source, arch, COMPILER)
        except Exception:  # noqa: BLE001 - prepare compiles it again and raises what it is
            pass

    with ThreadPoolExecutor(max_workers=min(len(sources), os.cpu_count() or 1, COMPILE_THREADS)) as pool:
        list(pool.map(build, sources))


@functools.lru_cache(maxsize=1024)
def _prepared(kernel: PermuteKernel, device: int, ctas: int, follows_ours: bool) -> PreparedLaunch:
    return prepare(kernel, device, ctas, follows_ours)


def launch(kernel: PermuteKernel, device: int, stream: int, ctas: int, values: Sequence[Any],
           follows_ours: bool = False) -> None:
    """Run ``kernel`` as a 1-D grid of ``ctas`` CTAs on ``stream`` of ``device`` with ``values``, one per
    ``kernel.params`` (pointers as ints, None for a null pointer); ``follows_ours``: the stream's previous launch
    is a kernel of the same op call."""
    if len(values) != len(kernel.params):
        raise LayoutError(f"values: the kernel takes {len(kernel.params)} arguments, got {len(values)}")
    _prepared(kernel, device, ctas, follows_ours).run(stream, [0 if v is None else v for v in values])


def copy_bytes(device: int, stream: int, dst: int, src: int, nbytes: int) -> None:
    """``nbytes`` from device address ``src`` to ``dst`` on ``stream`` (``cuMemcpyDtoDAsync``, in the device's
    context)."""
    d = driver()
    d.in_context(device_context(device), lambda: d.copy(dst, src, nbytes, stream))
