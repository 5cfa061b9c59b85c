"""The spec parser's guards (issue 13): deep nesting, long integers, lone surrogates, huge inputs, junk
shapes and flags all give a LayoutError that quotes at most ~80 characters of the text; and the guards
themselves (:func:`linear_layouts.core.limits.check_text`, ``excerpt``, ``quote``), which other parsers reuse."""

from __future__ import annotations

import time

import pytest

from linear_layouts import LayoutError
from linear_layouts.core.limits import MAX_INT_DIGITS, MAX_SPEC_CHARS, MAX_SPEC_DEPTH, check_text, excerpt, quote
from linear_layouts.spec import parse_spec

BLOCKED = "BlockedLayout([1,4],[4,8],[4,1],[1,0])"
JSON = '{"bases": {"register": [[1]]}, "out_dims": ["dim0"]}'


@pytest.mark.parametrize("text", [
    "{" + '"a":[' * 1000 + "]" * 1000 + "}",                                   # 1000-deep JSON
    '{"bases": ' + "[" * 1000 + "]" * 1000 + ', "out_dims": ["dim0"]}',
    "BlockedLayout(" + "[" * 1000 + "]" * 1000 + ")",                           # 1000-deep call syntax
    "f(" * 1000 + ")" * 1000,
], ids=["json-object", "json-list", "call-list", "call-call"])
def test_1000_deep_nesting(text):
    """``parse_spec`` of 1000-deep JSON raised RecursionError."""
    with pytest.raises(LayoutError, match=f"brackets nested deeper than {MAX_SPEC_DEPTH} levels"):
        parse_spec(text)


def test_nesting_inside_strings_does_not_count():
    assert check_text('{"a": "' + "[" * 100 + '"}') is not None


@pytest.mark.parametrize("text", [
    '{"bases": {"register": [[' + "1" * 5000 + ']]}, "out_dims": ["dim0"]}',     # JSON int of 5000 digits
    "BlockedLayout([" + "1" * 5000 + ",4],[4,8],[4,1],[1,0])",
    "BlockedLayout([-" + "9" * 41 + ",4],[4,8],[4,1],[1,0])",
])
def test_integers_of_thousands_of_digits(text):
    """A JSON int with 5000 digits raised ValueError (Python's int-digits limit)."""
    with pytest.raises(LayoutError, match=f"at most {MAX_INT_DIGITS} digits"):
        parse_spec(text)


def test_digits_in_names_are_not_integers():
    spec = '{"bases": {"r' + "1" * 60 + '": [[1]]}, "out_dims": ["dim0"]}'
    assert parse_spec(spec).value.in_dim_names == ("r" + "1" * 60,)


@pytest.mark.parametrize("text", ["\ud800", BLOCKED + "\udcff", '{"bases": {"\ud800": [[1]]}, "out_dims": ["d"]}'])
def test_lone_surrogates(text):
    """A lone surrogate raised UnicodeEncodeError."""
    with pytest.raises(LayoutError, match="is not valid Unicode text"):
        parse_spec(text)


