"""The software fallbacks of the cast kernels (what sm_75 to sm_86 devices run) on a recent GPU, against its
hardware instructions: the fp8 conversion ``ll_fp8_bits`` against ``cvt.rn.satfinite`` on all 2^32 float32 bit
patterns, and ``ops.cast_transpose`` with every kernel compiled under ``LL_PORTABLE`` (``launch.portable_kernel``)
against the normal kernels, bit for bit, amax included. Skipped without PyTorch, CuPy and an NVIDIA GPU of sm_89
or later (the hardware conversion)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from linear_layouts import ops
from linear_layouts.codegen.intrinsics import DEVICE_PRELUDE
from linear_layouts.codegen.permute import CAST_FUNCTIONS

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")

#: The sweep: each thread converts pairs ``(x, y)`` = floats of bits ``(u, ~u)`` both ways; a pair that differs
#: counts in ``wrong[0]`` and its smallest ``u`` lands in ``wrong[1]``.
_SWEEP = DEVICE_PRELUDE + CAST_FUNCTIONS + r"""
extern "C" __global__ void ll_fp8_sweep(unsigned long long count, unsigned long long* wrong) {
  const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
  unsigned long long bad = 0ull, first = ~0ull;
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < count; i += step) {
    const unsigned u = (unsigned)i;
    const float x = __uint_as_float(u), y = __uint_as_float(~u);
    const unsigned e4 = ll_cvt_e4m3x2(x, y), e5 = ll_cvt_e5m2x2(x, y);
    if (e4 != (ll_fp8_e4m3(x) | (ll_fp8_e4m3(y) << 8)) || e5 != (ll_fp8_e5m2(x) | (ll_fp8_e5m2(y) << 8))) {
      ++bad;
      first = first < i ? first : i;
    }
  }
  if (bad) { atomicAdd(wrong, bad); atomicMin(wrong + 1, first); }
}
"""


@pytest.fixture(scope="module")
def recent_gpu(cuda_gpu):
    from linear_layouts.ops.launch import device_arch

    if int(device_arch(0)[3:]) < 89:
        pytest.skip("needs sm_89 or later: the hardware fp8 conversion to compare with")


def test_software_fp8_equals_cvt_satfinite_on_every_float(recent_gpu):
    """All 2^32 bit patterns (each as ``x`` and, inverted, as ``y``: both halves of the packed result)."""
    import cupy

    kernel = cupy.RawModule(code=_SWEEP, options=("-std=c++17",)).get_function("ll_fp8_sweep")
    wrong = cupy.array([0, 2**64 - 1], dtype=cupy.uint64)
    sms = cupy.cuda.Device(0).attributes["MultiProcessorCount"]
    kernel((sms * 8,), (256,), (cupy.uint64(1 << 32), wrong))
    bad, first = (int(v) for v in wrong.get())
    assert bad == 0, f"{bad} pairs differ, the first at bits {first:#010x}"


_FP8 = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}

#: (case, shape, dtype, the kernel for rows 16 bytes do not align): the tiled kernel (aligned rows), the chunked
#: one (2-byte: packed amax, warp max, four-element cvt; fp32), the realigned one and the scalar one (tiny).
CASES = [("aligned", (256, 512), "bfloat16", "chunked"), ("odd", (301, 257), "float16", "chunked"),
         ("odd fp32", (5, 26, 67), "float32", "chunked"), ("realigned", (131, 259), "bfloat16", "realigned"),
         ("tiny", (3, 5), "bfloat16", "scalar")]


def _input(shape, dtype_name: str):
    """``randn * 300`` with every 7th element replaced by random bits (NaNs, infinities, subnormals)."""
    dtype = getattr(torch, dtype_name)
    x = (torch.randn(shape, device="cuda") * 300).to(dtype)
    size = torch.empty((), dtype=dtype).element_size()
    bits = torch.randint(0, 256, (x.numel(), size), dtype=torch.uint8, device="cuda").view(dtype).reshape(-1)
    x.view(-1)[::7] = bits[::7]
    return x


@pytest.fixture(scope="module")
def _precompiled(recent_gpu):
    """The kernels of ``CASES``, normal and portable, compiled up front in parallel (into the kernel cache)."""
    from linear_layouts.codegen.ptx import compile_cubin_bytes, find_nvcc
    from linear_layouts.ops.launch import device_arch, grid_shape, portable_kernel
    from linear_layouts.ops.launches import cast_launches

    if find_nvcc() is None:
        return
    fmt = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}
    kernels = []
    for _, shape, dtype, misaligned in CASES:
        m = 1
        for size in shape[:-1]:
            m *= size
        for fp8 in _FP8:
            for item in cast_launches(fmt[dtype], fp8, m, shape[-1], 0, 0, 0, None, 1.0, 0, grid_shape(0),
                                      misaligned):
                kernels += [item.kernel, portable_kernel(item.kernel)]
    arch = device_arch(0)
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda k: compile_cubin_bytes(k.source, arch), kernels))


@pytest.mark.parametrize("fp8", list(_FP8))
@pytest.mark.parametrize("case, shape, dtype, misaligned", CASES, ids=[c[0] for c in CASES])
def test_portable_cast_transpose_equals_normal(recent_gpu, _precompiled, monkeypatch, case, shape, dtype, misaligned,
                                               fp8):
    """``ops.cast_transpose`` with its kernels as ``portable_kernel`` makes them: the same ``out``, ``out_t`` and
    amax bits as with the normal kernels (hardware ``cvt``, ``max.xorsign.abs``, ``redux.sync``)."""
    from linear_layouts.ops import launch, launches

    monkeypatch.setattr(launches, "MISALIGNED_CAST", misaligned)
    x = _input(shape, dtype)
    normal = ops.cast_transpose(x, _FP8[fp8], 0.37)
    plain = launch.launch
    kernels = []

    def portable_launch(kernel, *args):
        kernels.append(kernel.name)
        plain(launch.portable_kernel(kernel), *args)

    monkeypatch.setattr(launch, "launch", portable_launch)
    portable = ops.cast_transpose(x, _FP8[fp8], 0.37)
    torch.cuda.synchronize()
    assert kernels, "ops.cast_transpose launched nothing through ops.launch"
    for a, b in zip(normal, portable):
        assert torch.equal(a.reshape(-1).view(torch.uint8), b.reshape(-1).view(torch.uint8)), (case, fp8)


@pytest.mark.parametrize("shape, dims, dtype", [
    ((3, 1000, 999), (0, 2, 1), "bfloat16"), ((3, 1000, 999), (0, 2, 1), "uint8"),
    ((1, 64, 7, 7), (0, 2, 3, 1), "bfloat16"), ((5, 1, 7, 1, 3), (2, 4, 0, 1, 3), "float32")])
def test_plans_for_older_architectures_run_here(cuda_gpu, shape, dims, dtype):
    """Transposes that sm_90 plans through ``stmatrix``, planned for an sm_80 / sm_75 device instead (no
    ``stmatrix``; ``GridShape.arch``), run on this GPU (compiled for it) and equal PyTorch bit for bit."""
    import dataclasses

    from linear_layouts.ops import launch
    from linear_layouts.ops.launches import Launch, permute_launches

    x = torch.randint(0, 256, shape, dtype=torch.uint8, device="cuda").view(getattr(torch, dtype)) \
        if dtype == "uint8" else torch.randn(shape, device="cuda").to(getattr(torch, dtype))
    expected = x.permute(dims).contiguous()
    stream = torch.cuda.current_stream().cuda_stream
    for arch in ("sm_80", "sm_75"):
        out = torch.empty_like(expected)
        device = dataclasses.replace(launch.grid_shape(0), arch=arch)
        launches = permute_launches(tuple(shape), tuple(dims), x.element_size(), x.data_ptr(), out.data_ptr(), device)
        assert all(isinstance(item, Launch) and "ll_stsm_x" not in item.kernel.source.split('extern "C"')[-1]
                   for item in launches)
        for item in launches:
            launch.launch(item.kernel, 0, stream, item.ctas, item.values)
        torch.cuda.synchronize()
        assert torch.equal(out.view(torch.uint8), expected.view(torch.uint8)), arch
