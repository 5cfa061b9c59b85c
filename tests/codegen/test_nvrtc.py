"""NVRTC, the in-process compiler the kernels fall back on where nvcc is not installed (``codegen.nvrtc``), and the
choice between the two (``ptx.kernel_compiler``): real compiles of the ops' kernels where the library is found
(the ``nvidia-cuda-nvrtc`` wheel of the test extra), the same kernels as nvcc's, the cache keeping the two
compilers' builds apart, and every refusal naming what is missing."""

from __future__ import annotations

import json
import struct

import pytest

from linear_layouts.codegen import nvrtc, ptx
from linear_layouts.codegen.ptx import CompileError
from linear_layouts.core.errors import LayoutError

needs_nvrtc = pytest.mark.skipif(nvrtc.find_nvrtc() is None, reason="no NVRTC library (pip install nvidia-cuda-nvrtc)")
SOURCE = 'extern "C" __global__ void k(int* p) { p[threadIdx.x] = 2 * threadIdx.x + 1; }\n'
BROKEN = 'extern "C" __global__ void k(int* p) { p[threadIdx.x] = undeclared_name; }\n'


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(ptx.CACHE_ENV, str(tmp_path / "kernels"))
    monkeypatch.delenv(ptx.COMPILER_ENV, raising=False)
    return ptx.cache_dir()


def _ops_kernels() -> list:
    """Three kernels of the ops: a tiled transpose, the tiled cast-transpose and the byte transpose."""
    from linear_layouts.ops.kernels import GridShape
    from linear_layouts.ops.launches import Launch, cast_launches, permute_launches

    device = GridShape(132, 50 * 2**20)
    items = permute_launches((300, 200), (1, 0), 2, 0, 0, device) + permute_launches((37, 50), (1, 0), 1, 0, 0, device)
    items += cast_launches("bf16", "e4m3", 256, 512, 0, 0, 0, None, 1.0, 0, device)
    return list({item.kernel.source: item.kernel for item in items if isinstance(item, Launch)}.values())


def _text_symbols(cubin: bytes) -> dict[str, int]:
    """The kernels' ``.text.NAME`` sections of an ELF64 cubin and their sizes in bytes."""
    assert cubin[:4] == b"\x7fELF" and cubin[4] == 2
    (offset,) = struct.unpack_from("<Q", cubin, 0x28)
    entry, count, names = struct.unpack_from("<HHH", cubin, 0x3A)
    sections = [struct.unpack_from("<IIQQQQ", cubin, offset + i * entry) for i in range(count)]
    base = sections[names][4]
    out = {}
    for name, _, _, _, _, size in sections:
        text = cubin[base + name:cubin.index(b"\0", base + name)].decode()
        if text.startswith(".text."):
            out[text[6:]] = size
    return out


@needs_nvrtc
def test_the_ops_kernels_compile_to_cubins_of_the_same_kernels(cache, monkeypatch):
    """Each kernel's NVRTC cubin holds the kernel under its name; where nvcc is installed too, its cubin holds
    the same kernels (the instructions may be allocated differently: within 2% of the code's size)."""
    for kernel in _ops_kernels():
        cubin = nvrtc.compile_nvrtc(kernel.source, "sm_90", "cubin")
        assert list(_text_symbols(cubin)) == [kernel.name]
        if ptx.find_nvcc() is not None:
            monkeypatch.setenv(ptx.COMPILER_ENV, "nvcc")
            theirs = _text_symbols(ptx.compile_cubin_bytes(kernel.source, "sm_90"))
            monkeypatch.delenv(ptx.COMPILER_ENV)
            assert list(theirs) == [kernel.name]
            assert abs(theirs[kernel.name] - _text_symbols(cubin)[kernel.name]) <= 0.02 * theirs[kernel.name]


@needs_nvrtc
def test_ptx_for_the_virtual_architecture_and_other_targets():
    text = nvrtc.compile_nvrtc(SOURCE, "sm_80", "ptx").decode()
    assert ".target sm_80" in text and ".entry k(" in text and not text.endswith("\0")
    assert list(_text_symbols(nvrtc.compile_nvrtc(SOURCE, "sm_75", "cubin"))) == ["k"]


@needs_nvrtc
def test_a_rejected_source_raises_with_nvrtcs_log():
    with pytest.raises(CompileError, match=r"(?s)NVRTC .*--gpu-architecture=sm_90.*failed.*undeclared_name"):
        nvrtc.compile_nvrtc(BROKEN, "sm_90", "cubin")


@pytest.mark.parametrize("arch, kind, message", [("90", "cubin", "arch: an architecture like 'sm_90'"),
                                                 ("sm_90", "fatbin", "kind: 'cubin' or 'ptx'"),
                                                 (None, "cubin", "arch: an architecture")])
def test_bad_arguments_are_named(arch, kind, message):
    with pytest.raises(LayoutError, match=message):
        nvrtc.compile_nvrtc(SOURCE, arch, kind)


