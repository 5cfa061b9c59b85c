"""``linear_layouts.ops`` on the device against PyTorch's own results, bit for bit: transposes and permutations
of every element size over odd, prime, tiny, empty, batched and model shapes; ``out=``; CuPy arrays; a side
stream; the fp8 cast-transpose against ``(scale x).clamp(-max, max).to(float8)`` and ``x.abs().max()``.
Skipped without PyTorch, CuPy and an NVIDIA GPU."""

from __future__ import annotations

import pytest

from harness import ops_cases
from linear_layouts import ops
from linear_layouts.core.errors import LayoutError

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module", autouse=True)
def _kernels(cuda_gpu):
    """Every kernel of these tests compiled up front, one nvcc per core (found in the kernel cache when the
    CPU prepared them: ``benchmarks/ops_bench.py --mode prepare``)."""
    from linear_layouts.codegen.ptx import find_nvcc
    from linear_layouts.ops.launch import device_arch, multiprocessors

    if find_nvcc() is not None and multiprocessors(0) == ops_cases.SMS:
        ops_cases.precompile(device_arch(0))


def _random(shape, dtype_name: str):
    """Random bits of ``dtype_name``; a bool is 0 or 1 (PyTorch's own copies rewrite other bytes as 1: the ops
    move bytes as they are, ``test_bool_bytes_move_as_they_are``)."""
    dtype = getattr(torch, dtype_name)
    if dtype == torch.bool:
        return torch.randint(0, 2, tuple(shape), dtype=torch.uint8, device="cuda").view(torch.bool)
    bits = torch.randint(0, 256, tuple(shape) + (torch.empty((), dtype=dtype).element_size(),), dtype=torch.uint8,
                         device="cuda")
    return bits.view(dtype).reshape(shape)


_same = ops_cases.bit_equal


@pytest.mark.parametrize("dtype", ops_cases.GPU_DTYPES)
@pytest.mark.parametrize("shape, dims", ops_cases.GPU_PERMUTES, ids=str)
def test_permute_matches_torch(cuda_gpu, shape, dims, dtype):
    x = _random(shape, dtype)
    assert _same(ops.permute(x, dims), x.permute(dims).contiguous())


@pytest.mark.parametrize("shape, dtype", [(shape, dtype) for shape, dtypes in ops_cases.GPU_TRANSPOSES
                                          for dtype in dtypes], ids=str)
def test_transpose_matches_torch(cuda_gpu, shape, dtype):
    x = _random(shape, dtype)
    assert _same(ops.transpose(x), x.transpose(-2, -1).contiguous())


def test_bool_bytes_move_as_they_are(cuda_gpu):
    """A permutation moves bits: bool bytes other than 0 / 1 arrive unchanged (where PyTorch's copy writes 1)."""
    bits = torch.tensor([[0, 1, 2], [255, 7, 0]], dtype=torch.uint8, device="cuda")
    assert torch.equal(ops.transpose(bits.view(torch.bool)).view(torch.uint8), bits.t().contiguous())


def test_size_one_dims_of_any_stride(cuda_gpu):
    """``x.permute(dims).contiguous()`` of a (1, 300) matrix keeps a stride of 300 on its size-1 dim: ours is
    the same values, contiguous, and takes such a tensor as input too."""
    x = _random((1, 300), "bfloat16")
    expected = x.permute(1, 0).contiguous()
    assert expected.stride() == (1, 300) and _same(ops.permute(x, (1, 0)), expected)
    assert _same(ops.permute(expected, (1, 0)), x)


def test_out_stream_and_views(cuda_gpu):
    x = _random((300, 200), "float16")
    out = torch.empty(200, 300, dtype=torch.float16, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())  # x and out were written on the default stream
    with torch.cuda.stream(side):
        y = ops.transpose(x, out=out)
    side.synchronize()
    assert y is out and _same(out, x.t().contiguous())
    view = torch.zeros(2, 200, 300, dtype=torch.float16, device="cuda")
    ops.transpose(x, out=view[1])  # a contiguous view at an offset
    assert _same(view[1], x.t().contiguous()) and not view[0].any()
    misaligned = torch.empty(1 + 300 * 200, dtype=torch.float16, device="cuda")[1:].view(300, 200)
    misaligned.copy_(x)
    assert _same(ops.transpose(misaligned), x.t().contiguous())  # 2-byte accesses on the source side
    assert _same(ops.transpose(x.t()), x)  # a transposed view: its memory copied
    assert _same(ops.transpose(x[:, ::2]), x[:, ::2].t().contiguous())  # a view with gaps: read at its strides
    with pytest.raises(LayoutError, match="out: shape"):
        ops.transpose(x, out=torch.empty_like(x))


