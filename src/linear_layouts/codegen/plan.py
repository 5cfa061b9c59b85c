"""From analysis plans to conversion steps and kernels (codegen consumes plans, never re-derives them).

``conversion_step(src, dst, dtype)`` asks ``analysis.conversion.plan_conversion`` for the plan and
turns it into a step (``step_from_plan``): no-op / register permutation -> ``RegisterCopy`` of the
plan's ``register_map``; warp shuffle -> ``ShuffleConversion`` of its ``ShufflePlan``; shared memory
-> ``SharedConversion`` through the plan's swizzled layout with its instruction kinds, vector widths
and register orders.  With ``fallback=True``, where the analysis raises, the step is assembled from
the analysis pieces (register map, ``plan_shuffle``, ``optimal_swizzle`` + ``banks.shared_access``).

Example: ``conversion_kernel(src, dst, "fp16")`` is a ``KernelSource`` whose forward step is the plan
and whose round trip uses the plan of ``dst -> src``.
"""

from __future__ import annotations

import hashlib
from typing import Any

from linear_layouts.analysis.banks import shared_access
from linear_layouts.analysis.shuffles import plan_shuffle, same_warp_data
from linear_layouts.arguments import checked
from linear_layouts.codegen.conversion import RegisterCopy, SharedConversion, row_major_shared
from linear_layouts.codegen.kernel import KernelSource, emit_conversion_kernel
from linear_layouts.codegen.shared import SharedAccess
from linear_layouts.codegen.shuffle import ShuffleConversion
from linear_layouts.element_type import DTypeLike, element_type
from linear_layouts.errors import LayoutError
from linear_layouts.layout import LinearLayout
from linear_layouts.limits import MAX_ELEMENTS, check_layout_size

__all__ = [
    "conversion_step",
    "conversion_kernel",
    "shared_step",
    "baseline_step",
    "baseline_kernel",
    "register_source",
    "step_from_plan",
    "kernel_name",
]


def _bits(dtype: DTypeLike) -> int:
    return element_type(dtype).bits


def _flat(layout: LinearLayout, dim: str) -> tuple[int, ...]:
    return tuple(layout.flat_bases(dim)) if layout.has_in_dim(dim) else ()


def register_source(src: LinearLayout, dst: LinearLayout) -> tuple[int, ...] | None:
    """For layouts with equal lane and warp maps: the src register holding each dst register's
    element (``b[r] = a[source[r]]``), else None."""
    if _flat(src, "lane") != _flat(dst, "lane") or _flat(src, "warp") != _flat(dst, "warp"):
        return None
    owner: dict[int, int] = {}
    n_src = src.in_dim_size("register") if src.has_in_dim("register") else 1
    for r in range(n_src):
        owner.setdefault(src.sublayout(["register"], list(src.out_dim_names)).apply_flat(r) if n_src > 1 else 0, r)
    n_dst = dst.in_dim_size("register") if dst.has_in_dim("register") else 1
    sub = dst.sublayout(["register"], list(dst.out_dim_names)) if n_dst > 1 else None
    source = []
    for r in range(n_dst):
        image = sub.apply_flat(r) if sub is not None else 0
        if image not in owner:
            return None
        source.append(owner[image])
    return tuple(source)


def _access(shared: LinearLayout, layout: LinearLayout, bits: int) -> SharedAccess:
    access = shared_access(shared, layout, bits)
    order = tuple(access.permutation.action[: access.vector_log2])
    return SharedAccess("vector", access.vector_elements, order)


