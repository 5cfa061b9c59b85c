"""``-o -``: every command's ``-o/--output`` takes ``-`` as standard output (POSIX's convention), never as a
file named ``-``: the same bytes as without ``-o``, text as text and a PNG through ``sys.stdout.buffer``."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_run import run, run_bytes
from linear_layouts.cli import build_parser

BLOCKED = "BlockedLayout([1,4],[4,8],[4,1],[1,0])"
OTHER = "BlockedLayout([4,1],[8,4],[1,4],[0,1])"
NVMMA = "NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)"
KERNEL = Path(__file__).resolve().parents[1] / "data/triton_kernels/ir/sm_90/absmax_atomic.ttgir"

COMMANDS = {
    "show-text": ["show", BLOCKED, "--shape", "16,32"],
    "show-svg": ["show", BLOCKED, "--shape", "16,32", "--format", "svg"],
    "matrix": ["matrix", BLOCKED, "--shape", "16,32"],
    "banks": ["banks", NVMMA, BLOCKED, "--shape", "16,64", "--dtype", "fp16"],
    "swizzle": ["swizzle", BLOCKED, OTHER, "--shape", "16,32", "--dtype", "fp16"],
    "convert": ["convert", BLOCKED, OTHER, "--shape", "16,32", "--dtype", "fp16"],
    "explore": ["explore"],   # without -o it serves the page: compared with -o FILE below
    "report": ["report", str(KERNEL), "--no-triton-estimate"],
    "permute": ["permute", "32,28,28,512", "0,3,1,2", "--dtype", "bf16"],
}


@pytest.mark.parametrize("argv", COMMANDS.values(), ids=COMMANDS.keys())
def test_dash_is_stdout(argv, tmp_path, monkeypatch):
    """`-o -` wrote a file named `-`; now it prints what the command prints without -o, and no file appears."""
    monkeypatch.chdir(tmp_path)
    status, out, err = run(argv + ["-o", "-"])
    assert status == 0, err
    assert not (tmp_path / "-").exists() and list(tmp_path.iterdir()) == []
    assert "wrote" not in err and "wrote" not in out
    if argv[0] == "explore":
        page = tmp_path.parent / f"{tmp_path.name}-page.html"
        assert run(argv + ["-o", str(page)])[0] == 0
        assert out == page.read_text() and out.startswith("<!DOCTYPE html>")
    else:
        assert out == run(argv)[1] and out.strip()


def test_dash_png_is_binary_stdout(tmp_path, monkeypatch):
    """`show --format png -o -` writes the PNG's bytes to stdout (``sys.stdout.buffer``), those of `-o FILE`."""
    monkeypatch.chdir(tmp_path)
    argv = ["show", BLOCKED, "--shape", "16,32", "--format", "png"]
    status, out, err = run_bytes(argv + ["-o", "-"])
    assert status == 0, err
    assert list(tmp_path.iterdir()) == []
    assert run(argv + ["-o", "l.png"])[0] == 0
    assert out[:8] == b"\x89PNG\r\n\x1a\n" and out == (tmp_path / "l.png").read_bytes()


def test_every_output_option_says_dash_is_stdout():
    """Each command's -o help tells that `-` is standard output."""
    parser, _ = build_parser()
    helps = {name: next(a.help for a in command._actions if "-o" in a.option_strings)
             for name, command in parser.subcommands.items()
             if any("-o" in a.option_strings for a in command._actions)}
    assert set(helps) == {"show", "matrix", "banks", "swizzle", "convert", "explore", "report", "permute"}
    assert all("'-': " in text and "stdout" in text for text in helps.values()), helps
