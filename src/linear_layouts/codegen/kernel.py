"""Whole conversion kernels: global load (``src``) -> conversion -> global store (``dst``).

One CTA handles one tile (the layouts' tensor) at ``blockIdx.x * tile_elements`` in a row-major
array.  With ``iterations > 0`` the kernel also runs ``iterations`` round trips
``dst -> src -> dst`` (XOR-ing every register with 1 after each conversion, so no compiler, ours or
Triton's, can fold two conversions into one); the XORs cancel, so the output always equals the
input: a conversion kernel is an identity on the array, and every element is checked.

Example: ``emit_conversion_kernel("seed", src, dst, 4, SharedConversion(...))`` gives CUDA C++
defining ``extern "C" __global__ void seed(const unsigned* src, unsigned* dst, int iterations)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from linear_layouts.codegen.elements import check_element_bytes, element_type
from linear_layouts.codegen.global_memory import emit_global_load, emit_global_store
from linear_layouts.codegen.hardware_map import global_map
from linear_layouts.errors import LayoutError
from linear_layouts.layout import LinearLayout

__all__ = ["ConversionStep", "KernelSource", "emit_conversion_kernel", "TransposeKernel", "emit_transpose_kernel"]


class ConversionStep(Protocol):
    """What a kernel needs from a conversion step (see ``codegen.conversion``)."""

    shared_bytes: int

    def emit(self, a: str = "a", b: str = "b", smem: str = "smem") -> list[str]: ...

    def instruction_counts(self) -> dict[str, int]: ...


@dataclass(frozen=True)
class KernelSource:
    """A generated kernel: CUDA C++ ``source`` defining ``extern "C"`` function ``name``, launched with
    ``threads`` threads and ``shared_bytes`` dynamic shared memory per tile of ``tile_elements``."""

    name: str
    source: str
    threads: int
    shared_bytes: int
    tile_elements: int
    element_bytes: int


def _num(layout: LinearLayout, dim: str) -> int:
    return layout.in_dim_size(dim) if layout.has_in_dim(dim) else 1


def emit_conversion_kernel(
    name: str,
    src: LinearLayout,
    dst: LinearLayout,
    element_bytes: int,
    forward: ConversionStep,
    backward: ConversionStep | None = None,
) -> KernelSource:
    """CUDA C++ of a kernel loading a tile in ``src``, converting with ``forward`` and storing in
    ``dst``; ``backward`` (``dst -> src``) enables the ``iterations`` round trips (else it is 0)."""
    w = check_element_bytes(element_bytes)
    if not name.isidentifier():
        raise LayoutError(f"name: {name!r} is not a C identifier")
    if dict(src.out_dims) != dict(dst.out_dims):
        raise LayoutError(f"dst: out dims {dst.out_dims} differ from src's {src.out_dims}")
    if _num(src, "warp") != _num(dst, "warp"):
        raise LayoutError(f"dst: {_num(dst, 'warp')} warps, src has {_num(src, 'warp')}")
    t = element_type(w)
    threads = 32 * _num(src, "warp")
    tile = src.total_out_dim_size
    n_a, n_b = _num(src, "register"), _num(dst, "register")
    shared = max(forward.shared_bytes, backward.shared_bytes if backward else 0)
    body: list[str] = [
        f'extern "C" __global__ void __launch_bounds__({threads}) {name}(',
        f"    const {t}* __restrict__ src_all, {t}* __restrict__ dst_all, int iterations) {{",
        "  extern __shared__ __align__(16) unsigned char smem_buffer[];",
        "  const unsigned lane = threadIdx.x & 31u;",
        "  const unsigned warp = threadIdx.x >> 5;",
        "  const unsigned smem = (unsigned)__cvta_generic_to_shared(smem_buffer);",
        "  (void)smem; (void)lane; (void)warp;",
        f"  const {t}* src = src_all + (size_t)blockIdx.x * {tile}u;",
        f"  {t}* dst = dst_all + (size_t)blockIdx.x * {tile}u;",
        f"  {t} a[{n_a}];",
        f"  {t} b[{n_b}];",
    ]
    indent = "  "
    body += [indent + x for x in emit_global_load(global_map(src), w, "a", "src")]
    body += [indent + x for x in forward.emit("a", "b", "smem")]
    if backward is not None:
        body.append("  for (int it = 0; it < iterations; ++it) {")
        body.append(f"    #pragma unroll\n    for (int r = 0; r < {n_b}; ++r) b[r] ^= ({t})1;")
        body += ["    " + x for x in backward.emit("b", "a", "smem")]
        body.append(f"    #pragma unroll\n    for (int r = 0; r < {n_a}; ++r) a[r] ^= ({t})1;")
        body += ["    " + x for x in forward.emit("a", "b", "smem")]
        body.append("  }")
    body += [indent + x for x in emit_global_store(global_map(dst), w, "b", "dst")]
    body.append("}")
    return KernelSource(name, "\n".join(body) + "\n", threads, shared, tile, w)


@dataclass(frozen=True)
class TransposeKernel:
    """A matrix transpose ``B = A^T`` (``A``: ``rows x cols`` row-major) by tiles: CTA ``(x, y)`` loads
    tile ``(y, x)`` of ``A`` in ``src``, converts to ``dst`` and stores it at tile ``(x, y)`` of ``B``.
    Launch a ``(cols / tile_cols, rows / tile_rows)`` grid of ``threads`` threads."""

    name: str
    source: str
    threads: int
    shared_bytes: int
    rows: int
    cols: int
    tile_rows: int
    tile_cols: int
    element_bytes: int


def emit_transpose_kernel(
    name: str, src: LinearLayout, dst: LinearLayout, element_bytes: int, forward: ConversionStep,
    rows: int, cols: int,
) -> TransposeKernel:
    """CUDA C++ of a tiled transpose through ``forward`` (``src -> dst`` over one ``M x N`` tile):
    element ``(m, n)`` of tile ``(i, j)`` is read at ``A[(iM + m) cols + jN + n]`` and written at
    ``B[(jN + n) rows + iM + m]``, so ``dst`` should be contiguous along ``dim0``."""
    w = check_element_bytes(element_bytes)
    if src.num_out_dims != 2 or dict(src.out_dims) != dict(dst.out_dims):
        raise LayoutError("src/dst: a transpose needs two equal 2-D tile shapes")
    m, n = (src.out_dim_size(d) for d in src.out_dim_names)
    for value, label in ((rows, "rows"), (cols, "cols")):
        if value <= 0 or value & (value - 1):
            raise LayoutError(f"{label}: must be a power of two, got {value}")
    if rows % m or cols % n:
        raise LayoutError(f"rows/cols: {rows}x{cols} is not a whole number of {m}x{n} tiles")
    d0, d1 = src.out_dim_names
    t = element_type(w)
    threads = 32 * _num(src, "warp")
    body = [
        f'extern "C" __global__ void __launch_bounds__({threads}) {name}(',
        f"    const {t}* __restrict__ src_all, {t}* __restrict__ dst_all) {{",
        "  extern __shared__ __align__(16) unsigned char smem_buffer[];",
        "  const unsigned lane = threadIdx.x & 31u;",
        "  const unsigned warp = threadIdx.x >> 5;",
        "  const unsigned smem = (unsigned)__cvta_generic_to_shared(smem_buffer);",
        "  (void)smem; (void)lane; (void)warp;",
        f"  const {t}* src = src_all + (size_t)blockIdx.y * {m * cols}u + (size_t)blockIdx.x * {n}u;",
        f"  {t}* dst = dst_all + (size_t)blockIdx.x * {n * rows}u + (size_t)blockIdx.y * {m}u;",
        f"  {t} a[{_num(src, 'register')}];",
        f"  {t} b[{_num(dst, 'register')}];",
    ]
    body += ["  " + x for x in emit_global_load(global_map(src, {d0: cols, d1: 1}), w, "a", "src")]
    body += ["  " + x for x in forward.emit("a", "b", "smem")]
    body += ["  " + x for x in emit_global_store(global_map(dst, {d0: 1, d1: rows}), w, "b", "dst")]
    body.append("}")
    return TransposeKernel(name, "\n".join(body) + "\n", threads, forward.shared_bytes, rows, cols, m, n, w)
