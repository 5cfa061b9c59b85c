"""CuTe layouts as linear layouts over F2: ``to_linear`` and ``coordinate_to_offset``.

A CuTe layout whose shapes are powers of two is a map F2^n -> F2^m on bits when its offsets never
carry: each leaf mode ``s:d`` (``s = 2**k``) sends coordinate bit ``b`` to the column ``d * 2**b``, and
the offset of a coordinate is the *sum* of its columns, which equals their XOR exactly when no two
columns share a set bit. Swizzles are XORs, so ``Swizzle ∘ Layout`` stays linear.

Conventions (the package's, Triton's):

* **Memory layouts** (``Layout``, ``ComposedLayout``): ``to_linear`` returns the shared layout
  ``(offset, block) -> (dim0, dim1, ...)`` (``block`` of size 1: one CTA), the inverse of CuTe's coordinate -> offset map, as the catalog's
  shared layouts (``NVMMASharedLayout(...).to_linear(shape)``). ``dim k`` is top-level mode ``k``,
  indexed colexicographically inside the mode (``((2,4),64)`` has ``dim0`` of size 8). This needs a
  bijection onto ``[0, size)``; ``coordinate_to_offset`` gives CuTe's own direction
  ``(dim0, ...) -> offset`` for any linear layout (stride 0 and holes included).
* **Thread-value layouts** (``TVLayout``): ``to_linear`` returns the distributed layout
  ``(register, lane, warp, block) -> (dim0, ...)``: value bits are registers, thread bits 0-4 lanes,
  the rest warps; the tile index ``m + M * n`` splits into ``dim0 = m``, ``dim1 = n``.

Refused with a LayoutError naming the first leaf mode that breaks linearity: a shape that is not a
power of two (size 0 too: a layout without coordinates has no F2 map), a negative stride, a mode whose
columns share bits with earlier ones (offsets carry), a ComposedLayout offset other than 0 (an affine
shift).

>>> from linear_layouts.cute.layout import Layout, Swizzle
>>> from linear_layouts.cute.algebra import composition
>>> S = to_linear(composition(Swizzle(1, 0, 1), Layout((2, 2), (2, 1))))
>>> S.bases["offset"]     # offset 1 -> (0, 1); offset 2 -> (1, 1): row 1 starts at its column 1
[[0, 1], [1, 1]]
"""

from __future__ import annotations

from linear_layouts.core import f2
from linear_layouts.cute.int_tuple import flatten, format_int_tuple, is_tuple, leaf_paths
from linear_layouts.cute.layout import ComposedLayout, Layout, Swizzle, TVLayout
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.target.nvidia import LANES as NVIDIA_LANES

__all__ = ["to_linear", "coordinate_to_offset", "forward_columns", "dim_sizes", "LANES"]

LANES = NVIDIA_LANES  #: threads per warp (CuTe is NVIDIA's): thread bits 0-4 become lanes, the rest warps


def _mode_name(path: tuple[int, ...]) -> str:
    return "mode " + (str(path[0]) if len(path) == 1 else "(" + ",".join(map(str, path)) + ")")


def _mode_columns(layout: Layout, what: str, used: list[int]) -> list[list[int]]:
    """The columns of each top-level mode of ``layout`` (coordinate bits, colexicographic, LSB first).

    ``used[0]`` accumulates the offset bits taken so far; a column that hits them breaks linearity."""
    shape, stride = layout.shape, layout.stride
    modes = shape if is_tuple(shape) else (shape,)
    strides = stride if is_tuple(stride) else (stride,)
    out: list[list[int]] = []
    for top, (mode_shape, mode_stride) in enumerate(zip(modes, strides)):  # type: ignore[arg-type]
        cols: list[int] = []
        paths = leaf_paths(mode_shape, (top,)) if is_tuple(mode_shape) else ((top,),)
        for path, s, d in zip(paths, flatten(mode_shape), flatten(mode_stride)):
            where = f"{what}: {_mode_name(path)} = {s}:{d} of {layout}"
            if s == 0:
                raise LayoutError(f"{where}: size 0: a layout without coordinates has no F2 map (a linear layout's "
                                  f"dims have sizes 2**k >= 1)")
            if s & (s - 1):
                raise LayoutError(f"{where}: shape {s} is not a power of two, so the coordinates are not bit vectors")
            if s == 1:
                continue
            if d < 0:
                raise LayoutError(f"{where}: negative stride: offsets wrap below 0 (affine, not F2-linear)")
            for b in range(s.bit_length() - 1):
                c = d << b
                if c & used[0]:
                    raise LayoutError(f"{where}: its offsets overlap those of earlier modes (bit "
                                      f"{(c & used[0]).bit_length() - 1}), so sums carry and the layout is "
                                      f"not F2-linear")
                used[0] |= c
                cols.append(c)
        out.append(cols)
    return out


