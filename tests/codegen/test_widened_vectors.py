"""Shared-memory plans whose one side's vector is widened past the common one by its own registers
(``swizzle.optimal_swizzle(..., extend_vectors=True)``, taken by ``plan_shared_memory`` where it costs
less shared-pipe time), and 8-bit transposes whose 4x4 byte blocks are transposed
in registers by ``prmt`` so both shared accesses are 16-byte vectors: the emulated kernels move every
element, the emitted instructions' wavefronts equal the plan's and the bank simulator's, and nvcc
compiles exactly the planned instructions."""

from __future__ import annotations


import pytest

from linear_layouts import LinearLayout
from linear_layouts.analysis import swizzle
from linear_layouts.analysis.bank_simulator import simulate_wavefronts
from linear_layouts.analysis.conversion import plan_conversion
from linear_layouts.analysis.steps import SharedInstruction
from linear_layouts.codegen.conversion import SharedConversion
from linear_layouts.codegen.emulate import emulate_check, emulate_transpose, find_cxx
from linear_layouts.codegen.kernel import emit_conversion_kernel
from linear_layouts.codegen.transpose import emit_transpose_kernel
from linear_layouts.codegen.model import emitted_wavefronts
from linear_layouts.codegen.plan import conversion_step
from linear_layouts.codegen.ptx import compile_ptx, count_ptx, find_nvcc

needs_cxx = pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")
needs_nvcc = pytest.mark.skipif(find_nvcc() is None, reason="nvcc is not installed")

# GPU-suite pair random_029 (32-bit, 8 warps): src's lanes 0..2 hold copies (Triton's free lanes), no
# register direction is common to both sides, so the paper's vector V is empty.
SRC = LinearLayout({"register": [[0, 16], [0, 4], [1, 0], [8, 0], [0, 8]],
                    "lane": [[0, 0], [0, 0], [0, 0], [0, 2], [0, 1]],
                    "warp": [[2, 0], [4, 0], [0, 32]]}, [("dim0", 16), ("dim1", 64)])
DST = LinearLayout({"register": [[0, 1], [4, 0]],
                    "lane": [[2, 0], [0, 32], [0, 16], [0, 2], [1, 0]],
                    "warp": [[8, 0], [0, 8], [0, 4]]}, [("dim0", 16), ("dim1", 64)])


def _bank_simulator(plan, src, dst, bits: int = 32) -> tuple[int, int]:
    """(store, load) wavefronts of the plan's shared layout, lane by lane (duplicates do not store)."""
    shared = plan.shared_layout
    return (simulate_wavefronts(shared, src, bits, op="store", skip_duplicates=True),
            simulate_wavefronts(shared, dst, bits, op="load"))


def test_widened_vectors_where_they_save_shared_pipe_time():
    assert swizzle.optimal_swizzle(SRC, DST, 32).vector_bits == 32  # V is empty: one element
    fwd, bwd = plan_conversion(SRC, DST, "fp32"), plan_conversion(DST, SRC, "fp32")
    # backward: 16-byte loads where every lane asks for lane l^1's address (2 phases of 16 lanes):
    # 128 wavefronts, against 256 through the paper's layout with 32-bit loads
    assert (bwd.load.instruction, bwd.load.width, bwd.load.instructions, bwd.load.wavefronts) == (
        SharedInstruction.VECTOR, 4, 64, 128)
    paper = swizzle.optimal_swizzle(DST, SRC, 32)
    assert paper.load_wavefronts == 256 and paper.load_vector_bits == 32
    # forward: widening the store (16-byte vectors by the 4 lanes of 32 that hold distinct data) keeps
    # its 256 wavefronts in 4-wavefront instructions; one-wavefront 32-bit stores cost less (H100), so
    # the paper's layout stays
    widened = swizzle.optimal_swizzle(SRC, DST, 32, extend_vectors=True)
    assert widened.store_vector_bits == 128 and widened.store_wavefronts == 256
    assert (fwd.store.width, fwd.store.instructions, fwd.store.wavefronts) == (1, 256, 256)
    assert (fwd.load.width, fwd.load.instructions, fwd.load.wavefronts) == (1, 32, 32)
    # the bank simulator (every lane, every word) agrees with the plans
    assert _bank_simulator(fwd, SRC, DST) == (fwd.store.wavefronts, fwd.load.wavefronts)
    assert _bank_simulator(bwd, DST, SRC) == (bwd.store.wavefronts, bwd.load.wavefronts)


