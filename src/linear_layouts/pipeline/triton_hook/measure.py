"""The measured choice: the first launch of each specialization of a ``@triton.jit`` kernel times Triton's
variant and ours on the call's own arguments, and the kernel keeps ours only if it wins beyond the spread.

How the launch path gets both variants. The JIT compiles a specialization once (``JITFunction._do_compile``)
and launches the ``CompiledKernel`` it returns through the kernel's ``run`` (its launcher, held in
``_run``), with ``function`` and ``packed_metadata`` read from the same object -- in Triton 3.6 and 3.9
alike. In ``measured`` mode that compile is Triton's own (``Settings.cache_key`` is empty), and ``arm``, run
right after it, gives the kernel a first launcher of ours (``_FirstLaunch``); the JIT's cache, its keys,
``triton.autotune``'s benchmarking and every later launch are Triton's. At the first launch:

1. our engine runs on the compile's TTIR and TTGIR (``kernel.asm``, kept in Triton's cache) with the call's
   integer arguments; its best candidate is timed unless the model predicts it slower by more than
   ``-MEASURE_FLOOR`` (the model prices what the layouts change, and misses what it does not see: rewrites it
   predicted a few percent slower have run 25-45% faster), narrower global accesses included (model-only
   mode refuses those), else the choice is Triton's;
2. our variant is compiled by ``triton.compile`` of the same ``ASTSource`` with the same options, the
   engine's TTGIR given to our stage (``Settings.ttgir``): the same launcher, Triton's cache for it. A
   variant whose PTX is Triton's but for its line information (``same_code``: the engine chose Triton's own
   layouts) is not timed: the choice is Triton's, with no predicted gain;
3. the call's tensors (those inside tuple arguments too) are cloned (as ``triton.autotune``'s
   ``restore_value`` does) and written back once before anything is launched (a tensor that cannot be, e.g.
   an expanded one whose elements share memory, makes the call not measurable); each variant is launched
   once from that state and the tensors either wrote are compared (integers exactly, floats within
   ``RTOL`` / ``ATOL``): a difference keeps Triton's, with a warning -- which says so where Triton's own
   kernel, launched again from that state, differs from its first launch (a race or an atomic's order);
4. the two are timed in ``pairs`` of samples, alternating which goes first, each sample ``inner`` launches
   between two CUDA events (``inner`` makes a sample last about ``SAMPLE_US``; the pairs fit ``BUDGET_S``).
   A kernel with atomics (``relaunch_unsafe``: a counter that places its writes, a queue, a lock) need not
   survive being launched again on its own results -- a stream compaction's second launch writes past its
   output -- so each of its launches starts from the saved tensors, written back before it: one launch a
   sample (``inner`` 1), the copy outside the events;
5. the tensors are restored, the choice made (``choose``), kept on disk (``decisions``), and the call
   launched once with the winner: what the caller gets is one launch's effect, as without us.

From then on the kernel object launches the winner's binary with the winner's metadata (``become``: its
launcher, function handle and metadata; Triton's object keeps its own module). A later process finds the
decision on disk and compiles ours directly (no measurement). No measurement is made inside CUDA graph
capture (the launch goes to Triton's variant, and the first launch outside capture measures), nor for a
call whose pointer arguments are not PyTorch tensors or tensor descriptors, or cannot be written back (not
restorable): Triton's is launched and the choice recorded as not measured.

Every decision names its basis (``decisions.Basis``: measured faster / not faster, no predicted gain,
outputs differ, not measurable, error) with a one-line reason and, where measured, every sample of both
variants; ``decision_of(kernel)`` returns it. ``$LINEAR_LAYOUTS_TRITON_LOG=1`` traces each step on stderr
(``log``).

The rule (``choose``): ours iff its median time per launch is at least ``MIN_MEASURED_GAIN`` below Triton's
and the two interquartile ranges do not overlap (ours' third quartile below Triton's first) -- a win beyond
the measured spread. Anything less keeps Triton's.

>>> choose([10.0, 10.1, 10.2, 10.1], [9.0, 9.1, 9.0, 9.2])[0]
'ours'
>>> choose([10.0, 10.4, 9.6, 10.2], [9.8, 10.3, 9.5, 9.7])[0]
'triton'
"""

from __future__ import annotations

