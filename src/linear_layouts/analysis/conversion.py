"""Conversion planning: how to move a tensor from distributed layout ``src`` to ``dst`` (paper §5.4).

``C = src^-1 ∘ dst`` (``dst.invert_and_compose(src)``, Triton's choice: free variables zero, so
duplicated data is read from the first copy) maps each destination slot to the source slot that holds
its element. Quotienting ``C`` by the hardware dims it leaves alone, slowest first (block, warp, lane),
gives the cheapest mechanism, as Triton's ``minimalCvtLayout``:

* no-op: ``src == dst`` (the same LinearLayout, whatever descriptors produced them);
* register permutation: ``C`` is trivial over block, warp and lane (``register_map``), emitted as
  renamed words where byte permutes would cost any and a packing renames (``register_emission``);
* warp shuffle: trivial over block and warp (§5.4 shuffles, :mod:`.shuffles`), chosen only when its
  cost is below the shared-memory plan's or that plan does not fit a CTA's shared memory
  (``ConversionPlan.fits``: ``explain`` says so where a plan does not); otherwise
* shared memory: store ``src``, barrier, load ``dst`` through the optimal swizzle (§5.4, §9.2), with
  vector widths, instruction kinds and counts, and predicted wavefronts; where widening one side's
  vector past the common one with its own registers (Triton's extra vectorization) costs less
  shared-pipe time (wavefronts weighted by wavefronts per instruction: one-wavefront instructions are
  cheaper per wavefront, ``_WAVEFRONT_SHARE``), that optimal layout is taken;
* cross-CTA: ``C`` moves data between CTAs (distributed shared memory of a cluster).

The answer is a typed :class:`~.steps.ConversionPlan` (kind, steps, cost: :mod:`.steps`) that code
generation executes as it is. A 128-bit element moves as four 32-bit words: its plan is the plan of the
layouts widened by a register-held word dim (``dim{rank}`` of size 4, fastest in memory), which is the
same data in the same registers and memory. The legacy baselines (plain, padded, legacy mma swizzle)
are simulated only when asked for (``baselines=True``).

Target: every plan is for a ``target`` (default: the default target, sm_90 on an H100): its lanes, its
bank model, its ISA (``ldmatrix`` / ``stmatrix`` where it has them; warp shuffles where it has
``shfl.sync``: AMD's ``ds_bpermute`` is not modelled, so an AMD plan moves data through LDS) and its
device's cost table (the nearest where it has none, ``target.cost_table``). Lanes: a plan that moves
data between lanes (shuffle, shared memory, cross-CTA) runs on the target's warps, so it needs layouts of
exactly ``target.lanes`` lanes (``log2(target.lanes)`` lane bases: 32 on NVIDIA, 64 on AMD CDNA); a no-op
or a register permutation moves nothing between lanes and is planned for any lane count. Other pairs
have no plan (``LayoutError``): 64-lane layouts on sm_90, say.

Cost model: predicted SM-nanoseconds of one conversion of a CTA on the target's device
(``analysis.cost_model``: building blocks measured by benchmarks/gpu_microbench.py): shuffles
cost their ``shfl.sync`` and the selects / byte permutes codegen emits for them (counted from the plan,
``op_counts.shuffle_counts``; codegen's tests check it emits exactly that), with a latency floor that
grows with the instructions a thread issues; shared memory costs its store + load wavefronts (cheaper
where warps load the same data) and one barrier (``bar.warp.sync``, free, when every warp reads only
what it stored; else ``bar.sync``), with a latency floor per conversion.
``plan_conversion`` takes the cheaper and reports the other in ``alternatives``
(``shuffle_cost``, ``shared_memory_cost``).  The earlier constants ``SHUFFLE_COST``,
``BARRIER_COST``, ``ALU_COST`` (wavefront units) remain for comparison.  A cross-CTA conversion is
planned as one shared-memory conversion over the whole cluster (the block bits folded into the warp
bits, i.e. distributed shared memory seen as one buffer) and pays ``CLUSTER_BARRIER_COST``
wavefronts' worth instead of a CTA barrier.

>>> from linear_layouts import LinearLayout
>>> A = LinearLayout({"register": [[1], [2]], "lane": [[4], [8], [16], [32], [64]]}, ["dim0"])
>>> plan_conversion(A, A, "fp32").kind
<ConversionKind.NO_OP: 'no-op'>
"""

