"""Stand-ins for what the ops' fast path touches, so that it runs without a GPU: a PyTorch-like tensor
(``FakeTorchTensor``: its type's module is ``torch``), a ``libcuda`` whose calls are recorded (``FakeCuda``),
and ``install`` to put them in place of the device (the loaded kernel, the SM count, the stream)."""

from __future__ import annotations

import ctypes
import struct

import numpy as np

from linear_layouts.ops import dispatch, driver, launch, tensors
from linear_layouts.ops.driver import Driver, LaunchConfig, PreparedLaunch
from linear_layouts.ops.kernels import GridShape

__all__ = ["FakeTorchTensor", "FakeCuda", "install", "LAUNCH"]


class _DType:
    def __init__(self, name: str, itemsize: int):
        self.name, self.itemsize = name, itemsize

    def __repr__(self) -> str:
        return f"torch.{self.name}"


_DTYPES = {size: _DType(f"fake{8 * size}", size) for size in (1, 2, 4, 8, 16)}


class _Device:
    def __init__(self, index: int):
        self.index, self.type = index, "cuda"


class FakeTorchTensor:
    """A contiguous CUDA tensor as the ops read one: shape, dtype, device, address (made up, 512-byte aligned
    from ``new_empty``), and whether it is a conjugate or negative view (``conj``, ``neg``: PyTorch's lazy bits)."""

    next_address = 1 << 40

    def __init__(self, shape, itemsize: int = 2, pointer: int | None = None, device: int = 0, strides=None,
                 conj: bool = False, neg: bool = False, layout: str = "torch.strided"):
        self.shape = tuple(shape)
        self.layout = layout  # another (a sparse layout): no strides, as PyTorch's own raise
        self._conj, self._neg = conj, neg
        self.dtype = _DTYPES[itemsize]
        self._itemsize = itemsize
        self._device = device
        if strides is None:
            strides, stride = [], 1
            for size in reversed(self.shape):
                strides.append(stride)
                stride *= size
            strides = tuple(reversed(strides))
        self._strides = tuple(strides)
        if pointer is None:  # past the bytes the view spans, gaps included
            span = (1 + sum((n - 1) * abs(st) for n, st in zip(self.shape, self._strides))) * itemsize
            pointer = FakeTorchTensor.next_address
            FakeTorchTensor.next_address += (span + 1023) // 512 * 512
        self._pointer = pointer
        self.is_cuda = True
        self.requires_grad = False
        self.device = _Device(device)
        expected, self._contiguous = 1, True  # an empty tensor is contiguous at any strides, as in PyTorch
        for size, stride in zip(reversed(self.shape), reversed(self._strides)):
            if size != 1 and stride != expected and 0 not in self.shape:
                self._contiguous = False
            expected *= size

    def dim(self) -> int:
        return len(self.shape)

    def element_size(self) -> int:
        return self._itemsize

    def data_ptr(self) -> int:
        return self._pointer

    def get_device(self) -> int:
        return self._device

    def _strided(self) -> None:
        if self.layout != "torch.strided":
            raise RuntimeError(f"tensors with layout {self.layout} do not have strides")

    def stride(self) -> tuple[int, ...]:
        self._strided()
        return self._strides

    def is_contiguous(self) -> bool:
        self._strided()
        return self._contiguous

    def is_conj(self) -> bool:
        return self._conj

    def is_neg(self) -> bool:
        return self._neg

    def new_empty(self, shape) -> "FakeTorchTensor":
        return FakeTorchTensor(shape, self._itemsize, device=self._device)

    def permute(self, *dims) -> "FakeTorchTensor":
        """A view of the same memory, dims permuted (as PyTorch's)."""
        return FakeTorchTensor(tuple(self.shape[d] for d in dims), self._itemsize, self._pointer, self._device,
                               tuple(self._strides[d] for d in dims))

    def copy_(self, src: "FakeTorchTensor") -> "FakeTorchTensor":
        """PyTorch's strided copy, recorded in ``copied`` (the fake moves no data)."""
        FakeTorchTensor.copied.append((self.data_ptr(), src.data_ptr(), src.shape, src.stride()))
        return self


FakeTorchTensor.copied: list = []  # (dst, src, src shape, src strides) of each copy_

FakeTorchTensor.__module__ = "torch"  # the ops tell frameworks apart by the module of the type


class _Call:
    def __init__(self, fn):
        self.fn, self.argtypes, self.restype = fn, None, None

    def __call__(self, *args):
        return self.fn(*args)


#: ``cuLaunchKernel``'s C signature, for the fake's launch as a C function pointer.
LAUNCH = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *[ctypes.c_uint] * 7, ctypes.c_void_p,
                           ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p)
#: ``cuLaunchKernelEx``'s C signature, likewise.
LAUNCH_EX = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(LaunchConfig), ctypes.c_void_p,
                              ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p)


