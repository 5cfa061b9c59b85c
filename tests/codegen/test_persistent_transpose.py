"""Persistent, software-pipelined transposes (``emit_persistent_transpose_kernel``): the emulated
kernel (its own tile loop and addressing, run on the CPU) computes ``A^T`` on every element for
grids that leave CTAs with unequal numbers of tiles, and nvcc compiles exactly the planned
instructions: the next tile's 16-byte global loads issued inside the loop, 16-byte shared
accesses on both sides, one 4x4 byte transpose (8 prmt) per vector, no local memory; the L2
prefetch size changes only the loads; cp.async transposes (``emit_async_transpose_kernel``) likewise,
and the suite's own same-size copy copies every vector."""

from __future__ import annotations


import pytest

from linear_layouts.codegen.emulate import emulate_transpose, find_cxx
from linear_layouts.codegen.transpose import emit_persistent_transpose_kernel
from linear_layouts.codegen.plan import conversion_step
from linear_layouts.codegen.ptx import compile_cubin, compile_ptx, count_ptx, count_sass, find_cuobjdump, find_nvcc
from linear_layouts.core.errors import LayoutError

needs_cxx = pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
needs_nvcc = pytest.mark.skipif(find_nvcc() is None, reason="nvcc is not installed")


def _layouts(element_bytes: int, **kw):
    from harness.transposes import transpose_wide_block_layouts  # noqa: PLC0415

    return transpose_wide_block_layouts(element_bytes, **kw)


def _kernel(element_bytes: int, matrix: tuple[int, int], warps: int, tile: tuple[int, int] = (256, 256),
            ctas_per_sm: int = 1, cache_hints: bool = False, group_rows: int = 1, l2_prefetch_bytes: int = 0):
    src, dst = _layouts(element_bytes, warps=warps, rows=tile[0], cols=tile[1])
    step = conversion_step(src, dst, 8 * element_bytes)
    name = (f"ptr{element_bytes}_{matrix[0]}_{matrix[1]}_{'h' if cache_hints else ''}{warps}_g{group_rows}"
            f"_p{l2_prefetch_bytes}")
    return emit_persistent_transpose_kernel(name, src, dst, element_bytes, step, *matrix, ctas_per_sm=ctas_per_sm,
                                            cache_hints=cache_hints, group_rows=group_rows,
                                            l2_prefetch_bytes=l2_prefetch_bytes)


def test_grid_is_the_resident_slots_or_the_tiles():
    k = _kernel(1, (512, 256), 8, (128, 128), ctas_per_sm=4)
    assert (k.persistent, k.tiles, k.tile_rows, k.tile_cols) == (True, 8, 128, 128)
    assert k.grid(1) == (4,) and k.grid(132) == (8,)
    # 5 slots for 8 tiles: 3 CTAs of 2 tiles and 2 of 1, or balanced 4 CTAs of 2
    assert k.grid(5, ctas_per_sm=1) == (5,) and k.grid(5, balanced=True, ctas_per_sm=1) == (4,)
    assert k.grid(3, balanced=True, ctas_per_sm=1) == (3,)  # 3 + 3 + 2: no fewer CTAs do it in 3 rounds
    with pytest.raises(LayoutError, match="do not fit one SM"):
        _kernel(1, (512, 512), 16, ctas_per_sm=4)  # 4 x 64 KiB of shared memory


@needs_cxx
@pytest.mark.parametrize("ctas", [1, 3, 8])
def test_8bit_persistent_transpose_every_element(ctas):
    """4 x 2 tiles of 128 x 128 (rows != cols): 3 CTAs take 3, 3 and 2 tiles."""
    assert emulate_transpose(_kernel(1, (512, 256), 8, (128, 128), ctas_per_sm=4), seed=ctas, ctas=ctas)


@needs_cxx
@pytest.mark.parametrize("group_rows", [2, 4])
def test_grouped_tile_order_every_element(group_rows):
    """8 x 2 tiles of 64 x 128 in groups of 2 or 4 tile rows (down the columns of tiles in a group),
    3 CTAs: 6, 5 and 5 tiles."""
    k = _kernel(1, (512, 256), 4, (64, 128), ctas_per_sm=4, group_rows=group_rows)
    assert emulate_transpose(k, seed=group_rows, ctas=3)
    with pytest.raises(LayoutError, match="group_rows: must be a power of two dividing the 8 tile rows"):
        _kernel(1, (512, 256), 4, (64, 128), group_rows=16)


