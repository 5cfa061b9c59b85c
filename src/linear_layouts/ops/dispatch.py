"""The fast path of ``permute`` and ``transpose`` for PyTorch tensors: one plan per call signature, kept.

A call's signature is ``(shape, element size, dims, device, source address mod 16, strides)`` (strides only for a
view that is not contiguous: read in memory order at its strides, ``api._memory``); its ``CallPlan`` (built once,
kept in an LRU of ``PLANS`` entries) holds the output's shape and the prepared launches (``ops.driver``:
function, grid, block, shared memory and argument packing fixed) with their arguments after the two
pointers. A call then reads the input's pointer, allocates the output (or checks ``out=``), reads the
current stream and launches through the driver: no re-planning, no framework round trips. Whatever the
fast path does not take (another framework, a negative stride, a conjugate or negative view, an ``out=`` that
is not exactly right) goes to the general path of ``ops.api``, which takes or refuses it with the reason.

Example (on a GPU): the second ``permute(x, (0, 2, 1, 3))`` of a ``[8, 2048, 8, 128]`` bf16 tensor finds its
plan (one launch of a row-move kernel) and launches it.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

from linear_layouts.core.errors import LayoutError
from linear_layouts.ops import launch as _launch
from linear_layouts.ops import tensors as _tensors
from linear_layouts.ops import tune as _tune
from linear_layouts.ops.driver import PreparedLaunch, driver
from linear_layouts.ops.launches import framework_gathers, gathers, permute_template
from linear_layouts.ops.plan import memory_permutation, normalize_dims

__all__ = ["CallPlan", "call_plan", "in_memory_order", "torch_permute", "torch_view", "PLANS"]

#: Call signatures whose plans are kept (least recently used dropped first).
PLANS = 4096
#: Element sizes the fast path takes (16-byte elements: the general path).
_ITEMSIZES = (1, 2, 4, 8)


@dataclass(frozen=True, eq=False)
class CallPlan:
    """What a call of one signature launches: ``launches`` (each a ``PreparedLaunch``, its arguments after
    the two pointers, and the byte offsets added to them), or a copy of ``copy_bytes`` (a reduced
    permutation that is the identity; ``view``: the permuted view is contiguous, which ``permute`` returns itself
    unless asked for a copy, as ``.contiguous()`` does); ``nbytes`` of the output, ``src_bytes`` the input spans from its
    first element (``nbytes`` for a dense input; more for a view with gaps). A view gathered first
    (``launches.gathers``): ``launches`` write a new tensor of ``scratch_shape``, which ``then`` permutes into
    the output; one the framework's copy moves (``launches.framework_gathers``): ``framework``, nothing else."""

    out_shape: tuple[int, ...]
    nbytes: int
    launches: tuple[tuple[PreparedLaunch, tuple[int, ...], int, int], ...]
    copy_bytes: int
    src_bytes: int = 0
    scratch_shape: tuple[int, ...] = ()
    then: CallPlan | None = None
    framework: bool = False
    view: bool = False


def _prepared(launches, device: int, follows_ours: bool = False
              ) -> tuple[tuple[PreparedLaunch, tuple[int, ...], int, int], ...]:
    """``permute_template``'s launches prepared (one ``PreparedLaunch`` per kernel, grid and whether it follows
    a kernel of the call: every launch but the first, and the first too where ``follows_ours``)."""
    prepared: dict[tuple[Any, int, bool], PreparedLaunch] = {}
    out = []
    for i, (kernel, ctas, tail, s, d) in enumerate(launches):
        key = (kernel, ctas, follows_ours or i > 0)
        if key not in prepared:
            prepared[key] = _launch.prepare(kernel, device, ctas, key[2])
        out.append((prepared[key], tail, s, d))
    return tuple(out)


