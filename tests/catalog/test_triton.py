"""Tests of src/linear_layouts/triton.py: Gluon interop (3.9 here, 3.6's CGA parameters simulated) and
conversion to / from Triton's C++ LinearLayout."""

from __future__ import annotations

import dataclasses
import random
from typing import List, Optional

import pytest

import linear_layouts.layouts as C
from linear_layouts import LayoutError, LinearLayout

from . import random_layouts as R
from .oracle import build_ours, oracle_linear, same_modulo_broadcast_registers

pytest.importorskip("triton")

from linear_layouts.triton_model import interop  # noqa: E402


def _examples() -> list:
    objects = [
        C.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0], [[1, 0], [0, 0]]),
        C.SliceLayout(0, C.SliceLayout(1, C.BlockedLayout([1, 1, 4], [2, 4, 4], [1, 1, 1], [2, 1, 0]))),
        C.DotOperandLayout(0, C.NVMMADistributedLayout([2, 0], [4, 1], [16, 8]), 2),
        C.DotOperandLayout(1, C.BlockedLayout([2, 2], [4, 8], [2, 2], [0, 1]), 0),
        C.NVMMADistributedLayout([3, 0], [4, 2], [16, 64, 16], [[0, 1]]),
        C.DistributedLinearLayout([[0, 1]], [[1, 0], [0, 2]], [[0, 0]], [], [2, 4]),
        C.SharedLinearLayout([[0, 1], [1, 1], [0, 2]], [], 8),
        C.TensorMemoryLayout((64, 32), 2, [[0, 1]]),
        C.TensorMemoryScalesLayout([[1, 0]]),
    ]
    if hasattr(C, "SwizzledSharedLayout"):
        objects += [C.SwizzledSharedLayout(4, 2, 4, [0, 1], [[1, 0]]), C.NVMMASharedLayout(64, 16, 2, True)]
    if hasattr(C, "AMDMFMALayout"):
        objects += [
            C.AMDMFMALayout(3, [32, 32, 8], True, [2, 2]),
            C.DotOperandLayout(0, C.AMDMFMALayout(4, [16, 16, 32], False, [4, 1]), 8),
            C.AMDWMMALayout(2, False, [[0, 1], [1, 0]]),
        ]
    if hasattr(C, "PaddedSharedLayout"):
        objects.append(C.PaddedSharedLayout([[64, 8]], [[0, 1], [0, 2], [1, 0], [2, 0]], [], [4, 4]))
    return objects


@pytest.mark.parametrize("layout", _examples(), ids=lambda o: type(o).__name__)
def test_round_trip_and_same_linear_layout(layout):
    gluon = interop.to_gluon(layout)
    assert type(gluon).__name__ == type(layout).__name__
    assert interop.from_gluon(gluon) == layout
    if type(layout).__name__ == "PaddedSharedLayout":
        return  # 3.9's to_linear_layout aborts on padded layouts; test_shared.py checks their linear part
    shape = {1: [64], 2: [64, 64], 3: [2, 32, 32]}[layout.rank]
    if isinstance(layout, C.DistributedLinearLayout):
        shape = [2, 4]
    elif isinstance(layout, C.SharedLinearLayout):
        shape = [2, 4]
    elif isinstance(layout, (C.TensorMemoryLayout, C.TensorMemoryScalesLayout)):
        shape = [128, 64]
    ours = layout.to_linear(shape)
    theirs = oracle_linear(gluon, shape)
    if "row" in ours.in_dim_names:
        ours = ours.sublayout(["row", "col"], ["dim0", "dim1"])
    assert same_modulo_broadcast_registers(ours, theirs)


def test_random_round_trips():
    rng = random.Random(11)
    generators = [R.random_blocked, R.random_nvmma, R.random_dot_operand, R.random_slice, R.random_distributed_linear]
    for k in range(150):
        params = generators[k % len(generators)](rng)
        ours = build_ours(params)
        gluon = interop.to_gluon(ours)
        assert interop.from_gluon(gluon) == ours
        shape = R.random_shape(rng, R.rank_of(params))
        assert same_modulo_broadcast_registers(ours.to_linear(shape), oracle_linear(gluon, shape))


def test_amd_rotating_shared_becomes_shared_linear():
    if not hasattr(C, "AMDRotatingSharedLayout"):
        pytest.skip("catalog/shared.py not present")
    layout = C.AMDRotatingSharedLayout(2, 1, 4, [1, 0])
    gluon = interop.to_gluon(layout, [16, 16])
    assert type(gluon).__name__ == "SharedLinearLayout"
    assert oracle_linear(gluon, [16, 16]) == layout.to_linear([16, 16])
    with pytest.raises(LayoutError, match=r"shape is required: Gluon has no AMDRotatingSharedLayout; it"):
        interop.to_gluon(layout)


