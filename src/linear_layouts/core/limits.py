"""Size limits: the one policy for every operation that enumerates inputs, elements or text.

A LinearLayout is a handful of ints however large the tensor it describes, so the algebra itself is
never limited (beyond Triton's 32-bit dims). What is limited is work that grows with the *number* of
inputs or elements: evaluating every input (``apply_all``), simulating hardware accesses, planning and
generating code, drawing pictures, and parsing text. Every such operation checks the count against a
limit *before* allocating and raises :class:`LayoutError` naming the limit and how to raise it.

==============================  ==========  =================================================================
limit                           default     bounds (and why this value)
==============================  ==========  =================================================================
``MAX_ELEMENTS``                2**20       inputs or elements enumerated by evaluation, analyses, plans, codegen
                                            and the engine (elements of one tile). The largest real layouts (a
                                            256x256 tile, 8 warps, a CGA of 16: 2**20 elements, 20 in bits) pass;
                                            at the limit the slowest operation (a conversion kernel or an engine
                                            run) takes tens of seconds and every CLI command stays under 1 GB.
                                            Raise it: ``max_elements=N`` / ``--max-elements N``.
``MAX_PICTURE_ELEMENTS``        2**16       cells of a text view or picture (a 256x256 tile: a 0.6 MB text view,
                                            a ~20 MB SVG). Larger views are refused, not written at hundreds of
                                            MB. Raise it: ``max_elements=N`` on the view / ``--max-elements N``.
``MAX_DIM_LOG2``                31          bits of one in or out dim: Triton stores sizes and coordinates as
                                            int32. A format rule, not a resource limit: not overridable.
``MAX_SPEC_CHARS``              2**16       characters of one layout spec (a real one is under 2 KB; the JSON of
                                            a layout of 8 dims of 31 bases each is ~25 KB). At the limit the
                                            slowest parser (CuTe text) answers in well under a second.
``MAX_IR_BYTES``                2**24       bytes of a TTGIR / MLIR_ENABLE_DUMP file read by ``report`` (a real dump
                                            of a large kernel is a few MB; 16 MB is read and analysed in well under
                                            1 GB), and of the IR text given to
                                            ``triton_model.ir_text.parse_module``. Larger files are refused before they
                                            are read, larger texts before they are parsed (:func:`check_ir_text`).
                                            Raise it: ``max_bytes=N`` on the parser (the CLI has no option).
``MAX_SPEC_DEPTH``              32          nesting of brackets and calls in a spec (real ones: under 8), and of
                                            regions in an IR text (``scf.for`` in ``scf.for``: real ones under 8).
``MAX_INT_DIGITS``              40          digits of one integer in a spec (an int32 has 10).
``QUOTE_CHARS``                 80          characters of an input quoted in an error message (defined in
                                            :mod:`linear_layouts.errors`, whose ``LayoutError`` enforces it).
==============================  ==========  =================================================================

Parsers of other syntaxes (TTGIR, CuTe) reuse :func:`check_text` (length, nesting depth, integer digits)
and :func:`quote` so that every text input of the package is guarded the same way.

>>> check_count(1 << 20, MAX_ELEMENTS, "apply_all")
>>> check_count(1 << 30, MAX_ELEMENTS, "apply_all")
Traceback (most recent call last):
...
linear_layouts.core.errors.LayoutError: apply_all: 1073741824 elements exceed max_elements=1048576 (linear_layouts.limits.MAX_ELEMENTS); pass max_elements=N (CLI: --max-elements N) to raise it
"""

from __future__ import annotations

import re
from typing import Any

from linear_layouts.core.errors import QUOTE_CHARS, LayoutError

__all__ = [
    "MAX_ELEMENTS",
    "MAX_PICTURE_ELEMENTS",
    "MAX_DIM_LOG2",
    "MAX_SPEC_CHARS",
    "MAX_IR_BYTES",
    "MAX_SPEC_DEPTH",
    "MAX_INT_DIGITS",
    "QUOTE_CHARS",
    "check_limit",
    "check_count",
    "check_log2_count",
    "check_layout_size",
    "check_text",
    "check_ir_size",
    "check_ir_text",
    "parse_int",
    "unique_keys",
    "quote",
    "shorten",
    "excerpt",
]

