"""Per-step bank usage of one access, for the bank-hit charts (seed 004's bank scope).

The addresses come from :func:`linear_layouts.analysis.bank_simulator.lane_addresses` and the phases
from its hardware rule (``instruction_wavefronts``: phases of at most 128 bytes, twice as many lanes
when 8- or 16-byte loads pair lanes; stores never pair); this module only groups them: for each instruction and
phase, how many lanes land on each bank and how many distinct 4-byte words each bank must serve (the
phase's wavefronts are the largest such count).
"""

from __future__ import annotations

from linear_layouts.core.arguments import checked
from linear_layouts.core.element_type import DTypeLike
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import MAX_ELEMENTS, quote
from linear_layouts.present.viz.svg import BankStep
from linear_layouts.target import Target, resolve

__all__ = ["bank_steps"]


@checked
def bank_steps(shared: LinearLayout, distributed: LinearLayout, dtype: DTypeLike, *, op: str = "load",
               max_elements: int = MAX_ELEMENTS, target: Target | None = None,
               padding: tuple[tuple[int, int], ...] = ()) -> list[BankStep]:
    """One :class:`BankStep` per (warp, instruction, phase) of ``distributed`` loading (storing) ``shared``
    on ``target`` (its phases and banks; default: the default target); ``padding``: a padded layout's
    ``(interval, padding)`` pairs (``PaddedSharedLayout``), which move the offsets.

    The sum of the steps' wavefronts is ``analysis.banks.wavefronts(shared, distributed, dtype, op=op)``.
    Layouts above ``max_elements`` inputs or elements (``limits.MAX_ELEMENTS``) are refused.
    """
    if op not in ("load", "store"):
        raise LayoutError(f"op must be 'load' or 'store', got {quote(op)}")
    from linear_layouts.analysis.bank_simulator import lane_addresses, phase_lanes

    target = resolve(target)
    banks, word_bytes = target.shared.banks, target.shared.bank_bytes
    addresses, vector_bytes = lane_addresses(shared, distributed, dtype, padding=padding, max_elements=max_elements,
                                             target=target)
    steps: list[BankStep] = []
    for warp in range(addresses.shape[0]):
        for instruction in range(addresses.shape[1]):
            groups = phase_lanes([int(a) for a in addresses[warp, instruction]], vector_bytes, op=op, target=target)
            phases = len(groups)
            for phase, group in enumerate(groups):
                lanes_on = [set() for _ in range(banks)]
                words_on = [set() for _ in range(banks)]
                for lane in group:
                    start = int(addresses[warp, instruction, lane])
                    for word in range(start // word_bytes, (start + vector_bytes - 1) // word_bytes + 1):
                        lanes_on[word % banks].add(lane)
                        words_on[word % banks].add(word)
                label = f"warp {warp}, instruction {instruction}" + (f", phase {phase}" if phases > 1 else "")
                steps.append(BankStep(label, tuple(len(s) for s in lanes_on), tuple(len(s) for s in words_on),
                                      max(len(s) for s in words_on)))
    return steps