@needs_cxx
def test_grouped_one_tile_transpose_every_element():
    """CTA (x, y) of the 2 x 8 grid takes tile 2y + x in groups of 4 tile rows."""
    from linear_layouts.codegen.transpose import emit_transpose_kernel  # noqa: PLC0415

    src, dst = _layouts(1, warps=4, rows=64, cols=128)
    k = emit_transpose_kernel("tr8g4", src, dst, 1, conversion_step(src, dst, 8), 512, 256, group_rows=4)
    assert "const unsigned tile = blockIdx.y * 2u + blockIdx.x;" in k.source
    assert emulate_transpose(k, seed=4)


@needs_cxx
def test_16bit_and_hinted_persistent_transposes_every_element():
    assert emulate_transpose(_kernel(2, (256, 512), 16, (128, 128), ctas_per_sm=2), ctas=3)
    hinted = _kernel(1, (512, 512), 16, cache_hints=True)
    assert "ll_ldg128_na" in hinted.source and "ll_stg128_cs" in hinted.source
    assert emulate_transpose(hinted, seed=1, ctas=3)
    with pytest.raises(LayoutError, match="persistent grid needs 1 to 4 CTAs"):
        emulate_transpose(hinted, ctas=5)


@needs_nvcc
@pytest.mark.parametrize("warps, hints", [(16, False), (32, True)])
def test_persistent_transpose_instructions(warps, hints):
    """256 x 256 tiles of 8-bit elements: per thread ``v = 4096 / (32 warps)`` 16-byte vectors per
    tile; the loads appear twice (before the loop and, for the next tile, inside it)."""
    k = _kernel(1, (8192, 8192), warps, cache_hints=hints)
    v = 4096 // (32 * warps)
    ptx = compile_ptx(k.source)
    counts = count_ptx(ptx)
    assert counts["st.shared.v4.b32"] == counts["ld.shared.v4.b32"] == v
    assert counts["prmt.b32"] == 8 * v
    if hints:
        assert ptx.count("ld.global.nc.L1::no_allocate.v4.b32") == 2 * v and counts["st.global.cs.v4.b32"] == v
    else:
        assert counts["ld.global.nc.v4.u32"] == 2 * v and counts["st.global.v4.b32"] == v
    if find_cuobjdump() is None:
        return
    sass = count_sass(compile_cubin(k.source), ("LDG", "STG", "LDS", "STS", "LDL", "STL", "PRMT"))
    ldg, stg = ("LDG.E.NA.128.CONSTANT", "STG.E.EF.128") if hints else ("LDG.E.128.CONSTANT", "STG.E.128")
    assert sass[ldg] == 2 * v and sass[stg] == v and sass["STS.128"] == sass["LDS.128"] == v
    assert sass["PRMT"] == 8 * v
    assert not any(op.startswith(("LDL", "STL")) for op in sass)  # no spills to local memory


@needs_nvcc
def test_cache_hints_on_the_one_tile_transpose():
    """``emit_transpose_kernel(cache_hints=True)``: the same kernel with hinted 16-byte accesses."""
    from linear_layouts.codegen.transpose import emit_transpose_kernel  # noqa: PLC0415

    src, dst = _layouts(1, warps=16)
    step = conversion_step(src, dst, 8)
    plain = emit_transpose_kernel("tr8p", src, dst, 1, step, 8192, 8192)
    hinted = emit_transpose_kernel("tr8h", src, dst, 1, step, 8192, 8192, cache_hints=True)
    assert "ll_ldg128_na" not in plain.source
    ptx = compile_ptx(hinted.source)
    assert ptx.count("ld.global.nc.L1::no_allocate.v4.b32") == 8 and count_ptx(ptx)["st.global.cs.v4.b32"] == 8
    assert count_ptx(compile_ptx(plain.source))["st.global.v4.b32"] == 8


