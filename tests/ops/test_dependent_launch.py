"""Programmatic dependent launch in the ops: from sm_90 on, where the driver keeps programmatic dependencies in
stream capture (CUDA 12.3), a kernel that follows another one of the same op call is launched by
``cuLaunchKernelEx`` with programmatic stream serialization (``ops.launch.dependent``; every kernel with
``DEPENDENT_LAUNCH = "all"``), through the C extension and through ``ctypes`` alike; and every op kernel
waits for the previous grid (``griddepcontrol.wait``) before anything but its prologue's register arithmetic, then
lets the next one launch. Run against a recording ``libcuda`` (``harness.fakes.FakeCuda``); on a GPU,
``test_gpu.py``'s chains of dependent ops check that no kernel reads or writes before its predecessor is done."""

from __future__ import annotations

import pytest

from linear_layouts import ops
from linear_layouts.core.errors import LayoutError
from linear_layouts.codegen.intrinsics import DEPENDENT_LAUNCH_PROLOGUE, KERNEL_PROLOGUE
from linear_layouts.ops import dispatch, driver, kernels, launch, tensors
from linear_layouts.ops.driver import ArgumentPacking, Driver, PreparedLaunch, native_module

from harness import ops_cases
from harness.fakes import FakeCuda, FakeTorchTensor

_PARAMS = (("const float*", "src"), ("unsigned", "n"), ("float", "s"))
_CLEARED = (launch.device_arch, launch.multiprocessors, launch.grid_shape, launch.device_context, launch._function,
            launch._prepared, dispatch.call_plan)


def _first_statements(source: str) -> list[list[str]]:
    """Each kernel's first two statements after ``KERNEL_PROLOGUE`` (which touches no memory)."""
    lines = source.splitlines()
    prologue = [line.strip() for line in KERNEL_PROLOGUE]
    out = []
    for i, line in enumerate(lines):
        if not line.startswith('extern "C" __global__'):
            continue
        while not lines[i].rstrip().endswith("{"):
            i += 1
        body = [b.strip() for b in lines[i + 1:i + 1 + len(prologue) + 2]]
        out.append(body[len(prologue):] if body[:len(prologue)] == prologue else body[:2])
    return out


def _families() -> list[str]:
    """One source of each kernel family the ops launch."""
    return [kernels.permute_kernel(kernels.transpose_tiles(2, 16, 16)[0], 1).source,
            kernels.copy_kernel(16).source,
            kernels.interleave_kernel(2, 3, False, 0).source,
            kernels.cast_kernel(kernels.cast_tiles(16, 16)[0], "bf16", "e4m3").source,
            kernels.realigned_cast_kernel("bf16", "e4m3").source,
            kernels.scalar_cast_kernel("fp32", "e5m2").source,
            kernels.chunked_cast_kernel("fp16", "e4m3").source,
            kernels.flat_cast_kernel("bf16", "e4m3").source,
            kernels.byte_transpose_kernel(1).source,
            kernels.chunked_transpose_kernel(2, 0).source]


@pytest.mark.parametrize("source", _families() + ops_cases.kernel_sources(),
                         ids=lambda s: s[s.index('extern "C"'):].split("(")[0].split()[-1])
def test_every_op_kernel_waits_for_the_previous_grid_before_any_memory_access(source):
    expected = [line.strip() for line in DEPENDENT_LAUNCH_PROLOGUE]
    kernels_here = _first_statements(source)
    assert kernels_here and all(first == expected for first in kernels_here), kernels_here
    assert "griddepcontrol.wait" in source and "__CUDA_ARCH__ >= 900" in source  # a no-op before sm_90 / on the host


@pytest.mark.parametrize("native", [False, True])
@pytest.mark.parametrize("dependent, version, attributes", [(True, 13000, [(6, 1)]), (True, 12030, [(6, 1)]),
                                                            (True, 12020, []), (False, 13000, [])])
