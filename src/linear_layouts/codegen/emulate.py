"""Run generated conversion kernels on the CPU: the kernel source, unchanged, compiled as C++20 with the
host definitions of ``codegen.intrinsics`` (one thread per CUDA thread, barriers, shuffle and
ldmatrix/stmatrix exchanges between the lanes of a warp), so CI checks every element of emitted
kernels without a GPU.

``emulate_kernel(kernel, data, iterations)`` returns the output array; ``emulate_check`` counts the
elements a conversion kernel (an identity on its array) gets wrong on random data; ``emulate_launch``
runs a kernel of any signature (a ``permute.PermuteKernel``: pointers and scalars) on a 1-D grid.

Example: ``emulate_check(conversion_kernel(src, dst, "fp16"))`` is 0 for a correct kernel.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from linear_layouts.codegen.intrinsics import DEVICE_PRELUDE, HOST_PRELUDE
from linear_layouts.codegen.ptx import cache_dir
from linear_layouts.core.errors import LayoutError

__all__ = ["find_cxx", "emulate_kernel", "emulate_check", "emulate_transpose", "emulate_launch", "EmulationError"]

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


class EmulationError(RuntimeError):
    """The host compiler rejected the kernel, or the emulated run failed."""


def find_cxx() -> str | None:
    """A C++20 compiler (``$CXX``, ``g++``, ``clang++``), or None."""
    for candidate in (os.environ.get("CXX"), shutil.which("g++"), shutil.which("clang++")):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


_MAIN = r"""
#include <cstdio>
#include <algorithm>
#include <memory>
int main(int argc, char** argv) {
  if (argc != 5 && argc != 6) return 2;
  const unsigned tiles = (unsigned)atoi(argv[3]);
  const int iterations = atoi(argv[4]);
  FILE* f = fopen(argv[1], "rb"); if (!f) return 3;
  std::vector<unsigned char> in(TILE_BYTES * tiles), out(TILE_BYTES * tiles, 0xab);
  if (fread(in.data(), 1, in.size(), f) != in.size()) return 4;
  fclose(f);
  const unsigned ctas = argc == 6 ? (unsigned)atoi(argv[5]) : tiles;  // CTAs of a 1-D (persistent) grid
  static unsigned ll_sched[2] = {0u, 0u};  // a dynamic transpose's tile counter (its third argument)
  for (int launch = 0; launch < LAUNCHES; ++launch) {  // again: the counter must be reset after a launch
  std::fill(out.begin(), out.end(), (unsigned char)0xab);
  for (unsigned blk = 0; blk < ctas; ++blk) {
    const unsigned bx = blk % GRID_X, by = blk / GRID_X;
    std::barrier<> cta(THREADS);
    ll_cta_barrier = &cta;
    std::vector<std::unique_ptr<std::barrier<>>> warps;
    for (unsigned w = 0; w < THREADS / 32; ++w) { warps.emplace_back(new std::barrier<>(32)); ll_warp_barrier[w] = warps.back().get(); }
    std::memset(ll_shared, 0xcd, sizeof ll_shared);
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < THREADS; ++t)
      pool.emplace_back([&, t] { threadIdx.x = t; blockIdx.x = bx; blockIdx.y = by;
        gridDim.x = ctas < GRID_X ? ctas : GRID_X; gridDim.y = (ctas + GRID_X - 1) / GRID_X; gridDim.z = 1;
        KERNEL((const ELEM*)in.data(), (ELEM*)out.data() ITERATIONS); });
    for (auto& th : pool) th.join();
  }
  }
  if (ll_sched[0] || ll_sched[1]) return 6;  // not reset by the last CTA
  f = fopen(argv[2], "wb"); if (!f) return 5;
  fwrite(out.data(), 1, out.size(), f); fclose(f);
  return 0;
}
"""


def _binary(kernel, transpose: bool = False, persistent: bool = False, dynamic: bool = False) -> Path:
    body = kernel.source[len(DEVICE_PRELUDE):] if kernel.source.startswith(DEVICE_PRELUDE) else kernel.source
    elem = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}[kernel.element_bytes]
    if transpose and persistent:  # a 1-D grid (its size: the run's 5th argument) looping over all tiles
        tile_elements, grid_x = kernel.tile_rows * kernel.tile_cols, 1 << 30
        iterations = ", ll_sched" if dynamic else ""
    elif transpose:
        tile_elements, grid_x, iterations = kernel.tile_rows * kernel.tile_cols, kernel.cols // kernel.tile_cols, ""
    else:
        tile_elements, grid_x, iterations = kernel.tile_elements, 1 << 30, ", iterations"
    main = (_MAIN.replace("TILE_BYTES", f"{tile_elements * kernel.element_bytes}u")
            .replace("THREADS", f"{kernel.threads}u").replace("KERNEL", kernel.name).replace("ELEM", elem)
            .replace("GRID_X", f"{grid_x}u").replace("ITERATIONS", iterations)
            .replace("LAUNCHES", "2" if dynamic else "1"))
    return _executable(HOST_PRELUDE + "\n#include <cstdlib>\n" + body + main)


def _executable(text: str) -> Path:
    """The host program ``text`` compiled (C++20, threads), cached in the private kernel cache by hash."""
    cxx = find_cxx()
    if cxx is None:
        raise EmulationError("no C++20 compiler found (set $CXX)")
    root = cache_dir()  # the private kernel cache (ptx.cache_dir: ours, 0700): no one else can plant a binary
    key = hashlib.sha256(text.encode()).hexdigest()[:24]
    exe = root / f"{key}.emu"
    if exe.exists():
        return exe
    src = root / f"{key}.emu.cpp"
    src.write_text(text)
    tmp = exe.with_suffix(f".emu.{os.getpid()}")
    cmd = [cxx, "-std=c++20", "-O1", "-pthread", "-w", "-o", str(tmp), str(src)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        raise EmulationError(f"{' '.join(cmd)} failed:\n{proc.stderr[-4000:]}")
    os.replace(tmp, exe)
    return exe


def emulate_kernel(kernel, data: np.ndarray, iterations: int = 0) -> np.ndarray:
    """Output of conversion kernel ``kernel`` (a ``KernelSource``) on ``data`` (a whole number of tiles)
    run on the CPU; unwritten output bytes read 0xab."""
    if kernel.threads > 1024 or kernel.threads % 32:
        raise LayoutError(f"kernel: {kernel.threads} threads is not a whole number of warps up to 1024")
    dtype = _UINT[kernel.element_bytes]
    data = np.ascontiguousarray(data, dtype=dtype)
    if data.size % kernel.tile_elements or not data.size:
        raise LayoutError(f"data: {data.size} elements is not a whole number of {kernel.tile_elements}-element tiles")
    exe = _binary(kernel)
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "in.bin", Path(tmp) / "out.bin"
        src.write_bytes(data.tobytes())
        proc = subprocess.run([str(exe), str(src), str(dst), str(data.size // kernel.tile_elements), str(iterations)],
                              capture_output=True, text=True, timeout=600)
        if proc.returncode:
            raise EmulationError(f"emulated kernel {kernel.name} exited with {proc.returncode}: {proc.stderr[-2000:]}")
        return np.frombuffer(dst.read_bytes(), dtype=dtype).copy()


def emulate_check(kernel, tiles: int = 2, iterations: int = 1, seed: int = 0) -> int:
    """Number of wrong output elements of conversion kernel ``kernel`` on random data (0 = correct)."""
    rng = np.random.default_rng(seed)
    dtype = _UINT[kernel.element_bytes]
    data = rng.integers(0, np.iinfo(dtype).max, size=tiles * kernel.tile_elements, dtype=dtype, endpoint=True)
    out = emulate_kernel(kernel, data, iterations)
    return int(np.count_nonzero(out != data))


def emulate_transpose(kernel, seed: int = 0, ctas: int = 0) -> bool:
    """Whether transpose kernel ``kernel`` (a ``TransposeKernel``) computes ``A^T`` on random data;
    a persistent kernel runs as a grid of ``ctas`` CTAs (0: ``kernel.grid(1)``, one SM's worth); a
    dynamic one runs twice on one tile counter (the second run checked), which must end reset."""
    rng = np.random.default_rng(seed)
    dtype = _UINT[kernel.element_bytes]
    a = rng.integers(0, np.iinfo(dtype).max, size=(kernel.rows, kernel.cols), dtype=dtype, endpoint=True)
    persistent = getattr(kernel, "persistent", False)
    grid: list[str] = []
    if persistent:
        ctas = ctas or kernel.grid(1)[0]
        if not 0 < ctas <= kernel.tiles:
            raise LayoutError(f"ctas: a persistent grid needs 1 to {kernel.tiles} CTAs, got {ctas}")
        grid = [str(ctas)]
    exe = _binary(kernel, transpose=True, persistent=persistent, dynamic=getattr(kernel, "dynamic", False))
    tiles = (kernel.rows // kernel.tile_rows) * (kernel.cols // kernel.tile_cols)
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "in.bin", Path(tmp) / "out.bin"
        src.write_bytes(a.tobytes())
        proc = subprocess.run([str(exe), str(src), str(dst), str(tiles), "0"] + grid, capture_output=True, text=True,
                              timeout=600)
        if proc.returncode:
            raise EmulationError(f"emulated kernel {kernel.name} exited with {proc.returncode}: {proc.stderr[-2000:]}")
        b = np.frombuffer(dst.read_bytes(), dtype=dtype).reshape(kernel.cols, kernel.rows)
    return bool(np.array_equal(b, a.T))


_LAUNCH_MAIN = r"""
#include <cstdio>
#include <cstdlib>
#include <memory>
int main(int argc, char** argv) {
  if (argc != 2 + PARAMS) return 2;
  const unsigned ctas = (unsigned)strtoul(argv[1], nullptr, 10);
  std::vector<std::vector<unsigned char>> buffers(PARAMS);
  std::vector<unsigned long long> offsets(PARAMS, 0ull);
  for (int i = 0; i < PARAMS; ++i) {
    if (argv[2 + i][0] != '@') continue;  // a pointer: @OFFSET@file (read, then written back), or a scalar
    offsets[i] = strtoull(argv[2 + i] + 1, nullptr, 10);
    FILE* f = fopen(strchr(argv[2 + i] + 1, '@') + 1, "rb"); if (!f) return 3;
    fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET);
    buffers[i].resize((size_t)n + 1);
    if (n && fread(buffers[i].data(), 1, (size_t)n, f) != (size_t)n) return 4;
    fclose(f);
  }
  for (unsigned blk = 0; blk < ctas; ++blk) {
    std::barrier<> cta(THREADS);
    ll_cta_barrier = &cta;
    std::vector<std::unique_ptr<std::barrier<>>> warps;
    for (unsigned w = 0; w < THREADS / 32; ++w) { warps.emplace_back(new std::barrier<>(32)); ll_warp_barrier[w] = warps.back().get(); }
    std::memset(ll_shared, 0xcd, sizeof ll_shared);
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < THREADS; ++t)
      pool.emplace_back([&, t] { threadIdx.x = t; blockIdx.x = blk; blockIdx.y = 0; gridDim.x = ctas; gridDim.y = 1; gridDim.z = 1;
        KERNEL(ARGUMENTS); });
    for (auto& th : pool) th.join();
  }
  for (int i = 0; i < PARAMS; ++i) {
    if (argv[2 + i][0] != '@') continue;
    FILE* f = fopen(strchr(argv[2 + i] + 1, '@') + 1, "wb"); if (!f) return 5;
    fwrite(buffers[i].data(), 1, buffers[i].size() - 1, f); fclose(f);
  }
  return 0;
}
"""


def _argument(i: int, ctype: str) -> str:
    """C++ of parameter ``i`` (of C type ``ctype``) read from the harness's buffers or ``argv``."""
    base = ctype.replace("__restrict__", "").strip()
    if "*" in base:
        return f"(buffers[{i}].empty() ? ({base})nullptr : ({base})(buffers[{i}].data() + offsets[{i}]))"
    if base in ("float", "double"):
        return f"({base})strtod(argv[{2 + i}], nullptr)"
    return f"({base})strtoull(argv[{2 + i}], nullptr, 10)"


