"""Seeded random VALID parameter sets for the catalog's differential tests (kinds of engineer "core").

Each ``random_*`` function takes a ``random.Random`` and returns ``(class_name, kwargs)``: the same
keyword arguments build our class and Gluon's class of that name. ``random_shape`` draws shapes both
smaller than a layout's tile (broadcast) and larger (replication).
"""

from __future__ import annotations

import random
from typing import Any

Params = tuple[str, dict[str, Any]]


def split_bits(rng: random.Random, bits: int, rank: int) -> list[int]:
    """``2**bits`` split into ``rank`` powers of two, at random."""
    sizes = [1] * rank
    for _ in range(bits):
        sizes[rng.randrange(rank)] *= 2
    return sizes


def random_cga_layout(rng: random.Random, rank: int, max_bits: int = 2) -> list[list[int]]:
    """A valid 3.9 ``cga_layout``: split bits (1, 2, 4.. along a dim, in random order) and zero bases."""
    bits = rng.randint(0, max_bits) if rng.random() < 0.4 else 0
    next_value = [1] * rank
    bases = []
    for _ in range(bits):
        if rng.random() < 0.25:
            bases.append([0] * rank)
        else:
            d = rng.randrange(rank)
            bases.append([next_value[d] if i == d else 0 for i in range(rank)])
            next_value[d] *= 2
    if rng.random() < 0.3 and len(bases) >= 2:
        rng.shuffle(bases)
    return bases


def random_shape(rng: random.Random, rank: int, max_log2_total: int = 13) -> list[int]:
    """A power-of-two shape, each dim 1..512, at most ``2**max_log2_total`` elements."""
    while True:
        shape = [2 ** rng.randint(0, 9) for _ in range(rank)]
        total = 1
        for s in shape:
            total *= s
        if total <= 2**max_log2_total:
            return shape


def random_blocked(rng: random.Random, rank: int | None = None) -> Params:
    rank = rank or rng.randint(1, 4)
    order = list(range(rank))
    rng.shuffle(order)
    return "BlockedLayout", dict(
        size_per_thread=[2 ** rng.randint(0, 2) for _ in range(rank)],
        threads_per_warp=split_bits(rng, rng.choice([5, 5, 5, 6]), rank),
        warps_per_cta=split_bits(rng, rng.randint(0, 3), rank),
        order=order,
        cga_layout=random_cga_layout(rng, rank),
    )


def random_nvmma(rng: random.Random, rank: int | None = None) -> Params:
    if rng.random() < 0.6:
        rank = rank or rng.choice([2, 2, 3])
        tile = [rng.choice([16, 16, 32]), rng.choice([8, 8, 16])]
        instr = [1] * (rank - 2) + tile
        version = [2, rng.choice([0, 0, 1])]
    else:
        rank = 2
        instr = [rng.choice([16, 16, 32]), 2 ** rng.randint(3, 8), 16]
        version = [3, 0]
    return "NVMMADistributedLayout", dict(
        version=version,
        warps_per_cta=split_bits(rng, rng.randint(0, 3), rank),
        instr_shape=instr,
        cga_layout=random_cga_layout(rng, rank),
    )


def random_dot_operand(rng: random.Random) -> Params:
    if rng.random() < 0.7:
        parent = random_nvmma(rng)
        is_hopper = parent[1]["version"][0] == 3
        operand = 0 if is_hopper else rng.randint(0, 1)
        return "DotOperandLayout", dict(operand_index=operand, parent=parent, k_width=2 ** rng.randint(0, 3))
    parent = random_blocked(rng, rng.randint(2, 3))
    return "DotOperandLayout", dict(operand_index=rng.randint(0, 1), parent=parent, k_width=0)


def random_slice(rng: random.Random, depth: int = 0) -> Params:
    choice = rng.random()
    if choice < 0.4:
        parent = random_blocked(rng, rng.randint(2, 4))
    elif choice < 0.65:
        parent = random_nvmma(rng)
    elif choice < 0.85:
        parent = random_dot_operand(rng)
    elif depth == 0:
        parent = random_slice(rng, 1)
        if _rank(parent) < 2:
            parent = random_blocked(rng, 3)
    else:
        parent = random_blocked(rng, 3)
    return "SliceLayout", dict(dim=rng.randrange(_rank(parent)), parent=parent)


