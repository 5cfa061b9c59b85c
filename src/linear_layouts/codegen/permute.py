"""Kernels of tensors of any shape: tiled permutations and the fp8 cast-transpose (``linear_layouts.ops``).

A tile is a planned conversion ``src -> dst`` over an ``M x N`` tile (powers of two), as in
``codegen.transpose``, but the matrix is given at run time: ``rows x cols`` elements of ``A`` at row stride
``lda``, written to ``B`` at row stride ``ldb``, and ``batch_dims`` more dims, each with its size and its
element strides in ``A`` and in ``B``. CTA ``t`` of a 1-D grid takes tile column ``t mod T_n``, tile row
``(t / T_n) mod T_m`` and batch index ``t / (T_n T_m)`` (batch dims innermost first), or, in raster order
``"m"``, tile row ``t mod T_m`` and tile column ``(t / T_m) mod T_n``; the one-tile-per-CTA
kernel divides by multiplying with a ``fast_divider`` parameter per divisor (``tiles_n_div``, ...), which
the caller computes. Edge tiles are
masked: a tile with fewer than ``M`` rows or ``N`` columns left predicates each global access on its
first element (``global_memory.Pitch``), so the caller keeps ``cols`` a multiple of ``src_vector`` and,
for a transpose, ``rows`` a multiple of ``dst_vector`` (a vector is then valid whole or not at all).

=====================  ==================================  ==================================
form                   element ``(m, n)`` of tile ``(i, j)``  written to
=====================  ==================================  ==================================
``transposed=True``    ``A[(iM + m) lda + jN + n]``         ``B[(jN + n) ldb + iM + m]``
``transposed=False``   ``A[(iM + m) lda + jN + n]``         ``B[(iM + m) ldb + jN + n]``
=====================  ==================================  ==================================

(plus the batch offsets). ``transposed=False`` moves rows that stay contiguous (a permutation that keeps
the last dim) with ``src == dst`` and an empty plan. ``emit_cast_transpose_kernel`` reads a bf16 / fp16
/ fp32 matrix, writes ``fp8(scale * x)`` (round to nearest even, saturated to the largest finite fp8) in
its own layout and transposed, and the largest ``|x|`` into ``amax`` (an atomic max), as fp8 training
recipes (Transformer Engine's ``cast_transpose``) do.

Example: ``emit_tiled_permute_kernel("p", src, dst, 2, conversion_step(src, dst, 16), batch_dims=1)``
defines ``extern "C" __global__ void p(const unsigned short* src_all, unsigned short* dst_all, unsigned
rows, unsigned cols, unsigned tiles_n, unsigned tiles_m, unsigned long long lda, unsigned long long
ldb, unsigned size0, unsigned long long src_stride0, unsigned long long dst_stride0, unsigned long long
tiles_n_div, unsigned long long tiles_m_div)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from linear_layouts.core.arguments import checked
from linear_layouts.codegen.conversion import register_bits
from linear_layouts.codegen.elements import check_element_bytes, cpp_storage_type
from linear_layouts.codegen.global_memory import (
    FOLD_PARAMS, Pitch, emit_global_load_stages, emit_global_load_words, emit_global_store_words, fast_quotient,
    global_load_vectors, global_vector_elements,
)
from linear_layouts.codegen.hardware_map import global_map
from linear_layouts.codegen.intrinsics import OP_PRELUDE, OP_PROLOGUE
from linear_layouts.codegen.kernel import ConversionStep, _align, _canonical, _scoped, choose_packings, cuda_target
from linear_layouts.codegen.packing import Emission, Packing
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import MAX_ELEMENTS, check_layout_size, quote
from linear_layouts.target import Target, resolve

__all__ = ["PermuteKernel", "emit_tiled_permute_kernel", "fast_divider", "emit_cast_transpose_kernel",
           "amax_epilogue", "to_float", "check_cast_arguments", "cast_params", "fitting_ctas", "MAX_BATCH_DIMS", "MAX_KERNEL_BATCH_DIMS", "CAST_INPUTS", "FP8_FORMATS",
           "FP8_MAX", "CAST_FUNCTIONS", "tiled_params", "tile_divisors", "tile_index_lines", "RASTERS", "FOLDS"]

#: Batch dims ``ops`` gives a kernel before it launches once per index of the outer ones (``ops.launches``: up to
#: ``ops.launches.MAX_BATCH_LAUNCHES`` launches; beyond, the kernel takes every batch dim).
MAX_BATCH_DIMS = 4
#: Batch dims a kernel (tiled, interleave, chunked) takes at most: each is 28 bytes of parameters (its size, two
#: strides and a ``fast_divider``), 1.8 KiB of the 4 KiB a launch holds for 64.
MAX_KERNEL_BATCH_DIMS = 64

#: Input element types of the cast-transpose: name -> bytes.
CAST_INPUTS = {"bf16": 2, "fp16": 2, "fp32": 4}

#: fp8 formats of the cast-transpose (PTX ``cvt`` names), and their largest finite values.
FP8_FORMATS = ("e4m3", "e5m2")
FP8_MAX = {"e4m3": 448.0, "e5m2": 57344.0}


@dataclass(frozen=True)
class PermuteKernel:
    """A generated kernel of the module doc: CUDA C++ ``source`` defining ``extern "C"`` function
    ``name`` with ``params`` (``(C type, name)`` in order), launched as a 1-D grid of ``tiles(...)``
    CTAs of ``threads`` threads with ``shared_bytes`` dynamic shared memory. ``src_vector`` /
    ``dst_vector``: elements per global access along a row of ``A`` / of ``B`` (the caller's sizes
    and pointers must allow them)."""

    name: str
    source: str
    threads: int
    shared_bytes: int
    element_bytes: int
    tile_rows: int
    tile_cols: int
    src_vector: int
    dst_vector: int
    transposed: bool
    batch_dims: int
    params: tuple[tuple[str, str], ...]
    ctas_per_sm: int = 0  # persistent: at most this many CTAs per SM loop over the tiles (0: one tile per CTA)
    fold: str = ""  # "cols" / "rows": a batch dim runs on along A's columns / B's columns (FOLDS)

    def tile_counts(self, rows: int, cols: int) -> tuple[int, int]:
        """``(T_m, T_n)``: tiles along the rows and the columns of an ``rows x cols`` matrix."""
        return -(-rows // self.tile_rows), -(-cols // self.tile_cols)

    def tiles(self, rows: int, cols: int, batch: int = 1) -> int:
        """Tiles of the problem: ``T_m T_n batch`` (the CTAs of a one-tile-per-CTA kernel)."""
        tm, tn = self.tile_counts(rows, cols)
        return tm * tn * batch

    def ctas(self, tiles: int, sms: int) -> int:
        """The grid for ``tiles`` tiles on ``sms`` SMs: one CTA per tile, or (persistent) the fewest CTAs, at
        most ``ctas_per_sm`` per SM, that take the tiles in as few rounds (each CTA the same number but the
        last: 1024 tiles on 132 slots are 128 CTAs of 8)."""
        if not self.ctas_per_sm:
            return tiles
        slots = max(1, min(tiles, sms * self.ctas_per_sm))
        rounds = -(-tiles // slots)
        return -(-tiles // rounds)


def _tile_shape(src: LinearLayout, dst: LinearLayout) -> tuple[int, int]:
    if src.num_out_dims != 2 or dict(src.out_dims) != dict(dst.out_dims):
        raise LayoutError("src/dst: a tiled kernel needs two layouts over the same 2-D tile")
    return src.out_dim_size(src.out_dim_names[0]), src.out_dim_size(src.out_dim_names[1])


def _log2(n: int) -> int:
    return n.bit_length() - 1


def fast_divider(d: int) -> int:
    """The divider of ``d`` (``1 <= d < 2**31``) a kernel divides a tile index ``t < 2**31`` by without a division
    instruction: ``magic | shift << 56`` with ``shift = 31 + ceil(log2 d)``, ``magic = ceil(2**shift / d)``
    (< ``2**33``), and ``t / d == (t * magic) >> shift`` (Granlund and Montgomery: ``magic * d`` exceeds
    ``2**shift`` by less than ``d <= 2**(shift - 31)``). Example: ``fast_divider(3)`` is
    ``0xaaaaaaab | 33 << 56``: ``7 * 0xaaaaaaab >> 33 == 2``."""
    if isinstance(d, bool) or not isinstance(d, int) or not 1 <= d < 2**31:
        raise LayoutError(f"d: a divider divides by an int in [1, 2**31), got {quote(d)}")
    shift = 31 + (d - 1).bit_length()
    return -(-(1 << shift) // d) | shift << 56


def _divide(t: str, d: str, fast: bool) -> str:
    """C expression of ``t / d`` (``fast``: by the ``{d}_div`` parameter, ``fast_divider(d)``)."""
    return fast_quotient(t, f"{d}_div") if fast else f"{t} / {d}"


def tile_index_lines(m: int, n: int, batch_dims: int, tile: str = "blockIdx.x", fast: bool = False,
                     raster: str = "n", batch_bases: bool = True) -> list[str]:
    """The tile ``tile``'s coordinates ``row0``, ``col0``, its valid part ``rows_left`` x ``cols_left``
    (``full``: all of it) and batch offsets ``src_base``, ``dst_base`` (elements; left out where
    ``batch_bases`` is False and ``batch_dims`` is 0: a kernel of one matrix that does not read them); ``fast``: each division by
    a ``fast_divider`` parameter (``tiles_n_div``, ...) instead of a division. ``raster`` (``RASTERS``): the
    order of the tile index within a matrix, ``"n"`` along ``A``'s rows of tiles (tile ``(t / T_n, t mod T_n)``),
    ``"m"`` down its columns of tiles (tile ``(t mod T_m, t / T_m)``)."""
    first, second = _raster_counts(raster)
    lines = [f"  unsigned t = {tile};",
             f"  unsigned q = {_divide('t', first, fast)};",
             f"  const unsigned {_TILE_OF[first]} = t - q * {first};",
             "  t = q;"]
    if batch_dims:
        lines += [f"  q = {_divide('t', second, fast)};", f"  const unsigned {_TILE_OF[second]} = t - q * {second};",
                  "  t = q;"]
    else:
        lines.append(f"  const unsigned {_TILE_OF[second]} = t;")
    if batch_bases or batch_dims:
        lines += ["  unsigned long long src_base = 0ull, dst_base = 0ull;"]
    for k in reversed(range(batch_dims)):  # the last batch dim is the innermost: it varies fastest
        if k:
            lines += [f"  q = {_divide('t', f'size{k}', fast)};", f"  const unsigned index{k} = t - q * size{k};"]
        index = "t" if k == 0 else f"index{k}"
        lines.append(f"  src_base += (unsigned long long){index} * src_stride{k};")
        lines.append(f"  dst_base += (unsigned long long){index} * dst_stride{k};")
        if k:
            lines.append("  t = q;")
    lines += [f"  const unsigned row0 = tile_row * {m}u, col0 = tile_col * {n}u;",
              "  const unsigned rows_left = rows - row0, cols_left = cols - col0;",
              f"  const bool full = rows_left >= {m}u && cols_left >= {n}u;"]
    return lines


#: How a tiled transpose takes a batch dim (``emit_tiled_permute_kernel``'s ``fold``): as a batch (``""``), or
#: run on along ``A``'s columns (``"cols"``) or ``B``'s (``"rows"``: ``A``'s rows).
FOLDS = ("", "cols", "rows")

#: Tile orders of a tiled kernel (``tile_index_lines``): ``"n"`` along the rows of tiles of ``A`` (consecutive
#: CTAs read one stretch of ``A``), ``"m"`` down its columns of tiles (a transpose's consecutive CTAs write one
#: stretch of ``B``'s rows), as CUTLASS's raster order along N / along M.
RASTERS = ("n", "m")
_TILE_OF = {"tiles_n": "tile_col", "tiles_m": "tile_row"}


def _raster_counts(raster: str) -> tuple[str, str]:
    """The tile counts a tile index is divided by, innermost first, in order ``raster``."""
    if raster not in RASTERS:
        raise LayoutError(f"raster: must be one of {RASTERS}, got {quote(raster)}")
    return ("tiles_n", "tiles_m") if raster == "n" else ("tiles_m", "tiles_n")


def _locate(m: int, n: int, batch_dims: int, tile: str, prefix: str, transposed: bool, raster: str) -> list[str]:
    """A block setting ``{prefix}src``, ``{prefix}dst``, ``{prefix}rows_left``, ``{prefix}cols_left`` and
    ``{prefix}full`` (declared by the caller) for tile ``tile`` (``tile_index_lines`` in order ``raster``, its names
    prefixed ``l_``)."""
    names = ("tile_col", "tile_row", "src_base", "dst_base", "row0", "col0", "rows_left", "cols_left", "full", "q",
             *(f"index{k}" for k in range(1, max(MAX_BATCH_DIMS, batch_dims))))
    pattern = re.compile(r"\b(" + "|".join(names) + r"|t)\b")
    inner = [pattern.sub(lambda x: "l_" + x.group(1), line) if not line.lstrip().startswith("unsigned t =")
             else line.replace("unsigned t =", "unsigned l_t =")
             for line in tile_index_lines(m, n, batch_dims, tile, raster=raster)]
    dst_tile = "(size_t)l_col0 * ldb + l_row0" if transposed else "(size_t)l_row0 * ldb + l_col0"
    return ["  {"] + ["  " + x for x in inner] + [
        f"    {prefix}src = src_all + l_src_base + (size_t)l_row0 * lda + l_col0;",
        f"    {prefix}dst = dst_all + l_dst_base + {dst_tile};",
        f"    {prefix}rows_left = l_rows_left; {prefix}cols_left = l_cols_left; {prefix}full = l_full;",
        "  }"]


def _branches(full: list[str], masked: list[str]) -> list[str]:
    """``if (full) { full } else { masked }`` (indented for a kernel body)."""
    return (["  if (full) {"] + ["    " + x for x in full] + ["  } else {"] + ["    " + x for x in masked]
            + ["  }"])


def tile_divisors(batch_dims: int, raster: str = "n") -> list[str]:
    """The parameters a tile index is divided by (``tile_index_lines``): the tile count along ``raster``, the other
    one when batched, then every batch size but the outermost's."""
    first, second = _raster_counts(raster)
    return [first] + ([second] if batch_dims else []) + [f"size{k}" for k in reversed(range(1, batch_dims))]


