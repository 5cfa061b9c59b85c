"""A ``PaddedSharedLayout`` on the command line: ``banks`` counts its padded offsets (the brute-force simulator:
Lemma 9.4 counts linear layouts only), and ``show`` never prints its unpadded linear part as if it were the
layout (``--format cute`` / ``json`` refuse; the text views say what they show)."""

from __future__ import annotations

import pytest

import linear_layouts.layouts as C
from linear_layouts.analysis.bank_simulator import simulate_wavefronts
from linear_layouts.cli import main

PADDED = "PaddedSharedLayout.with_identity_for([[32, 1]], [32, 32], [1, 0])"
COLUMNS = "BlockedLayout([1,1],[32,1],[1,4],[0,1])"  # each warp reads a column of 32 fp32


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_banks_counts_the_padding(capsys):
    """A column of a row-major 32x32 fp32 tile hits one bank 32 times (1024 wavefronts over the tile); one
    element of padding a row spreads it over all 32 banks: 32, as the simulator counts with the padding."""
    code, out, _ = _run(capsys, "banks", PADDED, COLUMNS, "--shape", "32,32", "--dtype", "fp32", "--steps", "1")
    assert code == 0 and out.startswith("load: 32 wavefronts (brute-force simulation of the padded offsets: 1 after "
                                        "every 32 elements")
    linear = C.PaddedSharedLayout.with_identity_for([[32, 1]], [32, 32], [1, 0]).to_linear([32, 32])
    dist = C.BlockedLayout([1, 1], [32, 1], [1, 4], [0, 1]).to_linear([32, 32])
    assert simulate_wavefronts(linear, dist, 32, padding=((32, 1),)) == 32
    assert simulate_wavefronts(linear, dist, 32) == 1024  # what the unpadded part alone would have said
    assert "  warp 0, instruction 0   1  " in out and "Triton's measure" not in out


@pytest.mark.parametrize("form", ["cute", "json"])
def test_show_refuses_the_forms_that_would_drop_the_padding(capsys, form):
    code, out, err = _run(capsys, "show", PADDED, "--shape", "32,32", "--format", form)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "a PaddedSharedLayout (1 unused after every 32 elements) is no linear layout" in err


def test_show_text_says_it_shows_the_linear_part(capsys):
    code, out, _ = _run(capsys, "show", PADDED, "--shape", "32,32")
    assert code == 0 and out.rstrip().endswith("(offsets of the linear part; the padding inserts 1 unused after "
                                               "every 32 elements)")
