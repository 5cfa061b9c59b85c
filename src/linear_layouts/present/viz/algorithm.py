"""The optimal-swizzle construction (paper §5.4 / §9.2) told step by step: V, I, E, F, G, C, result.

Reads :func:`linear_layouts.analysis.swizzle.optimal_swizzle`'s sets (flattened tensor vectors, first
out dim least significant) and names them by bit (``m`` = dim0 bits, ``n`` = dim1 bits for matrices), e.g.
``G = n1⊕m0, n2⊕m1, n3⊕m2, n4⊕m3`` for the 16x32 transpose of docs/tutorial.md. The names are the paper's
(§9.2): ``G`` the pairs e ⊕ f, ``H`` the segment basis M_Seg chosen from G ∪ C (some blog posts call the
pairs H).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from linear_layouts.core.element_type import DTypeLike
from linear_layouts.core.layout import LinearLayout

__all__ = ["AlgorithmStep", "bit_names", "vector_name", "swizzle_steps", "steps_of", "steps_text"]


def bit_names(out_dims: dict[str, int]) -> list[str]:
    """Names of the flattened tensor bits (first out dim least significant): m0.. (dim0), n0.. (dim1).

    >>> bit_names({"dim0": 2, "dim1": 4})
    ['m0', 'n0', 'n1']
    """
    letters = ["m", "n"] if len(out_dims) == 2 else ["n"] if len(out_dims) == 1 else None
    names = []
    for k, (dim, size) in enumerate(out_dims.items()):
        for i in range(size.bit_length() - 1):
            names.append(f"{letters[k]}{i}" if letters else f"{dim}[{i}]")
    return names


def vector_name(vector: int, out_dims: dict[str, int]) -> str:
    """A flattened tensor vector as an XOR of bit names, n bits before m bits (``n1⊕m0``).

    >>> vector_name(0b100001, {"dim0": 16, "dim1": 32})
    'n1⊕m0'
    """
    if vector == 0:
        return "0"
    names = bit_names(out_dims)
    set_bits = [i for i in range(len(names)) if vector >> i & 1]
    if len(out_dims) == 2:
        m_bits = next(iter(out_dims.values())).bit_length() - 1
        set_bits.sort(key=lambda i: (i < m_bits, i))
    return "⊕".join(names[i] for i in set_bits)


@dataclass(frozen=True)
class AlgorithmStep:
    """One step of the construction: its letter, what it is, the vectors it produced, and why."""

    name: str
    title: str
    vectors: tuple[int, ...]
    text: str

    def as_json(self) -> dict[str, Any]:
        """``{"name", "title", "vectors", "text"}`` for the explorer page."""
        return {"name": self.name, "title": self.title, "vectors": list(self.vectors), "text": self.text}


def _names(vectors: Sequence[int], out_dims: dict[str, int]) -> str:
    return ", ".join(vector_name(v, out_dims) for v in vectors) if vectors else "∅"


def steps_of(result: Any, store: LinearLayout, load: LinearLayout) -> list[AlgorithmStep]:
    """The steps of an ``optimal_swizzle`` result (``SwizzleResult``) for the pair (store, load)."""
    from linear_layouts.present.viz.text import vectors_text

    dims = store.out_dims
    d = store.total_out_dim_size_log2
    w = result.bitwidth
    in_128 = (1024 // w).bit_length() - 1
    v = len(result.V)
    fill = [x for x in result.K if x not in result.V]
    s = result.segment_bits
    paired = len(result.G)
    rows = min(in_128, d)
    shared = _names(result.I, dims)
    steps = [
        AlgorithmStep("V", "vectorization: what both layouts keep in one thread (V = A_Reg ∩ B_Reg)", tuple(result.V),
                      f"A vector moves along tensor directions that stay in one thread's registers in the store "
                      f"layout A and in the load layout B alike: {_names(result.V, dims)}; v = {v}, so each "
                      f"access moves {(1 << v) * w} bits." + (f" The 4-byte word is filled with {_names(fill, dims)}."
                                                               if fill else "")),
        AlgorithmStep("I", "the lane directions both share (I = A_Thr ∩ B_Thr)", tuple(result.I),
                      f"Shared memory holds the 2^{d} elements (d = {d} tensor bits); one 128-byte row of the 32 "
                      f"banks holds 2^{rows} of them: b = {rows} bank bits, and the other s = {s} 'segment bits' pick "
                      "the row. An access is conflict-free when no two lanes of a warp hit one bank in different "
                      "rows: no lane direction may change only segment bits. "
                      + (f"I = {shared}: it moves the lane in both layouts, so it can only be a bank bit; it is set "
                         "aside." if result.I else "I = ∅: no direction moves the lane in both layouts.")),
        AlgorithmStep("E", "lane directions of the store only (E = A_Thr ∖ B_Thr)", tuple(result.E),
                      f"E = {_names(result.E, dims)}."),
        AlgorithmStep("F", "lane directions of the load only (F = B_Thr ∖ A_Thr)", tuple(result.F),
                      f"F = {_names(result.F, dims)}."),
        AlgorithmStep("G", "pairs: G = {e_i ⊕ f_i}", tuple(result.G),
                      f"Pairing E and F in ascending order: {_names(result.G, dims)}. A pair moves the lane of "
                      "both accesses at once (through e for the store, f for the load), so it is no lane "
                      f"direction of either and can be a segment bit ({paired} vectors)."),
        AlgorithmStep("C", "directions no lane moves (C completes span(A_Thr) + span(B_Thr))", tuple(result.C),
                      f"C = {_names(result.C, dims)}: they too can be segment bits. "
                      f"|G| + |C| = {paired + len(result.C)} candidates for s = {s} segment bits"
                      + (" — conflict-free is achievable." if paired + len(result.C) >= s else
                         " — too few: the rest comes from the lane directions (unavoidable conflicts).")),
        AlgorithmStep("result", "the segment bits H (M_Seg, from G ∪ C), the bank bits, the layout", tuple(result.H),
                      f"Segment bits H = {_names(result.H, dims)}; bank bits = {_names(result.bank, dims)}. "
                      f"Wavefronts: store {result.store_wavefronts} + load {result.load_wavefronts}; "
                      f"vectors: store {result.store_vector_bits} bits, load {result.load_vector_bits} bits. "
                      f"Offset bases: {vectors_text(result.layout.bases['offset'])}."),
    ]
    return steps


def swizzle_steps(store: LinearLayout, load: LinearLayout, dtype: DTypeLike) -> tuple[dict[str, Any], LinearLayout]:
    """``({"steps": [...]}, optimal layout)`` for the explorer page (runs ``optimal_swizzle``)."""
    from linear_layouts.analysis.swizzle import optimal_swizzle

    result = optimal_swizzle(store, load, dtype)
    return {"steps": [s.as_json() for s in steps_of(result, store, load)]}, result.layout


def steps_text(result: Any, store: LinearLayout, load: LinearLayout, width: int | None = None) -> str:
    """The steps as plain text, one paragraph each, lines broken at ``width`` characters (``None``: not
    broken); the CLI's ``swizzle`` and ``demo`` print this."""
    from linear_layouts.present.viz.text import wrap_text

    return wrap_text("\n".join(f"{s.name:>6}  {s.title}\n        {s.text}" for s in steps_of(result, store, load)),
                     width)
