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
from pathlib import Path
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import linear_layouts
import linear_layouts.analysis as analysis
import linear_layouts.codegen as codegen
import linear_layouts.cute as cute
import linear_layouts.core.element_type as element_type
import linear_layouts.engine as engine
import linear_layouts.present.reports as reports
import linear_layouts.spec as spec
import linear_layouts.triton_model.interop as triton_interop
import linear_layouts.layouts.ttgir as ttgir
import linear_layouts.present.viz as viz
from cli_run import run
from linear_layouts import ColumnAction, LayoutError, LinearLayout, divide_left, divide_right
from linear_layouts import layouts as catalog
from linear_layouts.layouts import BlockedLayout, NVMMASharedLayout, SwizzledSharedLayout
from linear_layouts.cli import main
from linear_layouts.spec import parse_spec

FUZZ = settings(max_examples=200, deadline=None, derandomize=True, database=None,
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
        "fp16", "x" * 5000, "\ud800", list(range(3000)), b"bytes", [], [None], [1, 2], [[1]], [[1, 0], [0, 1]], {}, {"a": 1},
        {"register": [[1]]}, (1, 2), {1, 2}, np.int64(4), np.float32(2), np.array([1, 2]), np.array([[1]]),
        object(), ColumnAction([0], "register", 1), BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])]
ECHOES = ("x" * 120, ", ".join(map(str, range(10, 40))))  # in a message: a junk value quoted whole
GOOD_VALUES = [8, 16, 32, 64, "fp16", "fp32", "bf16", 0, 1, 2, [32, 64], [1, 0], [0, 1], "register", "lane",
               "warp", "offset", "dim0", "dim1", ["register"], ["dim0"], {"register": 1}, {"register": np.arange(4)},
               "Swizzle<3,4,3> o (8,64):(64,1)", "(8,64):(64,1)", cute.Layout((8, 64), (64, 1)), cute.Swizzle(3, 4, 3),
               "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>",
               "tensor<32x64xf16, #blocked>", "BlockedLayout([1,4],[4,8],[4,1],[1,0])", "sm_90",
               __import__("linear_layouts.engine.examples", fromlist=["x"]).dot_trans_store()]

value = st.one_of(st.sampled_from(GOOD_LAYOUTS), st.sampled_from(GOOD_VALUES), st.sampled_from(JUNK),
                  st.integers(-(1 << 70), 1 << 70), st.text(max_size=12),
                  st.lists(st.integers(-3, 70), max_size=5),
                  st.lists(st.lists(st.integers(-1, 1 << 33), max_size=3), max_size=4))


def _functions(module, names) -> list:
    """The functions and classes among ``names`` (not enums: ``Kind(junk)`` is Python's own ValueError; not
    typing aliases such as ``DTypeLike``)."""
    return [(f"{module.__name__}.{name}", getattr(module, name)) for name in names
            if getattr(getattr(module, name), "__module__", "") != "typing"
            and (inspect.isroutine(getattr(module, name))
                 or inspect.isclass(getattr(module, name)) and not issubclass(getattr(module, name), enum.Enum))]


METHODS = [name for name, member in inspect.getmembers(LinearLayout) if not name.startswith("_")
           and inspect.isfunction(member)] + ["__mul__", "__eq__"]
def _methods(*objects) -> list:
    """The public methods of representative values (catalog descriptors, CuTe layouts, plans, ...)."""
    return [(f"{type(obj).__name__}.{name}", getattr(obj, name)) for obj in objects for name in dir(obj)
            if (not name.startswith("_") or name == "__call__") and inspect.ismethod(getattr(obj, name, None))]


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
    "top": _functions(linear_layouts, [n for n in linear_layouts.__all__ if n not in catalog.__all__]),
    "cute": _functions(cute, cute.__all__),
    "text": _functions(ttgir, ttgir.__all__) + _functions(spec, spec.__all__)
            + _functions(element_type, element_type.__all__),
    "engine": _functions(engine, engine.__all__),
    "reports": _functions(reports, reports.__all__),
    "triton": [(n, f) for n, f in _functions(triton_interop, triton_interop.__all__) if not n.endswith("_version")],
    "methods": _methods(BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0]),
                        NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2),
                        SwizzledSharedLayout(8, 1, 8, [1, 0]), catalog.SliceLayout(0, BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])), cute.Layout((8, 64), (64, 1)), cute.Swizzle(3, 4, 3),
                        cute.parse_cute("Swizzle<3,4,3> o (8,64):(64,1)"), cute.sm80_16x8x16("A"),
                        ColumnAction([1, 0], "register", 2), element_type.element_type("fp16"),
                        spec.parse_spec("BlockedLayout([1,4],[4,8],[4,1],[1,0])"),
                        analysis.plan_conversion(GOOD_LAYOUTS[0], GOOD_LAYOUTS[1], "fp16")),
}