def test_no_library_is_said_with_what_to_install(monkeypatch):
    monkeypatch.setattr(nvrtc, "_library", lambda: None)
    assert nvrtc.find_nvrtc() is None and nvrtc.nvrtc_version() is None
    with pytest.raises(CompileError, match="NVRTC .libnvrtc. not found: install nvidia-cuda-nvrtc"):
        nvrtc.compile_nvrtc(SOURCE, "sm_90", "cubin")


def test_a_path_that_is_no_library_is_passed_over(tmp_path, monkeypatch):
    """``$LINEAR_LAYOUTS_NVRTC`` naming a file that is not NVRTC: the search goes on (or finds none)."""
    fake = tmp_path / "libnvrtc.so.13"
    fake.write_bytes(b"not a library")
    monkeypatch.setenv(nvrtc.NVRTC_ENV, str(fake))
    assert nvrtc._candidates()[0] == str(fake)
    nvrtc._library.cache_clear()
    try:
        assert nvrtc.find_nvrtc() != str(fake)
    finally:
        monkeypatch.delenv(nvrtc.NVRTC_ENV)
        nvrtc._library.cache_clear()


def test_the_compiler_is_chosen_forced_or_refused(monkeypatch):
    have_nvrtc = {"value": "libnvrtc.so.13"}
    monkeypatch.setattr(nvrtc, "find_nvrtc", lambda: have_nvrtc["value"])
    monkeypatch.setattr(ptx, "find_nvcc", lambda: "/usr/bin/nvcc")
    monkeypatch.delenv(ptx.COMPILER_ENV, raising=False)
    assert ptx.kernel_compiler() == "nvcc" and ptx.kernel_compiler(prefer="nvrtc") == "nvrtc"
    monkeypatch.setenv(ptx.COMPILER_ENV, "nvrtc")
    assert ptx.kernel_compiler() == "nvrtc"
    monkeypatch.setenv(ptx.COMPILER_ENV, "nvcc")
    assert ptx.kernel_compiler(prefer="nvrtc") == "nvcc"
    with pytest.raises(LayoutError, match="prefer: 'nvcc' or 'nvrtc', got 'gcc'"):
        ptx.kernel_compiler(prefer="gcc")
    monkeypatch.setenv(ptx.COMPILER_ENV, "clang")
    with pytest.raises(CompileError, match=r"\$LINEAR_LAYOUTS_COMPILER: 'nvcc' or 'nvrtc', got 'clang'"):
        ptx.kernel_compiler()
    monkeypatch.delenv(ptx.COMPILER_ENV)
    monkeypatch.setattr(ptx, "find_nvcc", lambda: None)
    assert ptx.kernel_compiler() == "nvrtc"
    monkeypatch.setenv(ptx.COMPILER_ENV, "nvcc")
    with pytest.raises(CompileError, match=r"nvcc not found \(\$LINEAR_LAYOUTS_COMPILER=nvcc"):
        ptx.kernel_compiler()
    monkeypatch.delenv(ptx.COMPILER_ENV)
    have_nvrtc["value"] = None
    monkeypatch.setattr(ptx, "find_nvcc", lambda: "/usr/bin/nvcc")
    assert ptx.kernel_compiler(prefer="nvrtc") == "nvcc"  # the preferred one missing: the other
    monkeypatch.setenv(ptx.COMPILER_ENV, "nvrtc")
    with pytest.raises(CompileError, match=r"no NVRTC library found \(\$LINEAR_LAYOUTS_COMPILER=nvrtc; pip install"):
        ptx.kernel_compiler()
    monkeypatch.delenv(ptx.COMPILER_ENV)
    monkeypatch.setattr(ptx, "find_nvcc", lambda: None)
    with pytest.raises(CompileError, match="no CUDA compiler: nvcc not found .* and no NVRTC library"):
        ptx.kernel_compiler()
    assert ptx.kernel_compiler(required=False) is None


@needs_nvrtc
def test_the_cache_keeps_each_compilers_build_and_serves_either_to_a_machine_without_one(cache, monkeypatch):
    """An NVRTC build is an entry of its own (its manifest names the library); where no compiler is forced,
    a prepared entry of either compiler is served, also on a machine that has none."""
    monkeypatch.setenv(ptx.COMPILER_ENV, "nvrtc")
    path, data = ptx._compile(SOURCE, "sm_90", "cubin")
    key = ptx.cache_key(SOURCE, "sm_90", "cubin", "nvrtc")
    assert path.name == f"{key[:24]}.cubin" and key != ptx.cache_key(SOURCE, "sm_90", "cubin")
    record = json.loads((cache / f"{key[:24]}.cubin.json").read_text())
    assert record["nvrtc"].startswith("libnvrtc.so") and record["nvrtc_version"][0] >= 12 and "nvcc" not in record
    monkeypatch.delenv(ptx.COMPILER_ENV)
    monkeypatch.setattr(ptx, "find_nvcc", lambda: None)
    monkeypatch.setattr(nvrtc, "find_nvrtc", lambda: None)
    assert ptx.compile_cubin_bytes(SOURCE, "sm_90") == data  # no compiler here: the prepared entry
    with pytest.raises(CompileError, match="no CUDA compiler"):
        ptx.compile_cubin_bytes(SOURCE.replace("2 *", "3 *"), "sm_90")  # nothing prepared: refused, named
