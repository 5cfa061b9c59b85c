"""The typed conversion plan: what :func:`~linear_layouts.analysis.conversion.plan_conversion` decides
and code generation executes as it is.

A :class:`ConversionPlan` moves a tensor held in registers in distributed layout ``src`` to registers in
layout ``dst``. Its ``steps`` run in order; each is a frozen value:

* :class:`RegisterPermutation` — ``b[r] = a[source[r]]`` in every thread (nothing moves between threads),
  emitted as its :class:`RegisterEmission` says (byte permutes of packed words, or the words renamed);
* :class:`WarpShuffle` — the rounds of ``shfl.sync.idx`` of an :class:`~.shuffles.ShufflePlan` (§5.4);
* :class:`SharedMemoryAccess` — every warp stores (``op=STORE``) its registers to, or loads them from,
  shared memory laid out by ``layout`` (``offset -> tensor``), with one instruction kind
  (:class:`SharedInstruction`: ``ld/st.shared`` of ``width`` elements per lane, or ``ldmatrix`` /
  ``stmatrix`` ``.x{width}`` with ``.trans``) and the registers in ``register_order`` (a ``ColumnAction``);
* :class:`Barrier` — a barrier of a :class:`BarrierScope` (the CTA's ``bar.sync``, a warp's
  ``bar.warp.sync``, the cluster's barrier) between a store and the loads that read it.

The plan's ``kind`` (:class:`ConversionKind`) names the mechanism and fixes the canonical shape of its
steps, checked at construction (``ConversionPlan.__post_init__``):

=========================  ===================================================================
kind                       steps
=========================  ===================================================================
no-op                      ``()``
register permutation       ``(RegisterPermutation,)``
warp shuffle               exactly one ``WarpShuffle`` (register steps may surround it)
shared memory / cross-CTA  one store access, then a ``Barrier``, then one load access of the same
                           shared layout (register steps may come before / after); the barrier
                           is the CTA's or a warp's (shared memory), the cluster's (cross-CTA)
=========================  ===================================================================

``cost`` is a :class:`Cost` (the model's per-warp cost and what it counts); ``alternatives`` the other
mechanisms that were possible with their costs; ``baselines`` the legacy shared layouts' wavefronts,
only when asked for. ``str(plan)`` explains the plan step by step (what ``linear-layouts convert``
prints); ``repr(plan)`` is one short line.

>>> from linear_layouts import LinearLayout
>>> from linear_layouts.analysis.conversion import plan_conversion
>>> A = LinearLayout({"register": [[1]], "lane": [[2], [4], [8], [16], [32]]}, ["dim0"])
>>> B = LinearLayout({"register": [[32]], "lane": [[1], [2], [4], [8], [16]]}, ["dim0"])
>>> plan = plan_conversion(A, B, "fp32")
>>> plan.kind, [type(s).__name__ for s in plan.steps]
(<ConversionKind.SHARED_MEMORY: 'shared memory'>, ['SharedMemoryAccess', 'Barrier', 'SharedMemoryAccess'])
>>> plan.barrier.scope, plan.store.ptx, plan.store.wavefronts
(<BarrierScope.WARP: 'warp'>, 'st.shared.b32', 2)
>>> dict(plan.alternatives)[ConversionKind.WARP_SHUFFLE].shuffles
2
"""

from __future__ import annotations

import enum
import sys
from dataclasses import dataclass
from typing import Union

from linear_layouts.analysis.shuffles import ShufflePlan
from linear_layouts.core.arguments import checked
from linear_layouts.core.element_type import ElementType
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import ColumnAction, LinearLayout
from linear_layouts.core.limits import quote
from linear_layouts.target import Target, cost_table, resolve

__all__ = [
    "ConversionKind",
    "MemoryOp",
    "RegisterEmission",
    "SharedInstruction",
    "BarrierScope",
    "Cost",
    "RegisterPermutation",
    "WarpShuffle",
    "SharedMemoryAccess",
    "Barrier",
    "Step",
    "Baseline",
    "ConversionPlan",
    "shared_mnemonic",
]


