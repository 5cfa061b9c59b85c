"""Packed registers: every byte permute the packing module emits is evaluated (a small interpreter of
the emitted C++ with prmt semantics of the PTX ISA) and must put every byte where the target packing
says; staged repacks cost at most one prmt per word per exchanged bit."""

from __future__ import annotations

import random
import re

import pytest

from linear_layouts import LayoutError
from linear_layouts.codegen.packing import (
    Emission,
    Packing,
    Source,
    assemble,
    gather_words,
    prmt_selector,
    repack,
    translate_words,
    xor_selector_expression,
)


def byte_perm(a: int, b: int, s: int) -> int:
    x = (b << 32) | a
    return sum(((x >> (8 * ((s >> (4 * i)) & 7))) & 0xFF) << (8 * i) for i in range(4))


_LIT = re.compile(r"\b(0x[0-9a-fA-F]+|\d+)u\b")
_TERNARY = re.compile(r"\(([^?]+?) \? ([\w\[\]]+) : ([\w\[\]]+)\)")


def evaluate(lines: list[str], exprs: dict, env: dict) -> dict:
    """Run ``const unsigned x = expr;`` lines, then evaluate ``exprs`` (name -> C expression)."""

    def py(expr: str) -> str:
        expr = _LIT.sub(r"\1", expr)
        while _TERNARY.search(expr):
            expr = _TERNARY.sub(r"(\2 if (\1) else \3)", expr)
        return re.sub(r"(\w+)\[(\d+)\]", r"\1_\2", expr)

    scope = dict(env)
    scope["__byte_perm"] = byte_perm
    for line in lines:
        m = re.fullmatch(r"const unsigned (\w+) = (.*);", line)
        assert m, line
        scope[m.group(1)] = eval(py(m.group(2)), scope) & 0xFFFFFFFF
    return {k: eval(py(v), scope) & 0xFFFFFFFF for k, v in exprs.items()}


def register_values(n: int, element_bytes: int, rng: random.Random) -> list[int]:
    return [rng.getrandbits(8 * element_bytes) for _ in range(n)]


def word_value(packing: Packing, w: int, values: list[int]) -> int:
    out = 0
    for i, bid in enumerate(packing.contents(w)):
        if bid is not None:
            out |= ((values[bid[0]] >> (8 * bid[1])) & 0xFF) << (8 * i)
    return out


def mask_of(packing: Packing, w: int) -> int:
    return sum(0xFF << (8 * i) for i, b in enumerate(packing.contents(w)) if b is not None)


def random_packing(rng: random.Random, element_bytes: int, bits: int) -> Packing:
    k = min(2 if element_bytes == 1 else 1, bits)
    return Packing(element_bytes, bits, tuple(rng.sample(range(bits), k)))


def test_packing_layout_and_errors():
    p = Packing(1, 3, (1, 2))
    assert p.num_words == 2 and p.contents(0) == ((0, 0), (2, 0), (4, 0), (6, 0))
    assert [p.word(r) for r in range(8)] == [0, 1] * 4 and p.position(6) == 3
    assert Packing.natural(2, 0).num_words == 1 and Packing.natural(2, 0).contents(0) == ((0, 0), (0, 1), None, None)
    assert Packing(8, 1).contents(3) == tuple((1, j) for j in range(4, 8))
    assert Packing.leading(1, 4, [3], Packing(1, 4, (0, 1))).in_word == (3, 0)
    with pytest.raises(LayoutError, match="in_word"):
        Packing(1, 3, (0,))
    with pytest.raises(LayoutError, match="element_bytes"):
        Packing(3, 2)
    assert prmt_selector([(0, 0), (1, 0), (0, 1), (1, 1)]) == 0x5140


@pytest.mark.parametrize("element_bytes", [1, 2])
def test_repack_moves_every_byte(element_bytes):
    rng = random.Random(element_bytes)
    for _ in range(60):
        bits = rng.randint(1, 6)
        src, dst = random_packing(rng, element_bytes, bits), random_packing(rng, element_bytes, bits)
        values = register_values(1 << bits, element_bytes, rng)
        em = Emission("t")
        exprs = repack(src, dst, [f"a[{i}]" for i in range(src.num_words)], em)
        env = {f"a_{i}": word_value(src, i, values) for i in range(src.num_words)}
        got = evaluate(em.lines, {str(i): e for i, e in enumerate(exprs)}, env)
        for i in range(dst.num_words):
            assert got[str(i)] & mask_of(dst, i) == word_value(dst, i, values)
        exchanged = len(set(src.in_word) - set(dst.in_word))
        per_word = max(exchanged, 0 if src.in_word == dst.in_word else 1)
        assert em.prmt <= per_word * dst.num_words