from __future__ import annotations

import functools

from linear_layouts.analysis import banks, cost_model, op_counts, simd_tiles, swizzle
from linear_layouts.analysis.shuffles import (
    ShufflePlan,
    check_permutation_layout,
    plan_shuffle,
    same_warp_data,
)
from linear_layouts.analysis.simd_tiles import SimdChoice
from linear_layouts.analysis.steps import (
    Barrier,
    BarrierScope,
    Baseline,
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
from linear_layouts.core.arguments import checked
from linear_layouts.layouts.shared import row_major_shared
from linear_layouts.core.element_type import DTypeLike, ElementType, element_type
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import MAX_ELEMENTS, check_layout_size
from linear_layouts.target import LDMATRIX, SHFL, TARGETS, Target, resolve

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
    "ConversionPlan",
    "conversion_dims",
    "plan_shared_memory",
    "plan_through",
    "plan_through_matrix_trans",
    "plan_conversion",
    "shuffle_cost",
    "shared_memory_cost",
    "as_words",
    "register_emission",
]

NO_OP = ConversionKind.NO_OP
REGISTER_PERMUTATION = ConversionKind.REGISTER_PERMUTATION
WARP_SHUFFLE = ConversionKind.WARP_SHUFFLE
SHARED_MEMORY = ConversionKind.SHARED_MEMORY
CROSS_CTA = ConversionKind.CROSS_CTA

#: Cost of one ``shfl.sync`` per warp, in wavefront units (measured, see the module doc).
SHUFFLE_COST = 1.2
#: Cost of the barriers around the shared-memory round trip, in wavefront units (measured, rounded up).
BARRIER_COST = 2
#: Cost of the cluster barrier of a cross-CTA conversion, in the same units (model).
CLUSTER_BARRIER_COST = 8
#: Cost of one non-memory instruction (select, prmt, cvt, shr) per warp, in wavefront units: fitted on
#: the conversion benchmark (benchmarks/results/conversion_cost_model.md).
ALU_COST = 0.34

REGISTER, LANE, WARP, BLOCK = "register", "lane", "warp", "block"

#: Words of a 128-bit element (planned as 32-bit words, module doc).
_WORDS = 4


@checked
def conversion_dims(src: LinearLayout, dst: LinearLayout) -> tuple[str, ...]:
    """Hardware dims the conversion must move data across: the out dims of ``src^-1 ∘ dst`` after
    quotienting by block, warp, lane (slowest first) while it is trivial over them (Triton's
    ``minimalCvtLayout``). ``()`` for a no-op, ``("register",)`` for a register permutation.

    >>> A = LinearLayout({"register": [[1]], "lane": [[2]]}, ["dim0"])
    >>> conversion_dims(A, LinearLayout({"register": [[2]], "lane": [[1]]}, ["dim0"]))
    ('register', 'lane')
    """
    check_permutation_layout(src, "src")
    check_permutation_layout(dst, "dst")
    if src.out_dims != dst.out_dims:
        raise LayoutError(f"src and dst must have the same out dims, got {src.out_dims} and {dst.out_dims}")
    if src.in_dim_names != dst.in_dim_names or src.in_dims[LANE] != dst.in_dims[LANE]:
        raise LayoutError("src and dst must have the same in dims and lane count")
    for d in (WARP, BLOCK):
        if src.has_in_dim(d) and src.in_dim_size(d) != dst.in_dim_size(d):
            raise LayoutError(f"src and dst must have the same number of {d}s")
    same = _same_data_dims(src, dst)
    return _composed_dims(src, dst) if same is None else same


def _composed_dims(src: LinearLayout, dst: LinearLayout) -> tuple[str, ...]:
    """``conversion_dims`` by quotienting ``src^-1 ∘ dst`` (checked arguments)."""
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


