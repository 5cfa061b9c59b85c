"""The kernel cache can't be poisoned (issue 13): it lives in a private folder (0700, ours, nobody else may
write), and an entry is used only when its manifest's source hash and file hash both match; a planted,
swapped, linked or foreign file is refused and compiled afresh.

The issue's reproducer: ``compile_cubin`` returned ``/tmp/linear_layouts_cache/<sha256(src)[:24]>.cubin`` if it
existed, unchecked, from a world-shared folder; the runtime then loaded it onto the GPU.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import warnings
from pathlib import Path

import pytest

from linear_layouts.codegen import ptx
from linear_layouts.codegen.ptx import CacheWarning, CompileError, cache_dir, cache_key, cached_artifact

SOURCE = '__global__ void k(int *p) { p[threadIdx.x] = threadIdx.x; }\n'
needs_nvcc = pytest.mark.skipif(ptx.find_nvcc() is None, reason="nvcc not installed")


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "kernels"
    monkeypatch.setenv(ptx.CACHE_ENV, str(root))
    return cache_dir()


def _entry(root: Path, source: str, kind: str = "ptx") -> tuple[Path, Path]:
    name = cache_key(source, "sm_90", kind)[:24]
    return root / f"{name}.{kind}", root / f"{name}.{kind}.json"


def _plant(root: Path, source: str, data: bytes, kind: str = "ptx", *, manifest: dict | None = None) -> Path:
    """Write an entry by hand, as an attacker (or a stale run) would."""
    out, record = _entry(root, source, kind)
    out.write_bytes(data)
    os.chmod(out, 0o600)
    if manifest is not None:
        record.write_text(json.dumps(manifest))
        os.chmod(record, 0o600)
    return out


def _valid_manifest(source: str, data: bytes, kind: str = "ptx") -> dict:
    return {"source_sha256": cache_key(source, "sm_90", kind), "arch": "sm_90", "kind": kind,
            "artifact_sha256": hashlib.sha256(data).hexdigest()}


def test_default_folder_is_private_under_xdg_cache_home(tmp_path, monkeypatch):
    monkeypatch.delenv(ptx.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    root = cache_dir()
    assert root == tmp_path / "xdg" / "linear_layouts" / "kernels"
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o700
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # the XDG spec: relative values are ignored
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "linear_layouts" / "kernels"


def test_override_is_kept_for_the_gpu_suite(cache, tmp_path):
    assert cache == tmp_path / "kernels" and stat.S_IMODE(os.stat(cache).st_mode) == 0o700


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o1777])
def test_a_folder_others_can_write_is_refused(tmp_path, monkeypatch, mode):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, mode)
    monkeypatch.setenv(ptx.CACHE_ENV, str(shared))
    with pytest.raises(CompileError, match=r"writable by other users \(mode [01]77[57]\)"):
        cache_dir()


def test_a_linked_folder_is_refused(tmp_path, monkeypatch):
    (tmp_path / "real").mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    monkeypatch.setenv(ptx.CACHE_ENV, str(tmp_path / "link"))
    with pytest.raises(CompileError, match="symbolic link"):
        cache_dir()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown")
def test_a_folder_of_another_user_is_refused(tmp_path, monkeypatch):
    other = tmp_path / "other"
    other.mkdir(mode=0o700)
    os.chown(other, 65534, 65534)
    monkeypatch.setenv(ptx.CACHE_ENV, str(other))
    with pytest.raises(CompileError, match="belongs to uid 65534"):
        cache_dir()


def test_a_verified_entry_is_used(cache):
    data = b"// the cached PTX\n"
    _plant(cache, SOURCE, data, manifest=_valid_manifest(SOURCE, data))
    assert cached_artifact(cache, SOURCE, "sm_90", "ptx") == (_entry(cache, SOURCE)[0], None)
    assert ptx.compile_ptx(SOURCE) == data.decode()  # returned without running nvcc


def test_a_planted_file_without_manifest_is_refused(cache):
    """The issue's reproducer: a file at the expected name, planted by someone else."""
    _plant(cache, SOURCE, b"\x7fELF evil cubin")
    path, reason = cached_artifact(cache, SOURCE, "sm_90", "ptx")
    assert path is None and "json: it does not exist" in reason


