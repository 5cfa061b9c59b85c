"""A grid picture as plain text (``linear-layouts show --format grid``): the SVG / PNG picture's cells,
labels, warp boundaries and replicated marks, for a terminal.

Each cell prints its label lines joined by ``:`` (``T5:r1``; ``--label`` picks them as for the pictures),
a replicated cell every owner joined by ``/`` and a ``*`` (``T0:r0/T64:r0*``, as Triton's text prints
``T0:0|T64:0``; beyond two, the first and ``+k`` when all would not fit the width), ``-`` for a cell nobody holds. A warp boundary is a ``|`` between two cells of different warps and a line of ``-`` under the
cells whose lower neighbour is in another warp (``+`` where boundaries cross).
"""

from __future__ import annotations

import numpy as np

from linear_layouts.core.arguments import checked
from linear_layouts.present.viz.grid import GridPicture, abbreviate_owners
from linear_layouts.present.viz.text import wrap_text

__all__ = ["grid_text"]


@checked
def grid_text(picture: GridPicture, *, max_width: int | None = None) -> str:
    """The picture as text, its first columns that fit ``max_width`` characters (``None``: all of them).

    >>> from linear_layouts import LinearLayout
    >>> from linear_layouts.present.viz.grid import distributed_grid
    >>> L = LinearLayout({"lane": [[0, 1]], "warp": [[1, 0]], "register": [[0, 0]]}, ["dim0", "dim1"])
    >>> print(grid_text(distributed_grid(L, label="thread")), end="")
    label: T = thread (lane + 2·warp)
         0   1
      0  T0* T1*
         -------
      1  T2* T3*
    <BLANKLINE>
    |, ---: boundary between warps; *: replicated, held by every owner listed (a/b)
    """
    every = picture.owners or ((),) * len(picture.labels)

    def texts(most: int | None) -> list[str]:
        return [("/".join(abbreviate_owners(words, most) if most else words) if words else ":".join(lines))
                + ("*" if rep else "") if lines else "-"
                for lines, words, rep in zip(picture.labels, every, picture.replicated.tolist())]

    names = max(map(len, picture.row_names)) + 2
    margin = names + 2
    cells = texts(None)
    width = max(max(map(len, cells)), len(str(picture.columns - 1)))
    abbreviated = max_width is not None and margin + picture.columns * (width + 1) - 1 > max_width and \
        any(len(words) > 2 for words in every)
    if abbreviated:  # all owners do not fit: the first and +k
        cells = texts(2)
        width = max(max(map(len, cells)), len(str(picture.columns - 1)))
    shown = picture.columns
    if max_width is not None:
        shown = max(1, min(shown, (max_width - margin + 1) // (width + 1)))
    groups = (picture.groups.reshape(picture.rows, picture.columns) if picture.groups is not None
              else np.zeros((picture.rows, picture.columns), dtype=np.int64))
    grid = [[cells[r * picture.columns + c] for c in range(shown)] for r in range(picture.rows)]
    key = picture.subtitle.split(" · ")[-1].replace("colour and label: ", "label: ") if picture.subtitle else ""
    lines = [key] if key else []
    lines.append(" " * margin + " ".join(f"{c:<{width}}" for c in range(shown)).rstrip())
    for r in range(picture.rows):
        row = f"{picture.row_names[r]:>{names}}  " + grid[r][0].ljust(width)
        for c in range(1, shown):
            row += ("|" if groups[r, c] != groups[r, c - 1] else " ") + grid[r][c].ljust(width)
        lines.append(row.rstrip())
        if r + 1 < picture.rows:
            below = groups[r, :shown] != groups[r + 1, :shown]
            if below.any():
                rule = "".join(("-" * width if below[c] else " " * width)
                               + ("" if c + 1 == shown else
                                  "+" if groups[r, c] != groups[r, c + 1] or groups[r + 1, c] != groups[r + 1, c + 1]
                                  else "-" if below[c] and below[c + 1] else " ")
                               for c in range(shown))
                lines.append((" " * margin + rule).rstrip())
    notes = []
    if shown < picture.columns:
        notes.append(f"(columns 0-{shown - 1} of {picture.columns} shown; --wide shows all)")
    keys = []
    if picture.groups is not None and len(np.unique(picture.groups)) > 1:
        keys.append("|, ---: boundary between warps")
    if picture.replicated.any():
        keys.append("*: replicated, held by every owner listed (a/b" + (", +k: k more; --wide lists all)"
                    if abbreviated else ")"))
    if keys:
        notes.append("; ".join(keys))
    return "\n".join(lines) + "\n" + "".join("\n" + wrap_text(n, max_width) for n in notes) + ("\n" if notes else "")
