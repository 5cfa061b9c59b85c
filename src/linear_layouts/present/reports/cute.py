"""CuTe reports: a layout in CuTe's words (``show --format cute``), the CuTe layouts for a store and a
load ranked with the one recommended (``swizzle --format cute``), and the recommended layout for a wgmma /
TMA consumer in CuTe's words (``swizzle STORE wgmma-b --format cute``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from linear_layouts.core.arguments import checked
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.element_type import DTypeLike, element_type
from linear_layouts.core.layout import LinearLayout

if TYPE_CHECKING:
    from linear_layouts.analysis.shared_advice import SharedAdvice

__all__ = ["cute_report", "cute_swizzle_report", "cute_advice_report", "reduction_note", "CUTE_RULE"]

#: the rule that picks the recommended CuTe layout: ``analysis.shared_advice.preference`` with, as the
#: simplicity, the number of swizzles plus one for an inner layout that is not plain row- or column-major
CUTE_RULE = ("the fewest store + load wavefronts, then the widest vectors, then the simplest form (fewest swizzles, "
             "on a plain row- or column-major layout)")


def reduction_note(source: Any, layout: LinearLayout) -> str | None:
    """Why ``source`` (a CuTe value as the user wrote it) prints as another CuTe form of ``layout``: a
    swizzle whose source bits (``YYY``) or target bits (``ZZZ``) lie at or above the layout's ``2**n``
    offsets moves nothing there (``Swizzle<3,4,3> o (8,64):(64,1)``: bit 9 is beyond 512 elements, so it
    acts as ``Sw<2,4,3>``). None when ``source`` is not a swizzled CuTe layout.

    >>> from linear_layouts.cute import parse_cute, to_linear
    >>> s = parse_cute("Swizzle<3,4,3> o (8,64):(64,1)")
    >>> reduction_note(s, to_linear(s))
    'note: Swizzle<3,4,3> acts as Sw<2,4,3> on these 512 elements: its source bit 9 (offset 512) lies outside them, so it XORs nothing'
    """
    from linear_layouts.cute import ComposedLayout, Swizzle

    outer = source.outer if isinstance(source, ComposedLayout) else source if isinstance(source, Swizzle) else None
    if not isinstance(outer, Swizzle) or outer.is_identity or not layout.has_in_dim("offset"):
        return None
    n = layout.in_dim_size("offset").bit_length() - 1
    zzz = [outer.base + max(-outer.shift, 0) + i for i in range(outer.bits)]
    yyy = [outer.base + max(outer.shift, 0) + i for i in range(outer.bits)]
    kept = sum(1 for y, z in zip(yyy, zzz) if y < n and z < n)
    if kept == outer.bits:
        return None
    lost = [y for y, z in zip(yyy, zzz) if y >= n or z >= n]
    effective = Swizzle(kept, outer.base, outer.shift) if kept else None
    acts = f"acts as {effective}" if effective is not None and abs(outer.shift) >= kept else "swizzles nothing"
    bits = ", ".join(str(y) for y in lost)
    offsets = ", ".join(str(1 << y) for y in lost)
    return (f"note: Swizzle<{outer.bits},{outer.base},{outer.shift}> {acts} on these {1 << n} elements: its source "
            f"bit{'s' if len(lost) > 1 else ''} {bits} (offset{'s' if len(lost) > 1 else ''} {offsets}) "
            f"lie{'' if len(lost) > 1 else 's'} outside them, so {'they XOR' if len(lost) > 1 else 'it XORs'} nothing")


@checked
def cute_report(layout: LinearLayout, *, source: Any = None, width: int | None = None) -> str:
    """``layout``'s simplest CuTe form (``cute.from_linear``) as CuTe's print form, C++ and CuTe DSL,
    or the reason there is none; ``source`` (the CuTe value the user wrote) adds one note line when the
    form printed differs from it (:func:`reduction_note`). Code lines are broken at ``width``.

    >>> from linear_layouts.cute import Layout, Swizzle, composition, to_linear
    >>> print(cute_report(to_linear(composition(Swizzle(3, 3, 3), Layout((8, 64), (64, 1))))).splitlines()[0])
    CuTe: Sw<3,3,3> o 0 o (8,64):(64,1)
    """
    from linear_layouts.cute import TVLayout, from_linear, to_cpp, to_cute_dsl, to_pycute
    from linear_layouts.present.viz.text import wrap_code, wrap_text

    form = from_linear(layout)
    if not form.exists:
        return wrap_text(f"no CuTe form: {form.reason}", width)
    lines = [f"CuTe: {form.layout}"]
    if source is not None and str(source) != str(form.layout):
        note = reduction_note(source, layout)
        lines.append(wrap_text(note or f"note: written as {source}; {form.layout} is the simplest CuTe form of "
                                        "the same map", width))
    if isinstance(form.layout, TVLayout):
        lines.append("(thread, value) -> index of the tile, colexicographic; threads 0-31 are the lanes, then warps")
    else:
        count = len(form.swizzles)
        proof = "the fewest" if form.minimal else "not proven the fewest (found by elimination)"
        lines.append(f"swizzles: {count} ({proof}); offsets are element offsets")
    lines += [wrap_code(f"C++:  {to_cpp(form.layout)}", width, "c"),
              wrap_code(f"DSL:  {to_cute_dsl(form.layout)}", width, "python")]
    if not isinstance(form.layout, TVLayout):
        lines.append(wrap_code(f"pycute: {to_pycute(form.layout)}", width, "python"))
    return "\n".join(lines)


@checked
def cute_swizzle_report(store: LinearLayout, load: LinearLayout, dtype: DTypeLike, *, width: int | None = None) -> str:
    """The CuTe layouts for ``store`` then ``load``: the plain row- and column-major ones, the best
    ``Swizzle<B,M,S> ∘ (row- or column-major)`` (``cute.best_cute_swizzle``) and §9.2's construction
    (vectors widened) in CuTe form, ranked by :data:`CUTE_RULE`; the first is the one recommended, with
    its C++ and CuTe DSL text."""
    from linear_layouts.analysis.banks import shared_access, wavefronts
    from linear_layouts.analysis.shared_advice import preference
    from linear_layouts.analysis.swizzle import optimal_swizzle
    from linear_layouts.cute import best_cute_swizzle, from_linear, to_cpp, to_cute_dsl
    from linear_layouts.cute.best import cute_candidates
    from linear_layouts.cute.linear import to_linear
    from linear_layouts.present.viz.text import table_text, wrap_code, wrap_text

    bits = element_type(dtype).bits
    best = best_cute_swizzle(store, load, bits)
    shape = tuple(store.out_dim_size(f"dim{k}") for k in range(store.num_out_dims))
    # label, CuTe layout, store / load wavefronts, store / load bits, simplicity
    found: list[tuple[str, Any, int, int, int, int, int]] = []

    def add(label: str, cute: Any, shared: LinearLayout, swizzles: int) -> None:
        found.append((label, cute, wavefronts(shared, store, bits, op="store"), wavefronts(shared, load, bits),
                      shared_access(shared, store, bits).vector_bits, shared_access(shared, load, bits).vector_bits,
                      swizzles))

    plain = {str(layout) for _, sw, layout in cute_candidates(shape) if sw.is_identity}
    for major, sw, layout in cute_candidates(shape):
        if sw.is_identity:
            add(f"{layout} ({major}-major)", layout, to_linear(layout), 0)
    add(f"{best.layout} (one swizzle)", best.layout, best.shared, 1)
    construction = optimal_swizzle(store, load, bits, extend_vectors=True)
    form = from_linear(construction.layout)
    if form.exists:
        count = len(form.swizzles)
        inner = getattr(form.layout, "inner", form.layout)
        add(f"§9.2 construction: {form.layout} ({count} swizzle{'s' if count != 1 else ''})", form.layout,
            construction.layout, count + (str(inner) not in plain))
    ranked = sorted(found, key=lambda r: preference(r[2] + r[3], r[4] + r[5], r[6]))
    rows = [[str(i), label, str(st), str(ld), str(st + ld), str(sv), str(lv)]
            for i, (label, _, st, ld, sv, lv, _) in enumerate(ranked, 1)]
    label, chosen, st, ld, sv, lv, _ = ranked[0]
    opt = construction.store_wavefronts + construction.load_wavefronts
    excess = best.total_wavefronts - opt
    verdict = (f"no single CuTe swizzle reaches §9.2's construction: the cheapest needs {excess} more wavefronts "
               f"({best.total_wavefronts / opt:.2f}x)" if excess > 0 else
               "a single CuTe swizzle beats §9.2's construction, which vectorizes only the registers both "
               "sides share" if excess < 0 else "a single CuTe swizzle reaches §9.2's construction")
    return "\n".join([
        wrap_text(f"CuTe layouts for this store and load ({bits}-bit elements; {best.candidates} swizzles searched), "
                  f"ranked by one rule: {CUTE_RULE}; {verdict}.", width),
        table_text(rows, ["#", "shared layout", "store", "load", "total", "st bits", "ld bits"], max_width=width,
                   align="left"),
        "",
        wrap_text(f"Recommended (row 1): {chosen} ({st} + {ld} wavefronts, {sv}-bit stores, {lv}-bit loads)", width),
        wrap_code(f"C++:  {to_cpp(chosen)}", width, "c"),
        wrap_code(f"DSL:  {to_cute_dsl(chosen)}", width, "python"),
    ])


@checked
def cute_advice_report(advice: SharedAdvice, *, width: int | None = None) -> str:
    """The recommended shared layout of ``advice`` (a consumer without a register layout: a wgmma operand, a
    TMA copy) in CuTe's words, with its cost, and the K-major register layout that beats it, if any."""
    from linear_layouts.analysis.shared_advice import SharedAdvice

    if not isinstance(advice, SharedAdvice):
        raise LayoutError(f"cute_advice_report: advice must be a SharedAdvice (suggest_shared_layout's), "
                          f"got {type(advice).__name__}")
    from linear_layouts.layouts.gluon_text import gluon_expression
    from linear_layouts.present.reports.swizzle import RULE
    from linear_layouts.present.viz.text import wrap_text

    best = advice.best
    lines = [wrap_text(f"Recommended for {advice.consumer.describe()} ({advice.dtype.name}; ranked by one rule: "
                       f"{RULE}): {gluon_expression(best.descriptor)}, {best.store_wavefronts} store wavefronts "
                       f"({best.store_vector_bits}-bit stores). In CuTe's words:", width),
             cute_report(best.layout, width=width)]
    fix = advice.register_fix
    if fix is not None:
        same = fix.shared.layout == best.layout
        lines += ["", wrap_text(
            f"Better: store from {gluon_expression(fix.descriptor)} (K-major registers): {fix.loaded_total} wavefronts when the tile is "
            f"loaded that way, {fix.converted_total} with a convert_layout to it first; "
            + ("into the same shared layout." if same else "its shared layout in CuTe's words:"), width)]
        lines += [] if same else [cute_report(fix.shared.layout, width=width)]
    return "\n".join(lines)