def _batch_params(batch_dims: int) -> list[tuple[str, str]]:
    out = []
    for k in range(batch_dims):
        out += [("unsigned", f"size{k}"), ("unsigned long long", f"src_stride{k}"),
                ("unsigned long long", f"dst_stride{k}")]
    return out


def _signature(name: str, threads: int, params: list[tuple[str, str]], min_ctas: int = 0) -> list[str]:
    args = ", ".join(f"{t} {p}" for t, p in params)
    bounds = f"{threads}, {min_ctas}" if min_ctas else f"{threads}"
    return [f'extern "C" __global__ void __launch_bounds__({bounds}) {name}(', f"    {args}) {{"]


@checked
def emit_tiled_permute_kernel(
    name: str, src: LinearLayout, dst: LinearLayout, element_bytes: int, forward: ConversionStep, *,
    transposed: bool = True, batch_dims: int = 0, ctas_per_sm: int = 0, min_ctas: int = 0,
    fast_divide: bool = True, raster: str = "n", fold: str = "", max_elements: int = MAX_ELEMENTS,
    target: Target | None = None,
) -> PermuteKernel:
    """CUDA C++ of the module doc's tiled kernel: each CTA loads its tile of ``A`` in ``src`` (16-byte or
    narrower vectors along the rows of ``A``), converts it with ``forward`` to ``dst`` and stores it in
    ``B`` (``transposed``: ``dst`` should then run along the tile's columns, the rows of ``B``).
    ``ctas_per_sm > 0``: persistent and software-pipelined (as ``transpose.emit_persistent_transpose_kernel``):
    a grid of at most ``ctas_per_sm`` CTAs per SM, CTA ``b`` taking tiles ``b, b + G, ...`` of the 1-D
    order, the next tile's loads in flight during this tile's conversion and stores. ``min_ctas > 0`` (one
    tile per CTA): ``__launch_bounds__(threads, min_ctas)``, so the compiler keeps a thread within the
    registers that let ``min_ctas`` CTAs share an SM (65536 / (16 x 128) = 32 for 16 CTAs of 4 warps);
    ``fast_divide`` (one tile per CTA): divides the tile index by ``fast_divider`` parameters (module doc),
    else by the divisors themselves (and the parameters end with the batch dims'). ``raster``: the order CTAs
    take tiles in (``tile_index_lines``; the persistent form's CTA ``b`` takes tiles ``b, b + G, ...`` of it).
    ``fold`` (a transpose, one tile per CTA): one batch dim runs on along ``A``'s columns (``"cols"``: ``cols`` is
    that dim's size times a matrix's columns ``fold_extent``, and column ``q`` of ``A`` lies at ``(q / fold_extent)
    fold_stride + q mod fold_extent``; ``B`` is one matrix of ``cols`` rows) or along its rows (``"rows"``, the same
    for ``B``'s columns), so tiles cross from one matrix into the next and only the last tile of all is partial
    (``global_memory.Pitch``'s ``fold``). Requires: ``src``, ``dst`` over one ``M x N`` tile (powers of two);
    ``0 <= batch_dims <= MAX_KERNEL_BATCH_DIMS``; layouts within ``max_elements``; ``target`` an NVIDIA one whose
    ISA has what ``forward`` emits (default: the default target, ``kernel.cuda_target``).

    Example: 16-bit 128x128 tiles of a ``4096 x 11008`` matrix: ``32 x 86`` CTAs, the last tile column
    (``11008 = 85 x 128 + 128``: none) unmasked; of ``4095 x 11000``, the last tile row and column masked."""
    target = cuda_target(target, forward)
    w = check_element_bytes(element_bytes)
    check_layout_size(src, max_elements, "emit_tiled_permute_kernel: src")
    check_layout_size(dst, max_elements, "emit_tiled_permute_kernel: dst")
    if not name.isidentifier():
        raise LayoutError(f"name: {quote(name)} is not a C identifier")
    if isinstance(batch_dims, bool) or not isinstance(batch_dims, int) or not 0 <= batch_dims <= MAX_KERNEL_BATCH_DIMS:
        raise LayoutError(f"batch_dims: must be an int in [0, {MAX_KERNEL_BATCH_DIMS}], got {quote(batch_dims)}")
    if isinstance(min_ctas, bool) or not isinstance(min_ctas, int) or min_ctas < 0:
        raise LayoutError(f"min_ctas: must be an int >= 0 (0: no bound), got {quote(min_ctas)}")
    if fold not in FOLDS:
        raise LayoutError(f"fold: must be one of {FOLDS}, got {quote(fold)}")
    if fold and not (transposed and fast_divide and not ctas_per_sm):
        raise LayoutError("fold: only a transpose of one tile per CTA with fast dividers folds a batch dim")
    m, n = _tile_shape(src, dst)
    d0, d1 = src.out_dim_names
    t = cpp_storage_type(w)
    threads = target.lanes * src.in_dim_size("warp", missing_ok=True)
    forward = _canonical(forward)
    gsrc = global_map(src, {d0: n, d1: 1})
    gdst = global_map(dst, {d0: 1, d1: m} if transposed else {d0: n, d1: 1})
    src_vector, dst_vector = global_vector_elements(gsrc, w), global_vector_elements(gdst, w)
    pa, pb = choose_packings(src, dst, w, forward)
    em = Emission("t")
    load_fold, store_fold = ("col0" if fold == "cols" else None), ("row0" if fold == "rows" else None)
    load_pitch = Pitch(_log2(n), "lda", fold=load_fold)
    store_pitch = Pitch(_log2(m), "ldb", fold=store_fold) if transposed else Pitch(_log2(n), "ldb")
    store_bounds = ("cols_left", "rows_left") if transposed else ("rows_left", "cols_left")
    _raster_counts(raster)
    if ctas_per_sm:
        return _persistent(name, src, w, forward, transposed, batch_dims, ctas_per_sm, (m, n), (gsrc, gdst),
                           (pa, pb), (src_vector, dst_vector), store_bounds, em, target, raster)
    params = [(f"const {t}* __restrict__", "src_all"), (f"{t}* __restrict__", "dst_all"), ("unsigned", "rows"),
              ("unsigned", "cols"), ("unsigned", "tiles_n"), ("unsigned", "tiles_m"),
              ("unsigned long long", "lda"), ("unsigned long long", "ldb")] + _batch_params(batch_dims)
    params += [("unsigned", FOLD_PARAMS[0]), ("unsigned long long", FOLD_PARAMS[1])] if fold else []
    params += [("unsigned long long", f"{d}_div") for d in tile_divisors(batch_dims, raster)] if fast_divide else []
    params += [("unsigned long long", FOLD_PARAMS[2])] if fold else []
    dst_tile = ("(size_t)col0 * ldb" + ("" if fold == "rows" else " + row0")) if transposed \
        else "(size_t)row0 * ldb + col0"
    src_tile = "(size_t)row0 * lda" + ("" if fold == "cols" else " + col0")
    kind = "B = A^T per tile" if transposed else "rows of A copied to rows of B"
    folded = {"": "", "cols": " A's columns run on into the next matrix of a batch dim (fold_extent a matrix);",
              "rows": " B's columns run on into the next matrix of a batch dim (fold_extent a matrix);"}[fold]
    body = [
        f"// {name}: {kind}, {m}x{n} tiles of {8 * w}-bit elements (src -> dst), {batch_dims} batch dims;{folded}",
        "//   A: rows x cols at row stride lda; B at row stride ldb; edge tiles masked. launch: a 1-D grid of",
        f"//   tiles_n * tiles_m * (batch sizes) CTAs, block = {threads}, dynamic shared = {forward.shared_bytes} bytes.",
        *_signature(name, threads, params, min_ctas),
        *OP_PROLOGUE,
        *tile_index_lines(m, n, batch_dims, fast=fast_divide, raster=raster),
        f"  const {t}* src = src_all + src_base + {src_tile};",
        f"  {t}* dst = dst_all + dst_base + {dst_tile};",
        f"  unsigned a[{pa.num_words}];",
        f"  unsigned b[{pb.num_words}];",
    ]
    body += _branches(
        emit_global_load_words(gsrc, w, pa, "a", "src", em, pitch=load_pitch),
        emit_global_load_words(gsrc, w, pa, "a", "src", em,
                               pitch=Pitch(_log2(n), "lda", ("rows_left", "cols_left"), load_fold)))
    body += ["  " + x for x in _scoped(forward.emit_words("a", "b", pa, pb, em, "smem", False))]
    body += _branches(
        emit_global_store_words(gdst, w, pb, "b", "dst", em, pitch=store_pitch),
        emit_global_store_words(gdst, w, pb, "b", "dst", em,
                                pitch=Pitch(store_pitch.column_bits, "ldb", store_bounds, store_fold)))
    body.append("}")
    return PermuteKernel(name, OP_PRELUDE + "\n".join(body) + "\n", threads, forward.shared_bytes, w, m, n,
                         src_vector, dst_vector, transposed, batch_dims, tuple(params), fold=fold)


