"""``transpose``, ``permute`` and ``cast_transpose``: layout ops on PyTorch / CuPy tensors (module doc of
``linear_layouts.ops``)."""

from __future__ import annotations

import dataclasses
import itertools
import math
import numbers
from collections.abc import Mapping, Set
from typing import Any

import numpy as np

from linear_layouts.core.element_type import element_type
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote
from linear_layouts.ops import autograd as _autograd
from linear_layouts.ops import dispatch as _dispatch
from linear_layouts.ops import launch as _launch
from linear_layouts.ops import tune as _tune
from linear_layouts.ops.launches import (
    Copy, addressed, cast_launches, framework_gathers, gathers, permute_launches, view_launches,
)
from linear_layouts.ops.plan import (
    dense_order, memory_permutation, normalize_dims, row_major_strides, strided_order,
)
from linear_layouts.ops.tensors import (
    Tensor, describe, empty, framework_dtype, is_contiguous, overlaps_itself, same_memory, stream,
)

__all__ = ["transpose", "permute", "cast_transpose"]

#: Element sizes the kernels move (16-byte elements move as two 8-byte halves).
_ITEMSIZES = (1, 2, 4, 8, 16)

#: fp8 formats of ``cast_transpose``: element type name -> PTX format.
_FP8 = {"fp8e4nv": "e4m3", "fp8e5": "e5m2"}

#: Input types of ``cast_transpose``: element type name -> ``codegen.permute.CAST_INPUTS`` name.
_CAST_INPUTS = {"bf16": "bf16", "fp16": "fp16", "fp32": "fp32"}

#: The most rows or columns of ``cast_transpose``'s matrix (its kernels' ``unsigned`` sizes; it is not cut into
#: launches as the permutations are).
MAX_CAST_EXTENT = 2**32 - 1

#: The most items read from an iterator of dims or sizes: more than any tensor has dims, so that an endless
#: iterator is refused (as a permutation of too many dims) instead of read forever.
MAX_ITEMS = 1 << 16


def ordered(values: Any, argument: str) -> Any:
    """``values`` as a tuple where it is an iterable other than a tuple or a list (an iterator read once, at most
    ``MAX_ITEMS + 1`` items), else as it is; LayoutError naming ``argument`` for a set or a mapping, whose order is
    not one a caller writes (``{2, 0, 1}`` iterates as ``0, 1, 2``), as PyTorch refuses them."""
    if type(values) is tuple or type(values) is list:
        return values
    if isinstance(values, (Set, Mapping)):
        raise LayoutError(f"{argument}: must be ints in order (a tuple, a list or an iterator), got a "
                          f"{type(values).__name__} {quote(values)}")
    try:
        return tuple(itertools.islice(values, MAX_ITEMS + 1))
    except TypeError:
        return values  # not iterable: the parser says so


def _input(x: Any, argument: str = "x", dense: bool = False, strided: bool = False) -> Tensor:
    """``x`` described and checked: contiguous (or, with ``dense``, any permutation of contiguous strides: the
    permutations compose it with their own, ``_memory``; with ``strided``, any view of non-negative strides:
    ``plan.strided_order``), of an element size the kernels move."""
    t = describe(x, argument)
    if not is_contiguous(t) and not (dense and dense_order(t.shape, t.strides) is not None) and not (
            strided and strided_order(t.shape, t.strides) is not None):
        if strided:
            raise LayoutError(f"{argument}: a view with negative strides {t.strides} (shape {t.shape}); the ops read "
                              f"views of non-negative strides: call .copy() / .contiguous() first")
        what = "contiguous (row-major, dense)" + (" or a permuted view of a contiguous tensor" if dense else "")
        raise LayoutError(f"{argument}: must be {what}, got strides {t.strides} for shape {t.shape}; call "
                          f".contiguous() first")
    if t.itemsize not in _ITEMSIZES:
        raise LayoutError(f"{argument}: elements of {t.itemsize} bytes are not supported (1, 2, 4, 8 or 16)")
    return t


