"""nvcc cancels the conditional swaps of a shuffle conversion against those of its inverse in the GPU
suite's loop (convert, XOR every element, convert back, XOR): ``translate_words`` writes each swap as a
select and an XOR of three (sending side in increasing lane-bit order, receiving side decreasing),
which nvcc folds through the elementwise XOR where it does not fold selects.  Checked on the PTX of the
loop (nvcc -arch=sm_90, no GPU); SASS per round trip and per lone conversion for all the suite's
warp-shuffle kernels: ``benchmarks/shuffle_sass_loop.py`` (``--lone``)."""

from __future__ import annotations

import re

import pytest

from linear_layouts import LinearLayout
from linear_layouts.analysis.shuffles import plan_shuffle
from linear_layouts.codegen.cost import step_counts
from linear_layouts.codegen.kernel import emit_conversion_kernel
from linear_layouts.codegen.ptx import compile_ptx, find_nvcc
from linear_layouts.codegen.shuffle import ShuffleConversion

pytestmark = pytest.mark.skipif(find_nvcc() is None, reason="nvcc is not installed")

# the GPU suite's random_168: an 8x64 fp32 tile, one warp (src has a zero register basis)
SRC = LinearLayout({"register": [[0, 0], [0, 4], [0, 8], [0, 16], [0, 32]],
                    "lane": [[0, 1], [0, 2], [1, 0], [2, 0], [4, 0]], "warp": []},
                   {"dim0": 8, "dim1": 64}, require_surjective=False)
DST = LinearLayout({"register": [[4, 0], [0, 8], [0, 16], [0, 32]],
                    "lane": [[1, 0], [2, 0], [0, 1], [0, 2], [0, 4]], "warp": []},
                   {"dim0": 8, "dim1": 64}, require_surjective=False)


def loop_ops(ptx: str) -> dict[str, int]:
    """Opcode counts (``selp``, ``xor``, ``shfl``) in the longest loop of ``ptx`` (a label to a later
    branch back to it).

    >>> loop_ops("$L__BB0_1:\\n selp.b32 a;\\n shfl.sync b;\\n @p bra $L__BB0_1;")
    {'selp': 1, 'xor': 0, 'shfl': 1}
    """
    lines = ptx.splitlines()
    labels = {m.group(1): i for i, line in enumerate(lines) if (m := re.match(r"^(\$L__BB\d+_\d+):", line))}
    loops = [(labels[m.group(1)], i) for i, line in enumerate(lines)
             if (m := re.search(r"\bbra(?:\.uni)?\s+(\$L__BB\d+_\d+);", line)) and labels.get(m.group(1), i) < i]
    start, end = max(loops, key=lambda x: x[1] - x[0])
    body = [line.strip() for line in lines[start:end]]
    return {op: sum(1 for line in body if line.startswith(op)) for op in ("selp", "xor", "shfl")}


def test_swaps_cancel_across_a_round_trip():
    """random_168: 32 shfl and 2 x 32 swap instructions emitted per round trip; with selects only
    (main before this change, as Triton writes them) the loop's PTX kept all 64 selp, now 16."""
    fwd, bwd = (ShuffleConversion(plan_shuffle(a, b, 32)) for a, b in ((SRC, DST), (DST, SRC)))
    ops = loop_ops(compile_ptx(emit_conversion_kernel("fold", SRC, DST, 4, fwd, bwd).source))
    assert ops["shfl"] == 32 and step_counts(fwd).alu + step_counts(bwd).alu == 64
    assert ops["selp"] <= 16, ops
