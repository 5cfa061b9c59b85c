"""The stream compaction of tests/kernels/test_triton_hook.py under measured mode with relaunch_unsafe forced off
(the timing as it was before): does the timing write past the output?"""
import sys
import torch
import triton
sys.path.insert(0, "tests/kernels")
import linear_layouts.triton as lt
from linear_layouts.pipeline.triton_hook import measure, stage
from test_triton_hook import _append_ones
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
except Exception as e:
    print("old timing: raised", type(e).__name__, str(e)[:200])