def _same_data_dims(src: LinearLayout, dst: LinearLayout) -> tuple[str, ...] | None:
    """``conversion_dims`` read off the bases when both (checked) layouts hold the same non-zero
    bases (each a distinct power of two): ``src^-1 ∘ dst`` then maps a hardware dim as the identity,
    and apart from the others, exactly when its bases are equal in both, so the quotient stops at the
    first of block, warp, lane whose bases differ. None (use the composition) for other pairs."""
    names = src.in_dim_names
    bases = {d: (src.flat_bases(d), dst.flat_bases(d)) for d in names}
    if {b for a, _ in bases.values() for b in a if b} != {b for _, a in bases.values() for b in a if b}:
        return None
    moved = list(names)
    for d in (BLOCK, WARP, LANE):
        if d in bases:
            if bases[d][0] != bases[d][1]:
                break
            moved.remove(d)
    if all(bases[d][0] == bases[d][1] for d in moved):
        return ()
    return tuple(moved)


@checked
def as_words(layout: LinearLayout, words: int = _WORDS) -> LinearLayout:
    """``layout`` of elements of ``words`` 32-bit words as a layout of the words: a new last out dim
    ``dim{rank}`` of size ``words`` (the word inside the element, fastest in memory) held by the lowest
    register bits (a distributed layout) or the lowest offset bits (a shared layout).

    >>> as_words(LinearLayout({"register": [[1]], "lane": [[2]]}, ["dim0"]), 4).bases
    {'register': [[0, 1], [0, 2], [1, 0]], 'lane': [[2, 0]]}
    """
    name = REGISTER if layout.has_in_dim(REGISTER) or not layout.has_in_dim("offset") else "offset"
    word_dim = f"dim{layout.num_out_dims}"
    widened = LinearLayout.identity_1d(words, name, word_dim) * layout
    return widened.transpose_ins([d for d in layout.in_dim_names] + ([name] if name not in layout.in_dim_names
                                                                        else [])).transpose_outs(
        list(layout.out_dim_names) + [word_dim])


def _register_map(src: LinearLayout, dst: LinearLayout) -> tuple[int, ...]:
    comp = dst.invert_and_compose(src)
    return tuple(comp.apply({REGISTER: i})[REGISTER] for i in range(dst.in_dim_size(REGISTER)))


def register_emission(permutation: RegisterPermutation, bits: int, src_register_bits: int) -> RegisterEmission:
    """The cheaper emission of a register permutation of ``bits``-bit elements by the byte permutes and
    selects each issues (``op_counts.register_permutation_counts``): renamed words (none) where a
    packing renames the source's words and byte permutes would cost any; else byte permutes (ties
    too: then both emit the same words).

    >>> register_emission(RegisterPermutation((0, 1, 4, 5, 2, 3, 6, 7)), 8, 3)
    <RegisterEmission.RENAMED_WORDS: 'renamed words'>
    >>> register_emission(RegisterPermutation((0, 1, 4, 5, 2, 3, 6, 7)), 32, 3)
    <RegisterEmission.BYTE_PERMUTES: 'byte permutes'>
    """
    renamed, permuted = (op_counts.register_permutation_counts(permutation.source, bits, src_register_bits, words)
                         for words in (True, False))
    if renamed is not None and permuted is not None and renamed.alu < permuted.alu:
        return RegisterEmission.RENAMED_WORDS
    return RegisterEmission.BYTE_PERMUTES


def _access(op: MemoryOp, shared: LinearLayout, dist: LinearLayout, element: ElementType,
            choice: SimdChoice, target: Target) -> SharedMemoryAccess:
    """The access step lowering one side with ``choice`` (a ``simd_tiles.SimdChoice``)."""
    return SharedMemoryAccess(op, shared, choice.family, choice.width, element.bits, choice.permutation,
                              choice.count, _emitted_wavefronts(shared, dist, element.bits, choice, op, target),
                              trans=choice.trans)


