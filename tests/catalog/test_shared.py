"""Tests of catalog/shared.py: SwizzledSharedLayout, NVMMASharedLayout, AMDRotatingSharedLayout,
PaddedSharedLayout.

- every swizzled_shared / nvmma_shared / amd_rotating_shared case of Triton's unit tests
  (conversions.json) and its padded_shared properties;
- differential against triton 3.9's ``GluonOpBuilder.to_linear_layout`` on seeded random valid
  parameter sets (shared layouts keep every basis there: no normalization is needed);
- a simulation of the swizzle formulas on every offset (pow2 parameters), the Gluon docstring's
  padded examples, and fuzzed invalid parameter sets (each must raise LayoutError).
"""

from __future__ import annotations

import itertools
import json
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.layouts.shared import (
    AMDRotatingSharedLayout,
    NVMMASharedLayout,
    PaddedSharedLayout,
    SwizzledSharedLayout,
    reshape_layout,
    shape_per_cta,
    transpose_layout,
)

from .oracle import cga_of_json, gluon_class, layout_of_json, load_conversions, oracle_linear

# ------------------------------------------------------------------------------------------ helpers


def _ours_of_case(kind: str, params: dict):
    cga = cga_of_json(params)
    if kind == "swizzled_shared":
        return SwizzledSharedLayout(params["vec"], params["perPhase"], params["maxPhase"], params["order"], cga)
    if kind == "amd_rotating_shared":
        return AMDRotatingSharedLayout(params["vec"], params["perPhase"], params["maxPhase"], params["order"], cga)
    if kind == "nvmma_shared":
        return NVMMASharedLayout(
            params["swizzleByteWidth"],
            params["elementBitWidth"],
            params["rank"],
            params["transposed"],
            params["fp4Padded"],
            cga,
        )
    raise AssertionError(kind)


# ----------------------------------------------------------------------------- Triton's unit tests

SHARED_KINDS = ("swizzled_shared", "nvmma_shared", "amd_rotating_shared")


def test_conversions_json_shared_cases():
    """Every swizzled / NVMMA / AMD-rotating case of LinearLayoutConversionsTest.cpp, bit for bit."""
    cases = [c for c in load_conversions()["cases"] if c["layout_kind"] in SHARED_KINDS]
    counts = {kind: 0 for kind in SHARED_KINDS}
    for case in cases:
        ours = _ours_of_case(case["layout_kind"], case["params"]).to_linear(case["shape"])
        assert ours == layout_of_json(case["expected"]), case["name"]
        counts[case["layout_kind"]] += 1
    assert counts == {"swizzled_shared": 10, "nvmma_shared": 9, "amd_rotating_shared": 4}


def test_conversions_json_nvmma_tma_mode_properties():
    """The 8 TMA-mode-independence properties (Tiled == Im2Col, no explicit value): our layout at those
    shapes is a memory layout (invertible) of the right shape, and equals triton 3.9's."""
    props = [
        p
        for p in load_conversions()["properties"]
        if p["lhs"]["layout_kind"] == "nvmma_shared_to_linear_layout_tma_mode"
    ]
    assert len(props) == 8
    for prop in props:
        params = prop["lhs"]["params"]
        assert params["encoding"] == prop["rhs"]["params"]["encoding"]
        ours = _ours_of_case("nvmma_shared", params["encoding"]["params"])
        layout = ours.to_linear(params["shape"])
        assert layout.is_invertible(), prop["name"]
        assert layout.out_dims == {"dim0": params["shape"][0], "dim1": params["shape"][1]}
        assert layout == oracle(ours, params["shape"]), prop["name"]


def test_conversions_json_padded_properties():
    """PaddedTest.TestMultiCTA: the offset sublayout of the identity padded layout is injective."""
    props = [p for p in load_conversions()["properties"] if p["lhs"]["layout_kind"] == "padded_shared"]
    assert len(props) == 2
    for prop in props:
        params = prop["lhs"]["params"]
        cga = dict(params["CGA"]["CGALinearLayout"]["bases"])["block"]
        padded = PaddedSharedLayout.with_identity_for(
            params["intervalPaddingPairs"], params["shape"], params["order"], cga
        )
        component = padded.to_linear()
        offsets = component.sublayout(["offset"], list(component.out_dim_names))
        assert offsets.is_injective() is prop["expected"], prop["name"]
        assert component.out_dims == {"dim0": 16, "dim1": 128}


# ------------------------------------------------------------------------- the Triton 3.9 oracle


def oracle(layout, shape) -> LinearLayout:
    """Triton 3.9's ``to_linear_layout`` of the Gluon twin of a swizzled / NVMMA layout of ours."""
    if isinstance(layout, SwizzledSharedLayout):
        gluon = gluon_class("SwizzledSharedLayout")(
            layout.vec, layout.per_phase, layout.max_phase, list(layout.order), [list(b) for b in layout.cga_layout]
        )
    else:
        gluon = gluon_class("NVMMASharedLayout")(
            layout.swizzle_byte_width,
            layout.element_bitwidth,
            layout.rank,
            layout.transposed,
            layout.fp4_padded,
            [list(b) for b in layout.cga_layout],
        )
    return oracle_linear(gluon, shape)


