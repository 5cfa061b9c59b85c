"""Broadcasting (§5.1): duplicated bits and the stores of a reduction, checked by brute force."""

from __future__ import annotations

import numpy as np
import pytest

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.analysis.broadcast import (
    broadcast_masks,
    duplicated_bits,
    reduced_layout,
    reduction_stores,
    zero_bases_mask,
    zero_basis_indices,
)
from linear_layouts.analysis.warp_simulator import random_distributed_layout


def _slots(layout: LinearLayout):
    """Every (warp, lane, register) and the element (tuple of coordinates) it holds (block 0)."""
    n_r, n_l = layout.in_dim_size("register"), layout.in_dim_size("lane")
    n_w = layout.in_dim_size("warp") if layout.has_in_dim("warp") else 1
    w, t, r = (a.ravel() for a in np.meshgrid(np.arange(n_w), np.arange(n_l), np.arange(n_r), indexing="ij"))
    ins = {"register": r, "lane": t}
    if layout.has_in_dim("warp"):
        ins["warp"] = w
    out = layout.apply_array(ins)
    coords = list(zip(*(out[d].tolist() for d in layout.out_dim_names)))
    return list(zip(w.tolist(), t.tolist(), r.tolist(), coords))


def test_duplicated_bits_are_exactly_the_bits_that_change_nothing():
    rng = np.random.default_rng(7)
    for _ in range(60):
        L = random_distributed_layout(rng, [int(rng.integers(1, 4)), int(rng.integers(1, 4))],
                                      lane_bits=3, warp_bits=2, extra_register_zeros=int(rng.integers(0, 2)))
        dup = duplicated_bits(L)
        for d in ("register", "lane", "warp"):
            for i in range(L.in_dim_size_log2(d)):
                # flipping bit i of d never changes the element, iff it is duplicated (distributed layouts)
                same = all(L.apply({d: x}) == L.apply({d: x ^ (1 << i)}) for x in range(L.in_dim_size(d)))
                assert same == (i in dup[d]), (L, d, i)
        assert broadcast_masks(L) == {d: sum(1 << i for i in dup[d]) for d in dup}


def test_zero_bases_mask_is_the_bits_whose_unit_input_maps_to_zero():
    """Any layout (not only distributed): bit i is set iff L(in_dim = 2**i) is the zero vector; inside
    ``broadcast_masks`` (a zero basis is in every span); 0 for an absent in dim."""
    rng = np.random.default_rng(3)
    for _ in range(100):
        bases = {d: [[int(rng.integers(0, 4)) * int(rng.integers(0, 2)), int(rng.integers(0, 2))]
                     for _ in range(int(rng.integers(0, 4)))] for d in ("register", "lane", "warp")}
        L = LinearLayout(bases, {"dim0": 4, "dim1": 2}, require_surjective=False)
        free = broadcast_masks(L)
        for d in ("register", "lane", "warp"):
            mask = zero_bases_mask(L, d)
            assert mask == sum(1 << i for i in range(L.in_dim_size_log2(d))
                               if all(v == 0 for v in L.apply({d: 1 << i}).values())), (L, d)
            assert mask & ~free[d] == 0
        assert zero_bases_mask(L, "block") == 0
    L = LinearLayout({"register": [[0], [1]], "lane": [[1], [2]]}, ["dim0"])
    assert zero_bases_mask(L, "register") == 1 and zero_bases_mask(L, "lane") == 0
    assert broadcast_masks(L)["lane"] == 1  # in the span of the register basis, yet not zero


def test_zero_basis_indices_list_the_zero_bases_in_order():
    """The indices i with L(in_dim = 2**i) == 0, increasing (what plan_shuffle pairs with dst's extra lanes
    and inter_warp_layout swaps warps into); () for an absent in dim."""
    rng = np.random.default_rng(5)
    for _ in range(100):
        bases = {d: [[int(rng.integers(0, 4)) * int(rng.integers(0, 2)), int(rng.integers(0, 2))]
                     for _ in range(int(rng.integers(0, 6)))] for d in ("register", "lane")}
        L = LinearLayout(bases, {"dim0": 4, "dim1": 2}, require_surjective=False)
        for d in ("register", "lane"):
            assert zero_basis_indices(L, d) == tuple(i for i, v in enumerate(L.bases[d]) if not any(v)), (L, d)
        assert zero_basis_indices(L, "warp") == ()
    L = LinearLayout({"register": [[1], [0], [2], [0]], "lane": [[0], [0], [4]]}, ["dim0"])
    assert zero_basis_indices(L, "register") == (1, 3) and zero_basis_indices(L, "lane") == (0, 1)