def _output(x: Tensor, out: Any, shape: tuple[int, ...], argument: str, dtype: Any = None,
            dtype_name: str = "", strided: bool = False) -> Tensor:
    """``out`` checked against the expected ``shape``, dtype (``x``'s, or ``dtype`` named ``dtype_name``),
    framework and device, contiguous (with ``strided``: any view whose elements do not share memory); a new tensor
    when ``out`` is None."""
    if out is None:
        return describe(empty(x, shape, dtype), argument)
    o = describe(out, argument)
    if o.framework != x.framework:
        raise LayoutError(f"{argument}: a {o.framework} tensor, but x is a {x.framework} tensor")
    if o.device != x.device:
        raise LayoutError(f"{argument}: on device {o.device}, but x is on device {x.device}")
    if o.shape != shape:
        raise LayoutError(f"{argument}: shape {o.shape}, expected {shape}")
    want = x.value.dtype if dtype is None else dtype
    if o.value.dtype != want:
        raise LayoutError(f"{argument}: dtype {o.value.dtype}, expected {dtype_name or want}")
    if strided and not is_contiguous(o) and (any(st < 0 for st in o.strides) or overlaps_itself(o)):
        raise LayoutError(f"{argument}: a view whose elements may share memory (strides {o.strides} for shape "
                          f"{o.shape}: a broadcast, a negative stride or overlapping dims); the ops write each element "
                          "once")
    if not strided and not is_contiguous(o):
        raise LayoutError(f"{argument}: must be contiguous, got strides {o.strides} for shape {o.shape}")
    if same_memory(o, x):
        raise LayoutError(f"{argument}: overlaps the memory of x (the ops do not work in place)")
    return o


def permute(x: Any, dims, out: Any = None, *, copy: bool = False) -> Any:
    """``x.permute(dims).contiguous()``: a new contiguous tensor (or ``out``) with ``out[i_{dims[0]}, ...,
    i_{dims[r-1]}] = x[i_0, ..., i_{r-1}]``, in ``x``'s framework, on its device and current stream. Where the
    permuted view is contiguous already (a permutation of size-1 dims, ``w.t()`` transposed back, an empty
    tensor) it is returned itself, sharing ``x``'s memory, as ``.contiguous()`` returns it; ``copy=True`` returns
    a new tensor always.

    ``x``: a CUDA tensor (PyTorch, CuPy, DLPack) of any shape and rank and of 1-, 2-, 4-, 8- or 16-byte
    elements: contiguous, a permuted view of a contiguous one (``w.t()``, channels-last) or any view with gaps or
    repeats (``qkv[..., :d]``, ``y[:, :n].t()``, ``expand``), read at its strides (``_memory``). A view with no dim
    of stride 1 (``y[:, ::2]``) is gathered first where that is faster (``launches.gathers``), or, where its
    innermost dim is short, moved by the framework's own strided copy (``launches.framework_gathers``). ``dims``: a
    permutation of its dims (negative dims count from the end), a sequence or an iterator of ints; ``out``: a
    tensor of the permuted shape, ``x``'s dtype and device, not overlapping ``x``: contiguous, or a view whose
    elements do not share memory (a slice of a larger buffer, ``cache[:, :, pos:pos + n]``: written at its strides).
    The permutation is reduced first (``ops.plan``): size-1 dims dropped, dims that stay adjacent merged;
    what is left is a copy, a move of whole rows, or a batched transpose of tiles (masked at the edges).

    A PyTorch ``x`` that requires grad (grad mode on) is differentiated: the gradient goes back through the
    inverse permutation (``ops.autograd``); ``out=`` is then refused, as PyTorch refuses it.

    Example: ``permute(q, (0, 2, 1, 3))`` turns attention's ``[B, S, H, D]`` into ``[B, H, S, D]``; ``permute(k,
    (0, 2, 1, 3))`` of multi-query attention's ``[B, S, 1, D]`` is ``k``'s view ``[B, 1, S, D]``, no copy."""
    if type(dims) is not tuple and type(dims) is not list and dims is not None:
        dims = ordered(dims, "dims")  # an iterator is read once, here: the fast path may read it and hand it on
    if type(x).__module__ == "torch" and dims is not None:  # None is the fast path's transpose: refused below
        if out is None and copy is False and type(dims) is tuple:
            y = _dispatch.torch_view(x, dims)
            if y is not None:
                return y
        y = _dispatch.torch_permute(x, dims, out, copy)
        if y is not None:
            return y
    t = _input(x, strided=True)
    dims = normalize_dims(dims, len(t.shape))
    if _returns_view(t, dims, out, copy):
        return _view(t, dims)
    if _autograd.tracks(x):
        return _autograd.permute(x, dims, out, copy)
    shape = tuple(t.shape[d] for d in dims)
    o = _output(t, out, shape, "out", strided=True)
    _permute(t, o, dims)
    return o.value


