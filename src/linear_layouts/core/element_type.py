"""Element types: the one parser of every ``dtype`` argument in the package.

An :class:`ElementType` is a frozen value ``(name, bits, kind)``: ``bits`` is the storage width of one
element (what layouts, bank models and kernels care about), ``kind`` what the bits mean. Every public
function that needs an element width takes ``dtype=`` and reads it with :func:`element_type`, which
accepts, in this order:

* an :class:`ElementType` (returned as is);
* a bit width, an ``int`` in {8, 16, 32, 64, 128} (an opaque type ``b8`` ... ``b128``: only the width);
* a name, case-insensitive: ours (``fp8``, ``bf16``, ``fp16``, ``tf32``, ``fp32``, ``fp64``, ``i8``, ``u8``,
  ``i16`` ... ``u64``, ``i1``), Triton's (``fp8e4nv``, ``fp8e5``, ``fp8e4b15``, ``fp8e4b8``, ``fp8e5b16``,
  ``int1``, ``uint8``, ...; also ``tl.float8e4nv``), MLIR's (``f8E4M3FN``, ``f16``, ``i32``, ...),
  NumPy's (``float16``, ``int32``, ``half``, ``double``, ...) and PyTorch's (``float8_e4m3fn``,
  ``torch.bfloat16``, ``half``, ``short``, ``long``, ...);
* a ``triton.language`` dtype, a PyTorch dtype, a NumPy dtype or scalar type: read through its name
  (duck-typed: neither Triton nor PyTorch is imported).

Names count **bits** (``i8`` is an 8-bit integer, as in Triton and MLIR; so are ``u8`` and ``f16``,
which NumPy would read as 64-, 64- and 128-bit). NumPy's other type codes count *bytes* where a
bit-count reading names another type, so they are refused with a message saying why: ``"f8"`` is
float64 to NumPy and an 8-bit float to everyone else; ``"float"`` is float64 to NumPy and Python and
float32 to C, CUDA and PyTorch (:data:`AMBIGUOUS_NAMES`). A NumPy dtype *object* is never ambiguous:
``np.dtype("f8")`` is float64.

=============================  =========  ======  ================
spelling                       name       bits    kind
=============================  =========  ======  ================
``"fp16"``, ``np.float16``     fp16       16      float
``"float8_e4m3fn"``            fp8e4nv    8       float
``"torch.int64"``, ``"long"``  i64        64      signed int
``32``                         b32        32      bits (opaque)
=============================  =========  ======  ================

>>> element_type("float8_e4m3fn")
ElementType('fp8e4nv', 8, float)
>>> bitwidth("bf16"), bitwidth("fp8"), bitwidth(32)
(16, 8, 32)
"""

from __future__ import annotations

import enum
import functools
from dataclasses import dataclass
from typing import Any

from linear_layouts.core.errors import LayoutError, did_you_mean
from linear_layouts.core.limits import parse_int, quote
from linear_layouts.core.mlir_text import pointee

__all__ = ["ElementKind", "ElementType", "DTypeLike", "element_type", "dtype_argument", "bitwidth", "ir_element_bits",
           "SUPPORTED_BITWIDTHS", "DTYPE_NAMES", "AMBIGUOUS_NAMES"]

#: What a ``dtype=`` argument may be: an ElementType, a bit width, a name, or a Triton / PyTorch / NumPy dtype.
DTypeLike = Any

#: Widths an element may have. Sub-byte types (fp4, i1) are stored in 8 bits, as Triton does.
SUPPORTED_BITWIDTHS: tuple[int, ...] = (8, 16, 32, 64, 128)


class ElementKind(enum.Enum):
    """What the bits of an element mean."""

    FLOAT = "float"
    SIGNED = "signed int"
    UNSIGNED = "unsigned int"
    BOOL = "bool"
    BITS = "bits"  #: only a width is known (a dtype given as a bit width)


