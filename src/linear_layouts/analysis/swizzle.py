"""Optimal swizzling (paper §5.4, §9.2): a shared layout that vectorizes both accesses, conflict-free.

Work in the flattened tensor F2^d (first out dim least significant). For the store layout A and the
load layout B:

* V = A_Reg ∩ B_Reg (register columns of both, at most 128 bits of elements): the vector, offset
  bits 0 .. |V|-1. Below 4 bytes the rest of the word is filled with registers of one side
  (Triton's "fill bank 0"), so that side moves whole words; K = V + fill are the in-word bits.
* For each side X, its phase lanes X_Thr (the lanes of one phase: 32, 16 or 8 of them),
  U_X = span(K ∪ X_Thr). I = U_A ∩ U_B; E, F extend I to U_A, U_B; G = {e_i ⊕ f_i} pairs them
  in ascending order; C completes U_A + U_B to F2^d.
* The segment (offset bits at 128 bytes and above, ℓ of them) is H ⊆ C ∪ G: by Lemma 9.5,
  span(H) avoids U_A ∪ U_B, so by Lemma 9.4 neither access has a bank conflict. The bank bits are
  the unit vectors completing K ∪ H, taken last tensor dim first (row-major).

With ``extend_vectors=True`` one side's vector also grows past V with its own registers (Triton's
extra vectorization): same wavefronts, fewer instructions.

Example (seed 004: 16x32 fp32 transpose): ``optimal_swizzle(store, load, 32).layout`` maps offset
``32*m + (n xor 2m)`` to (m, n), with 16 + 16 wavefronts (unswizzled: 16 + 256, XOR m: 16 + 32).

Legacy baselines for comparison: ``padded_baseline`` (row-major, each row padded by one access
width) and ``legacy_swizzle_baseline`` (Definition 4.11's mma swizzle with Triton's parameters).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from linear_layouts.core import f2
from linear_layouts.analysis.bank_simulator import simulate_wavefronts
from linear_layouts.analysis.banks import (
    access_from_columns,
    access_wavefronts,
    check_distributed,
    phase_units,
    shared_access,
)
from linear_layouts.core.arguments import checked
from linear_layouts.layouts.shared import SwizzledSharedLayout, row_major_shared
from linear_layouts.core.element_type import DTypeLike, element_type
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import MAX_ELEMENTS, check_layout_size, quote
from linear_layouts.target import Target, resolve

__all__ = [
    "SwizzleResult",
    "SharedBaseline",
    "optimal_swizzle",
    "matrix_trans_swizzle",
    "lemma_9_5_bound",
    "shared_layout_from_flat",
    "padded_baseline",
    "legacy_swizzle_params",
    "legacy_swizzle_baseline",
]


@dataclass(frozen=True)
class SwizzleResult:
    """The optimal shared layout and its predicted cost; the sets are flattened tensor vectors (ints).

    ``vector_bits`` is the common vector of the paper (2**|V| * bitwidth); each side may move more
    (``store_vector_bits`` / ``load_vector_bits``: the widest ld/st.shared it can use on ``layout``).
    ``K`` are the lowest offset bits (V, then the word fill / vector extension); ``bank`` the other
    offset bits below 128 bytes; ``H`` the segment bits above (⊆ C ∪ G when conflict-free).
    """

    layout: LinearLayout
    bitwidth: int
    store_wavefronts: int
    load_wavefronts: int
    vector_bits: int
    store_vector_bits: int
    load_vector_bits: int
    V: tuple[int, ...]
    K: tuple[int, ...]
    I: tuple[int, ...]
    E: tuple[int, ...]
    F: tuple[int, ...]
    G: tuple[int, ...]
    C: tuple[int, ...]
    H: tuple[int, ...]
    bank: tuple[int, ...]
    segment_bits: int
    lemma_9_5_bound: int

    @property
    def total_wavefronts(self) -> int:
        return self.store_wavefronts + self.load_wavefronts


@dataclass(frozen=True)
class SharedBaseline:
    """A legacy shared layout (optionally padded) with the same cost fields as ``SwizzleResult``.

    ``padding`` holds Triton ``PaddedSharedLayout`` pairs (interval, pad) in elements; padded layouts
    are not linear, so their wavefronts come from the brute-force simulator.
    """

    name: str
    layout: LinearLayout
    padding: tuple[tuple[int, int], ...]
    bitwidth: int
    store_wavefronts: int
    load_wavefronts: int
    store_vector_bits: int
    load_vector_bits: int
    params: tuple[int, ...] = ()

    @property
    def total_wavefronts(self) -> int:
        return self.store_wavefronts + self.load_wavefronts

    @property
    def shared_bytes(self) -> int:
        """Bytes of shared memory the layout occupies (padding included)."""
        n = self.layout.in_dim_size("offset")
        extra = sum((n - 1) // interval * pad for interval, pad in self.padding)
        return (n + extra) * self.bitwidth // 8


def _check_pair(store_layout: object, load_layout: object, dtype: DTypeLike,
                target: Target) -> tuple[LinearLayout, LinearLayout, int]:
    w = element_type(dtype).bits
    a = check_distributed(store_layout, "store_layout", target)
    b = check_distributed(load_layout, "load_layout", target)
    if sorted(a.out_dims.items()) != sorted(b.out_dims.items()):
        raise LayoutError(f"store_layout and load_layout must cover the same tensor: {a.out_dims} vs {b.out_dims}")
    b = b.transpose_outs(list(a.out_dims))
    for name, lay in (("store_layout", a), ("load_layout", b)):
        if not lay.is_surjective():
            raise LayoutError(f"{name} must be surjective (cover every tensor element)")
    return a, b, w


def _nonzero_unique(vectors: tuple[int, ...]) -> list[int]:
    out: list[int] = []
    for v in vectors:
        if v and v not in out:
            out.append(v)
    return out


def _row_major_units(out_log2: list[int]) -> list[int]:
    """Unit vectors of the flattened tensor, last out dim first (row-major contiguity), LSB first."""
    shifts = [sum(out_log2[:i]) for i in range(len(out_log2))]
    return [1 << (shifts[i] + j) for i in reversed(range(len(out_log2))) for j in range(out_log2[i])]


def shared_layout_from_flat(columns: list[int], like: LinearLayout) -> LinearLayout:
    """The shared layout ``offset -> like's out dims`` whose offset bit i maps to flattened vector columns[i]."""
    log2s = [s.bit_length() - 1 for s in like.out_dims.values()]
    bases = []
    for c in columns:
        vec = []
        for k in log2s:
            vec.append(c & ((1 << k) - 1))
            c >>= k
        bases.append(vec)
    dims = {"offset": bases}
    if like.has_in_dim("block"):
        dims["block"] = []
    return LinearLayout(dims, like.out_dims)


