"""nvcc cancels the conditional swaps of a shuffle conversion against those of its inverse in the GPU
suite's loop (convert, XOR every element, convert back, XOR): the emitter writes each swap as a select
and an XOR of three, which nvcc folds through the elementwise XOR where it does not fold selects.
Checked on the PTX of the loop (nvcc -arch=sm_90, no GPU).  SASS per round trip for the suite's
warp-shuffle kernels against Triton 3.6: benchmarks/results/shuffle_fold_sass.md."""

from __future__ import annotations

import re

import pytest

from linear_layouts import LinearLayout
from linear_layouts.analysis.shuffles import plan_shuffle
from linear_layouts.catalog.blocked import BlockedLayout
from linear_layouts.codegen.cost import step_counts
from linear_layouts.codegen.kernel import emit_conversion_kernel
from linear_layouts.codegen.ptx import compile_ptx, find_nvcc
from linear_layouts.codegen.shuffle import ShuffleConversion

pytestmark = pytest.mark.skipif(find_nvcc() is None, reason="nvcc is not installed")


def _blocked(spt, tpw, shape):
    lay = BlockedLayout(spt, tpw, [1, 1], [1, 0]).to_linear(shape)
    return LinearLayout({d: v for d, v in lay.bases.items() if d != "block"}, dict(lay.out_dims),
                        require_surjective=False)


def loop_ops(ptx: str) -> dict[str, int]:
    """Opcode counts (``selp``, ``xor``, ``shfl``) in the longest loop of ``ptx`` (a label to a later
    branch back to it)."""
    lines = ptx.splitlines()
    labels = {m.group(1): i for i, line in enumerate(lines) if (m := re.match(r"^(\$L__BB\d+_\d+):", line))}
    loops = [(labels[m.group(1)], i) for i, line in enumerate(lines)
             if (m := re.search(r"\bbra(?:\.uni)?\s+(\$L__BB\d+_\d+);", line)) and labels.get(m.group(1), i) < i]
    start, end = max(loops, key=lambda x: x[1] - x[0])
    body = [line.strip() for line in lines[start:end]]
    return {op: sum(1 for line in body if line.startswith(op)) for op in ("selp", "xor", "shfl")}


def round_trip_ops(src: LinearLayout, dst: LinearLayout, bits: int) -> tuple[dict[str, int], int]:
    """Loop opcodes of the round-trip kernel and the selects / XORs the two conversions emit."""
    fwd, bwd = (ShuffleConversion(plan_shuffle(a, b, bits)) for a, b in ((src, dst), (dst, src)))
    ptx = compile_ptx(emit_conversion_kernel("fold", src, dst, bits // 8, fwd, bwd).source)
    return loop_ops(ptx), step_counts(fwd).alu + step_counts(bwd).alu


def test_butterfly_swaps_cancel_across_a_round_trip():
    """random_109 (register bit 2 <-> lane bit 1, fp32, one warp): 64 shfl and 2 x 128 ALU emitted per
    round trip; in the loop one select per exchanged pair and conversion is left (64; with selects
    only, as Triton writes it, nvcc keeps all 192)."""
    ops, emitted = round_trip_ops(_blocked([1, 4], [16, 2], [32, 64]), _blocked([2, 4], [8, 4], [32, 64]), 32)
    assert ops["shfl"] == 64 and emitted == 256
    assert ops["selp"] <= 64, ops
