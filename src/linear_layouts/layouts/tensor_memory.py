"""Blackwell tensor memory (TMEM): ``TensorMemoryLayout`` and ``TensorMemoryScalesLayout``.

TMEM is addressed by (``row``, ``col``): 128 lanes (rows) of 32-bit columns. The layouts map
``row, col, block -> dim0, dim1`` (Triton's ``tensorMemoryToLinearLayout`` /
``tensorMemoryScalesToLinearLayout``); a zero row basis among rows 32/64 means duplication across
addressable blocks, a zero elsewhere means an unused (padding) row or column.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from linear_layouts.layouts.base import (
    Bases,
    check_bool,
    check_cga_layout,
    check_int,
    check_int_tuple,
    check_shape,
    ensure_layout_not_larger_than,
    freeze_fields,
    is_power_of_two,
    make_cga_layout,
)
from linear_layouts.layouts.shared import shape_per_cta
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.layouts.ttgir_text import CGA_KEYS, bare_entries, bases_text, cga_bases, cga_text, fields
from linear_layouts.layouts.registry import LayoutKind, Space, register

__all__ = ["TensorMemoryLayout", "TensorMemoryScalesLayout"]

_DIMS = ["dim0", "dim1"]


def _column_stride(col_stride: int, fp4_padded: bool) -> int:
    """The TMEM columns one element spans: 2 for ``fp4_padded``, else ``col_stride``.

    A two-CTA ``blockM = 64`` tile moves its last column basis to the rows, so it needs
    ``min(blockN, columns per CTA) * column_stride >= 2``: ``(64, 1)`` with ``col_stride = 4`` moves a
    zero (stride) basis, and ``(64, 1)`` with ``col_stride = 1`` has none to move.

    >>> _column_stride(1, True), _column_stride(4, False)
    (2, 4)
    """
    return 2 if fp4_padded else col_stride


@dataclass(frozen=True)
class TensorMemoryLayout:
    """TMEM layout of an MMAv5 accumulator / operand: ``block`` = (M, N) elements per CTA block,
    M in {64, 128}; ``col_stride`` 32-bit columns per element (1 packed, 32/bitwidth unpacked).

    >>> L = TensorMemoryLayout((128, 64), 1).to_linear([128, 64])
    >>> L.bases["row"][-1], L.bases["col"][-1]
    ([64, 0], [0, 32])
    """

    block: tuple[int, int]
    col_stride: int
    cga_layout: Bases = field(default_factory=tuple)
    two_ctas: bool = False
    fp4_padded: bool = False

    def __post_init__(self) -> None:
        block = check_int_tuple("block", self.block, length=2, minimum=1)
        if block[0] not in (64, 128):
            raise LayoutError(f"block[0] (blockM) must be 64 or 128, got {block[0]}")
        if not is_power_of_two(block[1]) or block[1] > 512:
            raise LayoutError(f"block[1] (blockN) must be a power of two <= 512, got {block[1]}")
        col_stride = check_int("col_stride", self.col_stride)
        if col_stride not in (1, 2, 4):
            raise LayoutError(f"col_stride must be 1, 2 or 4, got {col_stride}")
        cga = check_cga_layout("cga_layout", self.cga_layout, 2)
        two_ctas = check_bool("two_ctas", self.two_ctas)
        fp4_padded = check_bool("fp4_padded", self.fp4_padded)
        if two_ctas and (not cga or cga[0] != (1, 0)):
            raise LayoutError("cga_layout: a two_ctas layout requires the first CGA block basis to be [1, 0]")
        if fp4_padded and col_stride != 1:
            raise LayoutError(f"col_stride must be 1 for an fp4_padded layout, got {col_stride}")
        if two_ctas and block[0] == 64 and block[1] * _column_stride(col_stride, fp4_padded) < 2:
            raise LayoutError(
                "block: a two_ctas layout with blockM = 64 needs blockN * col_stride >= 2 (col_stride 2 when fp4_padded)"
            )
        freeze_fields(self, block=block, col_stride=col_stride, cga_layout=cga, two_ctas=two_ctas,
                      fp4_padded=fp4_padded)

    @property
    def rank(self) -> int:
        """Always 2."""
        return 2

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        """Triton's ``tensorMemoryToLinearLayout``: ``row, col, block -> dim0, dim1``."""
        shape = check_shape(shape, 2)
        per_cta = shape_per_cta(self.cga_layout, shape)
        block_m = self.block[0]
        block_n = min(self.block[1], per_cta[1])
        m64_two_ctas = block_m == 64 and self.two_ctas
        min_rows = 128 if block_m == 128 or (block_m == 64 and not self.two_ctas and per_cta[0] > 64) else 64
        if per_cta[0] < min_rows:
            raise LayoutError(
                f"shape: the rows per CTA ({per_cta[0]}) must be at least the tile's {min_rows} (blockM {block_m})"
            )
        stride = _column_stride(self.col_stride, self.fp4_padded)
        if m64_two_ctas and block_n * stride < 2:
            raise LayoutError(
                "shape: a two_ctas layout with blockM = 64 needs at least 2 columns per CTA times col_stride"
            )
        tile = LinearLayout.zeros_1d(stride, "col", "dim1")
        if block_m == 64 and not self.two_ctas:
            tile = tile * (LinearLayout.identity_1d(16, "row", "dim0") * LinearLayout.identity_1d(block_n, "col", "dim1"))
            bases = tile.bases
            if per_cta[0] > block_m:
                bases["row"].append([64, 0])
            elif per_cta[1] > block_n:
                bases["row"].append([0, block_n])
            else:
                bases["row"].append([0, 0])  # not defined
            bases["row"] += [[16, 0], [32, 0]]
            tile = LinearLayout(bases, _DIMS)
        else:
            tile = tile * (
                LinearLayout.identity_1d(block_m, "row", "dim0") * LinearLayout.identity_1d(block_n, "col", "dim1")
            )
            if m64_two_ctas:  # the transpose of 128 x blockN: the last column bit becomes a row bit
                bases = tile.bases
                bases["row"].append(bases["col"].pop())
                tile = LinearLayout(bases, tile.out_dims, require_surjective=False)
        reps_m = per_cta[0] // tile.out_dim_size("dim0")
        reps_n = per_cta[1] // tile.out_dim_size("dim1")
        if reps_m < 1 or reps_n < 1:  # pragma: no cover - excluded by the checks above
            raise LayoutError(f"shape {list(shape)} is smaller than the TMEM tile")
        tile = tile * LinearLayout.identity_1d(reps_m, "col", "dim0") * LinearLayout.identity_1d(reps_n, "col", "dim1")
        return tile * make_cga_layout(self.cga_layout, 2)


