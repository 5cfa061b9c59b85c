"""SVG pictures of layouts: distributed (who holds what), shared (which bank), bank hits per step, matrix.

Every function returns an SVG document as a string (no dependencies). Cells carry a ``<title>`` tooltip
with the full story (coordinates, thread, register, offset, bank); the visible label is kept short so a
128×128 tile stays legible: the register number (distributed) or the bank (shared).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

import numpy as np

from linear_layouts.element_type import DTypeLike
from linear_layouts.errors import LayoutError
from linear_layouts.layout import LinearLayout
from linear_layouts.limits import MAX_PICTURE_ELEMENTS, quote
from linear_layouts.viz.colors import (CONFLICT_COLOR, EMPTY_COLOR, bank_color, text_color,
                                       thread_color)
from linear_layouts.viz.model import NUM_BANKS, grid_shape, ownership, placement

__all__ = ["distributed_svg", "shared_svg", "bank_hits_svg", "matrix_svg", "BankStep", "default_cell_size"]

_FONT = "font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\""


def default_cell_size(rows: int, columns: int) -> int:
    """Cell edge in pixels: 32 for small tiles, 16 for 128 columns (so the picture stays ≤ ~2100 px).

    >>> default_cell_size(16, 32), default_cell_size(128, 128)
    (32, 16)
    """
    return int(max(12, min(32, 2048 // max(rows, columns, 1))))


def _unravel(index: int, shape: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(index, tuple(shape)))


def _header(width: int, height: int, title: str) -> list[str]:
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" {_FONT}>',
            f"<title>{escape(title)}</title>",
            f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
            f'<text x="8" y="20" font-size="15" font-weight="bold">{escape(title)}</text>']


def _axes(parts: list[str], rows: int, columns: int, cell: int, x0: int, y0: int, shape: Sequence[int]) -> None:
    """Column indices on top, row indices on the left (every k-th so the numbers never overlap)."""
    font = max(7, min(12, cell * 0.55))
    step_c = max(1, int(np.ceil(font * 2.2 / cell)))
    step_r = max(1, int(np.ceil(font * 1.3 / cell)))
    for c in range(0, columns, step_c):
        parts.append(f'<text x="{x0 + c * cell + cell / 2:.1f}" y="{y0 - 4}" font-size="{font:.1f}" '
                     f'text-anchor="middle" fill="#555">{c}</text>')
    for r in range(0, rows, step_r):
        label = r if len(shape) <= 2 else ",".join(map(str, _unravel(r, shape[:-1])))
        parts.append(f'<text x="{x0 - 4}" y="{y0 + r * cell + cell / 2 + font / 3:.1f}" font-size="{font:.1f}" '
                     f'text-anchor="end" fill="#555">{label}</text>')


def _cell(parts: list[str], x: float, y: float, cell: int, fill: str, label: str, tooltip: str,
          font: float, css_class: str = "cell", extra: str = "") -> None:
    parts.append(f'<g class="{css_class}"{extra}><title>{escape(tooltip)}</title>'
                 f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{fill}" stroke="#ffffff" '
                 f'stroke-width="0.5"/>')
    if label:
        parts.append(f'<text x="{x + cell / 2:.1f}" y="{y + cell / 2 + font * 0.36:.1f}" font-size="{font:.1f}" '
                     f'text-anchor="middle" fill="{text_color(fill) if fill != EMPTY_COLOR else "#999"}">'
                     f'{escape(label)}</text>')
    parts.append("</g>")


def _boundaries(parts: list[str], group: np.ndarray, cell: int, x0: int, y0: int, color: str, width: float) -> None:
    """Thick lines between neighbouring cells whose ``group`` (rows × columns) differs."""
    rows, columns = group.shape
    segments = []
    for r in range(rows):
        for c in range(columns):
            if c + 1 < columns and group[r, c] != group[r, c + 1]:
                x = x0 + (c + 1) * cell
                segments.append(f"M{x} {y0 + r * cell}v{cell}")
            if r + 1 < rows and group[r, c] != group[r + 1, c]:
                y = y0 + (r + 1) * cell
                segments.append(f"M{x0 + c * cell} {y}h{cell}")
    if segments:
        parts.append(f'<path d="{"".join(segments)}" stroke="{color}" stroke-width="{width}" fill="none"/>')


def distributed_svg(layout: LinearLayout, *, title: str | None = None, cell: int | None = None,
                    max_elements: int = MAX_PICTURE_ELEMENTS) -> str:
    """The tensor as a grid, each cell coloured by its owner's lane (hue) and warp (lightness) and
    labelled with the register that holds it; thick lines separate warps. Broadcast elements show their
    first owner (the tooltip lists the number of copies). Larger than ``max_elements`` elements
    (or hardware indices): LayoutError (``limits.MAX_PICTURE_ELEMENTS``).

    >>> svg = distributed_svg(LinearLayout({"register": [[1]], "lane": [[2]]}, ["dim0"]))
    >>> svg.count('class="cell"')
    4
    """
    own = ownership(layout, max_elements=max_elements)
    rows, columns = grid_shape(own.shape)
    cell = cell or default_cell_size(rows, columns)
    font = cell * (0.5 if own.num_registers <= 100 else 0.42)
    x0, y0 = 56, 64
    legend_h = 70
    width = max(x0 + columns * cell + 16, 560)
    height = y0 + rows * cell + legend_h
    name = title or f"distributed layout {list(own.shape)}"
    parts = _header(width, height, name)
    parts.append(f'<text x="8" y="38" font-size="11" fill="#444">{own.num_registers} registers × {own.num_lanes} '
                 f'lanes × {own.num_warps} warps × {own.num_blocks} blocks · colour: lane (hue), warp (lightness) '
                 f'· label: register</text>')
    _axes(parts, rows, columns, cell, x0, y0, own.shape)
    for e in range(rows * columns):
        r, c = divmod(e, columns)
        lane, warp = int(own.lane[e]), int(own.warp[e])
        coords = _unravel(e, own.shape)
        if lane < 0:
            _cell(parts, x0 + c * cell, y0 + r * cell, cell, EMPTY_COLOR, "", f"{coords}: not held", font)
            continue
        reg, block, copies = int(own.register[e]), int(own.block[e]), int(own.copies[e])
        thread = lane + warp * own.num_lanes
        tip = f"{coords}: T{thread}:{reg} (block {block}, warp {warp}, lane {lane}, register {reg})"
        if copies > 1:
            tip += f", held by {copies} (thread, register) pairs"
        _cell(parts, x0 + c * cell, y0 + r * cell, cell, thread_color(lane, warp, own.num_lanes), str(reg), tip,
              font, extra=f' data-lane="{lane}" data-warp="{warp}" data-register="{reg}"')
    group = (own.warp + own.block * own.num_warps).reshape(rows, columns)
    _boundaries(parts, group, cell, x0, y0, "#222222", max(1.5, cell / 10))
    _thread_legend(parts, x0, y0 + rows * cell + 18, own.num_lanes, min(own.num_warps, 4))
    parts.append("</svg>")
    return "\n".join(parts)


def _thread_legend(parts: list[str], x: int, y: int, num_lanes: int, num_warps: int) -> None:
    swatch = 14
    parts.append(f'<text x="{x}" y="{y + 10}" font-size="11">lane</text>')
    for lane in range(num_lanes):
        fill = thread_color(lane, 0, num_lanes)
        parts.append(f'<rect x="{x + 40 + lane * swatch}" y="{y}" width="{swatch}" height="{swatch}" fill="{fill}"/>')
        if lane % 4 == 0:
            parts.append(f'<text x="{x + 40 + lane * swatch + 1}" y="{y + 26}" font-size="9">{lane}</text>')
    y += 34
    parts.append(f'<text x="{x}" y="{y + 10}" font-size="11">warp</text>')
    for warp in range(max(1, num_warps)):
        fill = thread_color(0, warp, num_lanes)
        parts.append(f'<rect x="{x + 40 + warp * 3 * swatch}" y="{y}" width="{swatch}" height="{swatch}" fill="{fill}"/>'
                     f'<text x="{x + 40 + warp * 3 * swatch + swatch + 3}" y="{y + 11}" font-size="10">'
                     f'{warp}{" (cycles)" if warp == 3 else ""}</text>')


def shared_svg(layout: LinearLayout, dtype: DTypeLike, *, view: str = "logical", title: str | None = None,
               cell: int | None = None, max_elements: int = MAX_PICTURE_ELEMENTS) -> str:
    """Shared memory, coloured by bank. ``view="logical"``: the tensor grid, each element labelled with
    its bank. ``view="physical"``: rows are 128-byte segments, columns the element slots of the banks,
    each slot labelled with the tensor column it holds (tooltip: full coordinate). Larger than
    ``max_elements`` elements: LayoutError (``limits.MAX_PICTURE_ELEMENTS``).

    >>> L = LinearLayout({"offset": [[0, 1], [1, 0]]}, {"dim0": 2, "dim1": 2})
    >>> shared_svg(L, 32).count('class="cell"')
    4
    """
    if view not in ("logical", "physical"):
        raise LayoutError(f"view: must be 'logical' or 'physical', got {quote(view)}")
    place = placement(layout, dtype, max_elements=max_elements)
    total = len(place.offset)
    if view == "logical":
        rows, columns = grid_shape(place.shape)
    else:
        columns = min(place.elements_per_row, total)
        rows = (total + columns - 1) // columns
    cell = cell or default_cell_size(rows, columns)
    font = cell * 0.5
    x0, y0 = 56, 64
    width = max(x0 + columns * cell + 16, 560)
    height = y0 + rows * cell + 60
    name = title or f"shared layout {list(place.shape)} · {place.element_bitwidth}-bit · {view} view"
    parts = _header(width, height, name)
    subtitle = ("cells: tensor elements · colour and label: bank" if view == "logical" else
                "rows: 128-byte segments · columns: slots across the 32 banks · label: tensor column")
    parts.append(f'<text x="8" y="38" font-size="11" fill="#444">{subtitle}</text>')
    if view == "logical":
        _axes(parts, rows, columns, cell, x0, y0, place.shape)
        for e in range(total):
            r, c = divmod(e, columns)
            coords = _unravel(e, place.shape)
            bank = int(place.bank[e])
            tip = f"{coords}: offset {int(place.offset[e])}, bank {bank}" if bank >= 0 else f"{coords}: not stored"
            _cell(parts, x0 + c * cell, y0 + r * cell, cell, bank_color(bank), str(bank) if bank >= 0 else "", tip,
                  font, extra=f' data-bank="{bank}"')
    else:
        parts.append(f'<text x="{x0 - 4}" y="{y0 - 20}" font-size="10" text-anchor="end" fill="#555">segment</text>')
        _axes(parts, rows, columns, cell, x0, y0, (rows, columns))
        by_offset = {int(o): e for e, o in enumerate(place.offset) if o >= 0 and place.block[e] == 0}
        for slot in range(rows * columns):
            r, c = divmod(slot, columns)
            e = by_offset.get(slot)
            if e is None:
                _cell(parts, x0 + c * cell, y0 + r * cell, cell, EMPTY_COLOR, "", f"offset {slot}: empty", font)
                continue
            coords = _unravel(e, place.shape)
            bank = int(place.bank[e])
            _cell(parts, x0 + c * cell, y0 + r * cell, cell, bank_color(bank), str(coords[-1]),
                  f"offset {slot}, bank {bank}: element {coords}", font, extra=f' data-bank="{bank}"')
    legend_y = y0 + rows * cell + 18
    parts.append(f'<text x="{x0 - 40}" y="{legend_y + 10}" font-size="11">bank</text>')
    for bank in range(NUM_BANKS):
        parts.append(f'<rect x="{x0 + bank * 14}" y="{legend_y}" width="14" height="14" fill="{bank_color(bank)}"/>')
        if bank % 4 == 0:
            parts.append(f'<text x="{x0 + bank * 14 + 1}" y="{legend_y + 26}" font-size="9">{bank}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


@dataclass(frozen=True)
class BankStep:
    """One access step (one instruction's phase) of a warp: per bank, the lanes and distinct words hitting it."""

    label: str
    lanes_per_bank: tuple[int, ...]
    words_per_bank: tuple[int, ...]
    wavefronts: int


def bank_hits_svg(steps: Sequence[BankStep], *, title: str = "bank hits per step", max_steps: int = 64) -> str:
    """Small multiples, one bar chart per step: bar height = lanes landing on the bank, red when the bank
    serves more than one distinct word (a conflict), with the step's wavefront count.

    >>> s = BankStep("r = 0", (1,) * 32, (1,) * 32, 1)
    >>> bank_hits_svg([s]).count('class="bar"')
    32
    """
    steps = list(steps)
    shown = steps[:max_steps]
    bar, chart_h = 6, 64
    chart_w = NUM_BANKS * bar + 30
    per_row = max(1, min(4, len(shown)))
    rows = (len(shown) + per_row - 1) // per_row
    width = max(per_row * (chart_w + 24) + 24, 420)
    height = 56 + rows * (chart_h + 44) + 10
    parts = _header(width, height, title)
    total = sum(s.wavefronts for s in steps)
    note = f" (first {len(shown)} of {len(steps)} shown)" if len(shown) < len(steps) else ""
    parts.append(f'<text x="8" y="38" font-size="11" fill="#444">{len(steps)} steps · {total} wavefronts in all'
                 f'{note} · bar: lanes on the bank · red: more than one word in the bank</text>')
    peak = max([max(s.lanes_per_bank) for s in shown] + [1])
    for i, step in enumerate(shown):
        gx = 24 + (i % per_row) * (chart_w + 24)
        gy = 56 + (i // per_row) * (chart_h + 44)
        parts.append(f'<g class="step" data-wavefronts="{step.wavefronts}">')
        parts.append(f'<text x="{gx}" y="{gy + 12}" font-size="11">{escape(step.label)}: '
                     f'{step.wavefronts} wavefront{"s" if step.wavefronts != 1 else ""}</text>')
        base = gy + 18 + chart_h
        for bank in range(NUM_BANKS):
            lanes, words = step.lanes_per_bank[bank], step.words_per_bank[bank]
            h = chart_h * lanes / peak
            fill = CONFLICT_COLOR if words > 1 else (bank_color(bank) if lanes else EMPTY_COLOR)
            parts.append(f'<rect class="bar" x="{gx + bank * bar}" y="{base - h:.1f}" width="{bar - 1}" '
                         f'height="{h:.1f}" fill="{fill}"><title>bank {bank}: {lanes} lanes, {words} words</title></rect>')
        parts.append(f'<line x1="{gx}" y1="{base}" x2="{gx + NUM_BANKS * bar}" y2="{base}" stroke="#333"/>')
        parts.append(f'<text x="{gx}" y="{base + 12}" font-size="8" fill="#555">0</text>'
                     f'<text x="{gx + 31 * bar}" y="{base + 12}" font-size="8" fill="#555">31</text>')
        parts.append("</g>")
    parts.append("</svg>")
    return "\n".join(parts)


def matrix_svg(layout: LinearLayout, *, title: str | None = None, cell: int = 18,
               max_elements: int = MAX_PICTURE_ELEMENTS) -> str:
    """The layout's F2 matrix: columns are input bits (grouped by in dim), rows output bits (grouped by
    out dim), LSB first; a dark cell is a 1. More than ``max_elements`` cells: LayoutError.

    >>> matrix_svg(LinearLayout.identity_1d(4, "lane", "dim0")).count('class="one"')
    2
    """
    if not isinstance(layout, LinearLayout):
        raise LayoutError(f"layout: expected a LinearLayout, got {type(layout).__name__}")
    matrix = layout.to_matrix(max_elements=max_elements)
    n_rows, n_cols = matrix.shape
    x0, y0 = 90, 80
    width = max(x0 + n_cols * cell + 20, 360)
    height = y0 + n_rows * cell + 20
    parts = _header(width, height, title or "layout matrix over F2")
    col = 0
    for dim, size in layout.in_dims.items():
        bits = size.bit_length() - 1
        for i in range(bits):
            parts.append(f'<text x="{x0 + (col + i) * cell + cell / 2}" y="{y0 - 6}" font-size="9" '
                         f'text-anchor="middle">{i}</text>')
        if bits:
            parts.append(f'<text x="{x0 + col * cell}" y="{y0 - 22}" font-size="11">{escape(dim)}</text>')
            parts.append(f'<line x1="{x0 + col * cell}" y1="{y0 - 18}" x2="{x0 + col * cell}" y2="{y0 + n_rows * cell}" '
                         f'stroke="#999"/>')
        col += bits
    row = 0
    for dim, size in layout.out_dims.items():
        bits = size.bit_length() - 1
        for i in range(bits):
            parts.append(f'<text x="{x0 - 6}" y="{y0 + (row + i) * cell + cell * 0.7}" font-size="9" '
                         f'text-anchor="end">{escape(dim)}[{i}]</text>')
        if bits:
            parts.append(f'<line x1="{x0}" y1="{y0 + row * cell}" x2="{x0 + n_cols * cell}" y2="{y0 + row * cell}" '
                         f'stroke="#999"/>')
        row += bits
    for r in range(n_rows):
        for c in range(n_cols):
            one = bool(matrix[r, c])
            parts.append(f'<rect class="{"one" if one else "zero"}" x="{x0 + c * cell + 1}" y="{y0 + r * cell + 1}" '
                         f'width="{cell - 2}" height="{cell - 2}" fill="{"#1f3b73" if one else "#eef1f6"}"/>')
    parts.append("</svg>")
    return "\n".join(parts)