def _emitted_wavefronts(layout: LinearLayout, dist: LinearLayout, bits: int, choice: SimdChoice, op: MemoryOp,
                        target: Target) -> int:
    """Predicted wavefronts of the instructions codegen emits for one side.

    ld/st.shared: ``banks.wavefronts`` with duplicated data not stored. ldmatrix/stmatrix: the
    choice's wavefronts per instruction times the instructions emitted; stmatrix skips duplicated
    registers (outside its tile) and warps, never lanes (``.sync.aligned``)."""
    if choice.family is SharedInstruction.VECTOR:
        return banks.wavefronts(layout, dist, bits, op=op.value, skip_duplicates=True, target=target)
    per_instruction = choice.wavefronts // choice.count
    count = choice.count
    if op is MemoryOp.STORE:
        free = dist.free_variable_masks()
        k = 1 if choice.trans else (32 // bits).bit_length() - 1
        tile = k + choice.matrices.bit_length() - 1
        skipped = sum(1 for r in choice.permutation.action[tile:] if free.get(REGISTER, 0) >> r & 1)
        count >>= skipped + bin(free.get(WARP, 0)).count("1")
    return per_instruction * count


def _baselines(a: LinearLayout, b: LinearLayout, bits: int, max_elements: int, target: Target) -> tuple[Baseline, ...]:
    """The legacy shared layouts' wavefronts: plain row-major, row-major padded by one access width,
    and (rank 2) the legacy mma swizzle Triton would pick."""
    plain = row_major_shared(list(a.out_dims.values()))
    out = [Baseline("unswizzled", banks.wavefronts(plain, a, bits, op="store", target=target),
                    banks.wavefronts(plain, b, bits, target=target))]
    try:  # a baseline the smem analyses cannot model for this pair is left out
        padded = swizzle.padded_baseline(a, b, bits, max_elements=max_elements, target=target)
        out.append(Baseline("padded", int(padded.store_wavefronts), int(padded.load_wavefronts)))
    except LayoutError:
        pass
    if a.num_out_dims == 2:
        try:
            shape = list(a.out_dims.values())
            vec, per_phase, max_phase = swizzle.legacy_swizzle_params(shape, [1, 0], bits, op_idx=0)
            legacy = swizzle.legacy_swizzle_baseline(a, b, bits, vec=vec, per_phase=per_phase, max_phase=max_phase,
                                                     max_elements=max_elements, target=target)
            out.append(Baseline("legacy swizzle", int(legacy.store_wavefronts), int(legacy.load_wavefronts)))
        except LayoutError:
            pass
    return tuple(out)


def shuffle_cost(shuffle: ShufflePlan, *, target: Target | str | None = None) -> Cost:
    """Predicted SM-nanoseconds of a warp-shuffle conversion of one CTA as codegen emits it
    (``cost_model.shuffle_time_ns`` on ``target``'s table), with its ``shfl.sync`` per warp."""
    return Cost(cost_model.shuffle_time_ns(shuffle, target=target), shuffles=shuffle.shuffles_per_warp,
                warps=shuffle.num_warps)


def _warp_local(src: LinearLayout, dst: LinearLayout) -> bool:
    """Every warp reads only what it stored: the same warp bases, none of them zero (no duplicated
    warps whose stores codegen skips). Then a warp barrier (``bar.warp.sync``) orders the round trip."""
    return same_warp_data(src, dst) and all(src.flat_bases(WARP, missing_ok=True))


def shared_memory_cost(store: SharedMemoryAccess, load: SharedMemoryAccess, src: LinearLayout,
                       dst: LinearLayout, *, target: Target | str | None = None) -> Cost:
    """Predicted SM-nanoseconds of a shared-memory conversion of one CTA: its store + load wavefronts
    (the loads of warps that hold the same data priced as copies, ``cost_model.copied_load_wavefronts``)
    and one barrier, a warp's when the conversion is warp-local (``cost_model.shared_time_ns``;
    packed registers need no byte permutes)."""
    warps = _fold_blocks(src).in_dim_size(WARP, missing_ok=True)
    wavefronts = store.wavefronts + load.wavefronts
    copied = cost_model.copied_load_wavefronts(load.wavefronts, dst)
    return Cost(cost_model.shared_time_ns(wavefronts, _warp_local(src, dst), warps, copied_wavefronts=copied,
                                          target=target),
                wavefronts=wavefronts, warps=warps)


def _crosses_ctas(src: LinearLayout, dst: LinearLayout) -> bool:
    return src.has_in_dim(BLOCK) and src.in_dim_size(BLOCK) > 1 and BLOCK in conversion_dims(src, dst)


def _shared_plan(src: LinearLayout, dst: LinearLayout, element: ElementType, shared: LinearLayout,
                 store: SimdChoice, load: SimdChoice, baselines: bool, max_elements: int, target: Target) -> ConversionPlan:
    a, b = _fold_blocks(src), _fold_blocks(dst)
    st = _access(MemoryOp.STORE, shared, a, element, store, target)
    ld = _access(MemoryOp.LOAD, shared, b, element, load, target)
    found = _baselines(a, b, element.bits, max_elements, target) if baselines else ()
    if _crosses_ctas(src, dst):
        warps = a.in_dim_size(WARP, missing_ok=True)
        wavefronts = st.wavefronts + ld.wavefronts
        cost = Cost(cost_model.shared_time_ns(wavefronts + CLUSTER_BARRIER_COST * warps, False, warps, target=target),
                    wavefronts=wavefronts, warps=warps)
        return ConversionPlan(CROSS_CTA, src, dst, element, (st, Barrier(BarrierScope.CLUSTER), ld), cost,
                              baselines=found)
    scope = BarrierScope.WARP if _warp_local(src, dst) else BarrierScope.CTA
    return ConversionPlan(SHARED_MEMORY, src, dst, element, (st, Barrier(scope), ld),
                          shared_memory_cost(st, ld, src, dst, target=target), baselines=found)


@checked
def plan_shared_memory(src: LinearLayout, dst: LinearLayout, dtype: DTypeLike, *,
                       baselines: bool = False, max_elements: int = MAX_ELEMENTS,
                       target: Target | str | None = None, ldmatrix_trans: bool = True) -> ConversionPlan:
    """The conversion through shared memory, even where a cheaper mechanism exists: the optimal swizzle
    (§5.4, §9.2; with one side's vector widened past the common one by its own registers where that
    costs less shared-pipe time, ``_pipe_time``, then fewer instructions) with the instruction choice of §5.3 (widest ld/st.shared or ldmatrix/stmatrix, fewest
    wavefronts then fewest instructions, ``simd_tiles.conversion_instructions``); for 16-bit elements
    the transposing ``st.shared.v4`` + ``ldmatrix.x4.trans`` plan too (``plan_through_matrix_trans``), where
    it applies and costs less shared-pipe time (``ldmatrix_trans=False``: not weighed). Block bits (several
    CTAs) are folded into the warp bits: the counts are then over the whole cluster (a cross-CTA plan
    when data crosses CTAs). ``baselines=True`` also simulates the legacy shared layouts. Layouts above
    ``max_elements`` inputs or elements (``limits.MAX_ELEMENTS``) are refused. ``target``: module doc.
    """
    element = _check_request(src, dst, dtype, max_elements, "plan_shared_memory")
    dst = _aligned(src, dst)
    if element.bits == 128:
        return plan_shared_memory(as_words(src), as_words(dst), 32, baselines=baselines, max_elements=max_elements,
                                  target=target)
    return _plan_shared_memory(src, dst, element, baselines, max_elements, resolve(target), ldmatrix_trans)


@functools.lru_cache(maxsize=4096)
def _plan_shared_memory(src: LinearLayout, dst: LinearLayout, element: ElementType, baselines: bool,
                        max_elements: int, target: Target, ldmatrix_trans: bool = True) -> ConversionPlan:
    a, b = _fold_blocks(src), _fold_blocks(dst)
    banks.check_distributed(a, "src", target)
    banks.check_distributed(b, "dst", target)
    plans, tried = [], None
    for extend in (False, True):  # one side's vector widened past V with its own registers (swizzle doc)
        layout = swizzle.optimal_swizzle(a, b, element.bits, extend_vectors=extend, target=target).layout
        if layout == tried:  # the same layout plans the same
            continue
        tried = layout
        choices = simd_tiles.conversion_instructions(layout, a, b, element.bits, target=target)
        plans.append(_shared_plan(src, dst, element, layout, *choices, baselines, max_elements, target))
    if ldmatrix_trans and element.bits == 16 and target.has(LDMATRIX):  # Triton's tl.trans of 16-bit tiles
        try:
            plans.append(_matrix_trans_plan(src, dst, element, baselines, max_elements, target))
        except LayoutError:  # the layouts do not have its form
            pass
    return min(plans, key=lambda plan: (
        _pipe_time(plan.store) + _pipe_time(plan.load), plan.store.wavefronts + plan.load.wavefronts,
        plan.store.instructions + plan.load.instructions))


#: Shared-pipe time of a wavefront by the wavefronts of its instruction (1, 2, 4 or more), relative to
#: a wavefront of a 4-wavefront instruction (microbenchmarks: benchmarks/results/gpu_suite.md). Wider is
#: cheaper only in issue slots.
_WAVEFRONT_SHARE = {MemoryOp.STORE: (0.76, 0.92), MemoryOp.LOAD: (0.9, 0.92)}


def _pipe_time(access: SharedMemoryAccess) -> float:
    """Relative shared-pipe time of one side: its wavefronts, weighted by wavefronts per instruction."""
    per = access.wavefronts / max(access.instructions, 1)
    one, two = _WAVEFRONT_SHARE[access.op]
    return access.wavefronts * (one if per <= 1 else two if per <= 2 else 1.0)


@checked
def plan_through(src: LinearLayout, dst: LinearLayout, shared: LinearLayout, dtype: DTypeLike, *,
                 max_elements: int = MAX_ELEMENTS, target: Target | str | None = None) -> ConversionPlan:
    """The conversion through the given ``shared`` layout (offset -> tensor) with the widest
    ld/st.shared each side allows (``banks.shared_access``): the legacy baselines' mechanism, e.g.
    through ``catalog.row_major_shared``.

    >>> from linear_layouts.present.viz.scenarios import seed_transpose
    >>> s = seed_transpose()
    >>> plan_through(s.store, s.load, s.shared[0][1], "fp32").load.wavefronts
    256
    """
    element = _check_request(src, dst, dtype, max_elements, "plan_through")
    dst = _aligned(src, dst)
    if element.bits == 128:
        return plan_through(as_words(src), as_words(dst), as_words(shared), 32, max_elements=max_elements,
                            target=target)
    target = resolve(target)
    a, b = _fold_blocks(src), _fold_blocks(dst)
    choices = [simd_tiles.simd_choices(shared, side, element.bits, op=op, target=target)
               for side, op in ((a, "store"), (b, "load"))]
    st, ld = (next(c for c in options if c.family is SharedInstruction.VECTOR) for options in choices)
    return _shared_plan(src, dst, element, shared, st, ld, False, max_elements, target)


@checked
def plan_through_matrix_trans(src: LinearLayout, dst: LinearLayout, dtype: DTypeLike, *,
                              max_elements: int = MAX_ELEMENTS, target: Target | str | None = None) -> ConversionPlan:
    """The 16-bit transposing conversion through ``swizzle.matrix_trans_swizzle``'s layout: 16-byte
    ``st.shared.v4`` stores of ``src``, ``ldmatrix.x4.trans`` loads of ``dst`` (Triton's ``tl.trans`` of 16-bit
    tiles), both conflict-free: ``tile_bytes / 128`` wavefronts a side. ``plan_shared_memory`` ranks by shared-pipe
    time, where narrower accesses win; this plan issues fewest instructions and needs no byte permutes.
    LayoutError where the layouts do not have that form, the target has no ``ldmatrix`` or an access would
    conflict."""
    element = _check_request(src, dst, dtype, max_elements, "plan_through_matrix_trans")
    return _matrix_trans_plan(src, _aligned(src, dst), element, False, max_elements, resolve(target))


def _matrix_trans_plan(src: LinearLayout, dst: LinearLayout, element: ElementType, baselines: bool,
                       max_elements: int, target: Target) -> ConversionPlan:
    """``plan_through_matrix_trans``'s plan of checked, aligned layouts; LayoutError where they do not have its
    form."""
    a, b = _fold_blocks(src), _fold_blocks(dst)
    layout = swizzle.matrix_trans_swizzle(a, b, element.bits, target=target)
    least = (1 << a.total_out_dim_size_log2) * element.bits // (8 * 128)  # 128 bytes a wavefront
    store = [c for c in simd_tiles.simd_choices(layout, a, element.bits, op="store", target=target)
             if c.family is SharedInstruction.VECTOR and c.width * element.bits == 128 and c.wavefronts == least]
    load = [c for c in simd_tiles.simd_choices(layout, b, element.bits, op="load", target=target)
            if c.family is SharedInstruction.MATRIX and c.trans and c.width == 4 and c.wavefronts == least]
    if not store or not load:
        raise LayoutError("src, dst: no conflict-free st.shared.v4 + ldmatrix.x4.trans pair on "
                          f"{target.arch} for these layouts")
    return _shared_plan(src, dst, element, layout, store[0], load[0], baselines, max_elements, target)


@checked
def plan_conversion(src: LinearLayout, dst: LinearLayout, dtype: DTypeLike, *,
                    baselines: bool = False, max_elements: int = MAX_ELEMENTS,
                    target: Target | str | None = None, ldmatrix_trans: bool = True) -> ConversionPlan:
    """The cheapest way to convert a tensor from distributed ``src`` to ``dst`` on ``target`` (module doc;
    default: the default target, sm_90 on an H100).

    Lanes: a no-op or a register permutation is planned for layouts of any lane count
    (nothing moves between lanes); a conversion that moves data between lanes (warp shuffle, shared
    memory, cross-CTA) needs layouts of the target's lanes per warp (32 on NVIDIA, 64 on AMD CDNA), else
    ``LayoutError``: 64-lane layouts whose data crosses lanes have no plan on sm_90 (pass an AMD target).
    ``baselines=True`` adds the legacy shared layouts' wavefronts (simulated; for comparison only);
    ``ldmatrix_trans``: ``plan_shared_memory``'s. Layouts above ``max_elements`` inputs or elements
    (``limits.MAX_ELEMENTS``) are refused. A pure function of immutable values: plans are cached.
    """
    element = _check_request(src, dst, dtype, max_elements, "plan_conversion")
    dst = _aligned(src, dst)
    if element.bits == 128:
        return plan_conversion(as_words(src), as_words(dst), 32, baselines=baselines, max_elements=max_elements,
                               target=target)
    return _plan_conversion(src, dst, element, baselines, max_elements, resolve(target), ldmatrix_trans)


def _aligned(src: LinearLayout, dst: LinearLayout) -> LinearLayout:
    """``dst`` with its out dims in ``src``'s order (the same map: dims are named, the order only fixes
    the flat row-major index), so both sides of a plan flatten the tensor alike; ``dst`` unchanged
    when the dims differ (``conversion_dims`` refuses the pair)."""
    if src.out_dim_names != dst.out_dim_names and dict(src.out_dims) == dict(dst.out_dims):
        return dst.transpose_outs(list(src.out_dim_names))
    return dst


def _check_request(src: LinearLayout, dst: LinearLayout, dtype: DTypeLike, max_elements: int, what: str) -> ElementType:
    """The element type of a planning request, its layouts within ``max_elements``."""
    check_layout_size(src, max_elements, f"{what}: src")
    check_layout_size(dst, max_elements, f"{what}: dst")
    return element_type(dtype)


def _check_lanes(src: LinearLayout, target: Target) -> None:
    """Data that moves between lanes moves within one warp of ``target``: ``src`` (and ``dst``, whose lanes
    ``conversion_dims`` checked equal) must have ``target.lanes`` lanes, i.e. ``log2(target.lanes)`` lane
    bases; else a LayoutError naming both counts. E.g. 64-lane layouts (a CDNA wavefront) on sm_90 (32)."""
    lanes = src.in_dim_size(LANE)
    if lanes == target.lanes:
        return
    warp = f"one {target.arch} warp" if target.backend == "cuda" else f"one {target.arch} wavefront"
    raise LayoutError(f"src: needs a 'lane' in dim of size {target.lanes} ({warp}) to move data between lanes; "
                      f"src and dst have {lanes} lanes a warp{_lanes_hint(lanes)}")


def _lanes_hint(lanes: int) -> str:
    """Which known targets have warps of ``lanes`` lanes, as advice: ``" (pass an AMD target for 64-lane
    layouts)"`` for 64; ``""`` where none has (16 lanes, say)."""
    vendors = {"cuda": "an NVIDIA target", "hip": "an AMD target"}
    found = [vendors[b] for b in sorted({t.backend for t in TARGETS.values() if t.lanes == lanes})]
    return f" (pass {' or '.join(found)} for {lanes}-lane layouts)" if found else ""


@functools.lru_cache(maxsize=4096)
def _plan_conversion(src: LinearLayout, dst: LinearLayout, element: ElementType, baselines: bool,
                     max_elements: int, target: Target, ldmatrix_trans: bool = True) -> ConversionPlan:
    dims = conversion_dims(src, dst)
    if src == dst:
        return ConversionPlan(NO_OP, src, dst, element, (), Cost(0.0))
    if dims in ((), (REGISTER,)):
        source = RegisterPermutation(_register_map(src, dst))
        if source.is_identity:
            return ConversionPlan(NO_OP, src, dst, element, (), Cost(0.0))
        source = RegisterPermutation(source.source, register_emission(source, element.bits,
                                                                      src.in_dim_size_log2(REGISTER, missing_ok=True)))
        return ConversionPlan(REGISTER_PERMUTATION, src, dst, element, (source,), Cost(0.0))
    _check_lanes(src, target)
    if BLOCK in dims:
        return _plan_shared_memory(src, dst, element, baselines, max_elements, target, ldmatrix_trans)
    shuffle = plan_shuffle(src, dst, element.bits, max_elements=max_elements) \
        if WARP not in dims and same_warp_data(src, dst) and target.has(SHFL) else None
    if shuffle is None:
        return _plan_shared_memory(src, dst, element, baselines, max_elements, target, ldmatrix_trans)
    shared: ConversionPlan | None
    try:
        shared = _plan_shared_memory(src, dst, element, baselines, max_elements, target, ldmatrix_trans)
    except LayoutError:
        shared = None
    cost = shuffle_cost(shuffle, target=target)
    if shared is None or cost.total < shared.cost.total or not shared.fits(target):
        alternatives = ((SHARED_MEMORY, shared.cost),) if shared is not None else ()
        return ConversionPlan(WARP_SHUFFLE, src, dst, element, (WarpShuffle(shuffle),), cost,
                              alternatives=alternatives, baselines=shared.baselines if shared else ())
    return ConversionPlan(SHARED_MEMORY, src, dst, element, shared.steps, shared.cost,
                          alternatives=((WARP_SHUFFLE, cost),), baselines=shared.baselines)


@functools.lru_cache(maxsize=4096)  # pure; a plan folds each side in the swizzle search, its steps and its cost
def _fold_blocks(layout: LinearLayout) -> LinearLayout:
    """The cluster as one big CTA: the block bases appended to the warp bases (warp bits first)."""
    if not layout.has_in_dim(BLOCK) and layout.has_in_dim(WARP):
        return layout
    bases = layout.bases
    warp = bases.pop(WARP, []) + bases.pop(BLOCK, [])
    bases[WARP] = warp
    return LinearLayout(bases, layout.out_dims)
