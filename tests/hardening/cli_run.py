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


def run_bytes(argv: list[str]) -> tuple[int, bytes, str]:
    """``(exit status, stdout's bytes, stderr)`` of ``linear-layouts ARGV``, stdout a real text stream over bytes
    (with ``.buffer``, as a pipe's is): what a binary output such as a PNG writes there."""
    raw, err = io.BytesIO(), io.StringIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", newline="")
    with redirect_stdout(out), redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as exit_:
            status = exit_.code
        out.flush()
    return status, raw.getvalue(), err.getvalue()


def refused(argv: list[str], *needles: str) -> str:
    """``argv`` exits 2 with one line on stderr, ``linear-layouts: error: ...``, holding every needle; that line."""
    status, _, err = run(argv)
    assert status == 2 and err.count("\n") == 1 and err.startswith("linear-layouts: error: "), (status, err[-2000:])
    for needle in needles:
        assert needle in err, err
    return err
