"""Brute-force shared-memory bank simulator: every instruction, every lane, every word.

THE bank model of the package (``instruction_wavefronts``; ``banks`` is its closed form and
``codegen.model`` applies it to the emitted instructions). Validated with ncu on the H100 and the H200
(benchmarks/results/wavefronts_vs_ncu.md):

* an instruction is one warp, one value of the non-vector register bits and its 32 lanes; each lane
  moves the aligned block holding its vector's elements;
* lanes are cut into phases moving at most 128 bytes (16-byte vectors: 4 phases of 8 lanes, 8-byte:
  2 of 16, otherwise 1 of 32); a phase costs the largest number of distinct 4-byte words its active
  lanes request from one of the 32 banks (several lanes on one word cost nothing extra; a phase of
  predicated-off lanes costs nothing);
* pairing (LOADS only): an 8- or 16-byte load by all 32 lanes in which every lane asks for the same
  address as lane ``l ^ 1``, or every lane as lane ``l ^ 2``, moves two lanes per slot: its phases
  hold twice as many lanes (16-byte: 2 phases of 16, 8-byte: 1 of 32), costed the same way (NVIDIA
  describes this "uniform" pattern for LDS); lanes equal along lane bits 2..4 only do not pair.
  Stores never pair: ncu (benchmarks/gpu_bank_check/results_paired_h100.json) gives every
  st.shared.v2/v4 by 32 lanes with l^1, l^2, quad or all-equal addresses the unpaired
  count (4 phases of 8 lanes, 2 of 16), whether the lanes store equal data or not, while the same
  tables loaded pair; stores with predicated-off lanes do not pair either.

Wavefronts = the sum over instructions and phases. It uses no linear algebra: it evaluates the
layouts on every index and counts. The rule above is NVIDIA's; every function here applies the rule of
the ``target`` it is given (``Target.shared``: banks, bank bytes, phase bytes, which lanes share a
phase, whether loads pair; AMD CDNA3's LDS: 64 lanes, 16-byte reads in phases of lanes 0-3 + 20-23, ...).

Padded shared layouts (Triton's ``PaddedSharedLayout``) are supported through ``padding``: pairs
``(interval, pad)`` in elements; element offset ``o`` is stored at ``o + sum((o // interval) * pad)``.

Example (seed 004, 16x32 fp32 transpose, rows padded by one element: offset = 33 m + n):
``simulate_wavefronts(row_major, load, 32, padding=((32, 1),)) == 32`` (unpadded: 256).
"""

from __future__ import annotations

import functools
from collections import Counter

import numpy as np

from linear_layouts.analysis.banks import shared_access
from linear_layouts.core.arguments import checked
from linear_layouts.core.element_type import DTypeLike
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import MAX_ELEMENTS, check_layout_size, quote
from linear_layouts.target import Target, resolve

__all__ = [
    "simulate_wavefronts",
    "duplicate_masks",
    "lane_addresses",
    "phase_costs",
    "padded_offsets",
    "instruction_wavefronts",
    "matrix_instruction_wavefronts",
    "paired_lanes",
    "phase_size",
    "phase_lanes",
]


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
        raise LayoutError(f"padding must be a sequence of (interval, pad) pairs, got {quote(padding)}") from None
    for interval, pad in pairs:
        if interval <= 0 or interval & (interval - 1) or pad < 0:
            raise LayoutError(f"padding: interval must be a power of two > 0 and pad >= 0, got {(interval, pad)}")
        if interval % vector_elements or pad % vector_elements:
            raise LayoutError(
                f"padding {(interval, pad)} would break {vector_elements}-element vector alignment: "
                "interval and pad must be multiples of the vector"
            )
    return pairs


def phase_costs(words: list[set[int]], *, target: Target | str | None = None) -> int:
    """Wavefronts of one phase: the most distinct words any single bank (of the target's) is asked for."""
    banks = resolve(target).shared.banks
    per_bank: Counter[int] = Counter()
    for w in set().union(*words):
        per_bank[w % banks] += 1
    return max(per_bank.values(), default=0)