#: the catalog's descriptors, whose results are also asked for their LinearLayout on a drawn shape
CATALOG_NAMES = {name for name, _ in GROUPS["catalog"]}


def _call(data, name: str, function) -> str:
    """Call ``function`` with drawn arguments; "returned" or "LayoutError" (anything else escapes)."""
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
    outcome = "returned"
    try:
        result = function(*args, **kwargs)
        if name in CATALOG_NAMES and callable(getattr(result, "to_linear", None)):
            result.to_linear(data.draw(value, label="shape"))
    except LayoutError as error:
        message = str(error)  # quotes at most ~80 characters of the input: no long run of a junk value
        assert len(message) < 1000 and not any(echo in message for echo in ECHOES), (name, message[:300])
        outcome = "LayoutError"
    assert time.perf_counter() - start < SECONDS_PER_CALL, (name, args, kwargs)
    return outcome


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_only_layout_error_escapes(group):
    """Per group, a bounded fuzz; it must both refuse junk (LayoutError) and get through to real work
    (calls that return), so a group whose every call fails at the first check, or never checks, is caught."""
    outcomes: dict[str, set] = {"returned": set(), "LayoutError": set()}

    @FUZZ
    @given(data=st.data())
    def fuzz(data):
        name, function = data.draw(st.sampled_from(GROUPS[group]), label="function")
        outcomes[_call(data, name, function)].add(name)

    fuzz()
    assert len(outcomes["LayoutError"]) >= min(3, len(GROUPS[group])), outcomes
    assert outcomes["returned"], outcomes


def test_the_fuzz_fails_on_any_other_exception():
    """The harness itself: an AttributeError / TypeError escaping a public function fails the fuzz."""
    def broken(layout):
        return layout.bases  # AttributeError on junk

    @FUZZ
    @given(data=st.data())
    def fuzz(data):
        _call(data, "broken", broken)

    with pytest.raises(AttributeError, match="has no attribute 'bases'"):
        fuzz()


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


VALID = {  # per parser: valid texts, which the fuzz mutates
    "spec": ["BlockedLayout([1,4],[4,8],[4,1],[1,0])", "Swizzle<3,4,3> o (8,64):(64,1)", "(8,64):(64,1)",
             "NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)",
             '{"bases": {"register": [[1]], "lane": [[2],[4],[8],[16],[32]]}, "out_dims": ["dim0"]}',
             "make_layout(make_shape(8, 64), make_stride(64, 1))"],
    "attribute": ["#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
                  "order = [1, 0]}>",
                  "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>",
                  "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>"],
    "module": [(Path(__file__).resolve().parents[1] / "data/triton_kernels/ir/sm_90" / name).read_text()
               for name in ("absmax_atomic.ttgir", "attention_fwd.ttgir")],
}
JUNK_TEXT = st.one_of(spec_text, st.text(max_size=60), st.sampled_from(["[" * 1000, "{" * 5000, "(" * 300, "<" * 300]),
                      st.binary(max_size=40).map(lambda b: b.decode("utf-8", "surrogateescape")))
PIECES = st.sampled_from(["", "[", "]", "<", ">", "{", "}", ",", "0", "-1", "99999999999", "#blocked", "tensor<",
                          "x", ":", "\n", "\ud800", "(" * 40, "= [", "1, 1, 1, 1"])


def _texts(parser: str) -> st.SearchStrategy[str]:
    """Valid texts of ``parser``, the same with a slice replaced by a junk piece, and junk."""
    valid = st.sampled_from(VALID[parser])
    mutated = st.builds(lambda text, where, length, piece: text[:where % (len(text) + 1)] + piece
                        + text[where % (len(text) + 1) + length:],
                        valid, st.integers(0, 1 << 16), st.integers(0, 40), PIECES)
    return st.one_of(valid, mutated, mutated, JUNK_TEXT)


