"""Every text the command prints fits the terminal's width (COLUMNS), and 100 columns when stdout is not a
terminal, as `--help` promises; code it prints (Gluon, TTGIR, JSON, C++) still reads back the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from linear_layouts.cli import main
from linear_layouts.spec import parse_spec

ROW = "BlockedLayout([1,4],[4,8],[4,1],[1,0])"
COLUMN = "BlockedLayout([4,1],[8,4],[1,4],[0,1])"
STORE16 = "BlockedLayout([1,8],[4,8],[4,1],[1,0])"
OPERAND = "DotOperandLayout(0, NVMMADistributedLayout([2,0],[4,1],[16,8]), 2)"
MMA = "NVMMADistributedLayout([2,0],[4,1],[16,8])"
KERNEL = "tests/data/triton_kernels/matmul_fp16.py"

COMMANDS = [
    ["swizzle", ROW, COLUMN, "--shape", "32,32", "--dtype", "fp32"],
    ["swizzle", ROW, COLUMN, "--shape", "32,32", "--dtype", "fp32", "--format", "cute"],
    ["swizzle", ROW, COLUMN, "--shape", "32,32", "--dtype", "fp32", "--format", "gluon"],
    ["swizzle", ROW, COLUMN, "--shape", "32,32", "--dtype", "fp32", "--format", "ttgir"],
    ["swizzle", STORE16, "wgmma-a", "--shape", "128,64", "--dtype", "fp16"],
    ["swizzle", "BlockedLayout([1,16],[8,4],[4,1],[1,0])", "wgmma-b", "--shape", "64,128", "--dtype", "fp8",
     "--format", "cute"],
    ["swizzle", STORE16, OPERAND, "--shape", "64,64", "--dtype", "fp16", "--format", "cute"],
    ["banks", "NVMMASharedLayout(128,16)", ROW, "--shape", "64,64", "--dtype", "fp16"],
    ["banks", "NVMMASharedLayout(128,16)", ROW, "--shape", "64,64", "--dtype", "fp16", "--store", ROW],
    ["convert", ROW, COLUMN, "--shape", "32,32", "--dtype", "fp32", "--emit", "cuda"],
    ["convert", ROW, COLUMN, "--shape", "32,32", "--dtype", "fp32", "--format", "gluon"],
    ["convert", ROW, MMA, "--shape", "64,64", "--dtype", "fp16", "--format", "ttgir"],
    ["show", ROW, "--shape", "32,64", "--format", "json"],
    ["show", ROW, "--shape", "32,64", "--format", "cute"],
    ["show", ROW, "--shape", "32,64", "--format", "gluon"],
    ["show", MMA, "--shape", "64,64", "--format", "ttgir"],
    ["show", "Swizzle<3,4,3> o (8,64):(64,1)", "--format", "cute"],
    ["show", "Swizzle<3,4,3> o (8,64):(64,1)", "--format", "gluon", "--dtype", "fp16"],
    ["matrix", ROW, "--shape", "128,128"],
    ["demo"],
    ["report", KERNEL, "--no-triton-estimate"],
]


def _out(capsys, monkeypatch, argv: list[str], columns: int | None) -> str:
    monkeypatch.chdir(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    if columns is not None:
        monkeypatch.setenv("COLUMNS", str(columns))
        monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    else:
        monkeypatch.setenv("COLUMNS", "300")   # ignored: stdout is no terminal
    if argv[0] == "report":
        pytest.importorskip("triton")
    assert main(argv) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a[:1] + [x for x in a if x.startswith("--f")]
                                                                     + a[-1:]))
def test_every_text_fits_100_columns_off_a_terminal_and_the_terminal_on_one(capsys, monkeypatch, argv):
    lines = _out(capsys, monkeypatch, argv, None).splitlines()
    assert max(map(len, lines)) <= 100
    if argv[0] in ("demo", "swizzle", "report") and "--format" not in argv:
        narrow = _out(capsys, monkeypatch, argv, 80).splitlines()
        assert max(map(len, narrow)) <= 80
        monkeypatch.undo()
        wide = _out(capsys, monkeypatch, argv + ["--wide"], 80).splitlines()
        assert max(map(len, wide)) > 100            # --wide: every line whole


def test_fitted_code_reads_back_the_same(capsys, monkeypatch):
    for fmt in ("gluon", "ttgir"):
        whole = _out(capsys, monkeypatch, ["show", ROW, "--shape", "64,64", "--format", fmt, "--wide"], None)
        fitted = _out(capsys, monkeypatch, ["show", ROW, "--shape", "64,64", "--format", fmt], None)
        assert "\n" in fitted.strip() and "\n" not in whole.strip()
        assert parse_spec(fitted).value == parse_spec(whole).value
    whole = _out(capsys, monkeypatch, ["show", ROW, "--shape", "32,64", "--format", "json", "--wide"], None)
    fitted = _out(capsys, monkeypatch, ["show", ROW, "--shape", "32,64", "--format", "json"], None)
    assert json.loads(fitted) == json.loads(whole)
    whole = _out(capsys, monkeypatch, ["convert", ROW, COLUMN, "--shape", "32,32", "--dtype", "fp32", "--emit",
                                       "cuda", "--wide"], None)
    fitted = _out(capsys, monkeypatch, ["convert", ROW, COLUMN, "--shape", "32,32", "--dtype", "fp32", "--emit",
                                        "cuda"], None)
    code = [line for line in whole.splitlines() if line.startswith(("LL_DEV", "template"))]
    assert len(code) > 10 and all(len(line) > 100 for line in code[:3])
    # C++ ignores a newline between tokens: the same tokens, none split, comments aside
    tokens = lambda text: " ".join(l for l in text.splitlines() if not l.lstrip().startswith("//")).split()
    assert tokens(fitted) == tokens(whole)


def test_no_terminal_means_100_columns_for_a_real_process():
    """`wc -L`, as the issue measured: the report's op table and the fp32 swizzle, piped."""
    pytest.importorskip("triton")
    root = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
    env = dict(os.environ, COLUMNS="100", PYTHONPATH=os.path.join(root, "src"))
    for argv in (["report", KERNEL, "--no-triton-estimate"],
                 ["swizzle", ROW, COLUMN, "--shape", "32,32", "--dtype", "fp32"]):
        done = subprocess.run([sys.executable, "-m", "linear_layouts", *argv], cwd=root, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert max(len(line) for line in done.stdout.splitlines()) <= 100