def _apply(f: Layout | Swizzle | ComposedLayout, columns: list[int], what: str) -> list[int]:
    """The images under ``f`` (a function of a 1-D offset) of linear offsets given by their columns."""
    if isinstance(f, Swizzle):
        return [f(c) for c in columns]  # a swizzle is F2-linear on every offset
    if isinstance(f, Layout):
        reach = 0
        for c in columns:
            reach |= c
        if f.size == 0:
            raise LayoutError(f"{what}: the outer layout {f} has size 0: a layout without coordinates has no F2 map")
        if reach >= f.size:
            raise LayoutError(f"{what}: the outer layout {f} (size {f.size}) is applied to offsets up to {reach}: "
                              f"past its size its last mode extends without bound (not F2-linear)")
        own = [c for mode in _mode_columns(f, what, [0]) for c in mode]
        return [f2.apply(own, c) for c in columns]
    if f.offset != 0:
        raise LayoutError(f"{what}: ComposedLayout offset {f.offset} is an affine shift, not F2-linear; "
                          f"only offset 0 has a linear layout")
    return _apply(f.outer, _apply(f.inner, columns, what), what)


def forward_columns(f: Layout | Swizzle | ComposedLayout, what: str = "layout") -> tuple[tuple[int, ...], list[list[int]]]:
    """``(dim sizes, columns per dim)`` of CuTe's coordinate -> offset map, checked to be F2-linear.

    ``columns[k][b]`` is the offset of the coordinate with bit ``b`` of ``dim k`` set (all else 0).
    A bare Swizzle (or a composition of swizzles) has one dim of its ``size``.

    >>> forward_columns(Layout((4, 8), (8, 1)))
    ((4, 8), [[8, 16], [1, 2, 4]])
    """
    if isinstance(f, Swizzle) or (isinstance(f, ComposedLayout) and f.layout is None):
        n = _swizzle_span(f)
        return (1 << n,), [_apply(f, [1 << i for i in range(n)], what)]
    if isinstance(f, Layout):
        sizes = dim_sizes(f)
        return sizes, _mode_columns(f, what, [0])
    if not isinstance(f, ComposedLayout):
        raise LayoutError(f"{what}: expected a CuTe Layout, Swizzle or ComposedLayout, got {type(f).__name__}")
    if f.offset != 0:
        raise LayoutError(f"{what}: ComposedLayout offset {f.offset} is an affine shift, not F2-linear; "
                          f"only offset 0 has a linear layout")
    sizes, inner = forward_columns(f.inner, what)
    return sizes, [_apply(f.outer, cols, what) for cols in inner]


def _swizzle_span(f: Swizzle | ComposedLayout) -> int:
    """Bits a chain of swizzles acts on: log2 of the largest swizzle size."""
    if isinstance(f, Swizzle):
        return f.size.bit_length() - 1
    if isinstance(f, ComposedLayout) and not isinstance(f.outer, Layout) and not isinstance(f.inner, Layout):
        return max(_swizzle_span(f.outer), _swizzle_span(f.inner))  # type: ignore[arg-type]
    raise LayoutError("a composition of swizzles must not contain layouts")


def dim_sizes(layout: Layout) -> tuple[int, ...]:
    """The size of each top-level mode: the tensor shape the layout indexes."""
    modes = layout.shape if is_tuple(layout.shape) else (layout.shape,)
    return tuple(Layout(m).size for m in modes)  # type: ignore[union-attr]


