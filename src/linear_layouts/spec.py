"""Layout specs as text: Gluon constructor calls and raw bases, parsed without ``eval``.

Accepted forms (whitespace free):

* a catalog descriptor in Gluon constructor syntax, nested as in Gluon, optional ``gl.`` / ``ttgl.`` prefix:
  ``BlockedLayout([1,4],[4,8],[4,1],[1,0])``, ``SliceLayout(0, BlockedLayout(...))``,
  ``NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16)``,
  ``DotOperandLayout(0, NVMMADistributedLayout([2,0],[4,1],[16,8]), 2)``;
* Triton-style raw bases: ``DistributedLinearLayout(reg_bases=[[0,1]], lane_bases=..., warp_bases=...,
  block_bases=[], shape=[16,32])``, ``SharedLinearLayout(offset_bases=[[0,1],...], block_bases=[])`` or this
  package's ``LinearLayout({"register": [[0,1]], ...}, {"dim0": 16, "dim1": 32})``;
* Triton's TTGIR text: an attribute ``#ttg.blocked<{sizePerThread = [1, 4], ...}>`` (needs a shape;
  :mod:`linear_layouts.layouts.ttgir_text`) or a type ``tensor<32x64xf16, #ttg.blocked<{...}>>`` /
  ``!ttg.memdesc<...>`` (carries its shape; :func:`linear_layouts.triton_model.ir_types.parse_tensor_type`);
* JSON: ``{"bases": {"register": [[0,1]], "lane": ...}, "out_dims": {"dim0": 16, "dim1": 32}}``, read by
  :meth:`LinearLayout.from_json` (the format of :meth:`LinearLayout.to_json`; ``bases`` and ``out_dims`` may
  also be ordered lists of pairs, the format of Triton's unit-test JSON, and ``out_dims`` a list of names);
* CuTe text, read by :mod:`linear_layouts.cute.parse`: ``Swizzle<3,4,3> o (8,64):(64,1)``,
  ``composition(Swizzle<3,4,3>{}, Layout<Shape<_8,_64>, Stride<_64,_1>>{})``, CuTe DSL calls, and
  thread-value layouts ``TV(16,8) ((4,8),(2,2)):((32,1),(16,8))`` (``linear_layouts.cute.to_linear``).

The text is read with :mod:`ast` / :mod:`json`; only literals (ints, bools, strings, None, lists, tuples,
dicts) and calls of whitelisted names are accepted. Names come from :mod:`linear_layouts.layouts`.
Every mistake raises :class:`LayoutError` with the column where it happened and at most ~80 characters
of the text around it. Before parsing, :func:`linear_layouts.core.limits.check_text` bounds the text's length,
nesting depth and integer digits (``limits.MAX_SPEC_CHARS``, ``MAX_SPEC_DEPTH``, ``MAX_INT_DIGITS``), and an
operator (``+``, ``~``, ``*``, ``--``, ...: nothing a spec uses) is refused at its column, so neither :mod:`ast`
nor :mod:`json` can recurse or read without bound; what :mod:`ast` still nests without brackets (``a.a.a``,
``f()()``) is measured by an iterative walk before the tree is read (at most ``MAX_AST_DEPTH`` levels).
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from linear_layouts.core.errors import LayoutError, did_you_mean
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import MAX_SPEC_DEPTH, check_text, excerpt, quote, shorten

__all__ = ["ParsedSpec", "parse_spec", "layout_from_spec", "catalog_classes", "RAW_CONSTRUCTORS"]

RAW_CONSTRUCTORS = ("LinearLayout", "DistributedLinearLayout", "SharedLinearLayout")
_PREFIXES = ("gl", "ttgl", "language", "linear_layouts", "catalog", "amd", "nvidia", "blackwell")
#: Catalog classmethods a spec may call, as Gluon spells them: ``PaddedSharedLayout.with_identity_for(...)``.
_CLASSMETHODS = ("with_identity_for", "get_default_for", "from_warps_per_cta")
#: Levels of the expression tree of a spec (a bracket is two or three: a call, its list, a keyword).
MAX_AST_DEPTH = 4 * MAX_SPEC_DEPTH
#: Outside strings, a character no spec has (an operator), or a minus sign after another one.
_NOT_A_SPEC = re.compile(r"""(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|#.*)|([^\w\s.,:=()\[\]{}'"-]|-\s*-)""")


@dataclass(frozen=True)
class ParsedSpec:
    """A parsed spec: ``value`` is a catalog descriptor (needs a shape) or a ready LinearLayout."""

    text: str
    value: Any

    @property
    def is_linear(self) -> bool:
        """True when the spec spelled out the bases (no shape needed)."""
        return (isinstance(self.value, LinearLayout) or callable(getattr(self.value, "linear_layout", None))
                or _is_cute(self.value))

    def to_linear(self, shape: Sequence[int] | None = None) -> LinearLayout:
        """The LinearLayout of this spec over ``shape`` (a descriptor needs it; raw bases must match it).

        >>> parse_spec('{"bases": {"offset": [[1]]}, "out_dims": {"dim0": 2}}').to_linear().out_dims
        {'dim0': 2}
        """
        if isinstance(self.value, LinearLayout) or _is_cute(self.value):
            value = self.value if isinstance(self.value, LinearLayout) else _cute().to_linear(self.value)
            if shape is not None and list(_check_shape(shape)) != list(value.out_dims.values()):
                raise LayoutError(f"shape: {list(shape)} does not match the spec's out dims "
                                  f"{dict(value.out_dims)}")
            return value
        if shape is None and callable(getattr(self.value, "linear_layout", None)):
            return self.value.linear_layout()  # descriptors that carry their own bases and shape
        if shape is None:
            raise LayoutError(f"shape: {type(self.value).__name__} needs a tensor shape (e.g. --shape 16,32)")
        return _descriptor_to_linear(self.value, list(_check_shape(shape)))


def _check_shape(shape: Any) -> tuple[int, ...]:
    """A tensor shape: a list of powers of two (no floats, bools or strings), else LayoutError."""
    from linear_layouts.layouts.base import check_shape

    return check_shape(shape)


def catalog_classes() -> dict[str, type]:
    """The descriptor classes a spec may name: the public classes of :mod:`linear_layouts.layouts`.

    >>> "BlockedLayout" in catalog_classes()
    True
    """
    try:
        from linear_layouts import layouts as catalog
    except ImportError:  # the catalog is optional for raw-bases specs
        return {}
    names = getattr(catalog, "__all__", [n for n in dir(catalog) if not n.startswith("_")])
    found: dict[str, type] = {}
    for name in names:
        obj = getattr(catalog, name, None)
        if inspect.isclass(obj) and dataclasses.is_dataclass(obj):  # descriptors are frozen dataclasses
            found[name] = obj
    return found


def _descriptor_to_linear(descriptor: Any, shape: list[int]) -> LinearLayout:
    from linear_layouts import layouts as catalog

    for function_name in ("to_linear_layout", "to_linear"):
        function = getattr(catalog, function_name, None)
        if callable(function):
            return function(descriptor, shape)
    method = getattr(descriptor, "to_linear", None) or getattr(descriptor, "to_linear_layout", None)
    if method is None:
        raise LayoutError(f"spec: {type(descriptor).__name__} has no conversion to a LinearLayout")
    return method(shape)


def parse_spec(text: str) -> ParsedSpec:
    """Parse a layout spec (see the module docstring) into a descriptor or a LinearLayout.

    >>> parse_spec('LinearLayout({"register": [[1]]}, ["dim0"])').value.out_dims
    {'dim0': 2}
    """
    check_text(text, "spec")
    stripped = text.strip()
    if not stripped:
        raise LayoutError("spec: empty layout spec")
    if stripped.startswith("{"):
        return ParsedSpec(text, _from_json(stripped))
    if stripped.startswith(("#", "tensor<", "!ttg.memdesc<")):  # Triton's TTGIR text
        if stripped.startswith("#"):
            from linear_layouts.layouts.ttgir_text import parse_attribute

            return ParsedSpec(text, parse_attribute(stripped))
        from linear_layouts.triton_model.ir_types import parse_tensor_type

        return ParsedSpec(text, parse_tensor_type(stripped))
    if _cute().looks_like_cute(stripped):
        return ParsedSpec(text, _cute().parse_cute(stripped))
    return ParsedSpec(text, _Builder(stripped).build(_expression(stripped).body))


def _expression(text: str) -> ast.Expression:
    """``ast.parse(text, mode="eval")`` for a spec's Python-call form, bounded: operators refused before
    parsing, the parser's own depth errors and warnings turned into LayoutError / silence, the tree's
    depth measured (iteratively) before anything walks it recursively."""
    for found in _NOT_A_SPEC.finditer(text):
        if found.group(1):
            column = found.start(1) + 1
            raise LayoutError(f"spec: {quote(''.join(found.group(1).split()))} "
                              f"at column {column} is not a literal or a layout constructor (a spec has no "
                              f"operators)\n{excerpt(text, column - 1)}")
    try:
        with warnings.catch_warnings():  # "invalid decimal literal" for 1for: the error says it better
            warnings.simplefilter("ignore")
            tree = ast.parse(text, mode="eval")
    except SyntaxError as error:
        column = error.offset or 1
        if error.lineno and error.lineno > 1:  # a column of a later line: count from the start of the text
            column += sum(len(line) + 1 for line in text.split("\n")[: error.lineno - 1])
        raise LayoutError(f"spec: syntax error at column {column}: {error.msg}\n"
                          f"{excerpt(text, column - 1)}") from None
    except (RecursionError, MemoryError):  # Python's parser refuses to nest deeper (no brackets needed)
        raise LayoutError(f"spec: nested deeper than Python's parser reads (at most {MAX_AST_DEPTH} levels: "
                          "spec.MAX_AST_DEPTH)") from None
    stack = [(tree.body, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_AST_DEPTH:
            column = getattr(node, "col_offset", 0) + 1
            raise LayoutError(f"spec: nested deeper than {MAX_AST_DEPTH} levels at column {column} "
                              f"(linear_layouts.spec.MAX_AST_DEPTH)\n{excerpt(text, column - 1)}")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return tree


def layout_from_spec(text: str, shape: Sequence[int] | None = None) -> LinearLayout:
    """``parse_spec(text).to_linear(shape)``.

    >>> layout_from_spec('{"bases": [["offset", [[1]]]], "out_dims": [["dim0", 2]]}').bases
    {'offset': [[1]]}
    """
    return parse_spec(text).to_linear(shape)


# --- CuTe ----------------------------------------------------------------------------------------------------

def _cute() -> Any:
    from linear_layouts import cute

    return cute


def _is_cute(value: Any) -> bool:
    cute = _cute()
    return isinstance(value, (cute.Layout, cute.Swizzle, cute.ComposedLayout, cute.TVLayout))


# --- JSON -------------------------------------------------------------------------------------------------

def _from_json(text: str) -> LinearLayout:
    """:meth:`LinearLayout.from_json` (the one home of the JSON format), its errors as ``spec:`` errors."""
    try:
        return LinearLayout.from_json(text)
    except LayoutError as error:
        message = str(error)
        if "require_surjective=False" in message:  # in JSON the switch is a key of the object
            message = message.replace("pass explicit out-dim sizes and require_surjective=False to allow it",
                                      'add "require_surjective": false to the JSON object to allow it')
        raise LayoutError(f"spec: {message}") from None


# --- Python-call syntax -----------------------------------------------------------------------------------

class _Builder:
    """Walks an expression tree, accepting literals and calls of whitelisted names only."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.classes = catalog_classes()

    def fail(self, node: ast.AST, message: str) -> LayoutError:
        column = getattr(node, "col_offset", 0) + 1
        return LayoutError(f"spec: {message} (column {column})\n{excerpt(self.text, column - 1)}")

    def source(self, node: ast.AST) -> str:
        """The text of ``node``, quoted (at most ~80 characters; read from the text, not unparsed)."""
        return quote(ast.get_source_segment(self.text, node) or type(node).__name__)

    def build(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            if node.value is None or isinstance(node.value, (bool, int, str)):
                return node.value
            raise self.fail(node, f"only integers, booleans, strings and None are allowed, not {quote(node.value)}")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
                and isinstance(node.operand.value, int) and not isinstance(node.operand.value, bool):
            return -node.operand.value
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.build(e) for e in node.elts]
        if isinstance(node, ast.Dict):
            return self.dictionary(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, (ast.Name, ast.Attribute)):
            raise self.fail(node, f"bare name {self.source(node)}: a layout is written as a call, "
                                  f"e.g. BlockedLayout([1,4],[4,8],[4,1],[1,0])")
        raise self.fail(node, f"{self.source(node)} is not a literal or a layout constructor")

    def dictionary(self, node: ast.Dict) -> dict[Any, Any]:
        """A dict literal: its keys are integers, booleans, strings or None, each given once (a repeated key
        would silently drop the earlier value)."""
        result: dict[Any, Any] = {}
        for key_node, value_node in zip(node.keys, node.values):
            if key_node is None:
                raise self.fail(node, "'**' is not allowed in a spec")
            key = self.build(key_node)
            if isinstance(key, (list, dict)):
                raise self.fail(key_node, f"a dict key must be a name or a number, not {self.source(key_node)}")
            if key in result:
                raise self.fail(key_node, f"key {self.source(key_node)} given twice in one dict")
            result[key] = self.build(value_node)
        return result

    def name_of(self, func: ast.AST) -> str:
        if isinstance(func, ast.Name):
            return func.id
        prefix = _dotted(func.value) if isinstance(func, ast.Attribute) else None
        if prefix is not None:
            if all(p in _PREFIXES for p in prefix):
                return func.attr
            if func.attr in _CLASSMETHODS and prefix[-1] in self.classes and all(p in _PREFIXES for p in prefix[:-1]):
                return f"{prefix[-1]}.{func.attr}"
        raise self.fail(func, f"{self.source(func)} is not a layout name")

    def call(self, node: ast.Call) -> Any:
        name = self.name_of(node.func)
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise self.fail(node, "'*' and '**' arguments are not allowed in a spec")
        args = [self.build(a) for a in node.args]
        for i, keyword in enumerate(node.keywords):  # a repeated keyword would silently drop the earlier value
            if any(k.arg == keyword.arg for k in node.keywords[:i]):
                raise self.fail(keyword, f"keyword {keyword.arg} given twice in one call")
        kwargs = {k.arg: self.build(k.value) for k in node.keywords}
        if name in RAW_CONSTRUCTORS and name not in self.classes:
            return self.raw(node, name, args, kwargs)
        class_name, _, method = name.partition(".")
        cls = self.classes.get(class_name)
        if cls is not None and method:
            cls = getattr(cls, method, None)
        if cls is None:
            known = sorted(set(self.classes) | set(RAW_CONSTRUCTORS))
            raise self.fail(node.func, f"unknown layout {quote(name)}{did_you_mean(name, known)}; "
                                       f"known: {', '.join(known)}")
        try:
            signature = inspect.signature(cls)
            signature.bind(*args, **kwargs)
        except TypeError as error:
            unknown = [k for k in kwargs if k not in signature.parameters]
            hint = did_you_mean(unknown[0], signature.parameters) if unknown else ""
            raise self.fail(node, f"{name}{_signature_text(cls)}: {shorten(str(error), 200)}{hint}") from None
        except ValueError:  # no signature available: let the constructor judge
            pass
        try:
            return cls(*args, **kwargs)
        except LayoutError as error:
            raise self.fail(node, f"{name}: {error}") from None
        except (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError) as error:
            raise self.fail(node, f"{name}: invalid arguments: {shorten(str(error), 200)}") from None

    def raw(self, node: ast.Call, name: str, args: list[Any], kwargs: dict[str, Any]) -> LinearLayout:
        try:
            if name == "LinearLayout":
                bound = inspect.signature(_linear_layout_signature).bind(*args, **kwargs)
                return LinearLayout(bound.arguments["bases"], bound.arguments["out_dims"],
                                    require_surjective=bound.arguments.get("require_surjective", True))
            if name == "DistributedLinearLayout":
                bound = inspect.signature(_distributed_signature).bind(*args, **kwargs)
                a = bound.arguments
                shape = a["shape"]
                bases = [("register", a["reg_bases"]), ("lane", a["lane_bases"]), ("warp", a["warp_bases"]),
                         ("block", a["block_bases"])]
                return LinearLayout(bases, [(f"dim{i}", s) for i, s in enumerate(_check_shape(shape))],
                                    require_surjective=False)
            bound = inspect.signature(_shared_signature).bind(*args, **kwargs)
            a = bound.arguments
            bases = [("offset", a["offset_bases"]), ("block", a.get("block_bases", []))]
            return LinearLayout(bases, [f"dim{i}" for i in range(_rank_of(a["offset_bases"]))])
        except TypeError as error:
            raise self.fail(node, f"{name}: {shorten(str(error), 200)}") from None
        except LayoutError as error:
            raise self.fail(node, f"{name}: {error}") from None


def _dotted(node: ast.AST) -> list[str] | None:
    """``["gl", "BlockedLayout"]`` for ``gl.BlockedLayout`` (names and attributes only), else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def _rank_of(bases: Any) -> int:
    if not isinstance(bases, list) or not bases or not isinstance(bases[0], list):
        raise LayoutError("offset_bases: must be a non-empty list of basis vectors")
    return len(bases[0])


def _signature_text(cls: type) -> str:
    """A constructor's parameters as a user writes them, without type hints: ``(size_per_thread, ..., order,
    cga_layout=...)`` (a default shown where it is a plain value, ``...`` otherwise)."""
    try:
        parameters = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):
        return "(...)"
    plain = (int, float, str, bool, type(None))

    def shown(p: inspect.Parameter) -> str:
        if p.kind is p.VAR_POSITIONAL:
            return f"*{p.name}"
        if p.kind is p.VAR_KEYWORD:
            return f"**{p.name}"
        if p.default is p.empty:
            return p.name
        value = p.default
        simple = isinstance(value, plain) or (isinstance(value, tuple) and len(value) <= 4
                                              and all(isinstance(v, plain) for v in value))
        return f"{p.name}={value!r}" if simple else f"{p.name}=..."

    return "(" + ", ".join(shown(p) for p in parameters) + ")"


def _linear_layout_signature(bases, out_dims, require_surjective=True):  # pragma: no cover - signature only
    pass


def _distributed_signature(reg_bases, lane_bases, warp_bases, block_bases, shape):  # pragma: no cover
    pass


def _shared_signature(offset_bases, block_bases=(), alignment=16):  # pragma: no cover - signature only
    pass
