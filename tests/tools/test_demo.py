"""The demo stands alone: every term it uses is defined where it is used, every command it prints runs as
printed, its F2 matrix reads as `matrix` prints it, and its numbers are explained."""

from __future__ import annotations

import os
import re
import shlex

import pytest

from linear_layouts.cli import main
from linear_layouts.present.reports import demo_report
from linear_layouts.present.reports.demo import demo_commands

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))


def test_every_command_the_demo_prints_runs_as_printed(capsys, monkeypatch, tmp_path):
    from linear_layouts.present.viz import server

    monkeypatch.chdir(tmp_path)     # a user's own directory, not the repository
    served = []
    real = server.explorer_server
    monkeypatch.setattr(server, "explorer_server", lambda page, port: served.append(real(page, 0)) or served[-1])
    monkeypatch.setattr(server, "serve_until_interrupted", lambda s: s.server_close())
    for width in (80, 100, None):
        commands = demo_commands(demo_report(width))
        assert len(commands) == 4 and {c.split()[1] for c in commands} == {"convert", "swizzle", "matrix", "explore"}
        for command in commands:
            argv = shlex.split(command)
            assert argv[0] == "linear-layouts"
            assert main(argv[1:]) == 0, command
            capsys.readouterr()
    assert served


def test_the_convert_tip_prints_the_demos_kernel(capsys):
    demo = demo_report(100)
    convert = next(c for c in demo_commands(demo) if " convert " in c)
    assert main(shlex.split(convert)[1:]) == 0
    kernel = re.search(r"Kernel (ll_convert_\w+)", demo)[1]
    assert f"__launch_bounds__(32) {kernel}(" in capsys.readouterr().out


def test_terms_are_defined_before_use():
    demo = demo_report(100)
    flat = " ".join(demo.split())
    step4 = flat[flat.index("Step 4 of 6"):flat.index("Step 5 of 6")]
    for term, definition in [("A_Reg", "A_Reg / A_Thr are the directions layout A moves through a thread's registers"),
                             ("segment bits", "the segment bits, M_Seg"),
                             ("M_Seg", "which pick the row (the segment bits, M_Seg)"),
                             ("m_i", "m_i: bit i of the row m")]:
        assert step4.index(definition) <= step4.index(term) + len(definition), term
    assert "Lemma 9.5: at most 4 segment bits can avoid every lane direction of both accesses" in flat
    assert "I = n0: it moves the lane in both layouts, so it can only be a bank bit" in flat
    assert "a thread direction of both accesses; it is set aside" not in flat and "Lemma 9.5 bound" not in flat


def test_step_6_says_why_its_kernel_has_twice_the_plans_bytes():
    flat = " ".join(demo_report(100).split())
    assert "shared memory: 2048 bytes" in flat
    assert ("4096 bytes of shared memory: the plan's 2048 for A -> B, and a second 2048-byte buffer for the way "
            "back B -> A") in flat


def test_the_matrix_reads_as_the_matrix_command_prints_it(capsys):
    demo = demo_report(100).splitlines()
    start = demo.index(next(l for l in demo if l.strip().startswith("r0 r1 t0")))
    rows = demo[start + 1:start + 9]
    assert main(["matrix", "BlockedLayout([2,2],[4,8],[2,1],[1,0])", "--shape", "16,16"]) == 0
    printed = capsys.readouterr().out.splitlines()[1:]
    assert [r.split()[1:] for r in rows] == [r.split()[1:] for r in printed]     # dim0 (i) bits first
    assert [r.split()[0] for r in rows] == ["i0", "i1", "i2", "i3", "j0", "j1", "j2", "j3"]
