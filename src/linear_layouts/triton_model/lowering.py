"""What Triton's own code generation (NVIDIA backend, Triton 3.9) does with shared memory for one TTGIR op,
instruction by instruction, and the wavefronts it costs: a model written from Triton's lowering rules
and checked against the PTX Triton emits (``tests/kernels``). The wavefronts come from THE bank model
of the package (``analysis.bank_simulator``, validated with ncu) applied to every instruction's lane
addresses.

* ``convert_layout`` (Triton's ``minimalCvtLayout`` decides): no-op, register permutation, warp shuffle
  (lanes only, at most one register/lane transposition), else shared memory through the scratch layout
  of Triton's *generic swizzling* (``optimalSwizzling``: vector, bank, segment and reps bases; the
  instruction pair among ``ld/st.shared.v4``, ``ldmatrix``/``stmatrix`` and their ``.trans`` forms that
  minimizes bank conflicts), one store + barrier + load per rep.
* ``local_load`` / ``local_store`` / ``local_alloc %x``: ``ldmatrix`` / ``stmatrix`` (plain, then
  transposed) when the register-to-offset map allows it, else vectorized ``ld/st.shared``
  (``lowerLdStShared``: the widest register run that is contiguous in shared memory, at most 16 bytes).

The instructions Triton may pick are the ``target``'s ISA features (default: the default target, sm_90):
``ldmatrix`` from sm_75, ``stmatrix`` from sm_90 (``Target.has``). Triton's AMD lowering is not modelled:
an AMD target is a LayoutError.

Example (a 64x64 fp16 transpose, 4 warps, sm_90): st.shared.v4 then ldmatrix.x4.trans, conflict-free:

>>> from linear_layouts.layouts import BlockedLayout
>>> a = BlockedLayout([1, 8], [8, 4], [4, 1], [1, 0]).to_linear([64, 64])
>>> b = BlockedLayout([8, 1], [4, 8], [1, 4], [0, 1]).to_linear([64, 64])
>>> p = convert_lowering(a, b, 16)
>>> p.kind, [(s.instruction, s.count, s.wavefronts) for s in p.stores + p.loads]
('shared memory', [('st.shared.v4', 16, 64), ('ldmatrix.x4.trans', 16, 64)])
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from linear_layouts.core import f2
from linear_layouts.core.arguments import checked
from linear_layouts.analysis.broadcast import zero_bases_mask, zero_basis_indices
from linear_layouts.analysis.bank_simulator import instruction_wavefronts, matrix_instruction_wavefronts
from linear_layouts.analysis.conversion import conversion_dims
from linear_layouts.layouts.base import order_from_bases
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import ColumnAction, LinearLayout, divide_left, divide_right
from linear_layouts.core.limits import MAX_ELEMENTS, check_layout_size
from linear_layouts.target import LDMATRIX, STMATRIX, Target, resolve

__all__ = [
    "Instructions", "SharedLowering", "convert_lowering", "local_lowering", "reduce_lowering", "reduce_lowering_smem",
    "scan_lowering", "layout_order",
    "optimal_swizzling",
    "optimal_swizzling_ldst", "reg_perm_for_divide", "ldst_instructions",
    "matrix_instructions", "histogram_lowering", "async_copy_lowering", "tensormap_create_lowering",
    "atomic_result_lowering", "TENSORMAP_RANK2_LDS", "TENSORMAP_RANK2_STS",
]

REG, LANE, WARP, BLOCK, OFFSET = "register", "lane", "warp", "block", "offset"
NO_OP, REGISTERS, SHUFFLE, SHARED, NOT_MODELED = (
    "no-op", "register permutation", "warp shuffle", "shared memory", "not modeled")


@dataclass(frozen=True)
class Instructions:
    """One kind of shared-memory instruction an op issues: ``instruction`` (``st.shared.v4``,
    ``ldmatrix.x4.trans``, ...), ``op`` (load / store), ``bytes`` per lane (per row for matrices),
    ``count`` over all warps of one CTA and the ``wavefronts`` they cost."""

    instruction: str
    op: str
    bytes: int
    count: int
    wavefronts: int

    @property
    def per_warp_count(self) -> int:
        return self.count


@dataclass(frozen=True)
class SharedLowering:
    """Triton's lowering of one op: ``kind``, the shared-memory ``stores`` and ``loads`` it issues per CTA
    (one execution), the shared ``layout`` (offset -> tensor; for a conversion Triton's scratch layout
    with its ``reps`` rounds as the top offset bits: one round holds ``1 / reps`` of the tensor)."""

    kind: str
    stores: tuple[Instructions, ...] = ()
    loads: tuple[Instructions, ...] = ()
    layout: LinearLayout | None = field(default=None, repr=False)
    reps: int = 1
    note: str = ""
    #: bytes of the scratch buffer Triton's allocation gives the op (``Allocation.cpp``): one round of a
    #: conversion's swizzled scratch, the largest of a reduction's rounds (Triton 3.6: the source with its
    #: axis resized to the warps along it), a scan's chunk totals
    scratch_bytes: int = 0

    @property
    def store_wavefronts(self) -> int:
        return sum(s.wavefronts for s in self.stores)

    @property
    def load_wavefronts(self) -> int:
        return sum(s.wavefronts for s in self.loads)

    @property
    def wavefronts(self) -> int:
        return self.store_wavefronts + self.load_wavefronts


# --------------------------------------------------------------------------------------------------
# small helpers on flattened bases
# --------------------------------------------------------------------------------------------------

def _unflatten(vectors: list[int]) -> list[list[int]]:
    return [[v] for v in vectors]


def reg_perm_for_divide(a: LinearLayout, b: LinearLayout, *, left: bool) -> ColumnAction | None:
    """The register permutation of ``a`` that puts ``b``'s register bases first (``left``) or last, so
    that ``a`` may divide by ``b`` (Triton's ``regPermForDivide``); None when a basis of ``b`` is missing."""
    a_regs = a.bases[REG]
    names = a.out_dim_names
    quot = {n: a.out_dim_size_log2(n) - (b.out_dim_size_log2(n) if b.has_out_dim(n) else 0) for n in names}
    b_regs = []
    for vec in b.bases.get(REG, []):
        full = [vec[b.out_dim_names.index(n)] if b.has_out_dim(n) else 0 for n in names]
        if not left:
            full = [x << quot[n] for x, n in zip(full, names)]
        b_regs.append(full)
    used = [False] * len(a_regs)
    picked = []
    for vec in b_regs:
        j = next((j for j, av in enumerate(a_regs) if not used[j] and list(av) == vec), None)
        if j is None:
            return None
        used[j] = True
        picked.append(j)
    rest = [j for j in range(len(a_regs)) if not used[j]]
    return ColumnAction(picked + rest if left else rest + picked, REG, len(a_regs))


# --------------------------------------------------------------------------------------------------
# generic swizzling (Triton's GenericSwizzling: optimalSwizzling / optimalSwizzlingLdSt)
# --------------------------------------------------------------------------------------------------
def _compute_segment(bank_src: list[int], bank_dst: list[int], dim: int, length: int) -> list[int]:
    set_src, set_dst = set(bank_src) - {0}, set(bank_dst) - {0}
    segment = [1 << b for b in range(dim) if (1 << b) not in set_src and (1 << b) not in set_dst]
    if len(segment) >= length:
        return segment[:length]
    a = sorted(v for v in set_src if v not in set_dst)
    b = sorted(v for v in set_dst if v not in set_src)
    if len(a) > len(b):
        a, b = b, a
    conflicts = min(max(0, length - len(a) - len(segment)), len(a))
    segment += [a[i] ^ b[i] for i in range(conflicts, len(a))]
    segment += a[:conflicts] + b[:conflicts]
    return segment[:length]


def _build_reps(src: LinearLayout, dst: LinearLayout, smem: LinearLayout, leave_reps: int = 0) -> LinearLayout:
    """``smem`` with the segment bases that are registers on both sides moved to a ``reps`` dim, but the
    first ``leave_reps`` of them (``buildReps``: an ldmatrix / stmatrix pair keeps two, for its .x4)."""
    src_regs, dst_regs = set(src.flat_bases(REG, missing_ok=True)), set(dst.flat_bases(REG, missing_ok=True))
    segment, reps = [], []
    for s in smem.flat_bases("segment", missing_ok=True):
        if s in src_regs and s in dst_regs and leave_reps > 0:
            leave_reps -= 1
            segment.append(s)
        else:
            (reps if s in src_regs and s in dst_regs else segment).append(s)
    bases = {"vector": smem.bases["vector"], "bank": smem.bases["bank"],
             "segment": _unflatten(segment), "reps": _unflatten(reps)}
    return LinearLayout(bases, smem.out_dims)


def _swizzle_core(src: LinearLayout, dst: LinearLayout, bits: int, vbasis: list[int], tile_src: list[int],
                  tile_dst: list[int], out_dims: dict[str, int], leave_reps: int = 0) -> LinearLayout:
    """The shared layout (vector, bank, segment, reps -> tensor) for a vector and the lanes of one
    wavefront on each side (the core ``optimalSwizzling``); src / dst are flattened; ``leave_reps``:
    ``_build_reps``'."""
    dim = src.total_out_dim_size_log2
    bank_src, bank_dst = list(vbasis) + list(tile_src), list(vbasis) + list(tile_dst)
    len_bank = min((1024 // ((1 << len(vbasis)) * bits)).bit_length() - 1, dim - len(vbasis))
    len_segment = dim - len_bank - len(vbasis)
    sbasis = _compute_segment(bank_src, bank_dst, dim, len_segment)
    bbasis = f2.unit_complement(list(vbasis) + sbasis, dim)
    one = LinearLayout({"vector": _unflatten(list(vbasis)), "bank": _unflatten(bbasis),
                        "segment": _unflatten(sbasis)}, src.out_dims)
    return _build_reps(src, dst, one, leave_reps).reshape_outs(list(out_dims.items()))


def _log_bank_conflicts(tile_src: list[int], tile_dst: list[int], smem: LinearLayout, bits: int) -> tuple[int, int]:
    """(read, write) log2 bank conflicts of the wavefront tiles against ``smem`` (``logBankConflicts``)."""
    flat = smem.flatten_outs()
    bases = list(flat.flat_bases())
    zero = bases[:max(0, (32 // bits).bit_length() - 1)] if bits < 32 else []
    bank_zero = zero + list(flat.flat_bases("segment", missing_ok=True))
    dim = smem.total_out_dim_size_log2
    return (len(f2.intersection_by_complements(bank_zero, tile_dst, dim)),
            len(f2.intersection_by_complements(bank_zero, tile_src, dim)))


def _swizzling_tile(a: LinearLayout, b: LinearLayout, n_reg_a: int, n_reg_b: int,
                    lane_tile_a: tuple[int, ...], lane_tile_b: tuple[int, ...]) -> list[int] | None:
    """The contiguous tile (register bases then lane bases) both instructions can use (``optimalSwizzlingTile``)."""
    if n_reg_a < n_reg_b:
        return _swizzling_tile(b, a, n_reg_b, n_reg_a, lane_tile_b, lane_tile_a)
    dim = a.total_out_dim_size_log2
    cvt = b.invert_and_compose(a)
    reg_a, reg_b, lane_a, lane_b = (list(x.flat_bases(d, missing_ok=True))
                                    for x, d in ((a, REG), (b, REG), (a, LANE), (b, LANE)))
    vbasis = f2.intersection_by_complements(reg_a, reg_b, dim)
    if len(vbasis) < n_reg_b:
        return None
    vbasis = vbasis[:n_reg_b]
    tile_a = [lane_a[i] for i in lane_tile_a]
    tile_b = [lane_b[i] for i in lane_tile_b]
    if 0 in tile_a or 0 in tile_b:
        return None
    for i in range(n_reg_a - n_reg_b):
        if cvt.get_basis(LANE, lane_tile_b[i], REG) == 0:
            return None
    for ia, ib in zip(lane_tile_a, lane_tile_b[len(lane_tile_b) - len(lane_tile_a):]):
        if cvt.get_basis(LANE, ib, LANE) != (1 << ia):
            return None
    return vbasis + tile_b


@checked
def optimal_swizzling_ldst(src: LinearLayout, dst: LinearLayout, bits: int) -> LinearLayout:
    """Triton's ``optimalSwizzlingLdSt``: the scratch layout when both sides use ``ld/st.shared``
    (``src`` / ``dst`` without broadcast registers)."""
    a, b = src.flatten_outs(), dst.flatten_outs()
    reg_a, reg_b, lane_a, lane_b = (list(x.flat_bases(d, missing_ok=True))
                                    for x, d in ((a, REG), (b, REG), (a, LANE), (b, LANE)))
    dim = src.total_out_dim_size_log2
    vbasis = f2.intersection_by_complements(reg_a, reg_b, dim)[:(128 // bits).bit_length() - 1]
    src_fills: bool | None = None
    if (1 << len(vbasis)) * bits < 32:
        per_bank = (32 // bits).bit_length() - 1
        warp_a = [w for w in list(a.flat_bases(WARP, missing_ok=True)) if w]
        warp_b = [w for w in list(b.flat_bases(WARP, missing_ok=True)) if w]
        rest_a = [r for r in reg_a if r not in vbasis]
        rest_b = [r for r in reg_b if r not in vbasis]
        reg_a_warp = f2.intersection_by_complements(rest_a, warp_b, dim)
        reg_b_warp = f2.intersection_by_complements(rest_b, warp_a, dim)
        if len(reg_a_warp) == len(reg_b_warp) and reg_a_warp:
            src_fills = min(reg_a_warp) < min(reg_b_warp)
            largest = reg_a_warp if src_fills else reg_b_warp
        else:
            src_fills = len(reg_a_warp) > len(reg_b_warp)
            largest = reg_a_warp if src_fills else reg_b_warp
        vbasis = vbasis + largest
        if len(vbasis) < per_bank:
            vbasis += f2.intersection_by_complements(warp_a, warp_b, dim)
        i = 0
        while len(vbasis) < per_bank and (i < len(warp_a) or i < len(warp_b)):
            if i < len(warp_a) and warp_a[i] not in vbasis:
                vbasis.append(warp_a[i])
            if len(vbasis) < per_bank and i < len(warp_b) and warp_b[i] not in vbasis:
                vbasis.append(warp_b[i])
            i += 1
        vbasis = vbasis[:per_bank]
    log2_vec = max(1, ((1 << len(vbasis)) * bits) // 32).bit_length() - 1
    tile_a = lane_a[:len(lane_a) - log2_vec]
    tile_b = lane_b[:len(lane_b) - log2_vec]
    smem = _swizzle_core(a, b, bits, vbasis, tile_a, tile_b, src.out_dims)
    if log2_vec < 2:
        banks = list(smem.flatten_outs().flat_bases("bank", missing_ok=True))
        in_a = [i for i, r in enumerate(banks) if r in reg_a]
        in_b = [i for i, r in enumerate(banks) if r in reg_b]
        if src_fills is True:
            order = in_a
        elif src_fills is False:
            order = in_b
        else:
            order = in_a if len(in_a) > len(in_b) else in_b
        order = order + [i for i in range(len(banks)) if i not in order]
        smem = ColumnAction(order, "bank", len(banks)).apply(smem)
    return smem


#: (lanes contiguous in the 16-byte unit, lanes addressing the 8 rows of a wavefront) per instruction
#: family: ld/st.shared.v4, ldmatrix/stmatrix, ldmatrix/stmatrix.trans (Triton's ``getSrcDstTiles``)
LDST_TILE = ((), (0, 1, 2))
MATRIX_TILE = ((0, 1), (2, 3, 4))
MATRIX_TRANS_TILE = ((2, 3, 4), (0, 1))


def _nvidia(target: Target | None) -> Target:
    """``target`` (default: the default target), which must be an NVIDIA one: the model is Triton's NVIDIA backend."""
    target = resolve(target)
    if target.backend != "cuda":
        raise LayoutError(f"target: Triton's lowering is modelled for NVIDIA targets only, not {target.arch}")
    return target


def instruction_tiles(bits: int, target: Target | None = None) -> tuple[list[tuple], list[tuple]]:
    """(store-side, load-side) instruction tiles Triton considers on ``target``: ld/st.shared always;
    ldmatrix and stmatrix where the target has them (sm_75, sm_90) for elements of at most 32 bits;
    their ``.trans`` forms for 16-bit elements."""
    target = _nvidia(target)
    src, dst = [LDST_TILE], [LDST_TILE]
    ld, st = target.has(LDMATRIX), target.has(STMATRIX)
    if bits <= 32:
        if st:
            src.append(MATRIX_TILE)
        if ld:
            dst.append(MATRIX_TILE)
    if bits == 16:
        if st:
            src.append(MATRIX_TRANS_TILE)
        if ld:
            dst.append(MATRIX_TRANS_TILE)
    return src, dst


@checked
def optimal_swizzling(src: LinearLayout, dst: LinearLayout, bits: int,
                      target: Target | None = None) -> tuple[LinearLayout, tuple[int, int]]:
    """Triton's ``optimalSwizzling`` with the target's instruction tiles: (scratch layout, (store tile
    index, load tile index)); 0 is ld/st.shared, 1 ldmatrix/stmatrix, 2 their ``.trans`` forms."""
    a, b = src.flatten_outs(), dst.flatten_outs()
    total = (128 // bits).bit_length() - 1
    src_tiles, dst_tiles = instruction_tiles(bits, target)
    candidates = []
    for i, ts in enumerate(src_tiles):
        for j, td in enumerate(dst_tiles):
            tile = _swizzling_tile(a, b, total - len(ts[0]), total - len(td[0]), ts[0], td[0])
            if tile is not None:
                candidates.append(((i, j), tile))
    reg_a, reg_b, lane_a, lane_b = (list(x.flat_bases(d, missing_ok=True))
                                    for x, d in ((a, REG), (b, REG), (a, LANE), (b, LANE)))

    def tile_of(instr: tuple, regs: list[int], lanes: list[int], vbasis: list[int]) -> list[int] | None:
        need = 3 - len(instr[1])
        tile = [r for r in regs if r not in vbasis][:need]
        if len(tile) < need:
            return None
        return tile + [lanes[i] for i in instr[1]]

    options = []
    for (i, j), vbasis in candidates:
        ts = tile_of(src_tiles[i], reg_a, lane_a, vbasis)
        td = tile_of(dst_tiles[j], reg_b, lane_b, vbasis)
        if ts is None or td is None:
            continue
        # an ldmatrix / stmatrix pair keeps two reps bases in the segment for its .x4 (Triton's leaveReps)
        leave = min(len(src_tiles[i][0]) + len(src_tiles[i][1]), len(dst_tiles[j][0]) + len(dst_tiles[j][1])) - 3
        smem = _swizzle_core(a, b, bits, vbasis, ts, td, src.out_dims, leave)
        read, write = _log_bank_conflicts(ts, td, smem, bits)
        options.append((read + write, -smem.in_dim_size("reps"), len(options), smem, (i, j)))
    if not options:
        return optimal_swizzling_ldst(src, dst, bits), (0, 0)
    best = min(options, key=lambda o: o[:3])
    return best[3], best[4]


# --------------------------------------------------------------------------------------------------
# instructions and their wavefronts
# --------------------------------------------------------------------------------------------------
def _vector_name(op: str, nbytes: int) -> str:
    base = "st.shared" if op == "store" else "ld.shared"
    return {1: f"{base}.b8", 2: f"{base}.b16", 4: f"{base}.b32", 8: f"{base}.v2", 16: f"{base}.v4"}[nbytes]


def _offsets(cvt: LinearLayout, regs: np.ndarray, lanes: np.ndarray, warps: np.ndarray) -> np.ndarray:
    ins = {REG: regs, LANE: lanes, WARP: warps}
    ins = {d: v for d, v in ins.items() if cvt.has_in_dim(d)}
    out = cvt.apply_array(ins)
    return out[cvt.out_dim_names[0]]


@checked
def ldst_instructions(cvt: LinearLayout, bits: int, op: str, *, max_vector_elements: int | None = None,
                      owners_only: bool = False) -> Instructions:
    """``lowerLdStShared``: ``cvt`` maps (register, lane, warp) to element offsets; the widest vector of
    registers contiguous in offsets (at most 16 bytes), one instruction per vector per warp, every
    lane active (stores too). Wavefronts from the bank simulator.

    ``owners_only``: the threads that hold a copy of another thread's data (a lane or warp bit whose
    basis is zero is set) do not execute the instruction -- ptxas sank it behind the early exit of
    those threads (``convert_lowering``'s ``tail``); ``count`` stays the static one (every warp's code
    has it), ``wavefronts`` counts the executing lanes of the executing warps only."""
    check_layout_size(cvt, MAX_ELEMENTS, "ldst_instructions: cvt")  # one instruction simulated per warp and vector
    width = max_vector_elements or max(1, 128 // bits)
    v = width
    while v > 1:
        tile = LinearLayout.identity_1d(v, REG, cvt.out_dim_names[0])
        perm = reg_perm_for_divide(cvt, tile, left=True)
        if perm is not None and divide_left(perm.apply(cvt), tile) is not None:
            cvt = perm.apply(cvt)
            break
        v //= 2
    nbytes = max(1, v * bits // 8)
    regs = cvt.in_dim_size(REG, missing_ok=True)
    warps = cvt.in_dim_size(WARP, missing_ok=True)
    lanes = np.arange(cvt.in_dim_size(LANE))
    lane_free = zero_bases_mask(cvt, LANE) if owners_only else 0
    warp_free = zero_bases_mask(cvt, WARP) if owners_only else 0
    active = [not lane & lane_free for lane in range(len(lanes))] if lane_free else None
    count = wavefronts = 0
    for w in range(warps):
        for r in range(0, regs, v):
            count += 1
            if w & warp_free:
                continue
            starts = _offsets(cvt, np.full_like(lanes, r), lanes, np.full_like(lanes, w)) * bits // 8
            wavefronts += instruction_wavefronts([int(s) for s in starts], nbytes, op=op, active=active)
    return Instructions(_vector_name(op, nbytes), op, nbytes, count, wavefronts)


@checked
def matrix_instructions(cvt: LinearLayout, bits: int, op: str, *, transpose: bool) -> Instructions | None:
    """``lowerLdStMatrix``: ``ldmatrix`` / ``stmatrix`` (``.trans``) for ``cvt`` ((register, lane, warp)
    -> element offsets), or None when the layout does not fit the instruction. Each lane of the first
    8·x lanes gives one 16-byte row address; a matrix (8 rows) is one phase."""
    if (not transpose and bits > 32) or (transpose and bits != 16):
        return None
    check_layout_size(cvt, MAX_ELEMENTS, "matrix_instructions: cvt")  # one instruction simulated per warp and tile
    out = cvt.out_dim_names[0]
    store = op == "store"
    if not transpose:
        tile = LinearLayout.identity_1d(32 // bits, REG, out) * LinearLayout.identity_1d(4, LANE, out)
        full = tile * LinearLayout.identity_1d(8, LANE, "addr")
        perm_lanes = None
    else:
        tile = (LinearLayout.identity_1d(8, LANE, out) * LinearLayout.identity_1d(16 // bits, REG, out)).transpose_ins([REG, LANE])
        contig = (16 if store and bits == 8 else 32) // bits
        full = LinearLayout.identity_1d(contig, REG, "addr") * LinearLayout.identity_1d(4, LANE, "addr") * tile
        if cvt.in_dim_size(REG) < full.in_dim_size(REG):
            return None
        perm_lanes = ColumnAction([2, 3, 4, 0, 1], LANE, 5)
        cvt = perm_lanes.apply(cvt)
    perm = reg_perm_for_divide(cvt, tile, left=True)
    if perm is None:
        return None
    cvt = perm.apply(cvt)
    quot = divide_left(cvt, tile)
    if quot is None:
        return None
    zeros = LinearLayout({d: [[0] * len(tile.out_dim_names) for _ in tile.bases[d]] for d in tile.in_dim_names},
                         tile.out_dims, require_surjective=False)
    reps = zeros * quot
    if perm_lanes is not None:
        reps = perm_lanes.inverse().apply(reps)
    per_core = full.in_dim_size(REG)
    vec = min(128 // bits, reps.in_dim_size(REG)) // per_core
    if vec not in (1, 2, 4):
        return None
    full_vec = full * LinearLayout.identity_1d(vec, REG, "addr") * LinearLayout.identity_1d(1, WARP, "addr")
    addr_to_offset = full_vec.invert().compose(reps)
    addr = [b[0] for b in addr_to_offset.flatten_outs().bases["addr"]]
    warp_bases = list(reps.flat_bases(WARP, missing_ok=True))
    per_instr = full_vec.in_dim_size(REG)
    regs = reps.in_dim_size(REG)
    warps = 1 << len(warp_bases)
    nbytes = bits // 8
    rows = 8 * vec
    lane_part = [f2.apply(addr, lane) for lane in range(rows)]
    count = wavefronts = 0
    for w in range(warps):
        wx = f2.apply(warp_bases, w)
        for r in range(0, regs, per_instr):
            rx = reps.apply({REG: r, LANE: 0, WARP: 0})[reps.out_dim_names[0]]
            starts = [((p ^ wx ^ rx) * nbytes) for p in lane_part]
            wavefronts += matrix_instruction_wavefronts(starts)
            count += 1
    name = ("stmatrix" if store else "ldmatrix") + f".x{vec}" + (".trans" if transpose else "")
    return Instructions(name, op, 16, count, wavefronts)


def _dist(layout: LinearLayout) -> LinearLayout:
    """The (register, lane, warp) sublayout (one CTA)."""
    dims = [d for d in (REG, LANE, WARP) if layout.has_in_dim(d)]
    return layout.sublayout(dims, layout.out_dim_names)


def _side(cvt: LinearLayout, bits: int, op: str, index: int, owners_only: bool = False) -> Instructions:
    if index == 0:
        return ldst_instructions(cvt, bits, op, owners_only=owners_only)
    result = matrix_instructions(cvt, bits, op, transpose=index == 2)
    if result is None:  # pragma: no cover - the tile choice guarantees the fit
        return ldst_instructions(cvt, bits, op)
    return result


def _merge(items: list[Instructions], reps: int) -> tuple[Instructions, ...]:
    out: dict[str, Instructions] = {}
    for it in items:
        prev = out.get(it.instruction)
        count, wf = it.count * reps, it.wavefronts * reps
        if prev is not None:
            count, wf = count + prev.count, wf + prev.wavefronts
        out[it.instruction] = Instructions(it.instruction, it.op, it.bytes, count, wf)
    return tuple(out.values())


def _mixed_transpositions(src: LinearLayout, dst: LinearLayout) -> int:
    """Register bits of ``dst`` that come from lane bits of ``src`` (the register/lane swaps a warp-shuffle
    conversion needs), counted on ``src^-1 ∘ dst``."""
    comp = dst.invert_and_compose(src)
    return sum(1 for v in comp.bases[REG] if comp.has_out_dim(LANE) and v[comp.out_dim_names.index(LANE)])


@checked
def convert_lowering(src: LinearLayout, dst: LinearLayout, bits: int, target: Target | None = None, *,
                     tail: bool = False) -> SharedLowering:
    """Triton's lowering of ``convert_layout`` from ``src`` to ``dst`` (``bits``-bit elements, on ``target``).

    ``tail``: the conversion is the kernel's last shared-memory op and its result only feeds the global
    stores that end the kernel. Triton predicates those stores off in the threads that hold copies
    (zero lane / warp bases of ``dst``); ptxas turns that predicate into an early ``EXIT`` and sinks the
    ``ld.shared`` behind it, so only the owning threads load (sm_90 SASS: ``@!P0 EXIT; LDS; STG``)."""
    target = _nvidia(target)
    if bits < 8:
        bits = 8
    dims = conversion_dims(src, dst)
    if not dims or src == dst:
        return SharedLowering(NO_OP)
    if dims == (REG,):
        return SharedLowering(REGISTERS)
    if BLOCK in dims:
        return SharedLowering(NOT_MODELED, note="cross-CTA conversion (distributed shared memory)")
    if WARP not in dims and _mixed_transpositions(src, dst) < 2:
        return SharedLowering(SHUFFLE, note="warp shuffles (no shared memory)")
    a = _dist(src).remove_zero_bases_along_dim(REG)
    b = _dist(dst).remove_zero_bases_along_dim(REG)
    smem, (i_src, i_dst) = optimal_swizzling(a, b, bits, target)
    n_reps = smem.in_dim_size("reps")
    reps = LinearLayout.identity_1d(n_reps, REG, "reps")
    sides = []
    for layout, index, op in ((a, i_src, "store"), (b, i_dst, "load")):
        total = layout.invert_and_compose(smem)
        perm = reg_perm_for_divide(total, reps, left=False)
        if perm is None:  # pragma: no cover - the reps are register bases by construction
            raise LayoutError("convert: the reps of the scratch layout are not registers")
        cvt = divide_right(perm.apply(total), reps)
        if cvt is None:  # pragma: no cover
            raise LayoutError("convert: cannot divide out the reps")
        cvt = cvt.reshape_outs([(OFFSET, cvt.total_out_dim_size)])
        sides.append(_side(cvt, bits, op, index, owners_only=tail and op == "load"))
    scratch = smem.reshape_ins([(OFFSET, smem.total_in_dim_size)])  # the reps as the top offset bits
    return SharedLowering(SHARED, _merge([sides[0]], n_reps), _merge([sides[1]], n_reps), scratch, n_reps,
                          scratch_bytes=smem.total_out_dim_size // n_reps * bits // 8)


@checked
def local_lowering(distributed: LinearLayout, shared: LinearLayout, bits: int, op: str,
                   target: Target | None = None) -> SharedLowering:
    """Triton's lowering of ``local_load`` (``op="load"``) or ``local_store`` / ``local_alloc %x``
    (``"store"``) between a distributed layout and a shared layout (offset -> tensor): ``ldmatrix`` /
    ``stmatrix`` (plain, then ``.trans``) where they fit and ``target`` has them, else vectorized ``ld/st.shared``."""
    target = _nvidia(target)
    if bits < 8:
        bits = 8
    reg = _dist(distributed).remove_zero_bases_along_dim(REG)
    mem = shared.sublayout([OFFSET], shared.out_dim_names) if shared.has_in_dim(BLOCK) else shared
    cvt = reg.invert_and_compose(mem)
    if cvt.has_out_dim(BLOCK):
        cvt = cvt.sublayout(cvt.in_dim_names, [OFFSET])
    supported = target.has(STMATRIX if op == "store" else LDMATRIX)
    if supported:
        for transpose in (False, True):
            result = matrix_instructions(cvt, bits, op, transpose=transpose)
            if result is not None:
                side = (result,)
                return SharedLowering(SHARED, side if op == "store" else (), side if op == "load" else (), mem)
    result = ldst_instructions(cvt, bits, op)
    return SharedLowering(SHARED, (result,) if op == "store" else (), (result,) if op == "load" else (), mem)


# --------------------------------------------------------------------------------------------------
# reductions (Triton's linear-layout reduce lowering)
# --------------------------------------------------------------------------------------------------
def zero_bases_along(layout: LinearLayout, axis: int, dim: str) -> LinearLayout:
    """``dim``'s bases along ``axis`` zeroed, the remaining axis bases renumbered 1, 2, 4, .. in
    (register, lane, warp, block) order; the axis shrinks accordingly (``zeroBasesAlongDimAndReorder``)."""
    names = layout.out_dim_names
    bases = layout.bases
    if dim in bases:
        bases[dim] = [[0 if k == axis else x for k, x in enumerate(v)] for v in bases[dim]]
    nxt = 1
    for d in layout.in_dim_names:
        for v in bases[d]:
            if v[axis]:
                v[axis] = nxt
                nxt *= 2
    sizes = [layout.out_dim_size(n) if k != axis else nxt for k, n in enumerate(names)]
    return LinearLayout({d: bases[d] for d in layout.in_dim_names}, list(zip(names, sizes)))


def inter_warp_layout(layout: LinearLayout, axis: int) -> LinearLayout:
    """The layout the partial results move to so a warp shuffle can finish the reduction: warp bases
    along ``axis`` swapped into zero lane bases if enough exist, else into the first lane bases
    (Triton's ``ReduceOpHelper::getInterLayout``)."""
    bases = layout.bases
    lanes, warps = bases[LANE], bases.get(WARP, [])
    warp_axis = [i for i, v in enumerate(warps) if v[axis]]
    zero_lanes = zero_basis_indices(layout, LANE)
    if len(zero_lanes) >= len(warp_axis):
        for k, i in enumerate(warp_axis):
            lanes[zero_lanes[k]], warps[i] = warps[i], lanes[zero_lanes[k]]
    else:
        for k, i in enumerate(warp_axis[:len(lanes)]):
            lanes[k], warps[i] = warps[i], lanes[k]
    return LinearLayout({d: bases[d] for d in layout.in_dim_names}, layout.out_dims)


def _drop_axis(layout: LinearLayout, axis: int) -> LinearLayout:
    """The layout without out dim ``axis`` (of size 1), the others renamed dim0, dim1, ..."""
    names = [n for k, n in enumerate(layout.out_dim_names) if k != axis]
    bases = {d: [[x for k, x in enumerate(v) if k != axis] for v in vs] for d, vs in layout.bases.items()}
    sizes = [layout.out_dim_size(n) for n in names]
    return LinearLayout(bases, [(f"dim{i}", s) for i, s in enumerate(sizes)], require_surjective=False)


@checked
def reduce_lowering(src: LinearLayout, axis: int, bits: list[int], result: LinearLayout | None,
                    target: Target | None = None) -> SharedLowering:
    """Triton's lowering of ``tt.reduce`` along ``axis`` of a tensor in ``src`` with operands of ``bits``
    each: reduce in registers, then across lanes by shuffles; while warps still hold parts of the axis,
    move the partials (a ``convert_layout`` per operand) into the layout where those warp bits are lane
    bits (``inter_warp_layout``) and shuffle again; finally convert to the ``result`` layout if it
    differs. Shared memory is used only by those conversions."""
    reg = _dist(src).remove_zero_bases_along_dim(REG)
    reg = zero_bases_along(reg, axis, REG)
    reg = reg.remove_zero_bases_along_dim(REG)
    reg = zero_bases_along(reg, axis, LANE)
    parts: list[SharedLowering] = []
    scratch = 0  # the largest step: one conversion per operand at once
    rounds = 0
    while reg.out_dim_size(reg.out_dim_names[axis]) > 1 and rounds < 2:
        tmp = inter_warp_layout(reg, axis)
        step = [convert_lowering(reg, tmp, b, target) for b in bits]
        parts, scratch = parts + step, max(scratch, sum(p.scratch_bytes for p in step))
        reg = zero_bases_along(tmp, axis, LANE)
        rounds += 1
    if result is not None and reg.num_out_dims > 1:
        flat = _drop_axis(reg, axis)
        wanted = _dist(result)
        if flat != wanted:
            step = [convert_lowering(flat, wanted, b, target) for b in bits]
            parts, scratch = parts + step, max(scratch, sum(p.scratch_bytes for p in step))
    stores = _merge([s for p in parts for s in p.stores], 1)
    loads = _merge([s for p in parts for s in p.loads], 1)
    kind = SHARED if stores or loads else NO_OP
    note = f"{rounds} inter-warp round(s)" if rounds else "warp-synchronous"
    return SharedLowering(kind, stores, loads, None, 1, note, scratch)


def _xor_coords(bases: list[list[int]], value: int, rank: int) -> tuple[int, ...]:
    """Coordinates of input ``value`` of one in dim: per out dim, ``f2.apply`` of that coordinate of the
    bases (the XOR over the set bits of ``value``)."""
    return tuple(f2.apply([v[k] for v in bases], value) for k in range(rank))


def layout_order(layout: LinearLayout) -> list[int]:
    """Triton's ``getOrder`` of a distributed layout, fastest dim first: the dims in the order their bases
    first appear in the register, lane, warp bases; the dims never seen follow, the last dim first."""
    bases = [v for d in (REG, LANE, WARP, BLOCK) for v in layout.bases.get(d, [])]
    return list(order_from_bases(bases, layout.num_out_dims))


@checked
def reduce_lowering_smem(src: LinearLayout, axis: int, bits: list[int], result: LinearLayout | None,
                         target: Target | None = None) -> SharedLowering:
    """Triton 3.6's lowering of ``tt.reduce`` (fitted on its static PTX; 3.9 lowers through conversions,
    ``reduce_lowering``): reduce in registers and across lanes by shuffles; when warps hold parts of the
    axis, (1) the lanes at axis position 0 store their partial at ``[warp's axis index, rest of the
    coordinates]`` of a scratch with the axis resized to the warps along it (axis fastest, then the
    layout's order); (2) thread ``t`` loads scratch word ``t`` (and ``t + threads``, ...: ``elements /
    threads`` rounds), shuffles across the warps' partials and the first lane of each group stores the
    total back; (3) every thread loads its result elements (axis index 0). Scalar ``ld/st.shared`` of the
    element's width, one scratch per operand; ``result`` None: a 0-d result (one broadcast load)."""
    _nvidia(target)
    check_layout_size(src, MAX_ELEMENTS, "reduce_lowering_smem: src")  # loops over every warp's registers
    layout = _dist(src).remove_zero_bases_along_dim(REG)
    rank = layout.num_out_dims
    bases = layout.bases
    warp_bases = bases.get(WARP, [])
    axis_warps = [i for i, v in enumerate(warp_bases) if v[axis]]
    if not axis_warps:
        return SharedLowering(NO_OP, note="warp-synchronous")
    lane_axis = [i for i, v in enumerate(bases[LANE]) if v[axis]]
    size_inter = 1 << len(axis_warps)
    shape = [layout.out_dim_size(n) for n in layout.out_dim_names]
    smem_shape = list(shape)
    smem_shape[axis] = size_inter
    order = [axis] + [k for k in layout_order(layout) if k != axis]
    strides, stride = [0] * rank, 1
    for k in order:
        strides[k], stride = stride, stride * smem_shape[k]
    elems = stride
    warps = 1 << len(warp_bases)
    threads = warps * LANES_PER_WARP

    def offset(coords) -> int:
        return sum((c % smem_shape[k]) * strides[k] for k, c in enumerate(coords))

    def warp_axis(w: int) -> int:
        return sum(1 << j for j, i in enumerate(axis_warps) if w >> i & 1)

    keys: dict[tuple[int, ...], int] = {}
    for r in range(layout.in_dim_size(REG)):
        coords = list(_xor_coords(bases[REG], r, rank))
        coords[axis] = 0
        keys.setdefault(tuple(coords), r)
    lane_zero = [not any(lane >> i & 1 for i in lane_axis) for lane in range(LANES_PER_WARP)]
    rounds = max(elems // threads, 1)
    if result is not None:
        res = _dist(result).remove_zero_bases_along_dim(REG)
        res_regs = {(_xor_coords(res.bases[REG], r, res.num_out_dims)) for r in range(res.in_dim_size(REG))}
        res_lanes, res_warps = res.bases[LANE], res.bases.get(WARP, [])
    stores: list[Instructions] = []
    loads: list[Instructions] = []
    for b in bits:
        nbytes = max(1, b // 8)
        st = [0, 0]
        ld = [0, 0]
        for w in range(warps):
            wc = _xor_coords(bases.get(WARP, []), w, rank)
            for r in keys.values():
                rc = _xor_coords(bases[REG], r, rank)
                starts = []
                for lane in range(LANES_PER_WARP):
                    c = [a ^ x ^ y for a, x, y in zip(rc, _xor_coords(bases[LANE], lane, rank), wc)]
                    c[axis] = warp_axis(w)
                    starts.append(offset(c) * nbytes)
                st[0] += 1
                st[1] += instruction_wavefronts(starts, nbytes, active=lane_zero, op="store")
            for k in range(rounds):
                tids = [w * LANES_PER_WARP + lane for lane in range(LANES_PER_WARP)]
                starts = [(t + k * threads) * nbytes for t in tids]
                needed = [t < elems for t in tids]
                ld[0] += 1
                ld[1] += instruction_wavefronts(starts, nbytes, active=needed, op="load")
                first = [n and lane % size_inter == 0 for lane, n in enumerate(needed)]
                st[0] += 1
                st[1] += instruction_wavefronts(starts, nbytes, active=first, op="store")
            if result is None:
                ld[0] += 1
                ld[1] += instruction_wavefronts([0] * LANES_PER_WARP, nbytes, op="load")
                continue
            rw = _xor_coords(res_warps, w, res.num_out_dims)
            for rc in sorted(res_regs):
                starts = []
                for lane in range(LANES_PER_WARP):
                    c = [a ^ x ^ y for a, x, y in zip(rc, _xor_coords(res_lanes, lane, res.num_out_dims), rw)]
                    starts.append(offset(c[:axis] + [0] + c[axis:]) * nbytes)
                ld[0] += 1
                ld[1] += instruction_wavefronts(starts, nbytes, op="load")
        stores.append(Instructions(_vector_name("store", nbytes), "store", nbytes, st[0], st[1]))
        loads.append(Instructions(_vector_name("load", nbytes), "load", nbytes, ld[0], ld[1]))
    # Triton 3.6's ReduceOpHelper::getScratchSizeInBytes: the scratch of every operand, whole bytes each
    return SharedLowering(SHARED, _merge(stores, 1), _merge(loads, 1), None, 1,
                          f"partials of {size_inter} warps through shared memory (Triton 3.6)",
                          elems * sum(-(-b // 8) for b in bits))


# --------------------------------------------------------------------------------------------------
# scans (Triton's three-phase scan lowering)
# --------------------------------------------------------------------------------------------------
def scan_lowering(src: LinearLayout, axis: int, bits: list[int], target: Target | None = None, *,
                  exact_tail: bool = False, max_elements: int = MAX_ELEMENTS) -> SharedLowering:
    """Triton's lowering of ``tt.scan`` along ``axis`` of a tensor in ``src`` with operands of ``bits``:
    prefixes within each thread's *group* (the lowest axis bits held in registers), then across the
    lanes of each *chunk* (the lane bits that follow) by shuffles; when warps hold parts of the axis,
    each chunk's terminal lane stores its total (one ``st.shared`` per chunk register and row register),
    a barrier, and every thread loads the totals of the chunks before the last (one scalar load each,
    or 16-byte vectors when no lane or warp bit outside the axis separates them) to apply the carries.

    The scratch holds (lanes off the axis, warps off the axis, chunk index, registers off the axis),
    least significant first. Model fitted on the static PTX of Triton 3.9 (9 scans: 1-D and 2-D, both
    axes, 4 and 8 warps, one and two operands); layouts whose axis bases are not unit vectors of the
    axis are left out (``NOT_MODELED``). ``exact_tail``: Triton 3.6's loads of the totals, the widest
    vectors that fit the chunks still needed (7 totals: 4 + 2 + 1 elements) instead of 3.9's one width.
    Enumerates every thread's registers: ``src`` may hold at most ``max_elements`` elements."""
    _nvidia(target)
    check_layout_size(src, max_elements, "scan_lowering: src")
    layout = _dist(src).remove_zero_bases_along_dim(REG)
    names = layout.out_dim_names
    axis_bits: list[tuple[int, str, int]] = []  # (axis value, in dim, index)
    other: dict[str, list[int]] = {REG: [], LANE: [], WARP: []}
    for d in (REG, LANE, WARP):
        for i, v in enumerate(layout.bases.get(d, [])):
            on_axis, off_axis = v[axis] != 0, any(x for k, x in enumerate(v) if k != axis)
            if on_axis and off_axis or (on_axis and v[axis] & (v[axis] - 1)):
                return SharedLowering(NOT_MODELED, note="scan over a layout whose axis bases are not unit vectors")
            if on_axis:
                axis_bits.append((v[axis], d, i))
            elif off_axis:
                other[d].append(i)
    axis_bits.sort()
    k = 0
    while k < len(axis_bits) and axis_bits[k][1] == REG:
        k += 1
    while k < len(axis_bits) and axis_bits[k][1] == LANE:
        k += 1
    chunk_bits = axis_bits[k:]
    if not any(d == WARP for _, d, _ in chunk_bits):
        return SharedLowering(NO_OP, note="scan within warps (shuffles only)")
    n_chunks = 1 << len(chunk_bits)
    # scratch offset bits, least significant first
    order = ([(LANE, i) for i in other[LANE]] + [(WARP, i) for i in other[WARP]]
             + [(d, i) for _, d, i in chunk_bits] + [(REG, i) for i in other[REG]])
    position = {key: bit for bit, key in enumerate(order)}
    chunk_keys = {(d, i) for _, d, i in chunk_bits}
    # (index, scratch bit) of each in dim's bits: all of them, or those outside the chunk index
    every = {d: [(i, bit) for (dd, i), bit in position.items() if dd == d] for d in (REG, LANE, WARP)}
    outside = {d: [(i, bit) for i, bit in every[d] if (d, i) not in chunk_keys] for d in (REG, LANE, WARP)}
    chunk_positions = [position[(d, i)] for _, d, i in chunk_bits]

    def offset(reg: int, lane: int, warp: int, chunk: int | None = None) -> int:
        """The scratch offset of (reg, lane, warp); with ``chunk``, of that chunk's total instead of its own."""
        bits_of = every if chunk is None else outside
        out = 0
        for d, value in ((REG, reg), (LANE, lane), (WARP, warp)):
            for i, bit in bits_of[d]:
                if value >> i & 1:
                    out |= 1 << bit
        if chunk is not None:
            for j, bit in enumerate(chunk_positions):
                if chunk >> j & 1:
                    out |= 1 << bit
        return out

    warps = layout.in_dim_size(WARP, missing_ok=True)
    chunk_lanes = [i for _, d, i in axis_bits[:k] if d == LANE]
    chunk_regs = [i for _, d, i in chunk_bits if d == REG]
    reg_values = [r for r in range(layout.in_dim_size(REG))
                  if not any(r >> i & 1 for _, d, i in axis_bits[:k] if d == REG)]  # group registers fold
    stores: list[Instructions] = []
    loads: list[Instructions] = []
    contiguous = not other[LANE] and not other[WARP]
    for b in bits:
        nbytes = max(1, b // 8)
        st_count = st_wf = 0
        for w in range(warps):
            for r in reg_values:
                starts, active = [], []
                for lane in range(LANES_PER_WARP):
                    starts.append(offset(r, lane, w) * nbytes)
                    active.append(all(lane >> i & 1 for i in chunk_lanes))
                st_wf += instruction_wavefronts(starts, nbytes, active=active, op="store")
                st_count += 1
        stores.append(Instructions(_vector_name("store", nbytes), "store", nbytes, st_count, st_wf))
        needed = n_chunks - 1
        widest = max(1, 16 // nbytes) if contiguous else 1
        if exact_tail:  # Triton 3.6: the widest vectors that fit what is left (7 -> 4 + 2 + 1)
            pieces, first = [], 0
            while first < needed:
                vec = 1 << min(widest, needed - first).bit_length() - 1
                pieces.append((first, vec))
                first += vec
        else:  # Triton 3.9: one width, the last vector may read past the chunks needed
            vec = min(widest, 1 << (needed - 1).bit_length())
            pieces = [(first, vec) for first in range(0, needed, vec)]
        rows = [r for r in reg_values if not any(r >> i & 1 for i in chunk_regs)]
        for first, vec in pieces:
            ld_count = ld_wf = 0
            for w in range(warps):
                for r in rows:
                    starts = [offset(r, lane, w, chunk=first) * nbytes for lane in range(LANES_PER_WARP)]
                    ld_wf += instruction_wavefronts(starts, vec * nbytes, op="load")
                    ld_count += 1
            loads.append(Instructions(_vector_name("load", vec * nbytes), "load", vec * nbytes, ld_count, ld_wf))
    return SharedLowering(SHARED, _merge(stores, 1), _merge(loads, 1), None, 1,
                          f"{n_chunks} chunks along the axis across warps",
                          (1 << len(order)) * sum(max(1, b // 8) for b in bits))


LANES_PER_WARP = 32


# --------------------------------------------------------------------------------------------------
# the other ops Triton lowers through shared memory
# --------------------------------------------------------------------------------------------------

#: ptxas's expansion of the 13 ``tensormap.replace.tile.*`` of a rank-2 TMA descriptor (Triton 3.6, sm_90):
#: single-thread LDS / STS, one wavefront each (read from the SASS, confirmed by ncu)
TENSORMAP_RANK2_LDS = 11
TENSORMAP_RANK2_STS = 14


@checked
def histogram_lowering(result: LinearLayout, bits: int) -> SharedLowering:
    """``tt.histogram``: Triton zeroes a [bins] scratch in the layout of the result (``result``: register,
    lane, warp -> bins, one CTA), counts with shared atomics (data-dependent addresses: the atom pipe, no
    ld/st), then loads the bins back: one store and one load of ``result`` as shared offsets."""
    cvt = result.rename_out_dim(result.out_dim_names[0], "offset")
    cvt = cvt.remove_zero_bases_along_dim("register")
    store = ldst_instructions(cvt, bits, "store")
    load = ldst_instructions(cvt, bits, "load")
    return SharedLowering(SHARED, (store,), (load,), None, 1,
                          "bins zeroed and read back; the counting atomics (atom.shared) are not ld/st")


@checked
def async_copy_lowering(pointers: LinearLayout, shared: LinearLayout, bits: int, contiguity: int) -> SharedLowering:
    """``ttg.async_copy_global_to_local`` (cp.async, LDGSTS): every thread copies the elements its
    ``pointers`` (register, lane, warp -> tensor) name into ``shared`` (offset -> tensor), in vectors of at
    most ``contiguity`` elements and 16 bytes, counted as shared stores of ``cp.async.{bytes}B``."""
    cvt = _dist(pointers).invert_and_compose(shared.sublayout([OFFSET], shared.out_dim_names)
                                             if shared.has_in_dim(BLOCK) else shared)
    cvt = cvt.sublayout([d for d in cvt.in_dim_names if d != BLOCK], [OFFSET])
    ins = ldst_instructions(cvt, bits, "store", max_vector_elements=max(1, min(contiguity, 128 // bits)))
    ins = Instructions(f"cp.async.{ins.bytes}B", "store", ins.bytes, ins.count, ins.wavefronts)
    return SharedLowering(SHARED, (ins,), (), shared, 1, "cp.async (LDGSTS): global -> shared")


@checked
def tensormap_create_lowering(rank: int, num_warps: int) -> SharedLowering:
    """``ttng.tensormap_create``: one warp zeroes the 128-byte descriptor (``st.shared.b32``, issued by every
    warp with one lane active), fills its fields with ``tensormap.replace.tile.*`` (13 for rank 2), which
    ptxas expands into one thread's read-modify-write LDS / STS (``TENSORMAP_RANK2_*``; the loads are in the
    SASS only), then copies it out through the async proxy. Other ranks: not modeled."""
    if rank != 2:
        return SharedLowering(NOT_MODELED, note=f"TMA descriptor of rank {rank}: ptxas's tensormap.replace "
                                                "expansion is modeled for rank 2 only")
    stores = (Instructions("st.shared.b32", "store", 4, num_warps, 1 + TENSORMAP_RANK2_STS),)
    loads = (Instructions("ld.shared.b32", "load", 4, 0, TENSORMAP_RANK2_LDS),)
    return SharedLowering(SHARED, stores, loads, None, 1,
                          "TMA descriptor zeroed and filled by one thread (tensormap.replace -> LDS/STS)")


@checked
def atomic_result_lowering(bits: int, num_warps: int) -> SharedLowering:
    """A scalar ``tt.atomic_rmw`` / ``tt.atomic_cas`` whose result is used: one thread's result reaches every
    thread through shared memory (thread 0 stores it, every warp issuing the store with one lane active;
    a barrier; every thread loads it)."""
    nbytes = max(4, bits // 8)
    return SharedLowering(SHARED, (Instructions(f"st.shared.b{nbytes * 8}", "store", nbytes, num_warps, 1),),
                          (Instructions(f"ld.shared.b{nbytes * 8}", "load", nbytes, num_warps, num_warps),), None, 1,
                          "scalar atomic's result broadcast through shared memory")
