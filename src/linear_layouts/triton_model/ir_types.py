"""The types of Triton's IR text: ``tensor<..>`` and ``!ttg.memdesc<..>`` split into shape, element type,
encoding and memory space, as one value, ``TensorType``, whose ``layout`` is the encoding's catalog
descriptor (``layouts.ttgir_text.parse_attribute``) and ``linear_layout()`` its LinearLayout.

``parse_type(text, module)`` is the IR reader's: it splits any type (a pointer, a scalar or another type
keeps only its text and ``kind``) and leaves the encoding's text to be read when asked, so a module is
read whole before any layout is. ``parse_tensor_type(text, module)`` reads a tensor or memdesc type as a
user writes one (a spec): anything else, an element that is no type name, or an encoding that does not
read is a ``LayoutError`` at once. Aliases (``#blocked``) are expanded with ``module``'s
(``ir_text.Module.expand``).

>>> t = parse_type("!ttg.memdesc<3x128x64xf16, #ttg.nvmma_shared<{swizzlingByteWidth = 128, elementBitWidth = 16}>, "
...                "#ttg.shared_memory, mutable>")
>>> t.kind, t.shape, t.element_type, t.bitwidth, t.memory_space, t.layout_shape
('memdesc', (3, 128, 64), 'f16', 16, 'ttg.shared_memory', (128, 64))
>>> parse_type("!tt.ptr<f32>").kind, parse_type("i32").kind
('ptr', 'scalar')
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from linear_layouts.core.arguments import checked
from linear_layouts.core.element_type import ir_element_bits
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.mlir_text import STATIC_SHAPE, pointee, shape_and_element, split_top
from linear_layouts.layouts.registry import Descriptor
from linear_layouts.layouts.ttgir_text import parse_attribute

__all__ = ["TensorType", "TypeInfo", "parse_type", "parse_tensor_type"]


class Aliases(Protocol):
    """What expands a module's ``#alias`` names in a type (``ir_text.Module``)."""

    def expand(self, text: str) -> str: ...


@dataclass(frozen=True)
class TensorType:
    """A type of the IR: ``kind`` (``tensor``: distributed, in registers; ``memdesc``: shared or tensor
    memory; the reader's ``ptr``, ``scalar``, ``other`` keep only ``text``), ``shape``, ``element_type`` as
    printed (``f16``, ``!tt.ptr<f16>``), ``encoding`` (the layout attribute's text, aliases expanded; ""
    when none, as in TTIR), a memdesc's ``alloc_shape`` (its allocation's, () when not printed),
    ``memory_space`` (``ttg.shared_memory``) and ``mutable``, and the type's ``text``."""

    kind: str
    shape: tuple[int, ...] = ()
    element_type: str = ""
    encoding: str = ""
    alloc_shape: tuple[int, ...] = ()
    text: str = ""
    memory_space: str | None = None
    mutable: bool = False

    @property
    def element(self) -> str:
        """``element_type`` (the name ``TypeInfo`` gave it)."""
        return self.element_type

    @functools.cached_property
    def layout(self) -> Descriptor | None:
        """The catalog descriptor of ``encoding`` (None without one); read when first asked."""
        return parse_attribute(self.encoding) if self.encoding else None

    @property
    def layout_shape(self) -> tuple[int, ...]:
        """The shape the layout applies to: a memdesc's trailing dims of the layout's rank (buffers lead)."""
        rank = getattr(self.layout, "rank", len(self.shape))
        if not isinstance(rank, int):
            rank = len(self.shape)
        return self.shape[len(self.shape) - rank:] if 0 < rank <= len(self.shape) else self.shape

    def linear_layout(self) -> LinearLayout:
        """``layout.to_linear(layout_shape)``: the type's LinearLayout. A ``tensor``'s layout has the tensor's
        rank (a memdesc may lead with buffer dims the layout does not cover), as Triton's verifier demands."""
        if self.layout is None:
            raise LayoutError(f"{self.kind}<{'x'.join(map(str, self.shape))}x{self.element_type}> has no layout")
        rank = getattr(self.layout, "rank", None)
        if isinstance(rank, int) and (rank != len(self.shape) if self.kind == "tensor" else rank > len(self.shape)):
            raise LayoutError(f"ttgir: the {self.kind} type has rank {len(self.shape)} "
                              f"({'x'.join(map(str, self.shape))}) but its layout {type(self.layout).__name__} has "
                              f"rank {rank}: a {'tensor' if self.kind == 'tensor' else 'memdesc'}'s layout must have "
                              f"{'its' if self.kind == 'tensor' else 'at most its'} rank")
        return self.layout.to_linear(list(self.layout_shape))

    def to_linear(self, shape: Sequence[int] | None = None) -> LinearLayout:
        """The type's LinearLayout; ``shape``, when given, must be the layout's shape."""
        if shape is not None and tuple(shape) != self.layout_shape:
            raise LayoutError(f"shape: the type's shape is {list(self.layout_shape)}, got {list(shape)}")
        return self.linear_layout()

    @property
    def bitwidth(self) -> int | None:
        """Bits one element occupies as Triton stores it (``element_type.ir_element_bits``: ``i1`` 8,
        pointers 64), or None when the type name is not a number type."""
        return ir_element_bits(self.element_type)

    @property
    def numel(self) -> int:
        """Elements of the type: the product of ``shape`` (1 for a scalar)."""
        return math.prod(self.shape)


