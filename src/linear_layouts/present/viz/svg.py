"""SVG pictures of layouts: distributed (who holds what), shared (which bank), bank hits per step, matrix.

Every function returns an SVG document as a string (no dependencies). What the distributed and shared
pictures show is decided in :mod:`linear_layouts.present.viz.grid`; here it is only drawn: cells with a short
label (thread over register, or the bank), a ``<title>`` tooltip with the full story (coordinates,
thread, lane, warp, register, offset, bank), thick lines between warps, a corner mark on replicated
elements, and a legend. Cells stay large enough for their labels (20 px on a 128×128 tile).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import re
from html import escape as _escape

import numpy as np

from linear_layouts.core.arguments import checked
from linear_layouts.core.element_type import DTypeLike
from linear_layouts.core.errors import not_a_layout
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import MAX_PICTURE_ELEMENTS
from linear_layouts.present.viz.colors import BOUNDARY_COLOR, CONFLICT_COLOR, EMPTY_COLOR, bank_color, text_color
from linear_layouts.present.viz.grid import GridPicture, LegendEntry, distributed_grid, shared_grid
from linear_layouts.present.viz.model import NUM_BANKS

__all__ = ["distributed_svg", "shared_svg", "grid_svg", "bank_hits_svg", "matrix_svg", "BankStep", "cell_size"]

_FONT = "font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\""
_CHAR = 0.6          # width of a monospace character, in ems
_LINE = 1.2          # line height, in ems


#: characters XML 1.0 forbids in a document (C0 controls but tab, newline and carriage return; lone surrogates;
#: U+FFFE and U+FFFF): one of them in a title or a dim name would make the whole SVG unreadable
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def escape(text: str) -> str:
    """``text`` as SVG character data or attribute value: ``&``, ``<``, ``>`` and quotes escaped, and the
    characters XML forbids replaced by U+FFFD, so that no user text (a title, a dim name) can end an
    element or make the document ill-formed.

    >>> escape('<a href="x">\x01')
    '&lt;a href=&quot;x&quot;&gt;\ufffd'
    """
    return _NOT_XML.sub("\ufffd", _escape(text))


def cell_size(rows: int, columns: int, longest_label: int = 4, label_lines: int = 2) -> int:
    """Cell edge in pixels: 40 for tiles up to 64 across, down to what keeps a ``longest_label``-character,
    ``label_lines``-line label at 7 px or more (21 px for ``T127`` over ``r15`` on a 128×128 tile).

    >>> cell_size(16, 32), cell_size(128, 128)
    (40, 21)
    """
    wanted = 2560 // max(rows, columns, 1)
    needed = int(np.ceil(max(7 * _CHAR * longest_label + 4, 7 * _LINE * label_lines + 4)))
    return int(max(needed, min(40, wanted)))


def _label_font(cell: int, longest: int, lines: int) -> float:
    """The largest font (≤ 11 px) whose ``lines`` × ``longest`` characters fit inside a cell, 2 px clear."""
    return min(11.0, (cell - 4) / (_CHAR * max(1, longest)), (cell - 4) / (_LINE * max(1, lines)))


def _mark_size(cell: int, font: float, longest: int, lines: int) -> float:
    """The replicated mark's side: the corner the label leaves free (glyphs start ~0.2 em below a line's
    top), at least 3 px, at most 30% of the cell."""
    free = max((cell - lines * _LINE * font) / 2 + 0.2 * font, (cell - longest * _CHAR * font) / 2)
    return max(3.0, min(0.3 * cell, free))


def _unravel(index: int, shape: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(index, tuple(shape)))


def _title_width(title: str) -> int:
    """Pixels the title (15 px bold monospace) needs, with the margins."""
    return int(len(title) * _CHAR * 15 + 20)


def _header(width: int, height: int, title: str) -> list[str]:
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" {_FONT}>',
            f"<title>{escape(title)}</title>",
            f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
            f'<text x="8" y="20" font-size="15" font-weight="bold">{escape(title)}</text>']


def _wrap(text: str, width: float, font: float) -> list[str]:
    """``text`` broken at spaces so that no line is wider than ``width`` pixels at ``font`` px."""
    chars = max(10, int(width / (_CHAR * font)))
    lines: list[str] = []
    for word in text.split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= chars:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def _boundaries(parts: list[str], group: np.ndarray, cell: int, x0: int, y0: int, color: str, width: float) -> None:
    """Thick lines between neighbouring cells whose ``group`` (rows × columns) differs."""
    rows, columns = group.shape
    segments = []
    right = np.argwhere(group[:, :-1] != group[:, 1:])
    down = np.argwhere(group[:-1, :] != group[1:, :])
    for r, c in right:
        segments.append(f"M{x0 + (c + 1) * cell} {y0 + r * cell}v{cell}")
    for r, c in down:
        segments.append(f"M{x0 + c * cell} {y0 + (r + 1) * cell}h{cell}")
    if segments:
        parts.append(f'<path class="boundary" d="{"".join(segments)}" stroke="{color}" stroke-width="{width}" '
                     'fill="none" stroke-linecap="square"/>')


def _mark(x: float, y: float, cell: float, m: float, css: str = "replicated") -> str:
    """The replicated-cell mark: a dark right triangle of side ``m`` in the cell's top-right corner."""
    return f'<path class="{css}" d="M{x + cell - m:.1f} {y:.1f}h{m:.1f}v{m:.1f}z" fill="{BOUNDARY_COLOR}"/>'


