"""The Triton hook's cached TTGIR file (``stage._ttgir_file``) is read once through the checked cache folder,
never through a link and never blocking: a pipe, a link or an entry swapped while it is checked is replaced by
the text, not read. Needs no Triton."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from linear_layouts.codegen import ptx
from linear_layouts.pipeline.triton_hook import stage

TEXT = "module { tt.func @k() { tt.return } }\n"

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """A private kernel cache folder of this test."""
    folder = tmp_path / "kernels"
    monkeypatch.setenv("LINEAR_LAYOUTS_CACHE", str(folder))
    return ptx.cache_dir()


def _entry(cache: Path) -> Path:
    return cache / f"triton-ttgir-{stage.text_digest(TEXT)[:24]}.ttgir"


def _file_of(text: str, seconds: float = 10) -> tuple[Path, str, int]:
    """(the path ``_ttgir_file(text)`` gives, its text then, its file mode then), run in a thread that must
    finish within ``seconds``."""
    found: list = []

    def use() -> None:
        with stage._ttgir_file(text) as path:
            found.append((path, path.read_text(), os.lstat(path).st_mode))

    worker = threading.Thread(target=use, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "the cached TTGIR entry blocked the compile"
    assert found, "_ttgir_file raised"
    return found[0]


def test_a_missing_entry_is_written_private(cache):
    path, text, mode = _file_of(TEXT)
    assert path == _entry(cache) and text == TEXT
    assert stat.S_ISREG(mode) and stat.S_IMODE(mode) == 0o600


def test_a_regular_entry_holding_the_text_is_read_and_kept(cache):
    entry = _entry(cache)
    entry.write_text(TEXT)
    entry.chmod(0o600)
    before = os.lstat(entry).st_ino
    path, text, _ = _file_of(TEXT)
    assert path == entry and text == TEXT and os.lstat(entry).st_ino == before


def test_a_regular_entry_holding_another_text_is_rewritten(cache):
    entry = _entry(cache)
    entry.write_text("module { }\n")
    entry.chmod(0o600)
    path, text, _ = _file_of(TEXT)
    assert path == entry and text == TEXT


def test_an_entry_that_is_a_pipe_is_replaced_without_blocking(cache):
    entry = _entry(cache)
    os.mkfifo(entry, 0o600)
    path, text, mode = _file_of(TEXT)
    assert path == entry and text == TEXT and stat.S_ISREG(mode)


def test_an_entry_that_is_a_link_is_not_followed(cache, tmp_path):
    outside = tmp_path / "pipe"
    os.mkfifo(outside, 0o600)  # followed, the read would block
    entry = _entry(cache)
    entry.symlink_to(outside)
    path, text, mode = _file_of(TEXT)
    assert path == entry and text == TEXT and stat.S_ISREG(mode)
    assert stat.S_ISFIFO(os.lstat(outside).st_mode)  # the link's target is left alone


def test_an_entry_swapped_for_a_pipe_after_its_check_is_not_read_through_its_name(cache, monkeypatch):
    """The entry is checked and read on one descriptor: a pipe put in its place once it was checked (the time
    between a check of the name and a read of the name) is never opened."""
    entry = _entry(cache)
    entry.write_text(TEXT)
    entry.chmod(0o600)
    checked = ptx._unsafe_file

    def check_then_swap(info: os.stat_result) -> str | None:
        problem = checked(info)
        if stat.S_ISREG(os.lstat(entry).st_mode):
            entry.unlink()
            os.mkfifo(entry, 0o600)
        return problem

    monkeypatch.setattr(ptx, "_unsafe_file", check_then_swap)
    found: list = []

    def enter() -> None:
        with stage._ttgir_file(TEXT) as path:
            found.append(path)

    worker = threading.Thread(target=enter, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():  # unblock the reader stuck on the pipe before failing
        with open(os.open(entry, os.O_WRONLY | os.O_NONBLOCK), "wb"):
            pass
        pytest.fail("the entry was read through its name after its check: it blocked on a pipe")
    assert found == [entry]