def lemma_9_5_bound(d: int, u: list[int], v: list[int]) -> int:
    """Lemma 9.5: the largest subspace of F2^d meeting span(u) ∪ span(v) only in 0 has dim d - max(dims)."""
    return d - max(f2.rank(u), f2.rank(v))


def _phase_lanes(lanes: tuple[int, ...], vector_bytes: int, op: str, target: Target) -> list[int]:
    """The non-zero tensor vectors spanning one phase's lanes (``Target.shared.phase_lanes``: on NVIDIA
    the lowest lanes). 8- and 16-byte loads whose lane 0 or 1 is a broadcast (zero) pair lanes where
    the target pairs loads (``SharedAccess.paired``): their phases hold twice as many lanes; stores never pair."""
    shared = target.shared
    unit = shared.unit_bytes(vector_bytes)
    paired = shared.pairs(op, unit, True) and 0 in lanes[:2]
    return [x for x in phase_units(tuple(lanes), shared.phase_lanes(target.lanes, op, unit, paired=paired)) if x]


def _independent(basis: list[int], x: int) -> bool:
    return x != 0 and f2.rank(basis + [x]) == len(basis) + 1


@functools.lru_cache(maxsize=1024)  # pure; optimal_swizzle(extend_vectors=True) re-asks the plain ones
def _candidates(a: LinearLayout, b: LinearLayout, w: int, fill_from_store: bool,
                extend: bool, target: Target) -> tuple[tuple[tuple[int, ...], Mapping[str, Any]], ...]:
    """The §9.2 construction (module doc) with the word filled from one side (and, with ``extend``,
    that side's vector widened up to 128 bits); one ``(columns, sets)`` candidate per bank order.
    Immutable (tuples, read-only mappings of tuples and ints), so no caller can change the cached answer."""
    d = a.total_out_dim_size_log2
    units = _row_major_units([s.bit_length() - 1 for s in a.out_dims.values()])
    a_reg = _nonzero_unique(a.flat_bases("register", missing_ok=True))
    b_reg = _nonzero_unique(b.flat_bases("register", missing_ok=True))
    a_lane, b_lane = a.flat_bases("lane"), b.flat_bases("lane")
    max_vec = (128 // w).bit_length() - 1

    # V: registers of both, in the store's order, at most 128 bits of elements
    V: list[int] = []
    for r in a_reg:
        if r in b_reg and len(V) < max_vec and _independent(V, r):
            V.append(r)
    # below 4 bytes, fill the word with one side's registers (the other side's lanes first, in lane
    # order: they then share words, which is free), then with any direction; ``extend`` goes on with
    # that side's registers up to 128 bits (fewer instructions, same wavefronts)
    K = list(V)
    word = 8 * target.shared.bank_bytes
    word_bits = min((word // w).bit_length() - 1 if w < word else 0, d)
    regs, other_lanes = (a_reg, b_lane) if fill_from_store else (b_reg, a_lane)
    own = [x for x in other_lanes if x in regs and x not in V] + [r for r in regs if r not in V and r not in other_lanes]
    for x in [*own, *(x for x in a_lane if x in b_lane), *a_lane, *b_lane, *units]:
        if len(K) >= word_bits:
            break
        if _independent(K, x):
            K.append(x)
    plain = len(K)
    if extend and all(x in regs for x in K[len(V):]):
        for x in own:
            if len(K) >= min(max_vec, d):
                break
            if _independent(K, x):
                K.append(x)
    if extend and len(K) == plain:  # nothing widened: the rest depends on K only, as the plain candidates
        return _candidates(a, b, w, fill_from_store, False, target)

    def vector_bits_of(side_regs: list[int]) -> int:
        n = 0
        while n < len(K) and n < max_vec and K[n] in side_regs:
            n += 1
        return n

    vec_store, vec_load = vector_bits_of(a_reg), vector_bits_of(b_reg)
    k_a, k_b = max(vec_store, word_bits), max(vec_load, word_bits)  # in-unit offset bits of each side
    u_a = K[:k_a] + _phase_lanes(a_lane, (1 << vec_store) * w // 8, "store", target)
    u_b = K[:k_b] + _phase_lanes(b_lane, (1 << vec_load) * w // 8, "load", target)
    I = f2.intersection(u_a, u_b)
    E = f2.complement(I, u_a[k_a:])
    F = f2.complement(I, u_b[k_b:])
    G = [e ^ f for e, f in zip(sorted(E), sorted(F))]
    C = f2.complement(f2.span_sum(u_a, u_b), units)

    # segment: offset bits from 128 bytes up; Lemma 9.5's C ⊕ G first (conflict-free), then, only if
    # that is too small, the unpaired thread bits (conflicts can no longer be avoided)
    seg_len = max(d - max((8 * target.shared.phase_bytes // w).bit_length() - 1, len(K)), 0)
    H: list[int] = []
    for x in [*C, *G, *sorted(E)[len(G):], *sorted(F)[len(G):], *sorted(E), *sorted(F), *units]:
        if len(H) >= seg_len:
            break
        if _independent(K + H, x):
            H.append(x)

    out = []
    # bank bits complete K ∪ H with unit vectors, row-major first; a bank bit right after K can widen
    # one side's vector (and its phases), so registers-last is tried too
    for order in (units, sorted(units, key=lambda x: x in a_reg or x in b_reg)):
        bank = f2.complement(K + H, order)
        sets = MappingProxyType(dict(
            V=tuple(V), K=tuple(K), I=tuple(I), E=tuple(E), F=tuple(F), G=tuple(G), C=tuple(C), H=tuple(H),
            bank=tuple(bank), segment_bits=seg_len, lemma_9_5_bound=lemma_9_5_bound(d, u_a, u_b)))
        out.append((tuple(K + bank + H), sets))
    return tuple(out)


@functools.lru_cache(maxsize=1024)  # pure; optimal_swizzle(extend_vectors=True) re-asks the plain ones
def _scored_candidates(a: LinearLayout, b: LinearLayout, w: int, fill_from_store: bool, extend: bool, target: Target
                       ) -> tuple[tuple[tuple[int, ...], Mapping[str, Any], tuple[int, int], tuple[int, int], int], ...]:
    """Each of ``_candidates(a, b, w, fill_from_store, extend)`` as ``(columns, sets, (store, load)
    wavefronts, (store, load) vector bits, store + load instructions)``: what ``optimal_swizzle`` weighs."""
    found = _candidates(a, b, w, fill_from_store, extend, target)
    if extend and found is _candidates(a, b, w, fill_from_store, False, target):  # nothing widened: the plain ones
        return _scored_candidates(a, b, w, fill_from_store, False, target)
    out = []
    for columns, sets in found:
        store = access_from_columns(columns, a, w, target=target)
        load = access_from_columns(columns, b, w, target=target)
        out.append((columns, sets, (access_wavefronts(store, op="store"), access_wavefronts(load)),
                    (store.vector_bits, load.vector_bits), store.instructions + load.instructions))
    return tuple(out)


@checked
def optimal_swizzle(store_layout: LinearLayout, load_layout: LinearLayout, dtype: DTypeLike,
                    *, extend_vectors: bool = False, target: Target | str | None = None) -> SwizzleResult:
    """The shared layout maximizing vectorization (|V|), then minimizing store + load wavefronts on ``target``
    (default: the default target; its lanes, banks and phases).

    Both accesses are conflict-free whenever Lemma 9.5 allows it, which in the bank model is always;
    below 4 bytes per lane, the side whose registers fill the word is the cheaper of the two choices.
    ``extend_vectors=True`` also widens one side's vector beyond V with its own registers (preferring
    the other side's lanes, in lane order, which also suits ldmatrix), then minimizes instructions at
    equal wavefronts: on seed 004 it gives st.shared.v4 x4 and ldmatrix.x4 x4 for the same 16 + 16.
    ``store_wavefronts`` / ``load_wavefronts`` are ``wavefronts`` on the result.
    """
    target = resolve(target)
    a, b, w = _check_pair(store_layout, load_layout, dtype, target)
    if not isinstance(extend_vectors, bool):
        raise LayoutError(f"extend_vectors must be a bool, got {quote(extend_vectors)}")
    best = None
    sides = (True, False) if w < 32 or extend_vectors else (True,)
    for fill_from_store, extend in ((f, e) for f in sides for e in ((False, True) if extend_vectors else (False,))):
        for columns, sets, cost, vec_bits, instructions in _scored_candidates(a, b, w, fill_from_store, extend,
                                                                              target):
            key = (sum(cost), instructions if extend_vectors else 0, -sum(vec_bits))
            if best is None or key < best[0]:
                best = (key, columns, sets, cost, vec_bits)
    _, columns, sets, cost, vec_bits = best  # type: ignore[misc]
    layout = shared_layout_from_flat(list(columns), a)
    return SwizzleResult(
        layout=layout, bitwidth=w, store_wavefronts=cost[0], load_wavefronts=cost[1],
        vector_bits=(1 << len(sets["V"])) * w, store_vector_bits=vec_bits[0], load_vector_bits=vec_bits[1],
        V=sets["V"], K=sets["K"], I=sets["I"], E=sets["E"], F=sets["F"],
        G=sets["G"], C=sets["C"], H=sets["H"], bank=sets["bank"],
        segment_bits=sets["segment_bits"], lemma_9_5_bound=sets["lemma_9_5_bound"],
    )


@checked
def matrix_trans_swizzle(store_layout: LinearLayout, load_layout: LinearLayout, dtype: DTypeLike,
                         *, target: Target | str | None = None) -> LinearLayout:
    """A shared layout for 16-byte ``st.shared.v4`` stores and ``ldmatrix.x4.trans`` loads of 16-bit elements:
    the transposing conversion §9.2's common vector cannot serve (no register bit on both sides).

    ``ldmatrix.trans`` gives lane ``l`` of matrix ``i`` the elements of rows ``2 (l % 4) + e`` (``e``: the
    element in the word) at column ``l / 4`` of an 8 x 8 matrix whose rows are 16-byte units. So offset bits
    0-2 (a unit) are the load's lanes 2-4, which must be registers of the store (its 16-byte vector); bank
    bits 3-5 are the store's first three lanes (a phase of 8 lanes, 128 bytes, one bank group each); and the
    matrix rows, the load's register 0 and lanes 0 and 1, are each placed with one bank bit XORed in, so that
    a matrix's 8 rows fall in 8 bank groups. The other offset bits follow row-major.

    Example: the 64 x 64 fp16 transpose ``store`` (8 columns a thread, 8 lanes along a row) to ``load``
    (8 rows a thread, 4 lanes down the rows): offset bits 0-5 are columns 1 ... 32, bits 6-8 rows 1, 8 and 16
    XOR columns 8, 16 and 32, bits 9-11 rows 2, 4 and 32 (``tests/analysis/test_matrix_trans.py``).
    LayoutError where the layouts do not have that form.
    """
    target = resolve(target)
    a, b, w = _check_pair(store_layout, load_layout, dtype, target)
    if w != 16:
        raise LayoutError(f"dtype: ldmatrix.trans moves 16-bit elements, got {w}-bit")
    a_reg = _nonzero_unique(a.flat_bases("register", missing_ok=True))
    a_lane, b_lane = a.flat_bases("lane"), b.flat_bases("lane")
    b_reg = b.flat_bases("register", missing_ok=True)
    if len(a_lane) < 3 or len(b_lane) < 5 or not b_reg:
        raise LayoutError("store_layout, load_layout: ldmatrix.trans needs 32 lanes a side and a register on the load")
    unit = list(b_lane[2:5])
    if not all(x in a_reg for x in unit) or f2.rank(unit) != 3:
        raise LayoutError("load_layout: its lanes 2-4 must be three registers of store_layout (its 16-byte vector)")
    banks = list(a_lane[:3])
    rows = [b_reg[0], b_lane[0], b_lane[1]]
    if f2.rank(unit + banks + rows) != 9:
        raise LayoutError("store_layout, load_layout: the store's first lanes and the load's matrix rows must be "
                          "independent of its 16-byte units")
    d = a.total_out_dim_size_log2
    columns = unit + banks + [r ^ k for r, k in zip(rows, banks)]
    columns += f2.complement(unit + banks + rows, _row_major_units([s.bit_length() - 1 for s in a.out_dims.values()]))
    if len(columns) != d:
        raise LayoutError(f"store_layout: {len(columns)} offset bits for a tensor of 2**{d} elements")
    return shared_layout_from_flat(columns, a)


# ----------------------------------------------------------------------------------------------
# legacy baselines


def _fastest_dim(layout: LinearLayout) -> int:
    """The out dim of the store's first non-zero lane basis (else register): the dim rows run along."""
    for name in ("lane", "register"):
        if layout.has_in_dim(name):
            for vec in layout.bases[name]:
                for i, x in enumerate(vec):
                    if x:
                        return i
    return layout.num_out_dims - 1


def _shared_like(shared: LinearLayout, like: LinearLayout) -> LinearLayout:
    """``shared`` (a catalog layout: offset, block) with a block dim only where ``like`` has one, as
    ``shared_layout_from_flat`` builds the analysis' layouts."""
    return shared if like.has_in_dim("block") else shared.sublayout(["offset"], list(shared.out_dim_names))


def _baseline(name: str, layout: LinearLayout, padding: tuple[tuple[int, int], ...], a: LinearLayout,
              b: LinearLayout, w: int, params: tuple[int, ...], max_elements: int, target: Target) -> SharedBaseline:
    return SharedBaseline(
        name=name, layout=layout, padding=padding, bitwidth=w,
        store_wavefronts=simulate_wavefronts(layout, a, w, op="store", padding=padding, max_elements=max_elements,
                                             target=target),
        load_wavefronts=simulate_wavefronts(layout, b, w, op="load", padding=padding, max_elements=max_elements,
                                            target=target),
        store_vector_bits=shared_access(layout, a, w, target=target).vector_bits,
        load_vector_bits=shared_access(layout, b, w, target=target).vector_bits, params=params,
    )


@checked
def padded_baseline(store_layout: LinearLayout, load_layout: LinearLayout, dtype: DTypeLike,
                    *, order: list[int] | None = None, max_elements: int = MAX_ELEMENTS,
                    target: Target | str | None = None) -> SharedBaseline:
    """Legacy conversion scratch: dims in ``order`` (default: the dim of the store's first lane basis,
    then the others from the last) laid out plainly, each row (the first dim's extent) padded by one
    access width (the wider of the two accesses' vectors on that layout, at least one element).

    Seed 004 (16x32 fp32 transpose): rows of 32 padded by 1 element -> 16 + 32 wavefronts. The costs
    are simulated: layouts above ``max_elements`` (``limits.MAX_ELEMENTS``) are refused.
    """
    target = resolve(target)
    a, b, w = _check_pair(store_layout, load_layout, dtype, target)
    check_layout_size(a, max_elements, "padded_baseline: store_layout")
    check_layout_size(b, max_elements, "padded_baseline: load_layout")
    rank = a.num_out_dims
    if order is None:
        fast = _fastest_dim(a)
        order = [fast] + [i for i in reversed(range(rank)) if i != fast]
    if sorted(order) != list(range(rank)):
        raise LayoutError(f"order must be a permutation of range({rank}), got {quote(order)}")
    plain = _shared_like(row_major_shared(list(a.out_dims.values()), order), a)
    vec = max(shared_access(plain, a, w, target=target).vector_elements,
              shared_access(plain, b, w, target=target).vector_elements)
    row = max(list(a.out_dims.values())[order[0]], vec)
    padding = ((row, vec),) if row < plain.in_dim_size("offset") else ()
    return _baseline("padded", plain, padding, a, b, w, (row, vec), max_elements, target)


@checked
def legacy_swizzle_params(shape: list[int], order: list[int], dtype: DTypeLike, *, op_idx: int) -> tuple[int, int, int]:
    """(vec, per_phase, max_phase) the legacy (pre-linear-layout) Triton picked for an Ampere mma operand.

    per_phase = max(128 / (shape[order[0]] * bytes), 1); mat_shape = (8, 8, 128 / bitwidth) (m, n, k);
    operand A: vec = k if order[0] == 1 else m, stride = m if order[0] == 1 else k; operand B: vec = n
    if order[0] == 1 else k, stride = k if order[0] == 1 else n; max_phase = stride / per_phase;
    transposed int8 operands were not swizzled (1, 1, 1). (Current Triton's kWidth-based rule differs.)
    >>> legacy_swizzle_params([64, 64], [1, 0], 16, op_idx=0)
    (8, 1, 8)
    """
    from linear_layouts.layouts.base import check_order, check_shape  # noqa: PLC0415 - the catalog's rules

    bitwidth = element_type(dtype).bits
    shape, order = list(check_shape(shape, 2)), list(check_order("order", order, 2))
    if op_idx not in (0, 1):
        raise LayoutError(f"legacy_swizzle_params: op_idx must be 0 (A) or 1 (B), got {quote(op_idx)}")
    per_phase = max(128 // (shape[order[0]] * bitwidth // 8), 1)
    inner = 0 if op_idx == 0 else 1
    if bitwidth == 8 and order[0] == inner:
        return 1, 1, 1
    m, n, k = 8, 8, 128 // bitwidth
    if op_idx == 0:
        vec, stride = (k, m) if order[0] == 1 else (m, k)
    else:
        vec, stride = (n, k) if order[0] == 1 else (k, n)
    return vec, per_phase, max(stride // per_phase, 1)


@checked
def legacy_swizzle_baseline(store_layout: LinearLayout, load_layout: LinearLayout, dtype: DTypeLike, *,
                            vec: int, per_phase: int, max_phase: int,
                            order: list[int] | None = None, max_elements: int = MAX_ELEMENTS,
                            target: Target | str | None = None) -> SharedBaseline:
    """The store/load cost through Definition 4.11's swizzle with the given legacy parameters (the
    catalog's ``SwizzledSharedLayout(vec, per_phase, max_phase, order)``; ``order`` default ``[1, 0]``;
    simulated: layouts above ``max_elements`` are refused)."""
    target = resolve(target)
    a, b, w = _check_pair(store_layout, load_layout, dtype, target)
    check_layout_size(a, max_elements, "legacy_swizzle_baseline: store_layout")
    check_layout_size(b, max_elements, "legacy_swizzle_baseline: load_layout")
    for name, x in (("vec", vec), ("per_phase", per_phase), ("max_phase", max_phase)):
        if not isinstance(x, int) or isinstance(x, bool) or x < 1 or x & (x - 1):
            raise LayoutError(f"legacy_swizzle_baseline: {name} must be a power of two >= 1, got {quote(x)}")
    if order is None:
        order = [1, 0]
    layout = _shared_like(SwizzledSharedLayout(vec, per_phase, max_phase, list(order)).to_linear(list(a.out_dims.values())), a)
    return _baseline("legacy_swizzle", layout, (), a, b, w, (vec, per_phase, max_phase), max_elements, target)
