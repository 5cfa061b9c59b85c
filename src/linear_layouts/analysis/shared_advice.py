"""Shared-layout advice for a real consumer: every shared layout a Gluon author can write, ranked.

``suggest_shared_layout(store, consumer, dtype)``: a tile held in registers in the distributed layout
``store`` is written to shared memory (``gl.allocate_shared_memory(..., value=x)`` / ``smem.store(x)``)
and read by ``consumer``. Candidates:

* ``NVMMASharedLayout`` at every swizzle width (0, 32, 64, 128 bytes), plain and transposed, where its
  TMA box fits the tile; the row ``NVMMASharedLayout.get_default_for`` picks is marked;
* ``SwizzledSharedLayout``: the unswizzled one and the best ``(vec, per_phase, max_phase, order)`` of a grid;
* ``PaddedSharedLayout``: each row padded by one access width (the legacy scratch, ``padded_baseline``);
* the layout of paper §5.4's construction (``optimal_swizzle(extend_vectors=True)``), as the simplest
  Gluon class that produces it (often a ``SharedLinearLayout``).

Each is costed with the project's one bank model (``banks``, through ``simd_tiles`` for the cheapest
lowering: the widest ld/st.shared, or ldmatrix / stmatrix where they divide; padded layouts by
``bank_simulator``): store wavefronts (every lane stores its registers) plus load wavefronts of the
consumer's access, and marked with what the consumer accepts:

==================  ==========================================================================
consumer            accepts / load cost
==================  ==========================================================================
``local_load(L)``   every layout; the cheapest load into ``L`` (ld.shared or ldmatrix)
``ldmatrix(L)``     layouts where ``ldmatrix`` lowers the load (16-byte rows of 8 matrices)
``wgmma(k, L)``     ``NVMMASharedLayout`` only (K-major for 8/32-bit elements); read by the async
                    proxy: no ``ld.shared`` wavefronts unless ``L`` (a ``local_load``) is given too
``tma()``           ``NVMMASharedLayout`` only; the copy to global memory is no ``ld.shared``
==================  ==========================================================================

Ranking, one rule (:func:`preference`): accepted first, then fewest store + load wavefronts, then wider
vectors (store + load bits), then the simpler class (NVMMA, swizzled, padded, linear), then fewer bytes.
``advice.best`` is the first row: the one recommended answer.

A wgmma operand of 8- or 32-bit elements is read K-major only; when the registers hold the tile the
other way round, every accepted layout is stored one element at a time. ``advice.register_fix`` then
names the K-major ``BlockedLayout`` to store from instead (load the tile that way, or ``convert_layout``
to it first) with both costs, when either beats ``best``.

Example (the issue's question: a 128x64 fp16 tile loaded with ``BlockedLayout([1,8],[4,8],[4,1],[1,0])``
feeding a Hopper wgmma operand A): the best row is ``NVMMASharedLayout(128, 16)``, 128 store wavefronts,
which is also ``get_default_for``'s choice.
"""

from __future__ import annotations

import dataclasses
import enum
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from linear_layouts.analysis.bank_simulator import simulate_wavefronts
from linear_layouts.analysis.banks import access_wavefronts, check_distributed, shared_access
from linear_layouts.analysis.simd_tiles import simd_choices
from linear_layouts.analysis.steps import SharedInstruction
from linear_layouts.analysis.swizzle import optimal_swizzle, padded_baseline
from linear_layouts.layouts import (
    BlockedLayout,
    NVMMASharedLayout,
    PaddedSharedLayout,
    SwizzledSharedLayout,
)
from linear_layouts.layouts.gluon_text import gluon_expression
from linear_layouts.layouts.recognize import recognize, standardize
from linear_layouts.layouts.registry import Descriptor, kind_of
from linear_layouts.layouts.ttgir_text import format_attribute
from linear_layouts.core.element_type import DTypeLike, ElementType, dtype_argument, element_type
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote
from linear_layouts.core.layout import LinearLayout
from linear_layouts.target import LDMATRIX, TMA, WGMMA, Target, resolve