@pytest.mark.parametrize("text, rule", [
    ("(" + "1," * (MAX_SPEC_CHARS // 2 - 8) + "8):(1)", "CuTe spec: stride: .* is not congruent"),  # was quadratic
    ("BlockedLayout([" + "1," * (MAX_SPEC_CHARS // 2 - 40) + "1],[4,8],[8,1],[1,0])",
     "threads_per_warp must have 32729 entries"),
    ('{"bases": {"register": [' + "[0]," * (MAX_SPEC_CHARS // 4 - 40) + '[0]]}, "out_dims": ["dim0"]}',
     r"16345 basis vectors\): 2\*\*16345 is above 2\*\*31"),
], ids=["cute", "gluon", "json"])
def test_the_longest_spec_allowed_is_answered_quickly(text, rule):
    """At MAX_SPEC_CHARS every parser answers in bounded time (a 600 KB CuTe text took 28 s)."""
    assert len(text) <= MAX_SPEC_CHARS
    start = time.perf_counter()
    with pytest.raises(LayoutError, match=rule) as info:
        parse_spec(text)
    assert time.perf_counter() - start < 10 and len(str(info.value)) < 600


def test_huge_input_is_refused_before_parsing():
    start = time.perf_counter()
    with pytest.raises(LayoutError, match=f"exceed the limit of {MAX_SPEC_CHARS}"):
        parse_spec("[" + "1," * MAX_SPEC_CHARS + "]")
    assert time.perf_counter() - start < 1


@pytest.mark.parametrize("text, rule", [
    ("x" * 5000 + "(", r"^spec: syntax error at column 5001: '\(' was never closed"),  # at the end of a long line
    ("BlockedLayout(" + "1, " * 3000 + "zork)", r"^spec: bare name 'zork': a layout is written as a call"),  # far in
    ('{"bases": ' + '"x",' * 3000 + "}", r"^spec: json: invalid JSON at line 1 column 18"),  # invalid JSON
    ("secret-line-1\n" * 3000 + "(", r"^spec: syntax error at column 15: invalid syntax"),  # a file: never printed whole
    ("NoSuchLayout(" + "1," * 3000 + "1)", r"^spec: unknown layout 'NoSuchLayout'"),
    ("(" + "8," * 20000 + "8):(1)", r"^CuTe spec: stride: \(1\) is not congruent with shape \(8,8,.*\.\.\. \(40003 "
                                    r"characters\)"),
    ("Swizzle<3,4,3> o (8,8):(" + "1," * 20000 + "1)", r"^CuTe spec: stride: \(1,1,.*\.\.\. \(40003 characters\) is "
                                                       "not congruent"),
], ids=["syntax", "bare-name", "json", "file", "unknown-layout", "cute-shape", "cute-stride"])
def test_errors_quote_about_80_characters(text, rule):
    """A spec syntax error echoed the whole input (``show @/etc/shadow`` printed the file)."""
    with pytest.raises(LayoutError, match=rule) as info:
        parse_spec(text)
    message = str(info.value)
    assert len(message) < 600, message  # the input is 9000+ characters
    assert max(len(line) for line in message.splitlines()[1:]) <= 90, message
    assert message.count("secret-line-1") <= 1


def test_syntax_errors_point_at_the_column():
    with pytest.raises(LayoutError, match=r"column 39: unmatched '\)'") as info:
        parse_spec(BLOCKED + ")")
    excerpt_line, caret = str(info.value).splitlines()[-2:]
    assert excerpt_line[caret.index("^")] == ")"


@pytest.mark.parametrize("shape, match", [
    ([16.9, 32.2], r"shape\[0\] must be an integer, got 16.9"),
    ([True, 32], r"shape\[0\] must be an integer, got True"),
    ("16,32", "shape must be a list of integers"),
    ([16, 24], r"shape\[1\] must be a power of two"),
])
def test_junk_shapes_are_refused(shape, match):
    """Shapes ``[16.9, 32.2]`` became 16x32 and ``[True, 32]`` 1x32 (``int()`` coercion)."""
    with pytest.raises(LayoutError, match=match):
        parse_spec(BLOCKED).to_linear(shape)
    with pytest.raises(LayoutError, match=match):
        parse_spec(JSON).to_linear(shape)


def test_raw_distributed_shape_is_checked():
    with pytest.raises(LayoutError, match=r"shape\[0\] must be an integer, got True"):
        parse_spec("DistributedLinearLayout(reg_bases=[], lane_bases=[], warp_bases=[], block_bases=[], "
                   "shape=[True, 32])")


@pytest.mark.parametrize("flag", ['"false"', "0", "null", "[]"])
def test_require_surjective_in_json_must_be_a_bool(flag):
    with pytest.raises(LayoutError, match="'require_surjective' must be true or false"):
        parse_spec('{"bases": {"register": [[1]]}, "out_dims": {"dim0": 4}, "require_surjective": ' + flag + "}")
    assert not parse_spec('{"bases": {"register": [[1]]}, "out_dims": {"dim0": 4}, '
                          '"require_surjective": false}').value.is_surjective()


def test_python_syntax_require_surjective_must_be_a_bool():
    with pytest.raises(LayoutError, match="require_surjective must be True or False"):
        parse_spec('LinearLayout({"register": [[1]]}, {"dim0": 4}, require_surjective="false")')


def test_quote_and_excerpt_are_bounded():
    assert len(quote("x" * 10**6)) < 100
    assert len(quote([list(range(1000))] * 1000)) <= 80
    assert quote(1 << 10**5) == "an int of 100001 bits"
    line, caret = excerpt("a" * 10**6, 500_000).splitlines()
    assert len(line) < 100 and caret.index("^") == 2 + 3 + 40


def test_new_text_and_image_helpers_refuse_wrong_types():
    """ir_text.iter_args, block_arguments, loop_bounds and module_target, mlir_text.pointee,
    vectorization.unit_offset_bits and element_type.ir_element_bits take a str (unit_offset_bits a list of
    ints): anything else is a LayoutError naming the argument."""
    from linear_layouts.analysis.vectorization import unit_offset_bits
    from linear_layouts.core.element_type import ir_element_bits
    from linear_layouts.triton_model.ir_text import block_arguments, iter_args, loop_bounds, module_target
    from linear_layouts.core.mlir_text import pointee

    for call, name in ((lambda: iter_args(3), "text"), (lambda: unit_offset_bits(None), "images"),
                       (lambda: unit_offset_bits("ab"), "images"), (lambda: ir_element_bits(16), "element"),
                       (lambda: block_arguments(None), "line"), (lambda: pointee(None), "text"),
                       (lambda: loop_bounds(b"scf.for"), "text"), (lambda: module_target(90), "target")):
        with pytest.raises(LayoutError, match=name):
            call()
    assert iter_args("scf.for %i = %a to %b step %c iter_args(%x = %0) -> (i32)") == (("%x", "%0"),)
    assert unit_offset_bits([8, 1, 64, 2]) == [1, 3] and ir_element_bits("i1") == 8
