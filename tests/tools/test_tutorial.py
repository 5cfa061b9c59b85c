"""docs/tutorial.md is executable: every example prints what the tutorial shows, and it stands alone."""

from __future__ import annotations

import doctest
import pathlib
import re
import shlex

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


def _commands(text: str) -> list[list[str]]:
    """Every `linear-layouts ...` command of the tutorial: lines of its bash blocks and inline code spans."""
    found = re.findall(r"^linear-layouts (.+)$", text, flags=re.M) + re.findall(r"`linear-layouts ([^`]+)`", text)
    return [shlex.split(command) for command in dict.fromkeys(found)]


def test_tutorial_commands_run_as_written(tmp_path, monkeypatch, capsys):
    from linear_layouts.cli import main

    commands = _commands(TUTORIAL.read_text())
    assert len(commands) >= 8
    monkeypatch.chdir(TUTORIAL.parents[1])                 # the tutorial's commands run from the repository root
    for argv in commands:
        if argv[0] == "explore" and "-o" not in argv:        # the server would run until stopped: write the page
            argv += ["-o", "explorer.html"]
        target = None
        if "-o" in argv:                                     # pictures go to a scratch directory
            target = tmp_path / argv[argv.index("-o") + 1]
            argv[argv.index("-o") + 1] = str(target)
        assert main(argv) == 0, argv
        out, _ = capsys.readouterr()
        assert target.stat().st_size > 1000 if target else out.strip(), argv


def test_the_transpose_files_are_the_tutorials_layouts():
    from linear_layouts import LinearLayout

    store = LinearLayout({"register": [[1, 0], [2, 0], [4, 0], [8, 0]],
                          "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]]}, ["dim0", "dim1"])
    load = LinearLayout({"register": [[0, 2], [0, 4], [0, 8], [0, 16]],
                         "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]]}, ["dim0", "dim1"])
    images = TUTORIAL.parent / "images"
    assert LinearLayout.from_json((images / "transpose-store.json").read_text()) == store
    assert LinearLayout.from_json((images / "transpose-load.json").read_text()) == load
    assert "store = LinearLayout(" in TUTORIAL.read_text() and "[[0, 2], [0, 4], [0, 8], [0, 16]]" in TUTORIAL.read_text()



#: every "section N" of the tutorial: the words just before it, and a word of the heading of the section meant
_REFERENCES = {
    "draws it,": "Pictures",
    "is that family (": "CuTe",
    "`32 m + (n ⊕ m)` of": "shared layout",
    "accumulator layout of": "distributed layout",
    "the optimal swizzle of": "optimal swizzle",
    "the transpose of": "Bank conflicts",
    "`NVMMASharedLayout` of": "shared layout",
    "Read as": "Bank conflicts",
    "For the store of": "optimal swizzle",
    "with the optimum of": "optimal swizzle",
    "-o banks.svg` (": "Bank conflicts",
    "`linear-layouts demo`:": "distributed layout",
}


def test_tutorial_section_references_point_at_the_right_section():
    text = TUTORIAL.read_text()
    titles = dict(re.findall(r"^## (\d+)\. (.+)$", text, flags=re.M))
    flat = " ".join(text.split())
    found = [(flat[:m.start()].rstrip(), m[1]) for m in re.finditer(r"sections? (\d+)", flat)]
    assert len(found) == len(_REFERENCES)
    for before, number in found:
        key = next((k for k in _REFERENCES if before.endswith(k)), None)
        assert key is not None, f"a new reference to section {number} ({before[-40:]!r}): add it to _REFERENCES"
        assert _REFERENCES[key].lower() in titles[number].lower(), (before[-40:], number, titles[number])
