"""From analysis plans to conversion steps and kernels: codegen executes a typed plan as it is.

``step_from_plan(plan)`` turns an ``analysis.steps.ConversionPlan`` into the emitter step that runs its
``steps``: a ``RegisterPermutation`` (or a no-op) becomes ``RegisterCopy`` (with its emission), a
``WarpShuffle`` a ``ShuffleConversion``, a store / barrier / load through a shared layout a
``SharedConversion`` with the accesses' instruction kinds, widths, ``.trans`` and register orders.
Nothing is re-planned here and nothing is parsed: ``conversion_step`` asks ``plan_conversion`` once
(``plan_shared_memory`` with ``force_shared``), and a plan the emitters cannot run raises
``LayoutError`` naming the step.

Example: ``conversion_kernel(src, dst, "fp16")`` is a ``KernelSource`` whose forward step is the plan
of ``src -> dst`` and whose round trip is the plan of ``dst -> src``.
"""

from __future__ import annotations

import hashlib
from typing import Any

from linear_layouts.analysis.conversion import plan_conversion, plan_shared_memory, plan_through
from linear_layouts.analysis.steps import (
    Barrier,
    ConversionKind,
    ConversionPlan,
    RegisterPermutation,
    SharedInstruction,
    SharedMemoryAccess,
    WarpShuffle,
)
from linear_layouts.analysis.swizzle import padded_baseline
from linear_layouts.core.arguments import checked
from linear_layouts.codegen.conversion import RegisterCopy, SharedConversion
from linear_layouts.codegen.kernel import KernelSource, cuda_target, emit_conversion_kernel
from linear_layouts.codegen.shared import EmittedAccess
from linear_layouts.codegen.shuffle import ShuffleConversion
from linear_layouts.core.element_type import DTypeLike, element_type
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import MAX_ELEMENTS
from linear_layouts.target import Target

__all__ = [
    "conversion_step",
    "conversion_kernel",
    "shared_step",
    "baseline_step",
    "baseline_kernel",
    "step_from_plan",
    "kernel_name",
]

Step = RegisterCopy | ShuffleConversion | SharedConversion


def _emitted(access: SharedMemoryAccess) -> EmittedAccess:
    """The emitters' form of a plan's shared-memory access: its instruction family, width, ``.trans``
    and register order (all of it for ldmatrix/stmatrix, the vector bits for ld/st.shared)."""
    order = access.register_order.action
    if access.instruction is SharedInstruction.MATRIX:
        return EmittedAccess(SharedInstruction.MATRIX, access.width, order, trans=access.trans)
    return EmittedAccess(SharedInstruction.VECTOR, access.width, order[: access.width.bit_length() - 1])


