"""Run generated conversion kernels on the CPU: the kernel source, unchanged, compiled as C++20 with the
host definitions of ``codegen.intrinsics`` (one thread per CUDA thread, barriers, shuffle and
ldmatrix/stmatrix exchanges between the lanes of a warp), so CI checks every element of emitted
kernels without a GPU.

``emulate_kernel(kernel, data, iterations)`` returns the output array; ``emulate_check`` counts the
elements a conversion kernel (an identity on its array) gets wrong on random data.

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

__all__ = ["find_cxx", "emulate_kernel", "emulate_check", "emulate_transpose", "EmulationError"]

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
    cxx = find_cxx()
    if cxx is None:
        raise EmulationError("no C++20 compiler found (set $CXX)")
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
    text = HOST_PRELUDE + "\n#include <cstdlib>\n" + body + main
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