@needs_nvcc
def test_every_new_suite_transpose_compiles_to_its_plan():
    """Each persistent, hinted or grouped transpose of the GPU suite (at 512^2): nvcc's PTX has the plan's
    shared instructions, one 16-byte global store per 16 bytes of the thread's tile, and each
    16-byte load twice in the persistent kernels (before the loop, and the next tile's in it)."""
    from harness.transposes import ONE_TILE_OPTIONS, transpose_kernels  # noqa: PLC0415

    new = [(w, tag, step, k) for w, tag, step, k in transpose_kernels(512)
           if (k.persistent or tag in ONE_TILE_OPTIONS) and not tag.startswith("async")]  # cp.async: below
    assert len(new) == 24  # 20, and the 32-bit (3) and 16-bit (1) persistent candidates of issue 29
    for w, tag, step, k in new:
        ptx = compile_ptx(k.source)
        counts = count_ptx(ptx)
        assert {op: counts[op] for op in step.instruction_counts()} == step.instruction_counts(), tag
        vectors = k.tile_rows * k.tile_cols * w // (16 * k.threads)
        stores = counts["st.global.cs.v4.b32"] + counts["st.global.v4.b32"]
        loads = ptx.count("ld.global.nc.L1::no_allocate.v4.b32") + counts["ld.global.nc.v4.u32"]
        prefetching = ptx.count("ld.global.nc.L2::256B.v4.u32")
        assert prefetching == (2 * vectors if tag.endswith("_l2p256") else 0), tag
        assert (stores, loads + prefetching) == (vectors, vectors * (2 if k.persistent else 1)), tag


def test_l2_prefetch_bytes_is_checked():
    with pytest.raises(LayoutError, match=r"l2_prefetch_bytes: must be 0 \(none\) or one of \(64, 128, 256\)"):
        _kernel(1, (512, 512), 8, (128, 128), l2_prefetch_bytes=512)
    with pytest.raises(LayoutError, match="l2_prefetch_bytes"):
        _kernel(1, (512, 512), 8, (128, 128), l2_prefetch_bytes=True)
    from linear_layouts.codegen.global_memory import emit_global_load_stages  # noqa: PLC0415
    from linear_layouts.codegen.hardware_map import global_map  # noqa: PLC0415
    from linear_layouts.codegen.packing import Packing  # noqa: PLC0415

    src, _ = _layouts(1, warps=8, rows=128, cols=128)
    hmap = global_map(src, {"dim0": 128, "dim1": 1})
    packing = Packing.natural(1, hmap.num_registers.bit_length() - 1)
    issue, _ = emit_global_load_stages(hmap, 1, packing, "q", l2_prefetch_bytes=128)
    assert any("ll_ldg128_l2p128<" in line for line in issue)
    with pytest.raises(LayoutError, match="l2_prefetch_bytes: .* got 32"):
        emit_global_load_stages(hmap, 1, packing, "q", l2_prefetch_bytes=32)


@needs_cxx
@pytest.mark.parametrize("l2_prefetch_bytes, hints", [(256, False), (64, True)])
def test_l2_prefetch_transpose_every_element(l2_prefetch_bytes, hints):
    """The prefetching loads (their host form, with the immediate byte offset as a template argument)
    read the same elements: ``A^T`` on every element, 3 CTAs over 8 tiles."""
    k = _kernel(1, (512, 256), 8, (128, 128), ctas_per_sm=4, cache_hints=hints, l2_prefetch_bytes=l2_prefetch_bytes)
    fn = f"ll_ldg128_{'na_' if hints else ''}l2p{l2_prefetch_bytes}"
    assert f"{fn}<0x" in k.source and "ll_ldg128_na(" not in k.source.split("__global__")[1]
    assert emulate_transpose(k, seed=l2_prefetch_bytes, ctas=3)


@needs_nvcc
@pytest.mark.parametrize("warps, l2_prefetch_bytes", [(32, 256), (16, 256), (32, 128)])
def test_l2_prefetch_changes_only_the_loads(warps, l2_prefetch_bytes):
    """``l2_prefetch_bytes``: every 16-byte load (twice per vector: before the loop and in it) is
    ``ld.global.nc.L2::<N>B.v4.u32`` / SASS ``LDG.E.LTC<N>B.128.CONSTANT``, with the same immediate
    offsets; every other instruction family keeps its count (the kernel without the hint)."""
    v = 4096 // (32 * warps)
    k = _kernel(1, (8192, 8192), warps, l2_prefetch_bytes=l2_prefetch_bytes)
    ptx = compile_ptx(k.source)
    assert ptx.count(f"ld.global.nc.L2::{l2_prefetch_bytes}B.v4.u32") == 2 * v
    assert count_ptx(ptx)["ld.global.nc.v4.u32"] == 0
    if find_cuobjdump() is None:
        return
    prefixes = ("LDG", "STG", "LDS", "STS", "LDL", "STL", "PRMT", "IADD", "LOP3", "BAR", "BRA")
    sass = count_sass(compile_cubin(k.source), prefixes)
    plain = count_sass(compile_cubin(_kernel(1, (8192, 8192), warps).source), prefixes)
    assert sass.pop(f"LDG.E.LTC{l2_prefetch_bytes}B.128.CONSTANT") == plain.pop("LDG.E.128.CONSTANT") == 2 * v
    assert {op: n for op, n in sass.items() if not op.startswith("LOP3")} == {
        op: n for op, n in plain.items() if not op.startswith("LOP3")}