def _legend(parts: list[str], legend: Sequence[LegendEntry], x: int, y: int, width: int) -> int:
    """Draws the legend from ``y`` down, texts wrapped to ``width``; returns the y below it."""
    swatch = 14
    for entry in legend:
        if entry.kind == "swatches":
            parts.append(f'<text x="{x}" y="{y + 10}" font-size="11">{escape(entry.text)}</text>')
            y += 16
            step = max(1, int(np.ceil((max(len(n) for n in entry.names) * _CHAR * 9 + 6) / swatch)))
            for k, fill in enumerate(entry.colors):
                parts.append(f'<rect x="{x + k * swatch}" y="{y}" width="{swatch}" height="{swatch}" fill="{fill}"/>')
                if k % step == 0:
                    parts.append(f'<text x="{x + k * swatch + 1}" y="{y + swatch + 10}" font-size="9">'
                                 f'{escape(entry.names[k])}</text>')
            y += swatch + 18
            continue
        if entry.kind == "boundary":
            parts.append(f'<path d="M{x} {y + 7}h{2 * swatch}" stroke="{BOUNDARY_COLOR}" stroke-width="3"/>')
        elif entry.kind == "mark":
            parts.append(f'<rect x="{x}" y="{y}" width="{swatch}" height="{swatch}" fill="#dddddd"/>'
                         + _mark(x, y, swatch, swatch / 2, css="legend-mark"))
        else:
            parts.append(f'<rect x="{x}" y="{y}" width="{swatch}" height="{swatch}" fill="{entry.colors[0]}" '
                         'stroke="#bbbbbb"/>')
        for k, line in enumerate(_wrap(entry.text, width - 2 * swatch - 8, 11)):
            parts.append(f'<text x="{x + 2 * swatch + 8}" y="{y + 11 + 14 * k}" font-size="11">{escape(line)}</text>')
        y += 14 * len(_wrap(entry.text, width - 2 * swatch - 8, 11)) + 8
    return y


def _legend_height(legend: Sequence[LegendEntry], width: int) -> int:
    return sum(16 + 14 + 18 if e.kind == "swatches" else 14 * len(_wrap(e.text, width - 36, 11)) + 8
               for e in legend)