@pytest.mark.parametrize("offset", [0, 1, 2, 8])
def test_identity_in_memory_copies_by_the_copy_kernel(cuda_gpu, offset):
    """A permutation of size-1 dims from 2 MiB runs the flat copy kernel (``ops.launches.COPY_KERNEL_MIN_BYTES``):
    bit-exact from sources at odd offsets (vectors of 1, 2 and 8 bytes), into ``out=`` at an offset too, the bytes
    around it untouched."""
    n = 3 * 1048583  # 3 MiB and 21 bytes
    x = _random((offset + n,), "uint8")[offset:].view(3, 1, 1048583)
    y = ops.permute(x, (1, 0, 2), copy=True)
    assert _same(y, x.permute(1, 0, 2).contiguous()) and y.data_ptr() != x.data_ptr()
    out = torch.zeros(n + 64, dtype=torch.uint8, device="cuda")
    ops.permute(x, (1, 0, 2), out=out[16:16 + n].view(1, 3, 1048583))
    assert torch.equal(out[16:16 + n], x.reshape(-1)) and not out[:16].any() and not out[16 + n:].any()
    wide = _random((5, 1, 299999), "float32")  # 5.7 MiB of 4-byte elements: 16-byte vectors and a tail
    assert _same(ops.permute(wide, (1, 0, 2), copy=True), wide.permute(1, 0, 2).contiguous())


def test_cupy_arrays(cuda_gpu):
    cupy = pytest.importorskip("cupy")
    x = cupy.arange(5 * 6 * 7, dtype=cupy.float32).reshape(5, 6, 7)
    assert bool((ops.permute(x, (2, 0, 1)) == x.transpose(2, 0, 1)).all())
    assert type(ops.transpose(x)).__module__.startswith("cupy")
    c, ct, amax = ops.cast_transpose(x, "e4m3", 0.5)
    assert c.dtype == cupy.uint8 and ct.shape == (7, 30) and float(amax[0]) == 209.0
    assert bool((ct == c.reshape(30, 7).T).all())


_FP8 = {"e4m3": (torch.float8_e4m3fn, 448.0), "e5m2": (torch.float8_e5m2, 57344.0)}


def _reference(x, fp8: str, scale: float):
    dtype, top = _FP8[fp8]
    return (x.float() * scale).clamp(-top, top).to(dtype)


