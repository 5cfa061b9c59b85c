"""A conversion plan explained step by step (``linear-layouts convert``): ``str(plan)`` fitted to a width."""

from __future__ import annotations

from linear_layouts.core.arguments import checked
from linear_layouts.core.element_type import DTypeLike
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import MAX_ELEMENTS
from linear_layouts.present.viz.text import wrap_text
from linear_layouts.target import Target

__all__ = ["plan_report"]


@checked
def plan_report(src: LinearLayout, dst: LinearLayout, dtype: DTypeLike, *, force_shared: bool = False,
                max_elements: int = MAX_ELEMENTS, width: int | None = 100, target: Target | None = None) -> str:
    """The plan of ``src -> dst`` (``plan_conversion``; ``force_shared``: ``plan_shared_memory``) as it
    explains itself (``str(plan)``: the mechanism, each step with its instructions and wavefronts, the
    predicted time beside the alternatives), lines broken at ``width`` characters (``None``: never).
    Layouts above ``max_elements`` (``limits.MAX_ELEMENTS``) are refused; ``target``: the plan's (default: the
    default target), whose cost table the predicted time names."""
    from linear_layouts.analysis.conversion import plan_conversion, plan_shared_memory

    plan = (plan_shared_memory if force_shared else plan_conversion)(src, dst, dtype, max_elements=max_elements,
                                                                    target=target)
    return wrap_text(plan.explain(target), width)
