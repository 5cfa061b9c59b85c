"""A PyTorch user with neither CuPy nor nvcc: the ops compile with NVRTC (``$LINEAR_LAYOUTS_COMPILER=nvrtc``, an
empty kernel cache) and load and launch through the CUDA driver, in a fresh process where ``import cupy`` fails;
every result bit for bit against PyTorch, each kernel family once. Skipped without PyTorch, a GPU and NVRTC."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

_SCRIPT = r"""
import json, sys
sys.modules["cupy"] = None  # import cupy raises ImportError
import torch
from linear_layouts import ops
from linear_layouts.ops import launch

def bits(shape, dtype):
    size = torch.empty((), dtype=dtype).element_size()
    raw = torch.randint(0, 256, tuple(shape) + (size,), dtype=torch.uint8, device="cuda")
    return raw.view(dtype).reshape(shape)

def same(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and bool(torch.equal(
        a.contiguous().reshape(-1).view(torch.uint8), b.contiguous().reshape(-1).view(torch.uint8)))

results = {}
for shape, dims, dtype in (((300, 200), (1, 0), torch.bfloat16), ((4096, 1024), (1, 0), torch.float32),
                           ((37, 50), (1, 0), torch.uint8), ((6049, 845), (1, 0), torch.uint8),
                           ((3, 1000, 999), (0, 2, 1), torch.bfloat16), ((2051, 1568), (1, 0), torch.float16),
                           ((2, 3, 40, 41), (0, 2, 3, 1), torch.float16),
                           ((8, 2048, 8, 128), (0, 2, 1, 3), torch.bfloat16),
                           ((1001, 2, 2), (0, 2, 1), torch.int8), ((5, 7), (1, 0), torch.float64),
                           ((3, 1, 174763), (1, 0, 2), torch.float32)):
    x = bits(shape, dtype)
    results[f"permute {shape} {dims} {dtype}"] = same(ops.permute(x, dims), x.permute(dims).contiguous())
for m, n, dtype in ((256, 512, torch.bfloat16), (131, 259, torch.bfloat16), (4095, 1101, torch.float32)):
    x = torch.randn(m, n, device="cuda", dtype=dtype)
    c, t, amax = ops.cast_transpose(x, torch.float8_e4m3fn, 0.37)
    want = (x.float() * 0.37).to(torch.float8_e4m3fn)
    results[f"cast {m}x{n} {dtype}"] = same(c, want) and same(t, want.t().contiguous()) and \
        float(amax) == float(x.float().abs().max())
print(json.dumps(dict(results=results, kernels=len(launch.compile_log), cupy=sys.modules["cupy"] is None)))
"""


def test_a_pytorch_user_without_cupy_or_nvcc(cuda_gpu, tmp_path):
    from linear_layouts.codegen.nvrtc import find_nvrtc

    if find_nvrtc() is None:
        pytest.skip("no NVRTC library here")
    cache = tmp_path / "kernels"
    env = dict(os.environ, LINEAR_LAYOUTS_CACHE=str(cache), LINEAR_LAYOUTS_COMPILER="nvrtc")
    proc = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["cupy"] and report["kernels"] >= 10
    assert all(report["results"].values()), report["results"]
    manifests = [json.loads(p.read_text()) for p in cache.glob("*.cubin.json")]
    assert len(manifests) >= 10 and all("nvrtc" in m and "nvcc" not in m for m in manifests)
