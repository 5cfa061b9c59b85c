"""Brute-force shared-memory bank simulator: every instruction, every lane, every word (HARDWARE.md).

The model (HARDWARE.md: validated with ncu on H200; re-confirmed on H100 in
benchmarks/results/bank_conflicts_vs_triton.md): an instruction is one warp, one value of the non-vector
register bits and its 32 lanes; each lane moves the aligned block holding its vector's elements;
lanes are cut into phases moving at most 128 bytes (16-byte vectors: 4 phases of 8 lanes, 8-byte:
2 of 16, otherwise 1 of 32); a phase costs the largest number of distinct 4-byte words requested
from one of the 32 banks (several lanes on one word cost nothing extra). Wavefronts = the sum over
instructions and phases. This module checks ``banks.wavefronts`` (§9.2, Lemma 9.4); it uses no
linear algebra: it evaluates the layouts on every index and counts.

Padded shared layouts (Triton's ``PaddedSharedLayout``) are supported through ``padding``: pairs
``(interval, pad)`` in elements; element offset ``o`` is stored at ``o + sum((o // interval) * pad)``.

Example (seed 004, 16x32 fp32 transpose, rows padded by one element: offset = 33 m + n):
``simulate_wavefronts(row_major, load, 32, padding=((32, 1),)) == 32`` (unpadded: 256).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from linear_layouts.analysis.banks import BANKS, LANES, shared_access
from linear_layouts.errors import LayoutError
from linear_layouts.layout import LinearLayout

__all__ = ["simulate_wavefronts", "lane_addresses", "phase_costs", "padded_offsets"]


def padded_offsets(offsets: np.ndarray, padding: tuple[tuple[int, int], ...]) -> np.ndarray:
    """``o + sum((o // interval) * pad)`` over the (interval, pad) pairs (Triton's padded shared layout)."""
    out = offsets.copy()
    for interval, pad in padding:
        out = out + (offsets // interval) * pad
    return out


def _check_padding(padding: object, vector_elements: int) -> tuple[tuple[int, int], ...]:
    try:
        pairs = tuple((int(i), int(p)) for i, p in padding)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        raise LayoutError(f"padding must be a sequence of (interval, pad) pairs, got {padding!r}") from None
    for interval, pad in pairs:
        if interval <= 0 or interval & (interval - 1) or pad < 0:
            raise LayoutError(f"padding: interval must be a power of two > 0 and pad >= 0, got {(interval, pad)}")
        if interval % vector_elements or pad % vector_elements:
            raise LayoutError(
                f"padding {(interval, pad)} would break {vector_elements}-element vector alignment: "
                "interval and pad must be multiples of the vector"
            )
    return pairs


def phase_costs(words: list[set[int]]) -> int:
    """Wavefronts of one phase: the most distinct words any single bank is asked for."""
    per_bank: Counter[int] = Counter()
    for w in set().union(*words):
        per_bank[w % BANKS] += 1
    return max(per_bank.values(), default=0)


def lane_addresses(
    shared_layout: LinearLayout,
    distributed_layout: LinearLayout,
    bitwidth: int,
    *,
    padding: tuple[tuple[int, int], ...] = (),
) -> tuple[np.ndarray, int]:
    """Byte address of every lane's vector, per instruction: (array [warp, instruction, lane], vector bytes).

    Instructions of a warp are the groups of ``2**v`` consecutive registers in the code generator's
    packing order (``banks.shared_access``); the address is the lowest byte of the lane's vector.
    """
    access = shared_access(shared_layout, distributed_layout, bitwidth)
    dist = distributed_layout
    shared = shared_layout.transpose_outs(list(dist.out_dims))
    pad = _check_padding(padding, access.vector_elements)

    # element (flattened tensor index) -> offset, by evaluating the shared layout everywhere
    n = shared.in_dim_size("offset")
    elem_of_offset = shared.sublayout(["offset"], shared.out_dim_names).apply_all()
    offset_of_elem = np.empty(n, dtype=np.int64)
    offset_of_elem[elem_of_offset] = np.arange(n, dtype=np.int64)

    # every (register, lane, warp) -> flattened element (first out dim least significant)
    n_reg = dist.in_dim_size("register") if dist.has_in_dim("register") else 1
    n_warp = dist.in_dim_size("warp") if dist.has_in_dim("warp") else 1
    grid = {"lane": np.arange(LANES)[None, :, None]}
    if dist.has_in_dim("register"):
        grid["register"] = np.arange(n_reg)[:, None, None]
    if dist.has_in_dim("warp"):
        grid["warp"] = np.arange(n_warp)[None, None, :]
    coords = dist.apply_array(grid)
    flat = np.zeros(np.broadcast_shapes(*(a.shape for a in coords.values())), dtype=np.int64)
    shift = 0
    for name, size in dist.out_dims.items():
        flat = flat | (coords[name].astype(np.int64) << shift)
        shift += size.bit_length() - 1
    flat = np.broadcast_to(flat, (n_reg, LANES, n_warp))
    # registers in packing order (broadcast registers dropped): each run of 2**v is one lane's vector
    reg_values = np.array(access.permutation.apply_values(list(range(n_reg))), dtype=np.int64)
    byte_width = bitwidth // 8
    vec = access.vector_elements
    vec_bytes = vec * byte_width
    addr = padded_offsets(offset_of_elem[flat[reg_values]], pad) * byte_width  # [reg, lane, warp]
    addr = addr.reshape(len(reg_values) // vec, vec, LANES, n_warp)
    lo = addr.min(axis=1)
    if np.any(lo % vec_bytes) or np.any(addr.max(axis=1) - lo != vec_bytes - byte_width):
        raise LayoutError("a lane's vector is not one aligned contiguous block (layout or padding)")
    return np.ascontiguousarray(lo.transpose(2, 0, 1)), vec_bytes


def simulate_wavefronts(
    shared_layout: LinearLayout,
    distributed_layout: LinearLayout,
    bitwidth: int,
    *,
    op: str = "load",
    padding: tuple[tuple[int, int], ...] = (),
) -> int:
    """Wavefronts to load (store) the whole tensor, counted instruction by instruction, phase by phase.

    The vector width and register order are the code generator's choice, taken from
    ``banks.shared_access``; addresses and bank usage are enumerated.
    """
    if op not in ("load", "store"):
        raise LayoutError(f"op must be 'load' or 'store', got {op!r}")
    addresses, vec_bytes = lane_addresses(shared_layout, distributed_layout, bitwidth, padding=padding)
    lanes_per_phase = LANES // max(vec_bytes // 4, 1)
    total = 0
    for per_instruction in addresses.reshape(-1, LANES).tolist():
        for p in range(0, LANES, lanes_per_phase):
            words = [
                set(range(start // 4, (start + vec_bytes - 1) // 4 + 1))
                for start in per_instruction[p:p + lanes_per_phase]
            ]
            total += phase_costs(words)
    return total
