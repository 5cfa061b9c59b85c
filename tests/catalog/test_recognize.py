"""Tests of catalog/recognize.py: from a LinearLayout back to the simplest catalog descriptor.

The round trip ``recognize(L).to_linear(shape) == L`` runs on every catalog layout the differential
suites draw (``random_layouts``, ``test_shared``'s swizzled / NVMMA / padded generators, ``test_amd``'s
MFMA / WMMA cases), and each layout's family must be found (never the bases-given fallback) wherever a
Gluon class of that family exists.
"""

from __future__ import annotations

import random

import pytest

import linear_layouts.layouts as C
from linear_layouts import LayoutError, LinearLayout
from linear_layouts.layouts.recognize import recognize, standardize

from . import random_layouts as R
from .oracle import build_ours
from .test_amd import _random_case as random_amd_case
from .test_shared import random_nvmma as random_nvmma_shared
from .test_shared import random_padded, random_swizzled

#: Inputs whose family must be recognized, and the descriptors that count as that family (a layout
#: can be produced by a simpler class: a blocked layout is also an mma accumulator of one warp, ...).
_FAMILIES = {
    "BlockedLayout": (C.BlockedLayout,),
    "NVMMADistributedLayout": (C.NVMMADistributedLayout, C.BlockedLayout),
    "DotOperandLayout": (C.DotOperandLayout, C.NVMMADistributedLayout, C.BlockedLayout),
    "SliceLayout": (C.SliceLayout, C.BlockedLayout, C.NVMMADistributedLayout, C.DotOperandLayout),
    "SwizzledSharedLayout": (C.SwizzledSharedLayout, C.NVMMASharedLayout),
    "NVMMASharedLayout": (C.NVMMASharedLayout,),
    "TensorMemoryLayout": (C.TensorMemoryLayout,),
    "TensorMemoryScalesLayout": (C.TensorMemoryScalesLayout, C.TensorMemoryLayout),
    "AMDMFMALayout": (C.AMDMFMALayout, C.BlockedLayout),
}


def _differential_layouts(seed: int, count: int) -> list[tuple[object, list[int]]]:
    rng = random.Random(seed)
    generators = [R.random_blocked, R.random_nvmma, R.random_dot_operand, R.random_slice, R.random_distributed_linear]
    cases: list[tuple[object, list[int]]] = []
    for k in range(count):
        params = generators[k % len(generators)](rng)
        layout = build_ours(params)
        shape = list(layout.shape) if isinstance(layout, C.DistributedLinearLayout) else \
            R.random_shape(rng, R.rank_of(params))
        cases.append((layout, shape))
    for _ in range(count // 5):
        params, shape = R.random_shared_linear(rng)
        cases.append((build_ours(params), shape))
        params, shape = R.random_tensor_memory(rng)
        cases.append((build_ours(params), shape))
        cases.append(random_swizzled(rng))
        cases.append(random_nvmma_shared(rng))
        padded = random_padded(rng)
        cases.append((padded, list(padded.shape)))
        layout, shape, _ = random_amd_case(rng)
        cases.append((layout, shape))
    return cases


def test_round_trip_on_the_differential_suites():
    """``recognize(L).to_linear(shape) == L`` for every layout; the family is found where Gluon has one."""
    checked, found = 0, 0
    for layout, shape in _differential_layouts(20261123, 150):
        try:
            target = layout.to_linear(shape)
        except LayoutError:
            continue  # a shape the layout rejects (the generators draw freely)
        descriptor = recognize(target)
        assert standardize(descriptor.to_linear(shape)) == standardize(target), (layout, shape, descriptor)
        checked += 1
        family = _FAMILIES.get(type(layout).__name__)
        if family is not None and not isinstance(layout, C.DotOperandLayout) or \
                isinstance(layout, C.DotOperandLayout) and not isinstance(layout.parent, C.AMDWMMALayout):
            if family is not None:
                assert isinstance(descriptor, family), (layout, shape, descriptor)
                found += 1
    assert checked >= 300 and found >= 200


@pytest.mark.parametrize("swizzle", [0, 32, 64, 128])
@pytest.mark.parametrize("bitwidth", [8, 16, 32])
@pytest.mark.parametrize("transposed", [False, True])
def test_nvmma_shared_parameters_recovered(swizzle, bitwidth, transposed):
    layout = C.NVMMASharedLayout(swizzle, bitwidth, 2, transposed)
    shape = [64, 128] if not transposed else [128, 64]
    assert recognize(layout.to_linear(shape), bitwidth=bitwidth) == layout


@pytest.mark.parametrize("vec, per_phase, max_phase, order", [
    (8, 1, 8, [1, 0]), (4, 2, 4, [1, 0]), (2, 1, 4, [0, 1]), (1, 1, 1, [1, 0]), (8, 4, 2, [0, 1]),
])
def test_swizzled_shared_parameters_recovered(vec, per_phase, max_phase, order):
    """An NVMMA layout of some element width may produce the same layout (it is then preferred: wgmma and
    TMA accept it); otherwise the swizzle parameters come back exactly."""
    layout = C.SwizzledSharedLayout(vec, per_phase, max_phase, order)
    found = recognize(layout.to_linear([64, 64]))
    assert found.to_linear([64, 64]) == layout.to_linear([64, 64])
    assert isinstance(found, C.NVMMASharedLayout) or found == layout
    nvmma_like = any(C.NVMMASharedLayout(s, w, 2, t).to_linear([64, 64]) == layout.to_linear([64, 64])
                     for s in (0, 32, 64, 128) for w in (8, 16, 32, 64) for t in (False, True)
                     if s <= 64 * w // 8)
    assert isinstance(found, C.NVMMASharedLayout) == nvmma_like


def test_issue_example_and_wgmma_tile():
    blocked = C.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    assert recognize(blocked.to_linear([128, 64])) == blocked
    wgmma = C.NVMMADistributedLayout([3, 0], [4, 1], [16, 128, 16])
    assert recognize(wgmma.to_linear([128, 128]), bitwidth=16) == wgmma
    operand = C.DotOperandLayout(0, C.NVMMADistributedLayout([2, 0], [4, 1], [16, 8]), 4)
    assert recognize(operand.to_linear([64, 32])) == operand
    fp16_operand = C.DotOperandLayout(0, C.NVMMADistributedLayout([2, 0], [4, 1], [16, 8]), 2)
    found = recognize(fp16_operand.to_linear([64, 32]))  # also a [16, 32] wgmma accumulator: that is simpler
    assert isinstance(found, C.NVMMADistributedLayout) and found.to_linear([64, 32]) == fp16_operand.to_linear([64, 32])
    reduced = C.SliceLayout(1, C.NVMMADistributedLayout([2, 0], [2, 2], [16, 8]))
    found = recognize(reduced.to_linear([64]))
    assert found.to_linear([64]) == reduced.to_linear([64])


def test_fallbacks_and_errors():
    swizzled_lanes = LinearLayout({"register": [[1, 0]], "lane": [[0, 1], [1, 1], [0, 2], [0, 4], [0, 8]]},
                                  ["dim0", "dim1"])
    with pytest.raises(LayoutError, match="no Gluon descriptor"):
        recognize(swizzled_lanes)
    bases = LinearLayout({"register": [[0, 1]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]],
                          "warp": [[0, 0]]}, ["dim0", "dim1"])
    assert recognize(bases).to_linear([32, 2]) == standardize(bases)
    shared = LinearLayout({"offset": [[0, 1], [1, 0], [2, 2], [0, 2]]}, ["dim0", "dim1"])
    assert isinstance(recognize(shared), C.SharedLinearLayout)
    with pytest.raises(LayoutError, match="out dims must be dim0"):
        recognize(LinearLayout({"lane": [[1]]}, ["x"]))
    with pytest.raises(LayoutError, match="in dims"):
        recognize(LinearLayout({"offset": [[1]], "lane": [[2]]}, ["dim0"]))
    with pytest.raises(LayoutError, match="bitwidth"):
        recognize(shared, bitwidth=12)
    with pytest.raises(LayoutError, match="must be a LinearLayout"):
        recognize("BlockedLayout")


def test_to_gluon_accepts_any_layout():
    pytest.importorskip("triton")
    from linear_layouts.analysis import optimal_swizzle
    from linear_layouts.triton_model.interop import to_gluon

    src = C.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0]).to_linear([64, 64])
    dst = C.NVMMADistributedLayout([2, 0], [4, 1], [16, 8]).to_linear([64, 64])
    best = optimal_swizzle(src, dst, 16)
    assert type(to_gluon(best.layout)).__name__ in ("SharedLinearLayout", "SwizzledSharedLayout", "NVMMASharedLayout")
    assert type(to_gluon(src)).__name__ == "BlockedLayout"


