"""The types and layouts of a TTGIR module: each ``tensor<..>`` / ``!ttg.memdesc<..>`` type split into
shape, element type and encoding, and each encoding turned into a catalog descriptor and its
LinearLayout by an *attribute resolver*: a function from attribute text (aliases expanded) to a
descriptor with ``to_linear(shape)``. The default resolver is the project's TTGIR attribute parser
(``linear_layouts.layouts.ttgir.parse_attribute``, no Triton needed); another can be passed.

>>> t = parse_type("!ttg.memdesc<3x128x64xf16, #ttg.nvmma_shared<{swizzlingByteWidth = 128}>, #ttg.shared_memory, mutable>")
>>> t.kind, t.shape, t.element, t.bitwidth, t.encoding[:16]
('memdesc', (3, 128, 64), 'f16', 16, '#ttg.nvmma_share')
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from linear_layouts.core.arguments import checked
from linear_layouts.core.element_type import ir_element_bits
from linear_layouts.core.errors import LayoutError
from linear_layouts.triton_model.ir_text import Module, split_top
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import MAX_ELEMENTS, check_count, quote
from linear_layouts.core.mlir_text import STATIC_SHAPE, pointee, shape_and_element

__all__ = ["TypeInfo", "parse_type", "Resolver", "default_resolver", "Layouts", "check_layouts_fit"]

#: attribute text (aliases expanded) -> catalog descriptor with ``to_linear(shape)``
Resolver = Callable[[str], Any]


@dataclass(frozen=True)
class TypeInfo:
    """A type as text, split: ``kind`` (tensor, memdesc, ptr, scalar, other), ``shape``, ``element``,
    ``encoding`` (the layout attribute, aliases expanded; "" when none) and a memdesc's ``alloc_shape``."""

    kind: str
    shape: tuple[int, ...] = ()
    element: str = ""
    encoding: str = ""
    alloc_shape: tuple[int, ...] = ()
    text: str = ""

    @property
    def bitwidth(self) -> int | None:
        return ir_element_bits(self.element)

    @property
    def numel(self) -> int:
        """Elements of the type: the product of ``shape`` (1 for a scalar)."""
        return math.prod(self.shape)


@checked
def parse_type(text: str, module: Module | None = None) -> TypeInfo:
    """Split a type (module doc); aliases are expanded with ``module``'s."""
    text = text.strip()
    expand = module.expand if module is not None else (lambda s: s)
    for prefix, kind in (("tensor<", "tensor"), ("!ttg.memdesc<", "memdesc"), ("<", "memdesc")):
        if text.startswith(prefix) and text.endswith(">"):
            parts = split_top(text[len(prefix):-1])
            shape, element = shape_and_element(parts[0])
            encoding, alloc = "", ()
            for part in parts[1:]:
                if part.startswith("#") and not encoding:
                    encoding = expand(part)
                elif re.fullmatch(STATIC_SHAPE, part):
                    alloc = tuple(int(d) for d in part.split("x"))
            return TypeInfo(kind, shape, element, encoding, alloc, text)
    if pointee(text) is not None:
        return TypeInfo("ptr", (), text, "", (), text)
    if re.fullmatch(r"(?:[iuf]|bf|tf)\d+(?:E\w+)?|index", text):
        return TypeInfo("scalar", (), text, "", (), text)
    return TypeInfo("other", (), text, "", (), text)


def default_resolver() -> Resolver:
    """The project's TTGIR attribute parser, ``linear_layouts.layouts.ttgir.parse_attribute``."""
    try:
        from linear_layouts.layouts.ttgir import parse_attribute  # type: ignore[import-not-found]
    except ImportError:
        raise LayoutError("reading TTGIR layouts needs the TTGIR attribute parser (linear_layouts.layouts.ttgir), "
                          "which this installation lacks; pass resolver=") from None
    return parse_attribute