def _random_cga(rng: random.Random, rank: int) -> list[list[int]]:
    """0-3 CTA bits: each a zero basis (CTAs sharing data) or the next power of two along a dim."""
    used = [0] * rank
    bases = []
    for _ in range(rng.choice([0, 0, 0, 1, 2, 3])):
        if rng.random() < 0.2:
            bases.append([0] * rank)
            continue
        dim = rng.randrange(rank)
        bases.append([1 << used[dim] if i == dim else 0 for i in range(rank)])
        used[dim] += 1
    return bases


def _random_shape(rng: random.Random, rank: int, max_log: int = 13) -> list[int]:
    logs = [rng.randint(0, 8) for _ in range(rank)]
    while sum(logs) > max_log:
        logs[rng.randrange(rank)] = max(0, logs[rng.randrange(rank)] - 1)
        logs = [max(0, x) for x in logs]
        if sum(logs) > max_log:
            i = max(range(rank), key=lambda j: logs[j])
            logs[i] -= 1
    return [1 << x for x in logs]


def random_swizzled(rng: random.Random) -> tuple[SwizzledSharedLayout, list[int]]:
    """A random valid swizzled layout and shape (shapes both below and above the swizzle tile)."""
    rank = rng.choice([1, 2, 2, 2, 3, 4])
    order = list(range(rank))
    rng.shuffle(order)
    vec = rng.choice([1, 1, 2, 4, 8, 16, 3])
    per_phase = rng.choice([1, 1, 2, 4, 8])
    max_phase = rng.choice([1, 2, 4, 8, 16])
    layout = SwizzledSharedLayout(vec, per_phase, max_phase, order, _random_cga(rng, rank))
    return layout, _random_shape(rng, rank)


def random_nvmma(rng: random.Random) -> tuple[NVMMASharedLayout, list[int]]:
    """A random valid NVMMA layout and a shape that is usually large enough for its TMA box."""
    swizzle = rng.choice([0, 32, 64, 128])
    bitwidth = rng.choice([8, 16, 32, 64])
    rank = rng.choice([1, 2, 2, 2, 3, 4]) if swizzle == 0 else rng.choice([2, 2, 2, 3, 4])
    transposed = rng.random() < 0.4
    fp4_padded = swizzle == 128 and bitwidth == 8 and rng.random() < 0.5
    cga = _random_cga(rng, rank)
    layout = NVMMASharedLayout(swizzle, bitwidth, rank, transposed, fp4_padded, cga)
    shape = _random_shape(rng, rank, 14)
    if swizzle and rng.random() < 0.8:  # grow the contiguous and the outer dims past one core matrix
        contig = 0 if transposed else rank - 1
        need = 8 * swizzle // bitwidth // (2 if fp4_padded else 1)
        shape[contig] = max(shape[contig], need * rng.choice([1, 1, 2, 4]) * (1 << len(cga)))
        outer = [i for i in range(rank) if i != contig]
        shape[rng.choice(outer)] *= rng.choice([8, 16, 32])
    return layout, shape


def test_differential_swizzled_shared():
    """1000 seeded random swizzled layouts (ranks 1-4, CGA splits and broadcasts) equal Triton 3.9's."""
    rng = random.Random(20260311)
    compared = broadcast = 0
    for _ in range(1000):
        layout, shape = random_swizzled(rng)
        ours = layout.to_linear(shape)
        if ours.in_dim_size("offset") == 1:
            continue  # Gluon's SharedLinearLayout cannot hold an empty offset_bases list
        assert ours == oracle(layout, shape), (layout, shape)
        compared += 1
        broadcast += any(not any(v) for vs in ours.bases.values() for v in vs)
    assert compared >= 900
    assert broadcast >= 30  # shapes smaller than the CGA tile: zero (broadcast) bases


def test_differential_nvmma_shared():
    """Seeded random NVMMA layouts (every swizzle width, element bitwidth, transposed, fp4-padded, rank
    1-4, CGA) equal Triton 3.9's; parameter/shape pairs that Triton aborts on raise LayoutError here."""
    rng = random.Random(4242)
    compared = rejected = broadcast = repeated = 0
    for _ in range(1500):
        layout, shape = random_nvmma(rng)
        try:
            ours = layout.to_linear(shape)
        except LayoutError:
            rejected += 1
            continue
        if ours.in_dim_size("offset") == 1:
            continue
        assert ours == oracle(layout, shape), (layout, shape)
        compared += 1
        broadcast += any(not any(v) for vs in ours.bases.values() for v in vs)
        repeated += any(s > 256 for s in shape)  # beyond one TMA box: the box is repeated
    assert compared >= 1100, (compared, rejected)
    assert rejected >= 100  # the too-small shapes are exercised too (Triton aborts on all of them)
    assert broadcast >= 30 and repeated >= 100


# ------------------------------------------------------------------ simulations of the formulas


def _pow2_params(rng: random.Random):
    return rng.choice([1, 2, 4, 8]), rng.choice([1, 2, 4]), rng.choice([1, 2, 4, 8])