def _dims(sizes: tuple[int, ...], what: str) -> dict[str, int]:
    for k, s in enumerate(sizes):
        if s < 1 or s & (s - 1):
            raise LayoutError(f"{what}: dim {k} has size {s}, not a power of two")
    return {f"dim{k}": s for k, s in enumerate(sizes)}


def _unpack(flat: int, sizes: tuple[int, ...]) -> list[int]:
    out = []
    for s in sizes:
        k = s.bit_length() - 1
        out.append(flat & (s - 1))
        flat >>= k
    return out


def coordinate_to_offset(layout: Layout | Swizzle | ComposedLayout) -> LinearLayout:
    """CuTe's own direction as a LinearLayout: ``(dim0, dim1, ...) -> offset`` (Triton's
    ``shared.invert()`` when invertible); stride 0 gives zero bases, holes a larger ``offset`` dim.

    >>> coordinate_to_offset(Layout((4, 8), (0, 1))).bases
    {'dim0': [[0], [0]], 'dim1': [[1], [2], [4]]}
    """
    sizes, cols = forward_columns(layout, "layout")
    dims = _dims(sizes, "layout")
    reach = 0
    for mode in cols:
        for c in mode:
            reach |= c
    return LinearLayout({name: [[c] for c in mode] for name, mode in zip(dims, cols)},
                        {"offset": 1 << reach.bit_length()}, require_surjective=False)


def to_linear(layout: Layout | Swizzle | ComposedLayout | TVLayout) -> LinearLayout:
    """The LinearLayout of a CuTe layout (module doc): shared ``offset -> dims`` for a memory layout,
    distributed ``(register, lane, warp, block) -> dims`` for a TVLayout.

    Requires (memory): F2-linear and a bijection of ``[0, size)``. Returns a layout whose ``offset``
    basis ``i`` is the tensor coordinate stored at offset ``2**i``.

    >>> to_linear(Layout((2, 4), (4, 1))).bases["offset"]   # row-major 2x4
    [[0, 1], [0, 2], [1, 0]]
    """
    if isinstance(layout, TVLayout):
        return _tv_to_linear(layout)
    sizes, cols = forward_columns(layout, "layout")
    dims = _dims(sizes, "layout")
    flat = [c for mode in cols for c in mode]
    n = len(flat)
    for k, mode in enumerate(cols):
        for b, c in enumerate(mode):
            if c == 0:
                raise LayoutError(f"layout: bit {b} of dim {k} maps to offset 0 (stride 0: several coordinates share "
                                  f"an offset), so offset -> coordinate is not a function; coordinate_to_offset "
                                  f"gives CuTe's direction")
    inverse = f2.inverse(flat)
    if inverse is None:
        reach = 0
        for c in flat:
            reach |= c
        raise LayoutError(f"layout: the offsets reach {reach} but the layout has {1 << n} coordinates: not a "
                          f"bijection of [0, {1 << n}) (holes), so it is not a shared layout; "
                          f"coordinate_to_offset gives CuTe's direction")
    return LinearLayout({"offset": [_unpack(v, sizes) for v in inverse], "block": []}, dims)


def _tv_to_linear(tv: TVLayout) -> LinearLayout:
    used = [0]
    thread_cols, value_cols = _mode_columns(tv.layout, "TVLayout", used)
    tile = tv.tile
    dims = _dims(tile, "TVLayout tile")
    total = 1
    for t in tile:
        total *= t
    if used[0] >= total:
        raise LayoutError(f"TVLayout: indices reach {used[0]} but the tile {format_int_tuple(tile)} has {total} elements")
    lane_bits = LANES.bit_length() - 1
    return LinearLayout(
        {
            "register": [_unpack(c, tile) for c in value_cols],
            "lane": [_unpack(c, tile) for c in thread_cols[:lane_bits]],
            "warp": [_unpack(c, tile) for c in thread_cols[lane_bits:]],
            "block": [],
        },
        dims,
        require_surjective=False,
    )