def test_reduction_counts_match_brute_force():
    """>= 500 random layouts and axes: every count equals a direct enumeration of the slots."""
    rng = np.random.default_rng(11)
    for _ in range(500):
        shape = [int(rng.integers(0, 4)), int(rng.integers(0, 4))]
        while sum(shape) < 4:
            shape[int(rng.integers(2))] += 1
        L = random_distributed_layout(rng, shape, lane_bits=3, warp_bits=2,
                                      extra_register_zeros=int(rng.integers(0, 2)))
        axis = int(rng.integers(2))
        st = reduction_stores(L, axis)
        keep = 1 - axis
        slots = [(w, t, r, e[keep]) for w, t, r, e in _slots(L)]
        # distinct values per thread and per warp after the reduction
        per_thread = {(w, t): set() for w, t, _, _ in slots}
        per_warp = {w: set() for w, _, _, _ in slots}
        for w, t, r, e in slots:
            per_thread[(w, t)].add(e)
            per_warp[w].add(e)
        assert st.per_thread == max(len(s) for s in per_thread.values())
        assert st.per_warp == max(len(s) for s in per_warp.values())
        # the slots with every duplicated bit zero store each result element exactly once
        masks = st.reduced.free_variable_masks()
        stored = [e for w, t, r, e in slots
                  if not (r & masks["register"] or t & masks["lane"] or w & masks["warp"])]
        assert len(stored) == len(set(stored)) == len({e for *_, e in slots}) == st.element_stores
        # legacy: every accumulator (register bits not along the axis) of every lane at axis index 0, every warp
        r_axis = sum(1 << i for i, b in enumerate(L.bases["register"]) if b[axis])
        l_axis = sum(1 << i for i, b in enumerate(L.bases["lane"]) if b[axis])
        legacy = sum(1 for w, t, r, e in slots if (r & r_axis) == 0 and (t & l_axis) == 0)
        assert legacy == st.legacy_element_stores
        assert st.stores <= st.legacy_stores and st.skipped == st.legacy_stores - st.stores


def test_table4_like_blocked_example():
    # 4 warps, blocked [1,4] x [4,8] x [4,1] on a [16, 16] tensor, reduced along dim1:
    # the 8 lanes along dim1 and the register bits along dim1 collapse; warps hold distinct rows.
    L = LinearLayout(
        {"register": [[0, 1], [0, 2]], "lane": [[0, 4], [0, 8], [0, 0], [1, 0], [2, 0]], "warp": [[4, 0], [8, 0]]},
        ["dim0", "dim1"],
    )
    st = reduction_stores(L, axis=1)
    assert (st.per_thread, st.storing_lanes, st.storing_warps, st.warps) == (1, 4, 4, 4)
    assert st.legacy_storing_lanes == 8  # legacy also stores from the lane bit that holds duplicated data
    assert (st.element_stores, st.legacy_element_stores) == (16, 32)
    assert reduced_layout(L, 1).out_dim_names == ("dim0",)


def test_bad_axis():
    L = LinearLayout({"register": [[1]]}, ["dim0"])
    with pytest.raises(LayoutError, match="axis"):
        reduction_stores(L, 1)
    with pytest.raises(LayoutError, match="LinearLayout"):
        broadcast_masks("blocked")


def test_triton_free_variable_masks_json():
    """Triton's own FreeVariableMasks unit test (LinearLayoutTest.cpp), from the JSON expectations."""
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "data" / "triton-unittests" / "algebra.json"
    data = json.loads(path.read_text())
    cases = [c for c in (data["cases"] if isinstance(data, dict) else data) if c["test"] == "FreeVariableMasks"]
    assert len(cases) == 4
    for case in cases:
        spec = case["args"]["layout"]
        layout = LinearLayout(spec["bases"], spec["out_dims"], require_surjective=spec["surjective"])
        assert broadcast_masks(layout) == dict(case["expected"]), case["name"]