@needs_cxx
@pytest.mark.parametrize("ctas, group_rows", [(1, 1), (3, 1), (5, 2), (16, 1)])
def test_dynamic_tile_counter_every_element(ctas, group_rows):
    """Tiles drawn from a counter after each CTA's first three: the emulator runs CTAs one after the
    other (the first takes every drawn tile: the most uneven schedule), launches twice on one
    counter (the second output is checked) and fails unless the last CTA reset the counter."""
    k = emit_persistent_transpose_kernel("ptd", *_layouts(1, warps=4, rows=64, cols=128),
                                         1, conversion_step(*_layouts(1, warps=4, rows=64, cols=128), 8), 512, 512,
                                         ctas_per_sm=4, group_rows=group_rows, dynamic=True)
    assert (k.dynamic, k.tiles, k.shared_bytes) == (True, 32, 64 * 128 + 16)
    assert emulate_transpose(k, seed=ctas, ctas=ctas)


@needs_cxx
def test_same_size_copy_peer_copies_every_vector(tmp_path):
    """The suite's own same-size copy (``harness.transposes.SAME_SIZE_COPY_SOURCE``), run serially on the CPU
    (no barriers: thread order is free) over 3 CTAs of 4 threads and 61 vectors (the unrolled loop
    and the remainder loop both run): every vector copied once, nothing written past the end."""
    import subprocess  # noqa: PLC0415

    from linear_layouts.codegen.intrinsics import HOST_PRELUDE  # noqa: PLC0415

    from harness.transposes import SAME_SIZE_COPY_SOURCE  # noqa: PLC0415

    main = r"""
int main() {
  const unsigned long long n = 61;
  std::vector<uint4> src(n + 1), dst(n + 1, uint4{0u, 0u, 0u, 0u});
  for (unsigned i = 0; i <= n; ++i) src[i] = uint4{i, 7u * i + 1u, ~i, 0x5a5a0000u ^ i};
  gridDim.x = 3; blockDim.x = 4;
  for (blockIdx.x = 0; blockIdx.x < gridDim.x; ++blockIdx.x)
    for (threadIdx.x = 0; threadIdx.x < blockDim.x; ++threadIdx.x) ll_same_size_copy(src.data(), dst.data(), n);
  for (unsigned i = 0; i < n; ++i)
    if (std::memcmp(&src[i], &dst[i], 16)) return 1;
  return dst[n].x | dst[n].y | dst[n].z | dst[n].w ? 2 : 0;
}
"""
    source = HOST_PRELUDE + "static ll_dim3 blockDim;\n" + SAME_SIZE_COPY_SOURCE + main
    (tmp_path / "copy.cpp").write_text(source)
    subprocess.run([find_cxx(), "-std=c++20", "-O1", "-o", str(tmp_path / "copy"), str(tmp_path / "copy.cpp")],
                   check=True, capture_output=True)
    assert subprocess.run([str(tmp_path / "copy")]).returncode == 0


def _async_kernel(matrix: tuple[int, int], warps: int, tile: tuple[int, int], stages: int = 3, ctas_per_sm: int = 1,
                  l2_prefetch_bytes: int = 0):
    from harness.transposes import transpose_async_layouts  # noqa: PLC0415
    from linear_layouts.codegen.transpose import emit_async_transpose_kernel  # noqa: PLC0415

    src, dst = transpose_async_layouts(1, warps=warps, rows=tile[0], cols=tile[1])
    return emit_async_transpose_kernel(f"acp_{matrix[0]}_{matrix[1]}_{warps}_{stages}_{l2_prefetch_bytes}", src, dst,
                                       1, conversion_step(src, dst, 8), *matrix, stages=stages,
                                       ctas_per_sm=ctas_per_sm, l2_prefetch_bytes=l2_prefetch_bytes)


