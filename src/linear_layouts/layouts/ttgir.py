"""Triton's TTGIR layout attributes as text, in and out, and the layouts of a whole TTGIR module.

``parse_attribute(text)`` reads an encoding attribute exactly as Triton 3.9 prints it in a TTGIR dump
and returns the catalog descriptor it denotes; ``format_attribute(layout)`` prints a catalog descriptor
back in that syntax (the round trip is exact: ``format_attribute(parse_attribute(t)) == t`` for every
attribute Triton 3.9 prints, aliases expanded). ``parse_module(text)`` collects every ``#name = ...``
layout alias and every ``tensor<...>`` / ``!ttg.memdesc<...>`` type of a TTGIR module with its shape,
element type and layout. The text is read by a small recursive-descent parser, never evaluated.

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

>>> layout = parse_attribute("#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], "
...                          "warpsPerCTA = [4, 1], order = [1, 0]}>")
>>> layout
BlockedLayout(size_per_thread=(1, 4), threads_per_warp=(4, 8), warps_per_cta=(4, 1), order=(1, 0), cga_layout=())
>>> format_attribute(layout)
'#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>'
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from linear_layouts.layouts import (
    AMDMFMALayout,
    AMDRotatingSharedLayout,
    AMDWMMALayout,
    BlockedLayout,
    DistributedLinearLayout,
    DotOperandLayout,
    NVMMADistributedLayout,
    NVMMASharedLayout,
    PaddedSharedLayout,
    SharedLinearLayout,
    SliceLayout,
    SwizzledSharedLayout,
    TensorMemoryLayout,
    TensorMemoryScalesLayout,
)
from linear_layouts.layouts.base import cga_layout_from_split_params, standard_out_dim_names
from linear_layouts.core.arguments import checked
from linear_layouts.core.element_type import ir_element_bits
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import MAX_IR_BYTES, MAX_SPEC_DEPTH, check_ir_text, excerpt, quote
from linear_layouts.core.mlir_text import NAME_CHAR, STATIC_SHAPE, closing, shape_and_element, split_top

__all__ = [
    "parse_attribute",
    "format_attribute",
    "parse_type",
    "parse_module",
    "TensorType",
    "TTGIRModule",
    "MemorySpace",
]

#: The default WMMA instruction shape (Triton prints ``instrShape`` only when it differs).
_WMMA_DEFAULT_INSTR = (16, 16, 16)


# --------------------------------------------------------------------------------------------------
# Values of the attribute grammar
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MemorySpace:
    """An attribute without a layout body, such as ``#ttg.shared_memory`` or ``#ttng.tensor_memory``."""

    name: str


@dataclass(frozen=True)
class _Pairs:
    """The ``[interval:+padding, ...]`` list of a padded layout."""

    pairs: tuple[tuple[int, int], ...]


