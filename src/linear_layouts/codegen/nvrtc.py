"""CUDA C++ to a cubin or PTX in this process with NVRTC, the CUDA toolkit's runtime compiler (``libnvrtc``).

NVRTC ships as a library beside PyTorch's and CuPy's CUDA builds (the ``nvidia-cuda-nvrtc`` wheel both depend
on) and in every CUDA toolkit, so kernels compile where ``nvcc`` is not installed. ``find_nvrtc`` looks, in
order, at ``$LINEAR_LAYOUTS_NVRTC`` (a library path), the folders of the ``nvidia`` wheels
(``nvidia/cu13/lib``, ``nvidia/cuda_nvrtc/lib``), ``$CUDA_HOME`` / ``$CUDA_PATH``, ``/usr/local/cuda`` and the
loader's own search (``libnvrtc.so.13``, ``.so.12``). The library is loaded with ``ctypes``; nothing is
imported from the wheels. Errors are ``ptx.CompileError`` carrying NVRTC's log.

Example: ``compile_nvrtc(kernel.source, "sm_90", "cubin")`` is a cubin ``cuModuleLoadData`` loads; the same
source through ``nvcc -arch=sm_90 -cubin -O3 -std=c++17`` gives the same kernel (other bytes).
"""

from __future__ import annotations

import ctypes
import functools
import glob
import os
import re
import sys
from pathlib import Path
from typing import Any

from linear_layouts.core.errors import LayoutError

__all__ = ["NVRTC_ENV", "find_nvrtc", "nvrtc_version", "compile_nvrtc", "NVRTC_OPTIONS"]

#: A path to ``libnvrtc.so*`` that ``find_nvrtc`` takes before looking anywhere else.
NVRTC_ENV = "LINEAR_LAYOUTS_NVRTC"
#: The options of every compile, beside ``--gpu-architecture``: the language ``nvcc`` compiles ours in.
NVRTC_OPTIONS = ("-std=c++17",)
#: The library names the loader is asked for, newest first.
_SONAMES = ("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so")
_ARCH = re.compile(r"sm_(\d{2,3})[af]?")


def _wheel_folders() -> list[str]:
    """The ``lib`` folders of the ``nvidia`` namespace wheels on ``sys.path`` (``nvidia/cu13/lib``, ...): absolute
    entries only, so that no library is loaded from the current folder."""
    folders = []
    for entry in sys.path:
        if not entry or not os.path.isabs(entry):
            continue
        base = Path(entry) / "nvidia"
        if base.is_dir():
            folders += sorted(glob.glob(str(base / "*" / "lib")))
    return folders


def _candidates() -> list[str]:
    """Library paths to try, in ``find_nvrtc``'s order (files that exist), then the bare sonames."""
    found = [os.environ[NVRTC_ENV]] if os.environ.get(NVRTC_ENV) else []
    folders = _wheel_folders()
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(variable):
            folders += [os.path.join(os.environ[variable], "lib64"), os.path.join(os.environ[variable], "lib")]
    folders += ["/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"]
    for folder in folders:
        for soname in _SONAMES:
            path = os.path.join(folder, soname)
            if os.path.isfile(path) and path not in found:
                found.append(path)
    return found + list(_SONAMES)


@functools.lru_cache(maxsize=1)
def _library() -> tuple[Any, str] | None:
    """``(library, path)`` of the first NVRTC of ``_candidates`` that loads and answers ``nvrtcVersion``."""
    for path in _candidates():
        try:
            # NVRTC opens its builtins library by soname at the first compile: load the one beside it first
            # (a wheel's folder is on no loader path)
            for builtins in sorted(glob.glob(os.path.join(os.path.dirname(path), "libnvrtc-builtins.so.*"))):
                ctypes.CDLL(builtins, mode=ctypes.RTLD_GLOBAL)
            lib = ctypes.CDLL(path)
            major, minor = ctypes.c_int(), ctypes.c_int()
            if lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)) == 0:
                _declare(lib)
                return lib, path
        except (OSError, AttributeError):
            continue
    return None


