"""Triton's TTGIR layout attributes as text, in and out: ``parse_attribute`` and ``format_attribute``.

``parse_attribute(text)`` reads an encoding attribute exactly as Triton 3.9 prints it in a TTGIR dump
and returns the catalog descriptor it denotes; ``format_attribute(layout)`` prints a descriptor back in
that syntax (the round trip is exact: ``format_attribute(parse_attribute(t)) == t`` for every attribute
Triton 3.9 prints, aliases expanded). Each kind's body is read and printed by its registered
``LayoutKind`` (``registry``), in its descriptor's module:

=====================================================  ==========================================
attribute (Triton 3.9 syntax)                          catalog descriptor
=====================================================  ==========================================
``#ttg.blocked<{sizePerThread = [1, 4], ...}>``         ``BlockedLayout``
``#ttg.slice<{dim = 0, parent = #blocked}>``           ``SliceLayout``
``#ttg.nvidia_mma<{versionMajor = 3, ...}>``           ``NVMMADistributedLayout``
``#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>``  ``DotOperandLayout``
``#ttg.linear<{register = [[0, 1]], lane = ...}>``     ``DistributedLinearLayout``
``#ttg.amd_mfma<{...}>`` / ``#ttg.amd_wmma<{...}>``      ``AMDMFMALayout`` / ``AMDWMMALayout``
``#ttg.swizzled_shared<{vec = 8, ...}>``               ``SwizzledSharedLayout``
``#ttg.amd_rotating_shared<{vec = 8, ...}>``           ``AMDRotatingSharedLayout``
``#ttg.nvmma_shared<{swizzlingByteWidth = 128, ...}>``  ``NVMMASharedLayout``
``#ttg.shared_linear<{offset = ...}, alignment = 16>``  ``SharedLinearLayout``
``#ttg.padded_shared<[64:+8] {order = ..., shape = ...}>``  ``PaddedSharedLayout``
``#ttng.tensor_memory_encoding<blockM = 128, ...>``    ``TensorMemoryLayout``
``#ttng.tensor_memory_scales_encoding<>``              ``TensorMemoryScalesLayout``
=====================================================  ==========================================

CTA layouts: Triton 3.9 prints ``CGALayout = [[..], ..]`` (one basis per CTA bit) when it is not the
single-CTA default; the classic ``CTAsPerCGA / CTASplitNum / CTAOrder`` keys of older dumps are accepted too.
``AttributeReader`` reads MLIR attribute text by recursive descent (integers, booleans, ``[...]`` arrays,
``{key = value}`` dictionaries, ``#dialect.mnemonic<...>`` attributes and ``#alias`` names); the text is
read, never evaluated. The kinds' modules build on the helpers below: ``fields`` (the keys of a body),
``cga_bases`` (a CTA layout), ``ints`` / ``bases_text`` / ``cga_text`` / ``linear_text`` (printed forms).
The types and modules of a whole TTGIR text are read by ``triton_model.ir_text``.

>>> layout = parse_attribute("#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], "
...                          "warpsPerCTA = [4, 1], order = [1, 0]}>")
>>> layout
BlockedLayout(size_per_thread=(1, 4), threads_per_warp=(4, 8), warps_per_cta=(4, 1), order=(1, 0), cga_layout=())
>>> format_attribute(layout)
'#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import MAX_INT_DIGITS, MAX_SPEC_DEPTH, excerpt, parse_int, quote
from linear_layouts.core.mlir_text import NAME_CHAR
from linear_layouts.layouts.base import cga_layout_from_split_params, standard_out_dim_names
from linear_layouts.layouts.registry import Descriptor, kind_named, kind_of, kinds

__all__ = [
    "parse_attribute", "format_attribute", "MemorySpace", "AttributeReader", "bare_entries", "fields", "CGA_KEYS", "cga_bases", "layout_value",
    "bases_shape", "ints", "bases_text", "flag", "cga_text", "linear_text",
]


@dataclass(frozen=True)
class MemorySpace:
    """An attribute without a layout body, such as ``#ttg.shared_memory`` or ``#ttng.tensor_memory``."""

    name: str


