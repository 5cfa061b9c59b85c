"""SVG / PNG / HTML renderers: what they draw is what the layout says."""

from __future__ import annotations

import html
import itertools
import random
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.present.viz.colors import bank_color, thread_color
from linear_layouts.present.viz.model import ownership, placement
from linear_layouts.present.viz.page import layout_html
from linear_layouts.present.viz.scenarios import seed_transpose
from linear_layouts.present.viz.png import distributed_png, shared_png
from linear_layouts.present.viz.svg import bank_hits_svg, distributed_svg, matrix_svg, shared_svg

from tools_helpers import random_distributed, random_shared

SVG = "{http://www.w3.org/2000/svg}"


def _cells(svg: str):
    root = ET.fromstring(svg)
    return [g for g in root.iter(f"{SVG}g") if g.get("class") == "cell"]


def _every_owner(layout, coords):
    """Every (thread, register) holding the element at ``coords``, in Triton's order, by brute force."""
    sizes = {d: layout.in_dim_size(d) if layout.has_in_dim(d) else 1 for d in ("block", "warp", "lane", "register")}
    found = []
    for b, w, t, r in itertools.product(*(range(sizes[d]) for d in ("block", "warp", "lane", "register"))):
        out = layout.apply({d: v for d, v in (("register", r), ("lane", t), ("warp", w), ("block", b))
                            if layout.has_in_dim(d)})
        if tuple(out[d] for d in layout.out_dim_names) == coords:
            found.append((t + w * sizes["lane"], r))
    return found


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
            thread = lane + warp * (layout.in_dim_size("lane") if layout.has_in_dim("lane") else 1)
            held = _every_owner(layout, coords)
            words = list(dict.fromkeys(f"T{t}:r{r}" for t, r in held))
            expected = [f"T{thread}", f"r{reg}"] if len(held) == 1 else words if len(words) <= 2 else \
                [words[0], f"+{len(words) - 1}"]
            assert (thread, reg) == held[0]
            assert [t.text for t in g.findall(f"{SVG}text")] == expected
            assert g.find(f"{SVG}rect").get("fill") == thread_color(lane, warp)
            assert (g.find(f"{SVG}path") is not None) == (ownership(layout).copies[index] > 1)   # replicated mark


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
            lines = [str(coords[-1])] if len(coords) == 1 else [",".join(map(str, coords[:-1])), str(coords[-1])]
            assert [t.text for t in g.findall(f"{SVG}text")] == lines


def test_bank_hit_charts_add_up_to_the_wavefronts():
    from linear_layouts.analysis import banks
    from linear_layouts.present.viz.bank_steps import bank_steps

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
    from linear_layouts.analysis import banks
    from linear_layouts.analysis import warp_simulator
    from linear_layouts.present.viz.bank_steps import bank_steps
    from linear_layouts.present.viz.scenarios import row_major_shared, toggle_swizzle

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
    from linear_layouts import layouts as catalog
    layout = catalog.BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0]).to_linear([128, 128])
    root = ET.fromstring(distributed_svg(layout))
    assert float(root.get("width")) <= 2900
    font = float(next(g for g in root.iter(f"{SVG}g") if g.get("class") == "cells").get("font-size"))
    cells = _cells(distributed_svg(layout))
    size = float(cells[0].find(f"{SVG}rect").get("width"))
    assert font >= 7
    for g in cells[::97]:
        texts = g.findall(f"{SVG}text")
        assert len(texts) == 2                                          # thread over register
        assert max(len(t.text) for t in texts) * 0.6 * font <= size - 3   # the label fits its cell
        assert len(texts) * 1.2 * font <= size - 3


def _text_boxes(svg: str) -> list[tuple[float, float, float, float, str]]:
    """Boxes (x0, y0, x1, y1) of the texts outside cells and bars, from their font size (monospace: 0.6 em)."""
    root = ET.fromstring(svg)
    inside = {id(t) for g in root.iter(f"{SVG}g") if g.get("class") == "cell" for t in g.iter(f"{SVG}text")}
    boxes = []
    for t in root.iter(f"{SVG}text"):
        if id(t) in inside or not t.text:
            continue
        font, x, y = float(t.get("font-size")), float(t.get("x")), float(t.get("y"))
        width = len(t.text) * 0.6 * font
        x0 = {"middle": x - width / 2, "end": x - width}.get(t.get("text-anchor"), x)
        boxes.append((x0, y - 0.8 * font, x0 + width, y + 0.2 * font, t.text))
    return boxes