def paired_lanes(starts: list[int]) -> bool:
    """Whether every lane asks for the same address as lane ``l ^ 1``, or every lane as lane ``l ^ 2``
    (NVIDIA's "uniform" pattern: the load returns two lanes' registers in one 128-byte transfer; a
    store with such addresses does not pair)."""
    return any(all(starts[lane] == starts[lane ^ m] for lane in range(len(starts))) for m in (1, 2))


def _check_instruction(starts: list[int], vector_bytes: int, active: list[bool] | None, op: str,
                       target: Target) -> None:
    if op not in ("load", "store"):
        raise LayoutError(f"op must be 'load' or 'store', got {quote(op)}")
    if len(starts) != target.lanes or (active is not None and len(active) != target.lanes):
        raise LayoutError(f"an instruction has {target.lanes} lane addresses (and activity flags)")
    if vector_bytes not in (1, 2, 4, 8, 16):
        raise LayoutError(f"vector_bytes must be 1, 2, 4, 8 or 16, got {quote(vector_bytes)}")


def _masks(starts: list[int], vector_bytes: int, active: list[bool] | None, op: str, target: Target) -> tuple[int, ...]:
    shared = target.shared
    unit = shared.unit_bytes(vector_bytes)
    paired = shared.pairs(op, unit, active is None or all(active)) and paired_lanes(list(starts))
    return shared.phase_lanes(target.lanes, op, unit, paired=paired)


def phase_size(
    starts: list[int], vector_bytes: int, *, active: list[bool] | None = None, op: str = "load",
    target: Target | str | None = None,
) -> int:
    """Lanes per phase of one ``ld/st.shared`` of one warp (``instruction_wavefronts``' arguments): on
    NVIDIA ``32 / max(vector_bytes / 4, 1)`` consecutive lanes (128 bytes), twice that for an 8- or
    16-byte load by all 32 lanes whose addresses pair (``paired_lanes``); stores never pair.

    Example: ``phase_size([16 * (l // 2) for l in range(32)], 16) == 16`` (``op="store"``: 8)."""
    target = resolve(target)
    _check_instruction(starts, vector_bytes, active, op, target)
    return 1 << len(_masks(starts, vector_bytes, active, op, target))


def phase_lanes(
    starts: list[int], vector_bytes: int, *, active: list[bool] | None = None, op: str = "load",
    target: Target | str | None = None,
) -> list[list[int]]:
    """The lanes of each phase of one instruction, in lane order of their first lane: the translates of
    phase 0's span (``Target.shared.phase_lanes``); on NVIDIA, runs of ``phase_size`` consecutive lanes.

    Example (MI300X, a 16-byte read): ``phase_lanes([0] * 64, 16, target=MI300X)[0] == [0, 1, 2, 3, 20, 21,
    22, 23]``."""
    target = resolve(target)
    _check_instruction(starts, vector_bytes, active, op, target)
    return [list(p) for p in _phases(_masks(starts, vector_bytes, active, op, target), target.lanes)]


@functools.lru_cache(maxsize=64)
def _phases(masks: tuple[int, ...], lanes: int) -> tuple[tuple[int, ...], ...]:
    """The translates of span(masks) among ``lanes`` lanes, each in lane order, by first lane."""
    span = [0]
    for mask in masks:
        span += [x ^ mask for x in span]
    phases: dict[int, list[int]] = {}
    for lane in range(lanes):
        phases.setdefault(min(lane ^ x for x in span), []).append(lane)
    return tuple(tuple(p) for p in phases.values())


