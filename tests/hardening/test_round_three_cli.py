"""Round three of the command line's and the text parsers' hardening: each reproducer of the hunt, as the
attacker ran it. Every command line here must exit 2 with one line on stderr (or 0 with the right answer),
never a traceback; every parser must raise LayoutError, never a stray ValueError, RecursionError or
MemoryError, and never keep one of two values silently.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_run import refused, run
from linear_layouts import LayoutError, LinearLayout
from linear_layouts.spec import parse_spec

NVMMA = "NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)"
BLOCKED = "BlockedLayout([1,4],[4,8],[4,1],[1,0])"
KERNEL = Path(__file__).resolve().parents[1] / "data/triton_kernels/ir/sm_90/transpose.ttgir"
BIG = "9" * 5000  # above Python's 4300 digits of int(str): a ValueError unless refused first


def kernel(tmp_path: Path, old: str, new: str, name: str = "transpose") -> str:
    """The corpus kernel ``name`` (sm_90) with ``old`` replaced by ``new``, as a file; its path."""
    text = KERNEL.with_name(f"{name}.ttgir").read_text()
    assert old in text
    path = tmp_path / "k.ttgir"
    path.write_text(text.replace(old, new, 1))
    return str(path)


# --- numbers: digits that str.isdigit() admits and int() refuses, and integers of 5000 digits ---------------

@pytest.mark.parametrize("dtype", ["²", "¹⁶", "٣٢"])
def test_a_dtype_of_non_ascii_digits_is_refused(dtype):
    """``--dtype ²``: ``str.isdigit`` said yes, ``int`` raised ValueError (a traceback); ``٣٢`` was 32 bits."""
    from linear_layouts.core.element_type import element_type

    with pytest.raises(LayoutError, match="not a known element type"):
        element_type(dtype)
    refused(["show", NVMMA, "--shape", "32,64", "--dtype", dtype], "--dtype")
    refused(["banks", NVMMA, "BlockedLayout([1,8],[4,8],[4,1],[1,0])", "--shape", "32,64", "--dtype", dtype], "--dtype")
    refused(["explore", "-o", "/nonexistent/page.html", "--layout", BLOCKED, "--shape", "32,64", "--dtype", dtype],
            "--dtype")


def test_a_ttgir_attribute_integer_of_5000_digits():
    """``sizePerThread = [1, 999...]`` (5000 digits): ValueError from ``int`` in the attribute reader."""
    from linear_layouts.layouts.ttgir_text import parse_attribute

    text = f"#ttg.blocked<{{sizePerThread = [1, {BIG}], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}}>"
    with pytest.raises(LayoutError, match="an integer of 5000 digits; at most 40 digits"):
        parse_attribute(text)
    refused(["show", text, "--shape", "32,64"], "at most 40 digits")


@pytest.mark.parametrize("old, new, needle", [
    ('ttg.target = "cuda:90"', f'ttg.target = "cuda:{BIG}"', "is not a module target"),
    ("tensor<64x64xf16, #blocked1>", f"tensor<64x{BIG}xf16, #blocked1>", "more than 40"),
], ids=["target", "tensor-size"])
def test_a_report_of_5000_digit_integers_is_refused(tmp_path, old, new, needle):
    """A module target ``cuda:999...`` and a tensor size of 5000 digits were ValueError tracebacks."""
    refused(["report", kernel(tmp_path, old, new), "--no-triton-estimate"], needle)


@pytest.mark.parametrize("old, new, name", [
    ('#loc = loc("transpose.py":8:1)', f'#loc = loc("transpose.py":{BIG}:1)', "transpose"),
    ("{contiguity = 8 : i32}", f"{{contiguity = {BIG} : i32}}", "paged_decode_attention"),
], ids=["location-line", "op-attribute"])
def test_5000_digits_where_the_report_reads_no_layout(tmp_path, old, new, name):
    """A location's line and an op's integer attribute of 5000 digits: ValueError tracebacks."""
    status, _, err = run(["report", kernel(tmp_path, old, new, name), "--no-triton-estimate"])
    assert status in (0, 2) and "Traceback" not in err and err.count("\n") <= 1, err[-2000:]


def test_a_memdesc_allocation_shape_of_5000_digits():
    from linear_layouts.triton_model.ir_types import parse_type

    assert parse_type("!ttg.memdesc<64x16xf16, #shared, #smem, mutable, 64x64>").alloc_shape == (64, 64)
    with pytest.raises(LayoutError, match="more than 40"):
        parse_type(f"!ttg.memdesc<64x16xf16, #shared, #smem, mutable, 64x{BIG}>")


def test_a_result_count_is_bounded_before_it_is_enumerated(tmp_path):
    """``%s:200000000 = scf.for ...`` listed 200 million result names (a MemoryError, or the machine's memory)."""
    text = (Path(__file__).resolve().parents[1] / "data/triton_kernels/ir/sm_90/cross_entropy.ttgir").read_text()
    assert "%s:2 = scf.for" in text
    path = tmp_path / "k.ttgir"
    path.write_text(text.replace("%s:2 = scf.for", "%s:200000000 = scf.for", 1))
    refused(["report", str(path), "--no-triton-estimate"], "'%s:200000000': more results than the op's line")


# --- recursion ------------------------------------------------------------------------------------------

def test_a_chain_of_cute_tv_prefixes_is_refused_before_it_recurses():
    """``TV(1) TV(1) ... (8,64):(64,1)`` (2000 of them): RecursionError."""
    text = "TV(1) " * 2000 + "(8,64):(64,1)"
    with pytest.raises(LayoutError, match="nested deeper than 32 levels"):
        parse_spec(text)
    refused(["show", text], "nested deeper than 32 levels")
    assert str(parse_spec("TV(16,8) ((4,8),(2,2)):((32,1),(16,8))").value) == "TV(16,8) ((4,8),(2,2)):((32,1),(16,8))"


# --- a key given twice: the earlier value was dropped silently ------------------------------------------------

@pytest.mark.parametrize("text, key", [
    ('{"bases": {"register": [[1]], "register": [[2]]}, "out_dims": {"dim0": 4}, "require_surjective": false}',
     "'register'"),
    ('{"bases": {"register": [[1]]}, "out_dims": {"dim0": 2, "dim0": 4}, "require_surjective": false}', "'dim0'"),
    ('{"bases": {"register": [[1]]}, "bases": {"lane": [[1]]}, "out_dims": {"dim0": 2}}', "'bases'"),
], ids=["in-dim", "out-dim", "bases"])
def test_a_json_key_given_twice_is_refused(text, key):
    """JSON keeps the last of two equal keys: ``register`` twice gave a layout of the second one only."""
    with pytest.raises(LayoutError, match=f"json: key {key} given twice in one object"):
        LinearLayout.from_json(text)
    refused(["show", text], "given twice")


def test_require_surjective_and_its_alias_together_are_refused():
    """``"require_surjective": false, "surjective": true``: the alias was ignored silently."""
    with pytest.raises(LayoutError, match="not both"):
        LinearLayout.from_json('{"bases": {"register": [[1]]}, "out_dims": {"dim0": 2}, "require_surjective": false, '
                               '"surjective": true}')


@pytest.mark.parametrize("text, match", [
    ('LinearLayout({"register": [[1]], "register": [[0]]}, ["dim0"], require_surjective=False)', "given twice"),
    ('LinearLayout({"register": [[1]]}, {"dim0": 2, "dim0": 4}, require_surjective=False)', "given twice"),
    ('LinearLayout({[1]: [[1]]}, ["dim0"])', "a dict key must be a name or a number"),
    ('LinearLayout({(1, 2): [[1]]}, ["dim0"])', "a dict key must be a name or a number"),
], ids=["in-dim-twice", "out-dim-twice", "list-key", "tuple-key"])
def test_dict_literals_of_a_spec(text, match):
    """A key twice was dropped silently; a list as a key was a TypeError (unhashable) traceback."""
    with pytest.raises(LayoutError, match=match):
        parse_spec(text)
    refused(["show", text], match)


def test_an_alias_defined_twice_in_a_ttgir_is_refused(tmp_path):
    """``#blocked = ...`` twice: every use of ``#blocked`` was read as the second definition."""
    path = kernel(tmp_path, "#blocked1 = ", "#blocked = ")
    refused(["report", path, "--no-triton-estimate"], "the alias '#blocked' is defined twice")


# --- one line on stderr --------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["show", '{"bases": {}, "out_dims": {}}'],
    ["show", "TensorMemoryLayout((128, 128), 1)", "--shape", "128,128", "--format", "svg"],
    ["convert", "TensorMemoryLayout((128, 128), 1)", BLOCKED, "--shape", "128,128", "--dtype", "fp16"],
    ["swizzle", "TensorMemoryLayout((128, 128), 1)", "tma", "--shape", "128,128", "--dtype", "fp16"],
], ids=["empty-layout", "tmem-svg", "tmem-convert", "tmem-swizzle"])
def test_a_warning_before_an_error_is_not_printed(argv):
    """A warning ("LAYOUT has 1 lane per warp") then the error: two lines on stderr for one mistake."""
    refused(argv)


