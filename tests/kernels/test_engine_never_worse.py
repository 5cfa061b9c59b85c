"""Over the whole kernel corpus (tests/data/triton_kernels/ir/sm_90: the TTIR and TTGIR Triton 3.9 produces,
the kernels benchmarks/gpu_engine_kernels.py rewrites and times), the TTGIR ``kernels.rewrite`` writes with
our engine's layouts is never predicted worse than Triton's (``engine_compare.kernel_costs``, per CTA):

* no more ``convert_layout`` ops that move data, and no more shared-memory wavefronts (conversions and
  register -> shared stagings);
* no more predicted time, shared (the calibrated cost model) plus global memory (``anchors.global_cost``):
  our global accesses may cost more than Triton's only by less than the shared time we save, and never
  where we save none.

The table these tests check is in the report of issue 15 item 6 (before / after the global-memory model
in SM-ns per CTA, the TTIR import of pointer alignment and ``tt.dot_scaled``)."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from linear_layouts.layouts import NVMMADistributedLayout
from linear_layouts.pipeline.engine_compare import kernel_costs
from linear_layouts.pipeline.rewrite import engine_assignment, rewrite_kernel, rewrite_ttgir
from linear_layouts.triton_model.ir_text import parse_module

ROOT = Path(__file__).resolve().parents[2]
IR = ROOT / "tests" / "data" / "triton_kernels" / "ir" / "sm_90"
KERNELS = sorted(p.stem for p in IR.glob("*.ttir"))


def _texts(name: str) -> tuple[str, str]:
    return (IR / f"{name}.ttir").read_text(), (IR / f"{name}.ttgir").read_text()


@functools.lru_cache(maxsize=None)
def _chosen(name: str):
    """(the rewrite ``rewrite_kernel`` chooses, Triton's costs, ours), once per kernel."""
    ttir, ttgir = _texts(name)
    rewrite, _ = rewrite_kernel(ttir, ttgir)
    return rewrite, kernel_costs(ttir, ttgir), kernel_costs(ttir, rewrite.text)


def test_the_corpus_is_all_here():
    assert len(KERNELS) >= 30 and "sort_rows" in KERNELS  # the largest (366 ops), under MAX_ENGINE_OPS since 2026-11-27


@pytest.mark.parametrize("name", KERNELS)
def test_our_rewrite_is_never_predicted_worse_than_triton(name):
    _, triton, ours = _chosen(name)
    assert ours.conversions <= triton.conversions, (name, triton, ours)
    assert ours.wavefronts <= triton.wavefronts, (name, triton, ours)
    assert ours.total_ns <= triton.total_ns + 1e-6, (name, triton, ours)
    if ours.shared_ns >= triton.shared_ns - 1e-6:  # no shared time saved: no global time to spend
        assert ours.global_ns <= triton.global_ns + 1e-6, (name, triton, ours)


def test_the_kernels_with_a_predicted_gain_are_rewritten():
    """The rewrites the whole-kernel model acts on alone (at least ``MIN_GAIN`` faster, no narrower global
    accesses) with the H200's measured table of global instruction costs and no launch scalars (loop trip
    counts unknown: the less favourable of a loop run once and a loop that dominates): none on this corpus.
    The two it finds faster narrow a global access, so only a measured choice (``narrowing=True``) takes
    them: int4_dequant_matmul's (one conversion of its K loop gone, its output stored in 2-byte pieces) and
    softmax_dim0's (its column reductions held in registers, at the price of 4-byte loads).
    bitonic_sort_pairs' is not one: its sort's reductions are priced. The ones once chosen with the
    conversions counted once and global accesses priced as free are kept: tf32_matmul_bias_relu's narrower
    accumulator stores cost what its conversion saved."""
    gains = {}
    for name in KERNELS:
        rewrite = _chosen(name)[0]
        if not rewrite.same_layouts:
            gains[name] = (rewrite.triton_conversions, rewrite.conversions)
        assert rewrite.gain is not None and (rewrite.same_layouts or rewrite.gain >= 0.02)
    assert gains == {}
    for name, conversions in (("int4_dequant_matmul", (2, 1)), ("softmax_dim0", (0, 0))):
        assert any("narrower global accesses" in why for why in _chosen(name)[0].rejected), name
        measured, _ = rewrite_kernel(*_texts(name), narrowing=True)
        assert (measured.triton_conversions, measured.conversions) == conversions and measured.gain >= 0.02
    kept = _chosen("tf32_matmul_bias_relu")[0]
    assert kept.same_layouts and any("narrower global accesses" in why for why in kept.rejected)
    priced, _ = rewrite_kernel(*_texts("tf32_matmul_bias_relu"), narrowing=True)
    assert priced.same_layouts and "the best is predicted" in priced.kept[0]


def test_a_gain_below_the_device_spread_keeps_tritons_layouts():
    """int8_matmul: the engine's rewrite (1 conversion against Triton's 3) is predicted 1.3% faster and measured
    2.5% slower on an H100 (2026-11-27, engine.md); below ``MIN_GAIN`` (2%, the run-to-run spread of the device's
    timings) Triton's TTGIR is kept."""
    from linear_layouts.pipeline.rewrite import MIN_GAIN

    ttir, ttgir = _texts("int8_matmul")
    written, _ = rewrite_kernel(ttir, ttgir, choose=False)
    gain = 1 - kernel_costs(ttir, written.text).total_ns / kernel_costs(ttir, ttgir).total_ns
    assert (written.conversions, written.triton_conversions) == (1, 3)
    assert 0.01 < gain < MIN_GAIN
    assert _chosen("int8_matmul")[0].same_layouts


def test_storing_matmul_fp16_from_the_accumulator_is_predicted_worse():
    """The assignment the engine chose before its global-memory cost was per CTA (measured 1.093x slower
    on H100): the epilogue conversion removed, the wgmma accumulator stored as is. The model must rank it
    below Triton's conversion + coalesced store, although it has fewer conversions and wavefronts."""
    ttir, ttgir = _texts("matmul_fp16")
    assignment = engine_assignment(parse_module(ttir), parse_module(ttgir))
    mma = NVMMADistributedLayout((3, 0), (8, 1), (16, 256, 16))
    direct = rewrite_ttgir(ttgir, assignment.values, {0: mma})
    assert "ttg.convert_layout" not in direct.text
    triton, ours = kernel_costs(ttir, ttgir), kernel_costs(ttir, direct.text)
    assert (ours.conversions, ours.wavefronts) == (0, 0) < (triton.conversions, triton.wavefronts)
    assert ours.global_ns - triton.global_ns > 2 * triton.shared_ns
    assert _chosen("matmul_fp16")[0].same_layouts  # the engine keeps Triton's conversion


def test_fused_softmax_keeps_scalar_accesses_on_a_misaligned_row_stride():
    """The row stride (781 floats) is not a multiple of 16 bytes: Triton's coalesced layout holds one
    element per thread; the engine's import carries that alignment (was 4 per thread: 4x the sectors)."""
    ttir, ttgir = _texts("fused_softmax")
    rewrite, _ = rewrite_kernel(ttir, ttgir, choose=False)
    assert rewrite.same_layouts
    assert kernel_costs(ttir, rewrite.text).global_ns == pytest.approx(kernel_costs(ttir, ttgir).global_ns)


@pytest.mark.parametrize("name", ["mxfp8_matmul", "mxfp4_matmul"])
def test_dot_scaled_is_a_dot_and_its_epilogue_converts_after_the_truncation(name):
    """``tt.dot_scaled`` imported as a dot: the engine no longer takes its result for a free value and
    converts the bf16 tile Triton converts, not the fp32 accumulator (was +512 wavefronts)."""
    ttir, ttgir = _texts(name)
    rewrite, _ = rewrite_kernel(ttir, ttgir, choose=False)
    triton, ours = kernel_costs(ttir, ttgir), kernel_costs(ttir, rewrite.text)
    assert (ours.conversions, ours.wavefronts) == (triton.conversions, triton.wavefronts)