@dataclass(frozen=True)
class ElementType:
    """One element type: its canonical ``name``, its storage width ``bits`` and its ``kind``.

    Requires: ``bits`` in :data:`SUPPORTED_BITWIDTHS`.

    >>> ElementType("fp16", 16, ElementKind.FLOAT).bytes
    2
    """

    name: str
    bits: int
    kind: ElementKind

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise LayoutError(f"name: an element type needs a name, got {quote(self.name)}")
        if isinstance(self.bits, bool) or self.bits not in SUPPORTED_BITWIDTHS:
            raise LayoutError(f"bits: an element is one of {SUPPORTED_BITWIDTHS} bits wide, got {quote(self.bits)}")
        if not isinstance(self.kind, ElementKind):
            raise LayoutError(f"kind: expected an ElementKind, got {quote(self.kind)}")

    @property
    def bytes(self) -> int:
        """Bytes per element: ``bits // 8``."""
        return self.bits // 8

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"ElementType({self.name!r}, {self.bits}, {self.kind.value})"

    @classmethod
    def parse(cls, dtype: Any) -> "ElementType":
        """The element type ``dtype`` names; the same as :func:`element_type`."""
        return element_type(dtype)


def _types() -> dict[str, ElementType]:
    f, s, u = ElementKind.FLOAT, ElementKind.SIGNED, ElementKind.UNSIGNED
    found = [ElementType(name, bits, kind) for name, bits, kind in [
        ("fp8", 8, f), ("fp8e4nv", 8, f), ("fp8e5", 8, f), ("fp8e4b15", 8, f), ("fp8e4b8", 8, f),
        ("fp8e5b16", 8, f), ("e8m0", 8, f), ("fp16", 16, f), ("bf16", 16, f), ("tf32", 32, f), ("fp32", 32, f),
        ("fp64", 64, f), ("i1", 8, ElementKind.BOOL),
        ("i8", 8, s), ("i16", 16, s), ("i32", 32, s), ("i64", 64, s),
        ("u8", 8, u), ("u16", 16, u), ("u32", 32, u), ("u64", 64, u)]]
    found += [ElementType(f"b{bits}", bits, ElementKind.BITS) for bits in SUPPORTED_BITWIDTHS]
    return {t.name: t for t in found}


#: The canonical element types by name.
_CANONICAL: dict[str, ElementType] = _types()

#: Every accepted name (lower case, without a ``torch.`` / ``tl.`` / ``np.`` prefix) -> canonical name.
DTYPE_NAMES: dict[str, str] = {
    **{name: name for name in _CANONICAL},
    # 8-bit floats: ours, Triton's (tl.float8e4nv is named fp8e4nv), MLIR's, PyTorch's / ml_dtypes'
    "float8": "fp8",
    "float8e4nv": "fp8e4nv", "e4m3": "fp8e4nv", "f8e4m3fn": "fp8e4nv", "float8_e4m3fn": "fp8e4nv",
    "float8e5": "fp8e5", "e5m2": "fp8e5", "f8e5m2": "fp8e5", "float8_e5m2": "fp8e5",
    "float8e4b15": "fp8e4b15", "f8e4m3b11fnuz": "fp8e4b15",
    "float8e4b8": "fp8e4b8", "f8e4m3fnuz": "fp8e4b8", "float8_e4m3fnuz": "fp8e4b8",
    "float8e5b16": "fp8e5b16", "f8e5m2fnuz": "fp8e5b16", "float8_e5m2fnuz": "fp8e5b16",
    "f8e8m0fnu": "e8m0", "float8_e8m0fnu": "e8m0",
    # 16 ... 64-bit floats (MLIR's f16 / f32 / f64 count bits)
    "f16": "fp16", "float16": "fp16", "half": "fp16",
    "bfloat16": "bf16",
    "tfloat32": "tf32",
    "f32": "fp32", "float32": "fp32", "single": "fp32",
    "f64": "fp64", "float64": "fp64", "double": "fp64",
    # integers (Triton: int1, int8 ..., uint8 ...; PyTorch: short, long; NumPy: bool)
    "int1": "i1", "bool": "i1", "bool_": "i1",
    "int8": "i8", "int16": "i16", "short": "i16", "int32": "i32", "int64": "i64", "long": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
}