__all__ = ["ConsumerKind", "Consumer", "SharedCandidate", "SharedAdvice", "RegisterFix", "suggest_shared_layout",
           "preference", "k_major_store_layout"]


class ConsumerKind(enum.Enum):
    """How the shared tile is read."""

    LOCAL_LOAD = "local_load"  #: ``smem.load(L)``: ld.shared into a distributed layout
    LDMATRIX = "ldmatrix"  #: ``smem.load(L)`` lowered to ldmatrix (an mma operand)
    WGMMA = "wgmma"  #: a Hopper wgmma operand read from shared memory by the async proxy
    TMA = "tma"  #: a TMA copy shared -> global


@dataclass(frozen=True)
class Consumer:
    """What reads the shared tile: a ``kind``, the distributed ``layout`` a ``local_load`` fills (required
    for LOCAL_LOAD and LDMATRIX, optional for WGMMA), and the wgmma ``operand_index`` (0: A [M, K], 1: B [K, N])."""

    kind: ConsumerKind
    layout: LinearLayout | None = None
    operand_index: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.kind, ConsumerKind):
            raise LayoutError(f"kind must be a ConsumerKind, got {quote(self.kind)}")
        if self.kind in (ConsumerKind.LOCAL_LOAD, ConsumerKind.LDMATRIX) and self.layout is None:
            raise LayoutError(f"layout is required: a {self.kind.value} consumer loads into a distributed layout")
        if self.layout is not None:
            object.__setattr__(self, "layout", check_distributed(self.layout, "consumer layout", any_lanes=True))
        if self.kind == ConsumerKind.WGMMA and self.operand_index not in (0, 1):
            raise LayoutError(f"operand_index must be 0 (A) or 1 (B) for a wgmma consumer, got {quote(self.operand_index)}")

    @classmethod
    def local_load(cls, layout: LinearLayout) -> "Consumer":
        """``smem.load(layout)`` with ld.shared."""
        return cls(ConsumerKind.LOCAL_LOAD, layout)

    @classmethod
    def ldmatrix(cls, layout: LinearLayout) -> "Consumer":
        """``smem.load(layout)`` lowered to ldmatrix."""
        return cls(ConsumerKind.LDMATRIX, layout)

    @classmethod
    def wgmma(cls, operand_index: int, layout: LinearLayout | None = None) -> "Consumer":
        """A wgmma operand (0: A, 1: B); ``layout``: also a ``local_load`` into it (e.g. to check the tile)."""
        return cls(ConsumerKind.WGMMA, layout, operand_index)

    @classmethod
    def tma(cls) -> "Consumer":
        """A TMA copy of the tile to global memory."""
        return cls(ConsumerKind.TMA)

    def describe(self) -> str:
        """One line naming the consumer."""
        if self.kind == ConsumerKind.WGMMA:
            return f"wgmma operand {'AB'[self.operand_index]}" + (" (+ local_load)" if self.layout is not None else "")
        return {"local_load": "local_load (ld.shared)", "ldmatrix": "local_load (ldmatrix)",
                "tma": "TMA copy to global"}[self.kind.value]


@dataclass(frozen=True)
class SharedCandidate:
    """One shared layout and its cost for (store, consumer). ``load_wavefronts`` is None when the
    consumer does not read with ld.shared / ldmatrix (wgmma, TMA). ``padding``: (interval, pad) pairs."""

    name: str
    descriptor: Descriptor
    layout: LinearLayout
    padding: tuple[tuple[int, int], ...]
    store_wavefronts: int
    load_wavefronts: int | None
    store_vector_bits: int
    load_vector_bits: int | None
    store_instruction: str
    load_instruction: str | None
    accepted: bool
    reason: str
    shared_bytes: int
    marks: tuple[str, ...] = ()

    @property
    def total_wavefronts(self) -> int:
        """Store plus load wavefronts (load: 0 when the consumer does not use ld.shared)."""
        return self.store_wavefronts + (self.load_wavefronts or 0)

    @property
    def gluon(self) -> str:
        """The Gluon (3.9) source of the descriptor (its kind's, ``layouts.gluon_text``)."""
        return gluon_expression(self.descriptor)

    @property
    def ttgir(self) -> str:
        """The descriptor as Triton's TTGIR attribute text (its kind's, ``layouts.ttgir_text``)."""
        return format_attribute(self.descriptor)