def tiled_params(t: str, batch_dims: int) -> list[tuple[str, str]]:
    """``(C type, name)`` of a tiled kernel's parameters before its ``tile_divisors`` ones, elements of C type ``t``:
    the two pointers, ``rows``, ``cols``, the tile counts, the row strides and each batch dim's size and strides.
    ``tiled_params("unsigned short", 0)[2]`` is ``("unsigned", "rows")``."""
    return [(f"const {t}* __restrict__", "src_all"), (f"{t}* __restrict__", "dst_all"), ("unsigned", "rows"),
            ("unsigned", "cols"), ("unsigned", "tiles_n"), ("unsigned", "tiles_m"),
            ("unsigned long long", "lda"), ("unsigned long long", "ldb")] + _batch_params(batch_dims)


def _persistent(name, src, w, forward, transposed, batch_dims, ctas_per_sm, tile, maps, packings, vectors,
                store_bounds, em, target: Target, raster: str) -> PermuteKernel:
    """The persistent form of ``emit_tiled_permute_kernel`` (its doc) from the parts it planned."""
    m, n = tile
    gsrc, gdst = maps
    pa, pb = packings
    t = cpp_storage_type(w)
    threads = target.lanes * src.in_dim_size("warp", missing_ok=True)
    vtype, nvec = global_load_vectors(gsrc, w)
    params = tiled_params(t, batch_dims)
    total = " * ".join(["tiles_n", "tiles_m"] + [f"size{k}" for k in range(batch_dims)])

    def issue(prefix: str) -> list[str]:
        full, _ = emit_global_load_stages(gsrc, w, pa, "q", "a", f"{prefix}src", em, pitch=Pitch(_log2(n), "lda"))
        masked, _ = emit_global_load_stages(gsrc, w, pa, "q", "a", f"{prefix}src", em, pitch=Pitch(
            _log2(n), "lda", (f"{prefix}rows_left", f"{prefix}cols_left")))
        return [f"if ({prefix}full) {{"] + ["  " + x for x in full] + ["} else {"] + ["  " + x for x in masked] + ["}"]

    _, unpack = emit_global_load_stages(gsrc, w, pa, "q", "a", "src", em, pitch=Pitch(_log2(n), "lda"))
    store_pitch = Pitch(_log2(m) if transposed else _log2(n), "ldb")
    stores = _branches(emit_global_store_words(gdst, w, pb, "b", "dst", em, pitch=store_pitch),
                       emit_global_store_words(gdst, w, pb, "b", "dst", em,
                                               pitch=Pitch(store_pitch.column_bits, "ldb", store_bounds)))
    convert = _scoped(forward.emit_words("a", "b", pa, pb, em, "smem", True))
    kind = "B = A^T per tile" if transposed else "rows of A copied to rows of B"
    body = [
        f"// {name}: {kind}, {m}x{n} tiles of {8 * w}-bit elements (src -> dst), {batch_dims} batch dims; persistent:",
        "//   CTA b of G takes tiles b, b + G, ... of tiles_n * tiles_m * (batch sizes), the next tile's loads in flight",
        "//   during this tile's conversion and stores. A: rows x cols at row stride lda; B at row stride ldb; edge",
        f"//   tiles masked. launch: grid <= {ctas_per_sm} x SMs, block = {threads}, dynamic shared = "
        f"{forward.shared_bytes} bytes.",
        f'extern "C" __global__ void __launch_bounds__({threads}, {ctas_per_sm}) {name}(',
        f"    {', '.join(f'{ty} {p}' for ty, p in params)}) {{",
        *OP_PROLOGUE,
        f"  const unsigned total = {total};",
        "  unsigned tile = blockIdx.x;",
        "  if (tile >= total) return;",
        f"  unsigned a[{pa.num_words}];",
        f"  unsigned b[{pb.num_words}];",
        f"  {vtype} {', '.join(f'q{i}' for i in range(nvec))};",
        f"  const {t}* src; {t}* dst; unsigned rows_left, cols_left; bool full;",
        f"  const {t}* n_src; {t}* n_dst; unsigned n_rows_left, n_cols_left; bool n_full;",
        *_locate(m, n, batch_dims, "tile", "", transposed, raster),
        *["  " + x for x in issue("")],
        "  for (;;) {",
        *["    " + x for x in unpack],
        "    const unsigned next = tile + gridDim.x;",
        "    if (next < total) {",
        *["    " + x for x in _locate(m, n, batch_dims, "next", "n_", transposed, raster)],
        *["      " + x for x in issue("n_")],
        "    }",
        *["    " + x for x in convert],
        *["  " + x for x in stores],
        "    if (next >= total) break;",
        "    tile = next; src = n_src; dst = n_dst; rows_left = n_rows_left; cols_left = n_cols_left; full = n_full;",
        "  }",
        "}",
    ]
    return PermuteKernel(name, OP_PRELUDE + "\n".join(body) + "\n", threads, forward.shared_bytes, w, m, n,
                         vectors[0], vectors[1], transposed, batch_dims, tuple(params), ctas_per_sm)