@pytest.mark.parametrize("picture", ["distributed", "replicated", "physical", "logical", "3-d", "bank hits",
                                     "matrix"])
def test_no_two_labels_overlap(picture):
    from linear_layouts.present.viz.bank_steps import bank_steps

    seed = seed_transpose()
    narrow = LinearLayout({"register": [[1, 0]], "lane": [[0, 1], [0, 2]], "warp": [[2, 0]]}, ["dim0", "dim1"])
    svg = {"distributed": lambda: distributed_svg(seed.load),
           "replicated": lambda: distributed_svg(LinearLayout({"register": [[0, 1]], "lane": [[0, 2], [1, 0], [0, 0]],
                                                               "warp": [[2, 0]]}, ["dim0", "dim1"])),
           "physical": lambda: shared_svg(seed.shared[1][1], 32, view="physical"),
           "logical": lambda: shared_svg(seed.shared[1][1], 16),
           "3-d": lambda: distributed_svg(LinearLayout({"lane": [[0, 0, 1], [0, 1, 0], [1, 0, 0]]},
                                                       {"dim0": 2, "dim1": 2, "dim2": 2})),
           "bank hits": lambda: bank_hits_svg(bank_steps(seed.shared[1][1], seed.load, 32),
                                              title="load through XOR m: the bank hits of every instruction"),
           "matrix": lambda: matrix_svg(narrow, title="a layout with one register bit and one warp bit")}[picture]()
    boxes = _text_boxes(svg)
    width = float(ET.fromstring(svg).get("width"))
    for i, a in enumerate(boxes):
        assert a[0] >= 0 and a[2] <= width, a
        for b in boxes[i + 1:]:
            apart = a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]
            assert apart, (a, b)


def test_warp_boundaries_and_replicated_marks():
    layout = LinearLayout({"register": [[0, 1]], "lane": [[0, 2], [1, 0], [0, 0]], "warp": [[2, 0], [0, 4]]},
                          ["dim0", "dim1"])          # 4 x 8; lane bit 2 broadcasts
    own = ownership(layout)
    warp = own.warp.reshape(4, 8)
    root = ET.fromstring(distributed_svg(layout))
    path = next(p for p in root.iter(f"{SVG}path") if p.get("class") == "boundary").get("d")
    expected = int((warp[:, :-1] != warp[:, 1:]).sum() + (warp[:-1, :] != warp[1:, :]).sum())
    assert path.count("M") == expected == 12
    marks = [p for p in root.iter(f"{SVG}path") if p.get("class") == "replicated"]
    assert len(marks) == int((own.copies > 1).sum()) == 32


def test_png_shows_the_same_picture():
    PIL = pytest.importorskip("PIL.Image")
    import io

    from linear_layouts.present.viz.grid import distributed_grid
    from linear_layouts.present.viz.png import Palette, grid_image

    layout = LinearLayout({"register": [[0, 1]], "lane": [[0, 2], [1, 0], [0, 0]], "warp": [[2, 0], [0, 4]]},
                          ["dim0", "dim1"])
    picture = distributed_grid(layout)
    palette = Palette()
    indices = grid_image(picture, 40, palette)
    rgb = palette.rgb()[indices]
    own = ownership(layout)
    for e in range(32):
        r, c = divmod(e, 8)
        left = rgb[r * 40 + 20, c * 40 + 4]                       # inside the cell, clear of label and mark
        assert "#%02x%02x%02x" % tuple(left) == thread_color(int(own.lane[e]), int(own.warp[e]))
        corner = rgb[r * 40 + 1, c * 40 + 37]                     # the replicated mark
        assert tuple(corner) == (0x20, 0x20, 0x20)
    assert tuple(rgb[40, 20]) != (0x20, 0x20, 0x20)               # rows 0 and 1: the same warp
    assert tuple(rgb[80, 20]) == (0x20, 0x20, 0x20)               # rows 1 and 2: warps 0 and 1 meet
    data = distributed_png(layout)
    decoded = PIL.open(io.BytesIO(data)).convert("RGB")
    assert decoded.size[0] >= 8 * 40 and data[:8] == b"\x89PNG\r\n\x1a\n"
    assert shared_png(seed_transpose().shared[2][1], 32)[:4] == b"\x89PNG"
    physical = PIL.open(io.BytesIO(shared_png(seed_transpose().shared[2][1], 32, view="physical")))
    assert physical.mode == "P"                                    # indexed colour: small and fast


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
    with pytest.raises(LayoutError, match="label: must be one of auto, thread"):
        distributed_png(seed_transpose().store, label="bank")