MAX_ELEMENTS = 1 << 20
MAX_PICTURE_ELEMENTS = 1 << 16
MAX_DIM_LOG2 = 31
MAX_SPEC_CHARS = 1 << 16
MAX_IR_BYTES = 1 << 24
MAX_SPEC_DEPTH = 32
MAX_INT_DIGITS = 40

_NAMES = {MAX_ELEMENTS: "MAX_ELEMENTS", MAX_PICTURE_ELEMENTS: "MAX_PICTURE_ELEMENTS"}


def check_limit(value: Any, name: str = "max_elements") -> int:
    """``value`` as a limit: a positive int (not a bool), else LayoutError naming ``name``.

    >>> check_limit(1024)
    1024
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise LayoutError(f"{name} must be a positive int, got {quote(value)}")
    return value


def check_count(count: int, limit: int, what: str, *, keyword: str = "max_elements") -> None:
    """Raise LayoutError when ``count`` (elements, inputs, cells) exceeds ``limit``.

    The message names the operation, the count, the limit (and its default's name) and how to raise it.
    """
    limit = check_limit(limit, keyword)
    if count > limit:
        default = f" (linear_layouts.limits.{_NAMES[limit]})" if limit in _NAMES else ""
        raise LayoutError(
            f"{what}: {_count_text(count)} elements exceed {keyword}={limit}{default}; "
            f"pass {keyword}=N (CLI: --max-elements N) to raise it"
        )


def check_log2_count(log2: int, limit: int, what: str, *, keyword: str = "max_elements") -> None:
    """:func:`check_count` for ``2**log2`` elements, without building a huge int first."""
    limit = check_limit(limit, keyword)
    if log2 >= limit.bit_length():
        check_count(1 << min(log2, 4096), limit, what, keyword=keyword)


def check_layout_size(layout: Any, limit: int, what: str, *, keyword: str = "max_elements") -> None:
    """:func:`check_count` for the work of enumerating ``layout``: its inputs (``2**`` in bits) or its
    elements (``2**`` out bits), whichever is more."""
    bits = max(layout.total_in_dim_size_log2, layout.total_out_dim_size_log2)
    check_log2_count(bits, limit, what, keyword=keyword)


def _count_text(count: int) -> str:
    if count.bit_length() > 64:
        return f"about 2**{count.bit_length() - 1}"
    return str(count)


# --- text inputs ----------------------------------------------------------------------------------------

_TOKENS = re.compile(r"""[\[\](){}]|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'""", re.DOTALL)
_LONG_INT = re.compile(r"(?<![\w.])\d{%d,}" % (MAX_INT_DIGITS + 1))
_OPEN, _CLOSE = "[({", "])}"


def check_text(text: Any, what: str = "spec", *, max_chars: int = MAX_SPEC_CHARS,
               max_depth: int = MAX_SPEC_DEPTH) -> str:
    """``text`` if it is a string a parser may safely read, else LayoutError naming the rule broken.

    Checks, in this order, without recursion and in time linear in ``len(text)``: a ``str`` that
    encodes as UTF-8 (no lone surrogates), at most ``max_chars`` characters, brackets ``[({`` nested at
    most ``max_depth`` deep (outside quoted strings), no integer literal longer than ``MAX_INT_DIGITS``
    digits (Python refuses to read ints above 4300 digits; real layouts need 10).

    >>> check_text("BlockedLayout([1,4],[4,8],[4,1],[1,0])")
    'BlockedLayout([1,4],[4,8],[4,1],[1,0])'
    >>> check_text("[" * 40)
    Traceback (most recent call last):
    ...
    linear_layouts.core.errors.LayoutError: spec: brackets nested deeper than 32 levels at column 33 (linear_layouts.limits.MAX_SPEC_DEPTH)
    """
    if not isinstance(text, str):
        raise LayoutError(f"{what}: expected a string, got {type(text).__name__}")
    if len(text) > max_chars:
        raise LayoutError(f"{what}: {len(text)} characters exceed the limit of {max_chars} "
                          "(linear_layouts.limits.MAX_SPEC_CHARS)")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise LayoutError(f"{what}: character {error.start + 1} is not valid Unicode text "
                          f"(a lone surrogate {text[error.start]!r})") from None
    depth = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in _OPEN:
            depth += 1
            if depth > max_depth:
                raise LayoutError(f"{what}: brackets nested deeper than {max_depth} levels at column "
                                  f"{match.start() + 1} (linear_layouts.limits.MAX_SPEC_DEPTH)")
        elif token in _CLOSE:
            depth -= 1
    long_int = _LONG_INT.search(_TOKENS.sub(_blank_strings, text))
    if long_int:
        raise LayoutError(f"{what}: an integer of {len(long_int.group())} digits at column {long_int.start() + 1}; "
                          f"at most {MAX_INT_DIGITS} digits (linear_layouts.limits.MAX_INT_DIGITS)")
    return text


_UNSIGNED_INT = re.compile(r"\s*([0-9]+)\s*", re.ASCII)
_SIGNED_INT = re.compile(r"\s*([+-]?[0-9]+)\s*", re.ASCII)
#: The rule :func:`parse_int` enforces, as its error messages state it.
INT_RULE = "an integer is written in ASCII digits 0-9"


def parse_int(text: str, what: str, *, signed: bool = False, max_digits: int = MAX_INT_DIGITS) -> int:
    """The integer a user's ``text`` writes: ASCII digits ``0-9`` (a leading ``+`` / ``-`` when ``signed``),
    at most ``max_digits`` of them, blanks around; else a LayoutError naming ``what`` and the rule. The one
    reading of an integer in user text: Python's ``int`` also reads any Unicode decimal digit and underscores.

    ==============  ================  ==================================
    ``text``        ``int(text)``     ``parse_int(text, "--steps")``
    ==============  ================  ==================================
    ``" 32 "``      32                32
    ``"٣٢"``        32                LayoutError (Arabic-Indic digits)
    ``"1_000"``     1000              LayoutError
    ``"-1"``        -1                -1 with ``signed=True``, else LayoutError
    ==============  ================  ==================================

    >>> parse_int("32", "--steps"), parse_int("-1", "--port", signed=True)
    (32, -1)
    >>> parse_int("٣٢", "--steps")
    Traceback (most recent call last):
    ...
    linear_layouts.core.errors.LayoutError: --steps: expected a non-negative integer, got '٣٢' (an integer is written in ASCII digits 0-9)
    """
    match = (_SIGNED_INT if signed else _UNSIGNED_INT).fullmatch(text) if isinstance(text, str) else None
    if match is None:
        sign = ", optionally signed" if signed else ""
        raise LayoutError(f"{what}: expected {'an' if signed else 'a non-negative'} integer, got {quote(text)} "
                          f"({INT_RULE}{sign})")
    if len(match[1].lstrip("+-")) > max_digits:
        raise LayoutError(f"{what}: an integer of {len(match[1].lstrip('+-'))} digits; at most {max_digits} digits")
    return int(match[1])


def unique_keys(pairs: list[tuple[str, Any]], what: str = "json") -> dict[str, Any]:
    """``json.loads``' ``object_pairs_hook`` for every JSON text a user sends: the object as a dict, a key given
    twice a LayoutError naming ``what`` (``json.loads`` alone keeps the last value silently).

    >>> import json
    >>> json.loads('{"a": 1, "b": 2}', object_pairs_hook=unique_keys)
    {'a': 1, 'b': 2}
    >>> json.loads('{"a": 1, "a": 2}', object_pairs_hook=unique_keys)
    Traceback (most recent call last):
    ...
    linear_layouts.core.errors.LayoutError: json: key 'a' given twice in one object
    """
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise LayoutError(f"{what}: key {quote(key)} given twice in one object")
        result[key] = value
    return result


def check_ir_size(size: int, what: str, *, max_bytes: int = MAX_IR_BYTES, keyword: str | None = "max_bytes") -> None:
    """Raise LayoutError when an IR text or dump of ``size`` bytes exceeds ``max_bytes``: the message names
    ``what``, the size, the limit (and its default's name) and, with a ``keyword``, how to raise it.

    >>> check_ir_size(1 << 24, "text")
    >>> check_ir_size(100, "text", max_bytes=64)
    Traceback (most recent call last):
    ...
    linear_layouts.core.errors.LayoutError: text has 100 bytes, above the 64 of an IR text or dump: keep the last module, or pass max_bytes=N to raise it
    """
    max_bytes = check_limit(max_bytes, keyword or "max_bytes")
    if size > max_bytes:
        default = " (linear_layouts.limits.MAX_IR_BYTES)" if max_bytes == MAX_IR_BYTES else ""
        how = f", or pass {keyword}=N to raise it" if keyword else ""
        raise LayoutError(f"{what} has {size} bytes, above the {max_bytes} of an IR text or dump{default}: "
                          f"keep the last module{how}")


def check_ir_text(text: str, what: str = "text", *, max_bytes: int = MAX_IR_BYTES) -> str:
    """``text`` if its UTF-8 encoding has at most ``max_bytes`` bytes (:func:`check_ir_size`), counted only
    when its length could exceed them (a character is at most 4 bytes), and it holds no NUL character (MLIR
    writes none; inside a name it would cut the name short and the op would read as another).

    >>> check_ir_text("tt.func @k() {}")
    'tt.func @k() {}'
    """
    max_bytes = check_limit(max_bytes, "max_bytes")
    if 4 * len(text) > max_bytes:
        size = len(text) if len(text) > max_bytes else len(text.encode("utf-8", "surrogatepass"))
        check_ir_size(size, what, max_bytes=max_bytes)
    nul = text.find("\0")
    if nul >= 0:
        line, column = text.count("\n", 0, nul) + 1, nul - text.rfind("\n", 0, nul)
        raise LayoutError(f"{what}: a NUL character at line {line}, column {column}: IR text has none")
    return text


def _blank_strings(match: re.Match[str]) -> str:
    token = match.group()
    return token if len(token) == 1 else " " * len(token)


# --- quoting inputs in error messages -------------------------------------------------------------------

def quote(value: Any, limit: int = QUOTE_CHARS) -> str:
    """``repr(value)`` cut to about ``limit`` characters, for error messages (never a whole file).

    Huge ints are described by their size instead of printed (Python refuses to print ints above
    4300 digits); containers are summarised past their first items.

    >>> quote("x" * 1000)
    "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'... (1000 characters)"
    >>> quote(1 << 100000)
    'an int of 100001 bits'
    """
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"an int of {value.bit_length()} bits"
    if isinstance(value, str):
        text = repr(value[: limit + 1])
        if len(value) <= limit and len(text) <= limit + 2:
            return text
        return f"{value[: max(8, limit - 30)]!r}... ({len(value)} characters)"
    text = _short_repr(value, limit)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _short_repr(value: Any, limit: int, depth: int = 0) -> str:
    """repr of ``value`` that stops after about ``limit`` characters (and never prints a huge int)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"an int of {value.bit_length()} bits" if value.bit_length() > 200 else repr(value)
    if isinstance(value, (list, tuple, set, frozenset, dict)) and depth < 4:
        if isinstance(value, dict):
            items = (f"{_short_repr(k, limit, depth + 1)}: {_short_repr(v, limit, depth + 1)}"
                     for k, v in value.items())
            left, right = "{", "}"
        else:
            items = (_short_repr(v, limit, depth + 1) for v in value)
            left, right = ("[", "]") if isinstance(value, list) else ("(", ")") if isinstance(value, tuple) else ("{", "}")
        parts, size = [], 0
        for item in items:
            parts.append(item)
            size += len(item) + 2
            if size > limit:
                parts.append("...")
                break
        return left + ", ".join(parts) + right
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a broken __repr__ must not hide the real error
        return f"<{type(value).__name__}>"
    return text if len(text) <= limit + 8 else text[:limit] + "..."


def shorten(text: str, limit: int = QUOTE_CHARS) -> str:
    """``text`` (a message that may contain input) cut to about ``limit`` characters.

    >>> shorten("abc" * 100, 20)
    'abcabcabcabcabcabcab... (300 characters)'
    """
    text = str(text)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def excerpt(text: str, index: int, width: int = QUOTE_CHARS) -> str:
    """Two lines for a parse error: about ``width`` characters of ``text``'s line around ``index``
    (0-based), and a caret under ``text[index]``. Never the whole input.

    >>> print(excerpt("BlockedLayout([1,4],[4,8],[4,1],[1,0]", 37))
      BlockedLayout([1,4],[4,8],[4,1],[1,0]
                                           ^
    """
    index = max(0, min(index, len(text)))
    start_of_line = text.rfind("\n", 0, index) + 1
    end_of_line = text.find("\n", index)
    line = text[start_of_line: len(text) if end_of_line < 0 else end_of_line]
    column = index - start_of_line
    start = max(0, min(column - width // 2, len(line) - width))
    end = start + width
    left, right = ("..." if start > 0 else ""), ("..." if end < len(line) else "")
    shown = "".join(c if c.isprintable() else " " for c in line[start:end])
    return f"  {left}{shown}{right}\n  {' ' * (len(left) + column - start)}^"
