"""The CLI speaks CuTe: CuTe text as a LAYOUT argument, ``show --format cute``, ``swizzle --format cute``."""

from __future__ import annotations

import json

from linear_layouts.cli import main
from linear_layouts.cute import Layout, Swizzle, composition, to_linear


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
    assert lines[0].startswith("Best CuTe swizzle of ") and "16-bit elements" in lines[0]
    assert any("(best CuTe swizzle)" in line for line in lines)
    assert any(line.startswith("§9.2 optimum") for line in lines)
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
