"""Generated kernels run on the CPU emulator (the unchanged kernel source with host definitions of the
memory instructions, one thread per CUDA thread): every element of seeded conversions of every kind
and element width comes back, round trips included; a kernel with one wrong byte permute is caught."""

from __future__ import annotations

import re

import numpy as np
import pytest

from linear_layouts import LayoutError, LinearLayout
from linear_layouts.analysis.shuffles import plan_shuffle
from linear_layouts.analysis.warp_simulator import random_within_warp_partner
from linear_layouts.layouts.blocked import BlockedLayout
from linear_layouts.codegen.conversion import SharedConversion
from linear_layouts.codegen.emulate import emulate_check, emulate_kernel, find_cxx
from linear_layouts.codegen.kernel import KernelSource, emit_conversion_kernel
from linear_layouts.codegen.plan import conversion_kernel, conversion_step
from linear_layouts.codegen.shuffle import ShuffleConversion

pytestmark = pytest.mark.skipif(find_cxx() is None, reason="no C++20 compiler")


def _strip(layout: LinearLayout) -> LinearLayout:
    bases = {d: v for d, v in layout.bases.items() if d != "block"}
    return LinearLayout(bases, dict(layout.out_dims), require_surjective=False)


def _blocked(spt, tpw, wpc, order, shape):
    return _strip(BlockedLayout(spt, tpw, wpc, order).to_linear(shape))


def test_shared_memory_kernels_of_every_width():
    """Row-major -> column-major blocked (shared memory, two warps of each) for 8/16/32/64 bits."""
    src = _blocked([1, 4], [4, 8], [2, 1], [1, 0], [32, 32])
    dst = _blocked([4, 1], [8, 4], [1, 2], [0, 1], [32, 32])
    for bits in (8, 16, 32, 64):
        kernel = conversion_kernel(src, dst, bits)
        assert emulate_check(kernel, tiles=2, iterations=2, seed=bits) == 0, bits