class _Reader:
    """Recursive descent over MLIR attribute text: integers, booleans, ``[...]`` arrays, ``{k = v}``
    dictionaries and ``#dialect.kind<...>`` attributes (``#alias`` resolved through ``aliases``)."""

    _NAME = re.compile(rf"[A-Za-z_$]{NAME_CHAR}*")
    _INT = re.compile(r"-?\d+")

    def __init__(self, text: str, aliases: Mapping[str, Any] | None, resolve: Any = None) -> None:
        self.text = text
        self.pos = 0
        self.depth = 0
        self.aliases = aliases or {}
        self.resolve = resolve  # a callable alias name -> value, for lazy module aliases

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
        self.skip()
        match = self._INT.match(self.text, self.pos)
        if not match:
            raise self.fail("expected an integer")
        self.pos = match.end()
        return int(match.group())

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
        self.expect("#")
        name = self.name()
        if "." not in name:  # an alias of the module
            if self.resolve is not None:
                return self.resolve("#" + name)
            if "#" + name in self.aliases:
                return self.aliases["#" + name]
            raise self.fail(f"unknown alias '#{name}' (parse the whole module with parse_module, or pass aliases)")
        dialect, kind = name.split(".", 1)
        if self.peek() != "<":
            return MemorySpace(name)
        self.expect("<")
        builder = _BUILDERS.get((dialect, kind))
        if builder is None:
            known = ", ".join(f"#{d}.{k}" for d, k in _BUILDERS)
            raise self.fail(f"unsupported attribute '#{name}'; known layouts: {known}")
        if kind == "padded_shared":
            self.expect("[")
            pairs = []
            while True:
                interval = self.integer()
                self.expect(":")
                self.expect("+")
                pairs.append((interval, self.integer()))
                if self.accept("]"):
                    break
                self.expect(",")
            body: Any = (_Pairs(tuple(pairs)), self.dictionary())
        elif kind == "shared_linear":
            layout_dict = self.dictionary()
            alignment = None
            if self.accept(","):
                if self.name() != "alignment":
                    raise self.fail("expected 'alignment' after the shared_linear bases")
                self.expect("=")
                alignment = self.integer()
            body = (layout_dict, alignment)
        elif dialect == "ttng":  # tensor-memory encodings: bare `key = value` entries
            body = self.entries(">")
        else:
            body = self.dictionary()
        self.expect(">")
        try:
            return builder(body)
        except LayoutError as error:
            raise LayoutError(f"ttgir: #{name}: {error}") from None
        except (TypeError, ValueError, KeyError, IndexError) as error:
            raise LayoutError(f"ttgir: #{name}: invalid parameters: {error}") from None


# --------------------------------------------------------------------------------------------------
# attribute -> catalog descriptor
# --------------------------------------------------------------------------------------------------


def _fields(body: Mapping[str, Any], kind: str, required: Sequence[str], optional: Sequence[str]) -> dict[str, Any]:
    unknown = [k for k in body if k not in required and k not in optional]
    if unknown:
        raise LayoutError(f"unexpected key '{unknown[0]}' (a {kind} takes {', '.join([*required, *optional])})")
    missing = [k for k in required if k not in body]
    if missing:
        raise LayoutError(f"missing key '{missing[0]}'")
    return dict(body)


_CGA_KEYS = ("CGALayout", "CTAsPerCGA", "CTASplitNum", "CTAOrder")


def _cga(body: Mapping[str, Any], rank: int) -> tuple[tuple[int, ...], ...] | list:
    """The ``cga_layout`` bases of the ``CGALayout`` key, or of the classic split keys of older dumps."""
    if "CGALayout" in body:
        return body["CGALayout"]
    if any(k in body for k in _CGA_KEYS[1:]):
        ctas = body.get("CTAsPerCGA", [1] * rank)
        split = body.get("CTASplitNum", ctas)
        order = body.get("CTAOrder", list(reversed(range(rank))))
        return cga_layout_from_split_params(ctas, split, order)
    return []


def _check_layout(value: Any, key: str) -> Any:
    if isinstance(value, MemorySpace) or not hasattr(value, "to_linear"):
        raise LayoutError(f"'{key}' must be a layout attribute, got {quote(value)}")
    return value


def _blocked(body: Mapping[str, Any]) -> BlockedLayout:
    b = _fields(body, "blocked layout", ("sizePerThread", "threadsPerWarp", "warpsPerCTA", "order"), _CGA_KEYS)
    return BlockedLayout(b["sizePerThread"], b["threadsPerWarp"], b["warpsPerCTA"], b["order"],
                         _cga(b, len(b["order"])))


def _slice(body: Mapping[str, Any]) -> SliceLayout:
    b = _fields(body, "slice layout", ("dim", "parent"), ())
    return SliceLayout(b["dim"], _check_layout(b["parent"], "parent"))


