"""f2's subspace routines in Triton's basis choice (``nullspaceBasis``, ``complementBasis``,
``intersectionBasis``), checked by brute force over small F2^n: the spans they must have, and how they
differ from ``kernel``, ``complement`` and ``intersection``."""

from __future__ import annotations

import random

from linear_layouts.core import f2

from ._support import gf2_rank


def _vectors(rng: random.Random, n: int) -> list[int]:
    """0 to n+1 random vectors of F2^n (a third of the time unit vectors only, as Triton's fast path)."""
    k = rng.randint(0, n + 1)
    if rng.random() < 0.3:
        return [1 << rng.randrange(n) for _ in range(k)]
    return [rng.randrange(1 << n) for _ in range(k)]


def _cases(seed: int, count: int = 300) -> list[tuple[int, list[int], list[int]]]:
    """``count`` seeded triples ``(n, a, b)``: a dimension 1..6 and two lists of vectors of F2^n."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n = rng.randint(1, 6)
        out.append((n, _vectors(rng, n), _vectors(rng, n)))
    return out


def _span(vectors: list[int]) -> set[int]:
    out = {0}
    for v in vectors:
        out |= {x ^ v for x in out}
    return out


def _orthogonal(x: int, v: int) -> bool:
    return bin(x & v).count("1") % 2 == 0


def test_orthogonal_complement_is_every_vector_orthogonal_to_the_inputs() -> None:
    for n, a, _ in _cases(5):
        perp = f2.orthogonal_complement(a, n)
        assert gf2_rank(perp) == len(perp)
        assert _span(perp) == {x for x in range(1 << n) if all(_orthogonal(x, v) for v in a)}, (a, n)
    # the rows' null space, not the columns' (f2.kernel): [0b01, 0b01] -> kernel {x0 = x1}, rows -> {x0 = 0}
    assert f2.orthogonal_complement([0b01, 0b01], 2) == [0b10] and f2.kernel([0b01, 0b01]) == [0b11]


def test_unit_complement_completes_the_subspace_with_the_non_pivot_unit_vectors() -> None:
    for n, a, _ in _cases(6):
        units = f2.unit_complement(a, n)
        assert units == sorted(units) and all(u & (u - 1) == 0 for u in units)
        assert gf2_rank(a + units) == n and len(units) == n - gf2_rank(a), (a, n)
        assert len(units) == len(f2.complement(a, n))
        lowest = {x & -x for x in _span(a) if x}
        assert set(units) == {1 << i for i in range(n)} - lowest  # no vector of the span starts at bit i
    assert f2.unit_complement([0b11], 2) == [0b10] and f2.complement([0b11], 2) == [0b01]


def test_intersection_by_complements_spans_the_intersection() -> None:
    for n, a, b in _cases(7):
        both = f2.intersection_by_complements(a, b, n)
        assert _span(both) == _span(a) & _span(b), (a, b, n)
        if all(x & (x - 1) == 0 for x in a + b) and 0 not in a + b:
            assert both == [x for x in a if x in b]  # unit vectors: a's order, a's repeats
        else:
            assert gf2_rank(both) == len(both)


def test_complement_takes_each_vector_not_in_the_span_of_the_subspace_and_those_taken_before() -> None:
    """``complement``'s greedy rule by brute-force spans, widths past 64 bits included (the compiled
    core's echelon declines those): the vectors chosen, in order, are exactly the ones outside the span so far."""
    rng = random.Random(11)
    for n, a, b in _cases(5) + [(70, [rng.getrandbits(70) for _ in range(3)],
                                 [rng.getrandbits(70) for _ in range(6)] + [1 << 69, 1 << 69]) for _ in range(20)]:
        expected, taken = [], list(a)
        for v in b:
            if gf2_rank(taken + [v]) > gf2_rank(taken):
                expected.append(v)
                taken.append(v)
        assert f2.complement(a, b) == expected, (n, a, b)
    assert f2.complement([0b011], 3) == [0b001, 0b100]
