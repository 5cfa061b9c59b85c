import time, statistics, ctypes
import torch
from linear_layouts import ops
from linear_layouts.ops import dispatch, tensors
from linear_layouts.ops.driver import driver, Driver
x = torch.randn(64, 64, device="cuda")
dims = (1, 0)
y = ops.permute(x, dims)
plan = dispatch.call_plan(tuple(x.shape), 4, dims, 0, x.data_ptr() & 15)
p, tail, s, d = plan.launches[0]
st = tensors.torch_stream(0)
vals = (x.data_ptr() + s, y.data_ptr() + d) + tail
p.packing.pack_into(p._buffer, 0, *vals)
D = driver()
PD = Driver(ctypes.PyDLL("libcuda.so.1"))
print("stream", st, "ctas", p.ctas, "threads", p.threads)
parts = {
  "prepared.run": lambda: p.run(st, vals),
  "driver.launch (CDLL)": lambda: D.launch(p.function, p.ctas, p.threads, p.shared_bytes, st, p._params),
  "driver.launch (PyDLL)": lambda: PD.launch(p.function, p.ctas, p.threads, p.shared_bytes, st, p._params),
  "cuCtxGetCurrent (CDLL)": lambda: D.current_context(),
  "cuCtxGetCurrent (PyDLL)": lambda: PD.current_context(),
  "pack_into": lambda: p.packing.pack_into(p._buffer, 0, *vals),
  "eager x.t().contiguous()": lambda: x.t().contiguous(),
  "torch.empty_like": lambda: torch.empty_like(x),
  "eager copy_ into y": lambda: y.copy_(x),
}
N = 20000
for k, f in parts.items():
    f()
    r = []
    for _ in range(5):
        torch.cuda.synchronize(); t = time.perf_counter()
        for _ in range(N): f()
        torch.cuda.synchronize(); r.append((time.perf_counter() - t) / N * 1e6)
    print(f"{k}: {statistics.median(r):.2f} us (min {min(r):.2f})", flush=True)
