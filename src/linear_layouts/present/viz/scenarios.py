"""The worked examples the pictures, the explorer and the demo show: store/load layout pairs.

The seed transpose (seeds 003 and 004): one warp moves a 16×32 fp32 tensor through shared memory.

* store ``A``: thread t owns column t, register r walks the rows — element (m=r, n=t);
* load ``B``: thread t reads (m = t mod 16, n = 2r + t // 16) — low lane bits to rows, the top lane bit
  to the column parity, registers to column pairs;
* shared layouts: unswizzled ``offset = 32m + n``, classic ``32m + (n ⊕ m)``, optimal ``32m + (n ⊕ 2m)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from linear_layouts.layouts.shared import row_major_shared  # noqa: F401 - part of this module's names
from linear_layouts.core.element_type import DTypeLike, element_type
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout

__all__ = ["Scenario", "seed_transpose", "layout_a", "pair_scenario", "layout_scenario", "row_major_shared",
           "xor_swizzled_shared", "segment_bits", "toggle_swizzle"]


@dataclass(frozen=True)
class Scenario:
    """A conversion through shared memory: ``store`` writes, ``load`` reads, ``shared`` are candidates."""

    name: str
    store: LinearLayout
    load: LinearLayout
    bitwidth: int
    shared: tuple[tuple[str, LinearLayout], ...]
    store_name: str = "store"
    load_name: str = "load"
    note: str = ""

    @property
    def shape(self) -> tuple[int, ...]:
        """The tensor shape (the store layout's out dim sizes)."""
        return tuple(self.store.out_dims.values())


def xor_swizzled_shared(rows: int, columns: int, shift: int) -> LinearLayout:
    """``offset(m, n) = columns·m + (n ⊕ (m << shift))`` for a rows × columns tensor (seeds' XOR swizzles).

    >>> xor_swizzled_shared(16, 32, 1).apply({"offset": 32})
    {'dim0': 1, 'dim1': 2}
    """
    n_bits, m_bits = columns.bit_length() - 1, rows.bit_length() - 1
    offsets = [[0, 1 << i] for i in range(n_bits)]
    for j in range(m_bits):
        offsets.append([1 << j, ((1 << (j + shift)) if j + shift < n_bits else 0)])
    return LinearLayout({"offset": offsets, "block": []}, {"dim0": rows, "dim1": columns})


def seed_transpose() -> Scenario:
    """The 16×32 fp32 one-warp transpose of seeds 003/004, with its three shared layouts.

    >>> s = seed_transpose(); s.load.apply({"lane": 16, "register": 1})
    {'dim0': 0, 'dim1': 3}
    """
    store = LinearLayout({"register": [[1, 0], [2, 0], [4, 0], [8, 0]],
                          "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]], "warp": [], "block": []},
                         {"dim0": 16, "dim1": 32})
    load = LinearLayout({"register": [[0, 2], [0, 4], [0, 8], [0, 16]],
                         "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]], "warp": [], "block": []},
                        {"dim0": 16, "dim1": 32})
    shared = (("unswizzled: 32m + n", row_major_shared([16, 32])),
              ("XOR m: 32m + (n ⊕ m)", xor_swizzled_shared(16, 32, 0)),
              ("XOR 2m: 32m + (n ⊕ 2m)", xor_swizzled_shared(16, 32, 1)))
    return Scenario("transpose 16×32 fp32, one warp", store, load, 32, shared,
                    "store: thread → column, register → row", "load: (m = t mod 16, n = 2r + t/16)",
                    "docs/tutorial.md §4: 16 + 256 (unswizzled), 16 + 32 (XOR m), 16 + 16 (XOR 2m) wavefronts.")


def layout_a() -> LinearLayout:
    """The paper's Layout A (§4.1, Fig. 1a): a 16×16 tensor, 2×2 registers, 4×8 threads, 2×1 warps.

    >>> layout_a().apply({"register": 1, "lane": 9, "warp": 0})
    {'dim0': 2, 'dim1': 3}
    """
    return LinearLayout({"register": [[0, 1], [1, 0]],
                         "lane": [[0, 2], [0, 4], [0, 8], [2, 0], [4, 0]],
                         "warp": [[8, 0]]},
                        ["dim0", "dim1"])


def pair_scenario(store: LinearLayout, load: LinearLayout, dtype: DTypeLike, store_name: str = "store",
                  load_name: str = "load") -> Scenario:
    """A user's store/load pair of ``dtype`` elements as a scenario, with the unswizzled (row-major) layout
    as its one candidate.

    >>> pair_scenario(seed_transpose().store, seed_transpose().load, 32, "A", "B").name
    'A -> B (32-bit)'
    """
    bitwidth = element_type(dtype).bits
    return Scenario(f"{store_name} -> {load_name} ({bitwidth}-bit)", store, load, bitwidth,
                    (("unswizzled (row-major)", row_major_shared(list(store.out_dims.values()))),),
                    store_name, load_name)


def layout_scenario(layout: LinearLayout, dtype: DTypeLike, name: str) -> Scenario:
    """One distributed layout as a scenario (``explore --layout``): the tile stored in it and loaded back in
    it, through shared memory, with the unswizzled (row-major) layout as its one candidate.

    >>> layout_scenario(seed_transpose().load, 32, "B").name
    'B: stored and loaded back (32-bit)'
    """
    bitwidth = element_type(dtype).bits
    return Scenario(f"{name}: stored and loaded back ({bitwidth}-bit)", layout, layout, bitwidth,
                    (("unswizzled (row-major)", row_major_shared(list(layout.out_dims.values()))),), name, name,
                    "Your --layout: the distributed view shows it; the shared view, its round trip through shared "
                    "memory (pick a catalog layout and 'load' to pair it with another).")


def segment_bits(shared: LinearLayout, dtype: DTypeLike) -> int:
    """Number of offset bits inside one 128-byte row of the 32 banks: ``log2(1024 / bitwidth)`` (capped).

    >>> segment_bits(row_major_shared([16, 32]), 32)
    5
    """
    row_bits = (32 * 4 * 8 // element_type(dtype).bits).bit_length() - 1
    return min(shared.in_dim_size_log2("offset"), row_bits)


def toggle_swizzle(base: LinearLayout, toggles: Sequence[tuple[int, int]], dtype: DTypeLike) -> LinearLayout:
    """The workbench's swizzle: for each toggle (j, i), XOR the image of offset bit i (a bank bit) into
    the image of segment bit j (offset bit b + j), as in seed 003's toggle grid.

    >>> s = toggle_swizzle(row_major_shared([16, 32]), [(j, j + 1) for j in range(4)], 32)
    >>> s == xor_swizzled_shared(16, 32, 1)
    True
    """
    b = segment_bits(base, dtype)
    offsets = base.bases["offset"]
    original = [list(v) for v in offsets]
    for j, i in toggles:
        if not (0 <= i < b) or not (0 <= b + j < len(offsets)):
            raise LayoutError(f"toggles: ({j}, {i}) is outside {len(offsets) - b} segment bits × {b} bank bits")
        offsets[b + j] = [x ^ y for x, y in zip(offsets[b + j], original[i])]
    bases = base.bases
    bases["offset"] = offsets
    return LinearLayout(bases, base.out_dims)