#: Names whose meaning depends on who reads them; refused, with the two readings and what to write.
#: NumPy's type codes count bytes (``"f8"`` is float64) where Triton, MLIR and this package count bits.
AMBIGUOUS_NAMES: dict[str, str] = {
    **{code: f"NumPy reads it as {numpy_name} (NumPy's codes count bytes) while Triton, MLIR and this package "
             f"count bits; write the type out (e.g. '{numpy_name}' or '{ours}')"
       for code, numpy_name, ours in [("f2", "float16", "fp16"), ("f4", "float32", "fp4 is not supported"),
                                      ("f8", "float64", "fp8"), ("i2", "int16", "i16"), ("i4", "int32", "i32"),
                                      ("u1", "uint8", "u8"), ("u2", "uint16", "u16"), ("u4", "uint32", "u32")]},
    "float": "NumPy and Python read it as float64 while C, CUDA and PyTorch read it as float32; write 'fp32' or 'fp64'",
}

_PREFIXES = ("torch.", "triton.language.", "tl.", "numpy.", "np.")


@functools.lru_cache(maxsize=None)
def _from_name(text: str) -> ElementType:
    key = text.strip().lower()
    for prefix in _PREFIXES:
        if key.startswith(prefix):
            key = key[len(prefix):]
            break
    if key in DTYPE_NAMES:
        return _CANONICAL[DTYPE_NAMES[key]]
    if key in AMBIGUOUS_NAMES:
        raise LayoutError(f"dtype {quote(text)} is ambiguous: {AMBIGUOUS_NAMES[key]}")
    if key.isascii() and key.isdigit():  # a width is ASCII digits: isdigit() alone admits '²', int() does not
        return _from_width(parse_int(key, f"dtype {quote(text)}"))
    raise LayoutError(f"dtype {quote(text)} is not a known element type{did_you_mean(key, DTYPE_NAMES)}; known: "
                      f"{', '.join(_CANONICAL)} (and Triton's, MLIR's, NumPy's and PyTorch's names for them: "
                      f"DTYPE_NAMES)")


def _from_width(bits: int) -> ElementType:
    if bits not in SUPPORTED_BITWIDTHS:
        raise LayoutError(f"dtype as a bit width must be one of {SUPPORTED_BITWIDTHS}, got {bits}")
    return _CANONICAL[f"b{bits}"]


def _from_object(dtype: Any) -> ElementType:
    """triton.language / PyTorch / NumPy dtypes, by their name (none of those packages is imported here
    except NumPy, a core dependency)."""
    if dtype is None:
        raise LayoutError("dtype must be an element type (a bit width or a name such as 'fp16'), got None")
    if isinstance(dtype, type) and dtype.__module__ == "builtins":
        raise LayoutError(f"dtype: Python's {quote(dtype.__name__)} has no fixed width on the GPU (it is 64-bit in "
                          f"NumPy, 32-bit in C and PyTorch for float); pass a name such as 'fp32' or 'i64'")
    module = type(dtype).__module__ or ""
    if module.startswith("triton") and isinstance(getattr(dtype, "primitive_bitwidth", None), int):
        parsed = _from_name(str(getattr(dtype, "name", "")))
        if parsed.bits != dtype.primitive_bitwidth and parsed.kind is not ElementKind.BOOL:
            raise LayoutError(f"dtype {quote(dtype)}: Triton says {dtype.primitive_bitwidth} bits, the name {parsed.bits}")
        return parsed
    if module.startswith("torch"):
        return _from_name(str(dtype))
    import numpy as np

    try:
        numpy_dtype = np.dtype(dtype)
    except (TypeError, ValueError):
        raise LayoutError(f"dtype must be an element type: a bit width, a name such as 'fp16', or a Triton, "
                          f"PyTorch or NumPy dtype; got {type(dtype).__name__} {quote(dtype)}") from None
    return _from_name(numpy_dtype.name)


