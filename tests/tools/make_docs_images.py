"""Regenerate the pictures under docs/images (run by hand: python tests/tools/make_docs_images.py).

Static pictures come from the renderers; the explorer screenshots from headless Chromium (Playwright).
"""

from __future__ import annotations

import pathlib
import sys

from linear_layouts.analysis.swizzle import optimal_swizzle
from linear_layouts.catalog import BlockedLayout, NVMMADistributedLayout
from linear_layouts.viz.bank_steps import bank_steps
from linear_layouts.viz.explorer import explorer_html
from linear_layouts.viz.png import distributed_png, shared_png
from linear_layouts.viz.scenarios import seed_transpose
from linear_layouts.viz.svg import bank_hits_svg, distributed_svg, matrix_svg, shared_svg

OUT = pathlib.Path(__file__).resolve().parents[2] / "docs" / "images"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def pictures() -> None:
    seed = seed_transpose()
    (OUT / "seed-store.svg").write_text(distributed_svg(seed.store, title="seed store layout A: thread → column, register → row"))
    (OUT / "seed-load.svg").write_text(distributed_svg(seed.load, title="seed load layout B: (m = t mod 16, n = 2r + t/16)"))
    (OUT / "seed-load.png").write_bytes(distributed_png(seed.load, title="seed load layout B"))
    for (name, shared), slug in zip(seed.shared, ("unswizzled", "xor-m", "xor-2m")):
        (OUT / f"seed-shared-{slug}.svg").write_text(shared_svg(shared, 32, title=f"seed shared layout, {name}"))
        steps = bank_steps(shared, seed.load, 32)
        (OUT / f"seed-bank-hits-{slug}.svg").write_text(bank_hits_svg(steps, title=f"load through {name}: bank hits per step"))
    optimal = optimal_swizzle(seed.store, seed.load, 32).layout
    (OUT / "seed-shared-optimal.png").write_bytes(shared_png(optimal, 32, title="optimal swizzle 32m + (n ⊕ 2m)"))
    (OUT / "seed-shared-optimal-memory.svg").write_text(shared_svg(optimal, 32, view="physical",
                                                                 title="optimal swizzle: memory rows × banks"))
    (OUT / "seed-load-matrix.svg").write_text(matrix_svg(seed.load, title="seed load layout B as an F2 matrix"))
    big = BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0]).to_linear([128, 128])
    (OUT / "blocked-128x128.png").write_bytes(distributed_png(big, title="BlockedLayout([1,4],[4,8],[4,1],[1,0]) on 128×128"))
    mma = NVMMADistributedLayout([2, 0], [4, 1], [16, 8]).to_linear([64, 64])
    (OUT / "mma-v2-64x64.png").write_bytes(distributed_png(mma, title="NVMMADistributedLayout([2,0],[4,1],[16,8]) on 64×64"))


def screenshots() -> None:
    from playwright.sync_api import sync_playwright

    page_file = OUT / "explorer.html"
    page_file.write_text(explorer_html())
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": 1500, "height": 1000})
        page.goto(page_file.as_uri())
        page.wait_for_function("document.getElementById('wf-load').textContent !== '?'")
        page.screenshot(path=str(OUT / "explorer-unswizzled.png"), full_page=True)
        page.evaluate("window.explorer.setToggles([[0,0],[1,1],[2,2],[3,3]])")
        page.check("#show-algebra")
        page.select_option("#access-select", "load")
        page.screenshot(path=str(OUT / "explorer-xor-m-algebra.png"), full_page=True)
        page.select_option("#base-select", "2")
        for _ in range(4):
            page.click("#algo-next")
        page.screenshot(path=str(OUT / "explorer-optimal-algorithm.png"), full_page=True)
        page.select_option("#scenario-select", "2")
        page.select_option("#base-select", "1")
        page.screenshot(path=str(OUT / "explorer-blocked-to-mma.png"), full_page=True)
        browser.close()
    page_file.unlink()


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    pictures()
    if "--no-browser" not in sys.argv:
        screenshots()
    print("\n".join(sorted(str(p.relative_to(OUT.parents[1])) for p in OUT.iterdir())))
