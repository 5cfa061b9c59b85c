"""Seeded random (shared, distributed) layout pairs for the bank-conflict tests and
``gpu_bank_check/make_cases.py`` (no pytest items here)."""

from __future__ import annotations

import random

from linear_layouts import LinearLayout


# seed 004: a 16 x 32 fp32 transpose, one warp; m = dim0 (rows), n = dim1 (columns)
DIMS = {"dim0": 16, "dim1": 32}
STORE = LinearLayout({"register": [[1, 0], [2, 0], [4, 0], [8, 0]],  # register -> row, lane -> column
                      "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]], "warp": []}, DIMS)
LOAD = LinearLayout({"register": [[0, 2], [0, 4], [0, 8], [0, 16]],  # lanes 0-3 -> m, lane 4 -> n0
                     "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]], "warp": []}, DIMS)
COLUMNS = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]]


def seed_shared(shift: int | None) -> LinearLayout:
    """offset = 32 m + (n xor (m << shift)); shift None = unswizzled (seed 004's three layouts)."""
    rows = [[1 << i, 0 if shift is None else 1 << (i + shift)] for i in range(4)]
    return LinearLayout({"offset": COLUMNS + rows}, DIMS)


def unflatten(v: int, log2s: list[int]) -> list[int]:
    out = []
    for k in log2s:
        out.append(v & ((1 << k) - 1))
        v >>= k
    return out


def out_dims(log2s: list[int]) -> dict[str, int]:
    return {f"dim{i}": 1 << k for i, k in enumerate(log2s)}


def random_shape(rng: random.Random, d: int) -> list[int]:
    """log2 sizes of a rank-1..3 tensor with d bits in all."""
    rank = rng.choice([1, 2, 2, 2, 3])
    cuts = sorted(rng.randint(0, d) for _ in range(rank - 1))
    parts = [b - a for a, b in zip([0] + cuts, cuts + [d])]
    return parts


def random_distributed(rng: random.Random, log2s: list[int], warps: int, zero_prob: float = 0.15) -> LinearLayout:
    """A Definition-4.10 layout: each tensor bit is one register/lane/warp basis, plus zero (broadcast) bases."""
    d = sum(log2s)
    bits = [1 << i for i in range(d)]
    rng.shuffle(bits)
    lanes: list[int] = []
    warp_b: list[int] = []
    for _ in range(5):
        lanes.append(0 if rng.random() < zero_prob or not bits else bits.pop())
    for _ in range(warps):
        warp_b.append(0 if rng.random() < zero_prob or not bits else bits.pop())
    regs = list(bits)
    for _ in range(rng.choice([0, 0, 1])):
        regs.insert(rng.randint(0, len(regs)), 0)
    if rng.random() < 0.5:
        regs.sort()  # contiguous register runs are common in real layouts
    return LinearLayout(
        {"register": [unflatten(b, log2s) for b in regs], "lane": [unflatten(b, log2s) for b in lanes],
         "warp": [unflatten(b, log2s) for b in warp_b]},
        out_dims(log2s),
    )


def random_shared(rng: random.Random, log2s: list[int], hint: LinearLayout | None = None) -> LinearLayout:
    """An invertible shared layout: plain, mma-swizzled, register-first, or a random invertible matrix."""
    d = sum(log2s)
    kind = rng.choice(["plain", "swizzle", "reg_first", "random", "reg_first_xor"])
    if kind == "plain" or d < 2:
        cols = [1 << i for i in range(d)]
        if rng.random() < 0.5:
            rng.shuffle(cols)
    elif kind in ("reg_first", "reg_first_xor") and hint is not None:
        regs = [b for b in hint.flat_bases("register") if b]
        k = rng.randint(0, min(len(regs), 4))
        cols = []
        for b in regs[:k]:
            cols.append(b)
        rest = [1 << i for i in range(d) if (1 << i) not in cols]
        rng.shuffle(rest)
        cols += rest
        if kind == "reg_first_xor":
            for i in range(k + 1, d):
                if rng.random() < 0.4:
                    cols[i] ^= cols[rng.randint(k, i - 1)]
    elif kind == "swizzle":
        cols = [1 << i for i in range(d)]
        lo = rng.randint(1, d - 1)
        for i in range(lo, d):
            if rng.random() < 0.7:
                cols[i] ^= 1 << rng.randint(0, lo - 1)
    else:
        while True:
            cols = [rng.getrandbits(d) for _ in range(d)]
            from linear_layouts.core import f2
            if f2.rank(cols) == d:
                break
    return LinearLayout({"offset": [unflatten(c, log2s) for c in cols]}, out_dims(log2s))


def random_pair(rng: random.Random, bitwidth: int | None = None):
    """(shared, distributed, bitwidth) with 5..11 tensor bits and 0..2 warp bits."""
    warps = rng.choice([0, 0, 1, 2])
    d = rng.randint(5 + warps, 11)
    log2s = random_shape(rng, d)
    dist = random_distributed(rng, log2s, warps)
    shared = random_shared(rng, log2s, dist)
    w = bitwidth or rng.choice([8, 16, 32, 64])
    return shared, dist, w


# ----------------------------------------------------------------------------- triton 3.9 oracle
def triton_builder():
    """A Gluon builder with an insertion block (the one ``linear_layouts.triton_model.interop`` uses)."""
    from linear_layouts.triton_model.interop import _gluon_builder

    return _gluon_builder()


def triton_crashes(shared: LinearLayout, vector_elements: int, bitwidth: int) -> bool:
    """Triton 3.9 aborts (reshapeIns assertion) when bank x vector elements exceed the tensor (segment size 0)."""
    total = shared.in_dim_size("offset")
    bank = min(1024 // (vector_elements * bitwidth), total)
    return bank * vector_elements > total


def triton_bank_conflicts(shared: LinearLayout, dist: LinearLayout, bitwidth: int) -> int:
    """Triton 3.9 ``GluonOpBuilder.get_shared_bank_conflicts`` on our layouts (conflicts = wavefronts/min - 1)."""
    from linear_layouts.triton_model.interop import triton_bank_conflicts as estimate

    return estimate(shared, dist, bitwidth)


# ----------------------------------------------------------------------------- Triton unit-test JSON
def swizzle_json() -> dict:
    """swizzle.json of Triton's unit tests (vendored in tests/data/triton-unittests)."""
    import json

    from harness import ROOT

    return json.loads((ROOT / "tests" / "data" / "triton-unittests" / "swizzle.json").read_text())


def layout_of_json(encoded: dict) -> LinearLayout:
    """A LinearLayout from the JSON encoding (ordered [name, value] pairs)."""
    return LinearLayout([(n, [list(v) for v in vs]) for n, vs in encoded["bases"]],
                        [(n, int(s)) for n, s in encoded["out_dims"]], require_surjective=False)
