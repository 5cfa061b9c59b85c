"""Hostile IR text, round four: a module the well-formedness check accepts but whose types disagree with
its ops (a 2-D ``tt.make_range``), a module whose layouts have other warps than ``ttg.num-warps`` (or none),
and tensors of an element type of no known width: a LayoutError or an op reported as not understood,
never an IndexError nor a report priced for other warps or a guessed width."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from linear_layouts import LayoutError
from linear_layouts.pipeline.report import analyze_ttgir
from linear_layouts.triton_model.axis_info import axis_info
from linear_layouts.triton_model.global_access import global_accesses
from linear_layouts.triton_model.ir_text import check_well_formed, parse_module
from linear_layouts.triton_model.registers import register_estimate

IR = Path(__file__).resolve().parents[1] / "data" / "triton_kernels" / "ir" / "sm_90"
BLOCKED = "#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>\n"
HEAD = 'module attributes {"ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", "ttg.threads-per-warp" = 32 : i32} {\n'


def module(body: str, head: str = HEAD) -> str:
    return BLOCKED + head + "  tt.func public @k(%p: !tt.ptr<f32>) {\n" + body + "    tt.return\n  }\n}\n"


RANKS = {
    "make_range to 2-D": ("    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64x2xi32, #blocked>\n"
                          "    %s = arith.addi %r, %r : tensor<64x2xi32, #blocked>\n"),
    "broadcast to a higher rank": (
        "    %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked}>>\n"
        "    %b = tt.broadcast %r : tensor<64xi32, #ttg.slice<{dim = 1, parent = #blocked}>> -> tensor<64x2xi32, #blocked>\n"
        "    %s = arith.addi %b, %b : tensor<64x2xi32, #blocked>\n"),
}


@pytest.mark.parametrize("body", RANKS.values(), ids=RANKS.keys())
def test_axis_info_of_ops_whose_ranks_disagree_is_unknown(body):
    """``axis_info`` gave a 2-D ``tt.make_range`` 1-D facts and the ops reading them indexed past them: an
    IndexError out of ``axis_info``, ``register_estimate``, ``global_accesses`` (and ``rewrite_kernel``) on a
    module ``check_well_formed`` accepts; such an op's facts are now unknown."""
    m = parse_module(module(body))
    check_well_formed(m, "ttgir")
    info = axis_info(m.functions[0])
    assert info["%s"].rank == len(info["%s"].contiguity) and info["%s"].contiguity == (1,) * info["%s"].rank
    register_estimate(m)
    global_accesses(m)


@pytest.mark.parametrize("edit, needle", [
    (("\"ttg.num-warps\" = 8 : i32, ", ""), "has 8 warps per CTA, but the module has no ttg.num-warps (read as 4)"),
    (("\"ttg.num-warps\" = 8 : i32", "\"ttg.num-warps\" = 4 : i32"), "has 8 warps per CTA, but the module has 4"),
], ids=["no num-warps", "num-warps 4"])
def test_layouts_of_other_warps_than_the_module_are_refused(edit, needle):
    """``absmax_atomic.ttgir`` (8 warps) without ``ttg.num-warps`` was reported as a 4-warp kernel, its
    8-warp reduction priced as it is: Triton's verifier refuses such a module, and so does the report."""
    text = (IR / "absmax_atomic.ttgir").read_text()
    assert edit[0] in text
    with pytest.raises(LayoutError, match=re.escape(needle)):
        analyze_ttgir(text.replace(edit[0], edit[1]), with_triton_estimate=False)


@pytest.mark.parametrize("element", ["q7", "i4", "f4E2M1FN"])
def test_an_element_of_no_known_width_is_not_priced_as_32_bits(element):
    """``tt.scan`` of ``tensor<16x256xq7>`` was priced as 32-bit traffic (``bitwidth or 32``): the op is
    now reported as not understood, naming the element type."""
    text = (IR / "cumsum.ttgir").read_text().replace("tensor<16x256xf32", f"tensor<16x256x{element}")
    report = analyze_ttgir(text, with_triton_estimate=False)
    assert [op.op for op in report.ops] == []
    [scan] = [u.reason for u in report.unmodeled if u.op == "tt.scan"]
    assert f"element type '{element}' has no known width in bits" in scan, scan



def test_a_nul_character_is_refused_where_it_would_cut_a_name():
    """``tt.sc\\0an`` read as an op ``tt.sc`` of its own: the scan vanished from the report."""
    text = (IR / "cumsum.ttgir").read_text()
    at = text.index("tt.scan")
    line = text.count("\n", 0, at) + 1
    with pytest.raises(LayoutError, match=f"a NUL character at line {line}, column"):
        parse_module(text[:at + 5] + "\0" + text[at + 5:])


def test_a_conversion_of_no_tensor_type_is_not_dropped():
    """An operand type in parentheses (no tensor type to the parser): the conversion was left out of both the
    ops and the ops not understood."""
    text = (IR / "transpose.ttgir").read_text()
    old = "%17 = ttg.convert_layout %0 : tensor<64x64xf16, #blocked1> -> tensor<64x64xf16, #blocked>"
    assert old in text
    report = analyze_ttgir(text.replace(old, old.replace(": tensor<64x64xf16, #blocked1>",
                                                          ": ((tensor<64x64xf16, #blocked1>))")),
                           with_triton_estimate=False)
    assert [u.reason for u in report.unmodeled if u.op == "ttg.convert_layout"] == [
        "operand or result of type (tensor<64x64xf16, #blocked1>) -> tensor<64x64xf16, #blocked>: not a tensor type"]