#: the name the IR reader's type had
TypeInfo = TensorType

#: an element type: a name (``f16``, ``f8E4M3FN``) or a dialect type (``!tt.ptr<f32>``), never a tensor
_ELEMENT = re.compile(r"[A-Za-z_][\w.$]*|![\w.$]+(?:<.*>)?", re.S)
_SHAPED = (("tensor<", "tensor"), ("!ttg.memdesc<", "memdesc"), ("<", "memdesc"))
_MEMORY_SPACE = re.compile(r"#([A-Za-z_][\w$]*\.[\w.$]+)")


def _read(text: str, module: Aliases | None, strict: bool) -> TensorType:
    text = text.strip()
    expand = module.expand if module is not None else (lambda s: s)
    prefixes = _SHAPED[:2] if strict else _SHAPED
    shaped = next(((p, kind) for p, kind in prefixes if text.startswith(p)), None)
    if strict and shaped is None:
        raise LayoutError(f"ttgir: a type must start with 'tensor<' or '!ttg.memdesc<', got {text[:30]!r}")
    if shaped is not None and not text.endswith(">"):
        if strict:
            raise LayoutError(f"ttgir: the type {text[:60]!r} must end with '>'")
        shaped = None
    if shaped is None:
        if pointee(text) is not None:
            return TensorType("ptr", (), text, "", (), text)
        if re.fullmatch(r"(?:[iuf]|bf|tf)[0-9]+(?:E\w+)?|index", text):
            return TensorType("scalar", (), text, "", (), text)
        return TensorType("other", (), text, "", (), text)
    prefix, kind = shaped
    parts = split_top(text[len(prefix):-1]) or [""]
    shape, element = shape_and_element(parts[0])
    if strict and not element:
        raise LayoutError(f"ttgir: the type {text[:60]!r} has no element type")
    if strict and not _ELEMENT.fullmatch(element):
        raise LayoutError(f"ttgir: the type {text[:60]!r} has the element type {element[:30]!r}: a static shape "
                          "SIZExSIZEx... then a type name (f16, i32, !tt.ptr<f32>) is needed")
    encoding, space, mutable, alloc = "", None, False, ()
    for part in parts[1:]:
        if part.startswith("#"):
            expanded = expand(part)
            space_name = _MEMORY_SPACE.fullmatch(expanded)
            if not encoding and (space_name is None or not strict):
                encoding = expanded
            elif space_name is not None:
                space = space_name.group(1)
        elif part == "mutable":
            mutable = True
        elif re.fullmatch(STATIC_SHAPE, part):
            alloc, _ = shape_and_element(part + "x")  # its sizes bounded (limits.MAX_INT_DIGITS) as the shape's
        elif strict:
            raise LayoutError(f"ttgir: unexpected '{part}' in the type {text[:60]!r}")
    return TensorType(kind, shape, element, encoding, alloc, text, space, mutable)


@checked
def parse_type(text: str, module: Aliases | None = None) -> TensorType:
    """Split a type of the IR (module doc); aliases are expanded with ``module``'s. A module that keeps a
    ``parsed_types`` dictionary (``ir_text.Module``: its aliases never change) has each text read once."""
    cache = getattr(module, "parsed_types", None)
    if cache is None:
        return _read(text, module, strict=False)
    found = cache.get(text)
    if found is None:
        found = cache[text] = _read(text, module, strict=False)
    return found


@checked
def parse_tensor_type(text: str, module: Aliases | None = None) -> TensorType:
    """A ``tensor<SHAPExELEMENT[, #encoding]>`` or ``!ttg.memdesc<SHAPExELEMENT, #encoding, #space[, mutable]
    [, ALLOC]>`` type as a user writes one, its encoding read (module doc); ``LayoutError`` for anything else.

    >>> t = parse_tensor_type("tensor<64x32xf16, #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], "
    ...                       "warpsPerCTA = [4, 1], order = [1, 0]}>>")
    >>> t.shape, t.element_type, t.linear_layout().out_dims
    ((64, 32), 'f16', {'dim0': 64, 'dim1': 32})
    """
    t = _read(text, module, strict=True)
    t.layout  # noqa: B018  (an encoding that does not read is an error of this text)
    return t
