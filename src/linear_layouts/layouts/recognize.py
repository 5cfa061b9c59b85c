"""Recognition: from a ``LinearLayout`` back to the simplest catalog descriptor that produces it.

``recognize(L)`` returns a descriptor ``D`` with ``D.to_linear(shape) == L`` (``shape`` = L's out sizes):

==========================  ==========================================================================
in dims of ``L``            descriptors tried, simplest first (the first whose ``to_linear`` equals L)
==========================  ==========================================================================
register, lane, warp,       ``BlockedLayout``, ``NVMMADistributedLayout`` (mma v2 / wgmma v3),
block                       ``AMDMFMALayout``, ``DotOperandLayout`` (NVMMA, MFMA or FMA/blocked parent),
                            ``SliceLayout`` of any of these (nested twice at most),
                            else ``DistributedLinearLayout`` (its bases)
offset, block               ``NVMMASharedLayout`` (every swizzle width, transposed, every element width;
                            ``dtype``'s width first), ``SwizzledSharedLayout`` (vec / per_phase / max_phase /
                            order read from the row bases), else ``SharedLinearLayout``
row, col, block             ``TensorMemoryLayout``, ``TensorMemoryScalesLayout``
==========================  ==========================================================================

The families are the registered kinds of the layout's space (``registry.kinds``), simplest (lowest
``rank``) first: the catalog's own searches are below, and a kind registered with ``candidates`` brings
its own. Each family proposes parameters read off the bases (a candidate per ambiguity: which dim a broadcast
(zero) lane belongs to, how many registers are the per-thread tile and how many are repeats) and a
candidate is accepted only if its ``to_linear`` equals ``L`` bit for bit, so the answer is always exact.
A padded layout is never the answer: its ``LinearLayout`` is its linear component, which an unpadded
descriptor produces as well.

Example: the blocked layout of a 32x64 tile is recovered from its bases.

>>> from linear_layouts.layouts import BlockedLayout
>>> L = BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0]).to_linear([32, 64])
>>> recognize(L)
BlockedLayout(size_per_thread=(1, 4), threads_per_warp=(4, 8), warps_per_cta=(4, 1), order=(1, 0), cga_layout=())
"""

from __future__ import annotations

import functools

import itertools
from collections.abc import Iterator, Sequence
from typing import Any

from linear_layouts.layouts.amd import AMDMFMALayout
from linear_layouts.layouts.base import standard_out_dim_names
from linear_layouts.layouts.blocked import BlockedLayout
from linear_layouts.layouts.dot_operand import DotOperandLayout
from linear_layouts.layouts.linear import DistributedLinearLayout, SharedLinearLayout
from linear_layouts.layouts.nvmma import NVMMADistributedLayout
from linear_layouts.layouts.registry import Descriptor, Space, kinds
from linear_layouts.layouts.shared import NVMMASharedLayout, SwizzledSharedLayout
from linear_layouts.layouts.slice import SliceLayout
from linear_layouts.layouts.tensor_memory import TensorMemoryLayout, TensorMemoryScalesLayout
from linear_layouts.core.element_type import DTypeLike, dtype_argument
from linear_layouts.core.errors import LayoutError, not_a_layout
from linear_layouts.core.layout import LinearLayout

__all__ = ["recognize", "standardize"]

_DISTRIBUTED = ("register", "lane", "warp", "block")
_SHARED = ("offset", "block")
_TENSOR_MEMORY = ("row", "col", "block")
_MAX_SLICE_DEPTH = 2
#: Candidates checked per family before giving up on it (heavily broadcast layouts have many equal
#: ones and the first, greedy, candidates match them; the bases-given fallback is exact anyway), and
#: parents tried per family and sliced dim.
_MAX_CANDIDATES = 200
_MAX_PARENTS = 40

Vector = tuple[int, ...]


# --------------------------------------------------------------------------------------------------
# entry point
# --------------------------------------------------------------------------------------------------


