"""The ``Target`` value: every fact of a GPU that the analyses, the lowering model and codegen use.

A target is an architecture (``sm_90``, ``gfx942``: what the kernel is compiled for) on a device
(``H100``, ``H200``: whose measured cost table prices a plan, ``costs.cost_table``). Its facts:

* ``lanes``: threads of a warp (NVIDIA: 32) or wavefront (AMD CDNA: 64);
* ``shared``: the shared memory (LDS on AMD) as the bank model sees it (:class:`SharedMemory`): banks,
  bank width, the bytes one phase moves, which lanes share a phase (the phase rule);
* capacity: shared bytes per SM, the most one CTA may allocate, what the driver reserves per CTA,
  resident threads, registers per SM and per thread, SMs (CUs), and the L2 bytes the driver reports
  (``CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE``): what decides whether a problem stays in L2 between launches;
* ``features``: the ISA features the lowering and codegen branch on (``ldmatrix``, ``stmatrix``,
  ``wgmma``, ``tma``, ``cp.async``, ``shfl.sync``, ``atom.v``).

>>> t = Target("sm_90", "H100", "cuda", 32, SharedMemory(32, 4, 128, pairs_loads=True), 233472, 1024, 232448,
...            2048, 65536, 255, 132, frozenset({"ldmatrix", "stmatrix"}), 50 << 20)
>>> t.capability, t.has("stmatrix"), t.shared.phase_lanes(32, "load", 16)
(90, True, (1, 2, 4))
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from linear_layouts.core import f2
from linear_layouts.core.errors import LayoutError, did_you_mean
from linear_layouts.core.limits import quote

__all__ = ["Target", "SharedMemory", "FEATURES", "LDMATRIX", "STMATRIX", "WGMMA", "TMA", "CP_ASYNC", "SHFL",
           "VECTOR_ATOMICS", "BACKENDS", "MEMORY_OPS"]

LDMATRIX = "ldmatrix"  #: ldmatrix.sync.aligned (sm_75 and later)
STMATRIX = "stmatrix"  #: stmatrix.sync.aligned (sm_90 and later)
WGMMA = "wgmma"  #: warp-group MMA reading shared memory through the async proxy (sm_90a only)
TMA = "tma"  #: the tensor memory accelerator, cp.async.bulk.tensor (sm_90 and later)
CP_ASYNC = "cp.async"  #: asynchronous global -> shared copies, LDGSTS (sm_80 and later)
SHFL = "shfl.sync"  #: warp shuffles (NVIDIA; AMD's ds_bpermute / DPP are not modelled)
#: vector atomics, red/atom.global.v2/.v4 of f16, bf16, f32 adds (sm_90 and later): Triton packs an fadd's
#: contiguous elements into one instruction only where the ISA has them
VECTOR_ATOMICS = "atom.v"
FEATURES = frozenset({LDMATRIX, STMATRIX, WGMMA, TMA, CP_ASYNC, SHFL, VECTOR_ATOMICS})
BACKENDS = ("cuda", "hip")
MEMORY_OPS = ("load", "store")


def _power_of_two(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0 and not value & (value - 1)


def _positive(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


@dataclass(frozen=True)
class SharedMemory:
    """Shared memory as the bank model sees it: ``banks`` banks of ``bank_bytes`` bytes; one access of
    a warp is cut into phases (wavefronts) of lanes that together move at most ``phase_bytes``; a phase
    costs the most distinct bank words its active lanes ask of one bank.

    Which lanes share a phase (:meth:`phase_lanes`): by default the lowest ``phase_bytes / unit`` lanes
    and their translates (``unit``: what one lane moves, at least one bank word); ``phase_groups`` lists
    the exceptions as ``(op, unit bytes, lane masks spanning phase 0)``, every phase being a translate
    (coset) of that span. ``pairs_loads``: NVIDIA's uniform-address rule, an 8- or 16-byte load by all
    lanes in which every lane asks for lane ``l ^ 1``'s (or ``l ^ 2``'s) address has phases of twice
    as many lanes (stores never pair).

    Example: AMD CDNA3's LDS reads 16 bytes a lane in 8 phases, lanes ``0-3`` with ``20-23`` first
    (phase 0 spans lanes 1, 2 and ``4 ^ 16``): ``phase_groups=(("load", 16, (1, 2, 20)),)``.
    """

    banks: int
    bank_bytes: int
    phase_bytes: int
    pairs_loads: bool = False
    phase_groups: tuple[tuple[str, int, tuple[int, ...]], ...] = ()
    name: str = "shared memory"

    def __post_init__(self) -> None:
        for field in ("banks", "bank_bytes", "phase_bytes"):
            if not _power_of_two(getattr(self, field)):
                raise LayoutError(f"SharedMemory: {field} must be a power of two > 0, got {quote(getattr(self, field))}")
        if self.phase_bytes != self.banks * self.bank_bytes:
            raise LayoutError(f"SharedMemory: phase_bytes must be banks * bank_bytes = "
                              f"{self.banks * self.bank_bytes} (one word of every bank), got {self.phase_bytes}")
        if not isinstance(self.pairs_loads, bool):
            raise LayoutError(f"SharedMemory: pairs_loads must be True or False, got {quote(self.pairs_loads)}")
        if not isinstance(self.phase_groups, tuple):
            raise LayoutError(f"SharedMemory: phase_groups must be a tuple, got {quote(self.phase_groups)}")
        for group in self.phase_groups:
            if not (isinstance(group, tuple) and len(group) == 3 and group[0] in MEMORY_OPS
                    and _power_of_two(group[1]) and group[1] >= self.bank_bytes and isinstance(group[2], tuple)):
                raise LayoutError(f"SharedMemory: phase_groups entries are (op, unit bytes >= bank_bytes, lane masks), "
                                  f"got {quote(group)}")
            op, unit, masks = group
            want = (self.phase_bytes // unit).bit_length() - 1
            if len(masks) != want or not all(_positive(m) for m in masks) or f2.rank(list(masks)) != want:
                raise LayoutError(f"SharedMemory: phase_groups {op} of {unit} bytes needs {want} independent lane "
                                  f"masks (a phase moves {self.phase_bytes} bytes), got {quote(masks)}")

    @property
    def word_bytes(self) -> int:
        """Bytes of one bank word (``bank_bytes``): a lane moves at least one."""
        return self.bank_bytes

    def unit_bytes(self, vector_bytes: int) -> int:
        """What one lane moves as the banks see it: its vector, at least one bank word."""
        return max(vector_bytes, self.bank_bytes)

    def pairs(self, op: str, unit_bytes: int, all_active: bool) -> bool:
        """Whether this access may pair lanes (``pairs_loads``: a load of 8 or 16 bytes by all lanes; the
        caller checks that lane ``l`` asks for lane ``l ^ 1``'s or ``l ^ 2``'s address)."""
        return self.pairs_loads and op == "load" and unit_bytes >= 8 and all_active

    def phase_lanes(self, lanes: int, op: str, unit_bytes: int, *, paired: bool = False) -> tuple[int, ...]:
        """Lane masks spanning the lanes of phase 0 (every phase is a translate of their span): the lowest
        ``phase_bytes / unit_bytes`` lanes (twice as many ``paired``), or the ``phase_groups`` entry.

        >>> SharedMemory(32, 4, 128).phase_lanes(64, "load", 8)
        (1, 2, 4, 8)
        """
        if op not in MEMORY_OPS:
            raise LayoutError(f"op must be 'load' or 'store', got {quote(op)}")
        unit = self.unit_bytes(unit_bytes)
        if not paired:
            for group_op, group_unit, masks in self.phase_groups:
                if group_op == op and group_unit == unit:
                    return masks
        per_phase = min(lanes, max(1, self.phase_bytes // unit) * (2 if paired else 1))
        return tuple(1 << i for i in range(per_phase.bit_length() - 1))

    def phases(self, lanes: int, op: str, unit_bytes: int, *, paired: bool = False) -> int:
        """Phases of an access by all ``lanes`` lanes: ``lanes`` / lanes per phase."""
        return lanes >> len(self.phase_lanes(lanes, op, unit_bytes, paired=paired))


@dataclass(frozen=True)
class Target:
    """A GPU as the package models it (module doc). Build one with ``named_target`` (``known``)."""

    arch: str
    device: str
    backend: str
    lanes: int
    shared: SharedMemory
    sm_shared_bytes: int
    cta_reserved_shared_bytes: int
    cta_shared_bytes: int
    sm_threads: int
    sm_registers: int
    thread_registers: int
    sms: int
    features: frozenset[str]
    l2_bytes: int

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise LayoutError(f"Target: backend must be one of {list(BACKENDS)}, got {quote(self.backend)}")
        pattern = r"sm_[0-9]{2,3}" if self.backend == "cuda" else r"gfx[0-9a-f]{3,4}"
        if not isinstance(self.arch, str) or not re.fullmatch(pattern, self.arch):
            raise LayoutError(f"Target: arch must look like {'sm_90' if self.backend == 'cuda' else 'gfx942'} "
                              f"for backend {self.backend!r}, got {quote(self.arch)}")
        if not isinstance(self.device, str) or not re.fullmatch(r"[A-Za-z0-9][\w.-]*", self.device):
            raise LayoutError(f"Target: device must be a name such as 'H100', got {quote(self.device)}")
        if not _power_of_two(self.lanes) or self.lanes < 2:
            raise LayoutError(f"Target: lanes must be a power of two >= 2 (32 on NVIDIA, 64 on AMD CDNA), "
                              f"got {quote(self.lanes)}")
        if not isinstance(self.shared, SharedMemory):
            raise LayoutError(f"Target: shared must be a SharedMemory, got {quote(self.shared)}")
        for field in ("sm_shared_bytes", "cta_shared_bytes", "sm_threads", "sm_registers", "thread_registers", "sms",
                      "l2_bytes"):
            if not _positive(getattr(self, field)):
                raise LayoutError(f"Target: {field} must be a positive int, got {quote(getattr(self, field))}")
        reserved = self.cta_reserved_shared_bytes
        if isinstance(reserved, bool) or not isinstance(reserved, int) or reserved < 0:
            raise LayoutError(f"Target: cta_reserved_shared_bytes must be an int >= 0, got {quote(reserved)}")
        if self.cta_shared_bytes + reserved > self.sm_shared_bytes:
            raise LayoutError(f"Target: cta_shared_bytes + cta_reserved_shared_bytes ({self.cta_shared_bytes} + "
                              f"{reserved}) must fit in sm_shared_bytes ({self.sm_shared_bytes})")
        if self.sm_threads % self.lanes:
            raise LayoutError(f"Target: sm_threads ({self.sm_threads}) must be whole warps of {self.lanes} lanes")
        if not isinstance(self.features, frozenset) or not self.features <= FEATURES:
            unknown = sorted(set(self.features) - FEATURES) if isinstance(self.features, (set, frozenset)) else \
                self.features
            raise LayoutError(f"Target: features must be a frozenset of {sorted(FEATURES)}, got {quote(unknown)}")
        for group_op, group_unit, masks in self.shared.phase_groups:
            if any(m >= self.lanes for m in masks):
                raise LayoutError(f"Target: shared.phase_groups {group_op} of {group_unit} bytes names lanes "
                                  f"beyond the {self.lanes} lanes of a warp: {quote(masks)}")

    def __hash__(self) -> int:  # the analyses' caches key on it: (arch, device) names a target
        return hash((self.arch, self.device))

    @property
    def name(self) -> str:
        """``sm_90 (H100)``: the architecture and the device."""
        return f"{self.arch} ({self.device})"

    @property
    def capability(self) -> int | None:
        """The compute capability of an NVIDIA target (``sm_90`` -> 90); None for AMD."""
        return int(self.arch[3:]) if self.backend == "cuda" else None

    @property
    def module_target(self) -> str:
        """The target as a TTGIR module names it (``ttg.target``): ``cuda:90``, ``hip:gfx942``."""
        return f"cuda:{self.capability}" if self.backend == "cuda" else f"hip:{self.arch}"

    @property
    def lane_bits(self) -> int:
        """log2(lanes): the lane bits of a distributed layout."""
        return self.lanes.bit_length() - 1

    def has(self, feature: str) -> bool:
        """Whether the ISA has ``feature`` (one of ``FEATURES``); a misspelt feature is a LayoutError."""
        if feature not in FEATURES:
            raise LayoutError(f"feature: unknown {quote(feature)}{did_you_mean(feature, FEATURES)}; "
                              f"known: {sorted(FEATURES)}")
        return feature in self.features
