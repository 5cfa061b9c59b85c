"""Transfer functions: the layout of an op's result from its operand's (forward) and back (backward),
chosen so that the op moves no data (paper §4.4, Thm 9.3).

Every shape op is a linear map ``T`` on logical coordinates, so ``T ∘ L`` is the result layout of an
operand in layout ``L``: each thread keeps its registers. Bases of distributed layouts (Def. 4.10)
are unit vectors or zero, and ``T`` (a permutation / re-grouping of coordinate bits) keeps them so:

* ``trans(perm)``: out dim ``k`` reads in dim ``perm[k]``;
* ``reshape``: a basis vector's row-major flat index, re-split into the new shape;
* ``join``: a new register bit 0 along the new minor dim; ``split``: that register bit removed;
* ``expand_dims``: a zero coordinate inserted; ``broadcast``: the new bits fill zero (broadcast)
  register, lane and warp bases first, then new register bases;
* ``reduce(axis)``: coordinate ``axis`` removed, zero register bases dropped (``SliceLayout``).

Backward functions return an operand layout whose forward image is the given result layout, or
``None`` when no operand layout makes the op a no-op (``split`` of a dim that is not in registers).

>>> from linear_layouts.layouts import NVMMADistributedLayout
>>> mma = NVMMADistributedLayout([2, 0], [4, 1], [16, 8]).to_linear([64, 32])
>>> t = trans_forward(mma, (1, 0))
>>> t.apply({"lane": 4}) == {"dim0": 0, "dim1": 1} and trans_backward(t, (1, 0)) == mma
True
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from linear_layouts.core.errors import LayoutError, not_a_layout
from linear_layouts.core.limits import quote
from linear_layouts.core.layout import LinearLayout

__all__ = [
    "standard_outs", "descriptor_layout", "shape_of", "make_layout",
    "trans_forward", "trans_backward", "reshape_forward", "reshape_backward",
    "join_forward", "join_backward", "split_forward", "split_backward",
    "expand_dims_forward", "expand_dims_backward", "broadcast_forward", "broadcast_backward",
    "reduce_forward", "reduce_backward",
]

IN_DIMS = ("register", "lane", "warp", "block")


def _names(rank: int) -> list[str]:
    return [f"dim{d}" for d in range(rank)]


def standard_outs(layout: LinearLayout) -> LinearLayout:
    """``layout`` with out dims in the order ``dim0, dim1, ..`` and in dims ``register, lane, warp, block``
    (the layout itself when it has them already)."""
    if not isinstance(layout, LinearLayout):
        raise not_a_layout(layout, "layout")
    if layout.in_dim_names == IN_DIMS and layout.out_dim_names == tuple(_names(layout.num_out_dims)):
        return layout
    return _standard_outs(layout)


def descriptor_layout(descriptor: Any, shape: Sequence[int]) -> LinearLayout:
    """``standard_outs(descriptor.to_linear(shape))`` for a catalog descriptor (a frozen, hashable value),
    cached.

    >>> from linear_layouts.layouts import BlockedLayout
    >>> descriptor_layout(BlockedLayout([1], [32], [1], [0]), [32]).in_dim_names
    ('register', 'lane', 'warp', 'block')
    """
    return _descriptor_layout(descriptor, tuple(int(s) for s in shape))


@functools.lru_cache(maxsize=4096)
def _descriptor_layout(descriptor: Any, shape: tuple[int, ...]) -> LinearLayout:
    return standard_outs(descriptor.to_linear(list(shape)))


@functools.lru_cache(maxsize=8192)
def _standard_outs(layout: LinearLayout) -> LinearLayout:
    names = _names(layout.num_out_dims)
    if list(layout.out_dim_names) != names:
        if sorted(layout.out_dim_names) != sorted(names):
            raise LayoutError(f"layout's out dims must be dim0..dim{len(names) - 1}, got {list(layout.out_dim_names)}")
        layout = layout.transpose_outs(names)
    bases = layout.bases
    if any(d not in IN_DIMS for d in bases):
        raise LayoutError(f"layout must be distributed (in dims {IN_DIMS}), got {list(bases)}")
    return make_layout({d: bases.get(d, []) for d in IN_DIMS}, shape_of(layout))


def shape_of(layout: LinearLayout) -> tuple[int, ...]:
    """The logical shape (out dim sizes, in ``dim0..`` order)."""
    return tuple(layout.out_dim_size(f"dim{d}") for d in range(layout.num_out_dims))


def make_layout(bases: dict[str, list], shape: Sequence[int]) -> LinearLayout:
    """The distributed LinearLayout with ``bases`` (in dims register, lane, warp, block) onto ``shape``."""
    full = {d: [list(v) for v in bases.get(d, [])] for d in IN_DIMS}
    return LinearLayout(full, list(zip(_names(len(shape)), shape)))


def _map(layout: LinearLayout, shape: Sequence[int], fn) -> LinearLayout:
    layout = standard_outs(layout)
    return make_layout({d: [fn(tuple(v)) for v in vs] for d, vs in layout.bases.items()}, shape)


# -- trans --------------------------------------------------------------------------------------
def _check_perm(perm: Sequence[int], rank: int) -> tuple[int, ...]:
    perm = tuple(perm)
    if sorted(perm) != list(range(rank)):
        raise LayoutError(f"perm must be a permutation of range({rank}), got {list(perm)}")
    return perm


def trans_forward(layout: LinearLayout, perm: Sequence[int]) -> LinearLayout:
    """``T ∘ L`` for ``out[k] = in[perm[k]]``."""
    shape = shape_of(layout)
    perm = _check_perm(perm, len(shape))
    return _map(layout, [shape[p] for p in perm], lambda v: [v[p] for p in perm])


def trans_backward(layout: LinearLayout, perm: Sequence[int]) -> LinearLayout:
    """The operand layout of ``trans(perm)`` with result ``layout``: the inverse permutation."""
    perm = _check_perm(perm, layout.num_out_dims)
    inverse = [0] * len(perm)
    for k, p in enumerate(perm):
        inverse[p] = k
    return trans_forward(layout, inverse)


# -- reshape ------------------------------------------------------------------------------------
def _strides(shape: Sequence[int]) -> list[int]:
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    return strides


def reshape_forward(layout: LinearLayout, shape: Sequence[int]) -> LinearLayout:
    """Row-major reshape: each basis vector's flat index ``sum v[d] * stride[d]`` split into ``shape``."""
    old = shape_of(layout)
    shape = tuple(shape)
    n_old = n_new = 1
    for s in old:
        n_old *= s
    for s in shape:
        if not isinstance(s, int) or s <= 0 or s & (s - 1):
            raise LayoutError(f"shape must be powers of two, got {list(shape)}")
        n_new *= s
    if n_old != n_new:
        raise LayoutError(f"shape must have {n_old} elements like the layout's {list(old)}, got {list(shape)}")
    so, sn = _strides(old), _strides(shape)

    def fn(v: tuple[int, ...]) -> list[int]:
        flat = sum(x * s for x, s in zip(v, so))
        return [(flat // s) % n for s, n in zip(sn, shape)]

    return _map(layout, shape, fn)


def reshape_backward(layout: LinearLayout, shape: Sequence[int]) -> LinearLayout:
    """The operand layout (of ``shape``) of a reshape whose result has ``layout``."""
    return reshape_forward(layout, shape)


# -- join / split -------------------------------------------------------------------------------
def join_forward(layout: LinearLayout) -> LinearLayout:
    """Both operands in ``layout``; the result adds register bit 0 along the new minor dim of size 2."""
    layout = standard_outs(layout)
    bases = {d: [list(v) + [0] for v in vs] for d, vs in layout.bases.items()}
    bases["register"] = [[0] * layout.num_out_dims + [1]] + bases["register"]
    return make_layout(bases, shape_of(layout) + (2,))


def split_forward(layout: LinearLayout) -> LinearLayout | None:
    """The halves' layout when the minor dim (size 2) is one register bit, else ``None``."""
    layout = standard_outs(layout)
    shape = shape_of(layout)
    if shape[-1] != 2:
        raise LayoutError(f"layout's last dim must have size 2 to split, got {list(shape)}")
    unit = tuple([0] * (len(shape) - 1) + [1])
    bases = layout.bases
    regs = [tuple(v) for v in bases["register"]]
    if unit not in regs or any(v[-1] for d, vs in bases.items() for v in vs if tuple(v) != unit or d != "register"):
        return None
    if regs.count(unit) != 1:
        return None
    new = {d: [list(v[:-1]) for v in vs if not (d == "register" and tuple(v) == unit)] for d, vs in bases.items()}
    return make_layout(new, shape[:-1])


def join_backward(layout: LinearLayout) -> LinearLayout | None:
    """The operands' layout of a join with result ``layout`` (``None`` when the new dim is not a register bit)."""
    return split_forward(layout)


def split_backward(layout: LinearLayout) -> LinearLayout:
    """The operand layout of a split whose halves are in ``layout``."""
    return join_forward(layout)


# -- expand_dims / broadcast ----------------------------------------------------------------------
def expand_dims_forward(layout: LinearLayout, axis: int) -> LinearLayout:
    """A zero coordinate inserted at ``axis`` in every basis (out dim of size 1)."""
    shape = shape_of(layout)
    if not isinstance(axis, int) or not 0 <= axis <= len(shape):
        raise LayoutError(f"axis must be in [0, {len(shape)}], got {quote(axis)}")
    return _map(layout, shape[:axis] + (1,) + shape[axis:], lambda v: list(v[:axis]) + [0] + list(v[axis:]))


def expand_dims_backward(layout: LinearLayout, axis: int) -> LinearLayout:
    """The operand layout: coordinate ``axis`` (of size 1) removed."""
    shape = shape_of(layout)
    if not isinstance(axis, int) or not 0 <= axis < len(shape) or shape[axis] != 1:
        raise LayoutError(f"axis must name a dim of size 1 of {list(shape)}, got {quote(axis)}")
    return _map(layout, shape[:axis] + shape[axis + 1:], lambda v: list(v[:axis]) + list(v[axis + 1:]))


def broadcast_forward(layout: LinearLayout, shape: Sequence[int]) -> LinearLayout:
    """Dims of size 1 grow to ``shape``: their bits (low first) fill the zero register, lane and warp
    bases (broadcast copies) in that order, then new register bases."""
    layout = standard_outs(layout)
    old, shape = shape_of(layout), tuple(shape)
    if len(shape) != len(old) or any(a != b and a != 1 for a, b in zip(old, shape)):
        raise LayoutError(f"shape must grow only the size-1 dims of {list(old)}, got {list(shape)}")
    bits: list[list[int]] = []
    for d, (a, b) in enumerate(zip(old, shape)):
        if a != b:
            for i in range(b.bit_length() - 1):
                bits.append([0] * d + [1 << i] + [0] * (len(shape) - d - 1))
    bases = layout.bases
    for in_dim in ("register", "lane", "warp"):
        for i, v in enumerate(bases[in_dim]):
            if bits and not any(v):
                bases[in_dim][i] = bits.pop(0)
    bases["register"] += bits
    return make_layout(bases, shape)


def broadcast_backward(layout: LinearLayout, shape: Sequence[int]) -> LinearLayout:
    """The operand layout (of ``shape``, size 1 where the result is broadcast): broadcast coordinates
    zeroed; register bases that only moved along them dropped (the result's copies)."""
    layout = standard_outs(layout)
    new, shape = shape_of(layout), tuple(shape)
    if len(shape) != len(new) or any(a != b and a != 1 for a, b in zip(shape, new)):
        raise LayoutError(f"shape must be the operand shape of a broadcast to {list(new)}, got {list(shape)}")
    grown = [a != b for a, b in zip(shape, new)]
    bases = {}
    for d, vs in layout.bases.items():
        out = []
        for v in vs:
            w = [0 if g else x for x, g in zip(v, grown)]
            if d == "register" and any(v) and not any(w):
                continue
            out.append(w)
        bases[d] = out
    return make_layout(bases, shape)


# -- reduce ---------------------------------------------------------------------------------------
def reduce_forward(layout: LinearLayout, axis: int) -> LinearLayout:
    """``SliceLayout(axis, L)``: coordinate ``axis`` removed, zero register bases dropped."""
    layout = standard_outs(layout)
    shape = shape_of(layout)
    if not isinstance(axis, int) or not 0 <= axis < len(shape) or len(shape) < 2:
        raise LayoutError(f"axis must be in [0, {len(shape)}) with rank >= 2, got {quote(axis)}")
    bases = {}
    for d, vs in layout.bases.items():
        cut = [list(v[:axis]) + list(v[axis + 1:]) for v in vs]
        bases[d] = [v for v in cut if any(v)] if d == "register" else cut
    return make_layout(bases, shape[:axis] + shape[axis + 1:])


def reduce_backward(layout: LinearLayout, axis: int, size: int) -> LinearLayout:
    """An operand layout whose reduction along ``axis`` (of ``size``) gives ``layout``: ``axis`` held
    entirely in registers of each thread (a thread-local reduction)."""
    layout = expand_dims_forward(layout, axis)
    shape = list(shape_of(layout))
    shape[axis] = size
    bases = layout.bases
    bases["register"] += [[0] * axis + [1 << i] + [0] * (len(shape) - axis - 1) for i in range(size.bit_length() - 1)]
    return make_layout(bases, shape)


# -- per-op dispatch --------------------------------------------------------------------------------
def forward(kind: str, attrs: dict, operands: Sequence[LinearLayout], result_shape: Sequence[int]) -> LinearLayout | None:
    """The result layout of shape op / reduce ``kind`` from its first operand's layout (``None``: impossible)."""
    x = operands[0]
    if kind == "trans":
        return trans_forward(x, attrs["perm"])
    if kind == "reshape":
        return reshape_forward(x, result_shape)
    if kind == "join":
        return join_forward(x)
    if kind == "split":
        return split_forward(x)
    if kind == "expand_dims":
        return expand_dims_forward(x, attrs["axis"])
    if kind == "broadcast":
        return broadcast_forward(x, result_shape)
    if kind == "reduce":
        return reduce_forward(x, attrs["axis"])
    if kind in ("elementwise", "cast"):
        return standard_outs(x)
    raise LayoutError(f"kind must be a shape, reduce or elementwise op, got {quote(kind)}")


def backward(kind: str, attrs: dict, result: LinearLayout, operand_shape: Sequence[int]) -> LinearLayout | None:
    """An operand layout under which ``kind`` with result layout ``result`` is a no-op (``None``: none)."""
    if kind == "trans":
        return trans_backward(result, attrs["perm"])
    if kind == "reshape":
        return reshape_backward(result, operand_shape)
    if kind == "join":
        return join_backward(result)
    if kind == "split":
        return split_backward(result)
    if kind == "expand_dims":
        return expand_dims_backward(result, attrs["axis"])
    if kind == "broadcast":
        return broadcast_backward(result, operand_shape)
    if kind == "reduce":
        return reduce_backward(result, attrs["axis"], operand_shape[attrs["axis"]])
    if kind in ("elementwise", "cast"):
        return standard_outs(result)
    raise LayoutError(f"kind must be a shape, reduce or elementwise op, got {quote(kind)}")


def is_no_op(kind: str, attrs: dict, operand: LinearLayout, result: LinearLayout) -> bool:
    """True iff ``kind`` maps ``operand``'s layout to ``result``'s without moving data between threads:
    every thread's registers hold the same elements, renamed (Thm 9.3)."""
    operand, result = standard_outs(operand), standard_outs(result)
    if kind == "broadcast":
        return broadcast_backward(result, shape_of(operand)) == operand
    if kind == "join":
        return split_forward(result) == operand
    return forward(kind, attrs, [operand], shape_of(result)) == result
