"""``from_linear``: the simplest CuTe form of a LinearLayout, or why there is none.

* A **shared layout** ``offset -> dims`` (invertible) becomes ``Sw_k ∘ ... ∘ Sw_1 ∘ P`` with ``P`` a
  CuTe Layout whose F2 matrix is a permutation (every coordinate bit moves one offset bit) and the
  fewest swizzles. Every invertible F2 map has such a form: ``Swizzle<1, M, S>`` is the elementary
  row operation "offset bit M ^= bit M+S", and those generate GL(n, F2). Search: k = 0 and k = 1 are
  read off the matrix (a swizzle moves each bit to itself or to itself plus one bit at distance |S|);
  k = 2 tries every swizzle on the n offset bits as the outer one; larger k comes from Gauss-Jordan
  elimination by swizzle row operations, merged where CuTe's swizzle composition merges them, so
  ``minimal`` is proven for k <= 3 only.
* A **distributed layout** ``(register, lane, warp) -> dims`` becomes a ``TVLayout`` when every basis
  is zero or one bit of the tile's colexicographic index, no two the same (CuTe adds strides; it
  cannot XOR).

>>> from linear_layouts.cute.layout import Layout, Swizzle
>>> from linear_layouts.cute.algebra import composition
>>> from linear_layouts.cute.linear import to_linear
>>> print(from_linear(to_linear(composition(Swizzle(3, 3, 3), Layout((8, 64), (64, 1))))).layout)
Sw<3,3,3> o 0 o (8,64):(64,1)
"""

from __future__ import annotations

from dataclasses import dataclass

from linear_layouts.core import f2
from linear_layouts.cute.layout import ComposedLayout, Layout, Swizzle, TVLayout, _merge_swizzles
from linear_layouts.core.errors import not_a_layout
from linear_layouts.core.layout import LinearLayout

__all__ = ["CuteForm", "from_linear", "swizzles_on", "permutation_layout"]


@dataclass(frozen=True)
class CuteForm:
    """The answer of ``from_linear``: ``layout`` (None when there is no CuTe form, then ``reason`` says
    why), the swizzles it uses, and whether their number is proven the fewest."""

    layout: Layout | ComposedLayout | TVLayout | None
    swizzles: tuple[Swizzle, ...] = ()
    minimal: bool = True
    reason: str = ""

    @property
    def exists(self) -> bool:
        return self.layout is not None