def element_type(dtype: Any) -> ElementType:
    """The :class:`ElementType` ``dtype`` names (module docstring: every accepted spelling).

    Raises LayoutError naming ``dtype`` and the rule for anything else.

    >>> element_type("torch.bfloat16"), element_type("fp8e5").bits
    (ElementType('bf16', 16, float), 8)
    >>> import numpy as np; element_type(np.dtype("f8"))
    ElementType('fp64', 64, float)
    >>> element_type("f8")
    Traceback (most recent call last):
    ...
    linear_layouts.core.errors.LayoutError: dtype 'f8' is ambiguous: NumPy reads it as float64 (NumPy's codes count bytes) while Triton, MLIR and this package count bits; write the type out (e.g. 'float64' or 'fp8')
    """
    if isinstance(dtype, ElementType):
        return dtype
    if isinstance(dtype, bool):
        raise LayoutError(f"dtype must be a bit width or a type name, got {quote(dtype)}")
    if isinstance(dtype, int):
        return _from_width(dtype)
    if isinstance(dtype, str):
        return _from_name(dtype)
    return _from_object(dtype)


def dtype_argument(dtype: Any, *, required: bool = True, **old: Any) -> ElementType | None:
    """:func:`element_type` of a ``dtype=`` argument that has an old keyword (``bitwidth=``, ``bits=``: an
    element width in bits), given as ``old``: whichever of the two the caller gave, read the same way.

    Raises LayoutError naming both when both are given, and naming ``dtype`` when neither is and
    ``required``; returns None when neither is and not ``required``.

    >>> dtype_argument("fp16", bitwidth=None), dtype_argument(None, bitwidth=16)
    (ElementType('fp16', 16, float), ElementType('b16', 16, bits))
    """
    given = [(name, value) for name, value in old.items() if value is not None]
    if given and (dtype is not None or len(given) > 1):
        names = (["dtype"] if dtype is not None else []) + [name for name, _ in given]
        raise LayoutError(f"{' and '.join(names)}: give the element type once, as dtype= "
                          f"({', '.join(name for name, _ in given)}= is its old name)")
    if given:
        name, value = given[0]
        try:
            return element_type(value)
        except LayoutError as error:
            raise LayoutError(f"{name} (the old name of dtype): {error}") from None
    if dtype is None:
        if required:
            raise LayoutError("dtype: required, an element type (a bit width, a name such as 'fp16', or a "
                              "Triton, PyTorch or NumPy dtype)")
        return None
    return element_type(dtype)


def bitwidth(dtype: Any) -> int:
    """The storage width in bits of ``dtype`` (any spelling :func:`element_type` accepts).

    >>> bitwidth("f32"), bitwidth("float8_e5m2"), bitwidth(128)
    (32, 8, 128)
    """
    return element_type(dtype).bits


def ir_element_bits(element: str) -> int | None:
    """Bits one element of a TTIR / TTGIR element type occupies as Triton stores it: :func:`bitwidth` of
    a number type (``i1`` 8, ``f8E5M2`` 8, ``bf16`` 16), 64 for a pointer (``!tt.ptr<f32>``); None for a
    type that is no number this package knows (``index``, ``!tt.tensordesc<...>``, ``f4E2M1FN``).

    >>> ir_element_bits("i1"), ir_element_bits("f8E4M3FN"), ir_element_bits("!tt.ptr<f16>"), ir_element_bits("index")
    (8, 8, 64, None)
    """
    if not isinstance(element, str):
        raise LayoutError(f"element: must be the name of a TTIR / TTGIR element type (a str), got {quote(element)}")
    if pointee(element, "element") is not None:
        return 64
    try:
        return element_type(element).bits
    except LayoutError:
        return None