def test_shuffle_kernels_with_sub_word_payloads():
    """In-warp pairs through warp shuffles (forced) for 8- and 16-bit elements, one and two warps."""
    nprng = np.random.default_rng(4)
    for bits, wpc in ((8, [1, 1]), (16, [2, 1])):
        src = _blocked([2, 2], [8, 4], wpc, [1, 0], [16 * wpc[0], 8])
        dst = random_within_warp_partner(nprng, src)
        fwd, bwd = (ShuffleConversion(plan_shuffle(a, b, bits)) for a, b in ((src, dst), (dst, src)))
        kernel = emit_conversion_kernel(f"shfl{bits}", src, dst, bits // 8, fwd, bwd)
        assert emulate_check(kernel, tiles=2, iterations=1) == 0, bits


def test_ldmatrix_and_stmatrix_round_trip():
    src = LinearLayout({"register": [[0, 1], [0, 2], [0, 4], [0, 8]],
                        "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], "warp": []}, ["dim0", "dim1"])
    dst = LinearLayout({"register": [[0, 1], [0, 8], [8, 0], [16, 0]],
                        "lane": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], "warp": []}, ["dim0", "dim1"])
    from linear_layouts.layouts import row_major_shared
    from linear_layouts.codegen.shared import EmittedAccess

    shared = row_major_shared(list(src.out_dims.values()))
    forward = SharedConversion(src, dst, shared, 2, EmittedAccess("vector", 8), EmittedAccess("matrix", 4))
    backward = SharedConversion(dst, src, shared, 2, EmittedAccess("matrix", 4), EmittedAccess("vector", 8))
    kernel = emit_conversion_kernel("mat", src, dst, 2, forward, backward)
    assert "ll_ldsm_x4(" in kernel.source and "ll_stsm_x4(" in kernel.source
    assert emulate_check(kernel, tiles=1, iterations=1) == 0


def test_a_wrong_byte_permute_is_caught():
    src = _blocked([1, 4], [4, 8], [1, 1], [1, 0], [16, 32])
    dst = _blocked([4, 1], [8, 4], [1, 1], [0, 1], [16, 32])
    kernel = conversion_kernel(src, dst, 8)
    assert emulate_check(kernel, tiles=1, iterations=0) == 0
    body = kernel.source
    prelude_end = body.index("#endif")
    broken = body[:prelude_end] + re.sub(r"ll_sts(\d+)\(", r"ll_sts\1(4u ^ ", body[prelude_end:], count=1)
    assert broken != body
    bad = KernelSource(kernel.name + "_bad", broken.replace(kernel.name, kernel.name + "_bad"), kernel.threads,
                       kernel.shared_bytes, kernel.tile_elements, kernel.element_bytes)
    assert emulate_check(bad, tiles=1, iterations=0) > 0
    with pytest.raises(LayoutError, match="whole number"):
        emulate_kernel(kernel, np.zeros(3, dtype=np.uint8))


def test_in_lane_rounds_move_registers_without_shuffles():
    """A register bit traded with the lane bit at the same position (r0 <-> l0, plus common register
    bits): half the rounds read the lane itself and are register moves; every element of every width
    still comes back, and the kernel's shfl count is the plan's (rounds that cross lanes only)."""
    from linear_layouts.codegen.ptx import compile_ptx, count_ptx, find_nvcc

    src = LinearLayout({"register": [[1], [2], [8], [128], [256]], "lane": [[4], [16], [32], [64], [512]]},
                       ["dim0"])
    dst = LinearLayout({"register": [[1], [4], [8], [128], [256]], "lane": [[2], [16], [32], [64], [512]]},
                       ["dim0"])
    for bits in (8, 16, 32, 64):
        plan = plan_shuffle(src, dst, bits)
        assert sum(r.in_lane for r in plan.rounds) == plan.num_rounds // 2 > 0, bits
        assert plan.shuffles_per_warp == plan.num_rounds // 2 * plan.words_per_shuffle, bits
        fwd, bwd = (ShuffleConversion(plan_shuffle(a, b, bits)) for a, b in ((src, dst), (dst, src)))
        kernel = emit_conversion_kernel(f"inlane{bits}", src, dst, bits // 8, fwd, None)
        assert emulate_check(kernel, tiles=2, iterations=0, seed=bits) == 0, bits
        kernel = emit_conversion_kernel(f"inlane_rt{bits}", src, dst, bits // 8, fwd, bwd)
        assert emulate_check(kernel, tiles=2, iterations=1, seed=bits) == 0, bits
        if find_nvcc() is not None:
            got = count_ptx(compile_ptx(emit_conversion_kernel(f"inlane{bits}", src, dst, bits // 8, fwd).source))
            key = "shfl.sync.bfly.b32" if bits >= 32 else "shfl.sync.idx.b32"  # butterfly form: 32/64-bit
            assert got[key] == plan.shuffles_per_warp == fwd.instruction_counts()[key], bits


def _random_109():
    """Suite pair random_109: [32, 64] fp32, one warp, register bit 2 <-> lane bit 1."""
    return (_blocked([1, 4], [16, 2], [1, 1], [1, 0], [32, 64]), _blocked([2, 4], [8, 4], [1, 1], [1, 0], [32, 64]))


def test_butterfly_form_of_a_register_lane_bit_swap():
    """random_109 in butterfly form: half the rounds in-lane, the others read lane ^ 2; per conversion
    32 shfl.sync.bfly, one select per word sent and one per destination register (96 = Triton's
    transferWithinWarp); every element of both widths comes back (forward, and a round trip)."""
    from linear_layouts.codegen.cost import step_counts

    src, dst = _random_109()
    for bits in (32, 64):
        plan = plan_shuffle(src, dst, bits)
        form = plan.butterfly_form
        assert form is not None and form.lane_bits == (1,), bits
        assert sorted(set(form.masks)) == [0, 2] and form.masks.count(2) == 32, bits
        fwd, bwd = (ShuffleConversion(plan_shuffle(a, b, bits)) for a, b in ((src, dst), (dst, src)))
        counts = step_counts(fwd)
        words = bits // 32
        assert (counts.shfl, counts.alu) == (32 * words, 96 * words), bits
        kernel = emit_conversion_kernel(f"bfly{bits}", src, dst, bits // 8, fwd, None)
        assert kernel.source.count("__shfl_xor_sync(") == 32 * words
        assert emulate_check(kernel, tiles=2, iterations=0, seed=bits) == 0, bits
        kernel = emit_conversion_kernel(f"bfly_rt{bits}", src, dst, bits // 8, fwd, bwd)
        assert emulate_check(kernel, tiles=2, iterations=2, seed=bits) == 0, bits


def test_butterfly_form_with_broadcast_and_fallbacks():
    """Butterfly form on other register<->lane swaps, one of them from a source with a broadcast lane
    (zero lane basis, [32, 8]), every element checked in a round trip whose other direction is the
    general emitter; sub-word payloads and source lanes that are not ``lane ^ m`` keep the general
    emitter (``butterfly_form`` is None)."""
    src, dst = _random_109()
    assert plan_shuffle(src, dst, 16).butterfly_form is None  # sub-word payload
    cases = [([1, 4], [16, 2], [1, 8], [16, 2], [16, 64], 32), ([1, 4], [16, 2], [2, 4], [8, 4], [32, 8], 32),
             ([1, 4], [16, 2], [1, 8], [16, 2], [32, 8], 64)]
    for n, (s1, t1, s2, t2, shape, bits) in enumerate(cases):
        a, b = _blocked(s1, t1, [1, 1], [1, 0], shape), _blocked(s2, t2, [1, 1], [1, 0], shape)
        fwd, bwd = (ShuffleConversion(plan_shuffle(x, y, bits)) for x, y in ((a, b), (b, a)))
        assert bwd.plan.butterfly_form is not None, n
        if shape == [32, 8]:
            assert 0 in a.flat_bases("lane") + b.flat_bases("lane") and fwd.plan.butterfly_form is None, n
        kernel = emit_conversion_kernel(f"bfly_c{n}", a, b, bits // 8, fwd, bwd)
        assert emulate_check(kernel, tiles=2, iterations=1, seed=n) == 0, n


def test_the_16_bit_transpose_plans_ldmatrix_trans_and_runs():
    """Triton's tl.trans of a 64x64 fp16 tile: the planner takes st.shared.v4 + ldmatrix.x4.trans (128
    wavefronts; the optimal swizzle's plan needs 192), and its kernel moves every element."""
    from linear_layouts.analysis import plan_conversion

    src = _blocked([8, 1], [8, 4], [1, 4], [0, 1], [64, 64])
    dst = _blocked([1, 8], [4, 8], [4, 1], [1, 0], [64, 64])
    plan = plan_conversion(src, dst, "fp16")
    store, load = (step for step in plan.steps if hasattr(step, "trans"))
    assert (load.trans, load.width, store.width) == (True, 4, 8)
    assert store.wavefronts + load.wavefronts == 128
    assert emulate_check(conversion_kernel(src, dst, 16), tiles=2, iterations=2) == 0
