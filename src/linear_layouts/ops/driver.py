"""The CUDA driver calls that load and launch the kernels of ``linear_layouts.ops``, through ``ctypes`` (standard
library): the device's attributes and primary context, ``cuModuleLoadData``, ``cuLaunchKernel`` (or
``cuLaunchKernelEx`` for a dependent launch), ``cuMemcpyDtoDAsync`` and the current context; for autotuning
(``ops.tune``), events on a stream and whether it is being captured. No framework is asked: a PyTorch user needs
nothing else.

A launch packs the kernel's arguments into one buffer, each at its natural alignment (``ArgumentPacking``),
and passes the driver the address of each (``kernelParams``). Where the optional C extension
``linear_layouts.ops._claunch`` is built (``pip install .`` builds it), one C call packs the arguments on the C
stack and calls ``cuLaunchKernel``; else (or with ``LINEAR_LAYOUTS_PURE_PYTHON=1``) one ``struct.pack_into``
into the prepared launch's buffer and one ``ctypes`` call do, under a lock. Both pack the same bytes and make
the same call. A *dependent* launch (``PreparedLaunch.dependent``, where the driver keeps programmatic dependencies
in stream capture: ``Driver.dependent_launch``) is ``cuLaunchKernelEx`` with programmatic stream serialization:
the grid may be scheduled while the stream's previous grid finishes, and waits (``griddepcontrol.wait``) for that
grid's memory before its first access. The launch is tried as it is; only where the driver
refuses it (no context current on the calling thread, or another one with the legacy default stream) is
the kernel's context (the primary context of its device, recorded when its module was loaded) made current
around a second try, so the common call asks the driver nothing else.

Example: ``ArgumentPacking.of((("const unsigned char*", "src"), ("unsigned", "rows"), ("float", "s")))``
packs ``(a, 5, 0.5)`` as ``<QIf`` at offsets 0, 8, 12: 16 bytes.
"""

from __future__ import annotations

import ctypes
import functools
import importlib
import os
import struct
import threading
from dataclasses import dataclass, field
from typing import Any, Sequence

from linear_layouts.core.errors import LayoutError

__all__ = ["ArgumentPacking", "Driver", "driver", "PreparedLaunch", "DEVICE_ATTRIBUTES", "LaunchConfig",
           "LaunchAttribute", "PROGRAMMATIC_STREAM_SERIALIZATION", "DEPENDENT_LAUNCH_DRIVER", "dependent_config"]

#: ``CUdevice_attribute`` codes of the attributes the ops read (``cuda.h``).
DEVICE_ATTRIBUTES = {"multiprocessors": 16, "l2_bytes": 38, "major": 75, "minor": 76}
#: ``CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES``.
_MAX_DYNAMIC_SHARED = 8

#: ``CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`` (cuda.h, CUDA 12 on).
PROGRAMMATIC_STREAM_SERIALIZATION = 6
#: The oldest driver (``cuDriverGetVersion``: 1000 major + 10 minor) whose stream capture keeps programmatic
#: dependencies as graph edges (CUDA 12.3).
DEPENDENT_LAUNCH_DRIVER = 12030


class _LaunchAttributeValue(ctypes.Union):
    """``CUlaunchAttributeValue`` (cuda.h): a 64-byte union, 8-byte aligned; the ops set only its first int."""

    _fields_ = [("pad", ctypes.c_char * 64), ("flag", ctypes.c_int), ("_align", ctypes.c_void_p)]


class LaunchAttribute(ctypes.Structure):
    """``CUlaunchAttribute``: ``id``, padding to 8 bytes, the value (72 bytes in all)."""

    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", _LaunchAttributeValue)]