def instruction_wavefronts(
    starts: list[int], vector_bytes: int, *, active: list[bool] | None = None, op: str = "load",
    target: Target | str | None = None,
) -> int:
    """Wavefronts of one ``ld.shared`` (``op="load"``) or ``st.shared`` (``op="store"``) of one warp:
    ``starts[l]`` is lane ``l``'s byte address (the aligned ``vector_bytes`` block it moves);
    ``active[l]`` False: lane ``l`` is predicated off.

    THE hardware rule (ncu, H100 and H200): lanes are cut into phases of at most 128 bytes
    (``32 / max(vector_bytes / 4, 1)`` consecutive lanes); a phase costs the largest number of
    distinct 4-byte words its active lanes ask of one bank. Exception, 8- and 16-byte LOADS by all
    32 lanes where every lane asks for the same address as lane ``l ^ 1`` (or every lane as lane
    ``l ^ 2``): the phases hold twice as many lanes (16-byte: 2 of 16, 8-byte: 1 of 32). Stores never
    pair (ncu, H100: benchmarks/gpu_bank_check/results_paired_h100.json); predicated-off lanes never
    merge phases. Another ``target``: its phases (``phase_lanes``), banks and bank words.
    """
    target = resolve(target)
    _check_instruction(starts, vector_bytes, active, op, target)
    word = target.shared.bank_bytes
    total = 0
    for lanes in _phases(_masks(starts, vector_bytes, active, op, target), target.lanes):
        words = [
            set(range(starts[lane] // word, (starts[lane] + vector_bytes - 1) // word + 1))
            for lane in lanes
            if active is None or active[lane]
        ]
        total += phase_costs(words, target=target)
    return total


def matrix_instruction_wavefronts(row_starts: list[int]) -> int:
    """Wavefronts of one ``ldmatrix``/``stmatrix`` ``.x1/.x2/.x4``: matrix ``i``'s 8 row addresses (16 bytes
    each, given by lanes ``8i .. 8i+7``) are one phase; ``row_starts`` lists the 8 rows of each matrix."""
    if not row_starts or len(row_starts) % 8:
        raise LayoutError(f"row_starts: 8 row addresses per matrix, got {len(row_starts)}")
    return sum(
        phase_costs([set(range(b // 4, b // 4 + 4)) for b in row_starts[i:i + 8]])
        for i in range(0, len(row_starts), 8)
    )


@checked
def lane_addresses(
    shared_layout: LinearLayout,
    distributed_layout: LinearLayout,
    dtype: DTypeLike,
    *,
    padding: tuple[tuple[int, int], ...] = (),
    max_elements: int = MAX_ELEMENTS,
    target: Target | str | None = None,
) -> tuple[np.ndarray, int]:
    """Byte address of every lane's vector, per instruction: (array [warp, instruction, lane], vector bytes).

    Instructions of a warp are the groups of ``2**v`` consecutive registers in the code generator's
    packing order (``banks.shared_access``); the address is the lowest byte of the lane's vector.
    Requires: both layouts of at most ``max_elements`` inputs and elements (``limits.MAX_ELEMENTS``).
    """
    target = resolve(target)
    lanes = target.lanes
    access = shared_access(shared_layout, distributed_layout, dtype, target=target)
    check_layout_size(shared_layout, max_elements, "lane_addresses: shared_layout")
    check_layout_size(distributed_layout, max_elements, "lane_addresses: distributed_layout")
    dist = distributed_layout
    shared = shared_layout.transpose_outs(list(dist.out_dims))
    pad = _check_padding(padding, access.vector_elements)

    # element (flattened tensor index) -> offset, by evaluating the shared layout everywhere
    n = shared.in_dim_size("offset")
    elem_of_offset = shared.sublayout(["offset"], shared.out_dim_names).apply_all(max_elements=max_elements)
    offset_of_elem = np.empty(n, dtype=np.int64)
    offset_of_elem[elem_of_offset] = np.arange(n, dtype=np.int64)

    # every (register, lane, warp) -> flattened element (first out dim least significant)
    n_reg = dist.in_dim_size("register", missing_ok=True)
    n_warp = dist.in_dim_size("warp", missing_ok=True)
    grid = {"lane": np.arange(lanes)[None, :, None]}
    if dist.has_in_dim("register"):
        grid["register"] = np.arange(n_reg)[:, None, None]
    if dist.has_in_dim("warp"):
        grid["warp"] = np.arange(n_warp)[None, None, :]
    coords = dist.apply_array(grid, max_elements=max_elements)
    flat = np.zeros(np.broadcast_shapes(*(a.shape for a in coords.values())), dtype=np.int64)
    shift = 0
    for name, size in dist.out_dims.items():
        flat = flat | (coords[name].astype(np.int64) << shift)
        shift += size.bit_length() - 1
    flat = np.broadcast_to(flat, (n_reg, lanes, n_warp))
    # registers in packing order (broadcast registers dropped): each run of 2**v is one lane's vector
    reg_values = np.array(access.permutation.apply_values(list(range(n_reg))), dtype=np.int64)
    byte_width = access.bitwidth // 8
    vec = access.vector_elements
    vec_bytes = vec * byte_width
    addr = padded_offsets(offset_of_elem[flat[reg_values]], pad) * byte_width  # [reg, lane, warp]
    addr = addr.reshape(len(reg_values) // vec, vec, lanes, n_warp)
    lo = addr.min(axis=1)
    if np.any(lo % vec_bytes) or np.any(addr.max(axis=1) - lo != vec_bytes - byte_width):
        raise LayoutError("a lane's vector is not one aligned contiguous block (layout or padding)")
    return np.ascontiguousarray(lo.transpose(2, 0, 1)), vec_bytes


def duplicate_masks(distributed_layout: LinearLayout) -> tuple[int, int, int]:
    """(register, lane, warp) bit masks of the duplicated data: Triton's free variables, the bits whose
    basis lies in the span of the bases before them (registers, then lanes, then warps). A store that
    skips duplicates (the code generator's) skips these registers and predicates these lanes and warps off."""
    masks = distributed_layout.free_variable_masks()
    return masks.get("register", 0), masks.get("lane", 0), masks.get("warp", 0)


@checked
def simulate_wavefronts(
    shared_layout: LinearLayout,
    distributed_layout: LinearLayout,
    dtype: DTypeLike,
    *,
    op: str = "load",
    padding: tuple[tuple[int, int], ...] = (),
    skip_duplicates: bool = False,
    max_elements: int = MAX_ELEMENTS,
    target: Target | str | None = None,
) -> int:
    """Wavefronts to load (store) the whole tensor on ``target``, counted instruction by instruction, phase
    by phase (``instruction_wavefronts``: the hardware rule; only loads pair).

    The vector width and register order are the code generator's choice, taken from
    ``banks.shared_access``; addresses and bank usage are enumerated. ``skip_duplicates`` (stores
    only; loads ignore it, every lane needs its data): registers, lanes and warps holding duplicated
    data (``duplicate_masks``) do not store, as the code generator emits it; default: every lane of
    every warp stores every non-zero register. Layouts above ``max_elements`` (``limits.MAX_ELEMENTS``)
    inputs or elements are refused.
    """
    if op not in ("load", "store"):
        raise LayoutError(f"op must be 'load' or 'store', got {quote(op)}")
    if not isinstance(skip_duplicates, bool):
        raise LayoutError(f"skip_duplicates must be a bool, got {quote(skip_duplicates)}")
    target = resolve(target)
    addresses, vec_bytes = lane_addresses(shared_layout, distributed_layout, dtype, padding=padding,
                                          max_elements=max_elements, target=target)
    free_reg, free_lane, free_warp = 0, 0, 0
    first_registers: list[int] = [0] * addresses.shape[1]
    if skip_duplicates and op == "store":
        free_reg, free_lane, free_warp = duplicate_masks(distributed_layout)
        access = shared_access(shared_layout, distributed_layout, dtype, target=target)
        n_reg = distributed_layout.in_dim_size("register", missing_ok=True)
        first_registers = access.permutation.apply_values(list(range(n_reg)))[::access.vector_elements]
    active = [not lane & free_lane for lane in range(target.lanes)]
    total = 0
    for warp, per_warp in enumerate(addresses.tolist()):
        if warp & free_warp:
            continue
        for first, starts in zip(first_registers, per_warp):
            if first & free_reg:
                continue
            total += instruction_wavefronts(starts, vec_bytes, active=active, op=op, target=target)
    return total
