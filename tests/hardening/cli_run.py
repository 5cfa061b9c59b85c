"""The CLI run in this process, as the hardening tests drive it."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

from linear_layouts.cli import main


def run(argv: list[str]) -> tuple[int, str, str]:
    """``(exit status, stdout, stderr)`` of ``linear-layouts ARGV`` (argparse's own exits included)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as exit_:
            status = exit_.code
    return status, out.getvalue(), err.getvalue()