def test_the_text_parsers_only_raise_layout_error():
    """The spec parser (Gluon calls, JSON, CuTe), TTGIR attributes and whole TTGIR modules, fed valid texts,
    mutated ones and junk: a layout or a short LayoutError, both of which must occur for each parser."""
    from linear_layouts.layouts import ttgir
    from linear_layouts.triton_model.ir_text import parse_module

    outcomes: dict[str, set] = {"parsed": set(), "LayoutError": set()}

    @FUZZ
    @given(data=st.data(), parser=st.sampled_from(sorted(VALID)),
           shape=st.one_of(st.none(), st.sampled_from(JUNK), st.lists(st.integers(-2, 1 << 33), max_size=4),
                           st.sampled_from([[32, 64], [64, 64]])))
    def fuzz(data, parser, shape):
        text = data.draw(_texts(parser), label="text")
        try:
            if parser == "spec":
                spec = parse_spec(text)
                outcomes["parsed"].add(parser)
                spec.to_linear(shape)
            elif parser == "attribute":
                ttgir.parse_attribute(text)
            else:
                parse_module(text)
            outcomes["parsed"].add(parser)
        except LayoutError as error:
            assert len(str(error)) < 1000, str(error)[:300]
            assert max(len(line) for line in str(error).splitlines() or [""]) < 600
            outcomes["LayoutError"].add(parser)

    fuzz()
    assert outcomes == {"parsed": set(VALID), "LayoutError": set(VALID)}, outcomes


# --- the command line -----------------------------------------------------------------------------------

DATA = Path(__file__).resolve().parents[1] / "data"
SPECS = ["BlockedLayout([1,4],[4,8],[4,1],[1,0])", "BlockedLayout([4,1],[8,4],[1,4],[0,1])",
         "NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)",
         '{"bases": {"register": [[1]], "lane": [[2],[4],[8],[16],[32]]}, "out_dims": ["dim0"]}',
         '{"bases": {"offset": [[1], [2]]}, "out_dims": {"dim0": 4}}', "Swizzle<3,4,3> o (8,64):(64,1)",
         "(8,64):(64,1)", "wgmma-a", "tma", "@/nonexistent", "@/", "junk(", "",
         str(DATA / "triton_kernels/ir/sm_90/absmax_atomic.ttgir"), str(DATA / "README.md")]
OPTIONS = ["--shape", "--dtype", "--format", "--steps", "--max-elements", "--op", "--view", "--title", "--hw",
           "--emit", "--label", "--port", "--wide", "--layout", "--store", "--load", "--ldmatrix", "--target",
           "--no-layouts", "--no-pictures", "--no-triton-estimate"]
token = st.one_of(st.sampled_from(SPECS), st.sampled_from(OPTIONS),
                  st.sampled_from(["32,64", "64,64", "16,,32", "4096,4096", "fp16", "fp32", "i8", "13", "-5", "0",
                                   "1000000000000000000000", "text", "svg", "png", "json", "html", "cute", "gluon",
                                   "ttgir", "cuda", "load", "store", "sm_80", "gfx942", "\udcff", "x" * 300]),
                  st.text(max_size=10))


KERNEL = str(DATA / "triton_kernels/ir/sm_90/absmax_atomic.ttgir")
COMMANDS = {  # one valid command line each
    "show": ["show", SPECS[0], "--shape", "32,64"], "matrix": ["matrix", SPECS[5], "--format", "svg"],
    "banks": ["banks", SPECS[2], SPECS[0], "--shape", "32,64", "--dtype", "fp16"],
    "swizzle": ["swizzle", SPECS[0], SPECS[1], "--shape", "32,64", "--dtype", "fp16"],
    "convert": ["convert", SPECS[0], SPECS[1], "--shape", "32,64", "--dtype", "fp16"],
    "demo": ["demo"], "explore": ["explore", "--layout", SPECS[0], "--shape", "32,64"],
    "report": ["report", KERNEL, "--no-triton-estimate"], "nonsense": ["nonsense"],
    "permute": ["permute", "32,28,28,512", "0,3,1,2", "--dtype", "bf16"],
}


