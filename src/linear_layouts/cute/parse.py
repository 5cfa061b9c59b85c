"""Read CuTe text: the print form, C++ and CuTe DSL, without ``eval``.

Accepted (whitespace is free):

* print form, as CuTe's C++ ``print`` / ``operator<<`` writes it: ``(8,64):(64,1)``, ``64:1``,
  ``((4,8),(2,2)):((32,1),(16,8))``, static ints as ``_64`` and ``_-1`` (``Int<-1>`` prints ``_-1``);
  swizzles ``Sw<3,4,3>`` / ``Sw<1,0,-1>`` (also ``Swizzle<3,4,3>``, ``{}`` allowed); compositions with ``o``
  (or ``∘``) and an optional offset: ``Sw<3,4,3> o _0 o (_8,_64):(_64,_1)``,
  ``Swizzle<3,4,3> o (8,64):(64,1)``; a thread-value layout ``TV(16,8) ((4,8),(2,2)):((32,1),(16,8))``;
* pycute's ``str``: ``(8, 64):(64, 1)``, ``(8,):(1,)``, ``SW_3_4_3``, ``SW_1_0_-1 o 0 o (2, 8):(1, 2)``;
* C++: ``composition(Swizzle<3,4,3>{}, Layout<Shape<_8,_64>, Stride<_64,_1>>{})``,
  ``make_composed_layout(a, _0{}, b)``, ``make_layout(make_shape(8,64), make_stride(64,1))``,
  ``Int<N>`` / ``C<N>`` / ``_N``, CuTe's negative aliases ``_m1`` .. ``_m10``, ``_m12``, ``_m16``, ``_m24``,
  ``_m32`` (``using _m1 = Int<-1>``: source only, CuTe never prints them), an optional ``cute::`` prefix;
* CuTe DSL: ``cute.make_layout((8, 64), stride=(64, 1))``, ``cute.make_swizzle(3, 4, 3)``,
  ``cute.make_composed_layout(outer, 0, inner)``.

Bounded by the package's one text policy (``limits.check_text``: length, bracket depth, integer digits),
``limits.MAX_SPEC_DEPTH`` nested ``<>``/``()`` and ``MAX_TERMS`` functions per composition; every mistake is a
LayoutError with the column and an excerpt of the text (``limits.excerpt``).

>>> print(parse_cute("Swizzle<3,4,3> o (8,64):(64,1)"))
Sw<3,4,3> o 0 o (8,64):(64,1)
>>> print(parse_cute("composition(Swizzle<3,4,3>{}, Layout<Shape<_8,_64>, Stride<_64,_1>>{})"))
Sw<3,4,3> o 0 o (8,64):(64,1)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from linear_layouts.cute.layout import ComposedLayout, Layout, Swizzle, TVLayout
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import MAX_INT_DIGITS, MAX_SPEC_DEPTH, check_text, excerpt, parse_int, quote

__all__ = ["parse_cute", "looks_like_cute", "MAX_TERMS"]

MAX_TERMS = 64  #: most functions in one ``A o B o ...`` chain

_TOKEN = re.compile(r"\s*(?:(?P<int>-?\d+)|(?P<static>_-\d+)|(?P<name>[A-Za-z_][A-Za-z_0-9]*(?:(?:::|\.)[A-Za-z_][A-Za-z_0-9]*)*)"
                    r"|(?P<sym>[<>(){},:=∘]))")
_STATIC = re.compile(r"^_(m?)(\d+)$")
#: CuTe's ``using _mN = Int<-N>`` aliases (``integral_constant.hpp``); any other ``_mN`` is no CuTe name.
NEGATIVE_ALIASES = frozenset({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 16, 24, 32})
_STARTS = re.compile(r"^\s*(?:cute(?:::|\.)\s*)?(?:Sw<|Swizzle\s*<|SW_|TV\s*\(|composition\s*\(|make_composed_layout\s*\(|"
                     r"make_layout\s*\(|Layout\s*<|make_swizzle\s*\()")
_SHAPE_TEXT = re.compile(r"^[\s()\d,_\-]*\d[\s()\d,_\-]*$|^\s*\(\s*\)\s*$")


def looks_like_cute(text: str) -> bool:
    """Whether ``text`` is meant as CuTe (the spec parser dispatches on this): it starts with a CuTe
    name, or with a shape (digits, brackets, commas) followed by ``:``.

    >>> looks_like_cute("(8,64):(64,1)"), looks_like_cute("(lambda: 1)()"), looks_like_cute("Sw<3,4,3> o 64:1")
    (True, False, True)
    """
    if not isinstance(text, str):
        return False
    return bool(_STARTS.match(text)) or (":" in text and bool(_SHAPE_TEXT.match(text.split(":", 1)[0])))


@dataclass(frozen=True)
class _Token:
    kind: str  # int | name | sym | end
    text: str
    column: int


def _tokens(text: str) -> list[_Token]:
    out, pos, end = [], 0, len(text.rstrip())  # linear: no slice of the rest per token
    while pos < end:
        m = _TOKEN.match(text, pos)
        if m is None:
            column = pos + len(text[pos:]) - len(text[pos:].lstrip()) + 1
            raise _error(text, column, f"unexpected character {text[column - 1]!r}")
        kind = m.lastgroup or "sym"
        value = m.group(kind)
        column = m.start(kind) + 1
        if kind == "static":  # CuTe prints Int<-1> as _-1
            kind, value = "int", value[1:]
        if kind == "int" and len(value.lstrip("-")) > MAX_INT_DIGITS:
            raise _error(text, column, f"integer longer than {MAX_INT_DIGITS} digits")
        if kind == "int":  # \d also matches other scripts' digits ('٣'): the one rule of limits.parse_int
            try:
                parse_int(value, "integer", signed=True)
            except LayoutError as error:
                raise _error(text, column, str(error)) from None
        if kind == "name" and _STATIC.match(value.split("::")[-1]):
            kind = "int"
            sign, digits = _STATIC.match(value.split("::")[-1]).groups()  # type: ignore[union-attr]
            if len(digits) > MAX_INT_DIGITS:
                raise _error(text, column, f"integer longer than {MAX_INT_DIGITS} digits")
            if sign and int(digits) not in NEGATIVE_ALIASES:
                raise _error(text, column, f"_m{digits} is no CuTe name (CuTe defines _m1.._m10, _m12, _m16, _m24, "
                                           f"_m32); write Int<-{digits}> or, as CuTe prints it, _-{digits}")
            value = ("-" if sign else "") + digits
        out.append(_Token(kind, value, column))
        pos = m.end()
    out.append(_Token("end", "", len(text) + 1))
    return out


def _error(text: str, column: int, message: str) -> LayoutError:
    return LayoutError(f"CuTe spec: {message} (column {column})\n{excerpt(text, column - 1)}")


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.i = 0
        self.depth = 0

    # -- token helpers -----------------------------------------------------------------------------
    @property
    def peek(self) -> _Token:
        return self.tokens[self.i]

    def fail(self, message: str, token: _Token | None = None) -> LayoutError:
        token = token or self.peek
        return _error(self.text, token.column, message)

    def take(self, text: str | None = None, kind: str | None = None) -> _Token:
        token = self.peek
        if (text is not None and token.text != text) or (kind is not None and token.kind != kind):
            want = repr(text) if text is not None else kind
            got = repr(token.text) if token.kind != "end" else "the end"
            raise self.fail(f"expected {want}, got {got}")
        self.i += 1
        return token

    def accept(self, text: str) -> bool:
        if self.peek.text == text and self.peek.kind == "sym":
            self.i += 1
            return True
        return False

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_SPEC_DEPTH:
            raise self.fail(f"nested deeper than {MAX_SPEC_DEPTH} levels")

    def name(self) -> str | None:
        """The current name without a ``cute::`` / ``cute.`` prefix, or None."""
        if self.peek.kind != "name":
            return None
        text = self.peek.text
        for prefix in ("cute::", "cute."):
            if text.startswith(prefix):
                text = text[len(prefix):]
        return text

    def integer(self) -> int:
        token = self.peek
        name = self.name()
        if name in ("Int", "C"):  # Int<N>{} / C<N>{}
            self.i += 1
            self.take("<")
            value = int(self.take(kind="int").text)
            self.take(">")
            self.accept_braces()
            return value
        value = int(self.take(kind="int").text) if token.kind == "int" else None
        if value is None:
            raise self.fail("expected an integer", token)
        self.accept_braces()
        return value

    def accept_braces(self) -> None:
        if self.accept("{"):
            self.take("}")

    # -- grammar -----------------------------------------------------------------------------------
    def parse(self) -> Any:
        value = self.chain()
        if self.peek.kind != "end":
            raise self.fail(f"unexpected {self.peek.text!r} after a complete layout")
        return value

    def chain(self) -> Any:
        """``term (o term)*``; a bare integer between two ``o`` is the offset of that composition."""
        terms: list[tuple[Any, _Token]] = [(self.term(), self.peek)]
        while self.peek.text in ("o", "∘"):
            if len(terms) >= MAX_TERMS:
                raise self.fail(f"more than {MAX_TERMS} terms in one composition")
            self.i += 1
            terms.append((self.term(), self.peek))
        value, _ = terms[-1]
        if isinstance(value, int):
            raise self.fail("a composition must end with a layout or a swizzle, not an offset", terms[-1][1])
        offset = 0
        for term, where in reversed(terms[:-1]):
            if isinstance(term, int):
                offset += term
                continue
            if isinstance(term, TVLayout) or isinstance(value, TVLayout):
                raise self.fail("a thread-value layout cannot be composed", where)
            value = ComposedLayout(term, offset, value)
            offset = 0
        if offset:
            raise self.fail("an offset must sit between two functions (A o offset o B)")
        return value

    def term(self) -> Any:
        token = self.peek
        name = self.name()
        try:
            if name in ("Sw", "Swizzle"):
                return self.swizzle()
            if name is not None and name.startswith("SW_"):  # pycute's str: SW_3_4_3, SW_1_0_-1
                return self.pycute_swizzle(token, name)
            if name == "TV":
                self.i += 1
                tile = self.int_tuple()
                self.enter()  # TV(..) TV(..) ...: each one a level (at most MAX_SPEC_DEPTH), not a recursion
                layout = self.term()
                self.depth -= 1
                if not isinstance(layout, Layout):
                    raise self.fail("TV(tile) must be followed by a layout shape:stride", token)
                return TVLayout(layout, tile if isinstance(tile, tuple) else (tile,))
            if name == "composition":
                return self.call_composition()
            if name == "make_composed_layout":
                return self.call_make_composed()
            if name == "make_layout":
                return self.call_make_layout()
            if name == "make_swizzle":
                self.i += 1
                self.take("(")
                b, m, s = self.integer(), (self.take(","), self.integer())[1], (self.take(","), self.integer())[1]
                self.take(")")
                return Swizzle(b, m, s)
            if name == "Layout":
                return self.cpp_layout()
        except LayoutError as error:
            if str(error).startswith("CuTe spec:"):
                raise
            raise self.fail(str(error), token) from None
        if token.kind == "int" or token.text == "(" or name in ("Int", "C"):
            shape = self.int_tuple()
            if not self.accept(":"):
                if isinstance(shape, int):
                    return shape  # an offset inside a composition chain
                raise self.fail("expected ':' between shape and stride")
            stride = self.int_tuple()
            try:
                return Layout(shape, stride)
            except LayoutError as error:
                raise self.fail(str(error), token) from None
        raise self.fail(f"expected a layout shape:stride, a swizzle Sw<B,M,S> or a CuTe call, got "
                        f"{quote(token.text)}" if token.kind != "end" else "expected a layout, got the end")

    def pycute_swizzle(self, token: _Token, name: str) -> Swizzle:
        """pycute's ``f"SW_{bits}_{base}_{shift}"``: a negative shift is a separate ``-S`` token right after
        ``SW_B_M_``."""
        self.i += 1
        parts = name[3:].split("_")
        if len(parts) == 3 and parts[2] == "" and self.peek.kind == "int" and self.peek.text.startswith("-") \
                and self.peek.column == token.column + len(token.text):
            parts[2] = self.take(kind="int").text
        if len(parts) != 3 or not all(p.lstrip("-").isdigit() and not p[1:].startswith("-") for p in parts) \
                or parts[0].startswith("-") or parts[1].startswith("-"):
            raise self.fail("expected SW_B_M_S as pycute prints a swizzle (a negative shift: SW_1_0_-1)", token)
        return Swizzle(*(int(p) for p in parts))

    def int_tuple(self) -> Any:
        if self.accept("("):
            self.enter()
            if self.accept(")"):  # the empty tuple: CuTe's rank-0 layout ():() of a full slice
                self.depth -= 1
                return ()
            items = [self.int_tuple()]
            while self.accept(","):
                if self.peek.text == ")":
                    break  # Python's (8,) one-tuple
                items.append(self.int_tuple())
            self.take(")")
            self.depth -= 1
            return tuple(items)
        return self.integer()

    def swizzle(self) -> Swizzle:
        self.i += 1
        close = ">" if self.accept("<") else (self.take("(") and ")")
        b = self.integer()
        self.take(",")
        m = self.integer()
        self.take(",")
        s = self.integer()
        self.take(close)
        self.accept_braces()
        return Swizzle(b, m, s)

    def call_composition(self) -> Any:
        self.i += 1
        self.take("(")
        self.enter()
        outer = self.chain()
        self.take(",")
        inner = self.chain()
        self.take(")")
        self.depth -= 1
        return ComposedLayout(outer, 0, inner)

    def call_make_composed(self) -> Any:
        self.i += 1
        self.take("(")
        self.enter()
        outer = self.chain()
        self.take(",")
        offset = self.integer()
        self.take(",")
        inner = self.chain()
        self.take(")")
        self.depth -= 1
        return ComposedLayout(outer, offset, inner)

    def call_make_layout(self) -> Layout:
        """``make_layout(shape[, stride])`` (C++ ``make_shape``/``make_stride`` or DSL ``stride=``)."""
        self.i += 1
        self.take("(")
        self.enter()
        shape = self.tuple_argument()
        stride = None
        if self.accept(","):
            if self.peek.text == "stride":
                self.i += 1
                self.take("=")
            stride = self.tuple_argument()
        self.take(")")
        self.depth -= 1
        return Layout(shape, stride)

    def tuple_argument(self) -> Any:
        name = self.name()
        if name in ("make_shape", "make_stride", "Shape", "Stride"):
            return self.cpp_tuple()
        return self.int_tuple()

    def cpp_tuple(self) -> Any:
        """``Shape<_8,Shape<_2,_4>>``, ``make_shape(8, make_shape(2, 4))`` or an integer."""
        name = self.name()
        if name in ("Shape", "Stride", "make_shape", "make_stride"):
            self.i += 1
            close = ">" if self.accept("<") else (self.take("(") and ")")
            self.enter()
            items = [self.cpp_tuple()]
            while self.accept(","):
                items.append(self.cpp_tuple())
            self.take(close)
            self.depth -= 1
            self.accept_braces()
            return tuple(items)
        return self.integer()

    def cpp_layout(self) -> Layout:
        self.i += 1
        self.take("<")
        self.enter()
        shape = self.cpp_tuple()
        self.take(",")
        stride = self.cpp_tuple()
        self.take(">")
        self.depth -= 1
        self.accept_braces()
        return Layout(shape, stride)


def parse_cute(text: str) -> Layout | Swizzle | ComposedLayout | TVLayout:
    """Parse CuTe text (module doc) into a CuTe value.

    >>> parse_cute("cute.make_layout((8, 64), stride=(64, 1))")
    Layout(shape=(8, 64), stride=(64, 1))
    """
    check_text(text, "CuTe spec")
    if not text.strip():
        raise LayoutError("CuTe spec: empty")
    return _Parser(text).parse()