@dataclass(frozen=True)
class TensorMemoryScalesLayout:
    """TMEM layout of MMAv5 block scales (``tcgen05.mma`` scale factors, 1X): 32 rows x 4 columns
    broadcast over the 4 row groups, then two 32-row halves side by side, repeated by columns.

    >>> TensorMemoryScalesLayout().to_linear([128, 8]).bases["col"]
    [[0, 1], [0, 2], [32, 0], [64, 0], [0, 4]]
    """

    cga_layout: Bases = field(default_factory=tuple)

    def __post_init__(self) -> None:
        freeze_fields(self, cga_layout=check_cga_layout("cga_layout", self.cga_layout, 2))

    @property
    def rank(self) -> int:
        """Always 2."""
        return 2

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        """Triton's ``tensorMemoryScalesToLinearLayout``: ``row, col, block -> dim0, dim1``."""
        shape = check_shape(shape, 2)
        per_cta = shape_per_cta(self.cga_layout, shape)
        tile = (
            LinearLayout.identity_1d(32, "row", "dim0")
            * LinearLayout.zeros_1d(4, "row", "dim0")
            * LinearLayout.identity_1d(4, "col", "dim1")
            * LinearLayout.identity_1d(2, "col", "dim0")
        )
        reps_m = -(-per_cta[0] // tile.out_dim_size("dim0"))
        reps_n = -(-per_cta[1] // tile.out_dim_size("dim1"))
        tile = tile * (LinearLayout.identity_1d(reps_m, "col", "dim0") * LinearLayout.identity_1d(reps_n, "col", "dim1"))
        tile = tile * LinearLayout.identity_1d(1, "block", "dim0")
        tile = ensure_layout_not_larger_than(tile, dict(zip(_DIMS, per_cta)))
        return tile * make_cga_layout(self.cga_layout, 2)


# --------------------------------------------------------------------------------------------------
# their kinds: #ttng.tensor_memory_encoding, #ttng.tensor_memory_scales_encoding (gl.nvidia.blackwell)
# --------------------------------------------------------------------------------------------------


def _parse_tensor_memory(body: dict) -> TensorMemoryLayout:
    b = fields(body, "tensor_memory_encoding", ("blockM", "blockN"),
               ("colStride", "unpacked", "twoCTAs", "fp4Padded", *CGA_KEYS))
    if "colStride" in b:
        col_stride = b["colStride"]
    elif b.get("unpacked", False):
        raise LayoutError("'unpacked = true' (older Triton) does not say the column stride (32 / bitwidth)")
    else:
        col_stride = 1
    return TensorMemoryLayout((b["blockM"], b["blockN"]), col_stride, cga_bases(b, 2), b.get("twoCTAs", False),
                              b.get("fp4Padded", False))


def _format_tensor_memory(layout: TensorMemoryLayout) -> str:
    text = (f"#ttng.tensor_memory_encoding<blockM = {layout.block[0]}, blockN = {layout.block[1]}, "
            f"colStride = {layout.col_stride}{cga_text(layout.cga_layout)}")
    if layout.two_ctas:
        text += ", twoCTAs = true"
    if layout.fp4_padded:
        text += ", fp4Padded = true"
    return text + ">"


def _parse_scales(body: dict) -> TensorMemoryScalesLayout:
    b = fields(body, "tensor_memory_scales_encoding", (), CGA_KEYS)
    return TensorMemoryScalesLayout(cga_bases(b, 2))


def _format_scales(layout: TensorMemoryScalesLayout) -> str:
    cga = f"CGALayout = {bases_text(layout.cga_layout)}" if layout.cga_layout else ""
    return f"#ttng.tensor_memory_scales_encoding<{cga}>"


register(LayoutKind(TensorMemoryLayout, Space.TENSOR_MEMORY, "ttng.tensor_memory_encoding", _parse_tensor_memory,
                    _format_tensor_memory, read_body=bare_entries, gluon_module="gl.nvidia.blackwell", rank=1))
register(LayoutKind(TensorMemoryScalesLayout, Space.TENSOR_MEMORY, "ttng.tensor_memory_scales_encoding", _parse_scales,
                    _format_scales, read_body=bare_entries, gluon_module="gl.nvidia.blackwell", rank=0))
