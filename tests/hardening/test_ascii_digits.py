"""Integers in user text are ASCII digits only (``limits.parse_int``): Python's ``int`` also reads any Unicode
decimal digit (``int('٣٢') == 32``), so ``--steps ٣``, ``Swizzle<٣,4,3>`` or ``tensor<٣٢x64xf16, ...>`` were
read as 3, 3 and 32 where every reader sees something else. Each is now a LayoutError naming the argument and
the rule; the command line exits 2 with one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_run import refused, run
from linear_layouts import LayoutError
from linear_layouts.core.limits import INT_RULE, parse_int
from linear_layouts.spec import parse_spec

NVMMA = "NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)"
BLOCKED = "BlockedLayout([1,8],[4,8],[4,1],[1,0])"
KERNEL = Path(__file__).resolve().parents[1] / "data/triton_kernels/ir/sm_90/transpose.ttgir"
TTGIR = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"


@pytest.mark.parametrize("text, value", [("32", 32), (" 32 ", 32), ("0", 0), ("007", 7)])
def test_parse_int_reads_ascii_digits(text, value):
    assert parse_int(text, "N") == value


@pytest.mark.parametrize("text", ["٣٢", "３２", "²", "1_000", "-1", "+1", "", " ", "0x20", "3.0", "1e3"])
def test_parse_int_refuses_all_else(text):
    with pytest.raises(LayoutError, match=r"^N: expected a non-negative integer, got .* \(an integer is written in "
                                          r"ASCII digits 0-9\)$"):
        parse_int(text, "N")


def test_parse_int_signed_and_digit_limit():
    assert parse_int("-5", "--steps", signed=True) == -5 and parse_int("+5", "--steps", signed=True) == 5
    with pytest.raises(LayoutError, match="optionally signed"):
        parse_int("-٥", "--steps", signed=True)
    with pytest.raises(LayoutError, match="an integer of 11 digits; at most 10 digits"):
        parse_int("1" * 11, "--shape", max_digits=10)


@pytest.mark.parametrize("argv, needle", [
    (["banks", NVMMA, BLOCKED, "--shape", "32,64", "--steps", "٣"], "--steps: expected an integer, got '٣'"),
    (["explore", "--port", "٨٠٠٠", "-o", "-"], "--port: expected an integer, got '٨٠٠٠'"),  # -o: never serves
    (["show", BLOCKED, "--shape", "32,64", "--max-elements", "٣٢٠٠٠"], "--max-elements: "),
    (["show", BLOCKED, "--shape", "٣٢,64"], "--shape: "),
    (["banks", NVMMA, BLOCKED, "--shape", "32,64", "--target", "sm_٩٠"], "target 'sm_٩٠': the compute capability"),
], ids=["steps", "port", "max-elements", "shape", "target"])
def test_cli_integer_options(argv, needle):
    """argparse's type=int read `--steps ٣` as 3 and `--port ٨٠٠٠` as 8000 (and sm_٩٠ was sm_90)."""
    refused(argv, needle, INT_RULE)


@pytest.mark.parametrize("spec, needle", [
    ("Swizzle<٣,4,3> o (8,64):(64,1)", "column 9"),
    ("(٨,64):(64,1)", "column 2"),
    ("Swizzle<3,4,3> o (8,64):(６４,1)", "column 26"),
], ids=["swizzle", "shape", "fullwidth-stride"])
def test_cute_text(spec, needle):
    """`Swizzle<٣,4,3> o (8,64):(64,1)` was Swizzle<3,4,3>."""
    with pytest.raises(LayoutError, match="CuTe spec: ") as info:
        parse_spec(spec)
    assert INT_RULE in str(info.value) and needle in str(info.value)
    refused(["show", spec, "--format", "cute"], "LAYOUT: CuTe spec: ", INT_RULE)


@pytest.mark.parametrize("spec, needle", [
    (TTGIR.replace("[1, 4]", "[1, ٤]"), "ttgir: integer: expected an integer, got '٤'"),
    (f"tensor<٣٢x64xf16, {TTGIR}>", "a size: expected a non-negative integer, got '٣٢'"),
], ids=["attribute", "tensor-size"])
def test_ttgir_text(spec, needle):
    """`tensor<٣٢x64xf16, ...>` was a 32x64 tensor; `sizePerThread = [1, ٤]` was [1, 4]."""
    with pytest.raises(LayoutError, match="expected") as info:
        parse_spec(spec).to_linear([32, 64])
    assert needle in str(info.value) and INT_RULE in str(info.value)
    ascii_spec = spec.replace("٤", "4").replace("٣٢", "32")
    assert parse_spec(ascii_spec).to_linear([32, 64]) == parse_spec(TTGIR).to_linear([32, 64])
    refused(["show", spec, "--shape", "32,64"], "LAYOUT: ", INT_RULE)


def kernel_file(tmp_path: Path, old: str, new: str) -> str:
    """The corpus kernel with ``old`` replaced by ``new``, as a file; its path."""
    text = KERNEL.read_text()
    assert old in text
    path = tmp_path / "k.ttgir"
    path.write_text(text.replace(old, new, 1))
    return str(path)


def test_report_of_a_ttgir_file_with_a_foreign_size(tmp_path):
    """`report` of a TTGIR file read `tensor<٦٤x64xf16, ...>` as 64x64: now the file is refused."""
    refused(["report", kernel_file(tmp_path, "tensor<64x64xf16, #blocked>", "tensor<٦٤x64xf16, #blocked>"),
             "--no-triton-estimate"], "a size: expected a non-negative integer, got '٦٤'", INT_RULE)


def test_report_of_a_ttgir_file_with_a_foreign_attribute(tmp_path):
    """`report` read `sizePerThread = [1, ٨]` as [1, 8]: now that layout is listed as not read, with the rule."""
    status, out, err = run(["report", kernel_file(tmp_path, "sizePerThread = [1, 8]", "sizePerThread = [1, ٨]"),
                            "--no-triton-estimate", "--wide"])
    assert status == 0, err
    assert "Gluon: (not read: ttgir: integer: expected an integer, got '٨'" in out and INT_RULE in out
    assert "size_per_thread=(1, 8)" not in out