def grid_svg(picture: GridPicture, *, cell: int | None = None) -> str:
    """An SVG document drawing ``picture``: cells with their labels and ``<title>`` tooltips (and the
    ``data-*`` attributes of each cell), replicated marks, group boundaries, axes and the legend.

    >>> from linear_layouts.present.viz.grid import distributed_grid
    >>> grid_svg(distributed_grid(LinearLayout({"lane": [[1]]}, ["dim0"]))).count('class="cell"')
    2
    """
    rows, columns = picture.rows, picture.columns
    longest, lines = picture.longest_label, picture.label_lines
    cell = cell or cell_size(rows, columns, longest, lines)
    font = _label_font(cell, longest, lines)
    mark = _mark_size(cell, font, longest, lines)
    axis_font = float(max(8.0, min(12.0, cell * 0.45)))
    corner = f"{picture.row_caption} \\ {picture.column_caption}" if picture.row_caption else ""
    name_width = max([len(n) for n in picture.row_names] + [1]) * _CHAR * axis_font + 10
    x0 = int(max(40, name_width, len(corner) * _CHAR * 10 + 14))
    width = int(max(x0 + columns * cell + 16, 560, 44 + 14 * max((len(e.colors) for e in picture.legend), default=0),
                    _title_width(picture.title)))
    subtitle = _wrap(picture.subtitle, width - 16, 11)
    axis_y = 38 + 14 * len(subtitle) + 6
    y0 = int(axis_y + 6)
    height = y0 + rows * cell + 16 + _legend_height(picture.legend, width - 16) + 8
    parts = _header(width, height, picture.title)
    for k, line in enumerate(subtitle):
        parts.append(f'<text x="8" y="{38 + 14 * k}" font-size="11" fill="#444">{escape(line)}</text>')
    if corner:
        parts.append(f'<text class="caption" x="8" y="{axis_y}" font-size="10" fill="#555">{escape(corner)}</text>')
    step_c = max(1, int(np.ceil((len(str(columns - 1)) * _CHAR * axis_font + 4) / cell)))
    step_r = max(1, int(np.ceil(axis_font * 1.2 / cell)))
    for c in range(0, columns, step_c):
        parts.append(f'<text x="{x0 + c * cell + cell / 2:.1f}" y="{axis_y}" font-size="{axis_font:.1f}" '
                     f'text-anchor="middle" fill="#555">{c}</text>')
    for r in range(0, rows, step_r):
        parts.append(f'<text x="{x0 - 4}" y="{y0 + r * cell + cell / 2 + axis_font / 3:.1f}" '
                     f'font-size="{axis_font:.1f}" text-anchor="end" fill="#555">{escape(picture.row_names[r])}</text>')
    # The labels' font is set once on the group of cells; each cell carries only what differs.
    parts.append(f'<g class="cells" font-size="{font:.1f}" text-anchor="middle">')
    for e in range(rows * columns):
        r, c = divmod(e, columns)
        x, y = x0 + c * cell, y0 + r * cell
        fill = picture.fills[e]
        data = "".join(f' data-{k}="{v}"' for k, v in picture.attributes[e].items())
        parts.append(f'<g class="cell"{data}><title>{escape(picture.tooltips[e])}</title>'
                     f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{fill}"/>')
        label = picture.labels[e]
        ink = "" if text_color(fill) == "#000000" else f' fill="{text_color(fill)}"'
        for k, line in enumerate(label):
            baseline = y + cell / 2 + font * (_LINE * (k - (len(label) - 1) / 2) + 0.36)
            parts.append(f'<text x="{x + cell / 2:.1f}" y="{baseline:.1f}"{ink}>{escape(line)}</text>')
        if picture.replicated[e]:
            parts.append(_mark(x, y, cell, mark))
        parts.append("</g>")
    parts.append("</g>")
    grid = "".join(f"M{x0 + c * cell} {y0}v{rows * cell}" for c in range(1, columns))
    grid += "".join(f"M{x0} {y0 + r * cell}h{columns * cell}" for r in range(1, rows))
    if grid:
        parts.append(f'<path class="grid" d="{grid}" stroke="#ffffff" stroke-width="1" fill="none"/>')
    if picture.groups is not None:
        _boundaries(parts, picture.groups, cell, x0, y0, BOUNDARY_COLOR, max(2.0, cell / 9))
    _legend(parts, picture.legend, 8, y0 + rows * cell + 16, width - 16)
    parts.append("</svg>")
    return "\n".join(parts)


@checked
def distributed_svg(layout: LinearLayout, *, title: str | None = None, cell: int | None = None,
                    label: str = "auto", max_elements: int = MAX_PICTURE_ELEMENTS) -> str:
    """Who holds each element (:func:`~linear_layouts.present.viz.grid.distributed_grid`) as SVG: by default each
    cell names its thread (``T``) over its register (``r``); colour by lane and warp; thick lines between
    warps; a corner mark on replicated elements. Larger than ``max_elements`` elements (or hardware
    indices): LayoutError (``limits.MAX_PICTURE_ELEMENTS``).

    >>> svg = distributed_svg(LinearLayout({"register": [[1]], "lane": [[2]]}, ["dim0"]))
    >>> svg.count('class="cell"'), svg.count(">T1<")
    (4, 2)
    """
    return grid_svg(distributed_grid(layout, label=label, title=title, max_elements=max_elements), cell=cell)


@checked
def shared_svg(layout: LinearLayout, dtype: DTypeLike, *, view: str = "logical", title: str | None = None,
               cell: int | None = None, max_elements: int = MAX_PICTURE_ELEMENTS) -> str:
    """Shared memory holding elements of ``dtype``, coloured by bank (:func:`~linear_layouts.present.viz.grid.shared_grid`)
    as SVG.
    ``view="logical"``: the tensor grid, each element labelled with its bank. ``view="physical"``: rows
    are 128-byte segments, columns the element slots of the banks, each slot labelled with the element
    it holds (tooltip: the full coordinate). Larger than ``max_elements`` elements: LayoutError
    (``limits.MAX_PICTURE_ELEMENTS``).

    >>> L = LinearLayout({"offset": [[0, 1], [1, 0]]}, {"dim0": 2, "dim1": 2})
    >>> shared_svg(L, 32).count('class="cell"')
    4
    """
    return grid_svg(shared_grid(layout, dtype, view=view, title=title, max_elements=max_elements),
                    cell=cell)


@dataclass(frozen=True)
class BankStep:
    """One access step (one instruction's phase) of a warp: per bank, the lanes and distinct words hitting it."""

    label: str
    lanes_per_bank: tuple[int, ...]
    words_per_bank: tuple[int, ...]
    wavefronts: int


@checked
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
    captions = [f'{s.label}: {s.wavefronts} wavefront{"s" if s.wavefronts != 1 else ""}' for s in shown]
    column_w = int(max([chart_w] + [len(c) * _CHAR * 11 for c in captions])) + 24
    per_row = max(1, min(4, len(shown)))
    rows = (len(shown) + per_row - 1) // per_row
    note = f" (first {len(shown)} of {len(steps)} shown)" if len(shown) < len(steps) else ""
    total = sum(s.wavefronts for s in steps)
    subtitle = (f"{len(steps)} steps · {total} wavefronts in all{note} · bar: lanes on the bank · "
                "red: more than one word in the bank")
    width = int(max(per_row * column_w + 24, 420, _title_width(title), len(subtitle) * _CHAR * 11 + 16))
    height = 56 + rows * (chart_h + 44) + 10
    parts = _header(width, height, title)
    parts.append(f'<text x="8" y="38" font-size="11" fill="#444">{escape(subtitle)}</text>')
    peak = max([max(s.lanes_per_bank) for s in shown] + [1])
    for i, step in enumerate(shown):
        gx = 24 + (i % per_row) * column_w
        gy = 56 + (i // per_row) * (chart_h + 44)
        parts.append(f'<g class="step" data-wavefronts="{step.wavefronts}">')
        parts.append(f'<text x="{gx}" y="{gy + 12}" font-size="11">{escape(captions[i])}</text>')
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


@checked
def matrix_svg(layout: LinearLayout, *, title: str | None = None, cell: int = 18,
               max_elements: int = MAX_PICTURE_ELEMENTS) -> str:
    """The layout's F2 matrix: columns are input bits (grouped by in dim), rows output bits (grouped by
    out dim), LSB first; a dark cell is a 1. More than ``max_elements`` cells: LayoutError.

    >>> matrix_svg(LinearLayout.identity_1d(4, "lane", "dim0")).count('class="one"')
    2
    """
    if not isinstance(layout, LinearLayout):
        raise not_a_layout(layout, "layout")
    matrix = layout.to_matrix(max_elements=max_elements)
    n_rows, n_cols = matrix.shape
    x0, y0 = 90, 80
    title = title or "layout matrix over F2"
    width = max(x0 + n_cols * cell + 20, 360, _title_width(title))
    height = y0 + n_rows * cell + 20
    parts = _header(width, height, title)
    col = 0
    for dim, size in layout.in_dims.items():
        bits = size.bit_length() - 1
        for i in range(bits):
            parts.append(f'<text x="{x0 + (col + i) * cell + cell / 2}" y="{y0 - 6}" font-size="9" '
                         f'text-anchor="middle">{i}</text>')
        if bits:
            short = {"register": "r", "lane": "t", "warp": "w", "block": "b", "offset": "o"}.get(dim, dim[:1])
            name = dim if len(dim) * _CHAR * 11 <= bits * cell - 4 else short     # the paper's letter if narrow
            parts.append(f'<text x="{x0 + col * cell}" y="{y0 - 22}" font-size="11">{escape(name)}</text>')
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
