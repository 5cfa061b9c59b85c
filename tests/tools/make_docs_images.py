"""Regenerate the gallery under docs/images (run by hand from the repository root:
``python3 tests/tools/make_docs_images.py``; ``--no-browser`` skips the screenshots).

Every picture is made by the ``linear-layouts`` command listed beside it (run here through
``linear_layouts.cli.main``, so the gallery is exactly what the command prints today), then headless
Chromium (Playwright, /usr/bin/chromium) screenshots every SVG / HTML picture and the explorer page, so
what a browser shows can be looked at. docs/images/README.md is written from the same table.
"""

from __future__ import annotations

import contextlib
import io
import os
import pathlib
import shlex
import sys
import time

from linear_layouts import LinearLayout
from linear_layouts.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "images"
SHOTS = OUT / "screenshots"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
BLOCKED = "BlockedLayout([1,4],[4,8],[4,1],[1,0])"
LAYOUT_A = "BlockedLayout([2,2],[4,8],[2,1],[1,0])"
MMA = "NVMMADistributedLayout([2,0],[4,1],[16,8])"
MMA_2x2 = "NVMMADistributedLayout([2,0],[2,2],[16,8])"
NVMMA = "NVMMASharedLayout(128,16)"
XOR_M = "SwizzledSharedLayout(1,1,16,[1,0])"
XOR_2M = "SwizzledSharedLayout(2,1,16,[1,0])"
ROW_MAJOR = "SwizzledSharedLayout(1,1,1,[1,0])"
STORE = "@docs/images/transpose-store.json"
LOAD = "@docs/images/transpose-load.json"

