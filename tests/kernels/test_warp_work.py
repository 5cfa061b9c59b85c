"""The in-warp work of reductions and scans (``triton_model.warp_work``) against Triton's compiled PTX, the
kernel model that prices it, and gathers whose addresses the layout cannot make coalesced."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from linear_layouts.core.element_type import ir_element_bits
from linear_layouts.core.errors import LayoutError
from linear_layouts.layouts import BlockedLayout
from linear_layouts.pipeline.engine_compare import global_pointers
from linear_layouts.pipeline.kernel_model import kernel_time, predicted_gain
from linear_layouts.pipeline.rewrite import rewrite_kernel
from linear_layouts.pipeline.ttir_import import UNKNOWN_STRIDE, import_ttir
from linear_layouts.triton_model.encodings import Layouts, parse_type
from linear_layouts.triton_model.ir_text import parse_module
from linear_layouts.triton_model.warp_work import combine_ops, reduce_warp_counts, scan_warp_counts

IR = Path(__file__).resolve().parent.parent / "data" / "triton_kernels" / "ir" / "sm_90"


def _predicted_shuffles(ttgir: str) -> int:
    module = parse_module(ttgir)
    layouts, total = Layouts(module), 0
    for op in module.functions[0].walk():
        if op.name in ("tt.reduce", "tt.scan"):
            layout = layouts.linear(parse_type(op.operand_types[0], module))
            bits = [ir_element_bits(parse_type(t, module).element_type) for t in op.operand_types]
            count = reduce_warp_counts if op.name == "tt.reduce" else scan_warp_counts
            total += count(layout, op.attr_int("axis") or 0, bits, combine_ops(op)).shfl
    return total


@pytest.mark.parametrize("name", ["row_sum", "layer_norm_fwd", "cumsum", "linear_recurrence_scan", "topk_router"])
def test_the_shuffles_are_the_ones_triton_compiles(name):
    """Straight-line kernels whose only shuffles are their reductions and scans (one warp or several along
    the axis, one and two operands, 32- and 64-bit): the count per thread is the PTX's ``shfl.sync`` count."""
    pytest.importorskip("triton")
    from linear_layouts.triton_model.compile import compile_ttgir

    ttgir = (IR / f"{name}.ttgir").read_text()
    try:
        ptx = compile_ttgir(ttgir).ptx
    except LayoutError as error:  # a Triton that cannot read this TTGIR
        pytest.skip(str(error))
    assert _predicted_shuffles(ttgir) == len(re.findall(r"\bshfl\.sync\.", ptx))


def test_a_reduction_inside_the_thread_needs_no_shuffle():
    src = BlockedLayout([4, 1], [1, 32], [1, 4], [1, 0]).to_linear([4, 128])
    assert reduce_warp_counts(src, 0, [32]).shfl == 0
    assert reduce_warp_counts(src, 0, [32]).alu == 3
    across = reduce_warp_counts(src, 1, [32])
    assert across.shfl == 4 * 5 + 1 * 2  # 4 rows x 5 lane bits; the 16 partials of 4 warps: one round, 2 warp bits
    assert reduce_warp_counts(src, 1, [64]).shfl == 2 * across.shfl  # two words per 64-bit value


def test_bad_arguments_are_layout_errors():
    src = BlockedLayout([1], [32], [4], [0]).to_linear([128])
    with pytest.raises(LayoutError, match="axis"):
        reduce_warp_counts(src, 1, [32])
    with pytest.raises(LayoutError, match="bits"):
        scan_warp_counts(src, 0, [])


def _gain(name: str) -> float:
    ttir, ttgir = (IR / f"{name}.ttir").read_text(), (IR / f"{name}.ttgir").read_text()
    rewrite, _ = rewrite_kernel(ttir, ttgir, choose=False)
    module = parse_module(ttir)
    pointers = global_pointers(module, import_ttir(module, num_warps=parse_module(ttgir).num_warps))
    return predicted_gain(kernel_time(ttgir, pointers), kernel_time(rewrite.text, pointers))


def test_a_sort_moved_onto_warps_is_predicted_slower():
    """bitonic_sort_pairs: the engine's layouts move the sort's compare-and-swap stages between registers,
    lanes and warps; priced (Triton's layout keeps one of the 36 stages across warps), the rewrite is slower,
    and ``rewrite_kernel`` keeps Triton's layouts."""
    assert _gain("bitonic_sort_pairs") < 0
    ttir, ttgir = (IR / "bitonic_sort_pairs.ttir").read_text(), (IR / "bitonic_sort_pairs.ttgir").read_text()
    assert rewrite_kernel(ttir, ttgir)[0].same_layouts


def test_a_gathers_data_dependent_dims_have_unknown_strides():
    """bitonic_sort_pairs loads ``value_ptr + rows * N + position`` with ``position`` from the sort: no dim of
    it is affine; an embedding's ``weight + ids[:, None] * stride + d[None, :]`` keeps its contiguous dim."""
    def strides(name: str) -> list[tuple]:
        ttgir = parse_module((IR / f"{name}.ttgir").read_text())
        program = import_ttir(parse_module((IR / f"{name}.ttir").read_text()), num_warps=ttgir.num_warps).program
        return [op.attr("strides") for op in program.ops if op.kind == "pointer"]

    assert (UNKNOWN_STRIDE, UNKNOWN_STRIDE) in strides("bitonic_sort_pairs")
    assert (UNKNOWN_STRIDE, 1) in strides("embedding")
