"""Storage types of generated kernels' elements and packing of sub-word elements into 32-bit words.

Kernels move bits, never interpret them: an element of ``w`` bytes is held in an unsigned C++
integer of ``w`` bytes.  A vector of ``v`` elements covering ``v*w >= 4`` bytes travels as
``v*w/4`` 32-bit words; element ``j`` of a word sits at bits ``[8wj, 8w(j+1))`` (little-endian, as in
memory).  Packing uses ``__byte_perm`` (PTX ``prmt``) for bytes and halves.

Example: two fp16 registers ``a[0], a[1]`` pack to ``__byte_perm(a[0], a[1], 0x5410u)``.
"""

from __future__ import annotations

from typing import Sequence

from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote

__all__ = ["CPP_STORAGE_TYPES", "cpp_storage_type", "check_element_bytes", "pack_words", "unpack_words"]

#: Element bytes -> the unsigned C++ integer a kernel holds such an element in.
CPP_STORAGE_TYPES = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}


def check_element_bytes(element_bytes: int) -> int:
    """``element_bytes`` if it is 1, 2, 4 or 8, else LayoutError."""
    if element_bytes not in CPP_STORAGE_TYPES:
        raise LayoutError(f"element_bytes: must be 1, 2, 4 or 8, got {quote(element_bytes)}")
    return element_bytes


def cpp_storage_type(element_bytes: int) -> str:
    """The C++ type holding one element of ``element_bytes`` bytes: the unsigned integer of that size (an
    element's meaning is :class:`linear_layouts.core.element_type.ElementType`; kernels only move its bits).

    >>> cpp_storage_type(2)
    'unsigned short'
    """
    return CPP_STORAGE_TYPES[check_element_bytes(element_bytes)]


def pack_words(elements: Sequence[str], element_bytes: int) -> list[str]:
    """32-bit word expressions holding ``elements`` (C++ expressions) in memory order.

    ``len(elements) * element_bytes`` must be a multiple of 4.
    """
    w = check_element_bytes(element_bytes)
    if (len(elements) * w) % 4:
        raise LayoutError(f"elements: {len(elements)} x {w} bytes is not a whole number of words")
    if w == 8:
        out: list[str] = []
        for e in elements:
            out += [f"(unsigned)({e})", f"(unsigned)(({e}) >> 32)"]
        return out
    if w == 4:
        return [f"(unsigned)({e})" for e in elements]
    if w == 2:
        return [
            f"__byte_perm((unsigned)({elements[i]}), (unsigned)({elements[i + 1]}), 0x5410u)"
            for i in range(0, len(elements), 2)
        ]
    words = []
    for i in range(0, len(elements), 4):
        lo = f"__byte_perm((unsigned)({elements[i]}), (unsigned)({elements[i + 1]}), 0x0040u)"
        hi = f"__byte_perm((unsigned)({elements[i + 2]}), (unsigned)({elements[i + 3]}), 0x0040u)"
        words.append(f"__byte_perm({lo}, {hi}, 0x5410u)")
    return words


def unpack_words(words: Sequence[str], element_bytes: int) -> list[str]:
    """Element expressions (of the element type) held by 32-bit ``words``, in memory order."""
    w = check_element_bytes(element_bytes)
    t = cpp_storage_type(w)
    if w == 8:
        return [
            f"(({t})({words[i + 1]}) << 32 | ({t})({words[i]}))" for i in range(0, len(words), 2)
        ]
    if w == 4:
        return [f"({t})({x})" for x in words]
    per = 4 // w
    return [f"({t})(({x}) >> {8 * w * j})" for x in words for j in range(per)]
