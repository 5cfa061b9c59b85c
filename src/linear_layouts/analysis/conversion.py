"""Conversion planning: how to move a tensor from distributed layout ``src`` to ``dst`` (paper §5.4).

``C = src^-1 ∘ dst`` (``dst.invert_and_compose(src)``, Triton's choice: free variables zero, so
duplicated data is read from the first copy) maps each destination slot to the source slot that holds
its element. Quotienting ``C`` by the hardware dims it leaves alone, slowest first (block, warp, lane),
gives the cheapest mechanism, as Triton's ``minimalCvtLayout``:

* no-op: ``src == dst`` (the same LinearLayout, whatever descriptors produced them);
* register permutation: ``C`` is trivial over block, warp and lane (``register_map``);
* warp shuffle: trivial over block and warp (§5.4 shuffles, :mod:`.shuffles`), chosen only when its
  cost is below the shared-memory plan's; otherwise
* shared memory: store ``src``, barrier, load ``dst`` through the optimal swizzle (§5.4, §9.2), with
  vector widths, instruction kinds and counts, and predicted wavefronts;
* cross-CTA: ``C`` moves data between CTAs (distributed shared memory of a cluster).

Cost model: predicted SM-nanoseconds of one conversion of a CTA on the default device
(``analysis.cost_model``: building blocks measured by benchmarks/gpu_microbench.py, H100 now): shuffles
cost their ``shfl.sync`` and the selects / byte permutes codegen emits for them (counted by the
emitter); shared memory costs its store + load wavefronts and one barrier (``bar.warp.sync``, free,
when every warp reads only what it stored; else ``bar.sync``), with a latency floor per conversion.
``plan_conversion`` takes the cheaper and reports the other in ``alternatives``
(``shuffle_cost``, ``shared_memory_cost``).  The 2026-11-22 constants ``SHUFFLE_COST``,
``BARRIER_COST``, ``ALU_COST`` (wavefront units) remain for comparison.  A cross-CTA conversion is
planned as one shared-memory conversion over the whole cluster (the block bits folded into the warp
bits, i.e. distributed shared memory seen as one buffer) and pays ``CLUSTER_BARRIER_COST``
wavefronts' worth instead of a CTA barrier.

>>> from linear_layouts import LinearLayout
>>> A = LinearLayout({"register": [[1], [2]], "lane": [[4], [8], [16], [32], [64]]}, ["dim0"])
>>> plan_conversion(A, A, "fp32").kind
'no-op'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from linear_layouts.analysis import banks, cost_model, simd_tiles, swizzle
from linear_layouts.analysis.shuffles import (
    ShufflePlan,
    check_distributed,
    plan_shuffle,
    same_warp_data,
)
from linear_layouts.arguments import checked
from linear_layouts.element_type import DTypeLike, element_type
from linear_layouts.errors import LayoutError
from linear_layouts.layout import LinearLayout
from linear_layouts.limits import MAX_ELEMENTS, check_layout_size

__all__ = [
    "NO_OP",
    "REGISTER_PERMUTATION",
    "WARP_SHUFFLE",
    "SHARED_MEMORY",
    "CROSS_CTA",
    "SHUFFLE_COST",
    "BARRIER_COST",
    "CLUSTER_BARRIER_COST",
    "ALU_COST",
    "SharedMemoryPlan",
    "ConversionPlan",
    "conversion_dims",
    "plan_shared_memory",
    "plan_conversion",
    "shuffle_cost",
    "shared_memory_cost",
]

NO_OP = "no-op"
REGISTER_PERMUTATION = "register permutation"
WARP_SHUFFLE = "warp shuffle"
SHARED_MEMORY = "shared memory"
CROSS_CTA = "cross-CTA"

#: Cost of one ``shfl.sync`` per warp, in wavefront units (measured, see the module doc).
SHUFFLE_COST = 1.2
#: Cost of the barriers around the shared-memory round trip, in wavefront units (measured, rounded up).
BARRIER_COST = 2
#: Cost of the cluster barrier of a cross-CTA conversion, in the same units (model).
CLUSTER_BARRIER_COST = 8
#: Cost of one non-memory instruction (select, prmt, cvt, shr) per warp, in wavefront units: fitted on
#: the H100 conversion benchmark (16 kernel timings, 8 warps per SM): with 0.34 the model's cost equals
#: measured time / (1.27 SM cycles per wavefront) at scale 1.00, rms error 16%; every measured
#: shuffle / shared pair ranks right for 0.16 .. 0.41 (benchmarks/results/conversion_cost_model.md).
ALU_COST = 0.34

REGISTER, LANE, WARP, BLOCK = "register", "lane", "warp", "block"


@dataclass(frozen=True)
class SharedMemoryPlan:
    """Store ``src`` to ``layout`` (offset -> tensor, elements), barrier, load ``dst`` from it.

    ``*_vector_bits``: bits per lane per instruction; ``*_instruction``: the PTX instruction kind
    (``st.shared.v4.b32``, ``stmatrix.x4``, ``ldmatrix.x4.trans``, ...); ``*_instructions``: how many
    over all warps; ``*_wavefronts``: predicted total wavefronts (what ncu reports for one CTA).
    ``*_permutation``: the register order (``ColumnAction``) the instructions consume.
    ``swizzle``: the optimal-swizzle result (its V, I, E, F, H, C sets for display).
    ``baselines``: name -> (store wavefronts, load wavefronts) of the legacy shared layouts.
    """

    layout: LinearLayout
    store_vector_bits: int
    load_vector_bits: int
    store_instruction: str
    load_instruction: str
    store_instructions: int
    load_instructions: int
    store_wavefronts: int
    load_wavefronts: int
    store_permutation: Any
    load_permutation: Any
    swizzle: Any = field(repr=False)
    baselines: tuple[tuple[str, int, int], ...] = ()

    @property
    def wavefronts(self) -> int:
        return self.store_wavefronts + self.load_wavefronts

    @property
    def instructions(self) -> int:
        return self.store_instructions + self.load_instructions


@dataclass(frozen=True)
class ConversionPlan:
    """A conversion ``src -> dst`` of ``bitwidth``-bit elements: its ``kind`` and what codegen needs.

    * ``register_map[i]``: the source register dst register ``i`` takes (no-op, register permutation);
    * ``shuffle``: the :class:`~.shuffles.ShufflePlan` (warp shuffle);
    * ``shared``: the :class:`SharedMemoryPlan` (shared memory; for cross-CTA, the per-CTA estimate);
    * ``instructions``: data-movement instructions over all warps (shfl, or st + ld);
      ``wavefronts``: predicted shared-memory wavefronts; ``cost``: per-warp model cost (module doc).
    * ``alternatives``: kind -> cost of the other mechanisms that were possible.
    """

    kind: str
    src: LinearLayout
    dst: LinearLayout
    bitwidth: int
    instructions: int
    wavefronts: int
    cost: float
    register_map: tuple[int, ...] | None = None
    shuffle: ShufflePlan | None = None
    shared: SharedMemoryPlan | None = None
    alternatives: tuple[tuple[str, float], ...] = ()


def _num_warps(layout: LinearLayout) -> int:
    return layout.in_dim_size(WARP) if layout.has_in_dim(WARP) else 1


@checked
def conversion_dims(src: LinearLayout, dst: LinearLayout) -> tuple[str, ...]:
    """Hardware dims the conversion must move data across: the out dims of ``src^-1 ∘ dst`` after
    quotienting by block, warp, lane (slowest first) while it is trivial over them (Triton's
    ``minimalCvtLayout``). ``()`` for a no-op, ``("register",)`` for a register permutation.

    >>> A = LinearLayout({"register": [[1]], "lane": [[2]]}, ["dim0"])
    >>> conversion_dims(A, LinearLayout({"register": [[2]], "lane": [[1]]}, ["dim0"]))
    ('register', 'lane')
    """
    check_distributed(src, "src")
    check_distributed(dst, "dst")
    if src.out_dims != dst.out_dims:
        raise LayoutError(f"src and dst must have the same out dims, got {src.out_dims} and {dst.out_dims}")
    if src.in_dim_names != dst.in_dim_names or src.in_dims[LANE] != dst.in_dims[LANE]:
        raise LayoutError("src and dst must have the same in dims and lane count")
    for d in (WARP, BLOCK):
        if src.has_in_dim(d) and src.in_dim_size(d) != dst.in_dim_size(d):
            raise LayoutError(f"src and dst must have the same number of {d}s")
    comp = dst.invert_and_compose(src)
    for d in (BLOCK, WARP, LANE):
        if not comp.has_in_dim(d):
            continue
        q = comp.quotient([d])
        if q is None:
            break
        comp = q
    if not comp.in_dim_names or comp.is_trivial_over(list(comp.in_dim_names)):
        return ()
    return tuple(comp.out_dim_names)


def _register_map(src: LinearLayout, dst: LinearLayout) -> tuple[int, ...]:
    comp = dst.invert_and_compose(src)
    return tuple(comp.apply({REGISTER: i})[REGISTER] for i in range(dst.in_dim_size(REGISTER)))


@checked
def plan_shared_memory(
    src: LinearLayout, dst: LinearLayout, dtype: DTypeLike, *, with_baselines: bool = True,
    max_elements: int = MAX_ELEMENTS,
) -> SharedMemoryPlan:
    """Shared-memory conversion through the optimal swizzle (§5.4, §9.2) with instruction choice (§5.3).

    Uses the smem analyses: ``swizzle.optimal_swizzle`` for the layout and predicted wavefronts,
    ``simd_tiles.conversion_instructions`` for the instructions (widest ld/st.shared or
    ldmatrix/stmatrix, fewest instructions), and the legacy baselines for comparison. Block bits
    (several CTAs) are folded into the warp bits: the counts are then over the whole cluster.
    ``with_baselines=False`` skips the (simulated) legacy baselines. Layouts above ``max_elements``
    inputs or elements (``limits.MAX_ELEMENTS``) are refused.
    """
    bits = element_type(dtype).bits
    check_layout_size(src, max_elements, "plan_shared_memory: src")
    check_layout_size(dst, max_elements, "plan_shared_memory: dst")
    a, b = _fold_blocks(src), _fold_blocks(dst)
    sw = swizzle.optimal_swizzle(a, b, bits)
    st, ld = simd_tiles.conversion_instructions(sw.layout, a, b, bits)
    return SharedMemoryPlan(
        sw.layout,
        st.bits_per_lane,
        ld.bits_per_lane,
        st.instruction,
        ld.instruction,
        st.count,
        ld.count,
        _emitted_wavefronts(sw.layout, a, bits, st, "store"),
        _emitted_wavefronts(sw.layout, b, bits, ld, "load"),
        st.permutation,
        ld.permutation,
        sw,
        _baselines(a, b, bits, max_elements) if with_baselines else (),
    )


def _emitted_wavefronts(layout: LinearLayout, dist: LinearLayout, bits: int, choice: Any, op: str) -> int:
    """Predicted wavefronts of the instructions codegen emits for one side (``choice``: a SimdChoice).

    ld/st.shared: ``banks.wavefronts`` with duplicated data not stored. ldmatrix/stmatrix: the
    choice's wavefronts per instruction times the instructions emitted; stmatrix skips duplicated
    registers (outside its tile) and warps, never lanes (``.sync.aligned``)."""
    if not choice.kind.endswith("matrix"):
        return banks.wavefronts(layout, dist, bits, op=op, skip_duplicates=True)
    per_instruction = choice.wavefronts // choice.count
    count = choice.count
    if op == "store":
        free = dist.free_variable_masks()
        k = 1 if choice.trans else (32 // bits).bit_length() - 1
        tile = k + choice.matrices.bit_length() - 1
        skipped = sum(1 for r in choice.permutation.action[tile:] if free.get(REGISTER, 0) >> r & 1)
        count >>= skipped + bin(free.get(WARP, 0)).count("1")
    return per_instruction * count


def _baselines(a: LinearLayout, b: LinearLayout, bits: int, max_elements: int) -> tuple[tuple[str, int, int], ...]:
    """(name, store wavefronts, load wavefronts) through the legacy shared layouts: plain row-major,
    row-major padded by one access width, and (rank 2) the legacy mma swizzle Triton would pick."""
    log2s = [a.out_dim_size_log2(d) for d in a.out_dim_names]
    shifts = [sum(log2s[:i]) for i in range(len(log2s))]
    row_major = [1 << (shifts[i] + j) for i in reversed(range(len(log2s))) for j in range(log2s[i])]
    plain = swizzle.shared_layout_from_flat(row_major, a)
    out = [("unswizzled", banks.wavefronts(plain, a, bits, op="store"), banks.wavefronts(plain, b, bits))]
    try:  # a baseline the smem analyses cannot model for this pair is left out
        padded = swizzle.padded_baseline(a, b, bits, max_elements=max_elements)
        out.append(("padded", int(padded.store_wavefronts), int(padded.load_wavefronts)))
    except LayoutError:
        pass
    if a.num_out_dims == 2:
        try:
            shape = list(a.out_dims.values())
            vec, per_phase, max_phase = swizzle.legacy_swizzle_params(shape, [1, 0], bits, op_idx=0)
            legacy = swizzle.legacy_swizzle_baseline(a, b, bits, vec=vec, per_phase=per_phase, max_phase=max_phase,
                                                     max_elements=max_elements)
            out.append(("legacy swizzle", int(legacy.store_wavefronts), int(legacy.load_wavefronts)))
        except LayoutError:
            pass
    return tuple(out)


def shuffle_cost(shuffle: ShufflePlan) -> float:
    """Predicted SM-nanoseconds of a warp-shuffle conversion of one CTA as codegen emits it
    (``cost_model.shuffle_time_ns``)."""
    return cost_model.shuffle_time_ns(shuffle)


def _warp_local(src: LinearLayout, dst: LinearLayout) -> bool:
    """Every warp reads only what it stored: the same warp bases, none of them zero (no duplicated
    warps whose stores codegen skips)."""
    return same_warp_data(src, dst) and all(_flat_bases(src, WARP))


def _flat_bases(layout: LinearLayout, dim: str) -> tuple[int, ...]:
    return layout.flat_bases(dim) if layout.has_in_dim(dim) else ()


def shared_memory_cost(shared: SharedMemoryPlan, src: LinearLayout, dst: LinearLayout, bits: int,
                       warps: int) -> float:
    """Predicted SM-nanoseconds of a shared-memory conversion of one CTA: its store + load wavefronts
    and one barrier (``cost_model.shared_time_ns``; packed registers need no byte permutes)."""
    return cost_model.shared_time_ns(shared.wavefronts, _warp_local(src, dst), warps)


@checked
def plan_conversion(
    src: LinearLayout, dst: LinearLayout, dtype: DTypeLike, *, with_baselines: bool = True,
    max_elements: int = MAX_ELEMENTS,
) -> ConversionPlan:
    """The cheapest way to convert a tensor from distributed ``src`` to ``dst`` (module doc).

    Shared-memory analyses need 32-lane warps; for other lane counts only the register and shuffle
    plans are available (a conversion that needs shared memory then raises ``LayoutError``). Layouts
    above ``max_elements`` inputs or elements (``limits.MAX_ELEMENTS``) are refused.
    """
    bits = element_type(dtype).bits
    check_layout_size(src, max_elements, "plan_conversion: src")
    check_layout_size(dst, max_elements, "plan_conversion: dst")
    dims = conversion_dims(src, dst)
    if src == dst or not dims:
        return ConversionPlan(NO_OP, src, dst, bits, 0, 0, 0.0, register_map=_register_map(src, dst))
    if dims == (REGISTER,):
        return ConversionPlan(REGISTER_PERMUTATION, src, dst, bits, 0, 0, 0.0, register_map=_register_map(src, dst))
    warps = _num_warps(_fold_blocks(src))
    if BLOCK in dims:
        cluster = plan_shared_memory(src, dst, bits, with_baselines=with_baselines, max_elements=max_elements)
        cost = cost_model.shared_time_ns(cluster.wavefronts + CLUSTER_BARRIER_COST * warps, False, warps)
        return ConversionPlan(CROSS_CTA, src, dst, bits, cluster.instructions, cluster.wavefronts, cost, shared=cluster)
    shuffle = plan_shuffle(src, dst, bits) if WARP not in dims and same_warp_data(src, dst) else None
    shared: SharedMemoryPlan | None
    try:
        shared = plan_shared_memory(src, dst, bits, with_baselines=with_baselines, max_elements=max_elements)
    except LayoutError:
        if shuffle is None:
            raise
        shared = None
    shared_cost = shared_memory_cost(shared, src, dst, bits, warps) if shared is not None else float("inf")
    shuffle_cost_ = shuffle_cost(shuffle) if shuffle is not None else float("inf")
    if shuffle is not None and shuffle_cost_ < shared_cost:
        return ConversionPlan(
            WARP_SHUFFLE, src, dst, bits, shuffle.shuffles_per_warp * shuffle.num_warps, 0, shuffle_cost_,
            shuffle=shuffle, alternatives=((SHARED_MEMORY, shared_cost),) if shared is not None else (),
        )
    if shared is None:  # pragma: no cover - excluded just above
        raise LayoutError("no shared-memory plan")
    alternatives = ((WARP_SHUFFLE, shuffle_cost_),) if shuffle is not None else ()
    return ConversionPlan(
        SHARED_MEMORY, src, dst, bits, shared.instructions, shared.wavefronts, shared_cost,
        shared=shared, alternatives=alternatives,
    )


def _fold_blocks(layout: LinearLayout) -> LinearLayout:
    """The cluster as one big CTA: the block bases appended to the warp bases (warp bits first)."""
    bases = layout.bases
    warp = bases.pop(WARP, []) + bases.pop(BLOCK, [])
    bases[WARP] = warp
    return LinearLayout(bases, layout.out_dims)
