"""``rewrite_kernel``'s candidates are TTGIR that Triton 3.9 accepts: every candidate of every corpus kernel
(each run of the engine, each rule for unmapped ops) goes through Triton's parser and verifier, and
``shared_memory_need`` counts the shared memory Triton's allocation gives it; the gate leaves out a
candidate that is not well-formed (``ir_text.check_well_formed``, ``layouts.check_layouts_fit``), naming it
in ``Rewrite.rejected``, and on gfx942 it refuses exactly the candidates Triton refuses."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

import linear_layouts.pipeline.rewrite as rewrite_module
from linear_layouts.core.errors import LayoutError
from linear_layouts.triton_model.ir_text import check_well_formed, parse_module
from linear_layouts.triton_model.encodings import check_layouts_fit
from linear_layouts.pipeline.report import analyze_module
from linear_layouts.pipeline.rewrite import engine_assignment, rewrite_kernel, rewrite_ttgir
from linear_layouts.pipeline.shared_memory import shared_memory_need
from linear_layouts.target import named_target

from ._triton_oracle import triton_module, triton_shared

IR = Path(__file__).resolve().parents[1] / "data" / "triton_kernels" / "ir"
CASES = [(target, p.stem) for target in ("sm_80", "sm_90") for p in sorted((IR / target).glob("*.ttgir"))]
AMD = [p.stem for p in sorted((IR / "gfx942").glob("*.ttgir"))]
#: an element-wise op of vector_add, and a layout its operands do not have
ADD = re.compile(r"^(\s*%\S+ = arith\.addf [^:]*: )tensor<1024xf32, .*>( loc\(.*\))$", re.M)
OTHER = "tensor<1024xf32, #ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>>"


def _texts(target: str, name: str) -> tuple[str, str]:
    return (IR / target / f"{name}.ttir").read_text(), (IR / target / f"{name}.ttgir").read_text()


@functools.lru_cache(maxsize=None)
def _candidates(target: str, name: str) -> dict[str, str]:
    """Every text ``rewrite_kernel`` may judge: each engine run, each ``unmapped`` rule (it takes the better)."""
    ttir, ttgir = _texts(target, name)
    out = {}
    # the engine lays out for NVIDIA targets: an AMD kernel's candidates are asked for on sm_90 explicitly
    on = named_target("sm_90") if target == "gfx942" else None
    for start in ("both", "anchored", "legacy"):
        assignment = engine_assignment(parse_module(ttir), parse_module(ttgir), start=start, target=on)
        for rule in ("follow", "triton"):
            out.setdefault(rewrite_ttgir(ttgir, assignment.values, assignment.stores, unmapped=rule).text,
                           f"{start}/{rule}")
    return {label: text for text, label in out.items()}


def _triton_error(text: str, tmp_path: Path, capfd) -> str | None:
    """Triton 3.9's parser + verifier on ``text``: None if it accepts it, else its diagnostic."""
    capfd.readouterr()
    try:
        triton_module(text, tmp_path)
    except RuntimeError as error:  # Triton raises a bare RuntimeError; its diagnostic goes to stderr
        return f"{error}: {capfd.readouterr().err.strip()}"
    return None


@pytest.mark.parametrize("target,name", CASES, ids=[f"{t}/{n}" for t, n in CASES])
def test_triton_accepts_every_candidate(target, name, tmp_path, capfd):
    candidates = _candidates(target, name)
    assert candidates
    errors = {label: _triton_error(text, tmp_path, capfd) for label, text in candidates.items()}
    assert {label: e for label, e in errors.items() if e} == {}


def _gate_accepts(text: str) -> bool:
    """``rewrite_kernel``'s gate on one candidate text."""
    try:
        module = parse_module(text)
        check_well_formed(module, "ttgir")
        check_layouts_fit(module, "ttgir")
    except LayoutError:
        return False
    return True


@pytest.mark.parametrize("name", AMD)
def test_on_gfx942_the_gate_accepts_what_triton_accepts(name, tmp_path, capfd):
    """On gfx942 (64 lanes a warp) the engine's layouts have 32 lanes: Triton's verifier refuses such a
    candidate ("Layout has 32 threads per warp, but the module specifies 64") and so does the gate; a
    candidate Triton accepts passes it."""
    for label, text in _candidates("gfx942", name).items():
        assert (label, _gate_accepts(text)) == (label, _triton_error(text, tmp_path, capfd) is None)


def test_the_gate_rejects_layouts_with_other_lanes_than_the_module():
    """An AMD kernel is no engine target (a LayoutError naming it); asked for on sm_90, its 32-lane candidates
    are refused by the gate against the 64-lane module."""
    ttir, ttgir = _texts("gfx942", "vector_add")
    with pytest.raises(LayoutError, match="gfx942: the engine lays out for NVIDIA targets only"):
        rewrite_kernel(ttir, ttgir)
    rewrite, _ = rewrite_kernel(ttir, ttgir, target=named_target("sm_90"))
    assert rewrite.text == ttgir and rewrite.rejected
    assert all("not well-formed" in r and "has 32 lanes per warp, but the module has 64" in r for r in rewrite.rejected)


@pytest.mark.parametrize("target,name", CASES, ids=[f"{t}/{n}" for t, n in CASES])
def test_we_count_the_shared_memory_triton_allocates_to_every_candidate(target, name, tmp_path):
    """Buffers, their liveness and every op's scratch as Triton 3.9 sizes it (a conversion's scratch as
    ``getNumScratchElemsSwizzledCvt`` sizes it, layer_norm_bwd_dx's legacy candidate on sm_90 included:
    an ldmatrix pair keeps two reps in the segment, so Triton takes ld/st + ldmatrix with 8192 bytes)."""
    for label, text in _candidates(target, name).items():
        module = parse_module(text)
        ours = shared_memory_need(module, analyze_module(module, with_triton_estimate=False)).bytes
        assert (label, ours) == (label, triton_shared(text, tmp_path, int(target[3:])))