#: Device (and, under ``LL_HOST``, emulator) functions of the cast-transpose: fp16 -> fp32, two fp32 ->
#: two fp8 in one 16-bit word (``lo`` in the low byte; PTX ``cvt.rn.satfinite``: round to nearest even,
#: saturated to the largest finite value, infinities too, NaN -> ``0x7f``), and an atomic max of a
#: non-negative float. ``LL_CUDA_ARCH`` is the architecture whose instructions the helpers may use:
#: ``__CUDA_ARCH__`` on the device, 0 on the host and under ``LL_PORTABLE`` (a test's switch to the
#: fallbacks). Below sm_89 (no fp8 ``cvt``) ``ll_fp8_bits`` converts by integer operations on the float's
#: bits, bit-identical to the instruction; the host emulation uses it too.
CAST_FUNCTIONS = r"""
#ifndef LL_CAST
#define LL_CAST
#if defined(LL_HOST) || defined(LL_PORTABLE) || !defined(__CUDA_ARCH__)
#define LL_CUDA_ARCH 0
#else
#define LL_CUDA_ARCH __CUDA_ARCH__
#endif
#ifdef LL_HOST
#include <cmath>
LL_DEV float __uint_as_float(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
LL_DEV int __float_as_int(float f) { int i; std::memcpy(&i, &f, 4); return i; }
LL_DEV unsigned __float_as_uint(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
LL_DEV float ll_f16_to_f32(unsigned h) {
  const unsigned s = (h >> 15) & 1u, e = (h >> 10) & 31u, m = h & 1023u;
  float v = e == 0u ? std::ldexp((float)m, -24) : e == 31u ? (m ? NAN : INFINITY) : std::ldexp((float)(m | 1024u), (int)e - 25);
  return s ? -v : v;
}
LL_DEV void ll_atomic_max_amax(float* p, float v) { int* q = reinterpret_cast<int*>(p); int x = __float_as_int(v), old = __atomic_load_n(q, __ATOMIC_SEQ_CST); while (old < x && !__atomic_compare_exchange_n(q, &old, x, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {} }
#else
LL_DEV float ll_f16_to_f32(unsigned h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"((unsigned short)h)); return f; }
LL_DEV void ll_atomic_max_amax(float* p, float v) { atomicMax(reinterpret_cast<int*>(p), __float_as_int(v)); }
#endif
// the fp8 bits of the float of bits u (M mantissa bits, exponent bias B; MAXF: the float bits of the largest
// finite value, MAXCODE its fp8 bits): round to nearest even, saturated, NaN -> 0x7f, the sign kept otherwise
template <unsigned M, unsigned B, unsigned MAXF, unsigned MAXCODE> LL_DEV unsigned ll_fp8_bits(unsigned u) {
  const unsigned sign = (u >> 24) & 0x80u, a = u & 0x7fffffffu, e = a >> 23;
  if (a > 0x7f800000u) return 0x7fu;
  if (a >= MAXF) return sign | MAXCODE;
  if (e >= 128u - B) {  // a normal fp8: drop 23 - M mantissa bits, rounding (a carry moves into the exponent)
    const unsigned s = 23u - M;
    return sign | (((a + (1u << (s - 1u)) - 1u + ((a >> s) & 1u)) >> s) - ((127u - B) << M));
  }
  if (e + B + M <= 126u) return sign;  // below half the least subnormal: zero
  const unsigned s = 151u - B - M - e, mant = (a & 0x7fffffu) | 0x800000u;  // units of 2^(1 - B - M)
  const unsigned q = mant >> s, rest = mant & ((1u << s) - 1u), half = 1u << (s - 1u);
  return sign | (q + (rest > half || (rest == half && (q & 1u))));
}
LL_DEV unsigned ll_fp8_e4m3(float f) { return ll_fp8_bits<3u, 7u, 0x43e00000u, 0x7eu>(__float_as_uint(f)); }
LL_DEV unsigned ll_fp8_e5m2(float f) { return ll_fp8_bits<2u, 15u, 0x47600000u, 0x7bu>(__float_as_uint(f)); }
#if LL_CUDA_ARCH >= 890
LL_DEV unsigned ll_cvt_e4m3x2(float lo, float hi) { unsigned short s; asm("cvt.rn.satfinite.e4m3x2.f32 %0, %2, %1;" : "=h"(s) : "f"(lo), "f"(hi)); return s; }
LL_DEV unsigned ll_cvt_e5m2x2(float lo, float hi) { unsigned short s; asm("cvt.rn.satfinite.e5m2x2.f32 %0, %2, %1;" : "=h"(s) : "f"(lo), "f"(hi)); return s; }
#else
LL_DEV unsigned ll_cvt_e4m3x2(float lo, float hi) { return ll_fp8_e4m3(lo) | (ll_fp8_e4m3(hi) << 8); }
LL_DEV unsigned ll_cvt_e5m2x2(float lo, float hi) { return ll_fp8_e5m2(lo) | (ll_fp8_e5m2(hi) << 8); }
#endif
#endif
"""


