import sys, time, json, statistics
import torch
from linear_layouts import ops
CASES = [((64, 64), (1, 0), torch.float32), ((256, 512), (1, 0), torch.bfloat16), ((2, 4, 16, 8), (0, 2, 1, 3), torch.float16),
         ((8, 96, 97), (0, 2, 1), torch.float32), ((512, 512), (1, 0), torch.uint8), ((32, 7, 7, 2048), (0, 3, 1, 2), torch.float16)]
N, R = 2000, 7
out = {}
for shape, dims, dt in CASES:
    x = (torch.randn(shape, device="cuda") * 10).to(dt)
    fns = {"ours": lambda: ops.permute(x, dims), "eager": lambda: x.permute(dims).contiguous()}
    assert torch.equal(fns["ours"](), fns["eager"]())
    t = {k: [] for k in fns}
    for _ in range(R):
        for k, f in fns.items():
            torch.cuda.synchronize(); s = time.perf_counter()
            for _ in range(N): f()
            torch.cuda.synchronize(); t[k].append((time.perf_counter() - s) / N * 1e6)
    out[str(shape)] = {k: statistics.median(v) for k, v in t.items()}
print(json.dumps(out))