def test_swizzle_formulas_on_every_offset():
    """For power-of-two parameters the layouts are the XOR swizzles of Def. 4.11 / Triton's lowering:
    offset ``row * cols + c`` holds element ``(row, c ^ (vec * phase(row) mod cols))``; the rotating
    layout XORs the phase with the row's block number ``(row / (per_phase * max_phase)) mod max_phase``."""
    import numpy as np

    rng = random.Random(7)
    for _ in range(120):
        vec, per_phase, max_phase = _pow2_params(rng)
        rows, cols = rng.choice([1, 2, 8, 32, 64]), rng.choice([1, 4, 16, 64])
        offsets = np.arange(rows * cols)
        row, col = offsets // cols, offsets % cols
        phase = (row // per_phase) % max_phase
        block_no = (row // max_phase // per_phase) % max_phase
        for cls, swizzle in (
            (SwizzledSharedLayout, phase),
            (AMDRotatingSharedLayout, phase ^ block_no),
        ):
            layout = cls(vec, per_phase, max_phase, [1, 0]).to_linear([rows, cols])
            got = layout.apply_array({"offset": offsets})
            assert (got["dim0"] == row).all()
            assert (got["dim1"] == col ^ ((vec * swizzle) % cols)).all(), (cls.__name__, vec, per_phase, max_phase)


@settings(max_examples=60, deadline=None)
@given(
    vec=st.sampled_from([1, 2, 4, 8]),
    per_phase=st.sampled_from([1, 2, 4]),
    max_phase=st.sampled_from([1, 2, 4, 8]),
    rows=st.sampled_from([1, 2, 8, 32]),
    cols=st.sampled_from([1, 4, 16, 64]),
)
def test_swizzled_is_the_def_4_11_memory_layout(vec, per_phase, max_phase, rows, cols):
    """Def. 4.11 / Def. 4.14: the swizzled layout inverts the mma swizzle offset formula of
    characterize.py on every element, and is a memory layout (invertible, 1-2 bits per column)."""
    import numpy as np

    from linear_layouts.layouts.characterize import is_memory_layout, mma_swizzle_offset

    layout = SwizzledSharedLayout(vec, per_phase, max_phase, [1, 0]).to_linear([rows, cols])
    assert is_memory_layout(layout)
    offsets = [mma_swizzle_offset(i, j, cols=cols, vec=vec, per_phase=per_phase, max_phase=max_phase)
               for i in range(rows) for j in range(cols)]
    got = layout.apply_array({"offset": np.array(offsets)})
    assert got["dim0"].tolist() == [i for i in range(rows) for _ in range(cols)]
    assert got["dim1"].tolist() == [j for _ in range(rows) for j in range(cols)]


@settings(max_examples=40, deadline=None)
@given(
    swizzle=st.sampled_from([0, 32, 64, 128]),
    bits=st.sampled_from([8, 16, 32, 64]),
    transposed=st.booleans(),
    outer=st.sampled_from([8, 64, 512]),
    inner_factor=st.sampled_from([1, 2, 8]),
)
def test_nvmma_is_a_memory_layout(swizzle, bits, transposed, outer, inner_factor):
    """Every (non-fp4-padded, single-CTA) NVMMA layout that fits its core matrix is a memory layout."""
    from linear_layouts.layouts.characterize import is_memory_layout

    inner = max(1, 8 * swizzle // bits) * inner_factor
    shape = [inner, outer] if transposed else [outer, inner]
    assert is_memory_layout(NVMMASharedLayout(swizzle, bits, transposed=transposed).to_linear(shape))


def test_nvmma_matches_swizzled_equivalent():
    """An NVMMA layout on one core-matrix-wide tile is the swizzled layout with vec = 128 / bits,
    per_phase = 128 / swizzle, max_phase = swizzle / 16 (paper §5.1, the mma swizzle)."""
    for swizzle in (32, 64, 128):
        for bits in (8, 16, 32, 64):
            nvmma = NVMMASharedLayout(swizzle, bits)
            cols = 8 * swizzle // bits
            for rows in (8, 64, 256):
                swizzled = SwizzledSharedLayout(nvmma.vec, nvmma.per_phase, nvmma.max_phase, [1, 0])
                assert nvmma.to_linear([rows, cols]) == swizzled.to_linear([rows, cols]), (swizzle, bits, rows)
            assert nvmma.alignment == 128 * swizzle // 16


def test_nvmma_get_default_for_matches_gluon():
    """NVMMASharedLayout.get_default_for equals Gluon's on a grid of block shapes, dtypes and CGAs."""
    gluon = gluon_class("NVMMASharedLayout")
    from triton.experimental.gluon import language as gl

    dtypes = [gl.float16, gl.bfloat16, gl.float32, gl.float8e5, gl.int8, gl.float64]
    cgas = [None, [[1, 0]], [[0, 1], [0, 2]], [[1, 0], [0, 0]]]
    checked = 0
    for shape in ([64, 64], [8, 16], [4, 128], [128, 8], [16, 32], [256, 16], [2, 512], [32, 2]):
        for dtype in dtypes:
            for transposed, fp4_padded, cga in itertools.product([False, True], [False, True], cgas):
                if fp4_padded and dtype.primitive_bitwidth != 8:
                    continue
                try:
                    theirs = gluon.get_default_for(shape, dtype, transposed, fp4_padded, cga)
                except AssertionError:  # Gluon's asserts (fp4_padded without 128B swizzle, CGA split)
                    rule = r"fp4_padded requires swizzle_byte_width == 128|block_shape .* divisible by the CGA tile"
                    with pytest.raises(LayoutError, match=rule):
                        NVMMASharedLayout.get_default_for(shape, dtype, transposed, fp4_padded, cga)
                    checked += 1
                    continue
                ours = NVMMASharedLayout.get_default_for(shape, dtype, transposed, fp4_padded, cga)
                assert ours == NVMMASharedLayout(
                    theirs.swizzle_byte_width, theirs.element_bitwidth, theirs.rank, theirs.transposed,
                    theirs.fp4_padded, theirs.cga_layout,
                ), (shape, dtype, transposed, fp4_padded, cga)
                checked += 1
    assert checked > 500
    assert NVMMASharedLayout.get_default_for([64, 64], 16) == NVMMASharedLayout(128, 16)
    with pytest.raises(LayoutError, match=r"block_shape \[2, 64\] must be divisible by the CGA tile \[4, 1\]"):
        NVMMASharedLayout.get_default_for([2, 64], 16, cga_layout=[[1, 0], [2, 0]])


def test_nvmma_unswizzled_is_row_major_tiles_of_the_tma_box():
    """swizzle 0: row-major inside the (<= 256 per dim) TMA box, then boxes in dim order rank-1..0."""
    layout = NVMMASharedLayout(0, 16).to_linear([512, 512])
    expected = [[0, 1 << i] for i in range(8)] + [[1 << i, 0] for i in range(8)] + [[0, 256], [256, 0]]
    assert layout.bases["offset"] == expected
    expected_1d = LinearLayout.identity_1d(64, "offset", "dim0") * LinearLayout({"block": []}, {"dim0": 1})
    assert NVMMASharedLayout(0, 16, rank=1).to_linear([64]) == expected_1d


def _memory_table(layout: LinearLayout, rows: int, cols: int) -> list[list[int]]:
    """table[i][p] = flat logical index (row * cols + col) of the element at shared offset i * cols + p."""
    table = []
    for i in range(rows):
        coords = [layout.apply({"offset": i * cols + p}) for p in range(cols)]
        table.append([c["dim0"] * cols + c["dim1"] for c in coords])
    return table


def test_seed_blog_swizzled_shared_tables():
    """Blog 001's SwizzledSharedLayout tables, number for number (memory row i, position p -> logical
    element index): vec=1, perPhase=2, maxPhase=2 (an 8x4 tile) and vec=2, perPhase=1, maxPhase=4 (4x8)."""
    first = SwizzledSharedLayout(1, 2, 2, [1, 0]).to_linear([8, 4])
    assert _memory_table(first, 8, 4) == [
        [0, 1, 2, 3],
        [4, 5, 6, 7],
        [9, 8, 11, 10],
        [13, 12, 15, 14],
        [16, 17, 18, 19],
        [20, 21, 22, 23],
        [25, 24, 27, 26],
        [29, 28, 31, 30],
    ]
    second = SwizzledSharedLayout(2, 1, 4, [1, 0]).to_linear([4, 8])
    assert _memory_table(second, 4, 8) == [
        [0, 1, 2, 3, 4, 5, 6, 7],
        [10, 11, 8, 9, 14, 15, 12, 13],
        [20, 21, 22, 23, 16, 17, 18, 19],
        [30, 31, 28, 29, 26, 27, 24, 25],
    ]


# ------------------------------------------------------------------------------------- padded


@pytest.fixture(scope="module")
def padded_oracle():
    """``PaddedSharedLayout -> LinearLayout``: triton 3.9 builds the encoding (``get_padded_shared_layout``)
    and prints it in a memdesc type; its linear component is parsed back from that text.
    (``to_linear_layout`` aborts on padded layouts in 3.9, so this is the available oracle.)"""
    pytest.importorskip("triton")
    from triton._C.libtriton import gluon_ir, ir
    from triton.experimental.gluon import language as gl

    context = ir.context()
    ir.load_dialects(context)
    builder = gluon_ir.GluonOpBuilder(context)
    f16 = builder.get_half_ty()

    def convert(layout: PaddedSharedLayout) -> tuple[LinearLayout, list[tuple[int, int]]]:
        assert context is not None
        gluon = gl.PaddedSharedLayout(
            [list(p) for p in layout.interval_padding_pairs],
            [list(b) for b in layout.offset_bases],
            [list(b) for b in layout.cga_layout],
            list(layout.shape),
        )
        text = str(builder.get_shared_mem_desc_ty(f16, list(layout.shape), gluon._to_ir(builder), list(layout.shape)))
        match = re.search(r"padded_shared<\[([^\]]*)\] \{(.*)\}>", text)
        assert match, text
        pairs = [tuple(int(x) for x in item.split(":+")) for item in match.group(1).split(", ")]
        body = match.group(2)
        names = [f"dim{i}" for i in range(layout.rank)]
        if body.startswith("order"):  # short form: identity in `order`, single CTA
            fields = json.loads("{" + re.sub(r"(\w+) = ", r'"\1": ', body) + "}")
            bases = []
            for dim in fields["order"]:
                for k in range(fields["shape"][dim].bit_length() - 1):
                    bases.append([1 << k if i == dim else 0 for i in range(layout.rank)])
            linear = LinearLayout({"offset": bases, "block": []}, list(zip(names, fields["shape"])))
        else:
            fields = json.loads("{" + re.sub(r"(\w+) = ", r'"\1": ', body) + "}")
            linear = LinearLayout(
                {"offset": fields["offset"], "block": fields.get("block", [])},
                list(zip(names, layout.shape)),
                require_surjective=False,
            )
        return linear, pairs

    return convert


def random_padded(rng: random.Random) -> PaddedSharedLayout:
    """A random valid padded layout: a permutation of the per-dim unit bases of a CTA tile, a CGA."""
    rank = rng.choice([1, 2, 2, 3])
    tile = [1 << rng.randint(0, 5) for _ in range(rank)]
    bases = [
        [1 << k if i == d else 0 for i in range(rank)] for d in range(rank) for k in range(tile[d].bit_length() - 1)
    ]
    if not bases:
        tile[0] *= 2
        bases = [[1] + [0] * (rank - 1)]
    rng.shuffle(bases)
    cga = _random_cga(rng, rank)
    cga_sizes = [1] * rank
    for vector in cga:
        for i, entry in enumerate(vector):
            cga_sizes[i] = max(cga_sizes[i], 2 * entry)
    shape = [t * c for t, c in zip(tile, cga_sizes)]
    intervals = rng.sample([1, 2, 4, 8, 16, 32, 64, 128, 1024], rng.randint(1, 3))
    pairs = [[interval, rng.choice([1, 2, 4, 8, 16])] for interval in intervals]
    return PaddedSharedLayout(pairs, bases, cga, shape)


def test_differential_padded_shared(padded_oracle):
    """300 seeded random padded layouts: our linear component equals the one triton 3.9 builds."""
    rng = random.Random(555)
    for _ in range(300):
        layout = random_padded(rng)
        theirs, pairs = padded_oracle(layout)
        assert layout.to_linear() == theirs, layout
        assert [tuple(p) for p in layout.interval_padding_pairs] == pairs


def test_padded_gluon_docstring_examples():
    """The two examples of Gluon's PaddedSharedLayout docstring, element by element."""
    # shape [8], pairs [[2, 2]], offset_bases [[2], [1], [4]]: [x0, x2, p0, p1, x1, x3, p, p, x4, ...]
    layout = PaddedSharedLayout([[2, 2]], [[2], [1], [4]], [], [8])
    memory = {}
    component = layout.to_linear()
    for offset in range(8):
        memory[layout.padded_offset(offset)] = component.apply({"offset": offset})["dim0"]
    assert [memory.get(i) for i in range(6)] == [0, 2, None, None, 1, 3]
    # shape [8, 4], pairs [[8, 1]], bases rows stride 2 first
    layout = PaddedSharedLayout([[8, 1]], [[0, 1], [0, 2], [2, 0], [4, 0], [1, 0]], [], [8, 4])
    component = layout.to_linear([8, 4])
    memory = {}
    for offset in range(32):
        c = component.apply({"offset": offset})
        memory[layout.padded_offset(offset)] = (c["dim0"], c["dim1"])
    rows = [2 * k for k in range(4)] + [2 * k + 1 for k in range(4)]
    expected = []
    for i, row in enumerate(rows):
        expected += [(row, col) for col in range(4)]
        if i % 2 == 1 and i < 7:
            expected.append(None)
    assert [memory.get(i) for i in range(len(expected))] == expected
    assert layout.padded_size() == 35  # 32 elements + 3 paddings (none after the last)


def test_padded_offset_and_size_brute_force():
    """padded_offset inserts ``padding`` slots after every ``interval`` elements, summed over pairs."""
    rng = random.Random(99)
    for _ in range(60):
        pairs = []
        for interval in rng.sample([2, 4, 8, 16, 32, 64], rng.randint(1, 3)):
            pairs.append([interval, rng.choice([1, 2, 4, 8])])
        layout = PaddedSharedLayout.with_identity_for(pairs, [16, 8], [1, 0])
        position = 0
        for offset in range(128):
            if offset:
                position += 1 + sum(p for i, p in pairs if offset % i == 0)
            assert layout.padded_offset(offset) == position
        assert layout.padded_size() == layout.padded_offset(127) + 1


def test_padded_with_identity_for_and_cga():
    layout = PaddedSharedLayout.with_identity_for([[64, 8]], [16, 128], [1, 0], [[0, 1]])
    component = layout.to_linear([16, 128])
    assert component.bases["block"] == [[0, 64]]
    assert component.bases["offset"][:6] == [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32]]
    assert component.out_dims == {"dim0": 16, "dim1": 128}
    assert layout.intervals == (64,) and layout.paddings == (8,)


# ------------------------------------------------------------------------------- small helpers


def test_helpers():
    assert shape_per_cta([[0, 1], [1, 0], [0, 0]], [32, 4]) == (16, 2)
    assert shape_per_cta([[0, 1], [0, 2]], [4, 2]) == (4, 1)
    L = LinearLayout.identity_1d(16, "offset", "dim0")
    assert reshape_layout(L, [4, 2, 2]).bases["offset"] == [[0, 0, 1], [0, 1, 0], [1, 0, 0], [2, 0, 0]]
    M = LinearLayout({"offset": [[0, 0, 1], [0, 1, 0], [1, 0, 0]]}, ["dim0", "dim1", "dim2"])
    assert transpose_layout(M, [2, 0, 1]).bases["offset"] == [[1, 0, 0], [0, 0, 1], [0, 1, 0]]
    nv = NVMMASharedLayout(128, 8, fp4_padded=True)
    assert nv.tma_block_shape([32, 64]) == (32, 64)
    assert NVMMASharedLayout(64, 16, transposed=True).tma_block_shape([512, 8]) == (32, 8)


def test_frozen_hashable_and_lists_accepted():
    a = SwizzledSharedLayout(2, 1, 4, [1, 0], [[0, 1]])
    b = SwizzledSharedLayout(2, 1, 4, (1, 0), ((0, 1),))
    assert a == b and hash(a) == hash(b) and a.order == (1, 0) and a.cga_layout == ((0, 1),)
    with pytest.raises(AttributeError, match=r"cannot assign to field 'vec'"):
        a.vec = 4  # type: ignore[misc]
    n = NVMMASharedLayout(128, 16, 2, False, False, [[1, 0]])
    assert n.cga_layout == ((1, 0),) and {n: 1}[NVMMASharedLayout(128, 16, cga_layout=[[1, 0]])] == 1
    p = PaddedSharedLayout([[64, 8]], [[1], [2]], [], [4])
    assert p.interval_padding_pairs == ((64, 8),)
    assert hash(p) == hash(PaddedSharedLayout(((64, 8),), ((1,), (2,)), (), (4,)))


# --------------------------------------------------------------------------------- invalid inputs

_INVALID = [
    # swizzled / rotating parameters
    (lambda: SwizzledSharedLayout(2, 0, 4, [1, 0]), r"per_phase must be >= 1"),
    (lambda: SwizzledSharedLayout(2, 1, 0, [1, 0]), r"max_phase must be >= 1"),
    (lambda: SwizzledSharedLayout(0, 1, 4, [1, 0]), r"vec must be >= 1"),
    (lambda: SwizzledSharedLayout(-2, 1, 4, [1, 0]), r"vec must be >= 1"),
    (lambda: SwizzledSharedLayout(2.0, 1, 4, [1, 0]), r"vec must be an integer"),
    (lambda: SwizzledSharedLayout(True, 1, 4, [1, 0]), r"vec must be an integer"),
    (lambda: SwizzledSharedLayout(2, 1, 4, [1, 1]), r"order must be a permutation of 0\.\.1"),
    (lambda: SwizzledSharedLayout(2, 1, 4, [0, 2]), r"order must be a permutation of 0\.\.1"),
    (lambda: SwizzledSharedLayout(2, 1, 4, []), r"order must have at least one entry \(the rank\)"),
    (lambda: SwizzledSharedLayout(2, 1, 4, "10"), r"order must be a list of integers"),
    (lambda: SwizzledSharedLayout(2, 1, 4, [1, 0], [[1]]),
     r"cga_layout\[0\] must have one entry per tensor dimension \(2\)"),
    (lambda: SwizzledSharedLayout(2, 1, 4, [1, 0], [[3, 0]]),
     r"cga_layout\[0\] must be 0 or have a single non-zero entry"),
    (lambda: SwizzledSharedLayout(2, 1, 4, [1, 0], [[1, 0], [1, 0]]),
     r"cga_layout\[1\] = \[1, 0\] repeats a basis of cga_layout"),
    (lambda: SwizzledSharedLayout(2, 1, 4, [1, 0], [[0, 2]]),
     r"cga_layout: the bases along dim 1 must be 1, 2, 4, \.\.\."),
    (lambda: SwizzledSharedLayout(2, 1, 4, [1, 0]).to_linear([8]), r"shape must have rank 2 \(the layout's rank\)"),
    (lambda: SwizzledSharedLayout(2, 1, 4, [1, 0]).to_linear([8, 6]), r"shape\[1\] must be a power of two"),
    (lambda: SwizzledSharedLayout(2, 1, 4, [1, 0]).to_linear([8, 0]), r"shape\[1\] must be a power of two"),
    (lambda: SwizzledSharedLayout(2, 1, 4, [1, 0]).to_linear("88"), r"shape must be a list of integers"),
    (lambda: AMDRotatingSharedLayout(2, 1, 4, [2, 0]), r"order must be a permutation of 0\.\.1"),
    (lambda: AMDRotatingSharedLayout(2, 0, 4, [1, 0]), r"per_phase must be >= 1"),
    (lambda: AMDRotatingSharedLayout(2, 1, 4, [1, 0]).to_linear([8, 8, 8]),
     r"shape must have rank 2 \(the layout's rank\)"),
    # NVMMA parameters and shapes
    (lambda: NVMMASharedLayout(16, 16), r"swizzle_byte_width must be one of \(0, 32, 64, 128\)"),
    (lambda: NVMMASharedLayout(256, 16), r"swizzle_byte_width must be one of \(0, 32, 64, 128\)"),
    (lambda: NVMMASharedLayout(128, 4), r"element_bitwidth must be one of \(8, 16, 32, 64\)"),
    (lambda: NVMMASharedLayout(128, 12), r"element_bitwidth must be one of \(8, 16, 32, 64\)"),
    (lambda: NVMMASharedLayout(128, 16, rank=0), r"rank must be >= 1"),
    (lambda: NVMMASharedLayout(128, 16, transposed=1), r"transposed must be a bool"),
    (lambda: NVMMASharedLayout(64, 8, fp4_padded=True), r"fp4_padded requires swizzle_byte_width == 128"),
    (lambda: NVMMASharedLayout(128, 16, fp4_padded=True),
     r"fp4_padded requires element_bitwidth == 8 \(packed fp4 pairs\)"),
    (lambda: NVMMASharedLayout(128, 16, 2, cga_layout=[[1, 0, 0]]),
     r"cga_layout\[0\] must have one entry per tensor dimension \(2\)"),
    (lambda: NVMMASharedLayout(128, 16).to_linear([8, 32]),
     r"shape: the contiguous dim 1 holds 32 elements per CTA"),
    (lambda: NVMMASharedLayout(128, 16).to_linear([4, 64]),
     r"shape: the TMA box per CTA, collapsed to 2-D, is \[4, 64\]"),
    (lambda: NVMMASharedLayout(128, 16, rank=1).to_linear([64]),
     r"rank must be >= 2 for a swizzled NVMMASharedLayout"),
    (lambda: NVMMASharedLayout(128, 8, transposed=True).to_linear([128, 4]),
     r"shape: the TMA box per CTA, collapsed to 2-D, is \[4, 128\]"),
    (lambda: NVMMASharedLayout(128, 16, rank=3).to_linear([2, 2, 64]),
     r"shape: the TMA box per CTA, collapsed to 2-D, is \[4, 64\]"),
    (lambda: NVMMASharedLayout(32, 16).to_linear([16, 16, 16]), r"shape must have rank 2 \(the layout's rank\)"),
    (lambda: NVMMASharedLayout(64, 16, cga_layout=[[0, 1]]).to_linear([64, 32]),
     r"shape: the contiguous dim 1 holds 16 elements per CTA"),
    # padded
    (lambda: PaddedSharedLayout([], [[1]], [], [2]), r"interval_padding_pairs must have at least one \[interval"),
    (lambda: PaddedSharedLayout([[3, 1]], [[1]], [], [2]),
     r"interval_padding_pairs\[0\]: interval must be a power of two"),
    (lambda: PaddedSharedLayout([[4, 3]], [[1]], [], [2]),
     r"interval_padding_pairs\[0\]: padding must be a power of two"),
    (lambda: PaddedSharedLayout([[4, 1], [4, 2]], [[1]], [], [2]),
     r"interval_padding_pairs: intervals must be distinct"),
    (lambda: PaddedSharedLayout([[4]], [[1]], [], [2]),
     r"interval_padding_pairs\[0\] must be an \[interval, padding\]"),
    (lambda: PaddedSharedLayout([[4, 1]], [[1, 1]], [], [2, 2]),
     r"offset_bases\[0\] must move along at most one dim"),
    (lambda: PaddedSharedLayout([[4, 1]], [[1, 0], [1, 0]], [], [2, 2]),
     r"offset_bases must be linearly independent"),
    (lambda: PaddedSharedLayout([[4, 1]], [[1, 0], [0, 3]], [], [2, 4]),
     r"offset_bases\[1\] must be 0 or a power of two along its dim"),
    (lambda: PaddedSharedLayout([[4, 1]], [[1, 0]], [], [2, 2]),
     r"offset_bases and cga_layout must span shape \[2, 2\]"),
    (lambda: PaddedSharedLayout([[4, 1]], [[1]], [], [2, 2]),
     r"offset_bases\[0\] must have one entry per tensor dimension \(2\)"),
    (lambda: PaddedSharedLayout([[4, 1]], [[1], [2]], [], [3]), r"shape\[0\] must be a power of two"),
    (lambda: PaddedSharedLayout([[4, 1]], [[1], [2]], [[1]], [4]),
     r"offset_bases and cga_layout must span shape \[4\]"),
    (lambda: PaddedSharedLayout([[4, 1]], [[1], [2]], [], [4]).to_linear([8]),
     r"shape must be the layout's shape \[4\]"),
    (lambda: PaddedSharedLayout([[4, 1]], [[1], [2]], [], [4]).padded_offset(-1), r"offset must be >= 0"),
    (lambda: PaddedSharedLayout([[4, 1]], [[1], [2]], [], [4]).padded_offset(1.5), r"offset must be an integer"),
]


@pytest.mark.parametrize("index", range(len(_INVALID)))
def test_invalid_parameters_raise_layout_error(index):
    make, rule = _INVALID[index]
    with pytest.raises(LayoutError, match=rule):
        make()


def test_fuzzed_invalid_parameters_raise_layout_error():
    """200 seeded random corruptions of valid parameter sets: each raises LayoutError naming the argument,
    and every class meets the rule of each of its arguments."""
    rng = random.Random(31337)
    bad_values = [0, -1, -4, 3, 6, 1.5, "2", None, True, [2], 2**40 + 1]
    named = set()
    for _ in range(200):
        kind = rng.choice(["swizzled", "rotating", "nvmma", "padded"])
        if kind in ("swizzled", "rotating"):
            cls = SwizzledSharedLayout if kind == "swizzled" else AMDRotatingSharedLayout
            args = {"vec": 2, "per_phase": 2, "max_phase": 4, "order": [1, 0], "cga_layout": [[0, 1]]}
            field = rng.choice(list(args))
            if field == "order":
                args["order"] = rng.choice([[1, 1], [0], [2, 0], [1, -1], [0, 1, 2], "ab", None, [0.0, 1]])
                if args["order"] == [0]:
                    args["cga_layout"] = [[0, 1]]  # rank mismatch with the cga bases
            elif field == "cga_layout":
                args["cga_layout"] = rng.choice([[[0, 3]], [[1]], [[0, 1], [0, 1]], [[-1, 0]], "x", [[0, 2]]])
            else:
                args[field] = rng.choice(
                    [v for v in bad_values if not (isinstance(v, int) and not isinstance(v, bool) and v > 0)]
                )
            make = lambda: cls(**args).to_linear([16, 16])  # noqa: E731
        elif kind == "nvmma":
            args = {"swizzle_byte_width": 128, "element_bitwidth": 16, "rank": 2, "transposed": False,
                    "fp4_padded": False, "cga_layout": []}
            field = rng.choice(list(args) + ["shape"])
            shape = [64, 64]
            if field == "swizzle_byte_width":
                args[field] = rng.choice([16, 48, 256, -32, 1.0, None])
            elif field == "element_bitwidth":
                args[field] = rng.choice([1, 4, 6, 128, 0, "16"])
            elif field == "rank":
                args[field] = rng.choice([0, -1, 1.0, 3])  # rank 3 then mismatches the 2-D shape
            elif field in ("transposed", "fp4_padded"):
                args[field] = rng.choice([1, 0, "yes", None]) if rng.random() < 0.5 else True
                if args[field] is True:
                    args["element_bitwidth"] = 16  # fp4_padded needs 8-bit elements; transposed: shape
                    shape = [32, 64] if field == "transposed" else shape
            elif field == "cga_layout":
                args[field] = rng.choice([[[1]], [[3, 0]], [[1, 0], [1, 0]], [[0, 2]]])
            else:
                shape = rng.choice([[4, 64], [8, 32], [64], [64, 64, 64], [64, 48], [0, 64]])
            make = lambda: NVMMASharedLayout(**args).to_linear(shape)  # noqa: E731
        else:
            args = {"interval_padding_pairs": [[64, 8]], "offset_bases": [[0, 1], [0, 2], [1, 0]],
                    "cga_layout": [], "shape": [2, 4]}
            field = rng.choice(list(args))
            if field == "interval_padding_pairs":
                args[field] = rng.choice([[], [[63, 8]], [[64, 7]], [[64, 8], [64, 1]], [[64]], [[0, 1]], "x"])
            elif field == "offset_bases":
                args[field] = rng.choice([[[0, 1], [0, 2]], [[0, 1], [0, 1], [1, 0]], [[1, 1], [0, 2], [1, 0]],
                                          [[0, 3], [0, 2], [1, 0]], [[0, 1], [0, 2], [1, 0], [0, 0]], [[0, 1, 0]]])
            elif field == "cga_layout":
                args[field] = rng.choice([[[0, 1]], [[2, 0]], [[1]], [[0, 5]]])
            else:
                args[field] = rng.choice([[2, 8], [4, 4], [2, 3], [8], [], [2, 4, 1]])
            make = lambda: PaddedSharedLayout(**args).to_linear()  # noqa: E731
        # the message starts with the argument it is about (or the shape it conflicts with)
        names = rf"^({'|'.join([*args, 'shape'])})\b"
        with pytest.raises(LayoutError, match=names) as info:
            make()
        named.add((kind, re.match(names, str(info.value)).group(1)))
    expected = {(kind, name) for kind, names in [
        ("swizzled", ["vec", "per_phase", "max_phase", "order", "cga_layout"]),
        ("rotating", ["vec", "per_phase", "max_phase", "order", "cga_layout"]),
        ("nvmma", ["swizzle_byte_width", "element_bitwidth", "rank", "transposed", "fp4_padded", "cga_layout", "shape"]),
        ("padded", ["interval_padding_pairs", "offset_bases", "cga_layout", "shape"])] for name in names}
    assert named == expected


_junk = st.one_of(
    st.integers(-4, 300),
    st.floats(allow_nan=True),
    st.text(max_size=3),
    st.none(),
    st.booleans(),
    st.lists(st.integers(-2, 70), max_size=4),
    st.lists(st.lists(st.integers(-2, 70), max_size=3), max_size=3),
)


@settings(max_examples=200, deadline=None)
@given(
    kind=st.sampled_from(["swizzled", "rotating", "nvmma", "padded"]),
    args=st.lists(_junk, min_size=4, max_size=6),
    shape=_junk,
)
def test_arbitrary_arguments_never_crash(kind, args, shape):
    """Whatever the arguments, construction and to_linear either work or raise LayoutError."""
    classes = {
        "swizzled": SwizzledSharedLayout,
        "rotating": AMDRotatingSharedLayout,
        "nvmma": NVMMASharedLayout,
        "padded": PaddedSharedLayout,
    }
    cls = classes[kind]
    try:
        layout = cls(*args[: {"nvmma": 6, "padded": 4}.get(kind, 5)])
        result = layout.to_linear() if kind == "padded" and shape is None else layout.to_linear(shape)
    except LayoutError:
        return
    assert isinstance(result, LinearLayout)
