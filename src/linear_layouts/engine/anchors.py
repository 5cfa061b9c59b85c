"""Anchor layouts (paper §4.4): coalesced blocked layouts for global memory ops, chosen as Triton's
``Coalesce`` pass does, and ``mma`` / dot-operand layouts for ``dot``; plus the global-memory cost
model the engine uses to compare a memory op in a non-coalesced layout with a conversion.

Coalescing: ``order`` sorts the dims by stride (the unit-stride dim first); each thread takes
``min(128 / bitwidth, shape[order[0]], numel / threads)`` contiguous elements (16-byte aligned
pointers, as Triton specializes them), and lanes then warps fill the dims in ``order``
(Triton's ``BlockedEncodingAttr`` builder).

>>> coalesced_layout([64, 64], [64, 1], "fp16", num_warps=4)
BlockedLayout(size_per_thread=(1, 8), threads_per_warp=(4, 8), warps_per_cta=(4, 1), order=(1, 0), cga_layout=())
"""

from __future__ import annotations

import functools

from collections.abc import Sequence

import numpy as np

from linear_layouts.element_type import DTypeLike, bitwidth
from linear_layouts.analysis.vectorization import memory_order_layout, vector_permutation
from linear_layouts.catalog import BlockedLayout, DotOperandLayout, NVMMADistributedLayout
from linear_layouts.errors import LayoutError
from linear_layouts.limits import quote
from linear_layouts.layout import LinearLayout

__all__ = [
    "GLOBAL_SECTOR_COST", "GLOBAL_INSTRUCTION_COST",
    "memory_order", "blocked_layout", "default_blocked_layout", "coalesced_layout",
    "mma_layout", "dot_operand_layout", "global_cost",
]

#: Cost of one 32-byte global-memory sector per warp, in shared-memory wavefront units (model:
#: ~3 TB/s over 132 SMs is ~23 B/ns per SM, so a sector is ~1.4 ns, ~2 wavefronts of 0.64 ns).
GLOBAL_SECTOR_COST = 2.0
#: Cost of issuing one global load/store instruction per warp, in the same units (model).
GLOBAL_INSTRUCTION_COST = 1.0


def memory_order(strides: Sequence[int]) -> tuple[int, ...]:
    """Dims from the smallest stride to the largest (ties: the later dim first), Triton's ``order``."""
    return tuple(sorted(range(len(strides)), key=lambda d: (strides[d], -d)))


