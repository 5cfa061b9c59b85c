"""Offline compilation with ``nvcc`` and instruction counting in PTX and SASS.

``compile_ptx(source)`` runs ``nvcc -arch=sm_90 -ptx``; ``compile_cubin`` builds the machine code
the runtime loads.  ``count_ptx`` tallies opcodes (``st.shared.v4.b32``, ``ldmatrix...``,
``shfl.sync.idx.b32``, ``ld.global...``); ``count_sass`` tallies SASS opcodes (``STS.128``, ``LDSM``,
``SHFL.IDX``) from ``cuobjdump -sass``.  Counts are static: one per instruction in the code, not per
execution.  Compiled files live in a private, verified kernel cache (``cache_dir``, ``cached_artifact``):
no file another user planted is ever returned, so the runtime never loads a foreign cubin.

Example: ``count_ptx(compile_ptx(kernel.source))["st.shared.b32"]`` is 16 for the seed transpose.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
import warnings
from collections import Counter
from pathlib import Path

__all__ = [
    "find_nvcc",
    "find_cuobjdump",
    "compile_ptx",
    "compile_cubin",
    "count_ptx",
    "count_sass",
    "CompileError",
    "PTX_FAMILIES",
    "split_ptx_entries",
    "CACHE_ENV",
    "CacheWarning",
    "cache_dir",
    "cache_key",
    "cached_artifact",
]

PTX_FAMILIES = ("st.shared", "ld.shared", "stmatrix", "ldmatrix", "shfl.sync", "prmt", "ld.global", "st.global")


class CompileError(RuntimeError):
    """nvcc rejected the generated source (message: nvcc's diagnostics and the file)."""


def find_nvcc() -> str | None:
    """Path of ``nvcc`` (``$NVCC``, ``PATH``, ``/usr/local/cuda/bin``), or None."""
    for candidate in (os.environ.get("NVCC"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


def find_cuobjdump() -> str | None:
    """Path of ``cuobjdump`` next to nvcc or on ``PATH``, or None."""
    nvcc = find_nvcc()
    for candidate in (
        shutil.which("cuobjdump"),
        str(Path(nvcc).with_name("cuobjdump")) if nvcc else None,
        "/usr/local/cuda/bin/cuobjdump",
    ):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


# --- the kernel cache ---------------------------------------------------------------------------------------
#
# Compiled kernels are cached per user, in a private folder: ``$LINEAR_LAYOUTS_CACHE`` when set (the GPU suite
# points it at benchmarks/build/cubins to carry precompiled cubins to the GPU machine), else
# ``$XDG_CACHE_HOME/linear_layouts/kernels`` (``~/.cache/linear_layouts/kernels`` by default). The folder is made
# with mode 0700 and must be ours and writable by nobody else. Each entry is the compiled file plus a manifest
# recording the SHA-256 of the exact (arch, kind, source) it was compiled from and the SHA-256 of the compiled
# file; an entry is used only when both hashes match and both files are ours, regular and private. Anything
# else (a file planted by someone else, a truncated or swapped file, a hash collision of the short file name)
# is refused with a warning and compiled afresh.

CACHE_ENV = "LINEAR_LAYOUTS_CACHE"


class CacheWarning(UserWarning):
    """A kernel cache entry was refused (foreign, tampered or stale) and is being recompiled."""


def cache_dir() -> Path:
    """The kernel cache folder (created 0700): ``$LINEAR_LAYOUTS_CACHE``, else
    ``$XDG_CACHE_HOME/linear_layouts/kernels`` (``~/.cache/...`` when ``XDG_CACHE_HOME`` is unset or relative).

    Raises CompileError if the folder is a symbolic link, not ours, or writable by group or others.
    """
    override = os.environ.get(CACHE_ENV)
    if override:
        root = Path(override).expanduser()
    else:
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
        root = base / "linear_layouts" / "kernels"
    try:
        root.parent.mkdir(parents=True, exist_ok=True)
        root.mkdir(mode=0o700, exist_ok=True)
    except OSError as error:
        raise CompileError(f"kernel cache: cannot create {root}: {error.strerror}") from None
    problem = _unsafe(root, directory=True) or _unsafe_parent(root.parent)
    if problem:
        raise CompileError(f"kernel cache: refusing {root}: {problem}; use a private folder (mkdir -m 700) "
                           f"or unset ${CACHE_ENV}")
    return root


def _unsafe(path: Path, *, directory: bool = False) -> str | None:
    """Why ``path`` may not be trusted (a link, not ours, writable by others, wrong type), or None."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return "it does not exist"
    if stat.S_ISLNK(info.st_mode):
        return "it is a symbolic link"
    if directory and not stat.S_ISDIR(info.st_mode):
        return "it is not a folder"
    if not directory and not stat.S_ISREG(info.st_mode):
        return "it is not a regular file"
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        return f"it belongs to uid {info.st_uid}, not to us (uid {os.geteuid()})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"it is writable by other users (mode {stat.S_IMODE(info.st_mode):04o})"
    return None


def _unsafe_parent(parent: Path) -> str | None:
    """Why the folder holding the cache lets someone else swap the cache folder (rename it and put their
    own in its place), or None: it must belong to us or root, and be writable by others only if sticky
    (as /tmp is)."""
    info = os.stat(parent)
    if hasattr(os, "geteuid") and info.st_uid not in (0, os.geteuid()):
        return f"the folder above it ({parent}) belongs to uid {info.st_uid}"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not info.st_mode & stat.S_ISVTX:
        return f"the folder above it ({parent}) is writable by other users (mode {stat.S_IMODE(info.st_mode):04o})"
    return None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def cache_key(source: str, arch: str, kind: str) -> str:
    """SHA-256 (hex) of what determines a compiled kernel: target ``arch``, output ``kind``, ``source``."""
    return _sha256(f"{arch}\0{kind}\0{source}".encode())


def cached_artifact(root: Path, source: str, arch: str, kind: str) -> tuple[Path | None, str | None]:
    """``(path, None)`` of the verified cache entry of ``source``; ``(None, None)`` when there is none;
    ``(None, reason)`` when there is one that must not be used (the reason says why)."""
    key = cache_key(source, arch, kind)
    out, manifest = root / f"{key[:24]}.{kind}", root / f"{key[:24]}.{kind}.json"
    if not os.path.lexists(out) and not os.path.lexists(manifest):
        return None, None
    for path in (out, manifest):
        problem = _unsafe(path)
        if problem:
            return None, f"{path.name}: {problem}"
    try:
        record = json.loads(manifest.read_text(encoding="utf-8"))
        data = out.read_bytes()
    except (OSError, ValueError) as error:
        return None, f"{manifest.name}: unreadable ({error})"
    if not isinstance(record, dict) or record.get("source_sha256") != key:
        return None, f"{manifest.name}: compiled from another source (hash mismatch)"
    if record.get("artifact_sha256") != _sha256(data):
        return None, f"{out.name}: its contents do not match the hash recorded when it was compiled"
    return out, None


def _write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically, through a 0600 temporary file in the same folder."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _compile(source: str, arch: str, kind: str) -> Path:
    root = cache_dir()
    found, refused = cached_artifact(root, source, arch, kind)
    if found is not None:
        return found
    if refused:
        warnings.warn(f"kernel cache: refused {root / refused}; compiling afresh", CacheWarning, stacklevel=3)
    nvcc = find_nvcc()
    if nvcc is None:
        raise CompileError("nvcc not found (set $NVCC or put nvcc on PATH)")
    key = cache_key(source, arch, kind)
    with tempfile.TemporaryDirectory(prefix="linear_layouts_nvcc_") as work:
        src, tmp = Path(work) / f"{key[:24]}.cu", Path(work) / f"{key[:24]}.{kind}"
        src.write_text(source)
        cmd = [nvcc, f"-arch={arch}", f"-{kind}", "-O3", "-std=c++17", "-o", str(tmp), str(src)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode:
            raise CompileError(f"{' '.join(cmd)} failed:\n{proc.stderr[-4000:]}")
        data = tmp.read_bytes()
    out = root / f"{key[:24]}.{kind}"
    for path in (out, root / f"{out.name}.json"):  # a foreign entry (e.g. a link) is removed, not written through
        if os.path.lexists(path) and _unsafe(path):
            with contextlib.suppress(OSError):
                os.unlink(path)
    _write_private(out, data)
    manifest = {"source_sha256": key, "arch": arch, "kind": kind, "artifact_sha256": _sha256(data),
                "nvcc": os.path.basename(nvcc)}
    _write_private(root / f"{out.name}.json", json.dumps(manifest).encode("utf-8"))
    return out


def compile_ptx(source: str, arch: str = "sm_90") -> str:
    """PTX text of ``source`` (cached in the private kernel cache, verified by hash: see ``cache_dir``)."""
    return _compile(source, arch, "ptx").read_text()


def compile_cubin(source: str, arch: str = "sm_90") -> Path:
    """Path of the cubin of ``source`` in the private kernel cache (see ``cache_dir``); an existing entry is
    returned only after its manifest's source hash and file hash are checked."""
    return _compile(source, arch, "cubin")


_PTX_LINE = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][\w.]*)")


def count_ptx(ptx: str, families: tuple[str, ...] = PTX_FAMILIES) -> Counter[str]:
    """Static count of each full opcode (e.g. ``ld.shared.v4.b32``) in ``families``."""
    counts: Counter[str] = Counter()
    for line in ptx.splitlines():
        m = _PTX_LINE.match(line)
        if m and any(m.group(1).startswith(f) for f in families):
            counts[m.group(1)] += 1
    return counts


_SASS_LINE = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)")


