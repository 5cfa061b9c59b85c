"""Our engine's layouts inside the user's own Triton kernels, one line to turn on::

    import linear_layouts.triton
    linear_layouts.triton.enable()              # every @triton.jit compile from now on ("measured")
    with linear_layouts.triton.enabled("model"): ...
    @linear_layouts.triton.optimize             # one kernel
    @triton.jit
    def kernel(...): ...

Through Triton's ``knobs.runtime.add_stages_inspection_hook`` (``hook``): after Triton's ``make_ttgir``, our
stage (``stage``) rewrites the TTGIR with the engine's layouts where the whole-kernel model predicts a gain of
``pipeline.rewrite.MIN_GAIN`` and Triton's parser takes it back; in ``measured`` mode (the default) the first
launch of each specialization times both variants on its own arguments and keeps ours only if it wins beyond
the spread (``measure``), the choice kept on disk (``decisions``). Modes and the cache key: ``settings``.

Works with ``triton.autotune`` (each config is a specialization: measured at its first benchmark launch) and
with ``torch.compile``'s Triton kernels in ``model`` mode where Inductor compiles in this process
(``torch._inductor.config.compile_threads = 1``: its compile workers are other processes, without the hook)
and does not serve the kernel from its own caches (e.g. ``TORCHINDUCTOR_FX_GRAPH_CACHE=0``); Inductor
launches its kernels itself, so ``measured`` mode gives them Triton's TTGIR. Gluon kernels are left alone.
Whatever fails on our path keeps Triton's TTGIR with one ``TritonHookWarning`` per kernel.
``decision(kernel)`` says what was chosen for a compiled kernel and why (its ``Basis``);
``$LINEAR_LAYOUTS_TRITON_LOG=1`` traces each step of the measured choice on stderr (``log``).
"""

from linear_layouts.pipeline.triton_hook.decisions import Basis, Decision
from linear_layouts.pipeline.triton_hook.hook import disable, enable, enabled, installed, mode, optimize
from linear_layouts.pipeline.triton_hook.log import LOG_ENV
from linear_layouts.pipeline.triton_hook.measure import decision_of as decision
from linear_layouts.pipeline.triton_hook.settings import MODE_ENV, Mode
from linear_layouts.pipeline.triton_hook.stage import TritonHookWarning

__all__ = ["enable", "disable", "enabled", "optimize", "mode", "installed", "decision", "Decision", "Basis", "Mode",
           "TritonHookWarning", "MODE_ENV", "LOG_ENV"]
