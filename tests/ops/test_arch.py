"""The ops' kernels on every architecture nvcc 13 targets: one source per kernel compiles for sm_75 to sm_120, with
and without ``LL_PORTABLE`` (the software fallbacks forced); the software fp8 conversion (``ll_fp8_bits``, the
host emulation's and the pre-sm_89 devices') against ml_dtypes' rounding with ``cvt.rn.satfinite``'s saturation
over every rounding boundary and a seeded sample; a device below sm_75 refused before compiling."""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from linear_layouts.codegen.emulate import find_cxx
from linear_layouts.codegen.intrinsics import HOST_PRELUDE
from linear_layouts.codegen.permute import CAST_FUNCTIONS, FP8_MAX
from linear_layouts.codegen.ptx import find_nvcc
from linear_layouts.core.errors import LayoutError
from linear_layouts.ops import launch
from linear_layouts.ops.kernels import GridShape, chunked_transpose_kernel
from linear_layouts.ops.launches import cast_launches, permute_launches

#: Every architecture nvcc 13 compiles for that a data-center or desktop GPU has (no sm_70: sm_75 is the floor).
ARCHES = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120")

_BASE = 1 << 40
_DEVICE = GridShape(132)


def _kernels() -> dict[str, object]:
    """One kernel of each kind ``ops`` emits (its name: the kind), chosen by the planner for a small problem."""
    def first(launches):
        return launches[0].kernel

    def cast(fmt, fp8, m, n, x=_BASE, out=_BASE, misaligned=None):
        return first(cast_launches(fmt, fp8, m, n, x, out, _BASE, None, 1.0, _BASE, _DEVICE, misaligned))

    kernels = {
        "permute tiled": first(permute_launches((300, 200), (1, 0), 2, _BASE, _BASE, _DEVICE)),
        "permute rows": first(permute_launches((8, 64, 4, 32), (0, 2, 1, 3), 2, _BASE, _BASE, _DEVICE)),
        "permute skinny": first(permute_launches((4, 5000), (1, 0), 4, _BASE, _BASE, _DEVICE)),
        "permute copy": first(permute_launches((3, 1, 699053), (1, 0, 2), 1, _BASE, _BASE, _DEVICE)),
        "permute copy bytes": first(permute_launches((3, 1, 699053), (1, 0, 2), 1, _BASE + 1, _BASE, _DEVICE)),
        "permute chunked": chunked_transpose_kernel(2, 0),
        "permute chunked any offset": chunked_transpose_kernel(1, 1, source_aligned=False),
        "cast tiled": cast("bf16", "e4m3", 256, 512),
        "cast chunked": cast("fp16", "e5m2", 301, 257, misaligned="chunked"),
        "cast chunked fp32": cast("fp32", "e4m3", 301, 257, misaligned="chunked"),
        "cast realigned": cast("bf16", "e5m2", 301, 257, x=_BASE + 2, misaligned="realigned"),
        "cast scalar": cast("fp32", "e5m2", 3, 5, out=_BASE + 1, misaligned="scalar"),
    }
    assert kernels["permute skinny"].tile_rows == 4 and "_chunked_" in kernels["cast chunked"].name
    assert kernels["permute copy"].name == "ll_copy_128b" and kernels["permute copy bytes"].name == "ll_copy_8b"
    assert "_realigned_" in kernels["cast realigned"].name and "_scalar_" in kernels["cast scalar"].name
    return kernels