def _orders_by_permutations(rank, *sequences):
    """``recognize._orders``' rule checked on every permutation (the definition it must agree with)."""
    import itertools

    from linear_layouts.layouts.recognize import _dim_of

    result = []
    for order in itertools.permutations(reversed(range(rank))):
        position = {d: i for i, d in enumerate(order)}
        dims = [[_dim_of(v) for v in vectors if _dim_of(v) is not None] for vectors in sequences]
        if all(-1 not in ds and all(position[a] <= position[b] for a, b in zip(ds, ds[1:])) for ds in dims):
            result.append(order)
    return result


def test_orders_are_the_compatible_permutations_in_permutation_order():
    from linear_layouts.layouts.recognize import _orders

    rng = random.Random(7)
    for _ in range(1500):
        rank = rng.randint(0, 5)
        sequences = []
        for _ in range(rng.randint(0, 3)):
            vectors = []
            for _ in range(rng.randint(0, 5)):
                v = [0] * rank
                for d in rng.sample(range(rank), min(rank, rng.choice([0, 1, 1, 1, 2]))):
                    v[d] = 1 << rng.randint(0, 3)
                vectors.append(tuple(v))
            sequences.append(vectors)
        assert list(_orders(rank, *sequences)) == _orders_by_permutations(rank, *sequences), (rank, sequences)


def test_a_rank_11_blocked_layout_is_recognized_without_trying_every_order():
    """sort_rows' bitonic-sort layout (Triton's ``#blocked1``, 11 dims of 2): 11! = 39916800 orders, of which
    the first fits; listing them all took minutes (``kernels.rewrite`` on sort_rows did not finish)."""
    import signal
    import time

    blocked = C.BlockedLayout([1] * 9 + [2, 2], [1, 1, 1, 1, 2, 2, 2, 2, 2, 1, 1], [1, 1, 2, 2] + [1] * 7,
                              list(reversed(range(11))))
    layout = blocked.to_linear([2] * 11)

    def too_slow(*_):
        raise TimeoutError("recognize took more than 30 s on a rank-11 blocked layout")

    previous = signal.signal(signal.SIGALRM, too_slow) if hasattr(signal, "SIGALRM") else None
    if previous is not None:
        signal.alarm(30)
    try:
        start = time.process_time()
        found = recognize(layout)
        assert isinstance(found, C.BlockedLayout) and found.to_linear([2] * 11) == layout
        assert time.process_time() - start < 30
    finally:
        if previous is not None:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
