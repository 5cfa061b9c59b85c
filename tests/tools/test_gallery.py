"""docs/images is the current output: every gallery picture is what its listed command makes today, byte for
byte, and docs/images/README.md lists exactly the gallery (both written by tests/tools/make_docs_images.py)."""

from __future__ import annotations

import importlib.util
import pathlib

import pytest

from linear_layouts.cli import main

HERE = pathlib.Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("make_docs_images", HERE / "make_docs_images.py")
gallery = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gallery)
PICTURES = [(name, argv) for _, name, argv, _ in gallery.GALLERY if not name.endswith(".html")]


@pytest.mark.parametrize("name, argv", PICTURES, ids=[name for name, _ in PICTURES])
def test_gallery_picture_is_the_commands_current_output(name, argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(gallery.ROOT)                  # the commands name docs/images/*.json from the root
    assert main([*argv, "-o", str(tmp_path / name)]) == 0
    capsys.readouterr()
    assert (tmp_path / name).read_bytes() == (gallery.OUT / name).read_bytes(), (
        f"docs/images/{name} is stale: rerun python3 tests/tools/make_docs_images.py")


def test_gallery_readme_lists_every_picture_and_its_command():
    text = (gallery.OUT / "README.md").read_text()
    assert text == gallery.readme()
    for _, name, argv, _ in gallery.GALLERY:
        assert gallery.command(argv, name) in text
    for shot in gallery.EXPLORER:
        assert (gallery.OUT / shot).stat().st_size > 10_000
    svg_and_html = [name for _, name, _, _ in gallery.GALLERY if name.endswith((".svg", ".html"))]
    for name in svg_and_html:                        # what Chromium shows for each
        assert (gallery.OUT / "screenshots" / (name.rsplit(".", 1)[0] + ".png")).stat().st_size > 5_000, name
