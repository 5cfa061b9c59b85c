"""The palette shared by every renderer (SVG, PNG, HTML, the explorer page).

Threads: hue by lane, stepped by the golden angle (137.5°) so that neighbouring lanes get far-apart hues,
and a lighter or darker shade for even and odd warps (the pictures also draw the warp boundaries and
write the thread in each cell). Banks: as in seed 004's bank scope, hue by ``bank // 2`` and odd banks
darker.
"""

from __future__ import annotations

import colorsys

__all__ = ["thread_color", "bank_color", "text_color", "hsl", "EMPTY_COLOR", "CONFLICT_COLOR", "OK_COLOR",
           "BOUNDARY_COLOR", "GOLDEN_ANGLE"]

EMPTY_COLOR = "#f2f2f2"
CONFLICT_COLOR = "#d62728"
OK_COLOR = "#2ca02c"
BOUNDARY_COLOR = "#202020"
GOLDEN_ANGLE = 137.50776405003785
_WARP_LIGHTNESS = (0.80, 0.66)


def hsl(hue: float, saturation: float, lightness: float) -> str:
    """``#rrggbb`` of an HSL colour (hue in degrees, the others in [0, 1]).

    >>> hsl(0, 1, 0.5)
    '#ff0000'
    """
    r, g, b = colorsys.hls_to_rgb((hue % 360) / 360, lightness, saturation)
    return "#{:02x}{:02x}{:02x}".format(round(r * 255), round(g * 255), round(b * 255))


def thread_color(lane: int, warp: int) -> str:
    """Colour of a cell owned by ``lane`` of ``warp``: hue = 137.5° · lane (mod 360), lighter for even warps.

    >>> thread_color(0, 0), thread_color(1, 0), thread_color(0, 1)
    ('#f0a8a8', '#a8f0bd', '#e56c6c')
    """
    if lane < 0:
        return EMPTY_COLOR
    return hsl(GOLDEN_ANGLE * lane, 0.70, _WARP_LIGHTNESS[warp % 2])


def bank_color(bank: int) -> str:
    """Colour of bank ``bank`` (0..31): hue = 22.5° · (bank // 2), odd banks darker.

    >>> bank_color(0), bank_color(1)
    ('#ef8f8f', '#c62a2a')
    """
    if bank < 0:
        return EMPTY_COLOR
    return hsl(22.5 * (bank // 2), 0.65 if bank % 2 else 0.75, 0.47 if bank % 2 else 0.75)


def text_color(background: str) -> str:
    """Black or white, whichever reads better on ``background`` (``#rrggbb``).

    >>> text_color('#000000'), text_color('#ffffff')
    ('#ffffff', '#000000')
    """
    r, g, b = (int(background[i:i + 2], 16) for i in (1, 3, 5))
    luminance = 0.299 * r + 0.587 * g + 0.114 * b
    return "#000000" if luminance > 140 else "#ffffff"
