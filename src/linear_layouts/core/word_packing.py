"""How a thread's registers of sub-word elements pack into 32-bit words: ``Packing``.

A thread's ``n = 2**R`` registers of ``w``-byte elements are held in 32-bit words.  For ``w < 4`` a
word holds ``4 / w`` elements: a ``Packing`` names the register bits ``in_word`` that pick the element
inside a word (bit ``i`` of the element position is register bit ``in_word[i]``); the other register
bits, in increasing order, give the word index.  For ``w >= 4`` every element is ``w / 4`` whole words
(word ``r * w/4 + h``).  Any packing is a register-level layout: the element at position ``p`` of word
``j`` is the register ``P(p, j)``, a bijection linear over F2.

One fact for both layers: ``analysis.op_counts`` counts the byte permutes of a plan with it and
``codegen.packing`` emits them with it.

Example: eight 8-bit registers packed along register bits (1, 2): register 3 is element 1 of word 1.

>>> p = Packing(1, 3, (1, 2))
>>> p.num_words, p.word(3), p.position(3), p.register(1, 1)
(2, 1, 1, 3)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote

__all__ = ["WORD_BYTES", "ByteId", "Word", "Packing", "bit_permutation", "exchange_stages", "renamed",
           "renaming_packing"]

WORD_BYTES = 4  # a register word: 32 bits

ByteId = tuple[int, int]  # (register, byte of the element)
Word = tuple  # 4 entries: ByteId or None


def _log2(n: int) -> int:
    return n.bit_length() - 1


@dataclass(frozen=True)
class Packing:
    """Where each register of a thread lives among its 32-bit words (module doc).

    ``element_bytes``: 1, 2, 4 or 8; ``register_bits``: log2 of the number of registers;
    ``in_word``: for 1- and 2-byte elements, the register bits that select the element inside a word
    (``min(log2(4 / w), register_bits)`` of them; a thread with fewer elements than a word holds
    leaves the rest of its one word unused), or none: unpacked, one element per word in its low
    bytes (``unpacked``); empty for 4- and 8-byte elements.
    """

    element_bytes: int
    register_bits: int
    in_word: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        w = self.element_bytes
        if w not in (1, 2, 4, 8):
            raise LayoutError(f"element_bytes: must be 1, 2, 4 or 8, got {quote(w)}")
        if self.register_bits < 0:
            raise LayoutError(f"register_bits: must be >= 0, got {self.register_bits}")
        bits = tuple(int(b) for b in self.in_word)
        object.__setattr__(self, "in_word", bits)
        want = min(_log2(4 // w), self.register_bits) if w < 4 else 0
        if len(bits) not in (want, 0) or len(set(bits)) != len(bits) or any(
                not 0 <= b < self.register_bits for b in bits):
            raise LayoutError(
                f"in_word: needs {want} distinct register bits in [0, {self.register_bits}) for "
                f"{w}-byte elements (or none: unpacked), got {bits}"
            )

    @staticmethod
    def natural(element_bytes: int, register_bits: int) -> "Packing":
        """Registers in order: register bits 0, 1, ... inside the word (what a vector load gives)."""
        k = min(_log2(4 // element_bytes), register_bits) if element_bytes < 4 else 0
        return Packing(element_bytes, register_bits, tuple(range(k)))

    @staticmethod
    def unpacked(element_bytes: int, register_bits: int) -> "Packing":
        """One register per word, in its low bytes (word ``r`` is register ``r``): what single-element
        loads give, and what a register permutation renames for free whatever its register bits do.

        >>> Packing.unpacked(1, 3).num_words, Packing.unpacked(1, 3).contents(5)
        (8, ((5, 0), None, None, None))
        """
        return Packing(element_bytes, register_bits, ())

    @property
    def is_unpacked(self) -> bool:
        """Whether each word holds one sub-word element (``unpacked``) while it could hold more."""
        return self.element_bytes < WORD_BYTES and not self.in_word and self.register_bits > 0

    @staticmethod
    def leading(element_bytes: int, register_bits: int, lead: Sequence[int],
                rest: "Packing | None" = None) -> "Packing":
        """The packing whose first in-word bits are ``lead`` (as many as fit), the others taken from
        ``rest``'s in-word bits, then the lowest unused register bits."""
        k = min(_log2(4 // element_bytes), register_bits) if element_bytes < 4 else 0
        bits: list[int] = []
        for b in list(lead) + (list(rest.in_word) if rest is not None else []) + list(range(register_bits)):
            if len(bits) == k:
                break
            if b not in bits and 0 <= b < register_bits:
                bits.append(b)
        return Packing(element_bytes, register_bits, tuple(bits))

    @property
    def num_registers(self) -> int:
        return 1 << self.register_bits

    @property
    def elements_per_word(self) -> int:
        """Elements one word holds (1 for 4- and 8-byte elements)."""
        return 1 << len(self.in_word) if self.element_bytes < 4 else 1

    @property
    def words_per_element(self) -> int:
        return max(1, self.element_bytes // 4)

    @property
    def num_words(self) -> int:
        if self.element_bytes >= 4:
            return self.num_registers * self.words_per_element
        return self.num_registers >> len(self.in_word)

    @property
    def word_bits(self) -> tuple[int, ...]:
        """Register bits giving the word index, least significant first."""
        return tuple(b for b in range(self.register_bits) if b not in self.in_word)

    def position(self, register: int) -> int:
        """Element position of ``register`` inside its word."""
        return sum(((register >> b) & 1) << i for i, b in enumerate(self.in_word))

    def word(self, register: int) -> int:
        """(First) word index of ``register``."""
        if self.element_bytes >= 4:
            return register * self.words_per_element
        return sum(((register >> b) & 1) << i for i, b in enumerate(self.word_bits))

    def register(self, word: int, position: int) -> int:
        """The register at element ``position`` of word ``word`` (words of 4/8-byte elements: the
        register of that word)."""
        if self.element_bytes >= 4:
            return word // self.words_per_element
        r = 0
        for i, b in enumerate(self.in_word):
            if (position >> i) & 1:
                r |= 1 << b
        for i, b in enumerate(self.word_bits):
            if (word >> i) & 1:
                r |= 1 << b
        return r

    def contents(self, word: int) -> Word:
        """The 4 byte ids word ``word`` holds (None where a short register file leaves it unused)."""
        w = self.element_bytes
        if w >= 4:
            r, h = divmod(word, self.words_per_element)
            return tuple((r, 4 * h + j) for j in range(4))
        out: list = []
        for p in range(4 // w):
            if p < self.elements_per_word:
                r = self.register(word, p)
                out += [(r, j) for j in range(w)]
            else:
                out += [None] * w
        return tuple(out)

    def word_xor(self, register_mask: int) -> int:
        """Word-index XOR of XOR-ing every register with ``register_mask`` (its word bits)."""
        if self.element_bytes >= 4:
            return register_mask * self.words_per_element
        return sum(((register_mask >> b) & 1) << i for i, b in enumerate(self.word_bits))

    def position_xor(self, register_mask: int) -> int:
        """Element-position XOR of XOR-ing every register with ``register_mask`` (its in-word bits)."""
        return self.position(register_mask) if self.element_bytes < 4 else 0


def bit_permutation(source: Sequence[int]) -> tuple[int, ...] | None:
    """``p`` with ``source[r] = sum(bit i of r << p[i])`` when the register map ``b[r] = a[source[r]]``
    permutes register bits (e.g. a transpose inside each thread), else None.

    >>> bit_permutation((0, 2, 1, 3)), bit_permutation((0, 0, 1, 1))
    ((1, 0), None)
    """
    n = len(source)
    if len(set(source)) != n or n & (n - 1):
        return None
    bits = _log2(n)
    p = tuple(source[1 << i].bit_length() - 1 for i in range(bits))
    if any(source[1 << i] != 1 << p[i] for i in range(bits)):
        return None
    if any(source[r] != sum(1 << p[i] for i in range(bits) if r >> i & 1) for r in range(n)):
        return None
    return p


def exchange_stages(src: Packing, dst: Packing) -> list[Packing]:
    """The packings from ``src`` to ``dst`` that exchange one in-word register bit for a word bit each
    (the last is ``dst``): ``d`` stages when ``d`` of ``dst``'s in-word bits are word bits of ``src``.

    >>> [p.in_word for p in exchange_stages(Packing(1, 4, (0, 1)), Packing(1, 4, (2, 3)))]
    [(2, 1), (2, 3)]
    """
    out_bits = [b for b in src.in_word if b not in dst.in_word]
    in_bits = [b for b in dst.in_word if b not in src.in_word]
    stages = []
    current = list(src.in_word)
    for e, f in zip(out_bits, in_bits):
        current[current.index(e)] = f
        stages.append(Packing(src.element_bytes, src.register_bits, tuple(current)))
    if stages:
        stages[-1] = dst
    return stages


def renamed(packing: Packing, source: Sequence[int]) -> Packing | None:
    """The packing of the registers ``b[r] = a[source[r]]`` (``a`` held in ``packing``) whose every word is
    a word of ``a``, element for element: ``b``'s in-word bits are the registers whose sources are
    ``a``'s in-word bit registers, so the permutation moves whole words (no byte permute). None where
    no packing does (a source mixing an in-word bit into a word bit, a register of ``a``'s in-word
    bits no register of ``b`` takes alone, fewer in-word bits on one side). An unpacked ``a`` renames
    to an unpacked ``b`` under any ``source``.

    ``source`` is linear over F2 (a conversion's register map). Example: 8-bit registers with
    register bits 1 and 2 swapped, ``a`` packed naturally (in-word bits 0, 1): ``b`` is packed along
    its register bits 0 and 2, and its word 1 is ``a``'s word 1.

    >>> renamed(Packing(1, 3, (0, 1)), (0, 1, 4, 5, 2, 3, 6, 7)).in_word
    (0, 2)
    """
    n = len(source)
    if n < 1 or n & (n - 1):
        raise LayoutError(f"source: one source register per destination register, a power of two of them, got {n}")
    bits = _log2(n)
    w = packing.element_bytes
    if w >= WORD_BYTES:
        return Packing.natural(w, bits)
    if packing.is_unpacked:
        return Packing.unpacked(w, bits)
    if min(_log2(WORD_BYTES // w), bits) != len(packing.in_word):
        return None
    in_word = []
    for b in packing.in_word:
        j = next((j for j in range(bits) if source[1 << j] == 1 << b), None)
        if j is None:
            return None
        in_word.append(j)
    out = Packing(w, bits, tuple(in_word))
    for u in range(out.num_words):
        v = packing.word(source[out.register(u, 0)])
        if any(source[out.register(u, p)] != packing.register(v, p) for p in range(out.elements_per_word)):
            return None
    return out


def renaming_packing(element_bytes: int, register_bits: int, source: Sequence[int]) -> Packing | None:
    """The packing of ``a`` (``2**register_bits`` registers) under which ``b[r] = a[source[r]]`` is renamed
    words (``renamed``): the natural one where it renames, else the one whose in-word bits are the lowest
    register bits ``source`` reads (bits of duplicated registers, which no destination register reads
    alone, stay out of the words); None where neither renames.

    >>> renaming_packing(1, 3, (0, 1, 4, 5, 2, 3, 6, 7)).in_word  # the natural packing renames
    (0, 1)
    >>> renaming_packing(1, 3, (0, 2, 4, 6)).in_word  # register bit 0 of a holds duplicates
    (1, 2)
    """
    natural = Packing.natural(element_bytes, register_bits)
    if renamed(natural, source) is not None:
        return natural
    read = 0
    for s in source:
        read |= s
    other = Packing.leading(element_bytes, register_bits, [b for b in range(register_bits) if read >> b & 1])
    return other if other != natural and renamed(other, source) is not None else None
