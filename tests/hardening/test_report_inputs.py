"""`report`'s TTGIR input is untrusted text too (issue 13): alias cycles and exponential alias chains, junk
module attributes, malformed ops and mutated real modules give a LayoutError or an op reported as not
understood, in bounded time; never a traceback."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linear_layouts import LayoutError
from linear_layouts.pipeline.report import analyze_ttgir

IR = Path(__file__).resolve().parents[1] / "data" / "triton_kernels" / "ir" / "sm_90"
BLOCKED = "#blocked = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>\n"
BODY = ('module attributes {"ttg.num-warps" = WARPS : i32} {\n  tt.func @k(%a: tensor<32x64xf16, #ALIAS>) {\n'
        "    %b = ttg.convert_layout %a : tensor<32x64xf16, #ALIAS> -> tensor<32x64xf16, #blocked>\n"
        "    tt.return\n  }\n}\n")


def module(aliases: str = "", alias: str = "blocked", warps: str = "4") -> str:
    return BLOCKED + aliases + BODY.replace("ALIAS", alias).replace("WARPS", warps)


def test_a_valid_module_is_analysed():
    report = analyze_ttgir(module(), with_triton_estimate=False)
    assert report.num_warps == 4 and [op.op for op in report.ops] == ["ttg.convert_layout"] and not report.unmodeled


@pytest.mark.parametrize("aliases, alias, match", [
    ("#a = #b\n#b = #a\n", "a", r"aliases nested deeper than 32 \(a cycle\?\)"),
    ("#x0 = [1, 2]\n" + "".join(f"#x{i} = [#x{i - 1}, #x{i - 1}, #x{i - 1}, #x{i - 1}]\n" for i in range(1, 30)), "x29",
     r"expand to more than 65536 characters \(linear_layouts.limits.MAX_SPEC_CHARS\)"),
], ids=["cycle", "4**29-expansion"])
def test_alias_cycles_and_bombs(aliases, alias, match):
    """An alias cycle was a RecursionError; a chain of aliases each naming the previous four times would
    expand to 4**29 copies (memory without bound)."""
    start = time.perf_counter()
    with pytest.raises(LayoutError, match=match):
        analyze_ttgir(module(aliases, alias), with_triton_estimate=False)
    assert time.perf_counter() - start < 5


def test_junk_module_attributes():
    """``"ttg.num-warps" = 3i1`` was a ValueError from int()."""
    with pytest.raises(LayoutError, match="module attribute ttg.num-warps is not an int: '3i1"):
        analyze_ttgir(module(warps="3i1"), with_triton_estimate=False).num_warps  # noqa: B018


def test_an_unterminated_generic_op_name():
    text = module().replace("%b = ttg.convert_layout", '%b = "ttg.convert_layout')
    with pytest.raises(LayoutError, match="unterminated op name"):
        analyze_ttgir(text, with_triton_estimate=False)


def test_an_op_without_its_types_is_reported_not_understood():
    """``ttg.convert_layout`` without a type signature was an IndexError deep in the analysis."""
    text = module(alias="blocked").replace(" : tensor<32x64xf16, #blocked> -> tensor<32x64xf16, #blocked>", "")
    report = analyze_ttgir(text, with_triton_estimate=False)
    assert [u.reason[:14] for u in report.unmodeled] == ["malformed op ("]


PIECES = st.sampled_from(["", "[", "]", "<", ">", "{", "}", ",", "0", "-1", "99999999999", "#blocked", "#blocked9",
                          "tensor<", "x", ":", "\n", "(", ")", "= [", "65536", "f16", "#shared", "ttg.convert_layout",
                          "%0", "%999", "loc(", '"', "@", "!ttg.memdesc<"])
MODULES = [(IR / name).read_text() for name in ("attention_fwd.ttgir", "matmul_fp16.ttgir", "sort_rows.ttgir")]


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=st.sampled_from(MODULES),
       edits=st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 30), PIECES), min_size=1, max_size=3))
def test_mutated_real_modules(text, edits):
    for where, length, piece in edits:
        where %= len(text)
        text = text[:where] + piece + text[where + length:]
    start = time.perf_counter()
    try:
        analyze_ttgir(text, with_triton_estimate=False)
    except LayoutError as error:
        assert len(str(error)) < 1000
    assert time.perf_counter() - start < 20


def test_a_huge_scan_is_refused_not_enumerated():
    """A mutated ``tt.scan`` signature, ``(tensor<65536x1024xf32, ...>, ...)``: the scan's lowering
    enumerated its 2**26 elements' registers and lanes (minutes); ``Layouts.linear`` now refuses a type of
    more than ``MAX_ELEMENTS`` elements, ``scan_lowering`` an input as large, and the op is not understood."""
    from linear_layouts.triton_model.lowering import scan_lowering
    from linear_layouts.triton_model.encodings import Layouts, parse_type
    from linear_layouts.triton_model.ir_text import parse_module

    text = (IR / "linear_recurrence_scan.ttgir").read_text()
    old = "}) : (tensor<4x1024xf32, #blocked1>, tensor<4x1024xf32, #blocked1>) ->"
    assert old in text
    start = time.perf_counter()
    report = analyze_ttgir(text.replace(old, old.replace("4x1024", "65536x1024", 1)), with_triton_estimate=False)
    assert time.perf_counter() - start < 5
    [scan] = [u.reason for u in report.unmodeled if u.op == "tt.scan"]
    assert scan.startswith("layout not understood: type 'tensor<65536x1024xf32, #blocked1>': 67108864 elements "
                           "exceed max_elements=1048576"), scan
    module = parse_module(text)
    big = Layouts(module).descriptor(parse_type("tensor<4x1024xf32, #blocked1>", module).encoding).to_linear([65536, 1024])
    with pytest.raises(LayoutError, match="scan_lowering: src: 67108864 elements exceed max_elements=1048576"):
        scan_lowering(big, 1, [32, 32])
