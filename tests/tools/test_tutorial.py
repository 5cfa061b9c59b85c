"""docs/tutorial.md is executable: every example prints what the tutorial shows."""

from __future__ import annotations

import doctest
import pathlib

TUTORIAL = pathlib.Path(__file__).resolve().parents[2] / "docs" / "tutorial.md"


def test_tutorial_examples_run_as_written():
    result = doctest.testfile(str(TUTORIAL), module_relative=False, optionflags=doctest.NORMALIZE_WHITESPACE,
                              raise_on_error=False, report=True)
    assert result.attempted >= 60
    assert result.failed == 0


def test_tutorial_pictures_exist():
    text = TUTORIAL.read_text()
    for name in ("seed-store.svg", "seed-shared-xor-m.svg", "seed-bank-hits-xor-m.svg", "blocked-128x128.png",
                 "explorer-xor-m-algebra.png"):
        assert f"images/{name}" in text
        assert (TUTORIAL.parent / "images" / name).stat().st_size > 1000
