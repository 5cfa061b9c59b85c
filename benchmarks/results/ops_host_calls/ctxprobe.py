"""What cuLaunchKernel returns for a function of device 0's primary context when another context, or none, is current."""
import ctypes, threading
import torch
from linear_layouts import ops
from linear_layouts.ops import dispatch, tensors
from linear_layouts.ops.driver import driver
x = torch.randn(64, 64, device="cuda:0")
y = ops.permute(x, (1, 0))
assert torch.equal(y, x.t().contiguous())
plan = dispatch.call_plan(tuple(x.shape), 4, (1, 0), 0, x.data_ptr() & 15)
p, tail, s, d = plan.launches[0]
D = driver()
vals = (x.data_ptr() + s, y.data_ptr() + d) + tail
p.packing.pack_into(p._buffer, 0, *vals)
st0 = tensors.torch_stream(0)
def raw(stream):
    return D._launch(p.function, p.ctas, 1, 1, p.threads, 1, 1, p.shared_bytes, stream, p._params, None)
print("own context current:", raw(st0), "ctx", hex(D.current_context()), "fn ctx", hex(p.context))
torch.cuda.synchronize(0)
print("devices", torch.cuda.device_count())
if torch.cuda.device_count() > 1:
    torch.cuda.set_device(1)
    z = torch.empty(16, device="cuda:1"); torch.cuda.synchronize(1)
    print("device 1's context current:", hex(D.current_context()))
    y.zero_(); torch.cuda.synchronize(0)
    print("  launch on stream 0 (legacy default):", raw(0))
    s0 = torch.cuda.Stream(device=0)
    print("  launch on a device-0 stream:", raw(s0.cuda_stream))
    torch.cuda.synchronize(0)
    print("  y written by those launches:", bool(torch.equal(y, x.t().contiguous())))
    y2 = ops.permute(x, (1, 0)); torch.cuda.synchronize(0)
    print("  ops.permute with device 1 current correct:", bool(torch.equal(y2, x.t().contiguous())))
    torch.cuda.set_device(0)
res = {}
def worker():
    res["ctx"] = D.current_context()
    res["rc"] = raw(0)
t = threading.Thread(target=worker); t.start(); t.join()
print("fresh thread: current", res["ctx"], "launch rc", res["rc"])
