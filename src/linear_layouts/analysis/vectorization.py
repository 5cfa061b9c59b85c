"""Vectorization of global loads and stores (paper §5.1 "Contiguous elements", §5.3 "Generalized vectorization").

A thread can move ``u`` elements with one instruction when its registers ``0..u-1`` hold ``u``
consecutive, ``u``-aligned elements of the tensor as laid out in memory: with the out dims flattened
in memory order, ``L(r + v, t, w) = L(r, t, w) + v`` for ``v < u`` and ``r`` a multiple of ``u``. That
is the largest ``u = 2**c`` with ``L_Reg^{-1}(i) = i`` for ``i < u`` (Triton's ``getNumConsecutiveInOut``),
taken over *all* out dims in memory order, so contiguity may span several tensor dims.

Generalized vectorization permutes the registers first (a ``ColumnAction``) so that the register
bases that hit memory offsets 1, 2, 4, ... come first.

>>> from linear_layouts import LinearLayout
>>> L = LinearLayout({"register": [[0, 1], [1, 0]], "lane": [[2, 0]]}, ["dim0", "dim1"])  # [4, 2] row-major
>>> contiguous_elements(L), global_access(L, "fp16").bits
(4, 64)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from linear_layouts.core.arguments import checked
from linear_layouts.core.element_type import DTypeLike, element_type
from linear_layouts.core.errors import LayoutError, not_a_layout
from linear_layouts.core.limits import quote
from linear_layouts.core.layout import ColumnAction, LinearLayout

__all__ = [
    "memory_order_layout",
    "contiguous_elements",
    "contiguous_elements_along",
    "vector_permutation",
    "unit_offset_bits",
    "GlobalAccess",
    "global_access",
]

REGISTER = "register"


def _check_order(layout: LinearLayout, order: Sequence[int] | None) -> tuple[int, ...]:
    rank = layout.num_out_dims
    if order is None:
        return tuple(range(rank - 1, -1, -1))
    order = tuple(order)
    if sorted(order) != list(range(rank)) or not all(isinstance(o, int) for o in order):
        raise LayoutError(f"order must be a permutation of range({rank}) (order[0] is fastest), got {quote(list(order))}")
    return order


def _check_register(layout: LinearLayout, name: str = "layout") -> None:
    if not isinstance(layout, LinearLayout):
        raise not_a_layout(layout, name)
    if not layout.has_in_dim(REGISTER):
        raise LayoutError(f"{name} must have a 'register' in dim, has {list(layout.in_dim_names)}")
    if layout.num_out_dims == 0:
        raise LayoutError(f"{name} must have at least one out dim")


@checked
def memory_order_layout(layout: LinearLayout, order: Sequence[int] | None = None) -> LinearLayout:
    """The layout with ``register`` first and its out dims flattened into one ``offset`` in memory order.

    ``order[0]`` is the fastest-varying tensor dim in memory (default: row-major, the last dim);
    the result's out dim is the element offset of a dense tensor stored in that order.
    >>> memory_order_layout(LinearLayout({"register": [[0, 1]]}, ["dim0", "dim1"])).flat_bases("register")
    (1,)
    """
    _check_register(layout)
    order = _check_order(layout, order)
    names = layout.out_dim_names
    ins = [REGISTER] + [d for d in layout.in_dim_names if d != REGISTER]
    flat = layout.transpose_ins(ins).transpose_outs([names[o] for o in order]).flatten_outs()
    return flat.rename_out_dim(flat.out_dim_names[0], "offset")


@checked
def contiguous_elements(layout: LinearLayout, order: Sequence[int] | None = None) -> int:
    """Largest u = 2**c with registers r..r+u-1 holding consecutive, u-aligned memory elements (§5.1).

    Memory is dense in ``order`` (default row-major); contiguity may cross tensor dims.
    >>> contiguous_elements(LinearLayout({"register": [[0, 1], [1, 0]]}, ["dim0", "dim1"]))
    4
    """
    return memory_order_layout(layout, order).num_consecutive_in_out()


@checked
def contiguous_elements_along(layout: LinearLayout, dim: int) -> int:
    """Legacy Triton's contiguity: consecutive registers along the single tensor dim ``dim`` only.

    This is ``getContigPerThread()[dim]`` of the legacy layouts, the "Triton" column of Table 3.
    >>> contiguous_elements_along(LinearLayout({"register": [[0, 1], [1, 0]]}, ["dim0", "dim1"]), 1)
    2
    """
    _check_register(layout)
    if not isinstance(dim, int) or not 0 <= dim < layout.num_out_dims:
        raise LayoutError(f"dim must be an int in [0, {layout.num_out_dims}), got {quote(dim)}")
    name = layout.out_dim_names[dim]
    others = [d for d in layout.out_dim_names if d != name]
    return layout.transpose_outs([name] + others).transpose_ins(
        [REGISTER] + [d for d in layout.in_dim_names if d != REGISTER]
    ).num_consecutive_in_out()


@checked
def vector_permutation(layout: LinearLayout, order: Sequence[int] | None = None) -> ColumnAction:
    """The register permutation P maximizing ``contiguous_elements(P.apply(layout))`` (§5.3).

    Bases hitting memory offsets 1, 2, 4, ... are moved to the front in that order, the other
    register bases keep their relative order. The identity when nothing can be gained.
    >>> vector_permutation(LinearLayout({"register": [[1, 0], [0, 1]]}, ["dim0", "dim1"]))
    ColumnAction([1, 0], 'register', 2)
    """
    flat = memory_order_layout(layout, order).flat_bases(REGISTER)
    front = unit_offset_bits(flat)
    action = front + [j for j in range(len(flat)) if j not in front]
    return ColumnAction(action, REGISTER, len(flat))


@checked
def unit_offset_bits(images: Sequence[int]) -> list[int]:
    """Positions of the images 1, 2, 4, ... in that order, for as long as they go: the register bits
    that §5.3 moves to the front (``images``: each register basis as a flat memory offset).

    >>> unit_offset_bits([8, 1, 64, 2])
    [1, 3]
    """
    front: list[int] = []
    while True:
        hit = next((j for j, b in enumerate(images) if b == 1 << len(front) and j not in front), None)
        if hit is None:
            return front
        front.append(hit)


@dataclass(frozen=True)
class GlobalAccess:
    """The widest global access of one thread: ``elements`` contiguous elements in ``bits`` bits,
    issued as ``vector`` words of ``word_bits`` (PTX ``ld.global.v{vector}.b{word_bits}``), after the
    register ``permutation`` (identity unless generalized vectorization was asked for)."""

    elements: int
    bits: int
    vector: int
    word_bits: int
    permutation: ColumnAction

    @property
    def instruction(self) -> str:
        """The PTX vector suffix as Table 3 writes it, e.g. ``"v4.b32"``."""
        return f"v{self.vector}.b{self.word_bits}"


@checked
def global_access(
    layout: LinearLayout,
    dtype: DTypeLike,
    order: Sequence[int] | None = None,
    *,
    max_bits: int = 128,
    permute: bool = False,
) -> GlobalAccess:
    """Widest global load/store: ``min(max_bits, contiguous_elements * bitwidth)`` bits (§5.1, Table 3).

    With ``permute=True`` the registers are first permuted by :func:`vector_permutation` (§5.3).
    >>> global_access(LinearLayout({"register": [[1], [2]]}, ["dim0"]), "fp32").instruction
    'v4.b32'
    """
    bits = element_type(dtype).bits
    if not isinstance(max_bits, int) or max_bits < bits or max_bits & (max_bits - 1):
        raise LayoutError(f"max_bits must be a power of two >= the element bit width {bits}, got {quote(max_bits)}")
    _check_register(layout)
    perm = vector_permutation(layout, order) if permute else ColumnAction.identity(
        REGISTER, layout.in_dim_size_log2(REGISTER)
    )
    contiguous = contiguous_elements(perm.apply(layout), order)
    total = min(max_bits, contiguous * bits)
    elements = total // bits
    if total >= 32:
        vector, word = total // 32, 32
    else:
        vector, word = 1, total
    return GlobalAccess(elements, total, vector, word, perm)