import dataclasses
import math
import re
import statistics
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from linear_layouts.core.errors import LayoutError
from linear_layouts.limits import shorten
from linear_layouts.pipeline.triton_hook import decisions
from linear_layouts.pipeline.triton_hook.decisions import Basis, Decision
from linear_layouts.pipeline.triton_hook.log import step
from linear_layouts.pipeline.triton_hook.settings import Mode, Settings, overridden
from linear_layouts.pipeline.triton_hook.stage import METADATA_KEY, engine_ttgir, text_digest, warn_once

__all__ = ["choose", "arm", "compile_variant", "decision_of", "relaunch_unsafe", "same_code", "MIN_MEASURED_GAIN", "MEASURE_FLOOR",
           "SAMPLE_US", "BUDGET_S", "RTOL", "ATOL"]

#: ours must be at least this much faster (median per launch) to be kept
MIN_MEASURED_GAIN = 0.01
#: launches per sample: enough to make one sample last about this long (microseconds), at most MAX_INNER
SAMPLE_US = 100.0
MAX_INNER = 100
#: time spent on the timed pairs of one specialization (seconds), within MIN_PAIRS..MAX_PAIRS pairs
BUDGET_S = 0.2
MIN_PAIRS = 10
MAX_PAIRS = 100
#: float outputs agree when |ours - Triton's| <= ATOL + RTOL * |Triton's| (atomics may add in another order)
RTOL = ATOL = 1e-2
#: the TTGIR operations that read and write global memory in one step (``relaunch_unsafe``)
_ATOMICS = re.compile(r"\btt\.(?:atomic_rmw|atomic_cas|descriptor_reduce)\b")


def relaunch_unsafe(ttgir: str) -> bool:
    """Whether a kernel's launches may depend on what its earlier launches wrote through an atomic (its TTGIR
    has ``tt.atomic_rmw``, ``tt.atomic_cas`` or ``tt.descriptor_reduce``): its timed launches each start from the
    saved tensors (module doc, step 4).

    >>> relaunch_unsafe('%3 = tt.atomic_rmw add, acq_rel, gpu, %1, %2 : (!tt.ptr<i32>, i32) -> i32')
    True
    >>> relaunch_unsafe("tt.store %1, %2 : tensor<128x!tt.ptr<f32>>")
    False
    """
    return _ATOMICS.search(ttgir) is not None


#: measured mode times the engine's best candidate unless the model predicts it this much slower (or worse)
MEASURE_FLOOR = -0.10


def _quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, median, q3


def choose(triton_us: Sequence[float], ours_us: Sequence[float],
           min_gain: float = MIN_MEASURED_GAIN) -> tuple[str, str]:
    """(``"ours"`` or ``"triton"``, why) from per-launch times of the two variants (module doc's rule)."""
    if len(triton_us) < 2 or len(ours_us) < 2:
        return "triton", "too few samples to compare"
    t1, tm, _ = _quartiles(triton_us)
    _, om, o3 = _quartiles(ours_us)
    gain = 1 - om / tm if tm > 0 else 0.0
    times = f"measured: ours {om:.2f} us vs Triton's {tm:.2f} us per launch"
    if gain < min_gain:
        return "triton", f"{times} (gain {gain:+.1%} < {min_gain:.0%})"
    if o3 >= t1:
        return "triton", f"{times}, within the spread (ours' third quartile {o3:.2f} >= Triton's first {t1:.2f})"
    return "ours", f"{times} (gain {gain:+.1%}, beyond the spread)"


# ------------------------------------------------------------------------------------------------------------
# the kernel object
# ------------------------------------------------------------------------------------------------------------
_SWAPPED = ("_run", "function", "packed_metadata", "metadata", "asm", "kernel", "n_regs", "n_spills",
            "n_max_threads")


def decision_of(kernel: Any) -> Decision | None:
    """The choice made for a compiled kernel: the measured one (``measured`` mode: also where it was not
    measured, saying why), else the one its compile's metadata records (``model`` mode), else ``None`` (not
    compiled with the hook). ``kernel`` may be the ``@triton.jit`` function (or ``triton.autotune`` /
    ``triton.heuristics`` of one) once launched: the choice of its compiled kernels where they all have one,
    else a LayoutError asking for the compiled kernel a launch returns (``k = kernel[grid](...)``)."""
    if not hasattr(kernel, "metadata") and not hasattr(kernel, "_linear_layouts"):
        jit = kernel
        while not hasattr(jit, "device_caches") and hasattr(jit, "fn"):
            jit = jit.fn
        if hasattr(jit, "device_caches"):
            return _decision_of_jit(jit)
    return _decision_of_compiled(kernel)


