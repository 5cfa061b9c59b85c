"""A reshape of index math recomputed in a blocked layout with zero (broadcast) register bases: Triton
verifies a reshape by LinearLayout equality, and its LinearLayout of a blocked layout keeps those bases in
Triton 3.6 but drops them in 3.9, so no operand layout passes both (``rewrite_kernel``'s
``broadcast_registers``; ``triton_hook.stage.keeps_broadcast_registers`` asks the installed Triton). The
rewrite for each rule is checked by the rule itself (the operand reshaped is the result's LinearLayout) and
by Triton 3.9's parser (the oracle of the 3.9 rule; skipped without Triton)."""

from __future__ import annotations

import re

import pytest

from linear_layouts.engine import transfer
from linear_layouts.layouts import BlockedLayout, remove_broadcast_registers
from linear_layouts.pipeline.rewrite import rewrite_ttgir
from linear_layouts.triton_model.encodings import Layouts, parse_type
from linear_layouts.triton_model.ir_text import parse_module

from tests.kernels._triton_oracle import triton_module

# a 2-element range reshaped to [2, 1] and broadcast over 64 columns: the row index of a [2, 64] tile
TTGIR = """\
#b = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]}>
#l = #ttg.linear<{register = [[1]], lane = [[0], [0], [0], [0], [0]], warp = [[0], [0]], block = []}>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:90", \
"ttg.threads-per-warp" = 32 : i32} {
  tt.func public @k(%x: !tt.ptr<i32>) {
    %ar = tt.make_range {end = 2 : i32, start = 0 : i32} : tensor<2xi32, #l>
    %r = tt.reshape %ar : tensor<2xi32, #l> -> tensor<2x1xi32, #b>
    %c = tt.broadcast %r : tensor<2x1xi32, #b> -> tensor<2x64xi32, #b>
    %p = tt.splat %x : !tt.ptr<i32> -> tensor<2x64x!tt.ptr<i32>, #b>
    %q = tt.addptr %p, %c : tensor<2x64x!tt.ptr<i32>, #b>, tensor<2x64xi32, #b>
    %v = tt.load %q : tensor<2x64x!tt.ptr<i32>, #b>
    %w = arith.addi %v, %c : tensor<2x64xi32, #b>
    tt.store %q, %w : tensor<2x64x!tt.ptr<i32>, #b>
    tt.return
  }
}
"""
#: two registers per thread along the 64 columns: on the reshape's [2, 1] one of them is a zero basis
WANT = BlockedLayout([2, 2], [1, 32], [1, 4], [1, 0])
RESHAPE = re.compile(r"tt\.reshape %\S+ : (tensor<[^>]*>>?) -> (tensor<[^>]*>>?)")


def rewritten(broadcast_registers: bool) -> str:
    return rewrite_ttgir(TTGIR, {"%v": WANT, "%w": WANT}, {0: WANT}, broadcast_registers=broadcast_registers).text


def reshapes(text: str) -> list[tuple]:
    """(operand LinearLayout, operand shape, result descriptor, result shape) of each reshape of ``text``."""
    module = parse_module(text)
    lay = Layouts(module)
    found = []
    for op in module.functions[0].walk():
        if op.name == "tt.reshape":
            source, result = (parse_type(t, module) for t in (op.operand_types[0], op.result_types[0]))
            found.append((lay.linear(source), source.shape, lay.descriptor(result.encoding), result.shape))
    return found


def linear_by_rule(desc, shape, broadcast_registers: bool):
    """Triton's LinearLayout of ``desc`` on ``shape`` under the rule: a blocked layout's zero register
    bases kept (3.6) or dropped (3.9)."""
    layout = desc.to_linear(shape)
    return layout if broadcast_registers or not isinstance(desc, BlockedLayout) else remove_broadcast_registers(layout)


@pytest.mark.parametrize("broadcast_registers", [False, True])
def test_reshape_operand_matches_the_rule(broadcast_registers):
    text = rewritten(broadcast_registers)
    found = reshapes(text)
    assert any(isinstance(desc, BlockedLayout) and desc == WANT for _, _, desc, _ in found), text
    for source, _, desc, shape in found:
        assert transfer.reshape_forward(source, shape) == linear_by_rule(desc, shape, broadcast_registers)
    # the rules differ on this kernel: a zero register basis on the operand under 3.6's rule only
    assert any(not any(base) for source, *_ in found for base in source.bases.get("register", [])) \
        == broadcast_registers


def test_triton_39_takes_its_rule_only(tmp_path):
    triton = pytest.importorskip("triton")
    if not triton.__version__.startswith("3.9"):
        pytest.skip(f"the oracle is Triton 3.9, found {triton.__version__}")
    from linear_layouts.pipeline.triton_hook.stage import keeps_broadcast_registers

    triton_module(rewritten(False), tmp_path)
    with pytest.raises(RuntimeError, match="Parse MLIR file failed"):
        triton_module(rewritten(True), tmp_path)
    assert keeps_broadcast_registers() is False
