"""The optimal swizzle (paper §5.4 / §9.2) told step by step, against the baselines, and the ranked
shared layouts with the one recommended answer (``linear-layouts swizzle``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from linear_layouts.core.arguments import checked
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.element_type import DTypeLike, element_type
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import MAX_ELEMENTS, check_layout_size
from linear_layouts.target import Target

if TYPE_CHECKING:
    from linear_layouts.analysis.shared_advice import SharedAdvice

__all__ = ["swizzle_report", "advice_report", "advice_rows", "advice_caption", "RULE"]

#: the one rule that picks the recommended shared layout (``analysis.shared_advice.preference``), in words
RULE = ("accepted by the consumer first, then the fewest store + load wavefronts, then the widest vectors, then the "
        "simplest class (NVMMA, swizzled, padded, linear), then the fewest bytes")


@checked
def swizzle_report(store: LinearLayout, load: LinearLayout, dtype: DTypeLike, *, max_elements: int = MAX_ELEMENTS,
                   width: int | None = 100, title: bool = True, target: Target | None = None) -> str:
    """The construction of :func:`~linear_layouts.analysis.swizzle.optimal_swizzle` for ``store`` then
    ``load`` (V, I, E, F, G, C), a table of store / load wavefronts, vector widths and bytes for the
    unswizzled, padded (legacy, when it applies) layouts and the construction (plain, and with the
    vectors widened: ``extend_vectors=True``), and Lemma 9.5's bound in words. Layouts above
    ``max_elements`` (``limits.MAX_ELEMENTS``) are refused. Lines are broken at ``width`` characters
    (``None``: never); ``title=False`` leaves out the first line (what follows). ``target``: whose lanes
    and bank model (default: the default target)."""
    bitwidth = element_type(dtype).bits
    from linear_layouts.analysis.banks import shared_access, wavefronts
    from linear_layouts.analysis.swizzle import optimal_swizzle, padded_baseline
    from linear_layouts.present.viz.algorithm import steps_text
    from linear_layouts.present.viz.scenarios import row_major_shared
    from linear_layouts.present.viz.text import table_text, wrap_text

    check_layout_size(store, max_elements, "swizzle_report: store")
    check_layout_size(load, max_elements, "swizzle_report: load")
    result = optimal_swizzle(store, load, bitwidth, target=target)
    widened = optimal_swizzle(store, load, bitwidth, extend_vectors=True, target=target)
    lines = [wrap_text("The optimal-swizzle construction (paper §5.4 / §9.2), step by step (m_i, n_i: bit i of "
                       "the row and of the column index):", width)] if title else []
    lines += [steps_text(result, store, load, width), "",
              "With ld.shared / st.shared (the ranking below also weighs ldmatrix / stmatrix):"]
    rows = []
    plain = row_major_shared(list(store.out_dims.values()))
    candidates = [("unswizzled (row-major)", plain, None)]
    try:
        candidates.append(("padded (legacy)", None, padded_baseline(store, load, bitwidth, max_elements=max_elements,
                                                                    target=target)))
    except LayoutError:
        pass
    candidates.append(("§5.4 construction", result.layout, None))
    if widened.layout != result.layout:
        candidates.append(("§5.4 construction, vectors widened", widened.layout, None))
    for name, layout, baseline in candidates:
        if baseline is not None:
            st, ld = baseline.store_wavefronts, baseline.load_wavefronts
            sv, lv, size = baseline.store_vector_bits, baseline.load_vector_bits, baseline.shared_bytes
        else:
            st = wavefronts(layout, store, bitwidth, op="store", target=target)
            ld = wavefronts(layout, load, bitwidth, op="load", target=target)
            sv = shared_access(layout, store, bitwidth, target=target).vector_bits
            lv = shared_access(layout, load, bitwidth, target=target).vector_bits
            size = layout.in_dim_size("offset") * bitwidth // 8
        rows.append([name, str(st), str(ld), str(st + ld), str(sv), str(lv), str(size)])
    lines.append(table_text(rows, ["shared layout", "store", "load", "total", "st bits", "ld bits", "bytes"],
                            max_width=width))
    lines.append("")
    bound, needed = result.lemma_9_5_bound, result.segment_bits
    lines.append(wrap_text(f"Lemma 9.5: at most {bound} segment bits can avoid every lane direction of both "
                           f"accesses (the {store.total_out_dim_size_log2} tensor bits minus the larger lane span); "
                           f"{needed} are needed, so "
                           + ("both accesses can be conflict-free." if bound >= needed else
                              "some conflicts cannot be avoided."), width))
    return "\n".join(lines)


def advice_rows(advice: SharedAdvice) -> tuple[list[str], list[list[str]]]:
    """The ranking's header and rows: rank, layout (and its marks), accepted, store / load / total
    wavefronts, vector bits, the instructions, the Gluon source."""
    from linear_layouts.layouts.gluon_text import gluon_expression

    rows = []
    for i, c in enumerate(advice.candidates, 1):
        load = "-" if c.load_wavefronts is None else str(c.load_wavefronts)
        vectors = f"{c.store_vector_bits}/{'-' if c.load_vector_bits is None else c.load_vector_bits}"
        marks = f" [{', '.join(c.marks)}]" if c.marks else ""
        rows.append([str(i), c.name + marks, "yes" if c.accepted else f"no: {c.reason}", str(c.store_wavefronts),
                     load, str(c.total_wavefronts), vectors, c.store_instruction, c.load_instruction or "-",
                     gluon_expression(c.descriptor)])
    header = ["#", "shared layout", "accepted", "store", "load", "total", "st/ld bits", "store by", "load by", "Gluon"]
    return header, rows


def advice_caption(advice: SharedAdvice) -> str:
    """What the ranking is of: the tile, its element type, the consumer."""
    return (f"{'x'.join(map(str, advice.store.out_dims.values()))} {advice.dtype.name}, stored from the registers, "
            f"read by {advice.consumer.describe()}; wavefronts per CTA (ncu's shared st / ld counts)")


@checked
def advice_report(advice: SharedAdvice, *, width: int | None = 100) -> str:
    """``analysis.shared_advice.SharedAdvice`` as text: the ranked table (fitted to ``width``), then the
    one recommended layout (its first row, by :data:`RULE`) as Gluon source, TTGIR and bases, and the
    K-major register layout that beats it, when there is one (``advice.register_fix``)."""
    from linear_layouts.analysis.shared_advice import SharedAdvice

    if not isinstance(advice, SharedAdvice):
        raise LayoutError(f"advice_report: advice must be a SharedAdvice (suggest_shared_layout's), "
                          f"got {type(advice).__name__}")
    from linear_layouts.layouts.gluon_text import gluon_expression
    from linear_layouts.layouts.ttgir_text import format_attribute
    from linear_layouts.present.viz.text import table_text, wrap_code, wrap_text

    header, rows = advice_rows(advice)
    order = [0, 1, 3, 4, 5, 6, 2, 7, 8, 9]   # the numbers first, where a narrow table keeps them on the row
    header, rows = [header[k] for k in order], [[row[k] for k in order] for row in rows]
    best = advice.best
    loads = "" if best.load_vector_bits is None else f", {best.load_vector_bits}-bit loads"
    cost = (f"{best.store_wavefronts} store wavefronts" if best.load_wavefronts is None else
            f"{best.store_wavefronts} + {best.load_wavefronts} wavefronts")
    lines = [wrap_text(f"Every shared layout a Gluon author can use, ranked by one rule: {RULE}. "
                       f"{advice_caption(advice)}:", width),
             table_text(rows, header, max_width=width, align="left"),
             "",
             wrap_code(f"Recommended (row 1): {gluon_expression(best.descriptor)}", width, "python"),
             wrap_code(f"  TTGIR: {format_attribute(best.descriptor)}", width, "text"),
             wrap_text(f"  {cost}, {best.store_vector_bits}-bit stores{loads}; its bases, for `linear-layouts show`:",
                       width),
             wrap_code(best.layout.to_json(), width, "text")]
    fix = advice.register_fix
    if fix is not None:
        lines += ["", wrap_text(
            f"Better: change the register layout. {advice.consumer.describe()} reads {advice.dtype.bits}-bit "
            f"elements K-major only, and these registers hold the tile the other way, so the store above moves "
            f"{best.store_vector_bits} bits a lane ({best.total_wavefronts} wavefronts). Stored from "
            f"{gluon_expression(fix.descriptor)}, it takes {gluon_expression(fix.shared.descriptor)}: {fix.loaded_total} wavefronts when the tile is loaded in "
            f"that layout, {fix.converted_total} with a convert_layout to it first ({fix.conversion_kind}: "
            f"{fix.conversion_wavefronts}).", width)]
    return "\n".join(lines)