class AttributeReader:
    """Recursive descent over MLIR attribute text (module doc); ``aliases`` maps ``#name`` to a value, or
    ``resolve`` (a function of ``#name``) resolves aliases lazily, as a whole module's are."""

    _NAME = re.compile(rf"[A-Za-z_$]{NAME_CHAR}*")
    _INT = re.compile(r"-?\d+")

    def __init__(self, text: str, aliases: Mapping[str, Any] | None,
                 resolve: Callable[[str], Any] | None = None) -> None:
        self.text = text
        self.pos = 0
        self.depth = 0
        self.aliases = aliases or {}
        self.resolve = resolve

    # -- errors and lexing ------------------------------------------------------------------------
    def fail(self, message: str) -> LayoutError:
        return LayoutError(f"ttgir: {message} at column {self.pos + 1}\n{excerpt(self.text, self.pos)}")

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t\r\n":
            self.pos += 1

    def peek(self) -> str:
        self.skip()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def accept(self, token: str) -> bool:
        self.skip()
        if self.text.startswith(token, self.pos):
            self.pos += len(token)
            return True
        return False

    def expect(self, token: str) -> None:
        if not self.accept(token):
            found = self.text[self.pos: self.pos + 12] or "the end"
            raise self.fail(f"expected '{token}', found '{found}'")

    def name(self) -> str:
        self.skip()
        if self.peek() == '"':  # a quoted dictionary key
            end = self.text.find('"', self.pos + 1)
            if end < 0:
                raise self.fail("unterminated string")
            value = self.text[self.pos + 1: end]
            self.pos = end + 1
            return value
        match = self._NAME.match(self.text, self.pos)
        if not match:
            raise self.fail("expected a name")
        self.pos = match.end()
        return match.group()

    def integer(self) -> int:
        """An integer of at most ``limits.MAX_INT_DIGITS`` digits (a longer one is a LayoutError, never read)."""
        self.skip()
        match = self._INT.match(self.text, self.pos)
        if not match:
            raise self.fail("expected an integer")
        if len(match.group().lstrip("-")) > MAX_INT_DIGITS:
            raise self.fail(f"an integer of {len(match.group().lstrip('-'))} digits; at most {MAX_INT_DIGITS} digits "
                            "(linear_layouts.limits.MAX_INT_DIGITS)")
        try:  # \d also matches other scripts' digits ('٣'): the one rule of limits.parse_int
            value = parse_int(match.group(), "integer", signed=True)
        except LayoutError as error:
            raise self.fail(str(error)) from None
        self.pos = match.end()
        return value

    def at_end(self) -> bool:
        self.skip()
        return self.pos >= len(self.text)

    # -- values -------------------------------------------------------------------------------------
    def value(self) -> Any:
        c = self.peek()
        if c in "[{#":
            self.depth += 1
            if self.depth > MAX_SPEC_DEPTH:
                raise self.fail(f"nesting deeper than {MAX_SPEC_DEPTH} levels")
            value = self.array() if c == "[" else self.dictionary() if c == "{" else self.attribute()
            self.depth -= 1
            return value
        if c == "-" or c.isdigit():
            number = self.integer()
            if self.accept(":"):  # an integer's type, `8 : i32`
                self.name()
            return number
        if self.text.startswith("true", self.pos) or self.text.startswith("false", self.pos):
            word = self.name()
            return word == "true"
        raise self.fail("expected a value (integer, true/false, [..], {..} or #attribute)")

    def array(self) -> list[Any]:
        self.expect("[")
        items: list[Any] = []
        if self.accept("]"):
            return items
        while True:
            items.append(self.value())
            if self.accept("]"):
                return items
            self.expect(",")

    def entries(self, closing: str) -> dict[str, Any]:
        """``key = value`` pairs separated by commas, up to (not consuming) ``closing``."""
        result: dict[str, Any] = {}
        if self.peek() == closing:
            return result
        while True:
            key = self.name()
            if key in result:
                raise self.fail(f"key '{key}' given twice")
            self.expect("=")
            result[key] = self.value()
            if self.peek() == closing:
                return result
            self.expect(",")

    def dictionary(self) -> dict[str, Any]:
        self.expect("{")
        result = self.entries("}")
        self.expect("}")
        return result

    def attribute(self) -> Any:
        """``#dialect.mnemonic<body>`` built by its registered kind, a ``MemorySpace`` (no body), or an
        alias's value."""
        self.expect("#")
        name = self.name()
        if "." not in name:  # an alias of the module
            if self.resolve is not None:
                return self.resolve("#" + name)
            if "#" + name in self.aliases:
                return self.aliases["#" + name]
            raise self.fail(f"unknown alias '#{name}' (parse the whole module with parse_module, or pass aliases)")
        if self.peek() != "<":
            return MemorySpace(name)
        self.expect("<")
        kind = kind_named(name)
        if kind is None:
            known = ", ".join(sorted(f"#{k.ttgir_name}" for k in kinds()))
            raise self.fail(f"unsupported attribute '#{name}'; known layouts: {known}")
        body = kind.read_body(self) if kind.read_body is not None else self.dictionary()
        self.expect(">")
        try:
            return kind.parse_ttgir(body)
        except LayoutError as error:
            raise LayoutError(f"ttgir: #{name}: {error}") from None
        except (TypeError, ValueError, KeyError, IndexError) as error:
            raise LayoutError(f"ttgir: #{name}: invalid parameters: {error}") from None


def bare_entries(reader: AttributeReader) -> dict[str, Any]:
    """A body of bare ``key = value`` entries (``#ttng.tensor_memory_encoding<blockM = 128, ...>``)."""
    return reader.entries(">")


# --------------------------------------------------------------------------------------------------
# reading a body
# --------------------------------------------------------------------------------------------------