def test_a_dependent_launch_is_cuLaunchKernelEx_with_programmatic_serialization(native, dependent, version,
                                                                                attributes):
    if native and native_module() is None:
        pytest.skip("the C launch extension ops._claunch is not built")
    cuda = FakeCuda(native=native, version=version)
    d = Driver(cuda)
    assert d.dependent_launch == (version >= driver.DEPENDENT_LAUNCH_DRIVER)
    cuda.function_params[0x77] = len(_PARAMS)
    packing = ArgumentPacking.of(_PARAMS)
    prepared = PreparedLaunch(0x77, 7, 5, 128, 1024, packing, dependent)
    prepared.run(0x5000, (2**40 + 16, 99, 0.5), cuda=d)
    prepared.run(0x6000, (8, 1, 2.0), cuda=d)
    first, second = cuda.launches
    assert (first["grid"], first["block"], first["shared"], first["stream"]) == ((5, 1, 1), (128, 1, 1), 1024, 0x5000)
    assert second["stream"] == 0x6000 and first["attributes"] == second["attributes"] == attributes
    assert FakeCuda.unpack(first, packing) == (2**40 + 16, 99, 0.5)
    assert FakeCuda.unpack(second, packing) == (8, 1, 2.0)


def test_a_driver_without_cuLaunchKernelEx_launches_plainly():
    cuda = FakeCuda(version=13000)
    del cuda.cuLaunchKernelEx
    d = Driver(cuda)
    assert not d.dependent_launch and d.native_entry_ex is None
    prepared = PreparedLaunch(0x77, 7, 1, 32, 0, ArgumentPacking.of(_PARAMS), True)
    prepared.run(0, (1, 2, 3.0), cuda=d)
    assert cuda.launches[0]["attributes"] == []


@pytest.fixture
def device(monkeypatch):
    """A fake driver behind the real ``launch.prepare`` (kernels "compiled" to a marked image)."""
    cuda = FakeCuda(current=7)
    fake = Driver(cuda)
    for module in (driver, launch, dispatch):
        monkeypatch.setattr(module, "driver", lambda: fake)
    monkeypatch.setattr(launch, "compile_cubin_bytes", lambda source, arch, prefer: b"\x7fELF")
    monkeypatch.setattr(tensors, "torch_stream", lambda device: 0x5000)
    for cached in _CLEARED:
        cached.cache_clear()
    yield cuda
    for cached in _CLEARED:
        cached.cache_clear()


def _attributes(launches) -> list[bool]:
    return [launched["attributes"] == [(6, 1)] for launched in launches]


@pytest.mark.parametrize("major, policy, first, later", [(9, "within", False, True), (10, "within", False, True),
                                                         (9, "all", True, True), (9, "none", False, False),
                                                         (8, "all", False, False), (8, "within", False, False)])
def test_launches_after_a_kernel_of_the_same_call_are_dependent(device, monkeypatch, major, policy, first, later):
    """``"within"``: a one-launch op launches plainly (its previous kernel may be anyone's); the permutation after
    a gather (``plan.gathers_first``) follows our own gather, on the fast path and the general one alike."""
    device.attributes.update({75: major, 76: 0})
    monkeypatch.setattr(launch, "DEPENDENT_LAUNCH", policy)
    ops.transpose(FakeTorchTensor((300, 200), 2))
    assert _attributes(device.launches) == [first]
    view = FakeTorchTensor((4096, 4096), 2, strides=(8192, 2))  # y[:, ::2]: gathered, then transposed
    ops.transpose(view)
    gathered = device.launches[1:]
    assert len(gathered) == 2 and _attributes(gathered) == [first, later]
    ops.transpose(view, out=FakeTorchTensor((4096, 4096), 2))  # out=: the general path
    assert _attributes(device.launches[3:]) == [first, later]


def test_a_bad_policy_is_named(device, monkeypatch):
    monkeypatch.setattr(launch, "DEPENDENT_LAUNCH", True)
    with pytest.raises(LayoutError, match="DEPENDENT_LAUNCH: must be one of"):
        ops.transpose(FakeTorchTensor((30, 20), 2))
