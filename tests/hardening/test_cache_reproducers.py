"""Issue 33, item 3: the kernel cache could hand a foreign cubin to the runtime.

Only the cache folder and its parent were checked and the cubin was reopened by path after its hash was
verified: with a world-writable, non-sticky grandparent another user could rename the parent while nvcc ran
and the runtime loaded their file. ``LINEAR_LAYOUTS_CACHE=/`` was accepted as root; a folder at an entry path
raised ``IsADirectoryError``; a deeply nested manifest ``RecursionError``; a 3 GiB cubin was read whole. Now
every folder from ``/`` down is checked on its descriptor, entries are opened once through the folder's
descriptor and verified on the bytes read, and the runtime loads those bytes (``cuModuleLoadData``).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
import types
import warnings
from pathlib import Path

import pytest

from linear_layouts.codegen import ptx
from linear_layouts.codegen.ptx import CacheWarning, CompileError, cache_dir, cache_key, cached_artifact

SOURCE = '__global__ void k(int *p) { p[threadIdx.x] = 2 * threadIdx.x; }\n'
needs_nvcc = pytest.mark.skipif(ptx.find_nvcc() is None, reason="nvcc not installed")


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv(ptx.CACHE_ENV, str(tmp_path / "kernels"))
    return cache_dir()


def _names(kind: str = "ptx") -> tuple[str, str]:
    name = cache_key(SOURCE, "sm_90", kind)[:24]
    return f"{name}.{kind}", f"{name}.{kind}.json"


def _manifest(data: bytes, kind: str = "ptx") -> str:
    return json.dumps({"source_sha256": cache_key(SOURCE, "sm_90", kind), "arch": "sm_90", "kind": kind,
                       "artifact_sha256": hashlib.sha256(data).hexdigest()})


@pytest.mark.parametrize("folder", ["/", "/etc", "/usr/lib/linear_layouts", "/tmp", "/root", "/dev/shm/x"])
def test_system_folders_are_refused_even_as_root(monkeypatch, folder):
    monkeypatch.setenv(ptx.CACHE_ENV, folder)
    with pytest.raises(CompileError, match="a system folder .* is never a cache"):
        cache_dir()


def test_a_writable_grandparent_is_refused(tmp_path, monkeypatch):
    """The race of the issue needs a folder above the cache's parent that others can write: every folder up
    to / is now checked (ours or root's; writable by others only if sticky)."""
    grand = tmp_path / "grand"
    (grand / "parent").mkdir(parents=True)
    os.chmod(grand, 0o777)
    monkeypatch.setenv(ptx.CACHE_ENV, str(grand / "parent" / "kernels"))
    with pytest.raises(CompileError, match=r"the folder above it \(.*grand\) is writable by other users \(mode 0777\)"):
        cache_dir()
    os.chmod(grand, 0o1777)  # sticky, as /tmp: nobody can rename another user's folder in it
    assert cache_dir() == grand / "parent" / "kernels"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown")
def test_a_grandparent_of_another_user_is_refused(tmp_path, monkeypatch):
    grand = tmp_path / "grand"
    (grand / "parent").mkdir(parents=True)
    os.chown(grand, 65534, 65534)
    monkeypatch.setenv(ptx.CACHE_ENV, str(grand / "parent" / "kernels"))
    with pytest.raises(CompileError, match=r"the folder above it \(.*grand\) belongs to uid 65534"):
        cache_dir()


def test_a_folder_a_huge_file_or_a_nested_manifest_is_refused_not_read(cache):
    out, record = _names()
    (cache / out).mkdir()
    (cache / record).write_text(_manifest(b"k"))
    os.chmod(cache / record, 0o600)
    assert cached_artifact(cache, SOURCE, "sm_90", "ptx") == (None, f"{out}: it is not a regular file")
    (cache / out).rmdir()
    with open(cache / out, "wb") as sparse:  # 3 GiB, allocated lazily: refused by its size, never read
        sparse.truncate(3 << 30)
    os.chmod(cache / out, 0o600)
    start = time.perf_counter()
    path, reason = cached_artifact(cache, SOURCE, "sm_90", "ptx")
    assert path is None and reason == f"{out}: {3 << 30} bytes, above the {ptx.MAX_ARTIFACT_BYTES} of a cache entry (not read)"
    assert time.perf_counter() - start < 1
    (cache / out).write_bytes(b"k")
    (cache / record).write_text("[" * 2000 + "]" * 2000)  # 4000 bytes: nested deeper than json recurses
    # Python 3.11's json recurses past its limit here; 3.12's parses the nesting: refused either way
    assert cached_artifact(cache, SOURCE, "sm_90", "ptx") in (
        (None, f"{record}: unreadable (RecursionError)"), (None, f"{record}: not a manifest (a JSON object expected)"))
    (cache / record).write_text("[" * 5000)
    assert "5000 bytes, above the 4096 of a cache entry" in cached_artifact(cache, SOURCE, "sm_90", "ptx")[1]


@needs_nvcc
@pytest.mark.parametrize("blocker", ["empty folder", "full folder", "nested manifest"])
def test_a_broken_entry_is_ignored_and_recompiled_with_one_warning(cache, blocker):
    out, record = _names()
    if blocker == "nested manifest":
        (cache / out).write_bytes(b"k")
        (cache / record).write_text("[" * 2000 + "]" * 2000)
        for name in (out, record):
            os.chmod(cache / name, 0o600)
    else:
        (cache / out).mkdir()
        if blocker == "full folder":
            (cache / out / "x").write_text("x")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        text = ptx.compile_ptx(SOURCE)
    assert ".entry" in text and [type(w.message) for w in caught] == [CacheWarning], [str(w.message) for w in caught]
    if blocker != "full folder":  # the entry was replaced and verifies; a full folder is left alone
        assert cached_artifact(cache, SOURCE, "sm_90", "ptx")[0] == cache / out


@needs_nvcc
def test_the_runtime_loads_the_verified_bytes_never_the_path(cache, monkeypatch):
    """The runtime asks compile_cubin_bytes for the cubin and hands those bytes to the driver; swapping the
    file after it was verified changes nothing that is loaded."""
    from linear_layouts.codegen import runtime

    loaded: list[bytes] = []

    class Module:
        def load(self, data: bytes) -> None:
            loaded.append(data)

        def get_function(self, name: str) -> object:
            return types.SimpleNamespace(name=name)

    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(function=types.SimpleNamespace(Module=Module)),
                                 RawModule=lambda **kw: pytest.fail(f"RawModule{kw} would reopen a path"))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    runtime._function.cache_clear()
    try:
        function = runtime._function(SOURCE, "k", 0)
    finally:
        runtime._function.cache_clear()
    assert function.name == "k" and len(loaded) == 1 and loaded[0][:4] == b"\x7fELF"
    out, record = _names("cubin")
    assert hashlib.sha256(loaded[0]).hexdigest() == json.loads((cache / record).read_text())["artifact_sha256"]
    (cache / out).write_bytes(b"\x7fELF swapped after the check")  # what the attacker's rename achieved
    with pytest.warns(CacheWarning, match="do not match the hash"):
        assert ptx.compile_cubin_bytes(SOURCE)[:4] == b"\x7fELF" and b"swapped" not in ptx.compile_cubin_bytes(SOURCE)
