"""show --format grid: the picture as text, with warp boundaries and replicated marks where the layout puts them."""

from __future__ import annotations

import itertools
import sys

import pytest

from linear_layouts.layouts import BlockedLayout, NVMMADistributedLayout
from linear_layouts.cli import main
from linear_layouts.present.viz.grid import distributed_grid
from linear_layouts.present.viz.grid_text import grid_text

LAYOUTS = [
    (BlockedLayout([1, 4], [4, 8], [4, 1], [1, 0]), [32, 32]),
    (BlockedLayout([1, 4], [4, 8], [2, 1], [1, 0]), [16, 16]),        # every element held twice
    (BlockedLayout([2, 1], [8, 4], [1, 4], [0, 1]), [16, 32]),        # warps side by side: | boundaries
    (NVMMADistributedLayout([2, 0], [2, 2], [16, 8]), [32, 32]),
    (NVMMADistributedLayout([2, 0], [4, 1], [16, 8]), [32, 16]),      # warps 2, 3 repeat warps 0, 1
]


def _owners(layout):
    """Element -> warps holding it, first owner first (Triton's order: warp, lane, register), by brute force."""
    sizes = layout.in_dims
    owners: dict[tuple[int, int], list[int]] = {}
    for w, t, r in itertools.product(range(sizes["warp"]), range(sizes["lane"]), range(sizes["register"])):
        out = layout.apply({"register": r, "lane": t, "warp": w, "block": 0})
        owners.setdefault((out["dim0"], out["dim1"]), []).append(w)
    return owners


@pytest.mark.parametrize("descriptor, shape", LAYOUTS)
def test_boundaries_and_marks_are_where_the_warps_change(descriptor, shape):
    layout = descriptor.to_linear(shape)
    owners = _owners(layout)
    rows, columns = shape
    warp = {cell: ws[0] for cell, ws in owners.items()}
    text = grid_text(distributed_grid(layout, label="warp"))
    grid_lines = [line for line in text.splitlines()[2:] if line[:4].strip().isdigit()]
    rule_after = [k for k, line in enumerate(text.splitlines()[2:]) if set(line.strip()) <= set("-+") and line.strip()]
    assert len(grid_lines) == rows
    for i, line in enumerate(grid_lines):
        cells = line[6:]
        # a | exactly between horizontally adjacent cells of different warps
        expected_bars = sum(warp[i, j] != warp[i, j + 1] for j in range(columns - 1))
        assert cells.count("|") == expected_bars, (i, line)
        assert cells.count("*") == sum(len(owners[i, j]) > 1 for j in range(columns))
        shown = cells.replace("|", " ").replace("*", "").split()
        assert [f"W{warp[i, j]}" for j in range(columns)] == [cell.split("/")[0] for cell in shown]
        # a replicated cell lists every owner's warp, each once, in Triton's order
        assert [list(dict.fromkeys(f"W{w}" for w in owners[i, j])) for j in range(columns)] == \
            [cell.split("/") for cell in shown]
    expected_rules = sum(any(warp[i, j] != warp[i + 1, j] for j in range(columns)) for i in range(rows - 1))
    assert len(rule_after) == expected_rules


def test_cli_grid_format_fits_a_terminal_and_says_what_the_marks_mean(capsys, monkeypatch, tmp_path):
    grid = ["show", "BlockedLayout([1,4],[4,8],[2,1],[1,0])", "--shape", "16,16", "--format", "grid"]
    assert main(grid) == 0     # a pipe or a file gets the whole grid, as it gets Triton's view
    whole = capsys.readouterr().out
    assert "columns 0-" not in whole and whole.splitlines()[1].split()[-1] == "15"
    assert main(grid + ["-o", str(tmp_path / "grid.txt")]) == 0
    assert (tmp_path / "grid.txt").read_text() == whole
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(grid) == 0
    out = capsys.readouterr().out
    assert out.startswith("label: T = thread (lane + 32·warp) over r = register\n")
    assert max(map(len, out.splitlines())) <= 100 and "(columns 0-" in out and "--wide shows all)" in out
    assert "|, ---: boundary between warps; *: replicated" in out and "T0:r0/T4:r0*" in out
    monkeypatch.undo()
    assert main(["show", "SwizzledSharedLayout(1,1,8,[1,0])", "--shape", "8,8", "--format", "grid", "--wide"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "the tensor; label: the bank of each element"
    assert out.splitlines()[3].split() == ["1", "9", "8", "11", "10", "13", "12", "15", "14"]
