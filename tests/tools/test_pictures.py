"""SVG / PNG / HTML renderers: what they draw is what the layout says."""

from __future__ import annotations

import html
import random
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.viz.colors import bank_color, thread_color
from linear_layouts.viz.model import ownership, placement
from linear_layouts.viz.page import layout_html
from linear_layouts.viz.scenarios import seed_transpose
from linear_layouts.viz.svg import bank_hits_svg, distributed_svg, matrix_svg, shared_svg

from tools_helpers import random_distributed, random_shared

SVG = "{http://www.w3.org/2000/svg}"


def _cells(svg: str):
    root = ET.fromstring(svg)
    return [g for g in root.iter(f"{SVG}g") if g.get("class") == "cell"]


def test_distributed_svg_tooltips_and_labels_follow_the_layout():
    rng = random.Random(1)
    for _ in range(25):
        layout = random_distributed(rng)
        cells = _cells(distributed_svg(layout))
        shape = list(layout.out_dims.values())
        assert len(cells) == int(np.prod(shape))
        for index, g in enumerate(cells):
            tip = g.find(f"{SVG}title").text
            coords = tuple(int(x) for x in re.match(r"\(([\d, ]*)\)", tip).group(1).split(",") if x.strip())
            assert coords == tuple(int(i) for i in np.unravel_index(index, shape))
            owner = re.search(r"warp (\d+), lane (\d+), register (\d+)", tip)
            if owner is None:
                assert "not held" in tip
                continue
            warp, lane, reg = map(int, owner.groups())
            block = int(re.search(r"block (\d+)", tip).group(1))
            out = layout.apply({d: v for d, v in (("register", reg), ("lane", lane), ("warp", warp),
                                                     ("block", block)) if layout.has_in_dim(d)})
            assert tuple(out[d] for d in layout.out_dim_names) == coords
            assert g.find(f"{SVG}text").text == str(reg)
            assert g.find(f"{SVG}rect").get("fill") == thread_color(lane, warp, layout.in_dim_size("lane"))


def test_ownership_picks_the_first_owner_and_counts_copies():
    layout = LinearLayout({"register": [[1], [0]], "lane": [[2], [0]], "warp": [[0]]}, {"dim0": 4})
    own = ownership(layout)
    assert own.register.tolist() == [0, 1, 0, 1] and own.lane.tolist() == [0, 0, 1, 1]
    assert own.copies.tolist() == [8, 8, 8, 8]


def test_shared_svg_banks_logical_and_physical():
    rng = random.Random(2)
    for _ in range(20):
        layout = random_shared(rng)
        bits = rng.choice([8, 16, 32, 64])
        place = placement(layout, bits)
        inverse = {tuple(layout.apply({"offset": o}).values()): o for o in range(layout.in_dim_size("offset"))}
        shape = list(layout.out_dims.values())
        cells = _cells(shared_svg(layout, bits))
        for index, g in enumerate(cells):
            offset = inverse[tuple(int(i) for i in np.unravel_index(index, shape))]
            bank = offset * bits // 32 % 32
            assert int(g.get("data-bank")) == bank == place.bank[index]
            assert g.find(f"{SVG}rect").get("fill") == bank_color(bank)
        physical = _cells(shared_svg(layout, bits, view="physical"))
        for offset, g in enumerate(physical):
            coords = list(layout.apply({"offset": offset}).values())
            assert g.find(f"{SVG}text").text == str(coords[-1])


def test_bank_hit_charts_add_up_to_the_wavefronts():
    banks = pytest.importorskip("linear_layouts.analysis.banks")
    from linear_layouts.viz.bank_steps import bank_steps

    seed = seed_transpose()
    for (name, shared), expected in zip(seed.shared, (256, 32, 16)):
        steps = bank_steps(shared, seed.load, 32)
        assert len(steps) == 16 and sum(s.wavefronts for s in steps) == expected == banks.wavefronts(shared, seed.load, 32)
        root = ET.fromstring(bank_hits_svg(steps))
        groups = [g for g in root.iter(f"{SVG}g") if g.get("class") == "step"]
        assert sum(int(g.get("data-wavefronts")) for g in groups) == expected
        assert sum(1 for r in root.iter(f"{SVG}rect") if r.get("class") == "bar") == 16 * 32
    # XOR m (seed 004): each read step puts two lanes on each of sixteen banks
    xor_m = bank_steps(seed.shared[1][1], seed.load, 32)
    assert all(sorted(s.lanes_per_bank) == [0] * 16 + [2] * 16 for s in xor_m)


