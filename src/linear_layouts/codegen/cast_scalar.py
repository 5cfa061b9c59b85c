"""The fp8 cast-transpose of any row length and address by single-element accesses at high occupancy.

A CTA of ``W`` warps takes an ``R x N`` tile of ``X`` (``rows x cols``, 2- or 4-byte elements at any
element-aligned address) and writes ``C = fp8(scale X)`` and ``T = C^T`` element by element, every access
coalesced, however the rows of ``X``, ``C`` and ``T`` fall against 16 bytes:

=======================  ====================================  ===========================================
step                     thread (warp ``w``, lane ``l``)         one warp instruction
=======================  ====================================  ===========================================
1. load ``X``            ``X[w + W i][l + 32 j]``, every one     32 elements of a row: 64 / 128 bytes
                         issued before the first is used
2. convert, store ``C``  ``C[w + W i][l + 32 j]``                 32 bytes of a row
3. shared                byte ``(l + 32 j) P + w + W i``         32 rows ``P = R + 4`` bytes apart: 32 banks
4. store ``T``           ``T[c][l + 32 k]``, ``c = w + W q``      32 bytes of a row of ``T``
=======================  ====================================  ===========================================

(tile coordinates; ``i < R / W``, ``j < N / 32``, ``q < N / W``, ``k < R / 32``). Step 4 follows one
barrier; an edge tile predicates each access on its element lying in the matrix. The amax, the scale, the
conversion (``fp8(scale x)`` two elements per ``cvt``) and the launch (``tiles_n * tiles_m`` CTAs, tile
``(t / tiles_n, t mod tiles_n)``) are those of ``permute.emit_cast_transpose_kernel`` in raster order ``"n"``, whose
parameters the kernel takes.

Example: ``emit_scalar_cast_transpose_kernel("k", "bf16", "e4m3")``: 64 x 64 tiles of 8 warps, 16 loads a
thread in flight, ``64 x 68 + 128`` bytes of shared memory, 6 CTAs an SM; a ``4095 x 11007`` matrix takes
``64 x 172`` CTAs.
"""

from __future__ import annotations

from linear_layouts.codegen.intrinsics import OP_PRELUDE, OP_PROLOGUE
from linear_layouts.codegen.permute import (
    CAST_FUNCTIONS, CAST_INPUTS, PermuteKernel, amax_epilogue, cast_params, check_cast_arguments, fitting_ctas,
    to_float,
)
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.limits import quote
from linear_layouts.target import Target

__all__ = ["emit_scalar_cast_transpose_kernel", "LOAD_FUNCTIONS", "scalar_shared_bytes", "row_pitch", "thread_registers"]


#: ``ll_ldg16`` / ``ll_ldg32<OFFSET>(p)``: the 2- / 4-byte element at ``p + OFFSET`` (``ld.global.nc``, zero-extended to
#: 32 bits; ``asm volatile``, so that a thread's loads issue in the emitted order, all before its first store),
#: and their emulator forms under ``LL_HOST``.
LOAD_FUNCTIONS = "\n".join([
    "#ifndef LL_SCALAR_LOADS",
    "#define LL_SCALAR_LOADS",
    "#ifdef LL_HOST",
    *(f"template <unsigned OFFSET = 0u> LL_DEV unsigned ll_ldg{b}(const void* p) {{ {t} v; "
      f"std::memcpy(&v, static_cast<const unsigned char*>(p) + OFFSET, {b // 8}); return v; }}"
      for b, t in ((16, "unsigned short"), (32, "unsigned"))),
    "#else",
    *(f"template <unsigned OFFSET = 0u> LL_DEV unsigned ll_ldg{b}(const void* p) {{ unsigned v; "
      f'asm volatile("ld.global.nc.{t} %0, [%1+%2];" : "=r"(v) : "l"(p), "n"(OFFSET)); return v; }}'
      for b, t in ((16, "u16"), (32, "b32"))),
    "#endif",
    "#endif",
    "",
])


def row_pitch(rows: int) -> int:
    """``P``: bytes between the shared rows of step 3 (a tile column each): ``R + 4``, so that the 32 lanes'
    byte stores of one tile row (32 shared rows, ``P / 4`` words apart, ``P / 4`` odd) hit 32 banks.

    >>> row_pitch(64)
    68
    """
    return rows + 4