@pytest.mark.parametrize("fp8", ["e4m3", "e5m2"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
@pytest.mark.parametrize("shape", ops_cases.GPU_CASTS, ids=str)
def test_cast_transpose_matches_torch(cuda_gpu, shape, dtype, fp8):
    x = (torch.randn(shape, device="cuda") * 300).to(getattr(torch, dtype))
    flat = x.view(-1)
    edges = torch.tensor([0.0, -0.0, 1.0625, 1.1875, 448.0, 464.0, 1e4, -1e4, 0.0029296875, 3e-5, 61440.0, 1e-9],
                         device="cuda").to(x.dtype)
    flat[:min(flat.numel(), edges.numel())] = edges[:flat.numel()]
    scale = 0.37
    c, ct, amax = ops.cast_transpose(x, _FP8[fp8][0], scale)
    expected = _reference(x, fp8, scale)
    assert c.dtype == _FP8[fp8][0] and _same(c, expected)
    n = shape[-1]
    assert _same(ct, expected.reshape(-1, n).t().contiguous())
    assert amax.dtype == torch.float32 and float(amax[0]) == float(x.float().abs().max())


def test_cast_transpose_tensor_scale_and_amax_accumulates(cuda_gpu):
    x = torch.randn(256, 512, device="cuda", dtype=torch.bfloat16)
    scale = torch.tensor([2.0], device="cuda")
    amax = torch.tensor([1e6], device="cuda")
    out = torch.empty(256, 512, dtype=torch.float8_e4m3fn, device="cuda")
    out_t = torch.empty(512, 256, dtype=torch.float8_e4m3fn, device="cuda")
    c, ct, a = ops.cast_transpose(x, torch.float8_e4m3fn, scale, out=out, out_t=out_t, amax=amax)
    assert c is out and ct is out_t and a is amax
    assert float(amax[0]) == 1e6  # max(1e6, max |x|)
    assert _same(out, _reference(x, "e4m3", 2.0))
    amax.zero_()
    ops.cast_transpose(x, torch.float8_e4m3fn, scale, out=out, out_t=out_t, amax=amax)
    assert float(amax[0]) == float(x.float().abs().max())
    empty = torch.empty(0, 16, device="cuda", dtype=torch.float16)
    c, ct, a = ops.cast_transpose(empty, torch.float8_e5m2, 1.0)
    assert c.shape == (0, 16) and ct.shape == (16, 0) and float(a[0]) == 0.0


@pytest.mark.parametrize("misaligned", ["realigned", "scalar"])
def test_cast_transpose_of_misaligned_tensors(cuda_gpu, monkeypatch, misaligned):
    """Every base one element off 16 bytes and rows of 259 (the realigned kernel, or the scalar one forced): the
    cast and its transpose equal PyTorch's, in place in larger buffers whose other bytes stay as they were."""
    from linear_layouts.ops import launches

    monkeypatch.setattr(launches, "MISALIGNED_CAST", misaligned)
    x = (torch.randn(1 + 131 * 259, device="cuda") * 300).to(torch.bfloat16)[1:].view(131, 259)
    out = torch.zeros(3 + 131 * 259, dtype=torch.uint8, device="cuda")
    out_t = torch.zeros(5 + 131 * 259, dtype=torch.uint8, device="cuda")
    c, ct = out[3:].view(torch.float8_e4m3fn).view(131, 259), out_t[5:].view(torch.float8_e4m3fn).view(259, 131)
    _, _, amax = ops.cast_transpose(x, torch.float8_e4m3fn, 0.37, out=c, out_t=ct)
    expected = _reference(x, "e4m3", 0.37)
    assert _same(c, expected) and _same(ct, expected.t().contiguous())
    assert not out[:3].any() and not out_t[:5].any() and float(amax[0]) == float(x.float().abs().max())


@pytest.mark.parametrize("misaligned", ["scalar", "chunked", "flat"])
@pytest.mark.parametrize("fp8", ["e4m3", "e5m2"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
@pytest.mark.parametrize("shape", [(1, 1), (1, 259), (259, 1), (45, 77), (30, 7), (4095, 1101)], ids=str)
def test_scalar_cast_transpose_matches_torch(cuda_gpu, monkeypatch, shape, dtype, fp8, misaligned):
    """The scalar kernel (``codegen.cast_scalar``), the chunked one (``codegen.cast_chunks``) or the flat cast and a
    transpose of its bytes (``codegen.cast_flat``) forced for rows
    16 bytes do not align: tiny, one-row, one-column and odd shapes (whole and edge tiles), every input and fp8
    format, rounding edges included."""
    from linear_layouts.ops import launches

    monkeypatch.setattr(launches, "MISALIGNED_CAST", misaligned)
    x = (torch.randn(shape, device="cuda") * 300).to(getattr(torch, dtype))
    edges = torch.tensor([0.0, -0.0, 1.0625, 1.1875, 448.0, 464.0, 1e4, -1e4, 0.0029296875, 3e-5, 61440.0, 1e-9],
                         device="cuda").to(x.dtype)
    x.view(-1)[:min(x.numel(), edges.numel())] = edges[:x.numel()]
    c, ct, amax = ops.cast_transpose(x, _FP8[fp8][0], 0.37)
    expected = _reference(x, fp8, 0.37)
    assert _same(c, expected) and _same(ct, expected.t().contiguous())
    assert float(amax[0]) == float(x.float().abs().max())


def test_a_thread_without_a_current_context(cuda_gpu):
    """A new thread has no CUDA context current: the driver refuses the first try, the kernel's context is made
    current for the second (the cast-transpose's three launches too)."""
    import threading

    x, results = _random((96, 160), "float16"), {}

    def work():
        results["t"] = ops.transpose(x)
        results["c"] = ops.cast_transpose(x, torch.float8_e4m3fn, 0.5)
        torch.cuda.synchronize()

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert _same(results["t"], x.t().contiguous())
    want = ops.cast_transpose(x, torch.float8_e4m3fn, 0.5)  # on this thread, where the context is current
    assert all(_same(got, expected) for got, expected in zip(results["c"], want))


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_a_tensor_of_another_device_than_the_current_one(cuda_gpu):
    """With device 1 current, a device-0 tensor on the legacy default stream (refused, then launched in device 0's
    context) and on a device-0 side stream (launched as it is)."""
    x = _random((200, 300), "float32")
    torch.cuda.set_device(1)
    try:
        torch.empty(1, device="cuda:1")
        assert _same(ops.transpose(x), x.t().contiguous())
        side = torch.cuda.Stream(device=0)
        with torch.cuda.stream(side):
            y = ops.transpose(x)
        side.synchronize()
        assert _same(y, x.t().contiguous())
    finally:
        torch.cuda.set_device(0)
    # device 0 current, tensors of device 1: the kernels compiled for and loaded into device 1's context
    x1 = x.to("cuda:1")
    assert _same(ops.transpose(x1), x1.t().contiguous()) and ops.transpose(x1).device.index == 1
    w1 = torch.randn(96, 80, device="cuda:1", dtype=torch.bfloat16)
    c, t, amax = ops.cast_transpose(w1, torch.float8_e4m3fn, 0.5)
    want = (w1.float() * 0.5).to(torch.float8_e4m3fn)
    assert _same(c, want) and _same(t, want.t().contiguous()) and float(amax) == float(w1.float().abs().max())
    g1 = torch.randn(8, 6, 4, device="cuda:1", requires_grad=True)
    ops.permute(g1, (2, 0, 1)).sum().backward()
    assert g1.grad.device.index == 1 and torch.equal(g1.grad, torch.ones_like(g1))


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_one_signature_on_two_devices(cuda_gpu):
    """Calls of one signature alternating between devices 0 and 1 (each device its own plan, function and stream),
    a fused cast on each, CuPy arrays and a CUDA graph on device 1, and the registered op there: every result on its
    input's device and bit-exact."""
    shapes = [((257, 1031), "bfloat16", (1, 0)), ((8, 2048, 1, 128), "float16", (0, 2, 1, 3)),
              ((6, 7, 11, 13), "uint8", (3, 1, 0, 2)), ((4, 300, 301), "float32", (0, 2, 1))]
    for round_ in range(3):
        for shape, dtype, dims in shapes:
            for index in (0, 1):
                x = _random(shape, dtype).to(f"cuda:{index}")
                y = ops.permute(x, dims, copy=True)
                assert y.device.index == index and _same(y, x.permute(dims).contiguous()), (round_, shape, index)
                w = torch.randn(shape[-2] if len(shape) > 1 else 1, shape[-1], device=f"cuda:{index}")
                c, t, amax = ops.cast_transpose(w, torch.float8_e5m2, 2.0)
                assert c.device.index == t.device.index == amax.device.index == index
                assert _same(t, _reference(w, "e5m2", 2.0).t().contiguous())
    x1 = _random((64, 96, 80), "bfloat16").to("cuda:1")
    ops.register_torch_ops()
    assert _same(torch.ops.linear_layouts.permute(x1, [2, 0, 1]), x1.permute(2, 0, 1).contiguous())
    with torch.cuda.device(1):
        out = torch.empty(80, 64, 96, dtype=torch.bfloat16, device="cuda:1")
        ops.permute(x1, (2, 0, 1), out=out)  # the kernel loaded before capture
        graph = torch.cuda.CUDAGraph()
        # a stream of its own: torch.cuda.graph's default capture stream is made once, on the device then current,
        # and kept for every later capture of the process
        with torch.cuda.graph(graph, stream=torch.cuda.Stream(device=1)):
            ops.permute(x1, (2, 0, 1), out=out)
        out.zero_()
        x1.copy_(_random((64, 96, 80), "bfloat16").to("cuda:1"))
        graph.replay()
        torch.cuda.synchronize(1)
        assert _same(out, x1.permute(2, 0, 1).contiguous())
    cupy = pytest.importorskip("cupy")
    with cupy.cuda.Device(1):
        a = cupy.arange(3 * 500 * 7, dtype=cupy.float16).reshape(3, 500, 7)
        b = ops.permute(a, (0, 2, 1))
        assert b.device.id == 1 and bool((b == a.transpose(0, 2, 1)).all())
    t = ops.transpose(a)  # device 0 current: allocated and launched on the array's device
    with cupy.cuda.Device(1):
        assert t.device.id == 1 and bool((t == a.transpose(0, 2, 1)).all())


def test_a_known_device_is_what_its_driver_reports(cuda_gpu):
    """The Target of the device's own name (``target.device_name``) has the SMs, L2 and architecture its driver
    reports, so ``explain(..., device="H200")`` on the CPU plans what ``permute`` launches on the GPU (the SMs of
    an SXM part). Skipped on a device the package does not know."""
    from linear_layouts.ops.kernels import GridShape
    from linear_layouts.ops.launch import grid_shape
    from linear_layouts.target import TARGETS, device_name, named_target

    full_name = torch.cuda.get_device_name(0)
    name = device_name(full_name)
    if name not in TARGETS:
        pytest.skip(f"{name} is not a known device")
    target, grid = named_target(device=name), grid_shape(0)
    assert (target.l2_bytes, target.arch) == (grid.l2_bytes, grid.arch)
    if "PCIe" not in full_name:  # the known targets are the SXM parts (an H100 PCIe has 114 SMs)
        assert GridShape.of(target) == grid
        assert ops.explain((32, 28, 28, 512), (0, 3, 1, 2), "bf16", name).device == grid