def _decision_of_jit(jit: Any) -> Decision | None:
    """``decision_of`` a ``JITFunction``: the one choice its compiled kernels (every device's cache) share."""
    compiled = [k for caches in list(jit.device_caches.values()) for k in list(caches[0].values())
                if hasattr(k, "metadata")]
    name = getattr(jit, "__name__", "kernel")
    if not compiled:
        raise LayoutError(f"kernel: {name} has no compiled kernel yet: decision() takes it after a launch, or the "
                          "compiled kernel a launch returns (k = kernel[grid](...))")
    choices = {_decision_of_compiled(k) for k in compiled}
    if len(choices) > 1:
        raise LayoutError(f"kernel: {name} has {len(compiled)} compiled kernels with {len(choices)} different "
                          "choices (one per specialization): pass the compiled kernel a launch returns "
                          "(k = kernel[grid](...))")
    return choices.pop()


def _decision_of_compiled(kernel: Any) -> Decision | None:
    found = getattr(kernel, "_linear_layouts", None)
    if found is not None:
        return found
    record = getattr(getattr(kernel, "metadata", None), METADATA_KEY, None)
    if not isinstance(record, dict):
        return None
    basis = Basis.PREDICTED_GAIN if record.get("rewritten") else \
        Basis.ERROR if record.get("failed") else Basis.NO_PREDICTED_GAIN
    return Decision("ours" if basis is Basis.PREDICTED_GAIN else "triton", basis, str(record.get("reason", "")),
                    predicted_gain=record.get("predicted_gain"))


def become(kernel: Any, winner: Any | None, decision: Decision, triton_run: Any | None = None) -> None:
    """``kernel`` launches ``winner``'s binary from now on (``None``: its own, ``triton_run``), and records
    ``decision``. Both are loaded first (a later ``_init_handles`` must find nothing left to do)."""
    kernel._init_handles()
    if winner is None:
        if triton_run is not None:
            kernel._run = triton_run
    else:
        winner._init_handles()
        kernel._linear_layouts_variant = winner  # keeps its module loaded as long as the kernel lives
        for name in _SWAPPED:
            if hasattr(winner, name):
                setattr(kernel, name, getattr(winner, name))
    kernel._linear_layouts = decision


def compile_variant(kernel: Any, ttgir: str, ttgir_from: str, options: Any, settings: Settings) -> Any | None:
    """Our variant of ``kernel`` (a ``CompiledKernel`` of an ``ASTSource``): ``triton.compile`` of its source
    with ``options`` (the JIT's) and ``ttgir`` given to our stage, or ``None`` where that compile did not
    take it (our stage warned why) or failed (warned here)."""
    import triton

    given = dataclasses.replace(settings, mode=Mode.MEASURED, ttgir=ttgir, ttgir_from=ttgir_from)
    opts = options.__dict__ if hasattr(options, "__dict__") else dict(options)
    start = time.perf_counter()
    try:
        with overridden(given):
            ours = triton.compile(kernel.src, target=kernel.metadata.target, options=dict(opts))
    except Exception as error:  # noqa: BLE001 - Triton's variant stays
        step(kernel.name, f"our variant: the compile failed: {type(error).__name__}: {shorten(str(error), 200)}")
        warn_once(str(kernel.name), f"compiling our variant failed: {type(error).__name__}: "
                                    f"{shorten(str(error), 200)}")
        return None
    record = getattr(ours.metadata, METADATA_KEY, None)
    taken = isinstance(record, dict) and record.get("rewritten")
    step(kernel.name, f"our variant: compiled in {time.perf_counter() - start:.2f} s (Triton's hash {ours.hash[:12]}), "
                      + ("our TTGIR taken" if taken else f"our TTGIR not taken: {(record or {}).get('reason')}"))
    return ours if taken else None


def _device_name() -> str:
    from triton.runtime import driver

    interface = driver.active.get_device_interface()
    return str(interface.get_device_name(interface.current_device()))


