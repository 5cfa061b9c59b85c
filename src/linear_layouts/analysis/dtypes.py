"""Element types as bit widths: the one parser every analysis uses for its ``dtype`` argument.

``bitwidth("fp16") == 16``; an int is accepted as the bit width itself.

>>> bitwidth("bf16"), bitwidth("fp8"), bitwidth(32)
(16, 8, 32)
"""

from __future__ import annotations

from linear_layouts.errors import LayoutError

__all__ = ["bitwidth", "DTYPE_BITWIDTHS", "SUPPORTED_BITWIDTHS"]

#: Bit widths an element may have (sub-byte types are widened to 8 bits, as Triton does).
SUPPORTED_BITWIDTHS: tuple[int, ...] = (8, 16, 32, 64)

#: Names accepted by :func:`bitwidth`, Triton's and NumPy's spellings.
DTYPE_BITWIDTHS: dict[str, int] = {
    **dict.fromkeys(["fp8", "f8", "fp8e4nv", "fp8e5", "fp8e4b15", "float8", "e4m3", "e5m2"], 8),
    **dict.fromkeys(["i8", "int8", "u8", "uint8"], 8),
    **dict.fromkeys(["fp16", "f16", "float16", "half", "bf16", "bfloat16"], 16),
    **dict.fromkeys(["i16", "int16", "u16", "uint16"], 16),
    **dict.fromkeys(["fp32", "f32", "float32", "float", "tf32"], 32),
    **dict.fromkeys(["i32", "int32", "u32", "uint32"], 32),
    **dict.fromkeys(["fp64", "f64", "float64", "double"], 64),
    **dict.fromkeys(["i64", "int64", "u64", "uint64"], 64),
}


def bitwidth(dtype: int | str) -> int:
    """Bit width of an element type: an int in {8, 16, 32, 64} or a name such as "fp32", "bf16", "i8".

    >>> bitwidth("f32")
    32
    """
    if isinstance(dtype, bool):
        raise LayoutError(f"dtype must be a bit width or a type name, got {dtype!r}")
    if isinstance(dtype, int):
        if dtype not in SUPPORTED_BITWIDTHS:
            raise LayoutError(f"dtype as a bit width must be one of {SUPPORTED_BITWIDTHS}, got {dtype}")
        return dtype
    if isinstance(dtype, str):
        key = dtype.strip().lower()
        if key in DTYPE_BITWIDTHS:
            return DTYPE_BITWIDTHS[key]
        raise LayoutError(f"dtype {dtype!r} is not a known type name; known: {sorted(DTYPE_BITWIDTHS)}")
    raise LayoutError(f"dtype must be a bit width (int) or a type name (str), got {type(dtype).__name__}")