def _broken(text: str) -> str:
    """``text`` with vector_add's ``arith.addf`` spelled in another layout than its operands'."""
    broken, count = ADD.subn(lambda m: m.group(1) + OTHER + m.group(2), text)
    assert count == 1, "vector_add's rewrite has one arith.addf"
    return broken


def test_the_broken_candidate_is_refused_by_triton_too(tmp_path, capfd):
    text = _broken(_candidates("sm_90", "vector_add")["both/follow"])
    assert "expects different type" in (_triton_error(text, tmp_path, capfd) or "")


def test_the_gate_rejects_a_candidate_that_is_not_well_formed(monkeypatch):
    """Every candidate of vector_add broken (an addf in another layout than its operands): each is rejected
    with the rule it breaks, and Triton's TTGIR is kept."""
    emit = rewrite_module._Rewriter.emit
    monkeypatch.setattr(rewrite_module._Rewriter, "emit", lambda self: _broken(emit(self)))
    ttir, ttgir = _texts("sm_90", "vector_add")
    rewrite, _ = rewrite_kernel(ttir, ttgir)
    reasons = [r for r in rewrite.rejected if "not well-formed" in r]
    assert reasons and all("uses '%x" in r and "one type" in r or "one layout" in r for r in reasons), rewrite.rejected
    assert rewrite.text == ttgir and rewrite.same_layouts


def test_the_engines_choice_as_written_goes_through_the_same_gate(monkeypatch):
    """``choose=False`` returns the engine's text as written, broken or not, and records what the gate
    says of it: the broken addf's rule, in the line ``choose=True`` gives the same candidate."""
    emit = rewrite_module._Rewriter.emit
    monkeypatch.setattr(rewrite_module._Rewriter, "emit", lambda self: _broken(emit(self)))
    ttir, ttgir = _texts("sm_90", "vector_add")
    rewrite, _ = rewrite_kernel(ttir, ttgir, choose=False)
    assert len(rewrite.rejected) == 1 and rewrite.rejected[0].startswith("both: not well-formed: ttgir: ")
    assert rewrite.rejected[0] in rewrite_kernel(ttir, ttgir)[0].rejected
    assert rewrite.text != ttgir and OTHER in rewrite.text  # as written: the caller is told, not given Triton's


def test_without_the_break_the_engines_choice_passes_the_gate():
    rewrite, _ = rewrite_kernel(*_texts("sm_90", "vector_add"), choose=False)
    assert rewrite.rejected == ()


def test_without_the_break_vector_add_has_no_rejected_candidate():
    rewrite, _ = rewrite_kernel(*_texts("sm_90", "vector_add"))
    assert not any("not well-formed" in r for r in rewrite.rejected)


def test_every_candidate_scans_in_a_blocked_layout():
    """Triton lowers ``tt.scan`` only over a ``#ttg.blocked`` operand (``ScanLoweringHelper::isSupported``;
    another layout fails in ConvertTritonGPUToLLVM and gets no scratch from the allocation): the rewrite
    keeps Triton's blocked layout for a scan where the engine's is a linear one (moe_topk_bucket's
    cumulative sum down the experts' one-hot tile was)."""
    from linear_layouts.catalog import BlockedLayout
    from linear_layouts.kernels.layouts import Layouts, parse_type

    scans = set()
    for target, name in CASES:
        if '"tt.scan"' not in _texts(target, name)[1]:
            continue
        for label, text in _candidates(target, name).items():
            module = parse_module(text)
            layouts = Layouts(module)
            for op in module.functions[0].walk():
                if op.name == "tt.scan":
                    scans.add(name)
                    encoding = parse_type(op.operand_types[0], module).encoding
                    assert isinstance(layouts.descriptor(encoding), BlockedLayout), (target, name, label)
    assert {"cumsum", "linear_recurrence_scan", "moe_topk_bucket"} <= scans


def test_the_gate_rejects_layouts_with_other_ctas_than_the_module(tmp_path, capfd):
    """A kernel compiled with ``num_ctas=2`` (a Hopper cluster): Triton's layouts carry a CGA layout of two
    CTAs and its verifier refuses any other ("Layout has 1 CTAs per CGA, but the context requires 2");
    the engine's layouts have one CTA, so the gate refuses each candidate and Triton's TTGIR is kept even
    where any predicted loss would do."""
    import dataclasses

    pytest.importorskip("triton")
    from linear_layouts.pipeline import load_kernel_file
    from linear_layouts.triton_model.compile import compile_kernel

    spec = load_kernel_file(str(IR.parent / "vector_add.py"))
    compiled = compile_kernel(dataclasses.replace(spec, options={**spec.options, "num_ctas": 2}), "sm_90")
    written, _ = rewrite_kernel(compiled.ttir, compiled.ttgir, choose=False)
    assert written.text != compiled.ttgir and "CTAs per CGA" in (_triton_error(written.text, tmp_path, capfd) or "")
    assert len(written.rejected) == 1 and "has 1 blocks per CGA, but the module has 2 (ttg.num-ctas)" in \
        written.rejected[0]
    chosen, _ = rewrite_kernel(compiled.ttir, compiled.ttgir, min_gain=-0.9, narrowing=True)
    assert chosen.text == compiled.ttgir and written.rejected[0] in chosen.rejected