@functools.lru_cache(maxsize=PLANS)
def call_plan(shape: tuple[int, ...], itemsize: int, dims: tuple, device: int, src_alignment: int,
              strides: tuple[int, ...] | None = None, follows_ours: bool = False, tuned: bool = False
              ) -> CallPlan | None:
    """The ``CallPlan`` of ``permute`` for a contiguous ``shape`` of ``itemsize``-byte elements (or a view at
    ``strides``) at an address ``src_alignment`` mod 16 on ``device``, the output at an address 0 mod 16
    (LayoutError for bad ``dims``); None for negative strides (the general path says why). ``follows_ours``: the
    plan runs right after a kernel of the same call (a gather's), so its first launch may be dependent too.
    ``tuned``: a contiguous input's launches at its tuning's tile (``ops.tune``; ``tune.Untuned`` where that is
    still to be timed)."""
    dims = normalize_dims(dims, len(shape))
    out_shape = tuple(shape[d] for d in dims)
    src_bytes = math.prod(shape) * itemsize
    memory_shape, memory_dims, memory_strides = shape, dims, None
    if strides is not None:
        view = memory_permutation(shape, strides, dims)
        if view is None:
            return None
        memory_shape, memory_strides, memory_dims = view
        if src_bytes:
            src_bytes = (1 + sum((n - 1) * s for n, s in zip(shape, strides))) * itemsize
        if framework_gathers(memory_shape, memory_dims, itemsize, memory_strides):
            return CallPlan(out_shape, math.prod(shape) * itemsize, (), 0, src_bytes, framework=True)
        if gathers(memory_shape, memory_dims, itemsize, memory_strides):
            identity = tuple(range(len(memory_shape)))
            gather, nbytes = permute_template(memory_shape, identity, itemsize, src_alignment, 0,
                                              _launch.grid_shape(device), strides=memory_strides)
            return CallPlan(out_shape, nbytes, _prepared(gather, device, follows_ours), 0, src_bytes, memory_shape,
                            call_plan(memory_shape, itemsize, memory_dims, device, 0, None, True))
    if tuned and memory_strides is None:
        launches, nbytes = _tune.tuned_template(memory_shape, memory_dims, itemsize, src_alignment, 0, device,
                                                _launch.grid_shape(device))
    else:
        launches, nbytes = permute_template(memory_shape, memory_dims, itemsize, src_alignment, 0,
                                            _launch.grid_shape(device), strides=memory_strides)
    view = memory_strides is None and in_memory_order(memory_shape, memory_dims)
    if not launches:
        return CallPlan(out_shape, nbytes, (), nbytes, src_bytes, view=view)
    return CallPlan(out_shape, nbytes, _prepared(launches, device, follows_ours), 0, src_bytes, view=view)


_tune.on_clear(call_plan.cache_clear)


@functools.lru_cache(maxsize=PLANS)
def _order_kept(shape: tuple[int, ...], dims: tuple) -> tuple[int, ...] | None:
    """``dims`` normalized where they keep a contiguous ``shape`` (a ``torch.Size``) in memory order
    (``in_memory_order``), else None (also for dims that are not a permutation: the general path says why)."""
    try:
        dims = normalize_dims(dims, len(shape))
    except (LayoutError, TypeError):
        return None
    return dims if in_memory_order(tuple(shape), dims) else None


def torch_view(x: Any, dims: tuple | None) -> Any:
    """``x.permute(dims)`` where ``x`` is a contiguous CUDA tensor that it leaves in memory order (what
    ``.contiguous()`` returns as it is), else None: the first check of ``permute`` and ``transpose`` (``dims`` None)
    without ``out=`` or ``copy``, at about the host cost of PyTorch's own ``x.permute(dims).contiguous()``."""
    try:
        if not (x.is_cuda and x.is_contiguous()):
            return None
    except RuntimeError:  # a sparse tensor has no strides: the general path says so
        return None
    if dims is None:
        kept = _transpose_dims(x.dim())
        kept = None if kept is None else _order_kept(x.shape, kept)
    else:
        kept = _order_kept(x.shape, dims)
        if kept is not None and not set(map(type, dims)) <= _INT:  # kept by dims, where 1.0 and True are 1
            return None
    if kept is None:
        return None
    return x.permute(*kept) if kept else x


def in_memory_order(shape: tuple[int, ...], dims: tuple[int, ...]) -> bool:
    """Whether ``permute(dims)`` of a row-major ``shape`` keeps every element where it is: its dims of size over 1
    stay in order, or it has none. Example: ``(8, 1, 4)`` by ``(1, 0, 2)``."""
    kept = [d for d in dims if shape[d] != 1]
    return 0 in shape or kept == sorted(kept)


#: The type of dims the plans are kept by (``torch_permute`` normalizes any other first).
_INT = frozenset((int,))


@functools.lru_cache(maxsize=1)
def _grad_enabled() -> Any:
    """PyTorch's ``torch.is_grad_enabled`` (imported once a tensor that requires grad comes)."""
    import torch  # noqa: PLC0415 - a tensor of it came

    return torch.is_grad_enabled


