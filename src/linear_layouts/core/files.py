"""Files the user names (``@FILE`` specs, ``report``'s IR): read safely, and never quoted in a message.

Reading: :func:`read_text` opens the path once, non-blocking (a FIFO or a device cannot stall the open),
checks with ``fstat`` on that descriptor that it is a regular file no larger than the limit, and only then
reads it (at most the limit, even if the file grows meanwhile). A directory, FIFO, socket or device, a file
above the limit, or text that is not UTF-8 is a :class:`LayoutError` naming the path and the rule.

Quoting: error messages may quote about 80 characters of what the user typed (``limits.quote``), but a
file's text is not something the user typed: :func:`quotes_file` says whether a message carries any of it,
and :func:`redact` removes it. A *word* of a file is a run of letters, digits and ``_`` of at least
``MIN_WORD`` characters that this package's own source does not contain (so ``BlockedLayout``,
``register`` or ``sizePerThread`` are vocabulary, while a token, a password hash or an unknown name is
content); a message word that is part of a file's word is content.

>>> quotes_file("unknown layout 'ghp_x1y2' (did you mean 'BlockedLayout'?)", ["ghp_x1y2z3(1)"])
True
>>> redact("unknown layout 'ghp_x1y2' (did you mean 'BlockedLayout'?)", ["ghp_x1y2z3(1)"])
"unknown layout '<from the file>' (did you mean 'BlockedLayout'?)"
>>> quotes_file("brackets nested deeper than 32 levels at column 33", ["[[[[ ghp_x1y2z3"])
False
"""

from __future__ import annotations

import errno
import functools
import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path

from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote

__all__ = ["read_bytes", "read_text", "quotes_file", "redact", "MIN_WORD", "WITHHELD"]

MIN_WORD = 4  #: shorter runs are not checked: ``got 3``, ``x`` or ``dim`` say nothing about a file
WITHHELD = "<from the file>"  #: what :func:`redact` puts in place of a file's word

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def read_bytes(path: str | os.PathLike[str], what: str, *, max_bytes: int, limit: str = "") -> bytes:
    """The bytes of the regular file ``path``: opened once (non-blocking, no controlling terminal),
    checked by ``fstat`` on that descriptor, at most ``max_bytes`` read; else LayoutError naming ``what``
    (and, for a file too large, ``limit``: the rule behind ``max_bytes``).

    >>> read_bytes("/", "spec file", max_bytes=10)
    Traceback (most recent call last):
    ...
    linear_layouts.core.errors.LayoutError: spec file '/': a folder, not a regular file (only a file's text is read)
    """
    name = quote(os.fspath(path))
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as error:
        raise LayoutError(f"{what} {name}: {error.strerror or errno.errorcode.get(error.errno, 'cannot open')}") \
            from None
    except (ValueError, TypeError) as error:  # a NUL in the path
        raise LayoutError(f"{what} {name}: not a valid path ({error})") from None
    try:
        info = os.fstat(fd)
        for test, kind in _KINDS:
            if test(info.st_mode):
                raise LayoutError(f"{what} {name}: {kind}, not a regular file (only a file's text is read)")
        if not stat.S_ISREG(info.st_mode):
            raise LayoutError(f"{what} {name}: not a regular file (only a file's text is read)")
        if info.st_size > max_bytes:
            raise LayoutError(f"{what} {name}: {info.st_size} bytes, above the limit of {max_bytes}"
                              f"{f' ({limit})' if limit else ''}: not read")
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:
            raise LayoutError(f"{what} {name}: it grew above the limit of {max_bytes} bytes while it was read")
        return b"".join(chunks)
    except OSError as error:
        raise LayoutError(f"{what} {name}: cannot read it: {error.strerror or error}") from None
    finally:
        os.close(fd)


def read_text(path: str | os.PathLike[str], what: str, *, max_bytes: int, limit: str = "") -> str:
    """:func:`read_bytes`, decoded as UTF-8 (else LayoutError giving the byte, not the text).

    >>> read_text("/dev/null", "spec file", max_bytes=10)
    Traceback (most recent call last):
    ...
    linear_layouts.core.errors.LayoutError: spec file '/dev/null': a character device, not a regular file (only a file's text is read)
    """
    data = read_bytes(path, what, max_bytes=max_bytes, limit=limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise LayoutError(f"{what} {quote(os.fspath(path))}: not UTF-8 text (byte {error.start + 1} cannot be "
                          "read)") from None


_WORD = re.compile(r"\w+")
_LONG_WORD = re.compile(r"\w{%d,}" % MIN_WORD)


@functools.lru_cache(maxsize=1)
def _vocabulary() -> frozenset[str]:
    """The words of this package's own source files: names and messages a file's text may share with us."""
    words: set[str] = set()
    here = Path(__file__).resolve()
    for source in sorted(here.parents[1].rglob("*.py")):  # the whole package, linear_layouts/
        if source == here:  # this module's examples are not vocabulary
            continue
        try:
            words.update(_LONG_WORD.findall(source.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    return frozenset(words)


def _content(texts: Iterable[str]) -> str:
    """The words of ``texts`` that are not vocabulary, one per line (searched for message words)."""
    vocabulary = _vocabulary()
    words = {w for text in texts for w in _LONG_WORD.findall(text) if w not in vocabulary}
    return "\n".join(sorted(words))


def _content_words(message: str, texts: Iterable[str]) -> set[str]:
    content = _content(texts)
    if not content:
        return set()
    return {w for w in _LONG_WORD.findall(message) if w in content}


def quotes_file(message: str, texts: Iterable[str]) -> bool:
    """Whether ``message`` carries a word of one of ``texts`` (a whole word or a part of one, as a quote cut
    to 80 characters would show it) that is not vocabulary of this package."""
    return bool(_content_words(message, list(texts)))


def redact(message: str, texts: Iterable[str]) -> str:
    """``message`` with every word that comes from one of ``texts`` (:func:`quotes_file`) replaced by
    :data:`WITHHELD`."""
    found = _content_words(message, list(texts))
    if not found:
        return message
    return _WORD.sub(lambda m: WITHHELD if m.group() in found else m.group(), message)