def transpose(x: Any, out: Any = None, *, copy: bool = False) -> Any:
    """The last two dims of ``x`` swapped, materialized (``x.transpose(-2, -1).contiguous()``), batched over
    the others; ``x``, ``out`` and ``copy`` as in ``permute``.

    Example: ``transpose(w)`` of a ``4096 x 11008`` bf16 weight is its ``11008 x 4096`` transpose."""
    if type(x).__module__ == "torch":
        if out is None and copy is False:
            y = _dispatch.torch_view(x, None)
            if y is not None:
                return y
        y = _dispatch.torch_permute(x, None, out, copy)
        if y is not None:
            return y
    t = _input(x, strided=True)
    r = len(t.shape)
    if r < 2:
        raise LayoutError(f"x: transpose swaps the last two dims; x has {r}")
    dims = tuple(range(r - 2)) + (r - 1, r - 2)
    if _returns_view(t, dims, out, copy):
        return _view(t, dims)
    if _autograd.tracks(x):
        return _autograd.permute(x, dims, out, copy)
    o = _output(t, out, tuple(t.shape[d] for d in dims), "out", strided=True)
    _permute(t, o, dims)
    return o.value


def _returns_view(x: Tensor, dims: tuple[int, ...], out: Any, copy: Any) -> bool:
    """Whether ``permute`` returns ``x``'s permuted view itself: no ``out=``, no ``copy``, and the view contiguous
    (``tensors.is_contiguous``: as PyTorch's ``.contiguous()`` and CuPy's ``ascontiguousarray`` find it)."""
    if not isinstance(copy, (bool, np.bool_)):
        raise LayoutError(f"copy: must be True or False, got {quote(copy)}")
    if out is not None or copy:
        return False
    return is_contiguous(dataclasses.replace(x, shape=tuple(x.shape[d] for d in dims),
                                             strides=tuple(x.strides[d] for d in dims)))


def _view(x: Tensor, dims: tuple[int, ...]) -> Any:
    """``x``'s view permuted by ``dims``, in its framework (autograd records a PyTorch one as its own permute)."""
    if x.framework == "torch":
        return x.value.permute(*dims) if dims else x.value
    return x.value.transpose(dims)


def _fp8(dtype: Any) -> str:
    try:
        name = element_type(dtype).name
    except LayoutError as error:
        raise LayoutError(f"dtype: {error}") from None
    if name not in _FP8:
        raise LayoutError(f"dtype: must be an fp8 type, float8_e4m3fn or float8_e5m2 (e4m3 / e5m2), got "
                          f"{quote(dtype)}")
    return name


def _scale(x: Tensor, scale: Any) -> tuple[Tensor | None, float]:
    """``(scale tensor or None, scale value)``: a real number (Python's, NumPy's, a ``Fraction``, a ``Decimal``, a
    0-d NumPy array of one), or a one-element fp32 tensor of ``x``'s device (``cast_transpose`` checks that it does
    not overlap what it writes). The kernels scale in float32: a number rounds to the nearest float32, one beyond
    its range to an infinity of its sign, as in a float32 tensor."""
    real = (isinstance(scale, numbers.Real) or (isinstance(scale, numbers.Number)  # a Decimal is a Number only
                                                and not isinstance(scale, numbers.Complex)) or (
        isinstance(scale, np.ndarray) and scale.shape == () and scale.dtype.kind in "iuf"))
    if isinstance(scale, (bool, np.bool_)) or scale is None or (type(scale).__module__ == "numpy" and not real):
        raise LayoutError(f"scale: must be a number or a one-element float32 tensor, got {quote(scale)}")
    if real:
        try:
            value = float(scale)
        except OverflowError:  # an int beyond float64's range
            value = math.inf if scale > 0 else -math.inf
        except ValueError:  # a signaling NaN Decimal, which float() refuses
            raise LayoutError(f"scale: must be a number float() reads, got {quote(scale)}") from None
        with np.errstate(over="ignore"):
            return None, float(np.float32(value))
    s = describe(scale, "scale")
    if s.numel != 1 or s.dtype is None or s.dtype.name != "fp32":
        raise LayoutError(f"scale: a tensor scale must hold one float32, got shape {s.shape} of "
                          f"{s.dtype or s.value.dtype}")
    if s.framework != x.framework or s.device != x.device:
        raise LayoutError(f"scale: must be a {x.framework} tensor on x's device {x.device}")
    return s, 0.0


