"""docs/cute.md is executable: every example prints what the page shows (as docs/tutorial.md)."""

from __future__ import annotations

import doctest
import pathlib

PAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "cute.md"


def test_cute_page_examples_run_as_written():
    result = doctest.testfile(str(PAGE), module_relative=False, optionflags=doctest.NORMALIZE_WHITESPACE,
                              raise_on_error=False, report=True)
    assert result.attempted >= 25
    assert result.failed == 0
