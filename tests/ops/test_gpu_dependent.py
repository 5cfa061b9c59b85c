"""Dependent launches on the device (``ops.launch.dependent``): chains of ops on one stream where each reads what
the previous one wrote and overwrites what it read, on the default stream, a side stream and replayed from a CUDA
graph, with the launches within a call dependent and with every launch dependent. A kernel that read before its predecessor finished writing, or wrote before it finished reading, would
leave other bits than PyTorch's. Skipped without PyTorch and an NVIDIA GPU."""

from __future__ import annotations

import pytest

from harness import ops_cases
from linear_layouts import ops
from linear_layouts.ops import driver, launch

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

_STEPS = 24  # an even number of involutions: the chain ends where it began


def test_launches_within_a_call_are_dependent_from_sm_90(cuda_gpu):
    major, minor = torch.cuda.get_device_capability()
    can = 10 * major + minor >= launch.DEPENDENT_ARCH and driver.driver().dependent_launch
    assert (launch.dependent(0, True), launch.dependent(0, False)) == (can, False)
    if 10 * major + minor >= launch.DEPENDENT_ARCH:
        assert can, f"driver version {driver.driver().version}: launches are not dependent"


def _random(shape, dtype):
    bits = torch.randint(0, 256, tuple(shape) + (torch.empty((), dtype=dtype).element_size(),), dtype=torch.uint8,
                         device="cuda")
    return bits.view(dtype).reshape(shape)


def _chains(tensors: dict) -> None:
    """Ping-pong involutions between buffer pairs (each op reads the other's last output, then is overwritten
    by the next), and a cast-transpose whose transposed output is transposed back and compared with its cast."""
    for _ in range(_STEPS // 2):
        ops.transpose(tensors["a"], out=tensors["b"])
        ops.transpose(tensors["b"], out=tensors["a"])
        ops.permute(tensors["p"], (0, 2, 1, 3), out=tensors["q"])
        ops.permute(tensors["q"], (0, 2, 1, 3), out=tensors["p"])
        ops.transpose(tensors["odd"], out=tensors["odd_t"])  # byte transposes: odd rows on both sides
        ops.transpose(tensors["odd_t"], out=tensors["odd"])
        ops.transpose(tensors["g"][:, ::2], out=tensors["g_t"])  # gathered, then transposed: two launches
        ops.transpose(tensors["g_t"], out=tensors["g"][:, ::2])  # into every other column
        for x in ("w", "w_odd"):  # the aligned kernel, and the flat cast then a byte transpose (two launches)
            ops.cast_transpose(tensors[x], torch.float8_e4m3fn, 0.25, out=tensors[x + "_c"],
                               out_t=tensors[x + "_ct"], amax=tensors[x + "_amax"])
            ops.transpose(tensors[x + "_ct"].view(torch.uint8), out=tensors[x + "_back"])


def _buffers() -> tuple[dict, dict]:
    torch.manual_seed(7)
    a, p, odd = _random((2048, 3072), torch.bfloat16), _random((4, 1024, 16, 64), torch.float16), \
        _random((4095, 3001), torch.uint8)
    g = _random((2048, 4096), torch.bfloat16)
    t = {"a": a.clone(), "b": torch.empty((3072, 2048), dtype=a.dtype, device="cuda"),
         "p": p.clone(), "q": torch.empty((4, 16, 1024, 64), dtype=p.dtype, device="cuda"),
         "odd": odd.clone(), "odd_t": torch.empty((3001, 4095), dtype=odd.dtype, device="cuda"),
         "g": g.clone(), "g_t": torch.empty((2048, 2048), dtype=g.dtype, device="cuda")}
    for x, shape in (("w", (2048, 4096)), ("w_odd", (1023, 2049))):
        t[x] = torch.randn(shape, device="cuda").to(torch.bfloat16)
        t[x + "_c"] = torch.empty(shape, dtype=torch.float8_e4m3fn, device="cuda")
        t[x + "_ct"] = torch.empty(shape[::-1], dtype=torch.float8_e4m3fn, device="cuda")
        t[x + "_back"] = torch.empty(shape, dtype=torch.uint8, device="cuda")
        t[x + "_amax"] = torch.zeros(1, dtype=torch.float32, device="cuda")
    return t, {"a": a, "p": p, "odd": odd, "g": g}


def _check(t: dict, original: dict) -> None:
    for name, x in original.items():
        assert ops_cases.bit_equal(t[name], x), name
    for x in ("w", "w_odd"):
        cast = (t[x].float() * 0.25).clamp(-448, 448).to(torch.float8_e4m3fn)
        assert ops_cases.bit_equal(t[x + "_c"], cast), x
        assert torch.equal(t[x + "_back"], t[x + "_c"].view(torch.uint8)), x
        assert float(t[x + "_amax"]) == float(t[x].abs().max().float())


@pytest.fixture(params=["within", "all"])
def policy(request, monkeypatch):
    """``launch.DEPENDENT_LAUNCH`` for a test, the plans made under another cleared before and after."""
    from linear_layouts.ops import dispatch

    monkeypatch.setattr(launch, "DEPENDENT_LAUNCH", request.param)
    launch._prepared.cache_clear()
    dispatch.call_plan.cache_clear()
    yield request.param
    launch._prepared.cache_clear()
    dispatch.call_plan.cache_clear()


@pytest.mark.parametrize("where", ["current stream", "side stream", "graph"])
def test_chains_of_dependent_ops_end_with_torch_bits(cuda_gpu, where, policy):
    t, original = _buffers()
    if where == "current stream":
        _chains(t)
    elif where == "side stream":
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            _chains(t)
        torch.cuda.current_stream().wait_stream(side)
    else:
        _chains(t)  # compiled, loaded and planned before the capture; an even chain leaves the buffers as they were
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            _chains(t)
        for _ in range(3):
            graph.replay()
    torch.cuda.synchronize()
    _check(t, original)