def cast_transpose(x: Any, dtype: Any, scale: Any, out: Any = None, out_t: Any = None,
                   amax: Any = None) -> tuple[Any, Any, Any]:
    """fp8 cast and cast-transpose in one pass, as fp8 training recipes (Transformer Engine's
    ``cast_transpose``) do: with ``X`` the ``M x N`` matrix of ``x`` (``N`` its last dim, ``M`` the product
    of the others), returns ``(out, out_t, amax)``:

    - ``out = fp8(scale * x)`` (``x``'s shape): round to nearest even, saturated to the largest finite value
      of ``dtype`` (448 for e4m3, 57344 for e5m2; infinities too); NaN stays NaN (its sign dropped);
    - ``out_t = out``'s ``N x M`` transpose;
    - ``amax = max(amax, max |x|)``: the largest magnitude of the input *before* scaling (NaN ignored),
      max-accumulated into ``amax`` (a one-element float32 tensor not overlapping ``x``, ``out`` or ``out_t``; a
      new zero one when None).

    ``x``: bf16, fp16 or fp32 CUDA tensor of rank >= 1: contiguous, the transposed view ``w.t()`` of a contiguous
    matrix (``w`` is cast and the outputs swapped: no copy), or any other view of non-negative strides (a column
    slice: gathered into a dense tensor by ``permute``'s kernels first, one more pass); ``dtype``: ``float8_e4m3fn`` or
    ``float8_e5m2`` (or ``"e4m3"`` / ``"e5m2"``); ``scale``: a number or a one-element float32 tensor on
    ``x``'s device (read on the device: no synchronization) not overlapping ``out``, ``out_t`` or ``amax``.
    PyTorch outputs have the float8 dtype; CuPy, which has none, gets uint8 arrays of the fp8 bits.

    Example: ``c, ct, amax = cast_transpose(w, torch.float8_e4m3fn, 448 / w.abs().max())``."""
    t = _input(x, strided=True)
    transposed = not is_contiguous(t)  # x = w.t() of a contiguous w: w cast, its outputs swapped
    gathered = transposed and (len(t.shape) != 2 or dense_order(t.shape, t.strides) != (1, 0))
    transposed = transposed and not gathered
    if t.dtype is None or t.dtype.name not in _CAST_INPUTS:
        raise LayoutError(f"x: cast_transpose reads bf16, fp16 or fp32, got {t.value.dtype}")
    if not t.shape:
        raise LayoutError("x: cast_transpose needs at least one dim (a 0-d tensor has no last dim)")
    fp8 = _fp8(dtype)
    s, scale_value = _scale(t, scale)
    n = t.shape[-1]
    m = t.numel // n if n else math.prod(t.shape[:-1])
    if m and n and max(m, n) > MAX_CAST_EXTENT:  # refused before anything is allocated or gathered
        raise LayoutError(f"x: a {m} x {n} matrix exceeds 2**32 - 1 rows or columns")
    fp8_dtype = framework_dtype(t, fp8)
    o = _output(t, out, t.shape, "out", fp8_dtype, str(dtype))
    ot = _output(t, out_t, (n, m), "out_t", fp8_dtype, str(dtype))
    if same_memory(o, ot):
        raise LayoutError("out_t: overlaps the memory of out")
    if amax is None:
        amax_value = empty(t, (1,), framework_dtype(t, "fp32"))
        a = describe(amax_value, "amax")
        zero = True
    else:
        a = describe(amax, "amax")
        if a.numel != 1 or a.dtype is None or a.dtype.name != "fp32":
            raise LayoutError(f"amax: must be a one-element float32 tensor, got shape {a.shape} of {a.value.dtype}")
        if a.framework != t.framework or a.device != t.device:
            raise LayoutError(f"amax: must be a {t.framework} tensor on x's device {t.device}")
        zero = False
        for name, other in (("x", t), ("out", o), ("out_t", ot)):
            if same_memory(a, other):
                raise LayoutError(f"amax: overlaps the memory of {name} (the kernels accumulate into it)")
    if s is not None:
        for name, other in (("out", o), ("out_t", ot), ("amax", a)):
            if same_memory(s, other):
                raise LayoutError(f"scale: overlaps the memory of {name}, which the kernels write")
    if gathered:  # any other view: gathered into a dense tensor by our permutation first, then cast from it
        dense = describe(empty(t, t.shape), "x")
        _permute(t, dense, tuple(range(len(t.shape))))
        t = dense
    if zero:
        a.value.fill_(0) if a.framework == "torch" else a.value.fill(0)
    if m and n:  # a transposed view: w (n x m) cast into out_t, its transpose into out
        rows, cols, cast, cast_t = (n, m, ot, o) if transposed else (m, n, o, ot)
        arguments = (_CAST_INPUTS[t.dtype.name], _FP8[fp8], rows, cols, t.pointer, cast.pointer, cast_t.pointer,
                     None if s is None else s.pointer, scale_value, a.pointer)
        _run(t, _tuned_cast(t, arguments) if _tune.enabled() else
             cast_launches(*arguments, _launch.grid_shape(t.device)))
    return o.value, ot.value, a.value


