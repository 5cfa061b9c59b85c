"""Seeded random layouts for the codegen tests: distributed layouts (each tensor bit on one hardware bit,
the rest broadcast) and swizzled shared layouts (row-major with random XORs of high bits into low bits)."""

from __future__ import annotations

import numpy as np

from linear_layouts import LinearLayout
from linear_layouts.analysis.warp_simulator import random_distributed_layout

__all__ = ["random_distributed", "random_shared", "seed_transpose"]


def random_distributed(rng: np.random.Generator, shape_log2: list[int], warp_bits: int) -> LinearLayout:
    """A random distributed layout of ``2**shape_log2`` with exactly ``2**warp_bits`` warps."""
    return random_distributed_layout(rng, shape_log2, lane_bits=5, warp_bits=warp_bits)


def random_shared(rng: np.random.Generator, shape_log2: list[int], keep_low: int = 0) -> LinearLayout:
    """``offset -> dims``: row-major (last dim fastest) whose offset bits >= ``keep_low`` XOR random
    lower offset bits into their image (invertible: unitriangular over the row-major basis)."""
    rank = len(shape_log2)
    unit = []
    for d in reversed(range(rank)):
        for i in range(shape_log2[d]):
            v = [0] * rank
            v[d] = 1 << i
            unit.append(v)
    bases = []
    for j, v in enumerate(unit):
        v = list(v)
        if j >= max(keep_low, 1) and rng.random() < 0.7:
            for i in range(keep_low, j):
                if rng.random() < 0.3:
                    v = [a ^ b for a, b in zip(v, unit[i])]
        bases.append(v)
    return LinearLayout({"offset": bases}, {f"dim{d}": 1 << shape_log2[d] for d in range(rank)})


def seed_transpose() -> tuple[LinearLayout, LinearLayout, LinearLayout]:
    """The seeds' 16x32 fp32 transpose: store thread -> column, register -> row; load thread t reads
    (t % 16, 2r + t // 16); shared layout XOR 2m (offset of (m, n) is 32m + (n ^ 2m))."""
    src = LinearLayout({"register": [[1, 0], [2, 0], [4, 0], [8, 0]],
                        "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]], "warp": []}, ["dim0", "dim1"])
    dst = LinearLayout({"register": [[0, 2], [0, 4], [0, 8], [0, 16]],
                        "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]], "warp": []}, ["dim0", "dim1"])
    shared = LinearLayout({"offset": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16],
                                      [1, 2], [2, 4], [4, 8], [8, 16]]}, ["dim0", "dim1"])
    return src, dst, shared
