"""Text views of a layout, character for character Triton's ``getLayoutStr``.

* :func:`distributed_view` — for a distributed layout ``(register, lane, warp, block) -> (dim0, ...)``:
  the tensor printed row by row, each element as ``T{thread}:{register}`` (``|``-separated when the
  element is broadcast to several threads), or, from the hardware point of view, each warp's
  registers × lanes with the logical coordinate each one holds.
* :func:`shared_view` — for a shared layout ``(offset, block) -> (dim0, ...)``: the logical
  coordinate stored at each offset, in offset order, or ``Offset: k -> (i,j)`` lines.

Both agree with Triton's ``LinearLayout.get_distributed_view`` / ``get_shared_view``. With
``max_width`` they fit a terminal instead: each row shows its first columns (lanes, for the hardware
view), ends with ``…`` when cut, and a last line says what was left out. :func:`wrap_text` does the same
for prose (the reports), at word boundaries.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import numpy as np

from linear_layouts.core.arguments import checked
from linear_layouts.core.errors import LayoutError, not_a_layout
from linear_layouts.core.layout import LinearLayout
from linear_layouts.core.limits import MAX_PICTURE_ELEMENTS, check_layout_size, quote

DISTRIBUTED_IN_DIMS = ("register", "lane", "warp", "block")
SHARED_IN_DIMS = ("offset", "block")

__all__ = ["counted", "distributed_view", "shared_view", "layout_view", "matrix_text", "owner_table", "table_text",
           "wrap_text", "vectors_text", "is_shared_layout", "DISTRIBUTED_IN_DIMS", "SHARED_IN_DIMS"]


def counted(count: int, noun: str) -> str:
    """``count`` and ``noun``, plural unless the count is 1: ``counted(1, "warp") == "1 warp"``, ``"4 warps"``."""
    return f"{count} {noun}" + ("" if count == 1 else "s")


def is_shared_layout(layout: LinearLayout) -> bool:
    """True when ``layout`` maps shared-memory offsets: its in dims are ``offset`` (and ``block``).

    >>> is_shared_layout(LinearLayout.identity_1d(8, "offset", "dim0"))
    True
    """
    return layout.has_in_dim("offset")


def _check_in_dims(layout: LinearLayout, allowed: Sequence[str], what: str, max_elements: int) -> None:
    if not isinstance(layout, LinearLayout):
        raise not_a_layout(layout, "layout")
    extra = [d for d in layout.in_dim_names if d not in allowed]
    if extra:
        raise LayoutError(f"layout: a {what} layout has in dims among {list(allowed)}; found {extra}")
    if layout.num_out_dims == 0:
        raise LayoutError("layout: needs at least one out dim to print")
    check_layout_size(layout, max_elements, f"text view of the {what} layout")


def _pad(value: int, maximum: int) -> str:
    """``value`` right-aligned to the width of ``maximum`` (Triton's ``paddedString``)."""
    return str(value).rjust(len(str(maximum)))


def _row_major_index(coords: Sequence[np.ndarray], shape: Sequence[int]) -> np.ndarray:
    index = np.zeros_like(coords[0])
    for c, size in zip(coords, shape):
        index = index * size + c
    return index


def _tensor_text(cells: Sequence[str], shape: Sequence[int], separator: str) -> str:
    """Nested-bracket printing of ``cells`` (row-major over ``shape``), as Triton lays it out."""
    rank = len(shape)
    total = len(cells)
    out: list[str] = []
    new_line = True
    for i in range(total):
        indices = np.unravel_index(i, shape)
        opened = 0
        for j in range(rank - 1, -1, -1):
            if indices[j] != 0:
                break
            out.append("[")
            opened += 1
        if new_line:
            out.append(" " * (rank - opened))
            new_line = False
        out.append(cells[i])
        following = np.unravel_index(i + 1, shape) if i + 1 < total else (0,) * rank
        for j in range(rank - 1, -1, -1):
            if following[j] != 0:
                break
            out.append("]")
        if following[-1] == 0:
            out.append("\n")
            new_line = True
        else:
            out.append(separator)
    return "".join(out)


def _shown_columns(cell_width: int, columns: int, separator: str, margin: int, max_width: int | None) -> int:
    """How many ``cell_width``-wide columns (joined by ``separator``, plus ``margin`` characters of
    brackets or labels) fit ``max_width``, keeping room for a ``…`` when some are left out; at least 1."""
    if max_width is None or margin + columns * (cell_width + len(separator)) - len(separator) <= max_width:
        return columns
    return max(1, (max_width - margin - 1) // (cell_width + len(separator)))


def _cut_note(shown: int, total: int, what: str, max_width: int | None) -> str:
    return wrap_text(f"({what} 0-{shown - 1} of {total} shown; --wide shows all)", max_width) + "\n"


def _fit_tensor_text(cells: list[str], shape: list[int], separator: str, max_width: int | None) -> str:
    """:func:`_tensor_text`, keeping of each row only the first columns that fit ``max_width``."""
    columns = shape[-1]
    shown = _shown_columns(max(map(len, cells)), columns, separator, 2 * len(shape), max_width)
    if shown == columns:
        return _tensor_text(cells, shape, separator)
    rows = len(cells) // columns
    kept = [cells[r * columns + c] + (separator + "…" if c == shown - 1 else "")
            for r in range(rows) for c in range(shown)]
    return _tensor_text(kept, shape[:-1] + [shown], separator) + _cut_note(shown, columns, "columns", max_width)


@checked
def vectors_text(vectors: Sequence[Sequence[int]]) -> str:
    """Basis vectors as JSON with no space inside a vector, so :func:`wrap_text` breaks only between them.

    >>> vectors_text([[0, 1], [2, 0]])
    '[[0,1], [2,0]]'
    """
    return "[" + ", ".join("[" + ",".join(str(int(c)) for c in v) + "]" for v in vectors) + "]"


@checked
def wrap_text(text: str, width: int | None) -> str:
    """Every line longer than ``width`` broken at spaces, continuation lines indented two more than
    the line's own indent; ``width=None`` (or a line without spaces to break at) leaves it whole.

    >>> print(wrap_text("  one two three four", 12))
      one two
        three
        four
    """
    if width is None:
        return text
    if width < 1:
        raise LayoutError(f"width must be a positive number of columns (or None), got {width}")
    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        indent = line[:len(line) - len(line.lstrip())]
        out += textwrap.wrap(line, width, subsequent_indent=indent + "  ", break_long_words=False,
                             break_on_hyphens=False) or [line]
    return "\n".join(out)


#: code languages :func:`wrap_code` knows: their line-comment marker and whether a line may break outside
#: brackets (C++ and JSON / MLIR ignore newlines between tokens; Python only inside brackets)
_CODE = {"c": ("//", True), "python": ("#", False), "text": ("", True), "shell": ("#", True)}


def _code_breaks(line: str, language: str) -> tuple[list[tuple[int, int]], int]:
    """The positions of ``line``'s spaces where a newline keeps the code's meaning (outside string
    literals, inside brackets for Python), each with its bracket depth, and where its trailing comment
    starts (``len(line)`` if none)."""
    marker, anywhere = _CODE[language]
    breaks, depth, quote_char, k = [], 0, "", 0
    while k < len(line):
        ch = line[k]
        if quote_char:
            if ch == "\\":
                k += 1
            elif ch == quote_char:
                quote_char = ""
        elif ch in "\"'" and not (language == "c" and ch == "'" and k and line[k - 1].isalnum()):
            quote_char = ch
        elif marker and line.startswith(marker, k):
            return breaks, k
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == " " and (anywhere or depth > 0) and line[:k].strip():
            breaks.append((k, depth))
        k += 1
    return breaks, len(line)


def wrap_code(text: str, width: int | None, language: str = "c") -> str:
    """Every line of code longer than ``width`` broken where a newline keeps its meaning: at a space
    outside string literals (``language="python"``: inside brackets only), the least nested one in the
    line's second half, continuation lines indented four more (``language="shell"``: the broken line ends
    in ``\\``); a trailing ``//`` (``#``) comment continues on comment lines. Preprocessor lines and lines
    with no such space stay whole; ``width=None`` changes nothing.

    >>> print(wrap_code('f(x, "a, b", y);  // one two', 12))
    f(x, "a, b",
        y);
    // one two
    >>> print(wrap_code("L = Blocked([1, 4], [4, 8])", 20, "python"))
    L = Blocked([1, 4],
        [4, 8])
    """
    if width is None:
        return text
    if width < 1:
        raise LayoutError(f"width must be a positive number of columns (or None), got {width}")
    if language not in _CODE:
        raise LayoutError(f"language: one of {', '.join(_CODE)}, got {quote(language)}")
    marker = _CODE[language][0]
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width or (language == "c" and line.lstrip().startswith("#")):
            out.append(line)
            continue
        indent = line[:len(line) - len(line.lstrip())]
        breaks, comment = _code_breaks(line, language)
        code, note = line[:comment].rstrip(), line[comment:]
        if code.strip():
            start, prefix = 0, ""
            room = width - (2 if language == "shell" else 0)   # a shell line ends in " \\"
            while len(prefix) + len(code) - start > width:
                fits = [(b, d) for b, d in breaks if start < b < len(code) and len(prefix) + b - start <= room]
                late = [(d, -b) for b, d in fits if len(prefix) + b - start > room // 2]  # the shallowest late one
                cut = -min(late)[1] if late else fits[-1][0] if fits else next(
                    (b for b, _ in breaks if start < b < len(code)), None)
                if cut is None:
                    break
                out.append(prefix + code[start:cut] + (" \\" if language == "shell" else ""))
                start, prefix = cut + 1, indent + "    "
            out.append(prefix + code[start:])
        if note:  # a comment continues on comment lines (after the code it ended)
            out.append(wrap_text(indent + note, width).replace("\n" + indent + "  ", "\n" + indent + marker + " "))
    return "\n".join(out)


@checked
def distributed_view(layout: LinearLayout, use_hw_point_of_view: bool = False, *,
                     max_elements: int = MAX_PICTURE_ELEMENTS, max_width: int | None = None) -> str:
    """Triton's ``getDistributedLayoutStr``: who holds each element, or what each thread holds.

    Logical view: element e is printed as ``T{lane + warp*lanes}:{register}`` for every hardware
    index with L(index) = e. Hardware view: per warp, one line per register, one ``(i,j)`` per lane.
    Layouts of more than ``max_elements`` elements or inputs are refused (``limits.MAX_PICTURE_ELEMENTS``).
    ``max_width``: fit rows to that many characters (the first columns or lanes, then ``…``).

    >>> L = LinearLayout({"register": [[1]], "lane": [[2]], "warp": [], "block": []}, ["dim0"])
    >>> distributed_view(L)
    '[T0:0, T0:1, T1:0, T1:1]\\n'
    >>> print(distributed_view(L, max_width=22), end="")
    [T0:0, T0:1, T1:0, …]
    (columns 0-2 of 4
      shown; --wide shows
      all)
    """
    _check_in_dims(layout, DISTRIBUTED_IN_DIMS, "distributed", max_elements)
    shape = list(layout.out_dims.values())
    num_regs, num_lanes = layout.in_dim_size("register", missing_ok=True), layout.in_dim_size("lane", missing_ok=True)
    num_warps, num_blocks = layout.in_dim_size("warp", missing_ok=True), layout.in_dim_size("block", missing_ok=True)
    # Hardware indices in Triton's loop order: block, warp, lane, register (register fastest).
    block, warp, lane, reg = np.meshgrid(np.arange(num_blocks), np.arange(num_warps), np.arange(num_lanes),
                                         np.arange(num_regs), indexing="ij")
    inputs = {"register": reg.ravel(), "lane": lane.ravel(), "warp": warp.ravel(), "block": block.ravel()}
    inputs = {d: v for d, v in inputs.items() if layout.has_in_dim(d)}
    outputs = layout.apply_array(inputs)
    coords = [np.asarray(outputs[d]).ravel() for d in layout.out_dim_names]
    block, warp, lane, reg = block.ravel(), warp.ravel(), lane.ravel(), reg.ravel()

    if use_hw_point_of_view:
        thread_text = ["(" + ",".join(_pad(int(c[k]), s) for c, s in zip(coords, shape)) + ")"
                       for k in range(len(reg))]
        lines: list[str] = []
        per_warp = num_lanes * num_regs
        shown = _shown_columns(max(map(len, thread_text)), num_lanes, ", ", 0, max_width)
        for b in range(num_blocks):
            if num_blocks > 1:
                lines.append(f"Block{b}:\n")
            for w in range(num_warps):
                lines.append(f"Warp{w}:\n")
                base = (b * num_warps + w) * per_warp
                for r in range(num_regs):
                    row = [thread_text[base + t * num_regs + r] for t in range(shown)]
                    lines.append(", ".join(row) + (", …" if shown < num_lanes else "") + "\n")
        if shown < num_lanes:
            lines.append(_cut_note(shown, num_lanes, "lanes", max_width))
        return "".join(lines)

    total = int(np.prod(shape))
    cells = [""] * total
    element = _row_major_index(coords, shape)
    thread_max, block_width = num_warps * num_lanes, len(str(num_blocks))
    for k in range(len(reg)):
        b, thread, r = int(block[k]), int(lane[k] + warp[k] * num_lanes), int(reg[k])
        text = f"B{b}:T{thread}:{r}" if num_blocks > 1 else f"T{thread}:{r}"
        width = block_width - len(str(b)) + len(str(thread_max)) + len(str(num_regs))
        padded = " " * (width - len(str(thread)) - len(str(r))) + text
        e = int(element[k])
        cells[e] = padded if not cells[e] else cells[e] + "|" + padded
    return _fit_tensor_text(cells, shape, ", ", max_width)


@checked
def shared_view(layout: LinearLayout, use_hw_point_of_view: bool = False, *,
                max_elements: int = MAX_PICTURE_ELEMENTS, max_width: int | None = None) -> str:
    """Triton's ``getSharedLayoutStr``: the logical element stored at each shared-memory offset.

    Logical view: offsets in order, shaped like the tensor, each as ``(i:j)``. Hardware view:
    ``Offset: k -> (i,j)`` per offset, grouped by block. Layouts of more than ``max_elements``
    elements are refused (``limits.MAX_PICTURE_ELEMENTS``). ``max_width``: fit rows to that many
    characters (the logical view's first columns, then ``…``).

    >>> L = LinearLayout({"offset": [[1], [2]], "block": []}, ["dim0"])
    >>> shared_view(L)
    '[(0),(1),(2),(3)]\\n'
    """
    _check_in_dims(layout, SHARED_IN_DIMS, "shared", max_elements)
    shape = list(layout.out_dims.values())
    total = int(np.prod(shape))
    num_blocks = layout.in_dim_size("block", missing_ok=True)
    block_size = total // num_blocks
    block, offset = np.meshgrid(np.arange(num_blocks), np.arange(block_size), indexing="ij")
    inputs = {"offset": offset.ravel(), "block": block.ravel()}
    inputs = {d: v for d, v in inputs.items() if layout.has_in_dim(d)}
    outputs = layout.apply_array(inputs)
    coords = [np.asarray(outputs[d]).ravel() for d in layout.out_dim_names]
    padded = [[_pad(int(v), s) for v in c] for c, s in zip(coords, shape)]
    count = num_blocks * block_size

    if use_hw_point_of_view:
        lines: list[str] = []
        for b in range(num_blocks):
            lines.append(f"Block: {b}:\n")
            for o in range(block_size):
                k = b * block_size + o
                lines.append(f"Offset: {o} -> (" + ",".join(p[k] for p in padded) + ")\n")
        return "".join(lines)

    cells = ["(" + ":".join(p[k] for p in padded) + ")" for k in range(count)]
    cells += [""] * (total - count)
    return _fit_tensor_text(cells, shape, ",", max_width)


@checked
def layout_view(layout: LinearLayout, use_hw_point_of_view: bool = False, *,
                max_elements: int = MAX_PICTURE_ELEMENTS, max_width: int | None = None) -> str:
    """:func:`shared_view` for shared layouts (in dim ``offset``), else :func:`distributed_view`.

    >>> layout_view(LinearLayout({"offset": [[1]]}, ["dim0"]))
    '[(0),(1)]\\n'
    """
    if isinstance(layout, LinearLayout) and is_shared_layout(layout):
        return shared_view(layout, use_hw_point_of_view, max_elements=max_elements, max_width=max_width)
    return distributed_view(layout, use_hw_point_of_view, max_elements=max_elements, max_width=max_width)


def _bit_labels(sizes: dict[str, int], short: bool) -> list[str]:
    labels = []
    for name, size in sizes.items():
        prefix = {"register": "r", "lane": "t", "warp": "w", "block": "b", "offset": "o"}.get(name, name) if short \
            else name
        labels += [f"{prefix}{i}" for i in range(size.bit_length() - 1)]
    return labels


@checked
def matrix_text(layout: LinearLayout, row_labels: Sequence[str] | None = None, *,
                max_elements: int = MAX_PICTURE_ELEMENTS) -> str:
    """The layout's F2 matrix with labels: one row per output bit (``dim0[0]`` first, LSB first), one
    column per input bit (``r0 r1 .. t0 .. w0 ..``: register, lane (thread), warp, block, offset).
    ``row_labels`` renames the rows (one label per output bit, e.g. the paper's ``j0 .. i3``).
    More than ``max_elements`` matrix entries: LayoutError.

    >>> print(matrix_text(LinearLayout({"lane": [[1], [0]]}, {"dim0": 2})))
            t0 t1
    dim0[0]  1  0
    """
    if not isinstance(layout, LinearLayout):
        raise not_a_layout(layout, "layout")
    columns = _bit_labels(layout.in_dims, short=True)
    rows = [f"{name}[{i}]" for name, size in layout.out_dims.items() for i in range(size.bit_length() - 1)]
    if row_labels is not None:
        if len(row_labels) != len(rows):
            raise LayoutError(f"row_labels: expected {len(rows)} labels (one per output bit), got {len(row_labels)}")
        rows = [str(label) for label in row_labels]
    matrix = layout.to_matrix(max_elements=max_elements)
    width = max([len(c) for c in columns] + [1])
    label_width = max([len(r) for r in rows] + [4])
    lines = [" " * (label_width + 1) + " ".join(c.rjust(width) for c in columns)]
    for label, row in zip(rows, matrix):
        lines.append(label.ljust(label_width + 1) + " ".join(str(int(v)).rjust(width) for v in row))
    return "\n".join(line.rstrip() for line in lines)


@checked
def owner_table(layout: LinearLayout, *, max_elements: int = MAX_PICTURE_ELEMENTS, max_width: int | None = None) -> str:
    """For each element ``(i, j)`` of a 2-D distributed layout, its first owner ``w{warp}t{lane}r{register}``
    (warps, then lanes, then registers in increasing order; ``-`` if none), one tensor row per line.
    Layouts of more than ``max_elements`` elements or inputs are refused (``limits.MAX_PICTURE_ELEMENTS``).

    >>> print(owner_table(LinearLayout({"register": [[0, 1]], "lane": [[1, 0]]}, {"dim0": 2, "dim1": 2})))
               0      1
       0  w0t0r0 w0t0r1
       1  w0t1r0 w0t1r1
    """
    _check_in_dims(layout, DISTRIBUTED_IN_DIMS, "distributed", max_elements)
    if list(layout.out_dims) != ["dim0", "dim1"]:
        raise LayoutError(f"layout: the owner table needs out dims [dim0, dim1], got {list(layout.out_dims)}")
    n_rows, n_cols = layout.out_dims["dim0"], layout.out_dims["dim1"]
    owner: dict[tuple[int, int], str] = {}
    sizes = layout.in_dims
    for w in range(sizes.get("warp", 1)):
        for t in range(sizes.get("lane", 1)):
            for r in range(sizes.get("register", 1)):
                point = {"register": r, "lane": t, "warp": w}
                out = layout.apply({d: v for d, v in point.items() if d in sizes})
                owner.setdefault((out["dim0"], out["dim1"]), f"w{w}t{t}r{r}")
    width = max([len(v) for v in owner.values()] + [1])
    shown = _shown_columns(width, n_cols, " ", 6, max_width)
    more = " …" if shown < n_cols else ""
    head = "      " + " ".join(f"{j:>{width}}" for j in range(shown)) + more
    rows = [head] + [f"{i:>4}  " + " ".join(f"{owner.get((i, j), '-'):>{width}}" for j in range(shown)) + more
                     for i in range(n_rows)]
    note = [_cut_note(shown, n_cols, "columns", max_width).rstrip("\n")] if more else []
    return "\n".join(rows + note)


def table_text(rows: Sequence[Sequence[str]], header: Sequence[str], *, max_width: int | None = None,
               align: str = "right") -> str:
    """A plain-text table: the first column left-aligned, the others right-aligned (``align="left"``: all
    left-aligned), a dashed rule. Wider than ``max_width``: the leading columns that fit stay a table, and
    each row's other columns follow it on indented lines, ``header: value``, wrapped at ``max_width``
    (empty cells left out).

    >>> print(table_text([["a", "1"], ["bb", "22"]], ["name", "n"]))
    name   n
    ----  --
    a      1
    bb    22
    >>> print(table_text([["a", "1", "a longer note"]], ["name", "n", "note"], max_width=17))
    name  n
    ----  -
    a     1
        note: a
          longer note
    """
    if align not in ("right", "left"):
        raise LayoutError(f"align: 'right' or 'left', got {quote(align)}")
    widths = [max(len(str(x)) for x in column) for column in zip(header, *rows)]
    kept = len(widths)
    if max_width is not None:
        while kept > 1 and sum(widths[:kept]) + 2 * (kept - 1) > max_width:
            kept -= 1

    def line(cells: Sequence[str]) -> str:
        return "  ".join(str(c).rjust(w) if i and align == "right" else str(c).ljust(w)
                         for i, (c, w) in enumerate(zip(cells[:kept], widths))).rstrip()

    out = [line(header), line(["-" * w for w in widths])]
    for row in rows:
        out.append(line(row))
        rest = "  ".join(f"{h}: {c}" for h, c in zip(header[kept:], row[kept:]) if str(c).strip())
        if rest:
            out.append(wrap_text("    " + rest, max_width))
    return "\n".join(out)