@checked
def step_from_plan(plan: ConversionPlan) -> Step:
    """The emitter step executing ``plan``'s steps (module doc)."""
    steps = plan.steps
    types = [type(s) for s in steps]
    if not steps:
        n = plan.dst.in_dim_size("register", missing_ok=True)
        return RegisterCopy(plan.src, plan.dst, tuple(range(n)))
    if types == [RegisterPermutation]:
        permutation: RegisterPermutation = steps[0]  # type: ignore[assignment]
        return RegisterCopy(plan.src, plan.dst, permutation.source, permutation.emission, plan.bitwidth // 8)
    if types == [WarpShuffle]:
        return ShuffleConversion(steps[0].plan)  # type: ignore[union-attr]
    return _shared_conversion(plan)


def _shared_conversion(plan: ConversionPlan) -> SharedConversion:
    """The emitter step of a one-CTA shared-memory ``plan`` (steps: store, barrier, load); LayoutError for
    any other plan, naming its kind and steps."""
    steps = plan.steps
    if [type(s) for s in steps] != [SharedMemoryAccess, Barrier, SharedMemoryAccess] \
            or plan.kind is not ConversionKind.SHARED_MEMORY:
        names = ", ".join(type(s).__name__ + (f"({s.scope})" if isinstance(s, Barrier) else "") for s in steps)
        raise LayoutError(f"plan: codegen does not emit a {plan.kind} plan of steps [{names}] (one CTA)")
    store, barrier, load = steps
    step = SharedConversion(plan.src, plan.dst, store.layout, plan.bitwidth // 8,  # type: ignore[union-attr]
                            _emitted(store), _emitted(load))  # type: ignore[arg-type]
    if step.barrier_scope != barrier.scope.value:  # type: ignore[union-attr]
        raise LayoutError(f"plan: a {barrier.scope} barrier, but the emitter orders this conversion with a "  # type: ignore[union-attr]
                          f"{step.barrier_scope} barrier")
    return step


@checked
def conversion_step(src: LinearLayout, dst: LinearLayout, dtype: DTypeLike, *, force_shared: bool = False,
                    max_elements: int = MAX_ELEMENTS, target: Target | None = None,
                    ldmatrix_trans: bool = True) -> Step:
    """The step executing ``plan_conversion(src, dst, dtype, target=target)``; ``force_shared``: the
    shared-memory plan (``plan_shared_memory``) even where a cheaper mechanism exists; ``ldmatrix_trans``:
    theirs. Layouts above ``max_elements`` inputs or elements (``limits.MAX_ELEMENTS``) are refused."""
    plan = plan_shared_memory if force_shared else plan_conversion
    return step_from_plan(plan(src, dst, dtype, max_elements=max_elements, target=target,
                               ldmatrix_trans=ldmatrix_trans))


def shared_step(src: LinearLayout, dst: LinearLayout, shared: LinearLayout, dtype: DTypeLike, *,
                target: Target | None = None) -> SharedConversion:
    """A shared-memory step through the given ``shared`` layout with the widest ld/st.shared each side
    allows (``analysis.conversion.plan_through``)."""
    return _shared_conversion(plan_through(src, dst, shared, dtype, target=target))


def baseline_step(src: LinearLayout, dst: LinearLayout, dtype: DTypeLike, *, padded: bool,
                  target: Target | None = None) -> SharedConversion:
    """The legacy shared-memory conversion (``analysis.swizzle.padded_baseline``): its plain row-major
    layout, padded by one access width per row (``padded``) or not (unswizzled)."""
    bits = element_type(dtype).bits
    base = padded_baseline(src, dst, bits, target=target)
    step = shared_step(src, dst, base.layout, bits, target=target)
    if not padded or not base.padding:
        return step
    (interval, pad), = base.padding
    return SharedConversion(src, dst, base.layout, bits // 8, step.store, step.load, (interval, pad))


def kernel_name(prefix: str, *parts: Any) -> str:
    """A C identifier ``prefix_<hash of parts>``, stable across runs."""
    digest = hashlib.sha1(repr(parts).encode()).hexdigest()[:12]
    return f"{prefix}_{digest}"


@checked
def conversion_kernel(src: LinearLayout, dst: LinearLayout, dtype: DTypeLike, *, force_shared: bool = False,
                      name: str | None = None, max_elements: int = MAX_ELEMENTS,
                      target: Target | None = None) -> KernelSource:
    """Kernel load(src) -> plan -> store(dst), with the ``dst -> src`` plan for round trips, planned and
    emitted for ``target`` (default: the default target; an NVIDIA one, ``kernel.cuda_target``, checked before
    planning, so an AMD target is refused as such). The kernel runs over the plans' layouts and
    element width (a 128-bit element as four 32-bit words). Layouts above ``max_elements`` inputs or
    elements (``limits.MAX_ELEMENTS``) are refused."""
    bits = element_type(dtype).bits
    cuda_target(target)
    if dict(src.out_dims) != dict(dst.out_dims):
        raise LayoutError(f"dst: out dims {dst.out_dims} differ from src's {src.out_dims}")
    n = max_elements
    plan = plan_shared_memory if force_shared else plan_conversion
    forward = plan(src, dst, dtype, max_elements=n, target=target)
    backward = plan(dst, src, dtype, max_elements=n, target=target)
    name = name or kernel_name("ll_convert", src, dst, bits, force_shared)
    return emit_conversion_kernel(name, forward.src, forward.dst, forward.bitwidth // 8, step_from_plan(forward),
                                  step_from_plan(backward), max_elements=n, target=target)


def baseline_kernel(src: LinearLayout, dst: LinearLayout, dtype: DTypeLike, *, padded: bool,
                    name: str | None = None, target: Target | None = None) -> KernelSource:
    """Kernel like ``conversion_kernel`` through the legacy padded (or unswizzled) shared layout."""
    bits = element_type(dtype).bits
    forward = baseline_step(src, dst, bits, padded=padded, target=target)
    backward = baseline_step(dst, src, bits, padded=padded, target=target)
    name = name or kernel_name("ll_padded" if padded else "ll_plain", src, dst, bits)
    return emit_conversion_kernel(name, src, dst, bits // 8, forward, backward, target=target)
