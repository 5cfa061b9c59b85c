"""The ops ask the CUDA driver, and nothing else, for the device and its kernels (``ops.launch``, ``ops.driver``):
its attributes (SMs, L2, architecture), its primary context, and each kernel's cubin loaded into that context,
run here against a recording ``libcuda`` (``harness.fakes.FakeCuda``) with CuPy made unimportable, so a
PyTorch user needs no other package."""

from __future__ import annotations

import sys

import pytest

from linear_layouts import ops
from linear_layouts.core.errors import LayoutError
from linear_layouts.ops import dispatch, driver, launch, tensors
from linear_layouts.ops.driver import Driver
from linear_layouts.ops.kernels import GridShape
from linear_layouts.ops.launches import Launch, permute_launches

from harness.fakes import FakeCuda, FakeTorchTensor


def _clear() -> None:
    for cached in (launch.device_arch, launch.multiprocessors, launch.grid_shape, launch.device_context,
                   launch._function, launch._prepared, dispatch.call_plan):
        cached.cache_clear()


@pytest.fixture
def device(monkeypatch):
    """A fake driver behind the real ``launch.prepare`` (kernels "compiled" to a marked image), CuPy unimportable."""
    cuda = FakeCuda(current=7)
    fake = Driver(cuda)
    compiled: list[tuple[str, str]] = []

    def compile_cubin_bytes(source: str, arch: str, prefer: str) -> bytes:
        assert prefer == launch.COMPILER == "nvrtc"  # the ops' choice where both compilers are here
        compiled.append((source, arch))
        return b"\x7fELF" + source.encode()

    monkeypatch.setitem(sys.modules, "cupy", None)  # ``import cupy`` raises ImportError
    for module in (driver, launch, dispatch):
        monkeypatch.setattr(module, "driver", lambda: fake)
    monkeypatch.setattr(launch, "compile_cubin_bytes", compile_cubin_bytes)
    monkeypatch.setattr(tensors, "torch_stream", lambda device: 0x5000)
    _clear()
    yield cuda, compiled
    _clear()


def test_a_call_compiles_loads_into_the_primary_context_and_launches(device):
    cuda, compiled = device
    cuda.attributes.update({16: 114, 38: 40 * 2**20, 75: 8, 76: 0})  # an A100: 108 SMs would do as well
    x = FakeTorchTensor((300, 200), 2)
    y = ops.transpose(x)
    assert launch.grid_shape(0) == GridShape(114, 40 * 2**20, "sm_80")
    expected = [item for item in permute_launches((300, 200), (1, 0), 2, x.data_ptr(), y.data_ptr(),
                                                  GridShape(114, 40 * 2**20, "sm_80")) if isinstance(item, Launch)]
    assert [arch for _, arch in compiled] == ["sm_80"] * len(expected)
    assert [(c, image, name) for c, image, name, _ in cuda.loaded] == [
        (7, b"\x7fELF" + item.kernel.source.encode(), item.kernel.name) for item in expected]
    assert [launched["function"] for launched in cuda.launches] == list(range(1, len(expected) + 1))
    assert cuda.initialized and cuda.contexts == [7] and cuda.pushes == 0
    ops.transpose(FakeTorchTensor((300, 200), 2))  # loaded once: the second call compiles and loads nothing
    assert len(compiled) == len(cuda.loaded) == len(expected) and len(cuda.launches) == 2 * len(expected)


def test_a_thread_without_a_context_loads_into_the_primary_one(device):
    """No context current on the calling thread: the module is loaded with the primary context pushed, then
    popped; the launch goes into that context the same way."""
    cuda, _ = device
    cuda.contexts = [0]
    ops.transpose(FakeTorchTensor((64, 64), 4))
    assert cuda.loaded[0][0] == cuda.primary == 7 and cuda.contexts == [0] and cuda.pushes >= 1
    assert [launched["context"] for launched in cuda.launches] == [7]


def test_dynamic_shared_memory_above_48_kib_is_allowed_on_the_function(device):
    cuda, _ = device
    fake = Driver(cuda)
    small = fake.load_function(7, b"\x7fELF", "small", 48 * 1024)
    large = fake.load_function(7, b"\x7fELF", "large", 100_000)
    assert (cuda.loaded[small - 1][3], cuda.loaded[large - 1][3]) == (0, 100_000)
    with pytest.raises(RuntimeError, match=r"cuFuncSetAttribute\(MAX_DYNAMIC_SHARED_SIZE_BYTES\) failed"):
        fake.load_function(7, b"\x7fELF", "too large", 300 * 1024)


def test_a_missing_device_and_an_old_one_are_named(device):
    cuda, compiled = device
    with pytest.raises(RuntimeError, match=r"cuDeviceGet\(1\) failed"):
        launch.grid_shape(1)
    cuda.attributes.update({75: 7, 76: 0})
    with pytest.raises(LayoutError, match="device 0: its architecture sm_70 is below sm_75"):
        ops.transpose(FakeTorchTensor((64, 64), 4))
    assert not compiled and not cuda.loaded


def test_a_cubin_the_driver_cannot_load_is_named_with_the_remedy(device, monkeypatch):
    cuda, _ = device
    cuda.cuModuleLoadData.fn = lambda pointer, image: 222  # CUDA_ERROR_UNSUPPORTED_PTX_VERSION
    monkeypatch.setattr(launch, "kernel_compiler", lambda required, prefer: "nvrtc")
    with pytest.raises(RuntimeError, match=r"cuModuleLoadData failed: .*compiled by nvrtc for sm_90, does not load on "
                                           r"device 0; .* set \$LINEAR_LAYOUTS_COMPILER=nvcc"):
        ops.transpose(FakeTorchTensor((64, 64), 4), out=FakeTorchTensor((64, 64), 4))
