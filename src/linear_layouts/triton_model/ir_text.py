"""A reader of Triton's TTIR / TTGIR text (MLIR as ``str(module)`` and ``MLIR_ENABLE_DUMP`` print it):
the attribute aliases, the module attributes, and every function's ops with their results, operands,
types, attributes, nested regions and source locations. It parses the text only; what an op or a
layout means is for the modules that read the result.

Grammar handled (one op a line, as Triton prints it):

=========================================  ===========================================================
form                                       example
=========================================  ===========================================================
pretty op                                  ``%y = ttg.convert_layout %x : tensor<..., #a> -> tensor<...>``
multi-result op                            ``%3:2 = scf.for %i = %a to %b step %c iter_args(...) -> (...) {``
generic op with a region                   ``%r = "tt.reduce"(%x) <{axis = 0 : i32}> ({`` ... ``}) : (..) -> f32``
region switch                              ``} else {``, ``} do {``
attribute alias                            ``#blocked = #ttg.blocked<{...}>``; ``#loc3 = loc("k.py":9:11)``
=========================================  ===========================================================

>>> m = parse_module('''#a = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
... module attributes {"ttg.num-warps" = 4 : i32} {
...   tt.func public @k(%x: tensor<128xf32, #a>) {
...     %y = math.exp %x : tensor<128xf32, #a> loc(#loc1)
...     tt.return
...   }
... }''')
>>> m.num_warps, [op.name for op in m.functions[0].walk()]
(4, ['math.exp', 'tt.return'])
>>> m.functions[0].body.ops[0].result_types
('tensor<128xf32, #a>',)
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from linear_layouts.core.arguments import checked
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import (MAX_INT_DIGITS, MAX_IR_BYTES, MAX_SPEC_CHARS, MAX_SPEC_DEPTH, check_ir_text,
                                        INT_RULE, parse_int, quote)
from linear_layouts.core.mlir_text import (ATTR_DICT, DIGITS, NAME_CHAR, NAME_END, RESULT_LIST, VALUE_NAME, VALUE_USE, closing,
                                      pointee, shape_and_element, split_top)
from linear_layouts.core.mlir_text import find_top as _find_top
from linear_layouts.layouts.registry import Descriptor, kinds
from linear_layouts.layouts.ttgir_text import MemorySpace, parse_attribute
from linear_layouts.triton_model.ir_types import TensorType, parse_type

__all__ = [
    "Op", "Block", "Region", "Function", "Module", "Location", "parse_module", "split_top", "last_module",
    "check_well_formed", "check_same_kernel", "unique_value_names", "check_types", "iter_args", "block_arguments",
    "LoopBounds", "loop_bounds", "module_target", "op_key", "SAME_AS", "without_locations",
]

@dataclass(frozen=True)
class Location:
    """A source location: ``file:line:col`` and, where Triton named the value, that name (``offs``)."""

    file: str = ""
    line: int = 0
    column: int = 0
    name: str = ""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.file else "?"
        return f"{where} ({self.name})" if self.name else where


@dataclass(frozen=True)
class Op:
    """One operation: ``name`` (``ttg.convert_layout``), its ``results`` and ``operands`` (SSA names with
    ``%``; ``%3#1`` for result 1 of ``%3``), the text of its attributes (``attrs``), operand and
    result types as text, nested ``regions``, and its source ``loc``."""

    name: str
    results: tuple[str, ...]
    operands: tuple[str, ...]
    operand_types: tuple[str, ...]
    result_types: tuple[str, ...]
    attrs: str = ""
    regions: tuple["Region", ...] = ()
    loc: Location = Location()
    text: str = field(default="", repr=False, compare=False)

    def attr_int(self, key: str) -> int | None:
        """An integer attribute ``key = N : i32`` (``None`` when absent)."""
        m = re.search(rf"\b{re.escape(key)} = (-?\d+)", self.attrs)
        if m and len(m.group(1).lstrip("-")) > MAX_INT_DIGITS:
            raise LayoutError(f"ir text: {self.name}'s attribute {key} has more than {MAX_INT_DIGITS} digits "
                              "(linear_layouts.limits.MAX_INT_DIGITS)")
        return parse_int(m.group(1), f"ir text: {self.name}'s attribute {key}", signed=True) if m else None


@dataclass(frozen=True)
class Block:
    """A labelled block of a region (``^bb1(%a: i32):``): its ``label``, the index in its region's ``ops``
    of its first op, and its arguments as (name, type text)."""

    label: str
    start: int
    args: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Region:
    """A region's ops (every block's, in text order) and its block arguments as (name, type text) (its last
    labelled block's: a structured op's region has one block); ``blocks``: its labelled blocks in text order
    (none for a region of one unlabelled block, as every structured op's; a function after ``scf-to-cf``
    has an unlabelled entry block, then one labelled block each ``cf.br`` / ``cf.cond_br`` target)."""

    ops: tuple[Op, ...]
    args: tuple[tuple[str, str], ...] = ()
    blocks: tuple[Block, ...] = ()


@dataclass(frozen=True)
class Function:
    name: str
    args: tuple[tuple[str, str], ...]
    body: Region
    #: each argument's attribute dictionary text (``tt.divisibility = 16 : i32``; "" when none)
    arg_attrs: tuple[tuple[str, str], ...] = ()
    #: (name, line, line of the earlier definition) of each name the text defines again where its earlier
    #: definition is visible (lines of the text, from 1): MLIR refuses such a text, the parser renames it
    redefined: tuple[tuple[str, int, int], ...] = ()

    def walk(self) -> Iterator[Op]:
        """Every op, nested regions included, in textual order (pre-order)."""
        stack = [iter(self.body.ops)]
        while stack:
            op = next(stack[-1], None)
            if op is None:
                stack.pop()
                continue
            yield op
            for region in reversed(op.regions):
                stack.append(iter(region.ops))


#: a module's ``ttg.target``: ``cuda:CC`` (``cuda:90``; ``cuda:90a``, Hopper's arch-specific features) or
#: ``hip:ARCH`` (``hip:gfx942``, maybe with features: ``hip:gfx90a:xnack-``)
_TARGET = re.compile(r"cuda:([0-9]{2,3})[af]?|hip:(gfx\w+(?::[\w+-]+)*)")


@checked
def module_target(target: str) -> tuple[str, int | str] | None:
    """A module's ``ttg.target`` as (backend, arch), the first two arguments of Triton's ``GPUTarget``:
    ``cuda:CC`` -> ``("cuda", CC)`` (an int, the compute capability; an ``a`` suffix dropped),
    ``hip:ARCH`` -> ``("hip", ARCH)``; None for ``""`` (a TTIR has no target). ``LayoutError`` naming
    ``target`` for any other text.

    >>> module_target("cuda:90"), module_target("cuda:90a"), module_target("hip:gfx942"), module_target("")
    (('cuda', 90), ('cuda', 90), ('hip', 'gfx942'), None)
    """
    if target == "":
        return None
    m = _TARGET.fullmatch(target)
    if m is None:
        raise LayoutError(f"target: {quote(target)} is no module target (ttg.target = \"cuda:90\", \"cuda:90a\" "
                          "or \"hip:gfx942\")")
    return ("cuda", int(m.group(1))) if m.group(1) is not None else ("hip", m.group(2))


@dataclass(frozen=True)
class Module:
    """A parsed module: ``aliases`` (``name`` -> attribute text, locations excluded), module
    ``attributes`` (text values), ``functions`` and the location table; read from them on first use, its
    ``types`` (``ir_types.TensorType``), ``layout_aliases`` and ``layouts`` (catalog descriptors)."""

    aliases: dict[str, str]
    attributes: dict[str, str]
    functions: tuple[Function, ...]

    def _int_attr(self, key: str, default: int) -> int:
        value = self.attributes.get(key)
        if value is None:
            return default
        try:
            return parse_int(value.split(":")[0], f"ir text: module attribute {key}", signed=True)
        except LayoutError:
            raise LayoutError(f"ir text: module attribute {key} is not an int: {quote(value)} ({INT_RULE})") from None

    @property
    def num_warps(self) -> int:
        return self._int_attr("ttg.num-warps", 4)

    @property
    def threads_per_warp(self) -> int:
        return self._int_attr("ttg.threads-per-warp", 32)

    @property
    def num_ctas(self) -> int:
        return self._int_attr("ttg.num-ctas", 1)

    @property
    def target(self) -> str:
        return self.attributes.get("ttg.target", "").strip('"')

    @property
    def compute_capability(self) -> int | None:
        """The compute capability of a ``cuda:CC`` target (``module_target``); None for another or none."""
        target = module_target(self.target)
        return target[1] if target is not None and target[0] == "cuda" else None  # type: ignore[return-value]

    @property
    def backend(self) -> str:
        """The backend of the target (``module_target``): ``cuda``, ``hip``, or ``""`` for none."""
        target = module_target(self.target)
        return target[0] if target is not None else ""

    @functools.cached_property
    def parsed_types(self) -> dict[str, TensorType]:
        """``ir_types.parse_type``'s answers for this module's aliases, by type text (filled as asked)."""
        return {}

    @functools.cached_property
    def types(self) -> tuple[TensorType, ...]:
        """Every distinct ``tensor`` / ``memdesc`` type of the module (``ir_types.TensorType``, aliases
        expanded), in order of first appearance: each function's arguments, then its ops' operand and
        result types (nested regions included)."""
        seen: dict[str, TensorType] = {}
        for fn in self.functions:
            texts = [ty for _, ty in fn.args]
            for op in fn.walk():
                texts += op.operand_types + op.result_types
            for ty in texts:
                if ty not in seen:
                    seen[ty] = parse_type(ty, self)
        return tuple(t for t in seen.values() if t.kind in ("tensor", "memdesc"))

    @functools.cached_property
    def layout_aliases(self) -> tuple[tuple[str, Descriptor], ...]:
        """The module's layout aliases as (``#name``, catalog descriptor), in order: those of the dialects
        of the registered kinds (``#ttg.``, ``#ttng.``), memory spaces such as ``#smem`` left out;
        ``LayoutError`` for one that does not read."""
        dialects = tuple(dict.fromkeys("#" + kind.ttgir_name.split(".")[0] + "." for kind in kinds()))
        found = []
        for name, text in self.aliases.items():
            if text.startswith(dialects):
                value = parse_attribute(self.expand(text)) if "<" in text else MemorySpace(text[1:])
                if not isinstance(value, MemorySpace):
                    found.append(("#" + name, value))
        return tuple(found)

    @property
    def layouts(self) -> tuple[Descriptor, ...]:
        """Every distinct layout descriptor of the module (aliases and inline encodings), in order."""
        seen: dict[Descriptor, None] = dict.fromkeys(layout for _, layout in self.layout_aliases)
        for t in self.types:
            if t.layout is not None:
                seen.setdefault(t.layout, None)
        return tuple(seen)

    def expand(self, text: str) -> str:
        """``text`` with every ``#alias`` replaced by its definition, recursively (at most ``MAX_SPEC_DEPTH``
        deep and ``MAX_SPEC_CHARS`` added: a cycle or an exponential chain of aliases is a LayoutError)."""
        budget = [MAX_SPEC_CHARS]

        def expand_at(text: str, depth: int) -> str:
            if depth > MAX_SPEC_DEPTH:
                raise LayoutError(f"ir text: aliases nested deeper than {MAX_SPEC_DEPTH} (a cycle?) in {quote(text)}")

            def sub(m: re.Match) -> str:
                name = m.group(1)
                if name not in self.aliases:
                    return m.group(0)
                out = expand_at(self.aliases[name], depth + 1)
                budget[0] -= len(out)
                if budget[0] < 0:
                    raise LayoutError(f"ir text: the aliases of {quote(text)} expand to more than {MAX_SPEC_CHARS} "
                                      "characters (linear_layouts.limits.MAX_SPEC_CHARS)")
                return out

            return re.sub(rf"#([A-Za-z_]{NAME_CHAR}*)", sub, text)

        return expand_at(text, 0)


# --------------------------------------------------------------------------------------------------
_LOC_TAIL = re.compile(r"\s+loc\((.*)\)\s*$")
_RESULTS = re.compile(rf"^({RESULT_LIST})\s*=\s*(.*)$")
#: ``_RESULTS`` without the rest of the line (a line has no line break: the rest is ``line[m.end():]``)
_RESULT_HEAD = re.compile(rf"({RESULT_LIST})\s*=\s*")
#: a ``loc(...)`` without parentheses inside: ``loc(#loc12)``
_PLAIN_LOC = re.compile(r" loc\([^()]*\)")
#: a parenthesis: what nests in a ``loc(...)`` (its strings are not read as strings)
_PAREN = re.compile(r"[()]")


def _paren_end(line: str, start: int) -> int:
    """The index after the ``)`` that closes a ``(`` just before ``start`` (parentheses alone counted); -1
    where none does.

    >>> _paren_end("loc(callsite(#a at #b)) x", 4)
    23
    """
    depth = 1
    for m in _PAREN.finditer(line, start):
        depth += 1 if m.group() == "(" else -1
        if depth == 0:
            return m.end()
    return -1


def _strip_loc(line: str) -> tuple[str, str]:
    """(the line without its trailing ``loc(...)``, the loc's inner text).

    >>> _strip_loc("%y = math.exp %x : f32 loc(callsite(#loc1 at #loc9))")
    ('%y = math.exp %x : f32', 'callsite(#loc1 at #loc9)')
    """
    i = line.rfind(" loc(")
    if i >= 0 and _PLAIN_LOC.fullmatch(line, i):  # the common loc(#loc12): no parenthesis inside, at the end
        return line[:i].rstrip(), line[i + 5:-1]
    while i >= 0:
        close = line.find(")", i + 5)  # closes the loc unless a "(" opens before it
        end = -1 if close < 0 else close + 1 if line.find("(", i + 5, close) < 0 else _paren_end(line, i + 5)
        if end >= 0 and not line[end:].strip():
            return line[:i].rstrip(), line[i + 5:end - 1]
        i = line.rfind(" loc(", 0, i)
    return line, ""


def without_locations(text: str) -> str:
    """``text`` without its source locations: each line's trailing ``loc(...)`` (``_strip_loc``) and the
    ``#loc`` alias definitions.

    >>> without_locations("#loc3 = loc(\\"k.py\\":4:2)\\n%y = math.exp %x : f32 loc(#loc3)")
    '%y = math.exp %x : f32'
    """
    return "\n".join(_strip_loc(line)[0] for line in text.splitlines() if not line.startswith("#loc"))


def _resolve_loc(inner: str, locs: dict[str, str], depth: int = 0,
                 memo: dict[tuple[str, int], Location] | None = None) -> Location:
    """A ``loc(...)`` body to a Location: ``#locN`` aliases, ``"name"(#loc)``, ``"file":l:c``,
    ``callsite(a at b)`` (the callee's position, the caller's name). ``memo``: the answers already
    found with these ``locs``, by (body, depth) -- a parser's ops share their aliases' chains (Triton's
    inlined library calls nest ``callsite``s twenty deep), so each is followed once."""
    inner = inner.strip()
    if memo is None:
        memo = {}
    key = (inner, depth)
    if key not in memo:
        memo[key] = _resolved_loc(inner, locs, depth, memo)
    return memo[key]


def _resolved_loc(inner: str, locs: dict[str, str], depth: int, memo: dict[tuple[str, int], Location]) -> Location:
    """``_resolve_loc`` of a stripped ``inner`` not in ``memo``."""
    if depth > 32:
        return Location()
    if inner.startswith("#"):
        target = locs.get(inner[1:])
        return _resolve_loc(target, locs, depth + 1, memo) if target is not None else Location()
    m = re.fullmatch(r'"([^"]*)":([0-9]{1,18}):([0-9]{1,18})(?:\s+to\s+.*)?', inner)  # longer: no location
    if m:
        return Location(m.group(1), int(m.group(2)), int(m.group(3)))
    m = re.fullmatch(r'"([^"]*)"\((.*)\)', inner)
    if m:
        base = _resolve_loc(m.group(2), locs, depth + 1, memo)
        return Location(base.file, base.line, base.column, base.name or m.group(1))
    m = re.fullmatch(r"callsite\((.*) at (.*)\)", inner)
    if m:  # inside a library function (triton/language/...): the caller's line is the user's
        callee = _resolve_loc(m.group(1), locs, depth + 1, memo)
        if "/triton/" in callee.file or not callee.file:
            caller = _resolve_loc(m.group(2), locs, depth + 1, memo)
            return Location(caller.file, caller.line, caller.column, caller.name or callee.name)
        return callee
    if inner.startswith("fused"):
        m = re.search(r"\[(.*)\]", inner)
        if m:
            return _resolve_loc(split_top(m.group(1))[0], locs, depth + 1, memo)
    return Location()


def _results(names: str, most: int) -> tuple[str, ...]:
    """The result names of ``%a, %b:2 = ...`` (``%b:2``: ``%b#0, %b#1``), at most ``most`` of them (the op's
    line has a type or an operand for each: a count above its length is refused before it is enumerated)."""
    out: list[str] = []
    for part in split_top(names) if "," in names else [names.strip()]:
        m = _RESULT.fullmatch(part.strip())
        if not m:
            raise LayoutError(f"ir text: bad result list {quote(names)}")
        digits = m.group(2)
        if digits is None:
            out.append(m.group(1))
            continue
        count = parse_int(digits, f"ir text: {quote(part.strip())}: the result count") \
            if len(digits) <= len(str(most)) else most + 1
        if len(out) + count > most:
            raise LayoutError(f"ir text: {quote(part.strip())}: more results than the op's line of {most} "
                              "characters can have")
        out += [f"{m.group(1)}#{k}" for k in range(count)]
    return tuple(out)


#: one result of an op's result list, with its count: ``%x``, ``%3:2``
_RESULT = re.compile(rf"({VALUE_NAME})(?::({DIGITS}))?")


@functools.lru_cache(maxsize=1 << 12)
def _types(text: str) -> tuple[str, ...]:
    """The types of a signature's side, its parentheses dropped (kept by ``text``: an IR's types repeat).

    >>> _types("(tensor<4xf32, #a>, i32)")
    ('tensor<4xf32, #a>', 'i32')
    """
    text = text.strip()
    if text.startswith("(") and closing(text, 0) == len(text) - 1:
        text = text[1:-1]
    return tuple(t for part in split_top(text) for t in split_top(part, " * ") if t)


def _tensor_element(text: str) -> str:
    """The element type of a ranked tensor type: ``tensor<1xi32, #blocked>`` -> ``i32``; any other type as is."""
    text = text.strip()
    if not text.startswith("tensor<") or not text.endswith(">"):
        return text
    parts = split_top(text[len("tensor<"):-1])
    return shape_and_element(parts[0] if parts else "")[1] or text


#: text of no quote, its brackets in pairs without brackets inside (``%x {axis = 0 : i32}``, ``dense<0.0>``;
#: no ``>`` of an arrow ``->``): it ends at depth 0, outside quotes
_FLAT_HEAD = re.compile(r'[^"<>(){}\[\]]*(?:[<({\[][^"<>(){}\[\]]*(?:[)}\]]|(?<!-)>)[^"<>(){}\[\]]*)*')


def _signature(body: str) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """Split ``operands-and-attrs : types`` into (head, operand types, result types).

    >>> _signature(" %x {axis = 0 : i32} : tensor<4xi32, #a> -> tensor<1x4xi32, #b>")
    (' %x {axis = 0 : i32}', ('tensor<4xi32, #a>',), ('tensor<1x4xi32, #b>',))
    """
    colon = body.rfind(" : ")  # the last " : ", at depth 0 where no bracket but a flat {...} comes before it
    if colon >= 0 and not _FLAT_HEAD.fullmatch(body, 0, colon):
        colon = _find_top(body, " : ", last=True)
    if colon < 0:
        return body, (), ()
    return (body[:colon], *_sides(body[colon + 3:]))


@functools.lru_cache(maxsize=1 << 12)
def _sides(types: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The operand and result types of a signature's types (``T0, T1 -> R``, ``T1 to T2``, ``T``: no result
    types), kept by ``types`` (an IR's signatures repeat).

    >>> _sides("tensor<4xf32, #a> -> tensor<4xf32, #b>")
    (('tensor<4xf32, #a>',), ('tensor<4xf32, #b>',))
    """
    arrow = _find_top(types, "->")
    if arrow >= 0:
        return _types(types[:arrow]), _types(types[arrow + 2:])
    to = _find_top(types, " to ")
    if to >= 0:  # casts: "%y = arith.truncf %x : T1 to T2"
        return _types(types[:to]), _types(types[to + 4:])
    return _types(types), ()


#: ``ATTR_DICT``, ``VALUE_USE`` and ``VALUE_NAME``, compiled
_ATTR_DICT = re.compile(ATTR_DICT)
_VALUE_USE = re.compile(VALUE_USE)
_VALUE_NAME = re.compile(VALUE_NAME)


def _operands(head: str) -> tuple[str, ...]:
    """SSA operand names in an op's head (attribute dictionaries and region signatures excluded)."""
    return tuple(_VALUE_USE.findall(_ATTR_DICT.sub("", head) if "{" in head else head))


def _declarations(text: str) -> list[tuple[str, str, str]]:
    """(name, type, attribute dictionary's inner text or "") of each ``%name: type {attrs} loc(...)`` in the
    inner text of a function's or a block's argument list, split at its top-level commas (a type keeps
    the commas inside its brackets).

    >>> _declarations("%a: !ttg.memdesc<4xf32, #s, #smem> loc(#loc2), %p: !tt.ptr<f32> {tt.divisibility = 16 : i32}")
    [('%a', '!ttg.memdesc<4xf32, #s, #smem>', ''), ('%p', '!tt.ptr<f32>', 'tt.divisibility = 16 : i32')]
    """
    out = []
    for arg in split_top(text):
        a = re.match(rf"({VALUE_NAME})\s*:\s*(.*)$", arg)
        if a:
            ty = _strip_loc(" " + a.group(2))[0].strip()
            attr = re.search(rf"\s*({ATTR_DICT})\s*$", ty)  # "!tt.ptr<f32> {tt.divisibility = 16 : i32}"
            ty = ty[:attr.start()] if attr else ty
            out.append((a.group(1), ty.strip(), attr.group(1)[1:-1].strip() if attr else ""))
    return out


def _argument_list(line: str) -> str:
    """The inner text of a line's first parenthesized list, as a block label's arguments: ``^bb0(%a: T,
    %b: U):`` -> ``%a: T, %b: U`` ("" for a line without one, or one whose list is not closed)."""
    start = line.find("(")
    end = closing(line, start) if start >= 0 else -1
    return line[start + 1:end] if end > 0 else ""


@checked
def block_arguments(line: str) -> list[tuple[str, str]]:
    """``(name, type)`` of each argument in a line's first parenthesized list, as a block label's
    (``^bb0(...)``) or a ``ttg.warp_specialize`` partition's (``partition0(...) num_warps(4) {``); types
    whole, locations and attributes dropped.

    >>> block_arguments("^bb0(%a: !ttg.memdesc<4xf32, #s, #smem> loc(#loc2), %i: i32):")
    [('%a', '!ttg.memdesc<4xf32, #s, #smem>'), ('%i', 'i32')]
    """
    return [(name, ty) for name, ty, _ in _declarations(_argument_list(line))]


#: an alias's line: ``#blocked = #ttg.blocked<{...}>``, ``#loc3 = loc("k.py":9:11)``
_ALIAS_LINE = re.compile(rf"^#({NAME_CHAR}+)\s*=\s*(.*)$")


def _op_of(name: str, results: tuple[str, ...], operands: tuple[str, ...], operand_types: tuple[str, ...],
           result_types: tuple[str, ...], attrs: str, regions: tuple[Region, ...], loc: Location, text: str) -> Op:
    """``Op(name, ..., text)``, its fields set as its frozen dataclass ``__init__`` sets them but at once, not
    by nine ``object.__setattr__`` (the parser makes an op a line): the same value.

    >>> _op_of("tt.return", (), (), (), (), "", (), Location(), "tt.return") == Op("tt.return", (), (), (), (), "")
    True
    """
    op = object.__new__(Op)
    op.__dict__.update(name=name, results=results, operands=operands, operand_types=operand_types,
                       result_types=result_types, attrs=attrs, regions=regions, loc=loc, text=text)
    return op


#: ops whose result types the head spells: ``scf.for ... -> (i32, f32) {``
_SCF_RESULTS_IN_HEAD = frozenset({"scf.for", "scf.if", "scf.while"})
#: the location of an op without one (``Location()``)
_NOWHERE = Location()
#: the start of an op's line: its results (``_RESULTS``' group, None where it has none), its name in the
#: pretty form (``arith.addf``; "" before a generic op's ``"name"``), and the blanks after it
_OP_START = re.compile(rf"(?:({RESULT_LIST})\s*=\s*)?({NAME_CHAR}*)\s*")
#: an attribute dictionary, with dictionaries nested one deep: ``{a = 1, b = {c = 2}}``
_ATTRS = re.compile(r"\{[^{}]*(?:" + ATTR_DICT + r"[^{}]*)*\}")


class _Parser:
    def __init__(self, text: str, redefined: list[tuple[int, str, int, int]] = ()):
        self.lines = text.splitlines()
        self.redefined = redefined  # _renamed's: (function ordinal, name, line, earlier line)
        self.i = 0
        self.aliases: dict[str, str] = {}
        self.locs: dict[str, str] = {}
        self.loc_memo: dict[tuple[str, int], Location] = {}  # _resolve_loc's answers with these locs
        self.op_locs: dict[str, Location] = {}  # the location of each op line's loc(...) text
        self.attributes: dict[str, str] = {}
        self.functions: list[Function] = []
        self.depth = 0  # regions open around the current line (at most MAX_SPEC_DEPTH)

    def run(self) -> Module:
        for line in self.lines:  # aliases may come after the module (locations do)
            m = _ALIAS_LINE.match(line) if line.startswith("#") else None
            if m:
                if m.group(2).startswith("loc("):
                    self.locs[m.group(1)] = _strip_loc(" " + m.group(2))[1] or m.group(2)[4:-1]
                elif self.aliases.setdefault(m.group(1), m.group(2).strip()) != m.group(2).strip():
                    raise LayoutError(f"ir text: the alias {quote('#' + m.group(1))} is defined twice, differently "
                                      "(MLIR refuses a redefinition: which one a use means is unknown)")
        while self.i < len(self.lines):
            line = self.lines[self.i].strip()
            self.i += 1
            if line.startswith("module"):
                m = re.search(r"attributes\s*\{(.*)\}\s*\{\s*$", line)
                if m:
                    for item in split_top(m.group(1)):
                        key, _, value = item.partition("=")
                        self.attributes[key.strip().strip('"')] = value.strip()
            elif line.startswith("tt.func"):
                self.functions.append(self._function(line))
        if not self.functions:
            raise LayoutError("ir text: no tt.func found (is this a TTIR / TTGIR module?)")
        return Module(self.aliases, self.attributes, tuple(self.functions))

    def _function(self, line: str) -> Function:
        m = re.match(rf"tt\.func\s+(?:public\s+|private\s+)?@({NAME_CHAR}+)\((.*)\)", line)
        if not m:
            raise LayoutError(f"ir text: cannot read the function header {line[:80]!r}")
        name = m.group(1)
        header = line[m.start(2):]
        close = closing("(" + header, 0)
        args_text = header[:close - 1] if close > 0 else m.group(2)
        declared = _declarations(args_text)
        args = [(name, ty) for name, ty, _ in declared]
        attrs = [(name, attr) for name, _, attr in declared]
        ordinal = len(self.functions)
        ops = self._ops_until_close()
        redefined = tuple(entry[1:] for entry in self.redefined if entry[0] == ordinal)
        return Function(name, tuple(args), Region(tuple(ops), (), tuple(self.blocks)), tuple(attrs), redefined)

    def _ops_until_close(self) -> list[Op]:
        """Ops up to the ``}`` closing the current region (that line is left in ``self.closer``)."""
        ops: list[Op] = []
        self.closer = ""
        args: list[tuple[str, str]] = []  # kept here: parsing a nested region resets ``self.block_args``
        blocks: list[Block] = []  # and ``self.blocks``
        lines = self.lines
        while self.i < len(lines):
            line = lines[self.i].strip()
            self.i += 1
            if not line:
                continue
            if line[0] == "}":
                self.closer = line
                self.block_args, self.blocks = args, blocks
                return ops
            if line[0] == "^":  # a block label: its arguments belong to the region
                args = block_arguments(line)
                blocks.append(Block(_LABEL.match(line).group(0), len(ops), tuple((n, t.strip()) for n, t in args)))
                continue
            ops.append(self._op(line))
        self.block_args, self.blocks = args, blocks
        return ops

    def _op(self, line: str) -> Op:
        body, loc_text = _strip_loc(line)
        loc = self.op_locs.get(loc_text) if loc_text else _NOWHERE
        if loc is None:
            loc = self.op_locs[loc_text] = _resolve_loc(loc_text, self.locs, memo=self.loc_memo)
        results: tuple[str, ...] = ()
        m = _OP_START.match(body)
        listed, name = m.group(1, 2)
        if listed is not None:  # one name (neither ',' nor ':') is the one result
            results = (listed,) if "," not in listed and ":" not in listed else _results(listed, len(line))
        regions: list[Region] = []
        if not name and body.startswith('"', m.start(2)):  # generic form: "name"(operands) <{attrs}> ...
            body = body[m.start(2):]
            if body.find('"', 1) < 0:
                raise LayoutError(f"ir text: unterminated op name in {quote(body)}")
            name = body[1:body.index('"', 1)]
            rest = body[len(name) + 2:]
            if rest.rstrip().endswith("({"):
                regions.append(self._region())
                while self.closer.startswith("}, {"):
                    regions.append(self._region())
                tail, tail_loc = _strip_loc(self.closer)
                if tail_loc and not loc_text:
                    loc = _resolve_loc(tail_loc, self.locs, memo=self.loc_memo)
                rest = rest.rstrip()[:-2] + tail[2:] if tail.startswith("})") else rest
            head, operand_types, result_types = _signature(rest)
            attrs = " ".join(re.findall(r"<\{.*\}>", head))
            return Op(name, results, _operands(head.split("<{")[0]), operand_types, result_types, attrs,
                      tuple(regions), loc, line)
        rest = " " + body[m.end():]
        trailer_attrs = ""
        tail = rest.rstrip()
        if tail.endswith("{") and not tail.endswith("<{"):  # the op opens a region
            rest = tail[:-1].rstrip()
            regions.append(self._region())
            while self.closer.startswith("} else {") or self.closer.startswith("} do {"):
                regions.append(self._region())
            trailer, trailer_loc = _strip_loc(self.closer)
            if trailer_loc and not loc_text:
                loc = _resolve_loc(trailer_loc, self.locs, memo=self.loc_memo)
            trailer_attrs = trailer[1:].strip()  # e.g. "} {tt.num_stages = 2 : i32}"
        head, operand_types, result_types = _signature(rest)
        if results and operand_types and not result_types and ("->" not in rest or _find_top(rest, "->") < 0):
            result_types = operand_types  # "arith.addf %a, %b : T": T is the operands' and the result's type
            if name == "tt.unsplat":  # "%s = tt.unsplat %t : tensor<1xT, #l>": T is the operand's element
                result_types = (_tensor_element(operand_types[0]),)
        if name in _SCF_RESULTS_IN_HEAD:
            arrow = _find_top(head, "->")
            if arrow >= 0:  # scf result types in the head: "-> (i32, tensor<..>)" (a type may hold '{')
                tail = head[arrow + 2:]
                brace = _find_top(tail, "{")
                result_types = _types(tail[:brace] if brace >= 0 else tail)
                head = head[:arrow]
        if "{" in head:  # attribute dictionaries (a head without '{' has none)
            found = _ATTRS.findall(head)
            attrs = " ".join(found + [trailer_attrs]).strip() if trailer_attrs else " ".join(found).strip()
        else:
            attrs = trailer_attrs
        return _op_of(name, results, _operands(head), operand_types, result_types, attrs,
                      tuple(regions) if regions else (), loc, line)

    def _region(self) -> Region:
        if self.depth >= MAX_SPEC_DEPTH:  # every reader of the module walks regions recursively
            raise LayoutError(f"ir text: regions nested deeper than {MAX_SPEC_DEPTH} levels at line {self.i} "
                              "(linear_layouts.limits.MAX_SPEC_DEPTH)")
        self.depth += 1
        self.block_args = []
        ops = self._ops_until_close()
        self.depth -= 1
        return Region(tuple(ops), tuple((n, t.strip()) for n, t in self.block_args), tuple(self.blocks))


#: a block label: ``^bb1``
_LABEL = re.compile(rf"\^{NAME_CHAR}*")
#: an SSA value name, or a string literal (whose '%' are text: inline PTX's ``%tid.x``)
_NAME_OR_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|' + VALUE_NAME)
#: a name given a type, as a function's or a block's argument: ``%arg0: i32``
_DECLARED = re.compile(rf"({VALUE_NAME})\s*:")


def _opens_region(line: str) -> bool:
    """Whether the op of ``line`` opens a region: its text before its ``loc(...)`` ends with ``{`` (not ``<{``).

    >>> _opens_region("scf.for %i = %a to %b step %c : i32 { loc(#l)"), _opens_region("%x = tt.load %p loc(#l)")
    (True, False)
    """
    body = line.rstrip()
    if body.endswith(")"):  # maybe a loc(...) to drop (a line that does not end with ')' has none)
        if "{" not in body:
            return False
        i = body.rfind(" loc(")
        if i > 0 and _PLAIN_LOC.fullmatch(body, i) and not body[i - 1].isspace():  # _strip_loc's common case:
            return body.endswith("{", 0, i) and not body.endswith("<{", 0, i)  # the text before it, read in place
        body = _strip_loc(body)[0].rstrip()
    return body.endswith("{") and not body.endswith("<{")


#: a ``ttg.warp_specialize`` partition's head: ``partition0(%arg5: !tt.ptr<f32>) num_warps(4) {`` (its
#: region is isolated from above: it sees its arguments only)
_PARTITION = re.compile(r"partition[0-9]+")


class _Isolated(dict):
    """A scope of ``_renamed`` no name of an enclosing scope reaches (a ``tt.func``'s, a partition's)."""


def _result_names(listed: str) -> list[str]:
    """The names of an op's result list (``RESULT_LIST``), counts dropped.

    >>> _result_names("%a"), _result_names("%a, %b:2")
    (['%a'], ['%a', '%b'])
    """
    return [listed] if "," not in listed and ":" not in listed else _VALUE_NAME.findall(listed)


def _head_defined(rest: str) -> set[str]:
    """The names the head of a region op defines for its regions (``rest``: its text after its results).

    >>> sorted(_head_defined("scf.for %i = %a to %b step %c iter_args(%acc = %init) -> (f32) {"))
    ['%acc', '%i']
    """
    return set(_HEAD_DEFINED.findall(rest)) if not rest.startswith('"') else set()


def _renamed(text: str) -> tuple[str, list[tuple[int, str, int, int]]]:
    """``unique_value_names(text)``, and each definition of a name where an earlier definition of it is
    visible (MLIR refuses it: "redefinition of SSA value"), as (function ordinal, name, its line, the
    visible definition's line), lines counted from 1: a name is visible after its definition in its
    region and the regions nested in it, not in sibling regions nor in isolated ones (a partition)."""
    lines = text.split("\n")
    names: set[str] = set()  # the text's value names and the new ones (read at the first new name)
    seen: set[str] = set()
    #: names with a new name in an open scope (a count per definition, at least): any other name's uses keep it
    renamed: dict[str, int] = {}
    scopes: list[dict[str, tuple[str, int]]] = [_Isolated()]  # name -> (its new name, its definition's line)
    redefined: list[tuple[int, str, int, int]] = []
    function = -1

    def visible(name: str, scope: dict[str, tuple[str, int]]) -> tuple[str, int] | None:
        for outer in [scope] + ([] if isinstance(scope, _Isolated) else scopes[::-1]):
            if name in outer:
                return outer[name]
            if isinstance(outer, _Isolated):
                return None
        return None

    def define(name: str, scope: dict[str, tuple[str, int]], line: int) -> str:
        if name not in seen:  # no definition of it in this function yet: none visible, no new name
            seen.add(name)
            scope[name] = (name, line)
            return name
        earlier = visible(name, scope)
        if earlier is not None:
            redefined.append((function, name, line, earlier[1]))
        if not names:
            names.update(_VALUE_NAME.findall(text))
        base, k = (name[1:] if not name[1:2].isdigit() else "v" + name[1:]), 1
        while f"%{base}_{k}" in names:
            k += 1
        new = f"%{base}_{k}"
        names.add(new)
        renamed[name] = renamed.get(name, 0) + 1
        scope[name] = (new, line)
        return new

    def closed(scope: dict[str, tuple[str, int]]) -> None:
        """The names ``scope`` renamed are no longer renamed there (it is closed)."""
        for name, (new, _) in scope.items():
            if new != name and name in renamed:
                renamed[name] -= 1
                if not renamed[name]:
                    del renamed[name]

    def lookup(name: str) -> str:
        for scope in reversed(scopes):
            if name in scope:
                return scope[name][0]
        return name

    def rewrite(k: int, new: dict[str, str]) -> None:
        """Line ``k`` with each name of ``new`` (outside string literals) as ``new`` says, where one differs."""
        if any(map(str.__ne__, new, new.values())):
            lines[k] = _NAME_OR_STRING.sub(lambda t: new.get(t.group(0), t.group(0)), lines[k])

    for k, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("}"):  # closes a region; "} else {", "} do {", "}, {" open the next
            if len(scopes) > 1:
                closed(scopes.pop())
            if _opens_region(stripped):
                scopes.append({})
            continue
        opens = "{" in stripped and _opens_region(stripped)  # (a line without '{' opens none)
        if not opens and "%" in stripped and not stripped.startswith(("^", "tt.func")):  # an op (no region)
            m = _RESULT_HEAD.match(stripped)
            results = _result_names(m.group(1)) if m else []
            hits = renamed.keys() & _VALUE_NAME.findall(stripped) if renamed else None
            new = {token: lookup(token) for token in hits.difference(results)} if hits else {}
            scope = scopes[-1]
            for name in results:
                if name in seen:
                    new[name] = define(name, scope, k + 1)
                else:  # its first definition in this function: it keeps its name (``define``'s first case)
                    seen.add(name)
                    scope[name] = (name, k + 1)
            if new:
                rewrite(k, new)
            continue
        new: dict[str, str] = {}
        inner: dict[str, tuple[str, int]] = {}
        if stripped.startswith("tt.func"):
            seen.clear()
            renamed.clear()
            function += 1
            scopes, inner = [_Isolated()], _Isolated()
            for name in _DECLARED.findall(stripped):
                new[name] = define(name, inner, k + 1)
        elif opens and stripped.startswith("partition") and _PARTITION.match(stripped):
            inner = _Isolated()  # a partition's arguments: its isolated region's
            for name in _DECLARED.findall(stripped):
                new[name] = define(name, inner, k + 1)
        elif stripped.startswith("^"):  # a block label: its arguments are the region's
            for name in _DECLARED.findall(stripped):
                new[name] = define(name, scopes[-1], k + 1)
        elif "%" in stripped:
            m = _RESULT_HEAD.match(stripped)
            results = _result_names(m.group(1)) if m else []
            head = _head_defined(stripped[m.end():] if m else stripped) if opens else set()
            hits = renamed.keys() & _VALUE_NAME.findall(stripped) if renamed else None
            if hits:  # uses of a renamed name: the name of the definition they see
                for token in hits.difference(results, head):
                    new[token] = lookup(token)
            scope = scopes[-1]
            for name in results:
                new[name] = define(name, scope, k + 1)
            for name in sorted(head):  # "scf.for %i = ... iter_args(%acc = %init)": the loop body's
                new[name] = define(name, inner, k + 1)
        if new:
            rewrite(k, new)
        if opens:
            scopes.append(inner)
    out = "\n".join(lines)
    return (out if out != text else text), redefined


@checked
def unique_value_names(text: str) -> str:
    """``text`` with one name per value in each function. MLIR's printer gives values of sibling regions
    (two loops' bodies) the same name; a reader that keys values by name (``rewrite``, ``ttir_import``,
    ``shared_memory``) would mix them. The first definition of a name keeps it; a later one is renamed
    (``%x_19`` -> ``%x_19_1``, ``%12`` -> ``%v12_1``) with its uses, by MLIR's scoping (a use names the
    definition in its region or an enclosing one). A text whose names are unique is returned as it is.

    >>> text = "\\n".join(["tt.func @k(%n: i32) {", "  scf.for %i = %n to %n step %n  : i32 {",
    ...                    "    %x = arith.addi %i, %n : i32", "  }", "  scf.for %i = %n to %n step %n  : i32 {",
    ...                    "    %x = arith.muli %i, %n : i32", "  }", "}"])
    >>> unique_value_names(text).splitlines()[4:6]
    ['  scf.for %i_1 = %n to %n step %n  : i32 {', '    %x_1 = arith.muli %i_1, %n : i32']
    """
    return _renamed(text)[0]


@checked
def parse_module(text: str, *, max_bytes: int = MAX_IR_BYTES) -> Module:
    """Parse the text of one TTIR / TTGIR module (see the module doc). ``LayoutError`` if it has no
    ``tt.func``, or if it has more than ``max_bytes`` UTF-8 bytes (``limits.MAX_IR_BYTES``). Each value has
    one name in its function (``unique_value_names``). The parse is an immutable value: the last few are
    kept (a rewrite and its model read each candidate's text more than once)."""
    if not isinstance(text, str):
        raise LayoutError(f"text must be a string of TTIR / TTGIR, got {type(text).__name__}")
    return _parsed(text, max_bytes)


@functools.lru_cache(maxsize=16)
def _parsed(text: str, max_bytes: int) -> Module:
    return _Parser(*_renamed(check_ir_text(text, max_bytes=max_bytes))).run()


#: ops with regions, which must have them (a truncated text loses a loop's body)
_REGION_OPS = ("scf.for", "scf.if", "scf.while", "tt.reduce", "tt.scan")
#: the fewest operands of ops read by position (an operand deleted or mangled in the text)
_BINARY = ("addi", "subi", "muli", "divsi", "divui", "remsi", "remui", "andi", "ori", "xori", "shli", "shrsi", "shrui",
           "addf", "subf", "mulf", "divf", "maxnumf", "minnumf", "maximumf", "minimumf", "maxsi", "minsi", "maxui",
           "minui", "cmpi", "cmpf", "ceildivsi", "floordivsi")
_MIN_OPERANDS = {**{f"arith.{name}": 2 for name in _BINARY}, "arith.select": 3, "tt.addptr": 2, "tt.dot": 3,
                 "tt.store": 2, "tt.gather": 2, "tt.join": 2, "tt.load": 1, "tt.splat": 1, "tt.broadcast": 1,
                 "tt.expand_dims": 1, "tt.trans": 1, "tt.reshape": 1, "tt.split": 1, "ttg.convert_layout": 1,
                 "ttg.local_load": 1, "ttg.async_copy_global_to_local": 2, "tt.atomic_rmw": 2, "tt.atomic_cas": 3}
#: ops printed in the generic form with a type for each operand and result, read by position
_TYPE_EACH = ("tt.reduce", "tt.scan")
#: an op whose result type is implied (``%true = arith.constant true``; ``ttg.async_*``'s tokens)
_UNTYPED = re.compile(rf"\s*{VALUE_NAME}\s*=\s*arith\.constant (?:true|false)\b")
#: names an op's head defines for its regions (``scf.for %i = %a to ...``, ``iter_args(%acc = %init)``)
_HEAD_DEFINED = re.compile(rf"({VALUE_NAME})\s*=\s*%")


def _warp_specialize_types(ops: tuple[Op, ...], k: int) -> tuple[str, ...] | None:
    """The result types of the ``ttg.warp_specialize`` ``ops[k]``, which Triton prints on its last region's
    closing line (``} : (captures' types) -> T``), read from the ``default`` / ``partitionN`` pseudo-ops
    the parser puts after it; None where none follows."""
    j = k + 1
    while j < len(ops) and (ops[j].name == "default" or _PARTITION.fullmatch(ops[j].name)):
        j += 1
    if j == k + 1:
        return None
    signature = ops[j - 1].attrs
    arrow = _find_top(signature, "->")
    return _types(signature[arrow + 2:]) if arrow >= 0 else ()


#: a string literal (an inline asm's text, whose ``^`` are no labels)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def _successors(op: Op) -> list[tuple[str, list[str], list[str]]]:
    """(label, operands, their types) of each block the terminator ``op`` branches to, in order:
    ``cf.cond_br %c, ^bb1(%a : i32), ^bb2`` -> ``[('^bb1', ['%a'], ['i32']), ('^bb2', [], [])]``."""
    text = _STRING.sub('""', _strip_loc(op.text)[0])
    out = []
    for m in _LABEL.finditer(text):
        values: list[str] = []
        types: list[str] = []
        end = closing(text, m.end()) if text.startswith("(", m.end()) else -1
        if end > 0:
            inner = text[m.end() + 1:end]
            colon = _find_top(inner, " : ")
            values = split_top(inner[:colon] if colon >= 0 else inner)
            types = split_top(inner[colon + 3:]) if colon >= 0 else []
        out.append((m.group(0), values, types))
    return out


def _blocks(region: Region) -> list[tuple[str, tuple[tuple[str, str], ...], tuple[Op, ...]]]:
    """(label, arguments, ops) of each block of ``region`` in text order, the entry first (an unlabelled
    entry: label ``""``, the region's arguments)."""
    if not region.blocks:
        return [("", region.args, region.ops)]
    starts = [b.start for b in region.blocks] + [len(region.ops)]
    out = [("", (), region.ops[:starts[0]])] if starts[0] > 0 else []
    return out + [(b.label, b.args, region.ops[starts[k]:starts[k + 1]]) for k, b in enumerate(region.blocks)]


def _dominators(successors: list[list[int]]) -> list[int | None]:
    """Per block of a region (0 the entry; ``successors[b]``: the blocks ``b`` branches to), the blocks
    that dominate it as a bit mask (bit ``a``: every path from the entry to it passes ``a``; itself
    included), or None where no path from the entry reaches it.

    >>> _dominators([[1, 2], [3], [3], [], [3]])  # a diamond, and 4 unreachable
    [1, 3, 5, 9, None]
    """
    n = len(successors)
    preds: list[list[int]] = [[] for _ in range(n)]
    reached, stack = {0}, [0]
    while stack:
        b = stack.pop()
        for c in successors[b]:
            preds[c].append(b)
            if c not in reached:
                reached.add(c)
                stack.append(c)
    full = (1 << n) - 1
    dom: list[int | None] = [1 if b == 0 else full if b in reached else None for b in range(n)]
    changed = True
    while changed:
        changed = False
        for b in range(1, n):
            if dom[b] is None:
                continue
            new = full
            for p in preds[b]:
                new &= dom[p]  # type: ignore[operator]
            new |= 1 << b
            if new != dom[b]:
                dom[b], changed = new, True
    return dom


def _defines(args: tuple[tuple[str, str], ...], ops: tuple[Op, ...]) -> set[str]:
    """The names a block defines: its arguments and its ops' results (``%3#1`` and ``%3``)."""
    out = {name for name, _ in args}
    for op in ops:
        out.update(op.results)
        out.update(r.split("#")[0] for r in op.results)
    return out


def _check_region(region: Region, outer: set[str], argument: str) -> None:
    """``check_well_formed`` of ``region``, where ``outer`` are visible (the enclosing regions' values).
    Its blocks follow dominance: a block sees its own arguments and the values of the blocks that dominate
    it (in any text order); MLIR checks no use in a block the entry does not reach, which sees every value
    of the region. Each terminator branches to blocks of its region other than the entry, with as many
    operands as the block has arguments."""
    blocks = _blocks(region)
    index = {label: k for k, (label, _, _) in enumerate(blocks) if label}
    successors: list[list[int]] = []
    for label, _, ops in blocks:
        targets = []
        for target, values, _ in _successors(ops[-1]) if ops else ():
            where = f"{argument}: {ops[-1].name} at {ops[-1].loc}"
            if target not in index or index[target] == 0:
                raise LayoutError(f"{where} branches to {quote(target)}, which is " + (
                    "its region's entry block (the entry has no predecessors)" if target in index else
                    "no block of its region (a branch targets a block of its own region)"))
            args = blocks[index[target]][1]
            if len(values) != len(args):
                raise LayoutError(f"{where} passes {len(values)} operands to {quote(target)}, which has "
                                  f"{len(args)} arguments (a branch passes one value per argument)")
            targets.append(index[target])
        successors.append(targets)
    if len(blocks) == 1:
        _check_ops(blocks[0][2], outer | _defines(blocks[0][1], ()), argument)
        return
    defines = [_defines(args, ops) for _, args, ops in blocks]
    dominators = _dominators(successors)
    for b, (_, args, ops) in enumerate(blocks):
        mask = dominators[b]
        own = {name for name, _ in args}
        if mask is None:  # unreached: MLIR checks none of its uses (nested regions' against other blocks)
            others = set().union(*(d for a, d in enumerate(defines) if a != b))
            _check_ops(ops, outer | others | own, argument, unordered=defines[b])
        else:
            above = set().union(*(d for a, d in enumerate(defines) if a != b and mask >> a & 1))
            _check_ops(ops, outer | above | own, argument)


def _check_ops(ops: tuple[Op, ...], defined: set[str], argument: str, unordered: set[str] = frozenset()) -> None:
    """``check_well_formed`` of the ops of one block in a scope where ``defined`` are the values visible
    (added to as ops define); ``unordered``: names its ops may use before their definition (a block no
    path from the entry reaches)."""
    for index, op in enumerate(ops):
        where = f"{argument}: {op.name} at {op.loc}"
        head = op.text.split("{")[0]
        if op.results:
            head = head.split("=", 1)[-1]
        local = set(_HEAD_DEFINED.findall(head)) if op.regions else set()
        if op.name in _REGION_OPS and not op.regions:
            raise LayoutError(f"{where} has no region (its body: is the text truncated?)")
        partition = _PARTITION.fullmatch(op.name) is not None
        for operand in () if partition else op.operands:  # a partition's "operands" are its arguments
            if operand not in defined and operand not in local and operand not in unordered:
                raise LayoutError(f"{where} uses {quote(operand)}, which is not defined before it or not visible "
                                  "here (a value is visible after its definition in its block, in the blocks "
                                  "that block dominates and in the regions nested in them, not outside the "
                                  "region that defines it)")
        untyped = _UNTYPED.match(op.text) or op.name.startswith("ttg.async_") or op.name == "ttg.warp_specialize" \
            and len(_warp_specialize_types(ops, index) or ()) == len(op.results)
        if op.results and not op.result_types and not untyped:
            raise LayoutError(f"{where}: results {quote(', '.join(op.results))} without a type (each result "
                              "needs its type)")
        least = _MIN_OPERANDS.get(op.name, 0)
        if len(op.operands) < least or least and not op.operand_types:
            raise LayoutError(f"{where}: {len(op.operands)} operands, {len(op.operand_types)} operand types "
                              f"({op.name} has at least {least} operands and their types)")
        if op.name in _TYPE_EACH and (len(op.operand_types), len(op.result_types)) != (len(op.operands),
                                                                                    len(op.results)):
            raise LayoutError(f"{where}: {len(op.operands)} operands and {len(op.results)} results, but "
                              f"{len(op.operand_types)} and {len(op.result_types)} types ({op.name} gives each its type)")
        for k, region in enumerate(op.regions):
            if partition:  # isolated from above: it sees its own arguments only
                scope = {name for name, _ in block_arguments(op.text)}
            else:  # a while's "(%a = %init)" are its before region's arguments, not its after region's
                scope = defined | (local if k == 0 or op.name != "scf.while" else set())
            _check_region(region, scope, argument)
        defined.update(op.results)
        defined.update(r.split("#")[0] for r in op.results)


@checked
def check_well_formed(module: Module, argument: str = "text") -> None:
    """``LayoutError`` naming ``argument`` unless every op of ``module``'s first function uses only values
    visible where it is, by MLIR's scoping and dominance: a value is visible after its definition in its
    block, in the blocks that block dominates (every path from the region's entry passes it; in any text
    order: ``scf-to-cf``'s ``cf.br`` / ``cf.cond_br``) and in the regions nested in them, never outside the
    region that defines it; MLIR checks no use in a block no path from the entry reaches. A block's
    arguments are its values (an ``scf.for``'s ``%i`` and ``iter_args`` in its body, an ``scf.while``'s
    ``(%a = %init)`` in its before region only); a ``ttg.warp_specialize`` partition sees its own arguments
    only (isolated from above). A branch targets a block of its region other than the entry and passes
    it one operand per argument. No name is defined again where an earlier definition of it is visible
    (sibling regions may reuse names; Triton's printer never reuses an op's result name in its regions,
    which MLIR would allow). Each op gives its results a type (a ``ttg.warp_specialize`` on its last
    region's closing line), has the region its kind needs (``scf.for``'s body) and the operands and operand
    types of its kind (``tt.addptr``: 2), and keeps ``check_types``' rules. What readers of a function's
    values by name (``ttir_import``, ``rewrite``) require, and what ``rewrite.rewrite_kernel`` asks of a
    candidate; the parser itself accepts any op line.

    >>> check_well_formed(parse_module("module {\\n  tt.func @k() {\\n    %y = math.exp %x : f32\\n  }\\n}"), "ttgir")
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    linear_layouts.core.errors.LayoutError: ttgir: math.exp at ? uses '%x', which is not defined before it or not visible here ...
    """
    fn = module.functions[0]
    for name, line, earlier in fn.redefined[:1]:
        raise LayoutError(f"{argument}: line {line} defines {quote(name)} again where its definition at line "
                          f"{earlier} is visible (a name is defined once in its region and the regions nested "
                          "in it; sibling and isolated regions may reuse it)")
    _check_region(fn.body, {name for name, _ in fn.args}, argument)
    check_types(module, argument)


@dataclass(frozen=True)
class LoopBounds:
    """An ``scf.for``'s induction variable and the values of its bounds: it runs ``induction`` from
    ``lower`` while below ``upper``, by ``step`` (each a value name)."""

    induction: str
    lower: str
    upper: str
    step: str


#: an ``scf.for``'s head: ``[RESULTS =] scf.for [unsigned] %i = %lower to %upper step %step``
_FOR_HEAD = re.compile(rf"\s*(?:{RESULT_LIST}\s*=\s*)?scf\.for\s+(?:unsigned\s+)?({VALUE_NAME})\s*=\s*"
                       rf"({VALUE_NAME})\s+to\s+({VALUE_NAME})\s+step\s+({VALUE_NAME}){NAME_END}")


@checked
def loop_bounds(text: str) -> LoopBounds:
    """The induction variable and bounds of the ``scf.for`` whose op text (its head line) is ``text``:
    ``[RESULTS =] scf.for [unsigned] %i = %lower to %upper step %step ...``; ``LayoutError`` naming
    ``text`` where it is no such head.

    >>> loop_bounds("%3:2 = scf.for %i = %c0 to %n step %c4 iter_args(%x = %0, %y = %1) -> (i32, f32) : i32 {")
    LoopBounds(induction='%i', lower='%c0', upper='%n', step='%c4')
    """
    m = _FOR_HEAD.match(text)
    if m is None:
        raise LayoutError(f"text: {quote(text[:80])} is no scf.for head ('[%r =] scf.for %i = %lower to %upper "
                          "step %step ...')")
    return LoopBounds(*m.groups())


@checked
def iter_args(text: str) -> tuple[tuple[str, str], ...]:
    """The ``(%arg, %init)`` pairs of an ``scf.for``'s ``iter_args(...)`` in the op text ``text`` (its
    head line; ``()`` when it has none).

    >>> iter_args("%3:2 = scf.for %i = %a to %b step %c iter_args(%x = %0, %y = %cst) -> (i32, f32) : i32 {")
    (('%x', '%0'), ('%y', '%cst'))
    """
    start = text.find("iter_args(")
    if start < 0:
        return ()
    open_at = start + len("iter_args")
    end = closing(text, open_at)
    inner = text[open_at + 1:end if end >= 0 else len(text)]
    pairs = []
    for item in split_top(inner):
        arg, eq, init = item.partition("=")
        if eq:
            pairs.append((arg.strip(), init.strip()))
    return tuple(pairs)


#: element-wise ops whose one spelled type is each operand's and the result's (``arith.addf %a, %b : T``)
_ELEMENTWISE = ("arith.", "math.")
#: ops whose one spelled type is not every operand's (``arith.select %c, %a, %b : T``: %c is i1)
_NOT_UNIFORM = ("arith.select", "arith.constant")


class _Types:
    """The types ``check_types`` knows, canonical (aliases expanded, no blanks), by value name."""

    def __init__(self, module: Module, argument: str):
        self.module = module
        self.argument = argument
        self.of: dict[str, str] = {}
        self.canonical: dict[str, str] = {}

    def norm(self, text: str) -> str:
        if text not in self.canonical:
            self.canonical[text] = re.sub(r"\s+", "", self.module.expand(text))
        return self.canonical[text]

    def define(self, name: str, text: str) -> None:
        self.of[name] = self.norm(text)

    def use(self, op: Op, name: str, text: str) -> None:
        have = self.of.get(name)
        if have is not None and have != self.norm(text):
            raise LayoutError(f"{self.argument}: {op.name} at {op.loc} uses {quote(name)} as {quote(text)}, but it "
                              f"is defined as {quote(have)} (a value has one type, at its definition and every use)")


def _encoding(canonical: str) -> str | None:
    """The encoding of a canonical ``tensor<SHAPExELEMENT,ENCODING>`` type (None: not a tensor, or none)."""
    if not canonical.startswith("tensor<"):
        return None
    parts = split_top(canonical[7:-1])
    return parts[1] if len(parts) > 1 else None


def _element_swapped(canonical: str, element: str) -> str:
    """A canonical type with another element type ``element``: ``tensor<4x!tt.ptr<f32>,#a>`` with ``i1`` ->
    ``tensor<4xi1,#a>``; a type that is not a tensor -> ``element``."""
    if not canonical.startswith("tensor<"):
        return element
    parts = split_top(canonical[7:-1])
    shape, _ = shape_and_element(parts[0])
    return "tensor<" + ",".join(["x".join([str(d) for d in shape] + [element])] + parts[1:]) + ">"


#: results whose type the text does not spell but implies from the operand's: a load's is the pointee
#: (None), a comparison's is i1
_IMPLIED_ELEMENT = {"tt.load": None, "arith.cmpi": "i1", "arith.cmpf": "i1"}


def _check_op_types(op: Op, types: _Types, parent: Op | None) -> None:
    """``check_types`` of one op (its regions after it, with the op as their parent)."""
    body = _strip_loc(op.text)[0]
    m = _RESULTS.match(body)
    body = m.group(2) if m else body
    colon = _find_top(body, " : ", last=True)
    signature = body[colon + 3:] if colon >= 0 else ""
    # result types the text spells (``-> T``, ``to T``, a generic op's), not the parser's guess (its operands')
    spelled = _find_top(signature, "->") >= 0 or _find_top(signature, " to ") >= 0 or body.startswith('"')
    operands = op.operands
    if op.regions and op.name in ("scf.for", "scf.while"):
        pairs = iter_args(op.text) if op.name == "scf.for" else ()
        for (arg, init), result_type in zip(pairs, op.result_types):
            types.use(op, init, result_type)  # an init has its loop result's type
            types.define(arg, result_type)
    elif len(op.operand_types) == len(operands):
        for name, text in zip(operands, op.operand_types):
            types.use(op, name, text)
    elif op.name.startswith(_ELEMENTWISE) and op.name not in _NOT_UNIFORM and len(op.operand_types) == 1:
        for name in operands:
            types.use(op, name, op.operand_types[0])
    elif op.name == "arith.select" and len(op.operand_types) in (1, 2) and len(operands) == 3:
        if len(op.operand_types) == 2:  # "arith.select %c, %a, %b : C, T" (C: i1 alone, one type: T's)
            types.use(op, operands[0], op.operand_types[0])
        for name in operands[1:]:
            types.use(op, name, op.operand_types[-1])
    if op.name == "scf.yield" and parent is not None and parent.name in ("scf.for", "scf.if") \
            and len(op.operand_types) == len(parent.result_types):
        for k, (text, result) in enumerate(zip(op.operand_types, parent.result_types)):
            if types.norm(text) != types.norm(result):
                raise LayoutError(f"{types.argument}: scf.yield at {op.loc} yields {quote(text)} as result {k} of "
                                  f"{parent.name} at {parent.loc}, whose type is {quote(result)} (a region yields "
                                  "its op's result types)")
    if op.name.startswith(_ELEMENTWISE) and op.name != "arith.constant":
        encodings = {_encoding(types.norm(t)) for t in op.operand_types + op.result_types} - {None}
        if len(encodings) > 1:
            raise LayoutError(f"{types.argument}: {op.name} at {op.loc} mixes the layouts {quote(sorted(encodings))} "
                              "(an element-wise op's operands and results have one layout)")
    inferred = op.name.startswith(_ELEMENTWISE) and op.name not in ("arith.cmpi", "arith.cmpf", "arith.select")
    if len(op.results) == 1 and not spelled and op.name in _IMPLIED_ELEMENT and op.operand_types:
        operand, element = types.norm(op.operand_types[0]), _IMPLIED_ELEMENT[op.name]
        implied = pointee(operand) if element is None else _element_swapped(operand, element)
        if implied is not None:
            types.of[op.results[0]] = implied
    elif op.results and (spelled or inferred or op.name in ("scf.if", "scf.for")):  # scf: "-> (T0, T1)"
        result_types = op.result_types
        if len(result_types) == 1 < len(op.results):  # "%a, %b = tt.split %x : T -> T'"
            result_types = result_types * len(op.results)
        if len(result_types) == len(op.results):
            for name, text in zip(op.results, result_types):
                types.define(name, text)
    for region in op.regions:
        _check_region_types(region, types, op)


def _check_region_types(region: Region, types: _Types, parent: Op | None) -> None:
    """``check_types`` of the ops of ``region`` (``parent``'s, None for a function's body): its blocks'
    arguments typed; a branch's operands have the types it spells, which are its target's arguments';
    a ``cf.cond_br``'s condition is i1; a ``ttg.warp_specialize``'s results have the types on its last
    region's closing line, which its default region yields (``ttg.warp_yield``)."""
    for name, text in region.args + tuple(a for block in region.blocks for a in block.args):
        types.define(name, text)
    arguments = {block.label: block.args for block in region.blocks}
    yields: tuple[str, ...] | None = None  # the last ttg.warp_specialize's result types
    for k, op in enumerate(region.ops):
        if op.name == "ttg.warp_specialize":
            yields = _warp_specialize_types(region.ops, k)
            if yields is not None and len(yields) == len(op.results):
                for name, text in zip(op.results, yields):
                    types.define(name, text)
        elif op.name == "default" and yields is not None and op.regions and op.regions[0].ops \
                and op.regions[0].ops[-1].name == "ttg.warp_yield":
            last = op.regions[0].ops[-1]
            spelled = last.operand_types if last.operands else ()
            if len(spelled) != len(yields) or any(types.norm(a) != types.norm(b) for a, b in zip(spelled, yields)):
                raise LayoutError(f"{types.argument}: ttg.warp_yield at {last.loc} yields {quote(', '.join(spelled))}, "
                                  f"but its ttg.warp_specialize's results are {quote(', '.join(yields))} (the "
                                  "default region yields the op's result types)")
        if op.name == "cf.cond_br" and op.operands:
            types.use(op, op.operands[0], "i1")
        for target, values, spelled in _successors(op) if "^" in op.text else ():
            for j, (name, text) in enumerate(zip(values, spelled)):
                types.use(op, name, text)
                expected = arguments.get(target, ())
                if j < len(expected) and types.norm(text) != types.norm(expected[j][1]):
                    raise LayoutError(f"{types.argument}: {op.name} at {op.loc} passes {quote(text)} to argument "
                                      f"{j} of {quote(target)}, whose type is {quote(expected[j][1])} (a branch "
                                      "passes each argument its type)")
        _check_op_types(op, types, parent)


@checked
def check_types(module: Module, argument: str = "text") -> None:
    """``LayoutError`` naming ``argument`` where ``module``'s first function breaks one of the rules of types
    that MLIR's and Triton's verifiers enforce, as far as the text spells the types:

    * a value is used with the type it was defined with (a function's or block's argument, an op's result,
      a loop's ``iter_args`` with the loop's result types, a load's pointee, a comparison's i1; aliases
      expanded: ``#blocked`` is its body);
    * an ``scf.for``'s inits and the ``scf.yield`` of an ``scf.for`` / ``scf.if`` have the op's result types;
    * a ``ttg.warp_specialize``'s results have the types on its last region's closing line, which its
      default region's ``ttg.warp_yield`` yields (as many);
    * a branch's operands have the types of its target block's arguments; a ``cf.cond_br``'s condition is i1;
      in a function of several blocks a use may come before its definition in the text;
    * an element-wise op (``arith.*``, ``math.*``) has one layout for its operands and results.

    A use whose type the text does not spell (``tt.load %p, %m : T`` spells only the pointer's) is not checked.

    >>> text = '''#a = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
    ... #b = #ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
    ... module {
    ...   tt.func @k(%x: tensor<512xf32, #a>) {
    ...     %y = math.exp %x : tensor<512xf32, #b>
    ...     tt.return
    ...   }
    ... }'''
    >>> check_types(parse_module(text), "ttgir")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    linear_layouts.core.errors.LayoutError: ttgir: math.exp at ? uses '%x' as 'tensor<512xf32, #b>', but it is defined as ...
    """
    fn = module.functions[0]
    types = _Types(module, argument)
    for name, text in fn.args:
        types.define(name, text)
    _check_region_types(fn.body, types, None)
    if len(_blocks(fn.body)) > 1 or any(len(_blocks(region)) > 1 for op in fn.walk() for region in op.regions):
        _check_region_types(fn.body, types, None)  # blocks in any order: a use before its definition's text


@checked
def check_same_kernel(ttir: Module, ttgir: Module) -> None:
    """``LayoutError`` unless ``ttir`` and ``ttgir`` are of one kernel: their first functions have one name
    (Triton keeps it through every pass). Their ops are tied by source location, which a TTIR of another
    kernel never matches: its costs and layouts would be silently nothing.

    >>> k = parse_module("module {\\n  tt.func @k() {\\n    tt.return\\n  }\\n}")
    >>> check_same_kernel(k, parse_module("module {\\n  tt.func @j() {\\n    tt.return\\n  }\\n}"))
    Traceback (most recent call last):
    ...
    linear_layouts.core.errors.LayoutError: ttgir: its function '@j' is not the TTIR's '@k' (ttir and ttgir must be one compile's)
    """
    if not ttir.functions or not ttgir.functions:
        raise LayoutError("ttir, ttgir: each needs a function (tt.func)")
    a, b = ttir.functions[0].name, ttgir.functions[0].name
    if a != b:
        raise LayoutError(f"ttgir: its function {quote('@' + b)} is not the TTIR's {quote('@' + a)} (ttir and ttgir "
                          "must be one compile's)")


#: TTGIR ops standing for a TTIR op of another name (a pipelined load: cp.async, then a local_load)
SAME_AS = {"ttg.local_load": "tt.load"}


def op_key(op: Op) -> tuple:
    """An op's identity across the TTIR and the TTGIR of one compile: its name (``SAME_AS`` for a TTGIR
    op standing for a TTIR op of another name) and its source location."""
    loc = op.loc
    return (SAME_AS.get(op.name, op.name), loc.file, loc.line, loc.column, loc.name)


@checked
def last_module(dump: str, after: str | None = None, *, layout_free: bool = False) -> str:
    """The last module printed in an ``MLIR_ENABLE_DUMP`` log (``// -----// IR Dump After <Pass> ...``
    headers), or the last one after a pass whose name contains ``after``; ``layout_free``: the last one
    without layouts (the TTIR before the conversion to TritonGPU). A plain module is returned as is."""
    if "// -----// IR Dump" not in dump:
        return dump
    chunks = re.split(r"^// -----// IR Dump (?:Before|After) ([^\n]*?)//----- //\s*$", dump, flags=re.M)
    best = None
    for k in range(1, len(chunks) - 1, 2):
        header, body = chunks[k], chunks[k + 1]
        if "tt.func" in body and (after is None or after in header) and not (layout_free and "#ttg." in body):
            best = body
    if best is None:
        raise LayoutError("dump: no module found" + (f" after a pass matching {quote(after)}" if after else ""))
    return best
