"""The README's tour answers issue 14's question ("128x64 fp16 tile loaded with BlockedLayout([1,8],[4,8],
[4,1],[1,0]) feeding a Hopper wgmma operand: which shared layout, how many wavefronts, what Gluon code?")
in five lines of Python and one CLI command: both run here as written, and print what the README says."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from linear_layouts.cli import main

README = Path(__file__).resolve().parents[2] / "README.md"


def _tour() -> tuple[str, str]:
    text = README.read_text()
    section = text[text.index("From a layout question to Gluon code"):]
    python = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    bash = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return python, bash


def test_five_lines_answer_the_wgmma_question():
    python, _ = _tour()
    lines = [ln for ln in python.splitlines() if ln.strip()]
    assert len(lines) == 5
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(python, "README.md", "exec"), {})  # noqa: S102 - the README's own code
    promised = lines[-1].split("#", 1)[1].strip()
    assert out.getvalue().strip() == promised == \
        "gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16) 128"


def test_one_command_prints_the_ranked_table_and_the_gluon_code():
    _, bash = _tour()
    command = bash.split("#", 1)[0].strip()
    argv = shlex.split(command)
    assert argv[0] == "linear-layouts" and len(bash.strip().splitlines()) == 1
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv[1:]) in (0, None)
    text = out.getvalue()
    assert re.search(r"^1\s+NVMMA 128B \[get_default_for\]\s+128\s+-\s+128\s.*yes", text, re.M), text
    assert "Recommended (row 1): gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16)" in text
    assert "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>" in text


def test_every_readme_command_runs_as_written(tmp_path, monkeypatch, capsys):
    """Each `linear-layouts ...` line of the README's shell blocks, from the repository root (explore writes
    its page instead of serving; report needs Triton)."""
    blocks = re.findall(r"```bash\n(.*?)```", README.read_text(), re.S)
    commands = [line.split("  #")[0].split(" && ")[-1] for block in blocks for line in block.splitlines()
                if "linear-layouts " in line and not line.lstrip().startswith("#")]
    assert len(commands) >= 11
    monkeypatch.chdir(README.parent)
    for command in commands:
        argv = shlex.split(command)
        assert argv[0] == "linear-layouts", command
        if argv[1] == "report":
            pytest.importorskip("triton")
        if argv[1] == "explore":
            argv += ["-o", str(tmp_path / "explorer.html")]
        assert main(argv[1:]) == 0, command
        assert capsys.readouterr().out.strip(), command
