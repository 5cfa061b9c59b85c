"""The conversion cases of the GPU suite: the named peers of HARDWARE.md plus seeded random catalog
pairs (blocked, mma v2/v3 accumulators, mma dot operands, random linear layouts; 8/16/32-bit;
1-8 warps), in-warp pairs (same warp data: warp shuffles) and 64-bit pairs (``wide_cases``); register
permutations by name only (``register_cases``).  Deterministic for a given seed, so
the CPU (compiling cubins, counting PTX) and the GPU machine build the very same kernels.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.analysis.shuffles import same_warp_data
from linear_layouts.analysis.warp_simulator import random_distributed_layout, random_within_warp_partner
from linear_layouts.layouts.blocked import BlockedLayout
from linear_layouts.layouts.dot_operand import DotOperandLayout
from linear_layouts.layouts.nvmma import NVMMADistributedLayout

__all__ = ["Case", "named_cases", "random_cases", "in_warp_cases", "wide_cases", "register_cases", "all_cases",
           "seed_transpose_layouts", "in_warp_suite_cases"]


@dataclass(frozen=True)
class Case:
    name: str
    src: LinearLayout
    dst: LinearLayout
    bits: int
    warps: int
    family: str
    description: str

    @property
    def shape(self) -> list[int]:
        return [self.src.out_dim_size(d) for d in self.src.out_dim_names]


def _strip(layout: LinearLayout) -> LinearLayout:
    """Drop a size-1 block dim (codegen handles one CTA)."""
    if layout.has_in_dim("block") and layout.in_dim_size("block") == 1:
        bases = {d: v for d, v in layout.bases.items() if d != "block"}
        return LinearLayout(bases, dict(layout.out_dims), require_surjective=False)
    return layout


def seed_transpose_layouts() -> tuple[LinearLayout, LinearLayout]:
    """Seeds 003/004: 16x32 fp32, one warp; store thread -> column, load (t % 16, 2r + t // 16)."""
    src = LinearLayout({"register": [[1, 0], [2, 0], [4, 0], [8, 0]],
                        "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]], "warp": []}, ["dim0", "dim1"])
    dst = LinearLayout({"register": [[0, 2], [0, 4], [0, 8], [0, 16]],
                        "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]], "warp": []}, ["dim0", "dim1"])
    return src, dst


def named_cases() -> list[Case]:
    """HARDWARE.md's table of Triton 3.6 peers."""
    row = BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])
    col = BlockedLayout([4, 1], [8, 4], [1, 4], [0, 1])
    mma = NVMMADistributedLayout([2, 0], [4, 1], [16, 8])
    cases = []
    s, d = seed_transpose_layouts()
    cases.append(Case("seed_transpose_fp32", s, d, 32, 1, "named", "seed 16x32 fp32 transpose, 1 warp"))
    for bits, tag in ((32, "fp32"), (16, "fp16"), (8, "fp8")):
        cases.append(Case(f"row_to_col_{tag}", _strip(row.to_linear([64, 64])), _strip(col.to_linear([64, 64])),
                          bits, 4, "named", f"blocked row-major -> col-major 64x64 {tag}, 4 warps"))
    for bits, tag in ((32, "fp32"), (16, "fp16")):
        cases.append(Case(f"blocked_to_mma_{tag}", _strip(row.to_linear([64, 64])), _strip(mma.to_linear([64, 64])),
                          bits, 4, "named", f"blocked -> mma v2 accumulator 64x64 {tag}, 4 warps"))
    lanes_cols = BlockedLayout([1, 1], [1, 32], [1, 1], [1, 0]).to_linear([32, 32])
    lanes_rows = BlockedLayout([1, 1], [32, 1], [1, 1], [0, 1]).to_linear([32, 32])
    cases.append(Case("lanes_cols_to_rows_fp32", _strip(lanes_cols), _strip(lanes_rows), 32, 1, "named",
                      "32x32 fp32 lanes along columns -> lanes along rows, 1 warp"))
    return cases


def _split(rng: random.Random, bits: int, rank: int = 2) -> list[int]:
    sizes = [1] * rank
    for _ in range(bits):
        sizes[rng.randrange(rank)] *= 2
    return sizes


def _random_catalog(rng: random.Random, shape: list[int], warps_log2: int, bits: int) -> tuple[LinearLayout, str]:
    kind = rng.choice(["blocked", "blocked", "mma", "dot", "linear"])
    if kind == "blocked":
        order = rng.choice([[1, 0], [0, 1]])
        spt = [2 ** rng.randint(0, 2) for _ in range(2)]
        tpw, wpc = _split(rng, 5), _split(rng, warps_log2)
        layout = BlockedLayout(spt, tpw, wpc, order)
        return layout.to_linear(shape), f"blocked(spt={spt}, tpw={tpw}, wpc={wpc}, order={order})"
    if kind in ("mma", "dot"):
        wpc = _split(rng, warps_log2)
        if kind == "mma" and rng.random() < 0.3 and warps_log2 >= 2:
            wpc = [2 ** warps_log2, 1]
            parent = NVMMADistributedLayout([3, 0], wpc, [16, 2 ** rng.randint(3, 6), 16])
        else:
            parent = NVMMADistributedLayout([2, 0], wpc, [16, 8])
        if kind == "mma":
            return parent.to_linear(shape), f"mma(v{parent.version[0]}, wpc={wpc}, instr={list(parent.instr_shape)})"
        op = rng.randint(0, 1) if parent.version[0] == 2 else 0
        k_width = max(1, 32 // bits) if rng.random() < 0.7 else 2 ** rng.randint(0, 2)
        layout = DotOperandLayout(op, parent, k_width)
        return layout.to_linear(shape), f"dot(op={op}, k_width={k_width}, parent mma v{parent.version[0]} wpc={wpc})"
    nprng = np.random.default_rng(rng.randrange(1 << 30))
    shape_log2 = [s.bit_length() - 1 for s in shape]
    return random_distributed_layout(nprng, shape_log2, warp_bits=warps_log2), "random linear"


def random_cases(n: int, seed: int = 2026, max_registers: int = 64) -> list[Case]:
    """``n`` random catalog pairs (shapes 2**8 .. 2**13 elements)."""
    rng = random.Random(seed)
    cases: list[Case] = []
    while len(cases) < n:
        warps_log2 = rng.randint(0, 3)
        bits = rng.choice([8, 16, 32])
        total = rng.randint(max(8, 5 + warps_log2), 13)
        shape = _split(rng, total)
        shape = [max(s, 1) for s in shape]
        try:
            src, sd = _random_catalog(rng, shape, warps_log2, bits)
            dst, dd = _random_catalog(rng, shape, warps_log2, bits)
        except (LayoutError, ValueError, AssertionError):
            continue
        src, dst = _strip(src), _strip(dst)
        if any(l.in_dim_size("register") > max_registers for l in (src, dst)):
            continue
        if src.in_dim_size("warp") != dst.in_dim_size("warp"):
            continue
        cases.append(Case(f"random_{len(cases):03d}", src, dst, bits, 1 << warps_log2, "random",
                          f"{shape} {bits}-bit {1 << warps_log2} warps: {sd} -> {dd}"))
    return cases


def in_warp_cases(n: int, seed: int = 7, max_registers: int = 64) -> list[Case]:
    """``n`` pairs with the same warp data (catalog source, random in-warp partner)."""
    rng = random.Random(seed)
    nprng = np.random.default_rng(seed)
    cases: list[Case] = []
    while len(cases) < n:
        warps_log2 = rng.randint(0, 3)
        bits = rng.choice([8, 16, 32])
        shape = _split(rng, rng.randint(max(8, 5 + warps_log2), 12))
        try:
            src, sd = _random_catalog(rng, shape, warps_log2, bits)
        except (LayoutError, ValueError, AssertionError):
            continue
        src = _strip(src)
        dst = random_within_warp_partner(nprng, src, broadcast=rng.random() < 0.3)
        if src.in_dim_size("register") > max_registers or dst.in_dim_size("register") > max_registers:
            continue
        if not same_warp_data(src, dst) or src == dst:
            continue
        cases.append(Case(f"inwarp_{len(cases):03d}", src, dst, bits, 1 << warps_log2, "in-warp",
                          f"{shape} {bits}-bit {1 << warps_log2} warps: {sd} -> random in-warp partner"))
    return cases


def wide_cases(n: int, seed: int = 64, max_registers: int = 32) -> list[Case]:
    """``n`` pairs of 64-bit elements (every other one in-warp), seeded apart from the others so the
    names of the 8/16/32-bit cases stay what they were."""
    rng = random.Random(seed)
    nprng = np.random.default_rng(seed)
    cases: list[Case] = []
    while len(cases) < n:
        warps_log2 = rng.randint(0, 3)
        shape = _split(rng, rng.randint(max(8, 5 + warps_log2), 12))
        try:
            src, sd = _random_catalog(rng, shape, warps_log2, 64)
            if len(cases) % 2:
                dst, dd = random_within_warp_partner(nprng, _strip(src), broadcast=rng.random() < 0.3), "random in-warp partner"
            else:
                dst, dd = _random_catalog(rng, shape, warps_log2, 64)
        except (LayoutError, ValueError, AssertionError):
            continue
        src, dst = _strip(src), _strip(dst)
        if any(l.in_dim_size("register") > max_registers for l in (src, dst)) or src == dst:
            continue
        if src.in_dim_size("warp") != dst.in_dim_size("warp"):
            continue
        family = "in-warp" if same_warp_data(src, dst) else "random"
        cases.append(Case(f"wide_{len(cases):03d}", src, dst, 64, 1 << warps_log2, family,
                          f"{shape} 64-bit {1 << warps_log2} warps: {sd} -> {dd}"))
    return cases


def register_cases(n: int = 12, seed: int = 29, max_registers: int = 64) -> list[Case]:
    """``n`` register permutations of 8- and 16-bit elements: a catalog source and the same layout with its
    register bases in another order (every third with a zero register basis added, or one of the
    source's dropped: duplicated registers on one side). Not in ``all_cases``: the suite takes them by
    name (``--cases regperm_000,...``)."""
    rng = random.Random(seed)
    cases: list[Case] = []
    while len(cases) < n:
        warps_log2 = rng.randint(0, 2)
        bits = (8, 16)[len(cases) % 2]
        shape = _split(rng, rng.randint(max(8, 5 + warps_log2), 11))
        try:
            src, sd = _random_catalog(rng, shape, warps_log2, bits)
        except (LayoutError, ValueError, AssertionError):
            continue
        src = _strip(src)
        bases = src.bases
        regs = bases["register"]
        order = list(range(len(regs)))
        rng.shuffle(order)
        regs = [regs[i] for i in order]
        note = "registers reordered"
        if len(cases) % 3 == 2:
            zeros = [i for i, v in enumerate(regs) if not any(v)]
            if zeros:
                del regs[zeros[0]]
                note += ", a zero basis dropped"
            else:
                regs.insert(rng.randint(0, len(regs)), [0] * len(shape))
                note += ", a zero basis added"
        bases["register"] = regs
        dst = LinearLayout(bases, src.out_dims)
        if src == dst or src.in_dim_size("register") > max_registers or dst.in_dim_size("register") > max_registers:
            continue
        cases.append(Case(f"regperm_{len(cases):03d}", src, dst, bits, 1 << warps_log2, "registers",
                          f"{shape} {bits}-bit {1 << warps_log2} warps: {sd}, {note}"))
    return cases


def all_cases(n_random: int = 200, n_in_warp: int = 48, n_wide: int = 16) -> list[Case]:
    return named_cases() + random_cases(n_random) + in_warp_cases(n_in_warp) + wide_cases(n_wide)


def in_warp_suite_cases() -> list[Case]:
    """The suite's cases whose conversion stays in each warp and moves data between lanes (the pairs
    ``harness.ranking.pairs`` scores: both mechanisms, a shuffle and a shared-memory kernel, are built)."""
    from linear_layouts.analysis.conversion import conversion_dims
    from linear_layouts.analysis.shuffles import same_warp_data

    return [c for c in all_cases() if same_warp_data(c.src, c.dst) and "lane" in conversion_dims(c.src, c.dst)]
