"""Tests of ``AMDMFMALayout``, ``AMDWMMALayout`` and their dot operands.

(a) every amd_mfma / amd_wmma case of Triton's unit tests (conversions.json), dot operands included, and
    the AMD ``equal_layouts`` properties;
(b) differential against triton 3.9's ``to_linear_layout`` on seeded random valid parameter sets, with
    shapes smaller than the layout's tile (broadcast) and larger (register repeats), CGA layouts included;
(c) seeded fuzzed invalid parameter sets: each raises ``LayoutError``, none crashes;
plus the seeds' MFMA tiles (blog 001) and a few structural properties.
"""

from __future__ import annotations

import dataclasses
import random
import re

import pytest

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.layouts.amd import (
    WMMA_INSTR_SHAPES,
    AMDMFMALayout,
    AMDWMMALayout,
    choose_wmma_cta_linear_layout,
)
from linear_layouts.layouts.dot_operand import DotOperandLayout
from linear_layouts.layouts.slice import SliceLayout

from .oracle import catalog_of_json, cga_of_json, conversion_cases, gluon_class, layout_of_json, oracle_linear

AMD_KINDS = ("amd_mfma", "amd_wmma")


# ----------------------------------------------------------------------------- JSON params -> ours
def _mfma_of_json(params: dict, builders: dict) -> AMDMFMALayout:
    return AMDMFMALayout(
        params["version"],
        params["instrShape"],
        params["isTransposed"],
        params["warpsPerCTA"],
        params["elementBitWidth"],
        params["tilesPerWarp"],
        cga_of_json(params),
    )


def _wmma_of_json(params: dict, builders: dict) -> AMDWMMALayout:
    return AMDWMMALayout.from_warps_per_cta(
        params["version"],
        params["isTransposed"],
        params["warpsPerCTA"],
        params["tilesPerWarp"],
        params["instrShape"],
        cga_of_json(params),
    )


BUILDERS = {"amd_mfma": _mfma_of_json, "amd_wmma": _wmma_of_json}


def _is_amd_case(case: dict) -> bool:
    if case["layout_kind"] in AMD_KINDS:
        return True
    return case["layout_kind"] == "dot_operand" and case["params"]["parent"]["kind"] in AMD_KINDS


AMD_CASES = [case for case in conversion_cases(*AMD_KINDS, "dot_operand") if _is_amd_case(case)]


def test_json_case_counts() -> None:
    """The brief's inventory: 26 amd_mfma, 24 amd_wmma, 70 MFMA and 48 WMMA dot-operand cases."""
    counts: dict[str, int] = {}
    for case in AMD_CASES:
        kind = case["layout_kind"]
        if kind == "dot_operand":
            kind = "dot_" + case["params"]["parent"]["kind"]
        counts[kind] = counts.get(kind, 0) + 1
    assert counts == {"amd_mfma": 26, "amd_wmma": 24, "dot_amd_mfma": 70, "dot_amd_wmma": 48}


@pytest.mark.parametrize("case", AMD_CASES, ids=[case["name"] for case in AMD_CASES])
def test_triton_unittest_case(case: dict) -> None:
    """``toLinearLayout(shape, encoding) == expected``, bit for bit (zero register bases included)."""
    layout = catalog_of_json(case["layout_kind"], case["params"], BUILDERS)
    assert layout.to_linear(case["shape"]) == layout_of_json(case["expected"])


def test_triton_unittest_equal_layouts_properties() -> None:
    """The AMD ``equal_layouts`` properties (e.g. dot operands of transposed vs non-transposed MFMA parents)."""
    from .oracle import load_conversions

    properties = [
        p
        for p in load_conversions()["properties"]
        if p["property"] == "equal_layouts" and _is_amd_case(p["lhs"]) and _is_amd_case(p["rhs"])
    ]
    assert len(properties) >= 3
    for p in properties:
        lhs = catalog_of_json(p["lhs"]["layout_kind"], p["lhs"]["params"], BUILDERS).to_linear(p["lhs"]["shape"])
        rhs = catalog_of_json(p["rhs"]["layout_kind"], p["rhs"]["params"], BUILDERS).to_linear(p["rhs"]["shape"])
        assert lhs == rhs, p["name"]