@pytest.mark.skipif(find_nvcc() is None, reason="needs nvcc (CUDA 13) to compile the kernels")
def test_every_kind_compiles_for_every_arch(tmp_path):
    """Each kind's one source compiles to a cubin for each of ``ARCHES``; the cast kernels (whose helpers choose by
    ``__CUDA_ARCH__``) also with ``-DLL_PORTABLE``. One nvcc per core; the failures listed together."""
    nvcc = find_nvcc()
    jobs = []
    for kind, kernel in _kernels().items():
        path = tmp_path / f"{kernel.name}.cu"
        path.write_text(kernel.source)
        assert ("#define LL_CAST" in kernel.source) == kind.startswith("cast")
        for flags in ((), ("-DLL_PORTABLE",)) if kind.startswith("cast") else ((),):
            jobs += [(kind, arch, flags, path) for arch in ARCHES]

    def compile_one(job):
        kind, arch, flags, path = job
        cmd = [nvcc, "-std=c++17", "-O3", f"-arch={arch}", "-cubin", "-o", str(path.with_suffix(f".{arch}.cubin")),
               *flags, str(path)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        return None if done.returncode == 0 else f"{kind} {arch} {' '.join(flags)}: {done.stderr.strip()[-400:]}"

    with ThreadPoolExecutor(2) as pool:
        failures = [f for f in pool.map(compile_one, jobs) if f]
    assert not failures, "\n".join(failures)


def _boundary_bits() -> np.ndarray:
    """Every float32 whose low 16 bits are one of 0, 1, 0x7fff, 0x8000, 0x8001, 0xfffe, 0xffff, with any high 16
    bits: every exponent and sign, every fp8 value (its mantissa lies in the high bits), each halfway point between
    two (for e5m2 / e4m3 normals bits 20 / 19 down, subnormals down to bit 23: all above bit 16) and its neighbours,
    the largest finite values, +-0, subnormal floats, +-inf and NaNs."""
    high = np.arange(1 << 16, dtype=np.uint32) << np.uint32(16)
    low = np.array([0, 1, 0x7fff, 0x8000, 0x8001, 0xfffe, 0xffff], np.uint32)
    return (high[:, None] | low[None, :]).reshape(-1)


def _reference(bits: np.ndarray, fp8: str) -> np.ndarray:
    """``cvt.rn.satfinite`` of the floats of ``bits``: ml_dtypes' round to nearest even of the value clamped to the
    format's largest finite value (so infinities saturate too), and NaN as 0x7f whatever its sign."""
    import ml_dtypes

    f8 = ml_dtypes.float8_e4m3fn if fp8 == "e4m3" else ml_dtypes.float8_e5m2
    x = bits.view(np.float32)
    top = np.float32(FP8_MAX[fp8])
    with np.errstate(invalid="ignore"):  # NaNs: replaced below
        out = np.clip(x, -top, top).astype(f8).view(np.uint8)
    return np.where(np.isnan(x), np.uint8(0x7f), out)


_CONVERT_MAIN = r"""
#include <cstdio>
int main(int argc, char** argv) {
  FILE* f = std::fopen(argv[1], "rb"); FILE* g = std::fopen(argv[2], "wb");
  if (!f || !g) return 3;
  std::vector<unsigned> in(1u << 20); std::vector<unsigned short> out(1u << 20);
  size_t n;
  while ((n = std::fread(in.data(), 4, in.size(), f)) > 0) {
    for (size_t i = 0; i < n; ++i) {
      const float x = __uint_as_float(in[i]);
      out[i] = (unsigned short)(ll_cvt_e4m3x2(x, 0.0f) | (ll_cvt_e5m2x2(0.0f, x) & 0xff00u));
    }
    if (std::fwrite(out.data(), 2, n, g) != n) return 4;
  }
  std::fclose(f); std::fclose(g);
  return 0;
}
"""


@pytest.mark.skipif(find_cxx() is None, reason="needs a C++20 compiler for the host emulation")
def test_software_fp8_conversion_matches_satfinite_rounding(tmp_path):
    """``ll_cvt_e4m3x2`` / ``ll_cvt_e5m2x2`` under ``LL_HOST`` (``ll_fp8_bits``: the code sm_75 to sm_86 run) equal
    the reference on every boundary of ``_boundary_bits`` and 10^7 seeded random float32 bit patterns."""
    pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(7)
    bits = np.concatenate([_boundary_bits(), rng.integers(0, 1 << 32, 10**7, dtype=np.uint64).astype(np.uint32),
                           np.array([0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001, 0x43e00000,
                                     0x43e80000, 0x47600000, 0x47700000, 0x00000001, 0x80000000], np.uint32)])
    source = tmp_path / "convert.cpp"
    source.write_text(HOST_PRELUDE + CAST_FUNCTIONS + _CONVERT_MAIN)
    exe = tmp_path / "convert"
    subprocess.run([find_cxx(), "-std=c++20", "-O2", "-w", "-o", str(exe), str(source)], check=True)
    (tmp_path / "in.bin").write_bytes(bits.tobytes())
    subprocess.run([str(exe), str(tmp_path / "in.bin"), str(tmp_path / "out.bin")], check=True)
    out = np.fromfile(tmp_path / "out.bin", np.uint16)
    for fp8, got in (("e4m3", (out & 0xff).astype(np.uint8)), ("e5m2", (out >> 8).astype(np.uint8))):
        expected = _reference(bits, fp8)
        wrong = np.flatnonzero(got != expected)
        assert wrong.size == 0, (f"{fp8}: {wrong.size} wrong, e.g. bits {bits[wrong[0]]:#010x} -> "
                                 f"{got[wrong[0]]:#04x}, expected {expected[wrong[0]]:#04x}")
    # the saturation, the NaN and the signed zero, spelled out
    assert _reference(np.array([0x7f800000, 0xff800000, 0xffc00000, 0x80000000], np.uint32), "e4m3").tolist() == [
        0x7e, 0xfe, 0x7f, 0x80]


def test_a_device_below_sm75_is_refused_before_compiling(monkeypatch):
    """A (faked) sm_70 device, as the CUDA driver reports it: ``prepare`` raises a LayoutError naming sm_70 and
    sm_75 before any compile; an sm_90 one is ``sm_90``."""
    from linear_layouts.ops.driver import Driver

    from harness.fakes import FakeCuda

    kernel = _kernels()["permute tiled"]
    cuda = FakeCuda()
    monkeypatch.setattr(launch, "driver", lambda: Driver(cuda))
    monkeypatch.setattr(launch, "compile_cubin_bytes", lambda *a: pytest.fail("compiled for a refused device"))
    launch.device_arch.cache_clear()
    try:
        cuda.attributes.update({75: 7, 76: 0})
        with pytest.raises(LayoutError, match=r"device 0: its architecture sm_70 is below sm_75"):
            launch.prepare(kernel, 0, 1)
        launch.device_arch.cache_clear()
        cuda.attributes.update({75: 9, 76: 0})
        assert launch.device_arch(0) == "sm_90"
    finally:
        launch.device_arch.cache_clear()
    assert launch.check_arch("75") == "sm_75" and launch.check_arch("120", 3) == "sm_120"
    with pytest.raises(LayoutError, match="not a number"):
        launch.check_arch("9.0")


def test_portable_kernel_forces_the_fallbacks_in_a_source_of_its_own():
    kernel = _kernels()["cast tiled"]
    portable = launch.portable_kernel(kernel)
    assert portable.source == "#define LL_PORTABLE\n" + kernel.source and portable.source != kernel.source
    assert (portable.name, portable.params, portable.threads, portable.shared_bytes) == (
        kernel.name, kernel.params, kernel.threads, kernel.shared_bytes)


#: Problems whose tiled transpose the planner converts through ``stmatrix`` on sm_90 (an sm_90+ instruction).
_STMATRIX_PROBLEMS = (((3, 1000, 999), (0, 2, 1), 2), ((3, 1000, 999), (0, 2, 1), 1), ((1, 64, 7, 7), (0, 2, 3, 1), 2),
                      ((5, 1, 7, 1, 3), (2, 4, 0, 1, 3), 4))


@pytest.mark.skipif(find_nvcc() is None, reason="needs nvcc (CUDA 13) to compile the kernels")
def test_tiled_transposes_planned_for_the_device_compile_for_it(tmp_path):
    """``ops`` plans each tile's conversion for the device's architecture (``GridShape.arch``): on sm_90 the
    transposes of ``_STMATRIX_PROBLEMS`` store through ``stmatrix``; planned for sm_75 / sm_80 / sm_86 / sm_89
    they do not, and each compiles for the architecture it was planned for (and the sm_90 plan for sm_90)."""
    nvcc = find_nvcc()
    jobs = []
    for shape, dims, w in _STMATRIX_PROBLEMS:
        for arch in ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90"):
            kernel = permute_launches(shape, dims, w, _BASE, _BASE, GridShape(132, arch=arch))[0].kernel
            body = kernel.source.split('extern "C"')[-1]
            assert ("ll_stsm_x" in body) == (arch == "sm_90"), (shape, w, arch)
            path = tmp_path / f"{kernel.name}_{arch}.cu"
            path.write_text(kernel.source)
            jobs.append((arch, path))

    def compile_one(job):
        arch, path = job
        cmd = [nvcc, "-std=c++17", "-O3", f"-arch={arch}", "-cubin", "-o", str(path.with_suffix(".cubin")), str(path)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        return None if done.returncode == 0 else f"{path.name}: {done.stderr.strip()[-300:]}"

    with ThreadPoolExecutor(2) as pool:
        failures = [f for f in pool.map(compile_one, jobs) if f]
    assert not failures, "\n".join(failures)
