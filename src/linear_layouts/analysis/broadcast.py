"""Broadcasting: which hardware bits hold duplicated data, and the stores a reduction can skip (paper §5.1).

A hardware bit holds duplicated data when its basis is in the span of the bases before it (a zero
column for distributed layouts): flipping it reaches the same tensor element. These are Triton's
``free_variable_masks``. After a reduction along ``axis`` the result layout is the layout with the
axis out dim dropped; every bit that pointed along the axis then duplicates data too, so only the
threads and warps whose free bits are zero must write the partial results to shared memory.

>>> from linear_layouts import LinearLayout
>>> L = LinearLayout({"register": [[0, 1]], "lane": [[1, 0], [0, 0]], "warp": [[2, 0]]}, ["dim0", "dim1"])
>>> broadcast_masks(L)
{'register': 0, 'lane': 2, 'warp': 0}
>>> reduction_stores(L, axis=1).stores, reduction_stores(L, axis=1).legacy_stores
(2, 2)
"""

from __future__ import annotations

from dataclasses import dataclass

from linear_layouts.core import f2
from linear_layouts.core.arguments import checked
from linear_layouts.core.errors import LayoutError, not_a_layout
from linear_layouts.core.limits import quote
from linear_layouts.core.layout import LinearLayout

__all__ = ["broadcast_masks", "duplicated_bits", "zero_bases_mask", "zero_basis_indices", "ReductionStores", "reduced_layout",
           "reduction_stores"]

HARDWARE_DIMS = ("register", "lane", "warp", "block")


def _check(layout: LinearLayout) -> None:
    if not isinstance(layout, LinearLayout):
        raise not_a_layout(layout, "layout")


@checked
def broadcast_masks(layout: LinearLayout) -> dict[str, int]:
    """Per in dim, the bit mask of bits that hold duplicated data (basis in the span of earlier bases).

    >>> broadcast_masks(LinearLayout({"register": [[1], [0]], "lane": [[1]]}, ["dim0"]))
    {'register': 2, 'lane': 1}
    """
    _check(layout)
    return layout.free_variable_masks()


@checked
def zero_bases_mask(layout: LinearLayout, in_dim: str) -> int:
    """The bits of ``in_dim`` whose basis is zero (0 when ``layout`` has no ``in_dim``): inputs that
    differ only there map to the same element. A subset of ``broadcast_masks(layout)[in_dim]``, which
    also counts non-zero bases in the span of earlier ones.

    >>> zero_bases_mask(LinearLayout({"register": [[1], [0], [2], [0]]}, ["dim0"]), "register")
    10
    """
    _check(layout)
    if not layout.has_in_dim(in_dim):
        return 0
    return sum(1 << i for i, b in enumerate(layout.flat_bases(in_dim)) if b == 0)


@checked
def zero_basis_indices(layout: LinearLayout, in_dim: str) -> tuple[int, ...]:
    """The set bits of ``zero_bases_mask(layout, in_dim)`` in increasing order: the indices of ``in_dim``'s
    zero bases (``()`` when ``layout`` has no ``in_dim``).

    >>> zero_basis_indices(LinearLayout({"register": [[1], [0], [2], [0]]}, ["dim0"]), "register")
    (1, 3)
    """
    mask = zero_bases_mask(layout, in_dim)
    return tuple(i for i in range(mask.bit_length()) if mask >> i & 1)


@checked
def duplicated_bits(layout: LinearLayout) -> dict[str, tuple[int, ...]]:
    """Per in dim, the indices of the bits that hold duplicated data (see :func:`broadcast_masks`).

    >>> duplicated_bits(LinearLayout({"register": [[1], [0]], "lane": [[1]]}, ["dim0"]))
    {'register': (1,), 'lane': (0,)}
    """
    masks = broadcast_masks(layout)
    return {d: tuple(i for i in range(layout.in_dim_size_log2(d)) if masks[d] >> i & 1) for d in masks}


@checked
def reduced_layout(layout: LinearLayout, axis: int) -> LinearLayout:
    """The layout of ``reduce(x, axis)``: ``layout`` with out dim ``axis`` dropped (Triton's slice layout).

    >>> reduced_layout(LinearLayout({"register": [[0, 1], [1, 0]]}, ["dim0", "dim1"]), 1).flat_bases("register")
    (0, 1)
    """
    _check(layout)
    if not isinstance(axis, int) or not 0 <= axis < layout.num_out_dims:
        raise LayoutError(f"axis must be an int in [0, {layout.num_out_dims}), got {quote(axis)}")
    keep = [d for i, d in enumerate(layout.out_dim_names) if i != axis]
    return layout.sublayout(layout.in_dim_names, keep)


@dataclass(frozen=True)
class ReductionStores:
    """Shared-memory stores of a reduction's partial results (one CTA), with and without duplicates.

    * ``per_thread``: distinct values a thread stores (``2**`` non-duplicated register bits of ``reduced``);
      ``legacy_per_thread``: one per accumulator (register bits not along the axis), duplicates included.
    * ``per_warp``: distinct elements a warp holds after the reduction.
    * ``storing_lanes`` / ``storing_warps``: lanes per warp and warps that must store (legacy: lanes whose
      axis coordinate is 0, and every warp).
    * ``stores`` / ``legacy_stores``: warp-level store instructions issued per CTA
      (``per_thread * storing_warps`` against ``legacy_per_thread * warps``), the Table-4-like count;
      ``element_stores`` / ``legacy_element_stores``: the same counted per storing thread.
    """

    reduced: LinearLayout
    per_thread: int
    legacy_per_thread: int
    per_warp: int
    storing_lanes: int
    legacy_storing_lanes: int
    storing_warps: int
    warps: int
    stores: int
    legacy_stores: int
    element_stores: int
    legacy_element_stores: int

    @property
    def skipped(self) -> int:
        """Store instructions duplication lets us skip."""
        return self.legacy_stores - self.stores


@checked
def reduction_stores(layout: LinearLayout, axis: int) -> ReductionStores:
    """Count the shared-memory stores of ``reduce(x, axis)`` for ``x`` in distributed ``layout`` (§5.1, Table 4).

    Only bits that are not free in the reduced layout need distinct stores; legacy Triton deduplicated
    only the lanes along the axis. See :class:`ReductionStores` for the fields.
    """
    red = reduced_layout(layout, axis)
    masks = red.free_variable_masks()

    def size_log2(d: str) -> int:
        return layout.in_dim_size_log2(d, missing_ok=True)

    def kept(d: str) -> int:
        return size_log2(d) - bin(masks.get(d, 0)).count("1")

    def not_along_axis(d: str) -> int:
        if not layout.has_in_dim(d):
            return 0
        return sum(1 for b in layout.bases[d] if b[axis] == 0)

    per_thread = 1 << kept("register")
    legacy_per_thread = 1 << not_along_axis("register")
    inside = [b for d in ("register", "lane") if red.has_in_dim(d) for b in red.flat_bases(d)]
    per_warp = 1 << f2.rank(inside)
    storing_lanes = 1 << kept("lane")
    legacy_lanes = 1 << not_along_axis("lane")
    storing_warps = 1 << (kept("warp") + kept("block"))
    warps = 1 << (size_log2("warp") + size_log2("block"))
    return ReductionStores(
        red,
        per_thread,
        legacy_per_thread,
        per_warp,
        storing_lanes,
        legacy_lanes,
        storing_warps,
        warps,
        per_thread * storing_warps,
        legacy_per_thread * warps,
        per_thread * storing_lanes * storing_warps,
        legacy_per_thread * legacy_lanes * warps,
    )
