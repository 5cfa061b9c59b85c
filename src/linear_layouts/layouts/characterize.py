"""The paper's characterizations of Triton's layout families (§4.3).

- Def. 4.10: a *distributed* layout is surjective, each column of its matrix has at most one
  non-zero bit, and no two non-zero columns are equal (a permutation matrix with zero columns).
- Def. 4.14: a *memory* layout is invertible and each column has one or two non-zero bits.
- Def. 4.11: the legacy ``mma`` swizzling ``(i, j) -> ((i / per_phase mod max_phase) xor j / vec) * vec
  xor (j mod vec)``; ``mma_swizzle_layout`` is its inverse as a ``LinearLayout`` (Prop. 4.12), whose
  matrix is ``[[I_n, C], [0, I_m]]`` with rows ``c_i = vec * (2**i / per_phase mod max_phase) mod 2**n``.

Columns are the flattened basis vectors (``LinearLayout.flat_bases()``: out dims packed, the first
out dim in the least significant bits).
"""

from __future__ import annotations

from linear_layouts.core.arguments import checked
from linear_layouts.layouts.base import check_int, check_power_of_two
from linear_layouts.core.errors import LayoutError, not_a_layout
from linear_layouts.core.layout import LinearLayout

__all__ = [
    "distributed_violation",
    "is_distributed_layout",
    "is_memory_layout",
    "mma_swizzle_offset",
    "mma_swizzle_layout",
    "mma_swizzle_rows",
]


def _check_layout(layout: object) -> LinearLayout:
    if not isinstance(layout, LinearLayout):
        raise not_a_layout(layout, "layout")
    return layout


@checked
def distributed_violation(layout: LinearLayout) -> str | None:
    """The first column breaking Def. 4.10's column rule (at most one non-zero bit, non-zero columns
    distinct), described as ``"<in dim> basis <i> = <column>"``, or None. Surjectivity is not checked.

    >>> distributed_violation(LinearLayout({"register": [[1]], "lane": [[3]]}, {"dim0": 4}))
    'lane basis 0 = 0x3 has two non-zero bits'
    """
    layout = _check_layout(layout)
    seen: set[int] = set()
    for dim in layout.in_dim_names:
        for i, column in enumerate(layout.flat_bases(dim)):
            if column == 0:
                continue
            if column & (column - 1):
                return f"{dim} basis {i} = {column:#x} has two non-zero bits"
            if column in seen:
                return f"{dim} basis {i} = {column:#x} repeats an earlier column"
            seen.add(column)
    return None


@checked
def is_distributed_layout(layout: LinearLayout) -> bool:
    """Def. 4.10: surjective, every column has at most one non-zero bit, non-zero columns distinct.

    >>> from linear_layouts.layouts import BlockedLayout
    >>> is_distributed_layout(BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0]).to_linear([8, 8]))
    True
    """
    layout = _check_layout(layout)
    return layout.is_surjective() and distributed_violation(layout) is None


@checked
def is_memory_layout(layout: LinearLayout) -> bool:
    """Def. 4.14: invertible, and every column has one or two non-zero bits.

    >>> is_memory_layout(mma_swizzle_layout(8, 8, vec=2, per_phase=1, max_phase=4))
    True
    """
    layout = _check_layout(layout)
    if not layout.is_invertible():
        return False
    return all(1 <= bin(column).count("1") <= 2 for column in layout.flat_bases())


def _check_swizzle(rows: int, cols: int, vec: int, per_phase: int, max_phase: int) -> None:
    check_power_of_two("rows", rows)
    check_power_of_two("cols", cols)
    check_power_of_two("vec", vec)
    check_power_of_two("per_phase", per_phase)
    check_power_of_two("max_phase", max_phase)


@checked
def mma_swizzle_offset(i: int, j: int, *, cols: int, vec: int, per_phase: int, max_phase: int) -> int:
    """Def. 4.11: the element offset of (row ``i``, column ``j``) of a row-major tile with ``cols`` columns:
    ``i * cols + ((((i // per_phase) % max_phase) ^ (j // vec)) * vec) % cols ^ (j % vec)``.

    >>> mma_swizzle_offset(1, 0, cols=8, vec=2, per_phase=1, max_phase=4)
    10
    """
    i = check_int("i", i, minimum=0)
    j = check_int("j", j, minimum=0)
    check_power_of_two("cols", cols)
    check_power_of_two("vec", vec)
    check_power_of_two("per_phase", per_phase)
    check_power_of_two("max_phase", max_phase)
    if j >= cols:
        raise LayoutError(f"j must be < cols ({cols}), got {j}")
    phase = (i // per_phase) % max_phase
    return i * cols + ((((phase ^ (j // vec)) * vec) % cols) ^ (j % vec))


def mma_swizzle_rows(rows: int, cols: int, *, vec: int, per_phase: int, max_phase: int) -> list[int]:
    """Prop. 4.12's rows ``c_i = vec * ((2**i // per_phase) % max_phase) % cols`` for i < log2(rows).

    >>> mma_swizzle_rows(8, 8, vec=2, per_phase=1, max_phase=4)
    [2, 4, 0]
    """
    _check_swizzle(rows, cols, vec, per_phase, max_phase)
    return [(vec * (((1 << i) // per_phase) % max_phase)) % cols for i in range(rows.bit_length() - 1)]


@checked
def mma_swizzle_layout(rows: int, cols: int, *, vec: int, per_phase: int, max_phase: int) -> LinearLayout:
    """The ``offset -> (dim0 = i, dim1 = j)`` layout of Def. 4.11 on a ``rows x cols`` tile (the inverse
    of ``mma_swizzle_offset``): offset bit k < log2(cols) -> (0, 2**k); offset ``cols * 2**i`` ->
    (2**i, c_i) with Prop. 4.12's rows ``c_i`` (``mma_swizzle_rows``). Built by the catalog's one
    construction, ``SwizzledSharedLayout(vec, per_phase, max_phase, [1, 0])``, without its block dim.

    >>> mma_swizzle_layout(4, 8, vec=2, per_phase=1, max_phase=4).bases["offset"]
    [[0, 1], [0, 2], [0, 4], [1, 2], [2, 4]]
    """
    from linear_layouts.layouts.shared import SwizzledSharedLayout

    _check_swizzle(rows, cols, vec, per_phase, max_phase)
    layout = SwizzledSharedLayout(vec, per_phase, max_phase, [1, 0]).to_linear([rows, cols])
    return layout.sublayout(["offset"], ["dim0", "dim1"])
