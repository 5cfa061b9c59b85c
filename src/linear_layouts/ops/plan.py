"""Planning a permutation of a contiguous tensor: reduce it, classify it, place it on tiles.

``out = x.permute(dims)`` of a row-major tensor of ``shape`` moves input element ``(i_0, ..., i_{r-1})`` to
output position ``(i_{dims[0]}, ..., i_{dims[r-1]})``. ``reduce_permutation`` drops size-1 dims and merges
input dims ``d, d + 1`` that stay adjacent in the output (they move as one dim of ``shape[d] shape[d+1]``),
so every permutation becomes its smallest equivalent; then ``plan_permutation`` classifies it:

- ``COPY``: the identity (every input order is the output's);
- ``ROWS``: the last input dim stays last: rows of ``D`` contiguous elements move whole (``transposed=False``
  tiles over (the output's second-last dim, ``D``)), or, when ``D`` elements make one 2-, 4- or 8-byte
  word, a permutation of those words (``element_bytes * D``);
- ``TRANSPOSE``: the last input dim moves: tiles over (the input dim that becomes the output's last, the
  input's last), ``B = A^T`` per tile; every other dim is a batch dim.

================================  =======================  ==============================
``shape``, ``dims``               reduced                  class
================================  =======================  ==============================
``(8, 1, 4, 6)``, ``(1, 0, 2, 3)``  ``(192,)``, ``(0,)``       COPY
``(2, 5, 3, 64)``, ``(0, 2, 1, 3)`` ``(2, 5, 3, 64)``, same   ROWS (rows of 64)
``(2, 5, 3, 7)``, ``(0, 3, 1, 2)``  ``(2, 15, 7)``, ``(0, 2, 1)`` TRANSPOSE (15 x 7, batch 2)
================================  =======================  ==============================
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote

__all__ = ["SECTOR_BYTES", "PermuteKind", "ReducedPermutation", "TiledProblem", "reduce_permutation", "normalize_dims",
           "plan_permutation", "row_major_strides", "vector_elements", "MAX_VECTOR_BYTES", "dense_order",
           "strided_order", "gathers_first", "memory_permutation"]

#: The widest global access: 16 bytes.
MAX_VECTOR_BYTES = 16
#: The unit global memory moves between L1, L2 and DRAM: a 32-byte sector.
SECTOR_BYTES = 32


class PermuteKind(enum.Enum):
    """What a reduced permutation needs (module doc)."""

    EMPTY = "empty"
    COPY = "copy"
    ROWS = "rows"
    TRANSPOSE = "transpose"


@dataclass(frozen=True, repr=False)
class ReducedPermutation:
    """``out = x.permute(dims)`` of a row-major ``shape`` (or, ``strides`` given, of a view at those element
    strides; ``out_strides``: the output's, by output position, where it is a view with gaps) with no size-1 dims
    and no two input dims ``d, d+1`` adjacent in the output that could move as one (``dims[k + 1] == dims[k] + 1``
    never holds where both tensors join them in memory)."""

    shape: tuple[int, ...]
    dims: tuple[int, ...]
    strides: tuple[int, ...] | None = None
    out_strides: tuple[int, ...] | None = None

    @property
    def rank(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        gaps = "" if self.strides is None else f", strides={self.strides}"
        out_gaps = "" if self.out_strides is None else f", out_strides={self.out_strides}"
        return f"ReducedPermutation(shape={self.shape}, dims={self.dims}{gaps}{out_gaps})"


def row_major_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Element strides of a row-major (contiguous) tensor: ``(12, 4, 1)`` for ``(2, 3, 4)``."""
    out, stride = [], 1
    for size in reversed(shape):
        out.append(stride)
        stride *= size
    return tuple(reversed(out))


def dense_order(shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, ...] | None:
    """The dims of a dense tensor in memory order, outermost first: ``order`` with the tensor equal to the
    row-major ``M`` of shape ``(shape[order[0]], ...)`` read as ``x[i] = M[i[order[0]], i[order[1]], ...]``; None
    where the strides are no permutation of row-major ones (gaps, overlaps, negative strides). Size-1 dims go
    where they stand. Example: ``dense_order((4, 6), (1, 4))`` (a transposed view) is ``(1, 0)``; a
    channels-last ``(2, 3, 5, 7)`` at strides ``(105, 1, 21, 3)`` is ``(0, 2, 3, 1)``."""
    if len(shape) != len(strides) or any(s < 0 for s in strides):
        return None
    order = sorted(range(len(shape)), key=lambda d: (-strides[d] if shape[d] != 1 else 0, d))
    ordered = [d for d in order if shape[d] != 1]
    ones = [d for d in range(len(shape)) if shape[d] == 1]
    expected = 1
    for d in reversed(ordered):
        if strides[d] != expected:
            return None
        expected *= shape[d]
    out = []  # size-1 dims where they stand, the others in memory order around them
    others = iter(ordered)
    for d in range(len(shape)):
        out.append(d if d in ones else next(others))
    return tuple(out)


def strided_order(shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, ...] | None:
    """The dims of a strided view in memory order, outermost first, as ``dense_order`` (size-1 dims where they
    stand), for views with gaps or repeats too: dims of stride 0 (a broadcast, ``expand``) first, then by
    decreasing stride; None where a stride is negative. For a dense view it is ``dense_order``'s. Example:
    ``strided_order((4, 6), (24, 1))`` (``y[:, :6]`` of a ``4 x 24`` ``y``) is ``(0, 1)``;
    ``strided_order((4, 6), (1, 8))`` is ``(1, 0)``."""
    if len(shape) != len(strides) or any(s < 0 for s in strides):
        return None
    moving = sorted((d for d in range(len(shape)) if shape[d] != 1),
                    key=lambda d: (strides[d] != 0, -strides[d], d))
    others = iter(moving)
    return tuple(d if shape[d] == 1 else next(others) for d in range(len(shape)))


def normalize_dims(dims, rank: int, argument: str = "dims") -> tuple[int, ...]:
    """``dims`` as a permutation of ``range(rank)`` (negative dims count from the end, as in PyTorch): ints, or
    anything that is an int by ``__index__`` but a bool; LayoutError naming ``argument`` unless it is one."""
    try:
        values = tuple(dims)
    except TypeError:
        raise LayoutError(f"{argument}: must be a sequence of ints (a permutation of the {rank} dims), got "
                          f"{quote(dims)}") from None
    out = []
    for d in values:
        if isinstance(d, bool) or not hasattr(d, "__index__"):
            raise LayoutError(f"{argument}: must hold ints, got {quote(d)} in {quote(values)}")
        try:
            d = d.__index__()
        except TypeError:  # a 0-d float array (NumPy's, PyTorch's) has an __index__ that refuses
            raise LayoutError(f"{argument}: must hold ints, got {quote(d)} in {quote(values)}") from None
        if not -rank <= d < rank:
            raise LayoutError(f"{argument}: dim {d} is out of range for a tensor of {rank} dims")
        out.append(d % rank if rank else d)
    if len(out) != rank or sorted(out) != list(range(rank)):
        raise LayoutError(f"{argument}: {quote(values)} is not a permutation of the {rank} dims (each of "
                          f"0 .. {rank - 1} once)")
    return tuple(out)


def reduce_permutation(shape: tuple[int, ...], dims: tuple[int, ...], strides: tuple[int, ...] | None = None,
                       out_strides: tuple[int, ...] | None = None) -> ReducedPermutation:
    """The smallest permutation equivalent to ``x.permute(dims)`` of a row-major ``shape`` (module doc):
    size-1 dims dropped, runs of consecutive input dims that stay consecutive in the output merged. ``strides``:
    ``x``'s element strides where it is a view with gaps (its dims in memory order: ``strided_order``);
    ``out_strides``: the output's, by output position, where it is a view with gaps. Two dims then merge only where
    they are one in memory in both tensors (``strides[d] == strides[d + 1] shape[d + 1]``), and the result keeps the
    merged dims' strides (None where they are row-major).

    Requires: ``dims`` a permutation of ``range(len(shape))``; no size 0.

    >>> reduce_permutation((2, 3, 4, 5), (0, 2, 3, 1))
    ReducedPermutation(shape=(2, 3, 20), dims=(0, 2, 1))
    >>> reduce_permutation((2, 3, 4, 5), (0, 2, 3, 1), strides=(120, 40, 10, 1))  # x[:, :, :, :5] of (2, 3, 4, 10)
    ReducedPermutation(shape=(2, 3, 4, 5), dims=(0, 2, 3, 1), strides=(120, 40, 10, 1))
    """
    keep = [d for d in range(len(shape)) if shape[d] != 1]
    rank_of = {d: i for i, d in enumerate(keep)}
    order = [rank_of[d] for d in dims if d in rank_of]  # output order of the kept input dims
    sizes = [shape[d] for d in keep]
    steps = None if strides is None else [strides[d] for d in keep]
    out_steps = None if out_strides is None else {  # kept input dim -> its output stride
        rank_of[d]: out_strides[k] for k, d in enumerate(dims) if d in rank_of}

    def joins(d: int) -> bool:  # input dims d - 1, d (adjacent in the output too) are one in memory in both
        return ((steps is None or steps[d - 1] == steps[d] * sizes[d])
                and (out_steps is None or out_steps[d - 1] == out_steps[d] * sizes[d]))

    runs: list[list[int]] = []  # maximal runs of the output order with consecutive input dims
    for d in order:
        if runs and runs[-1][-1] + 1 == d and joins(d):
            runs[-1].append(d)
        else:
            runs.append([d])
    by_input = sorted(runs, key=lambda run: run[0])
    new_index = {run[0]: i for i, run in enumerate(by_input)}
    merged = tuple(math.prod(sizes[d] for d in run) for run in by_input)
    merged_dims = tuple(new_index[run[0]] for run in runs)
    merged_strides = None if steps is None else tuple(steps[run[-1]] for run in by_input)
    if merged_strides == row_major_strides(merged):
        merged_strides = None
    merged_out = None if out_steps is None else tuple(out_steps[run[-1]] for run in runs)
    if merged_out == row_major_strides(tuple(merged[d] for d in merged_dims)):
        merged_out = None
    return ReducedPermutation(merged, merged_dims, merged_strides, merged_out)


@dataclass(frozen=True)
class TiledProblem:
    """A reduced permutation placed on tiles: ``rows x cols`` matrices ``A`` (row stride ``lda``) mapped
    to ``B`` (row stride ``ldb``; ``transposed``: ``B = A^T``), one per index of the ``batch`` dims, each
    ``(size, src_stride, dst_stride)`` in elements, in output order (the last varies fastest);
    ``element_bytes``: of the moved elements (a word of ``D`` elements for a ``ROWS`` permutation of short
    rows)."""

    kind: PermuteKind
    element_bytes: int
    rows: int
    cols: int
    lda: int
    ldb: int
    transposed: bool
    batch: tuple[tuple[int, int, int], ...]

    @property
    def batch_count(self) -> int:
        return math.prod(size for size, _, _ in self.batch)


def plan_permutation(shape: tuple[int, ...], dims: tuple[int, ...], element_bytes: int,
                     max_word_bytes: int = 8, strides: tuple[int, ...] | None = None,
                     out_strides: tuple[int, ...] | None = None) -> TiledProblem:
    """``x.permute(dims)`` of a contiguous ``shape`` of ``element_bytes``-byte elements as a ``TiledProblem``
    (``EMPTY`` / ``COPY`` problems carry ``rows = numel``, nothing else). A ``ROWS`` permutation whose rows
    are one 2-, 4- or 8-byte word (at most ``max_word_bytes``: the alignment both tensors allow) is
    planned again as a permutation of those words. ``strides``: ``x``'s element strides where it is a view with
    gaps (``reduce_permutation``): the tiles read it at those strides, and a view that is the identity is a
    ``ROWS`` move of its rows; ``out_strides``: the output's, by output position, where it is a view with gaps (a
    slice of a larger buffer): the tiles write it there. Where the last dim in memory of either has a stride
    other than 1 (``y[:, ::2]``), the rows are of one element (``cols == 1``).

    >>> p = plan_permutation((4, 128, 16, 64), (0, 2, 1, 3), 2)
    >>> p.kind.value, p.rows, p.cols, p.lda, p.ldb, p.batch
    ('rows', 128, 64, 1024, 64, ((4, 131072, 131072), (16, 64, 8192)))
    >>> p = plan_permutation((4, 100), (0, 1), 2, strides=(300, 1))  # y[:, :100] of a 4 x 300 y
    >>> p.kind.value, p.rows, p.cols, p.lda, p.ldb, p.batch
    ('rows', 4, 100, 300, 100, ())
    >>> p = plan_permutation((64, 100), (1, 0), 2, out_strides=(512, 1))  # into buf[:100, :64] of a 100 x 512 buf
    >>> p.kind.value, p.rows, p.cols, p.lda, p.ldb
    ('transpose', 64, 100, 100, 512)
    """
    numel = math.prod(shape)
    if numel == 0:
        return TiledProblem(PermuteKind.EMPTY, element_bytes, 0, 0, 0, 0, False, ())
    reduced = reduce_permutation(shape, dims, strides, out_strides)
    r, size, order = reduced.rank, reduced.shape, reduced.dims
    src_strides = row_major_strides(size) if reduced.strides is None else reduced.strides
    dst_strides = row_major_strides(tuple(size[d] for d in order)) if reduced.out_strides is None \
        else reduced.out_strides
    if src_strides and (src_strides[-1] != 1 or dst_strides[-1] != 1):  # rows of one element, at the last strides
        r, size, order = r + 1, size + (1,), order + (r,)
        src_strides, dst_strides = src_strides + (1,), dst_strides + (1,)
    if order == tuple(range(r)) and reduced.strides is None and reduced.out_strides is None:
        return TiledProblem(PermuteKind.COPY, element_bytes, numel, 1, 1, 1, False, ())
    position = {d: k for k, d in enumerate(order)}
    last = r - 1
    if order[-1] == last:  # the rows of the last dim stay whole
        word = size[last] * element_bytes
        if (word in (2, 4, 8) and element_bytes < word <= max_word_bytes
                and src_strides[-2] == dst_strides[-2] == size[last]
                and all(s % size[last] == 0 for s in src_strides[:-1] + dst_strides[:-1])):
            words = None if reduced.strides is None else tuple(s // size[last] for s in src_strides[:-1])
            out_words = None if reduced.out_strides is None else tuple(s // size[last] for s in dst_strides[:-1])
            return plan_permutation(size[:-1], order[:-1], word, max_word_bytes, words, out_words)
        tile_row_dim = order[-2]
        rows, cols = size[tile_row_dim], size[last]
        lda, ldb = src_strides[tile_row_dim], dst_strides[r - 2]
        kind, transposed, tiled = PermuteKind.ROWS, False, {tile_row_dim, last}
    else:
        tile_row_dim = order[-1]
        rows, cols = size[tile_row_dim], size[last]
        lda, ldb = src_strides[tile_row_dim], dst_strides[position[last]]
        kind, transposed, tiled = PermuteKind.TRANSPOSE, True, {tile_row_dim, last}
    batch = tuple((size[d], src_strides[d], dst_strides[position[d]]) for d in order if d not in tiled)
    return TiledProblem(kind, element_bytes, rows, cols, lda, ldb, transposed, batch)


def memory_permutation(shape: tuple[int, ...], strides: tuple[int, ...],
                       dims: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...] | None, tuple[int, ...]] | None:
    """``x.permute(dims)`` of a view at ``strides`` as a permutation of the tensor ``M`` its memory holds:
    ``(M's shape, M's strides, dims')`` with ``M``'s dims in memory order (``strided_order``; its strides None
    where ``M`` is row-major) and ``M.permute(dims')`` equal to ``x.permute(dims)``: with ``x = M.permute(p)``, ``p``
    the inverse of the order, ``dims'[k] = p[dims[k]]``. None for negative strides. Example: ``x = y.t()`` of a
    contiguous ``4 x 6`` ``y``: ``memory_permutation((6, 4), (1, 6), (1, 0))`` is ``((4, 6), None, (0, 1))``, a
    copy of ``y``."""
    order = strided_order(shape, strides)
    if order is None:
        return None
    inverse = [0] * len(order)
    for k, d in enumerate(order):
        inverse[d] = k
    memory_shape = tuple(shape[d] for d in order)
    memory_strides = tuple(strides[d] for d in order)
    dense = all(s == r for n, s, r in zip(memory_shape, memory_strides, row_major_strides(memory_shape)) if n != 1)
    return memory_shape, None if dense else memory_strides, tuple(inverse[d] for d in dims)


def gathers_first(shape: tuple[int, ...], dims: tuple[int, ...], strides: tuple[int, ...] | None,
                  out_strides: tuple[int, ...] | None = None) -> bool:
    """Whether ``x.permute(dims)`` of a view at ``strides`` (dims in memory order) takes two passes: where no dim has
    stride 1, one pass reads rows of one element along the output's last dim (``plan_permutation``), which leaves a
    warp's reads a row stride apart unless that dim is the innermost; gathered first into memory order (rows along
    the innermost dim, its elements a few apart), the permutation then reads a dense copy. ``gathers_first((4096,
    4096), (1, 0), (8192, 2))`` (``y[:, ::2].t()``) is True; with dims ``(0, 1)`` it is False."""
    if strides is None or 0 in shape:
        return False
    reduced = reduce_permutation(shape, dims, strides, out_strides)
    return reduced.strides is not None and reduced.strides[-1] != 1 and reduced.dims[-1] != reduced.rank - 1


def vector_elements(element_bytes: int, extent: int, *pointers: int) -> int:
    """The widest power-of-two count of elements (at most ``MAX_VECTOR_BYTES``) that divides ``extent`` and
    whose bytes every address in ``pointers`` is aligned to.

    >>> vector_elements(2, 11008, 0x7f0000000000), vector_elements(1, 1001, 0), vector_elements(4, 12, 0x104)
    (8, 1, 1)
    """
    v = MAX_VECTOR_BYTES // element_bytes
    while v > 1 and (extent % v or any(p % (v * element_bytes) for p in pointers)):
        v //= 2
    return max(v, 1)