@dataclass(frozen=True)
class RegisterFix:
    """A K-major register layout to store a wgmma operand from (module doc): its ``descriptor`` (a
    ``BlockedLayout``) and ``layout``, the best shared layout for it (``shared``), and the conversion
    from the original store layout (``conversion_kind``, ``conversion_wavefronts``: ``plan_conversion``'s)."""

    descriptor: BlockedLayout
    layout: LinearLayout
    shared: SharedCandidate
    conversion_kind: str
    conversion_wavefronts: int

    @property
    def gluon(self) -> str:
        """The Gluon source of the register layout (its kind's, ``layouts.gluon_text``)."""
        return gluon_expression(self.descriptor)

    @property
    def loaded_total(self) -> int:
        """Store + load wavefronts when the tile is loaded in ``layout`` to begin with."""
        return self.shared.total_wavefronts

    @property
    def converted_total(self) -> int:
        """The same after a ``convert_layout`` from the original store layout (its wavefronts added)."""
        return self.conversion_wavefronts + self.shared.total_wavefronts


@dataclass(frozen=True)
class SharedAdvice:
    """The ranked candidates (module doc); ``best`` is the first, ``default`` the get_default_for row;
    ``register_fix``: a K-major register layout that beats ``best`` (wgmma operands of 8/32-bit elements)."""

    store: LinearLayout
    consumer: Consumer
    dtype: ElementType
    candidates: tuple[SharedCandidate, ...]
    register_fix: RegisterFix | None = None

    @property
    def best(self) -> SharedCandidate:
        """The cheapest candidate the consumer accepts."""
        return self.candidates[0]

    @property
    def default(self) -> SharedCandidate | None:
        """The row of ``NVMMASharedLayout.get_default_for`` (None when its TMA box does not fit)."""
        return next((c for c in self.candidates if "get_default_for" in c.marks), None)


# --------------------------------------------------------------------------------------------------
# candidates
# --------------------------------------------------------------------------------------------------

def preference(total_wavefronts: int, vector_bits: int, simplicity: int, shared_bytes: int = 0) -> tuple[int, ...]:
    """The one rule that recommends a shared layout among several, as a sort key (smallest first): fewest
    store + load wavefronts, then the widest vectors (store + load bits per lane), then the simplest
    layout (``simplicity``: a class rank, or a CuTe layout's number of swizzles), then fewest bytes.

    >>> sorted([preference(64, 64, 0), preference(64, 160, 3), preference(32, 64, 3)])[0]
    (32, -64, 3, 0)
    """
    return (total_wavefronts, -vector_bits, simplicity, shared_bytes)


#: the row of the cheapest ``SwizzledSharedLayout`` of the grid (its parameters are in the Gluon column)
_GRID_NAME = "swizzled, cheapest of the grid"


def _simplicity(descriptor: Descriptor) -> int:
    """The class's rank among the shared kinds (``registry.LayoutKind.rank``: NVMMA, swizzled, padded, linear)."""
    kind = kind_of(descriptor)
    if kind is None:
        raise LayoutError(f"descriptor: {type(descriptor).__name__} is no registered layout kind")
    return kind.rank


def _shape(layout: LinearLayout) -> list[int]:
    return [layout.out_dim_size(d) for d in layout.out_dim_names]