def _nvidia_mma(body: Mapping[str, Any]) -> NVMMADistributedLayout:
    b = _fields(body, "nvidia_mma layout", ("versionMajor", "warpsPerCTA", "instrShape"), ("versionMinor", *_CGA_KEYS))
    return NVMMADistributedLayout([b["versionMajor"], b.get("versionMinor", 0)], b["warpsPerCTA"], b["instrShape"],
                                  _cga(b, len(b["warpsPerCTA"])))


def _dot_op(body: Mapping[str, Any]) -> DotOperandLayout:
    b = _fields(body, "dot_op layout", ("opIdx", "parent"), ("kWidth",))
    return DotOperandLayout(b["opIdx"], _check_layout(b["parent"], "parent"), b.get("kWidth", 0))


def _bases_shape(bases: Mapping[str, Any]) -> list[int]:
    """Out sizes of bases as Triton's ``parseLinearLayout`` infers them (the layout is surjective)."""
    rank = next((len(v[0]) for v in bases.values() if isinstance(v, list) and v), 0)
    if rank == 0:
        raise LayoutError("an empty layout (no basis vectors) has no rank")
    layout = LinearLayout([(k, [list(x) for x in v]) for k, v in bases.items()], list(standard_out_dim_names(rank)))
    return [layout.out_dim_size(d) for d in layout.out_dim_names]


def _linear(body: Mapping[str, Any]) -> DistributedLinearLayout:
    b = _fields(body, "linear layout", ("register", "lane", "warp", "block"), ())
    shape = _bases_shape(b)
    return DistributedLinearLayout(b["register"], b["lane"], b["warp"], b["block"], shape)


def _amd_mfma(body: Mapping[str, Any]) -> AMDMFMALayout:
    b = _fields(body, "amd_mfma layout", ("version", "warpsPerCTA", "instrShape", "isTransposed"),
                ("tilesPerWarp", "elementBitWidth", *_CGA_KEYS))
    return AMDMFMALayout(b["version"], b["instrShape"], b["isTransposed"], b["warpsPerCTA"],
                         b.get("elementBitWidth", 32), b.get("tilesPerWarp"), _cga(b, len(b["warpsPerCTA"])))


def _amd_wmma(body: Mapping[str, Any]) -> AMDWMMALayout:
    b = _fields(body, "amd_wmma layout", ("version", "isTranspose"),
                ("ctaLayout", "warpsPerCTA", "tilesPerWarp", "instrShape", *_CGA_KEYS))
    instr = b.get("instrShape", list(_WMMA_DEFAULT_INSTR))
    if "ctaLayout" not in b:  # the classic parameters of older dumps
        if "warpsPerCTA" not in b:
            raise LayoutError("missing key 'ctaLayout' (or the classic 'warpsPerCTA')")
        rank = len(b["warpsPerCTA"])
        return AMDWMMALayout.from_warps_per_cta(b["version"], b["isTranspose"], b["warpsPerCTA"],
                                                b.get("tilesPerWarp"), instr, _cga(b, rank))
    cta = b["ctaLayout"]
    if not isinstance(cta, dict) or any(k not in ("register", "warp") for k in cta):
        raise LayoutError(f"'ctaLayout' must be a dictionary of 'register' and 'warp' bases, got {quote(cta)}")
    vectors = [v for v in (*cta.get("register", []), *cta.get("warp", []), *b.get("CGALayout", []))]
    rank = len(vectors[0]) if vectors else 2
    return AMDWMMALayout(b["version"], b["isTranspose"], cta.get("warp", []), cta.get("register", []), instr,
                         _cga(b, rank), rank)


def _swizzled(cls: type) -> Any:
    def build(body: Mapping[str, Any]) -> Any:
        b = _fields(body, "swizzled shared layout", ("vec", "perPhase", "maxPhase", "order"), _CGA_KEYS)
        return cls(b["vec"], b["perPhase"], b["maxPhase"], b["order"], _cga(b, len(b["order"])))

    return build


