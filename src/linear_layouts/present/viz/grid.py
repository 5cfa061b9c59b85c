"""What a grid picture of a layout shows, decided once for every renderer (SVG, PNG).

A :class:`GridPicture` is the tensor (or shared memory) as rows × columns of cells: each cell's fill
colour, its label (one or two short lines), its tooltip, whether it is *replicated* (held by several
(thread, register) pairs: broadcast data), and a group number — the renderers draw a thick line wherever
two neighbouring cells belong to different groups (warps). A title, a subtitle, the axis names and a
legend complete it. :mod:`linear_layouts.present.viz.svg` and :mod:`linear_layouts.present.viz.png` only draw it.

* :func:`distributed_grid` — who holds each element; ``label`` picks what the cells say:
  ``"auto"`` (``T`` thread over ``r`` register), ``"thread"``, ``"lane"``, ``"register"`` or ``"warp"``.
* :func:`shared_grid` — where each element lives in shared memory: the tensor coloured and labelled by
  bank (``view="logical"``), or memory itself, one 128-byte row of the 32 banks per line, each slot
  labelled with the element it stores (``view="physical"``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from linear_layouts.core.arguments import checked
from linear_layouts.core.element_type import DTypeLike
from linear_layouts.core.errors import LayoutError
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import MAX_PICTURE_ELEMENTS, quote
from linear_layouts.present.viz.colors import EMPTY_COLOR, bank_color, thread_color
from linear_layouts.present.viz.model import NUM_BANKS, grid_shape, ownership, placement
from linear_layouts.present.viz.model import owners as owners_of
from linear_layouts.present.viz.text import counted

__all__ = ["GridPicture", "LegendEntry", "distributed_grid", "shared_grid", "LABELS", "VIEWS"]

LABELS = ("auto", "thread", "lane", "register", "warp")
VIEWS = ("logical", "physical")


@dataclass(frozen=True)
class LegendEntry:
    """One legend line: ``kind`` is ``"swatches"`` (colours with names), ``"boundary"`` (a thick line),
    ``"mark"`` (the replicated-cell corner mark) or ``"empty"`` (the colour of cells nobody fills)."""

    kind: str
    text: str
    colors: tuple[str, ...] = ()
    names: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class GridPicture:
    """Cells in row-major order (``rows * columns`` of them) and what goes around them."""

    title: str
    subtitle: str
    rows: int
    columns: int
    row_names: tuple[str, ...]
    row_caption: str
    column_caption: str
    fills: tuple[str, ...]
    labels: tuple[tuple[str, ...], ...]
    tooltips: tuple[str, ...]
    attributes: tuple[dict[str, int], ...]
    replicated: np.ndarray
    groups: np.ndarray | None
    legend: tuple[LegendEntry, ...]
    #: per cell of a replicated element: every owner in the label's words (``T0:r0``, ``T32:r0``), Triton's
    #: order, each once; () for the other cells (and for shared grids)
    owners: tuple[tuple[str, ...], ...] = ()

    @property
    def longest_label(self) -> int:
        """Characters in the longest label line (1 when no cell has a label)."""
        return max((len(line) for lines in self.labels for line in lines), default=1) or 1

    @property
    def label_lines(self) -> int:
        """Lines in the tallest label."""
        return max((len(lines) for lines in self.labels), default=1) or 1


def _row_names(rows: int, shape: tuple[int, ...]) -> tuple[str, ...]:
    if len(shape) <= 2:
        return tuple(str(r) for r in range(rows))
    return tuple(",".join(str(int(i)) for i in np.unravel_index(r, shape[:-1])) for r in range(rows))


def _cell_label(label: str, thread: int, lane: int, warp: int, register: int) -> tuple[str, ...]:
    if label == "auto":
        return f"T{thread}", f"r{register}"
    return {"thread": (f"T{thread}",), "lane": (f"L{lane}",), "register": (f"r{register}",),
            "warp": (f"W{warp}",)}[label]


def _owner_words(label: str, held: tuple[tuple[int, int, int, int], ...], lanes: int) -> tuple[str, ...]:
    """Every owner ``(block, warp, lane, register)`` of a cell in the label's words, each once, in order."""
    words = (":".join(_cell_label(label, lane + warp * lanes, lane, warp, reg)) for _, warp, lane, reg in held)
    return tuple(dict.fromkeys(words))


