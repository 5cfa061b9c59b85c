"""Emitted CUDA compiles without warnings: nvcc (the runtime's own flags) reports nothing about a conversion
kernel through shared memory, one of warp shuffles, a gather and the cast kernels of the ops (every helper
of the prelude that a kernel leaves unused, every declaration a kernel's body leaves unread, would be one)."""

from __future__ import annotations

import functools
import shutil
import subprocess

import pytest

from linear_layouts.codegen.plan import conversion_kernel
from linear_layouts.ops import kernels
from linear_layouts.spec import parse_spec

from ._layouts import seed_transpose


def _layout(spec: str, shape: list[int]):
    return parse_spec(spec).to_linear(shape)


@functools.cache
def _sources() -> dict[str, str]:
    """One kernel of each kind whose source once carried an unused declaration: name -> source."""
    store, load, _ = seed_transpose()
    shuffle = conversion_kernel(_layout("BlockedLayout([1,1],[4,8],[1,1],[1,0])", [16, 16]),
                                _layout("BlockedLayout([1,2],[4,8],[1,1],[0,1])", [16, 16]), "fp32")
    return {
        "shared": conversion_kernel(store, load, "fp16").source,
        "shuffle": shuffle.source,
        "cast": kernels.cast_kernel(kernels.cast_tiles(16, 16)[0], "bf16", "e4m3").source,
        "realigned_cast": kernels.realigned_cast_kernel("bf16", "e4m3").source,
        "realigned_cast_fp32": kernels.realigned_cast_kernel("fp32", "e4m3").source,
        "chunked_cast": kernels.chunked_cast_kernel("fp16", "e4m3").source,
    }


@pytest.mark.parametrize("kind", list(_sources()))
def test_nvcc_prints_no_warning(kind, tmp_path):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    source = tmp_path / f"{kind}.cu"
    source.write_text(_sources()[kind])
    proc = subprocess.run([nvcc, "-arch=sm_90", "-cubin", "-O3", "-std=c++17", "-o", str(tmp_path / "k.cubin"),
                           str(source)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in (proc.stdout + proc.stderr).lower(), proc.stderr
