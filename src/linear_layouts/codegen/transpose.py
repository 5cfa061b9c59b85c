"""Matrix transposes ``B = A^T`` by tiles, each tile a planned conversion ``src -> dst``.

``A`` is ``rows x cols`` row-major (both powers of two, whole tiles); CTA ``(x, y)`` loads tile ``(y, x)``
of ``A`` in layout ``src``, converts it (a ``kernel.ConversionStep``: shared memory, shuffles or
registers) to ``dst`` and stores it at tile ``(x, y)`` of ``B``, so ``dst`` should run along the tile's
columns.  Three forms: ``emit_transpose_kernel`` (one tile per CTA), ``emit_persistent_transpose_kernel``
(CTAs loop over tiles, the next tile's loads in flight) and ``emit_async_transpose_kernel`` (the same with
``cp.async`` global -> shared copies into several buffers); each with ``pdl=True`` takes part in
programmatic dependent launch (``runtime.launch_programmatic``).  Tensors of any shape (edge tiles,
batches, runtime strides) are ``codegen.permute``'s. Each takes the ``target`` it is for (default: the
default target, ``kernel.cuda_target``): its lanes, its SM's threads and shared memory (the persistent
kernels' occupancy), its ISA (``cp.async`` from sm_80, programmatic dependent launch from sm_90).

Example: 8-bit 256x256 tiles of an 8192^2 matrix, ``emit_transpose_kernel("t", src, dst, 1, step, 8192,
8192)``: a ``TransposeKernel`` launched on a ``(32, 32)`` grid of ``32 * warps`` threads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from linear_layouts.analysis.steps import SharedInstruction
from linear_layouts.core.arguments import checked
from linear_layouts.codegen.conversion import SharedConversion, zero_register_mask
from linear_layouts.codegen.elements import check_element_bytes, cpp_storage_type
from linear_layouts.codegen.global_memory import (
    check_l2_prefetch_bytes, emit_global_load_stages, emit_global_load_words, emit_global_store_words,
    global_load_vectors, global_vector_elements,
)
from linear_layouts.codegen.hardware_map import global_map
from linear_layouts.codegen.index import IndexExpression
from linear_layouts.codegen.intrinsics import (
    ASYNC_COPY_FUNCTIONS, DEPENDENT_LAUNCH_FUNCTIONS, DEPENDENT_LAUNCH_PROLOGUE, DEVICE_PRELUDE, KERNEL_PROLOGUE,
    STREAMING_FUNCTIONS, async_copy_function, prefetch_functions,
)
from linear_layouts.codegen.kernel import ConversionStep, _align, _canonical, _scoped, choose_packings, cuda_target
from linear_layouts.codegen.packing import Emission
from linear_layouts.codegen.shared import access_addresses, combine, emit_shared_load
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import MAX_ELEMENTS, check_layout_size
from linear_layouts.target import CP_ASYNC, Target

__all__ = ["TransposeKernel", "emit_transpose_kernel", "emit_persistent_transpose_kernel",
           "emit_async_transpose_kernel"]


def _prelude(cache_hints: bool, l2_prefetch_bytes: int, pdl: bool = False) -> str:
    """``DEVICE_PRELUDE`` and the hinted accesses and grid-dependency controls a transpose uses (only
    those: every other kernel's source, hence its cached cubin, stays as it was)."""
    return (DEVICE_PRELUDE + (STREAMING_FUNCTIONS if cache_hints else "")
            + (prefetch_functions(l2_prefetch_bytes) if l2_prefetch_bytes else "")
            + (DEPENDENT_LAUNCH_FUNCTIONS if pdl else ""))


def _pdl_lines(pdl: bool) -> tuple[str, ...]:
    """The grid-dependency lines after ``KERNEL_PROLOGUE`` of a transpose emitted with ``pdl``."""
    return DEPENDENT_LAUNCH_PROLOGUE if pdl else ()


@dataclass(frozen=True)
class TransposeKernel:
    """A matrix transpose ``B = A^T`` (``A``: ``rows x cols`` row-major) by tiles: CTA ``(x, y)`` loads
    tile ``(y, x)`` of ``A`` in ``src``, converts to ``dst`` and stores it at tile ``(x, y)`` of ``B``.
    Launch ``grid(sms)`` CTAs of ``threads`` threads: a ``(cols / tile_cols, rows / tile_rows)`` grid,
    or, ``persistent``, ``ctas_per_sm`` CTAs per SM, each looping over tiles."""

    name: str
    source: str
    threads: int
    shared_bytes: int
    rows: int
    cols: int
    tile_rows: int
    tile_cols: int
    element_bytes: int
    persistent: bool = False
    ctas_per_sm: int = 1
    dynamic: bool = False  # persistent, tiles drawn from a counter: a third argument, 2 zeroed words
    pdl: bool = False  # takes part in programmatic dependent launch (``runtime.launch_programmatic``)

    @property
    def tiles(self) -> int:
        """Number of tiles of ``A``."""
        return (self.rows // self.tile_rows) * (self.cols // self.tile_cols)

    def grid(self, sms: int, balanced: bool = False, ctas_per_sm: int = 0) -> tuple[int, ...]:
        """The launch grid on a device of ``sms`` SMs: one CTA per tile, or (persistent) one per
        resident CTA slot, ``S = min(tiles, sms * ctas_per_sm)`` (default: the kernel's); ``balanced``:
        ``tiles / ceil(tiles / S)`` rounded up, so every CTA takes the same number of tiles but the
        last (e.g. 1024 tiles, 132 slots: 128 CTAs of 8 tiles, not 100 of 8 and 32 of 7)."""
        if self.persistent:
            slots = max(1, min(self.tiles, sms * (ctas_per_sm or self.ctas_per_sm)))
            if balanced:
                rounds = -(-self.tiles // slots)
                slots = -(-self.tiles // rounds)
            return (slots,)
        return (self.cols // self.tile_cols, self.rows // self.tile_rows)


def _tile_order(group_rows: int, tile_rows: int, tiles_x: int) -> tuple[Callable[[str], str], Callable[[str], str]]:
    """C expressions ``(row(t), col(t))`` of tile number ``t``: row-major (``group_rows`` 1), or by
    groups of ``group_rows`` tile rows, down the tile columns of a group:
    ``t = g group_rows T_x + j group_rows + i`` is tile ``(g group_rows + i, j)``."""
    if group_rows < 1 or group_rows & (group_rows - 1) or tile_rows % group_rows:
        raise LayoutError(f"group_rows: must be a power of two dividing the {tile_rows} tile rows, got {group_rows}")
    sx, sg = tiles_x.bit_length() - 1, group_rows.bit_length() - 1
    if group_rows == 1:
        return (lambda v: f"({v} >> {sx}u)"), (lambda v: f"({v} & {tiles_x - 1}u)")
    return ((lambda v: f"((({v} >> {sg + sx}u) << {sg}u) | ({v} & {group_rows - 1}u))"),
            (lambda v: f"(({v} >> {sg}u) & {tiles_x - 1}u)"))


@checked
def emit_transpose_kernel(
    name: str, src: LinearLayout, dst: LinearLayout, element_bytes: int, forward: ConversionStep,
    rows: int, cols: int, *, cache_hints: bool = False, group_rows: int = 1, l2_prefetch_bytes: int = 0,
    pdl: bool = False, max_elements: int = MAX_ELEMENTS, target: Target | None = None,
) -> TransposeKernel:
    """CUDA C++ of a tiled transpose through ``forward`` (``src -> dst`` over one ``M x N`` tile):
    element ``(m, n)`` of tile ``(i, j)`` is read at ``A[(iM + m) cols + jN + n]`` and written at
    ``B[(jN + n) rows + iM + m]``, so ``dst`` should be contiguous along ``dim0``. ``cache_hints``:
    16-byte loads ``ld.global.nc.L1::no_allocate``, 16-byte stores ``st.global.cs``. ``group_rows``
    > 1: CTA ``(x, y)`` takes tile number ``y cols / N + x`` in ``_tile_order``'s grouped order (the
    CTAs resident at once then span fewer columns of ``A``, more of ``B``). ``l2_prefetch_bytes``
    (0: none, 64, 128 or 256): 16-byte loads ``ld.global.nc.L2::<N>B`` (each also has L2 fetch the
    aligned N-byte block around it; SASS ``LDG.E.LTC<N>B``). ``pdl``: the kernel takes part in programmatic
    dependent launch (``intrinsics.DEPENDENT_LAUNCH_PROLOGUE``: it waits for the previous grid's memory
    before its first access, then lets the next grid be scheduled; launch it with
    ``runtime.launch_programmatic`` so that back-to-back launches overlap their launch latency; launched
    the ordinary way it runs as without). Layouts above ``max_elements`` inputs or elements
    (``limits.MAX_ELEMENTS``) are refused; ``target``: module doc."""
    target = cuda_target(target, forward, pdl=pdl)
    w = check_element_bytes(element_bytes)
    check_l2_prefetch_bytes(l2_prefetch_bytes)
    check_layout_size(src, max_elements, "emit_transpose_kernel: src")
    check_layout_size(dst, max_elements, "emit_transpose_kernel: dst")
    if src.num_out_dims != 2 or dict(src.out_dims) != dict(dst.out_dims):
        raise LayoutError("src/dst: a transpose needs two equal 2-D tile shapes")
    m, n = (src.out_dim_size(d) for d in src.out_dim_names)
    for value, label in ((rows, "rows"), (cols, "cols")):
        if value <= 0 or value & (value - 1):
            raise LayoutError(f"{label}: must be a power of two, got {value}")
    if rows % m or cols % n:
        raise LayoutError(f"rows/cols: {rows}x{cols} is not a whole number of {m}x{n} tiles")
    d0, d1 = src.out_dim_names
    t = cpp_storage_type(w)
    threads = target.lanes * src.in_dim_size("warp", missing_ok=True)
    body = [
        f'extern "C" __global__ void __launch_bounds__({threads}) {name}(',
        f"    const {t}* __restrict__ src_all, {t}* __restrict__ dst_all) {{",
        *KERNEL_PROLOGUE,
        *_pdl_lines(pdl),
    ]
    row, col = ("blockIdx.y", "blockIdx.x")
    if group_rows != 1:
        tile_row, tile_col = _tile_order(group_rows, rows // m, cols // n)
        body.append(f"  const unsigned tile = blockIdx.y * {cols // n}u + blockIdx.x;")
        row, col = tile_row("tile"), tile_col("tile")
    body += [
        f"  const {t}* src = src_all + (size_t){row} * {m * cols}u + (size_t){col} * {n}u;",
        f"  {t}* dst = dst_all + (size_t){col} * {n * rows}u + (size_t){row} * {m}u;",
    ]
    forward = _canonical(forward)
    pa, pb = choose_packings(src, dst, w, forward)
    em = Emission("t")
    body += [f"  unsigned a[{pa.num_words}];", f"  unsigned b[{pb.num_words}];"]
    load_hint, store_hint = ("na", "cs") if cache_hints else ("", "")
    body += ["  " + x for x in emit_global_load_words(global_map(src, {d0: cols, d1: 1}), w, pa, "a", "src", em,
                                                      load_hint, l2_prefetch_bytes)]
    body += ["  " + x for x in _scoped(forward.emit_words("a", "b", pa, pb, em, "smem", False))]
    body += ["  " + x for x in emit_global_store_words(global_map(dst, {d0: 1, d1: rows}), w, pb, "b", "dst", em,
                                                       store_hint)]
    body.append("}")
    prelude = _prelude(cache_hints, l2_prefetch_bytes, pdl)
    return TransposeKernel(name, prelude + "\n".join(body) + "\n", threads, forward.shared_bytes,
                           rows, cols, m, n, w, pdl=pdl)


def _check_fits_sm(what: str, ctas_per_sm: int, threads: int, shared: int, target: Target) -> None:
    """LayoutError naming ``what`` unless ``ctas_per_sm`` CTAs of ``threads`` threads and ``shared`` bytes of
    shared memory each (plus the target's reserved shared memory per CTA) are resident on one SM together."""
    reserved = target.cta_reserved_shared_bytes
    if (ctas_per_sm < 1 or ctas_per_sm * threads > target.sm_threads
            or ctas_per_sm * (shared + reserved) > target.sm_shared_bytes):
        raise LayoutError(f"{what}: {ctas_per_sm} CTAs of {threads} threads and {shared} shared bytes do not fit "
                          f"one SM ({target.sm_threads} threads, {target.sm_shared_bytes} shared bytes, "
                          f"{reserved} reserved per CTA)")


@checked
def emit_persistent_transpose_kernel(
    name: str, src: LinearLayout, dst: LinearLayout, element_bytes: int, forward: ConversionStep,
    rows: int, cols: int, *, ctas_per_sm: int = 1, cache_hints: bool = False, group_rows: int = 1,
    dynamic: bool = False, l2_prefetch_bytes: int = 0, pdl: bool = False, max_elements: int = MAX_ELEMENTS,
    target: Target | None = None,
) -> TransposeKernel:
    """``emit_transpose_kernel``'s transpose as a persistent, software-pipelined kernel: CTA ``b`` of a
    grid of ``G`` handles tiles ``t = b, b + G, ...`` (tile row ``t / (cols / N)``, column
    ``t mod (cols / N)``); the global loads of its next tile are issued before the shared round trip
    and global stores of the current one, so they are in flight meanwhile (the loaded vectors wait
    in registers, byte-permuted into packed words when the next iteration stores them).
    ``ctas_per_sm``: CTAs resident per SM (``__launch_bounds__``' minimum, ``grid``'s count);
    ``cache_hints``: 16-byte loads ``ld.global.nc.L1::no_allocate``, stores ``st.global.cs``.
    ``group_rows``: tile numbers in ``_tile_order``'s grouped order (the tiles in flight at once
    then span fewer columns of ``A`` and more of ``B``). ``dynamic``: after its first three tiles
    (``b``, ``b + G``, ``b + 2G``) a CTA draws tile numbers from a counter, ``3G + atomicAdd(sched,
    1)``, two iterations ahead (thread 0 publishes the previous draw in one of two shared slots, read
    by all after the round trip's barriers), so CTAs that finish early take more tiles; a CTA's
    tiles increase, so it stops at the first ``>= T`` losing none; the last CTA to finish resets
    ``sched[0..1]`` (the third argument; zero it once) for the next launch. ``l2_prefetch_bytes`` (0:
    none, 64, 128 or 256): the 16-byte loads carry ``.L2::<N>B`` (``ld.global.nc.L2::256B.v4.u32``,
    SASS ``LDG.E.LTC256B.128.CONSTANT``): L2 fetches the aligned N-byte block of each load's sector.
    ``pdl``: programmatic dependent launch, as in ``emit_transpose_kernel``.

    Example: 8-bit 256x256 tiles of an 8192^2 matrix, 16 warps, 1 CTA per SM: ``.grid(132)`` is
    ``(132,)`` (1024 tiles: 100 CTAs take 8, 32 take 7), ``.grid(132, balanced=True)`` ``(128,)``."""
    w = check_element_bytes(element_bytes)
    target = cuda_target(target, forward, pdl=pdl)
    base = emit_transpose_kernel(name, src, dst, w, forward, rows, cols, l2_prefetch_bytes=l2_prefetch_bytes,
                                 max_elements=max_elements, target=target)
    threads, m, n = base.threads, base.tile_rows, base.tile_cols
    forward = _canonical(forward)
    slot = _align(forward.shared_bytes)  # dynamic: two words for the tile draws after the conversion's buffer
    shared = slot + 16 if dynamic else forward.shared_bytes
    _check_fits_sm("ctas_per_sm", ctas_per_sm, threads, shared, target)
    d0, d1 = src.out_dim_names
    t = cpp_storage_type(w)
    tiles_x, tiles = cols // n, (rows // m) * (cols // n)
    tile_row, tile_col = _tile_order(group_rows, rows // m, tiles_x)
    gsrc, gdst = global_map(src, {d0: cols, d1: 1}), global_map(dst, {d0: 1, d1: rows})
    pa, pb = choose_packings(src, dst, w, forward)
    em = Emission("t")
    vtype, nvec = global_load_vectors(gsrc, w)
    issue, unpack = emit_global_load_stages(gsrc, w, pa, "q", "a", "src", em, "na" if cache_hints else "",
                                            l2_prefetch_bytes)

    def a_tile(var: str) -> str:
        return f"src_all + (size_t){tile_row(var)} * {m * cols}u + (size_t){tile_col(var)} * {n}u"

    store = emit_global_store_words(gdst, w, pb, "b", "dst", em, "cs" if cache_hints else "")
    convert = _scoped(forward.emit_words("a", "b", pa, pb, em, "smem", True))
    dst_tile = f"dst_all + (size_t){tile_col('tile')} * {n * rows}u + (size_t){tile_row('tile')} * {m}u"
    if dynamic:
        return _dynamic_transpose(name, w, rows, cols, m, n, threads, ctas_per_sm, shared, slot, tiles,
                                  pa.num_words, pb.num_words, (vtype, nvec), issue, unpack, convert, store,
                                  a_tile, dst_tile, _prelude(cache_hints, l2_prefetch_bytes, pdl), pdl)
    body = [
        f"// {name}: B = A^T, A {rows}x{cols} row-major, by {m}x{n} tiles of {8 * w}-bit elements (src -> dst),",
        f"//   persistent: CTA b of gridDim.x handles tiles t = b, b + gridDim.x, ... < {tiles} (tile t: row",
        f"//   {tile_row('t')}, column {tile_col('t')}); the next tile's loads are in flight during this tile's shared round trip",
        f"//   and stores. launch: grid <= {ctas_per_sm} x SMs, block = {threads}, dynamic shared = {forward.shared_bytes} bytes.",
        f'extern "C" __global__ void __launch_bounds__({threads}, {ctas_per_sm}) {name}(',
        f"    const {t}* __restrict__ src_all, {t}* __restrict__ dst_all) {{",
        *KERNEL_PROLOGUE,
        *_pdl_lines(pdl),
        f"  unsigned a[{pa.num_words}];",
        f"  unsigned b[{pb.num_words}];",
        f"  {vtype} {', '.join(f'q{i}' for i in range(nvec))};",
        "  unsigned tile = blockIdx.x;",
        f"  if (tile >= {tiles}u) return;",
        "  {",
        f"    const {t}* src = {a_tile('tile')};",
        *["    " + x for x in issue],
        "  }",
        "  for (;;) {",
        *["    " + x for x in unpack],
        "    const unsigned next = tile + gridDim.x;",
        f"    if (next < {tiles}u) {{",
        f"      const {t}* src = {a_tile('next')};",
        *["      " + x for x in issue],
        "    }",
        *["    " + x for x in convert],
        "    {",
        f"      {t}* dst = {dst_tile};",
        *["      " + x for x in store],
        "    }",
        f"    if (next >= {tiles}u) break;",
        "    tile = next;",
        "  }",
        "}",
    ]
    prelude = _prelude(cache_hints, l2_prefetch_bytes, pdl)
    return TransposeKernel(name, prelude + "\n".join(body) + "\n", threads, forward.shared_bytes, rows, cols, m, n, w,
                           persistent=True, ctas_per_sm=ctas_per_sm, pdl=pdl)


def _dynamic_transpose(name, w, rows, cols, m, n, threads, ctas_per_sm, shared, slot, tiles, words_a, words_b,
                       vectors, issue, unpack, convert, store, a_tile, dst_tile, prelude, pdl) -> TransposeKernel:
    """The ``dynamic`` form of ``emit_persistent_transpose_kernel`` from its emitted parts."""
    t = cpp_storage_type(w)
    vtype, nvec = vectors
    body = [
        f"// {name}: B = A^T, A {rows}x{cols} row-major, by {m}x{n} tiles of {8 * w}-bit elements (src -> dst),",
        f"//   persistent, dynamic: CTA b takes tiles b, b + G, b + 2G (G = gridDim.x), then 3G + atomicAdd(sched, 1)",
        f"//   until >= {tiles}, drawn two iterations ahead (thread 0 publishes the previous draw through a shared",
        "//   slot, so no one waits for the atomic); the next tile's loads are in flight during this tile's shared",
        "//   round trip and stores; the last CTA to finish resets sched[0..1] (zero them once before the first launch).",
        f"//   launch: grid <= {ctas_per_sm} x SMs, block = {threads}, dynamic shared = {shared} bytes.",
        f'extern "C" __global__ void __launch_bounds__({threads}, {ctas_per_sm}) {name}(',
        f"    const {t}* __restrict__ src_all, {t}* __restrict__ dst_all, unsigned* __restrict__ sched) {{",
        *KERNEL_PROLOGUE,
        *_pdl_lines(pdl),
        f"  unsigned a[{words_a}];",
        f"  unsigned b[{words_b}];",
        f"  {vtype} {', '.join(f'q{i}' for i in range(nvec))};",
        "  unsigned tile = blockIdx.x, next = tile + gridDim.x, pending = tile + 2u * gridDim.x;",
        f"  if (tile < {tiles}u) {{",
        "    {",
        f"      const {t}* src = {a_tile('tile')};",
        *["      " + x for x in issue],
        "    }",
        "    for (unsigned parity = 0u;; parity ^= 4u) {",
        "      if (threadIdx.x == 0u) {  // publish the previous draw, draw again (used two iterations on)",
        f"        ll_sts32(smem + {slot}u + parity, pending);",
        "        pending = 3u * gridDim.x + atomicAdd(sched, 1u);",
        "      }",
        *["      " + x for x in unpack],
        f"      if (next < {tiles}u) {{",
        f"        const {t}* src = {a_tile('next')};",
        *["        " + x for x in issue],
        "      }",
        *["      " + x for x in convert],
        f"      const unsigned after = ll_lds32(smem + {slot}u + parity);  // written before both barriers",
        "      {",
        f"        {t}* dst = {dst_tile};",
        *["        " + x for x in store],
        "      }",
        f"      if (next >= {tiles}u) break;  // a CTA's tiles increase: every later one is >= {tiles} too",
        "      tile = next;",
        "      next = after;",
        "    }",
        "  }",
        "  if (threadIdx.x == 0u) {  // the last CTA out: every draw is done; reset for the next launch",
        "    __threadfence();",
        "    if (atomicAdd(sched + 1, 1u) == gridDim.x - 1u) { sched[0] = 0u; sched[1] = 0u; }",
        "  }",
        "}",
    ]
    return TransposeKernel(name, prelude + "\n".join(body) + "\n", threads, shared, rows, cols, m, n, w,
                           persistent=True, ctas_per_sm=ctas_per_sm, dynamic=True, pdl=pdl)


def _async_copies(gsrc, forward: SharedConversion, w: int) -> list[tuple[IndexExpression, IndexExpression]]:
    """``(global element offset, shared element offset)`` of each 16-byte ``cp.async`` that replaces
    ``forward``'s shared store: every store instruction must move exactly one 16-byte global vector of
    ``src`` (its registers in memory order, no permutes), each register once."""
    v = 16 // w
    store = forward.store
    if global_vector_elements(gsrc, w) != v or store.kind is not SharedInstruction.VECTOR or store.width != v:
        raise LayoutError(f"forward: cp.async needs 16-byte global loads and 16-byte shared stores of src "
                          f"(got {global_vector_elements(gsrc, w) * w}-byte loads, {store.description} stores)")
    if gsrc.free_register or gsrc.free_lane or gsrc.free_warp:
        raise LayoutError("src: cp.async copies each element once: src must hold no duplicated elements")
    smap = store.apply(forward.store_map)
    copies, seen = [], set()
    for r, sexpr in access_addresses(forward.store_map, w, store, True):
        regs = [smap.register_index(r + j) for j in range(v)]
        if regs[0] % v or regs != list(range(regs[0], regs[0] + v)):
            raise LayoutError("forward: a shared store vector is not one global vector of src in memory order "
                              "(its bytes are permuted between the load and the store): cp.async cannot replace it")
        seen.add(regs[0])
        copies.append((gsrc.address(regs[0]), sexpr))
    if seen != set(range(0, gsrc.num_registers, v)):  # pragma: no cover - by construction of the step
        raise LayoutError("forward: the shared stores do not cover every register of src")
    return copies


@checked
def emit_async_transpose_kernel(
    name: str, src: LinearLayout, dst: LinearLayout, element_bytes: int, forward: ConversionStep,
    rows: int, cols: int, *, stages: int = 3, ctas_per_sm: int = 1, l2_prefetch_bytes: int = 0,
    pdl: bool = False, max_elements: int = MAX_ELEMENTS, target: Target | None = None,
) -> TransposeKernel:
    """``emit_persistent_transpose_kernel``'s transpose with ``cp.async`` and ``stages`` shared buffers:
    the plan's global load and shared store of ``src`` become one ``cp.async.cg.shared.global`` of 16
    bytes per vector (global -> shared, no registers), ``stages - 1`` tiles ahead; then, per tile,
    ``cp.async.wait_group stages-2``, one ``bar.sync``, the plan's shared load of ``dst`` (with its
    byte permutes) and the global stores.  The buffer a tile's copies fill was last read one
    iteration earlier, before this iteration's barrier, so one barrier per tile suffices.
    ``l2_prefetch_bytes`` (0: none, 64, 128 or 256): the copies carry ``.L2::<N>B``. ``pdl``: programmatic
    dependent launch, as in ``emit_transpose_kernel``.

    Requires: ``forward`` a shared-memory step whose store moves each 16-byte global vector of ``src``
    unchanged (``src`` holds 16 consecutive bytes of a row of ``A`` per vector and the step stores them
    as they are: byte transposes, if any, after the shared load), no padding, no duplicated elements;
    ``stages >= 2``; ``ctas_per_sm`` CTAs of ``stages`` buffers fit one SM.
    Returns: a persistent ``TransposeKernel`` (``shared_bytes`` = ``stages`` aligned buffers).

    Example: 8-bit 256x256 tiles, 16 rows x 16 columns per thread on the dst side (8 warps), 3
    stages: 3 x 64 KiB of shared memory, 16 cp.async, 16 ld.shared.v4 and 128 prmt per tile."""
    w = check_element_bytes(element_bytes)
    target = cuda_target(target, forward, pdl=pdl)
    if not target.has(CP_ASYNC):
        raise LayoutError(f"target: cp.async needs sm_80, not {target.arch}")
    base = emit_transpose_kernel(name, src, dst, w, forward, rows, cols, max_elements=max_elements, target=target)
    threads, m, n = base.threads, base.tile_rows, base.tile_cols
    copy = async_copy_function(check_l2_prefetch_bytes(l2_prefetch_bytes))
    forward = _canonical(forward)
    if not isinstance(forward, SharedConversion) or forward.padding:
        raise LayoutError("forward: cp.async needs an unpadded shared-memory conversion step")
    if stages < 2:
        raise LayoutError(f"stages: cp.async pipelining needs at least 2 buffers, got {stages}")
    buffer = _align(forward.shared_bytes)
    shared = stages * buffer
    _check_fits_sm("stages/ctas_per_sm", ctas_per_sm, threads, shared, target)
    d0, d1 = src.out_dim_names
    t = cpp_storage_type(w)
    shift = w.bit_length() - 1
    tiles = (rows // m) * (cols // n)
    tile_row, tile_col = _tile_order(1, rows // m, cols // n)
    gsrc, gdst = global_map(src, {d0: cols, d1: 1}), global_map(dst, {d0: 1, d1: rows})
    copies = _async_copies(gsrc, forward, w)
    _, pb = choose_packings(src, dst, w, forward)
    em = Emission("t")
    goff = gsrc.address(0).to_cuda()
    soff = IndexExpression(0, copies[0][1].terms).to_cuda()

    def issue(tile: str, stage: str) -> list[str]:
        lines = [f"const {t}* src = src_all + (size_t){tile_row(tile)} * {m * cols}u + (size_t){tile_col(tile)} * {n}u;",
                 f"const unsigned stage_base = smem + ({stage}) * {buffer}u;"]
        for g, sh in copies:
            saddr = combine(sh.constant, sh.runtime_bits, "soff")
            saddr = f"({saddr} << {shift}u)" if shift else saddr
            if g.constant and not g.constant & g.runtime_bits:  # the load's immediate byte offset
                lines.append(f"{copy}<{g.constant * w:#x}u>(stage_base + {saddr}, src + goff);")
            else:
                lines.append(f"{copy}(stage_base + {saddr}, src + {combine(g.constant, g.runtime_bits, 'goff')});")
        return lines

    load = emit_shared_load(forward.load_map, w, forward.load, pb, "b", "stage_base", None, em, zero_register_mask(dst))
    store = emit_global_store_words(gdst, w, pb, "b", "dst", em)
    dst_tile = f"dst_all + (size_t){tile_col('tile')} * {n * rows}u + (size_t){tile_row('tile')} * {m}u"
    body = [
        f"// {name}: B = A^T, A {rows}x{cols} row-major, by {m}x{n} tiles of {8 * w}-bit elements (src -> dst),",
        f"//   persistent, cp.async with {stages} shared buffers: tile t's 16-byte copies (global -> shared) are",
        f"//   issued {stages - 1} tiles ahead; per tile: wait, barrier, shared loads (+ byte permutes), global stores.",
        f"//   launch: grid <= {ctas_per_sm} x SMs, block = {threads}, dynamic shared = {shared} bytes.",
        f'extern "C" __global__ void __launch_bounds__({threads}, {ctas_per_sm}) {name}(',
        f"    const {t}* __restrict__ src_all, {t}* __restrict__ dst_all) {{",
        *KERNEL_PROLOGUE,
        *_pdl_lines(pdl),
        f"  const unsigned goff = {goff};  // src's lane/warp part (elements of A)",
        f"  const unsigned soff = {soff};  // the shared store's lane/warp part (elements)",
        f"  unsigned b[{pb.num_words}];",
        f"  for (unsigned s = 0u; s < {stages - 1}u; ++s) {{",
        "    const unsigned ahead = blockIdx.x + s * gridDim.x;",
        f"    if (ahead < {tiles}u) {{",
        *["      " + x for x in issue("ahead", "s")],
        "    }",
        "    ll_cp_async_commit();",
        "  }",
        "  unsigned stage = 0u;",
        f"  for (unsigned tile = blockIdx.x; tile < {tiles}u; tile += gridDim.x) {{",
        f"    ll_cp_async_wait<{stages - 2}>();  // this thread's copies of `tile` have landed",
        "    ll_bar_cta();  // everyone's have; everyone has read the buffer the copies below refill",
        "    {",
        f"      const unsigned ahead = tile + {stages - 1}u * gridDim.x;",
        f"      if (ahead < {tiles}u) {{",
        *["        " + x for x in issue("ahead", f"stage == 0u ? {stages - 1}u : stage - 1u")],
        "      }",
        "      ll_cp_async_commit();",
        "    }",
        "    {",
        f"      const unsigned stage_base = smem + stage * {buffer}u;",
        *["      " + x for x in load],
        "    }",
        "    {",
        f"      {t}* dst = {dst_tile};",
        *["      " + x for x in store],
        "    }",
        f"    stage = stage + 1u == {stages}u ? 0u : stage + 1u;",
        "  }",
        "}",
    ]
    return TransposeKernel(name, DEVICE_PRELUDE + ASYNC_COPY_FUNCTIONS + (DEPENDENT_LAUNCH_FUNCTIONS if pdl else "")
                           + "\n".join(body) + "\n", threads, shared, rows, cols, m, n, w, persistent=True,
                           ctas_per_sm=ctas_per_sm, pdl=pdl)
