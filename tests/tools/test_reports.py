"""The report modules and the explorer server, called as a library (the CLI only prints them)."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request

import pytest

from linear_layouts.analysis.banks import wavefronts
from linear_layouts.analysis.swizzle import optimal_swizzle
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.present.reports import banks_report, demo_report, layout_a_report, plan_report, swizzle_report
from linear_layouts.present.viz.scenarios import layout_a, pair_scenario, seed_transpose
from linear_layouts.present.viz.server import explorer_server
from linear_layouts.present.viz.text import matrix_text, owner_table, table_text

SEED = seed_transpose()


def test_owner_table_names_the_first_owner_of_every_element():
    a = layout_a()
    rows = owner_table(a).splitlines()[1:]
    for i, row in enumerate(rows):
        cells = row.split()[1:]
        for j, cell in enumerate(cells):
            w, rest = cell[1:].split("t")
            t, r = rest.split("r")
            assert a.apply({"register": int(r), "lane": int(t), "warp": int(w)}) == {"dim0": i, "dim1": j}


def test_matrix_text_row_labels_follow_the_matrix():
    a = layout_a()
    labels = [f"x{k}" for k in range(8)]
    lines = matrix_text(a, labels).splitlines()
    matrix = a.to_matrix()
    for label, line, row in zip(labels, lines[1:], matrix):
        assert line.split()[0] == label and [int(v) for v in line.split()[1:]] == [int(v) for v in row]
    with pytest.raises(LayoutError, match="row_labels: expected 8 labels"):
        matrix_text(a, labels[:3])


def test_table_text_aligns_columns():
    lines = table_text([["unswizzled", "256"], ["optimal", "16"]], ["layout", "load"]).splitlines()
    assert len({len(line) for line in lines}) == 1 and lines[1].split() == ["-" * 10, "----"]


def test_reports_recompute_the_seed_numbers():
    assert layout_a_report().endswith("A(r1, t9, w0) = (i, j) = (2, 3)")
    for name, shared in SEED.shared:
        report = banks_report(shared, SEED.load, 32, steps=2)
        assert report.startswith(f"load: {wavefronts(shared, SEED.load, 32, op='load')} wavefronts")
        assert report.splitlines()[-1] == "  ... 14 more steps (--steps N shows more)"
    bases = "[[0,1], [0,2], [0,4], [0,8], [0,16], [1,2], [2,4], [4,8], [8,16]]"
    assert bases in " ".join(swizzle_report(SEED.store, SEED.load, 32).split())
    assert json.loads(bases) == optimal_swizzle(SEED.store, SEED.load, 32).layout.bases["offset"]
    assert "store from the source layout" in plan_report(SEED.store, SEED.load, 32, force_shared=True)
    demo = demo_report(width=None)
    assert layout_a_report() in demo and "16 + 16" in demo


def test_pair_scenario_has_the_row_major_candidate():
    scenario = pair_scenario(SEED.store, SEED.load, 16, "A", "B")
    (name, shared), = scenario.shared
    assert name == "unswizzled (row-major)"
    for offset in range(16 * 32):
        got = shared.apply({"offset": offset})
        assert got["dim0"] * 32 + got["dim1"] == offset


def test_explorer_server_serves_the_page_and_the_api_only():
    server = explorer_server(b"<html>page</html>", port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        assert server.server_address[0] == "127.0.0.1"
        assert urllib.request.urlopen(url, timeout=5).read() == b"<html>page</html>"
        with pytest.raises(urllib.error.HTTPError, match="404"):
            urllib.request.urlopen(url + "etc/passwd", timeout=5)
        request = urllib.request.Request(url + "api/swizzle", data=b"{not json", method="POST")
        with pytest.raises(urllib.error.HTTPError, match="415"):  # a form post (CSRF): only JSON is accepted
            urllib.request.urlopen(request, timeout=5)
        request = urllib.request.Request(url + "api/swizzle", data=b"{not json", method="POST",
                                         headers={"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError, match="400") as answer:
            urllib.request.urlopen(request, timeout=5)
        assert json.loads(answer.value.read())["error"].startswith("request: not JSON")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
