"""The layouts of a TTGIR module: each encoding of its types (``ir_types.TensorType``, read by
``ir_text``) turned into a catalog descriptor and its LinearLayout by an *attribute resolver*: a function
from attribute text (aliases expanded) to a descriptor with ``to_linear(shape)``. The default resolver is
the project's TTGIR attribute parser (``linear_layouts.layouts.ttgir_text.parse_attribute``, no Triton
needed); another can be passed. Which encodings are shared or tensor memory is each kind's
(``layouts.registry``).

>>> t = parse_type("!ttg.memdesc<3x128x64xf16, #ttg.nvmma_shared<{swizzlingByteWidth = 128}>, #ttg.shared_memory, mutable>")
>>> t.kind, t.shape, t.element_type, t.bitwidth, t.encoding[:16], is_shared_encoding(t.encoding)
('memdesc', (3, 128, 64), 'f16', 16, '#ttg.nvmma_share', True)
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping

from linear_layouts.core.arguments import checked
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import MAX_ELEMENTS, check_count, quote
from linear_layouts.layouts.registry import Descriptor, Space, kinds
from linear_layouts.layouts.ttgir_text import parse_attribute
from linear_layouts.triton_model.ir_text import Module
from linear_layouts.triton_model.ir_types import TensorType, TypeInfo, parse_type

__all__ = ["TensorType", "TypeInfo", "parse_type", "Resolver", "default_resolver", "Layouts", "check_layouts_fit",
           "is_shared_encoding", "is_tensor_memory_encoding", "module_types"]

#: attribute text (aliases expanded) -> catalog descriptor with ``to_linear(shape)``
Resolver = Callable[[str], Descriptor]


def default_resolver() -> Resolver:
    """The project's TTGIR attribute parser, ``linear_layouts.layouts.ttgir_text.parse_attribute``."""
    return parse_attribute


class Layouts:
    """Every encoding of one module resolved once: ``descriptor(encoding)`` and ``linear(type)``
    (the type's LinearLayout on its layout shape: a memdesc's trailing dims of the layout's rank)."""

    def __init__(self, module: Module, resolver: Resolver | None = None):
        self.module = module
        self.resolver = resolver or default_resolver()
        self._descriptors: dict[str, Descriptor] = {}
        self._linear: dict[tuple[str, tuple[int, ...]], LinearLayout] = {}

    def descriptor(self, encoding: str) -> Descriptor:
        if encoding not in self._descriptors:
            self._descriptors[encoding] = self.resolver(encoding)
        return self._descriptors[encoding]

    def layout_shape(self, t: TensorType) -> tuple[int, ...]:
        rank = getattr(self.descriptor(t.encoding), "rank", None)
        if isinstance(rank, int) and 0 < rank <= len(t.shape):
            return t.shape[len(t.shape) - rank:]
        return t.shape

    def linear(self, t: TensorType) -> LinearLayout:
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


@functools.lru_cache(maxsize=16)
def _prefix_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    """``#`` then one of ``names`` (longest first), at the start of an encoding."""
    ordered = sorted(names, key=lambda n: (-len(n), n))
    return re.compile("#(?:" + "|".join(re.escape(n) for n in ordered) + ")" if names else r"(?!)")


def _kind_prefix(space: Space) -> re.Pattern[str]:
    return _prefix_pattern(tuple(k.ttgir_name for k in kinds(space)))


def is_shared_encoding(encoding: str) -> bool:
    """True for the encodings of shared-memory kinds (swizzled, NVMMA, padded, linear shared, AMD rotating)."""
    return bool(_kind_prefix(Space.SHARED).match(encoding))


def is_tensor_memory_encoding(encoding: str) -> bool:
    """True for the encodings of tensor-memory kinds (``#ttng.tensor_memory_encoding``, its scales)."""
    return bool(_kind_prefix(Space.TENSOR_MEMORY).match(encoding))


def module_types(module: Module) -> Mapping[str, TensorType]:
    """Every distinct tensor / memdesc type text of the module with a layout encoding (``Module.types``)."""
    return {t.text: t for t in module.types if t.encoding}


@checked
def check_layouts_fit(module: Module, argument: str = "text", *, unread_ok: bool = False) -> None:
    """``LayoutError`` naming ``argument`` unless every distributed layout of ``module``'s tensor types has
    the module's lanes per warp (``ttg.threads-per-warp``), warps per CTA (``ttg.num-warps``) and CTAs
    per CGA (``ttg.num-ctas``), as Triton's verifier demands ("Layout has 32 threads per warp, but the
    module specifies 64"; "Layout has 1 CTAs per CGA, but the context requires 2 CTAs per CGA").
    ``unread_ok``: a layout that does not read is skipped (the report lists it as not read), not refused.

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
        try:
            layout = layouts.linear(t)
        except LayoutError:
            if unread_ok:
                continue
            raise
        for dim, want, key, per in (("lane", module.threads_per_warp, "ttg.threads-per-warp", "warp"),
                                    ("warp", module.num_warps, "ttg.num-warps", "CTA"),
                                    ("block", module.num_ctas, "ttg.num-ctas", "CGA")):
            have = layout.in_dim_size(dim)
            if have != want:
                has = f"{want} ({key})" if key in module.attributes else f"no {key} (read as {want})"
                raise LayoutError(f"{argument}: the layout of {quote(text)} has {have} {dim}s per "
                                  f"{per}, but the module has {has}: "
                                  "every distributed layout of a module has its lanes, warps and CTAs")