def test_a_tampered_file_is_refused(cache):
    _plant(cache, SOURCE, b"evil", manifest=_valid_manifest(SOURCE, b"the real kernel"))
    assert "do not match the hash" in cached_artifact(cache, SOURCE, "sm_90", "ptx")[1]


def test_an_entry_of_another_source_is_refused(cache):
    """A manifest whose source hash differs (e.g. two sources sharing the 24-digit file name)."""
    other = SOURCE.replace("threadIdx.x;", "0;")
    _plant(cache, SOURCE, b"k", manifest=_valid_manifest(other, b"k"))
    assert "another source" in cached_artifact(cache, SOURCE, "sm_90", "ptx")[1]


def test_a_linked_or_others_writable_entry_is_refused(cache, tmp_path):
    target = tmp_path / "elsewhere.ptx"
    target.write_bytes(b"k")
    out, record = _entry(cache, SOURCE)
    out.symlink_to(target)
    record.write_text(json.dumps(_valid_manifest(SOURCE, b"k")))
    assert "symbolic link" in cached_artifact(cache, SOURCE, "sm_90", "ptx")[1]
    out.unlink()
    _plant(cache, SOURCE, b"k", manifest=_valid_manifest(SOURCE, b"k"))
    os.chmod(record, 0o666)
    assert "writable by other users" in cached_artifact(cache, SOURCE, "sm_90", "ptx")[1]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown")
def test_an_entry_of_another_user_is_refused(cache):
    out = _plant(cache, SOURCE, b"k", manifest=_valid_manifest(SOURCE, b"k"))
    os.chown(out, 65534, 65534)
    assert "belongs to uid 65534" in cached_artifact(cache, SOURCE, "sm_90", "ptx")[1]


@needs_nvcc
@pytest.mark.parametrize("kind", ["ptx", "cubin"])
def test_a_planted_file_is_refused_and_recompiled(cache, tmp_path, kind):
    """End to end: the foreign file is never returned; the fresh entry verifies; a link is replaced, not
    written through."""
    target = tmp_path / "victim"
    target.write_bytes(b"precious")
    out, _ = _entry(cache, SOURCE, kind)
    out.symlink_to(target)
    with pytest.warns(CacheWarning, match="symbolic link"):
        path = ptx.compile_cubin(SOURCE) if kind == "cubin" else None
        if kind == "ptx":
            text = ptx.compile_ptx(SOURCE)
            assert ".entry" in text
            path = out
    assert target.read_bytes() == b"precious"
    assert not path.is_symlink() and path.read_bytes() != b"precious"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert cached_artifact(cache, SOURCE, "sm_90", kind) == (path, None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the second call is a plain hit
        again = ptx.compile_cubin(SOURCE) if kind == "cubin" else _entry(cache, SOURCE, kind)[0]
    assert again == path


@needs_nvcc
def test_runtime_loads_only_verified_cubins(cache):
    """The runtime's path to a cubin is compile_cubin: a planted cubin under the right name is replaced."""
    _plant(cache, SOURCE, b"\x7fELF planted", kind="cubin")
    with pytest.warns(CacheWarning):
        path = ptx.compile_cubin(SOURCE)
    assert path.read_bytes()[:4] == b"\x7fELF" and b"planted" not in path.read_bytes()


def test_a_folder_above_the_cache_that_others_can_write_is_refused(tmp_path, monkeypatch):
    """Whoever can write the folder above the cache can swap the cache folder for their own between our
    check and our load: refused, unless that folder is sticky (like /tmp)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    monkeypatch.setenv(ptx.CACHE_ENV, str(shared / "kernels"))
    with pytest.raises(CompileError, match=r"the folder above it \(.*shared\) is writable by other users \(mode 0777\)"):
        cache_dir()
    os.chmod(shared, 0o1777)
    assert cache_dir() == shared / "kernels"
