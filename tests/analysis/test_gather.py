"""Warp-local gather (§5.5): the decision, and the shuffle schedule run by the warp simulator."""

from __future__ import annotations

import numpy as np
import pytest

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.analysis.gather import PACKED_REGISTER_BUDGET, is_warp_local, plan_gather
from linear_layouts.analysis.warp_simulator import distribute, execute_gather_plan


def _layout(slots: dict[str, list], sizes_log2: list[int]) -> LinearLayout:
    """Bases from slots holding (dim, bit) or None (a zero basis)."""
    def vec(s):
        v = [0] * len(sizes_log2)
        if s is not None:
            v[s[0]] = 1 << s[1]
        return v
    return LinearLayout({d: [vec(s) for s in ss] for d, ss in slots.items()},
                        [(f"dim{i}", 1 << k) for i, k in enumerate(sizes_log2)])


def random_gather_pair(rng, *, lane_bits=3, warp_bits=2):
    """A random warp-local (src, index, axis): shared warp and lane maps onto the other dims."""
    rank = int(rng.integers(1, 3))
    axis = int(rng.integers(rank))
    other = [int(rng.integers(0, 3)) for _ in range(rank)]
    src_log2, idx_log2 = list(other), list(other)
    src_log2[axis], idx_log2[axis] = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    others = [(d, b) for d in range(rank) if d != axis for b in range(other[d])]
    others = [others[i] for i in rng.permutation(len(others))]
    n_w = int(rng.integers(0, min(warp_bits, len(others)) + 1))
    warp = [None] * warp_bits
    for slot, pos in zip(rng.choice(warp_bits, n_w, replace=False), others[:n_w]):
        warp[int(slot)] = pos
    rest = others[n_w:]
    n_l = int(rng.integers(0, min(lane_bits, len(rest)) + 1))
    lane_other = [None] * lane_bits
    for slot, pos in zip(rng.choice(lane_bits, n_l, replace=False), rest[:n_l]):
        lane_other[int(slot)] = pos
    reg_other = rest[n_l:]
    free_lanes = [i for i in range(lane_bits) if lane_other[i] is None]

    def one(axis_log2):
        axis_pos = [(axis, b) for b in rng.permutation(axis_log2).tolist()]
        lane = list(lane_other)
        n_ax = int(rng.integers(0, min(len(free_lanes), axis_log2) + 1))
        for slot, pos in zip(rng.choice(free_lanes, n_ax, replace=False) if n_ax else [], axis_pos[:n_ax]):
            lane[int(slot)] = pos
        regs = reg_other + axis_pos[n_ax:] + [None] * int(rng.integers(0, 2))
        regs = [regs[i] for i in rng.permutation(len(regs))]
        sizes = list(other)
        sizes[axis] = axis_log2
        return _layout({"register": regs, "lane": lane, "warp": warp}, sizes)

    return one(src_log2[axis]), one(idx_log2[axis]), axis


def _check(src, index, axis, bits, rng):
    plan = plan_gather(src, index, axis, bits)
    assert plan.warp_local
    high = 1 << bits if bits < 64 else 1 << 62
    src_t = rng.integers(0, high, size=tuple(src.out_dims.values()), dtype=np.int64)
    idx_t = rng.integers(0, src.out_dim_size(f"dim{axis}"), size=tuple(index.out_dims.values()), dtype=np.int64)
    want = np.take_along_axis(src_t, idx_t, axis=axis)
    got = execute_gather_plan(plan, distribute(src, src_t), distribute(index, idx_t))
    assert np.array_equal(got, distribute(index, want)), (src, index, axis, bits)
    n_axis_regs = sum(1 for b in src.bases["register"] if b[axis])
    packed = min(32 // bits, 2**n_axis_regs) if bits < 32 else 1  # sub-word choices share a shfl word
    n_src, n_idx = src.in_dim_size("register"), index.in_dim_size("register")
    if n_src + 2 * n_idx + n_src // packed > PACKED_REGISTER_BUDGET:
        packed = 1
    assert plan.num_shuffles == index.in_dim_size("register") * 2**n_axis_regs * max(1, bits // 32) // packed


def test_random_gathers_simulate_exactly():
    """>= 500 random warp-local gathers with random index tensors: the simulator's result is the gather."""
    rng = np.random.default_rng(5)
    for _ in range(500):
        src, index, axis = random_gather_pair(rng)
        _check(src, index, axis, int(rng.choice([8, 16, 32, 64])), rng)


def test_warp_local_decision():
    # 2-D, gather along dim1; warps split dim0 in both layouts -> warp local
    src = _layout({"register": [(1, 0)], "lane": [(1, 1), (0, 0)], "warp": [(0, 1)]}, [2, 2])
    idx = _layout({"register": [(1, 0), (1, 2)], "lane": [(1, 1), (0, 0)], "warp": [(0, 1)]}, [2, 3])
    assert is_warp_local(src, idx, 1)
    _check(src, idx, 1, 32, np.random.default_rng(0))
    # a warp bit along the gather axis -> not warp local, shared memory for the whole source
    src_w = _layout({"register": [(0, 1)], "lane": [(1, 1), (0, 0)], "warp": [(1, 0)]}, [2, 2])
    plan = plan_gather(src_w, idx, 1, "fp16")
    assert not is_warp_local(src_w, idx, 1) and not plan.warp_local
    assert plan.rounds == () and plan.shared_memory_bytes == 16 * 2
    # warps split dim0 differently -> not warp local
    idx_w = _layout({"register": [(1, 0), (1, 2)], "lane": [(1, 1), (0, 1)], "warp": [(0, 0)]}, [2, 3])
    assert not is_warp_local(src, idx_w, 1)
    # lanes map differently onto dim0 -> not warp local (Triton's codegen condition)
    idx_l = _layout({"register": [(1, 0), (1, 2)], "lane": [(0, 0), (1, 1)], "warp": [(0, 1)]}, [2, 3])
    assert not is_warp_local(src, idx_l, 1)


def test_bad_input():
    a = LinearLayout({"register": [[1]], "lane": [[2]]}, ["dim0"])
    b = LinearLayout({"register": [[1, 0]], "lane": [[0, 1]]}, ["dim0", "dim1"])
    with pytest.raises(LayoutError, match="out dims"):
        plan_gather(a, b, 0)
    with pytest.raises(LayoutError, match="axis"):
        plan_gather(a, a, 1)
    with pytest.raises(LayoutError, match="same size"):
        plan_gather(b, LinearLayout({"register": [[1, 0]], "lane": [[0, 1], [0, 2]]}, ["dim0", "dim1"]), 0)
