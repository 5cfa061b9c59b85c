"""The atomic append of tests/kernels/test_triton_hook.py (``_append_ones``) under measured mode with
``relaunch_unsafe`` forced off, i.e. timed as before: does the timing write past the output?

    PYTHONPATH=src python3 benchmarks/results/gpu_triton_hook_atomics/atomic_probe.py     # device
"""
import torch
import triton
import triton.language as tl

import linear_layouts.triton as lt
from linear_layouts.pipeline.triton_hook import measure, stage


@triton.jit
def _append_ones(out_ptr, count_ptr, BLOCK: tl.constexpr):
    base = tl.atomic_add(count_ptr, BLOCK)
    tl.store(out_ptr + base + tl.arange(0, BLOCK), tl.full((BLOCK,), 1, tl.int32))


measure.relaunch_unsafe = lambda ttgir: False
measure.engine_ttgir = lambda ttir, ttgir, **kw: stage.Outcome(ttgir, "forced", 0.0)
n, block = 1 << 20, 1024
out, guard = torch.zeros(2 * n, dtype=torch.int32, device="cuda").split(n)
count = torch.zeros(1, dtype=torch.int32, device="cuda")
try:
    with lt.enabled("measured"):
        kernel = _append_ones[(n // block,)](out, count, BLOCK=block)
    torch.cuda.synchronize()
    d = lt.decision(kernel)
    print("old timing: basis", d.basis.value, "inner", d.inner, "count", int(count), "expected", n,
          "guard elements written", int(guard.count_nonzero()))
except Exception as e:  # noqa: BLE001 - what happened is the answer
    print("old timing: raised", type(e).__name__, str(e)[:200])