class FakeCuda:
    """``libcuda``'s calls of ``ops.driver``: launches (with their arguments unpacked) and copies recorded, a
    context stack whose top is the current context (0: none). A launch is refused as the driver refuses it: with
    no context current (``CUDA_ERROR_INVALID_CONTEXT``), or where its function's context (``function_contexts``)
    is not its stream's (a stream of ``stream_contexts``, or the current context's own: the legacy default and
    any other) (``CUDA_ERROR_INVALID_HANDLE``); ``status`` is returned by every launch it would take.

    ``native=True``: ``cuLaunchKernel`` is a C function pointer (a ``ctypes`` callback), so the driver launches
    through the C extension where it is built; the fake reads ``function_params[function]`` parameter
    addresses (``install`` records them). ``NATIVE`` is the default (a test module may set it for all its fakes).
    ``version``: what ``cuDriverGetVersion`` says; ``cuLaunchKernelEx`` records its launch as ``cuLaunchKernel``
    does, with the config's ``attributes`` (``(id, first int of the value)`` each; a plain launch records none)."""

    NATIVE = False

    def __init__(self, current: int = 7, native: bool | None = None, version: int = 13000):
        self.launches: list[tuple] = []
        self.copies: list[tuple] = []
        self.contexts = [current]
        self.pushes = 0
        self.function_contexts: dict[int, int] = {}
        self.stream_contexts: dict[int, int] = {}
        self.status = 0
        self.function_params: dict[int, int] = {}
        native = self.NATIVE if native is None else native
        self.cuLaunchKernel = LAUNCH(self._launch_native) if native else _Call(self._launch)
        self.cuLaunchKernelEx = LAUNCH_EX(self._launch_ex_native) if native else _Call(self._launch_ex)
        self.version = version
        self.cuDriverGetVersion = _Call(lambda pointer: self._out(pointer, self.version))
        self.cuMemcpyDtoDAsync_v2 = _Call(lambda dst, src, n, stream: self.copies.append((dst, src, n, stream)) or 0)
        self.cuCtxGetCurrent = _Call(self._get)
        self.cuCtxPushCurrent_v2 = _Call(self._push)
        self.cuCtxPopCurrent_v2 = _Call(lambda pointer: self.contexts.pop() and 0)
        self.cuGetErrorName = _Call(lambda status, pointer: 1)
        #: The device the fake driver has: its attributes (``driver.DEVICE_ATTRIBUTES`` codes; 97: the opt-in shared
        #: memory a CTA may have, which ``cuFuncSetAttribute`` checks), primary context.
        self.attributes = {16: 132, 38: 50 * 2**20, 75: 9, 76: 0, 97: 227 * 1024}
        self.primary = 7
        self.initialized = False
        #: ``(source, arch)`` of each kernel ``launch.compile_ahead`` compiled (``install``: no compiler is called).
        self.compiled: list[tuple[str, str]] = []
        #: ``(context, image, name, shared bytes allowed)`` of each function loaded (its handle: its index + 1).
        self.loaded: list[list] = []
        self.cuInit = _Call(self._init)
        self.cuDeviceGet = _Call(self._device_get)
        self.cuDeviceGetAttribute = _Call(self._attribute)
        self.cuDevicePrimaryCtxRetain = _Call(lambda pointer, device: self._out(pointer, self.primary))
        self.cuModuleLoadData = _Call(self._load)
        self.cuModuleGetFunction = _Call(self._get_function)
        self.cuFuncSetAttribute = _Call(self._set_attribute)
        #: Streams being captured (``cuStreamIsCapturing``), and the milliseconds a launch takes (``launch_ms`` of
        #: its record; 1.0 by default): an event is recorded at a launch count, and the time between two events is
        #: that of the launches between them (``cuEventElapsedTime``).
        self.capturing: set[int] = set()
        self.launch_ms = lambda launch: 1.0
        self.events: list[int | None] = []
        self.synchronized: list[int] = []
        self.cuStreamSynchronize = _Call(lambda stream: self.synchronized.append(stream or 0) or 0)
        self.cuStreamIsCapturing = _Call(lambda stream, pointer: self._out(pointer, int((stream or 0) in self.capturing)))
        self.cuEventCreate = _Call(lambda pointer, flags: self.events.append(None) or self._out(pointer, len(self.events)))
        self.cuEventRecord = _Call(self._record)
        self.cuEventSynchronize = _Call(lambda event: 0)
        self.cuEventElapsedTime = _Call(self._elapsed)
        self.cuEventDestroy_v2 = _Call(lambda event: 0)

    @staticmethod
    def _out(pointer, value) -> int:
        pointer._obj.value = value
        return 0

    def _init(self, flags) -> int:
        self.initialized = True
        return 0

    def _device_get(self, pointer, ordinal) -> int:
        if not self.initialized:
            return 3  # CUDA_ERROR_NOT_INITIALIZED
        return self._out(pointer, ordinal) if ordinal == 0 else 101  # CUDA_ERROR_INVALID_DEVICE

    def _attribute(self, pointer, code, device) -> int:
        return self._out(pointer, self.attributes[code]) if code in self.attributes else 1

    def _load(self, pointer, image) -> int:
        if not self.contexts[-1]:
            return 201  # CUDA_ERROR_INVALID_CONTEXT
        self.loaded.append([self.contexts[-1], bytes(image), None, 0])
        return self._out(pointer, len(self.loaded))

    def _get_function(self, pointer, module, name) -> int:
        self.loaded[getattr(module, "value", module) - 1][2] = name.decode()
        return self._out(pointer, getattr(module, "value", module))

    def _set_attribute(self, function, attribute, value) -> int:
        if attribute != 8 or value > self.attributes[97]:
            return 1  # CUDA_ERROR_INVALID_VALUE
        self.loaded[getattr(function, "value", function) - 1][3] = value
        return 0

    def _record(self, event, stream) -> int:
        self.events[getattr(event, "value", event) - 1] = len(self.launches)
        return 0

    def _elapsed(self, pointer, start, end) -> int:
        first, last = (self.events[getattr(e, "value", e) - 1] for e in (start, end))
        pointer._obj.value = sum(self.launch_ms(launch) for launch in self.launches[first:last])
        return 0

    def _get(self, pointer) -> int:
        pointer._obj.value = self.contexts[-1]
        return 0

    def _push(self, context) -> int:
        self.pushes += 1
        self.contexts.append(context)
        return 0

    def _launch_native(self, function, gx, gy, gz, bx, by, bz, shared, stream, params, extra) -> int:
        count = self.function_params.get(function)
        if count is None:
            return 500  # CUDA_ERROR_NOT_FOUND: a function this fake did not load
        return self._launch(function, gx, gy, gz, bx, by, bz, shared, stream or 0, [params[i] for i in range(count)],
                            extra)

    def _launch_ex_native(self, config, function, params, extra) -> int:
        count = self.function_params.get(function)
        if count is None:
            return 500
        return self._launch_ex(config.contents, function, [params[i] for i in range(count)], extra)

    def _launch_ex(self, config, function, params, extra) -> int:
        c = getattr(config, "_obj", config)  # ctypes.byref's target, or the struct itself
        attributes = [(c.attrs[i].id, c.attrs[i].value.flag) for i in range(c.num_attrs)]
        status = self._launch(function, c.grid_x, c.grid_y, c.grid_z, c.block_x, c.block_y, c.block_z,
                              c.shared_bytes, c.stream or 0, params, extra)
        if not status:
            self.launches[-1]["attributes"] = attributes
        return status

    def _launch(self, function, gx, gy, gz, bx, by, bz, shared, stream, params, extra) -> int:
        """Records the launch with the bytes from the first argument's address to 8 past the last's (each
        argument is read at its own address: ``unpack``)."""
        current = self.contexts[-1]
        if not current:
            return 201  # CUDA_ERROR_INVALID_CONTEXT
        if self.function_contexts.get(function, current) != self.stream_contexts.get(stream, current):
            return 400  # CUDA_ERROR_INVALID_HANDLE
        if self.status:
            return self.status
        addresses = list(params)
        self.launches.append(dict(function=function, grid=(gx, gy, gz), block=(bx, by, bz), shared=shared,
                                  stream=stream, context=self.contexts[-1], extra=extra, addresses=addresses,
                                  attributes=[],
                                  arguments=ctypes.string_at(addresses[0], addresses[-1] - addresses[0] + 8)))
        return 0

    @staticmethod
    def unpack(launch: dict, packing) -> tuple:
        """The arguments as the kernel reads them: each at its address in ``params``."""
        first = launch["addresses"][0]
        assert [a - first for a in launch["addresses"]] == list(packing.offsets) and launch["extra"] is None
        return struct.unpack_from(packing.format, launch["arguments"])


