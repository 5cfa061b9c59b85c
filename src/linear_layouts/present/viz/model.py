"""What the pictures show, computed once: who owns each element, where each element is stored.

* :func:`ownership` — for a distributed layout, per tensor element (row-major): the first hardware index
  (block, warp, lane, register) that holds it (Triton's enumeration order) and how many hold it;
  :func:`owners` lists every one.
* :func:`placement` — for a shared layout, per tensor element: its offset, 32-bit word and bank.
* :func:`grid_shape` — how an N-d tensor is folded into rows × columns for a 2-D picture.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from linear_layouts.core.arguments import checked
from linear_layouts.core.element_type import DTypeLike, element_type
from linear_layouts.core.errors import LayoutError, not_a_layout
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import MAX_PICTURE_ELEMENTS, check_layout_size
from linear_layouts.target import DEFAULT_TARGET, Target, resolve

#: the pictures' banks: the default target's (``Target.shared``); ``placement(target=...)`` draws another's
NUM_BANKS = DEFAULT_TARGET.shared.banks
BANK_BYTES = DEFAULT_TARGET.shared.bank_bytes

__all__ = ["Ownership", "Placement", "ownership", "owners", "placement", "grid_shape", "element_index", "NUM_BANKS",
           "BANK_BYTES"]


def grid_shape(shape: tuple[int, ...]) -> tuple[int, int]:
    """Rows × columns of the 2-D picture of a tensor: the last dim across, all others folded down.

    >>> grid_shape((2, 8, 16))
    (16, 16)
    """
    columns = shape[-1] if shape else 1
    return int(np.prod(shape[:-1])) if len(shape) > 1 else 1, int(columns)


def element_index(layout: LinearLayout, outputs: dict[str, np.ndarray]) -> np.ndarray:
    """Row-major index of logical coordinates ``outputs`` (last out dim fastest)."""
    index = np.zeros_like(np.asarray(outputs[layout.out_dim_names[0]]), dtype=np.int64)
    for name, size in layout.out_dims.items():
        index = index * size + np.asarray(outputs[name], dtype=np.int64)
    return index


def _first_occurrence(element: np.ndarray, total: int) -> np.ndarray:
    """``first[e]`` = the smallest i with ``element[i] == e``, or -1 when e never occurs."""
    first = np.full(total, -1, dtype=np.int64)
    values, index = np.unique(element, return_index=True)
    first[values] = index
    return first


@dataclass(frozen=True)
class Ownership:
    """Per element (row-major over ``shape``): first owner and number of owners (0: nobody holds it)."""

    shape: tuple[int, ...]
    num_registers: int
    num_lanes: int
    num_warps: int
    num_blocks: int
    register: np.ndarray
    lane: np.ndarray
    warp: np.ndarray
    block: np.ndarray
    copies: np.ndarray

    @property
    def thread(self) -> np.ndarray:
        """Thread id within the CTA, ``lane + warp * num_lanes`` (Triton's ``T`` number)."""
        return self.lane + self.warp * self.num_lanes


def _every_input(layout: LinearLayout) -> tuple[list[int], tuple[np.ndarray, ...], np.ndarray]:
    """The in-dim sizes (block, warp, lane, register), every input in Triton's order (block slowest,
    register fastest) and the row-major element each maps to."""
    sizes = [layout.in_dim_size(d, missing_ok=True) for d in ("block", "warp", "lane", "register")]
    block, warp, lane, reg = (a.ravel() for a in np.meshgrid(*(np.arange(s) for s in sizes), indexing="ij"))
    inputs = {"register": reg, "lane": lane, "warp": warp, "block": block}
    outputs = layout.apply_array({d: v for d, v in inputs.items() if layout.has_in_dim(d)})
    return sizes, (block, warp, lane, reg), element_index(layout, outputs)


@checked
def owners(layout: LinearLayout, *, max_elements: int = MAX_PICTURE_ELEMENTS) -> tuple[tuple[tuple[int, int, int, int], ...], ...]:
    """For every element e (row-major): every ``(block, warp, lane, register)`` with L(...) = e, in Triton's
    order (the first is :func:`ownership`'s); what Triton's text view prints as ``T0:0|T4:0``.

    >>> owners(LinearLayout({"register": [[1]], "lane": [[2], [0]]}, {"dim0": 4}))[0]
    ((0, 0, 0, 0), (0, 0, 2, 0))
    """
    ownership(layout, max_elements=max_elements)  # the same checks
    _, (block, warp, lane, reg), element = _every_input(layout)
    total = int(np.prod(list(layout.out_dims.values())))
    order = np.argsort(element, kind="stable")
    bounds = np.searchsorted(element[order], np.arange(total + 1))
    rows = np.stack([block, warp, lane, reg], axis=1)[order].tolist()
    return tuple(tuple(map(tuple, rows[bounds[e]:bounds[e + 1]])) for e in range(total))


@checked
def ownership(layout: LinearLayout, *, max_elements: int = MAX_PICTURE_ELEMENTS) -> Ownership:
    """For every element e, the smallest (block, warp, lane, register) with L(...) = e, and the count.

    >>> L = LinearLayout({"register": [[1]], "lane": [[2], [0]]}, {"dim0": 4})
    >>> o = ownership(L); o.lane.tolist(), o.copies.tolist()
    ([0, 0, 1, 1], [2, 2, 2, 2])
    """
    if not isinstance(layout, LinearLayout):
        raise not_a_layout(layout, "layout")
    bad = [d for d in layout.in_dim_names if d not in ("register", "lane", "warp", "block")]
    if bad:
        raise LayoutError(f"layout: a distributed layout has in dims register, lane, warp, block; found {bad}")
    if layout.num_out_dims == 0:
        raise LayoutError("layout: needs at least one out dim to draw")
    check_layout_size(layout, max_elements, "picture of the layout")
    sizes, (block, warp, lane, reg), element = _every_input(layout)
    total = int(np.prod(list(layout.out_dims.values())))
    first = _first_occurrence(element, total)
    copies = np.bincount(element, minlength=total)
    held = first >= 0
    pick = np.where(held, first, 0)

    def gather(values: np.ndarray) -> np.ndarray:
        return np.where(held, values[pick], -1)

    return Ownership(tuple(layout.out_dims.values()), sizes[3], sizes[2], sizes[1], sizes[0],
                     gather(reg), gather(lane), gather(warp), gather(block), copies)


@dataclass(frozen=True)
class Placement:
    """Per element (row-major): shared-memory ``offset`` (in elements), ``block``, 32-bit ``word``, ``bank``."""

    shape: tuple[int, ...]
    element_bitwidth: int
    offset: np.ndarray
    block: np.ndarray
    word: np.ndarray
    bank: np.ndarray

    @property
    def elements_per_row(self) -> int:
        """Elements in one 128-byte row of all 32 banks (a segment)."""
        return max(1, NUM_BANKS * BANK_BYTES * 8 // self.element_bitwidth)


@checked
def placement(layout: LinearLayout, dtype: DTypeLike, *, max_elements: int = MAX_PICTURE_ELEMENTS,
              target: Target | None = None) -> Placement:
    """For a shared layout ``(offset, block) -> dims``, where each element lives and in which bank.

    ``word = offset * bitwidth // 32``, ``bank = word mod 32`` (the target's banks: 32 of 4 bytes on NVIDIA
    and AMD CDNA3), for elements of ``dtype`` (``bitwidth`` bits).

    >>> L = LinearLayout({"offset": [[0, 1], [1, 0]]}, {"dim0": 2, "dim1": 2})
    >>> placement(L, 32).bank.tolist()
    [0, 1, 2, 3]
    """
    if not isinstance(layout, LinearLayout):
        raise not_a_layout(layout, "layout")
    if not layout.has_in_dim("offset") or any(d not in ("offset", "block") for d in layout.in_dim_names):
        raise LayoutError(f"layout: a shared layout has in dims offset (and block); found {list(layout.in_dim_names)}")
    element_bitwidth = element_type(dtype).bits
    shared = resolve(target).shared
    if layout.num_out_dims == 0:
        raise LayoutError("layout: needs at least one out dim to draw")
    check_layout_size(layout, max_elements, "picture of the layout")
    sizes = [layout.in_dim_size("block", missing_ok=True), layout.in_dim_size("offset", missing_ok=True)]
    block, offset = (a.ravel() for a in np.meshgrid(*(np.arange(s) for s in sizes), indexing="ij"))
    outputs = layout.apply_array({d: v for d, v in {"offset": offset, "block": block}.items() if layout.has_in_dim(d)})
    element = element_index(layout, outputs)
    total = int(np.prod(list(layout.out_dims.values())))
    first = _first_occurrence(element, total)
    held = first >= 0
    pick = np.where(held, first, 0)
    off = np.where(held, offset[pick], -1)
    word = np.where(held, (off * element_bitwidth) // (8 * shared.bank_bytes), -1)
    return Placement(tuple(layout.out_dims.values()), element_bitwidth, off, np.where(held, block[pick], -1), word,
                     np.where(held, word % shared.banks, -1))