def scalar_shared_bytes(rows: int, cols: int) -> int:
    """Dynamic shared memory of an ``R x N`` tile: the fp8 tile transposed (``N`` rows of ``row_pitch(R)``
    bytes) and one float per warp (at most 32) for the amax."""
    return cols * row_pitch(rows) + 4 * 32


def thread_registers(elements: int) -> int:
    """Registers a thread is budgeted when the launch bounds' CTAs per SM are chosen: one per element in
    flight and 24 for the rest, in steps of 8 (ptxas allocates in 8s): 40 for 16 elements.

    >>> thread_registers(16), thread_registers(8), thread_registers(32)
    (40, 32, 56)
    """
    return -(-(24 + elements) // 8) * 8


def emit_scalar_cast_transpose_kernel(name: str, input_format: str, fp8: str, rows: int = 64, cols: int = 64,
                                      warps: int = 8, target: Target | None = None,
                                      ctas_per_sm: int = 0) -> PermuteKernel:
    """CUDA C++ of the module doc's kernel: ``C = fp8(scale X)``, ``T = C^T`` and ``amax = max(amax, max |X|)``
    for ``X`` of ``input_format`` (``permute.CAST_INPUTS``) at any element-aligned address and row length, by
    ``rows x cols`` tiles of ``warps`` warps (powers of two: ``rows`` 32 to 256, ``cols`` 32 to 256, ``warps``
    1 to 32, ``warps <= rows``, ``warps <= cols``, at most 64 elements a thread); the launch bounds name the
    CTAs an SM of ``target`` (default: the default target) holds by threads, shared memory and
    ``thread_registers``, at most ``ctas_per_sm`` (0: as many as that).

    Example: the defaults make 64 x 64 tiles, 256 threads, 6 CTAs an SM (40 registers a thread)."""
    check_cast_arguments(name, input_format, fp8)
    for label, value, least, most in (("rows", rows, 32, 256), ("cols", cols, 32, 256), ("warps", warps, 1, 32)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least or value & (value - 1) or value > most:
            raise LayoutError(f"{label}: must be a power of two from {least} to {most}, got {quote(value)}")
    if warps > rows or warps > cols or rows * cols > 64 * 32 * warps:
        raise LayoutError(f"warps: {warps} warps cannot take {rows} x {cols} tiles (1 to 64 elements a thread, "
                          "at least a row and a column a warp)")
    if isinstance(ctas_per_sm, bool) or not isinstance(ctas_per_sm, int) or not 0 <= ctas_per_sm <= 32:
        raise LayoutError(f"ctas_per_sm: must be 0 (as many as fit) to 32, got {quote(ctas_per_sm)}")
    wi = CAST_INPUTS[input_format]
    itype = {2: "unsigned short", 4: "unsigned"}[wi]
    threads = 32 * warps
    rw, cj = rows // warps, cols // 32  # rows a warp loads, columns a lane loads per row
    tq, rk = cols // warps, rows // 32  # rows of T a warp stores, bytes a lane stores per row of T
    elements = rw * cj
    pitch = row_pitch(rows)
    slot = cols * pitch
    shared = scalar_shared_bytes(rows, cols)
    ctas_per_sm = fitting_ctas(threads, shared, thread_registers(elements), target, ctas_per_sm)
    params = cast_params(itype)
    cvt = f"ll_cvt_{fp8}x2"
    pairs = [(e, e + 1) for e in range(0, elements, 2)]  # element e: row i = e / cj, column j = e mod cj

    def load(full: bool) -> list[str]:
        lines = []
        for e in range(elements):
            i, j = divmod(e, cj)
            at = f"ll_ldg{8 * wi}<{32 * wi * j}u>(xp + (size_t){i}u * x_step)"
            lines.append(f"    x[{e}] = {at};" if full else
                         f"    x[{e}] = (warp + {warps * i}u < rows_left && lane + {32 * j}u < cols_left) ? {at} : 0u;")
        return lines

    def convert(full: bool) -> list[str]:
        lines = []
        for a, b in pairs:  # each pair's bytes stored as soon as converted: few registers live
            lines.append(f"    {{ const float fa = {to_float(input_format, f'x[{a}]')}, "
                         f"fb = {to_float(input_format, f'x[{b}]')};")
            lines.append("      amax = fmaxf(amax, fmaxf(fabsf(fa), fabsf(fb)));")
            lines.append(f"      const unsigned v = {cvt}(fa * scale, fb * scale);")
            for e, value in ((a, "v"), (b, "v >> 8")):
                i, j = divmod(e, cj)
                store = f"ll_stg8(cp + (size_t){i}u * x_step + {32 * j}u, {value});"
                lines.append(f"      {store}" if full else
                             f"      if (warp + {warps * i}u < rows_left && lane + {32 * j}u < cols_left) {store}")
                lines.append(f"      ll_sts8(sp + {32 * j * pitch + warps * i}u, {value});")
            lines.append("    }")
        return lines

    def transpose(full: bool) -> list[str]:
        lines = [f"    unsigned y[{tq * rk}];"]
        for q in range(tq):
            for k in range(rk):
                lines.append(f"    y[{q * rk + k}] = ll_lds8(tp + {warps * q * pitch + 32 * k}u);")
        for q in range(tq):
            for k in range(rk):
                store = f"ll_stg8(trow + (size_t){q}u * t_step + {32 * k}u, y[{q * rk + k}]);"
                lines.append(f"    {store}" if full else
                             f"    if (warp + {warps * q}u < cols_left && lane + {32 * k}u < rows_left) {store}")
        return lines

    def branches(part) -> list[str]:
        return ["  if (full) {", *part(True), "  } else {", *part(False), "  }"]

    body = [
        f"// {name}: C = fp8 {fp8}(scale X), T = C^T, amax = max(amax, max |X|); X rows x cols {input_format} at any",
        f"//   element-aligned address and row length, by {rows}x{cols} tiles, every access one element. launch: a",
        f"//   1-D grid of tiles_n * tiles_m CTAs, block = {threads}, dynamic shared = {shared} bytes ({ctas_per_sm} "
        "CTAs per SM).",
        f'extern "C" __global__ void __launch_bounds__({threads}, {ctas_per_sm}) {name}(',
        f"    {', '.join(f'{ty} {p}' for ty, p in params)}) {{",
        *OP_PROLOGUE,
        "  const unsigned tile_col = blockIdx.x % tiles_n, tile_row = blockIdx.x / tiles_n;",
        f"  const unsigned row0 = tile_row * {rows}u, col0 = tile_col * {cols}u;",
        "  const unsigned rows_left = rows - row0, cols_left = cols - col0;",
        f"  const bool full = rows_left >= {rows}u && cols_left >= {cols}u;",
        "  const float scale = scale_ptr != nullptr ? *scale_ptr : scale_value;",
        f"  const size_t x_step = (size_t){warps}u * cols, t_step = (size_t){warps}u * rows;  // a warp's next row",
        f"  const {itype}* __restrict__ xp = src_all + ((size_t)(row0 + warp) * cols + col0 + lane);",
        "  unsigned char* const cp = cast_all + ((size_t)(row0 + warp) * cols + col0 + lane);",
        f"  const unsigned sp = smem + lane * {pitch}u + warp;  // step 3: byte (column) P + row",
        f"  unsigned x[{elements}];",
        "  float amax = 0.0f;",
        f"  // 1. every load of the thread in flight: rows warp + {warps} i, columns lane + 32 j",
        *branches(load),
        "  // 2-3. amax, fp8 two elements per cvt, C's bytes, and the tile transposed into shared memory",
        *branches(convert),
        "  ll_bar_cta();",
        f"  // 4. T: rows warp + {warps} q of the tile's T, bytes lane + 32 k",
        f"  const unsigned tp = smem + warp * {pitch}u + lane;",
        "  unsigned char* const trow = trans_all + ((size_t)(col0 + warp) * rows + row0 + lane);",
        *branches(transpose),
        *amax_epilogue(slot, warps),
        "}",
    ]
    source = OP_PRELUDE + CAST_FUNCTIONS + LOAD_FUNCTIONS + "\n".join(body) + "\n"
    return PermuteKernel(name, source, threads, shared, wi, rows, cols, 1, 1, True, 0, tuple(params))