# ----------------------------------------------------------------------------- seeds (blog 001)
def test_mfma_32x32_tile_of_blog_001() -> None:
    """MFMA 32x32 (fp32 accumulators): each of the 64 lanes holds 16 values; lanes 0..31 cover columns
    0..31 of rows 0..3, lanes 32..63 rows 4..7; registers then jump by 8 rows."""
    L = AMDMFMALayout(3, [32, 32, 8], False, [1, 1]).to_linear([32, 32])
    assert L.bases["register"] == [[1, 0], [2, 0], [8, 0], [16, 0]]
    assert L.bases["lane"] == [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [4, 0]]
    assert L.apply({"register": 5, "lane": 33}) == {"dim0": 13, "dim1": 1}
    assert L.is_invertible()
    # The blog's picture: row r, column c is held by lane c (rows 0..3 mod 8) or 32 + c (rows 4..7 mod 8).
    owner = {}
    for register in range(16):
        for lane in range(64):
            x = L.apply({"register": register, "lane": lane})
            owner[x["dim0"], x["dim1"]] = lane
    assert owner == {(r, c): c + 32 * ((r // 4) % 2) for r in range(32) for c in range(32)}


def test_mfma_16x16_tile_of_blog_001() -> None:
    """MFMA 16x16: 4 values per lane along M; 16 lanes along N, the 4 groups of 16 lanes 4 rows apart."""
    L = AMDMFMALayout(3, [16, 16, 16], False, [1, 1]).to_linear([16, 16])
    assert L.bases["register"] == [[1, 0], [2, 0]]
    assert L.bases["lane"] == [[0, 1], [0, 2], [0, 4], [0, 8], [4, 0], [8, 0]]
    owner = {}
    for register in range(4):
        for lane in range(64):
            x = L.apply({"register": register, "lane": lane})
            owner[x["dim0"], x["dim1"]] = lane
    assert owner == {(r, c): c + 16 * (r // 4) for r in range(16) for c in range(16)}
    transposed = AMDMFMALayout(3, [16, 16, 16], True, [1, 1]).to_linear([16, 16])
    assert transposed.bases["register"] == [[0, 1], [0, 2]]


def test_wmma_versions_tiles() -> None:
    """WMMA v1 lanes 16..31 duplicate rows (odd rows: register stride 2); v2/v3 give them rows 8..15."""
    v1 = AMDWMMALayout(1, False, []).to_linear([16, 16])
    v2 = AMDWMMALayout(2, False, []).to_linear([16, 16])
    assert v1.bases["register"] == [[2, 0], [4, 0], [8, 0]]
    assert v1.bases["lane"][4] == [1, 0]
    assert v2.bases["register"] == [[1, 0], [2, 0], [4, 0]]
    assert v2.bases["lane"][4] == [8, 0]
    tall = AMDWMMALayout(3, False, [], instr_shape=[32, 16, 64]).to_linear([32, 16])
    assert tall.bases["register"] == [[1, 0], [2, 0], [4, 0], [16, 0]]


def test_choose_wmma_cta_linear_layout_matches_classic_parameters() -> None:
    """warps walk the last dim first, in units of one tile; tiles_per_warp registers come before warps."""
    cta = choose_wmma_cta_linear_layout(2, [2, 4], [2, 1])
    assert cta.bases["warp"] == [[0, 1], [0, 2], [2, 0]]
    assert cta.bases["register"] == [[1, 0]]
    layout = AMDWMMALayout.from_warps_per_cta(2, False, [2, 4], [2, 1])
    assert layout.warp_bases == ((0, 1), (0, 2), (2, 0)) and layout.reg_bases == ((1, 0),)


def test_classic_parameters_round_trip() -> None:
    rng = random.Random(3)
    for _ in range(100):
        rank = rng.choice([2, 3])
        warps = tuple(rng.choice([1, 2, 4, 8]) for _ in range(rank))
        tiles = tuple(rng.choice([1, 2, 4]) for _ in range(rank))
        version = rng.randint(1, 3)
        instr = rng.choice(WMMA_INSTR_SHAPES[version])
        layout = AMDWMMALayout.from_warps_per_cta(version, rng.random() < 0.5, warps, tiles, instr)
        assert layout.classic_parameters() == (warps, tiles)
    with pytest.raises(LayoutError, match=r"warp_bases / reg_bases have no warps_per_cta /"):
        AMDWMMALayout(2, False, [[1, 0], [0, 1]]).classic_parameters()  # walks dim0 first
    with pytest.raises(LayoutError, match=r"warp_bases / reg_bases have no warps_per_cta /"):
        AMDWMMALayout(2, False, [[0, 0], [0, 1]]).classic_parameters()  # a broadcast warp


def test_classes_are_frozen_hashable_and_normalize_lists() -> None:
    a = AMDMFMALayout(3, [32, 32, 8], False, [2, 2])
    b = AMDMFMALayout(3, (32, 32, 8), False, (2, 2), 32, (1, 1), ())
    assert a == b and hash(a) == hash(b)
    assert a.element_bitwidth == 32 and a.tiles_per_warp == (1, 1)
    with pytest.raises(dataclasses.FrozenInstanceError, match=r"cannot assign to field 'version'"):
        a.version = 4  # type: ignore[misc]
    w = AMDWMMALayout(2, False, [[0, 1]])
    assert w.reg_bases == () and w.instr_shape == (16, 16, 16) and w.rank == 2
    assert hash(w) == hash(AMDWMMALayout(2, False, ((0, 1),), [], [16, 16, 16], [], 2))


# ----------------------------------------------------------------------------- random valid parameters
def _random_cga(rng: random.Random, rank: int, max_bits: int = 2) -> list[list[int]]:
    """A valid 3.9 ``cga_layout``: powers of two along random dims (1, 2, .. per dim) and zero bases."""
    bases: list[list[int]] = []
    per_dim = [0] * rank
    for _ in range(rng.choice([0, 0, 1, 1, 2, max_bits])):
        if rng.random() < 0.25:
            bases.append([0] * rank)
        else:
            d = rng.randrange(rank)
            vector = [0] * rank
            vector[d] = 1 << per_dim[d]
            per_dim[d] += 1
            bases.append(vector)
    return bases


def _random_distributed_bases(rng: random.Random, rank: int, n_reg_max: int = 2):
    """Random valid (reg_bases, warp_bases): together 1, 2, .. along each dim in a random order (a
    permutation matrix), with an occasional zero (broadcast) basis; at most ``n_reg_max`` register bases."""
    bits = [rng.randint(0, 2) for _ in range(rank)]
    vectors = []
    for d, count in enumerate(bits):
        for i in range(count):
            v = [0] * rank
            v[d] = 1 << i
            vectors.append(v)
    rng.shuffle(vectors)
    for _ in range(rng.choice([0, 0, 0, 1])):
        vectors.insert(rng.randrange(len(vectors) + 1), [0] * rank)
    cut = rng.randint(0, min(len(vectors), n_reg_max))
    return vectors[:cut], vectors[cut:]


def _random_shape_exponent(rng: random.Random, tile_log2: int) -> int:
    return max(0, tile_log2 + rng.randint(-3, 2))


def random_mfma(rng: random.Random) -> AMDMFMALayout:
    rank = rng.choice([2, 2, 2, 3])
    m, n = rng.choice([(32, 32), (16, 16), (16, 16), (32, 32), (64, 4), (4, 64)])
    transposed = True if (m, n) == (64, 4) else rng.random() < 0.5
    k = {32: 8, 16: 16, 64: 4, 4: 4}[m] * rng.choice([1, 2])
    warps = [rng.choice([1, 1, 2, 4]) for _ in range(rank)]
    tiles = [rng.choice([1, 1, 2]) for _ in range(rank)]
    return AMDMFMALayout(
        rng.randint(1, 4),
        [m, n, k],
        transposed,
        warps,
        rng.choice([None, 32, 64]),
        rng.choice([None, tiles]),
        _random_cga(rng, rank),
    )


def random_wmma(rng: random.Random) -> AMDWMMALayout:
    version = rng.randint(1, 3)
    rank = rng.choice([2, 2, 2, 3])
    instr = list(rng.choice(WMMA_INSTR_SHAPES[version]))
    if rng.random() < 0.4:
        warps = [rng.choice([1, 2, 4]) for _ in range(rank)]
        tiles = [rng.choice([1, 1, 2]) for _ in range(rank)]
        cta = choose_wmma_cta_linear_layout(rank, warps, tiles).bases
        reg, warp = cta["register"], cta["warp"]
    else:
        reg, warp = _random_distributed_bases(rng, rank)
    return AMDWMMALayout(version, rng.random() < 0.5, warp, reg, instr, _random_cga(rng, rank), rank)


def _tile_log2(layout: LinearLayout) -> list[int]:
    return [layout.out_dim_size_log2(d) for d in layout.out_dim_names]


def random_shape(rng: random.Random, natural: list[int]) -> list[int]:
    """A shape around the layout's natural tile: smaller (broadcast) or larger (repeats), <= 2**16 elements."""
    while True:
        shape = [1 << _random_shape_exponent(rng, t) for t in natural]
        if len(shape) == 3:
            shape[0] = 1 << rng.randint(0, 2)
        if sum(s.bit_length() - 1 for s in shape) <= 16:
            return shape


def _natural_tile(parent, operand_index: int | None = None, k_extent: int = 32) -> list[int]:
    """log2 sizes of the parent's tile over one CTA (for an operand: its non-K extent, and ``k_extent`` along K)."""
    rank = parent.rank
    if isinstance(parent, AMDMFMALayout):
        m, n = parent.instr_shape[0], parent.instr_shape[1]
        extents = [1] * rank
        extents[-2] = m * parent.tiles_per_warp[-2] * parent.warps_per_cta[-2]
        extents[-1] = n * parent.tiles_per_warp[-1] * parent.warps_per_cta[-1]
    else:
        tile = parent.tile_layout() * parent.cta_layout()
        extents = [tile.out_dim_size(f"dim{d}") for d in range(rank)]
    if operand_index is not None:
        k_dim = rank - 1 if operand_index == 0 else rank - 2
        extents[k_dim] = k_extent
    return [e.bit_length() - 1 for e in extents]


def _gluon_of(layout):
    """The Gluon 3.9 object of one of our AMD layouts (or of a DotOperandLayout with an AMD parent)."""
    if isinstance(layout, DotOperandLayout):
        return gluon_class("DotOperandLayout")(layout.operand_index, _gluon_of(layout.parent), layout.k_width)
    if isinstance(layout, SliceLayout):
        return gluon_class("SliceLayout")(layout.dim, _gluon_of(layout.parent))
    cga = [list(v) for v in layout.cga_layout]
    if isinstance(layout, AMDMFMALayout):
        return gluon_class("AMDMFMALayout")(
            layout.version,
            list(layout.instr_shape),
            layout.transposed,
            list(layout.warps_per_cta),
            layout.element_bitwidth,
            list(layout.tiles_per_warp),
            cga,
        )
    return gluon_class("AMDWMMALayout")(
        layout.version,
        layout.transposed,
        [list(v) for v in layout.warp_bases],
        [list(v) for v in layout.reg_bases],
        list(layout.instr_shape),
        cga,
        layout.rank,
    )


def _random_k_width(rng: random.Random, parent) -> int:
    if isinstance(parent, AMDWMMALayout):
        if parent.version == 1:
            return rng.choice([8, 16])
        if parent.version == 2:
            return rng.choice([4, 8, 16])
        return rng.choice([1, 2, 4, 8, 16, 32, 64, 128])
    return rng.choice([1, 2, 4, 8, 16, 32, 64])


def _random_case(rng: random.Random):
    """One random valid (layout, shape, natural tile log2 sizes): accumulator or dot operand of MFMA / WMMA."""
    parent = random_mfma(rng) if rng.random() < 0.5 else random_wmma(rng)
    if rng.random() < 0.5:
        natural = _natural_tile(parent)
        return parent, random_shape(rng, natural), natural
    operand_index = rng.randint(0, 1)
    layout = DotOperandLayout(operand_index, parent, _random_k_width(rng, parent))
    natural = _natural_tile(parent, operand_index, 1 << rng.randint(2, 7))
    if rng.random() < 0.2:  # a slice of an accumulator or of a dot operand
        layout = SliceLayout(rng.randrange(parent.rank), layout if rng.random() < 0.5 else parent)
        del natural[layout.dim]
    return layout, random_shape(rng, natural), natural


def _kind(layout) -> str:
    """"AMDMFMALayout", "dot:AMDWMMALayout", "slice:dot:AMDMFMALayout", ..."""
    if isinstance(layout, SliceLayout):
        return "slice:" + _kind(layout.parent)
    if isinstance(layout, DotOperandLayout):
        return "dot:" + _kind(layout.parent)
    return type(layout).__name__


DIFFERENTIAL_CASES = 2000


def test_differential_against_triton_random_valid() -> None:
    """0 mismatches with triton 3.9's ``to_linear_layout`` on seeded random valid parameter sets."""
    pytest.importorskip("triton")
    rng = random.Random(20261122)
    kinds: dict[str, int] = {}
    smaller = larger = 0
    mismatches = []
    for i in range(DIFFERENTIAL_CASES):
        layout, shape, natural = _random_case(rng)
        ours = layout.to_linear(shape)
        theirs = oracle_linear(_gluon_of(layout), shape)
        kind = _kind(layout)
        kinds[kind] = kinds.get(kind, 0) + 1
        smaller += any(s < 1 << t for s, t in zip(shape, natural))
        larger += any(s > 1 << t for s, t in zip(shape, natural))
        if ours != theirs:
            mismatches.append((i, layout, shape, ours, theirs))
    assert not mismatches, f"{len(mismatches)} mismatches, first: {mismatches[0]}"
    assert min(kinds.values()) >= 30 and len(kinds) == 8, kinds
    assert sum(v for k, v in kinds.items() if not k.startswith("slice")) >= 1600
    assert smaller >= 400 and larger >= 400, (smaller, larger)


# ----------------------------------------------------------------------------- fuzzed invalid parameters
def _invalid_mfma_kwargs(rng: random.Random) -> dict:
    good = dict(version=3, instr_shape=[32, 32, 8], transposed=False, warps_per_cta=[2, 2],
                element_bitwidth=32, tiles_per_warp=[1, 1], cga_layout=[])
    bad = dict(good)
    field, value = rng.choice([
        ("version", rng.choice([0, 5, -1, 7, "3", 3.0, None, True])),
        ("instr_shape", rng.choice([[32, 16, 8], [8, 8, 4], [64, 64, 4], [32, 32], [32, 32, 8, 1], "32x32", None,
                                    [32.0, 32, 8], [16, 16, -1]])),
        ("transposed", rng.choice([1, 0, "yes", None, 2.5])),
        ("warps_per_cta", rng.choice([[3, 1], [2], [2, 2, 2, 2], [], [0, 1], [-2, 1], [2, "2"], 4, None])),
        ("element_bitwidth", rng.choice([16, 8, 0, 128, "32", 33])),
        ("tiles_per_warp", rng.choice([[3, 1], [1], [1, 1, 1], [0, 1], "11", [1.5, 1]])),
        ("cga_layout", rng.choice([[[3, 0]], [[1]], [[1, 0], [1, 0]], [[2, 0]], [[1, 1]], [[-1, 0]], "x",
                                   [[1, 0, 0]]])),
    ])
    bad[field] = value
    if field == "instr_shape" and value == [64, 4, 4]:
        bad["transposed"] = False
    return bad


def _invalid_wmma_kwargs(rng: random.Random) -> dict:
    good = dict(version=2, transposed=False, warp_bases=[[0, 1], [1, 0]], reg_bases=[], instr_shape=[16, 16, 16],
                cga_layout=[], rank=2)
    bad = dict(good)
    field, value = rng.choice([
        ("version", rng.choice([0, 4, -1, "2", 2.0, None])),
        ("instr_shape", rng.choice([[16, 16, 64], [32, 16, 16], [16, 32, 16], [16, 16], [16, 16, 8], "16"])),
        ("warp_bases", rng.choice([[[0, 2]], [[0, 1, 0]], [[1]], [[3, 0]], [[1, 0], [3, 0]], [[0, -1]], [[0, 1.0]],
                                   "w", [[2, 0], [4, 0]]])),
        ("reg_bases", rng.choice([[[0, 2]], [[1, 0, 0]], [[5, 0]], 7, [[0, 1]], [[1, 1]], [[1, 0], [1, 0]]])),
        ("cga_layout", rng.choice([[[3, 0]], [[1]], [[1, 0], [1, 0]], [[2, 0]]])),
        ("rank", rng.choice([1, 4, 0, "2"])),
        ("transposed", rng.choice([1, None, "no"])),
    ])
    bad[field] = value
    if field == "instr_shape" and value == [16, 16, 64]:
        bad["version"] = rng.choice([1, 2])
    return bad


# every message starts with the argument it is about (a different error would not)
_ARGUMENTS = ("version", "instr_shape", "transposed", "warps_per_cta", "element_bitwidth", "tiles_per_warp",
              "cga_layout", "warp_bases", "reg_bases", "rank", "shape", "operand_index", "k_width")
_NAMES_AN_ARGUMENT = rf"^({'|'.join(_ARGUMENTS)})\b"


def test_fuzzed_invalid_parameters_raise_layout_error() -> None:
    """300 seeded invalid parameter sets (classes, dot operands, shapes): each raises LayoutError naming the
    argument, and every argument's rules are met."""
    rng = random.Random(7)
    named = set()
    for i in range(300):
        choice = rng.randrange(6)
        with pytest.raises(LayoutError, match=_NAMES_AN_ARGUMENT) as info:
            if choice == 0:
                AMDMFMALayout(**_invalid_mfma_kwargs(rng))
            elif choice == 1:
                AMDWMMALayout(**_invalid_wmma_kwargs(rng))
            elif choice == 2:  # bad shapes for valid layouts
                layout = rng.choice([random_mfma(rng), random_wmma(rng)])
                shape = rng.choice([[16], [16, 16, 16, 16], [24, 16], [16, 0], [16, -16], "16x16", [16.0, 16], None])
                if layout.rank == 3 and isinstance(shape, list) and len(shape) == 4:
                    shape = [16, 16]
                layout.to_linear(shape)
            elif choice == 3:  # bad MFMA dot operands
                parent = random_mfma(rng)
                op, k_width = rng.choice([(2, 4), (-1, 4), (0, 0), (1, 0), (0, 3), (1, 6), (0, -4), ("0", 4)])
                DotOperandLayout(op, parent, k_width).to_linear([16] * parent.rank)
            elif choice == 4:  # bad WMMA dot operands
                parent = random_wmma(rng)
                allowed = {1: [2, 4, 32, 0, 3], 2: [2, 32, 0, 12], 3: [0, 3, 12, -8]}[parent.version]
                op = rng.choice([0, 1, 2])
                k_width = rng.choice(allowed) if op != 2 else 8
                DotOperandLayout(op, parent, k_width).to_linear([16] * parent.rank)
            else:  # choose_wmma_cta_linear_layout / from_warps_per_cta
                args = rng.choice([(2, [3, 1], None), (2, [2], None), (4, [1, 1, 1, 1], None), (2, [2, 2], [3, 1])])
                if rng.random() < 0.5:
                    choose_wmma_cta_linear_layout(*args)
                else:
                    AMDWMMALayout.from_warps_per_cta(2, False, args[1], args[2])
        named.add(re.match(_NAMES_AN_ARGUMENT, str(info.value)).group(1))
    assert named == set(_ARGUMENTS)


def test_invalid_error_messages_name_the_parameter() -> None:
    cases = [
        (lambda: AMDMFMALayout(5, [32, 32, 8], False, [1, 1]), "version"),
        (lambda: AMDMFMALayout(3, [32, 16, 8], False, [1, 1]), "instr_shape"),
        (lambda: AMDMFMALayout(3, [64, 4, 4], False, [1, 1]), "transposed"),
        (lambda: AMDMFMALayout(3, [32, 32, 8], False, [1, 1], 16), "element_bitwidth"),
        (lambda: AMDMFMALayout(3, [32, 32, 8], False, [1]), "warps_per_cta"),
        (lambda: AMDWMMALayout(1, False, [], instr_shape=[16, 16, 32]), "instr_shape"),
        (lambda: AMDWMMALayout(2, False, [[0, 2]]), "warp_bases"),
        (lambda: DotOperandLayout(0, AMDWMMALayout(2, False, []), 2).to_linear([16, 16]), "k_width"),
        (lambda: DotOperandLayout(0, AMDMFMALayout(3, [32, 32, 8], False, [1, 1]), 0).to_linear([16, 16]), "k_width"),
    ]
    for build, word in cases:
        with pytest.raises(LayoutError, match=word):
            build()


# ----------------------------------------------------------------------------- Triton rejects them too
# Each expression is valid Python for both Gluon (``gl``, ``amd``) and this package (same class names
# and signatures); ``shape`` is the tensor shape. Triton rejects each one, by a Python exception (Gluon's
# ``verify`` asserts, ``DotOperandEncodingAttr::verify``) or by aborting in a C++ assert.
TRITON_REJECTS = [
    (("amd.AMDMFMALayout(0, [32, 32, 8], False, [1, 1])", [32, 32]),
     r"version must be in the \[1, 4\] range \(gfx908 \.\. gfx950\)"),
    (("amd.AMDMFMALayout(5, [32, 32, 8], False, [1, 1])", [32, 32]),
     r"version must be in the \[1, 4\] range \(gfx908 \.\. gfx950\)"),
    (("amd.AMDMFMALayout(3, [32, 16, 8], False, [1, 1])", [32, 32]),
     r"instr_shape: \(M, N\) must be one of \[\[32, 32\], \[16, 16\]"),
    (("amd.AMDMFMALayout(3, [32, 32, 8], False, [1, 1], 16)", [32, 32]), r"element_bitwidth must be 32 or 64"),
    (("amd.AMDMFMALayout(3, [32, 32, 8], False, [1, 1], cga_layout=[[1]])", [32, 32]),
     r"cga_layout\[0\] must have one entry per tensor dimension \(2\)"),
    (("amd.AMDMFMALayout(3, [64, 4, 4], False, [1, 1])", [64, 64]),
     r"transposed must be True for a 64x4 instr_shape"),
    (("amd.AMDMFMALayout(3, [32, 32, 8], False, [3, 1])", [64, 64]), r"warps_per_cta\[0\] must be a power of two"),
    (("amd.AMDMFMALayout(3, [32, 32, 8], False, [2, 1], tiles_per_warp=[3, 1])", [64, 64]),
     r"tiles_per_warp\[0\] must be a power of two"),
    (("amd.AMDMFMALayout(3, [32, 32, 8], False, [2])", [64]), r"warps_per_cta must have 2 or 3 entries"),
    (("amd.AMDMFMALayout(3, [32, 32, 8], False, [2, 1, 1, 1])", [2, 2, 64, 64]),
     r"warps_per_cta must have 2 or 3 entries"),
    (("amd.AMDMFMALayout(3, [32, 32, 8], False, [2, 2], cga_layout=[[3, 0]])", [64, 64]),
     r"cga_layout\[0\] must be 0 or have a single non-zero entry"),
    (("amd.AMDMFMALayout(3, [32, 32, 8], False, [2, 1])", [48, 64]), r"shape\[0\] must be a power of two"),
    (("amd.AMDWMMALayout(4, False, [[0, 1]])", [32, 32]),
     r"version must be in the \[1, 3\] range \(RDNA3, RDNA4, gfx1250\)"),
    (("amd.AMDWMMALayout(2, False, [[0, 1, 0]])", [32, 32]),
     r"warp_bases\[0\] must have one entry per tensor dimension \(2\)"),
    (("amd.AMDWMMALayout(1, False, [[0, 1]], [], [16, 16, 32])", [32, 32]),
     r"instr_shape must be one of \[\[16, 16, 16\]\] for WMMA version 1"),
    (("amd.AMDWMMALayout(3, False, [[0, 1]], [], [16, 16, 16])", [32, 32]),
     r"instr_shape must be one of \[\[16, 16, 4\], \[16, 16, 32\], \[16"),
    (("amd.AMDWMMALayout(3, False, [[0, 1]], [], [32, 16, 32])", [32, 32]),
     r"instr_shape must be one of \[\[16, 16, 4\], \[16, 16, 32\], \[16"),
    (("amd.AMDWMMALayout(2, False, [[0, 2]])", [64, 64]),
     r"reg_bases, warp_bases: the bases along dim 1 must be 1, 2"),
    (("amd.AMDWMMALayout(2, False, [[1, 0], [3, 0]])", [64, 64]),
     r"warp_bases\[1\] must be 0 or have a single non-zero entry"),
    (("amd.AMDWMMALayout(2, False, [[0, 1]], [[0, 1]])", [64, 64]),
     r"warp_bases\[0\] = \[0, 1\] repeats a basis of reg_bases"),
    (("amd.AMDWMMALayout(2, False, [[1]], rank=1)", [64]), r"rank must have 2 or 3 entries"),
    (("gl.DotOperandLayout(0, amd.AMDMFMALayout(3, [32, 32, 8], False, [2, 2]), 0)", [64, 64]),
     r"k_width is mandatory \(non-zero\) for an AMDMFMALayout parent"),
    (("gl.DotOperandLayout(2, amd.AMDMFMALayout(3, [32, 32, 8], False, [2, 2]), 4)", [64, 64]),
     r"operand_index must be 0 \(A\) or 1 \(B\)"),
    (("gl.DotOperandLayout(0, amd.AMDMFMALayout(3, [32, 32, 8], False, [2, 2]), 3)", [64, 64]),
     r"k_width must be a power of two"),
    (("gl.DotOperandLayout(0, amd.AMDWMMALayout(1, False, [[0, 1]]), 4)", [64, 64]),
     r"k_width must be one of \[8, 16\] for WMMA version 1"),
    (("gl.DotOperandLayout(1, amd.AMDWMMALayout(2, False, [[0, 1]]), 2)", [64, 64]),
     r"k_width must be one of \[4, 8, 16\] for WMMA version 2"),
    (("gl.DotOperandLayout(0, amd.AMDWMMALayout(3, False, [[0, 1]], [], [16, 16, 4]), 3)", [64, 64]),
     r"k_width must be a power of two"),
]

_TRITON_CHILD = """
import json, sys
from triton._C.libtriton import gluon_ir, ir
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language import amd
context = ir.context(); ir.load_dialects(context); builder = gluon_ir.GluonOpBuilder(context)
for index, (expr, shape) in enumerate(json.loads(sys.argv[1])):
    print("START", index, flush=True)
    try:
        layout = eval(expr)
        builder.to_linear_layout(layout._to_ir(builder), shape)
    except BaseException as error:
        print("REJECTED", index, flush=True)
        continue
    print("ACCEPTED", index, flush=True)
"""


def _triton_verdicts(cases: list[tuple[str, list[int]]]) -> list[str]:
    """Triton's verdict ("ACCEPTED" / "REJECTED" / "ABORTED") on each (expression, shape), running them in a
    child process that is restarted after each C++ assert abort."""
    import json
    import subprocess
    import sys

    verdicts: list[str] = []
    while len(verdicts) < len(cases):
        rest = cases[len(verdicts):]
        run = subprocess.run([sys.executable, "-c", _TRITON_CHILD, json.dumps(rest)],
                             capture_output=True, text=True, timeout=300)
        lines = [line.split() for line in run.stdout.splitlines() if line.split()]
        found = [words[0] for words in lines if words[0] in ("ACCEPTED", "REJECTED")]
        verdicts += found
        if len(found) < len(rest):
            if run.returncode == 0 or not lines or lines[-1][0] != "START":  # pragma: no cover - child broken
                raise RuntimeError(f"triton child failed: {run.stderr[-2000:]}")
            verdicts.append("ABORTED")
    return verdicts


def test_invalid_sets_are_rejected_by_triton_too() -> None:
    """Our LayoutError rules agree with Triton 3.9: every set above is rejected by both (Triton in a child
    process, since many of its checks are C++ asserts that abort)."""
    pytest.importorskip("triton")
    import types

    ours = types.SimpleNamespace(AMDMFMALayout=AMDMFMALayout, AMDWMMALayout=AMDWMMALayout,
                                 DotOperandLayout=DotOperandLayout)
    for (expr, shape), rule in TRITON_REJECTS:
        with pytest.raises(LayoutError, match=rule):
            eval(expr, {"amd": ours, "gl": ours}).to_linear(shape)

    control = ("gl.DotOperandLayout(1, amd.AMDWMMALayout(3, True, [[0, 1]], [], [32, 16, 64]), 8)", [64, 64])
    verdicts = _triton_verdicts([control] + [case for case, _ in TRITON_REJECTS])
    assert verdicts[0] == "ACCEPTED"  # the child itself works
    accepted = [expr for ((expr, _), _), verdict in zip(TRITON_REJECTS, verdicts[1:]) if verdict == "ACCEPTED"]
    assert not accepted, accepted
    assert verdicts.count("ABORTED") >= 10 and verdicts.count("REJECTED") >= 10
