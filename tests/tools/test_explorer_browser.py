"""The explorer page in headless Chromium (Playwright): seed numbers, toggles vs the Python bank model,
the algebra panel (Lemma 9.4), the algorithm stepper, typed bases, and no network access."""

from __future__ import annotations

import json
import os
import random
import shutil

import numpy as np
import pytest

from linear_layouts import LinearLayout
from linear_layouts.core import f2
from linear_layouts.present.viz.explorer import explorer_html
from linear_layouts.present.viz.scenarios import row_major_shared, seed_transpose, toggle_swizzle

CHROMIUM = os.environ.get("LINEAR_LAYOUTS_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

sync_api = pytest.importorskip("playwright.sync_api")
if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
    pytest.skip("chromium is not installed (.ci/install-browser.sh installs it)", allow_module_level=True)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    path = tmp_path_factory.mktemp("explorer") / "explorer.html"
    path.write_text(explorer_html(), encoding="utf-8")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium"),
                                    args=ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        requests: list[str] = []
        context.on("request", lambda r: requests.append(r.url))
        pg = context.new_page()
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        pg.goto(path.as_uri())
        pg.wait_for_function("window.explorer && document.getElementById('wf-load').textContent !== '?'")
        pg.errors = errors
        pg.requests = requests
        yield pg
        browser.close()


def _counts(pg) -> tuple[int, int]:
    return int(pg.text_content("#wf-store")), int(pg.text_content("#wf-load"))


def _set_toggles(pg, toggles: set[tuple[int, int]]) -> None:
    for box in pg.query_selector_all("input.toggle"):
        want = (int(box.get_attribute("data-seg")), int(box.get_attribute("data-bank"))) in toggles
        if box.is_checked() != want:
            box.click()


def test_page_loads_offline_without_errors(page):
    assert page.errors == []
    assert all(u.startswith(("file:", "data:", "about:")) for u in page.requests), page.requests


def test_seed_004_wavefront_table(page):
    """Seed 004: 16 + 256 (unswizzled), 16 + 32 (XOR m), 16 + 16 (XOR 2m)."""
    page.select_option("#scenario-select", "0")
    expected = {0: (16, 256), 1: (16, 32), 2: (16, 16)}
    for base, counts in expected.items():
        page.select_option("#base-select", str(base))
        assert _counts(page) == counts
        assert int(page.text_content("#wf-total")) == sum(counts)


def test_workbench_toggles_reproduce_the_xor_swizzles(page):
    page.select_option("#base-select", "0")
    _set_toggles(page, {(j, j) for j in range(4)})
    assert _counts(page) == (16, 32)
    _set_toggles(page, {(j, j + 1) for j in range(4)})
    assert _counts(page) == (16, 16)
    page.click("#clear-toggles")
    assert _counts(page) == (16, 256)


def test_random_toggles_agree_with_python_bank_model_and_lemma(page):
    """For random toggle sets: page counts == analysis.banks.wavefronts == bank_simulator; the algebra
    panel's M_Seg ∩ span(Thr) dimension and 2^dim == the per-step simulated wavefronts."""
    from linear_layouts.analysis import banks
    from linear_layouts.analysis import bank_simulator as simulator
    seed = seed_transpose()
    base = row_major_shared([16, 32])
    page.select_option("#base-select", "0")
    page.check("#show-algebra")
    rng = random.Random(2024)
    all_toggles = [(j, i) for j in range(4) for i in range(5)]
    for trial in range(40):
        toggles = {t for t in all_toggles if rng.random() < 0.3}
        if trial < 3:
            _set_toggles(page, toggles)  # through the checkboxes
        else:
            page.evaluate("pairs => window.explorer.setToggles(pairs)", sorted(toggles))
        assert len(page.query_selector_all("input.toggle:checked")) == len(toggles)
        shared = toggle_swizzle(base, sorted(toggles), 32)
        store = banks.wavefronts(shared, seed.store, 32, op="store")
        load = banks.wavefronts(shared, seed.load, 32, op="load")
        assert _counts(page) == (store, load), sorted(toggles)
        assert load == simulator.simulate_wavefronts(shared, seed.load, 32, op="load")
        # Lemma 9.4 with the load's thread span, computed here with linear_layouts.core.f2
        seg = shared.flat_bases("offset")[5:]
        meet = f2.intersection(list(seg), [v for v in seed.load.flat_bases("lane") if v])
        assert int(page.text_content("#intersection-dim")) == len(meet)
        assert int(page.text_content("#lemma-prediction")) == 2 ** len(meet) == load // 16
        assert page.text_content("#lemma-verdict").startswith("agree")
    page.click("#clear-toggles")


def test_js_bank_model_matches_python_on_random_layouts(page):
    """The page's simulator, called directly, against analysis.banks.wavefronts: random distributed
    layouts (broadcasts, several warps) and random / row-major shared layouts, 8..64-bit elements."""
    from linear_layouts.analysis import banks
    from linear_layouts.analysis import warp_simulator
    rng = np.random.default_rng(5)
    pyrng = random.Random(5)
    cases = []
    for _ in range(60):
        shape_log2 = [int(rng.integers(2, 6)), int(rng.integers(3, 7))]
        if sum(shape_log2) < 7:
            shape_log2[1] += 7 - sum(shape_log2)
        dist = warp_simulator.random_distributed_layout(rng, shape_log2, extra_register_zeros=int(rng.integers(0, 2)))
        shape = [1 << b for b in shape_log2]
        shared = row_major_shared(shape)
        if pyrng.random() < 0.6:  # random XOR swizzle on top of row-major
            bitwidth = pyrng.choice([8, 16, 32, 64])
            b = min(sum(shape_log2), (1024 // bitwidth).bit_length() - 1)
            seg = sum(shape_log2) - b
            toggles = [(j, i) for j in range(seg) for i in range(b) if pyrng.random() < 0.25]
            shared = toggle_swizzle(shared, toggles, bitwidth)
        else:
            bitwidth = pyrng.choice([8, 16, 32, 64])
        dist = LinearLayout(dist.bases, dict(zip(["dim0", "dim1"], shape)), require_surjective=False)
        cases.append({"dist": {"bases": dist.bases, "out_dims": dist.out_dims},
                      "shared": {"bases": shared.bases, "out_dims": shared.out_dims}, "bitwidth": bitwidth,
                      "expected": banks.wavefronts(shared, dist, bitwidth)})
    got = page.evaluate("""cases => cases.map(c => {
        const E = window.explorer;
        const d = new E.Layout(c.dist.bases, c.dist.out_dims), s = new E.Layout(c.shared.bases, c.shared.out_dims);
        return E.simulateAccess(d, s, c.bitwidth).total;
    })""", cases)
    assert got == [c["expected"] for c in cases]


def test_lemma_panel_agrees_with_the_simulator_on_random_layouts(page):
    """Lemma 9.4 as the page computes it: exactly n·c wavefronts per step when a lane moves at least 4 bytes,
    at least c below that — on random layouts with 1- to 16-byte vectors."""
    from linear_layouts.analysis import warp_simulator
    rng = np.random.default_rng(11)
    pyrng = random.Random(11)
    cases = []
    for _ in range(80):
        shape_log2 = [int(rng.integers(2, 6)), int(rng.integers(3, 7))]
        while sum(shape_log2) < 7:
            shape_log2[1] += 1
        shape = [1 << b for b in shape_log2]
        dist = warp_simulator.random_distributed_layout(rng, shape_log2)
        dist = LinearLayout(dist.bases, dict(zip(["dim0", "dim1"], shape)), require_surjective=False)
        bitwidth = pyrng.choice([8, 16, 32, 64])
        b = min(sum(shape_log2), (1024 // bitwidth).bit_length() - 1)
        shared = toggle_swizzle(row_major_shared(shape), [(j, i) for j in range(sum(shape_log2) - b) for i in range(b)
                                                          if pyrng.random() < 0.2], bitwidth)
        cases.append({"dist": {"bases": dist.bases, "out_dims": dist.out_dims},
                      "shared": {"bases": shared.bases, "out_dims": shared.out_dims}, "bitwidth": bitwidth})
    results = page.evaluate("""cases => cases.map(c => {
        const E = window.explorer;
        const d = new E.Layout(c.dist.bases, c.dist.out_dims), s = new E.Layout(c.shared.bases, c.shared.out_dims);
        const sim = E.simulateAccess(d, s, c.bitwidth), l = E.lemma(d, s, c.bitwidth, sim);
        return {bytes: sim.vecBytes, exact: l.exact, predicted: l.predicted, c: l.c, steps: sim.steps.map(x => x.wavefronts)};
    })""", cases)
    assert {r["bytes"] for r in results} >= {1, 2, 4, 8, 16}
    for r in results:
        if r["exact"]:
            assert set(r["steps"]) == {r["predicted"]}, r
        else:
            assert min(r["steps"]) >= r["c"], r


def test_f2_intersection_in_js_matches_python(page):
    rng = random.Random(8)
    cases = []
    for _ in range(200):
        d = rng.randint(1, 12)
        u = [rng.randrange(1 << d) for _ in range(rng.randint(0, d))]
        v = [rng.randrange(1 << d) for _ in range(rng.randint(0, d))]
        cases.append([u, v, len(f2.intersection(u, v)) if u and v else 0])
    dims = page.evaluate("cs => cs.map(([u, v]) => window.explorer.F2.intersection(u, v).length)", cases)
    assert dims == [c[2] for c in cases]


def test_access_selector_and_step_slider(page):
    page.select_option("#base-select", "1")  # XOR m: every load step is 2 wavefronts
    page.select_option("#access-select", "load")
    for step in (0, 7, 15):
        page.eval_on_selector("#step", f"(el) => {{ el.value = '{step}'; el.dispatchEvent(new Event('input')); }}")
        assert int(page.text_content("#step-wavefronts")) == 2
        bars = page.query_selector_all("#bank-bars rect.bar")
        lanes = [int(b.get_attribute("data-lanes")) for b in bars]
        assert sum(lanes) == 32 and lanes.count(2) == 16 and lanes.count(0) == 16
    page.select_option("#access-select", "store")
    assert int(page.text_content("#step-wavefronts")) == 1
    page.select_option("#access-select", "load")


def test_algorithm_stepper_walks_v_to_result(page):
    steps = page.evaluate("window.explorer.data.scenarios[0].algorithm")
    if not steps:
        pytest.skip("no optimal_swizzle in linear_layouts.analysis yet")
    names = []
    for _ in steps["steps"]:
        names.append(page.text_content("#algo-step"))
        page.click("#algo-next")
    assert names[:6] == ["V", "I", "E", "F", "G", "C"] and names[-1] == "result"
    page.click("#algo-track span:first-child")
    assert page.text_content("#algo-step") == "V"


def test_typed_bases(page):
    page.click("details summary")
    page.fill("#custom-bases", "{not json")
    page.click("#apply-custom")
    assert "Not a layout" in page.text_content("#custom-error")
    page.fill("#custom-bases", json.dumps({"bases": {"lane": [[0, 1], [0, 2], [1, 0]], "register": [[0, 4]]},
                                           "out_dims": {"dim0": 2, "dim1": 8}}))
    page.click("#apply-custom")
    assert page.text_content("#custom-error") == ""
    assert "2 registers × 8 lanes" in page.text_content("#dist-caption")
    page.fill("#custom-bases", json.dumps({"bases": {"lane": [[0, 9]]}, "out_dims": {"dim0": 2, "dim1": 8}}))
    page.click("#apply-custom")
    assert "outside dim1" in page.text_content("#custom-error")
    assert page.errors == []


def test_every_scenario_and_base_matches_python(page):
    """Each embedded scenario (seed + catalog conversions), each shared layout: page == analysis.banks."""
    from linear_layouts.analysis import banks
    from linear_layouts.present.viz.explorer import default_scenarios, explorer_data

    data = page.evaluate("window.explorer.data")
    assert len(data["scenarios"]) == len(default_scenarios())
    for index, scenario in enumerate(data["scenarios"]):
        page.select_option("#scenario-select", str(index))
        store = LinearLayout(scenario["store"]["bases"], scenario["store"]["out_dims"])
        load = LinearLayout(scenario["load"]["bases"], scenario["load"]["out_dims"])
        for base, shared_json in enumerate(scenario["shared"]):
            page.select_option("#base-select", str(base))
            shared = LinearLayout(shared_json["bases"], shared_json["out_dims"])
            expected = (banks.wavefronts(shared, store, scenario["bitwidth"], op="store"),
                        banks.wavefronts(shared, load, scenario["bitwidth"], op="load"))
            assert _counts(page) == expected, (scenario["name"], shared_json["name"])
    assert explorer_data()["scenarios"][0]["shared"][2]["name"].endswith("(= optimal_swizzle)")
    page.select_option("#scenario-select", "0")
    assert page.errors == []


def _catalog_option(page, name: str) -> str:
    for option in page.query_selector_all("#dist-select option"):
        if option.text_content() == f"catalog: {name}":
            return option.get_attribute("value")
    raise AssertionError(f"{name} not offered")


def test_catalog_layout_as_load_and_typed_shared_bases(page):
    """Offline: a catalog layout becomes the load; counts follow the Python model; the steps are marked stale.
    Typed shared bases become a base layout; bad ones are refused with a reason."""
    from linear_layouts.analysis import banks
    from linear_layouts import layouts as catalog
    page.goto(page.url)  # fresh state
    page.wait_for_function("document.getElementById('wf-load').textContent !== '?'")
    name = "BlockedLayout([1,1],[2,16],[1,1],[1,0])"
    page.select_option("#dist-select", _catalog_option(page, name))
    page.click("#use-as-load")
    load = catalog.BlockedLayout([1, 1], [2, 16], [1, 1], [1, 0]).to_linear([16, 32])
    seed = seed_transpose()
    page.select_option("#base-select", "1")
    assert _counts(page) == (16, banks.wavefronts(seed.shared[1][1], load, 32))
    assert "original pair" in page.text_content("#algo-note")
    page.click("text=Type shared bases")
    swizzle = toggle_swizzle(row_major_shared([16, 32]), [(0, 3), (1, 2), (2, 4)], 32)
    page.fill("#custom-shared", json.dumps({"bases": swizzle.bases, "out_dims": swizzle.out_dims}))
    page.click("#apply-shared")
    assert page.text_content("#shared-error") == ""
    assert page.eval_on_selector("#base-select", "s => s.options[s.selectedIndex].text").startswith("typed")
    assert _counts(page) == (banks.wavefronts(swizzle, seed.store, 32, op="store"), banks.wavefronts(swizzle, load, 32))
    page.fill("#custom-shared", json.dumps({"bases": {"offset": [[0, 1]] * 9}, "out_dims": {"dim0": 16, "dim1": 32}}))
    page.click("#apply-shared")
    assert "one to one" in page.text_content("#shared-error")
    assert page.errors == []


def test_served_explorer_recomputes_the_swizzle(page):
    """Served by `linear-layouts explore`: a new pair gets its optimal swizzle and steps from the server."""
    import subprocess
    import sys

    from linear_layouts.analysis import swizzle
    from linear_layouts import layouts as catalog
    proc = subprocess.Popen([sys.executable, "-m", "linear_layouts.cli", "explore", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    pg = page.context.browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        url = proc.stdout.readline().split()[4]
        assert url.startswith("http://127.0.0.1:")
        pg.goto(url)
        pg.wait_for_function("document.getElementById('wf-load').textContent !== '?'")
        pg.select_option("#dist-select", _catalog_option(pg, "BlockedLayout([1,1],[2,16],[1,1],[1,0])"))
        pg.click("#use-as-load")
        pg.wait_for_function("document.getElementById('base-select').options.length === 4")
        load = catalog.BlockedLayout([1, 1], [2, 16], [1, 1], [1, 0]).to_linear([16, 32])
        result = swizzle.optimal_swizzle(seed_transpose().store, load, 32)
        assert _counts(pg) == (result.store_wavefronts, result.load_wavefronts)
        assert pg.text_content("#algo-note") == ""
        assert pg.text_content("#algo-step") == "V"
    finally:
        pg.close()
        proc.terminate()
        proc.wait(timeout=10)


def test_a_layout_given_on_the_command_line_is_shown_selected(page, tmp_path, capsys):
    """`explore --layout X --shape 32,64`: X gets a scenario of its own, selected, and the view draws it."""
    from linear_layouts.cli import main

    spec = "BlockedLayout([1,4],[4,8],[4,1],[1,0])"
    path = tmp_path / "explorer.html"
    assert main(["explore", "--layout", spec, "--shape", "32,64", "-o", str(path)]) == 0
    assert capsys.readouterr().err == ""
    pg = page.context.browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        pg.goto(path.as_uri())
        pg.wait_for_function("document.getElementById('wf-load').textContent !== '?'")
        selected = pg.eval_on_selector("#scenario-select", "s => s.options[s.selectedIndex].text")
        assert selected.startswith(spec)
        assert pg.text_content("#dist-caption").startswith(f"{spec}: 16 registers × 32 lanes × 4 warps")
        shown = pg.evaluate("window.explorer.data.scenarios[0].store")
        from linear_layouts.layouts import BlockedLayout

        assert LinearLayout(shown["bases"], shown["out_dims"]) == BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0]).to_linear([32, 64])
    finally:
        pg.close()
    # one that cannot be shown is said so, and the page still opens
    assert main(["explore", "--layout", "NVMMASharedLayout(128,16)", "--shape", "32,64", "-o", str(path)]) == 0
    assert "warning: --layout 'NVMMASharedLayout(128,16)': a shared layout" in capsys.readouterr().err


def test_served_page_reads_typed_gluon_text_with_the_clis_parser(page, capsys):
    """Served: Gluon (and TTGIR, CuTe) text in 'Type bases' is read by the server's parser; an error is the
    command line's own one-line message."""
    import subprocess
    import sys

    from linear_layouts.layouts import BlockedLayout
    from linear_layouts.cli import main

    proc = subprocess.Popen([sys.executable, "-m", "linear_layouts.cli", "explore", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    pg = page.context.browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        url = proc.stdout.readline().split()[4]
        pg.goto(url)
        pg.wait_for_function("document.getElementById('wf-load').textContent !== '?'")
        pg.click("details summary")
        pg.fill("#custom-bases", "BlockedLayout([1,4],[4,8],[1,1],[1,0])")   # the seed's 16x32 scenario
        pg.click("#apply-custom")
        pg.wait_for_function("document.getElementById('dist-caption').textContent.startsWith('BlockedLayout(')")
        assert pg.text_content("#custom-error") == ""
        assert "16 registers × 32 lanes × 1 warp ·" in pg.text_content("#dist-caption")
        shown = pg.evaluate("window.explorer.state.custom")
        assert LinearLayout(shown["bases"], shown["out_dims"]) == BlockedLayout([1, 4], [4, 8], [1, 1], [1, 0]).to_linear([16, 32])
        pg.fill("#custom-bases", "#ttg.blocked<{sizePerThread = [2, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], "
                                 "order = [0, 1]}>")
        pg.click("#apply-custom")
        pg.wait_for_function("document.getElementById('dist-caption').textContent.startsWith('#ttg.blocked')")
        bad = "BlockedLayout([1,4],[4,8])"
        pg.fill("#custom-bases", bad)
        pg.click("#apply-custom")
        pg.wait_for_function("document.getElementById('custom-error').textContent !== ''")
        assert main(["show", bad, "--shape", "16,32"]) == 2
        cli = capsys.readouterr().err.strip()
        assert cli == "linear-layouts: error: " + pg.text_content("#custom-error")
        pg.click("text=Type shared bases")
        pg.fill("#custom-shared", "SwizzledSharedLayout(2,1,16,[1,0])")                 # XOR 2m
        pg.click("#apply-shared")
        pg.wait_for_function("document.getElementById('base-select').options.length === 4")
        assert pg.text_content("#shared-error") == "" and _counts(pg) == (16, 16)
        assert pg.evaluate("window.explorer.data.scenarios[0].shared.length") == 4
    finally:
        pg.close()
        proc.terminate()
        proc.wait(timeout=10)
    assert page.errors == []