# (section, file, arguments after `linear-layouts`, what it shows); -o docs/images/FILE is added.
GALLERY: list[tuple[str, str, list[str], str]] = [
    ("Distributed layouts: who holds each element", "blocked-16x16-layout-a.svg",
     ["show", LAYOUT_A, "--shape", "16,16", "--format", "svg"],
     "the paper's Layout A (tutorial §2): 2x2 registers per thread, 4x8 lanes, 2 warps; thick line between the warps"),
    ("", "blocked-16x16-layout-a.png", ["show", LAYOUT_A, "--shape", "16,16", "--format", "png"], "the same as PNG"),
    ("", "blocked-32x32.svg", ["show", BLOCKED, "--shape", "32,32", "--format", "svg"],
     "a 4-warp blocked layout on 32x32: each warp owns 4 rows of 32 columns, repeated twice down the tile"),
    ("", "blocked-32x32.png", ["show", BLOCKED, "--shape", "32,32", "--format", "png"], "the same as PNG"),
    ("", "blocked-32x32-lane.png", ["show", BLOCKED, "--shape", "32,32", "--format", "png", "--label", "lane"],
     "`--label lane`: only the lane id in each cell"),
    ("", "blocked-32x32-register.png",
     ["show", BLOCKED, "--shape", "32,32", "--format", "png", "--label", "register"],
     "`--label register`: only the register index"),
    ("", "blocked-32x32-thread.svg", ["show", BLOCKED, "--shape", "32,32", "--format", "svg", "--label", "thread"],
     "`--label thread`: only the thread id (lane + 32 * warp)"),
    ("", "blocked-128x128.png", ["show", BLOCKED, "--shape", "128,128", "--format", "png"],
     "the same layout on 128x128 (32 repetitions of each warp's tile; under 2 s, benchmarks/results/pictures.md)"),
    ("", "blocked-16x16-replicated.svg", ["show", BLOCKED, "--shape", "16,16", "--format", "svg"],
     "the layout covers 16x32, the tile is 16x16: every element is held by two threads (dark corner mark; the "
     "cell names the first owner, the tooltip all of them)"),
    ("", "blocked-16x16-replicated.png", ["show", BLOCKED, "--shape", "16,16", "--format", "png"], "the same as PNG"),
    ("", "blocked-16x16-replicated.txt", ["show", BLOCKED, "--shape", "16,16", "--format", "grid"],
     "`--format grid`: the picture as text for a terminal (a bar and a dashed rule between warps, `*` on "
     "replicated cells; without `-o` it is cut to the terminal's width)"),
    ("", "mma-v2-32x32.svg", ["show", MMA_2x2, "--shape", "32,32", "--format", "svg"],
     "the `mma.sync` accumulator, 2x2 warps of 16x8 tiles, on 32x32 (tutorial §9)"),
    ("", "mma-v2-32x32-warp.svg", ["show", MMA, "--shape", "32,32", "--format", "svg", "--label", "warp"],
     "`--label warp`: four warps of 16 rows each on a 32-row tile, so warps 2 and 3 repeat warps 0 and 1 "
     "(corner marks)"),
    ("", "mma-v2-32x32-warp.txt", ["show", MMA, "--shape", "32,32", "--format", "grid", "--label", "warp"],
     "the same as text"),
    ("", "mma-v2-128x128.png", ["show", MMA, "--shape", "128,128", "--format", "png"],
     "the accumulator on a 128x128 tile: 64 registers per thread"),
    ("", "transpose-store.svg", ["show", STORE, "--format", "svg"],
     "the tutorial's transpose (§4), store side: lane = column, register = row"),
    ("", "transpose-load.svg", ["show", LOAD, "--format", "svg"],
     "... load side: lanes 0-15 walk the rows, lane 16 the column pair, registers the other columns"),
    ("", "transpose-load.png", ["show", LOAD, "--format", "png"], "the same as PNG"),
    ("Shared layouts: where each element lives", "transpose-shared-xor-m.svg",
     ["show", XOR_M, "--shape", "16,32", "--dtype", "fp32", "--format", "svg"],
     "`offset = 32 m + (n xor m)`: the tile, each element coloured and labelled by its bank"),
    ("", "transpose-shared-xor-2m.png", ["show", XOR_2M, "--shape", "16,32", "--dtype", "fp32", "--format", "png"],
     "`32 m + (n xor 2m)`, the optimal swizzle of the transpose (tutorial §5)"),
    ("", "transpose-shared-xor-2m-memory.svg",
     ["show", XOR_2M, "--shape", "16,32", "--dtype", "fp32", "--format", "svg", "--view", "physical"],
     "`--view physical`: memory itself, one 128-byte row of the 32 banks per line, each slot labelled with the "
     "element it holds (row over column)"),
    ("", "transpose-shared-xor-2m-memory.png",
     ["show", XOR_2M, "--shape", "16,32", "--dtype", "fp32", "--format", "png", "--view", "physical"],
     "the same as PNG"),
    ("", "nvmma-shared-128b-fp16-32x64.svg",
     ["show", NVMMA, "--shape", "32,64", "--dtype", "fp16", "--format", "svg"],
     "Hopper's 128-byte swizzle (CuTe's `Swizzle<3,4,3>`) on fp16: 16-byte chunks XORed with the row"),
    ("", "nvmma-shared-128b-fp16-128x128.png",
     ["show", NVMMA, "--shape", "128,128", "--dtype", "fp16", "--format", "png"], "the same on 128x128"),
    ("Costs, algebra, pages", "banks-row-major-load.svg",
     ["banks", ROW_MAJOR, LOAD, "--shape", "16,32", "--dtype", "fp32", "--format", "svg"],
     "the transpose's load through row-major memory: lanes per bank at every step, red where a bank serves "
     "several words (16 wavefronts per step)"),
    ("", "banks-xor-m-load.svg", ["banks", XOR_M, LOAD, "--shape", "16,32", "--dtype", "fp32", "--format", "svg"],
     "... through `n xor m`: 2 per step"),
    ("", "banks-xor-2m-load.svg", ["banks", XOR_2M, LOAD, "--shape", "16,32", "--dtype", "fp32", "--format", "svg"],
     "... through `n xor 2m`: 1 per step, conflict-free"),
    ("", "transpose-load-matrix.svg", ["matrix", LOAD, "--format", "svg"],
     "the load layout as its F2 matrix: a dark cell is a 1"),
    ("", "nvmma-shared-page.html", ["show", NVMMA, "--shape", "64,64", "--dtype", "fp16", "--format", "html"],
     "the HTML page (see its screenshot): both views, the matrix, Triton's text view and the bases"),
]
EXPLORER = ["explorer-unswizzled.png", "explorer-xor-m-algebra.png", "explorer-optimal-algorithm.png",
            "explorer-blocked-to-mma.png"]


def command(argv: list[str], name: str) -> str:
    return "linear-layouts " + shlex.join(argv + ["-o", f"docs/images/{name}"])


