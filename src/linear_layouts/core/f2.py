"""Linear algebra over F2 on bit-vectors stored as Python ints.

A vector of F2^n is an ``int`` whose bit ``i`` is coordinate ``i``. A matrix is a sequence of
column vectors (``columns[j]`` is the image of the j-th unit vector), which is how linear layouts
store their bases. This module knows nothing about layouts.

Conventions that match Triton (``f2reduce`` in ``LinearLayout.cpp``):

* A column is a *pivot* column iff it is not in the span of the columns before it. These are the
  pivot columns of the reduced row echelon form whose pivots are the lowest column indices.
* ``solve`` sets every free (non-pivot) variable to zero, so its answer is the unique solution
  supported on the pivot columns; this is the "least squares, minimal norm" choice of Triton.

Example:
    >>> rank([0b011, 0b110, 0b101])
    2
    >>> solve([0b01, 0b10, 0b11], 0b11)   # x = e0 + e1; the free column 2 is left at zero
    3
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from linear_layouts.core import _ccore

#: The compiled core, or None (pure Python): echelon, rank and solve on 64-bit words call it first; it
#: returns NotImplemented for anything else (wider ints, other iterables) and the Python code runs.
_C = _ccore.ext


def _use_backend(ext: Any) -> None:
    """Make ``ext`` (the compiled core, or None for pure Python) the backend of this module."""
    global _C
    _C = ext


_ccore.on_switch(_use_backend)

__all__ = [
    "EliminationBasis",
    "rref",
    "echelon",
    "rank",
    "in_span",
    "reduce",
    "pivot_columns",
    "solve",
    "solver",
    "inverse",
    "kernel",
    "span_sum",
    "intersection",
    "complement",
    "orthogonal_complement",
    "unit_complement",
    "intersection_by_complements",
    "span_elements",
    "is_independent",
    "transpose",
    "apply",
    "row_operations_to_permutation",
]


@dataclass(frozen=True)
class EliminationBasis:
    """An echelon basis of span(columns[:k]) that remembers how each vector was built.

    ``vectors[t]`` has a distinct highest set bit ``leads[t]``, and equals the XOR of the input
    columns whose indices are the set bits of ``combos[t]``. ``pivots`` lists the indices of the
    pivot columns (independent of the columns before them) in increasing order.
    """

    vectors: tuple[int, ...]
    combos: tuple[int, ...]
    pivots: tuple[int, ...]
    lead_index: dict[int, int] = field(default_factory=dict, compare=False, repr=False)

    @staticmethod
    def build(columns: Sequence[int]) -> "EliminationBasis":
        """Eliminate ``columns`` in order: O(len(columns) * rank) XORs."""
        by_lead: dict[int, tuple[int, int]] = {}
        pivots: list[int] = []
        for j, col in enumerate(columns):
            v, combo = col, 1 << j
            while v:
                lead = v.bit_length() - 1
                hit = by_lead.get(lead)
                if hit is None:
                    by_lead[lead] = (v, combo)
                    pivots.append(j)
                    break
                v ^= hit[0]
                combo ^= hit[1]
        leads = sorted(by_lead)
        return EliminationBasis(
            tuple(by_lead[h][0] for h in leads),
            tuple(by_lead[h][1] for h in leads),
            tuple(pivots),
            {h: t for t, h in enumerate(leads)},
        )

    @property
    def rank(self) -> int:
        return len(self.vectors)

    def express(self, y: int) -> int | None:
        """The combination (bit set over column indices) of pivot columns equal to ``y``, or None."""
        combo = 0
        while y:
            t = self.lead_index.get(y.bit_length() - 1)
            if t is None:
                return None
            y ^= self.vectors[t]
            combo ^= self.combos[t]
        return combo


def rref(columns: Sequence[int]) -> list[int]:
    """Reduced echelon basis of span(columns): one vector per lowest set bit, no shared pivots.

    Each returned vector has a distinct lowest set bit (its pivot) that no other returned vector
    has; the list is sorted by pivot. ``rref([0b11, 0b10]) == [0b01, 0b10]``.
    """
    rows: list[int] = []
    for v in columns:
        for r in rows:
            if v & (r & -r):
                v ^= r
        if v:
            low = v & -v
            rows = [r ^ v if r & low else r for r in rows]
            rows.append(v)
    return sorted(rows, key=lambda r: r & -r)


def echelon(columns: Iterable[int]) -> list[int]:
    """An echelon basis of span(columns), sorted by decreasing highest set bit."""
    if _C is not None:
        if type(columns) is not list and type(columns) is not tuple:
            columns = list(columns)
        out = _C.echelon(columns)
        if out is not NotImplemented:
            return out
    basis: dict[int, int] = {}
    for v in columns:
        while v:
            lead = v.bit_length() - 1
            b = basis.get(lead)
            if b is None:
                basis[lead] = v
                break
            v ^= b
    return [basis[h] for h in sorted(basis, reverse=True)]


def rank(columns: Iterable[int]) -> int:
    """dim span(columns)."""
    if _C is not None:
        if type(columns) is not list and type(columns) is not tuple:
            columns = list(columns)
        r = _C.rank(columns)
        if r is not NotImplemented:
            return r
    return len(echelon(columns))


def reduce(v: int, basis: Sequence[int]) -> int:
    """Reduce ``v`` by an echelon ``basis`` (as returned by ``echelon``); 0 iff v is in the span."""
    for b in basis:
        if v >> (b.bit_length() - 1) & 1:
            v ^= b
    return v


def in_span(v: int, columns: Iterable[int]) -> bool:
    """Whether v is in span(columns)."""
    return reduce(v, echelon(columns)) == 0


def is_independent(columns: Sequence[int]) -> bool:
    """Whether the columns are linearly independent (no zero column, no dependency)."""
    return rank(columns) == len(columns)


def pivot_columns(columns: Sequence[int]) -> tuple[int, ...]:
    """Indices of the columns that are not in the span of the columns before them."""
    return EliminationBasis.build(columns).pivots


def solve(columns: Sequence[int], y: int) -> int | None:
    """x with XOR_{j in x} columns[j] == y and every free variable zero, or None if y is not spanned.

    The answer is the bit set of column indices; it only uses pivot columns (see module doc).
    """
    if _C is not None:
        x = _C.solve(columns, y)
        if x is not NotImplemented:
            return x
    return EliminationBasis.build(columns).express(y)


def solver(columns: Sequence[int]) -> Callable[[int], int | None]:
    """``y -> solve(columns, y)`` for many ``y``: the compiled core's ``solve`` per ``y`` when it is the
    backend, else one elimination of ``columns`` reused for every ``y`` (the same unique answer).

    >>> [solver([0b01, 0b10, 0b11])(y) for y in (0b01, 0b11, 0b100)]
    [1, 3, None]
    """
    if _C is not None:
        return functools.partial(solve, tuple(columns))
    return EliminationBasis.build(list(columns)).express


def inverse(columns: Sequence[int]) -> list[int] | None:
    """Columns of M^-1 for a square invertible M given by its columns (n columns of n bits), or None."""
    n = len(columns)
    if any(c >> n for c in columns):
        return None
    elim = EliminationBasis.build(columns)
    if elim.rank != n:
        return None
    return [elim.express(1 << i) for i in range(n)]  # type: ignore[misc]


def kernel(columns: Sequence[int]) -> list[int]:
    """A basis of {x : XOR_{j in x} columns[j] == 0}, one vector per free column, in column order."""
    elim = EliminationBasis.build(columns)
    pivots = set(elim.pivots)
    out = []
    for j, col in enumerate(columns):
        if j not in pivots:
            out.append((1 << j) ^ elim.express(col))  # type: ignore[operator]
    return out


def span_sum(a: Iterable[int], b: Iterable[int]) -> list[int]:
    """An echelon basis of span(a) + span(b)."""
    return echelon(list(a) + list(b))


def intersection(a: Sequence[int], b: Sequence[int]) -> list[int]:
    """An echelon basis of span(a) ∩ span(b) (Zassenhaus-free: via the kernel of [a | b])."""
    a = echelon(a)
    b = echelon(b)
    vecs = []
    for k in kernel(a + b):
        x = 0
        for j, col in enumerate(a):
            if k >> j & 1:
                x ^= col
        vecs.append(x)
    return echelon(vecs)


def complement(subspace: Iterable[int], space: Sequence[int] | int) -> list[int]:
    """Vectors of ``space`` that extend a basis of ``subspace`` to a basis of ``subspace + space``.

    ``space`` is a list of vectors, or an int n meaning F2^n with its unit vectors. Vectors are
    taken greedily in the given order (unit vectors from bit 0 up), so the answer is deterministic.
    ``complement([0b01], 2) == [0b10]``.
    """
    basis = {b.bit_length() - 1: b for b in echelon(subspace)}  # leading bit -> basis vector
    candidates = [1 << i for i in range(space)] if isinstance(space, int) else list(space)
    out = []
    for v in candidates:
        r = v  # reduced by the vectors of distinct leading bits so far: 0 iff v is in their span
        while r:
            lead = r.bit_length() - 1
            b = basis.get(lead)
            if b is None:
                basis[lead] = r
                out.append(v)
                break
            r ^= b
    return out


def orthogonal_complement(vectors: Sequence[int], n: int) -> list[int]:
    """A basis of {x in F2^n : x & v has even popcount for every v in vectors} (Triton's ``nullspaceBasis``).

    One vector per non-pivot bit ``i`` of ``rref(vectors)`` (ascending ``i``): ``e_i`` plus the pivot bits
    of the rows that have bit ``i``.  Unlike ``kernel`` (the x that combine the *columns* to zero), this
    is the null space of the matrix whose *rows* are ``vectors``.

    >>> orthogonal_complement([0b011], 3)   # x0 = x1, x2 free
    [3, 4]
    """
    pivot_of = {(r & -r).bit_length() - 1: r for r in rref(vectors)}
    out = []
    for free in range(n):
        if free in pivot_of:
            continue
        v = 1 << free
        for p, r in pivot_of.items():
            if r >> free & 1:
                v ^= 1 << p
        out.append(v)
    return out


def unit_complement(subspace: Sequence[int], n: int) -> list[int]:
    """The unit vectors ``e_i`` of F2^n at the bits ``i`` that are no pivot (lowest set bit) of
    ``rref(subspace)``, ascending (Triton's ``complementBasis``).

    Spans a complement of ``subspace`` like ``complement(subspace, n)``, but a different choice:
    ``complement`` takes unit vectors greedily from bit 0 up.

    >>> unit_complement([0b011], 2), complement([0b011], 2)
    ([2], [1])
    """
    pivots = {(r & -r).bit_length() - 1 for r in rref(subspace)}
    return [1 << i for i in range(n) if i not in pivots]


def intersection_by_complements(a: Sequence[int], b: Sequence[int], n: int) -> list[int]:
    """span(a) ∩ span(b) in Triton's basis (``intersectionBasis``): when every vector is a unit vector,
    those of ``a`` (in ``a``'s order) that are in ``b``; otherwise the orthogonal complement of the sum
    of both orthogonal complements in F2^n.  Same span as ``intersection``, another basis and order.

    >>> intersection_by_complements([1, 2, 4], [4, 1], 3), intersection_by_complements([3, 4], [1, 2, 4], 3)
    ([1, 4], [3, 4])
    """
    if all(x > 0 and x & (x - 1) == 0 for x in list(a) + list(b)):
        in_b = set(b)
        return [x for x in a if x in in_b]
    return orthogonal_complement(orthogonal_complement(a, n) + orthogonal_complement(b, n), n)


def span_elements(columns: Sequence[int]) -> list[int]:
    """Every element of span(columns), as XORs of subsets in binary-counting order (with repeats)."""
    out = [0]
    for c in columns:
        out += [x ^ c for x in out]
    return out


def transpose(vectors: Sequence[int], width: int) -> list[int]:
    """Transpose a bit matrix: ``vectors[i]`` bit j becomes ``result[j]`` bit i, for j < width."""
    out = [0] * width
    for i, v in enumerate(vectors):
        while v:
            low = v & -v
            j = low.bit_length() - 1
            if j < width:
                out[j] |= 1 << i
            v ^= low
    return out


def apply(columns: Sequence[int], x: int) -> int:
    """M x: the XOR of ``columns[j]`` over the set bits ``j`` of ``x`` (bits past the columns ignored).

    ``apply([0b01, 0b11], 0b10) == 0b11``.
    """
    y = 0
    j = 0
    while x:
        if x & 1 and j < len(columns):
            y ^= columns[j]
        x >>= 1
        j += 1
    return y


def row_operations_to_permutation(columns: Sequence[int], n: int) -> tuple[list[tuple[int, int]], list[int]]:
    """Gauss-Jordan by rows: ``(ops, images)`` with ops ``(r, p)`` meaning "row r ^= row p" such that
    applying them in order to the invertible n x n matrix ``columns`` leaves the permutation matrix
    sending column j to bit ``images[j]``. Pivot: the highest bit of each column not used before.

    Requires: ``columns`` invertible (n independent columns of n bits). Each op is its own inverse,
    so ``columns = E(ops[0]) E(ops[1]) ... E(ops[-1]) P``.

    >>> row_operations_to_permutation([0b11, 0b01], 2)   # bit 0 ^= bit 1 leaves e1, e0
    ([(0, 1)], [1, 0])
    """
    cols = list(columns)
    ops: list[tuple[int, int]] = []
    used: set[int] = set()
    for j in range(len(cols)):
        col = cols[j]
        pivot = max(i for i in range(n) if col >> i & 1 and i not in used)
        used.add(pivot)
        for r in range(n):
            if r != pivot and col >> r & 1:
                ops.append((r, pivot))
                cols = [c ^ (1 << r) if c >> pivot & 1 else c for c in cols]
    return ops, [c.bit_length() - 1 for c in cols]