class _Checked(enum.EnumMeta):
    """Enums of this module: ``Kind(value)`` with an unknown value raises LayoutError naming the members
    (Python's ValueError otherwise), and the functional API (``Kind(name, members)``) is refused."""

    def __call__(cls, value, *args, **kwargs):  # type: ignore[override]
        if args or kwargs:
            raise LayoutError(f"{cls.__name__} takes one value, got {1 + len(args) + len(kwargs)} arguments")
        try:
            return super().__call__(value)
        except (ValueError, TypeError):
            raise LayoutError(f"{cls.__name__}: expected one of {[m.value for m in cls]}, "
                              f"got {quote(value)}") from None


class ConversionKind(str, enum.Enum, metaclass=_Checked):
    """The mechanism of a conversion, cheapest first when several are possible (Triton's
    ``minimalCvtLayout`` order: registers, then lanes, then warps, then CTAs). A ``str`` enum: its
    members compare equal to their names as text (``"shared memory"``), for reports and tables."""

    NO_OP = "no-op"
    REGISTER_PERMUTATION = "register permutation"
    WARP_SHUFFLE = "warp shuffle"
    SHARED_MEMORY = "shared memory"
    CROSS_CTA = "cross-CTA"

    def __str__(self) -> str:
        return self.value


class MemoryOp(enum.Enum, metaclass=_Checked):
    """Direction of a shared-memory access."""

    STORE = "store"
    LOAD = "load"

    def __str__(self) -> str:
        return self.value


class RegisterEmission(str, enum.Enum, metaclass=_Checked):
    """How a register permutation of 8- or 16-bit elements (several to a 32-bit word) is emitted.

    ``BYTE_PERMUTES``: both register files in the packings around the step (the natural ones alone),
    the destination's words built from the source's by ``prmt``. ``RENAMED_WORDS``: the destination's
    words are the source's, renamed (``word_packing.renamed``: its packing is the source's under the
    permutation; the source natural, or with duplicated registers out of its words,
    ``word_packing.renaming_packing``), so the step is word moves the compiler renames away, as
    Triton's LLVM values are; the byte permutes, if the words' writers or readers need other
    packings, are theirs. 32- and 64-bit elements are one element a word or more: their permutations
    are word moves either way (``BYTE_PERMUTES``)."""

    BYTE_PERMUTES = "byte permutes"
    RENAMED_WORDS = "renamed words"

    def __str__(self) -> str:
        return self.value


class SharedInstruction(enum.Enum, metaclass=_Checked):
    """The instruction family of a shared-memory access (paper §5.3)."""

    VECTOR = "vector"  #: ld.shared / st.shared of 1, 2, 4, ... elements per lane (at most 16 bytes)
    MATRIX = "matrix"  #: ldmatrix / stmatrix .x1 / .x2 / .x4 (8x8 matrices of b16, optionally .trans)

    def __str__(self) -> str:
        return self.value


class BarrierScope(enum.Enum, metaclass=_Checked):
    """Who waits at a barrier: the CTA (``bar.sync 0`` / ``__syncthreads``), one warp
    (``bar.warp.sync``: a conversion whose shared-memory traffic stays inside each warp), or the
    cluster (``barrier.cluster``: distributed shared memory)."""

    CTA = "cta"
    WARP = "warp"
    CLUSTER = "cluster"

    def __str__(self) -> str:
        return self.value


_VECTOR_SUFFIX = {1: "u8", 2: "u16", 4: "b32", 8: "v2.b32", 16: "v4.b32"}