def transpose_layouts() -> None:
    """The tutorial's §4 transpose as JSON files (the CLI reads them with @FILE)."""
    store = LinearLayout({"register": [[1, 0], [2, 0], [4, 0], [8, 0]],
                          "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16]]}, ["dim0", "dim1"])
    load = LinearLayout({"register": [[0, 2], [0, 4], [0, 8], [0, 16]],
                         "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]]}, ["dim0", "dim1"])
    (OUT / "transpose-store.json").write_text(store.to_json() + "\n")
    (OUT / "transpose-load.json").write_text(load.to_json() + "\n")


def pictures() -> dict[str, float]:
    """Runs every gallery command; returns the seconds each took."""
    seconds: dict[str, float] = {}
    for _, name, argv, _ in GALLERY:
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            code = main(argv + ["-o", str(OUT / name)])
        seconds[name] = time.perf_counter() - start
        if code != 0:
            raise SystemExit(f"{command(argv, name)} failed with {code}")
    return seconds


def screenshots() -> None:
    """Chromium's rendering of every SVG / HTML picture, and the explorer page in four states."""
    from playwright.sync_api import sync_playwright

    from linear_layouts.present.viz.explorer import explorer_html

    SHOTS.mkdir(exist_ok=True)
    page_file = OUT / "explorer.html"
    page_file.write_text(explorer_html())
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        for _, name, _, _ in GALLERY:
            if not name.endswith((".svg", ".html")):
                continue
            page = browser.new_page(viewport={"width": 1400, "height": 600})
            if name.endswith(".svg"):   # an SVG inline in a page: Chromium screenshots it in full
                page.set_content(f"<!DOCTYPE html><html><body style='margin:0'>{(OUT / name).read_text()}</body></html>")
            else:
                page.goto((OUT / name).as_uri())
            page.screenshot(path=str(SHOTS / (name.rsplit(".", 1)[0] + ".png")), full_page=True)
            page.close()
        page = browser.new_page(viewport={"width": 1500, "height": 1000})
        page.goto(page_file.as_uri())
        page.wait_for_function("document.getElementById('wf-load').textContent !== '?'")
        page.screenshot(path=str(OUT / EXPLORER[0]), full_page=True)
        page.evaluate("window.explorer.setToggles([[0,0],[1,1],[2,2],[3,3]])")
        page.check("#show-algebra")
        page.select_option("#access-select", "load")
        page.screenshot(path=str(OUT / EXPLORER[1]), full_page=True)
        page.select_option("#base-select", "2")
        for _ in range(4):
            page.click("#algo-next")
        page.screenshot(path=str(OUT / EXPLORER[2]), full_page=True)
        page.select_option("#scenario-select", "2")
        page.select_option("#base-select", "1")
        page.screenshot(path=str(OUT / EXPLORER[3]), full_page=True)
        browser.close()
    page_file.unlink()


def readme() -> str:
    """docs/images/README.md: every picture, what it shows, the command that made it."""
    lines = ["# Gallery", "",
             "Every picture below is the current output of the command beside it, run from the repository root",
             "(`python3 tests/tools/make_docs_images.py` reruns them all, writes this page and takes the Chromium",
             "screenshots in `screenshots/`: what a browser shows for each SVG / HTML picture).",
             "`transpose-store.json` / `transpose-load.json` are the 16x32 transpose of `docs/tutorial.md` §4.", "",
             "Distributed pictures: each cell names its thread `T` (lane + 32 * warp) over its register `r`",
             "(`--label thread|lane|register|warp` keeps one); the colour is the lane (hue, neighbouring lanes far",
             "apart; odd warps darker); thick lines separate warps; a dark corner marks a replicated element (held",
             "by several threads). Shared pictures: the colour and label are the bank of each element (or, with",
             "`--view physical`, memory row by row with the element each slot holds). `--format grid` prints the",
             "same picture as text (`.txt` below): `|` and `---` between warps, `*` on replicated cells."]
    for section, name, argv, what in GALLERY:
        if section:
            lines += ["", f"## {section}", "", "| picture | what it shows | command |", "|---|---|---|"]
        shown = f"[{name}]({name})" if not name.endswith(".html") else name
        if name.endswith((".svg", ".html")):
            shown += f" ([screenshot](screenshots/{name.rsplit('.', 1)[0]}.png))"
        lines.append(f"| {shown} | {what} | `{command(argv, name)}` |")
    lines += ["", "## The explorer", "",
              "`linear-layouts explore` (the interactive page on http://127.0.0.1:8000/), screenshotted in four "
              "states: the transpose unswizzled; the XOR m toggles with \"show the algebra\" on (Lemma 9.4's "
              "intersection `m0⊕n0`); the optimal-swizzle stepper; a blocked-to-mma scenario.", ""]
    lines += [f"[{name}]({name})" + ("  " if i < len(EXPLORER) - 1 else "") for i, name in enumerate(EXPLORER)]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    os.chdir(ROOT)      # the commands name docs/images/*.json relative to the repository root
    OUT.mkdir(parents=True, exist_ok=True)
    transpose_layouts()
    timings = pictures()
    if "--no-browser" not in sys.argv:
        screenshots()
    for _, name, _, _ in GALLERY:
        if name.endswith(".html"):
            (OUT / name).unlink()
    (OUT / "README.md").write_text(readme())
    for name, seconds in timings.items():
        print(f"{name}: {seconds:.2f} s")
