"""Seeded random CuTe layouts for the differential tests (no pytest items here)."""

from __future__ import annotations

import random

from linear_layouts.cute.layout import ComposedLayout, Layout, Swizzle


def random_linear_layout(rng: random.Random, max_bits: int = 10, *, broadcast: bool = True,
                         holes: bool = True) -> tuple[Layout, int]:
    """An F2-linear CuTe layout: runs of consecutive offset bits as leaf modes ``2**k : 2**start`` in a
    random order, grouped into 1-3 (possibly nested) top-level modes; optionally a stride-0 mode and
    gaps in the offsets. Returns the layout and its number of offset bits."""
    nbits = rng.randint(1, max_bits)
    runs, i = [], 0
    while i < nbits:
        k = rng.randint(1, min(3, nbits - i))
        if holes and rng.random() < 0.1:
            i += 1  # skip an offset bit: a hole
        runs.append((1 << k, 1 << i))
        i += k
    rng.shuffle(runs)
    if broadcast and rng.random() < 0.2:
        runs.insert(rng.randrange(len(runs) + 1), (rng.choice([2, 4]), 0))
    if rng.random() < 0.1:
        runs.insert(rng.randrange(len(runs) + 1), (1, rng.randint(0, 99)))  # size-1 modes take any stride
    rank = rng.randint(1, min(3, len(runs)))
    cuts = sorted(rng.sample(range(1, len(runs)), rank - 1)) if rank > 1 else []
    groups, prev = [], 0
    for c in cuts + [len(runs)]:
        groups.append(runs[prev:c])
        prev = c
    shape = tuple(tuple(s for s, _ in g) if len(g) > 1 else g[0][0] for g in groups)
    stride = tuple(tuple(d for _, d in g) if len(g) > 1 else g[0][1] for g in groups)
    if len(shape) == 1 and rng.random() < 0.5:
        shape, stride = shape[0], stride[0]
    reach = 0
    layout = Layout(shape, stride)
    for s, d in runs:
        reach |= (s - 1) * d
    return layout, reach.bit_length()


def random_swizzle(rng: random.Random, nbits: int, *, within: bool = True) -> Swizzle:
    """A swizzle whose YYY and ZZZ bits lie below ``nbits`` (``within``) or anywhere below 16."""
    if within and nbits < 2:
        return Swizzle(0, 0, 0)
    if within:
        bits = rng.randint(1, nbits // 2)
        shift = rng.randint(bits, nbits - bits)
        base = rng.randint(0, nbits - bits - shift)
        return Swizzle(bits, base, rng.choice([1, -1]) * shift)
    bits = rng.randint(0, 3)
    return Swizzle(bits, rng.randint(0, 5), rng.choice([1, -1]) * rng.randint(max(bits, 1), 6))


def random_swizzled_layout(rng: random.Random, max_bits: int = 10, *, within: bool = True,
                           min_swizzles: int = 0, max_swizzles: int = 2, **kwargs) -> ComposedLayout | Layout:
    """``Sw_k ∘ ... ∘ Sw_1 ∘ L`` with min..max swizzles (nested ComposedLayouts, offset 0)."""
    layout, nbits = random_linear_layout(rng, max_bits, **kwargs)
    result: ComposedLayout | Layout = layout
    for _ in range(rng.randint(min_swizzles, max_swizzles)):
        result = ComposedLayout(random_swizzle(rng, nbits, within=within), 0, result)
    return result