def check_cast_arguments(name: str, input_format: str, fp8: str) -> None:
    """LayoutError unless ``input_format`` is one of ``CAST_INPUTS``, ``fp8`` one of ``FP8_FORMATS`` and
    ``name`` a C identifier: what every cast-transpose emitter checks first."""
    if input_format not in CAST_INPUTS:
        raise LayoutError(f"input_format: must be one of {tuple(CAST_INPUTS)}, got {quote(input_format)}")
    if fp8 not in FP8_FORMATS:
        raise LayoutError(f"fp8: must be one of {FP8_FORMATS}, got {quote(fp8)}")
    if not name.isidentifier():
        raise LayoutError(f"name: {quote(name)} is not a C identifier")


def cast_params(input_type: str) -> list[tuple[str, str]]:
    """The parameters of every cast-transpose kernel (the tiled one here, ``realign``'s, ``cast_scalar``'s), in
    order, so that ``ops.launches`` launches any of them with one argument tuple: ``X`` of C type ``input_type``,
    ``C``, ``T``, the scale's address (or null) and value, the amax's address, the sizes and the tile counts."""
    return [(f"const {input_type}* __restrict__", "src_all"), ("unsigned char* __restrict__", "cast_all"),
            ("unsigned char* __restrict__", "trans_all"), ("const float* __restrict__", "scale_ptr"),
            ("float", "scale_value"), ("float* __restrict__", "amax_ptr"), ("unsigned", "rows"),
            ("unsigned", "cols"), ("unsigned", "tiles_n"), ("unsigned", "tiles_m")]