def _declare(lib: Any) -> None:
    """The C signatures of the NVRTC calls used here."""
    p, size = ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)
    strings = ctypes.POINTER(ctypes.c_char_p)
    signatures = {
        "nvrtcVersion": [ctypes.POINTER(ctypes.c_int)] * 2,
        "nvrtcCreateProgram": [ctypes.POINTER(p), ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, strings, strings],
        "nvrtcCompileProgram": [p, ctypes.c_int, strings],
        "nvrtcGetProgramLogSize": [p, size], "nvrtcGetProgramLog": [p, ctypes.c_char_p],
        "nvrtcGetCUBINSize": [p, size], "nvrtcGetCUBIN": [p, ctypes.c_char_p],
        "nvrtcGetPTXSize": [p, size], "nvrtcGetPTX": [p, ctypes.c_char_p],
        "nvrtcDestroyProgram": [ctypes.POINTER(p)],
    }
    for name, argtypes in signatures.items():
        function = getattr(lib, name)
        function.argtypes, function.restype = argtypes, ctypes.c_int
    lib.nvrtcGetErrorString.argtypes, lib.nvrtcGetErrorString.restype = [ctypes.c_int], ctypes.c_char_p


def find_nvrtc() -> str | None:
    """The path (or soname) of the NVRTC library this process compiles with, or None where there is none."""
    loaded = _library()
    return loaded[1] if loaded else None


def nvrtc_version() -> tuple[int, int] | None:
    """``(major, minor)`` of the CUDA release of that library, or None. Example: ``(13, 0)``."""
    loaded = _library()
    if loaded is None:
        return None
    major, minor = ctypes.c_int(), ctypes.c_int()
    loaded[0].nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    return major.value, minor.value


def compile_nvrtc(source: str, arch: str = "sm_90", kind: str = "cubin") -> bytes:
    """The ``kind`` (``"cubin"``: machine code for ``arch``, ``"ptx"``: PTX for its virtual architecture) of the
    CUDA C++ ``source``, compiled by NVRTC; ``ptx.CompileError`` with NVRTC's log where it rejects the source,
    and where no NVRTC is found; LayoutError for an ``arch`` or ``kind`` it does not know.
    Example: ``compile_nvrtc(src, "sm_80", "ptx")`` is PTX text for ``.target sm_80``."""
    from linear_layouts.codegen.ptx import CompileError

    match = _ARCH.fullmatch(arch) if isinstance(arch, str) else None
    if match is None:
        raise LayoutError(f"arch: an architecture like 'sm_90' expected, got {arch!r}")
    if kind not in ("cubin", "ptx"):
        raise LayoutError(f"kind: 'cubin' or 'ptx' expected, got {kind!r}")
    loaded = _library()
    if loaded is None:
        raise CompileError(f"NVRTC (libnvrtc) not found: install nvidia-cuda-nvrtc or a CUDA toolkit, or set "
                           f"${NVRTC_ENV}")
    lib = loaded[0]
    target = arch if kind == "cubin" else "compute_" + arch[3:]
    options = [f"--gpu-architecture={target}".encode(), *(o.encode() for o in NVRTC_OPTIONS)]
    program = ctypes.c_void_p()

    def check(status: int, call: str) -> None:
        if status:
            raise CompileError(f"NVRTC {call} failed: {lib.nvrtcGetErrorString(status).decode()}")

    check(lib.nvrtcCreateProgram(ctypes.byref(program), source.encode(), b"linear_layouts.cu", 0, None, None),
          "nvrtcCreateProgram")
    try:
        status = lib.nvrtcCompileProgram(program, len(options), (ctypes.c_char_p * len(options))(*options))
        if status:
            length = ctypes.c_size_t()
            check(lib.nvrtcGetProgramLogSize(program, ctypes.byref(length)), "nvrtcGetProgramLogSize")
            log = ctypes.create_string_buffer(length.value)
            check(lib.nvrtcGetProgramLog(program, log), "nvrtcGetProgramLog")
            text = log.value.decode(errors="replace")[-4000:]
            raise CompileError(f"NVRTC ({loaded[1]}, {' '.join(o.decode() for o in options)}) failed: "
                               f"{lib.nvrtcGetErrorString(status).decode()}\n{text}")
        size_call, get_call = ("nvrtcGetCUBINSize", "nvrtcGetCUBIN") if kind == "cubin" else \
            ("nvrtcGetPTXSize", "nvrtcGetPTX")
        length = ctypes.c_size_t()
        check(getattr(lib, size_call)(program, ctypes.byref(length)), size_call)
        image = ctypes.create_string_buffer(length.value)
        check(getattr(lib, get_call)(program, image), get_call)
        data = image.raw[:length.value]
        return data.rstrip(b"\0") if kind == "ptx" else data
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(program))
