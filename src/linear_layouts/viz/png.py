"""PNG pictures through matplotlib (the optional ``viz`` extra; imported only when a PNG is asked for).

Same content and palette as the SVG renderers: distributed layouts coloured by lane and warp and
labelled with the register; shared layouts coloured and labelled by bank. The cells and their labels
are rasterized here with NumPy (a small pixel font, crisp at any tile size; a 128×128 tile takes about
a second, where 16k matplotlib text objects take minutes); matplotlib adds the axes and the title.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from linear_layouts.element_type import DTypeLike
from linear_layouts.errors import LayoutError
from linear_layouts.layout import LinearLayout
from linear_layouts.limits import MAX_PICTURE_ELEMENTS
from linear_layouts.viz.colors import EMPTY_COLOR, bank_color, text_color, thread_color
from linear_layouts.viz.model import grid_shape, ownership, placement

__all__ = ["distributed_png", "shared_png", "raster"]

# 3×5 pixel digits, one string of 15 bits (row by row) per digit.
_DIGITS = {
    "0": "111101101101111", "1": "010110010010111", "2": "111001111100111", "3": "111001111001111",
    "4": "101101111001001", "5": "111100111001111", "6": "111100111101111", "7": "111001001001001",
    "8": "111101111101111", "9": "111101111001111",
}
_GLYPHS = {d: np.array([int(b) for b in bits], dtype=bool).reshape(5, 3) for d, bits in _DIGITS.items()}


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:
        raise LayoutError("format: PNG output needs matplotlib (pip install 'linear_layouts[viz]')") from None
    return plt


def _rgb(color: str) -> np.ndarray:
    return np.array([int(color[i:i + 2], 16) for i in (1, 3, 5)], dtype=np.uint8)


def _label_mask(text: str, cell: int, scale: int) -> np.ndarray:
    """A cell-sized boolean mask with the digits ``text`` centred, each font pixel ``scale`` wide."""
    mask = np.zeros((cell, cell), dtype=bool)
    n = len(text)
    width, height = (4 * n - 1) * scale, 5 * scale
    y, x = max(0, (cell - height) // 2), max(0, (cell - width) // 2)
    for k, ch in enumerate(text):
        glyph = np.kron(_GLYPHS[ch], np.ones((scale, scale), dtype=bool))
        region = mask[y:y + height, x + 4 * k * scale:x + 4 * k * scale + 3 * scale]
        region |= glyph[:region.shape[0], :region.shape[1]]
    return mask


def raster(colors: list[str], labels: list[str], rows: int, columns: int, cell: int) -> np.ndarray:
    """An RGB image (uint8, rows·cell × columns·cell): filled cells, 1-pixel white grid, digit labels.

    >>> raster(["#ff0000"], ["7"], 1, 1, 12).shape
    (12, 12, 3)
    """
    image = np.full((rows * cell, columns * cell, 3), 255, dtype=np.uint8)
    longest = max((len(label) for label in labels), default=1)
    scale = max(1, min((cell - 4) // (4 * longest - 1), (cell - 4) // 5))  # one size for every label
    palette: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    masks: dict[str, np.ndarray] = {}
    for index, (color, label) in enumerate(zip(colors, labels)):
        r, c = divmod(index, columns)
        if color not in palette:
            palette[color] = (_rgb(color), _rgb(text_color(color)))
        fill, ink = palette[color]
        block = image[r * cell:(r + 1) * cell, c * cell:(c + 1) * cell]
        block[:-1, :-1] = fill
        if label and label.isdigit():
            if label not in masks:
                masks[label] = _label_mask(label, cell, scale)
            block[masks[label]] = ink
    return image


def _figure(colors: list[str], labels: list[str], rows: int, columns: int, title: str, subtitle: str) -> bytes:
    plt = _pyplot()
    longest = max((len(label) for label in labels), default=1)
    cell = 2 * (4 * longest - 1) + 5 if max(rows, columns) > 32 else 28
    image = raster(colors, labels, rows, columns, cell)
    dpi = 100
    margin_left, margin_top, margin_bottom = 60, 90, 20
    width_px = image.shape[1] + margin_left + 20
    height_px = image.shape[0] + margin_top + margin_bottom
    fig_w = max(width_px, 500)
    fig = plt.figure(figsize=(fig_w / dpi, height_px / dpi), dpi=dpi)
    # figimage places the pixels as they are (an Axes would resample a multi-megapixel image).
    fig.figimage(image, xo=margin_left, yo=margin_bottom, origin="upper")
    top = height_px - margin_top
    for c in range(0, columns, max(1, columns // 16)):
        fig.text((margin_left + c * cell + cell / 2) / fig_w, (top + 6) / height_px, str(c), fontsize=8,
                 ha="center", va="bottom")
    for r in range(0, rows, max(1, rows // 16)):
        fig.text((margin_left - 6) / fig_w, (top - r * cell - cell / 2) / height_px, str(r), fontsize=8,
                 ha="right", va="center")
    fig.text(8 / fig_w, 1 - 22 / height_px, title, fontsize=12, weight="bold")
    fig.text(8 / fig_w, 1 - 42 / height_px, subtitle, fontsize=9, color="#444444")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    plt.close(fig)
    return buffer.getvalue()


def distributed_png(layout: LinearLayout, title: str | None = None, *, max_elements: int = MAX_PICTURE_ELEMENTS) -> bytes:
    """PNG bytes of a distributed layout: colour = lane (hue) and warp (lightness), label = register.

    >>> distributed_png(LinearLayout({"lane": [[1]]}, ["dim0"]))[:4] == b"\\x89PNG"   # doctest: +SKIP
    True
    """
    own = ownership(layout, max_elements=max_elements)
    rows, columns = grid_shape(own.shape)
    colors = [thread_color(int(l), int(w), own.num_lanes) for l, w in zip(own.lane, own.warp)]
    labels = [str(int(r)) if l >= 0 else "" for r, l in zip(own.register, own.lane)]
    return _figure(colors, labels, rows, columns, title or f"distributed layout {list(own.shape)}",
                   f"{own.num_registers} registers × {own.num_lanes} lanes × {own.num_warps} warps · "
                   "colour: lane (hue), warp (lightness) · label: register")


def shared_png(layout: LinearLayout, dtype: DTypeLike, title: str | None = None, *,
               max_elements: int = MAX_PICTURE_ELEMENTS) -> bytes:
    """PNG bytes of a shared layout over the tensor: colour and label = bank of each element."""
    place = placement(layout, dtype, max_elements=max_elements)
    rows, columns = grid_shape(place.shape)
    colors = [bank_color(int(b)) if b >= 0 else EMPTY_COLOR for b in place.bank]
    labels = [str(int(b)) if b >= 0 else "" for b in place.bank]
    return _figure(colors, labels, rows, columns, title or f"shared layout {list(place.shape)}",
                   f"{place.element_bitwidth}-bit elements · colour and label: bank")