def shared_step(src: LinearLayout, dst: LinearLayout, shared: LinearLayout, dtype: Any) -> SharedConversion:
    """A shared-memory step through ``shared`` with ``banks.shared_access``'s vectors on each side."""
    bits = _bits(dtype)
    return SharedConversion(src, dst, shared, bits // 8, _access(shared, src, bits), _access(shared, dst, bits))


def _swizzle(src: LinearLayout, dst: LinearLayout, bits: int) -> LinearLayout:
    try:
        from linear_layouts.analysis.swizzle import optimal_swizzle  # noqa: PLC0415
    except ImportError:
        return row_major_shared(src)
    return optimal_swizzle(src, dst, bits).layout


def baseline_step(src: LinearLayout, dst: LinearLayout, dtype: Any, *, padded: bool) -> SharedConversion:
    """The legacy shared-memory conversion (``analysis.swizzle.padded_baseline``): its plain row-major
    layout, padded by one access width per row (``padded``) or not (unswizzled)."""
    from linear_layouts.analysis.swizzle import padded_baseline  # noqa: PLC0415

    bits = _bits(dtype)
    base = padded_baseline(src, dst, bits)
    step = shared_step(src, dst, base.layout, bits)
    if not padded or not base.padding:
        return step
    (interval, pad), = base.padding
    return SharedConversion(src, dst, base.layout, bits // 8, step.store, step.load, (interval, pad))


def _plan_access(instruction: str, vector_bits: int, permutation: Any, bits: int) -> SharedAccess:
    """A codegen ``SharedAccess`` from a ``SharedMemoryPlan`` side: its PTX instruction kind, vector
    bits and register order (``ColumnAction``)."""
    order = tuple(getattr(permutation, "action", ()) or ())
    if "matrix" in instruction:
        width = int(instruction.split(".x")[1].split(".")[0]) if ".x" in instruction else 1
        return SharedAccess("matrix", width, order, trans=".trans" in instruction)
    width = max(1, vector_bits // bits)
    return SharedAccess("vector", width, order[: width.bit_length() - 1])


@checked
def step_from_plan(plan: Any) -> Any:
    """The conversion step executing an ``analysis.conversion.ConversionPlan``."""
    from linear_layouts.analysis import conversion as cv  # noqa: PLC0415

    if not isinstance(plan, cv.ConversionPlan):
        raise LayoutError(f"step_from_plan: plan must be a ConversionPlan, got {type(plan).__name__}")
    src, dst, bits = plan.src, plan.dst, plan.bitwidth
    if plan.kind in (cv.NO_OP, cv.REGISTER_PERMUTATION):
        return RegisterCopy(src, dst, tuple(plan.register_map))
    if plan.kind == cv.WARP_SHUFFLE:
        return ShuffleConversion(plan.shuffle)
    if plan.kind == cv.SHARED_MEMORY:
        s = plan.shared
        return SharedConversion(
            src, dst, s.layout, bits // 8,
            _plan_access(s.store_instruction, s.store_vector_bits, s.store_permutation, bits),
            _plan_access(s.load_instruction, s.load_vector_bits, s.load_permutation, bits),
        )
    raise LayoutError(f"plan: {plan.kind!r} conversions are not emitted (one CTA only)")


@checked
def conversion_step(src: LinearLayout, dst: LinearLayout, dtype: Any, *, force_shared: bool = False,
                    fallback: bool = False, max_elements: int = MAX_ELEMENTS) -> Any:
    """The step executing ``plan_conversion(src, dst, dtype)``.  ``force_shared``: the plan's
    shared-memory alternative (``plan_shared_memory``) even where a cheaper mechanism exists.
    ``fallback``: where the analysis raises, assemble the step from its pieces (module docstring).
    Layouts above ``max_elements`` inputs or elements (``limits.MAX_ELEMENTS``) are refused."""
    from linear_layouts.analysis import conversion as cv  # noqa: PLC0415

    bits = _bits(dtype)
    check_layout_size(src, max_elements, "conversion_step: src")
    check_layout_size(dst, max_elements, "conversion_step: dst")
    try:
        if force_shared:
            shared = cv.plan_shared_memory(src, dst, bits, with_baselines=False, max_elements=max_elements)
            plan = cv.ConversionPlan(cv.SHARED_MEMORY, src, dst, bits, shared.instructions, shared.wavefronts,
                                     0.0, shared=shared)
        else:
            plan = cv.plan_conversion(src, dst, bits, with_baselines=False, max_elements=max_elements)
        return step_from_plan(plan)
    except LayoutError:
        if not fallback:
            raise
    if not force_shared:
        source = register_source(src, dst)
        if source is not None:
            return RegisterCopy(src, dst, source)
        if same_warp_data(src, dst):
            return ShuffleConversion(plan_shuffle(src, dst, bits))
    return shared_step(src, dst, _swizzle(src, dst, bits), bits)


def kernel_name(prefix: str, *parts: Any) -> str:
    """A C identifier ``prefix_<hash of parts>``, stable across runs."""
    digest = hashlib.sha1(repr(parts).encode()).hexdigest()[:12]
    return f"{prefix}_{digest}"


@checked
def conversion_kernel(src: LinearLayout, dst: LinearLayout, dtype: Any, *, force_shared: bool = False,
                      fallback: bool = False, name: str | None = None, max_elements: int = MAX_ELEMENTS) -> KernelSource:
    """Kernel load(src) -> plan -> store(dst), with the ``dst -> src`` plan for round trips. Layouts above
    ``max_elements`` inputs or elements (``limits.MAX_ELEMENTS``) are refused."""
    bits = _bits(dtype)
    if dict(src.out_dims) != dict(dst.out_dims):
        raise LayoutError(f"dst: out dims {dst.out_dims} differ from src's {src.out_dims}")
    n = max_elements
    forward = conversion_step(src, dst, bits, force_shared=force_shared, fallback=fallback, max_elements=n)
    backward = conversion_step(dst, src, bits, force_shared=force_shared, fallback=fallback, max_elements=n)
    name = name or kernel_name("ll_convert", src, dst, bits, force_shared)
    return emit_conversion_kernel(name, src, dst, bits // 8, forward, backward, max_elements=n)


def baseline_kernel(src: LinearLayout, dst: LinearLayout, dtype: Any, *, padded: bool,
                    name: str | None = None) -> KernelSource:
    """Kernel like ``conversion_kernel`` through the legacy padded (or unswizzled) shared layout."""
    bits = _bits(dtype)
    forward = baseline_step(src, dst, bits, padded=padded)
    backward = baseline_step(dst, src, bits, padded=padded)
    name = name or kernel_name("ll_padded" if padded else "ll_plain", src, dst, bits)
    return emit_conversion_kernel(name, src, dst, bits // 8, forward, backward)
