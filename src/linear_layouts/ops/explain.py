"""What ``ops.permute`` launches for a shape, told on the CPU: the problem the planner reduces the permutation to
and each launch's kernel, tile and grid. It is the plan ``permute`` runs (``launches.permute_launches``), not an
estimate, so a user can see which kernel a shape takes on a device before running it, or why two shapes differ.

A contiguous ``shape`` permuted by ``dims`` reduces (``ops.plan``) to an empty tensor, a copy, a move of whole
rows, or a batch of ``rows x cols`` transposes; each launch is one of ``ops.kernels.KERNEL_KINDS``
(``docs/ops.md`` says when each is taken).

Example (an H100's grid, the default; ``device="H200"`` for an H200's)::

    >>> print(explain((32, 28, 28, 512), (0, 3, 1, 2), "bf16"))  # doctest: +ELLIPSIS
    permute (32, 28, 28, 512) by (0, 3, 1, 2), bf16 on 132 SMs, 50 MiB L2: a transpose of 784 x 512, batch 32 (24.5 MiB each way)
      ll_permute_...: tiled, 64 x 64 tile, 8 warps, 3328 CTAs
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Any

import numpy as np

from linear_layouts.core.element_type import element_type
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote
from linear_layouts.ops.api import ordered
from linear_layouts.ops.kernels import KERNEL_KINDS, GridShape
from linear_layouts.ops.launch import MIN_ARCH
from linear_layouts.ops.launches import Copy, Launch, _plan, permute_launches, pointer_alignment
from linear_layouts.ops.plan import PermuteKind, normalize_dims
from linear_layouts.target import DEFAULT_TARGET, Target, named_target, resolve

__all__ = ["KERNEL_KINDS", "MAX_BYTES", "LaunchSummary", "PermuteSummary", "explain", "moved_element"]

#: The largest tensor ``explain`` plans (1 TiB, several times any GPU's memory): the launches of a larger one could
#: number in the billions (one per piece a launch's parameters hold).
MAX_BYTES = 1 << 40

@dataclass(frozen=True)
class LaunchSummary:
    """One launch: ``kernel`` (its function name; ``None`` for a driver copy of ``copy_bytes``), its ``kind``
    (``KERNEL_KINDS``, or ``"driver copy"``), its tile ``rows x cols`` (elements; the flat copy's and the realigned
    rows': 1 x the bytes a CTA writes; 0 x 0 where the kernel has none), warps, CTAs, and the side a batch dim is folded along (``""``:
    none)."""

    kernel: str | None
    kind: str
    rows: int
    cols: int
    warps: int
    ctas: int
    fold: str = ""
    copy_bytes: int = 0

    def __str__(self) -> str:
        if self.kernel is None:
            return f"driver copy of {self.copy_bytes} bytes"
        tile = (f", {self.rows * self.cols} bytes a CTA" if self.kind in ("flat copy", "realigned rows") else
                f", {self.rows} x {self.cols} tile" if self.rows and self.kind != "small blocks" else "")
        fold = f", a batch dim folded along {self.fold}" if self.fold else ""
        ctas = f"{self.ctas} CTA" + ("" if self.ctas == 1 else "s")
        return f"{self.kernel}: {self.kind}{tile}, {self.warps} warp{'' if self.warps == 1 else 's'}, {ctas}{fold}"


@dataclass(frozen=True)
class PermuteSummary:
    """``explain``'s answer: the call, the reduced ``problem`` (``PermuteKind``'s value), its matrices ``rows x
    cols`` and ``batch`` count (a transpose or a row move; ``rows`` elements for a copy), the bytes read (and
    written) and the ``launches`` in order."""

    shape: tuple[int, ...]
    dims: tuple[int, ...]
    dtype: str
    device: GridShape
    problem: str
    rows: int
    cols: int
    batch: int
    nbytes: int
    launches: tuple[LaunchSummary, ...]

    def __str__(self) -> str:
        if self.problem in (PermuteKind.TRANSPOSE.value, PermuteKind.ROWS.value):
            what = ("a transpose of" if self.problem == PermuteKind.TRANSPOSE.value else "a move of rows:") + \
                f" {self.rows} x {self.cols}" + (f", batch {self.batch}" if self.batch > 1 else "")
        else:
            what = {PermuteKind.EMPTY.value: "nothing to move",
                    PermuteKind.COPY.value: "an identity in memory, so permute returns x's view (a copy below only "
                                            "with out= or copy=True)"}[self.problem]
        head = (f"permute {self.shape} by {self.dims}, {self.dtype} on {self.device.multiprocessors} SMs, "
                f"{self.device.l2_bytes / (1 << 20):g} MiB L2: {what} ({_size(self.nbytes)} each way)")
        return "\n".join([head] + [f"  {launch}" for launch in self.launches])


def _size(nbytes: int) -> str:
    """``nbytes`` in bytes or the largest binary unit it fills, three digits, no exponent:
    ``_size(25690112) == "24.5 MiB"``, ``_size(8589934592) == "8 GiB"``."""
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            value = nbytes / scale
            return f"{value:.3g} {unit}" if value < 1000 else f"{value:.0f} {unit}"
    return f"{nbytes} bytes"


def _kind(name: str) -> str:
    return next(kind for prefix, kind in KERNEL_KINDS if name.startswith(prefix))


def _summary(item: Launch | Copy) -> LaunchSummary:
    if isinstance(item, Copy):
        return LaunchSummary(None, "driver copy", 0, 0, 0, 0, copy_bytes=item.nbytes)
    k = item.kernel
    return LaunchSummary(k.name, _kind(k.name), getattr(k, "tile_rows", 0), getattr(k, "tile_cols", 0),
                         k.threads // 32, item.ctas, getattr(k, "fold", ""))


def _index(value: Any) -> int | None:
    """``value`` as a Python int where it is an integer (a NumPy or PyTorch one too, by ``__index__``) but not a bool;
    else None."""
    if isinstance(value, (bool, np.bool_)) or not hasattr(value, "__index__"):
        return None
    try:
        return operator.index(value)
    except TypeError:  # a 0-d float array has an __index__ that refuses
        return None


def moved_element(dtype: Any) -> tuple[str, int]:
    """``dtype``'s name and bytes: an element type ``core.element_type`` names, or a complex type of NumPy or PyTorch
    (which the package does not name: ``permute`` moves it by its size). Example: ``"complex64"`` -> 8 bytes."""
    try:
        kind = element_type(dtype)
    except LayoutError as error:
        found = _complex(dtype)
        if found is None:
            raise LayoutError(f"dtype: {error}") from None
        return found
    if kind.bits % 8 or kind.bytes not in (1, 2, 4, 8, 16):
        raise LayoutError(f"dtype: the ops move whole elements of 1, 2, 4, 8 or 16 bytes, got {kind.name}")
    return kind.name, kind.bytes


def _complex(dtype: Any) -> tuple[str, int] | None:
    """The name and bytes of a complex ``dtype`` (``torch.complex64``, ``np.complex128``, ``"complex64"``), else
    None."""
    if getattr(dtype, "is_complex", False) is True:  # a torch.dtype
        return str(dtype), dtype.itemsize
    try:
        found = np.dtype(dtype)
    except Exception:  # noqa: BLE001 - NumPy's parser raises TypeError, ValueError, even SyntaxError on odd text
        return None
    return (found.name, found.itemsize) if found.kind == "c" else None


def _grid(device: Any) -> GridShape:
    """``explain``'s ``device`` as the grid the planner reads: a Target's (or a known device name's) SMs, L2 and
    architecture, or the GridShape."""
    if isinstance(device, str):
        try:
            device = resolve(device)  # a known device, or an architecture on its default device
        except LayoutError as error:
            raise LayoutError(f"device: {str(error).removeprefix('target: ')}") from None
    if device is None or isinstance(device, Target):
        device = GridShape.of(DEFAULT_TARGET if device is None else device)
    if not isinstance(device, GridShape):
        raise LayoutError(f"device: must be a Target (named_target(device='H200')) or a GridShape (SMs, L2 bytes, "
                          f"architecture), got {quote(device)}")
    try:
        backend = device.target.backend
    except LayoutError as error:
        raise LayoutError(f"device: {error}") from None
    if backend != "cuda" or device.target.capability < MIN_ARCH:
        raise LayoutError(f"device: the layout ops run on NVIDIA GPUs of sm_{MIN_ARCH} and later "
                          f"(ops.launch.MIN_ARCH), got {quote(device.arch)}")
    return device


def explain(shape: Any, dims: Any, dtype: Any, device: GridShape | Target | None = None, src_offset: int = 0,
            dst_offset: int = 0) -> PermuteSummary:
    """What ``permute(x, dims)`` launches for a contiguous ``x`` of ``shape`` and element type ``dtype`` (anything
    ``core.element_type`` names: ``"bf16"``, ``torch.float32``, ...; or a complex type, by its size) on ``device``: a known GPU's ``Target`` or name
    (``"H200"``: its SMs, L2 and architecture, ``target.TARGETS``; an architecture, ``"sm_80"``, is its default
    device's), or a ``GridShape`` of any SMs, L2 bytes and
    architecture; default the ``DEFAULT_TARGET``'s (an H100's). ``src_offset`` / ``dst_offset``: the input's and
    output's bytes past 16-byte aligned addresses (narrower accesses follow from odd offsets). LayoutError naming
    the argument for a bad shape (or one over ``MAX_BYTES``), permutation, element type, device or offset."""
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
        raise LayoutError(f"shape: must be a sequence of sizes, got {quote(shape)}")
    sizes = tuple(ordered(shape, "shape"))
    shape = tuple(_index(s) for s in sizes)
    if any(s is None or s < 0 for s in shape):
        raise LayoutError(f"shape: sizes must be ints >= 0, got {quote(sizes)}")
    dims = normalize_dims(ordered(dims, "dims"), len(shape))
    element, itemsize = moved_element(dtype)
    if math.prod(shape) * itemsize > MAX_BYTES:
        raise LayoutError(f"shape: {shape} of {itemsize}-byte elements is {math.prod(shape) * itemsize} bytes, over "
                          f"the {MAX_BYTES} (1 TiB) explain plans; no GPU holds such a tensor")
    device = _grid(device)
    offsets = []
    for name, offset in (("src_offset", src_offset), ("dst_offset", dst_offset)):
        offsets.append(_index(offset))
        if offsets[-1] is None or offsets[-1] < 0 or offsets[-1] % itemsize:
            raise LayoutError(f"{name}: must be an int >= 0 and a multiple of the {itemsize}-byte elements, "
                              f"got {quote(offset)}")
    src_offset, dst_offset = offsets
    base = 1 << 40  # any 16-byte aligned address: the plan reads addresses modulo a sector only
    launches = permute_launches(shape, dims, itemsize, base + src_offset, 2 * base + dst_offset, device)
    problem = _plan(shape, dims, itemsize, pointer_alignment(src_offset, dst_offset))
    nbytes = math.prod(shape) * itemsize
    if problem.kind in (PermuteKind.TRANSPOSE, PermuteKind.ROWS):  # rows of words of short rows: in elements
        rows, cols, batch = problem.rows, problem.cols * problem.element_bytes // itemsize, problem.batch_count
    else:
        rows, cols, batch = math.prod(shape), 1, 1
    return PermuteSummary(shape, dims, element, device, problem.kind.value, rows, cols, batch, nbytes,
                          tuple(_summary(item) for item in launches))