def standardize(layout: LinearLayout) -> LinearLayout:
    """``layout`` with out dims ``dim0 .. dim{r-1}`` in that order and the in dims of its family in
    Triton's order (``register, lane, warp, block`` / ``offset, block`` / ``row, col, block``), missing
    ones added with size 1: the form every catalog ``to_linear`` returns.

    >>> standardize(LinearLayout({"lane": [[1]]}, ["dim0"])).in_dim_names
    ('register', 'lane', 'warp', 'block')
    """
    if not isinstance(layout, LinearLayout):
        raise not_a_layout(layout, "layout")
    rank = layout.num_out_dims
    names = list(standard_out_dim_names(rank))
    if rank == 0 or sorted(layout.out_dim_names) != sorted(names):
        raise LayoutError(f"layout: out dims must be dim0 .. dim{rank - 1} (Triton's names), got {list(layout.out_dim_names)}")
    ins = set(layout.in_dim_names)
    for family in (_DISTRIBUTED, _SHARED, _TENSOR_MEMORY):
        if ins <= set(family) and ins - {"block"}:
            break
    else:
        raise LayoutError(
            f"layout: in dims {list(layout.in_dim_names)} are not those of a distributed {list(_DISTRIBUTED)}, "
            f"shared {list(_SHARED)} or tensor-memory {list(_TENSOR_MEMORY)} layout"
        )
    bases = layout.bases
    ordered = [(d, bases.get(d, [])) for d in family]
    result = LinearLayout(ordered, layout.transpose_outs(names).out_dims, require_surjective=False)
    return result.transpose_outs(names) if result.out_dim_names != tuple(names) else result


def recognize(layout: LinearLayout, *, dtype: DTypeLike = None, bitwidth: int | None = None) -> Descriptor:
    """The simplest catalog descriptor whose ``to_linear(shape)`` is ``layout`` (module doc).

    ``dtype`` (the element type; ``bitwidth=``, its width in bits, is its old name) is tried first for
    ``NVMMASharedLayout`` and sets the K of a wgmma ``instr_shape`` (which the ``LinearLayout`` does not
    determine). Requires: out dims ``dim0..``; in dims of one family; elements of 8 to 64 bits. Returns: a
    catalog descriptor ``D`` with ``standardize(D.to_linear(shape)) == standardize(layout)``; ``LayoutError``
    when no Gluon class produces a tensor-memory layout.

    >>> from linear_layouts.layouts import NVMMASharedLayout
    >>> recognize(NVMMASharedLayout(64, 16).to_linear([64, 32]))
    NVMMASharedLayout(swizzle_byte_width=64, element_bitwidth=16, rank=2, transposed=False, fp4_padded=False, cga_layout=())
    """
    target = standardize(layout)
    shape = [target.out_dim_size(d) for d in target.out_dim_names]
    element = dtype_argument(dtype, required=False, bitwidth=bitwidth)
    if element is not None and element.bits not in (8, 16, 32, 64):
        raise LayoutError(f"dtype: the element must be 8, 16, 32 or 64 bits wide, got {element} ({element.bits} bits)")
    bitwidth = None if element is None else element.bits
    space = Space.SHARED if target.has_in_dim("offset") else \
        Space.TENSOR_MEMORY if target.has_in_dim("row") else Space.DISTRIBUTED
    families = _families(target, space, 0, bitwidth)
    seen: set[Any] = set()
    for family in families:
        tried = 0
        for candidate in family:
            if candidate in seen:
                continue
            seen.add(candidate)
            if _produces(candidate, shape, target):
                return candidate
            tried += 1
            if tried >= _MAX_CANDIDATES:
                break
    bases = target.bases
    if target.has_in_dim("offset"):
        return SharedLinearLayout(bases["offset"] or [[0] * len(shape)], bases["block"])
    if target.has_in_dim("row"):
        raise LayoutError("layout: no Gluon tensor-memory descriptor produces this (row, col) layout")
    try:
        return DistributedLinearLayout(bases["register"], bases["lane"], bases["warp"], bases["block"], shape)
    except LayoutError as error:
        raise LayoutError(f"layout: no Gluon descriptor produces it (Triton's #ttg.linear requires {error})") from None


def _produces(candidate: Descriptor, shape: Sequence[int], target: LinearLayout) -> bool:
    return _linear(candidate, tuple(shape)) == target


@functools.lru_cache(maxsize=4096)
def _linear(candidate: Descriptor, shape: tuple[int, ...]) -> LinearLayout | None:
    """``candidate.to_linear(shape)`` (None where it refuses the shape): a pure function of frozen
    descriptors, cached because recognizing several layouts of one shape tries the same candidates."""
    try:
        return candidate.to_linear(list(shape))
    except LayoutError:
        return None


# --------------------------------------------------------------------------------------------------
# helpers: bases as tuples, CGA, segmentations
# --------------------------------------------------------------------------------------------------


