"""A conversion plan explained step by step (``linear-layouts convert``)."""

from __future__ import annotations

from linear_layouts.arguments import checked
from linear_layouts.element_type import DTypeLike, element_type
from linear_layouts.layout import LinearLayout
from linear_layouts.limits import MAX_ELEMENTS
from linear_layouts.viz.text import vectors_text, wrap_text

__all__ = ["plan_report"]


@checked
def plan_report(src: LinearLayout, dst: LinearLayout, dtype: DTypeLike, *, force_shared: bool = False,
                max_elements: int = MAX_ELEMENTS, width: int | None = 100) -> str:
    """The conversion ``src -> dst`` of ``bitwidth``-bit elements explained: register renaming, warp
    shuffles (rounds, words per shuffle) or shared memory (the swizzled layout, both accesses with
    their wavefronts, the bytes), the instructions per thread, and the cost model's verdict with the
    alternatives. ``force_shared`` skips the in-warp strategies and the cost line. Layouts above
    ``max_elements`` (``limits.MAX_ELEMENTS``) are refused. Lines are broken at ``width`` characters
    (``None``: never)."""
    bitwidth = element_type(dtype).bits
    from linear_layouts.codegen.plan import conversion_step

    step = conversion_step(src, dst, bitwidth, force_shared=force_shared, max_elements=max_elements)
    kind = type(step).__name__
    lines = [f"Conversion of a {list(src.out_dims.values())} tensor of {bitwidth}-bit elements:"]
    if kind == "RegisterCopy":
        lines.append("1. Every thread already holds the elements it needs: no data moves between threads.")
        moved = [f"b[{r}] = a[{s}]" for r, s in enumerate(step.source)]
        same = all(r == s for r, s in enumerate(step.source))
        lines.append("2. " + ("Nothing to do (the layouts agree)." if same else
                              "Registers are renamed: " + ", ".join(moved[:16]) + (" ..." if len(moved) > 16 else "")))
    elif kind == "ShuffleConversion":
        plan = step.plan
        lines.append("1. Every warp already holds the data it needs: exchange it with warp shuffles (§5.4).")
        lines.append(f"2. {len(plan.rounds)} round{'s' if len(plan.rounds) != 1 else ''} of shfl.sync.idx, "
                     f"{plan.words_per_shuffle} 32-bit word(s) per shuffle.")
        lines.append("3. Every thread keeps what it receives in its destination registers.")
    else:
        from linear_layouts.analysis.banks import wavefronts

        lines.append("1. Go through shared memory, laid out by the optimal swizzle (§5.4) so both accesses avoid conflicts.")
        lines.append(f"   shared layout (offset -> tensor): {vectors_text(step.shared.bases['offset'])}")
        lines.append(f"2. store from the source layout: {step.store.description}; "
                     f"{wavefronts(step.shared, src, bitwidth, op='store', skip_duplicates=True)} wavefronts")
        lines.append("3. barrier: " + ("__syncwarp() (every warp reads what it stored)" if step.warp_local
                                         else "__syncthreads()"))
        lines.append(f"4. load into the destination layout: {step.load.description}; "
                     f"{wavefronts(step.shared, dst, bitwidth, op='load')} wavefronts")
        lines.append(f"   shared memory: {step.shared_bytes} bytes")
    counts = step.instruction_counts()
    if counts:
        lines.append("Instructions per thread: " + ", ".join(f"{k} × {v}" for k, v in sorted(counts.items())))
    if not force_shared:
        from linear_layouts.analysis import cost_model
        from linear_layouts.analysis.conversion import plan_conversion

        plan = plan_conversion(src, dst, bitwidth, with_baselines=False, max_elements=max_elements)
        others = "".join(f"; {kind}: {cost:g}" for kind, cost in plan.alternatives)
        lines.append(f"Predicted time, SM-ns per CTA (analysis.cost_model, {cost_model.DEFAULT_DEVICE}): "
                     f"{plan.kind}: {plan.cost:g}{others}")
    return wrap_text("\n".join(lines), width)