def _nvmma_candidates(shape: Sequence[int], bits: int) -> list[tuple[str, NVMMASharedLayout, tuple[str, ...]]]:
    rank = len(shape)
    found = []
    try:
        default = NVMMASharedLayout.get_default_for(shape, bits)
    except LayoutError:
        default = None
    for swizzle in (128, 64, 32, 0):
        for transposed in (False, True):
            try:
                layout = NVMMASharedLayout(swizzle, bits, rank, transposed)
                layout.to_linear(shape)
            except LayoutError:
                continue
            marks = ("get_default_for",) if layout == default else ()
            name = f"NVMMA {swizzle}B{' transposed' if transposed else ''}"
            found.append((name, layout, marks))
    return found


def _swizzled_grid(rank: int, bits: int) -> list[SwizzledSharedLayout]:
    """Swizzled layouts of the two minor dims (either order): vec * bits <= 128, per_phase, max_phase <= 16."""
    grid = []
    orders = [list(reversed(range(rank)))]
    if rank >= 2:
        swapped = list(reversed(range(rank)))
        swapped[0], swapped[1] = swapped[1], swapped[0]
        orders.append(swapped)
    vectors = [v for v in (1, 2, 4, 8, 16) if v * bits <= 128]
    for order, vec, per_phase, max_phase in itertools.product(orders, vectors, (1, 2, 4, 8), (1, 2, 4, 8, 16)):
        if max_phase == 1 and (vec, per_phase) != (1, 1):
            continue  # no swizzle: one representative
        grid.append(SwizzledSharedLayout(vec, per_phase, max_phase, order))
    return grid


def _refusal(consumer: Consumer, candidates: Sequence[SharedCandidate], bits: int) -> str:
    """Why ``consumer`` accepts none of ``candidates`` (elements of ``bits`` bits): an NVMMA-only reader (wgmma,
    TMA) with no ``NVMMASharedLayout`` whose TMA box fits the tile; ldmatrix, of elements it does not move or
    whose register layout is no ldmatrix fragment over any candidate; else each candidate's reason, e.g.
    ``"wgmma reads 8-bit operands K-major only"``."""
    if consumer.kind in (ConsumerKind.WGMMA, ConsumerKind.TMA) and not any(
            isinstance(c.descriptor, NVMMASharedLayout) for c in candidates):
        return "it reads NVMMASharedLayout only, and no NVMMA layout's TMA box fits the tile"
    if consumer.kind == ConsumerKind.LDMATRIX and bits not in (8, 16, 32):
        return (f"ldmatrix moves 8-, 16- or 32-bit elements, not {bits}-bit ones; a local_load without ldmatrix "
                "reads them with ld.shared")
    if consumer.kind == ConsumerKind.LDMATRIX:
        return ("ldmatrix lowers no load into its layout from any of them: each lane must hold 4 contiguous bytes "
                "of a matrix row and lanes 0 and 1 the rest of its 16 bytes (.trans, 16-bit elements: lanes 2 to 4 "
                "the row's 8 elements); a local_load without ldmatrix reads it with ld.shared")
    return "; ".join(dict.fromkeys(c.reason for c in candidates if c.reason))


def _accepts(consumer: Consumer, descriptor: Descriptor, bits: int) -> tuple[bool, str]:
    if consumer.kind in (ConsumerKind.WGMMA, ConsumerKind.TMA):
        if not isinstance(descriptor, NVMMASharedLayout):
            return False, f"{consumer.kind.value} reads NVMMA layouts only"
        if consumer.kind == ConsumerKind.WGMMA and bits != 16:
            k_major = descriptor.transposed == (consumer.operand_index == 1)
            if not k_major:
                return False, f"wgmma reads {bits}-bit operands K-major only"
    return True, ""


@dataclass(frozen=True)
class _Side:
    """One side of the round trip: its wavefronts, bits per lane and instruction."""

    wavefronts: int
    bits: int
    instruction: str


