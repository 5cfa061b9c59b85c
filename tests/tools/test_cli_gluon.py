"""The CLI's Gluon / TTGIR side: ``--format gluon|ttgir`` on show, swizzle and convert, the ranked shared
layouts of ``swizzle`` (LOAD a layout or a consumer) and of ``banks --store``."""

from __future__ import annotations

import pytest

import linear_layouts.layouts as C
from linear_layouts.cli import main
from linear_layouts.spec import parse_spec
from linear_layouts.layouts.ttgir import parse_attribute

STORE = "BlockedLayout([1,8],[4,8],[4,1],[1,0])"
TRANSPOSED = "BlockedLayout([8,1],[8,4],[1,4],[0,1])"


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_show_gluon_and_ttgir(capsys):
    code, out, _ = _run(capsys, "show", STORE, "--shape", "128,64", "--format", "ttgir")
    assert code == 0 and parse_attribute(out.strip()) == C.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    bases = C.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0]).to_linear([16, 64]).to_json()
    code, out, _ = _run(capsys, "show", bases, "--format", "gluon")  # bases in, the blocked layout recognized
    assert code == 0 and " ".join(out.split()) == "gl.BlockedLayout(size_per_thread=[1, 8], threads_per_warp=[4, " \
                                                  "8], warps_per_cta=[4, 1], order=[1, 0])"
    assert max(map(len, out.splitlines())) <= 100 and parse_spec(out).value == C.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    attribute = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>"
    code, out, _ = _run(capsys, "show", f"!ttg.memdesc<128x64xf16, {attribute}, #ttg.shared_memory, mutable>",
                        "--format", "gluon")
    assert code == 0 and parse_spec(out.strip()).value == C.NVMMASharedLayout(128, 16)
    code, out, _ = _run(capsys, "show", f"tensor<128x64xf16, {attribute}>", "--format", "text")
    assert code == 0 and out.startswith("[[(  0: 0),(  0: 1)")  # Triton's shared view, row 0 unswizzled


def test_swizzle_answers_the_wgmma_question(capsys):
    code, out, _ = _run(capsys, "swizzle", STORE, "wgmma-a", "--shape", "128,64", "--dtype", "fp16")
    assert code == 0
    assert "NVMMA 128B [get_default_for]" in out and "Recommended (row 1): gl.NVMMASharedLayout(swizzle_byte_width=128" in out
    first = next(line for line in out.splitlines() if line.startswith("1 "))
    assert " 128 " in first and "yes" in first
    code, out, _ = _run(capsys, "swizzle", STORE, "wgmma-a", "--shape", "128,64", "--dtype", "fp16", "--format", "ttgir")
    assert code == 0 and parse_attribute(out.strip()) == C.NVMMASharedLayout(128, 16)


def test_swizzle_with_a_load_layout_and_ldmatrix(capsys):
    code, out, _ = _run(capsys, "swizzle", STORE, TRANSPOSED, "--shape", "128,128", "--dtype", "fp16")
    assert code == 0 and "optimal-swizzle construction" in out and "§5.4 construction, vectors widened" in out
    best = next(line for line in out.splitlines() if line.startswith("1 "))
    assert "§5.4 construction" in best and " 512 " in best  # 256 + 256 against the default's 256 + 4096
    code, out, _ = _run(capsys, "swizzle", STORE, TRANSPOSED, "--shape", "128,128", "--dtype", "fp16",
                        "--format", "gluon")
    descriptor = parse_spec(out.strip()).value
    assert code == 0 and isinstance(descriptor, (C.SharedLinearLayout, C.SwizzledSharedLayout))
    operand = "DotOperandLayout(0, NVMMADistributedLayout([2,0],[4,1],[16,8]), 2)"
    code, out, _ = _run(capsys, "swizzle", STORE, operand, "--shape", "64,64", "--dtype", "fp16", "--ldmatrix")
    assert code == 0 and "ldmatrix" in out


def test_banks_ranks_the_given_layout(capsys):
    code, out, _ = _run(capsys, "banks", "NVMMASharedLayout(128, 16)", TRANSPOSED, "--shape", "128,128",
                        "--dtype", "fp16", "--store", STORE, "--steps", "1")
    assert code == 0 and "load: 4096 wavefronts" in out
    given = next(line for line in out.splitlines() if "[given" in line)
    assert "4096" in given and "get_default_for" in given


def test_convert_gluon(capsys):
    code, out, _ = _run(capsys, "convert", STORE, TRANSPOSED, "--shape", "128,128", "--dtype", "fp16", "--format", "gluon")
    assert max(map(len, out.splitlines())) <= 100   # long lines continue inside their brackets: still Python
    lines = dict(line.split(" = ", 1) for line in out.strip().replace("\n    ", " ").splitlines()
                 if not line.startswith("#"))
    assert code == 0 and parse_spec(lines["src"]).value == C.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    assert "shared" in lines
    assert isinstance(parse_spec(lines["shared"]).value, C.SharedLinearLayout)
    code, out, _ = _run(capsys, "convert", STORE, TRANSPOSED, "--shape", "128,128", "--dtype", "fp16", "--format", "ttgir")
    assert code == 0 and out.startswith("src = #ttg.blocked<")


@pytest.mark.parametrize("argv, message", [
    (["swizzle", STORE, "wgmma-c", "--shape", "64,64", "--dtype", "fp16"], "LOAD"),
    (["show", "#ttg.blocked<{sizePerThread = [1]}>", "--format", "gluon"], "missing key"),
])
def test_errors(capsys, argv, message):
    code, _, err = _run(capsys, *argv)
    assert code == 2 and message in err and "Traceback" not in err
