"""``best_cute_swizzle``: the CuTe ``Swizzle<B,M,S> ∘ (row- or column-major)`` layout with the fewest
shared-memory wavefronts for a store and a load, next to §9.2's optimum over all linear layouts.

The candidates are every swizzle whose YYY and ZZZ bits lie on the tile's offset bits (B >= 1, both
signs of S; swizzles reaching past them act as one of these or as the identity), and the identity,
each on the compact row-major (last dim contiguous) and column-major (first dim contiguous) layout.
The cost is the package's one bank model (``analysis.banks``): ``wavefronts(S, store, op="store") +
wavefronts(S, load)``, as ``analysis.swizzle.optimal_swizzle`` counts it; ties go to fewer
instructions (wider vectors), then to fewer swizzle bits, then to row-major.

Example (seed 004, a 16x32 fp32 transpose; unswizzled row-major costs 16 + 256 wavefronts): the best
CuTe layout reaches §9.2's optimum of 16 + 16, column-major so that the store's four registers (rows)
are one st.shared.v4:

>>> from linear_layouts.core.layout import LinearLayout
>>> store = LinearLayout({"register": [[1, 0], [2, 0], [4, 0], [8, 0]],
...                       "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]], "warp": []}, ["dim0", "dim1"])
>>> load = LinearLayout({"register": [[0, 2], [0, 4], [0, 8], [0, 16]],
...                      "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]], "warp": []}, ["dim0", "dim1"])
>>> best = best_cute_swizzle(store, load, "fp32")
>>> print(best.layout, best.store_wavefronts, best.load_wavefronts, best.reaches_optimum)
Sw<2,2,3> o 0 o (16,32):(1,16) 16 16 True
"""

from __future__ import annotations

from dataclasses import dataclass

from linear_layouts.analysis.banks import access_wavefronts, check_distributed, shared_access
from linear_layouts.analysis.swizzle import SwizzleResult, optimal_swizzle
from linear_layouts.core.arguments import checked
from linear_layouts.cute.from_linear import swizzles_on
from linear_layouts.cute.algebra import composition
from linear_layouts.cute.layout import ComposedLayout, Layout, Swizzle, column_major, row_major
from linear_layouts.cute.linear import to_linear
from linear_layouts.core.element_type import DTypeLike
from linear_layouts.core.element_type import bitwidth as parse_bitwidth
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout

__all__ = ["CuteSwizzleChoice", "best_cute_swizzle", "cute_candidates"]


@dataclass(frozen=True)
class CuteSwizzleChoice:
    """The best CuTe swizzled layout for a (store, load) pair, its cost, and §9.2's optimum."""

    layout: Layout | ComposedLayout  #: ``Swizzle ∘ base`` (the base alone when no swizzle helps)
    swizzle: Swizzle  #: ``Swizzle(0, 0, 0)`` when the plain layout is best
    major: str  #: "row" or "column": the base layout's contiguous dim (last or first)
    shared: LinearLayout  #: ``to_linear(layout)``: offset -> dims
    bitwidth: int
    store_wavefronts: int
    load_wavefronts: int
    store_vector_bits: int
    load_vector_bits: int
    candidates: int  #: how many CuTe layouts were compared
    optimum: SwizzleResult  #: ``optimal_swizzle(store, load, bitwidth)``

    @property
    def total_wavefronts(self) -> int:
        return self.store_wavefronts + self.load_wavefronts

    @property
    def reaches_optimum(self) -> bool:
        """Whether a single CuTe swizzle is as good as the best linear layout."""
        return self.total_wavefronts <= self.optimum.total_wavefronts

    @property
    def excess_wavefronts(self) -> int:
        """Wavefronts above the optimum (0 when it is reached)."""
        return self.total_wavefronts - self.optimum.total_wavefronts


def _tensor_shape(store: LinearLayout) -> tuple[int, ...]:
    names = list(store.out_dim_names)
    rank = len(names)
    if sorted(names) != [f"dim{k}" for k in range(rank)]:
        raise LayoutError(f"store_layout: out dims must be dim0..dim{rank - 1}, got {names}")
    return tuple(store.out_dim_size(f"dim{k}") for k in range(rank))


def cute_candidates(shape: tuple[int, ...]) -> list[tuple[str, Swizzle, Layout | ComposedLayout]]:
    """``(major, swizzle, layout)`` for the identity and every swizzle on the tile's offset bits, on the
    row-major and the column-major layout of ``shape``."""
    n = sum(s.bit_length() - 1 for s in shape)
    swizzles = [Swizzle(0, 0, 0)] + swizzles_on(n)
    out = []
    for major, base in (("row", row_major(shape)), ("column", column_major(shape))):
        for sw in swizzles:
            out.append((major, sw, base if sw.is_identity else composition(sw, base)))
    return out


@checked
def best_cute_swizzle(store_layout: LinearLayout, load_layout: LinearLayout, dtype: DTypeLike) -> CuteSwizzleChoice:
    """The ``Swizzle<B,M,S> ∘ (row- or column-major)`` with the fewest store + load wavefronts (module doc).

    Requires: distributed layouts of one warp size over the same tensor ``dim0..``, every size a power
    of two; ``dtype`` a bit width or a type name ("fp16").
    """
    w = parse_bitwidth(dtype)
    store = check_distributed(store_layout, "store_layout")
    load = check_distributed(load_layout, "load_layout")
    shape = _tensor_shape(store)
    optimum = optimal_swizzle(store, load, w)
    best = None
    candidates = cute_candidates(shape)
    for major, sw, layout in candidates:
        shared = to_linear(layout)
        a, b = shared_access(shared, store, w), shared_access(shared, load, w)
        cost = (access_wavefronts(a, op="store"), access_wavefronts(b))
        key = (sum(cost), a.instructions + b.instructions, sw.bits, sw.shift < 0, major != "row")
        if best is None or key < best[0]:
            best = (key, major, sw, layout, shared, cost, (a.vector_bits, b.vector_bits))
    _, major, sw, layout, shared, cost, vec = best  # type: ignore[misc]
    return CuteSwizzleChoice(layout=layout, swizzle=sw, major=major, shared=shared, bitwidth=w,
                             store_wavefronts=cost[0], load_wavefronts=cost[1], store_vector_bits=vec[0],
                             load_vector_bits=vec[1], candidates=len(candidates), optimum=optimum)
