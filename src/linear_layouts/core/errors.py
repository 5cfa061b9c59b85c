"""The one exception type of the package, and the two hints its messages share.

* :func:`did_you_mean` — the closest known names to a misspelt one (``difflib``), for the messages of
  unknown subcommands, options, layout classes, keyword arguments and element types.
* :func:`not_a_layout` — the error for a value that should be a ``LinearLayout``; a layout descriptor
  (``BlockedLayout``, ``NVMMASharedLayout``, ...) gets the call that turns it into one.
* :func:`one_line` — a message as the one line the command line prints (the explorer shows the same).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["LayoutError", "did_you_mean", "not_a_layout", "one_line", "MAX_MESSAGE_CHARS", "QUOTE_CHARS",
           "cut_long_runs"]

MAX_MESSAGE_CHARS = 1000  #: a longer message is cut: messages quote ~80 characters of input (limits.quote)
QUOTE_CHARS = 80  #: characters of an input quoted in an error message (``limits.quote``, ``limits.excerpt``)
_LONG_RUN = re.compile(r"\S{%d,}" % (QUOTE_CHARS + 40))


def cut_long_runs(text: str) -> str:
    """``text`` with every run of more than ``QUOTE_CHARS + 40`` non-space characters (a number, a shape, a
    name echoed whole) cut to its first ``QUOTE_CHARS`` characters and its length.

    >>> cut_long_runs("got " + "9" * 1204 + " digits")
    'got 99999999999999999999999999999999999999999999999999999999999999999999999999999999... (1204 characters) digits'
    """
    return _LONG_RUN.sub(lambda m: f"{m.group()[:QUOTE_CHARS]}... ({len(m.group())} characters)", text)


class LayoutError(ValueError):
    """Bad input to a layout operation: the message names the argument and the rule it breaks.

    Messages quote at most ~80 characters of the input (``limits.quote`` / ``limits.excerpt``); as last
    guards, a run of more than 120 characters without a space is cut to 80 (:func:`cut_long_runs`: a huge
    number or shape formatted whole), and a message longer than ``MAX_MESSAGE_CHARS`` is cut, so no input is
    ever echoed whole.

    >>> len(str(LayoutError("x " * 10**6)))
    1000
    >>> len(str(LayoutError("shape " + "2," * 3000)))
    107
    """

    def __init__(self, *args: object) -> None:
        if len(args) == 1 and isinstance(args[0], str):
            text = args[0]
            if len(text) > QUOTE_CHARS + 40:
                text = cut_long_runs(text)
            if len(text) > MAX_MESSAGE_CHARS:
                tail = f"... (a message of {len(text)} characters, cut)"
                text = text[:MAX_MESSAGE_CHARS - len(tail)] + tail
            args = (text,)
        super().__init__(*args)


def did_you_mean(word: str, known: Iterable[str], *, count: int = 3) -> str:
    """`` (did you mean 'a' or 'b'?)`` with the closest of ``known`` to ``word`` (case-insensitive), or ``""``.

    >>> did_you_mean("BlockdLayout", ["BlockedLayout", "SliceLayout"])
    " (did you mean 'BlockedLayout'?)"
    >>> did_you_mean("fp61", ["fp16", "fp32", "bf16"])
    " (did you mean 'fp16'?)"
    >>> did_you_mean("xyz", ["show", "banks"])
    ''
    """
    by_folded = {k.lower(): k for k in dict.fromkeys(known)}
    folded = str(word).lower()
    scores = sorted(((difflib.SequenceMatcher(None, folded, k).ratio(), k) for k in by_folded), reverse=True)
    if not scores or scores[0][0] < 0.6:
        return ""
    best = scores[0][0]
    names = [repr(by_folded[k]) for score, k in scores[:count] if score >= best - 0.08]   # only the near-best
    return f" (did you mean {' or '.join(names)}?)" if len(names) < 3 else \
        f" (did you mean {', '.join(names[:-1])} or {names[-1]}?)"


def not_a_layout(value: Any, what: str) -> LayoutError:
    """The LayoutError for ``what`` = ``value`` not being a LinearLayout. When ``value`` is a layout
    descriptor (it has ``to_linear``), the message says how to get its LinearLayout.

    >>> from linear_layouts.layouts import BlockedLayout
    >>> print(not_a_layout(BlockedLayout([1], [32], [4], [0]), "src"))
    src must be a LinearLayout, got BlockedLayout: a descriptor; BlockedLayout(...).to_linear(shape) is its LinearLayout over a tensor shape, e.g. .to_linear([64])
    """
    message = f"{what} must be a LinearLayout, got {type(value).__name__}"
    if callable(getattr(value, "to_linear", None)) and not isinstance(value, type):
        rank = getattr(value, "rank", None)
        example = [64] * rank if isinstance(rank, int) and 0 < rank <= 4 else [64, 64]
        message += (f": a descriptor; {type(value).__name__}(...).to_linear(shape) is its LinearLayout over a tensor "
                    f"shape, e.g. .to_linear({example})")
    return LayoutError(message)


def one_line(message: str) -> str:
    """A message as one line of at most ~500 characters: a parse error's caret line is dropped, the
    other lines joined with `` | ``; characters a terminal cannot show (undecodable bytes) escaped.

    >>> one_line("LAYOUT: bad\\n  Blocked(\\n         ^")
    'LAYOUT: bad | Blocked('
    """
    lines = [line.strip() for line in message.splitlines() if line.strip() and set(line.strip()) != {"^"}]
    text = " | ".join(lines)
    if len(text) > 500:
        text = text[:500] + "..."
    return text.encode("utf-8", "backslashreplace").decode("utf-8")