@needs_cxx
@pytest.mark.parametrize("stages, ctas, l2_prefetch_bytes", [(3, 1, 0), (3, 3, 0), (2, 3, 256), (4, 8, 0)])
def test_async_transpose_every_element(stages, ctas, l2_prefetch_bytes):
    """cp.async transposes (copies done at once on the host, so this checks the addressing, the stage
    rotation and the tile loop): 4 x 2 tiles of 128 x 128, 2 warps, ``A^T`` on every element."""
    k = _async_kernel((512, 256), 2, (128, 128), stages=stages, ctas_per_sm=1, l2_prefetch_bytes=l2_prefetch_bytes)
    assert (k.persistent, k.shared_bytes, k.tiles) == (True, stages * 128 * 128, 8)
    copy = "ll_cp_async16" + (f"_l2p{l2_prefetch_bytes}" if l2_prefetch_bytes else "")
    copies = [line for line in k.source.splitlines() if line.strip().startswith((copy + "(", copy + "<"))]
    assert len(copies) == 2 * 128 * 128 // (16 * k.threads)  # ahead of the loop, in it
    assert emulate_transpose(k, seed=stages, ctas=ctas)


def test_async_transpose_refuses_what_cp_async_cannot_copy():
    """The wide-block plan byte-transposes each loaded vector before its shared store: no cp.async."""
    from linear_layouts.codegen.transpose import emit_async_transpose_kernel  # noqa: PLC0415

    src, dst = _layouts(1, warps=8, rows=128, cols=128)
    with pytest.raises(LayoutError, match="permuted between the load and the store"):
        emit_async_transpose_kernel("bad", src, dst, 1, conversion_step(src, dst, 8), 512, 512)
    with pytest.raises(LayoutError, match="stages: cp.async pipelining needs at least 2 buffers, got 1"):
        _async_kernel((512, 512), 2, (128, 128), stages=1)
    with pytest.raises(LayoutError, match="l2_prefetch_bytes: must be 0"):
        _async_kernel((512, 512), 2, (128, 128), l2_prefetch_bytes=100)
    with pytest.raises(LayoutError, match="stages/ctas_per_sm: 1 CTAs of 256 threads and 262144 shared bytes"):
        _async_kernel((512, 512), 8, (256, 256), stages=4)


@needs_nvcc
def test_async_suite_transposes_compile_to_cp_async():
    """The suite's cp.async transposes at 8192^2: 16 LDGSTS.128 per tile (issued for 2 tiles before
    the loop, one in it: 48 in the code; `_l2p256`: .L2::256B, LDGSTS...LTC256B), no LDG and no STS; the plan's 16 ld.shared.v4, 128 PRMT
    (the 4x4 byte transposes, after the shared load) and 16 STG.128; no local memory."""
    from harness.transposes import transpose_kernels  # noqa: PLC0415

    kernels = [(tag, step, k) for w, tag, step, k in transpose_kernels(8192) if tag.startswith("async") and w == 1]
    assert [tag for tag, *_ in kernels] == ["async256x8w_s3", "async256x8w_s3_l2p256", "async128x256x4w_s3"]
    for tag, step, k in kernels:
        ptx = compile_ptx(k.source)
        assert count_ptx(ptx)["ld.shared.v4.b32"] == step.instruction_counts()["ld.shared.v4.b32"] == 16, tag
        assert "st.shared" not in ptx.split(".entry")[1], tag
        op = "cp.async.cg.shared.global" + (".L2::256B" if tag.endswith("_l2p256") else "") + " "
        assert ptx.count(op) == 48, tag  # 16 per tile: 2 tiles before the loop (unrolled), 1 in it
        if find_cuobjdump() is None:
            continue
        sass = count_sass(compile_cubin(k.source), ("LDGSTS", "LDG", "STG", "LDS", "STS", "LDL", "STL", "PRMT"))
        ldgsts = "LDGSTS.E.BYPASS" + (".LTC256B" if tag.endswith("_l2p256") else "") + ".128"
        assert sass[ldgsts] == 48 and sass["LDS.128"] == 16 and sass["STG.E.128"] == 16, tag
        assert sass["PRMT"] == 128, tag
        assert not any(op.startswith(("LDL", "STL", "STS")) or op.startswith("LDG.") for op in sass), tag