class Layouts:
    """Every encoding of one module resolved once: ``descriptor(encoding)`` and ``linear(type)``
    (the type's LinearLayout on its layout shape: a memdesc's trailing dims of the layout's rank)."""

    def __init__(self, module: Module, resolver: Resolver | None = None):
        self.module = module
        self.resolver = resolver or default_resolver()
        self._descriptors: dict[str, Any] = {}
        self._linear: dict[tuple[str, tuple[int, ...]], LinearLayout] = {}

    def descriptor(self, encoding: str) -> Any:
        if encoding not in self._descriptors:
            self._descriptors[encoding] = self.resolver(encoding)
        return self._descriptors[encoding]

    def layout_shape(self, t: TypeInfo) -> tuple[int, ...]:
        rank = getattr(self.descriptor(t.encoding), "rank", None)
        if isinstance(rank, int) and 0 < rank <= len(t.shape):
            return t.shape[len(t.shape) - rank:]
        return t.shape

    def linear(self, t: TypeInfo) -> LinearLayout:
        """The LinearLayout of a tensor / memdesc type (``LayoutError`` if it has no encoding, or more than
        ``limits.MAX_ELEMENTS`` elements: the analyses of a kernel's ops enumerate them)."""
        if not t.encoding:
            raise LayoutError(f"type {t.text[:60]!r} has no layout encoding")
        shape = self.layout_shape(t)
        key = (t.encoding, shape)
        if key not in self._linear:
            check_count(math.prod(shape), MAX_ELEMENTS, f"type {quote(t.text)}")
            self._linear[key] = self.descriptor(t.encoding).to_linear(list(shape))
        return self._linear[key]

    def name_of(self, encoding: str) -> str:
        """The module's alias for an encoding (``#blocked1``), else the encoding text with the aliases it
        contains written back as names (``#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>``), as
        Triton prints it."""
        expanded = {name: self.module.expand(text) for name, text in self.module.aliases.items()}
        for name, text in expanded.items():
            if text == encoding:
                return "#" + name
        out = encoding
        for name, text in sorted(expanded.items(), key=lambda kv: -len(kv[1])):
            if text.startswith("#") and len(text) > 8:
                out = out.replace(text, "#" + name)
        return out


def is_shared_encoding(encoding: str) -> bool:
    """True for shared-memory encodings (swizzled, NVMMA, padded, linear shared, AMD rotating)."""
    return bool(re.match(r"#ttg\.(swizzled_shared|nvmma_shared|padded_shared|shared_linear|amd_rotating_shared)",
                         encoding))


def is_tensor_memory_encoding(encoding: str) -> bool:
    return encoding.startswith("#ttng.tensor_memory")


def module_types(module: Module) -> Mapping[str, TypeInfo]:
    """Every distinct tensor / memdesc type text of the module (functions' args and ops), split."""
    seen: dict[str, TypeInfo] = {}
    for fn in module.functions:
        for _, ty in fn.args:
            seen.setdefault(ty, parse_type(ty, module))
        for op in fn.walk():
            for ty in op.operand_types + op.result_types:
                if ty not in seen:
                    seen[ty] = parse_type(ty, module)
    return {k: v for k, v in seen.items() if v.kind in ("tensor", "memdesc") and v.encoding}


@checked
def check_layouts_fit(module: Module, argument: str = "text") -> None:
    """``LayoutError`` naming ``argument`` unless every distributed layout of ``module``'s tensor types has
    the module's lanes per warp (``ttg.threads-per-warp``) and warps per CTA (``ttg.num-warps``), as
    Triton's verifier demands ("Layout has 32 threads per warp, but the module specifies 64").

    >>> from linear_layouts.triton_model.ir_text import parse_module
    >>> check_layouts_fit(parse_module('''module attributes {"ttg.num-warps" = 4 : i32, "ttg.threads-per-warp" = 64 : i32} {
    ...   tt.func @k(%x: tensor<128xf32, #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>>) {
    ...     tt.return
    ...   }
    ... }'''), "ttgir")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    linear_layouts.core.errors.LayoutError: ttgir: the layout of 'tensor<128xf32, ... has 32 lanes per warp, but the module has 64 (ttg.threads-per-warp): ...
    """
    layouts = Layouts(module)
    for text, t in module_types(module).items():
        if t.kind != "tensor" or is_shared_encoding(t.encoding) or is_tensor_memory_encoding(t.encoding):
            continue
        layout = layouts.linear(t)
        for dim, want, key in (("lane", module.threads_per_warp, "ttg.threads-per-warp"),
                               ("warp", module.num_warps, "ttg.num-warps")):
            have = layout.in_dim_size(dim)
            if have != want:
                raise LayoutError(f"{argument}: the layout of {quote(text)} has {have} {dim}s per "
                                  f"{'warp' if dim == 'lane' else 'CTA'}, but the module has {want} ({key}): "
                                  "every distributed layout of a module has its lanes and warps")