def _side(layout: LinearLayout, padding: tuple[tuple[int, int], ...], dist: LinearLayout, bits: int, op: str,
          target: Target, *, matrix_only: bool = False, exact: bool = True) -> _Side | None:
    """The cheapest lowering of ``dist`` storing to / loading from ``layout``: the widest ld/st.shared or,
    where it divides, ldmatrix / stmatrix (``simd_tiles``); padded layouts: ld/st.shared, counted by the
    simulator. ``matrix_only``: ldmatrix only (None if it cannot lower it); ``exact=False``: the widest
    ld/st.shared only (fast, for searching a grid)."""
    prefix = "ld" if op == "load" else "st"
    if padding or not exact:
        access = shared_access(layout, dist, bits, target=target)
        if matrix_only:
            return None
        count = simulate_wavefronts(layout, dist, bits, op=op, padding=padding, target=target) if padding else \
            access_wavefronts(access, op=op)
        return _Side(count, access.vector_bits, f"{prefix}.shared ({access.vector_bits} bits)")
    choices = simd_choices(layout, dist, bits, op=op, target=target)
    if matrix_only:
        choices = tuple(c for c in choices if c.family is SharedInstruction.MATRIX)
        if not choices:
            return None
    best = choices[0]  # fewest wavefronts, then fewest instructions, ld/st.shared on a tie
    name = best.instruction if best.family is SharedInstruction.MATRIX else f"{prefix}.shared ({best.bits_per_lane} bits)"
    return _Side(best.wavefronts, best.bits_per_lane, name)