class LaunchConfig(ctypes.Structure):
    """``CUlaunchConfig``: grid and block sizes, dynamic shared bytes, stream, attributes (56 bytes)."""

    _fields_ = [("grid_x", ctypes.c_uint), ("grid_y", ctypes.c_uint), ("grid_z", ctypes.c_uint),
                ("block_x", ctypes.c_uint), ("block_y", ctypes.c_uint), ("block_z", ctypes.c_uint),
                ("shared_bytes", ctypes.c_uint), ("stream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(LaunchAttribute)), ("num_attrs", ctypes.c_uint)]


def dependent_config(grid: tuple[int, int, int], block: int, shared_bytes: int, stream: int = 0) -> LaunchConfig:
    """The ``CUlaunchConfig`` of a dependent launch: ``grid``, ``block`` threads, ``shared_bytes``, ``stream`` and one
    attribute, programmatic stream serialization (the config keeps it alive)."""
    attribute = LaunchAttribute(id=PROGRAMMATIC_STREAM_SERIALIZATION)
    attribute.value.flag = 1
    config = LaunchConfig(grid[0], grid[1], grid[2], block, 1, 1, shared_bytes, stream, ctypes.pointer(attribute), 1)
    config._attribute = attribute  # the pointer's target lives as long as the config
    return config


#: struct codes of the kernels' parameter types (pointers are 64-bit addresses).
_CODES = {"unsigned": "I", "int": "i", "float": "f", "unsigned long long": "Q"}


@dataclass(frozen=True)
class ArgumentPacking:
    """The byte layout of a kernel's parameters: ``format`` (``struct``, little-endian, explicit padding),
    ``size`` bytes and each parameter's byte ``offsets``; ``pack_into(buffer, 0, *values)`` writes them."""

    format: str
    size: int
    offsets: tuple[int, ...]
    pack_into: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "pack_into", struct.Struct(self.format).pack_into)

    @property
    def codes(self) -> str:
        """One ``struct`` code per parameter, in order (``format`` without its byte order and padding)."""
        return "".join(c for c in self.format[1:] if c != "x")

    @staticmethod
    @functools.lru_cache(maxsize=None)
    def of(params: tuple[tuple[str, str], ...]) -> "ArgumentPacking":
        """The packing of ``params`` (``(C type, name)`` pairs): each at the next multiple of its size."""
        codes, offsets, offset = ["<"], [], 0
        for ctype, name in params:
            code = "Q" if "*" in ctype else _CODES.get(ctype)
            if code is None:
                raise LayoutError(f"params: {name} has C type {ctype!r}; the ops pack pointers, unsigned, int, "
                                  "float and unsigned long long")
            size = struct.calcsize("<" + code)
            pad = -offset % size
            codes.append("x" * pad + code)
            offsets.append(offset + pad)
            offset += pad + size
        return ArgumentPacking("".join(codes), offset, tuple(offsets))


#: The interface version of ``_claunch.c`` this module expects (a stale build of another is not used).
NATIVE_ABI_VERSION = 2


def native_module() -> Any:
    """The C launch extension ``linear_layouts.ops._claunch``, or None where it is not built, is of another
    interface version, or ``LINEAR_LAYOUTS_PURE_PYTHON`` is set (to anything but 0)."""
    if os.environ.get("LINEAR_LAYOUTS_PURE_PYTHON", "").strip() not in ("", "0"):
        return None
    try:
        module = importlib.import_module("linear_layouts.ops._claunch")
    except ImportError:
        return None
    return module if getattr(module, "ABI_VERSION", None) == NATIVE_ABI_VERSION else None


def _address(function: Any) -> int | None:
    """The address of a ``ctypes`` foreign function (a library's or a ``CFUNCTYPE`` callback's), else None."""
    try:
        return ctypes.cast(function, ctypes.c_void_p).value
    except (TypeError, ctypes.ArgumentError):
        return None


def _error(lib: Any, status: int) -> str:
    name = ctypes.c_char_p()
    if lib.cuGetErrorName(status, ctypes.byref(name)) == 0 and name.value:
        return name.value.decode()
    return f"CUresult {status}"


class Driver:
    """``libcuda.so.1``'s launch, copy, context and timing calls (one per process: ``driver()``)."""

    def __init__(self, lib: Any):
        self.lib = lib
        lib.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
        lib.cuLaunchKernel.restype = ctypes.c_int
        lib.cuMemcpyDtoDAsync_v2.argtypes = [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_size_t, ctypes.c_void_p]
        lib.cuMemcpyDtoDAsync_v2.restype = ctypes.c_int
        for name in ("cuCtxGetCurrent", "cuCtxPopCurrent_v2"):
            getattr(lib, name).argtypes = [ctypes.POINTER(ctypes.c_void_p)]
            getattr(lib, name).restype = ctypes.c_int
        lib.cuCtxPushCurrent_v2.argtypes = [ctypes.c_void_p]
        lib.cuCtxPushCurrent_v2.restype = ctypes.c_int
        pointer, integer = ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int)
        for name, argtypes in (("cuInit", [ctypes.c_uint]), ("cuDeviceGet", [integer, ctypes.c_int]),
                               ("cuDeviceGetAttribute", [integer, ctypes.c_int, ctypes.c_int]),
                               ("cuDevicePrimaryCtxRetain", [pointer, ctypes.c_int]),
                               ("cuModuleLoadData", [pointer, ctypes.c_char_p]),
                               ("cuModuleGetFunction", [pointer, ctypes.c_void_p, ctypes.c_char_p]),
                               ("cuFuncSetAttribute", [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]),
                               ("cuStreamSynchronize", [ctypes.c_void_p]),
                               ("cuStreamIsCapturing", [ctypes.c_void_p, integer]),
                               ("cuEventCreate", [pointer, ctypes.c_uint]), ("cuEventDestroy_v2", [ctypes.c_void_p]),
                               ("cuEventRecord", [ctypes.c_void_p, ctypes.c_void_p]),
                               ("cuEventSynchronize", [ctypes.c_void_p]),
                               ("cuEventElapsedTime", [ctypes.POINTER(ctypes.c_float), ctypes.c_void_p,
                                                       ctypes.c_void_p])):
            getattr(lib, name).argtypes = argtypes
            getattr(lib, name).restype = ctypes.c_int
        self._initialized = False
        self._launch = lib.cuLaunchKernel
        launch_ex = getattr(lib, "cuLaunchKernelEx", None)  # drivers of CUDA 11.8 on
        if launch_ex is not None:
            launch_ex.argtypes = [ctypes.POINTER(LaunchConfig), ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
            launch_ex.restype = ctypes.c_int
        self._launch_ex = launch_ex
        version = ctypes.c_int()
        get_version = getattr(lib, "cuDriverGetVersion", None)
        #: The driver's CUDA version (1000 major + 10 minor; 0 where it does not say).
        self.version = version.value if get_version is not None and get_version(ctypes.byref(version)) == 0 else 0
        #: Whether launches may be dependent (``cuLaunchKernelEx``, and a driver from ``DEPENDENT_LAUNCH_DRIVER``).
        self.dependent_launch = launch_ex is not None and self.version >= DEPENDENT_LAUNCH_DRIVER
        #: The C launch extension and the addresses of ``cuLaunchKernel`` and ``cuLaunchKernelEx`` it calls (None:
        #: ``ctypes`` only; the second None where launches are not dependent).
        entry = _address(lib.cuLaunchKernel)
        self.native = native_module() if entry else None
        self.native_entry = entry if self.native else None
        self.native_entry_ex = _address(launch_ex) if self.native and self.dependent_launch else None
        self._current = lib.cuCtxGetCurrent
        self._holder = ctypes.c_void_p()
        self._holder_ref = ctypes.byref(self._holder)
        #: Held while the context holder or a prepared launch's argument buffer is in use (re-entrant).
        self.lock = threading.RLock()

    def current_context(self) -> int:
        """The calling thread's current CUDA context (0 for none)."""
        with self.lock:
            self._check(self._current(self._holder_ref), "cuCtxGetCurrent")
            return self._holder.value or 0

    def _check(self, status: int, what: str) -> None:
        if status:
            raise RuntimeError(f"{what} failed: {_error(self.lib, status)}")

    def _device(self, ordinal: int) -> int:
        """The ``CUdevice`` of CUDA device ``ordinal`` (the driver initialized at the first call)."""
        with self.lock:
            if not self._initialized:
                self._check(self.lib.cuInit(0), "cuInit")
                self._initialized = True
            handle = ctypes.c_int()
            self._check(self.lib.cuDeviceGet(ctypes.byref(handle), ordinal), f"cuDeviceGet({ordinal})")
            return handle.value

    def attribute(self, ordinal: int, name: str) -> int:
        """Attribute ``name`` (a key of ``DEVICE_ATTRIBUTES``) of CUDA device ``ordinal``.
        Example: ``attribute(0, "multiprocessors")`` is 132 on an H100 or H200 SXM."""
        value = ctypes.c_int()
        self._check(self.lib.cuDeviceGetAttribute(ctypes.byref(value), DEVICE_ATTRIBUTES[name], self._device(ordinal)),
                    f"cuDeviceGetAttribute({name})")
        return value.value

    def primary_context(self, ordinal: int) -> int:
        """The primary context of CUDA device ``ordinal`` (retained, never released: PyTorch's and CuPy's own)."""
        context = ctypes.c_void_p()
        self._check(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(context), self._device(ordinal)),
                    "cuDevicePrimaryCtxRetain")
        return context.value or 0

    def load_function(self, context: int, image: bytes, name: str, shared_bytes: int = 0) -> int:
        """The ``CUfunction`` ``name`` of the cubin ``image``, loaded into ``context`` (and kept loaded), allowed
        ``shared_bytes`` of dynamic shared memory where that is above the default 48 KiB."""
        module, function = ctypes.c_void_p(), ctypes.c_void_p()

        def load() -> None:
            self._check(self.lib.cuModuleLoadData(ctypes.byref(module), image), "cuModuleLoadData")
            self._check(self.lib.cuModuleGetFunction(ctypes.byref(function), module, name.encode()),
                        f"cuModuleGetFunction({name})")
            if shared_bytes > 48 * 1024:
                self._check(self.lib.cuFuncSetAttribute(function, _MAX_DYNAMIC_SHARED, shared_bytes),
                            "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)")

        with self.lock:
            self.in_context(context, load)
        return function.value or 0

    def try_launch(self, function: int, ctas: int, threads: int, shared_bytes: int, stream: int, params: Any,
                   config: LaunchConfig | None = None) -> int:
        """``cuLaunchKernel`` of ``function`` on a 1-D grid with ``params`` (the address of each argument), or
        ``cuLaunchKernelEx`` with ``config`` (``dependent_config``, its stream set here) where given and the
        launches may be dependent: its ``CUresult`` (0: launched)."""
        if config is not None and self.dependent_launch:
            config.stream = stream
            return self._launch_ex(ctypes.byref(config), function, params, None)
        return self._launch(function, ctas, 1, 1, threads, 1, 1, shared_bytes, stream, params, None)

    def launch(self, function: int, ctas: int, threads: int, shared_bytes: int, stream: int, params: Any,
               config: LaunchConfig | None = None) -> None:
        """``try_launch``; RuntimeError naming the driver's error where it fails."""
        self._check(self.try_launch(function, ctas, threads, shared_bytes, stream, params, config), "cuLaunchKernel")

    def copy(self, dst: int, src: int, nbytes: int, stream: int) -> None:
        """``nbytes`` from device address ``src`` to ``dst`` on ``stream``."""
        self._check(self.lib.cuMemcpyDtoDAsync_v2(dst, src, nbytes, stream), "cuMemcpyDtoDAsync")

    def capturing(self, context: int, stream: int) -> bool:
        """Whether ``stream`` (of ``context``) is being captured into a CUDA graph (True also where the driver cannot
        say: the legacy stream while another one is captured)."""
        status, result = ctypes.c_int(), []
        self.in_context(context, lambda: result.append(self.lib.cuStreamIsCapturing(stream, ctypes.byref(status))))
        return bool(result[0] or status.value)

    def elapsed_ms(self, context: int, stream: int, windows: Sequence[Any]) -> list[float]:
        """Milliseconds of each of ``windows`` (functions that queue work on ``stream``), in ``context``: once the
        work already on ``stream`` has ended, each one between two events recorded there, all queued first and read
        once the last has ended.
        Example: ``elapsed_ms(ctx, s, [lambda: launch(s)] * 3)`` times three launches one by one."""
        times: list[float] = []

        def run() -> None:
            events = []
            self._check(self.lib.cuStreamSynchronize(stream), "cuStreamSynchronize")
            try:
                for _ in range(len(windows) + 1):
                    event = ctypes.c_void_p()
                    self._check(self.lib.cuEventCreate(ctypes.byref(event), 0), "cuEventCreate")
                    events.append(event)
                self._check(self.lib.cuEventRecord(events[0], stream), "cuEventRecord")
                for window, end in zip(windows, events[1:]):
                    window()
                    self._check(self.lib.cuEventRecord(end, stream), "cuEventRecord")
                self._check(self.lib.cuEventSynchronize(events[-1]), "cuEventSynchronize")
                ms = ctypes.c_float()
                for start, end in zip(events, events[1:]):
                    self._check(self.lib.cuEventElapsedTime(ctypes.byref(ms), start, end), "cuEventElapsedTime")
                    times.append(ms.value)
            finally:
                for event in events:
                    self.lib.cuEventDestroy_v2(event)

        self.in_context(context, run)
        return times

    def in_context(self, context: int, call) -> None:
        """``call()`` with ``context`` current on this thread (pushed and popped when another one is)."""
        if not context or self.current_context() == context:
            call()
            return
        self._check(self.lib.cuCtxPushCurrent_v2(context), "cuCtxPushCurrent")
        try:
            call()
        finally:
            popped = ctypes.c_void_p()
            self._check(self.lib.cuCtxPopCurrent_v2(ctypes.byref(popped)), "cuCtxPopCurrent")