@functools.lru_cache(maxsize=None)
def _transpose_dims(rank: int) -> tuple[int, ...] | None:
    """``transpose``'s permutation of ``rank`` dims (the last two swapped); None under 2 dims."""
    return tuple(range(rank - 2)) + (rank - 1, rank - 2) if rank >= 2 else None


def _takes(out: Any, x: Any, device: int, shape: tuple[int, ...]) -> bool:
    """Whether the fast path writes into ``out``: a dense, contiguous tensor of ``x``'s type, dtype and device and
    of ``shape``, without PyTorch's lazy conjugate or negative bit (the general path says what is wrong else)."""
    try:
        return (type(out) is type(x) and out.dtype == x.dtype and out.get_device() == device
                and tuple(out.shape) == shape and out.is_contiguous() and not (out.is_conj() or out.is_neg()))
    except RuntimeError:  # a sparse tensor has no strides
        return False


def torch_permute(x: Any, dims: Any, out: Any, copy: Any = False) -> Any:
    """``ops.permute(x, dims, out, copy=copy)`` of a PyTorch tensor by its call plan, or None where the fast path
    does not take the call (``dims`` None: ``transpose``; dims other than Python ints are ``normalize_dims``' first;
    a tensor that requires grad: ``ops.autograd`` decides; ``copy`` not a bool: the general path says so)."""
    if copy is not False and copy is not True:
        return None
    try:
        if not x.is_cuda or x.is_conj() or x.is_neg():
            return None
        strides = None if x.is_contiguous() else tuple(x.stride())
        if x.requires_grad and _grad_enabled()():
            return None
    except RuntimeError:  # a sparse tensor has no strides: the general path says so
        return None
    if dims is None:
        dims = _transpose_dims(x.dim())
        if dims is None:
            return None
    elif type(dims) is not tuple:
        try:
            dims = tuple(dims)
        except TypeError:
            return None
    if not set(map(type, dims)) <= _INT:  # plans are kept by dims, where 1.0 and True are 1
        dims = normalize_dims(dims, x.dim())
    itemsize = x.element_size()
    if itemsize not in _ITEMSIZES:
        return None
    src = x.data_ptr()
    device = x.get_device()
    shape = tuple(x.shape)
    try:
        plan = (call_plan(shape, itemsize, dims, device, src & 15, strides, False, True) if _tune.enabled() else
                call_plan(shape, itemsize, dims, device, src & 15, strides))
    except TypeError:  # unhashable dims: the general path says what is wrong
        return None
    except _tune.Untuned as untuned:  # the first call of a signature with AUTOTUNE on: timed here
        plan = _tune.after_tuning(untuned, src, _tensors.torch_stream(device), _torch_scratch(x), lambda tuned:
                                  call_plan(shape, itemsize, dims, device, src & 15, strides, False, tuned))
    if plan is None:
        return None
    if out is None:
        if plan.view and not copy:  # contiguous already: .contiguous() returns the view itself
            return x.permute(*dims) if dims else x
        out = x.new_empty(plan.out_shape)
    elif not _takes(out, x, device, plan.out_shape):
        return None
    dst = out.data_ptr()
    if dst & 15 or (plan.nbytes and src < dst + plan.nbytes and dst < src + plan.src_bytes):
        return None
    if plan.framework:
        out.copy_(x.permute(*dims) if dims else x)
        return out
    stream = _tensors.torch_stream(device)
    if plan.then is not None:  # gathered into a new dense tensor, then permuted from it
        scratch = x.new_empty(plan.scratch_shape)
        _run(plan, src, scratch.data_ptr(), stream, device)
        _run(plan.then, scratch.data_ptr(), dst, stream, device)
        return out
    _run(plan, src, dst, stream, device)
    return out


def _torch_scratch(x: Any):
    """``ops.tune``'s scratch memory: ``n`` bytes of new tensors like ``x`` (kept alive with the function)."""
    held: list = []

    def allocate(nbytes: int) -> int:
        held.append(x.new_empty((-(-nbytes // x.element_size()),)))
        return held[-1].data_ptr()
    return allocate


def _run(plan: CallPlan, src: int, dst: int, stream: int, device: int) -> None:
    """``plan``'s launches (or copy) from ``src`` to ``dst`` on ``stream``."""
    for prepared, tail, s, d in plan.launches:
        prepared.run(stream, (src + s, dst + d) + tail)
    if plan.copy_bytes:
        cuda = driver()
        cuda.in_context(_launch.device_context(device), lambda: cuda.copy(dst, src, plan.copy_bytes, stream))
