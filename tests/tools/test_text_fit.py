"""Text that fits a terminal: views show their first columns and say so, prose wraps, --wide shows all."""

from __future__ import annotations

import re
import sys

import pytest

from linear_layouts.cli import main
from linear_layouts.present.reports import DEMO_STEPS, demo_report
from linear_layouts.present.viz.scenarios import seed_transpose
from linear_layouts.present.viz.text import distributed_view, owner_table, shared_view, wrap_text

BLOCKED = "BlockedLayout([1,4],[4,8],[4,1],[1,0])"
SEED = seed_transpose()


def _run(capsys, monkeypatch, *argv: str, columns: int | None = None) -> str:
    if columns is not None:   # as if stdout were a terminal that wide
        monkeypatch.setenv("COLUMNS", str(columns))
        monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(list(argv)) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("width", [40, 80, 120])
def test_views_keep_whole_cells_and_say_what_they_left_out(width):
    for text, columns in ((distributed_view(SEED.store, max_width=width), 32),
                          (shared_view(SEED.shared[2][1], max_width=width), 32),
                          (distributed_view(SEED.load, True, max_width=width), 32),
                          (owner_table(SEED.store, max_width=width), 32)):
        lines = text.rstrip("\n").splitlines()
        assert max(map(len, lines)) <= width
        note = " ".join(lines[-3:])
        shown = int(re.search(r"(?:columns|lanes) 0-(\d+) of", note).group(1)) + 1
        assert shown < columns and " ".join(note.split()).endswith("--wide shows all)")
    full = distributed_view(SEED.store)
    cut = distributed_view(SEED.store, max_width=80).splitlines()
    for whole, part in zip(full.splitlines(), cut):        # the shown cells are Triton's, in order
        assert whole.startswith(part.split(", …")[0])


def test_wide_enough_views_are_unchanged():
    assert distributed_view(SEED.store, max_width=1000) == distributed_view(SEED.store)
    assert shared_view(SEED.shared[1][1], max_width=1000) == shared_view(SEED.shared[1][1])


def test_wrap_text_keeps_words_and_indent():
    text = "   alpha beta gamma delta epsilon zeta eta theta"
    wrapped = wrap_text(text, 20).splitlines()
    assert max(map(len, wrapped)) <= 20 and wrapped[0].startswith("   alpha")
    assert all(line.startswith("     ") for line in wrapped[1:])
    assert " ".join(wrapped).split() == text.split()


def test_demo_is_six_steps_of_one_screen_each():
    demo = demo_report(width=100)
    lines = demo.splitlines()
    assert max(map(len, lines)) <= 100
    starts = [i for i, line in enumerate(lines) if line.startswith("── Step ")]
    assert len(starts) == len(DEMO_STEPS) == 6
    sizes = [b - a for a, b in zip(starts, starts[1:] + [len(lines)])]
    assert max(sizes) <= 50, sizes
    assert len(lines) <= 210
    for needle in ("A(r1, t9, w0) = (i, j) = (2, 3)", "16 + 256", "16 + 16", "32·m + (n ⊕ 2m): True",
                   "Lemma 9.5", "shared memory: 2048 bytes", "iterations: 0 converts once"):
        assert needle in demo


def test_show_fits_a_terminal_and_wide_or_a_pipe_gets_tritons_view(capsys, monkeypatch):
    whole = _run(capsys, monkeypatch, "show", BLOCKED, "--shape", "32,64")           # a pipe: Triton's view
    assert max(map(len, whole.splitlines())) > 500
    wide = _run(capsys, monkeypatch, "show", BLOCKED, "--shape", "32,64", "--wide", columns=80)
    assert wide == whole
    fitted = _run(capsys, monkeypatch, "show", BLOCKED, "--shape", "32,64", columns=80)
    assert max(map(len, fitted.splitlines())) <= 80 and "--wide shows all" in fitted


def test_demo_in_a_terminal_fits_it(capsys, monkeypatch):
    out = _run(capsys, monkeypatch, "demo", columns=90)
    assert max(len(line) for line in out.splitlines()) <= 90     # the kernel's code too
    wide = _run(capsys, monkeypatch, "demo", "--wide", columns=90)
    assert max(map(len, wide.splitlines())) > 200       # Triton's whole 32-column views