@functools.lru_cache(maxsize=1)
def driver() -> Driver:
    """The process's ``Driver`` (RuntimeError without the CUDA driver)."""
    try:
        return Driver(ctypes.CDLL("libcuda.so.1"))
    except (OSError, AttributeError) as error:  # pragma: no cover - depends on the machine
        raise RuntimeError("the layout ops launch through the CUDA driver (libcuda.so.1), which is missing") from error


@dataclass(frozen=True, eq=False)
class PreparedLaunch:
    """One kernel launch with everything but its arguments' values fixed: the loaded ``function`` (a
    ``CUfunction``) and its ``context``, a 1-D grid of ``ctas`` CTAs of ``threads`` threads, ``shared_bytes``
    of dynamic shared memory, the packing of its arguments, and whether it is ``dependent`` (programmatic stream
    serialization where the driver allows it: the kernel must wait for the previous grid before its first memory
    access, as ``codegen.intrinsics.OP_PROLOGUE`` does). ``run(stream, values)`` launches it: by the C extension's
    ``Launcher`` (made at the first run) where the driver has one, else packed into this launch's buffer and
    launched through ``ctypes`` under the driver's lock."""

    function: int
    context: int
    ctas: int
    threads: int
    shared_bytes: int
    packing: ArgumentPacking
    dependent: bool = False
    _buffer: Any = field(init=False, repr=False)
    _params: Any = field(init=False, repr=False)
    _config: Any = field(init=False, repr=False)
    _native: Any = field(init=False, repr=False, default=None)

    def __post_init__(self) -> None:
        buffer = ctypes.create_string_buffer(self.packing.size + 8)  # 8 spare bytes: any 8-byte read stays inside
        base = ctypes.addressof(buffer)
        params = (ctypes.c_void_p * max(1, len(self.packing.offsets)))(*(base + o for o in self.packing.offsets))
        object.__setattr__(self, "_buffer", buffer)
        object.__setattr__(self, "_params", params)
        object.__setattr__(self, "_config", dependent_config((self.ctas, 1, 1), self.threads, self.shared_bytes)
                           if self.dependent else None)

    def native(self, cuda: Driver) -> Any:
        """This launch as a ``_claunch.Launcher`` calling ``cuda``'s ``cuLaunchKernel`` or, dependent,
        ``cuLaunchKernelEx`` (made once), or None where ``cuda`` has no C launch."""
        if cuda.native_entry is None:
            return None
        launcher = self._native
        if launcher is None or launcher[0] != cuda.native_entry:
            p = self.packing
            ex = cuda.native_entry_ex if self.dependent else None
            launcher = (cuda.native_entry, cuda.native.Launcher(
                ex or cuda.native_entry, self.function, self.ctas, self.threads, self.shared_bytes, p.codes,
                p.offsets, p.size, ex is not None))
            object.__setattr__(self, "_native", launcher)
        return launcher[1]

    def run(self, stream: int, values: Sequence[Any], cuda: Driver | None = None) -> None:
        """Launch on ``stream`` with ``values`` (one per parameter; pointers as ints, 0 for null)."""
        d = cuda or driver()
        launcher = self._native
        if launcher is not None and launcher[0] == d.native_entry:
            status = launcher[1](stream, values)
        elif d.native_entry is not None:
            status = self.native(d)(stream, values)
        else:
            with d.lock:  # the buffer is read by the driver during the call, not after
                self.packing.pack_into(self._buffer, 0, *values)
                status = d.try_launch(self.function, self.ctas, self.threads, self.shared_bytes, stream,
                                      self._params, self._config)
        if not status:
            return
        with d.lock:
            self.packing.pack_into(self._buffer, 0, *values)
            if not self.context or d.current_context() == self.context:
                d._check(status, "cuLaunchKernel")
            d.in_context(self.context, lambda: d.launch(self.function, self.ctas, self.threads, self.shared_bytes,
                                                        stream, self._params, self._config))
