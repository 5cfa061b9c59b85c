"""The transposing ldmatrix conversion (``swizzle.matrix_trans_swizzle``, ``conversion.plan_through_matrix_trans``):
the 64 x 64 fp16 example bit for bit, every 16-bit tile of the ops' shapes conflict-free by the emitted-address
simulator (``codegen.model``), and the layouts it refuses."""

from __future__ import annotations

import dataclasses

import pytest

from linear_layouts import LayoutError
from linear_layouts.analysis.conversion import plan_through_matrix_trans
from linear_layouts.analysis.steps import SharedInstruction
from linear_layouts.analysis.swizzle import matrix_trans_swizzle
from linear_layouts.codegen.model import emitted_wavefronts
from linear_layouts.codegen.plan import step_from_plan
from linear_layouts.layouts.blocked import BlockedLayout
from linear_layouts.ops.kernels import TileConfig, _one_cta, tile_layouts


def _pair(rows=64, cols=64, warps=4, row_lanes=4):
    src = _one_cta(BlockedLayout([1, 8], [4, 8], [warps, 1], [1, 0]).to_linear([rows, cols]))
    dst = _one_cta(BlockedLayout([8, 1], [row_lanes, 32 // row_lanes], [1, warps], [0, 1]).to_linear([rows, cols]))
    return src, dst


def test_the_64x64_fp16_example():
    """Offset bits 0-5 columns 1 ... 32 (a 16-byte unit, then the bank groups of the store's first 8 lanes); the
    load's matrix rows (register 0: row 1; lanes 0, 1: rows 8, 16) each XOR one bank bit; rows 2, 4, 32 last."""
    src, dst = _pair()
    shared = matrix_trans_swizzle(src, dst, "fp16")
    assert [tuple(b) for b in shared.bases["offset"]] == [
        (0, 1), (0, 2), (0, 4), (0, 8), (0, 16), (0, 32), (1, 8), (8, 16), (16, 32), (2, 0), (4, 0), (32, 0)]
    plan = plan_through_matrix_trans(src, dst, "fp16")
    store, _, load = plan.steps
    assert (store.instruction, store.width, store.instructions, store.wavefronts) == (
        SharedInstruction.VECTOR, 8, 16, 64)
    assert (load.instruction, load.width, load.trans, load.instructions, load.wavefronts) == (
        SharedInstruction.MATRIX, 4, True, 16, 64)
    step = step_from_plan(plan)
    assert step.instruction_counts() == {"st.shared.v4.b32": 4, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16": 4}
    assert emitted_wavefronts(step) == (64, 64)  # 8 KiB each way, 128 bytes a wavefront: no conflict


@pytest.mark.parametrize("rows, cols, warps", [(32, 64, 4), (64, 64, 4), (64, 64, 8), (64, 128, 4), (128, 64, 4),
                                               (128, 128, 8), (128, 128, 16), (256, 128, 8), (256, 256, 16)])
def test_every_ops_tile_is_conflict_free_as_emitted(rows, cols, warps):
    """The ops' 16-bit tiles with ``ldmatrix``: the plan's wavefronts and the emitted addresses' (the hardware
    rule's simulator) are both the least, ``tile bytes / 128`` a side."""
    config = TileConfig(2, rows, cols, warps, 8, 8, ldmatrix=True)
    src, dst = tile_layouts(config)
    step = step_from_plan(plan_through_matrix_trans(src, dst, 16))
    least = rows * cols * 2 // 128
    assert emitted_wavefronts(step) == (least, least)
    assert step.load.trans and step.load.width == 4


def test_refusals_name_the_argument():
    src, dst = _pair()
    with pytest.raises(LayoutError, match="dtype: ldmatrix.trans moves 16-bit"):
        matrix_trans_swizzle(src, dst, "fp32")
    same, two = _pair(row_lanes=2)  # lanes 1-4 along the rows of B: lane 4 is a lane of the store, no register
    with pytest.raises(LayoutError, match="load_layout: its lanes 2-4"):
        matrix_trans_swizzle(same, two, "fp16")
    with pytest.raises(LayoutError, match="load_layout: its lanes 2-4"):
        plan_through_matrix_trans(same, two, "bf16")
    with pytest.raises(LayoutError, match="ldmatrix"):
        dataclasses.replace(TileConfig(4, 64, 64, 4, 4, 4), ldmatrix=True)
    with pytest.raises(LayoutError, match="ldmatrix"):
        TileConfig(2, 64, 64, 4, 8, 8, row_lanes=8, ldmatrix=True)
    with pytest.raises(LayoutError, match="row_lanes: a power of two"):
        TileConfig(2, 64, 64, 4, 8, 8, row_lanes=3)
