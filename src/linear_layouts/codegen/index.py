"""Index emitter: a LinearLayout (or its inverse) as CUDA C++ XORs of masked input bits.

A linear layout L over F2 maps input bits to output bits, so every output is

    L(x) = XOR_{in dims d, bits i with x_d bit i set} L(2**i in d)

and after flattening the out dims with power-of-two strides the image of each input bit is one
integer mask.  ``IndexExpression`` keeps that form as data (a constant plus one term per group of
input bits), evaluates it in Python and prints it as a CUDA C++ expression on ``unsigned`` values.

Example: the 4x4 transpose ``{"lane": [[1, 0], [2, 0], [0, 1], [0, 2]]}`` flattened row-major
(``dim1`` fastest) is ``((lane << 2) & 0xcu) ^ ((lane >> 2) & 0x3u)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from linear_layouts.core.arguments import checked
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote
from linear_layouts.core.layout import LinearLayout

__all__ = [
    "XorTerm",
    "xor_terms",
    "IndexExpression",
    "flat_images",
    "row_major_strides",
    "index_expression",
    "inverse_index_expression",
    "emit_index",
    "emit_inverse_index",
]


@dataclass(frozen=True)
class XorTerm:
    """One group of bits of an input variable: ``((var >> shift) & mask)`` (shift may be negative,
    meaning a left shift) when ``spread`` is 0; otherwise ``(0u - ((var >> bit) & 1u)) & spread``
    (one input bit whose image has several set bits)."""

    var: str
    shift: int = 0
    mask: int = 0
    bit: int = 0
    spread: int = 0

    def evaluate(self, value: int) -> int:
        """The term's value for ``var = value``."""
        if self.spread:
            return self.spread if (value >> self.bit) & 1 else 0
        shifted = value >> self.shift if self.shift >= 0 else value << -self.shift
        return shifted & self.mask

    def to_cuda(self) -> str:
        """The term as a C++ expression on ``unsigned`` ``var``."""
        if self.spread:
            bit = f"({self.var} & 1u)" if self.bit == 0 else f"(({self.var} >> {self.bit}) & 1u)"
            return f"((0u - {bit}) & {self.spread:#x}u)"
        if self.shift > 0:
            return f"(({self.var} >> {self.shift}) & {self.mask:#x}u)"
        if self.shift < 0:
            return f"(({self.var} << {-self.shift}) & {self.mask:#x}u)"
        return f"({self.var} & {self.mask:#x}u)"


@dataclass(frozen=True)
class IndexExpression:
    """``constant ^ XOR(terms)``: a flattened layout output as XORs of masked input bits."""

    constant: int
    terms: tuple[XorTerm, ...]

    @property
    def runtime_bits(self) -> int:
        """Every bit the runtime terms can set: where ``constant`` has none of them, ``^`` is ``+``."""
        out = 0
        for term in self.terms:
            out |= term.spread or term.mask
        return out

    @property
    def variables(self) -> tuple[str, ...]:
        """Names of the runtime variables the expression reads, in first-use order."""
        return tuple(dict.fromkeys(t.var for t in self.terms))

    def evaluate(self, values: Mapping[str, int]) -> int:
        """The expression's value; ``values`` gives each variable (missing ones count as 0)."""
        out = self.constant
        for term in self.terms:
            out ^= term.evaluate(int(values.get(term.var, 0)))
        return out

    def to_cuda(self) -> str:
        """The expression in C++ (type ``unsigned``); ``0u`` when it is identically zero."""
        parts = [t.to_cuda() for t in self.terms]
        if self.constant or not parts:
            parts.append(f"{self.constant:#x}u")
        return parts[0] if len(parts) == 1 else "(" + " ^ ".join(parts) + ")"


def row_major_strides(out_dims: Mapping[str, int]) -> dict[str, int]:
    """Strides of a row-major (last dim fastest) flattening, as in ``tensor[m, n] at m*N + n``.

    >>> row_major_strides({"dim0": 4, "dim1": 8})
    {'dim0': 8, 'dim1': 1}
    """
    strides: dict[str, int] = {}
    stride = 1
    for name in reversed(list(out_dims)):
        strides[name] = stride
        stride *= out_dims[name]
    return dict((name, strides[name]) for name in out_dims)


