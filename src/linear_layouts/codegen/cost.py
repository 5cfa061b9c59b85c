"""What a conversion step costs as codegen emits it: ``step_counts`` counts the shared-memory wavefronts,
``shfl.sync``, byte permutes / selects and barriers of one step of one CTA in steady state (its own
preferred packings on both sides, as ``kernel.choose_packings`` picks them in a loop; ``packings``: the
register packings a kernel gives the step instead, whose byte permutes at the seams it then counts), and
``step_time_ns`` prices them with the device table of ``analysis.cost_model``.  For a warp-shuffle
step the counts equal ``analysis.op_counts.shuffle_counts`` of its plan, which analysis prices without
codegen (tests/codegen/test_op_counts.py checks the two agree field by field).

Example: ``step_time_ns(conversion_step(src, dst, 16), warps=4)``.
"""

from __future__ import annotations

from linear_layouts.analysis.cost_model import conversion_time_ns, copied_load_wavefronts
from linear_layouts.analysis.op_counts import OpCounts
from linear_layouts.codegen.conversion import SharedConversion, canonical_vector_order
from linear_layouts.codegen.model import emitted_wavefronts
from linear_layouts.codegen.packing import Emission, Packing
from linear_layouts.target import Target

__all__ = ["step_counts", "step_time_ns"]


def step_counts(step, trailing_barrier: bool = False, packings: tuple[Packing, Packing] | None = None) -> OpCounts:
    """Counts of one step (``trailing_barrier``: the kernel keeps the barrier after the load, as with
    one shared buffer; with two buffers in a loop it does not; ``packings``: the (source, destination)
    register packings the kernel runs the step between, default the step's preferred ones).  E.g. a
    16-bit shuffle step of a round trip whose other step packs the words otherwise pays the byte
    permutes between the two packings on top of its own."""
    if isinstance(step, SharedConversion):
        step = canonical_vector_order(step)
    ins, outs = step.packings()
    src, dst = (step.plan.src, step.plan.dst) if hasattr(step, "plan") else (step.src, step.dst)
    w = step.element_bytes if hasattr(step, "element_bytes") and step.element_bytes else 4
    pin = ins[0] if ins else Packing.natural(w, src.in_dim_size_log2("register", missing_ok=True))
    pout = outs[0] if outs else Packing.natural(w, dst.in_dim_size_log2("register", missing_ok=True))
    if packings is not None:
        pin, pout = packings
    em = Emission("c")
    step.emit_words("a", "b", pin, pout, em, "smem", trailing_barrier)
    shfl = sum(n for k, n in step.instruction_counts().items() if k.startswith("shfl"))
    if isinstance(step, SharedConversion):
        st, ld = emitted_wavefronts(step)
        barriers = 2 if trailing_barrier else 1
        cta = barriers if step.barrier_scope == "cta" else 0
        return OpCounts(st + ld, 0, em.alu, cta, barriers - cta)
    return OpCounts(0, shfl, em.alu, 0, 0)


def step_time_ns(step, warps: int, device: str | None = None, trailing_barrier: bool = False, *,
                 target: Target | None = None) -> float:
    """Predicted SM-nanoseconds of one step of a CTA of ``warps`` warps on ``target``'s table (``device``: a
    table by name instead; the loads of warps holding the same data priced as copies,
    ``cost_model.copied_load_wavefronts``)."""
    copied = 0
    if isinstance(step, SharedConversion):
        copied = copied_load_wavefronts(emitted_wavefronts(canonical_vector_order(step))[1], step.dst)
    return conversion_time_ns(step_counts(step, trailing_barrier), warps, device, copied, target=target)