def arm(kernel: Any, options: Any, settings: Settings) -> None:
    """After the JIT compiled ``kernel`` (Triton's variant) with ``options`` in ``measured`` mode: the stored
    decision where there is one (ours compiled and swapped in), else a first launch that measures. A kernel
    that cannot be measured records why (``decision_of``)."""
    name = getattr(kernel, "name", "kernel")
    if getattr(kernel, "_linear_layouts", None) is not None:
        step(name, f"not armed: decided already ({kernel._linear_layouts.basis.value})")
        return
    if not hasattr(kernel, "_init_handles"):
        step(name, f"not armed: the JIT returned a {type(kernel).__name__}, not a compiled kernel "
                   f"(an asynchronous compile)")
        return
    if not hasattr(getattr(kernel, "src", None), "fn") or options is None:
        why = "the kernel is not compiled from a @triton.jit source" if options is not None else \
            "the JIT's compile options are unknown"
        kernel._linear_layouts = Decision("triton", Basis.NOT_MEASURABLE, f"not measured: {why}")
        step(name, f"not armed: {why}")
        return
    ident = decisions.identity(kernel, _device_name())
    stored = decisions.load(ident)
    if stored is not None:
        step(name, f"stored decision found ({decisions.decision_path(ident).name}): {stored.choice}, "
                   f"{stored.basis.value}: {stored.reason}")
        ours = compile_variant(kernel, stored.ttgir, stored.ttgir_from, options, settings) \
            if stored.choice == "ours" else None
        if stored.choice == "ours" and ours is None:
            stored = Decision("triton", Basis.ERROR, "our stored choice no longer compiles",
                              predicted_gain=stored.predicted_gain)
        become(kernel, ours, stored)
        return
    try:
        kernel._init_handles()
    except Exception as error:  # noqa: BLE001 - Triton raises it again at the launch, as without us
        step(name, f"not armed: Triton's kernel does not load: {type(error).__name__}: {shorten(str(error), 200)}")
        return
    kernel._run = _FirstLaunch(kernel, kernel._run, ident, options, settings)
    step(name, f"armed: the first launch measures (compile {kernel.hash[:12]}, device {ident['device']})")


class _NotMeasurable(Exception):
    """The call's arguments cannot be saved and restored."""