def swizzles_on(n: int) -> list[Swizzle]:
    """Every swizzle (B >= 1, both signs of S) whose YYY and ZZZ bits all lie below bit ``n``; the
    others act on fewer bits as one of these (or the identity) on offsets below ``2**n``."""
    out = []
    for bits in range(1, n // 2 + 1):
        for shift in range(bits, n - bits + 1):
            for base in range(0, n - bits - shift + 1):
                out.append(Swizzle(bits, base, shift))
                out.append(Swizzle(bits, base, -shift))
    return out


def permutation_layout(images: list[int], sizes: tuple[int, ...]) -> Layout:
    """The CuTe Layout sending coordinate bit ``j`` (dims in order, LSB first) to offset bit
    ``images[j]``: each dim splits into runs of bits that land on consecutive offset bits.

    >>> print(permutation_layout([3, 4, 0, 1, 2], (4, 8)))
    (4,8):(8,1)
    """
    modes_shape, modes_stride = [], []
    j = 0
    for size in sizes:
        k = size.bit_length() - 1
        runs: list[list[int]] = []
        for b in range(k):
            image = images[j + b]
            if runs and runs[-1][0] + runs[-1][1] == image:
                runs[-1][1] += 1
            else:
                runs.append([image, 1])
        j += k
        if not runs:
            modes_shape.append(1)
            modes_stride.append(0)
        elif len(runs) == 1:
            modes_shape.append(1 << runs[0][1])
            modes_stride.append(1 << runs[0][0])
        else:
            modes_shape.append(tuple(1 << length for _, length in runs))
            modes_stride.append(tuple(1 << start for start, _ in runs))
    if len(sizes) == 1 and not isinstance(modes_shape[0], tuple):
        return Layout(modes_shape[0], modes_stride[0])
    return Layout(tuple(modes_shape), tuple(modes_stride))


def _bit(x: int) -> int:
    return x.bit_length() - 1


def _single_swizzle(columns: list[int], n: int) -> tuple[Swizzle | None, list[int]] | None:
    """``(Sw, images)`` with ``columns[j] == Sw(2**images[j])`` (Sw None: a permutation), else None.

    A swizzle sends bit ``i`` of YYY to ``i`` plus ``i - S``, every other bit to itself."""
    units, pairs = {}, {}
    for j, c in enumerate(columns):
        weight = bin(c).count("1")
        if weight == 1:
            units[j] = _bit(c)
        elif weight == 2:
            pairs[j] = (_bit(c & -c), _bit(c))
        else:
            return None
    if not pairs:
        return None, [units[j] for j in range(len(columns))]
    gaps = {hi - lo for lo, hi in pairs.values()}
    if len(gaps) != 1:
        return None
    gap = gaps.pop()
    unit_set = set(units.values())
    for sign in (1, -1):  # S > 0: YYY is the high bit of each pair; S < 0: the low bit
        y = sorted(hi if sign > 0 else lo for lo, hi in pairs.values())
        bits = len(y)
        if y != list(range(y[0], y[0] + bits)) or bits > gap:
            continue
        if unit_set != set(range(n)) - set(y):
            continue
        base = y[0] - gap if sign > 0 else y[0]
        sw = Swizzle(bits, base, sign * gap)
        images = [units[j] if j in units else (pairs[j][1] if sign > 0 else pairs[j][0]) for j in range(len(columns))]
        return sw, images
    return None


def _merge_adjacent(swizzles: list[Swizzle]) -> list[Swizzle]:
    """Merge neighbours where CuTe's swizzle composition merges them (the same function)."""
    out: list[Swizzle] = []
    for sw in swizzles:
        if out:
            merged = _merge_swizzles(out[-1], sw)
            if merged is not None:
                out.pop()
                if not merged.is_identity:
                    out.append(merged)
                continue
        out.append(sw)
    return out


def _build(swizzles: list[Swizzle], images: list[int], sizes: tuple[int, ...]) -> Layout | ComposedLayout:
    """``swizzles[0] ∘ swizzles[1] ∘ ... ∘ P``."""
    result: Layout | ComposedLayout = permutation_layout(images, sizes)
    for sw in reversed(swizzles):
        result = ComposedLayout(sw, 0, result)
    return result


def _shared_form(layout: LinearLayout) -> CuteForm:
    sizes = tuple(layout.out_dims.values())
    offset_cols = list(layout.flat_bases("offset"))
    n = len(offset_cols)
    if n != layout.total_out_dim_size_log2:
        return CuteForm(None, reason=f"the layout has {1 << n} offsets for {1 << layout.total_out_dim_size_log2} "
                                     f"elements: a CuTe memory layout here must be a bijection")
    forward = f2.inverse(offset_cols)
    if forward is None:
        return CuteForm(None, reason="two offsets hold the same element (the offset map is not invertible): "
                                     "no CuTe memory layout (coordinate -> offset) describes it")
    single = _single_swizzle(forward, n)
    if single is not None:
        sw, images = single
        return CuteForm(_build([sw] if sw else [], images, sizes), (sw,) if sw else ())
    for outer in swizzles_on(n):
        rest = _single_swizzle([outer(c) for c in forward], n)
        if rest is not None and rest[0] is not None:
            inner, images = rest
            return CuteForm(_build([outer, inner], images, sizes), (outer, inner))
    row_ops, images = f2.row_operations_to_permutation(forward, n)
    # row r ^= row p is the swizzle with YYY = {p}, ZZZ = {r}
    ops = _merge_adjacent([Swizzle(1, min(r, p), p - r) for r, p in row_ops])
    return CuteForm(_build(ops, images, sizes), tuple(ops), minimal=len(ops) <= 3)


def _distributed_form(layout: LinearLayout) -> CuteForm:
    if layout.has_in_dim("block") and layout.in_dim_size("block") > 1:
        return CuteForm(None, reason="the layout spans several CTAs (block > 1): a CuTe TV layout is one CTA's")
    sizes = tuple(layout.out_dims.values())
    lanes = layout.in_dim_size("lane", missing_ok=True)
    if layout.has_in_dim("warp") and layout.in_dim_size("warp") > 1 and lanes != 32:
        return CuteForm(None, reason=f"{lanes} lanes per warp: a CuTe thread index is lane + 32 * warp, so warps "
                                     f"need 32 lanes")
    strides: dict[str, list[int]] = {}
    seen: dict[int, str] = {}
    for dim in ("register", "lane", "warp"):
        strides[dim] = []
        if not layout.has_in_dim(dim):
            continue
        for i, flat in enumerate(layout.flat_bases(dim)):
            if flat & (flat - 1):
                coords = layout.bases[dim][i]
                return CuteForm(None, reason=f"{dim} bit {i} maps to {tuple(coords)}, whose index in the tile has "
                                             f"several bits: CuTe's strides add, they cannot XOR bits together")
            if flat and flat in seen:
                return CuteForm(None, reason=f"{dim} bit {i} and {seen[flat]} map to the same element bit: a CuTe "
                                             f"layout would add them (carry); the F2 layout XORs them")
            if flat:
                seen[flat] = f"{dim} bit {i}"
            strides[dim].append(flat)
    threads = strides["lane"] + strides["warp"]
    values = strides["register"]

    def mode(cols: list[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        shape, stride = [], []
        for c in cols:
            if shape and (stride[-1] * shape[-1] == c if c else stride[-1] == 0):
                shape[-1] *= 2
            else:
                shape.append(2)
                stride.append(c)
        return (tuple(shape), tuple(stride)) if shape else ((1,), (0,))

    (ts, td), (vs, vd) = mode(threads), mode(values)
    unwrap = lambda t: t[0] if len(t) == 1 else t  # noqa: E731
    return CuteForm(TVLayout(Layout((unwrap(ts), unwrap(vs)), (unwrap(td), unwrap(vd))), sizes))


def from_linear(layout: LinearLayout) -> CuteForm:
    """The simplest CuTe form of ``layout`` (module doc): a memory layout for a shared layout, a
    TVLayout for a distributed one; ``CuteForm.reason`` explains when there is none.

    >>> from linear_layouts.core.layout import LinearLayout
    >>> print(from_linear(LinearLayout({"offset": [[0, 1], [0, 2], [1, 0]]}, ["dim0", "dim1"])).layout)
    (2,4):(4,1)
    """
    if not isinstance(layout, LinearLayout):
        raise not_a_layout(layout, "layout")
    ins = set(layout.in_dim_names)
    if "offset" in ins:
        if ins - {"offset", "block"} or (layout.has_in_dim("block") and layout.in_dim_size("block") > 1):
            return CuteForm(None, reason=f"in dims {sorted(ins)}: a CuTe memory layout needs 'offset' alone "
                                         f"(one CTA)")
        return _shared_form(layout)
    if ins <= {"register", "lane", "warp", "block"}:
        return _distributed_form(layout)
    return CuteForm(None, reason=f"in dims {sorted(ins)}: CuTe has memory layouts (offset) and thread-value "
                                 f"layouts (register, lane, warp), nothing for these")