@checked
def shared_mnemonic(op: MemoryOp, instruction: SharedInstruction, width: int, element_bits: int,
                    trans: bool = False) -> str:
    """PTX opcode of one shared-memory access: ``width`` elements of ``element_bits`` per lane (vector),
    or ``width`` 8x8 b16 matrices (matrix).

    >>> shared_mnemonic(MemoryOp.STORE, SharedInstruction.VECTOR, 4, 32)
    'st.shared.v4.b32'
    >>> shared_mnemonic(MemoryOp.LOAD, SharedInstruction.MATRIX, 4, 16, trans=True)
    'ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16'
    """
    if instruction is SharedInstruction.MATRIX:
        name = "stmatrix" if op is MemoryOp.STORE else "ldmatrix"
        return f"{name}.sync.aligned.m8n8.x{width}{'.trans' if trans else ''}.shared.b16"
    vector_bytes = width * element_bits // 8
    if vector_bytes not in _VECTOR_SUFFIX:
        raise LayoutError(f"access: a shared vector is 1 to 16 bytes, got {vector_bytes}")
    return f"{'st' if op is MemoryOp.STORE else 'ld'}.shared.{_VECTOR_SUFFIX[vector_bytes]}"


@dataclass(frozen=True)
class Cost:
    """A conversion's predicted cost: ``total``, the SM-nanoseconds one conversion of a CTA takes on the
    default device (``analysis.cost_model``: measured building blocks, a latency floor), with the counts
    it comes from: ``shuffles`` (``shfl.sync`` per warp), ``wavefronts`` (shared-memory wavefronts of all
    warps), ``warps`` (warps per CTA, or per cluster for a cross-CTA conversion) and ``alu`` (selects and
    byte permutes per warp, where counted).

    >>> Cost(19.2, wavefronts=32, warps=1)
    Cost(19.2)
    """

    total: float
    shuffles: int = 0
    wavefronts: int = 0
    warps: int = 1
    alu: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.total, (int, float)) or isinstance(self.total, bool) \
                or not 0 <= self.total <= sys.float_info.max:  # not NaN, not inf, not an int beyond a float
            raise LayoutError(f"total: a cost is a finite number >= 0, got {quote(self.total)}")
        for name in ("shuffles", "wavefronts", "alu"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise LayoutError(f"{name}: a count >= 0, got {quote(value)}")
        if not isinstance(self.warps, int) or self.warps < 1:
            raise LayoutError(f"warps: at least one warp, got {quote(self.warps)}")

    def __str__(self) -> str:
        parts = []
        if self.shuffles:
            parts.append(f"{self.shuffles} shfl")
        if self.wavefronts:
            parts.append(f"{self.wavefronts} wavefronts, {self.warps} warp{'s' if self.warps > 1 else ''}")
        if self.alu:
            parts.append(f"{self.alu} ALU")
        return f"{self.total:g}" + (f" ({', '.join(parts)})" if parts else "")

    def __repr__(self) -> str:
        return f"Cost({self.total:g})"


@dataclass(frozen=True)
class RegisterPermutation:
    """``b[r] = a[source[r]]`` in every thread: destination register ``r`` takes source register
    ``source[r]``, emitted as ``emission`` says (:class:`RegisterEmission`)."""

    source: tuple[int, ...]
    emission: RegisterEmission = RegisterEmission.BYTE_PERMUTES

    def __post_init__(self) -> None:
        object.__setattr__(self, "source", _tuple(self.source, "source"))
        if any(not isinstance(s, int) or isinstance(s, bool) or s < 0 for s in self.source):
            raise LayoutError(f"source: register indices >= 0, got {quote(self.source)}")
        if not isinstance(self.emission, RegisterEmission):
            raise LayoutError(f"emission: expected a RegisterEmission, got {quote(self.emission)}")

    @property
    def is_identity(self) -> bool:
        return all(r == s for r, s in enumerate(self.source))

    def __str__(self) -> str:
        if self.is_identity:
            return "Nothing to do (the layouts agree)."
        moved = [f"b[{r}] = a[{s}]" for r, s in enumerate(self.source)]
        return "Registers are renamed: " + ", ".join(moved[:16]) + (" ..." if len(moved) > 16 else "")


@dataclass(frozen=True)
class WarpShuffle:
    """The rounds of an :class:`~.shuffles.ShufflePlan`: one ``shfl.sync.idx.b32`` per 32-bit word of each
    round's payload, then the plan's register copies."""

    plan: ShufflePlan

    def __post_init__(self) -> None:
        if not isinstance(self.plan, ShufflePlan):
            raise LayoutError(f"plan: expected a ShufflePlan, got {type(self.plan).__name__}")

    def __repr__(self) -> str:
        return f"<WarpShuffle: {len(self.plan.rounds)} rounds × {self.plan.words_per_shuffle} shfl.sync.idx.b32>"

    def __str__(self) -> str:
        rounds = len(self.plan.rounds)
        return (f"{rounds} round{'s' if rounds != 1 else ''} of shfl.sync.idx, "
                f"{self.plan.words_per_shuffle} 32-bit word(s) per shuffle.")


def least_wavefronts(access: SharedMemoryAccess, target: Target) -> int:
    """The wavefronts of ``access``' instructions without bank conflicts: each moves its bytes (a lane's vector
    times the target's lanes; 128 bytes a matrix) in ``phase_bytes`` a wavefront, at least one.

    >>> from linear_layouts.target import DEFAULT_TARGET
    >>> least_wavefronts(SharedMemoryAccess(MemoryOp.STORE, LinearLayout.identity_1d(256, "offset", "dim0"),
    ...     SharedInstruction.VECTOR, 4, 32, ColumnAction((), "register", 0), 2, 8), DEFAULT_TARGET)
    8
    """
    if access.instruction is SharedInstruction.MATRIX:
        moved = access.width * 128
    else:
        moved = target.lanes * access.width * access.element_bits // 8
    return access.instructions * max(1, -(-moved // target.shared.phase_bytes))


@dataclass(frozen=True)
class SharedMemoryAccess:
    """Every warp stores its registers to (``op=STORE``) or loads them from (``LOAD``) shared memory laid out
    by ``layout`` (``offset -> tensor``, elements of ``element_bits``).

    ``instruction``/``width``/``trans``: ``ld/st.shared`` of ``width`` elements per lane, or
    ``ldmatrix/stmatrix .x{width}`` (``.trans``). ``register_order``: the distributed layout's register
    bits in the order the instructions consume them (vector or matrix bits first; broadcast registers
    left out). ``instructions``: how many over all warps; ``wavefronts``: the predicted total as emitted
    (stores skip duplicated data: Triton's free registers, lanes and warps).

    Requires: ``width`` a power of two; at most 16 bytes per lane (vector) or 1, 2, 4 matrices of 8-, 16-
    or 32-bit elements (matrix); ``.trans`` only for matrices of 16-bit elements.
    """

    op: MemoryOp
    layout: LinearLayout
    instruction: SharedInstruction
    width: int
    element_bits: int
    register_order: ColumnAction
    instructions: int
    wavefronts: int
    trans: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.op, MemoryOp) or not isinstance(self.instruction, SharedInstruction):
            raise LayoutError(f"op / instruction: expected MemoryOp and SharedInstruction, got {quote(self.op)}, "
                              f"{quote(self.instruction)}")
        if not isinstance(self.layout, LinearLayout) or not self.layout.has_in_dim("offset"):
            raise LayoutError("layout: a shared layout (offset -> tensor)")
        if not isinstance(self.width, int) or isinstance(self.width, bool) or self.width < 1 or self.width & (self.width - 1):
            raise LayoutError(f"width: a power of two, got {quote(self.width)}")
        if isinstance(self.element_bits, bool) or self.element_bits not in (8, 16, 32, 64, 128):
            raise LayoutError(f"element_bits: 8, 16, 32, 64 or 128, got {quote(self.element_bits)}")
        if not isinstance(self.trans, bool):
            raise LayoutError(f"trans: True or False, got {quote(self.trans)}")
        if not isinstance(self.register_order, ColumnAction) or self.register_order.in_dim != "register":
            raise LayoutError("register_order: a ColumnAction on 'register'")
        if self.instruction is SharedInstruction.MATRIX:
            if self.width > 4 or self.element_bits not in (8, 16, 32):
                raise LayoutError(f"ldmatrix/stmatrix: .x1/.x2/.x4 of 8-, 16- or 32-bit elements, got "
                                  f".x{self.width} of {self.element_bits} bits")
            if self.trans and self.element_bits != 16:
                raise LayoutError(f"trans: .trans moves 16-bit elements, got {self.element_bits} bits")
        else:
            if self.trans:
                raise LayoutError("trans: only ldmatrix/stmatrix have a transposing form")
            shared_mnemonic(self.op, self.instruction, self.width, self.element_bits)  # at most 16 bytes
        for name in ("instructions", "wavefronts"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise LayoutError(f"{name}: a count >= 0, got {quote(value)}")

    @property
    def ptx(self) -> str:
        """The PTX opcode, e.g. ``st.shared.v4.b32`` or ``ldmatrix.sync.aligned.m8n8.x4.shared.b16``."""
        return shared_mnemonic(self.op, self.instruction, self.width, self.element_bits, self.trans)

    @property
    def bits_per_lane(self) -> int:
        """Bits each lane moves per instruction (a matrix row share is 32 bits per matrix)."""
        if self.instruction is SharedInstruction.MATRIX:
            return 32 * self.width
        return self.width * self.element_bits

    @property
    def description(self) -> str:
        """``vector x4``, ``matrix x4 trans``: the instruction family and its width."""
        return f"{self.instruction.value} x{self.width}" + (" trans" if self.trans else "")

    def __repr__(self) -> str:
        return (f"<SharedMemoryAccess {self.op}: {self.instructions} × {self.ptx}, order {list(self.register_order.action)}, "
                f"{self.wavefronts} wavefronts>")


@dataclass(frozen=True)
class Barrier:
    """A barrier of ``scope`` between the shared-memory store and the loads that read it."""

    scope: BarrierScope = BarrierScope.CTA

    def __post_init__(self) -> None:
        if not isinstance(self.scope, BarrierScope):
            raise LayoutError(f"scope: expected a BarrierScope, got {quote(self.scope)}")

    @property
    def ptx(self) -> str:
        """The barrier as CUDA writes it: ``__syncthreads()`` (bar.sync), ``__syncwarp()`` (bar.warp.sync),
        ``barrier.cluster``."""
        return {BarrierScope.CTA: "__syncthreads()", BarrierScope.WARP: "__syncwarp()",
                BarrierScope.CLUSTER: "barrier.cluster"}[self.scope]

    def __str__(self) -> str:
        if self.scope is BarrierScope.WARP:
            return f"{self.ptx} (every warp reads what it stored)"
        return self.ptx


#: One step of a conversion plan.
Step = Union[RegisterPermutation, WarpShuffle, SharedMemoryAccess, Barrier]
_STEP_TYPES = (RegisterPermutation, WarpShuffle, SharedMemoryAccess, Barrier)


@dataclass(frozen=True)
class Baseline:
    """A legacy shared layout's wavefronts for the same conversion (for comparison only)."""

    name: str
    store_wavefronts: int
    load_wavefronts: int


def _tuple(value: object, name: str) -> tuple:
    """``value`` as a tuple, if it is a list or tuple."""
    if not isinstance(value, (list, tuple)):
        raise LayoutError(f"{name}: a tuple, got {type(value).__name__}")
    return tuple(value)


def _registers(layout: LinearLayout) -> int:
    return layout.in_dim_size("register", missing_ok=True)


def _warps(layout: LinearLayout) -> int:
    return layout.in_dim_size("warp", missing_ok=True) * layout.in_dim_size("block", missing_ok=True)


@dataclass(frozen=True, repr=False)
class ConversionPlan:
    """A conversion ``src -> dst`` of ``element`` values: ``kind``, the ``steps`` codegen executes, the model
    ``cost``, the ``alternatives`` (kind, cost) that were possible, and the ``baselines`` when asked for.

    Requires: the canonical shape of the steps for the kind (module doc).
    """

    kind: ConversionKind
    src: LinearLayout
    dst: LinearLayout
    element: ElementType
    steps: tuple[Step, ...]
    cost: Cost
    alternatives: tuple[tuple[ConversionKind, Cost], ...] = ()
    baselines: tuple[Baseline, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "steps", _tuple(self.steps, "steps"))
        object.__setattr__(self, "alternatives", _tuple(self.alternatives, "alternatives"))
        object.__setattr__(self, "baselines", _tuple(self.baselines, "baselines"))
        if not isinstance(self.kind, ConversionKind):
            raise LayoutError(f"kind: expected a ConversionKind, got {quote(self.kind)}")
        if not isinstance(self.src, LinearLayout) or not isinstance(self.dst, LinearLayout):
            raise LayoutError("src, dst: LinearLayouts")
        if dict(self.src.out_dims) != dict(self.dst.out_dims):
            raise LayoutError(f"dst: tensor {dict(self.dst.out_dims)} differs from src's {dict(self.src.out_dims)}")
        if not isinstance(self.element, ElementType):
            raise LayoutError(f"element: expected an ElementType, got {quote(self.element)}")
        if not isinstance(self.cost, Cost):
            raise LayoutError(f"cost: expected a Cost, got {quote(self.cost)}")
        if any(not isinstance(s, _STEP_TYPES) for s in self.steps):
            raise LayoutError(f"steps: each one of {[t.__name__ for t in _STEP_TYPES]}")
        for pair in self.alternatives:
            if not (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], ConversionKind)
                    and isinstance(pair[1], Cost) and pair[0] is not self.kind):
                raise LayoutError("alternatives: (another ConversionKind, its Cost) pairs")
        if any(not isinstance(b, Baseline) for b in self.baselines):
            raise LayoutError("baselines: Baseline values")
        self._check_shape()

    def _check_shape(self) -> None:
        kinds = [type(s) for s in self.steps]
        K = ConversionKind
        for step in self.steps:
            if isinstance(step, RegisterPermutation) and len(step.source) != _registers(self.dst):
                raise LayoutError(f"steps: a register permutation gives each of the {_registers(self.dst)} "
                                  f"dst registers a source, got {len(step.source)}")
            if isinstance(step, RegisterPermutation) and any(s >= _registers(self.src) for s in step.source):
                raise LayoutError(f"steps: source registers must be < {_registers(self.src)}")
        if self.kind is K.NO_OP:
            ok = kinds == []
        elif self.kind is K.REGISTER_PERMUTATION:
            ok = kinds == [RegisterPermutation]
        elif self.kind is K.WARP_SHUFFLE:
            ok = kinds.count(WarpShuffle) == 1 and set(kinds) <= {WarpShuffle, RegisterPermutation}
        else:
            accesses = [s for s in self.steps if isinstance(s, SharedMemoryAccess)]
            barriers = [i for i, s in enumerate(self.steps) if isinstance(s, Barrier)]
            ok = (len(accesses) == 2 and accesses[0].op is MemoryOp.STORE and accesses[1].op is MemoryOp.LOAD
                  and accesses[0].layout == accesses[1].layout and len(barriers) == 1
                  and self.steps.index(accesses[0]) < barriers[0] < self.steps.index(accesses[1])
                  and WarpShuffle not in kinds)
            if ok:
                scope = self.steps[barriers[0]].scope
                want = (BarrierScope.CLUSTER,) if self.kind is K.CROSS_CTA else (BarrierScope.CTA, BarrierScope.WARP)
                ok = scope in want and all(a.element_bits == self.element.bits for a in accesses)
        if not ok:
            raise LayoutError(f"steps: {[k.__name__ for k in kinds]} is not the canonical form of a "
                              f"{self.kind} plan (analysis.steps module doc)")

    # ---- what the steps hold, by name --------------------------------------------------------------

    @property
    def bitwidth(self) -> int:
        """Bits per element."""
        return self.element.bits

    @property
    def store(self) -> SharedMemoryAccess | None:
        """The shared-memory store, if the plan goes through shared memory."""
        return next((s for s in self.steps if isinstance(s, SharedMemoryAccess) and s.op is MemoryOp.STORE), None)

    @property
    def load(self) -> SharedMemoryAccess | None:
        """The shared-memory load, if the plan goes through shared memory."""
        return next((s for s in self.steps if isinstance(s, SharedMemoryAccess) and s.op is MemoryOp.LOAD), None)

    @property
    def barrier(self) -> Barrier | None:
        return next((s for s in self.steps if isinstance(s, Barrier)), None)

    @property
    def shared_layout(self) -> LinearLayout | None:
        """The shared layout (offset -> tensor) the plan stores to and loads from, if any."""
        store = self.store
        return store.layout if store is not None else None

    @property
    def shuffle(self) -> ShufflePlan | None:
        """The warp-shuffle plan, if the plan shuffles."""
        return next((s.plan for s in self.steps if isinstance(s, WarpShuffle)), None)

    @property
    def register_map(self) -> tuple[int, ...] | None:
        """``register_map[r]``: the source register destination register ``r`` takes (no-op, register
        permutation); None for the other kinds."""
        if self.kind is ConversionKind.NO_OP:
            return tuple(range(_registers(self.dst)))
        if self.kind is ConversionKind.REGISTER_PERMUTATION:
            return self.steps[0].source  # type: ignore[union-attr]
        return None

    @property
    def instructions(self) -> int:
        """Data-movement instructions over all warps: ``shfl.sync``, or shared stores + loads."""
        shuffle = self.shuffle
        if shuffle is not None:
            return shuffle.shuffles_per_warp * shuffle.num_warps
        return sum(s.instructions for s in self.steps if isinstance(s, SharedMemoryAccess))

    @property
    def wavefronts(self) -> int:
        """Predicted shared-memory wavefronts (store + load, all warps)."""
        return sum(s.wavefronts for s in self.steps if isinstance(s, SharedMemoryAccess))

    @property
    def shared_bytes(self) -> int:
        """Shared memory one CTA allocates: the shared layout's offsets times the element bytes, over the
        CTAs of the cluster (a cluster plan's layout spans them all); 0 without shared memory."""
        layout = self.shared_layout
        if layout is None:
            return 0
        blocks = self.src.in_dim_size("block", missing_ok=True)
        return layout.in_dim_size("offset") * self.bitwidth // 8 // blocks

    def fits(self, target: Target | None = None) -> bool:
        """Whether a CTA of ``target`` (default: the default target) may allocate ``shared_bytes``."""
        return self.shared_bytes <= resolve(target).cta_shared_bytes

    def instruction_counts(self) -> dict[str, int]:
        """Per-warp data-movement instructions ``{PTX opcode: n}`` (every warp issues the same)."""
        warps = _warps(self.src)
        counts: dict[str, int] = {}
        for step in self.steps:
            if isinstance(step, WarpShuffle):
                counts["shfl.sync.idx.b32"] = counts.get("shfl.sync.idx.b32", 0) + step.plan.shuffles_per_warp
            elif isinstance(step, SharedMemoryAccess):
                counts[step.ptx] = counts.get(step.ptx, 0) + step.instructions // warps
        return counts

    # ---- text ------------------------------------------------------------------------------------

    def __str__(self) -> str:
        """The plan explained step by step, priced on the default target (``explain``)."""
        return self.explain()

    def explain(self, target: Target | None = None) -> str:
        """The plan explained step by step (``linear-layouts convert`` prints this); ``target``: the target
        it was planned for, whose cost table the predicted time names (``H100``, or ``H100 table, nearest
        to H200`` where the target's device has no table of its own)."""
        shape = list(self.src.out_dims.values())
        lines = [f"Conversion of a {shape} tensor of {self.bitwidth}-bit elements:"]
        K = ConversionKind
        if self.kind in (K.NO_OP, K.REGISTER_PERMUTATION):
            lines.append("1. Every thread already holds the elements it needs: no data moves between threads.")
            source = self.register_map or ()
            lines.append("2. " + str(RegisterPermutation(source)))
            if self.kind is K.REGISTER_PERMUTATION and self.steps[0].emission is RegisterEmission.RENAMED_WORDS:
                lines.append("   Packed 32-bit words: the destination's words are the source's, renamed "
                             "(no instruction).")
        elif self.kind is K.WARP_SHUFFLE:
            lines.append("1. Every warp already holds the data it needs: exchange it with warp shuffles (§5.4).")
            lines.append("2. " + str(next(s for s in self.steps if isinstance(s, WarpShuffle))))
            lines.append("3. Every thread keeps what it receives in its destination registers.")
        else:
            # the canonical form (checked at construction): one store, one barrier, one load
            store, load = (s for s in self.steps if isinstance(s, SharedMemoryAccess))
            barrier = next(s for s in self.steps if isinstance(s, Barrier))
            how = ("for st.shared.v4 stores and ldmatrix.x4.trans loads (Triton's tl.trans of 16-bit tiles)"
                   if load.trans else "by the optimal swizzle (§5.4)")
            least = [least_wavefronts(access, resolve(target)) for access in (store, load)]
            if store.wavefronts <= least[0] and load.wavefronts <= least[1]:
                lines.append(f"1. Go through shared memory, laid out {how} so both accesses avoid bank conflicts.")
            else:
                lines.append(f"1. Go through shared memory, laid out {how}: {store.wavefronts} store and "
                             f"{load.wavefronts} load wavefronts, where {least[0]} and {least[1]} would be "
                             "conflict-free (no layout of the tensor is both ways).")
            offsets = ", ".join("[" + ",".join(str(c) for c in v) + "]" for v in store.layout.bases["offset"])
            lines.append(f"   shared layout (offset -> tensor): [{offsets}]")
            lines.append(f"2. store from the source layout: {store.description}; {store.wavefronts} wavefronts")
            lines.append(f"3. barrier: {barrier}")
            lines.append(f"4. load into the destination layout: {load.description}; {load.wavefronts} wavefronts")
            lines.append(f"   shared memory: {store.layout.in_dim_size('offset') * self.bitwidth // 8} bytes")
            if not self.fits(target):
                limit = resolve(target)
                lines.append(f"   more than the {limit.cta_shared_bytes} bytes a CTA of {limit.arch} may allocate "
                             "(Target.cta_shared_bytes): codegen refuses this plan")
        counts = self.instruction_counts()
        if counts:
            lines.append("Instructions per thread: " + ", ".join(f"{k} × {v}" for k, v in sorted(counts.items())))
        table = cost_table(target)
        others = "".join(f"; {kind}: {cost.total:g}" for kind, cost in self.alternatives)
        lines.append(f"Predicted time, SM-ns per CTA (analysis.cost_model, {table.costs.name if table.exact else table.label}): "
                     f"{self.kind}: {self.cost.total:g}{others}")
        for baseline in self.baselines:
            lines.append(f"   baseline {baseline.name}: {baseline.store_wavefronts} + {baseline.load_wavefronts} "
                         f"wavefronts")
        return "\n".join(lines)

    def __repr__(self) -> str:
        shape = "x".join(str(s) for s in self.src.out_dims.values())
        warps = _warps(self.src)
        moves = ", ".join(f"{n} × {op}" for op, n in sorted(self.instruction_counts().items())) or "registers only"
        return (f"<ConversionPlan {self.kind}: [{shape}] {self.element}, {warps} warp{'s' if warps > 1 else ''}: "
                f"{moves}; {self.cost.total:.3g} ns>")
