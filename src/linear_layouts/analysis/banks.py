"""Shared-memory bank conflicts in closed form (paper §9.2, Lemma 9.4 and its vectorized case).

A distributed layout ``L`` (register, lane, warp -> tensor) reads or writes a shared layout ``S``
(offset -> tensor). Composing, ``S^-1 ∘ L`` sends every hardware index to an element offset. The
bank model is ``bank_simulator.instruction_wavefronts`` (validated with ncu on H100 and H200; see
benchmarks/results/wavefronts_vs_ncu.md): one instruction = one warp, one value of the non-vector
register bits, 32 lanes, each lane moving one aligned vector of ``2**v`` elements; lanes are split
into phases of at most 128 bytes (16-byte vectors: 4 phases of 8 lanes, 8-byte: 2 of 16, otherwise
1 of 32); a phase costs the largest number of *distinct* 4-byte words its active lanes ask of one
bank. Pairing: an 8- or 16-byte LOAD by all lanes where lane bit 0 or lane bit 1 moves no unit
(every lane asks for lane ``l ^ 1``'s, or ``l ^ 2``'s, address) has phases of twice as many lanes;
stores never pair (ncu, H100).
That is the rule of NVIDIA's shared memory; every count here is the rule of the ``target`` it is given
(``Target.shared``: banks, bank bytes, phase bytes and which lanes share a phase; AMD CDNA3's LDS cuts
64 lanes into phases of 128 bytes, its 16-byte reads into non-consecutive lanes, and never pairs).
``skip_duplicates=True`` (stores): Triton's free registers are skipped and free lanes and warps
predicated off, as the code generator emits them; a predicated-off lane keeps its phase.

Everything is linear, so the cost is a dimension count. Let a *unit* be what one lane touches,
``max(vector bytes, 4)`` bytes, aligned; unit ``u`` sits in bank group ``u mod (32 / n)`` where
``n = unit bytes / 4`` is also the number of phases. For the phase lanes ``t_0 .. t_{4-log2 n}``
with unit images ``u_i``, every bank group of a phase receives ``2**k`` distinct units,

    k = rank{u_i} - rank{u_i mod (32/n)}

so ``wavefronts = n * 2**k * instructions * warps`` (paired loads: one more phase lane, half the phases;
skipping duplicates: the free lanes leave the phase lanes, phases whose high lane bits are free are
empty, and free registers and warps issue nothing). For vectors of at least 4 bytes, ``2**k`` is
Lemma 9.4's ``c = |span(S_Vec ∪ S_Idx) ∩ span(L_Thr)|`` (over the phase lanes) and ``n c`` its
vectorized case; for narrower accesses the lemma is only a lower bound, while this count stays
exact (lanes reading one word cost nothing, lanes on two words of one bank do).

Example (seed 004, 16x32 fp32, one warp, row-major shared memory ``offset = 32 m + n``; store:
register -> row m, lane -> column n; load: lanes 0-3 -> m, lane 4 -> n0, registers -> n1..n4):
``wavefronts(row_major, store, 32, op="store") == 16`` and ``wavefronts(row_major, load, 32) == 256``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from linear_layouts.core import f2
from linear_layouts.core.arguments import checked
from linear_layouts.core.element_type import DTypeLike, dtype_argument, element_type
from linear_layouts.core.errors import LayoutError, not_a_layout
from linear_layouts.core.limits import quote
from linear_layouts.core.layout import ColumnAction, LinearLayout
from linear_layouts.target import DEFAULT_TARGET, Target, resolve

__all__ = [
    "SharedAccess",
    "shared_access",
    "wavefronts",
    "wavefronts_per_phase",
    "access_wavefronts",
    "access_from_columns",
    "bank_conflicts",
    "check_distributed",
    "check_shared",
    "phase_units",
    "LANES",
    "BANKS",
]

#: the default target's lanes, banks and phase bytes, for callers of the old names; every function here
#: takes the facts of the ``target`` it is given (``Target.lanes``, ``Target.shared``)
LANES = DEFAULT_TARGET.lanes
BANKS = DEFAULT_TARGET.shared.banks
PHASE_BYTES = DEFAULT_TARGET.shared.phase_bytes

_DISTRIBUTED_DIMS = ("register", "lane", "warp", "block")


def check_distributed(layout: object, name: str, target: Target | str | None = None, *,
                      any_lanes: bool = False) -> LinearLayout:
    """A distributed LinearLayout: in dims among register, lane, warp, block; the target's lanes (32 on
    NVIDIA, 64 on AMD CDNA; ``any_lanes``: a lane dim of any size, for a value checked against its
    target later); one CTA."""
    if not isinstance(layout, LinearLayout):
        raise not_a_layout(layout, name)
    _check_distributed(layout, name, None if any_lanes else resolve(target))
    return layout


@functools.lru_cache(maxsize=4096)  # pure (a refusal raises, and is not cached); the swizzle search checks each side often
def _check_distributed(layout: LinearLayout, name: str, target: Target | None) -> None:
    for d in layout.in_dim_names:
        if d not in _DISTRIBUTED_DIMS:
            raise LayoutError(f"{name}: in dims must be among {_DISTRIBUTED_DIMS}, got {quote(d)}")
    if target is None:
        if not layout.has_in_dim("lane"):
            raise LayoutError(f"{name}: needs a 'lane' in dim")
    elif not layout.has_in_dim("lane") or layout.in_dim_size("lane") != target.lanes:
        warp = "one NVIDIA warp" if target.backend == "cuda" else f"one {target.arch} wavefront"
        other = (f"; a {layout.in_dim_size('lane')}-lane layout needs a target of that many lanes (target=...)"
                 if layout.has_in_dim("lane") and layout.in_dim_size("lane") in (32, 64) else "")
        raise LayoutError(f"{name}: needs a 'lane' in dim of size {target.lanes} ({warp}){other}")
    if layout.has_in_dim("block") and layout.in_dim_size("block") != 1:
        raise LayoutError(f"{name}: 'block' must have size 1 (analyze one CTA: take the sublayout without block)")


def check_shared(layout: object, name: str, out_dims: dict[str, int]) -> LinearLayout:
    """A shared LinearLayout over the same tensor: ``offset`` (and a size-1 ``block``) -> out_dims, invertible.

    Returned with its out dims in the order of ``out_dims``.
    """
    if not isinstance(layout, LinearLayout):
        raise not_a_layout(layout, name)
    if not layout.has_in_dim("offset"):
        raise LayoutError(f"{name}: a shared layout needs an 'offset' in dim")
    for d in layout.in_dim_names:
        if d not in ("offset", "block"):
            raise LayoutError(f"{name}: in dims must be 'offset' (and 'block'), got {quote(d)}")
    if layout.has_in_dim("block") and layout.in_dim_size("block") != 1:
        raise LayoutError(f"{name}: 'block' must have size 1 (one CTA)")
    if sorted(layout.out_dims.items()) != sorted(out_dims.items()):
        raise LayoutError(
            f"{name}: out dims {layout.out_dims} must equal the distributed layout's out dims {out_dims}"
        )
    layout = layout.transpose_outs(list(out_dims))
    cols = layout.flat_bases("offset")
    if len(cols) != layout.total_out_dim_size_log2 or f2.rank(cols) != len(cols):
        raise LayoutError(f"{name}: 'offset' must map one to one onto the tensor (an invertible shared layout)")
    return layout


@dataclass(frozen=True)
class SharedAccess:
    """One distributed layout's access to one shared layout, as element offsets (S^-1 ∘ L), on ``target``.

    ``permutation`` keeps the non-zero register bases (broadcast registers are not re-stored) and
    puts the ``vector_log2`` vector bases first; ``register_offsets`` are those kept bases' offsets,
    the first ``vector_log2`` being 1, 2, 4, ... Lane and warp offsets are unpermuted (zeros kept).
    """

    bitwidth: int
    vector_log2: int
    permutation: ColumnAction
    register_offsets: tuple[int, ...]
    lane_offsets: tuple[int, ...]
    warp_offsets: tuple[int, ...]
    free_registers: int = 0  #: kept registers (bit j: register_offsets[j]) whose data duplicates earlier ones
    free_lanes: int = 0  #: lane bits whose data duplicates (Triton's free variables)
    free_warps: int = 0  #: warp bits whose data duplicates
    target: Target = DEFAULT_TARGET  #: whose shared memory (banks, phases) the access runs on

    @property
    def vector_elements(self) -> int:
        """Elements each lane moves per instruction (2**v)."""
        return 1 << self.vector_log2

    @property
    def vector_bits(self) -> int:
        """Bits each lane moves per instruction (2**v * bitwidth): 8 .. 128."""
        return self.vector_elements * self.bitwidth

    @property
    def unit_bytes(self) -> int:
        """The aligned block one lane touches: its vector, at least one bank word (4 bytes)."""
        return self.target.shared.unit_bytes(self.vector_bits // 8)

    @property
    def lane_units(self) -> tuple[int, ...]:
        """Each lane basis's image in units (``unit_bytes`` blocks of shared memory)."""
        elem_shift = (self.bitwidth // 8).bit_length() - 1
        unit_shift = self.unit_bytes.bit_length() - 1
        return tuple((o << elem_shift) >> unit_shift for o in self.lane_offsets)

    @property
    def paired(self) -> bool:
        """An 8- or 16-byte access whose lane bit 0 or 1 moves no unit: lanes ``l`` and ``l ^ 1`` (or
        ``l ^ 2``) ask for one address. As a LOAD by all lanes its phases hold twice as many lanes; a
        store does not pair (ncu, H100: ``access_wavefronts(..., op="store")``). Only where the
        target's shared memory pairs loads (NVIDIA)."""
        return self.target.shared.pairs("load", self.unit_bytes, True) and 0 in self.lane_units[:2]

    @property
    def bank_groups(self) -> int:
        """Units one wavefront can serve without conflict: phase bytes / unit bytes (8, 16 or 32)."""
        return self.target.shared.phase_bytes // self.unit_bytes

    @property
    def phases(self) -> int:
        """Phases per instruction of a LOAD by every lane: lanes x unit bytes / phase bytes (NVIDIA: 1, 2 or
        4), halved when the lanes pair (``paired``). A store's are ``phases_of("store")``: stores never pair."""
        return self.phases_of("load")

    def phases_of(self, op: str = "load") -> int:
        """Phases per instruction when every lane takes part: ``phases`` for a load, the unpaired count
        for a store (stores never pair)."""
        if op not in ("load", "store"):
            raise LayoutError(f"op must be 'load' or 'store', got {quote(op)}")
        t = self.target
        return t.shared.phases(t.lanes, op, self.unit_bytes, paired=op == "load" and self.paired)

    def phase_masks(self, op: str = "load", *, all_active: bool = True) -> tuple[int, ...]:
        """Lane masks spanning the lanes of phase 0 (``Target.shared.phase_lanes``): pairing only for a
        load by all lanes."""
        t = self.target
        paired = op == "load" and all_active and self.paired
        return t.shared.phase_lanes(t.lanes, op, self.unit_bytes, paired=paired)

    @property
    def instructions_per_warp(self) -> int:
        """One instruction per value of the non-vector, non-broadcast register bits."""
        return 1 << (len(self.register_offsets) - self.vector_log2)

    @property
    def num_warps(self) -> int:
        """Every warp issues its instructions (broadcast warps included)."""
        return 1 << len(self.warp_offsets)

    @property
    def instructions(self) -> int:
        """Instructions over all warps."""
        return self.instructions_per_warp * self.num_warps


def phase_units(units: tuple[int, ...], masks: tuple[int, ...]) -> list[int]:
    """The unit image of each phase lane mask: the XOR of the lane bases' ``units`` its bits select."""
    out = []
    for mask in masks:
        u, i = 0, 0
        while mask:
            if mask & 1:
                u ^= units[i]
            mask >>= 1
            i += 1
        out.append(u)
    return out


def _offsets(solve: Callable[[int], int | None], flat: tuple[int, ...]) -> tuple[int, ...]:
    """S^-1 of each flattened tensor vector: the element offset (S invertible)."""
    return tuple(solve(x) for x in flat)  # type: ignore[misc]


@functools.lru_cache(maxsize=1024)
def _free_masks(layout: LinearLayout) -> Mapping[str, int]:
    """``layout.free_variable_masks()``, cached: the swizzle search costs one side against many shared
    layouts. A read-only view, so no caller can change the cached answer."""
    return MappingProxyType(layout.free_variable_masks())


@checked
def shared_access(
    shared_layout: LinearLayout,
    distributed_layout: LinearLayout,
    dtype: DTypeLike,
    *,
    max_vector_bits: int = 128,
    target: Target | str | None = None,
) -> SharedAccess:
    """The access of ``distributed_layout`` to ``shared_layout`` on ``target`` (default: the default
    target; its lanes per warp): offsets and the widest vector.

    ``dtype``: the element type (any spelling of :func:`linear_layouts.core.element_type.element_type`),
    ``bitwidth`` bits wide. The vector is the largest ``2**v`` (``2**v * bitwidth <= max_vector_bits``) for which
    ``cvt = S^-1 ∘ L`` without its broadcast registers is, after a register permutation, divisible
    on the left by the identity tile ``register -> offset`` of size ``2**v`` (paper §5.3, Thm 5.1).
    A pure function of immutable values: answers are cached.
    """
    bitwidth = element_type(dtype).bits
    if isinstance(max_vector_bits, bool) or not isinstance(max_vector_bits, int) or max_vector_bits < bitwidth \
            or max_vector_bits & (max_vector_bits - 1):
        raise LayoutError(f"max_vector_bits must be a power of two >= bitwidth, got {quote(max_vector_bits)}")
    for name, layout in (("distributed_layout", distributed_layout), ("shared_layout", shared_layout)):
        if not isinstance(layout, LinearLayout):
            raise LayoutError(f"{name} must be a LinearLayout, got {type(layout).__name__}")
    return _shared_access(shared_layout, distributed_layout, bitwidth, max_vector_bits, resolve(target))


@functools.lru_cache(maxsize=8192)
def _shared_access(shared_layout: LinearLayout, distributed_layout: LinearLayout, bitwidth: int,
                   max_vector_bits: int, target: Target) -> SharedAccess:
    dist = check_distributed(distributed_layout, "distributed_layout", target)
    shared = check_shared(shared_layout, "shared_layout", dist.out_dims)
    return _access_from_columns(tuple(shared.flat_bases("offset")), dist, bitwidth, max_vector_bits, target)


@checked
def access_from_columns(columns: tuple[int, ...], distributed_layout: LinearLayout, dtype: DTypeLike = None,
                        max_vector_bits: int = 128, *, target: Target | str | None = None,
                        bitwidth: int | None = None) -> SharedAccess:
    """:func:`shared_access` for the shared layout whose offset bit ``i`` holds the flattened tensor vector
    ``columns[i]`` (out dims in ``distributed_layout``'s order, the first least significant), elements of
    ``dtype`` (``bitwidth=``, their width in bits, is its old name).

    Requires: ``columns`` a basis of the tensor (an invertible shared layout).
    Callers that build shared layouts (the optimal swizzle's candidates) cost them without building them.
    """
    bits = dtype_argument(dtype, bitwidth=bitwidth).bits
    return _access_from_columns(tuple(columns), distributed_layout, bits, max_vector_bits, resolve(target))


@functools.lru_cache(maxsize=8192)
def _access_from_columns(columns: tuple[int, ...], distributed_layout: LinearLayout, bitwidth: int,
                         max_vector_bits: int, target: Target) -> SharedAccess:
    dist = check_distributed(distributed_layout, "distributed_layout", target)
    solve = f2.solver(columns)
    regs = dist.flat_bases("register", missing_ok=True)
    kept = [i for i, r in enumerate(regs) if r != 0]
    reg_off = _offsets(solve, tuple(regs[i] for i in kept))
    lane_off = _offsets(solve, dist.flat_bases("lane"))
    warp_off = _offsets(solve, dist.flat_bases("warp", missing_ok=True))

    # cvt = S^-1 ∘ L (kept registers permuted, lanes, warps -> offset) is divisible on the left by the
    # tile id_{2**v}(register -> offset) iff registers 0..v-1 (after the permutation) have the offsets
    # 1, 2, .., 2**(v-1) and every other basis has zero low v bits (then the quotient is the rest >> v;
    # the same as ``divide_left``, without building the layouts)
    where = {o: j for j, o in enumerate(reg_off)}
    v = min((max_vector_bits // bitwidth).bit_length() - 1, len(kept))
    while v > 0:
        vec = [where.get(1 << i) for i in range(v)]
        if None not in vec:
            order = vec + [j for j in range(len(kept)) if j not in vec]  # type: ignore[operator]
            low = (1 << v) - 1
            rest = [reg_off[j] for j in order[v:]] + list(lane_off) + list(warp_off)
            if not any(o & low for o in rest):
                break
        v -= 1
    if v == 0:
        order = list(range(len(kept)))
    perm = ColumnAction([kept[j] for j in order], "register", len(regs))
    free = _free_masks(dist)
    free_regs = sum(1 << j for j, r in enumerate(perm.action) if free.get("register", 0) >> r & 1)
    return SharedAccess(bitwidth, v, perm, tuple(reg_off[j] for j in order), lane_off, warp_off,
                        free_regs, free.get("lane", 0), free.get("warp", 0), target)


def wavefronts_per_phase(access: SharedAccess, *, op: str = "load") -> int:
    """Wavefronts one phase of one instruction takes: 2**k with k as in the module doc (Lemma 9.4);
    ``op="store"``: the unpaired phases (stores never pair)."""
    units = phase_units(access.lane_units, access.phase_masks(op))
    groups = access.bank_groups
    return 1 << (f2.rank(units) - f2.rank([u & (groups - 1) for u in units]))


@checked
def wavefronts(
    shared_layout: LinearLayout,
    distributed_layout: LinearLayout,
    dtype: DTypeLike,
    *,
    op: str = "load",
    skip_duplicates: bool = False,
    target: Target | str | None = None,
) -> int:
    """Total shared-memory wavefronts to load (or store) the whole tensor over all warps on ``target``
    (default: the default target): what ncu's ``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld``
    (``_st``) reports for one CTA.

    ``= active phases * 2**k * instructions`` (module doc), with the pairing rule: an 8- or 16-byte
    load by all lanes whose lane bit 0 or 1 moves no unit (every lane asks for lane ``l ^ 1``'s or
    ``l ^ 2``'s address) has phases of twice as many lanes (``bank_simulator``); stores never pair.

    ``skip_duplicates=False`` (default): every lane of every warp stores every non-zero register.
    ``skip_duplicates=True``: registers, lanes and warps holding duplicated data (Triton's free
    variables) do not store, as the code generator emits it (free registers skipped, free lanes and
    warps predicated off; a predicated-off lane still occupies its phase). Loads ignore it: every lane
    needs its data.
    """
    if op not in ("load", "store"):
        raise LayoutError(f"op must be 'load' or 'store', got {quote(op)}")
    if not isinstance(skip_duplicates, bool):
        raise LayoutError(f"skip_duplicates must be a bool, got {quote(skip_duplicates)}")
    access = shared_access(shared_layout, distributed_layout, dtype, target=target)
    return access_wavefronts(access, op=op, skip_duplicates=skip_duplicates and op == "store")


def _popcount(x: int) -> int:
    return bin(x).count("1")


def access_wavefronts(access: SharedAccess, *, op: str = "load", skip_duplicates: bool = False) -> int:
    """Total wavefronts of an access over all warps: active phases * 2**k * instructions.

    Every lane of every warp takes part (a load, or a store from every lane) unless
    ``skip_duplicates``: the access's free registers are skipped and its free lanes and warps
    predicated off (the code generator's store). Pairing (``op="load"`` only, lane bit 0 or 1 moving
    no unit, 8- or 16-byte vectors, all lanes active) doubles the lanes of a phase; stores never pair."""
    if op not in ("load", "store"):
        raise LayoutError(f"op must be 'load' or 'store', got {quote(op)}")
    return _access_wavefronts(access, op, bool(skip_duplicates))


@functools.lru_cache(maxsize=8192)
def _access_wavefronts(access: SharedAccess, op: str, skip: bool) -> int:
    """``access_wavefronts`` of a checked request, cached (the swizzle search costs each access of
    its candidates on both sides, and the plans cost the chosen ones again)."""
    units_of = access.lane_units
    free_lanes = access.free_lanes if skip else 0
    lane_bits = access.target.lane_bits
    # stores, and accesses with predicated-off lanes, do not pair: phases of 128 bytes of lanes then
    masks = access.phase_masks(op, all_active=not free_lanes)
    if masks == tuple(1 << i for i in range(len(masks))):  # phases of consecutive lanes (NVIDIA's)
        phase_bits = len(masks)
        low = [units_of[i] for i in range(phase_bits) if not free_lanes >> i & 1]
        high = lane_bits - phase_bits - _popcount(free_lanes >> phase_bits)
    else:  # phase 0 spans lane combinations (AMD's 16-byte reads): its active lanes, and the active phases
        active = [1 << i for i in range(lane_bits) if not free_lanes >> i & 1]
        inside = f2.intersection(list(masks), active)
        low = phase_units(units_of, tuple(inside))
        high = len(active) - len(inside)
    groups = access.bank_groups
    k = f2.rank(low) - f2.rank([u & (groups - 1) for u in low])
    register_bits = len(access.register_offsets) - access.vector_log2
    warp_bits = len(access.warp_offsets)
    if skip:
        register_bits -= _popcount(access.free_registers >> access.vector_log2)
        warp_bits -= _popcount(access.free_warps)
    return 1 << (high + k + register_bits + warp_bits)


@checked
def bank_conflicts(shared_layout: LinearLayout, distributed_layout: LinearLayout, dtype: DTypeLike, *,
                   target: Target | str | None = None) -> int:
    """Extra wavefronts per phase: wavefronts / (instructions * phases) - 1; 0 means conflict-free.

    This is the quantity Triton's ``bankConflictsMemDesc`` (Gluon ``get_shared_bank_conflicts``)
    estimates. Two departures, both confirmed with ncu (benchmarks/results/bank_conflicts_vs_triton.md,
    wavefronts_vs_ncu.md): below 4 bytes per lane Triton ignores the sub-word offset bits, and for
    paired 8/16-byte accesses (``SharedAccess.paired``) the phases here are a load's, with twice
    as many lanes as Triton's (stores do not pair: ``wavefronts_per_phase(access, op="store")``).
    """
    return wavefronts_per_phase(shared_access(shared_layout, distributed_layout, dtype, target=target)) - 1