def _nvmma_shared(body: Mapping[str, Any]) -> NVMMASharedLayout:
    b = _fields(body, "nvmma_shared layout", ("swizzlingByteWidth", "elementBitWidth"),
                ("transposed", "fp4Padded", "rank", *_CGA_KEYS))
    cga = b.get("CGALayout", [])
    rank = len(cga[0]) if cga else b.get("rank", 2)
    if cga and "rank" in b and b["rank"] != rank:
        raise LayoutError(f"'rank' = {b['rank']} disagrees with the CGALayout's rank {rank}")
    return NVMMASharedLayout(b["swizzlingByteWidth"], b["elementBitWidth"], rank, b.get("transposed", False),
                             b.get("fp4Padded", False), _cga(b, rank))


def _shared_linear(body: tuple[Mapping[str, Any], int | None]) -> SharedLinearLayout:
    layout, alignment = body
    b = _fields(layout, "shared_linear layout", ("offset",), ("block",))
    if alignment is None:
        raise LayoutError("missing ', alignment = N' after the bases")
    return SharedLinearLayout(b["offset"], b.get("block", []), alignment)


def _padded_shared(body: tuple[_Pairs, Mapping[str, Any]]) -> PaddedSharedLayout:
    pairs, layout = body
    if "order" in layout or "shape" in layout:
        b = _fields(layout, "padded_shared layout", ("order", "shape"), ())
        return PaddedSharedLayout.with_identity_for(pairs.pairs, b["shape"], b["order"])
    b = _fields(layout, "padded_shared layout", ("offset",), ("block",))
    offset, block = b["offset"], b.get("block", [])
    shape = _bases_shape({"offset": offset, "block": block})
    tile = _bases_shape({"offset": offset}) if offset else [1] * len(shape)
    cga = [[x // t if x else 0 for x, t in zip(v, tile)] for v in block]
    return PaddedSharedLayout(pairs.pairs, offset, cga, shape)


def _tensor_memory(body: Mapping[str, Any]) -> TensorMemoryLayout:
    b = _fields(body, "tensor_memory_encoding", ("blockM", "blockN"),
                ("colStride", "unpacked", "twoCTAs", "fp4Padded", *_CGA_KEYS))
    if "colStride" in b:
        col_stride = b["colStride"]
    elif b.get("unpacked", False):
        raise LayoutError("'unpacked = true' (older Triton) does not say the column stride (32 / bitwidth)")
    else:
        col_stride = 1
    return TensorMemoryLayout((b["blockM"], b["blockN"]), col_stride, _cga(b, 2), b.get("twoCTAs", False),
                              b.get("fp4Padded", False))


def _tensor_memory_scales(body: Mapping[str, Any]) -> TensorMemoryScalesLayout:
    b = _fields(body, "tensor_memory_scales_encoding", (), _CGA_KEYS)
    return TensorMemoryScalesLayout(_cga(b, 2))


_BUILDERS: dict[tuple[str, str], Any] = {
    ("ttg", "blocked"): _blocked,
    ("ttg", "slice"): _slice,
    ("ttg", "nvidia_mma"): _nvidia_mma,
    ("ttg", "dot_op"): _dot_op,
    ("ttg", "linear"): _linear,
    ("ttg", "amd_mfma"): _amd_mfma,
    ("ttg", "amd_wmma"): _amd_wmma,
    ("ttg", "swizzled_shared"): _swizzled(SwizzledSharedLayout),
    ("ttg", "amd_rotating_shared"): _swizzled(AMDRotatingSharedLayout),
    ("ttg", "nvmma_shared"): _nvmma_shared,
    ("ttg", "shared_linear"): _shared_linear,
    ("ttg", "padded_shared"): _padded_shared,
    ("ttng", "tensor_memory_encoding"): _tensor_memory,
    ("ttng", "tensor_memory_scales_encoding"): _tensor_memory_scales,
}


def parse_attribute(text: str, aliases: Mapping[str, Any] | None = None) -> Any:
    """The catalog descriptor of one TTGIR layout attribute (module doc), e.g. ``#ttg.slice<{...}>``.

    ``aliases`` maps alias names (``"#blocked"``) to descriptors, for attributes that refer to a
    module's aliases (``parent = #blocked``). Raises ``LayoutError`` naming the column and the rule.

    >>> parse_attribute("#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>")
    NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2, transposed=False, fp4_padded=False, cga_layout=())
    """
    if not isinstance(text, str):
        raise LayoutError(f"text must be a string, got {type(text).__name__}")
    reader = _Reader(text.strip(), aliases)
    if reader.peek() != "#":
        raise reader.fail("a TTGIR attribute starts with '#'")
    value = reader.attribute()
    if not reader.at_end():
        raise reader.fail("unexpected text after the attribute")
    if isinstance(value, MemorySpace):
        raise LayoutError(f"ttgir: #{value.name} is a memory space, not a layout")
    return value


# --------------------------------------------------------------------------------------------------
# catalog descriptor -> attribute text
# --------------------------------------------------------------------------------------------------


def _ints(values: Sequence[int]) -> str:
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


def _bases(vectors: Sequence[Sequence[int]]) -> str:
    return "[" + ", ".join(_ints(v) for v in vectors) + "]"


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _cga_text(cga: Sequence[Sequence[int]]) -> str:
    """``, CGALayout = [[..]]`` unless the single-CTA default (Triton's ``maybePrintCGALayout``)."""
    return f", CGALayout = {_bases(cga)}" if cga else ""


def _linear_text(pairs: Sequence[tuple[str, Sequence[Sequence[int]]]]) -> str:
    return ", ".join(f"{name} = {_bases(vectors)}" for name, vectors in pairs)


def format_attribute(layout: Any) -> str:
    """The TTGIR text of a catalog descriptor, exactly as Triton 3.9 prints it (parents inline).

    >>> format_attribute(DotOperandLayout(0, NVMMADistributedLayout([2, 0], [4, 1], [16, 8]), 2))
    '#ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 8]}>, kWidth = 2}>'
    """
    if isinstance(layout, BlockedLayout):
        return (f"#ttg.blocked<{{sizePerThread = {_ints(layout.size_per_thread)}, threadsPerWarp = "
                f"{_ints(layout.threads_per_warp)}, warpsPerCTA = {_ints(layout.warps_per_cta)}, order = "
                f"{_ints(layout.order)}{_cga_text(layout.cga_layout)}}}>")
    if isinstance(layout, SliceLayout):
        return f"#ttg.slice<{{dim = {layout.dim}, parent = {format_attribute(layout.parent)}}}>"
    if isinstance(layout, NVMMADistributedLayout):
        return (f"#ttg.nvidia_mma<{{versionMajor = {layout.version[0]}, versionMinor = {layout.version[1]}, "
                f"warpsPerCTA = {_ints(layout.warps_per_cta)}{_cga_text(layout.cga_layout)}, "
                f"instrShape = {_ints(layout.instr_shape)}}}>")
    if isinstance(layout, DotOperandLayout):
        k_width = f", kWidth = {layout.k_width}" if layout.k_width else ""
        return f"#ttg.dot_op<{{opIdx = {layout.operand_index}, parent = {format_attribute(layout.parent)}{k_width}}}>"
    if isinstance(layout, DistributedLinearLayout):
        return "#ttg.linear<{" + _linear_text([("register", layout.reg_bases), ("lane", layout.lane_bases),
                                               ("warp", layout.warp_bases), ("block", layout.block_bases)]) + "}>"
    if isinstance(layout, AMDMFMALayout):
        text = (f"#ttg.amd_mfma<{{version = {layout.version}, warpsPerCTA = {_ints(layout.warps_per_cta)}, "
                f"instrShape = {_ints(layout.instr_shape)}, isTransposed = {_bool(layout.transposed)}"
                f"{_cga_text(layout.cga_layout)}")
        if any(t != 1 for t in layout.tiles_per_warp):
            text += f", tilesPerWarp = {_ints(layout.tiles_per_warp)}"
        if layout.element_bitwidth != 32:
            text += f", elementBitWidth = {layout.element_bitwidth}"
        return text + "}>"
    if isinstance(layout, AMDWMMALayout):
        cta = []
        if layout.reg_bases:
            cta.append(("register", layout.reg_bases))
        if layout.warp_bases:
            cta.append(("warp", layout.warp_bases))
        text = (f"#ttg.amd_wmma<{{version = {layout.version}, isTranspose = {_bool(layout.transposed)}, "
                f"ctaLayout = {{{_linear_text(cta)}}}{_cga_text(layout.cga_layout)}")
        if tuple(layout.instr_shape) != _WMMA_DEFAULT_INSTR:
            text += f", instrShape = {_ints(layout.instr_shape)}"
        return text + "}>"
    if isinstance(layout, (SwizzledSharedLayout, AMDRotatingSharedLayout)):
        kind = "swizzled_shared" if isinstance(layout, SwizzledSharedLayout) else "amd_rotating_shared"
        return (f"#ttg.{kind}<{{vec = {layout.vec}, perPhase = {layout.per_phase}, maxPhase = {layout.max_phase}, "
                f"order = {_ints(layout.order)}{_cga_text(layout.cga_layout)}}}>")
    if isinstance(layout, NVMMASharedLayout):
        text = (f"#ttg.nvmma_shared<{{swizzlingByteWidth = {layout.swizzle_byte_width}, transposed = "
                f"{_bool(layout.transposed)}, elementBitWidth = {layout.element_bitwidth}")
        if layout.fp4_padded:
            text += ", fp4Padded = true"
        if not layout.cga_layout and layout.rank != 2:
            text += f", rank = {layout.rank}"
        return text + _cga_text(layout.cga_layout) + "}>"
    if isinstance(layout, SharedLinearLayout):
        pairs = [("offset", layout.offset_bases)] + ([("block", layout.block_bases)] if layout.block_bases else [])
        return f"#ttg.shared_linear<{{{_linear_text(pairs)}}}, alignment = {layout.alignment}>"
    if isinstance(layout, PaddedSharedLayout):
        pairs_text = ", ".join(f"{i}:+{p}" for i, p in layout.interval_padding_pairs)
        order = layout.identity_order()
        if order is not None:
            body = f"order = {_ints(order)}, shape = {_ints(layout.shape)}"
        else:
            component = layout.to_linear()
            body = _linear_text([("offset", component.bases["offset"]), ("block", component.bases["block"])])
        return f"#ttg.padded_shared<[{pairs_text}] {{{body}}}>"
    if isinstance(layout, TensorMemoryLayout):
        text = (f"#ttng.tensor_memory_encoding<blockM = {layout.block[0]}, blockN = {layout.block[1]}, "
                f"colStride = {layout.col_stride}{_cga_text(layout.cga_layout)}")
        if layout.two_ctas:
            text += ", twoCTAs = true"
        if layout.fp4_padded:
            text += ", fp4Padded = true"
        return text + ">"
    if isinstance(layout, TensorMemoryScalesLayout):
        cga = f"CGALayout = {_bases(layout.cga_layout)}" if layout.cga_layout else ""
        return f"#ttng.tensor_memory_scales_encoding<{cga}>"
    raise LayoutError(f"layout must be a catalog layout with a TTGIR attribute, got {type(layout).__name__}")


# --------------------------------------------------------------------------------------------------
# types and modules
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TensorType:
    """A ``tensor<..>`` (distributed, in registers) or ``!ttg.memdesc<..>`` (shared / tensor memory) type.

    ``shape`` is the type's shape; ``element_type`` the element as printed (``f16``, ``!tt.ptr<f16>``);
    ``layout`` the catalog descriptor of its encoding (None for a tensor without one, as in TTIR);
    ``memory_space`` and ``alloc_shape`` describe a memdesc (``#ttg.shared_memory``, the allocation's shape).
    """

    kind: str
    shape: tuple[int, ...]
    element_type: str
    layout: Any
    memory_space: str | None = None
    mutable: bool = False
    alloc_shape: tuple[int, ...] | None = None

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


#: an element type: a name (``f16``, ``f8E4M3FN``) or a dialect type (``!tt.ptr<f32>``), never a tensor
_ELEMENT = re.compile(r"[A-Za-z_][\w.$]*|![\w.$]+(?:<.*>)?", re.S)


@checked
def parse_type(text: str, aliases: Mapping[str, Any] | None = None, *, _resolve: Any = None) -> TensorType:
    """A ``tensor<SHAPExELEMENT[, #encoding]>`` or ``!ttg.memdesc<SHAPExELEMENT, #encoding, #space[, mutable]
    [, ALLOC]>`` type as a ``TensorType``; the encoding may be an alias of ``aliases``.

    >>> t = parse_type("tensor<64x32xf16, #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], "
    ...                "warpsPerCTA = [4, 1], order = [1, 0]}>>")
    >>> t.shape, t.element_type, t.linear_layout().out_dims
    ((64, 32), 'f16', {'dim0': 64, 'dim1': 32})
    """
    text = text.strip()
    if text.startswith("tensor<"):
        kind, inner = "tensor", text[len("tensor<"):]
    elif text.startswith("!ttg.memdesc<"):
        kind, inner = "memdesc", text[len("!ttg.memdesc<"):]
    else:
        raise LayoutError(f"ttgir: a type must start with 'tensor<' or '!ttg.memdesc<', got {text[:30]!r}")
    if not inner.endswith(">"):
        raise LayoutError(f"ttgir: the type {text[:60]!r} must end with '>'")
    parts = split_top(inner[:-1]) or [""]
    shape, element = shape_and_element(parts[0])
    if not element:
        raise LayoutError(f"ttgir: the type {text[:60]!r} has no element type")
    if not _ELEMENT.fullmatch(element):
        raise LayoutError(f"ttgir: the type {text[:60]!r} has the element type {element[:30]!r}: a static shape "
                          "SIZExSIZEx... then a type name (f16, i32, !tt.ptr<f32>) is needed")

    def attribute(part: str) -> Any:
        reader = _Reader(part, aliases, _resolve)
        value = reader.attribute()
        if not reader.at_end():
            raise reader.fail("unexpected text after the attribute")
        return value

    layout, space, mutable, alloc = None, None, False, None
    for part in parts[1:]:
        if part.startswith("#"):
            value = attribute(part)
            if isinstance(value, MemorySpace):
                space = value.name
            elif layout is None:
                layout = value
            else:
                space = getattr(value, "name", space)
        elif part == "mutable":
            mutable = True
        elif re.fullmatch(STATIC_SHAPE, part):
            alloc = tuple(int(d) for d in part.split("x"))
        else:
            raise LayoutError(f"ttgir: unexpected '{part}' in the type {text[:60]!r}")
    return TensorType(kind, shape, element, layout, space, mutable, alloc)


@dataclass(frozen=True)
class TTGIRModule:
    """The layouts of a TTGIR module: its aliases (``#blocked`` -> descriptor, in order) and its distinct
    tensor / memdesc types (in order of first appearance), plus the module's ``ttg.*`` attributes."""

    aliases: tuple[tuple[str, Any], ...]
    types: tuple[TensorType, ...]
    num_warps: int | None = None
    threads_per_warp: int | None = None
    num_ctas: int | None = None
    target: str | None = None

    @property
    def layouts(self) -> tuple[Any, ...]:
        """Every distinct layout descriptor of the module (aliases and inline encodings), in order."""
        seen: dict[Any, None] = {}
        for _, layout in self.aliases:
            seen.setdefault(layout, None)
        for t in self.types:
            if t.layout is not None:
                seen.setdefault(t.layout, None)
        return tuple(seen)


_ALIAS_LINE = re.compile(rf"^(#{NAME_CHAR}+)\s*=\s*(.+?)\s*$", re.M)
_TYPE_START = re.compile(r"(?<![\w.])(tensor<|!ttg\.memdesc<)")


def _module_attribute(text: str, key: str, quoted: bool = True) -> Any:
    pattern = rf'"?{re.escape(key)}"?\s*=\s*(?:"([^"]*)"|(-?\d+))'
    match = re.search(pattern, text)
    if not match:
        return None
    return match.group(1) if match.group(1) is not None else int(match.group(2))


def parse_module(text: str, *, max_bytes: int = MAX_IR_BYTES) -> TTGIRModule:
    """Every layout alias and every tensor / memdesc type of a TTGIR module (``MLIR_ENABLE_DUMP`` text or
    ``compiled.asm["ttgir"]``). Non-layout aliases (``#loc``, ``#smem``) are skipped; an alias may refer
    to others in any order. A text of more than ``max_bytes`` UTF-8 bytes (``limits.MAX_IR_BYTES``) is
    refused before it is read.

    >>> m = parse_module('#blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], '
    ...                  'warpsPerCTA = [4], order = [0]}>\\nmodule {\\n  %0 = tt.make_range {end = 128 : i32, '
    ...                  'start = 0 : i32} : tensor<128xi32, #blocked>\\n}')
    >>> [name for name, _ in m.aliases], [(t.shape, t.element_type) for t in m.types]
    (['#blocked'], [((128,), 'i32')])
    """
    if not isinstance(text, str):
        raise LayoutError(f"text must be a string, got {type(text).__name__}")
    check_ir_text(text, max_bytes=max_bytes)
    raw = {m.group(1): m.group(2) for m in _ALIAS_LINE.finditer(text)}
    resolved: dict[str, Any] = {}
    active: list[str] = []

    def resolve(name: str) -> Any:
        if name in resolved:
            return resolved[name]
        if name not in raw:
            raise LayoutError(f"ttgir: unknown alias '{name}'")
        if name in active:
            raise LayoutError(f"ttgir: the alias '{name}' refers to itself")
        active.append(name)
        reader = _Reader(raw[name], None, resolve)
        value = reader.attribute()
        if not reader.at_end():
            raise reader.fail(f"unexpected text after the attribute of {name}")
        active.pop()
        resolved[name] = value
        return value

    aliases = []
    for name, value in raw.items():
        if value.startswith(("#ttg.", "#ttng.")):
            layout = resolve(name)
            if not isinstance(layout, MemorySpace):
                aliases.append((name, layout))
    types: dict[str, TensorType] = {}
    match = _TYPE_START.search(text)
    while match:  # a type's text is not searched again for types (nested ones made this quadratic)
        start = match.start()
        end = closing(text, match.end() - 1)
        if end < 0:
            raise LayoutError(f"ttgir: unbalanced '<' at offset {match.end() - 1}")
        type_text = text[start: end + 1]
        if type_text not in types:
            types[type_text] = parse_type(type_text, _resolve=resolve)
        match = _TYPE_START.search(text, end + 1)
    distinct: dict[TensorType, None] = dict.fromkeys(types.values())
    return TTGIRModule(
        tuple(aliases), tuple(distinct),
        _module_attribute(text, "ttg.num-warps"), _module_attribute(text, "ttg.threads-per-warp"),
        _module_attribute(text, "ttg.num-ctas"), _module_attribute(text, "ttg.target"),
    )
