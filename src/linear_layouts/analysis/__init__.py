"""The paper's algorithms (§5, §9.2) as pure functions of LinearLayouts, one module each.

Shared memory (engineer "smem"): ``banks`` (Lemma 9.4 wavefronts), ``bank_simulator`` (brute force),
``swizzle`` (optimal swizzling, legacy baselines), ``simd_tiles`` (ld/st.shared vectors, ldmatrix/stmatrix).
"""

# --- smem: bank conflicts, optimal swizzling, SIMD tiles ---------------------------------------
from linear_layouts.analysis.bank_simulator import lane_addresses, simulate_wavefronts
from linear_layouts.analysis.banks import SharedAccess, bank_conflicts, shared_access, wavefronts
from linear_layouts.analysis.simd_tiles import (
    SimdChoice,
    best_instruction,
    conversion_instructions,
    matrix_tile,
    simd_choices,
    vector_tile,
)
from linear_layouts.analysis.swizzle import (
    SharedBaseline,
    SwizzleResult,
    legacy_swizzle_baseline,
    legacy_swizzle_params,
    optimal_swizzle,
    padded_baseline,
)

__all__ = [
    "SharedAccess", "shared_access", "wavefronts", "bank_conflicts", "simulate_wavefronts", "lane_addresses",
    "SwizzleResult", "SharedBaseline", "optimal_swizzle", "padded_baseline",
    "legacy_swizzle_params", "legacy_swizzle_baseline",
    "SimdChoice", "simd_choices", "best_instruction", "conversion_instructions", "vector_tile", "matrix_tile",
]
# --- smem end -----------------------------------------------------------------------------------

# --- dist: vectorization, broadcast, shuffles, gather, conversion (added by engineer "dist") -----
# vectorization (§5.1, §5.3), broadcast (§5.1), shuffles + warp_simulator (§5.4), gather (§5.5),
# conversion (plan_conversion); ``bitwidth`` is linear_layouts.core.element_type's (the parser of every ``dtype``).
from linear_layouts.analysis.broadcast import (
    ReductionStores,
    broadcast_masks,
    duplicated_bits,
    reduced_layout,
    reduction_stores,
    zero_bases_mask,
    zero_basis_indices,
)
from linear_layouts.analysis.conversion import conversion_dims, plan_conversion, plan_shared_memory, plan_through
from linear_layouts.analysis.steps import (
    Barrier,
    BarrierScope,
    ConversionKind,
    ConversionPlan,
    Cost,
    MemoryOp,
    RegisterEmission,
    RegisterPermutation,
    SharedInstruction,
    SharedMemoryAccess,
    WarpShuffle,
)
from linear_layouts.core.element_type import bitwidth
from linear_layouts.analysis.gather import GatherPlan, GatherRound, is_warp_local, plan_gather
from linear_layouts.analysis.shuffles import ShufflePlan, ShuffleRound, plan_shuffle, same_warp_data
from linear_layouts.analysis.vectorization import (
    GlobalAccess,
    contiguous_elements,
    contiguous_elements_along,
    global_access,
    memory_order_layout,
    vector_permutation,
)

__all__ += [
    "bitwidth",
    "GlobalAccess", "contiguous_elements", "contiguous_elements_along", "global_access", "memory_order_layout",
    "vector_permutation",
    "ReductionStores", "broadcast_masks", "duplicated_bits", "reduced_layout", "reduction_stores", "zero_bases_mask",
    "zero_basis_indices",
    "ShufflePlan", "ShuffleRound", "plan_shuffle", "same_warp_data",
    "GatherPlan", "GatherRound", "is_warp_local", "plan_gather",
    "conversion_dims", "plan_conversion", "plan_shared_memory", "plan_through",
    "ConversionPlan", "ConversionKind", "Cost", "RegisterEmission", "RegisterPermutation", "WarpShuffle",
    "SharedMemoryAccess", "Barrier",
    "BarrierScope", "MemoryOp", "SharedInstruction",
]
# --- dist end -----------------------------------------------------------------------------------

# --- gluon: shared-layout advice for a real consumer (engineer "gluon") ---------------------------
from linear_layouts.analysis.shared_advice import (  # noqa: E402
    Consumer,
    ConsumerKind,
    SharedAdvice,
    SharedCandidate,
    suggest_shared_layout,
)

__all__ += ["Consumer", "ConsumerKind", "SharedAdvice", "SharedCandidate", "suggest_shared_layout"]
# --- gluon end ------------------------------------------------------------------------------------
