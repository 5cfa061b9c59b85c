"""What the command says when the user is new or wrong: version, help, suggestions, warnings, clean errors."""

from __future__ import annotations

import socket

import pytest

import linear_layouts
from linear_layouts import LayoutError
from linear_layouts.cli import build_parser, main

BLOCKED = "BlockedLayout([1,8],[4,8],[4,1],[1,0])"
NVMMA = "NVMMASharedLayout(128, 16)"


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_:      # argparse's own exits (--version, usage errors)
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


def test_version(capsys):
    code, out, _ = _run(capsys, "--version")
    from linear_layouts.core import _ccore

    core = "compiled core" if _ccore.backend() == "c" else "pure-Python core: "
    assert code == 0 and out.strip().startswith(f"linear-layouts {linear_layouts.__version__} ({core}")


def test_version_names_the_pure_python_core_and_why(capsys):
    from linear_layouts.core import _ccore

    with _ccore.using("python"):
        code, out, _ = _run(capsys, "--version")
    reason = "LINEAR_LAYOUTS_PURE_PYTHON is set" if _ccore.available() else "the C extension was not built"
    assert code == 0 and f"(pure-Python core: {reason}" in out


def test_every_argument_has_help():
    parser, _ = build_parser()
    missing = [(name, action.dest) for name, sub in [("", parser), *parser.subcommands.items()]
               for action in sub._actions if action.dest != "help" and not (action.help or "").strip()]
    assert missing == []


@pytest.mark.parametrize("argv, message", [
    (["shw"], "invalid choice: 'shw'.*did you mean 'show'"),
    (["swizle"], "did you mean 'swizzle'"),
    (["show", BLOCKED, "--format", "pgn"], "did you mean 'png'"),
    (["show", BLOCKED, "--shpae", "64,64"], r"unrecognized arguments: --shpae 64,64 \(did you mean '--shape'\?\)"),
    (["--verison"], "did you mean '--version'"),
    (["show", "BlockdLayout([1,8],[4,8],[4,1],[1,0])", "--shape", "64,64"],
     "unknown layout 'BlockdLayout' \\(did you mean 'BlockedLayout'\\?\\)"),
    (["show", "NVMMASharedLayot(128, 16)", "--shape", "64,64"], "did you mean 'NVMMASharedLayout'"),
    (["show", "BlockedLayout([1,8],[4,8],[4,1],[1,0], ordr=[0,1])", "--shape", "64,64"], "did you mean 'order'"),
    (["swizzle", BLOCKED, BLOCKED, "--shape", "64,64", "--dtype", "fp61"], "dtype 'fp61'.*did you mean 'fp64' or 'fp16'"),
    (["banks", NVMMA, BLOCKED, "--shape", "64,64", "--dtype", "bf61"], "did you mean 'bf16'"),
])
def test_typos_get_a_suggestion(capsys, argv, message):
    code, _, err = _run(capsys, *argv)
    assert code == 2
    assert len(err.strip().splitlines()) <= 3 and "Traceback" not in err   # + `-h`, or the spec and a caret
    import re
    assert re.search(message, err), err


def test_swapped_banks_arguments_are_named(capsys):
    code, _, err = _run(capsys, "banks", BLOCKED, NVMMA, "--shape", "64,64", "--dtype", "fp16")
    assert code == 2 and "SHARED and DIST look swapped" in err and "`banks SHARED DIST`" in err
    code, _, err = _run(capsys, "banks", BLOCKED, BLOCKED, "--shape", "64,64", "--dtype", "fp16")
    assert code == 2 and "SHARED: expected a shared layout (in dim offset" in err
    code, _, err = _run(capsys, "convert", NVMMA, BLOCKED, "--shape", "64,64", "--dtype", "fp16")
    assert code == 2 and "SRC: expected a distributed layout" in err
    code, _, err = _run(capsys, "swizzle", BLOCKED, NVMMA, "--shape", "64,64", "--dtype", "fp16")
    assert code == 2 and "LOAD: expected a distributed layout" in err and "`banks SHARED DIST`" in err
    code, _, err = _run(capsys, "swizzle", NVMMA, BLOCKED, "--shape", "64,64", "--dtype", "fp16")
    assert code == 2 and "STORE: expected a distributed layout" in err and "`banks SHARED DIST`" in err
    code, _, err = _run(capsys, "convert", BLOCKED, NVMMA, "--shape", "64,64", "--dtype", "fp16")
    assert code == 2 and "DST: expected a distributed layout" in err and "`banks SHARED DIST`" in err