def test_byte_transpose_takes_two_prmt_per_word():
    """The 4x4 byte transpose (8-bit, in-word bits (0, 1) -> (2, 3)) is 8 prmt for 4 words."""
    em = Emission()
    repack(Packing(1, 4, (0, 1)), Packing(1, 4, (2, 3)), [f"a[{i}]" for i in range(4)], em)
    assert em.prmt == 8


def test_gather_with_copies_and_assemble_chains():
    rng = random.Random(3)
    values = register_values(16, 1, rng)
    src = Packing(1, 4, (0, 1))
    dst = Packing(1, 4, (2, 3))
    sources = [Source(f"a[{i}]", src.contents(i)) for i in range(4)]
    em = Emission()
    exprs = gather_words(dst, sources, em, canon=lambda r: r & ~0b0100)  # registers with bit 2 copy r ^ 4
    got = evaluate(em.lines, {str(i): e for i, e in enumerate(exprs)}, {f"a_{i}": word_value(src, i, values) for i in range(4)})
    want = [values[r & ~0b0100] for r in range(16)]
    for i in range(4):
        assert got[str(i)] == word_value(dst, i, want)
    # one byte from each of four words: a chain of 3 prmt
    em = Emission()
    target = ((0, 0), (4, 0), (8, 0), (12, 0))
    out = assemble(target, sources, em)
    assert em.prmt == 3
    got = evaluate(em.lines, {"x": out.expr}, {f"a_{i}": word_value(src, i, values) for i in range(4)})
    assert got["x"] == values[0] | values[4] << 8 | values[8] << 16 | values[12] << 24
    with pytest.raises(LayoutError, match="none of the sources"):
        assemble(((99, 0), None, None, None), sources, Emission())


@pytest.mark.parametrize("element_bytes", [1, 2, 4, 8])
def test_translate_words_is_a_lane_dependent_register_xor(element_bytes):
    rng = random.Random(10 + element_bytes)
    for _ in range(25):
        bits = rng.randint(1, 5)
        packing = random_packing(rng, element_bytes, bits) if element_bytes < 4 else Packing(element_bytes, bits)
        images = [rng.randrange(1 << bits) if rng.random() < 0.6 else 0 for _ in range(5)]
        values = register_values(1 << bits, element_bytes, rng)
        em = Emission()
        needed = range(packing.num_words)
        out = translate_words(packing, [f"a[{i}]" for i in range(packing.num_words)], images, needed, em)
        env = {f"a_{i}": word_value(packing, i, values) for i in range(packing.num_words)}
        for lane in range(32):
            f = 0
            for i, m in enumerate(images):
                if lane >> i & 1:
                    f ^= m
            moved = [values[r ^ f] for r in range(1 << bits)]
            got = evaluate(em.lines, {str(w): e for w, e in out.items()}, dict(env, lane=lane))
            for w in needed:
                assert got[str(w)] & mask_of(packing, w) == word_value(packing, w, moved)


def test_xor_selector():
    assert xor_selector_expression(2, "m", "c") == "(0x3210u ^ ((m) * 0x2222u) ^ ((c) * 0x4444u))"
    for m in range(4):
        sel = 0x3210 ^ (m * 0x1111)
        assert byte_perm(0x03020100, 0, sel) == sum((j ^ m) << (8 * j) for j in range(4))


@pytest.mark.parametrize("element_bytes", [1, 2])
def test_repack_to_and_from_unpacked_moves_every_byte(element_bytes):
    """Unpacked files (one element per word, in its low bytes) to packed ones and back: every byte lands
    where the target says; unpacking costs one prmt per element off position 0, packing a word of ``k``
    elements from unpacked words ``k - 1``."""
    rng = random.Random(20 + element_bytes)
    for _ in range(40):
        bits = rng.randint(1, 5)
        packed = random_packing(rng, element_bytes, bits)
        unpacked = Packing.unpacked(element_bytes, bits)
        assert unpacked.num_words == 1 << bits and unpacked.is_unpacked
        values = register_values(1 << bits, element_bytes, rng)
        for src, dst in ((packed, unpacked), (unpacked, packed)):
            em = Emission("t")
            exprs = repack(src, dst, [f"a[{i}]" for i in range(src.num_words)], em)
            env = {f"a_{i}": word_value(src, i, values) for i in range(src.num_words)}
            got = evaluate(em.lines, {str(i): e for i, e in enumerate(exprs)}, env)
            for i in range(dst.num_words):
                assert got[str(i)] & mask_of(dst, i) == word_value(dst, i, values)
            assert em.prmt == (1 << bits) - packed.num_words
