"""CuTe reports: a layout in CuTe's words (``show --format cute``) and the best CuTe swizzle for a
store and a load beside §9.2's optimum (``swizzle --format cute``)."""

from __future__ import annotations

from linear_layouts.core.arguments import checked
from linear_layouts.core.element_type import DTypeLike, element_type
from linear_layouts.core.layout import LinearLayout

__all__ = ["cute_report", "cute_swizzle_report"]


@checked
def cute_report(layout: LinearLayout) -> str:
    """``layout``'s simplest CuTe form (``cute.from_linear``) as CuTe's print form, C++ and CuTe DSL,
    or the reason there is none.

    >>> from linear_layouts.cute import Layout, Swizzle, composition, to_linear
    >>> print(cute_report(to_linear(composition(Swizzle(3, 3, 3), Layout((8, 64), (64, 1))))).splitlines()[0])
    CuTe: Sw<3,3,3> o 0 o (8,64):(64,1)
    """
    from linear_layouts.cute import TVLayout, from_linear, to_cpp, to_cute_dsl

    form = from_linear(layout)
    if not form.exists:
        return f"no CuTe form: {form.reason}"
    lines = [f"CuTe: {form.layout}"]
    if isinstance(form.layout, TVLayout):
        lines.append("(thread, value) -> index of the tile, colexicographic; threads 0-31 are the lanes, then warps")
    else:
        count = len(form.swizzles)
        proof = "the fewest" if form.minimal else "not proven the fewest (found by elimination)"
        lines.append(f"swizzles: {count} ({proof}); offsets are element offsets")
    lines += [f"C++:  {to_cpp(form.layout)}", f"DSL:  {to_cute_dsl(form.layout)}"]
    return "\n".join(lines)


@checked
def cute_swizzle_report(store: LinearLayout, load: LinearLayout, dtype: DTypeLike) -> str:
    """The best ``Swizzle<B,M,S> ∘ (row- or column-major)`` for ``store`` then ``load``
    (``cute.best_cute_swizzle``) against the best plain CuTe layout and §9.2's optimum, with its C++ and
    CuTe DSL text."""
    from linear_layouts.analysis.banks import shared_access, wavefronts
    from linear_layouts.cute import best_cute_swizzle, from_linear, to_cpp, to_cute_dsl
    from linear_layouts.cute.best import cute_candidates
    from linear_layouts.cute.linear import to_linear
    from linear_layouts.present.viz.text import table_text

    bits = element_type(dtype).bits
    best = best_cute_swizzle(store, load, bits)
    shape = tuple(store.out_dim_size(f"dim{k}") for k in range(store.num_out_dims))
    rows = []
    for major, sw, layout in cute_candidates(shape):
        if sw.is_identity:
            shared = to_linear(layout)
            st, ld = wavefronts(shared, store, bits, op="store"), wavefronts(shared, load, bits)
            rows.append([f"{layout} ({major}-major)", str(st), str(ld), str(st + ld),
                         str(shared_access(shared, store, bits).vector_bits), str(shared_access(shared, load, bits).vector_bits)])
    rows.append([f"{best.layout} (best CuTe swizzle)", str(best.store_wavefronts), str(best.load_wavefronts),
                 str(best.total_wavefronts), str(best.store_vector_bits), str(best.load_vector_bits)])
    opt = best.optimum
    rows.append(["§9.2 optimum (any linear layout)", str(opt.store_wavefronts), str(opt.load_wavefronts),
                 str(opt.total_wavefronts), str(opt.store_vector_bits), str(opt.load_vector_bits)])
    if best.excess_wavefronts > 0:
        verdict = (f"one CuTe swizzle misses the optimum by {best.excess_wavefronts} wavefronts "
                   f"({best.total_wavefronts / opt.total_wavefronts:.2f}x)")
    elif best.excess_wavefronts < 0:
        verdict = ("this CuTe layout beats §9.2's construction, which vectorizes only the registers both "
                   "sides share")
    else:
        verdict = "one CuTe swizzle reaches the optimum"
    optimum_form = from_linear(opt.layout)
    return "\n".join([
        f"Best CuTe swizzle of {best.candidates} candidates ({bits}-bit elements): {verdict}.",
        table_text(rows, ["shared layout", "store", "load", "total", "st bits", "ld bits"]),
        "",
        f"C++:  {to_cpp(best.layout)}",
        f"DSL:  {to_cute_dsl(best.layout)}",
        f"The optimum in CuTe form ({len(optimum_form.swizzles)} swizzles): {optimum_form.layout}",
    ])