def test_the_command_line_exits_2_with_one_line(tmp_path_factory, monkeypatch):
    """Junk command lines of every subcommand: exit 0, or 2 with one line on stderr; never a traceback, never
    a server (``explore`` always gets ``-o``). Both outcomes must occur: a fuzz that only ever fails at
    argparse would prove nothing."""
    from linear_layouts.present.viz import server

    def no_serving(*args, **kwargs):
        raise AssertionError("the fuzz started a server")

    monkeypatch.setattr(server, "serve_until_interrupted", no_serving)
    statuses: dict[int, set] = {0: set(), 2: set()}

    @FUZZ
    @given(command=st.sampled_from(sorted(COMMANDS)), tokens=st.lists(token, max_size=7),
           replace=st.lists(st.tuples(st.integers(1, 12), token), max_size=2),
           extra=st.lists(st.tuples(st.sampled_from(OPTIONS), token), max_size=2), mode=st.integers(0, 3))
    def fuzz(command, tokens, replace, extra, mode):
        argv = list(COMMANDS[command])  # a valid command line, then: as is, mutated, extended, or junk
        for where, junk in replace if mode == 1 else []:
            argv[where % len(argv)] = junk
        argv += [t for option, value in extra for t in (option, value)] if mode == 2 else []
        argv = [command] + tokens if mode == 3 else argv
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
            assert len(text) < 1000, text[:300]
        statuses[status].add(command)

    fuzz()
    assert len(statuses[2]) >= 6 and len(statuses[0]) >= 6, statuses


def test_the_fuzzed_functions_cover_the_public_api():
    """The groups above name every public entry point of every public module (a new one is fuzzed without
    editing this file)."""
    names = {n.rsplit(".", 1)[-1] for group in GROUPS.values() for n, _ in group}
    assert sum(len(group) for group in GROUPS.values()) > 200
    assert {"plan_conversion", "optimal_swizzle", "simulate_wavefronts", "suggest_shared_layout"} <= names
    assert {"conversion_kernel", "emit_index", "parse_cute", "parse_attribute", "parse_module", "parse_spec",
            "propagate", "banks_report", "best_cute_swizzle", "to_gluon", "element_type", "BlockedLayout"} <= names


# --- planted secrets: what an @FILE may print (issue 33) ------------------------------------------------------

