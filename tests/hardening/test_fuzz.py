"""Fuzz the public API as an attacker and a careless user would (issue 13): junk and valid values mixed
into every catalog constructor, LinearLayout constructor and operation, the spec parser, the analyses,
the code generators, the pictures and the command line (``main(argv)``). Only ``LayoutError`` may ever
escape (the CLI: exit status 2 with one line on stderr), and every call stays small and fast, because
every enumerating operation checks its size limit first.

Bounded for CI: a fixed number of examples per group, no shrinking-heavy strategies, all layouts small.
"""

from __future__ import annotations

import enum
import inspect
import io
import re
import time
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import linear_layouts.analysis as analysis
import linear_layouts.codegen as codegen
import linear_layouts.viz as viz
from linear_layouts import ColumnAction, LayoutError, LinearLayout, catalog, divide_left, divide_right
from linear_layouts.catalog import BlockedLayout, NVMMASharedLayout, SwizzledSharedLayout
from linear_layouts.cli import main
from linear_layouts.spec import parse_spec

FUZZ = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])
SECONDS_PER_CALL = 10.0

GOOD_LAYOUTS = [
    BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0]).to_linear([32, 64]),
    BlockedLayout([4, 1], [8, 4], [1, 4], [0, 1]).to_linear([32, 64]),
    BlockedLayout([1, 1], [32, 1], [1, 1], [1, 0]).to_linear([32, 32]),
    BlockedLayout([1, 1], [1, 32], [1, 1], [1, 0]).to_linear([32, 32]),
    NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2).to_linear([32, 64]),
    SwizzledSharedLayout(1, 1, 1, [1, 0]).to_linear([32, 64]),
    LinearLayout.identity_1d(8, "register", "dim0"),
    LinearLayout.identity_1d(32, "lane", "dim0"),
    LinearLayout.identity_1d(8, "offset", "dim0"),
    LinearLayout({"register": [[0]], "lane": [[1], [2], [4], [8], [16]]}, ["dim0"]),
    LinearLayout.identity_1d(1 << 31, "register", "dim0"),  # huge, but never enumerated unless asked
    LinearLayout.empty(),
]
JUNK = [None, True, False, 0, -1, 1, 3, 16, 32, 1 << 40, 1 << 3000, 2.5, float("nan"), float("inf"), "",
        "fp16", "x" * 1000, "\ud800", b"bytes", [], [None], [1, 2], [[1]], [[1, 0], [0, 1]], {}, {"a": 1},
        {"register": [[1]]}, (1, 2), {1, 2}, np.int64(4), np.float32(2), np.array([1, 2]), np.array([[1]]),
        object(), ColumnAction([0], "register", 1), BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])]
GOOD_VALUES = [8, 16, 32, 64, "fp16", "fp32", "bf16", 0, 1, 2, [32, 64], [1, 0], [0, 1], "register", "lane",
               "warp", "offset", "dim0", "dim1", ["register"], ["dim0"], {"register": 1}, {"register": np.arange(4)}]

value = st.one_of(st.sampled_from(GOOD_LAYOUTS), st.sampled_from(GOOD_VALUES), st.sampled_from(JUNK),
                  st.integers(-(1 << 70), 1 << 70), st.text(max_size=12),
                  st.lists(st.integers(-3, 70), max_size=5),
                  st.lists(st.lists(st.integers(-1, 1 << 33), max_size=3), max_size=4))


def _functions(module, names) -> list:
    """The functions and classes among ``names`` (not enums: ``Kind(junk)`` is Python's own ValueError)."""
    return [(f"{module.__name__}.{name}", getattr(module, name)) for name in names
            if inspect.isroutine(getattr(module, name))
            or inspect.isclass(getattr(module, name)) and not issubclass(getattr(module, name), enum.Enum)]


METHODS = [name for name, member in inspect.getmembers(LinearLayout) if not name.startswith("_")
           and inspect.isfunction(member)] + ["__mul__", "__eq__"]
GROUPS = {
    "catalog": _functions(catalog, catalog.__all__),
    "layout": [("LinearLayout", LinearLayout), ("from_matrix", LinearLayout.from_matrix),
               ("from_json", LinearLayout.from_json), ("strided_1d", LinearLayout.strided_1d),
               ("identity_1d", LinearLayout.identity_1d), ("zeros_1d", LinearLayout.zeros_1d),
               ("ColumnAction", ColumnAction), ("divide_left", divide_left), ("divide_right", divide_right)]
              + [(f"LinearLayout.{name}", getattr(LinearLayout, name)) for name in METHODS],
    "analysis": _functions(analysis, analysis.__all__),
    "codegen": [(name, f) for name, f in _functions(codegen, codegen.__all__) if not name.endswith("verify_conversion")],
    "viz": _functions(viz, viz.__all__),
}


def _call(data, name: str, function) -> None:
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    count = len(required) + data.draw(st.integers(0, len(positional) - len(required)), label="optional")
    args = [data.draw(value, label=p.name) for p in positional[:count]]
    if name.startswith("LinearLayout.") and args:
        args[0] = data.draw(st.sampled_from(GOOD_LAYOUTS), label="self")
    kwargs = {p.name: data.draw(value, label=p.name) for p in parameters
              if p.kind is p.KEYWORD_ONLY and (p.default is p.empty or data.draw(st.booleans(), label="kw?"))}
    start = time.perf_counter()
    try:
        result = function(*args, **kwargs)
        if name.startswith("linear_layouts.catalog.") and callable(getattr(result, "to_linear", None)):
            result.to_linear(data.draw(value, label="shape"))
    except LayoutError:
        pass
    assert time.perf_counter() - start < SECONDS_PER_CALL, (name, args, kwargs)


