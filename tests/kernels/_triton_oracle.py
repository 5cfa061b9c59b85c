"""Triton 3.9 as the test oracle of the kernel workflow (an optional test dependency, never the package's)."""

from __future__ import annotations

from pathlib import Path

import pytest


def triton_module(text: str, tmp_path: Path):
    """``(context, module)``: the TTGIR ``text`` parsed and verified by Triton 3.9 with the NVIDIA and
    AMD dialects loaded (skips the test without Triton); a bare RuntimeError if Triton refuses it."""
    pytest.importorskip("triton")
    from triton._C.libtriton import amd, ir, nvidia

    path = tmp_path / "oracle.ttgir"
    path.write_text(text)
    context = ir.context()
    ir.load_dialects(context)
    nvidia.load_dialects(context)
    amd.load_dialects(context)
    return context, ir.parse_mlir_module(str(path), context)


def triton_shared(text: str, tmp_path: Path, cc: int = 90) -> int:
    """``ttg.shared``: the bytes Triton 3.9's ``AllocateSharedMemory`` pass gives the TTGIR ``text`` for
    compute capability ``cc``."""
    context, module = triton_module(text, tmp_path)
    from triton._C.libtriton import ir, nvidia, passes

    manager = ir.pass_manager(context)
    passes.ttgpuir.add_combine_tensor_select_and_if(manager)
    passes.ttgpuir.add_allocate_warp_groups(manager, False)
    passes.convert.add_scf_to_cf(manager)
    nvidia.passes.ttgpuir.add_allocate_shared_memory_nv(manager, cc, 88)
    manager.run(module, "allocate")
    return module.get_int_attr("ttg.shared")
