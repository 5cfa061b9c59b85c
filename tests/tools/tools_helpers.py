"""Shared helpers for the tools tests: the Triton oracle (optional) and random layouts."""

from __future__ import annotations

import json
import pathlib
import random

from linear_layouts import LinearLayout

UNITTESTS = pathlib.Path(__file__).resolve().parents[1] / "data" / "triton-unittests"  # vendored in the repo


def load_unittests(name: str) -> dict:
    """One JSON file of Triton's unit-test expectations (tests/data/triton-unittests)."""
    return json.loads((UNITTESTS / name).read_text())


def random_distributed(rng: random.Random, max_bits: int = 7) -> LinearLayout:
    """A random surjective (register, lane, warp, block) -> (dim0, ...) layout, broadcasts included."""
    rank = rng.choice([1, 2, 2, 3])
    out_bits = [rng.randint(0, 3) for _ in range(rank)]
    while sum(out_bits) == 0 or sum(out_bits) > max_bits:
        out_bits = [rng.randint(0, 3) for _ in range(rank)]
    sizes = [1 << b for b in out_bits]
    total_bits = sum(out_bits)
    # Start from a random permutation of the unit vectors, then mix and add broadcasts.
    units = []
    for d, bits in enumerate(out_bits):
        for i in range(bits):
            units.append(tuple((1 << i) if k == d else 0 for k in range(rank)))
    rng.shuffle(units)
    vectors = list(units)
    for _ in range(rng.randint(0, 2)):
        vectors.append(tuple(0 for _ in range(rank)))
    rng.shuffle(vectors)
    # XOR-mix some vectors into later ones (keeps the span).
    for i in range(len(vectors)):
        if rng.random() < 0.3 and i > 0:
            j = rng.randrange(i)
            vectors[i] = tuple(a ^ b for a, b in zip(vectors[i], vectors[j]))
    dims = ["register", "lane", "warp", "block"]
    bases: dict[str, list] = {d: [] for d in dims}
    for v in vectors:
        bases[rng.choice(dims[:3] if rng.random() < 0.9 else dims)].append(list(v))
    del total_bits
    return LinearLayout(bases, {f"dim{d}": s for d, s in enumerate(sizes)}, require_surjective=False)


def random_shared(rng: random.Random, max_bits: int = 8) -> LinearLayout:
    """A random invertible offset -> (dim0, ...) layout (a swizzle of the tensor)."""
    rank = rng.choice([1, 2, 2, 3])
    out_bits = [rng.randint(0, 4) for _ in range(rank)]
    while sum(out_bits) == 0 or sum(out_bits) > max_bits:
        out_bits = [rng.randint(0, 4) for _ in range(rank)]
    n = sum(out_bits)
    flat = [1 << i for i in range(n)]
    rng.shuffle(flat)
    for i in range(n):
        for j in range(i):
            if rng.random() < 0.25:
                flat[i] ^= flat[j]
    vectors = []
    for f in flat:
        v, shift = [], 0
        for bits in out_bits:
            v.append((f >> shift) & ((1 << bits) - 1))
            shift += bits
        vectors.append(v)
    return LinearLayout({"offset": vectors, "block": []}, {f"dim{d}": 1 << b for d, b in enumerate(out_bits)})


def triton_layout(layout: LinearLayout):
    """The same layout as Triton's C++ LinearLayout (needs triton)."""
    from triton._C.libtriton.linear_layout import LinearLayout as TritonLL

    return TritonLL.from_bases(list(layout.bases.items()), list(layout.out_dim_names),
                               list(layout.out_dims.values()), False)