def _vectors(layout: LinearLayout, in_dim: str) -> list[Vector]:
    return [tuple(v) for v in layout.bases.get(in_dim, [])]


def _dim_of(vector: Vector) -> int | None:
    """The dim a basis moves along (None for zero); -1 if it moves along several."""
    nonzero = [d for d, x in enumerate(vector) if x]
    if not nonzero:
        return None
    return nonzero[0] if len(nonzero) == 1 else -1


def _cga_split(layout: LinearLayout) -> tuple[tuple[Vector, ...], list[int]] | None:
    """The ``cga_layout`` whose CTA tiles give ``layout``'s block bases (``combine_cta_cga_with_shape``:
    a block basis is the CGA basis times the CTA's shape), and the CTA's shape; None if impossible."""
    shape = [layout.out_dim_size(d) for d in layout.out_dim_names]
    block = _vectors(layout, "block")
    ctas = [1] * len(shape)
    for v in block:
        d = _dim_of(v)
        if d == -1:
            return None
        if d is not None:
            ctas[d] *= 2
    cta_shape = [s // c for s, c in zip(shape, ctas)]
    cga = []
    for v in block:
        scaled = []
        for x, t in zip(v, cta_shape):
            if x % t:
                return None
            scaled.append(x // t)
        cga.append(tuple(scaled))
    return tuple(cga), cta_shape


def _segmentations(vectors: Sequence[Vector], dims: Sequence[int], starts: Sequence[int | None] | None = None,
                   broadcast: int | None = None) -> list[tuple[int, ...]]:
    """Ways to cut ``vectors`` into consecutive groups, one per entry of ``dims`` (``identity_standard_nd``
    of some sizes, fit to a shape): group j holds bases along ``dims[j]`` only, doubling from
    ``starts[j]`` (any power of two when None), and zeros (bases fitted away) only after its non-zero
    ones. The groups of dim ``broadcast`` hold zeros only (a dot operand's lanes along K). Returns the
    group sizes (number of bases of each group)."""
    results: list[tuple[int, ...]] = []
    n = len(vectors)
    starts = list(starts) if starts is not None else [None] * len(dims)

    def longest(j: int, begin: int) -> int:
        """The largest size of a valid group j starting at ``begin`` (every shorter prefix is valid too)."""
        dim, expected, zero_seen, size = dims[j], starts[j], False, 0
        for v in vectors[begin:]:
            d = _dim_of(v)
            if d is None:
                zero_seen = True
            elif d != dim or zero_seen or dim == broadcast or v[d] & (v[d] - 1) or \
                    (expected is not None and v[d] != expected):
                break
            else:
                expected = 2 * v[d]
            size += 1
        return size

    def walk(j: int, begin: int, sizes: list[int]) -> None:
        if j == len(dims):
            if begin == n:
                results.append(tuple(sizes))
            return
        for size in reversed(range(longest(j, begin) + 1)):  # greedy first: zeros join the earlier group
            walk(j + 1, begin + size, sizes + [size])

    walk(0, 0, [])
    return results


def _orders(rank: int, *sequences: Sequence[Vector]) -> Iterator[tuple[int, ...]]:
    """Permutations of ``range(rank)`` compatible with the dims the bases move along (each sequence must
    visit dims in order: a dim it moves along after another comes later in the order), in
    ``itertools.permutations(reversed(range(rank)))``'s order (the descending order first), lazily.

    The compatible orders are the topological orders of the "comes before" relation the sequences give;
    they are built one dim at a time, trying the dims in that same order and placing a dim only after
    all those that must precede it, so each one costs O(rank^2) however many permutations are not
    compatible (a rank-11 tensor has 11! = 39916800 permutations). No order when a basis moves along
    several dims or the sequences contradict one another.

    >>> list(_orders(3, [(0, 1, 0), (1, 0, 0)]))
    [(2, 1, 0), (1, 2, 0), (1, 0, 2)]
    """
    before: list[set[int]] = [set() for _ in range(rank)]  # the dims that must come earlier than each
    for vectors in sequences:
        last = None
        for v in vectors:
            d = _dim_of(v)
            if d is None:
                continue
            if d == -1:
                return
            if last is not None and last != d:
                before[d].add(last)
            last = d
    placed: set[int] = set()
    while len(placed) < rank:  # a cycle leaves no order: found here, before any search
        ready = [d for d in range(rank) if d not in placed and before[d] <= placed]
        if not ready:
            return
        placed.update(ready)
    dims = tuple(reversed(range(rank)))
    order: list[int] = []
    placed.clear()

    def extend() -> Iterator[tuple[int, ...]]:
        if len(order) == rank:
            yield tuple(order)
            return
        for d in dims:
            if d not in placed and before[d] <= placed:
                order.append(d)
                placed.add(d)
                yield from extend()
                placed.remove(d)
                order.pop()

    yield from extend()


def _counts(sizes: Sequence[int], order: Sequence[int], rank: int) -> list[int]:
    counts = [1] * rank
    for size, d in zip(sizes, order):
        counts[d] = 1 << size
    return counts


# --------------------------------------------------------------------------------------------------
# distributed layouts
# --------------------------------------------------------------------------------------------------


def _families(target: LinearLayout, space: Space, depth: int, bitwidth: int | None) -> list[Iterator[Descriptor]]:
    """Candidate generators, one per registered kind of ``space`` with a search, simplest first."""
    families = []
    for kind in kinds(space):
        search = kind.candidates or _SEARCHES.get(kind.descriptor)
        if search is not None:
            families.append(iter(search(target, bitwidth, depth)))
    return families


def _cga_of(target: LinearLayout) -> tuple[Vector, ...] | None:
    split = _cga_split(target)
    return None if split is None else split[0]


def _blocked_search(target: LinearLayout, bitwidth: int | None, depth: int) -> Iterator[BlockedLayout]:
    cga = _cga_of(target)
    if cga is not None:
        yield from _blocked_candidates(target, cga)


def _nvmma_search(target: LinearLayout, bitwidth: int | None, depth: int) -> Iterator[NVMMADistributedLayout]:
    cga = _cga_of(target)
    if cga is not None:
        yield from _nvmma_candidates(target, cga, bitwidth)


def _mfma_search(target: LinearLayout, bitwidth: int | None, depth: int) -> Iterator[AMDMFMALayout]:
    cga = _cga_of(target)
    if cga is not None:
        yield from _mfma_candidates(target, cga)


def _dot_operand_search(target: LinearLayout, bitwidth: int | None, depth: int) -> Iterator[DotOperandLayout]:
    cga = _cga_of(target)
    if cga is not None:
        yield from _dot_operand_candidates(target, cga, len(_vectors(target, "lane")), bitwidth)


def _slice_search(target: LinearLayout, bitwidth: int | None, depth: int) -> Iterator[SliceLayout]:
    # a slice's parent has its lanes / warps along the sliced dim broadcast (zero bases here); without
    # any, the parent is this layout with a size-1 dim, never simpler than the layout itself
    broadcast = any(not any(v) for v in _vectors(target, "lane") + _vectors(target, "warp"))
    if depth < _MAX_SLICE_DEPTH and broadcast:
        yield from _slice_candidates(target, depth, bitwidth)


def _slice_candidates(target: LinearLayout, depth: int, bitwidth: int | None) -> Iterator[SliceLayout]:
    for dim in range(target.num_out_dims + 1):
        lifted = _lift(target, dim)
        for family in _families(lifted, Space.DISTRIBUTED, depth + 1, bitwidth):
            for parent in itertools.islice(family, _MAX_PARENTS):
                yield SliceLayout(dim, parent)


def _lift(layout: LinearLayout, dim: int) -> LinearLayout:
    """The layout with a size-1 dim inserted at ``dim`` (the parent of a slice along ``dim``)."""
    rank = layout.num_out_dims + 1
    names = list(standard_out_dim_names(rank))
    bases = [(in_dim, [list(v[:dim]) + [0] + list(v[dim:]) for v in vectors])
             for in_dim, vectors in layout.bases.items()]
    sizes = [layout.out_dim_size(d) for d in layout.out_dim_names]
    sizes.insert(dim, 1)
    return LinearLayout(bases, list(zip(names, sizes)), require_surjective=False)


def _blocked_parameters(target: LinearLayout, broadcast: int | None = None) -> Iterator[tuple]:
    """``(size_per_thread, threads_per_warp, warps_per_cta, order)`` candidates of a blocked layout, read
    off its bases: for an ``order``, the registers are the per-thread groups (from 1) then the repeat
    groups (from the CTA tile), in ``order``; the lanes then the warps continue each dim's groups. With
    ``broadcast`` (a dot operand's K), the registers of K are one group and lanes / warps along K zero."""
    rank = target.num_out_dims
    regs, lanes, warps = _vectors(target, "register"), _vectors(target, "lane"), _vectors(target, "warp")
    for order in _orders(rank, lanes, warps):
        if broadcast is None:
            reg_splits = _segmentations(regs, [*order, *order], [1] * rank + [None] * rank)
        else:
            reg_splits = _segmentations(regs, [*order, *(d for d in order if d != broadcast)],
                                        [1] * rank + [None] * (rank - 1))
        for reg_sizes in reg_splits:
            spt = _counts(reg_sizes[:rank], order, rank)
            if broadcast is not None:
                spt[broadcast] = 1
            lane_starts = [spt[d] for d in order]
            for lane_sizes in _segmentations(lanes, order, lane_starts, broadcast):
                tpw = _counts(lane_sizes, order, rank)
                warp_starts = [spt[d] * tpw[d] for d in order]
                for warp_sizes in _segmentations(warps, order, warp_starts, broadcast):
                    wpc = _counts(warp_sizes, order, rank)
                    yield tuple(spt), tuple(tpw), tuple(wpc), tuple(order)


def _blocked_candidates(target: LinearLayout, cga: tuple[Vector, ...]) -> Iterator[BlockedLayout]:
    for spt, tpw, wpc, order in _blocked_parameters(target):
        try:
            yield BlockedLayout(spt, tpw, wpc, order, cga)
        except LayoutError:
            continue


def _try(cls: type, *args: Any) -> Iterator[Descriptor]:
    """``cls(*args)`` as a one-element iterator (empty when the parameters are invalid)."""
    try:
        yield cls(*args)
    except LayoutError:
        return


def _mma_dims(rank: int, operand: int | None) -> tuple[int, int]:
    """(inner, outer): the dim of an MMA tile's two lanes (K of an operand, N of the accumulator) and of
    its three lanes."""
    if operand == 1:
        return rank - 2, rank - 1
    return rank - 1, rank - 2


def _nvmma_lanes_fit(target: LinearLayout, operand: int | None) -> bool:
    """Triton's ``nvidiaMmaTile`` lanes: two along ``inner`` (x2, x4 of its first), three along ``outer``
    (1, 2, 4); zeros where the shape is smaller than the tile."""
    lanes = _vectors(target, "lane")
    rank = target.num_out_dims
    if rank < 2 or len(lanes) != 5:
        return False
    inner, outer = _mma_dims(rank, operand)
    return bool(_segmentations(lanes, [inner, outer], [None, 1]))


def _nvmma_parents(target: LinearLayout, cga: tuple[Vector, ...], bitwidth: int | None,
                   tiles: Sequence[tuple[int, int]], wgmma_tiles: Sequence[tuple[int, int]], versions: Sequence[int],
                   broadcast: int | None = None) -> Iterator[NVMMADistributedLayout]:
    """NVMMA parents whose warps (Ampere row-major, Hopper column-major, ``broadcast``: zeros along K)
    fit ``target``'s warp bases; mma v2 per-warp tiles ``tiles``, wgmma per-warp tiles ``wgmma_tiles``."""
    rank = target.num_out_dims
    k = 256 // bitwidth if bitwidth else 16
    warps = _vectors(target, "warp")
    for version in versions:
        if version == 3 and rank != 2:
            continue
        warp_order = list(reversed(range(rank)))
        if version == 3:
            warp_order[0], warp_order[1] = warp_order[1], warp_order[0]
        for sizes in _segmentations(warps, warp_order, broadcast=broadcast):
            wpc = _counts(sizes, warp_order, rank)
            if version == 2:
                for m, n in tiles:
                    yield from _try(NVMMADistributedLayout, [2, 0], wpc, [1] * (rank - 2) + [m, n], cga)
            else:
                for m, n in wgmma_tiles:
                    yield from _try(NVMMADistributedLayout, [3, 0], wpc, [m, n, k], cga)


def _mma_tile_guess(target: LinearLayout) -> tuple[int, int]:
    """The accumulator's per-warp (m, n) read off the registers ``[n 1, m 8, m 16.., n 8, n 16..]``."""
    rank = target.num_out_dims
    inner, outer = rank - 1, rank - 2
    m, n = 16, 8
    regs = _vectors(target, "register")[2:]
    i = 0
    while i < len(regs) and _dim_of(regs[i]) == outer and regs[i][outer] == m and m < 64:
        m *= 2
        i += 1
    while i < len(regs) and _dim_of(regs[i]) == inner and regs[i][inner] == n and n < 256:
        n *= 2
        i += 1
    return m, n


def _nvmma_candidates(target: LinearLayout, cga: tuple[Vector, ...], bitwidth: int | None) -> Iterator[NVMMADistributedLayout]:
    regs = _vectors(target, "register")
    rank = target.num_out_dims
    if not _nvmma_lanes_fit(target, None) or (regs and _dim_of(regs[0]) not in (None, rank - 1)):
        return
    m, n = _mma_tile_guess(target)
    tiles = list(dict.fromkeys([(min(m, 32), min(n, 16)), (16, 8), (16, 16), (32, 8), (32, 16)]))
    wgmma = list(dict.fromkeys([(m, n), *((tile_m, 8 << i) for tile_m in (16, 32) for i in range(6))]))
    # a per-warp tile wider than mma.sync's (n > 16) reads as a wgmma accumulator first
    yield from _nvmma_parents(target, cga, bitwidth, tiles, wgmma, (3, 2) if n > 16 else (2, 3))


_MFMA_TILES = ((32, 32), (16, 16), (64, 4), (4, 64))


def _mfma_tiles(target: LinearLayout, accumulator: bool) -> list[tuple[int, int, bool, int]]:
    """(m, n, transposed, element_bitwidth) of the MFMA instructions; for an ``accumulator``, only those
    whose lanes fit ``target``'s."""
    rank = target.num_out_dims
    lanes = _vectors(target, "lane")
    found = []
    for (m, n), transposed, element in itertools.product(_MFMA_TILES, (False, True), (32, 64)):
        if (m, n) == (64, 4) and not transposed:
            continue
        tile = next(_try(AMDMFMALayout, 3, [m, n, 8], transposed, [1] * rank, element), None)
        if tile is None:
            continue
        if not accumulator:
            found.append((m, n, transposed, element))
            continue
        expected = tile.to_linear([1] * (rank - 2) + [m, n]).bases["lane"]
        if all(not any(v) or list(v) == e for v, e in zip(lanes, expected)):
            found.append((m, n, transposed, element))
    return found


def _mfma_candidates(target: LinearLayout, cga: tuple[Vector, ...], accumulator: bool = True) -> Iterator[AMDMFMALayout]:
    """MFMA accumulators (or, ``accumulator=False``, parents of dot operands) with ``target``'s warp count."""
    rank = target.num_out_dims
    if rank not in (2, 3) or len(_vectors(target, "lane")) != 6:
        return
    n_warps = len(_vectors(target, "warp"))
    warp_options = [[1 << e for e in exps] for exps in itertools.product(range(n_warps + 1), repeat=rank)
                    if sum(exps) == n_warps]
    for m, n, transposed, element in _mfma_tiles(target, accumulator):
        k = {32: 8, 16: 16, 64: 4, 4: 4}[m]
        for warps in warp_options:
            for tiles in itertools.product((1, 2), repeat=rank):
                yield from _try(AMDMFMALayout, 3, [m, n, k], transposed, warps, element, list(tiles), cga)


def _dot_operand_candidates(target: LinearLayout, cga: tuple[Vector, ...], lanes: int,
                            bitwidth: int | None) -> Iterator[DotOperandLayout]:
    rank = target.num_out_dims
    if rank < 2:
        return
    lane_vectors = _vectors(target, "lane")
    for operand in (0, 1):
        k_dim = rank - 1 if operand == 0 else rank - 2
        # the operand's CGA is the parent's with K zeroed: a parent with exactly that CGA produces it
        if lanes == 5 and _nvmma_lanes_fit(target, operand):
            first = lane_vectors[0][k_dim]
            k_widths = [first] if first else [1, 2, 4, 8, 16, 32]
            versions = (2, 3) if operand == 0 else (2,)
            for parent in _nvmma_parents(target, cga, bitwidth, [(16, 8), (32, 8)], [(16, 64), (32, 64)], versions,
                                         k_dim):
                for k_width in k_widths:
                    yield from _try(DotOperandLayout, operand, parent, k_width)
        if lanes == 6:
            k_widths = [lane_vectors[0][k_dim]] if lane_vectors[0][k_dim] else [1, 2, 4, 8, 16]
            k_widths = [k for k in k_widths if k]
            for parent in _mfma_candidates(target, cga, accumulator=False):
                for k_width in k_widths:
                    yield from _try(DotOperandLayout, operand, parent, k_width)
        for spt, tpw, wpc, order in _blocked_parameters(target, broadcast=k_dim):
            parent = next(_try(BlockedLayout, spt, tpw, wpc, order, cga), None)
            if parent is not None:
                yield from _try(DotOperandLayout, operand, parent, 0)


# --------------------------------------------------------------------------------------------------
# shared and tensor-memory layouts
# --------------------------------------------------------------------------------------------------


def _nvmma_shared_search(target: LinearLayout, bitwidth: int | None, depth: int) -> Iterator[NVMMASharedLayout]:
    cga = _cga_of(target)
    if cga is None:
        return
    rank = target.num_out_dims
    widths = [bitwidth] if bitwidth else []
    widths += [w for w in (16, 8, 32, 64) if w not in widths]
    for width in widths:
        for swizzle in (128, 64, 32, 0):
            for transposed in (False, True):
                yield from _try(NVMMASharedLayout, swizzle, width, rank, transposed, False, cga)
                if width == 8 and swizzle == 128:
                    yield from _try(NVMMASharedLayout, swizzle, width, rank, transposed, True, cga)


def _swizzled_search(target: LinearLayout, bitwidth: int | None, depth: int) -> Iterator[SwizzledSharedLayout]:
    cga = _cga_of(target)
    if cga is not None:
        yield from _swizzled_candidates(target, cga)


def _swizzled_candidates(target: LinearLayout, cga: tuple[Vector, ...]) -> Iterator[SwizzledSharedLayout]:
    rank = target.num_out_dims
    offsets = _vectors(target, "offset")
    order: list[int] = []
    for v in offsets:  # the column dim first, then the row dim (the dim a swizzled row basis moves most)
        nonzero = [d for d, x in enumerate(v) if x]
        for d in (nonzero if len(nonzero) == 1 else [d for d in nonzero if d not in order][-1:]):
            if d not in order:
                order.append(d)
    order += [d for d in reversed(range(rank)) if d not in order]
    if rank == 1:
        yield from _try(SwizzledSharedLayout, 1, 1, 1, [0], cga)
        return
    column, row = order[0], order[1]
    swizzles = [v[column] for v in offsets if v[row] and all(x == 0 for d, x in enumerate(v) if d not in (row, column))]
    first = next((i for i, c in enumerate(swizzles) if c), None)
    if first is not None:
        vec = swizzles[first]
        max_phase = 1 << sum(1 for c in swizzles[first:] if c)
        yield from _try(SwizzledSharedLayout, vec, 1 << first, max_phase, order, cga)
    yield from _try(SwizzledSharedLayout, 1, 1, 1, order, cga)


def _scales_search(target: LinearLayout, bitwidth: int | None, depth: int) -> Iterator[TensorMemoryScalesLayout]:
    cga = _cga_of(target)
    if cga is not None:
        yield from _try(TensorMemoryScalesLayout, cga)


def _tensor_memory_search(target: LinearLayout, bitwidth: int | None, depth: int) -> Iterator[TensorMemoryLayout]:
    cga = _cga_of(target)
    if cga is None:
        return
    columns = target.out_dim_size("dim1")
    for block_m in (128, 64):
        for block_n in (1 << i for i in range(10)):
            if block_n > max(columns, 1):
                break
            for col_stride in (1, 2, 4):
                for two_ctas in (False, True):
                    yield from _try(TensorMemoryLayout, (block_m, block_n), col_stride, cga, two_ctas, False)
            yield from _try(TensorMemoryLayout, (block_m, block_n), 1, cga, False, True)


#: the searches of the catalog's own kinds (``registry.LayoutKind.candidates`` gives a new kind's)
_SEARCHES = {
    BlockedLayout: _blocked_search,
    NVMMADistributedLayout: _nvmma_search,
    AMDMFMALayout: _mfma_search,
    DotOperandLayout: _dot_operand_search,
    SliceLayout: _slice_search,
    NVMMASharedLayout: _nvmma_shared_search,
    SwizzledSharedLayout: _swizzled_search,
    TensorMemoryScalesLayout: _scales_search,
    TensorMemoryLayout: _tensor_memory_search,
}
