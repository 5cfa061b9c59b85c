"""Regenerate the gallery under docs/images (run by hand: python tests/tools/make_docs_images.py).

Every picture kind the library draws, made by the public renderers (the same calls the CLI makes), then
headless Chromium (Playwright, /usr/bin/chromium) screenshots of the SVG / HTML kinds and of the
explorer page, so what a browser shows can be looked at and compared. ``--no-browser`` skips the
screenshots. docs/images/README.md lists the gallery with the command behind each picture.
"""

from __future__ import annotations

import pathlib
import sys
import time

from linear_layouts.analysis.swizzle import optimal_swizzle
from linear_layouts.catalog import BlockedLayout, NVMMADistributedLayout, NVMMASharedLayout
from linear_layouts.viz.bank_steps import bank_steps
from linear_layouts.viz.explorer import explorer_html
from linear_layouts.viz.page import layout_html
from linear_layouts.viz.png import distributed_png, shared_png
from linear_layouts.viz.scenarios import seed_transpose
from linear_layouts.viz.svg import bank_hits_svg, distributed_svg, matrix_svg, shared_svg

OUT = pathlib.Path(__file__).resolve().parents[2] / "docs" / "images"
SHOTS = OUT / "screenshots"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
BLOCKED = "BlockedLayout([1,4],[4,8],[4,1],[1,0])"


def pictures() -> dict[str, float]:
    """Writes the pictures; returns the seconds each PNG took."""
    seconds: dict[str, float] = {}

    def png(name: str, make) -> None:
        start = time.perf_counter()
        data = make()
        seconds[name] = time.perf_counter() - start
        (OUT / name).write_bytes(data)

    blocked = BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0])
    (OUT / "blocked-32x32.svg").write_text(distributed_svg(blocked.to_linear([32, 32]), title=f"{BLOCKED} on 32×32"))
    png("blocked-32x32.png", lambda: distributed_png(blocked.to_linear([32, 32]), title=f"{BLOCKED} on 32×32"))
    png("blocked-128x128.png", lambda: distributed_png(blocked.to_linear([128, 128]), title=f"{BLOCKED} on 128×128"))
    small = blocked.to_linear([16, 16])
    (OUT / "blocked-16x16-replicated.svg").write_text(
        distributed_svg(small, title=f"{BLOCKED} on 16×16: every element held twice"))
    png("blocked-16x16-replicated.png", lambda: distributed_png(small, title=f"{BLOCKED} on 16×16: every element held twice"))
    mma = NVMMADistributedLayout([2, 0], [4, 1], [16, 8])
    png("mma-v2-64x64.png", lambda: distributed_png(mma.to_linear([64, 64]), title="NVMMADistributedLayout([2,0],[4,1],[16,8]) on 64×64"))
    (OUT / "mma-v2-32x32-warp.svg").write_text(distributed_svg(
        mma.to_linear([32, 32]), label="warp", title="NVMMADistributedLayout([2,0],[4,1],[16,8]) on 32×32, --label warp"))

    seed = seed_transpose()
    (OUT / "seed-store.svg").write_text(distributed_svg(seed.store, title="seed store layout A: thread → column, register → row"))
    (OUT / "seed-load.svg").write_text(distributed_svg(seed.load, title="seed load layout B: (m = t mod 16, n = 2r + t/16)"))
    png("seed-load.png", lambda: distributed_png(seed.load, title="seed load layout B: (m = t mod 16, n = 2r + t/16)"))
    for (name, shared), slug in zip(seed.shared, ("unswizzled", "xor-m", "xor-2m")):
        (OUT / f"seed-shared-{slug}.svg").write_text(shared_svg(shared, 32, title=f"seed shared layout, {name}"))
        steps = bank_steps(shared, seed.load, 32)
        (OUT / f"seed-bank-hits-{slug}.svg").write_text(bank_hits_svg(steps, title=f"load through {name}: bank hits per step"))
    optimal = optimal_swizzle(seed.store, seed.load, 32).layout
    png("seed-shared-optimal.png", lambda: shared_png(optimal, 32, title="optimal swizzle 32m + (n ⊕ 2m)"))
    (OUT / "seed-shared-optimal-memory.svg").write_text(
        shared_svg(optimal, 32, view="physical", title="optimal swizzle 32m + (n ⊕ 2m): memory, rows × banks"))
    png("seed-shared-optimal-memory.png", lambda: shared_png(optimal, 32, view="physical",
                                                              title="optimal swizzle 32m + (n ⊕ 2m): memory, rows × banks"))
    (OUT / "seed-load-matrix.svg").write_text(matrix_svg(seed.load, title="seed load layout B as an F2 matrix"))
    nvmma = NVMMASharedLayout(128, 16).to_linear([64, 64])
    (OUT / "nvmma-shared-128b-fp16-64x64.svg").write_text(
        shared_svg(nvmma, 16, title="NVMMASharedLayout(128, 16) on 64×64 fp16"))
    (OUT / "layout-page.html").write_text(layout_html(nvmma, title="NVMMASharedLayout(128, 16) on 64×64 fp16",
                                                      element_bitwidth=16))
    return seconds


def screenshots() -> None:
    """Chromium's rendering of every SVG / HTML kind, and the explorer page in four states."""
    from playwright.sync_api import sync_playwright

    SHOTS.mkdir(exist_ok=True)
    pages = {"blocked-32x32.svg": 1500, "blocked-16x16-replicated.svg": 900, "mma-v2-32x32-warp.svg": 1500,
             "seed-shared-xor-m.svg": 1500, "seed-shared-optimal-memory.svg": 1500, "seed-bank-hits-xor-m.svg": 1100,
             "seed-load-matrix.svg": 700, "layout-page.html": 1400}
    page_file = OUT / "explorer.html"
    page_file.write_text(explorer_html())
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        for name, width in pages.items():
            page = browser.new_page(viewport={"width": width, "height": 600})
            text = (OUT / name).read_text()
            if name.endswith(".svg"):   # an SVG inline in a page: Chromium screenshots it in full
                text = f"<!DOCTYPE html><html><body style='margin:0'>{text}</body></html>"
            page.set_content(text)
            page.screenshot(path=str(SHOTS / (name.rsplit(".", 1)[0] + ".png")), full_page=True)
            page.close()
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
    (OUT / "layout-page.html").unlink()


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    timings = pictures()
    if "--no-browser" not in sys.argv:
        screenshots()
    else:
        (OUT / "layout-page.html").unlink()
    for name, seconds in timings.items():
        print(f"{name}: {seconds:.2f} s")
    print("\n".join(sorted(str(p.relative_to(OUT.parents[1])) for p in OUT.rglob("*") if p.is_file())))
