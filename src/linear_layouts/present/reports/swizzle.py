"""The optimal swizzle (paper §5.4 / §9.2) told step by step, against the baselines (``linear-layouts swizzle``)."""

from __future__ import annotations

from linear_layouts.core.arguments import checked
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.element_type import DTypeLike, element_type
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import MAX_ELEMENTS, check_layout_size

__all__ = ["swizzle_report"]


@checked
def swizzle_report(store: LinearLayout, load: LinearLayout, dtype: DTypeLike, *, max_elements: int = MAX_ELEMENTS,
                   width: int | None = 100) -> str:
    """The construction of :func:`~linear_layouts.analysis.swizzle.optimal_swizzle` for ``store`` then
    ``load`` (V, I, E, F, G, C), a table of store / load wavefronts, vector widths and bytes for the
    unswizzled, padded (legacy, when it applies) and optimal layouts, the Lemma 9.5 bound, and the
    optimal layout as a JSON spec (the last line, whole). Layouts above ``max_elements``
    (``limits.MAX_ELEMENTS``) are refused. Prose lines are broken at ``width`` characters (``None``: never)."""
    bitwidth = element_type(dtype).bits
    from linear_layouts.analysis.banks import shared_access, wavefronts
    from linear_layouts.analysis.swizzle import optimal_swizzle, padded_baseline
    from linear_layouts.present.viz.algorithm import steps_text
    from linear_layouts.present.viz.scenarios import row_major_shared
    from linear_layouts.present.viz.text import table_text

    check_layout_size(store, max_elements, "swizzle_report: store")
    check_layout_size(load, max_elements, "swizzle_report: load")
    result = optimal_swizzle(store, load, bitwidth)
    lines = ["Optimal swizzle (paper §5.4 / §9.2), step by step:", steps_text(result, store, load, width), ""]
    rows = []
    plain = row_major_shared(list(store.out_dims.values()))
    candidates = [("unswizzled (row-major)", plain, None)]
    try:
        candidates.append(("padded (legacy)", None, padded_baseline(store, load, bitwidth, max_elements=max_elements)))
    except LayoutError:
        pass
    candidates.append(("optimal (this algorithm)", result.layout, None))
    for name, layout, baseline in candidates:
        if baseline is not None:
            st, ld = baseline.store_wavefronts, baseline.load_wavefronts
            sv, lv, size = baseline.store_vector_bits, baseline.load_vector_bits, baseline.shared_bytes
        else:
            st, ld = wavefronts(layout, store, bitwidth, op="store"), wavefronts(layout, load, bitwidth, op="load")
            sv = shared_access(layout, store, bitwidth).vector_bits
            lv = shared_access(layout, load, bitwidth).vector_bits
            size = layout.in_dim_size("offset") * bitwidth // 8
        rows.append([name, str(st), str(ld), str(st + ld), str(sv), str(lv), str(size)])
    lines.append(table_text(rows, ["shared layout", "store", "load", "total", "st bits", "ld bits", "bytes"]))
    lines.append("")
    lines.append(f"Lemma 9.5 bound on conflict-free segment bits: {result.lemma_9_5_bound} "
                 f"(needed: {result.segment_bits})")
    lines.append("Optimal layout (paste into `linear-layouts show`):")
    lines.append(result.layout.to_json())
    return "\n".join(lines)