def emulate_launch(kernel, ctas: int, arguments: list) -> list:
    """Run ``kernel`` (a ``permute.PermuteKernel``) on the CPU as a 1-D grid of ``ctas`` CTAs with
    ``arguments``, one per ``kernel.params``: a NumPy array for a pointer (its bytes are the memory; it
    is returned as the kernel left it), or ``(array, byte offset)`` for a pointer into it, ``None`` for a
    null pointer, an int or float for a scalar.
    Returns the arguments with every array replaced by its contents after the run."""
    if kernel.threads > 1024 or kernel.threads % 32:
        raise LayoutError(f"kernel: {kernel.threads} threads is not a whole number of warps up to 1024")
    if len(arguments) != len(kernel.params):
        raise LayoutError(f"arguments: the kernel takes {len(kernel.params)}, got {len(arguments)}")
    body = kernel.source[len(DEVICE_PRELUDE):] if kernel.source.startswith(DEVICE_PRELUDE) else kernel.source
    call = ", ".join(_argument(i, ctype) for i, (ctype, _) in enumerate(kernel.params))
    main = (_LAUNCH_MAIN.replace("PARAMS", str(len(kernel.params))).replace("THREADS", f"{kernel.threads}u")
            .replace("KERNEL", kernel.name).replace("ARGUMENTS", call))
    exe = _executable(HOST_PRELUDE + body + main)
    with tempfile.TemporaryDirectory() as tmp:
        argv, files = [str(exe), str(int(ctas))], {}
        for i, value in enumerate(arguments):
            array, offset = value if isinstance(value, tuple) else (value, 0)
            if isinstance(array, np.ndarray):
                path = Path(tmp) / f"a{i}.bin"
                path.write_bytes(np.ascontiguousarray(array).tobytes())
                files[i] = path
                argv.append(f"@{int(offset)}@{path}")
            elif value is None:
                argv.append("0")
            else:
                argv.append(repr(float(value)) if isinstance(value, float) else str(int(value)))
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        if proc.returncode:
            raise EmulationError(f"emulated kernel {kernel.name} exited with {proc.returncode}: {proc.stderr[-2000:]}")
        out = []
        for i, value in enumerate(arguments):
            array = value[0] if isinstance(value, tuple) else value
            out.append(np.frombuffer(files[i].read_bytes(), dtype=array.dtype).reshape(array.shape).copy()
                       if i in files else value)
        return out
