"""``kernels.shared_memory``: the shared memory a TTGIR holds at once, against Triton 3.9's own allocation
(``ttg.shared`` after its ``AllocateSharedMemory`` pass, run on the CPU), and ``rewrite_kernel``'s gate
that leaves out a candidate that does not fit a CTA."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from linear_layouts import LayoutError
from linear_layouts.analysis.cost_model import CTA_SHARED_BYTES, SM_SHARED_BYTES
from linear_layouts.target import DEFAULT_TARGET
from linear_layouts.triton_model.ir_text import parse_module
from linear_layouts.pipeline.report import analyze_module
from linear_layouts.pipeline.rewrite import engine_assignment, rewrite_kernel, rewrite_ttgir
from linear_layouts.pipeline.shared_memory import shared_memory_need

from ._triton_oracle import triton_shared

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


def _legacy(name: str) -> str:
    ttir, ttgir = _texts(name)
    assignment = engine_assignment(parse_module(ttir), parse_module(ttgir), start="legacy")
    return rewrite_ttgir(ttgir, assignment.values, assignment.stores).text


def test_the_limit_is_an_h100_ctas_opt_in_shared_memory():
    assert CTA_SHARED_BYTES == DEFAULT_TARGET.cta_shared_bytes == 227 * 1024 == 232448 < SM_SHARED_BYTES


@pytest.mark.parametrize("name", KERNELS)
def test_triton_allocates_what_we_count_on_its_own_ttgir(name, tmp_path):
    """Explicit buffers with their liveness, conversions', reductions', scans', atomics' and TMA
    descriptors' scratch: equal to Triton's allocation on every corpus kernel (a lower bound in general)."""
    ttgir = _texts(name)[1]
    assert _need(ttgir) == triton_shared(ttgir, tmp_path)


def test_the_matmul_legacy_candidate_does_not_fit_a_cta(tmp_path):
    text = _legacy("matmul_fp16")
    need = shared_memory_need(parse_module(text), analyze_module(parse_module(text), with_triton_estimate=False))
    assert (need.bytes, need.op) == (MATMUL_LEGACY_BYTES, "ttg.convert_layout")
    assert need.bytes == triton_shared(text, tmp_path) > CTA_SHARED_BYTES
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


_EXECUTE = """#s = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#smem = #ttg.shared_memory
module {
  tt.func public @k() {
    %r = scf.execute_region -> TYPE {
      %a = VALUE
      scf.yield %a : TYPE
    }
    tt.return
  }
}"""


def test_a_buffer_through_an_unmodelled_scf_op_is_refused():
    """``scf.execute_region`` (no Triton kernel of ours makes one) is not lowered to blocks here: a buffer
    made in it is refused by name rather than counted with a guessed liveness; without one it is counted."""
    memdesc = "!ttg.memdesc<16xf32, #s, #smem, mutable>"
    text = _EXECUTE.replace("TYPE", memdesc).replace("VALUE", f"ttg.local_alloc : () -> {memdesc}")
    with pytest.raises(LayoutError, match="scf.execute_region .* not modelled"):
        shared_memory_need(parse_module(text))
    plain = _EXECUTE.replace("TYPE", "i32").replace("VALUE", "arith.constant 0 : i32")
    assert shared_memory_need(parse_module(plain)).bytes == 0


#: an H100 whose CTAs may allocate 64 KiB: the limit comes from the target the rewrite is for
SMALL = dataclasses.replace(DEFAULT_TARGET, cta_shared_bytes=64 * 1024)


def test_a_rewrite_above_the_limit_is_not_chosen(monkeypatch):
    """tf32_matmul_bias_relu's rewrite (73728 bytes, like Triton's), with the model made to prefer it (the
    launch gate comes first), is chosen; with a 64 KiB limit it does not fit and Triton's TTGIR is kept."""
    import linear_layouts.pipeline.kernel_model as kernel_model
    import linear_layouts.pipeline.rewrite as rewrite_module

    monkeypatch.setattr(kernel_model, "predicted_gain", lambda triton, ours: 0.5)
    monkeypatch.setattr(rewrite_module, "_model_refusal", lambda start, own, costs, narrowing=False: None)
    texts = _texts("tf32_matmul_bias_relu")
    assert not rewrite_kernel(*texts)[0].same_layouts
    rewrite, _ = rewrite_kernel(*texts, target=SMALL)
    assert rewrite.same_layouts and any("needs 73728 bytes" in r for r in rewrite.rejected)


def test_the_engines_choice_above_the_limit_is_flagged():
    """``choose=False`` keeps the engine's text and says it does not fit (the same line as ``choose``)."""
    texts = _texts("tf32_matmul_bias_relu")
    assert rewrite_kernel(*texts, choose=False)[0].rejected == ()
    rewrite, _ = rewrite_kernel(*texts, choose=False, target=SMALL)
    assert rewrite.rejected == ("both: needs 73728 bytes of shared memory, more than a CTA can have (65536, "
                                "sm_90 (H100): Target.cta_shared_bytes)",)
    assert not rewrite.same_layouts  # the engine's layouts, as written


_GATHER = """#a = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [WARPS], order = [1, 0]}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @k(%x: !tt.ptr<f16> {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %p = tt.splat %x : !tt.ptr<f16> -> tensor<128x128x!tt.ptr<f16>, #a>
    %v = tt.load %p : tensor<128x128x!tt.ptr<f16>, #a>
    %i = arith.constant dense<3> : tensor<128x128xi32, #a>
    %g = tt.gather %v[%i] {axis = 1 : i32} : (tensor<128x128xf16, #a>, tensor<128x128xi32, #a>) -> tensor<128x128xf16, #a>
    tt.store %p, %g : tensor<128x128x!tt.ptr<f16>, #a>
    tt.return
  }
}
"""


