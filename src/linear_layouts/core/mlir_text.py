"""Bracket-aware scanning of MLIR text (TTIR / TTGIR types, attributes and op lines): the positions at
nesting depth 0, outside ``<>``, ``()``, ``{}``, ``[]`` and double quotes, where ``->`` is an arrow and
no bracket; the split of a shaped type's body into its static shape and element type; and the regular
expressions of MLIR's tokens (value names, result lists, attribute dictionaries, shapes, types) as ``re``
source, to compose larger patterns from. The one home of this scan, of that split and of those patterns
for :mod:`linear_layouts.layouts.ttgir_text`, :mod:`linear_layouts.triton_model.ir_text` and the readers built on it.

>>> split_top("tensor<4x8xf16, #a>, i32")
['tensor<4x8xf16, #a>', 'i32']
>>> find_top("(a, b) -> (c)", "->")
7
>>> re.findall(VALUE_NAME, "%y = arith.addf %x_1, %arg0 : f32")
['%y', '%x_1', '%arg0']
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from linear_layouts.core.arguments import checked
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import MAX_INT_DIGITS, parse_int, quote

__all__ = ["split_top", "find_top", "closing", "shape_and_element", "NAME_CHAR", "VALUE_NAME", "VALUE_USE",
           "NAME_END", "RESULT_LIST", "ATTR_DICT", "DIGITS", "STATIC_SHAPE", "INTEGER_TYPE", "I32_ARRAY",
           "pointee", "read_ints"]

# -- token patterns (``re`` source, to compose: ``re.compile(rf"({VALUE_NAME})\s*:")``) ----------------
#: the digits of an integer as a reader captures them, to convert with ``limits.parse_int`` (or
#: :func:`read_ints`): ``\d`` is any script's decimal digit on purpose, so that ``٣٢`` is captured and refused
#: naming the rule (ASCII ``0-9``), never skipped as no match nor read as 32 by ``int``
DIGITS = r"\d+"
#: one character of a name after its sigil (``%`` value, ``#`` alias, ``@`` symbol; MLIR's suffix-id):
#: a letter, a digit or one of ``_ $ . -``, as in ``x_19``, ``blocked1``, ``matmul_kernel``
NAME_CHAR = r"[\w$.-]"
#: an SSA value name: ``%arg0``, ``%x_19``, ``%12``
VALUE_NAME = rf"%{NAME_CHAR}+"
#: a value name, or one result of a multi-result op: ``%3#1`` (``ir_text``'s name for result 1 of ``%3:2``)
VALUE_USE = rf"{VALUE_NAME}(?:#{DIGITS})?"
#: a lookahead: the name before it ends here (``%3`` not followed by ``0`` as in ``%30``, nor ``#1`` as in ``%3#1``)
NAME_END = rf"(?!{NAME_CHAR}|#)"
#: the results an op defines, before its ``=``: ``%y``, ``%a, %b``, ``%3:2`` (a count for a multi-result op)
RESULT_LIST = rf"{VALUE_NAME}(?::{DIGITS})?(?:\s*,\s*{VALUE_NAME}(?::{DIGITS})?)*"
#: an attribute dictionary without nested braces: ``{tt.divisibility = 16 : i32}``
ATTR_DICT = r"\{[^{}]*\}"
#: a static shape: ``128x64``, ``16`` (its sizes read by :func:`shape_and_element`, ``DIGITS``' rule)
STATIC_SHAPE = rf"(?:{DIGITS}x)*{DIGITS}"
#: an integer type: ``i32``, ``i1``, ``index``
INTEGER_TYPE = r"i[0-9]+|index"
#: a dense i32 array attribute, its elements the group: ``array<i32: 1, 0>`` (``1, 0``, read by :func:`read_ints`)
I32_ARRAY = r"array<i32: ([\d, ]+)>"

#: the start of a pointer type ``!tt.ptr<POINTEE[, ADDRESS_SPACE]>`` (``pointee`` reads the rest)
_POINTER = "!tt.ptr<"

_OPEN = "<({["
_CLOSE = ">)}]"


#: the characters that change the depth or quoting (``->`` is an arrow, one token)
_SPECIAL = re.compile(r'"|->|[<({\[>)}\]]')


def _top_spans(text: str, start: int = 0) -> Iterator[tuple[int, int]]:
    """``_top_level``'s indices as non-empty ranges ``[a, b)``, in order: the depth and quoting change
    only at the brackets, quotes and arrows, found with one regular-expression scan, so the text between
    two of them is one range (the scan costs a step per bracket, not per character)."""
    depth, quoted, pos = 0, False, start
    for m in _SPECIAL.finditer(text, start):
        i, token = m.start(), m.group()
        visible = depth == 0 and not quoted
        if visible and pos < i + 1:
            yield pos, i + 1  # the plain characters before the token, and the token's first one
        pos = m.end()
        if token == '"':
            quoted = not quoted
        elif quoted or token == "->":
            pass
        elif token in _OPEN:
            depth += 1
        else:
            depth -= 1
    if depth == 0 and not quoted and pos < len(text):
        yield pos, len(text)


def _top_level(text: str, start: int = 0) -> Iterator[int]:
    """The indices ``i >= start`` at which ``text[i]`` begins at depth 0 (counted from ``start``) outside
    quotes; the ``>`` of an arrow ``->`` is skipped.

    >>> list(_top_level('a<b>"c"d'))
    [0, 1, 4, 7]
    """
    for a, b in _top_spans(text, start):
        yield from range(a, b)


@checked
def split_top(text: str, sep: str = ",") -> list[str]:
    """``text`` split at ``sep`` at depth 0 (outside brackets and quotes), each part stripped; ``[]``
    for blank text.

    >>> split_top("a<b, c>, (d, e) -> f, g")
    ['a<b, c>', '(d, e) -> f', 'g']
    """
    return list(_split_top(text, sep))


@checked
def find_top(text: str, needle: str, *, last: bool = False, start: int = 0) -> int:
    """Index of ``needle`` at depth 0 (outside brackets and quotes) in ``text[start:]``, counted in
    ``text``: the first, or the ``last``; -1 if none. A closing bracket at depth 0 ends the scan's
    first level, so ``find_top(t, ">", start=i + 1)`` is the ``>`` closing a ``<`` at ``i``.

    >>> find_top("f(a, b) : x : y", " : ", last=True)
    11
    """
    if not 0 <= start <= len(text):
        raise LayoutError(f"find_top: start must be in 0..len(text) = {len(text)}, got {start}")
    return _find_top(text, needle, bool(last), start)


#: how many answers of the scans are kept, by their arguments (an IR's types and attributes repeat)
_SCAN_CACHE = 1 << 14
#: the opening brackets, and the closing ones (an arrow's ``>`` among them: ``_net_depth`` counts it back)
_OPENERS = re.compile(r"[<({\[]")
_CLOSERS = re.compile(r"[>)}\]]")


def _net_depth(text: str, a: int, b: int, start: int) -> int:
    """How much deeper the bracket scan begun at ``start`` is at ``b`` than at ``a`` (``start <= a <= b``),
    for text without quotes: the openers in ``[a, b)`` less the closers, the ``>`` of an arrow ``->`` (its
    ``-`` at or after ``start``) no closer.

    >>> _net_depth("f<a, (b) -> c", 0, 13, 0)
    1
    """
    arrows = text.count("->", max(a - 1, start), b)
    return len(_OPENERS.findall(text, a, b)) - len(_CLOSERS.findall(text, a, b)) + arrows


def _arrow_head(text: str, i: int, start: int) -> bool:
    """Whether ``text[i]`` is the ``>`` of an arrow ``->`` for a scan begun at ``start`` (no index of its own).

    >>> _arrow_head("a->b", 2, 0), _arrow_head("a->b", 2, 2)
    (True, False)
    """
    return text[i] == ">" and i > start and text[i - 1] == "-"


@functools.lru_cache(maxsize=_SCAN_CACHE)
def _split_top(text: str, sep: str) -> tuple[str, ...]:
    """``split_top``'s parts as a tuple (kept by ``(text, sep)``): where ``text`` has no quote, the depth at each
    occurrence of ``sep`` counted from the last (``_net_depth``), else by the token scan (``_top_spans``).

    >>> _split_top("tensor<4x8xf16, #a>, i32", ",")
    ('tensor<4x8xf16, #a>', 'i32')
    """
    if not sep or '"' in text:
        return _split_top_scanned(text, sep)
    parts, begin, depth, at = [], 0, 0, 0
    arrow = sep[0] == ">"
    i = text.find(sep)
    while i >= 0:
        depth += _net_depth(text, at, i, 0)
        at = i
        if depth == 0 and not (arrow and _arrow_head(text, i, 0)):
            parts.append(text[begin:i].strip())
            begin = i + len(sep)
            i = text.find(sep, begin)
        else:
            i = text.find(sep, i + 1)
    tail = text[begin:].strip()
    if tail or parts:
        parts.append(tail)
    return tuple(parts)


def _split_top_scanned(text: str, sep: str) -> tuple[str, ...]:
    """``_split_top`` by the token scan (``_top_spans``), any text and ``sep``.

    >>> _split_top_scanned('a, "b, c", d', ",")
    ('a', '"b, c"', 'd')
    """
    parts, begin = [], 0
    for a, b in _top_spans(text):
        i = text.find(sep, max(a, begin), b - 1 + len(sep))  # a ``sep`` beginning in [a, b)
        while i >= 0:
            parts.append(text[begin:i].strip())
            begin = i + len(sep)
            i = text.find(sep, max(i + 1, begin), b - 1 + len(sep))
    tail = text[begin:].strip()
    if tail or parts:
        parts.append(tail)
    return tuple(parts)


@functools.lru_cache(maxsize=_SCAN_CACHE)
def _find_top(text: str, needle: str, last: bool, start: int) -> int:
    """``find_top`` of a valid ``start`` (kept by its arguments): where ``text[start:]`` has no quote, the
    occurrences of ``needle`` tried in turn, the depth at each counted (``_net_depth``), else by the token scan.

    >>> _find_top("f(a, b) : x : y", " : ", True, 0), _find_top("a<b>c>", ">", False, 2)
    (11, 3)
    """
    if not needle or text.find('"', start) >= 0:
        return _find_top_scanned(text, needle, last, start)
    arrow = needle[0] == ">"
    if last:
        i = text.rfind(needle, start)
        while i >= 0:
            if _net_depth(text, start, i, start) == 0 and not (arrow and _arrow_head(text, i, start)):
                return i
            i = text.rfind(needle, start, i + len(needle) - 1)
        return -1
    depth, at = 0, start
    i = text.find(needle, start)
    while i >= 0:
        depth += _net_depth(text, at, i, start)
        at = i
        if depth == 0 and not (arrow and _arrow_head(text, i, start)):
            return i
        i = text.find(needle, i + 1)
    return -1


def _find_top_scanned(text: str, needle: str, last: bool, start: int) -> int:
    """``_find_top`` by the token scan (``_top_spans``), any text and ``needle``.

    >>> _find_top_scanned('a "b" b', "b", False, 0)
    6
    """
    found = -1
    for a, b in _top_spans(text, start):
        end = b - 1 + len(needle)  # a ``needle`` beginning in [a, b)
        i = text.rfind(needle, a, end) if last else text.find(needle, a, end)
        if i >= 0:
            if not last:
                return i
            found = i
    return found


@checked
def closing(text: str, start: int) -> int:
    """Index of the bracket that closes the opening bracket ``text[start]``; -1 if it is not closed.

    >>> closing("tensor<4x!tt.ptr<f32>, #a> rest", 6)
    25
    """
    if not 0 <= start < len(text):
        raise LayoutError(f"closing: start must index text (0 <= start < len(text) = {len(text)}), got {start}")
    opener = text[start]
    if opener not in _OPEN:
        raise LayoutError(f"start: text[{start}] is {opener!r}, not an opening bracket")
    return _find_top(text, _CLOSE[_OPEN.index(opener)], False, start + 1)


@checked
def shape_and_element(text: str) -> tuple[tuple[int, ...], str]:
    """The body of a shaped type (``SIZExSIZEx...xELEMENT``, ``text`` stripped) as (static shape, element
    text): the longest prefix of ``<decimal digits>x`` groups is the shape, the rest (stripped) the element,
    which may be empty or not a type name (the caller checks it). A size of more than ``limits.MAX_INT_DIGITS``
    digits is a LayoutError.

    >>> shape_and_element("128x64xf16")
    ((128, 64), 'f16')
    >>> shape_and_element("4x?x!tt.ptr<f32>")
    ((4,), '?x!tt.ptr<f32>')
    """
    parts = text.strip().split("x")
    k = 0
    while k < len(parts) - 1 and parts[k].isdecimal():
        if len(parts[k]) > MAX_INT_DIGITS:
            raise LayoutError(f"type {quote(text)}: a size of {len(parts[k])} digits, more than "
                              f"{MAX_INT_DIGITS} (linear_layouts.limits.MAX_INT_DIGITS)")
        k += 1
    sizes = tuple(parse_int(d, f"type {quote(text)}: a size") for d in parts[:k])  # isdecimal() admits '٣'
    return sizes, "x".join(parts[k:]).strip()


def read_ints(text: str, what: str, *, signed: bool = False) -> tuple[int, ...]:
    """The integers of ``text``, a comma-separated list (an ``I32_ARRAY`` group, a ``dense<[...]>`` body), each
    read by ``limits.parse_int``; an item that is no integer (empty, or digits other than ASCII 0-9) a LayoutError
    naming ``what`` and the rule.

    >>> read_ints("1, 0", "order")
    (1, 0)
    >>> read_ints("١, ٠", "tt.trans's order")
    Traceback (most recent call last):
    ...
    linear_layouts.core.errors.LayoutError: tt.trans's order: expected a non-negative integer, got '١' (an integer is written in ASCII digits 0-9)
    """
    return tuple(parse_int(item, what, signed=signed) for item in text.split(","))


@checked
def pointee(text: str, argument: str = "text") -> str | None:
    """What a pointer type points to: ``!tt.ptr<T>`` and ``!tt.ptr<T, ADDRESS_SPACE>`` -> ``T``; a tensor of
    pointers (``tensor<SHAPEx!tt.ptr<T>, ...>``) -> the tensor of ``T`` (the type a ``tt.load`` of it
    gives), spelled as ``text`` is; None where ``text`` (stripped) is no pointer type nor tensor of them.
    ``LayoutError`` naming ``argument`` (the caller's name for ``text``) for a pointer type that is not
    closed or has no pointee.

    ====================================  ========================
    ``text``                              ``pointee(text)``
    ====================================  ========================
    ``!tt.ptr<f16>``                      ``f16``
    ``!tt.ptr<f32, 3>``                   ``f32``
    ``tensor<64x!tt.ptr<f32>, #a>``       ``tensor<64xf32, #a>``
    ``tensor<64xf32, #a>``, ``i32``       None
    ====================================  ========================

    >>> pointee("!tt.ptr<f16>"), pointee("tensor<64x!tt.ptr<f32>,#a>"), pointee("f16")
    ('f16', 'tensor<64xf32,#a>', None)
    """
    text = text.strip()
    if text.startswith("tensor<"):
        end = closing(text, len("tensor"))
        if end != len(text) - 1:
            raise LayoutError(f"{argument}: the tensor type {text[:60]!r} must end with the '>' of its 'tensor<'")
        parts = split_top(text[len("tensor<"):end])
        _, element = shape_and_element(parts[0] if parts else "")
        if not element.startswith(_POINTER):
            return None
        at = text.index(element, len("tensor<"))  # after the shape's digits and x's
        return text[:at] + pointee(element, argument) + text[at + len(element):]
    if not text.startswith(_POINTER):
        return None
    end = closing(text, len(_POINTER) - 1)
    if end != len(text) - 1:
        raise LayoutError(f"{argument}: the pointer type {text[:60]!r} must end with the '>' of its '!tt.ptr<'")
    parts = split_top(text[len(_POINTER):end])
    if not parts or not parts[0] or len(parts) > 2 or len(parts) == 2 and not parts[1].isdecimal():
        raise LayoutError(f"{argument}: the pointer type {text[:60]!r} must be !tt.ptr<POINTEE> or "
                          "!tt.ptr<POINTEE, ADDRESS_SPACE> (e.g. !tt.ptr<f16>, !tt.ptr<f32, 3>)")
    return parts[0]
