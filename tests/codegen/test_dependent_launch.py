"""Programmatic dependent launch (PDL) of transposes: ``pdl=True`` adds ``griddepcontrol.wait`` then
``griddepcontrol.launch_dependents`` at the top of every transpose form (before any global access) and
nothing else; ``pdl=False`` sources carry neither; the emulator still transposes every element (the
controls are host no-ops); nvcc emits both PTX instructions for sm_90; ``runtime.launch_programmatic``'s
ctypes structures have cuda.h's layout and it checks its grid before touching the driver; on a GPU
(marked gpu) back-to-back PDL launches inside one stream transpose every element."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from linear_layouts.codegen import runtime
from linear_layouts.codegen.emulate import emulate_transpose, find_cxx
from linear_layouts.codegen.intrinsics import DEPENDENT_LAUNCH_PROLOGUE, KERNEL_PROLOGUE
from linear_layouts.codegen.transpose import (
    emit_async_transpose_kernel, emit_persistent_transpose_kernel, emit_transpose_kernel,
)
from linear_layouts.codegen.plan import conversion_step
from linear_layouts.codegen.ptx import compile_ptx, find_nvcc
from linear_layouts.core.errors import LayoutError
from linear_layouts.ops.driver import LaunchAttribute, LaunchConfig

needs_cxx = pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
needs_nvcc = pytest.mark.skipif(find_nvcc() is None, reason="nvcc is not installed")


def _suite():
    from harness import transposes  # noqa: PLC0415

    return transposes


def _kernels(pdl: bool, rows: int = 512, cols: int = 256):
    """One of each transpose form over a ``rows x cols`` matrix of bytes (128 x 128 tiles)."""
    s = _suite()
    wide = s.transpose_wide_block_layouts(1, warps=4, rows=128, cols=128)
    rows_ = s.transpose_async_layouts(1, warps=2, rows=128, cols=128)
    step = conversion_step(*wide, 8)
    tag = f"{pdl:d}_{rows}_{cols}"
    return {
        "one tile": emit_transpose_kernel(f"t_{tag}", *wide, 1, step, rows, cols, pdl=pdl),
        "persistent": emit_persistent_transpose_kernel(f"p_{tag}", *wide, 1, step, rows, cols, ctas_per_sm=2, pdl=pdl),
        "dynamic": emit_persistent_transpose_kernel(f"d_{tag}", *wide, 1, step, rows, cols, ctas_per_sm=2,
                                                    dynamic=True, pdl=pdl),
        "cp.async": emit_async_transpose_kernel(f"a_{tag}", *rows_, 1, conversion_step(*rows_, 8), rows, cols,
                                                stages=2, pdl=pdl),
    }


def test_pdl_lines_open_every_transpose_form_and_only_with_pdl():
    for form, k in _kernels(True).items():
        lines = k.source.splitlines()
        top = lines.index(KERNEL_PROLOGUE[-1])
        assert lines[top + 1: top + 3] == list(DEPENDENT_LAUNCH_PROLOGUE), form
        wait = lines.index(DEPENDENT_LAUNCH_PROLOGUE[0])
        first_access = min(i for i, x in enumerate(lines) if i > top and ("src_all" in x or "dst_all" in x))
        assert wait < first_access, form  # nothing touches global memory before the wait
        assert k.pdl and k.source.count("griddepcontrol.wait") == 1, form
    for form, k in _kernels(False).items():
        assert not k.pdl and "griddepcontrol" not in k.source and "ll_grid_dependency_wait" not in k.source, form


@needs_cxx
@pytest.mark.parametrize("form", ["one tile", "persistent", "dynamic", "cp.async"])
def test_pdl_transposes_every_element(form):
    assert emulate_transpose(_kernels(True)[form], seed=3, ctas=3)


@needs_nvcc
def test_pdl_compiles_to_grid_dependency_control():
    ptx = compile_ptx(_kernels(True)["persistent"].source)
    assert ptx.count("griddepcontrol.wait;") == 1 and ptx.count("griddepcontrol.launch_dependents;") == 1
    assert "griddepcontrol" not in compile_ptx(_kernels(False)["persistent"].source)


def test_launch_structures_have_the_driver_layout():
    """cuda.h (CUDA 12+): CUlaunchAttribute is 72 bytes with its value at 8; CUlaunchConfig is 56 bytes,
    hStream at 32, attrs at 40, numAttrs at 48."""
    assert (ctypes.sizeof(LaunchAttribute), LaunchAttribute.value.offset) == (72, 8)
    c = LaunchConfig
    assert (ctypes.sizeof(c), c.stream.offset, c.attrs.offset, c.num_attrs.offset) == (56, 32, 40, 48)


@pytest.mark.parametrize("grid", [(), (0,), (1, 2, 3, 4), (4, -1)])
def test_launch_programmatic_checks_the_grid(grid):
    with pytest.raises(LayoutError, match="grid: expected 1 to 3 positive sizes"):
        runtime.launch_programmatic(object(), grid, 32, [0, 0])


@pytest.mark.gpu
@pytest.mark.parametrize("form", ["one tile", "persistent", "dynamic", "cp.async"])
def test_back_to_back_pdl_launches_on_the_gpu(form, cuda_gpu):
    """Three launches with programmatic stream serialization on one stream, A -> B, B -> C, C -> D:
    each reads what the previous one wrote, so D = A^T^T^T = A^T on every element only if every wait
    held."""
    import cupy as cp  # noqa: PLC0415

    kernels = {(512, 256): _kernels(True)[form], (256, 512): _kernels(True, 256, 512)[form]}
    rng = np.random.default_rng(1)
    a = cp.asarray(rng.integers(0, 255, size=(512, 256), dtype=np.uint8))
    b, c, d = cp.zeros((256, 512), np.uint8), cp.zeros((512, 256), np.uint8), cp.zeros((256, 512), np.uint8)
    sched = [cp.zeros(2, np.uint32)] if kernels[512, 256].dynamic else []
    stream = cp.cuda.Stream(non_blocking=True)
    for x, y in ((a, b), (b, c), (c, d)):
        k = kernels[x.shape]
        runtime.launch_programmatic(runtime.compile_kernel(k), k.grid(132), k.threads,
                                    [x.data.ptr, y.data.ptr] + [s.data.ptr for s in sched], k.shared_bytes, stream.ptr)
    stream.synchronize()
    assert bool((d == a.T).all())
