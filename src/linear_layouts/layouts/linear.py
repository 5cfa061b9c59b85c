"""Layouts given directly by their bases: ``DistributedLinearLayout`` (Triton's ``#ttg.linear``) and
``SharedLinearLayout`` (``#ttg.shared_linear``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from linear_layouts.layouts.base import (
    Bases,
    DistributedLayout,
    SharedLayout,
    check_bases,
    check_int,
    check_shape,
    ensure_layout_not_larger_than,
    ensure_layout_not_smaller_than,
    freeze_fields,
    is_power_of_two,
    order_from_bases,
    standard_out_dim_names,
)
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.layouts.ttgir_text import AttributeReader, bases_shape, fields, linear_text
from linear_layouts.layouts.registry import LayoutKind, Space, register

__all__ = ["DistributedLinearLayout", "SharedLinearLayout"]


def _check_distributed_bases(name: str, bases: Bases) -> None:
    for i, vector in enumerate(bases):
        nonzero = [x for x in vector if x]
        if len(nonzero) > 1:
            raise LayoutError(f"{name}[{i}] must move at most one dimension (distributed layout), got {list(vector)}")
        if nonzero and not is_power_of_two(nonzero[0]):
            raise LayoutError(f"{name}[{i}] must have a power-of-two entry, got {list(vector)}")


@dataclass(frozen=True)
class DistributedLinearLayout(DistributedLayout):
    """A distributed layout given by its bases for a tensor of ``shape``: the LinearLayout
    ``register, lane, warp, block -> dim0..`` with those bases (it must be surjective onto ``shape``).

    ``to_linear(other_shape)`` grows it (register repeats, in the register order of the bases) or
    shrinks it (zeroing lane / warp / block bases, dropping register bases), as Triton does.

    >>> L = DistributedLinearLayout([[0, 1]], [[0, 2], [1, 0]], [], [], [2, 4])
    >>> L.to_linear([2, 4]).apply({"register": 1, "lane": 3})
    {'dim0': 1, 'dim1': 3}
    """

    reg_bases: Bases
    lane_bases: Bases
    warp_bases: Bases
    block_bases: Bases
    shape: tuple[int, ...]

    def __post_init__(self) -> None:
        shape = check_shape(self.shape)
        rank = len(shape)
        values = {}
        for name in ("reg_bases", "lane_bases", "warp_bases", "block_bases"):
            values[name] = check_bases(name, getattr(self, name), rank)
            _check_distributed_bases(name, values[name])
        freeze_fields(self, shape=shape, **values)
        self.linear_layout()  # surjective onto shape

    @property
    def rank(self) -> int:
        """Number of tensor dims."""
        return len(self.shape)

    def linear_layout(self) -> LinearLayout:
        """The layout as given (out sizes = ``shape``)."""
        names = standard_out_dim_names(self.rank)
        bases = {
            "register": [list(v) for v in self.reg_bases],
            "lane": [list(v) for v in self.lane_bases],
            "warp": [list(v) for v in self.warp_bases],
            "block": [list(v) for v in self.block_bases],
        }
        out_dims = dict(zip(names, self.shape))
        for name, vectors in (("reg_bases", self.reg_bases), ("lane_bases", self.lane_bases),
                              ("warp_bases", self.warp_bases), ("block_bases", self.block_bases)):
            for i, vector in enumerate(vectors):
                for d, x in enumerate(vector):
                    if x >= self.shape[d]:
                        raise LayoutError(f"{name}[{i}] must lie inside shape {list(self.shape)}, got {list(vector)}")
        layout = LinearLayout(bases, out_dims, require_surjective=False)
        if not layout.is_surjective():
            raise LayoutError(f"the bases must be surjective onto shape {list(self.shape)} (every element is held)")
        return layout

    def order(self) -> tuple[int, ...]:
        """Triton's ``LinearEncodingAttr::getOrder``: dims in the order the register bases first move them,
        then the rest in ``rank-1, .., 0`` order."""
        return order_from_bases(self.reg_bases, self.rank)

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        """Triton's ``LinearEncodingAttr::toLinearLayout``: fit the bases to ``shape`` (outs in register order)."""
        shape = check_shape(shape, self.rank)
        names = standard_out_dim_names(self.rank)
        permuted = [names[d] for d in self.order()]
        labeled = {names[d]: shape[d] for d in range(self.rank)}
        layout = self.linear_layout().transpose_outs(permuted)
        layout = ensure_layout_not_smaller_than(layout, labeled)
        layout = ensure_layout_not_larger_than(layout, labeled, broadcast_registers=False)
        return layout.transpose_outs(list(names))


