"""Shared helpers of the core tests: JSON <-> layout conversion, Triton bridge, seeded random layouts.

A *spec* is the plain-data form of a layout, the same as the JSON of ``tests/data/triton-unittests``:
``(bases, out_dims)`` with ``bases = [(in_dim, [[coord, ...], ...]), ...]`` and
``out_dims = [(out_dim, size), ...]``, both ordered.  Random specs are drawn from a
``random.Random`` so that every differential case is reproducible from its seed.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Sequence

Spec = tuple[list[tuple[str, list[list[int]]]], list[tuple[str, int]]]

# In- and out-dim name pools.  "x" and "block" are in both pools, so that some layouts share a
# name between an in-dim and an out-dim (legal in Triton, e.g. identity1D(n, "block", "block")).
IN_POOL = ("register", "lane", "warp", "block", "offset", "in0", "x")
OUT_POOL = ("dim0", "dim1", "dim2", "dim3", "out", "x", "block")


# ----------------------------------------------------------------------------- the JSON folder
def unittests_dir() -> Path:
    """Folder of Triton's unit-test JSON, vendored in the repository: ``tests/data/triton-unittests``."""
    return Path(__file__).resolve().parents[1] / "data" / "triton-unittests"


# ----------------------------------------------------------------------------- conversions
def spec_of_json(j: dict) -> Spec:
    """The spec of a layout written in the JSON encoding of ``tests/data/triton-unittests``."""
    return ([(n, [list(v) for v in b]) for n, b in j["bases"]], [(n, int(s)) for n, s in j["out_dims"]])


def ours(spec: Spec, require_surjective: bool = False):
    """Our ``LinearLayout`` of a spec, with explicit out-dim sizes."""
    from linear_layouts import LinearLayout

    bases, out_dims = spec
    return LinearLayout(bases, out_dims, require_surjective=require_surjective)


def ours_json(j: dict):
    return ours(spec_of_json(j))


def spec_of_ours(layout) -> Spec:
    """The spec of one of our layouts (read through the public API only)."""
    return (
        [(n, [list(v) for v in b]) for n, b in layout.bases.items()],
        [(n, int(s)) for n, s in layout.out_dims.items()],
    )


def spec_of_triton(t) -> Spec:
    return ([(n, [list(v) for v in b]) for n, b in t.bases], [(n, int(s)) for n, s in t.out_dims])


def triton(spec: Spec):
    """Triton's C++ ``LinearLayout`` of a spec (explicit sizes, surjectivity not required)."""
    from triton._C.libtriton.linear_layout import LinearLayout as TritonLL

    bases, out_dims = spec
    return TritonLL.from_bases(
        [(n, b) for n, b in bases], [n for n, _ in out_dims], [s for _, s in out_dims], False
    )


def json_of_spec(spec: Spec) -> dict:
    bases, out_dims = spec
    return {"bases": [[n, [list(v) for v in b]] for n, b in bases], "out_dims": [[n, s] for n, s in out_dims]}


# ----------------------------------------------------------------------------- flat bit-vectors
def log2(n: int) -> int:
    return n.bit_length() - 1


def split_flat(flat: int, out_dims: Sequence[tuple[str, int]]) -> list[int]:
    """Coordinates of a flattened out-vector (first out dim in the least significant bits)."""
    coords = []
    for _, size in out_dims:
        coords.append(flat & (size - 1))
        flat >>= log2(size)
    return coords


def flat_of(coords: Sequence[int], out_dims: Sequence[tuple[str, int]]) -> int:
    flat, shift = 0, 0
    for c, (_, size) in zip(coords, out_dims):
        flat |= c << shift
        shift += log2(size)
    return flat


def gf2_rank(vectors: Sequence[int]) -> int:
    """Rank over F2 of Python-int bit-vectors (an independent check, not the library's f2.py)."""
    basis: list[int] = []
    for v in vectors:
        for b in basis:
            v = min(v, v ^ b)
        if v:
            basis.append(v)
    return len(basis)


def spec_columns(spec: Spec) -> list[int]:
    bases, out_dims = spec
    return [flat_of(v, out_dims) for _, b in bases for v in b]


def spec_apply(spec: Spec, inputs: dict[str, int]) -> list[int]:
    """Reference apply: XOR of the bases of the set bits of each input."""
    bases, out_dims = spec
    acc = 0
    for name, b in bases:
        x = inputs.get(name, 0)
        for i, v in enumerate(b):
            if (x >> i) & 1:
                acc ^= flat_of(v, out_dims)
    return split_flat(acc, out_dims)