SIXTEEN_LANES = "BlockedLayout([1,4],[2,8],[4,1],[1,0])"


def test_warnings_of_a_command_that_succeeds_are_kept(tmp_path):
    status, out, err = run(["show", SIXTEEN_LANES, "--shape", "32,64", "--format", "cute"])
    assert status == 0 and err.startswith("linear-layouts: warning: LAYOUT has 16 lanes per warp") and out
    path = tmp_path / "cute.txt"
    status, _, err = run(["show", SIXTEEN_LANES, "--shape", "32,64", "--format", "cute", "-o", str(path)])
    assert status == 0 and err.splitlines()[0].startswith("linear-layouts: warning") and err.splitlines()[1] == \
        f"wrote {path}"


def test_a_tensor_memory_layout_is_its_own_kind():
    """TMEM layouts (in dims row, col) were taken for distributed ones: a false "1 lane per warp" warning, and
    "a distributed layout" where a command wants a shared one."""
    status, out, err = run(["show", "TensorMemoryLayout((128, 128), 1)", "--shape", "128,128", "--format", "cute"])
    assert status == 0 and err == "" and "no CuTe form" in out
    refused(["banks", "TensorMemoryLayout((128, 128), 1)", BLOCKED, "--shape", "128,128"],
            "got a tensor memory layout (in dims row, col, block)")
    status, _, err = run(["convert", BLOCKED, "TensorMemoryLayout((128, 128), 1)", "--shape", "128,128", "--dtype",
                          "fp16"])
    assert status == 2 and "got a tensor memory layout" in err and "banks SHARED DIST" not in err


# --- paths ---------------------------------------------------------------------------------------------------

def test_an_output_path_with_a_nul_character():
    """``-o 'x\\0y'``: ValueError (embedded null byte) from ``open``."""
    refused(["show", BLOCKED, "--shape", "32,64", "-o", "/tmp/x\0y"], "-o", "not a valid path (a NUL character)")
    refused(["explore", "-o", "/tmp/x\0y"], "not a valid path")