class _FirstLaunch:
    """The launcher of an armed kernel: measures at the first launch outside graph capture (module doc)."""

    def __init__(self, kernel: Any, triton_run: Any, ident: dict[str, str], options: Any, settings: Settings):
        self.kernel, self.triton_run, self.ident = kernel, triton_run, ident
        self.options, self.settings = options, settings
        self.lock = threading.Lock()

    def __call__(self, gx: int, gy: int, gz: int, stream: Any, function: Any, packed_metadata: Any,
                 launch_metadata: Any, enter_hook: Any, exit_hook: Any, *args: Any) -> Any:
        kernel = self.kernel
        if _capturing():
            step(kernel.name, "first launch inside CUDA graph capture: Triton's variant, measured at the next launch")
            return self.triton_run(gx, gy, gz, stream, kernel.function, kernel.packed_metadata, launch_metadata,
                                   enter_hook, exit_hook, *args)
        with self.lock:
            if kernel._run is self:
                step(kernel.name, f"first launch: grid ({gx}, {gy}, {gz}), {len(args)} arguments")

                def launcher(k: Any, run: Any) -> Callable[[], None]:
                    return lambda: run(gx, gy, gz, stream, k.function, k.packed_metadata, None, None, None, *args)

                try:
                    decision, winner = self.decide(args, launcher)
                except Exception as error:  # noqa: BLE001 - Triton's variant is launched
                    warn_once(str(kernel.name), f"measuring failed: {type(error).__name__}: {shorten(str(error), 200)}")
                    decision, winner = Decision("triton", Basis.ERROR, f"measuring failed: {type(error).__name__}: "
                                                                       f"{shorten(str(error), 200)}"), None
                step(kernel.name, f"decision: {decision.choice} ({decision.basis.value}): {decision.reason}")
                become(kernel, winner, decision, self.triton_run)
        return kernel._run(gx, gy, gz, stream, kernel.function, kernel.packed_metadata, launch_metadata,
                           enter_hook, exit_hook, *args)

    def decide(self, args: tuple, launcher: Callable[[Any, Any], Callable[[], None]]) -> tuple[Decision, Any]:
        """(the decision, our variant where it wins) for a call with ``args`` (module doc, steps 1-5)."""
        kernel, settings = self.kernel, self.settings
        name = kernel.name
        ttir, ttgir = kernel.asm.get("ttir"), kernel.asm.get("ttgir")
        if not ttir or not ttgir:
            return Decision("triton", Basis.NOT_MEASURABLE,
                            "not measured: Triton's cache keeps no TTIR / TTGIR of the kernel"), None
        scalars = _scalars(kernel, args)
        start = time.perf_counter()
        outcome = engine_ttgir(ttir, ttgir, timeout_s=settings.timeout_s, max_ops=settings.max_ops, scalars=scalars,
                               min_gain=MEASURE_FLOOR, narrowing=True)
        gain = "" if outcome.predicted_gain is None else f", predicted gain {outcome.predicted_gain:+.1%}"
        step(name, f"engine ({time.perf_counter() - start:.2f} s, scalars {scalars}): {outcome.reason}{gain}")
        if outcome.failed:
            warn_once(str(name), outcome.reason)
            return Decision("triton", Basis.ERROR, outcome.reason), None
        if outcome.ttgir is None:
            return self.kept(Decision("triton", Basis.NO_PREDICTED_GAIN, outcome.reason)), None
        digest = text_digest(ttgir)
        ours = compile_variant(kernel, outcome.ttgir, digest, self.options, settings)
        if ours is None:
            refused = Decision("triton", Basis.ERROR, "our TTGIR does not compile",
                               predicted_gain=outcome.predicted_gain)
            return self.kept(refused), None
        if same_code(kernel.asm, ours.asm):
            step(name, "our variant's PTX is Triton's but for line information: not timed")
            return self.kept(Decision("triton", Basis.NO_PREDICTED_GAIN,
                                      "our layouts lower to Triton's own code (the same PTX but for line "
                                      "information)", predicted_gain=outcome.predicted_gain)), None
        try:
            tensors = _tensors(args)
        except _NotMeasurable as why:
            step(name, f"not measurable: {why}")
            return Decision("triton", Basis.NOT_MEASURABLE, f"not measured: {why}",
                            predicted_gain=outcome.predicted_gain), None
        step(name, f"saving {len(tensors)} tensor arguments, then an output check and the timed pairs")
        run_triton, run_ours = launcher(kernel, self.triton_run), launcher(ours, ours.run)
        saved = [t.clone() for t in tensors]
        try:
            _restore(tensors, saved)  # before any launch: each tensor can be written back
        except Exception as error:  # noqa: BLE001 - e.g. an expanded tensor (elements sharing memory)
            why = f"a tensor argument cannot be written back: {type(error).__name__}: {shorten(str(error), 200)}"
            step(name, f"not measurable: {why}")
            return Decision("triton", Basis.NOT_MEASURABLE, f"not measured: {why}",
                            predicted_gain=outcome.predicted_gain), None
        try:
            differs = _outputs_differ(tensors, saved, run_triton, run_ours)
            step(name, f"outputs: {differs}" if differs else "outputs: ours equal Triton's")
            if differs:
                warn_once(str(name), f"our variant's outputs differ from Triton's ({differs})")
                differ = Decision("triton", Basis.OUTPUTS_DIFFER, f"our outputs differ from Triton's: {differs}",
                                  predicted_gain=outcome.predicted_gain)
                return self.kept(differ), None
            fresh = (lambda: _restore(tensors, saved)) if relaunch_unsafe(ttgir) else None
            if fresh is not None:
                step(name, "atomics: each timed launch starts from the saved tensors, one launch a sample")
            triton_us, ours_us, inner = _time_pairs(run_triton, run_ours, fresh)
        finally:
            _restore(tensors, saved)
        step(name, f"timed {len(triton_us)} pairs of {inner} launches: Triton's quartiles {_text(triton_us)} us, "
                   f"ours {_text(ours_us)} us")
        choice, reason = choose(triton_us, ours_us)
        won = choice == "ours"
        decision = Decision(choice, Basis.MEASURED_FASTER if won else Basis.MEASURED_NOT_FASTER, reason,
                            outcome.predicted_gain, tuple(round(t, 4) for t in triton_us),
                            tuple(round(t, 4) for t in ours_us), inner,
                            outcome.ttgir if won else "", digest if won else "")
        return self.kept(decision), ours if won else None

    def kept(self, decision: Decision) -> Decision:
        """``decision``, stored on disk."""
        path = decisions.store(self.ident, decision)
        step(self.kernel.name, f"stored: {path}" if path is not None else "not stored (the cache folder is unusable)")
        return decision


