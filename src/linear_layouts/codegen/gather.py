"""Warp-local gather kernels (paper §5.5): ``out[y] = src[y with y[axis] = index[y]]`` by warp shuffles,
from an ``analysis.gather.GatherPlan``; and the shared-memory gather it replaces (the baseline).

Shuffles: for output register ``r`` the index value ``k`` names a source lane
``(lane & lane_keep_mask) | bits of k`` and a register selector (``GatherPlan.source``), both XORs of
masked bits of ``k`` (``index_expression`` style).  Round ``(r, send, select)``: every lane sends
register ``send``, reads from its source lane, and keeps the value when its selector equals ``select``.
Sub-word elements (``GatherPlan.elements_per_shuffle`` > 1): the registers of consecutive selectors
travel packed in one word (``pk<base>``, packed once per gather), the reader keeps the word of its
selector group and takes its element out with one ``prmt``: half the ``shfl`` for 16-bit elements.

Shared memory: store ``src`` row-major (each element once), barrier, read ``src[y with y[axis] = k]``.

One CTA gathers one tile: ``src`` and ``index`` tiles of the same shape, row-major, at
``blockIdx.x * tile`` in their arrays; ``index`` is int32.  With ``iterations > 0`` the kernel
gathers ``1 + iterations`` times, each time from the previous result XOR 1 (a gather loop: the
gather's own cost, without global memory).

Example: ``emit_gather_kernel("g", plan)`` for a 32x64 fp32 tile with lanes along the axis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from linear_layouts.codegen.elements import check_element_bytes, cpp_storage_type
from linear_layouts.codegen.global_memory import emit_global_load, emit_global_store
from linear_layouts.codegen.hardware_map import global_map, guard_redundant_threads
from linear_layouts.codegen.index import IndexExpression, xor_terms
from linear_layouts.codegen.index import row_major_strides
from linear_layouts.codegen.intrinsics import DEVICE_PRELUDE, KERNEL_PROLOGUE
from linear_layouts.core.errors import LayoutError
from linear_layouts.codegen.kernel import cuda_target
from linear_layouts.target import Target

__all__ = ["GatherKernel", "emit_gather_kernel"]


@dataclass(frozen=True)
class GatherKernel:
    """CUDA C++ ``source`` of ``extern "C"`` kernel ``name(src, index, out)``; one tile per CTA."""

    name: str
    source: str
    threads: int
    shared_bytes: int
    tile_elements: int
    element_bytes: int
    shuffles: int  # shfl.sync per thread (0 for the shared-memory gather)


def emit_gather_kernel(name: str, plan: Any, *, shared_memory: bool = False,
                       target: Target | None = None) -> GatherKernel:
    """The gather of ``plan`` (``analysis.gather.plan_gather``) by shuffles, or through shared memory
    (``shared_memory=True``, also the only way when the plan is not warp-local), for ``target`` (an
    NVIDIA one, default the default target: ``kernel.cuda_target``)."""
    target = cuda_target(target)
    src, index, axis = plan.src, plan.index, plan.axis
    w = check_element_bytes(plan.bitwidth // 8)
    if dict(src.out_dims) != dict(index.out_dims):
        raise LayoutError("plan: codegen gathers tiles whose src and index shapes are equal")
    if not shared_memory and not plan.warp_local:
        raise LayoutError("plan: not warp-local; use shared_memory=True")
    if src.in_dim_size("warp", missing_ok=True) != index.in_dim_size("warp", missing_ok=True):
        raise LayoutError("plan: src and index need the same number of warps")
    t = cpp_storage_type(w)
    tile = src.total_out_dim_size
    n_src, n_idx = src.in_dim_size("register", missing_ok=True), index.in_dim_size("register", missing_ok=True)
    threads = target.lanes * src.in_dim_size("warp", missing_ok=True)
    axis_name = src.out_dim_names[axis]
    strides = row_major_strides(src.out_dims)
    axis_shift = strides[axis_name].bit_length() - 1
    axis_mask = (src.out_dim_size(axis_name) - 1) << axis_shift
    body = [
        f'extern "C" __global__ void __launch_bounds__({threads}) {name}(',
        f"    const {t}* __restrict__ src_all, const int* __restrict__ index_all, {t}* __restrict__ out_all,",
        "    int iterations) {",
        *KERNEL_PROLOGUE,
        f"  const {t}* src = src_all + (size_t)blockIdx.x * {tile}u;",
        f"  const int* index = index_all + (size_t)blockIdx.x * {tile}u;",
        f"  {t}* out = out_all + (size_t)blockIdx.x * {tile}u;",
        f"  {t} a[{n_src}];",
        f"  int k[{n_idx}];",
        f"  {t} b[{n_idx}];",
    ]
    body += ["  " + x for x in emit_global_load(global_map(src), w, "a", "src")]
    body += ["  " + x for x in emit_global_load(global_map(index), 4, "k", "index")]
    if n_src != n_idx:
        raise LayoutError("plan: codegen gathers through one layout for src and index")
    body.append("  #pragma unroll 1\n  for (int it = 0; it <= iterations; ++it) {")
    body.append(f"  if (it) {{\n    #pragma unroll\n    for (int r = 0; r < {n_src}; ++r) a[r] = b[r] ^ ({t})1;\n  }}")
    shuffles = 0
    if shared_memory:
        # store src once (row-major, each element once), then each output register reads its source
        from linear_layouts.layouts.shared import row_major_shared  # noqa: PLC0415
        from linear_layouts.codegen.hardware_map import shared_map  # noqa: PLC0415

        hmap = shared_map(src, row_major_shared(list(src.out_dims.values())))
        shift = w.bit_length() - 1
        stores = []
        for r in range(n_src):
            if r & hmap.free_register:
                continue
            off = hmap.address(r).to_cuda()
            if w == 8:
                stores.append(f"ll_sts64(smem + ({off} << 3), (unsigned)a[{r}], (unsigned)(a[{r}] >> 32));")
            else:
                stores.append(f"ll_sts{8 * w}(smem + ({off} << {shift}), (unsigned)a[{r}]);")
        body += ["  " + x for x in guard_redundant_threads(hmap, stores)]
        body.append("  __syncthreads();")
        g = global_map(index)
        body.append("  {")
        body.append(f"    const unsigned thread_offset = {g.address(0).to_cuda()};")
        for r in range(n_idx):
            c = g.address(r).constant
            y = f"(thread_offset ^ {c:#x}u)" if c else "thread_offset"
            off = f"(({y} & {~axis_mask & 0xFFFFFFFF:#x}u) | ((unsigned)k[{r}] << {axis_shift}))"
            addr = f"smem + ({off} << {w.bit_length() - 1})"
            if w == 8:
                body.append(f"    {{ unsigned lo, hi; ll_lds64({addr}, lo, hi); b[{r}] = ((({t})hi) << 32) | lo; }}")
            else:
                body.append(f"    b[{r}] = ({t})ll_lds{8 * w}({addr});")
        body.append("  }")
        shared_bytes = tile * w
    else:
        lane_images = [1 << lb if lb >= 0 else 0 for lb in plan.index_lane_bits]
        select_images = [1 << rb if rb >= 0 else 0 for rb in plan.index_register_bits]
        lane_expr = IndexExpression(0, tuple(xor_terms("kk", lane_images)))
        select_expr = IndexExpression(0, tuple(xor_terms("kk", select_images)))
        rounds_by_output: dict[int, list[Any]] = {}
        for rnd in plan.rounds:
            rounds_by_output.setdefault(rnd.output_register, []).append(rnd)
        words = max(1, w // 4)
        per = plan.elements_per_shuffle
        packed = _packed_words(plan.rounds, per, w) if per > 1 else {}
        for r in range(n_idx):
            for rnd in rounds_by_output.get(r, []):  # each packed word just before its first reader
                if rnd.select % per == 0 and rnd.send_register in packed:
                    body.append("  " + packed.pop(rnd.send_register))
            body.append("  {")
            body.append(f"    const unsigned kk = (unsigned)k[{r}];")
            body.append(f"    const unsigned from = (lane & {plan.lane_keep_mask:#x}u) | {lane_expr.to_cuda()};")
            body.append(f"    const unsigned select = {select_expr.to_cuda()};")
            mine = rounds_by_output.get(r, [])
            if per > 1:
                body += ["    " + x for x in _packed_rounds(mine, per, w, t, r)]
                shuffles += len(mine) // per
                body.append("  }")
                continue
            for rnd in mine:
                if w == 8:
                    body.append(
                        f"    {{ const unsigned lo = __shfl_sync(0xffffffffu, (unsigned)a[{rnd.send_register}], from);"
                        f" const unsigned hi = __shfl_sync(0xffffffffu, (unsigned)(a[{rnd.send_register}] >> 32), from);"
                        f" if (select == {rnd.select}u) b[{r}] = ((({t})hi) << 32) | lo; }}"
                    )
                else:
                    body.append(
                        f"    {{ const unsigned v = __shfl_sync(0xffffffffu, (unsigned)a[{rnd.send_register}], from);"
                        f" if (select == {rnd.select}u) b[{r}] = ({t})v; }}"
                    )
                shuffles += words
            body.append("  }")
        shared_bytes = 0
    if shared_memory:
        body.append("  __syncthreads();")  # the next iteration's stores overwrite what was read
    body.append("  }")
    body += ["  " + x for x in emit_global_store(global_map(index), w, "b", "out")]
    body.append("}")
    return GatherKernel(name, DEVICE_PRELUDE + "\n".join(body) + "\n", threads, shared_bytes, tile, w, shuffles)


def _packed_words(rounds, per: int, w: int) -> dict[int, str]:
    """``pk<base>`` by ``base``: the ``per`` sub-word source registers ``base | c`` (``c`` < ``per`` in
    the low selector bits) of a round group in one 32-bit word, element ``c`` at byte ``c * w``."""
    by_select = {(rnd.output_register, rnd.select): rnd.send_register for rnd in rounds}
    lines: dict[int, str] = {}
    for rnd in rounds:
        if rnd.select % per or rnd.send_register in lines:
            continue
        regs = [by_select[(rnd.output_register, rnd.select + c)] for c in range(per)]
        parts = [f"(unsigned)a[{regs[0]}]"] + [f"((unsigned)a[{x}] << {8 * w * c})" for c, x in enumerate(regs) if c]
        lines[regs[0]] = f"const unsigned pk{regs[0]} = {' | '.join(parts)};"
    return lines


def _packed_rounds(rounds, per: int, w: int, t: str, r: int) -> list[str]:
    """One ``shfl`` per round group of output register ``r``: the reader keeps the word of its group
    (``select / per``) and takes its element (``select % per``) out with one byte permute."""
    groups = [rnd for rnd in rounds if rnd.select % per == 0]
    lines = []
    if len(groups) == 1:
        lines.append(f"const unsigned wv = __shfl_sync(0xffffffffu, pk{groups[0].send_register}, from);")
    else:
        lines.append("unsigned wv = 0u;")
        for rnd in groups:
            lines.append(f"{{ const unsigned v = __shfl_sync(0xffffffffu, pk{rnd.send_register}, from);"
                         f" if (select / {per}u == {rnd.select // per}u) wv = v; }}")
    step, low = (0x22, 0x10) if w == 2 else (1, 0)  # byte selector of element e: e * step + low
    lines.append(f"b[{r}] = ({t})__byte_perm(wv, 0u, (select % {per}u) * {step:#x}u + {low:#x}u);")
    return lines