def fields(body: Mapping[str, Any], kind: str, required: Sequence[str], optional: Sequence[str]) -> dict[str, Any]:
    """``body`` as a dict, after checking it has every ``required`` key and no key but those and ``optional``."""
    unknown = [k for k in body if k not in required and k not in optional]
    if unknown:
        raise LayoutError(f"unexpected key '{unknown[0]}' (a {kind} takes {', '.join([*required, *optional])})")
    missing = [k for k in required if k not in body]
    if missing:
        raise LayoutError(f"missing key '{missing[0]}'")
    return dict(body)


#: the keys of a CTA layout: 3.9's ``CGALayout`` bases, or the classic split parameters of older dumps
CGA_KEYS = ("CGALayout", "CTAsPerCGA", "CTASplitNum", "CTAOrder")


def cga_bases(body: Mapping[str, Any], rank: int) -> tuple[tuple[int, ...], ...] | list:
    """The ``cga_layout`` bases of the ``CGALayout`` key, or of the classic split keys of older dumps."""
    if "CGALayout" in body:
        return body["CGALayout"]
    if any(k in body for k in CGA_KEYS[1:]):
        ctas = body.get("CTAsPerCGA", [1] * rank)
        split = body.get("CTASplitNum", ctas)
        order = body.get("CTAOrder", list(reversed(range(rank))))
        return cga_layout_from_split_params(ctas, split, order)
    return []


def layout_value(value: Any, key: str) -> Any:
    """``value`` when it is a layout (a nested attribute such as a ``parent``), else ``LayoutError``."""
    if isinstance(value, MemorySpace) or not hasattr(value, "to_linear"):
        raise LayoutError(f"'{key}' must be a layout attribute, got {quote(value)}")
    return value


def bases_shape(bases: Mapping[str, Any]) -> list[int]:
    """Out sizes of bases as Triton's ``parseLinearLayout`` infers them (the layout is surjective)."""
    rank = next((len(v[0]) for v in bases.values() if isinstance(v, list) and v), 0)
    if rank == 0:
        raise LayoutError("an empty layout (no basis vectors) has no rank")
    layout = LinearLayout([(k, [list(x) for x in v]) for k, v in bases.items()], list(standard_out_dim_names(rank)))
    return [layout.out_dim_size(d) for d in layout.out_dim_names]


# --------------------------------------------------------------------------------------------------
# printing a body
# --------------------------------------------------------------------------------------------------


def ints(values: Sequence[int]) -> str:
    """``[1, 4]``."""
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


def bases_text(vectors: Sequence[Sequence[int]]) -> str:
    """``[[0, 1], [1, 0]]``."""
    return "[" + ", ".join(ints(v) for v in vectors) + "]"


def flag(value: bool) -> str:
    """``true`` / ``false``."""
    return "true" if value else "false"


def cga_text(cga: Sequence[Sequence[int]]) -> str:
    """``, CGALayout = [[..]]`` unless the single-CTA default (Triton's ``maybePrintCGALayout``)."""
    return f", CGALayout = {bases_text(cga)}" if cga else ""


def linear_text(pairs: Sequence[tuple[str, Sequence[Sequence[int]]]]) -> str:
    """``register = [[..]], lane = [[..]]``: named bases."""
    return ", ".join(f"{name} = {bases_text(vectors)}" for name, vectors in pairs)


# --------------------------------------------------------------------------------------------------
# whole attributes
# --------------------------------------------------------------------------------------------------


def parse_attribute(text: str, aliases: Mapping[str, Any] | None = None) -> Descriptor:
    """The catalog descriptor of one TTGIR layout attribute (module doc), e.g. ``#ttg.slice<{...}>``.

    ``aliases`` maps alias names (``"#blocked"``) to descriptors, for attributes that refer to a
    module's aliases (``parent = #blocked``). Raises ``LayoutError`` naming the column and the rule.

    >>> parse_attribute("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>")
    NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2, transposed=False, fp4_padded=False, cga_layout=())
    """
    if not isinstance(text, str):
        raise LayoutError(f"text must be a string, got {type(text).__name__}")
    reader = AttributeReader(text.strip(), aliases)
    if reader.peek() != "#":
        raise reader.fail("a TTGIR attribute starts with '#'")
    value = reader.attribute()
    if not reader.at_end():
        raise reader.fail("unexpected text after the attribute")
    if isinstance(value, MemorySpace):
        raise LayoutError(f"ttgir: #{value.name} is a memory space, not a layout")
    return value


def format_attribute(layout: Descriptor) -> str:
    """The TTGIR text of a catalog descriptor, exactly as Triton 3.9 prints it (parents inline).

    >>> from linear_layouts.layouts import DotOperandLayout, NVMMADistributedLayout
    >>> format_attribute(DotOperandLayout(0, NVMMADistributedLayout([2, 0], [4, 1], [16, 8]), 2))
    '#ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 8]}>, kWidth = 2}>'
    """
    kind = kind_of(layout)
    if kind is None or isinstance(layout, type):
        raise LayoutError(f"layout must be a catalog layout with a TTGIR attribute, got {type(layout).__name__}")
    return kind.format_ttgir(layout)