def fitting_ctas(threads: int, shared: int, registers: int, target: Target | None = None, at_most: int = 0) -> int:
    """CTAs of ``threads`` threads, ``shared`` bytes of shared memory and ``registers`` registers a thread that an SM
    of ``target`` holds (at least 1, at most 32 and, when given, ``at_most``). Example: 256 threads of 64 registers
    and 9 KiB on sm_90: 4."""
    t = resolve(target)
    fit = max(1, min(t.sm_threads // threads, t.sm_shared_bytes // (shared + t.cta_reserved_shared_bytes),
                     t.sm_registers // (threads * registers), 32))
    return min(fit, at_most) if at_most else fit


def to_float(fmt: str, expr: str) -> str:
    """C expression of the fp32 value of the input element in the low bits of ``expr`` (2-byte formats:
    only the low 16 bits are read). Example: ``to_float("bf16", "x")`` is ``__uint_as_float((x) << 16)``."""
    if fmt == "bf16":
        return f"__uint_as_float(({expr}) << 16)"
    if fmt == "fp16":
        return f"ll_f16_to_f32(({expr}) & 0xffffu)"
    return f"__uint_as_float({expr})"


def _cast_lines(fmt: str, fp8: str, pin: Packing, pout: Packing, x: str, a: str) -> list[str]:
    """Lines converting the input words ``x`` (``pin``) to fp8 words ``a`` (``pout``, 8-bit elements) and
    folding ``|x|`` into ``amax``: ``fp8(scale * x)``, two elements per ``cvt``."""
    wi = pin.element_bytes
    lines = []
    for r in range(pin.num_registers):
        word, pos = pin.word(r), pin.position(r)
        raw = f"{x}[{word}]" if wi == 4 or pos == 0 else f"({x}[{word}] >> 16)"
        lines.append(f"const float f{r} = {to_float(fmt, raw)};")
    lines += [f"amax = fmaxf(amax, fabsf(f{r}));" for r in range(pin.num_registers)]
    cvt = f"ll_cvt_{fp8}x2"
    for k in range(pout.num_words):
        regs = [pout.register(k, p) for p in range(pout.elements_per_word)]
        regs += [None] * (4 - len(regs))
        halves = []
        for lo, hi in ((regs[0], regs[1]), (regs[2], regs[3])):
            if lo is None:
                halves.append("0u")
                continue
            halves.append(f"{cvt}(f{lo} * scale, {'0.0f' if hi is None else f'f{hi} * scale'})")
        lines.append(f"{a}[{k}] = {halves[0]} | ({halves[1]} << 16);" if halves[1] != "0u"
                     else f"{a}[{k}] = {halves[0]};")
    return lines


@checked
def amax_epilogue(slot: int, warps: int, redux: bool = False) -> list[str]:
    """CUDA lines folding each thread's ``amax`` into ``*amax_ptr``: a warp maximum by ``shfl.xor`` (``redux``:
    by one ``ll_warp_max``, ``redux.sync``), one shared slot per warp at byte ``slot`` of ``smem``, then one atomic
    maximum by thread 0 (``amax >= 0``, so its bits order as unsigned ints). Example: ``amax_epilogue(4096, 8)``
    reads 8 slots from byte 4096."""
    warp_max = (["  amax = __uint_as_float(ll_warp_max(__float_as_uint(amax)));  // every lane: redux.sync takes the warp"]
                if redux else
                ["  #pragma unroll",
                 "  for (unsigned s = 16u; s; s >>= 1) amax = fmaxf(amax, __uint_as_float(__shfl_xor_sync(0xffffffffu, "
                 "__float_as_uint(amax), s)));"])
    return [
        "  // the CTA's amax: a warp maximum, one slot per warp, one atomic (amax >= 0: its bits order as ints)",
        *warp_max,
        f"  if (lane == 0u) ll_sts32(smem + {slot}u + 4u * warp, __float_as_uint(amax));",
        "  ll_bar_cta();",
        "  if (threadIdx.x == 0u) {",
        f"    for (unsigned k = 1u; k < {warps}u; ++k) amax = fmaxf(amax, __uint_as_float(ll_lds32(smem + {slot}u + 4u * k)));",
        "    if (amax_ptr != nullptr) ll_atomic_max_amax(amax_ptr, amax);",
        "  }",
    ]


def emit_cast_transpose_kernel(
    name: str, src: LinearLayout, dst: LinearLayout, input_format: str, fp8: str, forward: ConversionStep, *,
    raster: str = "n", max_elements: int = MAX_ELEMENTS, target: Target | None = None,
) -> PermuteKernel:
    """CUDA C++ of the fused cast-transpose of a ``rows x cols`` row-major matrix ``X`` of ``input_format``
    (``CAST_INPUTS``): ``C = fp8(scale X)`` (``rows x cols``), ``T = C^T`` (``cols x rows``) and
    ``amax = max(amax, max |X|)`` (of the input, before scaling; NaN ignored), with ``fp8`` one of
    ``FP8_FORMATS``; ``scale`` is read from ``scale_ptr`` when it is not null, else ``scale_value``.
    Each CTA loads its tile in ``src``, converts in registers, stores ``C`` from ``src`` (its vectors are
    the loads' elements: 8 bytes of fp8 per 16-byte bf16 load), converts the fp8 tile with ``forward``
    (an 8-bit step ``src -> dst``) and stores ``T`` from ``dst``; one atomic max per CTA. Edge tiles are
    masked as in ``emit_tiled_permute_kernel``; CTAs take tiles in order ``raster`` (``tile_index_lines``).

    Example: bf16 128x128 tiles, 16 elements per thread along a row of ``X`` (two 16-byte loads, one
    16-byte store of ``C``) and 16 along a row of ``T`` (one 16-byte store). ``target``: as
    ``emit_tiled_permute_kernel``'s."""
    target = cuda_target(target, forward)
    check_cast_arguments(name, input_format, fp8)
    check_layout_size(src, max_elements, "emit_cast_transpose_kernel: src")
    check_layout_size(dst, max_elements, "emit_cast_transpose_kernel: dst")
    wi = CAST_INPUTS[input_format]
    m, n = _tile_shape(src, dst)
    d0, d1 = src.out_dim_names
    ti = cpp_storage_type(wi)
    warps = src.in_dim_size("warp", missing_ok=True)
    threads = target.lanes * warps
    forward = _canonical(forward)
    gsrc = global_map(src, {d0: n, d1: 1})
    gdst = global_map(dst, {d0: 1, d1: m})
    pa, pb = choose_packings(src, dst, 1, forward)
    px = Packing.natural(wi, register_bits(src))
    em = Emission("t")
    slot = _align(forward.shared_bytes)  # one float per warp for the CTA's amax after the conversion's buffer
    shared = slot + 4 * warps
    src_vector = max(global_vector_elements(gsrc, wi), global_vector_elements(gsrc, 1))
    params = cast_params(ti)
    a_bounds, t_bounds = ("rows_left", "cols_left"), ("cols_left", "rows_left")
    body = [
        f"// {name}: C = fp8 {fp8}(scale X), T = C^T, amax = max(amax, max |X|); X rows x cols {input_format},",
        f"//   row-major, by {m}x{n} tiles (edge tiles masked). launch: a 1-D grid of tiles_n * tiles_m CTAs,",
        f"//   block = {threads}, dynamic shared = {shared} bytes.",
        *_signature(name, threads, params),
        *OP_PROLOGUE,
        *tile_index_lines(m, n, 0, raster=raster, batch_bases=False),
        "  const float scale = scale_ptr != nullptr ? *scale_ptr : scale_value;",
        f"  const {ti}* src = src_all + (size_t)row0 * cols + col0;",
        "  unsigned char* cast = cast_all + (size_t)row0 * cols + col0;",
        "  unsigned char* trans = trans_all + (size_t)col0 * rows + row0;",
        f"  unsigned x[{px.num_words}];",
        f"  unsigned a[{pa.num_words}];",
        f"  unsigned b[{pb.num_words}];",
        "  float amax = 0.0f;",
    ]
    body += _branches(emit_global_load_words(gsrc, wi, px, "x", "src", em, pitch=Pitch(_log2(n), "cols")),
                      emit_global_load_words(gsrc, wi, px, "x", "src", em, pitch=Pitch(_log2(n), "cols", a_bounds)))
    body += ["  " + x for x in _scoped(_cast_lines(input_format, fp8, px, pa, "x", "a"))]
    body += _branches(emit_global_store_words(gsrc, 1, pa, "a", "cast", em, pitch=Pitch(_log2(n), "cols")),
                      emit_global_store_words(gsrc, 1, pa, "a", "cast", em, pitch=Pitch(_log2(n), "cols", a_bounds)))
    body += ["  " + x for x in _scoped(forward.emit_words("a", "b", pa, pb, em, "smem", False))]
    body += _branches(emit_global_store_words(gdst, 1, pb, "b", "trans", em, pitch=Pitch(_log2(m), "rows")),
                      emit_global_store_words(gdst, 1, pb, "b", "trans", em, pitch=Pitch(_log2(m), "rows", t_bounds)))
    body += amax_epilogue(slot, warps) + ["}"]
    source = OP_PRELUDE + CAST_FUNCTIONS + "\n".join(body) + "\n"
    return PermuteKernel(name, source, threads, shared, wi, m, n, src_vector, global_vector_elements(gdst, 1), True,
                         0, tuple(params))
