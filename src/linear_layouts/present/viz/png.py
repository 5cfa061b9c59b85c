"""PNG pictures of layouts, drawn with NumPy and written with :mod:`zlib` (no other dependency).

The same pictures as the SVG renderer (:mod:`linear_layouts.present.viz.grid` decides what they show): cells
with their labels (thread over register, or the bank), thick lines between warps, a corner mark on
replicated elements, axes, a title, a subtitle and a legend. Text uses the bitmap fonts of
:mod:`linear_layouts.present.viz.font`. Every step works on whole arrays, so a 128×128 tile (2.6k × 2.8k
pixels) takes a fraction of a second.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence

import numpy as np

from linear_layouts.core.arguments import checked
from linear_layouts.core.element_type import DTypeLike
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import MAX_PICTURE_ELEMENTS
from linear_layouts.present.viz.colors import BOUNDARY_COLOR, text_color
from linear_layouts.present.viz.font import LARGE, SMALL, Font, text_mask, text_width, wrap
from linear_layouts.present.viz.grid import GridPicture, LegendEntry, distributed_grid, shared_grid

__all__ = ["distributed_png", "shared_png", "grid_png", "grid_image", "encode_png", "png_cell_size", "Palette"]



class Palette:
    """Colours by index, for indexed (palette) images: ``index("#rrggbb")`` adds a colour once."""

    def __init__(self) -> None:
        self.colors: list[str] = []
        self._index: dict[str, int] = {}

    def index(self, color: str) -> int:
        if color not in self._index:
            self._index[color] = len(self.colors)
            self.colors.append(color)
        return self._index[color]

    def rgb(self) -> np.ndarray:
        """The colours as a (n × 3) uint8 array."""
        return np.array([[int(c[i:i + 2], 16) for i in (1, 3, 5)] for c in self.colors], dtype=np.uint8).reshape(-1, 3)


def encode_png(indices: np.ndarray, palette: np.ndarray) -> bytes:
    """PNG bytes of an image given as colour indices (height × width) into ``palette`` (n × 3 uint8):
    an 8-bit indexed PNG when n ≤ 256, else 8-bit truecolour. Rows unfiltered, zlib level 6.

    >>> encode_png(np.zeros((1, 1), dtype=np.uint8), np.zeros((1, 3), dtype=np.uint8))[1:4]
    b'PNG'
    """
    height, width = indices.shape
    indexed = len(palette) <= 256
    pixels = indices.astype(np.uint8) if indexed else palette[indices].reshape(height, 3 * width)
    raw = np.zeros((height, 1 + pixels.shape[1]), dtype=np.uint8)   # each row: filter byte 0, then the pixels
    raw[:, 1:] = pixels

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 3 if indexed else 2, 0, 0, 0)
    plte = chunk(b"PLTE", palette.astype(np.uint8).tobytes()) if indexed else b""
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + plte
            + chunk(b"IDAT", zlib.compress(raw.tobytes(), 6)) + chunk(b"IEND", b""))


def png_cell_size(rows: int, columns: int) -> int:
    """Cell edge in pixels: 40 for tiles up to 64 across, 20 for 128 (room for ``T127`` over ``r15``).

    >>> png_cell_size(32, 32), png_cell_size(128, 128)
    (40, 20)
    """
    return int(max(20, min(40, 2560 // max(rows, columns, 1))))


def _label_font(cell: int, longest: int, lines: int) -> tuple[Font, int] | None:
    """The largest (font, scale) whose ``lines`` label lines of ``longest`` characters fit in a cell, with a
    margin of a tenth of the cell (at least 2 pixels) on each side, so neighbouring labels stay apart."""
    margin = 2 * max(2, cell // 10)
    for font, scale in ((LARGE, 2), (SMALL, 2), (LARGE, 1), (SMALL, 1)):
        width = text_width("0" * longest, font, scale)
        height = (font.height * lines + 2 * (lines - 1)) * scale
        if width <= cell - margin and height <= cell - 4:
            return font, scale
    return None


def _line_masks(labels: Sequence[tuple[str, ...]], cell: int, font: Font, scale: int) -> tuple[np.ndarray, int]:
    """The ink of every cell's label (cells × cell × cell, lines centred), built from the distinct lines
    (a 128×128 tile has 16k labels but only a few hundred distinct lines); and the width of the largest
    top-right corner no label touches."""
    line_height = (font.height + 2) * scale
    ink = np.zeros((len(labels), cell, cell), dtype=bool)
    top, side = cell, cell
    for count in sorted({len(label) for label in labels} - {0}):
        first = (cell - (line_height * count - 2 * scale)) // 2
        top = min(top, first)
        cells = [e for e, label in enumerate(labels) if len(label) == count]
        for k in range(count):
            texts = sorted({labels[e][k] for e in cells})
            masks = np.zeros((len(texts), cell, cell), dtype=bool)
            for t, text in enumerate(texts):
                glyphs = text_mask(text, font, scale)
                x, y = max(0, (cell - glyphs.shape[1]) // 2), first + k * line_height
                side = min(side, cell - 1 - (x + glyphs.shape[1]))
                masks[t, y:y + glyphs.shape[0], x:x + glyphs.shape[1]] = glyphs[:cell - y, :cell - x]
            which = {text: t for t, text in enumerate(texts)}
            ink[cells] |= masks[[which[labels[e][k]] for e in cells]]
    return ink, max(top, side) - 1


def _corner(size: int, cell: int) -> np.ndarray:
    """The replicated mark: a right triangle ``size`` pixels on a side in the top-right corner of a cell."""
    mask = np.zeros((cell, cell), dtype=bool)
    mask[:size, cell - 1 - size:cell - 1] = np.tri(size, size, dtype=bool).T
    return mask


def grid_image(picture: GridPicture, cell: int, palette: Palette) -> np.ndarray:
    """The cells of ``picture`` as colour indices into ``palette`` (rows·cell × columns·cell): fills, a
    1-pixel white grid, labels in black or white (whichever reads better), replicated marks, boundaries.

    >>> from linear_layouts.present.viz.grid import distributed_grid
    >>> grid_image(distributed_grid(LinearLayout({"lane": [[1]]}, ["dim0"])), 20, Palette()).shape
    (20, 40)
    """
    rows, columns = picture.rows, picture.columns
    fill = np.array([palette.index(f) for f in picture.fills], dtype=np.int32)
    ink_colour = {f: palette.index(text_color(f)) for f in dict.fromkeys(picture.fills)}   # first-use order: same bytes every run
    text = np.array([ink_colour[f] for f in picture.fills], dtype=np.int32)
    chosen = _label_font(cell, picture.longest_label, picture.label_lines)
    font, scale = chosen or (SMALL, 1)
    ink, free = _line_masks(picture.labels if chosen else [()] * len(picture.labels), cell, font, scale)
    tiles = np.where(ink, text[:, None, None], fill[:, None, None])           # cells × cell × cell
    if picture.replicated.any():
        mark = _corner(max(3, min(int(cell * 0.3), free)), cell)
        tiles[picture.replicated[:, None, None] & mark[None]] = palette.index(BOUNDARY_COLOR)
    white = palette.index("#ffffff")
    tiles[:, -1, :] = white                                                   # the grid lines
    tiles[:, :, -1] = white
    image = tiles.reshape(rows, columns, cell, cell).transpose(0, 2, 1, 3).reshape(rows * cell, columns * cell)
    if picture.groups is not None:
        _draw_boundaries(image, picture.groups, cell, max(2, cell // 10), palette.index(BOUNDARY_COLOR))
    return image


def _draw_boundaries(image: np.ndarray, groups: np.ndarray, cell: int, width: int, colour: int) -> None:
    """Lines ``width`` pixels thick, centred on the edges between cells of different groups."""
    rows, columns = groups.shape
    half = width // 2
    edge = np.zeros((cell, cell), dtype=bool)
    edge[:, cell - half - 1:] = True                       # the right edge, this cell's side
    far = np.zeros((cell, cell), dtype=bool)
    far[:, :width - half - 1] = True                       # the same edge, the neighbour's side
    right = np.zeros((rows, columns), dtype=bool)
    right[:, :-1] = groups[:, :-1] != groups[:, 1:]
    left = np.zeros((rows, columns), dtype=bool)
    left[:, 1:] = right[:, :-1]
    down = np.zeros((rows, columns), dtype=bool)
    down[:-1, :] = groups[:-1, :] != groups[1:, :]
    up = np.zeros((rows, columns), dtype=bool)
    up[1:, :] = down[:-1, :]
    image[np.kron(right, edge) | np.kron(left, far) | np.kron(down, edge.T) | np.kron(up, far.T)] = colour


class _Canvas:
    """An image of palette indices, white at first, with text stamping."""

    def __init__(self, width: int, height: int, palette: Palette) -> None:
        self.palette = palette
        self.image = np.full((height, width), palette.index("#ffffff"), dtype=np.int32)

    def text(self, x: int, y: int, text: str, font: Font = LARGE, scale: int = 1, color: str = "#000000",
             anchor: str = "left") -> None:
        """Stamp ``text`` with its top at ``y``; ``anchor`` left / centre / right at ``x``."""
        ink = text_mask(text, font, scale)
        if anchor == "centre":
            x -= ink.shape[1] // 2
        elif anchor == "right":
            x -= ink.shape[1]
        height, width = self.image.shape
        x0, y0 = max(0, x), max(0, y)
        x1, y1 = min(width, x + ink.shape[1]), min(height, y + ink.shape[0])
        if x1 > x0 and y1 > y0:
            self.image[y0:y1, x0:x1][ink[y0 - y:y1 - y, x0 - x:x1 - x]] = self.palette.index(color)

    def rect(self, x: int, y: int, width: int, height: int, color: str) -> None:
        self.image[y:y + height, x:x + width] = self.palette.index(color)


def _legend_height(legend: Sequence[LegendEntry], scale: int, width: int) -> int:
    line = (LARGE.height + 5) * scale
    return sum(2 * line + 14 * scale + 6 if e.kind == "swatches"
               else line * len(wrap(e.text, width - 36 * scale, LARGE, scale)) + 4 for e in legend)


def _draw_legend(canvas: _Canvas, legend: Sequence[LegendEntry], x: int, y: int, scale: int, width: int) -> None:
    line = (LARGE.height + 5) * scale
    swatch = 14 * scale
    for entry in legend:
        if entry.kind == "swatches":
            canvas.text(x, y, entry.text, scale=scale)
            y += line
            name_width = max(text_width(n, LARGE, scale) for n in entry.names)
            step = max(1, -(-(name_width + 6 * scale) // swatch))
            for k, colour in enumerate(entry.colors):
                canvas.rect(x + k * swatch, y, swatch, swatch, colour)
                if k % step == 0:
                    canvas.text(x + k * swatch + 1, y + swatch + 3 * scale, entry.names[k], scale=scale)
            y += swatch + line + 6
            continue
        icon = (LARGE.height + 1) * scale
        if entry.kind == "boundary":
            canvas.rect(x, y + icon // 2 - scale, 2 * swatch, 3 * scale, BOUNDARY_COLOR)
        elif entry.kind == "mark":
            canvas.rect(x, y, icon, icon, "#dddddd")
            corner = _corner(icon // 2, icon + 1)[:icon, :icon]
            canvas.image[y:y + icon, x:x + icon][corner] = canvas.palette.index(BOUNDARY_COLOR)
        else:
            canvas.rect(x, y, icon, icon, entry.colors[0])
        lines = wrap(entry.text, width - 2 * swatch - 8 * scale, LARGE, scale)
        for k, text in enumerate(lines):
            canvas.text(x + 2 * swatch + 8 * scale, y + k * line, text, scale=scale)
        y += line * len(lines) + 4


def grid_png(picture: GridPicture, *, cell: int | None = None) -> bytes:
    """PNG bytes of ``picture``: :func:`grid_image` with a title, a wrapped subtitle, axes and the legend.

    >>> from linear_layouts.present.viz.grid import distributed_grid
    >>> grid_png(distributed_grid(LinearLayout({"lane": [[1]]}, ["dim0"])))[:4]
    b'\\x89PNG'
    """
    rows, columns = picture.rows, picture.columns
    cell = cell or png_cell_size(rows, columns)
    palette = Palette()
    cells = grid_image(picture, cell, palette)
    scale = 2 if cells.shape[1] >= 1200 else 1                  # text scale: stays readable on big tiles
    line = (LARGE.height + 5) * scale
    axis_font, axis_scale = (LARGE, 1) if cell >= 20 else (SMALL, 1)
    if cell >= 40 and scale == 2:
        axis_scale = 2
    axis_h = (axis_font.height + 4) * axis_scale
    names_w = max(text_width(n, axis_font, axis_scale) for n in picture.row_names)
    corner = f"{picture.row_caption} \\ {picture.column_caption}" if picture.row_caption else ""
    x0 = max(names_w, text_width(corner, LARGE, scale)) + 10 * scale
    swatches_w = max([14 * scale * len(e.colors) for e in picture.legend] + [0])
    width = max(x0 + cells.shape[1] + 10 * scale, swatches_w + 16, 600)
    subtitle = wrap(picture.subtitle, width - 16, LARGE, scale)
    title = wrap(picture.title, width - 16, LARGE, 2 * scale)
    title_h = len(title) * (LARGE.height + 3) * 2 * scale
    axis_y = 8 + title_h + len(subtitle) * line + 6 * scale
    y0 = axis_y + axis_h + 2 * scale
    height = y0 + cells.shape[0] + 12 * scale + _legend_height(picture.legend, scale, width - 16) + 8
    canvas = _Canvas(width, height, palette)
    for k, text in enumerate(title):
        canvas.text(8, 8 + k * (LARGE.height + 3) * 2 * scale, text, scale=2 * scale)
    for k, text in enumerate(subtitle):
        canvas.text(8, 8 + title_h + k * line, text, scale=scale, color="#444444")
    if corner:
        canvas.text(8, axis_y, corner, scale=scale, color="#555555")
    step_c = max(1, -(-(text_width(str(columns - 1), axis_font, axis_scale) + 4) // cell))
    step_r = max(1, -(-(axis_font.height * axis_scale + 2) // cell))
    for c in range(0, columns, step_c):
        canvas.text(x0 + c * cell + cell // 2, axis_y, str(c), axis_font, axis_scale, "#555555", "centre")
    for r in range(0, rows, step_r):
        canvas.text(x0 - 4 * scale, y0 + r * cell + (cell - axis_font.height * axis_scale) // 2,
                    picture.row_names[r], axis_font, axis_scale, "#555555", "right")
    canvas.image[y0:y0 + cells.shape[0], x0:x0 + cells.shape[1]] = cells
    _draw_legend(canvas, picture.legend, 8, y0 + cells.shape[0] + 12 * scale, scale, width - 16)
    return encode_png(canvas.image, palette.rgb())


@checked
def distributed_png(layout: LinearLayout, title: str | None = None, *, label: str = "auto",
                    max_elements: int = MAX_PICTURE_ELEMENTS) -> bytes:
    """PNG bytes of who holds each element (see :func:`~linear_layouts.present.viz.grid.distributed_grid`); larger
    than ``max_elements`` elements: LayoutError (``limits.MAX_PICTURE_ELEMENTS``).

    >>> distributed_png(LinearLayout({"lane": [[1]]}, ["dim0"]))[:4]
    b'\\x89PNG'
    """
    return grid_png(distributed_grid(layout, label=label, title=title, max_elements=max_elements))


@checked
def shared_png(layout: LinearLayout, dtype: DTypeLike, title: str | None = None, *,
               view: str = "logical", max_elements: int = MAX_PICTURE_ELEMENTS) -> bytes:
    """PNG bytes of where each element (of ``dtype``) of a shared layout lives (see :func:`~linear_layouts.present.viz.grid.shared_grid`);
    larger than ``max_elements`` elements: LayoutError (``limits.MAX_PICTURE_ELEMENTS``).

    >>> shared_png(LinearLayout({"offset": [[1]]}, ["dim0"]), 32)[:4]
    b'\\x89PNG'
    """
    return grid_png(shared_grid(layout, dtype, view=view, title=title, max_elements=max_elements))
