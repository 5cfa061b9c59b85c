"""The tensors ``linear_layouts.ops`` accepts: PyTorch tensors, CuPy arrays, and any other CUDA array (through
DLPack or ``__cuda_array_interface__``, read as a CuPy array). Neither framework is imported here until a
tensor of it arrives.

A ``Tensor`` is what the ops need of one: its framework, shape, element strides, element size, dtype (an
``ElementType`` where the package knows it), device and data pointer; ``empty`` makes an output of the same
framework on the same device; ``stream`` is the framework's current CUDA stream there (kernels run on it,
so they order with the caller's other work).

Example: ``describe(torch.zeros(4, 8, device="cuda"), "x")`` is a ``Tensor`` with ``shape == (4, 8)``,
``strides == (8, 1)``, ``itemsize == 4`` and ``dtype.name == "fp32"``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from linear_layouts.core.element_type import ElementType, element_type
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote

__all__ = ["Tensor", "describe", "empty", "stream", "torch_stream", "is_contiguous", "same_memory", "framework_dtype",
           "alignment", "overlaps_itself"]

#: DLPack device types of CUDA memory (``kDLCUDA``, ``kDLCUDAManaged``).
_DLPACK_CUDA, _DLPACK_CUDA_MANAGED = 2, 13

#: Where a DLPack tensor of another device type lives (DLPack's ``DLDeviceType``), for the error.
_DLPACK_DEVICES = {1: "host memory", 3: "pinned host memory (kDLCUDAHost)", 4: "OpenCL memory",
                   7: "Vulkan memory", 8: "Metal memory", 9: "VPI memory", 10: "ROCm (HIP) memory",
                   11: "pinned host memory (kDLROCMHost)", 12: "extension device memory", 14: "oneAPI memory",
                   15: "WebGPU memory", 16: "Hexagon memory"}


@dataclass(frozen=True)
class Tensor:
    """One argument tensor, described (module doc). ``dtype`` is None for a type the package does not name
    (e.g. complex): the layout ops move such elements by their size."""

    framework: str  # "torch" or "cupy"
    value: Any
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    itemsize: int
    dtype: ElementType | None
    device: int
    pointer: int

    @property
    def numel(self) -> int:
        out = 1
        for size in self.shape:
            out *= size
        return out

    @property
    def nbytes(self) -> int:
        return self.numel * self.itemsize

    @property
    def memory_range(self) -> tuple[int, int]:
        """The bytes ``[start, end)`` its elements lie in (``nbytes`` from ``pointer`` for a dense tensor; wider for
        a view with gaps): ``(p, p + 4 * (3 * 10 + 6))`` for a ``(4, 6)`` fp32 view at strides ``(10, 1)``."""
        low = sum((size - 1) * stride for size, stride in zip(self.shape, self.strides) if stride < 0)
        high = sum((size - 1) * stride for size, stride in zip(self.shape, self.strides) if stride > 0)
        return self.pointer + low * self.itemsize, self.pointer + (high + 1) * self.itemsize


def _element_type(dtype: Any) -> ElementType | None:
    try:
        return element_type(dtype)
    except LayoutError:
        return None


def _framework(x: Any) -> str | None:
    """``"torch"`` for a PyTorch tensor (one of a subclass too), ``"cupy"`` for a CuPy array, else None: by the
    top-level package of its type or of a base of it (``torchvision``'s or ``cupyx``'s objects are neither)."""
    for base in type(x).__mro__:
        package = (getattr(base, "__module__", None) or "").split(".")[0]
        if package in ("torch", "cupy"):
            return package
    return None


def describe(x: Any, argument: str) -> Tensor:
    """``x`` as a ``Tensor``; LayoutError naming ``argument`` for anything else (a NumPy array, a CPU tensor,
    a Python list, a sparse PyTorch tensor, a PyTorch conjugate or negative view), and for an array whose
    elements are not whole elements apart (byte strides that are not multiples of the element size) or not at
    addresses the kernels can access them at (``alignment``)."""
    framework = _framework(x)
    if framework == "torch":
        if not getattr(x, "is_cuda", False):
            raise LayoutError(f"{argument}: a PyTorch tensor on {quote(str(getattr(x, 'device', '?')))}; the ops run "
                              "on CUDA tensors (move it with .cuda())")
        if str(getattr(x, "layout", "torch.strided")) != "torch.strided":
            raise LayoutError(f"{argument}: a PyTorch tensor of layout {x.layout}; the ops move dense (strided) "
                              "tensors (call .to_dense() first)")
        if x.is_conj() or x.is_neg():  # lazy bits PyTorch applies when reading: the kernels move the memory
            raise LayoutError(f"{argument}: a {'conjugate' if x.is_conj() else 'negative'} view (PyTorch applies it "
                              "when reading; the ops move the memory as it is): call .resolve_conj() / .resolve_neg() "
                              "first")
        return _aligned(Tensor("torch", x, tuple(x.shape), tuple(x.stride()), x.element_size(), _element_type(x.dtype),
                               x.device.index if x.device.index is not None else 0, x.data_ptr()), argument)
    if framework == "cupy":
        itemsize = x.itemsize
        if any(s % itemsize for s in x.strides):
            raise LayoutError(f"{argument}: byte strides {tuple(x.strides)} are not multiples of its {itemsize}-byte "
                              "elements")
        return _aligned(Tensor("cupy", x, tuple(x.shape), tuple(s // itemsize for s in x.strides), itemsize,
                               _element_type(x.dtype), x.device.id, x.data.ptr), argument)
    if not hasattr(x, "__cuda_array_interface__") and hasattr(x, "__dlpack_device__"):
        try:
            kind = int(x.__dlpack_device__()[0])
        except Exception:  # noqa: BLE001 - a broken protocol: let CuPy say
            kind = _DLPACK_CUDA
        if kind not in (_DLPACK_CUDA, _DLPACK_CUDA_MANAGED):
            where = _DLPACK_DEVICES.get(kind, f"memory of DLPack device type {kind}")
            raise LayoutError(f"{argument}: a {type(x).__name__} in {where}; the ops run on CUDA tensors")
    if hasattr(x, "__cuda_array_interface__") or hasattr(x, "__dlpack__"):
        try:
            import cupy  # noqa: PLC0415 - optional
        except ImportError:
            raise LayoutError(f"{argument}: a {type(x).__name__} is read through CuPy, which is not installed "
                              "(pip install cupy-cuda13x), or pass a PyTorch tensor") from None
        try:
            array = cupy.asarray(x) if hasattr(x, "__cuda_array_interface__") else cupy.from_dlpack(x)
        except Exception as error:  # noqa: BLE001 - a host array, a foreign device: say so
            raise LayoutError(f"{argument}: {type(x).__name__} is not a CUDA array CuPy can read ({error})"[:300]) from None
        return describe(array, argument)
    raise LayoutError(f"{argument}: expected a CUDA tensor (PyTorch, CuPy, or a DLPack / __cuda_array_interface__ "
                      f"array), got {type(x).__name__}")


def alignment(itemsize: int) -> int:
    """The bytes an element's address must be a multiple of: its size (the largest power of two dividing it), at
    most 8 (a 16-byte element moves as two 8-byte halves)."""
    return min(itemsize & -itemsize, 8)


def _aligned(t: Tensor, argument: str) -> Tensor:
    """``t``; LayoutError naming ``argument`` where its address is not a multiple of ``alignment`` (a CuPy view of
    bytes at an odd offset: the kernels would fault on it)."""
    if t.nbytes and t.pointer % alignment(t.itemsize):
        raise LayoutError(f"{argument}: its address {t.pointer:#x} is not a multiple of {alignment(t.itemsize)} bytes, "
                          f"as its {t.itemsize}-byte elements need")
    return t


def is_contiguous(t: Tensor) -> bool:
    """Row-major and dense (size-1 dims may have any stride; an empty tensor is, at any strides, as in PyTorch,
    CuPy and NumPy: ``empty((0, 5)).T``)."""
    if 0 in t.shape:
        return True
    expected = 1
    for size, stride in zip(reversed(t.shape), reversed(t.strides)):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def overlaps_itself(t: Tensor) -> bool:
    """Whether two elements of ``t`` may share memory: by the usual sufficient rule, each dim's stride (smallest
    first) must exceed the span of the dims inside it. A broadcast (stride 0) or a negative stride counts as
    overlapping; ``(4, 6)`` at strides ``(10, 1)`` does not overlap, at ``(3, 1)`` it does."""
    if 0 in t.shape:
        return False
    span = 1
    for stride, size in sorted((s, n) for n, s in zip(t.shape, t.strides) if n != 1):
        if stride < span:
            return True
        span = stride * (size - 1) + span
    return False


def same_memory(a: Tensor, b: Tensor) -> bool:
    """Whether the bytes ``a`` and ``b`` lie in overlap (on one device; ``Tensor.memory_range``: a view with gaps
    counts the gaps between its elements)."""
    if a.device != b.device or not a.nbytes or not b.nbytes:
        return False
    (a0, a1), (b0, b1) = a.memory_range, b.memory_range
    return a0 < b1 and b0 < a1


def framework_dtype(like: Tensor, name: str) -> Any:
    """The framework's dtype for ``name``: ``"fp8e4nv"`` / ``"fp8e5"`` (PyTorch's float8 types; CuPy has
    none, so uint8 holding the bits) or ``"fp32"``."""
    if like.framework == "torch":
        import torch  # noqa: PLC0415 - the tensor came from it

        return {"fp8e4nv": torch.float8_e4m3fn, "fp8e5": torch.float8_e5m2, "fp32": torch.float32}[name]
    return {"fp8e4nv": np.uint8, "fp8e5": np.uint8, "fp32": np.float32}[name]  # CuPy's dtypes are NumPy's


def empty(like: Tensor, shape: tuple[int, ...], native_dtype: Any = None) -> Any:
    """A new contiguous tensor of ``like``'s framework and device: ``shape``, the framework's ``native_dtype``
    (default ``like``'s)."""
    dtype = like.value.dtype if native_dtype is None else native_dtype
    if like.framework == "torch":
        import torch  # noqa: PLC0415

        return torch.empty(shape, dtype=dtype, device=like.value.device)
    import cupy  # noqa: PLC0415

    with cupy.cuda.Device(like.device):
        return cupy.empty(shape, dtype=dtype)


@functools.lru_cache(maxsize=1)
def _torch_stream_accessor() -> Any:
    import torch  # noqa: PLC0415 - a tensor of it came

    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    return raw if raw is not None else (lambda index: torch.cuda.current_stream(index).cuda_stream)


def torch_stream(device: int) -> int:
    """PyTorch's current CUDA stream on ``device`` (a ``cudaStream_t`` as an int), through its C++ accessor
    where PyTorch has it."""
    return _torch_stream_accessor()(device)


def stream(t: Tensor) -> int:
    """The framework's current CUDA stream on ``t``'s device (a ``cudaStream_t`` as an int)."""
    if t.framework == "torch":
        return torch_stream(t.device)
    import cupy  # noqa: PLC0415

    with cupy.cuda.Device(t.device):
        return int(cupy.cuda.get_current_stream().ptr)
