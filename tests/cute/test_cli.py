"""The CLI speaks CuTe: CuTe text as a LAYOUT argument, ``show --format cute``, ``swizzle --format cute``."""

from __future__ import annotations

import json
import re

import pytest

from linear_layouts.cli import main
from linear_layouts.cute import Layout, Swizzle, composition, parse_cute, to_linear


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_show_reads_cute_text_and_answers_in_cute(capsys):
    code, out, _ = run(capsys, "show", "Swizzle<3,4,3> o (8,128):(128,1)", "--format", "cute")
    assert code == 0
    assert out.splitlines()[0] == "CuTe: Sw<3,4,3> o 0 o (8,128):(128,1)"
    assert "swizzles: 1 (the fewest)" in out
    assert "C++:  composition(Swizzle<3,4,3>{}, Layout<Shape<_8,_128>, Stride<_128,_1>>{})" in out
    assert "DSL:  cute.make_composed_layout(cute.make_swizzle(3, 4, 3), 0" in out
    code, out, _ = run(capsys, "show", "Swizzle<3,3,3> o (8,64):(64,1)", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["bases"]["offset"][6] == [1, 8]


def test_show_cute_of_catalog_layouts(capsys):
    code, out, _ = run(capsys, "show", "NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16)",
                       "--shape", "64,64", "--format", "cute")
    assert code == 0 and out.startswith("CuTe: Sw<3,3,3> o 0 o (64,64):(64,1)")
    code, out, _ = run(capsys, "show", "NVMMADistributedLayout([2,0],[1,1],[16,8])", "--shape", "16,8",
                       "--format", "cute")
    assert code == 0 and out.startswith("CuTe: TV(16,8) ((4,8),(2,2)):((32,1),(16,8))")
    code, out, _ = run(capsys, "show", "TV(16,8) ((4,8),(2,2)):((32,1),(16,8))", "--format", "cute")
    assert code == 0 and out.startswith("CuTe: TV(16,8) ((4,8),(2,2)):((32,1),(16,8))")


def test_show_cute_explains_when_there_is_no_cute_form(capsys):
    spec = json.dumps({"bases": {"register": [[1, 1]], "lane": [[0, 1], [0, 2], [0, 4], [1, 0], [2, 0]]},
                       "out_dims": {"dim0": 4, "dim1": 8}})
    code, out, _ = run(capsys, "show", spec, "--format", "cute")
    assert code == 0 and out.startswith("no CuTe form: register bit 0 maps to (1, 1)")


def test_swizzle_format_cute(capsys):
    code, out, _ = run(capsys, "swizzle", "BlockedLayout([1,8],[4,8],[1,1],[1,0])",
                       "DotOperandLayout(0, NVMMADistributedLayout([2,0],[1,1],[16,8]), 2)", "--shape", "16,64",
                       "--dtype", "fp16", "--format", "cute")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("CuTe layouts for this store and load (16-bit elements")
    assert any("(one swizzle)" in line for line in lines) and any("§9.2 construction" in line for line in lines)
    assert sum(line.startswith("Recommended") for line in lines) == 1
    assert any(line.startswith("C++:  composition(Swizzle<") for line in lines)


def test_bad_cute_text_is_one_line_and_exit_2(capsys):
    code, out, err = run(capsys, "show", "Sw<3,4,2> o (8,8):(8,1)")
    assert code == 2 and out == ""
    assert err.startswith("linear-layouts: error: LAYOUT: CuTe spec: Swizzle<3,4,2>: |S| must be >= B")
    code, _, err = run(capsys, "show", "(8,6):(6,1)")
    assert code == 2 and "not F2-linear" in err


def test_cute_layout_agrees_with_its_json(capsys):
    code, out, _ = run(capsys, "show", "Sw<2,3,3> o (16,32):(32,1)", "--format", "json")
    assert code == 0
    assert json.loads(out)["bases"]["offset"] == to_linear(composition(Swizzle(2, 3, 3), Layout((16, 32), (32, 1)))).bases["offset"]


def test_a_reduced_swizzle_is_said_and_why(capsys):
    code, out, _ = run(capsys, "show", "Swizzle<3,4,3> o (8,64):(64,1)", "--format", "cute")
    lines = out.splitlines()
    assert code == 0 and lines[0] == "CuTe: Sw<2,4,3> o 0 o (8,64):(64,1)"
    note = " ".join(l.strip() for l in lines if l.startswith(("note:", "  ")))
    assert note.startswith("note: Swizzle<3,4,3> acts as Sw<2,4,3> on these 512 elements: its source bit 9 "
                           "(offset 512) lies outside them")
    # the two really are the same map, and a swizzle that fits is printed as written, without a note
    assert to_linear(parse_cute("Swizzle<3,4,3> o (8,64):(64,1)")) == to_linear(parse_cute("Sw<2,4,3> o (8,64):(64,1)"))
    code, out, _ = run(capsys, "show", "Swizzle<3,4,3> o (8,128):(128,1)", "--format", "cute")
    assert code == 0 and "note:" not in out and out.startswith("CuTe: Sw<3,4,3> o 0 o (8,128):(128,1)")


@pytest.mark.parametrize("dtype, bits", [("fp16", 16), ("fp32", 32), ("fp8", 8)])
def test_gluon_text_for_a_cute_swizzle_has_the_element_width_asked_for(capsys, dtype, bits):
    from linear_layouts.layouts import NVMMASharedLayout
    from linear_layouts.spec import parse_spec

    row = 1024 // bits   # a 128-byte row of elements
    code, out, _ = run(capsys, "show", f"Swizzle<3,4,3> o (8,{row}):({row},1)", "--format", "gluon", "--dtype", dtype)
    assert code == 0
    first = out.split("\n#")[0]
    descriptor = parse_spec(first).value
    # CuTe's 128-byte GMMA atom (Swizzle<3,4,3> on byte addresses) is Triton's 128-byte NVMMA of that width
    assert descriptor == NVMMASharedLayout(128, bits)
    code, out, _ = run(capsys, "show", "Swizzle<3,4,3> o (8,64):(64,1)", "--format", "gluon", "--dtype", "fp16")
    assert code == 0 and parse_spec(out.split("\n#")[0]).value == NVMMASharedLayout(128, 16)
    assert "element_bitwidth=8" not in out.split("\n#")[0] and "byte addresses" in out


def test_show_reads_what_cute_prints_and_answers_in_forms_that_read_back(capsys):
    """The C++ print form (static ints, ``_-1``), pycute's ``str`` (``SW_1_0_-1``): ``show --format cute``
    reads each, and every CuTe text it answers parses back to the same linear layout."""
    from linear_layouts.cute import parse_cute

    for text in ["SW_1_0_-1 o 0 o (2, 8):(1, 2)", "Sw<1,0,-1> o _0 o (_2,_8):(_1,_2)",
                 "Sw<3,4,3> o _0 o (_8,_128):(_128,_1)", "SW_2_3_3 o 0 o (16, 32):(32, 1)", "((2, 4), 8):((32, 1), 4)"]:
        code, out, err = run(capsys, "show", text, "--format", "cute")
        assert code == 0, err
        want = to_linear(parse_cute(text))
        joined = re.sub(r"\n\s+", " ", out)  # a wrapped line continues, indented
        answers = {line.split(":", 1)[0]: line.split(":", 1)[1].strip() for line in joined.splitlines() if ":" in line}
        assert set(answers) >= {"CuTe", "C++", "DSL", "pycute"}
        for key in ("CuTe", "C++", "DSL", "pycute"):
            assert to_linear(parse_cute(answers[key])) == want, (text, key, answers[key])