@dataclass(frozen=True)
class SharedLinearLayout(SharedLayout):
    """A shared-memory layout given by its bases: ``offset, block -> dim0..`` (sizes inferred from the
    bases); after removing zero bases it must be bijective. ``alignment`` (bytes) is kept as data.

    >>> SharedLinearLayout([[0, 1], [1, 0], [0, 2]]).to_linear([2, 4]).bases["offset"]
    [[0, 1], [1, 0], [0, 2]]
    """

    offset_bases: Bases
    block_bases: Bases = field(default_factory=tuple)
    alignment: int = 16

    def __post_init__(self) -> None:
        offset = check_bases("offset_bases", self.offset_bases)
        block = check_bases("block_bases", self.block_bases)
        if not offset:
            raise LayoutError("offset_bases must not be empty (Gluon's rule; the rank is the length of a basis)")
        rank = len(offset[0])
        if rank == 0:
            raise LayoutError("offset_bases: each basis must have at least one entry (the rank)")
        offset = check_bases("offset_bases", offset, rank)
        block = check_bases("block_bases", block, rank)
        alignment = check_int("alignment", self.alignment)
        if not is_power_of_two(alignment):
            raise LayoutError(f"alignment must be a power of two, got {alignment}")
        freeze_fields(self, offset_bases=offset, block_bases=block, alignment=alignment)
        self.linear_layout()

    @property
    def rank(self) -> int:
        """Number of tensor dims."""
        return len(self.offset_bases[0])

    def linear_layout(self) -> LinearLayout:
        """The layout of the bases, out sizes inferred; raises unless bijective after dropping zero bases."""
        names = list(standard_out_dim_names(self.rank))
        try:
            layout = LinearLayout(
                {"offset": [list(v) for v in self.offset_bases], "block": [list(v) for v in self.block_bases]},
                names,
            )
        except LayoutError as error:
            raise LayoutError(f"offset_bases/block_bases must be surjective onto their tile: {error}") from None
        nonzero = [v for v in self.offset_bases + self.block_bases if any(v)]
        if len(nonzero) != layout.total_out_dim_size_log2:
            raise LayoutError("offset_bases/block_bases: after removing the zero bases the layout must be bijective")
        return layout

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        """Triton's ``SharedLinearEncodingAttr::toLinearLayout``: ``shape`` must equal the bases' tile."""
        shape = check_shape(shape, self.rank)
        layout = self.linear_layout()
        tile = tuple(layout.out_dims.values())
        if shape != tile:
            raise LayoutError(f"shape must equal the layout's tile {list(tile)} for a SharedLinearLayout, got {list(shape)}")
        return layout


# --------------------------------------------------------------------------------------------------
# their kinds: #ttg.linear, gl.DistributedLinearLayout; #ttg.shared_linear, gl.SharedLinearLayout
# --------------------------------------------------------------------------------------------------


def _parse_distributed(body: dict) -> DistributedLinearLayout:
    b = fields(body, "linear layout", ("register", "lane", "warp", "block"), ())
    return DistributedLinearLayout(b["register"], b["lane"], b["warp"], b["block"], bases_shape(b))


def _format_distributed(layout: DistributedLinearLayout) -> str:
    return "#ttg.linear<{" + linear_text([("register", layout.reg_bases), ("lane", layout.lane_bases),
                                          ("warp", layout.warp_bases), ("block", layout.block_bases)]) + "}>"


def _read_shared_body(reader: AttributeReader) -> tuple[dict, int | None]:
    """``{offset = [..], block = [..]}, alignment = N``."""
    bases = reader.dictionary()
    alignment = None
    if reader.accept(","):
        if reader.name() != "alignment":
            raise reader.fail("expected 'alignment' after the shared_linear bases")
        reader.expect("=")
        alignment = reader.integer()
    return bases, alignment


def _parse_shared(body: tuple[dict, int | None]) -> SharedLinearLayout:
    bases, alignment = body
    b = fields(bases, "shared_linear layout", ("offset",), ("block",))
    if alignment is None:
        raise LayoutError("missing ', alignment = N' after the bases")
    return SharedLinearLayout(b["offset"], b.get("block", []), alignment)


def _format_shared(layout: SharedLinearLayout) -> str:
    pairs = [("offset", layout.offset_bases)] + ([("block", layout.block_bases)] if layout.block_bases else [])
    return f"#ttg.shared_linear<{{{linear_text(pairs)}}}, alignment = {layout.alignment}>"


register(LayoutKind(DistributedLinearLayout, Space.DISTRIBUTED, "ttg.linear", _parse_distributed, _format_distributed,
                    rank=6, general=True))
register(LayoutKind(SharedLinearLayout, Space.SHARED, "ttg.shared_linear", _parse_shared, _format_shared,
                    read_body=_read_shared_body, rank=3, general=True))
