"""Offline compilation with ``nvcc`` (or NVRTC) and instruction counting in PTX and SASS.

``compile_ptx(source)`` runs ``nvcc -arch=sm_90 -ptx``; ``compile_cubin`` builds the machine code
the runtime loads. Where nvcc is not installed, NVRTC (``codegen.nvrtc``) compiles in-process instead
(``kernel_compiler``; ``$LINEAR_LAYOUTS_COMPILER`` chooses one). ``count_ptx`` tallies opcodes
(``st.shared.v4.b32``, ``ldmatrix...``, ``shfl.sync.idx.b32``, ``ld.global...``); ``count_sass`` tallies SASS
opcodes (``STS.128``, ``LDSM``,
``SHFL.IDX``) from ``cuobjdump -sass``.  Counts are static: one per instruction in the code, not per
execution.  Compiled files live in a private, verified kernel cache (``cache_dir``, ``cached_artifact``):
no file another user planted is ever returned, so the runtime never loads a foreign cubin.

Example: ``count_ptx(compile_ptx(kernel.source))["st.shared.b32"]`` is 16 for the seed transpose.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import secrets
import shutil
import stat
import subprocess
import tempfile
import warnings
from collections import Counter
from pathlib import Path

from linear_layouts.core.errors import LayoutError

__all__ = [
    "find_nvcc",
    "find_cuobjdump",
    "kernel_compiler",
    "COMPILER_ENV",
    "compile_ptx",
    "compile_cubin",
    "compile_cubin_bytes",
    "count_ptx",
    "count_sass",
    "CompileError",
    "PTX_FAMILIES",
    "split_ptx_entries",
    "CACHE_ENV",
    "CacheWarning",
    "MAX_ARTIFACT_BYTES",
    "SYSTEM_FOLDERS",
    "SHARED_FOLDERS",
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


#: ``nvcc`` or ``nvrtc``: the compiler of every kernel, where set (else ``kernel_compiler`` chooses).
COMPILER_ENV = "LINEAR_LAYOUTS_COMPILER"


def kernel_compiler(required: bool = True, prefer: str = "nvcc") -> str | None:
    """The compiler kernels are built with: ``$LINEAR_LAYOUTS_COMPILER`` (``nvcc`` or ``nvrtc``; CompileError for
    another value) where set, else ``prefer`` (LayoutError unless one of the two) where it is here (nvcc
    installed; NVRTC's library found: ``codegen.nvrtc.find_nvrtc``), else the other one; where neither is,
    CompileError naming both (None when not ``required``). Example: ``"nvrtc"`` on a machine with PyTorch's CUDA
    wheels and no CUDA toolkit."""
    from linear_layouts.codegen.nvrtc import find_nvrtc

    chosen = os.environ.get(COMPILER_ENV, "")
    if chosen not in ("", "nvcc", "nvrtc"):
        raise CompileError(f"${COMPILER_ENV}: 'nvcc' or 'nvrtc', got {chosen!r}")
    if prefer not in ("nvcc", "nvrtc"):
        raise LayoutError(f"prefer: 'nvcc' or 'nvrtc', got {prefer!r}")
    here = {"nvcc": find_nvcc() is not None, "nvrtc": find_nvrtc() is not None}
    if chosen:
        if not here[chosen] and required:
            missing = "nvcc not found" if chosen == "nvcc" else "no NVRTC library found"
            raise CompileError(f"{missing} (${COMPILER_ENV}={chosen}; " + (
                "set $NVCC or put nvcc on PATH)" if chosen == "nvcc" else "pip install nvidia-cuda-nvrtc)"))
        return chosen if here[chosen] else None
    for tool in (prefer, "nvrtc" if prefer == "nvcc" else "nvcc"):
        if here[tool]:
            return tool
    if required:
        raise CompileError("no CUDA compiler: nvcc not found (set $NVCC or put nvcc on PATH) and no NVRTC library "
                           "(pip install nvidia-cuda-nvrtc, which PyTorch's and CuPy's CUDA wheels bring)")
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
# with mode 0700 and must be ours and writable by nobody else; so must every folder above it, up to ``/``
# (ours or root's, writable by others only if sticky, as /tmp): nobody else can rename a folder on the way and
# put their own in its place. The folder is opened once, by walking down from ``/`` one component at a time
# without following links, and every entry is opened and written through that descriptor. Each entry is the
# compiled file plus a manifest recording the SHA-256 of the exact (arch, kind, source) it was compiled from
# and the SHA-256 of the compiled file; an entry is used only when both files are ours, regular and private,
# within their size limits, and both hashes match the bytes read from those descriptors -- and those bytes
# are what is returned (the runtime loads them from memory, never the path again). Anything else (a file
# planted by someone else, a truncated or swapped file, a folder or a link in its place, a manifest too
# large or nested too deep, a hash collision of the short file name) is refused with one warning and compiled
# afresh; an entry that cannot be replaced is left alone and the fresh compile is used without caching it.

CACHE_ENV = "LINEAR_LAYOUTS_CACHE"
MAX_ARTIFACT_BYTES = 1 << 26  #: a cached cubin or PTX file larger than this is refused unread (real ones: < 1 MB)
MAX_MANIFEST_BYTES = 1 << 12  #: a manifest is ~250 bytes of flat JSON
#: Folders that are never a cache, whoever asks (root included): the system's own, and everything inside them.
SYSTEM_FOLDERS = ("/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run", "/sbin",
                  "/sys", "/usr")
#: Folders that hold others and are never a cache themselves (a folder inside them may be one).
SHARED_FOLDERS = ("/", "/home", "/media", "/mnt", "/opt", "/root", "/srv", "/tmp", "/var", "/var/tmp", "/var/cache")

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


class CacheWarning(UserWarning):
    """A kernel cache entry was refused (foreign, tampered or stale) and is being recompiled."""


def cache_dir() -> Path:
    """The kernel cache folder (created 0700): ``$LINEAR_LAYOUTS_CACHE``, else
    ``$XDG_CACHE_HOME/linear_layouts/kernels`` (``~/.cache/...`` when ``XDG_CACHE_HOME`` is unset or relative).

    Raises CompileError if the folder is a symbolic link, not ours, or writable by group or others, if a folder
    above it is neither ours nor root's or is writable by others without being sticky, or if it is a system
    folder (``/``, ``/tmp``, ``/home``, ...: ``SHARED_FOLDERS``; ``/etc``, ``/usr``, ... or inside one:
    ``SYSTEM_FOLDERS``).
    """
    root = _cache_root()
    os.close(_open_cache(root))
    return root


def _cache_root() -> Path:
    """The configured cache folder, created (0700) unless it is a system folder; CompileError otherwise."""
    override = os.environ.get(CACHE_ENV)
    if override:
        root = Path(override).expanduser()
    else:
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
        root = base / "linear_layouts" / "kernels"
    root = Path(os.path.abspath(root))
    real = Path(os.path.realpath(root.parent)) / root.name
    for where in (root, real):
        if any(where == Path(f) or Path(f) in where.parents for f in SYSTEM_FOLDERS) or \
                any(where == Path(f) for f in SHARED_FOLDERS):
            raise CompileError(f"kernel cache: refusing {root}: a system folder (/, /etc, /usr, /tmp, ...: "
                               f"ptx.SYSTEM_FOLDERS, ptx.SHARED_FOLDERS) is never a cache; set ${CACHE_ENV} to a "
                               "private folder")
    try:
        root.parent.mkdir(parents=True, exist_ok=True)
        root.mkdir(mode=0o700, exist_ok=True)
    except OSError as error:
        raise CompileError(f"kernel cache: cannot create {root}: {error.strerror}") from None
    return root


def _open_cache(root: Path) -> int:
    """A descriptor of the cache folder ``root``, reached from ``/`` one component at a time without following
    a link (the folders above ``root`` may be links: they are resolved first), each folder checked on its
    descriptor (``_unsafe_folder``). CompileError naming the first folder refused."""
    real = Path(os.path.realpath(root.parent)) / root.name
    fd = os.open("/", os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
    try:
        here = Path("/")
        for name in real.parts[1:]:
            problem = _unsafe_folder(os.fstat(fd), here, cache=False)
            if problem:
                raise CompileError(f"kernel cache: refusing {root}: {problem}; use a private folder (mkdir -m 700) "
                                   f"or unset ${CACHE_ENV}")
            try:
                child = os.open(name, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC, dir_fd=fd)
            except OSError as error:
                why = ("it is a symbolic link" if os.path.islink(here / name) else
                       f"it cannot be opened as a folder ({error.strerror})")
                raise CompileError(f"kernel cache: refusing {root}: {here / name}: {why}") from None
            os.close(fd)
            fd, here = child, here / name
        problem = _unsafe_folder(os.fstat(fd), here, cache=True)
        if problem:
            raise CompileError(f"kernel cache: refusing {root}: {problem}; use a private folder (mkdir -m 700) "
                               f"or unset ${CACHE_ENV}")
        return fd
    except BaseException:
        os.close(fd)
        raise


def _unsafe_folder(info: os.stat_result, path: Path, *, cache: bool) -> str | None:
    """Why the folder ``path`` (``info``: its fstat) may not hold the cache (``cache``: it is the cache
    folder: ours, writable by nobody else) or lie above it (ours or root's, writable by others only if
    sticky), or None."""
    me = os.geteuid() if hasattr(os, "geteuid") else None
    writable = info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    if cache:
        if me is not None and info.st_uid != me:
            return f"it belongs to uid {info.st_uid}, not to us (uid {me})"
        if writable:
            return f"it is writable by other users (mode {stat.S_IMODE(info.st_mode):04o})"
        return None
    if me is not None and info.st_uid not in (0, me):
        return f"the folder above it ({path}) belongs to uid {info.st_uid}"
    if writable and not info.st_mode & stat.S_ISVTX:
        return f"the folder above it ({path}) is writable by other users (mode {stat.S_IMODE(info.st_mode):04o})"
    return None


def _unsafe(path: Path) -> str | None:
    """Why the cache file ``path`` may not be trusted (a link, not a regular file, not ours, writable by
    others), or None; for the other users of the cache folder (the Triton hook's entries)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return "it does not exist"
    if stat.S_ISLNK(info.st_mode):
        return "it is a symbolic link"
    if not stat.S_ISREG(info.st_mode):
        return "it is not a regular file"
    return _unsafe_file(info)


def _write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to the file ``path`` of the cache folder atomically (0600, through the folder's
    descriptor, every folder above it checked: ``_open_cache``); CompileError or OSError when it cannot."""
    folder = _open_cache(Path(path).parent)
    try:
        if not _write_entry(folder, Path(path).name, data):
            raise OSError(errno.EEXIST, f"{path}: cannot be replaced")
    finally:
        os.close(folder)


def _unsafe_file(info: os.stat_result) -> str | None:
    """Why a cache entry (``info``: its fstat) may not be trusted (not ours, writable by others), or None."""
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        return f"it belongs to uid {info.st_uid}, not to us (uid {os.geteuid()})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"it is writable by other users (mode {stat.S_IMODE(info.st_mode):04o})"
    return None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def cache_key(source: str, arch: str, kind: str, compiler: str = "nvcc") -> str:
    """SHA-256 (hex) of what determines a compiled kernel: target ``arch``, output ``kind``, ``source`` and the
    ``compiler`` (an NVRTC build is an entry of its own)."""
    tag = "" if compiler == "nvcc" else f"{compiler}\0"
    return _sha256(f"{arch}\0{kind}\0{tag}{source}".encode())


def _read_entry(folder: int, name: str, max_bytes: int) -> tuple[bytes | None, str | None]:
    """``(bytes, None)`` of the entry file ``name`` of the cache folder (descriptor ``folder``): opened once,
    not through a link, checked on that descriptor (regular, ours, private, at most ``max_bytes``) and read
    from it; ``(None, None)`` when it does not exist; ``(None, reason)`` when it must not be used."""
    try:
        fd = os.open(name, os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC | getattr(os, "O_NONBLOCK", 0), dir_fd=folder)
    except FileNotFoundError:
        return None, None
    except OSError as error:
        is_link = error.errno == errno.ELOOP or stat.S_ISLNK(os.lstat(name, dir_fd=folder).st_mode)
        return None, f"{name}: {'it is a symbolic link' if is_link else error.strerror}"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, f"{name}: it is not a regular file"
        problem = _unsafe_file(info)
        if problem:
            return None, f"{name}: {problem}"
        if info.st_size > max_bytes:
            return None, f"{name}: {info.st_size} bytes, above the {max_bytes} of a cache entry (not read)"
        data = os.read(fd, max_bytes + 1)
        chunks = [data]
        while data and sum(map(len, chunks)) <= max_bytes:
            data = os.read(fd, max_bytes + 1 - sum(map(len, chunks)))
            chunks.append(data)
        data = b"".join(chunks)
        if len(data) > max_bytes:
            return None, f"{name}: it grew above {max_bytes} bytes while it was read"
        return data, None
    except OSError as error:
        return None, f"{name}: unreadable ({error.strerror})"
    finally:
        os.close(fd)


def _verified(folder: int, key: str, kind: str) -> tuple[bytes | None, str | None]:
    """The verified bytes of the cache entry of ``key`` (see ``cached_artifact``), read through ``folder``."""
    name = f"{key[:24]}.{kind}"
    data, refused = _read_entry(folder, name, MAX_ARTIFACT_BYTES)
    text, refused_manifest = _read_entry(folder, f"{name}.json", MAX_MANIFEST_BYTES)
    if data is None and text is None and refused is None and refused_manifest is None:
        return None, None
    if refused or refused_manifest:
        return None, refused or refused_manifest
    if data is None or text is None:
        return None, f"{name if data is None else name + '.json'}: it does not exist"
    try:
        record = json.loads(text.decode("utf-8"))
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return None, f"{name}.json: unreadable ({type(error).__name__})"
    if not isinstance(record, dict):
        return None, f"{name}.json: not a manifest (a JSON object expected)"
    if record.get("source_sha256") != key:
        return None, f"{name}.json: compiled from another source (hash mismatch)"
    if record.get("artifact_sha256") != _sha256(data):
        return None, f"{name}: its contents do not match the hash recorded when it was compiled"
    return data, None


def cached_artifact(root: Path, source: str, arch: str, kind: str) -> tuple[Path | None, str | None]:
    """``(path, None)`` of the verified cache entry of ``source``; ``(None, None)`` when there is none;
    ``(None, reason)`` when there is one that must not be used (the reason says why)."""
    folder = _open_cache(Path(root))
    try:
        key = cache_key(source, arch, kind)
        data, reason = _verified(folder, key, kind)
        return (Path(root) / f"{key[:24]}.{kind}" if data is not None else None), reason
    finally:
        os.close(folder)


def _write_entry(folder: int, name: str, data: bytes) -> bool:
    """Write ``data`` to the entry ``name`` of the cache folder (descriptor ``folder``) atomically, through a
    0600 temporary file created there; False (nothing written) when the entry cannot be replaced."""
    temporary = f".{name}.{os.getpid()}.{secrets.token_hex(4)}"
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC, 0o600, dir_fd=folder)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
        return True
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=folder)
        return False


def _clear(folder: int, name: str) -> None:
    """Remove a refused entry ``name`` (a file, a link, an empty folder): never written through."""
    with contextlib.suppress(OSError):
        info = os.lstat(name, dir_fd=folder)
        if stat.S_ISDIR(info.st_mode):
            os.rmdir(name, dir_fd=folder)
        else:
            os.unlink(name, dir_fd=folder)


def _compile(source: str, arch: str, kind: str, prefer: str = "nvcc") -> tuple[Path, bytes]:
    """The path and the verified bytes of the compiled ``source``: from the cache, or compiled now (by
    ``kernel_compiler(prefer=prefer)``) and stored."""
    compiler = kernel_compiler(required=False, prefer=prefer)  # a bad $LINEAR_LAYOUTS_COMPILER raises here
    forced = os.environ.get(COMPILER_ENV) or None
    target = forced or compiler or "nvcc"  # the compiler whose entry a fresh compile becomes
    # its entry, and where none is forced one of the other compiler too: a prepared cache serves a machine
    # without that compiler
    lookups = [target] if forced else [target] + [t for t in ("nvcc", "nvrtc") if t != target]
    root = _cache_root()
    folder = _open_cache(root)
    try:
        refused = None
        for tool in lookups:
            key = cache_key(source, arch, kind, tool)
            found, problem = _verified(folder, key, kind)
            if found is not None:
                return root / f"{key[:24]}.{kind}", found
            if tool == target:
                refused = problem
        key = cache_key(source, arch, kind, target)
        name = f"{key[:24]}.{kind}"
        if compiler is None:
            kernel_compiler(prefer=prefer)  # raises, naming both compilers
        if refused:
            warnings.warn(f"kernel cache: refused {root / refused}; compiling afresh", CacheWarning, stacklevel=3)
        if compiler == "nvrtc":
            data, record = _nvrtc_compile(source, arch, kind)
        else:
            data, record = _nvcc_compile(source, arch, kind, key[:24])
        for entry in (name, f"{name}.json"):  # a refused entry is removed, never written through
            if refused:
                _clear(folder, entry)
        manifest = {"source_sha256": key, "arch": arch, "kind": kind, "artifact_sha256": _sha256(data), **record}
        stored = _write_entry(folder, name, data) and \
            _write_entry(folder, f"{name}.json", json.dumps(manifest).encode("utf-8"))
        if stored:
            return root / name, data
        if refused is None:
            warnings.warn(f"kernel cache: cannot store {root / name}; using the fresh compile uncached",
                          CacheWarning, stacklevel=3)
        # a private copy under a fresh name, for the callers that need a path (cuobjdump)
        spare = f".{name}.{secrets.token_hex(8)}"
        if not _write_entry(folder, spare, data):
            raise CompileError(f"kernel cache: cannot write to {root}")
        return root / spare, data
    finally:
        os.close(folder)


def _nvcc_compile(source: str, arch: str, kind: str, stem: str) -> tuple[bytes, dict]:
    """``nvcc -arch=ARCH -KIND -O3 -std=c++17`` of ``source`` (as ``stem.cu``): its output and the manifest's
    record of the tool."""
    nvcc = find_nvcc()
    if nvcc is None:
        raise CompileError("nvcc not found (set $NVCC or put nvcc on PATH)")
    with tempfile.TemporaryDirectory(prefix="linear_layouts_nvcc_") as work:
        src, out = Path(work) / f"{stem}.cu", Path(work) / f"{stem}.{kind}"
        src.write_text(source)
        cmd = [nvcc, f"-arch={arch}", f"-{kind}", "-O3", "-std=c++17", "-o", str(out), str(src)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode:
            raise CompileError(f"{' '.join(cmd)} failed:\n{proc.stderr[-4000:]}")
        return out.read_bytes(), {"nvcc": os.path.basename(nvcc)}


def _nvrtc_compile(source: str, arch: str, kind: str) -> tuple[bytes, dict]:
    """NVRTC's ``kind`` of ``source`` (``codegen.nvrtc``) and the manifest's record of the library."""
    from linear_layouts.codegen.nvrtc import compile_nvrtc, find_nvrtc, nvrtc_version

    data = compile_nvrtc(source, arch, kind)
    return data, {"nvrtc": os.path.basename(find_nvrtc() or ""), "nvrtc_version": list(nvrtc_version() or ())}


def compile_ptx(source: str, arch: str = "sm_90") -> str:
    """PTX text of ``source`` (cached in the private kernel cache, verified by hash: see ``cache_dir``)."""
    return _compile(source, arch, "ptx")[1].decode("utf-8", "replace")


def compile_cubin(source: str, arch: str = "sm_90", prefer: str = "nvcc") -> Path:
    """Path of the cubin of ``source`` in the private kernel cache (see ``cache_dir``); an existing entry is
    returned only after its manifest's source hash and file hash are checked. For reading it with tools
    (``cuobjdump``); to load a kernel, use :func:`compile_cubin_bytes` (the verified bytes themselves).
    ``prefer``: the compiler where both are here (``kernel_compiler``)."""
    return _compile(source, arch, "cubin", prefer)[0]


def compile_cubin_bytes(source: str, arch: str = "sm_90", prefer: str = "nvcc") -> bytes:
    """The cubin of ``source``: the bytes verified against their manifest, read once from the descriptor of
    the cache entry (or just compiled, by ``prefer`` where it is here: ``kernel_compiler``); what the runtime
    loads, so no file swapped after the check is ever loaded."""
    return _compile(source, arch, "cubin", prefer)[1]


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
