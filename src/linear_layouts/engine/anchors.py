"""Anchor layouts (paper §4.4): coalesced blocked layouts for global memory ops, chosen as Triton's
``Coalesce`` pass does, and ``mma`` / dot-operand layouts for ``dot``; plus the global-memory cost
model the engine uses to compare a memory op in a non-coalesced layout with a conversion.

Global-memory cost (``global_cost``), in the unit of a conversion's cost (``analysis.cost_model``:
predicted SM-nanoseconds per CTA), so the engine can weigh "store in this layout" against "convert,
then store coalesced". What a layout changes is the work between the SM and L2; the DRAM bytes do not
depend on it (every byte of the tile moves once either way) and are left out. A warp's global
instruction is one L1TEX request, which touches ``lines`` distinct 128-byte lines and ``sectors``
distinct 32-byte sectors:

* L1TEX wavefronts: ``max(ceil(lines / 4), ceil(sectors / 4))`` -- the tag stage resolves 4 lines a
  cycle, the data stage moves 128 bytes (4 sectors) a cycle (NVIDIA, Volta and later) -- at the
  device's wavefront time (``cost_model``'s fitted ``wavefront``: the same data pipe as the
  shared-memory wavefronts of a conversion);
* L2 transfers, ``GLOBAL_SECTOR_NS`` each (one sector's share of the L2 bandwidth of one SM): a store
  sends every request's sectors to L2 (L1 writes through), each a whole transfer whether the lanes
  fill it or not (16 bytes of a sector still move a sector, with a byte mask); a load fetches each
  distinct sector a warp reads once (the warp's repeats hit L1; warps holding copies of one another's
  data share their fetches), while different warps reading one sector each fetch it (a model: they
  run concurrently, before any fill; whether L1 merges their misses is not measured here).

So a warp-wide ``st.global.b32`` over 8 rows (the wgmma accumulator of fp16 stored as is: 8 lines, 8
half-written sectors, 256 bytes of data) costs 2 wavefronts + 8 transfers, a coalesced 16-byte store
of 512 bytes 4 wavefronts + 16 transfers: twice the cost per byte.

Coalescing: ``order`` sorts the dims by stride (the unit-stride dim first); each thread takes
``min(128 / bitwidth, shape[order[0]], numel / threads)`` contiguous elements (16-byte aligned
pointers, as Triton specializes them; fewer where ``align`` says the pointer is less aligned), and
lanes then warps fill the dims in ``order``
(Triton's ``BlockedEncodingAttr`` builder).

>>> coalesced_layout([64, 64], [64, 1], "fp16", num_warps=4)
BlockedLayout(size_per_thread=(1, 8), threads_per_warp=(4, 8), warps_per_cta=(4, 1), order=(1, 0), cga_layout=())
"""

from __future__ import annotations

import functools

from collections.abc import Sequence

import numpy as np

from linear_layouts.core.element_type import DTypeLike, bitwidth
from linear_layouts.analysis.vectorization import memory_order_layout, vector_permutation
from linear_layouts.layouts import BlockedLayout, DotOperandLayout, NVMMADistributedLayout
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote
from linear_layouts.core.layout import LinearLayout
from linear_layouts.target import DEFAULT_TARGET, Target, resolve

__all__ = [
    "GLOBAL_SECTOR_NS", "L2_BANDWIDTH_GBS", "SMS", "LINE_BYTES", "TAGS_PER_WAVEFRONT", "SECTORS_PER_WAVEFRONT",
    "memory_order", "blocked_layout", "default_blocked_layout", "coalesced_layout",
    "mma_layout", "dot_operand_layout", "global_cost",
]