def _candidate(name: str, descriptor: Descriptor, layout: LinearLayout, padding: tuple[tuple[int, int], ...],
               marks: tuple[str, ...], store: LinearLayout, consumer: Consumer, bits: int,
               target: Target) -> SharedCandidate:
    st = _side(layout, padding, store, bits, "store", target)
    accepted, reason = _accepts(consumer, descriptor, bits)
    ld = None
    if consumer.layout is not None:
        ld = _side(layout, padding, consumer.layout, bits, "load", target,
                   matrix_only=consumer.kind == ConsumerKind.LDMATRIX)
        if ld is None:
            ld = _side(layout, padding, consumer.layout, bits, "load", target)
            if accepted:
                accepted, reason = False, "ldmatrix needs 16-byte rows of each 8x16-byte matrix"
    elements = layout.in_dim_size("offset")
    extra = sum((elements - 1) // interval * pad for interval, pad in padding)
    return SharedCandidate(name, descriptor, layout, padding, st.wavefronts, None if ld is None else ld.wavefronts,
                           st.bits, None if ld is None else ld.bits, st.instruction,
                           None if ld is None else ld.instruction, accepted, reason,
                           (elements + extra) * bits // 8, marks)


def k_major_store_layout(shape: Sequence[int], operand_index: int, dtype: DTypeLike = None,
                         num_warps: int | None = None, *, bits: int | None = None) -> BlockedLayout:
    """The ``BlockedLayout`` that holds a wgmma operand tile K-major: each thread ``128 / bits`` elements
    of ``dtype`` (``bits`` wide; ``bits=`` is the old name of ``dtype``), one 16-byte vector, consecutive
    along K (dim 1 of A ``[M, K]``, dim 0 of B ``[K, N]``), the lanes along K as far as it goes, then along
    the other dim, the warps along the other dim. Requires: ``num_warps``.

    >>> k_major_store_layout([64, 128], 1, "fp8", 4)
    BlockedLayout(size_per_thread=(16, 1), threads_per_warp=(4, 8), warps_per_cta=(1, 4), order=(0, 1), cga_layout=())
    """
    bits = dtype_argument(dtype, bits=bits).bits
    if num_warps is None:
        raise LayoutError("num_warps: required, the warps of the CTA")
    if len(shape) != 2 or operand_index not in (0, 1):
        raise LayoutError(f"shape: a wgmma operand is a 2-D tile [M, K] or [K, N], got {list(shape)}")
    k_dim = 1 - operand_index
    k, other = shape[k_dim], shape[1 - k_dim]
    vector = max(1, min(128 // bits, k))
    lanes_k = max(1, min(32, k // vector))
    lanes_other = 32 // lanes_k
    warps_other = max(1, min(num_warps, other // lanes_other))
    warps_k = num_warps // warps_other

    def pair(along_k: int, along_other: int) -> list[int]:
        return [along_other, along_k] if k_dim == 1 else [along_k, along_other]

    return BlockedLayout(pair(vector, 1), pair(lanes_k, lanes_other), pair(warps_k, warps_other), [k_dim, 1 - k_dim])


def _register_fix(store: LinearLayout, consumer: Consumer, etype: ElementType,
                  best: SharedCandidate) -> RegisterFix | None:
    """``RegisterFix`` for a wgmma operand of 8/32-bit elements when the K-major register layout beats
    ``best`` (module doc); None otherwise."""
    from linear_layouts.analysis.conversion import plan_conversion

    shape = _shape(store)
    if consumer.kind != ConsumerKind.WGMMA or etype.bits == 16 or len(shape) != 2 or not store.has_in_dim("warp"):
        return None
    try:
        descriptor = k_major_store_layout(shape, consumer.operand_index, etype, store.in_dim_size("warp"))
        layout = standardize(descriptor.to_linear(shape))
    except LayoutError:
        return None
    if layout == store:
        return None
    fixed = suggest_shared_layout(layout, Consumer.wgmma(consumer.operand_index), etype).best
    if fixed.total_wavefronts >= best.total_wavefronts:
        return None
    plan = plan_conversion(store, layout, etype)
    return RegisterFix(descriptor, layout, fixed, plan.kind, plan.wavefronts)


def suggest_shared_layout(store: LinearLayout, consumer: LinearLayout | Consumer, dtype: DTypeLike, *,
                          given: Descriptor | LinearLayout | None = None,
                          target: Target | str | None = None) -> SharedAdvice:
    """Every shared layout a Gluon author can use for ``store`` -> shared -> ``consumer``, ranked (module doc).

    ``consumer`` is a ``Consumer`` or a distributed ``LinearLayout`` (a ``local_load`` into it). ``given``
    (a shared catalog descriptor or ``LinearLayout``, e.g. the one a kernel uses today) is ranked too,
    marked "given".
    Requires: ``store`` (and the consumer's layout) distributed over one CTA of ``target``'s warps (default:
    the default target, 32 lanes), covering the same tensor; every cost is the target's bank model and
    ISA (no ``ldmatrix`` consumer where it has none). Returns: ``SharedAdvice`` whose ``best`` the consumer accepts (``LayoutError`` if none).

    >>> from linear_layouts.layouts import BlockedLayout
    >>> store = BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0]).to_linear([128, 64])
    >>> advice = suggest_shared_layout(store, Consumer.wgmma(0), "fp16")
    >>> advice.best.gluon, advice.best.store_wavefronts, "get_default_for" in advice.best.marks
    ('gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16)', 128, True)
    """
    if isinstance(consumer, LinearLayout):
        consumer = Consumer.local_load(consumer)
    if not isinstance(consumer, Consumer):
        raise LayoutError(f"consumer must be a Consumer or a distributed LinearLayout, got {type(consumer).__name__}")
    target = resolve(target)
    etype = element_type(dtype)
    bits = etype.bits
    store = standardize(check_distributed(store, "store", target))
    if consumer.kind == ConsumerKind.LDMATRIX and not target.has(LDMATRIX):
        raise LayoutError(f"consumer: {target.arch} has no ldmatrix")
    if consumer.kind == ConsumerKind.WGMMA and not target.has(WGMMA):
        raise LayoutError(f"consumer: {target.arch} has no wgmma")
    if consumer.kind == ConsumerKind.TMA and not target.has(TMA):
        raise LayoutError(f"consumer: {target.arch} has no TMA")
    if consumer.layout is not None:
        load = standardize(check_distributed(consumer.layout, "consumer layout", target))
        if _shape(load) != _shape(store):
            raise LayoutError(f"consumer layout covers {_shape(load)}, the store layout {_shape(store)}: the same tile is needed")
        consumer = Consumer(consumer.kind, load, consumer.operand_index)
    shape = _shape(store)

    rows: list[tuple[str, Descriptor, LinearLayout, tuple[tuple[int, int], ...], tuple[str, ...]]] = []
    for name, descriptor, marks in _nvmma_candidates(shape, bits) if target.backend == "cuda" else ():
        rows.append((name, descriptor, descriptor.to_linear(shape), (), marks))
    # swizzled: the unswizzled layout and the cheapest of the grid
    plain = SwizzledSharedLayout(1, 1, 1, list(reversed(range(len(shape)))))
    rows.append(("swizzled, unswizzled (row-major)", plain, plain.to_linear(shape), (), ()))
    best_swizzled = None
    for layout in _swizzled_grid(len(shape), bits):
        linear = layout.to_linear(shape)
        st = _side(linear, (), store, bits, "store", target, exact=False)
        ld = _side(linear, (), consumer.layout, bits, "load", target, exact=False) \
            if consumer.layout is not None else None
        key = (st.wavefronts + (ld.wavefronts if ld else 0), -(st.bits + (ld.bits if ld else 0)))
        if best_swizzled is None or key < best_swizzled[0]:
            best_swizzled = (key, layout, linear)
    if best_swizzled is not None:
        _, layout, linear = best_swizzled
        rows.append((_GRID_NAME, layout, linear, (), ()))
    if consumer.layout is not None:
        try:
            baseline = padded_baseline(store, consumer.layout, bits, target=target)
        except LayoutError:
            baseline = None
        if baseline is not None and baseline.padding:
            offsets = baseline.layout.bases["offset"]
            padded = PaddedSharedLayout(baseline.padding, offsets, [], shape)
            rows.append((f"padded rows (+{baseline.padding[0][1]} every {baseline.padding[0][0]})", padded,
                         baseline.layout, baseline.padding, ("legacy padding",)))
        optimal = optimal_swizzle(store, consumer.layout, bits, extend_vectors=True, target=target)
        descriptor = recognize(optimal.layout, dtype=etype)
        rows.append(("§5.4 construction, vectors widened", descriptor, standardize(optimal.layout), (), ()))

    if given is not None:
        descriptor = given if not isinstance(given, LinearLayout) else recognize(given, dtype=etype)
        try:
            linear = standardize(descriptor.to_linear(shape))
        except (LayoutError, AttributeError) as error:
            raise LayoutError(f"given: must be a shared layout of the {shape} tile: {error}") from None
        if not linear.has_in_dim("offset"):
            raise LayoutError(f"given: must be a shared layout (offset -> tensor), got {type(descriptor).__name__}")
        padding = tuple(descriptor.interval_padding_pairs) if isinstance(descriptor, PaddedSharedLayout) else ()
        rows.insert(0, ("given", descriptor, linear, padding, ("given",)))

    merged: dict[LinearLayout, SharedCandidate] = {}
    padded_rows: list[SharedCandidate] = []
    for name, descriptor, linear, padding, marks in rows:
        if not padding and linear in merged:  # the same layout twice: keep the simpler class, merge marks
            kept = merged[linear]
            marks += ("swizzled grid's cheapest",) if name == _GRID_NAME else ()
            merged[linear] = dataclasses.replace(kept, marks=tuple(dict.fromkeys(kept.marks + marks)))
            continue
        candidate = _candidate(name, descriptor, linear, padding, marks, store, consumer, bits, target)
        if padding:
            padded_rows.append(candidate)
        else:
            merged[linear] = candidate
    ranked = sorted([*merged.values(), *padded_rows], key=lambda c: (not c.accepted, *preference(
        c.total_wavefronts, c.store_vector_bits + (c.load_vector_bits or 0), _simplicity(c.descriptor),
        c.shared_bytes)))
    if not ranked[0].accepted:
        raise LayoutError(f"consumer: no candidate shared layout is accepted by {consumer.describe()} "
                          f"for a {shape} tile of {etype.name}: {_refusal(consumer, ranked, bits)}")
    return SharedAdvice(store, consumer, etype, tuple(ranked), _register_fix(store, consumer, etype, ranked[0]))
