import time, statistics, json
import torch
from linear_layouts import ops
from linear_layouts.ops import dispatch, tensors
from linear_layouts.ops.driver import driver
x = torch.randn(64, 64, device="cuda")
dims = (1, 0)
y = ops.permute(x, dims)
plan = dispatch.call_plan(tuple(x.shape), 4, dims, 0, x.data_ptr() & 15)
prepared, tail, s, d = plan.launches[0]
st = tensors.torch_stream(0)
parts = {
  "ops.permute": lambda: ops.permute(x, dims),
  "eager permute.contiguous": lambda: x.permute(dims).contiguous(),
  "eager x.t().contiguous()": lambda: x.t().contiguous(),
  "x.new_empty": lambda: x.new_empty((64, 64)),
  "torch.empty_like": lambda: torch.empty_like(x),
  "accessors (is_cuda, is_contiguous, is_conj, is_neg, element_size, data_ptr, get_device, shape)":
      lambda: (x.is_cuda, x.is_contiguous(), x.is_conj(), x.is_neg(), x.element_size(), x.data_ptr(), x.get_device(), tuple(x.shape)),
  "call_plan (cached)": lambda: dispatch.call_plan((64, 64), 4, dims, 0, 0),
  "torch_stream": lambda: tensors.torch_stream(0),
  "prepared.run": lambda: prepared.run(st, (x.data_ptr() + s, y.data_ptr() + d) + tail),
  "driver().current_context": lambda: driver().current_context(),
}
N = 20000
out = {}
for k, f in parts.items():
    f()
    r = []
    for _ in range(5):
        torch.cuda.synchronize(); t = time.perf_counter()
        for _ in range(N): f()
        torch.cuda.synchronize(); r.append((time.perf_counter() - t) / N * 1e6)
    out[k] = round(statistics.median(r), 2)
    print(f"{k}: {out[k]} us", flush=True)
