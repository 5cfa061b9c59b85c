"""Round four: conversions between random layout pairs (plans emulated slot by slot, generated kernels
run on the CPU with every destination register checked), and the regressions found that way."""

from __future__ import annotations

import pytest

from linear_layouts import LayoutError
from linear_layouts.analysis import conversion as cv
from linear_layouts.codegen.emulate import emulate_check, find_cxx
from linear_layouts.codegen.plan import conversion_kernel
from linear_layouts.layouts.blocked import BlockedLayout
from linear_layouts.target import named_target


def _blocked(spt, tpw, wpc, order, shape):
    return BlockedLayout(spt, tpw, wpc, order).to_linear(shape)


def test_dst_with_its_out_dims_in_another_order_is_the_same_layout():
    """``dst`` naming the tensor's dims in another order is the same map: a no-op from ``src``, and the
    kernel of a real conversion to it is still an identity on the row-major array."""
    src = _blocked([1, 4], [4, 8], [2, 1], [1, 0], [32, 64])
    reordered = src.transpose_outs(["dim1", "dim0"])
    assert cv.plan_conversion(src, reordered, 32).kind is cv.NO_OP
    assert cv.plan_conversion(src, reordered, 128).kind is cv.NO_OP
    if find_cxx() is None:
        pytest.skip("no C++20 compiler")
    other = _blocked([4, 1], [8, 4], [1, 2], [0, 1], [32, 64])
    for bits in (16, 32):
        assert emulate_check(conversion_kernel(other, reordered, bits), tiles=1, iterations=1, seed=bits) == 0, bits


def test_a_shared_plan_that_does_not_fit_gives_way_to_shuffles():
    """128x256 fp64 within each warp: shared memory would be cheaper but needs 256 KiB, more than a CTA of
    sm_90 may allocate; the warp shuffles win, with the shared plan's cost kept as the alternative."""
    src = _blocked([16, 1], [1, 32], [8, 1], [0, 1], [128, 256])
    dst = _blocked([1, 1], [16, 2], [8, 1], [1, 0], [128, 256])
    plan = cv.plan_conversion(src, dst, 64)
    assert plan.kind is cv.WARP_SHUFFLE
    assert dict(plan.alternatives)[cv.SHARED_MEMORY].total < plan.cost.total
    shared = cv.plan_shared_memory(src, dst, 64)
    assert shared.shared_bytes == 128 * 256 * 8 and not shared.fits()


def test_a_plan_beyond_shared_memory_says_so_and_codegen_refuses_it():
    src = _blocked([1, 4], [4, 8], [4, 1], [1, 0], [256, 256])
    dst = _blocked([4, 1], [8, 4], [1, 4], [0, 1], [256, 256])
    """256x256 fp32 through shared memory needs 256 KiB: the plan's text says it does not fit sm_90, and
    codegen refuses to emit a kernel that could not launch."""
    plan = cv.plan_conversion(src, dst, 32)
    assert "more than the 232448 bytes a CTA of sm_90 may allocate" in plan.explain()
    with pytest.raises(LayoutError, match="262144 bytes of shared memory, more than a CTA of sm_90"):
        conversion_kernel(src, dst, 32)
    assert plan.kind is cv.SHARED_MEMORY and plan.shared_bytes == 262144 and not plan.fits()
    assert cv.plan_conversion(src, dst, 16).fits()


def test_a_layout_of_the_wrong_lane_count_is_named():
    """32-lane layouts on a 64-lane target: the refusal names the argument (``src``), not an inner one."""
    src = _blocked([1, 4], [4, 8], [2, 1], [1, 0], [32, 32])
    dst = _blocked([4, 1], [8, 4], [1, 2], [0, 1], [32, 32])
    with pytest.raises(LayoutError, match=r"^src: needs a 'lane' in dim of size 64"):
        cv.plan_conversion(src, dst, 32, target=named_target("gfx942"))
    wide = _blocked([4, 1], [8, 8], [1, 2], [0, 1], [32, 32])
    with pytest.raises(LayoutError, match=r"^dst: needs a 'lane' in dim of size 32"):
        cv.plan_shared_memory(src, wide, 32)