@pytest.mark.parametrize("warps, expected", [("1, 4", 32768), ("4, 1", 0)])
def test_a_gather_across_warps_holds_its_source_in_shared_memory(warps, expected, tmp_path):
    """``tt.gather`` along an axis split over warps: Triton writes the whole source to shared memory
    (128 x 128 x 2 bytes); with the axis inside each warp it is warp-local and needs none."""
    text = _GATHER.replace("WARPS", warps)
    assert _need(text) == expected == triton_shared(text, tmp_path)


_CARRIED = """#a = #ttg.blocked<{sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]}>
#b = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]}>
#s = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 8 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @k(%x: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %n: i32) attributes {noinline = false} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r = tt.make_range {end = 4096 : i32, start = 0 : i32} : tensor<4096xi32, #a>
    %p = tt.splat %x : !tt.ptr<f16> -> tensor<4096x!tt.ptr<f16>, #a>
    %q = tt.addptr %p, %r : tensor<4096x!tt.ptr<f16>, #a>, tensor<4096xi32, #a>
    %v = tt.load %q : tensor<4096x!tt.ptr<f16>, #a>
    %buf = ttg.local_alloc %v : (tensor<4096xf16, #a>) -> !ttg.memdesc<4096xf16, #s, #smem>
    %out = scf.for %i = %c0 to %n step %c1 iter_args(%m = %buf) -> (!ttg.memdesc<4096xf16, #s, #smem>)  : i32 {
      %w = ttg.local_load %m : !ttg.memdesc<4096xf16, #s, #smem> -> tensor<4096xf16, #a>
      %y = ttg.convert_layout %w : tensor<4096xf16, #a> -> tensor<4096xf16, #b>
      %r2 = tt.make_range {end = 4096 : i32, start = 0 : i32} : tensor<4096xi32, #b>
      %p2 = tt.splat %x : !tt.ptr<f16> -> tensor<4096x!tt.ptr<f16>, #b>
      %q2 = tt.addptr %p2, %r2 : tensor<4096x!tt.ptr<f16>, #b>, tensor<4096xi32, #b>
      tt.store %q2, %y : tensor<4096x!tt.ptr<f16>, #b>
      scf.yield %m : !ttg.memdesc<4096xf16, #s, #smem>
    }
    tt.return
  }
}
"""


def test_a_buffer_carried_by_a_loop_is_live_through_it(tmp_path):
    """A memdesc passed to a loop as an iter_arg is its init's buffer: live through the loop, so its 8192
    bytes and the conversion's 8192 bytes of scratch are held at once."""
    assert _need(_CARRIED) == 16384 == triton_shared(_CARRIED, tmp_path)


T36 = Path("/tmp/triton-3.6.0")
IR36 = ROOT / "tests" / "data" / "triton36_sm90"
#: ``ttg.shared`` of Triton 3.6.0's allocation (run on the CPU, 2026-11-27) of its own TTGIRs with a
#: reduction across warps: each reduction's scratch is the source with its axis resized to the warps
#: along it, whole bytes per operand (``ReduceOpHelper::getScratchSizeInBytes``)
TRITON36_SHARED = {"absmax_atomic": 32, "cross_entropy": 32, "fused_softmax": 4128, "layer_norm_bwd_dwdb": 2048,
                   "layer_norm_bwd_dx": 32, "layer_norm_fwd": 32, "rms_norm": 128, "sort_rows": 8192}


def _need36(text: str) -> int:
    module = parse_module(text)
    return shared_memory_need(module, analyze_module(module, with_triton_estimate=False,
                                                     triton_version="3.6.0")).bytes


@pytest.mark.parametrize("name", sorted(TRITON36_SHARED))
def test_triton_36_reductions_count_their_scratch(name):
    assert _need36((IR36 / f"{name}.ttgir").read_text()) == TRITON36_SHARED[name]


@pytest.mark.skipif(not (T36 / "triton").is_dir(), reason="Triton 3.6 (the device's) is not under /tmp/triton-3.6.0")
def test_triton_36_allocates_what_we_count_on_its_own_ttgirs():
    """Every Triton 3.6 TTGIR of the corpus, against Triton 3.6's own allocation (a separate process)."""
    import json
    import subprocess
    import sys

    script = ("import json, sys\nfrom triton._C.libtriton import ir, nvidia, passes\nout = {}\n"
              "for path in sys.argv[1:]:\n"
              "    context = ir.context(); ir.load_dialects(context); nvidia.load_dialects(context)\n"
              "    module = ir.parse_mlir_module(path, context); manager = ir.pass_manager(context)\n"
              "    passes.ttgpuir.add_combine_tensor_select_and_if(manager)\n"
              "    passes.ttgpuir.add_allocate_warp_groups(manager)\n"
              "    passes.convert.add_scf_to_cf(manager)\n"
              "    nvidia.passes.ttgpuir.add_allocate_shared_memory_nv(manager, 90, 88)\n"
              "    manager.run(module, 'allocate'); out[path] = module.get_int_attr('ttg.shared')\n"
              "print(json.dumps(out))\n")
    paths = sorted(str(p) for p in IR36.glob("*.ttgir"))
    done = subprocess.run([sys.executable, "-c", script, *paths], capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(T36), "PATH": "/usr/bin:/bin"})
    triton = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(triton) == len(paths) > 20
    assert {Path(p).stem: _need36(Path(p).read_text()) for p in paths} == {Path(p).stem: v for p, v in triton.items()}
