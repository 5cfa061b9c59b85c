"""Offline compilation with ``nvcc`` and instruction counting in PTX and SASS.

``compile_ptx(source)`` runs ``nvcc -arch=sm_90 -ptx``; ``compile_cubin`` builds the machine code
the runtime loads.  ``count_ptx`` tallies opcodes (``st.shared.v4.b32``, ``ldmatrix...``,
``shfl.sync.idx.b32``, ``ld.global...``); ``count_sass`` tallies SASS opcodes (``STS.128``, ``LDSM``,
``SHFL.IDX``) from ``cuobjdump -sass``.  Counts are static: one per instruction in the code, not per
execution.

Example: ``count_ptx(compile_ptx(kernel.source))["st.shared.b32"]`` is 16 for the seed transpose.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
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


def _cache_dir() -> Path:
    root = Path(os.environ.get("LINEAR_LAYOUTS_CACHE", Path(tempfile.gettempdir()) / "linear_layouts_cache"))
    root.mkdir(parents=True, exist_ok=True)
    return root


def _compile(source: str, arch: str, kind: str) -> Path:
    nvcc = find_nvcc()
    if nvcc is None:
        raise CompileError("nvcc not found (set $NVCC or put nvcc on PATH)")
    key = hashlib.sha256(f"{arch}\0{kind}\0{source}".encode()).hexdigest()[:24]
    out = _cache_dir() / f"{key}.{kind}"
    if out.exists():
        return out
    src = _cache_dir() / f"{key}.cu"
    src.write_text(source)
    tmp = out.with_suffix(f".{kind}.{os.getpid()}")
    cmd = [nvcc, f"-arch={arch}", f"-{kind}", "-O3", "-std=c++17", "-o", str(tmp), str(src)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        raise CompileError(f"{' '.join(cmd)} failed:\n{proc.stderr[-4000:]}")
    os.replace(tmp, out)
    return out


def compile_ptx(source: str, arch: str = "sm_90") -> str:
    """PTX text of ``source`` (cached on disk by content hash)."""
    return _compile(source, arch, "ptx").read_text()


def compile_cubin(source: str, arch: str = "sm_90") -> Path:
    """Path of the cubin of ``source`` (cached on disk by content hash)."""
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