@needs_cxx
def test_widened_vector_kernel_moves_every_element():
    fwd, bwd = conversion_step(SRC, DST, 32), conversion_step(DST, SRC, 32)
    assert isinstance(fwd, SharedConversion) and isinstance(bwd, SharedConversion)
    # the emitted instructions' wavefronts (codegen's model of its addresses) are the plans'
    for step, (a, b) in ((fwd, (SRC, DST)), (bwd, (DST, SRC))):
        plan = plan_conversion(a, b, "fp32")
        assert emitted_wavefronts(step) == (plan.store.wavefronts, plan.load.wavefronts)
    kernel = emit_conversion_kernel("widened", SRC, DST, 4, fwd, bwd)
    assert emulate_check(kernel, tiles=2, iterations=2) == 0


@needs_nvcc
def test_widened_vector_kernel_ptx_holds_the_planned_instructions():
    bwd = conversion_step(DST, SRC, 32)
    counts = count_ptx(compile_ptx(emit_conversion_kernel("widened_once", DST, SRC, 4, bwd).source))
    assert bwd.instruction_counts() == {"st.shared.b32": 4, "ld.shared.v4.b32": 8}
    for op, n in bwd.instruction_counts().items():
        assert counts[op] == n, op


def _wide_block_layouts(rows: int, cols: int, warps: int) -> tuple[LinearLayout, LinearLayout]:
    from harness.transposes import transpose_wide_block_layouts  # noqa: PLC0415

    return transpose_wide_block_layouts(1, warps=warps, rows=rows, cols=cols)


@needs_cxx
@pytest.mark.parametrize("rows, cols, warps", [(128, 256, 4), (256, 256, 8), (256, 256, 16), (256, 256, 32)])
def test_8bit_block_transpose_is_16_byte_vectors_on_both_sides(rows, cols, warps):
    """Each thread holds 4 rows x 16 bytes of A: 4x4 byte blocks transposed in registers by prmt
    (8 per block), then 16-byte st.shared and ld.shared, conflict-free (4 wavefronts each)."""
    src, dst = _wide_block_layouts(rows, cols, warps)
    plan = plan_conversion(src, dst, "i8")
    per_thread = rows * cols // (16 * 32 * warps)
    assert (plan.store.width, plan.load.width) == (16, 16)  # 16 bytes = v4.b32 on both sides
    assert plan.store.wavefronts == plan.load.wavefronts == 4 * per_thread * warps
    assert _bank_simulator(plan, src, dst, 8) == (plan.store.wavefronts, plan.load.wavefronts)
    step = conversion_step(src, dst, 8)
    assert step.instruction_counts() == {"st.shared.v4.b32": per_thread, "ld.shared.v4.b32": per_thread}
    kernel = emit_transpose_kernel(f"tr8_{rows}_{cols}", src, dst, 1, step, 2 * rows, 2 * cols)
    assert kernel.shared_bytes == rows * cols
    assert emulate_transpose(kernel, seed=rows)
    if find_nvcc() is not None:
        counts = count_ptx(compile_ptx(kernel.source))
        assert counts["st.shared.v4.b32"] == counts["ld.shared.v4.b32"] == per_thread
        assert counts["prmt.b32"] == 8 * per_thread  # one 4x4 byte transpose per 16-byte vector