_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
SECRET_KINDS = {  # a token of each kind a file may hold, made of hypothesis-drawn characters
    "github": lambda r: "ghp_" + r(36),
    "jwt": lambda r: "eyJhbGciOiJIUzI1NiJ9." + "eyJ" + r(24) + "." + r(20),
    "name": lambda r: "SECRET_" + r(16),
    "aws": lambda r: "AKIA" + r(16).upper(),
    "hash": lambda r: "$6$" + r(8) + "$" + r(30),
}
#: @FILE contents with the secret S planted where a name, a key, a value, a line or a comment goes; the
#: templates marked valid are layouts whose dim name S is (a shown layout prints its own dim names)
SECRET_FILES = [
    ("{S}", False), ("{S}\n{S}\n{S}\n", False), ("{S}(1, 2)", False), ("{S}.BlockedLayout([1],[32],[4],[0])", False),
    ("BlockedLayout([1,4],[4,8],[4,1],[1,0], {S})", False), ("BlockedLayout([1,4],[4,8],[4,1],[1,0], cta_order='{S}')", False),
    ("BlockedLayout({S}=[1,4])", False), ("BlockedLayout([1,4],[4,8],[4,1],[1,0]) + {S}", False),
    ('{{"bases": {{"register": [[1]]}}, "out_dims": {{"dim0": 2}}, "{S}": 1}}', False),
    ('{{"bases": {{"{S}": [[1]]}}, "out_dims": {{"dim0": 3}}}}', False),
    ('{{"bases": {{"register": [["{S}"]]}}, "out_dims": ["dim0"]}}', False),
    ('{{"bases": {{"register": [[1]]}}, "out_dims": {{"{S}": 2}}}}', True),
    ('{{"bases": {{"register": [[1]], "lane": [[2], [4], [8], [16], [32]]}}, "out_dims": ["{S}"]}}', True),
    ('{{"bases": {{"offset": [[1], [2]], "{S}": [[4]]}}, "out_dims": ["dim0"]}}', True),
    ("LinearLayout({{'{S}': [[1]]}}, ['dim0'], require_surjective='{S}')", False),
    ("#ttg.blocked<{{sizePerThread = [1], {S} = [1]}}>", False),
    ("tensor<32x64x{S}, #ttg.blocked<{{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
     "order = [1, 0]}}>>", False),
    ("(8,{S}):(64,1)", False), ("Swizzle<3,4,3> o {S}", False), ("root:{S}:19000:0:99999:7:::\n", False),
    ("# {S}\nBlockedLayout([1,4],[4,8],[4,1],[1,0])", False), ("'{S}'", False), ("[{S}, 1]", False),
]
SECRET_COMMANDS = [
    ["show", "@F", "--shape", "32,64", "--format", "text"], ["show", "@F", "--shape", "32,64", "--format", "json"],
    ["show", "@F", "--shape", "32,64", "--format", "gluon"], ["show", "@F", "--shape", "32,64", "--format", "ttgir"],
    ["show", "@F", "--shape", "32,64", "--format", "svg"], ["show", "@F", "--shape", "32,64", "--format", "html"],
    ["show", "@F", "--shape", "32,64", "--format", "cute"], ["show", "@F", "--format", "grid"], ["matrix", "@F"],
    ["banks", "@F", SPECS[0], "--shape", "32,64", "--dtype", "fp16"],
    ["banks", SPECS[2], "@F", "--shape", "32,64", "--dtype", "fp16"],
    ["swizzle", "@F", SPECS[1], "--shape", "32,64", "--dtype", "fp16"],
    ["swizzle", SPECS[0], "@F", "--shape", "32,64", "--dtype", "fp16", "--format", "gluon"],
    ["convert", "@F", SPECS[1], "--shape", "32,64", "--dtype", "fp16", "--format", "ttgir"],
    ["convert", SPECS[0], "@F", "--shape", "32,64", "--dtype", "fp16"],
    ["convert", "@F", "@F", "--dtype", "fp16"], ["explore", "--layout", "@F", "--shape", "32,64"],
]


def test_planted_secrets_never_leave_an_at_file(tmp_path_factory, monkeypatch):
    """Secrets (tokens, JWT-like strings, SECRET... names, password hashes) planted in @FILE contents, every
    command and format that reads a spec: a refusal prints no secret, nor a piece of one (80 characters of
    a quoted name would carry its start); a success prints one only as the dim name of the layout the file
    spells out. Both outcomes must occur."""
    from linear_layouts.viz import server

    monkeypatch.setattr(server, "serve_until_interrupted", lambda *a, **k: pytest.fail("the fuzz started a server"))
    folder = tmp_path_factory.mktemp("secrets")
    statuses: dict[int, int] = {0: 0, 2: 0}

    @settings(FUZZ, max_examples=150)
    @given(kind=st.sampled_from(sorted(SECRET_KINDS)), chars=st.text(_ALNUM, min_size=64, max_size=64),
           template=st.sampled_from(SECRET_FILES), command=st.sampled_from(SECRET_COMMANDS))
    def fuzz(kind, chars, template, command):
        stream = iter(chars * 4)
        secret = SECRET_KINDS[kind](lambda n: "".join(next(stream) for _ in range(n)))
        text, valid = template
        path = folder / "spec.txt"
        path.write_text(text.format(S=secret))
        argv = [f"@{path}" if a == "@F" else a for a in command] + ["-o", str(folder / "out")]
        (folder / "out").unlink(missing_ok=True)
        status, out, err = run(argv)
        written = (folder / "out").read_text("utf-8", "replace") if (folder / "out").exists() else ""
        pieces = [secret] + [p for p in re.split(r"[.$]", secret) if len(p) >= 8] + [secret[:12]]
        assert status in (0, 2), (argv, err[-500:])
        assert not any(p in err for p in pieces), (kind, text, command, err)
        if status == 2 or not valid:
            assert not any(p in out + written for p in pieces), (kind, text, command, status)
        statuses[status] += 1

    fuzz()
    assert statuses[0] >= 5 and statuses[2] >= 50, statuses