#: L2 <-> SM bandwidth of the whole H100 SXM (GB/s), the figure public microbenchmarks of H100 report
#: (about 5.5 TB/s; NVIDIA publishes none; A100's whitepaper: 5120 B/clk, 5.6 TB/s at 1.1 GHz). Model.
L2_BANDWIDTH_GBS = 5500.0
#: SMs of an H100 SXM sharing that bandwidth (the default target's, ``Target.sms``).
SMS = DEFAULT_TARGET.sms
#: SM-nanoseconds of one 32-byte sector moved between an SM's L1 and L2: its share of the L2 bandwidth
#: (32 B / (5500 GB/s / 132) = 0.77 ns).
GLOBAL_SECTOR_NS = 32.0 / (L2_BANDWIDTH_GBS / SMS)
#: bytes of an L1 / L2 cache line
LINE_BYTES = 128
#: cache lines the L1TEX tag stage resolves per cycle (wavefront) of one request, and 32-byte sectors its
#: data stage moves per cycle (128 bytes); NVIDIA on Volta and later (devtalk, "Understanding L1/TEX
#: cache sectors/req": "the L1 tag stage can resolve 4 sets x 4 sectors per cycle").
TAGS_PER_WAVEFRONT = 4
SECTORS_PER_WAVEFRONT = 4


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
                     threads_per_warp: int = 32, align: int = 16) -> BlockedLayout:
    """The Coalesce pass's layout for a global access of a ``shape`` tile with ``strides`` (module doc);
    ``align``: the bytes each contiguous run starts at a multiple of (Triton's pointer divisibility):
    a thread takes no more contiguous elements than one aligned vector holds."""
    if len(shape) != len(strides):
        raise LayoutError(f"strides must have one entry per dim of shape {list(shape)}, got {list(strides)}")
    bits = bitwidth(dtype)
    order = memory_order(strides)
    numel = int(np.prod(shape))
    contiguous = shape[order[0]] if strides[order[0]] == 1 else 1
    widest = max(min(128, 8 * align) // bits, 1)
    per_thread = max(1, min(widest, contiguous, max(numel // (num_warps * threads_per_warp), 1)))
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


def global_cost(layout: LinearLayout, strides: Sequence[int], dtype: DTypeLike, *, store: bool = False,
                align: int = 16, target: Target | None = None) -> float:
    """Predicted SM-nanoseconds per CTA of a global load (or ``store``) of a tile in ``layout`` at
    ``strides`` (module doc): each vector instruction of warp 0 costs its L1TEX wavefronts (from its
    distinct 128-byte lines and 32-byte sectors) at the device's wavefront time, in every warp that
    issues it (a load: every warp; a store: the warps holding distinct data, Triton masks the others);
    plus ``GLOBAL_SECTOR_NS`` per sector moved to or from L2 (a store: every instruction's sectors; a
    load: each warp's distinct sectors, warps holding the same data once). Vectors: the widest
    contiguous run after the register permutation of generalized vectorization, at most 128 bits and
    ``align`` bytes; duplicated registers are not re-accessed, duplicated lanes share their sectors.
    ``target``: whose cost table gives the wavefront time (default: the default target's).

    >>> L = coalesced_layout([64, 64], [64, 1], "fp16", num_warps=4).to_linear([64, 64])
    >>> round(global_cost(L, [64, 1], "fp16"), 1)  # 4 warps x 4 v4 instructions, 4 lines, 16 sectors each
    244.6
    """
    return _global_cost(layout, tuple(int(s) for s in strides), bitwidth(dtype), bool(store), int(align),
                        resolve(target))


@functools.lru_cache(maxsize=4096)
def _global_cost(layout: LinearLayout, strides: tuple[int, ...], bits: int, store: bool, align: int,
                 target: Target) -> float:
    from linear_layouts.analysis.cost_model import device_costs
    from linear_layouts.engine.transfer import standard_outs

    order = memory_order(strides)
    layout = standard_outs(layout)
    in_memory = memory_order_layout(layout, order)  # register first, one offset dim in memory order
    permutation = vector_permutation(in_memory)  # registers are free to reorder (§5.3)
    layout = permutation.apply(layout)
    contiguous = permutation.apply(in_memory).num_consecutive_in_out()  # contiguous_elements(layout, order)
    vec = max(1, min(contiguous, max(min(128, 8 * align) // bits, 1)))
    regs = layout.in_dim_size("register")
    zero = sum(1 << i for i, v in enumerate(layout.flat_bases("register")) if not v)
    groups = np.array([r for r in range(0, regs, vec) if not r & zero], dtype=np.int64)  # one per instruction
    lanes = np.arange(layout.in_dim_size("lane"), dtype=np.int64)
    coords = layout.apply_array({"register": groups[:, None], "lane": lanes[None, :]})
    addr = sum(coords[f"dim{d}"].astype(np.int64) * s for d, s in enumerate(strides)) * bits // 8
    addr = np.broadcast_to(addr, (len(groups), len(lanes)))

    def distinct(unit: int) -> np.ndarray:  # units each instruction touches (an aligned vector stays in one)
        units = np.sort(addr // unit, axis=1)
        return 1 + np.count_nonzero(np.diff(units, axis=1), axis=1)

    lines, sectors = distinct(LINE_BYTES), distinct(32)
    # L1TEX per request: the tag stage resolves 4 lines (16 sectors) a cycle, the data stage moves 4 sectors
    wavefronts = int(np.maximum(-(-lines // TAGS_PER_WAVEFRONT), -(-sectors // SECTORS_PER_WAVEFRONT)).sum())
    warp_bases = layout.flat_bases("warp", missing_ok=True)
    device = device_costs(target)
    wavefront_ns = device.at(device.wavefront, 1 << len(warp_bases))
    if store:  # L1 writes through: every request's sectors go to L2; warps of duplicated data are masked
        warps = 1 << sum(1 for b in warp_bases if b)
        return warps * (wavefronts * wavefront_ns + int(sectors.sum()) * GLOBAL_SECTOR_NS)
    # a load: every warp issues its requests; a warp fetches each distinct sector it reads once (its
    # repeats hit L1) and warps holding copies of one another's data share their fetches; other warps
    # reading the same sector fetch it again (they run concurrently, before any fill)
    distinct_warps = 1 << sum(1 for b in warp_bases if b)
    fetched = np.sort((addr // 32).ravel())  # (np.unique's first call imports a module: ~16 ms cold)
    per_warp = 1 + int(np.count_nonzero(np.diff(fetched)))
    return (1 << len(warp_bases)) * wavefronts * wavefront_ns + distinct_warps * per_warp * GLOBAL_SECTOR_NS
