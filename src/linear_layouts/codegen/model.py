"""Bank model of the instructions codegen emits: the addresses of every emitted shared instruction of
every issuing warp, costed by the one hardware rule of ``analysis.bank_simulator``
(``instruction_wavefronts`` for ld/st.shared, ``matrix_instruction_wavefronts`` for
ldmatrix/stmatrix: one phase per 8x16-byte matrix; only loads pair). Lanes a store predicates off
ask for nothing (and still occupy their phase); warps it predicates off issue nothing. ``analysis.banks.wavefronts``
(``skip_duplicates=True`` for the store) predicts the same number from the layouts alone; the GPU
suite compares both with ncu (benchmarks/check_wavefronts_vs_ncu.py replays that comparison).

Example: the seed transpose with the XOR-2m swizzle: ``emitted_wavefronts(step)`` is ``(16, 16)``.
"""

from __future__ import annotations

from linear_layouts.analysis.bank_simulator import instruction_wavefronts, matrix_instruction_wavefronts
from linear_layouts.analysis.steps import SharedInstruction
from linear_layouts.codegen.hardware_map import HardwareMap
from linear_layouts.codegen.shared import EmittedAccess, access_addresses

__all__ = ["emitted_access_wavefronts", "emitted_wavefronts"]


def emitted_access_wavefronts(hmap: HardwareMap, element_bytes: int, access: EmittedAccess, store: bool,
                      padding: tuple[int, int] | None = None) -> int:
    """Wavefronts of one side (all warps) of a shared conversion, as emitted (``padding``:
    ``(log2 interval, pad)``): the addresses of every emitted instruction, costed by the analysis
    simulator's hardware rule."""
    addresses = access_addresses(hmap, element_bytes, access, store)

    def byte(offset: int) -> int:
        if padding is not None:
            offset = offset + (offset >> padding[0]) * padding[1]
        return offset * element_bytes

    active = [not (store and lane & hmap.free_lane) for lane in range(32)]
    total = 0
    for warp in range(hmap.num_warps):
        if store and warp & hmap.free_warp:
            continue
        for _, expr in addresses:
            starts = [byte(expr.evaluate({"lane": lane, "warp": warp})) for lane in range(32)]
            if access.kind is SharedInstruction.MATRIX:
                # lane 8i + j gives row j of matrix i; stmatrix/ldmatrix are never predicated per lane
                total += matrix_instruction_wavefronts(starts[:8 * access.width])
            else:
                total += instruction_wavefronts(starts, access.width * element_bytes, active=active,
                                                op="store" if store else "load")
    return total


def emitted_wavefronts(step) -> tuple[int, int]:
    """(store, load) wavefronts of a ``SharedConversion`` for one tile."""
    padding = None
    if step.padding:
        interval, pad = step.padding
        padding = (interval.bit_length() - 1, pad)
    return (emitted_access_wavefronts(step.store_map, step.element_bytes, step.store, True, padding),
            emitted_access_wavefronts(step.load_map, step.element_bytes, step.load, False, padding))