def _memory(x: Tensor, dims: tuple[int, ...]) -> tuple[Tensor, tuple[int, ...]]:
    """``(M, c)``: ``x`` as the tensor ``M`` its memory holds, dims in memory order (row-major where ``x`` is dense,
    else at ``x``'s strides), and ``dims`` composed with ``x``'s view of it, so that
    ``M.permute(c)`` is ``x.permute(dims)`` (``plan.memory_permutation``). Example: ``x = y.t()`` of a contiguous ``y``,
    ``dims = (1, 0)``: ``M = y`` and ``c = (0, 1)``, a copy."""
    if is_contiguous(x):
        return x, dims
    shape, strides, composed = memory_permutation(x.shape, x.strides, dims)
    strides = row_major_strides(shape) if strides is None else strides
    return dataclasses.replace(x, shape=shape, strides=strides), composed


def _permute(x: Tensor, out: Tensor, dims: tuple[int, ...]) -> None:
    """``out = x.permute(dims)``, ``x`` contiguous, a permuted view of a contiguous tensor or a view with gaps
    (``_memory``)."""
    m, composed = _memory(x, dims)
    strides = None if is_contiguous(m) else m.strides
    if framework_gathers(m.shape, composed, m.itemsize, strides):  # the framework's strided copy does it
        view = x.value.permute(*dims) if x.framework == "torch" else x.value.transpose(dims)
        _framework_copy(out.value, view, x.framework)
        return
    dims = composed
    out_strides = None if is_contiguous(out) else out.strides
    if _tune.enabled() and strides is None and out_strides is None:
        _run(m, _tuned_launches(m, out, dims))
        return
    scratch = describe(empty(m, m.shape), "x") if gathers(m.shape, dims, m.itemsize, strides, out_strides) else None
    _run(m, view_launches(m.shape, dims, m.itemsize, m.pointer, out.pointer, _launch.grid_shape(m.device), strides,
                          None if scratch is None else scratch.pointer, out_strides))


def _tuned_launches(x: Tensor, out: Tensor, dims: tuple[int, ...]) -> list:
    """The launches of ``out = x.permute(dims)`` (both contiguous) at the tile ``ops.tune`` chose, tuning the
    signature at its first call (not while ``x``'s stream is captured: the planner's launches then)."""
    grid = _launch.grid_shape(x.device)
    return _tune.tuned_or_planned(
        lambda: addressed(*_tune.tuned_template(x.shape, dims, x.itemsize, x.pointer, out.pointer, x.device, grid),
                          x.pointer, out.pointer),
        lambda: permute_launches(x.shape, dims, x.itemsize, x.pointer, out.pointer, grid),
        x.pointer, lambda: stream(x), _scratch(x))


def _tuned_cast(x: Tensor, arguments: tuple) -> list:
    """``cast_launches(*arguments)`` with ``ops.tune``'s choice, tuning the signature at its first call (not while
    ``x``'s stream is captured: the planner's launches then)."""
    grid = _launch.grid_shape(x.device)
    return _tune.tuned_or_planned(lambda: _tune.tuned_cast_launches(*arguments, x.device, grid),
                                  lambda: cast_launches(*arguments, grid), x.pointer, lambda: stream(x), _scratch(x))


def _scratch(x: Tensor):
    """A function that allocates ``n`` bytes (a new tensor of ``x``'s framework, dtype and device, kept alive with
    the function) and returns their address: ``ops.tune``'s scratch memory."""
    held: list = []

    def allocate(nbytes: int) -> int:
        held.append(describe(empty(x, (-(-nbytes // x.itemsize),)), "scratch"))
        return held[-1].pointer
    return allocate


def _framework_copy(dst: Any, src: Any, framework: str) -> None:
    """``dst[...] = src`` by the framework's own strided copy, on its current stream."""
    if framework == "torch":
        dst.copy_(src)
        return
    import cupy  # noqa: PLC0415 - src is a CuPy array

    with cupy.cuda.Device(src.device.id):
        cupy.copyto(dst, src)


def _run(x: Tensor, launches) -> None:
    """The ``launches`` on ``x``'s device and current stream, in order (each kernel after another one of them
    launched as following ours: ``launch.DEPENDENT_LAUNCH``)."""
    if not launches:
        return
    s = stream(x)
    follows_ours = False
    for item in launches:
        if isinstance(item, Copy):
            _launch.copy_bytes(x.device, s, item.dst, item.src, item.nbytes)
            follows_ours = False
        else:
            _launch.launch(item.kernel, x.device, s, item.ctas, item.values, follows_ours)
            follows_ours = True