def install(monkeypatch, cuda: FakeCuda, sms: int = 132, context: int = 7, stream: int = 0x5000) -> dict:
    """Route the ops' device calls to ``cuda``; returns ``{id(function): kernel}`` of the kernels prepared."""
    fake = Driver(cuda)
    loaded: dict[int, object] = {}

    def prepare(kernel, device, ctas, follows_ours=False):
        """Plain launches (``test_dependent_launch`` runs the real ``launch.prepare`` for dependent ones)."""
        loaded[id(kernel)] = kernel
        cuda.function_contexts[id(kernel)] = context
        cuda.function_params[id(kernel)] = len(kernel.params)
        return PreparedLaunch(id(kernel), context, ctas, kernel.threads, kernel.shared_bytes,
                              driver.ArgumentPacking.of(kernel.params))

    monkeypatch.setattr(driver, "driver", lambda: fake)
    monkeypatch.setattr(dispatch, "driver", lambda: fake)
    monkeypatch.setattr(launch, "driver", lambda: fake)
    monkeypatch.setattr(launch, "prepare", prepare)
    monkeypatch.setattr(launch, "compile_cubin_bytes", lambda source, arch, prefer: cuda.compiled.append(
        (source, arch)) or b"")
    monkeypatch.setattr(launch, "multiprocessors", lambda device: sms)
    monkeypatch.setattr(launch, "grid_shape", lambda device: GridShape(sms))
    monkeypatch.setattr(launch, "device_context", lambda device: context)
    monkeypatch.setattr(tensors, "torch_stream", lambda device: stream)
    dispatch.call_plan.cache_clear()
    launch._prepared.cache_clear()
    return loaded