def test_bank_steps_match_the_closed_form_on_random_pairs():
    banks = pytest.importorskip("linear_layouts.analysis.banks")
    warp_simulator = pytest.importorskip("linear_layouts.analysis.warp_simulator")
    from linear_layouts.viz.bank_steps import bank_steps
    from linear_layouts.viz.scenarios import row_major_shared, toggle_swizzle

    rng = np.random.default_rng(3)
    pyrng = random.Random(3)
    for _ in range(20):
        shape_log2 = [int(rng.integers(2, 5)), int(rng.integers(3, 6))]
        while sum(shape_log2) < 7:
            shape_log2[1] += 1
        dist = warp_simulator.random_distributed_layout(rng, shape_log2)
        bits = pyrng.choice([8, 16, 32, 64])
        shared = row_major_shared([1 << b for b in shape_log2])
        b = min(sum(shape_log2), (1024 // bits).bit_length() - 1)
        shared = toggle_swizzle(shared, [(j, i) for j in range(sum(shape_log2) - b) for i in range(b)
                                         if pyrng.random() < 0.3], bits)
        assert sum(s.wavefronts for s in bank_steps(shared, dist, bits)) == banks.wavefronts(shared, dist, bits)


def test_matrix_svg_draws_the_ones():
    layout = seed_transpose().load
    root = ET.fromstring(matrix_svg(layout))
    ones = [r for r in root.iter(f"{SVG}rect") if r.get("class") == "one"]
    assert len(ones) == int(layout.to_matrix().sum()) == 9


def test_128x128_tile_stays_legible():
    catalog = pytest.importorskip("linear_layouts.catalog")
    layout = catalog.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0]).to_linear([128, 128])
    root = ET.fromstring(distributed_svg(layout))
    width = float(root.get("width"))
    assert width <= 2200  # fits a screen at 16 px per cell
    texts = [t for t in root.iter(f"{SVG}text") if t.get("font-size") and t.text and t.text.isdigit()]
    assert min(float(t.get("font-size")) for t in texts) >= 6.5


def test_png_raster_colours_cells_by_owner():
    pytest.importorskip("matplotlib")
    from linear_layouts.viz.png import distributed_png, raster, shared_png

    layout = seed_transpose().load
    data = distributed_png(layout)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    own = ownership(layout)
    colors = [thread_color(int(l), int(w), own.num_lanes) for l, w in zip(own.lane, own.warp)]
    image = raster(colors, [str(int(r)) for r in own.register], 16, 32, 28)
    for index in (0, 33, 511):
        r, c = divmod(index, 32)
        corner = image[r * 28 + 1, c * 28 + 1]
        assert "#%02x%02x%02x" % tuple(corner) == colors[index]
    assert shared_png(seed_transpose().shared[2][1], 32)[:4] == b"\x89PNG"


def test_html_page_holds_picture_text_view_and_bases():
    layout = seed_transpose().store
    page = layout_html(layout, title="store")
    assert page.count("<svg") == 2 and "T31:15" in page and '"register"' in html.unescape(page)
    shared_page = layout_html(seed_transpose().shared[1][1], title="xor m", dtype=32)
    assert shared_page.count("<svg") == 3 and "(15:31)" not in shared_page.split("<pre>")[0]


def test_renderers_reject_bad_input():
    with pytest.raises(LayoutError, match="dtype as a bit width must be one of"):
        shared_svg(seed_transpose().shared[0][1], 12)
    with pytest.raises(LayoutError, match="view"):
        shared_svg(seed_transpose().shared[0][1], 32, view="sideways")
    with pytest.raises(LayoutError, match="distributed"):
        distributed_svg(seed_transpose().shared[0][1])
    with pytest.raises(LayoutError, match="shared"):
        shared_svg(seed_transpose().store, 32)