def test_busy_port_says_what_to_do(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, _, err = _run(capsys, "explore", "--port", str(port))
    assert code == 2 and "Traceback" not in err
    assert f"127.0.0.1:{port} is already in use" in err and "--port 0 for any free port" in err


def test_warns_about_a_warp_that_is_not_32_lanes(capsys):
    code, _, err = _run(capsys, "show", "BlockedLayout([1,4],[4,4],[4,1],[1,0])", "--shape", "16,16")
    assert code == 0 and "warning: LAYOUT has 16 lanes per warp" in err and "threads_per_warp" in err
    code, _, err = _run(capsys, "show", "BlockedLayout([1,4],[8,8],[4,1],[1,0])", "--shape", "32,32")
    assert code == 0 and "warning" not in err
    # a conversion of 16-lane layouts that moves data between lanes has no plan on a 32-lane target: one line
    code, _, err = _run(capsys, "convert", "BlockedLayout([1,4],[4,4],[1,1],[1,0])",
                        "BlockedLayout([4,1],[4,4],[1,1],[0,1])", "--shape", "16,16", "--dtype", "fp32")
    assert code == 2 and "Traceback" not in err and "src and dst have 16 lanes a warp" in err
    assert "size 32 (one sm_90 warp)" in err and len(err.strip().splitlines()) <= 3


def test_warns_when_dtype_disagrees_with_the_shared_layout(capsys):
    code, _, err = _run(capsys, "show", NVMMA, "--shape", "64,64", "--dtype", "fp32")
    assert code == 0 and "--dtype fp32 is 32-bit, but LAYOUT was built for 16-bit elements" in err
    code, _, err = _run(capsys, "banks", NVMMA, BLOCKED, "--shape", "64,64", "--dtype", "fp32")
    assert code == 0 and "SHARED was built for 16-bit elements" in err
    code, _, err = _run(capsys, "banks", NVMMA, BLOCKED, "--shape", "64,64", "--dtype", "fp16")
    assert code == 0 and "warning" not in err


def test_emitted_kernel_explains_its_parameters(capsys):
    code, out, _ = _run(capsys, "convert", BLOCKED, "BlockedLayout([8,1],[8,4],[1,4],[0,1])", "--shape", "64,64",
                        "--dtype", "fp16", "--emit", "cuda")
    start = out.index("// ll_convert")
    comment = out[start:out.index('extern "C"', start)]
    assert code == 0
    for words in ("src_all, dst_all", "blockIdx.x", "iterations: 0 converts once",
                  "round trips dst -> src -> dst", "block = 128 threads", "dynamic shared memory = "):
        assert words in comment


def test_a_descriptor_where_a_layout_is_expected_says_to_linear():
    from linear_layouts.analysis import plan_conversion, wavefronts
    from linear_layouts.layouts import BlockedLayout
    from linear_layouts.present.viz.svg import distributed_svg

    blocked = BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])
    linear = blocked.to_linear([64, 64])
    for call in (lambda: plan_conversion(blocked, linear, "fp16"), lambda: wavefronts(linear, blocked, 16),
                 lambda: distributed_svg(blocked), lambda: linear.compose(blocked)):
        with pytest.raises(LayoutError, match=r"got BlockedLayout: a descriptor; BlockedLayout\(\.\.\.\)\.to_linear\(shape\)"):
            call()
    with pytest.raises(LayoutError, match=r"must be a LinearLayout, got NoneType$"):
        plan_conversion(None, linear, "fp16")
