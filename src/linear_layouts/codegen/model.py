"""Bank model of the instructions codegen emits (HARDWARE.md's model, applied to our own addresses).

Each emitted shared instruction of each issuing warp is cut into phases of at most 128 bytes
(16-byte vectors and ldmatrix/stmatrix rows: 4 phases of 8 lanes, except ``.x1``/``.x2`` matrix
accesses: 1 or 2 phases; 8-byte vectors: 2 of 16; otherwise 1 of 32); a phase costs the largest number
of distinct 4-byte words asked of one bank; lanes a store predicates off ask for nothing, and
warps it predicates off issue nothing.  ``analysis.banks.wavefronts`` predicts the same number from
the layouts alone when no lane or warp is predicated off; the GPU suite compares both with ncu.

Example: the seed transpose with the XOR-2m swizzle: ``emitted_wavefronts(step)`` is ``(16, 16)``.
"""

from __future__ import annotations

from collections import Counter

from linear_layouts.codegen.hardware_map import HardwareMap
from linear_layouts.codegen.shared import SharedAccess, access_addresses

__all__ = ["access_wavefronts", "emitted_wavefronts"]

BANKS = 32


def _phase_cost(words: set[int]) -> int:
    per_bank = Counter(w % BANKS for w in words)
    return max(per_bank.values(), default=0)


def access_wavefronts(hmap: HardwareMap, element_bytes: int, access: SharedAccess, store: bool,
                      padding: tuple[int, int] | None = None) -> int:
    """Wavefronts of one side (all warps) of a shared conversion, as emitted (``padding``:
    ``(log2 interval, pad)``)."""
    addresses = access_addresses(hmap, element_bytes, access, store)

    def byte(offset: int) -> int:
        if padding is not None:
            offset = offset + (offset >> padding[0]) * padding[1]
        return offset * element_bytes

    total = 0
    for warp in range(hmap.num_warps):
        if store and warp & hmap.free_warp:
            continue
        for _, expr in addresses:
            starts = [expr.evaluate({"lane": lane, "warp": warp}) for lane in range(32)]
            active = [not (store and lane & hmap.free_lane) for lane in range(32)]
            if access.kind == "matrix":
                # phase i: the 8 rows of matrix i, 16 bytes each, addressed by lanes 8i .. 8i+7
                for i in range(access.width):
                    words: set[int] = set()
                    for lane in range(8 * i, 8 * i + 8):
                        b = byte(starts[lane])
                        words |= set(range(b // 4, b // 4 + 4))
                    total += _phase_cost(words)
                continue
            nbytes = access.width * element_bytes
            lanes_per_phase = 32 // max(nbytes // 4, 1)
            for p in range(0, 32, lanes_per_phase):
                words = set()
                for lane in range(p, p + lanes_per_phase):
                    if active[lane]:
                        b = byte(starts[lane])
                        words |= set(range(b // 4, (b + nbytes - 1) // 4 + 1))
                total += _phase_cost(words)
    return total


def emitted_wavefronts(step) -> tuple[int, int]:
    """(store, load) wavefronts of a ``SharedConversion`` for one tile."""
    padding = None
    if step.padding:
        interval, pad = step.padding
        padding = (interval.bit_length() - 1, pad)
    return (access_wavefronts(step.store_map, step.element_bytes, step.store, True, padding),
            access_wavefronts(step.load_map, step.element_bytes, step.load, False, padding))