def count_sass(cubin: Path | str, prefixes: tuple[str, ...] = ("STS", "LDS", "STSM", "LDSM", "SHFL", "PRMT", "LDG", "STG")) -> Counter[str]:
    """Static count of SASS opcodes (with modifiers, e.g. ``STS.128``) starting with ``prefixes``."""
    tool = find_cuobjdump()
    if tool is None:
        raise CompileError("cuobjdump not found")
    proc = subprocess.run([tool, "-sass", str(cubin)], capture_output=True, text=True)
    if proc.returncode:
        raise CompileError(proc.stderr[-2000:])
    counts: Counter[str] = Counter()
    for line in proc.stdout.splitlines():
        m = _SASS_LINE.search(line)
        if m and any(m.group(1) == p or m.group(1).startswith(p + ".") for p in prefixes):
            counts[m.group(1)] += 1
    return counts


_ENTRY = re.compile(r"\.entry\s+(\w+)\s*\(")


def split_ptx_entries(ptx: str) -> dict[str, str]:
    """PTX text of each kernel (``.entry``) in a module, by name."""
    starts = [(m.start(), m.group(1)) for m in _ENTRY.finditer(ptx)]
    out = {}
    for i, (pos, name) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(ptx)
        out[name] = ptx[pos:end]
    return out