def test_triton_3_6_cga_parameters(monkeypatch):
    """Older Gluon classes (before 3.6) take ctas_per_cga / cta_split_num / cta_order instead of cga_layout."""

    @dataclasses.dataclass(frozen=True)
    class BlockedLayout:  # the 3.6 signature
        size_per_thread: List[int]
        threads_per_warp: List[int]
        warps_per_cta: List[int]
        order: List[int]
        ctas_per_cga: Optional[List[int]] = None
        cta_split_num: Optional[List[int]] = None
        cta_order: Optional[List[int]] = None

        @property
        def rank(self):
            return len(self.order)

    monkeypatch.setattr(interop, "_gluon_class", lambda name: BlockedLayout)
    ours = C.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0], [[0, 1], [0, 0], [1, 0]])
    old = interop.to_gluon(ours)
    assert (old.ctas_per_cga, old.cta_split_num, old.cta_order) == ([2, 4], [2, 2], [1, 0])
    assert interop.from_gluon(old) == ours
    monkeypatch.setattr(C, "BlockedLayout", C.BlockedLayout)
    plain = interop.from_gluon(BlockedLayout([1, 1], [4, 8], [1, 1], [1, 0]))
    assert plain == C.BlockedLayout([1, 1], [4, 8], [1, 1], [1, 0])
    # no split-parameter form
    with pytest.raises(LayoutError, match=r"cga_layout: the split bases of a dim must be contiguous"):
        interop.to_gluon(C.BlockedLayout([1, 1], [4, 8], [1, 1], [1, 0], [[0, 1], [1, 0], [0, 2]]))


def test_triton_3_6_padded_block_bases(monkeypatch):
    """Triton 3.6.0's PaddedSharedLayout takes absolute block_bases (read from its wheel), not cga_layout."""

    @dataclasses.dataclass(frozen=True)
    class PaddedSharedLayout:  # the 3.6.0 signature
        interval_padding_pairs: List[List[int]]
        offset_bases: List[List[int]]
        block_bases: List[List[int]]
        shape: List[int]

    monkeypatch.setattr(interop, "_gluon_class", lambda name: PaddedSharedLayout)
    ours = C.PaddedSharedLayout([[8, 8]], [[0, 1], [0, 2], [1, 0]], [[1, 0]], [4, 4])
    old = interop.to_gluon(ours)
    assert old.block_bases == [[2, 0]] and old.offset_bases == [[0, 1], [0, 2], [1, 0]]
    assert interop.from_gluon(old) == ours


def test_triton_linear_layout_round_trip():
    rng = random.Random(5)
    for _ in range(50):
        params = R.random_blocked(rng)
        layout = build_ours(params).to_linear(R.random_shape(rng, R.rank_of(params)))
        triton_layout = interop.to_triton_linear_layout(layout)
        assert interop.from_triton_linear_layout(triton_layout) == layout
        assert triton_layout.get_out_dim_names() == list(layout.out_dim_names)
    not_onto = LinearLayout({"register": [[1]]}, {"dim0": 4}, require_surjective=False)
    assert interop.from_triton_linear_layout(interop.to_triton_linear_layout(not_onto)) == not_onto
    # Triton's own algebra agrees with ours on a product
    a, b = LinearLayout.identity_1d(4, "lane", "dim0"), LinearLayout.identity_1d(2, "warp", "dim1")
    product = interop.to_triton_linear_layout(a) * interop.to_triton_linear_layout(b)
    assert interop.from_triton_linear_layout(product) == a * b


@pytest.mark.parametrize(
    "call, rule",
    [
        (lambda: interop.to_gluon("BlockedLayout"), r"layout must be a linear_layouts\.catalog layout"),
        (lambda: interop.to_gluon(LinearLayout({"lane": [[0, 1], [1, 1], [0, 2], [0, 4], [0, 8]]}, ["dim0", "dim1"])),
         r"layout: no Gluon descriptor produces it"),
        (lambda: interop.from_gluon(object()), r"gluon_layout: no catalog class for Gluon's object"),
        (lambda: interop.to_triton_linear_layout([[1]]), r"layout must be a LinearLayout"),
        (lambda: interop.from_triton_linear_layout("layout"), r"triton_layout must be"),
    ],
)
def test_invalid_raise(call, rule):
    with pytest.raises(LayoutError, match=rule):
        call()


def test_older_tensor_memory_layout_signature(monkeypatch):
    """Older Gluon: TensorMemoryLayout(block, unpacked, cta_split_num=None)."""

    @dataclasses.dataclass(frozen=True)
    class TensorMemoryLayout:
        block: tuple
        unpacked: bool
        cta_split_num: Optional[tuple] = None

        @property
        def rank(self):
            return 2

    monkeypatch.setattr(interop, "_gluon_class", lambda name: TensorMemoryLayout)
    ours = C.TensorMemoryLayout((128, 64), 1, [[0, 1]])
    old = interop.to_gluon(ours)
    assert old == TensorMemoryLayout((128, 64), False, (1, 2))
    assert interop.from_gluon(old) == ours
    assert interop.to_gluon(C.TensorMemoryLayout((128, 64), 2)).unpacked is True
    with pytest.raises(LayoutError, match=r"gluon_layout: an unpacked TensorMemoryLayout does not say"):
        interop.from_gluon(TensorMemoryLayout((128, 64), True))
    # a broadcast CTA has no cta_split_num form
    with pytest.raises(LayoutError, match=r"cga_layout: the installed Gluon's TensorMemoryLayout cannot"):
        interop.to_gluon(C.TensorMemoryLayout((128, 64), 1, [[0, 0]]))
