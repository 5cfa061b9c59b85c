"""The wavefronts of one shared-memory access, told step by step (``linear-layouts banks``).

The total is Lemma 9.4's closed form (:func:`linear_layouts.analysis.banks.wavefronts`), checked
against the brute-force bank simulator; then one line per (warp, instruction, phase) with the lanes
that land on each of the 32 banks (:func:`linear_layouts.present.viz.bank_steps.bank_steps`).
"""

from __future__ import annotations

from linear_layouts.core.arguments import checked
from linear_layouts.core.element_type import DTypeLike, element_type
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import MAX_ELEMENTS
from linear_layouts.target import Target
from linear_layouts.present.viz.text import counted

__all__ = ["access_summary", "banks_report"]


@checked
def access_summary(shared: LinearLayout, distributed: LinearLayout, dtype: DTypeLike, op: str, *,
                   max_elements: int = MAX_ELEMENTS, target: Target | None = None,
                   padding: tuple[tuple[int, int], ...] = ()) -> list[str]:
    """Two lines: the wavefronts of ``distributed`` loading (``op="load"``) or storing ``shared``, as
    instructions × phases × wavefronts per phase, with the simulator's count; the vector width and
    Triton's bank-conflict measure. ``target``: whose lanes and bank model (default: the default target).
    ``padding``: a padded layout's ``(interval, padding)`` pairs: its offsets are not linear, so the count is
    the simulator's alone.

    >>> from linear_layouts.present.viz.scenarios import seed_transpose
    >>> s = seed_transpose()
    >>> access_summary(s.shared[2][1], s.load, 32, "load")[0]
    'load: 16 wavefronts (16 instructions × 1 phase × 1 per phase); brute-force simulation: 16'
    """
    bitwidth = element_type(dtype).bits
    from linear_layouts.analysis.bank_simulator import simulate_wavefronts
    from linear_layouts.analysis.banks import bank_conflicts, shared_access, wavefronts, wavefronts_per_phase

    access = shared_access(shared, distributed, bitwidth, target=target)
    if padding:
        simulated = simulate_wavefronts(shared, distributed, bitwidth, op=op, padding=padding,
                                        max_elements=max_elements, target=target)
        pads = ", ".join(f"{p} after every {i}" for i, p in padding)
        return [f"{op}: {simulated} wavefronts (brute-force simulation of the padded offsets: {pads} elements; "
                "Lemma 9.4 counts linear layouts only)",
                f"  vector: {counted(access.vector_elements, 'element')} = {access.vector_bits} bits per lane"]
    total = wavefronts(shared, distributed, bitwidth, op=op, target=target)
    simulated = simulate_wavefronts(shared, distributed, bitwidth, op=op, max_elements=max_elements, target=target)
    phases = access.phases_of(op)
    return [
        f"{op}: {total} wavefronts "
        f"({access.instructions} instructions × {phases} phase{'s' if phases > 1 else ''} × "
        f"{wavefronts_per_phase(access, op=op)} per phase); brute-force simulation: {simulated}",
        f"  vector: {access.vector_elements} element{'s' if access.vector_elements > 1 else ''} = "
        f"{access.vector_bits} bits per lane; bank conflicts (Triton's measure): "
        f"{bank_conflicts(shared, distributed, bitwidth, target=target)}",
    ]


@checked
def banks_report(shared: LinearLayout, distributed: LinearLayout, dtype: DTypeLike, *, op: str = "load",
                 steps: int = 16, max_elements: int = MAX_ELEMENTS, width: int | None = 100,
                 target: Target | None = None, padding: tuple[tuple[int, int], ...] = ()) -> str:
    """:func:`access_summary`, then the first ``steps`` steps: each step's wavefronts and, per bank
    0..31, how many lanes hit it ('.' none, '+' ten or more, '*' the bank serves several words).
    ``steps`` >= 0; layouts above ``max_elements`` (``limits.MAX_ELEMENTS``) are refused. Prose lines
    are broken at ``width`` characters (``None``: never); a step's chart stays on one line, its label
    shortened (``w0 i3 p1``) where the whole one would not fit. ``target``: whose lanes, phases and banks
    (default: the default target); ``padding``: a ``PaddedSharedLayout``'s ``(interval, padding)`` pairs."""
    bitwidth = element_type(dtype).bits
    from linear_layouts.present.viz.bank_steps import bank_steps
    from linear_layouts.present.viz.text import wrap_text

    if steps < 0:
        raise LayoutError(f"steps: the number of steps to list must be >= 0, got {steps}")
    all_steps = bank_steps(shared, distributed, bitwidth, op=op, max_elements=max_elements, target=target,
                           padding=padding)
    lines = access_summary(shared, distributed, bitwidth, op, max_elements=max_elements, target=target,
                           padding=padding)
    lines.append("")
    labels = [s.label for s in all_steps[:steps]]
    label = max([len(s) for s in labels] + [4])
    short = width is not None and 2 + label + 6 + 2 * 32 > width   # "w0 i3 p1" for "warp 0, instruction 3, phase 1"
    if short:
        labels = [s.replace("warp ", "w").replace("instruction ", "i").replace("phase ", "p").replace(",", "")
                  for s in labels]
        label = max([len(s) for s in labels] + [4])
    lines.append("per step" + (" (w warp, i instruction, p phase)" if short else "") + ": wavefronts, then lanes on "
                 "each bank 0..31 ('.' = none, '*' = the bank serves several words)")
    text = wrap_text("\n".join(lines), width)
    for name, step in zip(labels, all_steps[:steps]):
        cells = "".join(". " if n == 0 else (str(n) if n < 10 else "+") + ("*" if w > 1 else " ")
                        for n, w in zip(step.lanes_per_bank, step.words_per_bank))
        text += f"\n  {name:<{label}} {step.wavefronts:>3}  {cells}".rstrip()
    if len(all_steps) > steps:
        text += f"\n  ... {len(all_steps) - steps} more steps (--steps N shows more)"
    return text
