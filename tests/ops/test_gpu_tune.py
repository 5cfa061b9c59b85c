"""Autotuning on the GPU (``ops.tune``): tuned calls are bit-exact, each signature is timed once, the choice is no
slower than the planner's by the tuning's own times, a first call inside a CUDA graph capture is not tuned (and the
graph replays correctly), CuPy arrays tune through the general path. Skipped without PyTorch and an NVIDIA GPU."""

from __future__ import annotations

import random

import pytest

from linear_layouts import ops
from linear_layouts.ops import tune

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")


@pytest.fixture
def tuning(monkeypatch):
    """AUTOTUNE on, no choices before or after."""
    tune.clear()
    monkeypatch.setattr(tune, "AUTOTUNE", True)
    yield
    tune.clear()


def _draws(seed: int, count: int):
    """``(shape, dims, dtype)``: transposes of 16-40 MiB (2-D, batched, NCHW <-> NHWC, skinny): what is tuned."""
    rng = random.Random(seed)
    dtypes = (torch.uint8, torch.bfloat16, torch.float32, torch.float64)
    for i in range(count):
        dtype = dtypes[i % len(dtypes)]
        itemsize = torch.empty((), dtype=dtype).element_size()
        elements = rng.randint(16 << 20, 40 << 20) // itemsize
        kind = rng.choice(("2-D", "batched", "NCHW", "NHWC", "skinny"))
        if kind == "2-D":
            m = rng.randint(64, 8192)
            yield (m, elements // m), (1, 0), dtype
        elif kind == "batched":
            b, m = rng.randint(2, 16), rng.randint(32, 1024)
            yield (b, m, elements // (b * m)), (0, 2, 1), dtype
        elif kind == "skinny":
            k = rng.randint(2, 31)
            yield (elements // k, k), (1, 0), dtype
        else:
            c, hw = rng.randint(3, 512), rng.choice((7, 14, 28, 56))
            n = max(1, elements // (c * hw * hw))
            shape, dims = ((n, c, hw, hw), (0, 2, 3, 1)) if kind == "NCHW" else ((n, hw, hw, c), (0, 3, 1, 2))
            yield shape, dims, dtype


def _random(shape, dtype):
    if dtype.is_floating_point:
        return torch.randn(shape, device="cuda").to(dtype)
    return torch.randint(0, 256, shape, device="cuda", dtype=dtype)


def test_tuned_calls_are_exact_and_timed_once(cuda_gpu, tuning):
    tuned = 0
    for shape, dims, dtype in _draws(11, 12):
        x = _random(shape, dtype)
        expected = x.permute(dims).contiguous()
        before = len(tune.tunings)
        y = ops.permute(x, dims)
        assert torch.equal(y, expected), (shape, dims, dtype)
        new = tune.tunings[before:]
        assert len(new) <= 1
        if new:
            tuned += 1
            t = new[0]
            assert t.signature == (tuple(x.shape), tuple(dims), x.element_size(), 0, 0, 0)
            assert tune.PLANNED in t.us and t.chosen in t.us and len(t.us) >= 2
            assert t.us[t.chosen] <= t.us[tune.PLANNED] and all(v > 0 for v in t.us.values())
        out = torch.empty_like(expected)
        assert ops.permute(x, dims, out=out) is out and torch.equal(out, expected)
        assert len(tune.tunings) == before + len(new)  # the second call: no tuning
    assert tuned >= 6


def test_every_tuned_choice_is_exact(cuda_gpu, tuning, monkeypatch):
    """Whatever a tuning chooses: here each candidate forced in turn, by a timer that makes it the fastest (on a
    problem under ``AUTOTUNE_MIN_BYTES``, lowered for it)."""
    monkeypatch.setattr(tune, "AUTOTUNE_MIN_BYTES", 1)
    x = _random((8, 300, 1000), torch.bfloat16)
    expected = x.transpose(1, 2).contiguous()
    untuned = None
    try:
        tune.tuned_template((8, 300, 1000), (0, 2, 1), 2, 0, 0, 0, ops.launch.grid_shape(0))
    except tune.Untuned as caught:
        untuned = caught
    assert untuned is not None
    labels = list(tune._candidates(untuned.signature, untuned.grid)[0])
    assert len(labels) >= 8
    for label in labels:
        tune.clear()
        tune.tune(untuned, x.data_ptr(), 0, lambda nbytes: 0,
                  lambda device, stream, src, dst, cands, label=label: {k: 0.5 if k == label else 1.0 for k in cands})
        assert tune.tunings[-1].chosen == label
        assert torch.equal(ops.transpose(x), expected), label


def test_a_first_call_inside_a_graph_capture_is_not_tuned(cuda_gpu, tuning):
    x = _random((4096, 4000), torch.float16)
    expected = x.t().contiguous()
    out = torch.empty_like(expected)
    stream = torch.cuda.Stream()
    graph = torch.cuda.CUDAGraph()
    ops.transpose(torch.zeros(8, 8, device="cuda"))  # load what the first call loads, outside the capture
    with torch.cuda.stream(stream):
        with torch.cuda.graph(graph, stream=stream):
            ops.transpose(x, out=out)
    assert tune.tunings == []
    out.zero_()
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, expected)
    assert torch.equal(ops.transpose(x), expected) and len(tune.tunings) == 1  # outside: tuned


def test_cupy_arrays_tune_through_the_general_path(cuda_gpu, tuning):
    cupy = pytest.importorskip("cupy")
    x = cupy.random.randint(0, 255, size=(32, 700, 999), dtype=cupy.uint8)
    y = ops.permute(x, (0, 2, 1))
    assert bool((y == x.transpose(0, 2, 1)).all()) and len(tune.tunings) == 1
    assert bool((ops.permute(x, (0, 2, 1)) == x.transpose(0, 2, 1)).all()) and len(tune.tunings) == 1


def test_each_device_tunes_its_own(cuda_gpu, tuning):
    """One signature on two GPUs: two tunings (the device is in the signature), each on its device's stream, each
    call exact; skipped on one GPU."""
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two GPUs")
    outs = []
    for device in (1, 0, 1):
        with torch.cuda.device(device):
            x = _random((4096, 3000), torch.bfloat16).to(f"cuda:{device}")
            stream = torch.cuda.Stream(device)
            with torch.cuda.stream(stream):
                y = ops.transpose(x)
            stream.synchronize()
            assert y.device == x.device and torch.equal(y, x.t().contiguous())
            outs.append(y)
    assert [t.signature[5] for t in tune.tunings] == [1, 0]
    assert all(t.signature[:5] == ((4096, 3000), (1, 0), 2, 0, 0) for t in tune.tunings)


@pytest.mark.parametrize("shape, dtype, fp8", [
    ((4096, 4096), "bfloat16", "float8_e4m3fn"), ((4095, 11007), "bfloat16", "float8_e4m3fn"),
    ((2047, 6001), "float32", "float8_e5m2"), ((8191, 4096), "float16", "float8_e4m3fn"),
    ((3, 2731, 2048), "bfloat16", "float8_e5m2")])
def test_tuned_casts_are_exact(cuda_gpu, tuning, shape, dtype, fp8):
    x = (torch.randn(shape, device="cuda") * 300).to(getattr(torch, dtype))
    f8 = getattr(torch, fp8)
    top = torch.finfo(f8).max
    expected = (x.float() * 0.37).clamp(-top, top).to(f8).view(torch.uint8).reshape(-1, shape[-1])
    scale = torch.tensor([0.37], device="cuda")
    for _ in range(2):  # the first call tunes, the second takes the choice
        c, ct, amax = ops.cast_transpose(x, f8, scale)
        assert torch.equal(c.view(torch.uint8).reshape(-1, shape[-1]), expected)
        assert torch.equal(ct.view(torch.uint8), expected.t().contiguous())
        assert float(amax[0]) == float(x.float().abs().max())
    assert len(tune.tunings) == 1 and tune.tunings[0].signature[0] == "cast"
    assert tune.tunings[0].chosen in tune.tunings[0].us
