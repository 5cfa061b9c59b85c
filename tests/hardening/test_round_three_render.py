"""Round three of the rendering hardening: user text (a layout spec, a title, a dim name) in the pages and
pictures we write. Each test is a reproducer of the hunt: the text must stay text in its context (HTML,
the explorer's JSON island, XML), and the document must stay readable whatever the text holds.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from cli_run import run
from linear_layouts import LinearLayout
from linear_layouts.present.viz.explorer import explorer_html
from linear_layouts.present.viz.scenarios import layout_scenario

PAYLOAD = "<img src=x onerror=alert(1)></script><!--<script>"
WARP = {"register": [[1]], "lane": [[2], [4], [8], [16], [32]]}


def _island(page: str) -> str:
    """The text of the explorer's JSON island, up to where an HTML parser ends it."""
    start = page.index('<script type="application/json" id="explorer-data">')
    start = page.index(">", start) + 1
    return page[start:page.index("</script>", start)]


def test_an_html_comment_in_a_layout_cannot_swallow_the_explorer_script(tmp_path):
    """``<!--<script>`` in the JSON island put the HTML tokenizer in its escaped state: the island's own
    ``</script>`` no longer ended it, the page's script became data and the page was dead."""
    spec = json.dumps({"bases": WARP, "out_dims": {PAYLOAD: 64}})
    out = tmp_path / "explorer.html"
    status, _, err = run(["explore", "--layout", spec, "-o", str(out)])
    assert status == 0, err
    island = _island(out.read_text(encoding="utf-8"))
    assert "<!--" not in island and "</" not in island
    data = json.loads(island)
    assert PAYLOAD in data["scenarios"][0]["store"]["out_dims"]
    assert any(entry["name"] == spec for entry in data["catalog"])


def test_a_title_that_spells_a_placeholder_stays_text():
    """The page's placeholders were replaced one after the other: a title ``__DATA__`` received the JSON data,
    whose names (``<`` kept raw in JSON) then landed unescaped in the page's ``<h1>``."""
    layout = LinearLayout({**WARP, "warp": [[64]]}, {"dim0": 128})
    page = explorer_html([layout_scenario(layout, 32, PAYLOAD)], [], title="__DATA__ __JS__")
    outside = page.replace(_island(page), "")
    assert "<img" not in outside and outside.count("<script") == 2
    assert "<h1>__DATA__ __JS__</h1>" in page


def test_svg_pictures_stay_well_formed_xml_with_control_characters(tmp_path):
    """A title or a dim name holding a character XML forbids (``\\x01``, ``\\ufffe``) made the SVG unreadable."""
    spec = json.dumps({"bases": WARP, "out_dims": {"dim\u0001\ufffe": 64}})
    for argv in (["show", "BlockedLayout([1,4],[4,8],[4,1],[1,0])", "--shape", "16,32", "--format", "svg",
                  "--title", "tile\x01\x0b\ufffe"],
                 ["matrix", spec, "--format", "svg"]):
        out = tmp_path / "picture.svg"
        status, _, err = run(argv + ["-o", str(out)])
        assert status == 0, err
        root = ET.parse(out).getroot()
        assert "\ufffd" in "".join(root.itertext())