def _text(values: Sequence[float]) -> str:
    """``q1 / median / q3`` of per-launch times."""
    if len(values) < 2:
        return "/".join(f"{v:.2f}" for v in values) or "-"
    return " / ".join(f"{q:.2f}" for q in _quartiles(values))


def _capturing() -> bool:
    try:
        import torch
    except ImportError:  # pragma: no cover - Triton's NVIDIA launches need PyTorch
        return False
    return bool(torch.cuda.is_current_stream_capturing())


def _scalars(kernel: Any, args: tuple) -> dict[str, int]:
    """The call's integer arguments that are not constexprs, by TTIR name (``{"%n_elements": 4096}``)."""
    names = getattr(kernel.src.fn, "arg_names", ())
    constants = getattr(kernel.src, "constants", {})
    return {f"%{name}": int(value) for i, (name, value) in enumerate(zip(names, args))
            if isinstance(value, int) and not isinstance(value, bool) and (i,) not in constants}


def _flattened(values: Sequence[Any]) -> list[Any]:
    """``values`` with each tuple or list among them (a kernel's tuple argument, at any depth) replaced by its
    elements: what the launcher passes to the kernel (a list that holds itself is expanded once)."""
    found: list[Any] = []
    seen: set[int] = set()
    pending = list(reversed(values))
    while pending:
        value = pending.pop()
        if not isinstance(value, (tuple, list)):
            found.append(value)
        elif id(value) not in seen:
            seen.add(id(value))
            pending.extend(reversed(value))
    return found


def _restore(tensors: Sequence[Any], saved: Sequence[Any]) -> None:
    """Copy each of ``saved`` back into its tensor, every one attempted; the first failure is raised after."""
    failure: Exception | None = None
    for tensor, copy in zip(tensors, saved):
        try:
            tensor.copy_(copy)
        except Exception as error:  # noqa: BLE001 - the others are restored all the same
            failure = failure or error
    if failure is not None:
        raise failure


def _tensors(args: tuple) -> list[Any]:
    """The tensors a launch with ``args`` may write: PyTorch tensors and the bases of tensor descriptors,
    also inside tuple arguments; ``_NotMeasurable`` for any other pointer argument."""
    import torch

    found = []
    for value in _flattened(args):
        if torch.is_tensor(value):
            found.append(value)
        elif torch.is_tensor(getattr(value, "base", None)):
            found.append(value.base)
        elif hasattr(value, "data_ptr"):
            raise _NotMeasurable(f"an argument of type {type(value).__name__} cannot be saved and restored")
    free, _ = torch.cuda.mem_get_info()
    need = 2 * sum(t.numel() * t.element_size() for t in found)
    if need > free // 2:
        raise _NotMeasurable(f"saving the arguments needs {need} bytes, more than half the free device memory")
    return found


def _outputs_differ(tensors: list[Any], saved: list[Any], run_triton: Callable[[], None],
                    run_ours: Callable[[], None]) -> str:
    """Each variant launched once from the state ``saved``: the first tensor they leave differently (its
    position and the largest difference), or ``""``."""
    import torch

    run_triton()
    torch.cuda.synchronize()
    written = [i for i, (t, s) in enumerate(zip(tensors, saved)) if not _same_bits(t, s)]
    expected = {i: tensors[i].clone() for i in written}
    _restore(tensors, saved)
    run_ours()
    torch.cuda.synchronize()
    differs = _first_difference(tensors, [expected.get(i, s) for i, s in enumerate(saved)])
    if not differs:
        return ""
    _restore(tensors, saved)
    run_triton()
    torch.cuda.synchronize()
    again = _first_difference(tensors, [expected.get(i, s) for i, s in enumerate(saved)])
    if again:
        return f"{differs}; Triton's own kernel, launched again from the same state, differs too ({again})"
    return differs


def _first_difference(tensors: Sequence[Any], references: Sequence[Any]) -> str:
    """The first tensor that differs from its reference (floats beyond ``ATOL + RTOL * |reference|``, other
    types in any bit): its position and the largest difference, or ``""``."""
    import torch

    for i, (tensor, reference) in enumerate(zip(tensors, references)):
        if tensor.dtype.is_floating_point:
            a, b = tensor.double(), reference.double()
            same = (a == b) | (a.isnan() & b.isnan()) | ((a - b).abs() <= ATOL + RTOL * b.abs())
            if not bool(same.all()):
                worst = float(torch.where(same, 0.0, (a - b).abs().nan_to_num(math.inf)).max())
                return f"tensor argument {i}: largest difference {worst:.3g}"
        elif not _same_bits(tensor, reference):
            return f"tensor argument {i}: not equal"
    return ""