def abbreviate_owners(words: tuple[str, ...], most: int) -> tuple[str, ...]:
    """At most ``most`` owners: the first ``most - 1`` and ``+k`` for the ``k`` others (all when they fit).

    >>> abbreviate_owners(("T0:r0", "T4:r0", "T8:r0"), 2)
    ('T0:r0', '+2')
    """
    return words if len(words) <= most else words[:most - 1] + (f"+{len(words) - most + 1}",)


_LABEL_KEY = {
    "auto": "label: T = thread (lane + {lanes}·warp) over r = register",
    "thread": "label: T = thread (lane + {lanes}·warp)",
    "lane": "label: L = lane",
    "register": "label: r = register",
    "warp": "label: W = warp",
}


@checked
def distributed_grid(layout: LinearLayout, *, label: str = "auto", title: str | None = None,
                     max_elements: int = MAX_PICTURE_ELEMENTS) -> GridPicture:
    """Who holds each element of a distributed layout ``(register, lane, warp, block) -> tensor``.

    Each cell shows its owner (smallest block, warp, lane, register), coloured by lane (hue) and warp
    (shade); a replicated cell is marked and names its owners in Triton's order, one a line (the first
    and ``+k`` beyond two; ``owners`` has them all); thick lines separate warps (and blocks).

    >>> L = LinearLayout({"register": [[1]], "lane": [[2], [0]]}, {"dim0": 4})
    >>> g = distributed_grid(L); g.labels[:2], g.replicated.tolist()
    ((('T0:r0', 'T2:r0'), ('T0:r1', 'T2:r1')), [True, True, True, True])
    """
    if label not in LABELS:
        raise LayoutError(f"label: must be one of {', '.join(LABELS)}; got {quote(label)}")
    own = ownership(layout, max_elements=max_elements)
    rows, columns = grid_shape(own.shape)
    coords = list(zip(*(c.tolist() for c in np.unravel_index(np.arange(rows * columns), own.shape))))
    owners = list(zip(own.lane.tolist(), own.warp.tolist(), own.thread.tolist(), own.register.tolist(),
                      own.block.tolist(), own.copies.tolist()))
    colour_of = {key: thread_color(*key) for key in {(lane, warp % 2) for lane, warp, *_ in owners if lane >= 0}}
    fills = tuple(colour_of[(lane, warp % 2)] if lane >= 0 else EMPTY_COLOR for lane, warp, *_ in owners)
    labels = tuple(_cell_label(label, thread, lane, warp, reg) if lane >= 0 else ()
                   for lane, warp, thread, reg, _, _ in owners)
    replicated = own.copies > 1
    every: tuple[tuple[str, ...], ...] = ()
    held = owners_of(layout, max_elements=max_elements) if replicated.any() else ()
    if held:  # a replicated cell names every owner (two lines: the first and +k beyond two)
        every = tuple(_owner_words(label, h, own.num_lanes) if len(h) > 1 else () for h in held)
        labels = tuple(abbreviate_owners(words, 2) if len(words) > 1 else lines for words, lines in zip(every, labels))
    tips = tuple(f"{c}: T{thread}:{reg} (block {block}, warp {warp}, lane {lane}, register {reg})"
                 + (f", replicated: held by {copies} (thread, register) pairs: "
                    + "|".join(f"T{l + w * own.num_lanes}:{r}" for _, w, l, r in held[e]) if copies > 1 else "")
                 if lane >= 0 else f"{c}: held by no thread"
                 for e, (c, (lane, warp, thread, reg, block, copies)) in enumerate(zip(coords, owners)))
    attributes = tuple({"lane": lane, "warp": warp, "register": reg, "thread": thread} if lane >= 0 else {}
                       for lane, warp, thread, reg, _, _ in owners)
    blocks = f" × {own.num_blocks} blocks" if own.num_blocks > 1 else ""
    subtitle = (f"{counted(own.num_registers, 'register')} × {counted(own.num_lanes, 'lane')} × "
                f"{counted(own.num_warps, 'warp')}{blocks} · "
                + _LABEL_KEY[label].format(lanes=own.num_lanes))
    lanes_shown = min(own.num_lanes, 64)
    legend = [LegendEntry("swatches", "colour: lane (hue); odd warps darker",
                          tuple(thread_color(t, 0) for t in range(lanes_shown)),
                          tuple(str(t) for t in range(lanes_shown)))]
    if own.num_warps * own.num_blocks > 1:
        legend.append(LegendEntry("boundary", "thick line: boundary between warps" + (" and blocks" if blocks else "")))
    if replicated.any():
        most = int(own.copies.max())
        legend.append(LegendEntry("mark", f"corner mark: replicated (broadcast) element, held by up to {most} "
                                          "(thread, register) pairs; the cell names them (+k: k more)"))
    if (own.copies == 0).any():
        legend.append(LegendEntry("empty", "grey: held by no thread", (EMPTY_COLOR,)))
    return GridPicture(title or f"distributed layout {list(own.shape)}", subtitle, rows, columns,
                       _row_names(rows, own.shape), "", "", fills, labels, tips, attributes, replicated,
                       (own.warp + own.block * own.num_warps).reshape(rows, columns),
                       tuple(legend), every)