def _rank(params: Params) -> int:
    name, kwargs = params
    if name == "BlockedLayout":
        return len(kwargs["order"])
    if name == "NVMMADistributedLayout":
        return len(kwargs["warps_per_cta"])
    if name == "DotOperandLayout":
        return _rank(kwargs["parent"])
    if name == "SliceLayout":
        return _rank(kwargs["parent"]) - 1
    if name == "DistributedLinearLayout":
        return len(kwargs["shape"])
    raise KeyError(name)


def rank_of(params: Params) -> int:
    """The rank of a random parameter set."""
    return _rank(params)


def random_distributed_linear(rng: random.Random) -> Params:
    """Random bases: every unit vector of a random shape once, spread over register/lane/warp/block,
    plus a few zero (broadcast) lane / warp / register bases."""
    rank = rng.randint(1, 3)
    shape = random_shape(rng, rank, 10)
    units = [[(1 << i) if d == dim else 0 for d in range(rank)]
             for dim in range(rank) for i in range(shape[dim].bit_length() - 1)]
    rng.shuffle(units)
    # keep each dim's bases in increasing order within the register dim, as layouts usually do
    groups: dict[str, list[list[int]]] = {"reg_bases": [], "lane_bases": [], "warp_bases": [], "block_bases": []}
    weights = ["reg_bases"] * 3 + ["lane_bases"] * 4 + ["warp_bases"] * 2 + ["block_bases"]
    for vector in units:
        groups[rng.choice(weights)].append(vector)
    for name in ("reg_bases", "lane_bases", "warp_bases"):
        for _ in range(rng.choice([0, 0, 1, 2])):
            groups[name].insert(rng.randint(0, len(groups[name])), [0] * rank)
    return "DistributedLinearLayout", dict(shape=shape, **groups)


def random_shared_linear(rng: random.Random) -> tuple[Params, list[int]]:
    """Random invertible (after removing zero bases) offset/block bases, and their tile shape."""
    rank = rng.randint(1, 3)
    shape = random_shape(rng, rank, 10)
    units = [[(1 << i) if d == dim else 0 for d in range(rank)]
             for dim in range(rank) for i in range(shape[dim].bit_length() - 1)]
    rng.shuffle(units)
    vectors: list[list[int]] = []
    for vector in units:  # xor earlier vectors in: still a basis
        v = list(vector)
        for w in vectors:
            if rng.random() < 0.3:
                v = [a ^ b for a, b in zip(v, w)]
        vectors.append(v)
    if not vectors:
        vectors = []
    n_block = rng.randint(0, min(2, len(vectors))) if rng.random() < 0.3 else 0
    block = vectors[len(vectors) - n_block:]
    offset = vectors[: len(vectors) - n_block]
    for _ in range(rng.choice([0, 0, 1])):
        offset.insert(rng.randint(0, len(offset)), [0] * rank)
    if not offset:
        offset = [[0] * rank]
    return ("SharedLinearLayout", dict(offset_bases=offset, block_bases=block)), shape


def random_tensor_memory(rng: random.Random) -> tuple[Params, list[int]]:
    """A random valid ``TensorMemoryLayout`` or ``TensorMemoryScalesLayout`` and a shape it accepts."""
    if rng.random() < 0.25:
        cga = random_cga_layout(rng, 2)
        split = [1, 1]
        for v in cga:
            for d in range(2):
                if v[d]:
                    split[d] *= 2
        shape = [2 ** rng.randint(5, 9) * split[0], 2 ** rng.randint(0, 6) * split[1]]
        return ("TensorMemoryScalesLayout", dict(cga_layout=cga)), shape
    two_ctas = rng.random() < 0.3
    cga = random_cga_layout(rng, 2)
    if two_ctas:
        cga = [[1, 0]] + [[2 * v[0], v[1]] if v[0] else v for v in cga]
    split = [1, 1]
    for v in cga:
        for d in range(2):
            if v[d]:
                split[d] *= 2
    block_m = rng.choice([64, 128])
    block_n = 2 ** rng.randint(1 if (two_ctas and block_m == 64) else 0, 9)
    fp4 = rng.random() < 0.15
    col_stride = 1 if fp4 else rng.choice([1, 1, 2, 4])
    rows = max(block_m, 64) if block_m == 128 or two_ctas else 64
    min_cols = 1 if (two_ctas and block_m == 64) else 0
    shape = [rows * 2 ** rng.randint(0, 2) * split[0], 2 ** rng.randint(min_cols, 9) * split[1]]
    return ("TensorMemoryLayout", dict(block=(block_m, block_n), col_stride=col_stride, cga_layout=cga,
                                       two_ctas=two_ctas, fp4_padded=fp4)), shape