#: PTX lines that carry only where the code came from: ``.loc`` / ``.file`` directives and the debug scopes'
#: labels (``$L__tmp3:``, never a branch target: those are ``$L__BB``)
_LINE_INFO = re.compile(r"^\s*(?:\.(?:loc|file)\b|\$L__tmp\d+:\s*$)")
#: where a PTX's debug sections begin (DWARF of those lines, after the code)
_DEBUG_SECTIONS = re.compile(r"^\s*\.section\s+\.debug_", re.M)


def _code(ptx: str) -> list[str]:
    """The lines of ``ptx`` that say what it does: before its debug sections, line information left out."""
    found = _DEBUG_SECTIONS.search(ptx)
    return [line for line in ptx[:found.start() if found else len(ptx)].splitlines() if not _LINE_INFO.match(line)]


def same_code(triton_asm: Mapping[str, Any], ours_asm: Mapping[str, Any]) -> bool:
    """Whether two compiles' PTX is the same but for line information (``.loc`` / ``.file`` lines, debug
    scopes' labels and sections): our stage renames values and drops the source locations of ops it rebuilds,
    so a TTGIR of Triton's own layouts lowers to Triton's code with other line numbers. False where either
    has no PTX.

    >>> same_code({"ptx": ".loc 1 27 16\\nmov.u32 %r1, 0;"}, {"ptx": ".loc 1 149 19\\nmov.u32 %r1, 0;"})
    True
    """
    ptx = [asm.get("ptx") for asm in (triton_asm, ours_asm)]
    if not all(isinstance(text, str) and text for text in ptx):
        return False
    return _code(ptx[0]) == _code(ptx[1])


def _same_bits(a: Any, b: Any) -> bool:
    """The two tensors hold the same bits (compared as integers of their width: fp8 has no ``==`` on the GPU)."""
    import torch

    ints = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
    width = a.element_size()
    if width in ints:
        return bool(torch.equal(a.view(ints[width]), b.view(ints[width])))
    return bool(torch.equal(a, b))


def _time_pairs(run_triton: Callable[[], None], run_ours: Callable[[], None],
                fresh: Callable[[], None] | None = None) -> tuple[list[float], list[float], int]:
    """Per-launch times (microseconds) of the two variants, in alternating pairs of samples of ``inner``
    launches each, and ``inner`` (module doc); with ``fresh`` (it writes the saved tensors back), every launch
    is a sample of its own, ``fresh()`` run before it, outside its events."""
    import torch

    def timer() -> tuple[Any, Any]:
        return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    if fresh is None:
        start, stop = timer()
        start.record()
        for _ in range(3):
            run_triton()
        stop.record()
        stop.synchronize()
        estimate_us = max(start.elapsed_time(stop) * 1e3 / 3, 1e-3)
        inner = max(1, min(MAX_INNER, math.ceil(SAMPLE_US / estimate_us)))
    else:
        probes = [timer() for _ in range(3)]
        for start, stop in probes:
            fresh()
            start.record()
            run_triton()
            stop.record()
        torch.cuda.synchronize()
        estimate_us = max(statistics.median(a.elapsed_time(b) * 1e3 for a, b in probes), 1e-3)
        inner = 1
    pairs = max(MIN_PAIRS, min(MAX_PAIRS, int(BUDGET_S * 1e6 / (2 * inner * estimate_us))))
    events = [timer() for _ in range(2 * pairs)]
    sides: list[int] = []
    for p in range(pairs):
        for side in ((0, 1) if p % 2 == 0 else (1, 0)):
            begin, end = events[len(sides)]
            run = run_triton if side == 0 else run_ours
            if fresh is not None:
                fresh()
            begin.record()
            for _ in range(inner):
                run()
            end.record()
            sides.append(side)
    torch.cuda.synchronize()
    times: tuple[list[float], list[float]] = ([], [])
    for side, (begin, end) in zip(sides, events):
        times[side].append(begin.elapsed_time(end) * 1e3 / inner)
    return times[0], times[1], inner
