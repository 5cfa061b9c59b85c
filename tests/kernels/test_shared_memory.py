"""``kernels.shared_memory``: the shared memory a TTGIR holds at once, against Triton 3.9's own allocation
(``ttg.shared`` after its ``AllocateSharedMemory`` pass, run on the CPU), and ``rewrite_kernel``'s gate
that leaves out a candidate that does not fit a CTA."""

from __future__ import annotations

from pathlib import Path

import pytest

from linear_layouts import LayoutError
from linear_layouts.analysis.cost_model import CTA_SHARED_BYTES, SM_SHARED_BYTES
from linear_layouts.kernels.ir_text import parse_module
from linear_layouts.kernels.report import analyze_module
from linear_layouts.kernels.rewrite import engine_assignment, rewrite_kernel, rewrite_ttgir
from linear_layouts.kernels.shared_memory import shared_memory_need

ROOT = Path(__file__).resolve().parents[2]
IR = ROOT / "tests" / "data" / "triton_kernels" / "ir" / "sm_90"
KERNELS = sorted(p.stem for p in IR.glob("*.ttgir"))
#: what Triton 3.9's allocation gives the legacy-start rewrite of matmul_fp16 (and of matmul_fp8): the
#: 3-stage operand buffers (147456 bytes) still live at the fp32 accumulator's conversion (131072 bytes)
MATMUL_LEGACY_BYTES = 278528


def _texts(name: str) -> tuple[str, str]:
    return (IR / f"{name}.ttir").read_text(), (IR / f"{name}.ttgir").read_text()


def _need(text: str) -> int:
    module = parse_module(text)
    return shared_memory_need(module, analyze_module(module, with_triton_estimate=False)).bytes


def _triton_shared(text: str, tmp_path: Path) -> int:
    """``ttg.shared``: the bytes Triton 3.9's ``AllocateSharedMemory`` pass gives the TTGIR ``text``."""
    pytest.importorskip("triton")
    from triton._C.libtriton import ir, nvidia, passes

    path = tmp_path / "k.ttgir"
    path.write_text(text)
    context = ir.context()
    ir.load_dialects(context)
    nvidia.load_dialects(context)
    module = ir.parse_mlir_module(str(path), context)
    manager = ir.pass_manager(context)
    passes.ttgpuir.add_combine_tensor_select_and_if(manager)
    passes.ttgpuir.add_allocate_warp_groups(manager, False)
    passes.convert.add_scf_to_cf(manager)
    nvidia.passes.ttgpuir.add_allocate_shared_memory_nv(manager, 90, 88)
    manager.run(module, "allocate")
    return module.get_int_attr("ttg.shared")


def _legacy(name: str) -> str:
    ttir, ttgir = _texts(name)
    assignment = engine_assignment(parse_module(ttir), parse_module(ttgir), start="legacy")
    return rewrite_ttgir(ttgir, assignment.values, assignment.stores).text


def test_the_limit_is_an_h100_ctas_opt_in_shared_memory():
    assert CTA_SHARED_BYTES == 227 * 1024 == 232448 < SM_SHARED_BYTES


@pytest.mark.parametrize("name", KERNELS)
def test_triton_allocates_what_we_count_on_its_own_ttgir(name, tmp_path):
    """Explicit buffers with their liveness, conversions', reductions', scans', atomics' and TMA
    descriptors' scratch: equal to Triton's allocation on every corpus kernel (a lower bound in general)."""
    ttgir = _texts(name)[1]
    assert _need(ttgir) == _triton_shared(ttgir, tmp_path)


def test_the_matmul_legacy_candidate_does_not_fit_a_cta(tmp_path):
    text = _legacy("matmul_fp16")
    need = shared_memory_need(parse_module(text), analyze_module(parse_module(text), with_triton_estimate=False))
    assert (need.bytes, need.op) == (MATMUL_LEGACY_BYTES, "ttg.convert_layout")
    assert need.bytes == _triton_shared(text, tmp_path) > CTA_SHARED_BYTES
    assert _need(_texts("matmul_fp16")[1]) == 147456  # Triton's: the epilogue converts after the dealloc


@pytest.mark.parametrize("name", ["matmul_fp16", "matmul_fp8"])
def test_rewrite_kernel_rejects_a_candidate_above_the_ctas_shared_memory(name):
    rewrite, _ = rewrite_kernel(*_texts(name))
    reasons = [r for r in rewrite.rejected if "shared memory" in r]
    assert reasons == [f"legacy: needs {MATMUL_LEGACY_BYTES} bytes of shared memory, more than a CTA can have "
                       f"({CTA_SHARED_BYTES}, cost_model.CTA_SHARED_BYTES)"]
    assert rewrite.same_layouts  # Triton's TTGIR is kept


def test_without_a_report_conversions_count_no_scratch():
    module = parse_module(_legacy("matmul_fp16"))
    assert shared_memory_need(module).bytes == 147456  # the operand buffers alone


def test_bad_input_raises_layout_error():
    with pytest.raises(LayoutError, match="module"):
        shared_memory_need("module { }")


def test_a_rewrite_above_the_limit_is_not_chosen(monkeypatch):
    """tf32_matmul_bias_relu's rewrite (73728 bytes, like Triton's) is chosen; with a 64 KiB limit it does
    not fit and Triton's TTGIR is kept."""
    import linear_layouts.kernels.rewrite as rewrite_module

    texts = _texts("tf32_matmul_bias_relu")
    assert not rewrite_kernel(*texts)[0].same_layouts
    monkeypatch.setattr(rewrite_module, "CTA_SHARED_BYTES", 64 * 1024)
    rewrite, _ = rewrite_kernel(*texts)
    assert rewrite.same_layouts and any("needs 73728 bytes" in r for r in rewrite.rejected)