def flat_images(layout: LinearLayout, strides: Mapping[str, int] | None = None) -> dict[str, list[int]]:
    """Image of every input bit as one flattened int: ``sum_d L(2**i)[d] * strides[d]``.

    Flattening is linear over F2 only when each dim's bits land on disjoint bit ranges, so every
    stride must be a power of two and ``stride_d * size_d`` must not reach into another dim's bits.
    Default strides: row-major (``row_major_strides``).
    """
    out_dims = layout.out_dims
    if strides is None:
        strides = row_major_strides(out_dims)
    used = 0
    shifts: dict[str, int] = {}
    for name, size in out_dims.items():
        if name not in strides:
            raise LayoutError(f"strides: missing a stride for out dim {quote(name)}")
        stride = int(strides[name])
        if stride <= 0 or stride & (stride - 1):
            raise LayoutError(f"strides: stride of {quote(name)} must be a power of two, got {stride}")
        bits = (size - 1) * stride
        if used & bits:
            raise LayoutError(f"strides: out dim {quote(name)} overlaps the bits of another out dim")
        used |= bits
        shifts[name] = stride.bit_length() - 1
    names = list(out_dims)
    images: dict[str, list[int]] = {}
    for in_dim, vectors in layout.bases.items():
        images[in_dim] = [
            sum(int(v[k]) << shifts[names[k]] for k in range(len(names))) for v in vectors
        ]
    return images


def xor_terms(var: str, images: Sequence[int]) -> list[XorTerm]:
    """Group the bits of one variable: single-bit images with equal shift share one term."""
    by_shift: dict[int, int] = {}
    terms: list[XorTerm] = []
    for bit, image in enumerate(images):
        if image == 0:
            continue
        if image & (image - 1) == 0:
            shift = bit - (image.bit_length() - 1)
            by_shift[shift] = by_shift.get(shift, 0) | image
        else:
            terms.append(XorTerm(var, bit=bit, spread=image))
    grouped = [XorTerm(var, shift=s, mask=m) for s, m in sorted(by_shift.items())]
    return grouped + terms


@checked
def index_expression(
    layout: LinearLayout,
    inputs: Mapping[str, str | int],
    strides: Mapping[str, int] | None = None,
) -> IndexExpression:
    """The flattened output of ``layout`` as XORs of masked input bits.

    ``inputs`` maps each in dim to a C++ variable name (a runtime ``unsigned``) or to an int
    (a compile-time value, folded into the constant); in dims not named count as 0.

    >>> L = LinearLayout({"lane": [[1, 0], [2, 0], [0, 1], [0, 2]]}, ["dim0", "dim1"])
    >>> index_expression(L, {"lane": "lane"}).to_cuda()
    '(((lane << 2) & 0xcu) ^ ((lane >> 2) & 0x3u))'
    """
    for name in inputs:
        if not layout.has_in_dim(name):
            raise LayoutError(f"inputs: {quote(name)} is not an in dim of the layout {layout.in_dim_names}")
    images = flat_images(layout, strides)
    constant = 0
    terms: list[XorTerm] = []
    for in_dim, value in inputs.items():
        if isinstance(value, str):
            if not value.isidentifier():
                raise LayoutError(f"inputs: {quote(value)} for {quote(in_dim)} is not a C++ identifier")
            terms.extend(xor_terms(value, images[in_dim]))
        else:
            if not hasattr(value, "__index__") or isinstance(value, bool):
                raise LayoutError(f"inputs: the value for {quote(in_dim)} must be a C++ identifier or an int, got "
                                  f"{type(value).__name__}")
            v = value.__index__()
            if v < 0 or v >= layout.in_dim_size(in_dim):
                raise LayoutError(
                    f"inputs: {in_dim}={v} is outside [0, {layout.in_dim_size(in_dim)})"
                )
            for bit, image in enumerate(images[in_dim]):
                if (v >> bit) & 1:
                    constant ^= image
    return IndexExpression(constant, tuple(terms))


@checked
def inverse_index_expression(
    layout: LinearLayout,
    inputs: Mapping[str, str | int],
    strides: Mapping[str, int] | None = None,
) -> IndexExpression:
    """The flattened *input* of ``layout`` for given outputs: ``index_expression(L^-1, ...)``.

    ``layout`` must be invertible; ``inputs`` names the out dims of ``layout``.
    """
    if not layout.is_invertible():
        raise LayoutError("layout: must be invertible to emit its inverse")
    return index_expression(layout.invert(), inputs, strides)


@checked
def emit_index(
    layout: LinearLayout,
    inputs: Mapping[str, str | int],
    strides: Mapping[str, int] | None = None,
) -> str:
    """``index_expression(...).to_cuda()``."""
    return index_expression(layout, inputs, strides).to_cuda()


@checked
def emit_inverse_index(
    layout: LinearLayout,
    inputs: Mapping[str, str | int],
    strides: Mapping[str, int] | None = None,
) -> str:
    """``inverse_index_expression(...).to_cuda()``."""
    return inverse_index_expression(layout, inputs, strides).to_cuda()
