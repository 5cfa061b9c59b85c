"""`-o ""`: an empty output path was standard output (and `explore -o ""` served the page on a port); now every
command refuses it, exit 2 with one line naming -o/--output and the rule: '-' is standard output, else a file path."""

from __future__ import annotations

import pytest

from cli_run import run

BLOCKED = "BlockedLayout([1,4],[4,8],[4,1],[1,0])"
COMMANDS = {
    "show": ["show", BLOCKED, "--shape", "16,32"],
    "matrix": ["matrix", BLOCKED, "--shape", "16,32"],
    "explore": ["explore", "--port", "-1"],  # a bad port: were -o "" not refused first, no server would start
}


@pytest.mark.parametrize("argv", COMMANDS.values(), ids=COMMANDS.keys())
@pytest.mark.parametrize("option", ["-o", "--output"])
def test_an_empty_output_path_is_refused(argv, option, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, out, err = run(argv + [option, ""])
    assert status == 2 and out == "" and err.count("\n") == 1, (status, out[-300:], err)
    assert err == ("linear-layouts: error: -o/--output: an empty path; write '-' for standard output, "
                   "else a file path\n")
    assert list(tmp_path.iterdir()) == []