def blocked_layout(shape: Sequence[int], size_per_thread: Sequence[int], order: Sequence[int],
                   num_warps: int, threads_per_warp: int = 32) -> BlockedLayout:
    """Triton's ``BlockedEncodingAttr::get(shape, sizePerThread, order, numWarps, threadsPerWarp)``:
    lanes, then warps, fill the dims in ``order`` up to the shape; the slowest dim takes the rest."""
    rank = len(shape)
    lanes, warps = [1] * rank, [1] * rank
    left_threads, left_lanes, left_warps = num_warps * threads_per_warp, threads_per_warp, num_warps
    used_lanes = used_warps = 1
    for i in order[:-1]:
        per_cta = min(max(left_threads, 1), max(1, shape[i] // size_per_thread[i]))
        lanes[i] = min(max(per_cta, 1), left_lanes)
        warps[i] = min(max(per_cta // lanes[i], 1), left_warps)
        left_warps //= warps[i]
        left_lanes //= lanes[i]
        left_threads //= per_cta
        used_lanes *= lanes[i]
        used_warps *= warps[i]
    lanes[order[-1]] = threads_per_warp // used_lanes
    warps[order[-1]] = num_warps // used_warps
    return BlockedLayout(tuple(size_per_thread), tuple(lanes), tuple(warps), tuple(order))


def default_blocked_layout(shape: Sequence[int], num_warps: int, threads_per_warp: int = 32) -> BlockedLayout:
    """Triton's ``getDefaultBlockedEncoding``: one element per thread, row-major order."""
    rank = len(shape)
    return blocked_layout(shape, [1] * rank, tuple(range(rank - 1, -1, -1)), num_warps, threads_per_warp)


def coalesced_layout(shape: Sequence[int], strides: Sequence[int], dtype: DTypeLike, *, num_warps: int,
                     threads_per_warp: int = 32) -> BlockedLayout:
    """The Coalesce pass's layout for a global access of a ``shape`` tile with ``strides`` (module doc)."""
    if len(shape) != len(strides):
        raise LayoutError(f"strides must have one entry per dim of shape {list(shape)}, got {list(strides)}")
    bits = bitwidth(dtype)
    order = memory_order(strides)
    numel = int(np.prod(shape))
    contiguous = shape[order[0]] if strides[order[0]] == 1 else 1
    per_thread = max(1, min(max(128 // bits, 1), contiguous, max(numel // (num_warps * threads_per_warp), 1)))
    size_per_thread = [1] * len(shape)
    size_per_thread[order[0]] = per_thread
    return blocked_layout(shape, size_per_thread, order, num_warps, threads_per_warp)


def _warps_v2(shape: Sequence[int], num_warps: int) -> list[int]:
    """Triton 3.9's ``warpsPerTileV2``: balance the m16n8 repetitions along M and N (ties go to M)."""
    warps = [1, 1]
    reps = [max(1, -(-shape[0] // 16)), max(1, -(-shape[1] // 8))]
    while warps[0] * warps[1] < num_warps:
        if reps[0] >= reps[1]:
            warps[0] *= 2
            if reps[0] != 1:
                reps[0] //= 2
        else:
            warps[1] *= 2
            reps[1] //= 2
    return warps


def mma_layout(shape: Sequence[int], dtype: DTypeLike, version: int, num_warps: int) -> NVMMADistributedLayout:
    """The accumulator layout of a ``shape`` dot on ``dtype`` operands: mma.sync m16n8 (``version`` 2,
    warps as Triton's ``warpsPerTileV2``) or wgmma (3: warp groups along M first, ``warpsPerTileV3``;
    needs ``num_warps`` a multiple of 4)."""
    bits = bitwidth(dtype)
    if version == 3:
        if num_warps % 4:
            raise LayoutError(f"num_warps must be a multiple of 4 for wgmma (mma_version 3), got {num_warps}")
        warps = [4, 1]
        while warps[0] * warps[1] < num_warps:
            if shape[0] > 16 * warps[0]:
                warps[0] *= 2
            else:
                warps[1] *= 2
        n = min(256, shape[1] // warps[1])
        return NVMMADistributedLayout((3, 0), tuple(warps), (16, max(8, n), 256 // bits))
    if version != 2:
        raise LayoutError(f"version must be 2 or 3, got {quote(version)}")
    return NVMMADistributedLayout((2, 0), tuple(_warps_v2(shape, num_warps)), (16, 8))


def dot_operand_layout(parent: NVMMADistributedLayout, operand_index: int, dtype: DTypeLike) -> DotOperandLayout:
    """Operand ``operand_index`` of a dot with result ``parent`` on ``dtype`` elements: ``k_width = 32 / bitwidth``."""
    return DotOperandLayout(operand_index, parent, max(1, 32 // bitwidth(dtype)))


def global_cost(layout: LinearLayout, strides: Sequence[int], dtype: DTypeLike) -> float:
    """Per-warp cost of a global load / store of a tile in ``layout`` at ``strides``: sectors touched by
    each vector instruction of warp 0 times ``GLOBAL_SECTOR_COST``, plus instructions times
    ``GLOBAL_INSTRUCTION_COST`` (vectors of the widest contiguous run after the register permutation
    of generalized vectorization, at most 128 bits; duplicated registers are not re-accessed).

    >>> L = coalesced_layout([64, 64], [64, 1], "fp16", num_warps=4).to_linear([64, 64])
    >>> global_cost(L, [64, 1], "fp16")  # 4 v4 instructions per warp, 16 sectors each
    132.0
    """
    return _global_cost(layout, tuple(int(s) for s in strides), bitwidth(dtype))


@functools.lru_cache(maxsize=4096)
def _global_cost(layout: LinearLayout, strides: tuple[int, ...], bits: int) -> float:
    from linear_layouts.engine.transfer import standard_outs

    order = memory_order(strides)
    layout = standard_outs(layout)
    in_memory = memory_order_layout(layout, order)  # register first, one offset dim in memory order
    permutation = vector_permutation(in_memory)  # registers are free to reorder (§5.3)
    layout = permutation.apply(layout)
    contiguous = permutation.apply(in_memory).num_consecutive_in_out()  # contiguous_elements(layout, order)
    vec = max(1, min(contiguous, max(128 // bits, 1)))
    regs = layout.in_dim_size("register")
    zero = sum(1 << i for i, v in enumerate(layout.flat_bases("register")) if not v)
    groups = np.array([r for r in range(0, regs, vec) if not r & zero], dtype=np.int64)  # one per instruction
    lanes = np.arange(layout.in_dim_size("lane"), dtype=np.int64)
    coords = layout.apply_array({"register": groups[:, None], "lane": lanes[None, :]})
    addr = sum(coords[f"dim{d}"].astype(np.int64) * s for d, s in enumerate(strides)) * bits // 8
    sector = np.sort(np.broadcast_to(addr // 32, (len(groups), len(lanes))), axis=1)
    sectors = int(len(groups) + np.count_nonzero(np.diff(sector, axis=1)))  # distinct sectors per instruction
    return sectors * GLOBAL_SECTOR_COST + len(groups) * GLOBAL_INSTRUCTION_COST