# ----------------------------------------------------------------------------- random specs
def _ordered_pick(rng: random.Random, pool: Sequence[str], k: int, keep_pool_order: bool) -> list[str]:
    names = rng.sample(list(pool), k)
    if keep_pool_order:
        names.sort(key=list(pool).index)
    return names


def _composition(rng: random.Random, total: int, parts: int) -> list[int]:
    """Random non-negative integers, ``parts`` of them, summing to ``total``."""
    if parts == 0:
        return []
    cuts = sorted(rng.randint(0, total) for _ in range(parts - 1))
    return [b - a for a, b in zip([0] + cuts, cuts + [total])]


MODES = ("random", "distributed", "swizzle", "broadcast", "duplicate")


def _column(rng: random.Random, mode: str, nbits: int, previous: list[int]) -> int:
    if nbits == 0:
        return 0
    if mode == "random":
        return rng.getrandbits(nbits)
    if mode == "distributed":  # a distinct power of two, or zero (Def. 4.10)
        return 0 if rng.random() < 0.3 else 1 << rng.randrange(nbits)
    if mode == "swizzle":  # one or two bits (Def. 4.14)
        v = 1 << rng.randrange(nbits)
        return v | (1 << rng.randrange(nbits)) if rng.random() < 0.5 else v
    if mode == "broadcast":
        return 0 if rng.random() < 0.6 else rng.getrandbits(nbits)
    # duplicate: repeat an earlier column (non-injective) or draw a fresh one
    if previous and rng.random() < 0.5:
        return rng.choice(previous)
    return rng.getrandbits(nbits)


def random_out_dims(rng: random.Random, n_out: int, max_log2: int = 5, names: Sequence[str] | None = None):
    names = list(names) if names is not None else _ordered_pick(rng, OUT_POOL, n_out, False)
    return [(n, 1 << rng.randint(0, max_log2)) for n in names]


def random_spec(
    rng: random.Random,
    *,
    surjective: bool | None = None,
    invertible: bool = False,
    out_dims: Sequence[tuple[str, int]] | None = None,
    in_names: Sequence[str] | None = None,
    n_in: int | None = None,
    n_out: int | None = None,
    max_log2: int = 5,
    max_in_bits: int = 14,
    mode: str | None = None,
) -> Spec:
    """A random layout spec.

    ``surjective=True`` builds the columns as all out unit vectors plus extra columns, shuffled,
    then mixed by column operations (which keep the span); ``invertible=True`` is the square case.
    ``surjective=None`` leaves it to chance (random modes are usually not surjective).
    """
    mode = mode or rng.choice(MODES)
    if out_dims is None:
        n_out = rng.choice((0, 1, 1, 2, 2, 2, 3, 3, 4)) if n_out is None else n_out
        out_dims = random_out_dims(rng, n_out, max_log2)
    out_dims = list(out_dims)
    t_bits = sum(log2(s) for _, s in out_dims)
    if in_names is None:
        n_in = rng.choice((0, 1, 1, 2, 2, 3, 3, 4)) if n_in is None else n_in
        in_names = _ordered_pick(rng, IN_POOL, n_in, False)
    in_names = list(in_names)
    if invertible:
        surjective = True
    if surjective and not in_names:
        in_names = [rng.choice(IN_POOL)]
    if invertible:
        n_bits = t_bits
    elif surjective:
        n_bits = t_bits + rng.randint(0, max(0, min(4, max_in_bits - t_bits)))
    else:
        n_bits = rng.randint(0, max_in_bits) if in_names else 0
    cols: list[int] = []
    if surjective:
        cols = [1 << i for i in range(t_bits)]
        while len(cols) < n_bits:
            cols.append(_column(rng, mode, t_bits, cols))
        rng.shuffle(cols)
        if mode not in ("distributed",) and len(cols) > 1:
            for _ in range(rng.randint(0, 3 * len(cols))):
                i, j = rng.sample(range(len(cols)), 2)
                cols[i] ^= cols[j]
    else:
        for _ in range(n_bits):
            cols.append(_column(rng, mode, t_bits, cols))
    sizes = _composition(rng, n_bits, len(in_names))
    bases, k = [], 0
    for name, nb in zip(in_names, sizes):
        bases.append((name, [split_flat(c, out_dims) for c in cols[k : k + nb]]))
        k += nb
    return bases, out_dims


def random_inputs(rng: random.Random, spec: Spec) -> dict[str, int]:
    """One in-range input value per in-dim."""
    return {n: rng.getrandbits(len(b)) if b else 0 for n, b in spec[0]}


def shuffled(rng: random.Random, items: Sequence[Any]) -> list[Any]:
    items = list(items)
    rng.shuffle(items)
    return items