def _bank_legend(element_bitwidth: int) -> LegendEntry:
    return LegendEntry("swatches", f"colour: bank (4-byte words, {element_bitwidth}-bit elements)",
                       tuple(bank_color(b) for b in range(NUM_BANKS)), tuple(str(b) for b in range(NUM_BANKS)))


@checked
def shared_grid(layout: LinearLayout, dtype: DTypeLike, *, view: str = "logical",
                title: str | None = None, max_elements: int = MAX_PICTURE_ELEMENTS) -> GridPicture:
    """Where each element (of ``dtype``) of a shared layout ``(offset, block) -> tensor`` lives: its bank.

    ``view="logical"``: the tensor grid, each element coloured and labelled with its bank.
    ``view="physical"``: one row per 128-byte segment (all 32 banks), one column per element slot, each
    slot coloured by its bank and labelled with the element it holds (row index over column index).

    >>> L = LinearLayout({"offset": [[0, 1], [1, 0]]}, {"dim0": 2, "dim1": 2})
    >>> shared_grid(L, 32).labels, shared_grid(L, 32, view="physical").labels
    ((('0',), ('1',), ('2',), ('3',)), (('0', '0'), ('0', '1'), ('1', '0'), ('1', '1')))
    """
    if view not in VIEWS:
        raise LayoutError(f"view: must be 'logical' or 'physical', got {quote(view)}")
    place = placement(layout, dtype, max_elements=max_elements)
    element_bitwidth = place.element_bitwidth
    total = len(place.offset)
    name = title or f"shared layout {list(place.shape)}"
    fills, labels, tips, attributes = [], [], [], []
    banks, offsets = place.bank.tolist(), place.offset.tolist()
    colour_of = {b: bank_color(b) for b in range(-1, NUM_BANKS)}
    coords = list(zip(*(c.tolist() for c in np.unravel_index(np.arange(total), place.shape))))
    if view == "logical":
        rows, columns = grid_shape(place.shape)
        fills = [colour_of[b] for b in banks]
        labels = [(str(b),) if b >= 0 else () for b in banks]
        tips = [f"{c}: offset {o}, bank {b}" if b >= 0 else f"{c}: not stored" for c, o, b in zip(coords, offsets, banks)]
        attributes = [{"bank": b} for b in banks]
        subtitle = f"{element_bitwidth}-bit elements · the tensor; colour and label: the bank of each element"
        row_names, row_caption, column_caption = _row_names(rows, place.shape), "", ""
    else:
        columns = min(place.elements_per_row, total)
        rows = (total + columns - 1) // columns
        by_offset = {o: e for e, (o, b) in enumerate(zip(offsets, place.block.tolist())) if o >= 0 and b == 0}
        for slot in range(rows * columns):
            e = by_offset.get(slot)
            if e is None:
                fills.append(EMPTY_COLOR)
                labels.append(())
                tips.append(f"offset {slot}: empty")
                attributes.append({})
                continue
            c, bank = coords[e], banks[e]
            fills.append(colour_of[bank])
            labels.append((",".join(map(str, c[:-1])), str(c[-1])) if len(c) > 1 else (str(c[0]),))
            tips.append(f"offset {slot}, bank {bank}: element {c}")
            attributes.append({"bank": bank})
        subtitle = (f"{element_bitwidth}-bit elements · shared memory: one 128-byte row of the 32 banks per line; "
                    "label: the element stored there (row over column)")
        row_names = tuple(str(r) for r in range(rows))
        row_caption, column_caption = "segment", "slot"
    return GridPicture(name, subtitle, rows, columns, row_names, row_caption, column_caption, tuple(fills),
                       tuple(labels), tuple(tips), tuple(attributes), np.zeros(rows * columns, dtype=bool), None,
                       (_bank_legend(element_bitwidth),))
