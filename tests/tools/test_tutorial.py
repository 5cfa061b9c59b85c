"""docs/tutorial.md is executable: every example prints what the tutorial shows, and it stands alone."""

from __future__ import annotations

import doctest
import pathlib
import re

TUTORIAL = pathlib.Path(__file__).resolve().parents[2] / "docs" / "tutorial.md"


def test_tutorial_examples_run_as_written():
    result = doctest.testfile(str(TUTORIAL), module_relative=False, optionflags=doctest.NORMALIZE_WHITESPACE,
                              raise_on_error=False, report=True)
    assert result.attempted >= 70
    assert result.failed == 0


def test_tutorial_needs_nothing_outside_the_repository():
    text = TUTORIAL.read_text()
    for outside in ("seeds/", "seed 00", "HARDWARE.md", "shared/"):
        assert outside not in text, outside
    # only public names: no private modules or helpers, no internal scenario builders
    assert not re.search(r"import .*\b_\w+|\bviz\.(scenarios|algorithm|bank_steps)\b", text)


def test_tutorial_pictures_exist():
    text = TUTORIAL.read_text()
    names = re.findall(r"\(images/([\w.-]+)\)", text)
    assert len(names) >= 5
    for name in names:
        assert (TUTORIAL.parent / "images" / name).stat().st_size > 1000, name