@pytest.mark.parametrize("group", sorted(GROUPS))
@FUZZ
@given(data=st.data())
def test_only_layout_error_escapes(group, data):
    name, function = data.draw(st.sampled_from(GROUPS[group]), label="function")
    _call(data, name, function)


# --- the spec parser ------------------------------------------------------------------------------------

NAMES = ["BlockedLayout", "SliceLayout", "NVMMASharedLayout", "DotOperandLayout", "NVMMADistributedLayout",
         "SwizzledSharedLayout", "LinearLayout", "DistributedLinearLayout", "SharedLinearLayout", "gl.BlockedLayout",
         "AMDMFMALayout", "PaddedSharedLayout", "TensorMemoryLayout", "eval", "__import__", "os.system"]
atoms = st.one_of(st.integers(-5, 300).map(str), st.sampled_from(["1" * 50, "True", "None", "2.5", "'x'", '"dim0"',
                                                                   "-0", "1e9", "[", "]", "(", ")", "{", "}", ",",
                                                                   ":", "=", "**", "*", "lambda: 0", "\ud800",
                                                                   '"\\ud800"', "\x00", "#", "\n"]))
spec_text = st.recursive(
    atoms,
    lambda inner: st.one_of(
        st.builds(lambda xs: "[" + ",".join(xs) + "]", st.lists(inner, max_size=4)),
        st.builds(lambda f, xs: f + "(" + ",".join(xs) + ")", st.sampled_from(NAMES), st.lists(inner, max_size=5)),
        st.builds(lambda k, v: "{" + f'"{k}": {v}' + "}", st.sampled_from(["bases", "out_dims", "register", "x"]), inner),
        st.builds(lambda a, b: a + b, inner, inner),
    ),
    max_leaves=25,
)


@FUZZ
@given(text=st.one_of(spec_text, st.text(max_size=60), st.sampled_from(["[" * 1000, "{" * 5000, "(" * 300]),
                      st.binary(max_size=40).map(lambda b: b.decode("utf-8", "surrogateescape"))),
       shape=st.one_of(st.none(), st.sampled_from(JUNK), st.lists(st.integers(-2, 1 << 33), max_size=4)))
def test_the_spec_parser_only_raises_layout_error(text, shape):
    try:
        spec = parse_spec(text)
        spec.to_linear(shape)
    except LayoutError as error:
        assert len(str(error)) < 2000
        assert max(len(line) for line in str(error).splitlines() or [""]) < 1000


# --- the command line -----------------------------------------------------------------------------------

SPECS = ["BlockedLayout([1,4],[4,8],[4,1],[1,0])", "BlockedLayout([4,1],[8,4],[1,4],[0,1])",
         "NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)",
         '{"bases": {"register": [[1]], "lane": [[2],[4],[8],[16],[32]]}, "out_dims": ["dim0"]}',
         '{"bases": {"offset": [[1], [2]]}, "out_dims": {"dim0": 4}}', "@/nonexistent", "@/", "junk(", ""]
OPTIONS = ["--shape", "--dtype", "--format", "--steps", "--max-elements", "--op", "--view", "--title", "--hw",
           "--emit", "--label", "--port"]
token = st.one_of(st.sampled_from(SPECS), st.sampled_from(OPTIONS),
                  st.sampled_from(["32,64", "64,64", "16,,32", "4096,4096", "fp16", "fp32", "i8", "13", "-5", "0",
                                   "1000000000000000000000", "text", "svg", "json", "html", "cuda", "load", "store",
                                   "\udcff", "x" * 300]),
                  st.text(max_size=10))


@FUZZ
@given(command=st.sampled_from(["show", "matrix", "banks", "swizzle", "convert", "nonsense"]),
       tokens=st.lists(token, max_size=7))
def test_the_command_line_exits_2_with_one_line(command, tokens, tmp_path_factory):
    argv = [command] + tokens
    if "-o" not in argv:
        argv += ["-o", str(tmp_path_factory.getbasetemp() / "out")]
    out, err = io.StringIO(), io.StringIO()
    start = time.perf_counter()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as exit_:  # argparse's own errors (unknown options, missing arguments)
            status = exit_.code
    assert time.perf_counter() - start < SECONDS_PER_CALL, argv
    assert status in (0, 2), (argv, err.getvalue()[-2000:])
    text = err.getvalue()
    assert "Traceback" not in text, text[-3000:]
    if status == 2:  # ours and argparse's alike: one line
        assert re.match(r"linear-layouts( \w+)?: error: ", text) and text.count("\n") == 1, text


def test_the_fuzzed_functions_cover_the_public_api():
    """The groups above name every public entry point (a new one is fuzzed without editing this file)."""
    assert sum(len(group) for group in GROUPS.values()) > 100
    assert {"plan_conversion", "optimal_swizzle", "simulate_wavefronts"} <= {n.rsplit(".", 1)[-1] for n, _ in GROUPS["analysis"]}
    assert {"conversion_kernel", "emit_index"} <= {n.rsplit(".", 1)[-1] for n, _ in GROUPS["codegen"]}
