"""Explorer scenarios built from the catalog: the conversions HARDWARE.md measured Triton on, and a few
catalog layouts per tensor shape for the distributed view's picker."""

from __future__ import annotations

from linear_layouts.layouts import BlockedLayout, DotOperandLayout, NVMMADistributedLayout
from linear_layouts.core.layout import LinearLayout
from linear_layouts.present.viz.scenarios import Scenario, row_major_shared

__all__ = ["catalog_scenarios", "catalog_layouts"]

_ROW = "BlockedLayout([1,8],[4,8],[4,1],[1,0])"
_COL = "BlockedLayout([8,1],[8,4],[1,4],[0,1])"
_MMA = "NVMMADistributedLayout([2,0],[4,1],[16,8])"


def _pair(name: str, store_spec: str, store, load_spec: str, load, shape: list[int], bits: int) -> Scenario:
    a, b = store.to_linear(shape), load.to_linear(shape)
    return Scenario(name, a, b, bits, (("unswizzled (row-major)", row_major_shared(shape)),), store_spec, load_spec)


def catalog_scenarios() -> list[Scenario]:
    """Blocked row-major -> column-major (fp16, fp32), blocked -> mma v2 accumulator (fp16), and a one-warp
    32×32 fp32 transpose: each with the unswizzled layout (the optimal one is added by the explorer)."""
    row = BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    col = BlockedLayout([8, 1], [8, 4], [1, 4], [0, 1])
    mma = NVMMADistributedLayout([2, 0], [4, 1], [16, 8])
    lanes_cols = BlockedLayout([1, 1], [1, 32], [1, 1], [1, 0])
    lanes_rows = BlockedLayout([1, 1], [32, 1], [1, 1], [0, 1])
    return [
        _pair("blocked row-major → column-major, 64×64 fp16, 4 warps", _ROW, row, _COL, col, [64, 64], 16),
        _pair("blocked → mma v2 accumulator, 64×64 fp16, 4 warps", _ROW, row, _MMA, mma, [64, 64], 16),
        _pair("blocked row-major → column-major, 64×64 fp32, 4 warps", _ROW, row, _COL, col, [64, 64], 32),
        _pair("32×32 fp32, lanes along columns → lanes along rows, one warp",
              "BlockedLayout([1,1],[1,32],[1,1],[1,0])", lanes_cols,
              "BlockedLayout([1,1],[32,1],[1,1],[0,1])", lanes_rows, [32, 32], 32),
    ]


def catalog_layouts() -> list[tuple[str, LinearLayout]]:
    """Named catalog layouts over the scenarios' shapes, for the explorer's distributed-view picker."""
    mma = NVMMADistributedLayout([2, 0], [4, 1], [16, 8])
    entries = [
        ("BlockedLayout([1,4],[4,8],[1,1],[1,0])", BlockedLayout([1, 4], [4, 8], [1, 1], [1, 0]), [16, 32]),
        ("BlockedLayout([1,1],[2,16],[1,1],[1,0])", BlockedLayout([1, 1], [2, 16], [1, 1], [1, 0]), [16, 32]),
        (_MMA, mma, [64, 64]),
        ("DotOperandLayout(0, " + _MMA + ", 2)", DotOperandLayout(0, mma, 2), [64, 64]),
        ("DotOperandLayout(1, " + _MMA + ", 2)", DotOperandLayout(1, mma, 2), [64, 64]),
        ("BlockedLayout([1,8],[8,4],[4,1],[1,0])", BlockedLayout([1, 8], [8, 4], [4, 1], [1, 0]), [64, 64]),
        ("BlockedLayout([1,4],[1,32],[4,1],[1,0])", BlockedLayout([1, 4], [1, 32], [4, 1], [1, 0]), [32, 32]),
    ]
    return [(name, descriptor.to_linear(shape)) for name, descriptor, shape in entries]
