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


SMALL_SIZES = (1, 2, 3, 4, 5, 6, 8, 12, 16)


def random_int_layout(rng: random.Random, *, max_size: int = 4096, pow2: bool = False,
                      negative: bool = False) -> Layout:
    """A CuTe layout of any integers, as CuTe's algebra meets them: 1-3 top-level modes, nested up to two
    levels, sizes from ``SMALL_SIZES`` (powers of two with ``pow2``) with the total size at most
    ``max_size``; strides compact in a random order (35%), compact with gaps and stride-0 modes (25%),
    or arbitrary (40%); with ``negative``, 30% of the layouts get one negative stride."""
    sizes = (1, 2, 4, 8, 16) if pow2 else SMALL_SIZES
    budget = [max_size]

    def leaf() -> int:
        s = rng.choice([x for x in sizes if x <= budget[0]] or [1])
        budget[0] //= s
        return s

    def shape(depth: int):
        if depth < 2 and rng.random() < 0.35:
            return tuple(shape(depth + 1) for _ in range(rng.randint(1, 3)))
        return leaf()

    top = shape(0)
    leaves = list(_flatten(top))
    kind = rng.random()
    order = list(range(len(leaves)))
    rng.shuffle(order)
    strides = [0] * len(leaves)
    if kind < 0.6:
        current = 1
        for i in order:
            if kind >= 0.35 and rng.random() < 0.15:
                continue  # a stride-0 (broadcast) mode
            if kind >= 0.35:
                current *= rng.choice([1, 1, 2] if pow2 else [1, 1, 2, 3])  # a gap
            strides[i] = current
            current *= leaves[i]
    else:
        strides = [rng.choice([0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32]) for _ in leaves]
    if negative and rng.random() < 0.3:
        i = rng.randrange(len(strides))
        strides[i] = -strides[i]
    it = iter(strides)

    def like(t):
        return tuple(like(e) for e in t) if isinstance(t, tuple) else next(it)

    return Layout(top, like(top))


def _flatten(t):
    if isinstance(t, tuple):
        for e in t:
            yield from _flatten(e)
    else:
        yield t
